// `framesim import` writes a network YAML that framesim loads back to the same network: every model the tests
// have (the real models traces/fetch_models.sh caches, every model of Debian's libonnx-testdata that imports,
// and small graphs written here) is imported, written as YAML, loaded again, and budgeted both ways; the two
// budgets must agree on every number (ops, weights, bytes per level, bound and estimate of every kernel).
// The oracle is the direct import, which never goes through the YAML writer or reader; the small graphs with
// scalar tensors (what failed: a DynamicQuantizeLinear's scale and zero point, a ReduceMax to a scalar) also
// have their counts derived by hand in their comments.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>
#include <onnx/shape_inference/implementation.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "config/network.hpp"
#include "config/network_writer.hpp"
#include "core/error.hpp"
#include "model/budget.hpp"
#include "onnx_builder.hpp"
#include "test_support.hpp"
#include "tflite_schema_generated.h"
#include "trace/import.hpp"

namespace fs = std::filesystem;
using namespace framesim;
using framesim::testing::GraphBuilder;
using framesim::testing::set_int;
using framesim::testing::set_ints;

namespace {

fs::path model_cache() {
  if (const char* env = std::getenv("FRAMESIM_MODEL_CACHE"); env && *env) return env;
  const char* home = std::getenv("HOME");
  return fs::path(home ? home : ".") / ".cache/framesim/models";
}

const fs::path kTestData = "/usr/share/libonnx-testdata/data/node";

/// Every real model traces/fetch_models.sh caches: BlazeFace (ONNX, two sizes) and MediaPipe face detection
/// (TFLite: short range, full range, and full range with sparse kernels).
std::vector<fs::path> fetched_models() {
  const fs::path cache = model_cache();
  return {cache / "blazeface/ONNX/face_detection_front_128x128_barracuda.onnx",
          cache / "blazeface/ONNX/face_detection_back_256x256_barracuda.onnx",
          cache / "face_detection/face_detection_short_range.tflite",
          cache / "face_detection/face_detection_full_range.tflite",
          cache / "face_detection/face_detection_full_range_sparse.tflite"};
}

fs::path save(const onnx::ModelProto& m, const std::string& name) {
  const fs::path p = fs::temp_directory_path() / fmt::format("framesim_round_trip_{}_{}", ::getpid(), name);
  std::ofstream out(p, std::ios::binary);
  m.SerializeToOstream(&out);
  return p;
}

/// Relative difference within 1e-12 (the YAML writer prints doubles with enough digits to read them back exactly;
/// the slack only absorbs summation order).
bool same(double a, double b) { return std::fabs(a - b) <= 1e-12 * std::max({1.0, std::fabs(a), std::fabs(b)}); }

/// Every difference between the network imported directly and the one loaded from its YAML, and between their
/// budgets on the seed device: empty when the round trip is exact.
std::vector<std::string> differences(const model::NetworkSpec& direct, const model::NetworkSpec& loaded) {
  std::vector<std::string> d;
  auto num = [&](const std::string& what, double a, double b) {
    if (!same(a, b)) d.push_back(fmt::format("{}: {} directly, {} from the YAML", what, a, b));
  };
  if (direct.layers.size() != loaded.layers.size()) {
    d.push_back(fmt::format("{} layers directly, {} from the YAML", direct.layers.size(), loaded.layers.size()));
    return d;
  }
  for (std::size_t i = 0; i < direct.layers.size(); ++i) {
    const auto& a = direct.layers[i];
    const auto& b = loaded.layers[i];
    const std::string at = fmt::format("layer {} ({})", i, a.name);
    if (a.name != b.name || a.op != b.op) d.push_back(fmt::format("{}: {} {} from the YAML", at, b.op, b.name));
    num(at + " ops", a.ops, b.ops);
    num(at + " weight bytes", a.weight_bytes, b.weight_bytes);
    num(at + " params", a.params_count, b.params_count);
    const auto& ya = direct.tensors[static_cast<std::size_t>(a.output)];
    const auto& yb = loaded.tensors[static_cast<std::size_t>(b.output)];
    if (ya.shape != yb.shape || ya.precision != yb.precision)
      d.push_back(fmt::format("{}: output {} directly, {} from the YAML", at, model::shape_to_string(ya.shape),
                              model::shape_to_string(yb.shape)));
    std::vector<std::string> ia, ib;
    for (int t : a.inputs) ia.push_back(direct.tensors[static_cast<std::size_t>(t)].name);
    for (int t : b.inputs) ib.push_back(loaded.tensors[static_cast<std::size_t>(t)].name);
    if (ia != ib)
      d.push_back(fmt::format("{}: reads {} directly, {} from the YAML", at, fmt::join(ia, ","), fmt::join(ib, ",")));
  }
  auto hw = framesim::testing::seed_device();  // 2 TOP/s and 50 GB/s, the same roof at every precision
  for (auto p : model::kAllPrecisions) hw.units[0].peak_ops_per_s[p] = 2e12;
  const auto ba = model::make_budget(hw, direct, {});
  const auto bb = model::make_budget(hw, loaded, {});
  num("ops", ba.ops, bb.ops);
  num("params", ba.params, bb.params);
  num("weight bytes", ba.weight_bytes, bb.weight_bytes);
  num("peak activation bytes", ba.peak_activation_bytes, bb.peak_activation_bytes);
  num("bound", ba.bound_s, bb.bound_s);
  num("estimate", ba.estimate_s, bb.estimate_s);
  num("compute", ba.compute_s, bb.compute_s);
  if (ba.kernels.size() != bb.kernels.size()) {
    d.push_back(fmt::format("{} kernels directly, {} from the YAML", ba.kernels.size(), bb.kernels.size()));
    return d;
  }
  for (std::size_t k = 0; k < ba.kernels.size(); ++k) {
    const std::string at = fmt::format("kernel {}", k);
    num(at + " bound", ba.kernels[k].bound.bound_s, bb.kernels[k].bound.bound_s);
    num(at + " estimate", ba.kernels[k].time.bound_s, bb.kernels[k].time.bound_s);
    num(at + " off-chip bytes", ba.kernels[k].offchip_bytes, bb.kernels[k].offchip_bytes);
  }
  return d;
}

/// Writes an imported network as YAML and loads it back; the differences (or the loader's error) as text.
std::string round_trip(const trace::ImportResult& imported) {
  const std::string yaml = config::network_to_yaml(imported.network, {"round trip"});
  model::NetworkSpec loaded;
  try {
    loaded = config::parse_network(yaml, "imported.yaml");
  } catch (const core::UserError& e) {
    return std::string("the YAML does not load: ") + e.what();
  }
  std::string out;
  for (const auto& line : differences(imported.network, loaded)) out += "  " + line + "\n";
  return out;
}

/// Imports `path` (ONNX or TFLite), then round_trip.
std::string round_trip(const fs::path& path, const trace::ImportOptions& options = {}) {
  return round_trip(trace::import_model(path, options));
}

/// x [1, 64] fp32 -> DynamicQuantizeLinear -> (q uint8 [1, 64], scale fp32 scalar, zero point uint8 scalar)
///   -> DequantizeLinear(q, scale, zero point) -> [1, 64] fp32 -> MatMul by w [64, 16] -> y [1, 16].
GraphBuilder dynamic_quantize_graph() {
  GraphBuilder g(13);
  g.input("x", {1, 64}).weight("w", {64, 16});
  g.node("DynamicQuantizeLinear", {"x"}, {"q", "q_scale", "q_zero"}, "dql");
  g.node("DequantizeLinear", {"q", "q_scale", "q_zero"}, {"dq"}, "dequant");
  g.node("MatMul", {"dq", "w"}, {"y"}, "fc");
  g.output("y");
  return g;
}

/// x [1, 8, 10] fp32 -> ReduceMax over every axis, keepdims 0 -> m (a scalar) -> Div(x, m) -> y [1, 8, 10].
GraphBuilder reduce_max_to_scalar_graph() {
  GraphBuilder g(13);
  g.input("x", {1, 8, 10});
  set_int(g.node("ReduceMax", {"x"}, {"m"}, "peak"), "keepdims", 0);
  g.node("Div", {"x", "m"}, {"y"}, "normalise");
  g.output("y");
  return g;
}

}  // namespace

// DynamicQuantizeLinear writes a scalar scale and a scalar zero point (output_shape: []); the YAML must load with
// them, and the DequantizeLinear reading them must keep all three inputs.
// By hand: the MatMul is 2 x 64 x 16 = 2,048 ops with 64 x 16 x 4 B = 4,096 B of fp32 weights; the quantize and
// dequantize are data movement (0 ops), so the network is 2,048 ops and 4,096 weight bytes.
TEST(ImportRoundTrip, ScalarOutputsOfDynamicQuantizeLinearLoadBack) {
  auto g = dynamic_quantize_graph();
  const fs::path p = save(g.model(), "dql.onnx");
  const auto imported = trace::import_onnx(p);
  const auto& net = imported.network;
  EXPECT_DOUBLE_EQ(net.total_ops(), 2048);
  EXPECT_DOUBLE_EQ(net.total_weight_bytes(), 4096);
  const std::string yaml = config::network_to_yaml(net, {});
  EXPECT_NE(yaml.find("output_shape: []"), std::string::npos) << yaml;
  const auto loaded = config::parse_network(yaml, "dql.yaml");
  const auto layer = loaded.find_layer("dequant");
  ASSERT_TRUE(layer) << yaml;
  const auto& dq = loaded.layers[static_cast<std::size_t>(*layer)];
  ASSERT_EQ(dq.inputs.size(), 3u) << yaml;
  EXPECT_TRUE(loaded.tensors[static_cast<std::size_t>(dq.inputs[1])].shape.empty()) << "the scale is a scalar";
  EXPECT_DOUBLE_EQ(loaded.total_ops(), 2048);
  EXPECT_EQ(round_trip(p), "");
  fs::remove(p);
}

// ReduceMax to a scalar (keepdims 0, every axis): output_shape [] and the Div reading it keeps both inputs.
// By hand: the ReduceMax is 1 op per input element = 80; the Div is 1 op per output element = 80: 160 ops. The
// Div reads x (80 x 4 B = 320 B) and the scalar (4 B) and writes 320 B.
TEST(ImportRoundTrip, ReduceMaxToAScalarLoadsBack) {
  auto g = reduce_max_to_scalar_graph();
  const fs::path p = save(g.model(), "reducemax.onnx");
  const auto net = trace::import_onnx(p).network;
  EXPECT_DOUBLE_EQ(net.total_ops(), 160);
  const auto loaded = config::parse_network(config::network_to_yaml(net, {}), "reducemax.yaml");
  const auto div = loaded.find_layer("normalise");
  ASSERT_TRUE(div);
  const auto& l = loaded.layers[static_cast<std::size_t>(*div)];
  ASSERT_EQ(l.inputs.size(), 2u);
  EXPECT_TRUE(loaded.tensors[static_cast<std::size_t>(l.inputs[1])].shape.empty());
  EXPECT_DOUBLE_EQ(l.input_access[0].bytes + l.input_access[1].bytes, 324);
  EXPECT_DOUBLE_EQ(loaded.total_ops(), 160);
  EXPECT_EQ(round_trip(p), "");
  fs::remove(p);
}

// A scalar graph input (Silero VAD's sample rate is one) is written as shape [] and loads back.
// By hand: x [4] + s (scalar) broadcast is 4 adds.
TEST(ImportRoundTrip, ScalarGraphInputLoadsBack) {
  GraphBuilder g(13);
  g.input("x", {4}).input("s", {});
  g.node("Add", {"x", "s"}, {"y"}, "add");
  g.output("y");
  const fs::path p = save(g.model(), "scalar_input.onnx");
  const auto net = trace::import_onnx(p).network;
  EXPECT_DOUBLE_EQ(net.total_ops(), 4);
  EXPECT_EQ(round_trip(p), "");
  fs::remove(p);
}

// The same through the command line, as a user runs it: import -o, validate, and budget of the YAML and of the
// model file print the same JSON apart from the network's file name.
TEST(ImportRoundTrip, CommandLineImportValidateBudget) {
  framesim::testing::Scratch scratch;
  auto g = dynamic_quantize_graph();
  const fs::path model = save(g.model(), "cli.onnx");
  const fs::path yaml = scratch.dir() / "net.yaml";
  const auto imp = framesim::testing::run_cli(fmt::format("import '{}' -o '{}'", model.string(), yaml.string()));
  ASSERT_EQ(imp.exit_code, 0) << imp.err;
  const auto val = framesim::testing::run_cli(fmt::format("validate '{}'", yaml.string()));
  EXPECT_EQ(val.exit_code, 0) << val.out << val.err;
  const auto from_model =
      framesim::testing::run_cli(fmt::format("budget hardware/seed_reference.yaml '{}' --json -q", model.string()));
  const auto from_yaml =
      framesim::testing::run_cli(fmt::format("budget hardware/seed_reference.yaml '{}' --json -q", yaml.string()));
  ASSERT_EQ(from_model.exit_code, 0) << from_model.err;
  ASSERT_EQ(from_yaml.exit_code, 0) << from_yaml.err;
  auto strip = [](std::string s, const std::string& path) {
    for (auto at = s.find(path); at != std::string::npos; at = s.find(path)) s.replace(at, path.size(), "NET");
    return s;
  };
  EXPECT_EQ(strip(from_model.out, model.string()), strip(from_yaml.out, yaml.string()));
  fs::remove(model);
}

// Every real model the tests fetch (fetched_models()).
TEST(ImportRoundTrip, FetchedModels) {
  const fs::path cache = model_cache();
  const std::vector<fs::path> models = fetched_models();
  int checked = 0;
  for (const auto& m : models) {
    if (!fs::exists(m)) continue;
    SCOPED_TRACE(m.string());
    EXPECT_EQ(round_trip(m), "");
    ++checked;
  }
  if (checked == 0) GTEST_SKIP() << "the real models are not in " << cache << ": run traces/fetch_models.sh";
  EXPECT_EQ(checked, static_cast<int>(models.size())) << "some fetched models are missing: run traces/fetch_models.sh";
}

/// Bytes an ONNX file stores in its initializers (raw data, or the typed fields at their element width): read here
/// with protobuf alone, not through the importer.
double onnx_initializer_bytes(const fs::path& path) {
  onnx::ModelProto m;
  std::ifstream in(path, std::ios::binary);
  if (!m.ParseFromIstream(&in)) return -1;
  double bytes = 0;
  for (const auto& t : m.graph().initializer()) {
    double n = 1;
    for (auto d : t.dims()) n *= static_cast<double>(d);
    if (t.data_type() == onnx::TensorProto::INT64 && n <= 8) continue;  // a shape vector, not a weight
    const double width = t.data_type() == onnx::TensorProto::FLOAT16 ? 2
                         : t.data_type() == onnx::TensorProto::INT8  ? 1
                                                                     : 4;
    bytes += t.has_raw_data() ? static_cast<double>(t.raw_data().size()) : n * width;
  }
  return bytes;
}

/// Bytes of a sparse tensor's index arrays: array_segments and array_indices of its SPARSE_CSR dimensions, at the
/// width of the vector each is stored in (TFLite's SparsityParameters; dense dimensions store no indices).
double tflite_index_bytes(const framesim::tflite::SparsityParameters& sp) {
  namespace t = framesim::tflite;
  auto bytes = [](t::SparseIndexVector type, const void* v) -> double {
    if (!v) return 0;
    if (type == t::SparseIndexVector_Int32Vector) return 4.0 * static_cast<const t::Int32Vector*>(v)->values()->size();
    if (type == t::SparseIndexVector_Uint16Vector)
      return 2.0 * static_cast<const t::Uint16Vector*>(v)->values()->size();
    if (type == t::SparseIndexVector_Uint8Vector) return 1.0 * static_cast<const t::Uint8Vector*>(v)->values()->size();
    return 0;
  };
  double total = 0;
  for (const auto* d : *sp.dim_metadata())
    if (d->format() == t::DimensionType_SPARSE_CSR)
      total +=
          bytes(d->array_segments_type(), d->array_segments()) + bytes(d->array_indices_type(), d->array_indices());
  return total;
}

/// Bytes a TFLite file stores for its float and int8 tensors: their buffers (int32 vectors of at most 8 elements
/// are shapes, axes and paddings), and for a sparse tensor also its index arrays: read here through the
/// flatbuffer, not through the importer.
double tflite_buffer_bytes(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const auto* m = framesim::tflite::GetModel(bytes.data());
  const auto* g = m->subgraphs()->Get(0);
  double total = 0;
  for (const auto* t : *g->tensors()) {
    const auto* b = m->buffers()->Get(t->buffer());
    if (!b || !b->data() || b->data()->size() == 0) continue;
    double n = 1;
    for (auto d : *t->shape()) n *= d;
    if (t->type() == framesim::tflite::TensorType_INT32 && n <= 8) continue;
    total += static_cast<double>(b->data()->size());
    if (t->sparsity()) total += tflite_index_bytes(*t->sparsity());
  }
  return total;
}

// The weight bytes of every fetched model against an independent count of what the file stores (the sum of its
// initializers, or of its tensors' buffers plus the index arrays of sparse tensors): within 0.5 %.
// face_detection_full_range_sparse.tflite keeps 46 kernels sparse behind DENSIFY: 368,984 B of buffers and
// 191,818 B of index arrays, 560,802 B stored (counted dense, the kernels would make it 1,016,616 B).
TEST(ImportRoundTrip, FetchedModelWeightBytesMatchTheStoredTensors) {
  const fs::path cache = model_cache();
  int checked = 0;
  for (const auto& m : fetched_models()) {
    if (!fs::exists(m)) continue;
    SCOPED_TRACE(m.string());
    const double stored = m.extension() == ".onnx" ? onnx_initializer_bytes(m) : tflite_buffer_bytes(m);
    const double imported = trace::import_model(m).network.total_weight_bytes();
    EXPECT_NEAR(imported / stored, 1.0, 0.005) << imported << " B imported, " << stored << " B stored";
    ++checked;
  }
  if (checked == 0) GTEST_SKIP() << "the real models are not in " << cache << ": run traces/fetch_models.sh";
}

/// Multiply-accumulates of an ONNX file's Conv, Gemm and MatMul nodes, read here with protobuf and ONNX's own shape
/// inference (not the importer): a Conv's output elements x its kernel's [Cin / groups] x kh x kw; a Gemm's or
/// MatMul's output elements x the inner dimension. -1 when a shape is not static.
double onnx_macs(const fs::path& path) {
  onnx::ModelProto m;
  std::ifstream in(path, std::ios::binary);
  if (!m.ParseFromIstream(&in)) return -1;
  onnx::shape_inference::InferShapes(m);
  std::map<std::string, std::vector<std::int64_t>> shapes;
  auto keep = [&](const onnx::ValueInfoProto& v) {
    std::vector<std::int64_t> dims;
    for (const auto& d : v.type().tensor_type().shape().dim()) dims.push_back(d.has_dim_value() ? d.dim_value() : -1);
    shapes[v.name()] = dims;
  };
  for (const auto& v : m.graph().input()) keep(v);
  for (const auto& v : m.graph().value_info()) keep(v);
  for (const auto& v : m.graph().output()) keep(v);
  for (const auto& t : m.graph().initializer()) shapes[t.name()] = {t.dims().begin(), t.dims().end()};
  auto elements = [&](const std::string& name) {
    double n = 1;
    for (auto d : shapes[name]) n *= d < 0 ? std::nan("") : static_cast<double>(d);
    return n;
  };
  double macs = 0;
  for (const auto& n : m.graph().node()) {
    if (n.op_type() == "Conv") {
      const auto& w = shapes[n.input(1)];
      double window = 1;
      for (std::size_t i = 1; i < w.size(); ++i) window *= static_cast<double>(w[i]);
      macs += elements(n.output(0)) * window;
    } else if (n.op_type() == "Gemm" || n.op_type() == "MatMul") {
      const auto& a = shapes[n.input(0)];
      bool trans_a = false;
      for (const auto& at : n.attribute()) trans_a = trans_a || (at.name() == "transA" && at.i() != 0);
      if (a.empty()) return -1;
      macs += elements(n.output(0)) * static_cast<double>(trans_a ? a[a.size() - 2] : a.back());
    }
  }
  return std::isnan(macs) ? -1 : macs;
}

/// Multiply-accumulates of a TFLite file's CONV_2D, DEPTHWISE_CONV_2D, FULLY_CONNECTED and BATCH_MATMUL operators
/// from the shapes the file states, read here through the flatbuffer: output elements x kh x kw x the kernel's
/// input channels (CONV_2D [O, kh, kw, I]), x kh x kw (depthwise), x the inner dimension (the others).
double tflite_macs(const fs::path& path) {
  namespace t = framesim::tflite;
  std::ifstream in(path, std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const auto* m = t::GetModel(bytes.data());
  const auto* g = m->subgraphs()->Get(0);
  auto shape = [&](int i) {
    return std::vector<int>(g->tensors()->Get(i)->shape()->begin(), g->tensors()->Get(i)->shape()->end());
  };
  auto elements = [&](int i) {
    double n = 1;
    for (int d : shape(i)) n *= d;
    return n;
  };
  double macs = 0;
  for (const auto* op : *g->operators()) {
    const auto* code = m->operator_codes()->Get(op->opcode_index());
    const int c = std::max<int>(code->deprecated_builtin_code(), static_cast<int>(code->builtin_code()));
    const int out = op->outputs()->Get(0);
    if (c == t::BuiltinOperator_CONV_2D) {
      const auto w = shape(op->inputs()->Get(1));
      macs += elements(out) * w[1] * w[2] * w[3];
    } else if (c == t::BuiltinOperator_DEPTHWISE_CONV_2D) {
      const auto w = shape(op->inputs()->Get(1));
      macs += elements(out) * w[1] * w[2];
    } else if (c == t::BuiltinOperator_FULLY_CONNECTED) {
      macs += elements(out) * shape(op->inputs()->Get(1))[1];
    } else if (c == t::BuiltinOperator_BATCH_MATMUL) {
      macs += elements(out) * shape(op->inputs()->Get(0)).back();
    }
  }
  return macs;
}

/// The multiply-accumulates of the imported network's conv2d, linear and matmul layers: their operations less the
/// bias adds (one per output when `bias`), halved.
double imported_macs(const model::NetworkSpec& net) {
  double macs = 0;
  for (const auto& l : net.layers) {
    if (l.op != "conv2d" && l.op != "linear" && l.op != "matmul") continue;
    const auto bias = l.params.find("bias");
    const bool has_bias = bias != l.params.end() && std::get<bool>(bias->second);
    macs += (l.ops - (has_bias ? net.tensors[static_cast<std::size_t>(l.output)].elements() : 0.0)) / 2;
  }
  return macs;
}

// "How we will check it", on every fetched model: it imports (`framesim import -o`), its YAML passes `framesim
// validate`, budgets to the same JSON as the model file, and its multiply-accumulates equal the count read from the
// file itself (onnx_macs, tflite_macs). Weights: FetchedModelWeightBytesMatchTheStoredTensors.
TEST(ImportRoundTrip, FetchedModelsImportValidateBudgetAndCountTheirMacs) {
  framesim::testing::Scratch scratch;
  int checked = 0;
  for (const auto& m : fetched_models()) {
    if (!fs::exists(m)) continue;
    SCOPED_TRACE(m.string());
    const fs::path yaml = scratch.dir() / (m.stem().string() + ".yaml");
    const auto imp = framesim::testing::run_cli(fmt::format("import '{}' -o '{}' -q", m.string(), yaml.string()));
    ASSERT_EQ(imp.exit_code, 0) << imp.err;
    const auto val = framesim::testing::run_cli(fmt::format("validate '{}'", yaml.string()));
    EXPECT_EQ(val.exit_code, 0) << val.out << val.err;
    const auto direct =
        framesim::testing::run_cli(fmt::format("budget hardware/seed_reference.yaml '{}' --json -q", m.string()));
    const auto loaded =
        framesim::testing::run_cli(fmt::format("budget hardware/seed_reference.yaml '{}' --json -q", yaml.string()));
    ASSERT_EQ(direct.exit_code, 0) << direct.err;
    ASSERT_EQ(loaded.exit_code, 0) << loaded.err;
    auto strip = [](std::string s, const std::string& path) {
      for (auto at = s.find(path); at != std::string::npos; at = s.find(path)) s.replace(at, path.size(), "NET");
      return s;
    };
    EXPECT_EQ(strip(direct.out, m.string()), strip(loaded.out, yaml.string()));
    const double file_macs = m.extension() == ".onnx" ? onnx_macs(m) : tflite_macs(m);
    EXPECT_GT(file_macs, 0);
    EXPECT_DOUBLE_EQ(imported_macs(trace::import_model(m).network), file_macs);
    ++checked;
  }
  if (checked == 0) GTEST_SKIP() << "the real models are not in " << model_cache() << ": run traces/fetch_models.sh";
}

// Every single-operator model of libonnx-testdata that imports also loads back from its YAML.
TEST(ImportRoundTrip, EveryLibonnxTestdataModelThatImports) {
  if (!fs::exists(kTestData)) GTEST_SKIP() << kTestData << " is missing: apt-get install libonnx-testdata";
  std::vector<fs::path> dirs;
  for (const auto& e : fs::directory_iterator(kTestData))
    if (e.path().filename().string().rfind("test_", 0) == 0 && fs::exists(e.path() / "model.onnx"))
      dirs.push_back(e.path());
  std::sort(dirs.begin(), dirs.end());
  int imported = 0;
  std::string failures;
  for (const auto& d : dirs) {
    trace::ImportResult r;
    try {
      r = trace::import_onnx(d / "model.onnx");
    } catch (const core::UserError&) {
      continue;  // refused with a clear message: EveryModelImportsOrIsAClearError covers these
    }
    ++imported;
    const std::string diff = round_trip(r);
    if (!diff.empty()) failures += d.filename().string() + ":\n" + diff + "\n";
  }
  EXPECT_EQ(failures, "");
  EXPECT_GT(imported, 600);
}
