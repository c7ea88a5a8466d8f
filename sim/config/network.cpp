#include "config/network.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <map>
#include <set>

#include <fmt/format.h>

#include "config/readers.hpp"
#include "config/yaml.hpp"
#include "core/text.hpp"

namespace framesim::config {

using model::LayerPrecision;
using model::NetworkSpec;
using model::OpParams;
using model::ParamType;

namespace {

const schema::Table& kKeys = schema::network_table();

constexpr std::string_view kBlockInput = "@input";

/// Names visible to a layer: its own repeat instance first, then the enclosing ones.
struct Scope {
  const Scope* parent = nullptr;
  std::string prefix;    // "res.3." inside instance 3 of block "res"
  int block_input = -1;  // tensor feeding this instance ("@input")
  std::map<std::string, int> names;

  std::optional<int> find(const std::string& name) const {
    for (const Scope* s = this; s; s = s->parent) {
      auto it = s->names.find(name);
      if (it != s->names.end()) return it->second;
    }
    return std::nullopt;
  }
};

class NetworkReader {
 public:
  explicit NetworkReader(const Node& root) : root_(root) {}

  NetworkSpec read() {
    net_.source_file = root_.document().display_path();
    MapReader m(root_, kKeys, "");
    if (!m.ok()) return net_;
    net_.name = m.text("name").value_or("");
    net_.description = m.text("description").value_or("");
    m.text("source");
    if (auto p = m.get("precision")) default_precision_ = read_precision(*p, "precision").value_or(LayerPrecision{});
    if (auto f = read_fusion(m)) net_.fusion = *f;
    Scope top;
    if (auto inputs = m.required("inputs")) read_inputs(*inputs, top);
    int previous = net_.inputs.size() == 1 ? net_.inputs.front() : -1;
    if (auto layers = m.required("layers")) {
      if (layers->is_sequence() && layers->yaml().size() == 0) layers->error("needs at least one layer");
      read_layers(*layers, top, previous);
    }
    read_outputs(m.get("outputs"), top);
    finish_groups();
    return std::move(net_);
  }

 private:
  /// A precision declared at `pattern` ("precision", "layers[].precision").
  std::optional<LayerPrecision> read_precision(const Node& node, std::string_view pattern) {
    if (node.is_map()) {
      // {weights: int8, activations: fp16, compute: fp16}: each part by name (compute defaults to activations).
      MapReader m(node, kKeys, pattern);
      auto part = [&](std::string_view key) -> std::optional<model::Precision> {
        auto v = m.choice(key);
        return v ? model::parse_precision(*v) : std::nullopt;
      };
      auto w = part("weights");
      auto a = part("activations");
      auto c = part("compute");
      if (!w || !a) return std::nullopt;
      return LayerPrecision{*w, *a, c.value_or(*a)};
    }
    auto s = node.text();
    if (!s) return std::nullopt;
    if (auto p = model::parse_layer_precision(*s)) return p;
    std::string message = fmt::format("\"{}\" is not a precision; use one of {} or wXaY like w4a16, w8a8", *s,
                                      core::join_list(model::precision_names(), ", "));
    if (auto near = core::closest_match(*s, model::precision_names()))
      message = fmt::format("\"{}\" is not a precision (did you mean \"{}\"?)", *s, *near);
    node.error(message);
    return std::nullopt;
  }

  void read_inputs(const Node& node, Scope& scope) {
    for (auto& [name, value] : node.entries()) {
      model::TensorSpec t;
      t.name = name;
      t.precision = default_precision_.activations;
      std::optional<Node> shape_node;
      if (value.is_sequence()) {
        shape_node = value;
      } else {
        MapReader r(value, kKeys, "inputs.<input>");
        shape_node = r.required("shape");
        if (auto p = r.get("precision")) {
          auto s = p->text();
          if (s) {
            if (auto prec = model::parse_precision(*s)) t.precision = *prec;
            else
              p->error(fmt::format("\"{}\" is not a precision; allowed: {}", *s,
                                   core::join_list(model::precision_names(), ", ")));
          }
        }
      }
      if (shape_node) {
        for (const Node& d : shape_node->items())
          if (auto v = d.integer(*kKeys.find("inputs.<input>.shape[]"))) t.shape.push_back(*v);
      }
      if (!add_name(scope, name, value)) continue;
      scope.names[name] = static_cast<int>(net_.tensors.size());
      net_.inputs.push_back(static_cast<int>(net_.tensors.size()));
      net_.tensors.push_back(std::move(t));
    }
  }

  bool add_name(const Scope& scope, const std::string& name, const Node& where) {
    const std::string full = scope.prefix + name;
    if (auto it = defined_.find(full); it != defined_.end()) {
      where.error(fmt::format("\"{}\" is already defined at line {}", full, it->second));
      return false;
    }
    defined_[full] = where.location().line;
    return true;
  }

  void read_layers(const Node& seq, Scope& scope, int& previous) {
    for (const Node& item : seq.items()) {
      if (item.is_map() && item.yaml()["repeat"].IsDefined()) read_repeat(item, scope, previous);
      else read_layer(item, scope, previous);
    }
  }

  /// Layers a list of layers stands for once its repeat blocks are expanded (a malformed repeat counts once).
  static double layers_in(const YAML::Node& list) {
    if (!list.IsDefined() || !list.IsSequence()) return 1;  // a missing or malformed list is reported where it is read
    double total = 0;
    for (const auto& entry : list) {
      const YAML::Node count = entry.IsMap() ? entry["repeat"] : YAML::Node();
      std::int64_t times = 1;
      if (count.IsDefined() && count.IsScalar()) {
        const std::string& t = count.Scalar();
        std::from_chars(t.data(), t.data() + t.size(), times);
      }
      total += times > 1 ? static_cast<double>(times) * layers_in(entry["layers"]) : 1.0;
      if (total > 1e18) return total;  // far past any limit: stop multiplying
    }
    return total;
  }

  void read_repeat(const Node& item, Scope& scope, int& previous) {
    MapReader r(item, schema::repeat_table(), "");
    const auto count = r.integer("repeat").value_or(0);
    const std::string name = r.text("name").value_or("block");
    auto layers = r.required("layers");
    if (!layers || count <= 0) return;
    if (layers->is_sequence() && layers->yaml().size() == 0) {
      layers->error("needs at least one layer");
      return;
    }
    if (!add_name(scope, name, item)) return;
    // Refused before anything is built: nested blocks multiply (100000 x 100000 layers).
    const double expanded =
        static_cast<double>(net_.layers.size()) + static_cast<double>(count) * layers_in(layers->yaml());
    if (expanded > static_cast<double>(model::kMaxLayers)) {
      item.error(fmt::format("the block expands to {:.3g} layers; framesim reads networks of at most {} layers",
                             expanded, model::kMaxLayers));
      return;
    }
    // A file already refused for an earlier mistake is not expanded: one repetition reports the block's own
    // mistakes (as the loop would: one report per mistake, not per repetition), and building up to 100 000 layers
    // of a network that is refused anyway only delays the refusal (a second of CPU, over 10 s under ASan).
    const std::int64_t repetitions = root_.document().diagnostics().empty() ? count : 1;
    for (std::int64_t i = 0; i < repetitions; ++i) {
      if (net_.layers.size() > model::kMaxLayers) {
        item.error(
            fmt::format("the network would have more than {} layers (the largest framesim reads)", model::kMaxLayers));
        break;
      }
      Scope inner;
      inner.parent = &scope;
      inner.prefix = fmt::format("{}{}.{}.", scope.prefix, name, i);
      inner.block_input = previous;
      const std::size_t errors_before = root_.document().diagnostics().size();
      read_layers(*layers, inner, previous);
      // One report per mistake, not one per repetition.
      if (root_.document().diagnostics().size() > errors_before) break;
    }
    scope.names[name] = previous;  // the block's name stands for its last output
  }

  std::optional<int> resolve(const Node& where, const std::string& ref, const Scope& scope,
                             std::string_view context = " defined before this layer") {
    if (ref == kBlockInput) {
      if (scope.block_input >= 0) return scope.block_input;
      where.error("\"@input\" is only meaningful inside a repeat block");
      return std::nullopt;
    }
    if (auto t = scope.find(ref)) {
      if (*t < 0) return std::nullopt;  // a block whose layers failed: reported there already
      return t;
    }
    if (auto it = full_names_.find(ref); it != full_names_.end()) return it->second;
    std::vector<std::string> known;
    for (const Scope* s = &scope; s; s = s->parent)
      for (const auto& [n, t] : s->names) known.push_back(n);
    std::string message = fmt::format("no tensor or layer \"{}\"{}", ref, context);
    if (auto near = core::closest_match(ref, known)) message += fmt::format(" (did you mean \"{}\"?)", *near);
    where.error(message);
    return std::nullopt;
  }

  /// The op a layer names under "op": null when the key is missing or names no op (reported, with the closest
  /// name).
  static const model::OpSchema* read_op(const Node& item) {
    const YAML::Node op_yaml = item.yaml()["op"];
    if (!op_yaml.IsDefined()) {
      item.error("missing required key \"op\"");
      return nullptr;
    }
    Node op_node = item.child("op", op_yaml);
    auto op = op_node.text();
    if (!op) return nullptr;
    const model::OpSchema* schema = model::find_op(*op);
    if (!schema) {
      std::string message = fmt::format("unknown op \"{}\"", *op);
      if (auto near = core::closest_match(*op, model::op_names()))
        message += fmt::format(" (did you mean \"{}\"?)", *near);
      else message += "; run `framesim ops` for the list";
      op_node.error(message);
    }
    return schema;
  }

  /// The tensors a layer reads into `inputs`: its `input` or `inputs`, else the previous layer's output. False
  /// when one is wrong or missing (reported).
  bool read_layer_inputs(const Node& item, const MapReader& r, const Scope& scope, const model::OpSchema* schema,
                         int previous, std::vector<int>& inputs) {
    if (r.has("input") && r.has("inputs")) {
      item.error("give either input or inputs, not both");
      return false;
    }
    bool inputs_ok = true;
    if (auto in = r.get("input")) {
      if (auto s = in->text()) {
        if (auto t = resolve(*in, *s, scope)) inputs.push_back(*t);
        else inputs_ok = false;
      } else {
        inputs_ok = false;
      }
    } else if (auto ins = r.get("inputs")) {
      for (const Node& i : ins->items()) {
        auto s = i.text();
        auto t = s ? resolve(i, *s, scope) : std::nullopt;
        if (t) inputs.push_back(*t);
        else inputs_ok = false;
      }
    } else if (previous >= 0) {
      inputs.push_back(previous);
    } else if (!schema || schema->min_inputs > 0) {
      item.error(net_.inputs.empty()
                     ? "this layer reads nothing: the network has no inputs"
                     : "say which tensor this layer reads (input: NAME): the network has several inputs");
      inputs_ok = false;
    }
    return inputs_ok;
  }

  /// Reports the op's refusal to build a layer: at the key it names when the layer gives it, else at the layer.
  static void report_build_error(const model::OpError& e, const Node& item, const MapReader& r) {
    // A key the op does not declare (an op's builder shared with another op names the other's key) is reported
    // at the layer, not looked up.
    const auto& allowed = r.allowed();  // a layer's keys and the op's parameters
    const bool declared = std::find(allowed.begin(), allowed.end(), e.key) != allowed.end();
    std::optional<Node> at = e.key.empty() || !declared ? std::nullopt : r.get(e.key);
    if (e.key == "inputs") at = r.get("inputs") ? r.get("inputs") : r.get("input");
    // A parameter the op needs but the layer does not give: name it, since there is no node to point at.
    const bool names_key = (" " + e.message + " ").find(" " + e.key + " ") != std::string::npos;
    if (!at && declared && !e.key.empty() && !names_key)
      item.error(fmt::format("{} (not given): {}", e.key, e.message));
    else (at ? *at : item).error(e.message);
  }

  void read_layer(const Node& item, Scope& scope, int& previous) {
    if (!item.is_map()) {
      item.error("expected a layer (a mapping with at least \"op\")");
      return;
    }
    const model::OpSchema* schema = read_op(item);
    // The op's parameters are declared by the op (model/ops.cpp, `framesim ops`); an unknown op is reported
    // alone, not with every key of its layer.
    std::vector<std::string> params_declared;
    if (schema) {
      for (const auto& p : schema->params) params_declared.emplace_back(p.key);
    } else {
      for (auto it = item.yaml().begin(); it != item.yaml().end(); ++it)
        if (!kKeys.find("layers[]." + it->first.Scalar())) params_declared.push_back(it->first.Scalar());
    }
    MapReader r(item, kKeys, "layers[]", params_declared);
    const std::string local = r.text("name").value_or(schema ? fmt::format("{}{}", schema->name, net_.layers.size())
                                                             : fmt::format("layer{}", net_.layers.size()));
    const std::string full = scope.prefix + local;
    if (!add_name(scope, local, item)) return;

    std::vector<int> inputs;
    const bool inputs_ok = read_layer_inputs(item, r, scope, schema, previous, inputs);

    LayerPrecision precision = default_precision_;
    if (auto p = r.get("precision")) precision = read_precision(*p, "layers[].precision").value_or(default_precision_);

    OpParams params;
    bool params_ok = true;
    if (schema) {
      for (const auto& p : schema->params) {
        auto value = r.get(p.key);
        if (!value) continue;
        if (auto v = read_param(p, *value)) params.emplace(std::string(p.key), *v);
        else params_ok = false;
      }
    }
    if (auto g = r.get("group")) {
      if (auto s = g->text()) group_members_[scope.prefix + *s].push_back({static_cast<int>(net_.layers.size()), *g});
    }
    if (!schema || !inputs_ok || !params_ok) return;

    std::vector<const model::TensorSpec*> tensors;
    for (int t : inputs) tensors.push_back(&net_.tensors[static_cast<std::size_t>(t)]);
    auto result = model::build_layer(*schema, full, params, tensors, precision);
    if (auto* e = std::get_if<model::OpError>(&result)) {
      report_build_error(*e, item, r);
      return;
    }
    auto& built = std::get<model::BuiltLayer>(result);
    if (auto from = params.find("weights_from"); from != params.end()) {
      if (!check_tied(std::get<std::string>(from->second), built.layer, *r.get("weights_from"), scope)) return;
    }
    const int layer_index = static_cast<int>(net_.layers.size());
    const int tensor_index = static_cast<int>(net_.tensors.size());
    built.layer.inputs = inputs;
    built.layer.output = tensor_index;
    built.layer.source = fmt::format("{}:{}", item.location().file, item.location().line);
    built.output.producer = layer_index;
    if (built.layer.kind == model::OpKind::reshape) built.output.alias_of = net_.storage_of(inputs.front());
    net_.layers.push_back(std::move(built.layer));
    net_.tensors.push_back(std::move(built.output));
    scope.names[local] = tensor_index;
    full_names_[full] = tensor_index;
    layer_nodes_.push_back(item);
    previous = tensor_index;
  }

  /// A layer using another layer's weights must name an earlier layer with as many weights.
  bool check_tied(const std::string& other, const model::LayerSpec& layer, const Node& where, const Scope& scope) {
    auto t = resolve(where, other, scope);
    if (!t) return false;
    const int producer = net_.tensors[static_cast<std::size_t>(*t)].producer;
    if (producer < 0) {
      where.error(fmt::format("\"{}\" is a graph input, not a layer with weights", other));
      return false;
    }
    const auto& source = net_.layers[static_cast<std::size_t>(producer)];
    double mine = layer.weight_access.bytes;
    if (source.weight_bytes <= 0 || std::fabs(source.weight_bytes - mine) > 0.5) {
      where.error(fmt::format("\"{}\" has {} bytes of weights but this layer needs {}", source.name,
                              source.weight_bytes, mine));
      return false;
    }
    return true;
  }

  std::optional<model::ParamValue> read_param(const model::ParamSchema& p, const Node& value) {
    switch (p.type) {
      case ParamType::integer:
        if (auto v = value.integer(-kMaxParam, kMaxParam)) return model::ParamValue{*v};
        return std::nullopt;
      case ParamType::integers: {
        if (value.is_sequence()) {
          std::vector<std::int64_t> out;
          bool ok = true;
          for (const Node& i : value.items()) {
            if (auto v = i.integer(-kMaxParam, kMaxParam)) out.push_back(*v);
            else ok = false;
          }
          if (!ok) return std::nullopt;
          if (out.empty() && !p.empty_allowed) {
            value.error("expected at least one integer");
            return std::nullopt;
          }
          return model::ParamValue{out};
        }
        const bool named_padding = (p.key == "padding") && value.is_scalar() &&
                                   (value.yaml().Scalar() == "same" || value.yaml().Scalar() == "valid");
        if (named_padding) return model::ParamValue{value.yaml().Scalar()};
        if (value.is_scalar()) {
          const std::string& s = value.yaml().Scalar();
          const bool numeric = !s.empty() && (std::isdigit(static_cast<unsigned char>(s[0])) || s[0] == '-');
          if (!numeric) {
            value.error(fmt::format("expected {}, got \"{}\"",
                                    p.key == "padding" ? "an integer, a list of integers, \"same\" or \"valid\""
                                                       : "an integer or a list of integers",
                                    s));
            return std::nullopt;
          }
        }
        if (auto v = value.integer(-kMaxParam, kMaxParam)) return model::ParamValue{*v};
        return std::nullopt;
      }
      case ParamType::boolean:
        if (auto v = value.boolean()) return model::ParamValue{*v};
        return std::nullopt;
      case ParamType::text:
        if (auto v = value.text()) return model::ParamValue{*v};
        return std::nullopt;
      case ParamType::number:
        if (auto v = value.number()) return model::ParamValue{*v};
        return std::nullopt;
      case ParamType::precision: {
        auto s = value.text();
        if (!s) return std::nullopt;
        if (auto prec = model::parse_precision(*s)) return model::ParamValue{*prec};
        value.error(
            fmt::format("\"{}\" is not a precision; allowed: {}", *s, core::join_list(model::precision_names(), ", ")));
        return std::nullopt;
      }
    }
    return std::nullopt;
  }

  void read_outputs(const std::optional<Node>& node, const Scope& scope) {
    if (net_.layers.empty()) return;
    if (node) {
      bool all_resolved = true;
      for (const Node& item : node->items()) {
        auto s = item.text();
        auto t = s ? resolve(item, *s, scope, "") : std::nullopt;
        if (!t) {
          all_resolved = false;
          continue;
        }
        if (std::find(net_.outputs.begin(), net_.outputs.end(), *t) != net_.outputs.end()) {
          item.error(fmt::format("\"{}\" is listed twice", *s));
          continue;
        }
        net_.outputs.push_back(*t);
      }
      if (!all_resolved) return;  // a misspelt output would make its layer look unused
    }
    // Every result must go somewhere: an unread layer output is an output or a mistake.
    const model::ConsumerIndex consumers(net_);
    const std::vector<int> listed = net_.outputs;
    for (std::size_t l = 0; l < net_.layers.size(); ++l) {
      const int t = net_.layers[l].output;
      if (consumers.used(t, listed)) continue;
      if (!node) {
        net_.outputs.push_back(t);
      } else {
        layer_nodes_[l].error(fmt::format("the output of \"{}\" is never used: list it in outputs or remove the layer",
                                          net_.layers[l].name));
      }
    }
  }

  void finish_groups() {
    for (auto& [name, members] : group_members_) {
      std::vector<int> layers;
      for (const auto& m : members) layers.push_back(m.first);
      std::sort(layers.begin(), layers.end());
      bool contiguous = true;
      for (std::size_t i = 1; i < layers.size(); ++i) contiguous = contiguous && layers[i] == layers[i - 1] + 1;
      if (!contiguous) {
        members.back().second.error(
            fmt::format("fusion group \"{}\" must be consecutive layers (it has gaps between its members)", name));
        continue;
      }
      if (net_.fusion == model::FusionMode::none) {
        members.front().second.error(fmt::format(
            "fusion group \"{}\" has no effect with fusion: none (remove it or set fusion: explicit)", name));
        continue;
      }
      net_.groups.push_back(layers);
    }
  }

  Node root_;
  NetworkSpec net_;
  LayerPrecision default_precision_{};
  std::map<std::string, int> defined_;     // full name -> line
  std::map<std::string, int> full_names_;  // full layer name -> tensor
  std::vector<Node> layer_nodes_;          // per built layer
  std::map<std::string, std::vector<std::pair<int, Node>>> group_members_;
};

}  // namespace

model::NetworkSpec read_network(const Node& root) { return NetworkReader(root).read(); }

std::optional<model::FusionMode> read_fusion(const MapReader& m) { return m.choice("fusion", model::kFusionModes); }

model::NetworkSpec load_network(const std::filesystem::path& path) {
  core::Diagnostics diagnostics;
  auto doc = Document::load(path, diagnostics);
  auto net = read_network(Node(doc, doc->root(), ""));
  diagnostics.throw_if_any();
  return net;
}

model::NetworkSpec parse_network(const std::string& text, const std::string& display_path) {
  core::Diagnostics diagnostics;
  auto doc = Document::parse(text, display_path, diagnostics);
  auto net = read_network(Node(doc, doc->root(), ""));
  diagnostics.throw_if_any();
  return net;
}

}  // namespace framesim::config
