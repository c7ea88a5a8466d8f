// TFLite import, sparse constants. A tensor with `sparsity` (SparsityParameters) stores only some of its values
// in its buffer, in the order of its traversal_order, and says where they sit in the dense tensor through
// dim_metadata: a DENSE dimension's indices are implicit (it costs nothing but its dense_size field), a
// SPARSE_CSR dimension has array_segments (where each segment of the previous dimension starts in
// array_indices) and array_indices (the index of each stored element within this dimension), as a CSR matrix's
// row pointers and column indices. Converters put a DENSIFY operator after such a tensor; it decodes the dense
// tensor for the layer that uses it.
//
// What framesim counts (traces/README.md, "Real models"): a layer's weight bytes are what the file stores for its
// weights, the stored values at their type's width plus the index arrays (array_segments and array_indices of
// every SPARSE_CSR dimension, at their own width: int32, uint16 or uint8); traversal_order, block_map and
// dense_size are a few integers of metadata and are not counted. What the layer reads per inference stays the
// dense tensor: TFLite's DENSIFY decodes once, at the first inference, into a persistent tensor (its kernel
// keeps a flag and returns at once afterwards), and the layer reads that dense tensor every inference. DENSIFY
// itself is therefore folded like any operator on constants: its one-time write of the dense tensor is not
// costed as per-inference traffic, and the dense copy it keeps is not in the stored weight bytes.
// The layer says so with `sparse_zeros` (the dense elements the file leaves out) and `index_bytes`.
#include "trace/tflite_importer.hpp"

namespace framesim::trace::tflite_detail {

namespace {

/// Bytes per element of a TFLite type (INT4 packs two per byte).
double type_width(fb::TensorType type) {
  switch (type) {
    case fb::TensorType_FLOAT64:
    case fb::TensorType_INT64:
    case fb::TensorType_UINT64:
    case fb::TensorType_COMPLEX64: return 8;
    case fb::TensorType_COMPLEX128: return 16;
    case fb::TensorType_FLOAT16:
    case fb::TensorType_BFLOAT16:
    case fb::TensorType_INT16:
    case fb::TensorType_UINT16: return 2;
    case fb::TensorType_INT8:
    case fb::TensorType_UINT8:
    case fb::TensorType_BOOL: return 1;
    case fb::TensorType_INT4: return 0.5;
    default: return 4;
  }
}

/// Bytes of one index array (nothing when absent).
double index_vector_bytes(fb::SparseIndexVector type, const void* v) {
  if (!v) return 0;
  switch (type) {
    case fb::SparseIndexVector_Int32Vector: {
      const auto* values = static_cast<const fb::Int32Vector*>(v)->values();
      return values ? 4.0 * values->size() : 0.0;
    }
    case fb::SparseIndexVector_Uint16Vector: {
      const auto* values = static_cast<const fb::Uint16Vector*>(v)->values();
      return values ? 2.0 * values->size() : 0.0;
    }
    case fb::SparseIndexVector_Uint8Vector: {
      const auto* values = static_cast<const fb::Uint8Vector*>(v)->values();
      return values ? 1.0 * values->size() : 0.0;
    }
    default: return 0;
  }
}

}  // namespace

/// Values the buffer of tensor `t` stores (its bytes over the type's width).
double Importer::stored_values(int t) const {
  const auto* b = model_->buffers()->Get(tensor(t)->buffer());
  const double bytes = b->data() ? static_cast<double>(b->data()->size()) : static_cast<double>(b->size());
  return bytes / type_width(tensor(t)->type());
}

/// Bytes of the index arrays of sparse tensor `t`: array_segments and array_indices of its SPARSE_CSR dimensions.
double Importer::index_bytes(int t) const {
  double bytes = 0;
  const auto* dims = tensor(t)->sparsity()->dim_metadata();
  if (!dims) return 0;
  for (const auto* d : *dims) {
    if (d->format() != fb::DimensionType_SPARSE_CSR) continue;  // a dense dimension's indices are implicit
    bytes += index_vector_bytes(d->array_segments_type(), d->array_segments());
    bytes += index_vector_bytes(d->array_indices_type(), d->array_indices());
  }
  return bytes;
}

/// A constant with sparsity: checked (it must store fewer values than its dense shape has, with one metadata
/// entry per traversed dimension) and tallied for the import note.
void Importer::check_sparse(int t) {
  const auto* sp = tensor(t)->sparsity();
  const double dense = model::shape_elements(file_shape(t));
  const double values = stored_values(t);
  const std::size_t order = sp->traversal_order() ? sp->traversal_order()->size() : 0;
  const std::size_t dims = sp->dim_metadata() ? sp->dim_metadata()->size() : 0;
  if (order == 0 || dims != order)
    fail(
        fmt::format("tensor {} ('{}') is sparse but its sparsity has {} traversed dimensions and {} dimension "
                    "metadata entries (one per traversed dimension, at least one)",
                    t, tensor_name(t), order, dims));
  if (values > dense)
    fail(
        fmt::format("tensor {} ('{}') is sparse but its buffer stores {} values, more than the {} elements of its "
                    "dense shape {}",
                    t, tensor_name(t), values, dense, model::shape_to_string(file_shape(t))));
  ++sparse_.tensors;
  sparse_.values_bytes += values * type_width(tensor(t)->type());
  sparse_.index_bytes += index_bytes(t);
  sparse_.dense_bytes += dense * type_width(tensor(t)->type());
}

/// Adds sparse_zeros and index_bytes to the parameters of a layer that holds weights when some of `o`'s constant
/// inputs are decoded from sparse tensors.
void Importer::sparse_storage(const Op& o, std::string_view op, const std::vector<int>& inputs, OpParams& params) {
  const bool weighted = op == "conv2d" || op == "linear" || op == "embedding" ||
                        (op == "matmul" && inputs.size() == 1) || (op == "custom" && params.count("weights"));
  if (!weighted) return;
  double zeros = 0, index = 0;
  std::set<int> seen;
  for (int c : constant_inputs(o)) {
    const int s = slots_[static_cast<std::size_t>(c)].sparse;
    if (s < 0 || !seen.insert(s).second) continue;
    zeros += model::shape_elements(file_shape(s)) - stored_values(s);
    index += index_bytes(s);
  }
  if (seen.empty()) return;
  ++sparse_.layers;
  params["sparse_zeros"] = static_cast<std::int64_t>(zeros);
  params["index_bytes"] = static_cast<std::int64_t>(index);
}

void Importer::sparse_note() {
  if (sparse_.tensors == 0) return;
  const std::string direct =
      sparse_.densify < sparse_.tensors
          ? fmt::format(
                "; {} of them are read by their layers without a DENSIFY (a sparse kernel of the runtime's): "
                "costed the same way, dense reads and operations",
                sparse_.tensors - sparse_.densify)
          : "";
  warnings_.push_back(fmt::format(
      "{} sparse constant tensors (decoded by {} DENSIFY operators) give {} layers their weights: their weight bytes "
      "are as stored, {} B of values and {} B of index arrays, where the dense tensors are {} B; the layers still "
      "read their dense weights every inference (DENSIFY writes the dense tensor once, at the first inference, into "
      "a persistent buffer: that one-time write is not costed){}",
      sparse_.tensors, sparse_.densify, sparse_.layers, sparse_.values_bytes, sparse_.index_bytes, sparse_.dense_bytes,
      direct));
}

}  // namespace framesim::trace::tflite_detail
