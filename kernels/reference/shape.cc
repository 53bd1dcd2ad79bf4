// The shape family: reshape, broadcast_to, transpose, expand_dims, squeeze,
// concatenate, shape_dim (one dim as an i64 scalar); tile and pad are in
// shape_tile_pad.cc. They move bytes, so they work on element sizes rather than dtypes.
#include <cstring>
#include <string>

#include "reference/broadcast.h"
#include "reference/dtype_dispatch.h"
#include "reference/kernel_util.h"
#include "reference/reference_kernels.h"
#include "selection/selected_ops.h"

namespace sg::kernels {

void copy_elements(void* dst, const void* src, int64_t n, size_t elem) {
  if (n > 0) std::memcpy(dst, src, size_t(n) * elem);
}

namespace {

template <size_t E> struct Bytes;
template <> struct Bytes<1> { using type = uint8_t; };
template <> struct Bytes<2> { using type = uint16_t; };
template <> struct Bytes<4> { using type = uint32_t; };
template <> struct Bytes<8> { using type = uint64_t; };

// Calls f(tag) with tag::type an unsigned integer of the dtype's size, where `Op`
// is selected for a dtype of that size (selected_ops.h); false where it is not.
template <ops::OpId Op, size_t N, class F>
bool call_if_size_selected(F& f) {
  if constexpr (selection::size_selected(Op, N)) {
    f(Bytes<N>{});
    return true;
  } else {
    return false;
  }
}

template <ops::OpId Op, class F>
bool visit_size(DType t, F&& f) {
  switch (dtype_size(t)) {
    case 1: return call_if_size_selected<Op, 1>(f);
    case 2: return call_if_size_selected<Op, 2>(f);
    case 4: return call_if_size_selected<Op, 4>(f);
    default: return call_if_size_selected<Op, 8>(f);
  }
}

// reshape, expand_dims, squeeze: the data of a C-order tensor does not change.
Status copy_data(const char* op, std::span<const TensorRef> in, std::span<TensorRef> out) {
  SG_RETURN_IF_ERROR(check_arity(op, in, 1, out));
  if (in[0].numel() != out[0].numel() || in[0].dtype != out[0].dtype)
    return operand_mismatch(op, in[0], out[0]);
  copy_elements(out[0].data, in[0].data, out[0].numel(), dtype_size(out[0].dtype));
  return Status::Ok();
}

Status reshape_kernel(const KernelContext&, const ops::Attrs&, std::span<const TensorRef> in,
                      std::span<TensorRef> out) {
  return copy_data("reshape", in, out);
}
Status expand_dims_kernel(const KernelContext&, const ops::Attrs&, std::span<const TensorRef> in,
                          std::span<TensorRef> out) {
  return copy_data("expand_dims", in, out);
}
Status squeeze_kernel(const KernelContext&, const ops::Attrs&, std::span<const TensorRef> in,
                      std::span<TensorRef> out) {
  return copy_data("squeeze", in, out);
}

Status broadcast_to_kernel(const KernelContext&, const ops::Attrs&, std::span<const TensorRef> in,
                           std::span<TensorRef> out) {
  SG_RETURN_IF_ERROR(check_arity("broadcast_to", in, 1, out));
  const TensorRef& x = in[0];
  TensorRef& o = out[0];
  BroadcastPlan<1> plan;
  if (x.dtype != o.dtype || !make_broadcast_plan<1>(o, {&x}, plan))
    return internal_error("broadcast_to: cannot broadcast " + describe(x) + " to " + describe(o));
  const bool built = visit_size<ops::OpId::BroadcastTo>(x.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* px = x.as<T>();
    T* po = o.as<T>();
    for_each_broadcast_row<1>(plan, [&](int64_t oo, const int64_t* off, int64_t n, const int64_t* step) {
      if (step[0]) {
        std::memcpy(po + oo, px + off[0], size_t(n) * sizeof(T));
      } else {
        const T v = px[off[0]];
        for (int64_t j = 0; j < n; ++j) po[oo + j] = v;
      }
    });
  });
  return built ? Status::Ok() : unsupported_dtypes("broadcast_to", x.dtype, o.dtype);
}

Status transpose_kernel(const KernelContext&, const ops::Attrs& attrs, std::span<const TensorRef> in,
                        std::span<TensorRef> out) {
  SG_RETURN_IF_ERROR(check_arity("transpose", in, 1, out));
  const TensorRef& x = in[0];
  TensorRef& o = out[0];
  if (attrs.values.empty()) return internal_error("transpose: missing attributes");
  const std::vector<int64_t>& perm = attrs.ints(ops::attr::kPermAxes);
  auto bad = [&] {
    return internal_error("transpose: bad permutation for " + describe(x) + " -> " + describe(o));
  };
  if (int(perm.size()) != x.rank || o.rank != x.rank || o.dtype != x.dtype) return bad();
  int64_t in_strides[kMaxRank];
  int64_t s = 1;
  for (int d = x.rank - 1; d >= 0; --d) {
    in_strides[d] = s;
    s *= x.shape[d];
  }
  // Output dims with the input stride each walks; size-1 dims dropped and
  // neighbours that stay adjacent in the input merged.
  int rank = 0;
  int64_t shape[kMaxRank], stride[kMaxRank];
  bool seen[kMaxRank] = {};
  for (int d = 0; d < o.rank; ++d) {
    const int64_t p = perm[d];
    if (p < 0 || p >= x.rank || seen[p] || o.shape[d] != x.shape[p]) return bad();
    seen[p] = true;
    if (o.shape[d] == 1) continue;
    if (rank > 0 && stride[rank - 1] == in_strides[p] * o.shape[d]) {
      shape[rank - 1] *= o.shape[d];
      stride[rank - 1] = in_strides[p];
    } else {
      shape[rank] = o.shape[d];
      stride[rank] = in_strides[p];
      ++rank;
    }
  }
  const int64_t total = o.numel();
  if (total == 0) return Status::Ok();
  if (rank <= 1) {  // the permutation only moves size-1 dims
    copy_elements(o.data, x.data, total, dtype_size(x.dtype));
    return Status::Ok();
  }
  const bool built = visit_size<ops::OpId::Transpose>(x.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* px = x.as<T>();
    T* po = o.as<T>();
    const int last = rank - 1;
    const int64_t n = shape[last], step = stride[last];
    int64_t idx[kMaxRank] = {};
    int64_t off = 0;
    for (int64_t oo = 0; oo < total; oo += n) {
      for (int64_t j = 0; j < n; ++j) po[oo + j] = px[off + j * step];
      for (int d = last - 1; d >= 0; --d) {
        off += stride[d];
        if (++idx[d] < shape[d]) break;
        off -= stride[d] * shape[d];
        idx[d] = 0;
      }
    }
  });
  return built ? Status::Ok() : unsupported_dtypes("transpose", x.dtype, o.dtype);
}

Status concatenate_kernel(const KernelContext&, const ops::Attrs& attrs, std::span<const TensorRef> in,
                          std::span<TensorRef> out) {
  SG_RETURN_IF_ERROR(check_arity("concatenate", in, 1, out));
  TensorRef& o = out[0];
  if (attrs.values.empty()) return internal_error("concatenate: missing attributes");
  const int64_t axis = attrs.i(ops::attr::kAxisValue);
  SG_RETURN_IF_ERROR(check_axis("concatenate", o, axis));
  const AxisView ov = axis_view(o, int(axis));
  int64_t total_n = 0;
  for (const TensorRef& t : in) {
    if (t.dtype != o.dtype || t.rank != o.rank)
      return internal_error("concatenate: " + describe(t) + " into " + describe(o));
    const AxisView v = axis_view(t, int(axis));
    if (v.outer != ov.outer || v.inner != ov.inner)
      return internal_error("concatenate: " + describe(t) + " into " + describe(o));
    total_n += v.n;
  }
  if (total_n != ov.n) return internal_error("concatenate: axis sizes do not add up to " + describe(o));
  const size_t elem = dtype_size(o.dtype);
  auto* dst = static_cast<uint8_t*>(o.data);
  for (int64_t a = 0; a < ov.outer; ++a) {
    for (const TensorRef& t : in) {
      const int64_t chunk = t.shape[axis] * ov.inner;
      copy_elements(dst, static_cast<const uint8_t*>(t.data) + size_t(a * chunk) * elem, chunk, elem);
      dst += size_t(chunk) * elem;
    }
  }
  return Status::Ok();
}

Status shape_dim_kernel(const KernelContext&, const ops::Attrs& attrs, std::span<const TensorRef> in,
                        std::span<TensorRef> out) {
  SG_RETURN_IF_ERROR(check_arity("shape_dim", in, 1, out));
  if (attrs.values.empty()) return internal_error("shape_dim: missing attributes");
  const int64_t axis = attrs.i(ops::attr::kAxisValue);
  SG_RETURN_IF_ERROR(check_axis("shape_dim", in[0], axis));
  if (out[0].dtype != DType::kI64 || out[0].numel() != 1)
    return internal_error("shape_dim: the result must be an i64 scalar, got " + describe(out[0]));
  *out[0].as<int64_t>() = in[0].shape[axis];
  return Status::Ok();
}

}  // namespace

KernelFn shape_kernel(ops::OpId op) {
  switch (op) {
    case ops::OpId::Reshape: SG_RETURN_IF_SELECTED(Reshape, reshape_kernel);
    case ops::OpId::ExpandDims: SG_RETURN_IF_SELECTED(ExpandDims, expand_dims_kernel);
    case ops::OpId::Squeeze: SG_RETURN_IF_SELECTED(Squeeze, squeeze_kernel);
    case ops::OpId::BroadcastTo: SG_RETURN_IF_SELECTED(BroadcastTo, broadcast_to_kernel);
    case ops::OpId::Transpose: SG_RETURN_IF_SELECTED(Transpose, transpose_kernel);
    case ops::OpId::Concatenate: SG_RETURN_IF_SELECTED(Concatenate, concatenate_kernel);
    case ops::OpId::ShapeDim: SG_RETURN_IF_SELECTED(ShapeDim, shape_dim_kernel);
    default: return nullptr;
  }
}

}  // namespace sg::kernels
