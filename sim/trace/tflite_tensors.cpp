// TFLite import, the tensors: what the flatbuffer says of each tensor (name, shape, type, constant data), the
// layout change of rank-4 tensors (TFLite's NHWC to framesim's NCHW), the graph inputs, and emitting layers.
#include <algorithm>
#include <cstring>

#include "trace/tflite_importer.hpp"

namespace framesim::trace::tflite_detail {

// ---- layout: rank-4 tensors are NHWC in TFLite and NCHW in framesim ----

Shape to_framesim(const Shape& s) {
  if (s.size() != 4) return s;
  return {s[0], s[3], s[1], s[2]};
}

/// A TFLite axis (may be negative) of a rank-`rank` tensor as framesim's axis, or -1 when out of range.
int framesim_axis(std::int64_t axis, std::size_t rank) {
  const auto r = static_cast<std::int64_t>(rank);
  if (axis < 0) axis += r;
  if (axis < 0 || axis >= r) return -1;
  if (rank != 4) return static_cast<int>(axis);
  static constexpr int kMap[4] = {0, 2, 3, 1};  // N H W C -> N C H W
  return kMap[axis];
}

std::string nhwc_note(const Shape& tflite_shape) {
  return tflite_shape.size() == 4 ? fmt::format(" (NHWC {})", model::shape_to_string(tflite_shape)) : "";
}

std::string list_some(const std::vector<std::string>& names, std::size_t most) {
  std::string out;
  for (std::size_t i = 0; i < names.size() && i < most; ++i) out += (i ? ", " : "") + names[i];
  if (names.size() > most) out += fmt::format(", ... ({} in all)", names.size());
  return out;
}

bool Importer::has_data(int t) const {
  const auto b = tensor(t)->buffer();
  if (b == 0 || !model_->buffers()) return false;
  const auto* buffer = model_->buffers()->Get(b);
  if (!buffer) return false;
  return (buffer->data() && buffer->data()->size() > 0) || buffer->offset() > 1;
}

Precision Importer::precision_of(int t) {
  const auto type = tensor(t)->type();
  return precision_of_type(type, t);
}

Precision Importer::precision_of_type(fb::TensorType type, int t) {
  switch (type) {
    case fb::TensorType_FLOAT32: return Precision::fp32;
    case fb::TensorType_FLOAT16: return Precision::fp16;
    case fb::TensorType_BFLOAT16: return Precision::bf16;
    case fb::TensorType_INT32:
    case fb::TensorType_UINT32: return Precision::int32;
    case fb::TensorType_INT16:
    case fb::TensorType_UINT16: return Precision::int16;
    case fb::TensorType_INT8:
    case fb::TensorType_UINT8:
    case fb::TensorType_BOOL: return Precision::int8;
    case fb::TensorType_INT4: return Precision::int4;
    default: break;
  }
  const char* name = fb::EnumNameTensorType(type);
  const std::string type_name = name && *name ? name : fmt::format("type {}", static_cast<int>(type));
  const bool wide_float =
      type == fb::TensorType_FLOAT64 || type == fb::TensorType_COMPLEX64 || type == fb::TensorType_COMPLEX128;
  odd_types_[type_name].insert(tensor_name(t));
  return wide_float ? Precision::fp32 : Precision::int32;
}

/// Values of a constant integer tensor (INT32 or INT64), if they are at hand.
std::optional<std::vector<std::int64_t>> Importer::const_ints(int t) const {
  if (t < 0 || !slots_[static_cast<std::size_t>(t)].constant) return std::nullopt;
  if (auto it = values_.find(t); it != values_.end()) return it->second;
  const int src = slots_[static_cast<std::size_t>(t)].data;
  if (src < 0) return std::nullopt;
  const auto* tt = tensor(src);
  const auto* buffer = model_->buffers()->Get(tt->buffer());
  if (!buffer || !buffer->data()) return std::nullopt;
  const auto* data = buffer->data();
  const std::size_t width = tt->type() == fb::TensorType_INT32 ? 4 : tt->type() == fb::TensorType_INT64 ? 8 : 0;
  if (width == 0) return std::nullopt;
  const double count = model::shape_elements(file_shape(src));
  if (count * static_cast<double>(width) > static_cast<double>(data->size())) return std::nullopt;
  std::vector<std::int64_t> out;
  for (std::size_t i = 0; i < static_cast<std::size_t>(count); ++i) {
    if (width == 4) {
      std::int32_t v;
      std::memcpy(&v, data->data() + i * 4, 4);
      out.push_back(v);
    } else {
      std::int64_t v;
      std::memcpy(&v, data->data() + i * 8, 8);
      out.push_back(v);
    }
  }
  return out;
}

bool Importer::is_const(int t) const { return t >= 0 && slots_[static_cast<std::size_t>(t)].constant; }

Precision Importer::stored_precision(int t) {
  const auto& s = slots_[static_cast<std::size_t>(t)];
  return s.constant ? precision_of_type(s.stored, t) : precision_of(t);
}

/// The framesim tensor of an activation input.
int Importer::act(const Op& o, int t) const {
  const auto& s = slots_[static_cast<std::size_t>(t)];
  if (s.framesim < 0)
    fail_op(o, fmt::format("reads tensor {} ('{}'), which is not a graph input, a constant, or the output of an "
                           "earlier operator",
                           t, tensor_name(t)));
  return s.framesim;
}

const model::TensorSpec& Importer::spec(int framesim_tensor) const {
  return net_.tensors[static_cast<std::size_t>(framesim_tensor)];
}

std::vector<int> Importer::activation_inputs(const Op& o) const {
  std::vector<int> out;
  for (int t : o.in)
    if (t >= 0 && !is_const(t)) out.push_back(t);
  return out;
}

std::vector<int> Importer::constant_inputs(const Op& o) const {
  std::vector<int> out;
  for (int t : o.in)
    if (is_const(t)) out.push_back(t);
  return out;
}

void Importer::make_inputs() {
  slots_.resize(tensor_count());
  for (std::size_t t = 0; t < tensor_count(); ++t) {
    auto& s = slots_[t];
    if (has_data(static_cast<int>(t))) {
      s.constant = true;
      s.stored = tensor(static_cast<int>(t))->type();
      s.data = static_cast<int>(t);
      if (tensor(static_cast<int>(t))->sparsity()) {  // its buffer holds the stored values only (tflite_sparse.cpp)
        check_sparse(static_cast<int>(t));
        s.data = -1;
        s.sparse = static_cast<int>(t);
      }
    } else if (tensor(static_cast<int>(t))->is_variable()) {
      // State kept between invocations (e.g. LSTM cells): read like a constant, not an activation.
      s.constant = true;
      s.stored = tensor(static_cast<int>(t))->type();
      variables_.push_back(tensor_name(static_cast<int>(t)));
    }
  }
  if (!graph_->inputs() || graph_->inputs()->size() == 0) fail("subgraph 0 has no inputs");
  std::vector<std::string> input_names;
  for (auto t : *graph_->inputs()) input_names.push_back(tensor_name(t));
  for (const auto& entry : options_.input_shapes)
    if (std::find(input_names.begin(), input_names.end(), entry.first) == input_names.end())
      fail(fmt::format("--input names '{}', which is not an input of the model (inputs: {})", entry.first,
                       list_some(input_names, 20)));
  for (auto t : *graph_->inputs()) {
    const std::string name = tensor_name(t);
    Shape shape = file_shape(t);
    if (auto it = options_.input_shapes.find(name); it != options_.input_shapes.end()) {
      shape = it->second;
    } else {
      bool dynamic = false;
      if (const auto* sig = tensor(t)->shape_signature())
        for (auto d : *sig) dynamic = dynamic || d < 0;
      if (dynamic || shape.empty() || std::find(shape.begin(), shape.end(), 0) != shape.end()) {
        Shape sig;
        if (const auto* v = tensor(t)->shape_signature())
          for (auto d : *v) sig.push_back(d);
        fail(
            fmt::format("input '{}' has a dynamic shape ({}); give it with --input {}=DIMS (in the model's own "
                        "layout, NHWC for images)",
                        name, sig.empty() ? "no static shape" : model::shape_to_string(sig), name));
      }
    }
    for (auto d : shape)
      if (d <= 0)
        fail(fmt::format("input '{}': dimensions must be positive, got {}", name, model::shape_to_string(shape)));
    if (slots_[static_cast<std::size_t>(t)].framesim >= 0) continue;  // listed twice
    model::TensorSpec spec_in;
    spec_in.name = unique_name(name);
    spec_in.shape = to_framesim(shape);
    spec_in.precision = precision_of(t);
    slots_[static_cast<std::size_t>(t)].framesim = static_cast<int>(net_.tensors.size());
    slots_[static_cast<std::size_t>(t)].constant = false;
    net_.inputs.push_back(static_cast<int>(net_.tensors.size()));
    net_.tensors.push_back(std::move(spec_in));
  }
}

std::string Importer::unique_name(const std::string& base) {
  std::string name = base;
  for (int i = 1; used_names_.count(name); ++i) name = fmt::format("{}_{}", base, i);
  used_names_.insert(name);
  return name;
}

/// Builds one layer; `inputs` are framesim tensor ids. Returns the framesim id of its output.
int Importer::emit(const Op& o, std::string_view op, const std::string& name, const OpParams& stated,
                   const std::vector<int>& inputs, LayerPrecision precision) {
  OpParams params = stated;
  sparse_storage(o, op, inputs, params);
  const model::OpSchema* schema = model::find_op(op);
  FRAMESIM_ASSERT(schema != nullptr, "the importer uses catalogue ops");
  std::vector<const model::TensorSpec*> tensors;
  for (int t : inputs) tensors.push_back(&net_.tensors[static_cast<std::size_t>(t)]);
  const std::string layer_name = unique_name(name);
  auto result = model::build_layer(*schema, layer_name, params, tensors, precision);
  if (auto* e = std::get_if<model::OpError>(&result)) {
    std::vector<std::string> shapes;
    for (const auto* t : tensors) shapes.push_back(t->name + " " + model::shape_to_string(t->shape));
    fail_op(o, fmt::format("cannot be imported as framesim {} ({}{}{}; inputs {})", op, e->key,
                           e->key.empty() ? "" : ": ", e->message, list_some(shapes)));
  }
  auto& built = std::get<model::BuiltLayer>(result);
  const int layer_index = static_cast<int>(net_.layers.size());
  const int tensor_index = static_cast<int>(net_.tensors.size());
  built.layer.inputs = inputs;
  built.layer.output = tensor_index;
  built.layer.source = fmt::format("{}:op {} {}", file_, o.index, o.name);
  built.output.producer = layer_index;
  if (built.layer.kind == model::OpKind::reshape) built.output.alias_of = net_.storage_of(inputs.front());
  net_.layers.push_back(std::move(built.layer));
  net_.tensors.push_back(std::move(built.output));
  sourced_ops_.insert(o.index);
  return tensor_index;
}

int Importer::reshape(const Op& o, int from, const Shape& shape, const std::string& name) {
  if (spec(from).shape == shape) return from;
  const Precision p = spec(from).precision;
  return emit(o, "reshape", name, {{"shape", shape}}, {from}, {p, p, p});
}

LayerPrecision Importer::same(Precision p) { return {p, p, p}; }

/// Appends the fused activation of the options, if any.
int Importer::fused(const Op& o, int from, fb::ActivationFunctionType f, const std::string& base) {
  const Precision p = spec(from).precision;
  switch (f) {
    case fb::ActivationFunctionType_NONE: return from;
    case fb::ActivationFunctionType_RELU: return emit(o, "relu", base + "/relu", {}, {from}, same(p));
    case fb::ActivationFunctionType_RELU6: return emit(o, "relu6", base + "/relu6", {}, {from}, same(p));
    case fb::ActivationFunctionType_RELU_N1_TO_1: return emit(o, "clip", base + "/relu_n1_to_1", {}, {from}, same(p));
    case fb::ActivationFunctionType_TANH: return emit(o, "tanh", base + "/tanh", {}, {from}, same(p));
    case fb::ActivationFunctionType_SIGN_BIT:
      return emit(o, "activation", base + "/sign_bit", {{"ops_per_element", 1.0}}, {from}, same(p));
    default: break;
  }
  fail_op(o, fmt::format("unknown fused activation function {}", static_cast<int>(f)));
}

/// Binds TFLite output `pos` of `o` to framesim tensor `t`, checking the shape against the file's.
void Importer::bind(const Op& o, std::size_t pos, int t) {
  const int out = o.out[pos];
  auto& s = slots_[static_cast<std::size_t>(out)];
  s.framesim = t;
  s.constant = false;
  const Shape stated = file_shape(out);
  if (!options_.input_shapes.empty() || stated.empty()) return;  // overridden inputs change shapes downstream
  const Shape want = to_framesim(stated);
  if (spec(t).shape != want)
    mismatches_.push_back(fmt::format("{} (operator {} {}): framesim computes {} but the model states {}{}",
                                      spec(t).name, o.index, o.name, model::shape_to_string(spec(t).shape),
                                      model::shape_to_string(want), nhwc_note(stated)));
}

/// The file's shape of output `pos`, in framesim's layout.
Shape Importer::out_shape(const Op& o, std::size_t pos) const { return to_framesim(file_shape(o.out[pos])); }

std::string Importer::out_name(const Op& o, std::size_t pos) const { return tensor_name(o.out[pos]); }

Precision Importer::out_precision(const Op& o, std::size_t pos) { return precision_of(o.out[pos]); }

/// A layer reading `inputs` (TFLite ids) and writing output `pos` with the file's shape: data movement only.
/// With `constants_as_weights`, the op's constant inputs are its weights (unknown ops, constant concat pieces);
/// otherwise they are parameters (paddings, axes, permutations) and not counted.
int Importer::custom_layer(const Op& o, const std::vector<int>& inputs, std::size_t pos, double ops,
                           bool constants_as_weights) {
  std::vector<int> fs;
  for (int t : inputs) fs.push_back(act(o, t));
  Shape shape = out_shape(o, pos);
  if (shape.empty()) shape = {1};
  OpParams params{{"output_shape", shape}, {"ops", ops}};
  Precision w = out_precision(o, pos);
  if (pos == 0 && constants_as_weights) {
    double weights = 0;
    for (int c : constant_inputs(o)) {
      weights += model::shape_elements(file_shape(c));
      w = stored_precision(c);
    }
    if (weights > 0) params["weights"] = static_cast<std::int64_t>(weights);
  }
  const Precision a = out_precision(o, pos);
  return emit(o, "custom", out_name(o, pos), params, fs, {w, a, a});
}

}  // namespace framesim::trace::tflite_detail
