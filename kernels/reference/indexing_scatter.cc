// scatter (item assignment through a tensor of indices: x[idx] = v, x[mask] = v)
// and flat_nonzero (boolean selection: x[mask], sg.nonzero, sg.where(cond)),
// whose output length only its operand's values decide: reported_dims gives it
// to the executor, which then sizes the output (op_table.h kDataDependentShape).
#include <cstring>
#include <string>

#include "reference/kernel_util.h"
#include "reference/reference_kernels.h"
#include "selection/selected_ops.h"

namespace sg::kernels {
namespace {

int64_t index_at(const TensorRef& idx, int64_t i) {
  return idx.dtype == DType::kI32 ? int64_t(idx.as<int32_t>()[i]) : idx.as<int64_t>()[i];
}

// scatter(x, idx, updates): a copy of x, then row i of updates (take's layout)
// written at index idx[i] of the axis, in order, so the last of repeated indices
// wins (as NumPy's item assignment). Indices are checked before anything is written.
Status scatter_kernel(const KernelContext&, const ops::Attrs& attrs, std::span<const TensorRef> in,
                      std::span<TensorRef> out) {
  SG_RETURN_IF_ERROR(check_arity("scatter", in, 3, out));
  const TensorRef& x = in[0];
  const TensorRef& idx = in[1];
  const TensorRef& upd = in[2];
  TensorRef& o = out[0];
  if (attrs.values.empty()) return internal_error("scatter: missing attributes");
  const int64_t axis = attrs.i(ops::attr::kAxisValue);
  SG_RETURN_IF_ERROR(check_axis("scatter", x, axis));
  if (!is_int(idx.dtype)) return internal_error("scatter: indices must be integers, got " + describe(idx));
  const AxisView v = axis_view(x, int(axis));
  const int64_t count = idx.numel();
  if (x.dtype != o.dtype || upd.dtype != x.dtype || o.numel() != x.numel() ||
      upd.numel() != v.outer * count * v.inner)
    return internal_error("scatter: " + describe(x) + " with indices " + describe(idx) + " and updates " +
                          describe(upd) + " -> " + describe(o));
  for (int64_t i = 0; i < count; ++i) {
    const int64_t k = index_at(idx, i);
    if (k < -v.n || k >= v.n)
      return runtime_error("scatter: index " + std::to_string(k) + " is out of bounds for axis " +
                           std::to_string(axis) + " with size " + std::to_string(v.n));
  }
  const size_t elem = dtype_size(x.dtype);
  if (o.data != x.data) copy_elements(o.data, x.data, x.numel(), elem);
  const size_t row = size_t(v.inner) * elem;
  if (row == 0) return Status::Ok();
  const auto* src = static_cast<const uint8_t*>(upd.data);
  auto* dst = static_cast<uint8_t*>(o.data);
  for (int64_t a = 0; a < v.outer; ++a) {
    for (int64_t i = 0; i < count; ++i) {
      int64_t k = index_at(idx, i);
      if (k < 0) k += v.n;
      std::memcpy(dst + size_t(a * v.n + k) * row, src, row);
      src += row;
    }
  }
  return Status::Ok();
}

// Whether element i of x is nonzero: any bit set but a float's sign (-0.0 is zero,
// NaN is not), as NumPy's truth value of an element.
bool nonzero_at(const TensorRef& x, int64_t i) {
  switch (x.dtype) {
    case DType::kF32: return x.as<float>()[i] != 0.0f || x.as<float>()[i] != x.as<float>()[i];
    case DType::kF16: return (x.as<uint16_t>()[i] & 0x7fff) != 0;
    case DType::kI32: return x.as<int32_t>()[i] != 0;
    case DType::kI64: return x.as<int64_t>()[i] != 0;
    case DType::kBool: return x.as<uint8_t>()[i] != 0;
    default: {
      const auto* p = static_cast<const uint8_t*>(x.data) + size_t(i) * dtype_size(x.dtype);
      for (size_t b = 0; b < dtype_size(x.dtype); ++b)
        if (p[b] != 0) return true;
      return false;
    }
  }
}

int64_t count_nonzero(const TensorRef& x) {
  int64_t n = 0;
  const int64_t total = x.numel();
  for (int64_t i = 0; i < total; ++i) n += nonzero_at(x, i) ? 1 : 0;
  return n;
}

// flat_nonzero(x) -> i64[count]: the C-order positions of the nonzero elements.
Status flat_nonzero_kernel(const KernelContext&, const ops::Attrs&, std::span<const TensorRef> in,
                           std::span<TensorRef> out) {
  SG_RETURN_IF_ERROR(check_arity("flat_nonzero", in, 1, out));
  const TensorRef& x = in[0];
  TensorRef& o = out[0];
  if (o.dtype != DType::kI64 || o.rank != 1)
    return operand_mismatch("flat_nonzero", x, o);
  const int64_t total = x.numel();
  int64_t* dst = o.as<int64_t>();
  int64_t n = 0;
  for (int64_t i = 0; i < total; ++i) {
    if (!nonzero_at(x, i)) continue;
    if (n == o.shape[0])
      return internal_error("flat_nonzero: " + describe(x) + " has more nonzero elements than " + describe(o));
    dst[n++] = i;
  }
  if (n != o.shape[0])
    return internal_error("flat_nonzero: " + describe(x) + " has " + std::to_string(n) + " nonzero elements, not " +
                          std::to_string(o.shape[0]));
  return Status::Ok();
}

}  // namespace

KernelFn scatter_nonzero_kernel(ops::OpId op) {
  switch (op) {
    case ops::OpId::Scatter: SG_RETURN_IF_SELECTED(Scatter, scatter_kernel);
    case ops::OpId::FlatNonzero: SG_RETURN_IF_SELECTED(FlatNonzero, flat_nonzero_kernel);
    default: return nullptr;
  }
}

Status scatter_nonzero_reported_dims(ops::OpId op, std::span<const TensorRef> in, std::vector<int64_t>& dims) {
  if (op != ops::OpId::FlatNonzero || in.size() != 1) return internal_error("flat_nonzero: expects one input");
  dims.assign(1, count_nonzero(in[0]));
  return Status::Ok();
}

}  // namespace sg::kernels
