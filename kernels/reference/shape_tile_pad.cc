// tile (NumPy's np.tile) and pad (constant padding). Both move whole rows of the
// last axis; only the fill value of pad depends on the dtype.
#include <algorithm>
#include <cstring>
#include <string>

#include "reference/dtype_dispatch.h"
#include "reference/kernel_util.h"
#include "reference/reference_kernels.h"
#include "selection/selected_ops.h"

namespace sg::kernels {
namespace {

void contiguous_strides(const int64_t* shape, int rank, int64_t* strides) {
  for (int64_t d = rank - 1, s = 1; d >= 0; --d) {
    strides[d] = s;
    s *= shape[d];
  }
}

Status tile_kernel(const KernelContext&, const ops::Attrs& attrs, std::span<const TensorRef> in,
                   std::span<TensorRef> out) {
  SG_RETURN_IF_ERROR(check_arity("tile", in, 1, out));
  const TensorRef& x = in[0];
  TensorRef& o = out[0];
  if (attrs.values.empty()) return internal_error("tile: missing attributes");
  const std::vector<int64_t>& reps = attrs.ints(ops::attr::kTileReps);
  const int rank = o.rank;
  bool ok = x.dtype == o.dtype && rank == std::max<int>(x.rank, int(reps.size()));
  // x's shape and reps, aligned at the right to the result's rank.
  int64_t xs[kMaxRank], rs[kMaxRank];
  for (int d = 0; ok && d < rank; ++d) {
    const int xd = d - (rank - x.rank), rd = d - (rank - int(reps.size()));
    xs[d] = xd >= 0 ? x.shape[xd] : 1;
    rs[d] = rd >= 0 ? reps[size_t(rd)] : 1;
    ok = o.shape[d] == xs[d] * rs[d];
  }
  if (!ok) return operand_mismatch("tile", x, o);
  const int64_t total = o.numel();
  if (total == 0) return Status::Ok();
  const size_t elem = dtype_size(x.dtype);
  const auto* src = static_cast<const uint8_t*>(x.data);
  auto* dst = static_cast<uint8_t*>(o.data);
  if (rank == 0) {
    std::memcpy(dst, src, elem);
    return Status::Ok();
  }
  int64_t x_strides[kMaxRank];
  contiguous_strides(xs, rank, x_strides);
  const int last = rank - 1;
  const size_t row = size_t(xs[last]) * elem;
  int64_t idx[kMaxRank] = {};  // the output row's index over dims 0..last-1
  for (int64_t oo = 0; oo < total; oo += o.shape[last]) {
    int64_t off = 0;
    for (int d = 0; d < last; ++d) off += (idx[d] % xs[d]) * x_strides[d];
    for (int64_t r = 0; r < rs[last]; ++r) std::memcpy(dst + size_t(oo) * elem + size_t(r) * row, src + size_t(off) * elem, row);
    for (int d = last - 1; d >= 0; --d) {
      if (++idx[d] < o.shape[d]) break;
      idx[d] = 0;
    }
  }
  return Status::Ok();
}

Status pad_kernel(const KernelContext&, const ops::Attrs& attrs, std::span<const TensorRef> in,
                  std::span<TensorRef> out) {
  using namespace ops::attr;
  SG_RETURN_IF_ERROR(check_arity("pad", in, 1, out));
  const TensorRef& x = in[0];
  TensorRef& o = out[0];
  if (attrs.values.size() < 3) return internal_error("pad: missing attributes");
  const std::vector<int64_t>& pads = attrs.ints(kPadWidths);
  bool ok = x.dtype == o.dtype && x.rank == o.rank && pads.size() == size_t(2 * x.rank);
  for (int d = 0; ok && d < x.rank; ++d) ok = o.shape[d] == x.shape[d] + pads[2 * d] + pads[2 * d + 1];
  if (!ok) return operand_mismatch("pad", x, o);
  const int64_t total = o.numel();
  const double value = attrs.f(kPadValue);
  visit_dtype(o.dtype, [&](auto tag) {
    constexpr DType T = decltype(tag)::value;
    std::fill_n(o.as<Storage<T>>(), total, store<T>(value));
  });
  const int64_t count = x.numel();
  if (count == 0) return Status::Ok();
  const size_t elem = dtype_size(x.dtype);
  const auto* src = static_cast<const uint8_t*>(x.data);
  auto* dst = static_cast<uint8_t*>(o.data);
  if (x.rank == 0) {
    std::memcpy(dst, src, elem);
    return Status::Ok();
  }
  int64_t o_strides[kMaxRank];
  contiguous_strides(o.shape, o.rank, o_strides);
  const int last = x.rank - 1;
  const int64_t n = x.shape[last];
  int64_t idx[kMaxRank] = {};  // the input row's index over dims 0..last-1
  for (int64_t xo = 0; xo < count; xo += n) {
    int64_t off = pads[2 * size_t(last)];
    for (int d = 0; d < last; ++d) off += (idx[d] + pads[2 * size_t(d)]) * o_strides[d];
    std::memcpy(dst + size_t(off) * elem, src + size_t(xo) * elem, size_t(n) * elem);
    for (int d = last - 1; d >= 0; --d) {
      if (++idx[d] < x.shape[d]) break;
      idx[d] = 0;
    }
  }
  return Status::Ok();
}

}  // namespace

KernelFn tile_pad_kernel(ops::OpId op) {
  switch (op) {
    case ops::OpId::Tile: SG_RETURN_IF_SELECTED(Tile, tile_kernel);
    case ops::OpId::Pad: SG_RETURN_IF_SELECTED(Pad, pad_kernel);
    default: return nullptr;
  }
}

}  // namespace sg::kernels
