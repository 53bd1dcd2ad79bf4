// Rules of tile and pad: every dim grows by a static factor or amount given as an
// attribute (check_attrs bounds them), so symbolic dims stay exact ([N] tiled by
// 2 is [N*2], padded by (1, 2) is [N+3]).
#include <algorithm>

#include "ops/infer_rules.h"

namespace sg::ops::rules {
namespace {

// Static dims must keep their element count in int64 range: bad attributes must
// give an error, not an overflow.
template <class D>
Status check_element_count(const Rule<D>& r, const std::vector<D>& dims) {
  int64_t count = 1;
  for (const D& d : dims) {
    std::optional<int64_t> s = dim_static(d);
    if (s && __builtin_mul_overflow(count, *s, &count)) {
      return r.error("the result ", r.fmt(dims), " has too many elements");
    }
  }
  return Status::Ok();
}

}  // namespace

template <class D>
Status infer_tile(const Rule<D>& r) {
  const TensorType<D>& x = r.in[0];
  const std::vector<int64_t>& reps = r.attrs.ints(attr::kTileReps);
  const size_t rank = std::max(x.rank(), reps.size());
  std::vector<D> dims;
  for (size_t i = 0; i < rank; ++i) {
    const size_t from_right = rank - 1 - i;  // NumPy aligns shape and reps at the right
    const D d = from_right < x.rank() ? x.shape[x.rank() - 1 - from_right] : D(1);
    const int64_t rep = from_right < reps.size() ? reps[reps.size() - 1 - from_right] : 1;
    if (std::optional<int64_t> s = dim_static(d)) {
      int64_t product = 0;
      if (__builtin_mul_overflow(*s, rep, &product)) return r.error("tiling ", r.fmt(x.shape), " overflows");
      dims.push_back(D(product));
    } else {
      dims.push_back(d * D(rep));
    }
  }
  SG_RETURN_IF_ERROR(check_element_count(r, dims));
  r.set_output(x.dtype, std::move(dims));
  return Status::Ok();
}

template <class D>
Status infer_pad(const Rule<D>& r) {
  const TensorType<D>& x = r.in[0];
  const std::vector<int64_t>& pads = r.attrs.ints(attr::kPadWidths);  // 2 per axis
  std::vector<D> dims;
  for (size_t i = 0; i < x.rank(); ++i) {
    const int64_t extra = pads[2 * i] + pads[2 * i + 1];  // each <= 2^31 - 1
    if (std::optional<int64_t> s = dim_static(x.shape[i])) {
      int64_t sum = 0;
      if (__builtin_add_overflow(*s, extra, &sum)) return r.error("padding ", r.fmt(x.shape), " overflows");
      dims.push_back(D(sum));
    } else {
      dims.push_back(x.shape[i] + D(extra));
    }
  }
  SG_RETURN_IF_ERROR(check_element_count(r, dims));
  r.set_output(x.dtype, std::move(dims));
  return Status::Ok();
}

SG_INSTANTIATE_RULE(infer_tile)
SG_INSTANTIATE_RULE(infer_pad)

}  // namespace sg::ops::rules
