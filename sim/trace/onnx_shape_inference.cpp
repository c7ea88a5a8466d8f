// ONNX import, ONNX shape inference on the model (in a child process: ONNX's inference functions crash on some
// malformed models) and the value types it gives every tensor.
#include <onnx/defs/schema.h>
#include <onnx/shape_inference/implementation.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>

#include "trace/onnx_importer.hpp"

namespace framesim::trace::onnx_detail {

/// ONNX shape inference on model_, in this process. Data propagation first (it follows some shape arithmetic);
/// ONNX 1.12's propagators throw on a few valid graphs, so without it when it does.
void OnnxImporter::infer_in_process(onnx::ModelProto& m) {
  const onnx::ModelProto before = m;
  try {
    onnx::shape_inference::InferShapes(
        m, onnx::OpSchemaRegistry::Instance(),
        onnx::ShapeInferenceOptions(/*check_type=*/false, /*error_mode=*/0, /*data_prop=*/true));
    return;
  } catch (const std::exception&) {
    m = before;
  }
  onnx::shape_inference::InferShapes(m, onnx::OpSchemaRegistry::Instance(),
                                     onnx::ShapeInferenceOptions(false, 0, false));
}

/// Shape inference in a child process: ONNX's inference functions are not hardened against malformed models
/// (a Conv whose input rank disagrees with its weights' crashes ONNX 1.12), and a corrupt file must give an
/// error, not a crash. The child sends back the inferred value_info and output types.
void OnnxImporter::infer_shapes() {
  int fds[2];
  if (::pipe(fds) != 0) return infer_here();
  const pid_t pid = ::fork();
  if (pid < 0) {
    ::close(fds[0]);
    ::close(fds[1]);
    return infer_here();
  }
  if (pid == 0) {
    ::close(fds[0]);
    // A crash here is the parent's to report (below): the child dies by its signal, with no handler of ours
    // or a sanitizer's taking it for a crash of the program.
    for (const int sig : {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT}) std::signal(sig, SIG_DFL);
    std::string out;
    try {
      infer_in_process(model_);
      onnx::GraphProto g;
      *g.mutable_value_info() = model_.graph().value_info();
      *g.mutable_output() = model_.graph().output();
      out = "O" + g.SerializeAsString();
    } catch (const std::exception& e) {
      out = "E" + first_line(e.what());
    } catch (...) {
      out = "Ean unknown exception";
    }
    for (std::size_t done = 0; done < out.size();) {
      const auto n = ::write(fds[1], out.data() + done, out.size() - done);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;
      done += static_cast<std::size_t>(n);
    }
    ::_exit(0);
  }
  ::close(fds[1]);
  std::string in;
  char buffer[65536];
  for (;;) {
    const auto n = ::read(fds[0], buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    in.append(buffer, static_cast<std::size_t>(n));
  }
  ::close(fds[0]);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFSIGNALED(status))
    fail(fmt::format("ONNX shape inference crashed on this model (signal {}): it is malformed (a corrupt file?)",
                     WTERMSIG(status)));
  if (in.empty()) fail("ONNX shape inference ended without a result: the model is malformed (a corrupt file?)");
  if (in[0] == 'E') fail(fmt::format("ONNX shape inference failed: {}", in.substr(1)));
  onnx::GraphProto g;
  if (in[0] != 'O' || !g.ParseFromArray(in.data() + 1, static_cast<int>(in.size() - 1)) ||
      g.output_size() != model_.graph().output_size())
    fail("ONNX shape inference returned no readable result");
  model_.mutable_graph()->mutable_value_info()->Swap(g.mutable_value_info());
  for (int i = 0; i < g.output_size(); ++i) model_.mutable_graph()->mutable_output(i)->Swap(g.mutable_output(i));
}

void OnnxImporter::infer_here() {
  try {
    infer_in_process(model_);
  } catch (const std::exception& e) {
    fail(fmt::format("ONNX shape inference failed: {}", first_line(e.what())));
  }
}

std::string OnnxImporter::first_line(const std::string& s) {
  auto nl = s.find('\n');
  return nl == std::string::npos ? s : s.substr(0, nl);
}

void OnnxImporter::collect_types() {
  const auto& g = model_.graph();
  for (const auto& v : g.input()) types_[v.name()] = &v.type();
  for (const auto& v : g.value_info()) types_[v.name()] = &v.type();
  for (const auto& v : g.output())
    if (!types_.count(v.name()) || v.type().tensor_type().has_shape()) types_[v.name()] = &v.type();
}

/// "a sequence", "an optional", ... for values that are not tensors.
std::string OnnxImporter::kind_of(const onnx::TypeProto& t) {
  if (t.has_sequence_type()) return "a sequence";
  if (t.has_map_type()) return "a map";
  if (t.has_optional_type()) return "an optional";
  if (t.has_sparse_tensor_type()) return "a sparse tensor";
  if (!t.has_tensor_type()) return "a value of unknown type";
  return "a tensor";
}

std::string OnnxImporter::describe_type(const onnx::TypeProto& t) {
  if (!t.has_tensor_type()) return kind_of(t).substr(kind_of(t).find(' ') + 1);
  const auto& tt = t.tensor_type();
  std::string dims;
  if (!tt.has_shape()) {
    dims = "unknown rank";
  } else {
    for (int d = 0; d < tt.shape().dim_size(); ++d) {
      const auto& dim = tt.shape().dim(d);
      if (d) dims += "x";
      dims += dim.has_dim_value() ? std::to_string(dim.dim_value()) : dim.has_dim_param() ? dim.dim_param() : "?";
    }
    if (dims.empty()) dims = "scalar";
  }
  return fmt::format("{} {}", elem_type_name(tt.elem_type()), dims);
}

}  // namespace framesim::trace::onnx_detail
