// slice (basic indexing: ranges and integer indices, bounds static or staged),
// slice_update (item assignment into a copy) and take (gather along one axis).
// Index errors are run-time errors naming the op (SPEC §7).
#include <algorithm>
#include <cstring>
#include <string>

#include "reference/kernel_util.h"
#include "reference/reference_kernels.h"
#include "selection/selected_ops.h"

namespace sg::kernels {
namespace {

Status read_index_scalar(const char* op, const TensorRef& t, int64_t& v) {
  if (t.numel() != 1 || !is_int(t.dtype))
    return internal_error(std::string(op) + ": a dynamic bound must be an integer scalar, got " +
                          describe(t));
  v = t.dtype == DType::kI32 ? int64_t(*t.as<int32_t>()) : *t.as<int64_t>();
  return Status::Ok();
}

std::string out_of_bounds(int64_t index, int axis, int64_t size) {
  return "index " + std::to_string(index) + " is out of bounds for axis " + std::to_string(axis) +
         " with size " + std::to_string(size);
}

// Python's slice.indices(n) followed by the length of the range.
void adjust_range(bool has_begin, int64_t begin, bool has_end, int64_t end, int64_t step, int64_t n,
                  int64_t& start, int64_t& count) {
  if (step > 0) {
    start = !has_begin ? 0 : begin < 0 ? std::max<int64_t>(begin + n, 0) : std::min(begin, n);
    const int64_t stop = !has_end ? n : end < 0 ? std::max<int64_t>(end + n, 0) : std::min(end, n);
    count = stop > start ? (stop - start - 1) / step + 1 : 0;
  } else {
    start = !has_begin ? n - 1 : begin < 0 ? std::max<int64_t>(begin + n, -1) : std::min(begin, n - 1);
    const int64_t stop = !has_end ? -1 : end < 0 ? std::max<int64_t>(end + n, -1) : std::min(end, n - 1);
    count = stop < start ? (start - stop - 1) / (-step) + 1 : 0;
  }
}

// The elements x[...] selects: offsets base + sum(i_d * stride[d]) for i in shape.
struct SliceView {
  int64_t base = 0;
  int rank = 0;
  int64_t shape[kMaxRank] = {};
  int64_t stride[kMaxRank] = {};
};

// Reads the slice attributes of x = in[0]; dynamic bounds are in[first_dynamic..].
Status slice_view(const char* op, const ops::Attrs& attrs, std::span<const TensorRef> in, size_t first_dynamic,
                  SliceView& view) {
  using namespace ops::attr;
  const TensorRef& x = in[0];
  if (attrs.values.size() < 4) return internal_error(std::string(op) + ": missing attributes");
  const auto& begins = attrs.ints(kSliceBegin);
  const auto& ends = attrs.ints(kSliceEnd);
  const auto& steps = attrs.ints(kSliceStep);
  const auto& flags = attrs.ints(kSliceFlags);
  auto entry = [](const std::vector<int64_t>& v, int d, int64_t dflt) {
    return size_t(d) < v.size() ? v[d] : dflt;
  };
  size_t next_dynamic = first_dynamic;
  auto dynamic = [&](int64_t& v) -> Status {
    if (next_dynamic >= in.size()) return internal_error(std::string(op) + ": missing dynamic bound");
    return read_index_scalar(op, in[next_dynamic++], v);
  };
  int64_t x_strides[kMaxRank];
  for (int64_t d = x.rank - 1, s = 1; d >= 0; --d) {
    x_strides[d] = s;
    s *= x.shape[d];
  }
  for (int d = 0; d < x.rank; ++d) {
    const int64_t f = entry(flags, d, 0), n = x.shape[d];
    int64_t begin = entry(begins, d, 0), end = entry(ends, d, 0);
    if (f & kDynBegin) SG_RETURN_IF_ERROR(dynamic(begin));
    if (f & kDynEnd) SG_RETURN_IF_ERROR(dynamic(end));
    if (f & kIndex) {
      if (begin < -n || begin >= n) return runtime_error(std::string(op) + ": " + out_of_bounds(begin, d, n));
      view.base += (begin < 0 ? begin + n : begin) * x_strides[d];
      continue;
    }
    const int64_t step = entry(steps, d, 1);
    if (step == 0) return runtime_error(std::string(op) + ": step cannot be zero");
    int64_t start = 0, count = 0;
    adjust_range((f & (kHasBegin | kDynBegin)) != 0, begin, (f & (kHasEnd | kDynEnd)) != 0, end, step,
                 n, start, count);
    if (count > 0) view.base += start * x_strides[d];
    view.shape[view.rank] = count;
    view.stride[view.rank] = step * x_strides[d];
    ++view.rank;
  }
  return Status::Ok();
}

Status slice_kernel(const KernelContext&, const ops::Attrs& attrs, std::span<const TensorRef> in,
                    std::span<TensorRef> out) {
  SG_RETURN_IF_ERROR(check_arity("slice", in, 1, out));
  const TensorRef& x = in[0];
  TensorRef& o = out[0];
  if (x.dtype != o.dtype) return internal_error("slice: bad operands");
  SliceView view;
  SG_RETURN_IF_ERROR(slice_view("slice", attrs, in, 1, view));
  const int rank = view.rank;
  bool same = rank == o.rank;
  for (int d = 0; same && d < rank; ++d) same = view.shape[d] == o.shape[d];
  if (!same) return internal_error("slice: " + describe(x) + " gives a shape other than " + describe(o));
  const int64_t total = o.numel();
  if (total == 0) return Status::Ok();
  const size_t elem = dtype_size(x.dtype);
  const auto* src = static_cast<const uint8_t*>(x.data);
  auto* dst = static_cast<uint8_t*>(o.data);
  if (rank == 0) {
    std::memcpy(dst, src + size_t(view.base) * elem, elem);
    return Status::Ok();
  }
  const int last = rank - 1;
  const int64_t n = view.shape[last], step = view.stride[last];
  int64_t idx[kMaxRank] = {};
  int64_t off = view.base;
  for (int64_t oo = 0; oo < total; oo += n) {
    if (step == 1) {
      std::memcpy(dst + size_t(oo) * elem, src + size_t(off) * elem, size_t(n) * elem);
    } else {
      for (int64_t j = 0; j < n; ++j)
        std::memcpy(dst + size_t(oo + j) * elem, src + size_t(off + j * step) * elem, elem);
    }
    for (int d = last - 1; d >= 0; --d) {
      off += view.stride[d];
      if (++idx[d] < view.shape[d]) break;
      off -= view.stride[d] * view.shape[d];
      idx[d] = 0;
    }
  }
  return Status::Ok();
}

// x[...] = v into a copy of x: v broadcasts to the region (right-aligned, size-1
// dims repeated, extra leading size-1 dims allowed), as NumPy's item assignment.
Status slice_update_kernel(const KernelContext&, const ops::Attrs& attrs, std::span<const TensorRef> in,
                           std::span<TensorRef> out) {
  SG_RETURN_IF_ERROR(check_arity("slice_update", in, 2, out));
  const TensorRef& x = in[0];
  const TensorRef& v = in[1];
  TensorRef& o = out[0];
  if (x.dtype != o.dtype || v.dtype != x.dtype || o.rank != x.rank || o.numel() != x.numel())
    return internal_error("slice_update: " + describe(x) + " with value " + describe(v) + " -> " + describe(o));
  SliceView view;
  SG_RETURN_IF_ERROR(slice_view("slice_update", attrs, in, 2, view));
  int64_t v_stride[kMaxRank] = {};  // per region dim; 0 where v repeats
  bool fits = true;
  for (int d = v.rank - 1, s = 1; d >= 0; --d) {
    const int rd = view.rank - (v.rank - d);  // the region dim v's dim d lines up with
    if (rd < 0) {
      fits = fits && v.shape[d] == 1;
    } else if (v.shape[d] == view.shape[rd]) {
      v_stride[rd] = s;
    } else if (v.shape[d] != 1) {
      fits = false;
    }
    s *= v.shape[d];
  }
  if (!fits) return internal_error("slice_update: " + describe(v) + " does not broadcast to the region");
  const size_t elem = dtype_size(x.dtype);
  copy_elements(o.data, x.data, x.numel(), elem);
  int64_t count = 1;
  for (int d = 0; d < view.rank; ++d) count *= view.shape[d];
  if (count == 0) return Status::Ok();
  const auto* src = static_cast<const uint8_t*>(v.data);
  auto* dst = static_cast<uint8_t*>(o.data);
  int64_t idx[kMaxRank] = {};
  int64_t off = view.base, v_off = 0;
  for (int64_t e = 0; e < count; ++e) {
    std::memcpy(dst + size_t(off) * elem, src + size_t(v_off) * elem, elem);
    for (int d = view.rank - 1; d >= 0; --d) {
      off += view.stride[d];
      v_off += v_stride[d];
      if (++idx[d] < view.shape[d]) break;
      off -= view.stride[d] * view.shape[d];
      v_off -= v_stride[d] * view.shape[d];
      idx[d] = 0;
    }
  }
  return Status::Ok();
}

template <class I>
Status check_indices(const I* idx, int64_t count, int axis, int64_t n) {
  for (int64_t i = 0; i < count; ++i)
    if (idx[i] < -n || idx[i] >= n) return runtime_error("take: " + out_of_bounds(idx[i], axis, n));
  return Status::Ok();
}

Status take_kernel(const KernelContext&, const ops::Attrs& attrs, std::span<const TensorRef> in,
                   std::span<TensorRef> out) {
  SG_RETURN_IF_ERROR(check_arity("take", in, 2, out));
  const TensorRef& x = in[0];
  const TensorRef& idx = in[1];
  TensorRef& o = out[0];
  if (attrs.values.empty()) return internal_error("take: missing attributes");
  const int64_t axis = attrs.i(ops::attr::kAxisValue);
  SG_RETURN_IF_ERROR(check_axis("take", x, axis));
  if (!is_int(idx.dtype)) return internal_error("take: indices must be integers, got " + describe(idx));
  const AxisView v = axis_view(x, int(axis));
  const int64_t count = idx.numel();
  if (x.dtype != o.dtype || o.numel() != v.outer * count * v.inner)
    return internal_error("take: " + describe(x) + " with indices " + describe(idx) + " -> " +
                          describe(o));
  if (idx.dtype == DType::kI32) SG_RETURN_IF_ERROR(check_indices(idx.as<int32_t>(), count, int(axis), v.n));
  else SG_RETURN_IF_ERROR(check_indices(idx.as<int64_t>(), count, int(axis), v.n));
  const size_t row = size_t(v.inner) * dtype_size(x.dtype);
  const auto* src = static_cast<const uint8_t*>(x.data);
  auto* dst = static_cast<uint8_t*>(o.data);
  if (row == 0) return Status::Ok();
  for (int64_t a = 0; a < v.outer; ++a) {
    for (int64_t i = 0; i < count; ++i) {
      int64_t k = idx.dtype == DType::kI32 ? int64_t(idx.as<int32_t>()[i]) : idx.as<int64_t>()[i];
      if (k < 0) k += v.n;
      std::memcpy(dst, src + size_t(a * v.n + k) * row, row);
      dst += row;
    }
  }
  return Status::Ok();
}

template <class T>
void scatter_add_rows(const AxisView& v, int64_t count, const TensorRef& idx, const T* src, T* dst) {
  for (int64_t a = 0; a < v.outer; ++a)
    for (int64_t i = 0; i < count; ++i) {
      int64_t k = idx.dtype == DType::kI32 ? int64_t(idx.as<int32_t>()[i]) : idx.as<int64_t>()[i];
      if (k < 0) k += v.n;
      T* row = dst + (a * v.n + k) * v.inner;
      for (int64_t j = 0; j < v.inner; ++j) row[j] += src[j];
      src += v.inner;
    }
}

// scatter_add(x, idx, updates): zeros of x's type, updates[..., i, ...] added at
// index idx[i] of the axis (take's layout: x[:axis] + idx + x[axis+1:]).
Status scatter_add_kernel(const KernelContext&, const ops::Attrs& attrs, std::span<const TensorRef> in,
                          std::span<TensorRef> out) {
  SG_RETURN_IF_ERROR(check_arity("scatter_add", in, 3, out));
  const TensorRef& x = in[0];
  const TensorRef& idx = in[1];
  const TensorRef& upd = in[2];
  TensorRef& o = out[0];
  if (attrs.values.empty()) return internal_error("scatter_add: missing attributes");
  const int64_t axis = attrs.i(ops::attr::kAxisValue);
  SG_RETURN_IF_ERROR(check_axis("scatter_add", x, axis));
  if (!is_int(idx.dtype)) return internal_error("scatter_add: indices must be integers, got " + describe(idx));
  const AxisView v = axis_view(x, int(axis));
  const int64_t count = idx.numel();
  if (x.dtype != o.dtype || upd.dtype != x.dtype || o.numel() != x.numel() ||
      upd.numel() != v.outer * count * v.inner)
    return internal_error("scatter_add: " + describe(x) + " with indices " + describe(idx) + " and updates " +
                          describe(upd) + " -> " + describe(o));
  if (idx.dtype == DType::kI32) SG_RETURN_IF_ERROR(check_indices(idx.as<int32_t>(), count, int(axis), v.n));
  else SG_RETURN_IF_ERROR(check_indices(idx.as<int64_t>(), count, int(axis), v.n));
  std::memset(o.data, 0, size_t(o.numel()) * dtype_size(o.dtype));
  if (x.dtype != DType::kF32) return unsupported("scatter_add: " + describe(x) + " (f32 is supported)");
  scatter_add_rows(v, count, idx, upd.as<float>(), o.as<float>());
  return Status::Ok();
}

}  // namespace

KernelFn slice_take_kernel(ops::OpId op) {
  switch (op) {
    case ops::OpId::Slice: SG_RETURN_IF_SELECTED(Slice, slice_kernel);
    case ops::OpId::Take: SG_RETURN_IF_SELECTED(Take, take_kernel);
    case ops::OpId::SliceUpdate: SG_RETURN_IF_SELECTED(SliceUpdate, slice_update_kernel);
    case ops::OpId::ScatterAdd: SG_RETURN_IF_SELECTED(ScatterAdd, scatter_add_kernel);
    default: return nullptr;
  }
}

}  // namespace sg::kernels
