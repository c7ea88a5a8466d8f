// Writing small ONNX models in tests with the ONNX protobuf classes: a one-graph model builder and attribute
// setters (shared by the importer's tests).
#pragma once

#include <onnx/onnx_pb.h>

#include <cstdint>
#include <string>
#include <vector>

#include "model/network.hpp"

namespace framesim::testing {

/// Builds a one-graph model: inputs, initializers, nodes, outputs (shapes left to shape inference).
class GraphBuilder {
 public:
  explicit GraphBuilder(int opset = 13, int ir = 7) {
    m_.set_ir_version(ir);
    m_.set_producer_name("onnx_import_test");
    m_.add_opset_import()->set_version(opset);
    m_.mutable_graph()->set_name("test_graph");
  }
  /// A graph input; a negative dimension is dynamic ("N").
  GraphBuilder& input(const std::string& name, const model::Shape& dims, int type = onnx::TensorProto::FLOAT) {
    auto* v = m_.mutable_graph()->add_input();
    v->set_name(name);
    auto* t = v->mutable_type()->mutable_tensor_type();
    t->set_elem_type(type);
    auto* s = t->mutable_shape();
    for (auto d : dims) {
      if (d < 0) s->add_dim()->set_dim_param("N");
      else s->add_dim()->set_dim_value(d);
    }
    return *this;
  }
  /// An initializer of zeros (raw data of the right size).
  GraphBuilder& weight(const std::string& name, const model::Shape& dims, int type = onnx::TensorProto::FLOAT) {
    auto* t = m_.mutable_graph()->add_initializer();
    t->set_name(name);
    t->set_data_type(type);
    double n = 1;
    for (auto d : dims) {
      t->add_dims(d);
      n *= static_cast<double>(d);
    }
    const int width = type == onnx::TensorProto::FLOAT || type == onnx::TensorProto::INT32 ? 4
                      : type == onnx::TensorProto::FLOAT16                                 ? 2
                      : type == onnx::TensorProto::INT64                                   ? 8
                                                                                           : 1;
    t->set_raw_data(std::string(static_cast<std::size_t>(n) * static_cast<std::size_t>(width), '\0'));
    return *this;
  }
  GraphBuilder& floats(const std::string& name, const model::Shape& dims, const std::vector<float>& values) {
    auto* t = m_.mutable_graph()->add_initializer();
    t->set_name(name);
    t->set_data_type(onnx::TensorProto::FLOAT);
    for (auto d : dims) t->add_dims(d);
    for (float v : values) t->add_float_data(v);
    return *this;
  }
  GraphBuilder& ints(const std::string& name, const std::vector<std::int64_t>& values) {
    auto* t = m_.mutable_graph()->add_initializer();
    t->set_name(name);
    t->set_data_type(onnx::TensorProto::INT64);
    t->add_dims(static_cast<std::int64_t>(values.size()));
    for (auto v : values) t->add_int64_data(v);
    return *this;
  }
  onnx::NodeProto& node(const std::string& op, const std::vector<std::string>& ins,
                        const std::vector<std::string>& outs, const std::string& name = "") {
    auto* n = m_.mutable_graph()->add_node();
    n->set_op_type(op);
    n->set_name(name);
    for (const auto& i : ins) n->add_input(i);
    for (const auto& o : outs) n->add_output(o);
    return *n;
  }
  GraphBuilder& output(const std::string& name, int type = onnx::TensorProto::FLOAT) {
    auto* v = m_.mutable_graph()->add_output();
    v->set_name(name);
    v->mutable_type()->mutable_tensor_type()->set_elem_type(type);
    return *this;
  }
  onnx::ModelProto& model() { return m_; }

 private:
  onnx::ModelProto m_;
};

inline void set_ints(onnx::NodeProto& n, const std::string& name, const std::vector<std::int64_t>& v) {
  auto* a = n.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INTS);
  for (auto x : v) a->add_ints(x);
}
inline void set_int(onnx::NodeProto& n, const std::string& name, std::int64_t v) {
  auto* a = n.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INT);
  a->set_i(v);
}

}  // namespace framesim::testing
