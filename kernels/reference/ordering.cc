// The ordering family along one axis: cumsum, cumprod (cumsum's loop with a
// product), sort, argsort, topk, and searchsorted: a binary search of each value
// in a sorted 1-D sequence, O(m log n). The sorts order a buffer of positions
// (scratch) with a comparator that breaks ties by position: that is a total
// order, so std::sort gives the stable result without the allocation
// std::stable_sort would make. NaN sorts last (NumPy) and so counts as the
// largest value for topk, matching argmax, which returns the first NaN;
// searchsorted compares the same way (NumPy's does too).
#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <type_traits>

#include "reference/dtype_dispatch.h"
#include "reference/kernel_util.h"
#include "reference/reference_kernels.h"
#include "selection/selected_ops.h"

namespace sg::kernels {
namespace {

// a < b with NaN greater than everything (NaN and NaN are equal).
template <class T>
bool less_nan_last(T a, T b) {
  if constexpr (std::is_floating_point_v<T>) {
    if (std::isnan(a)) return false;
    if (std::isnan(b)) return true;
  }
  return a < b;
}

// cumsum: floats accumulate in float (NumPy's f32 loop; f16 as the eager module,
// rounded once at the end); integers in uint64 so that overflow wraps.
template <DType In, DType Out>
void cumsum_lanes(const TensorRef& x, TensorRef& o, const AxisView& v) {
  using Acc = std::conditional_t<is_float(Out), float, uint64_t>;
  const Storage<In>* px = x.as<Storage<In>>();
  Storage<Out>* po = o.as<Storage<Out>>();
  const int64_t n = v.n, s = v.inner;
  for (int64_t a = 0; a < v.outer; ++a) {
    for (int64_t b = 0; b < s; ++b) {
      const int64_t base = a * n * s + b;
      // Floats start at -0, the identity of +: NumPy copies the first element, so
      // a leading -0 stays -0 (0 + -0 would be +0).
      Acc acc{};
      if constexpr (is_float(Out)) acc = -0.0f;
      for (int64_t i = 0; i < n; ++i) {
        acc += convert<Acc>(load<In>(px[base + i * s]));
        po[base + i * s] = store<Out>(acc);
      }
    }
  }
}

Status cumsum_kernel(const KernelContext&, const ops::Attrs& attrs, std::span<const TensorRef> in,
                     std::span<TensorRef> out) {
  SG_RETURN_IF_ERROR(check_arity("cumsum", in, 1, out));
  const TensorRef& x = in[0];
  TensorRef& o = out[0];
  if (attrs.values.empty()) return internal_error("cumsum: missing attributes");
  const int64_t axis = attrs.i(ops::attr::kAxisValue);
  SG_RETURN_IF_ERROR(check_axis("cumsum", x, axis));
  if (x.numel() != o.numel()) return operand_mismatch("cumsum", x, o);
  const AxisView v = axis_view(x, int(axis));
  return visit_dtype(x.dtype, [&](auto ti) {
    return visit_dtype(o.dtype, [&](auto to) -> Status {
      constexpr DType In = decltype(ti)::value;
      constexpr DType Out = decltype(to)::value;
      if constexpr (In == Out || (Out == DType::kI64 && !is_float(In))) {
        cumsum_lanes<In, Out>(x, o, v);
        return Status::Ok();
      } else {
        return unsupported_dtypes("cumsum", In, Out);
      }
    });
  });
}

enum class Order { kSort, kArgSort, kTopK };

const char* order_name(Order order) {
  switch (order) {
    case Order::kSort: return "sort";
    case Order::kArgSort: return "argsort";
    case Order::kTopK: return "topk";
  }
  return "?";
}

// One lane: orders positions 0..n-1 of x's lane at `base` (stride s) into `idx`,
// ascending for sort/argsort, descending (only the first k) for topk.
template <DType T>
void order_lane(const Storage<T>* px, int64_t base, int64_t n, int64_t s, int64_t k, Order order, int64_t* idx) {
  auto at = [&](int64_t i) { return load<T>(px[base + i * s]); };
  for (int64_t i = 0; i < n; ++i) idx[i] = i;
  if (order == Order::kTopK) {
    auto before = [&](int64_t i, int64_t j) {
      const auto a = at(i), b = at(j);
      return less_nan_last(b, a) || (!less_nan_last(a, b) && i < j);
    };
    std::partial_sort(idx, idx + k, idx + n, before);
  } else {
    auto before = [&](int64_t i, int64_t j) {
      const auto a = at(i), b = at(j);
      return less_nan_last(a, b) || (!less_nan_last(b, a) && i < j);
    };
    std::sort(idx, idx + n, before);
  }
}

template <Order kOrder>
Status order_kernel(const KernelContext& ctx, const ops::Attrs& attrs, std::span<const TensorRef> in,
                    std::span<TensorRef> out) {
  const char* name = order_name(kOrder);
  const size_t n_out = kOrder == Order::kTopK ? 2 : 1;
  if (in.size() != 1 || out.size() != n_out) return internal_error(std::string(name) + ": wrong number of operands");
  const TensorRef& x = in[0];
  const size_t axis_attr = kOrder == Order::kTopK ? size_t(ops::attr::kTopKAxis) : size_t(ops::attr::kAxisValue);
  if (attrs.values.size() <= axis_attr) return internal_error(std::string(name) + ": missing attributes");
  const int64_t axis = attrs.i(axis_attr);
  SG_RETURN_IF_ERROR(check_axis(name, x, axis));
  const AxisView v = axis_view(x, int(axis));
  const int64_t k = kOrder == Order::kTopK ? attrs.i(ops::attr::kTopKK) : v.n;
  if (k < 0 || k > v.n) {
    return runtime_error("topk: k = " + std::to_string(k) + " is larger than the size " + std::to_string(v.n) +
                         " of axis " + std::to_string(axis) + " of " + describe(x));
  }
  // Values (sort, topk's first output) keep x's dtype; positions are i64.
  const TensorRef& values = out[0];
  const TensorRef* positions = kOrder == Order::kSort ? nullptr : &out[n_out - 1];
  const int64_t expected = v.outer * k * v.inner;
  if ((kOrder != Order::kArgSort && (values.dtype != x.dtype || values.numel() != expected)) ||
      (positions && (positions->dtype != DType::kI64 || positions->numel() != expected))) {
    return operand_mismatch(name, x, out[0]);
  }
  if (v.outer * v.n * v.inner == 0) return Status::Ok();
  if (ctx.scratch_size < size_t(v.n) * sizeof(int64_t) || ctx.scratch == nullptr) {
    return internal_error(std::string(name) + ": needs " + std::to_string(v.n * 8) + " bytes of scratch");
  }
  auto* idx = static_cast<int64_t*>(ctx.scratch);
  const size_t elem = dtype_size(x.dtype);
  const auto* src = static_cast<const uint8_t*>(x.data);
  const int64_t s = v.inner;
  return visit_dtype(x.dtype, [&](auto tag) -> Status {
    constexpr DType T = decltype(tag)::value;
    for (int64_t a = 0; a < v.outer; ++a) {
      for (int64_t b = 0; b < s; ++b) {
        const int64_t in_base = a * v.n * s + b, out_base = a * k * s + b;
        order_lane<T>(x.as<Storage<T>>(), in_base, v.n, s, k, kOrder, idx);
        for (int64_t i = 0; i < k; ++i) {
          if (positions) positions->as<int64_t>()[out_base + i * s] = idx[i];
          if (kOrder != Order::kArgSort) {
            std::memcpy(static_cast<uint8_t*>(values.data) + size_t(out_base + i * s) * elem,
                        src + size_t(in_base + idx[i] * s) * elem, elem);
          }
        }
      }
    }
    return Status::Ok();
  });
}

}  // namespace

size_t ordering_scratch_size(ops::OpId op, const ops::Attrs& attrs, std::span<const TensorRef> inputs) {
  size_t axis_attr = 0;
  switch (op) {
    case ops::OpId::Sort: case ops::OpId::ArgSort: axis_attr = ops::attr::kAxisValue; break;
    case ops::OpId::TopK: axis_attr = ops::attr::kTopKAxis; break;
    default: return 0;
  }
  // A malformed node gets no scratch; its kernel reports what is wrong.
  if (inputs.empty() || attrs.values.size() <= axis_attr) return 0;
  const int64_t axis = attrs.i(axis_attr);
  if (axis < 0 || axis >= inputs[0].rank) return 0;
  return size_t(inputs[0].shape[axis]) * sizeof(int64_t);
}

KernelFn ordering_kernel(ops::OpId op) {
  switch (op) {
    case ops::OpId::CumSum: SG_RETURN_IF_SELECTED(CumSum, cumsum_kernel);
    case ops::OpId::Sort: SG_RETURN_IF_SELECTED(Sort, order_kernel<Order::kSort>);
    case ops::OpId::ArgSort: SG_RETURN_IF_SELECTED(ArgSort, order_kernel<Order::kArgSort>);
    case ops::OpId::TopK: SG_RETURN_IF_SELECTED(TopK, order_kernel<Order::kTopK>);
    default: return nullptr;
  }
}

namespace {

// cumprod: floats multiply in float (NumPy's f32 loop; f16 as the eager module,
// rounded once per element); integers in uint64 so that overflow wraps.
template <DType In, DType Out>
void cumprod_lanes(const TensorRef& x, TensorRef& o, const AxisView& v) {
  using Acc = std::conditional_t<is_float(Out), float, uint64_t>;
  const Storage<In>* px = x.as<Storage<In>>();
  Storage<Out>* po = o.as<Storage<Out>>();
  const int64_t n = v.n, s = v.inner;
  for (int64_t a = 0; a < v.outer; ++a) {
    for (int64_t b = 0; b < s; ++b) {
      const int64_t base = a * n * s + b;
      Acc acc = Acc(1);
      for (int64_t i = 0; i < n; ++i) {
        acc *= convert<Acc>(load<In>(px[base + i * s]));
        po[base + i * s] = store<Out>(acc);
      }
    }
  }
}

Status cumprod_kernel(const KernelContext&, const ops::Attrs& attrs, std::span<const TensorRef> in,
                      std::span<TensorRef> out) {
  SG_RETURN_IF_ERROR(check_arity("cumprod", in, 1, out));
  const TensorRef& x = in[0];
  TensorRef& o = out[0];
  if (attrs.values.empty()) return internal_error("cumprod: missing attributes");
  const int64_t axis = attrs.i(ops::attr::kAxisValue);
  SG_RETURN_IF_ERROR(check_axis("cumprod", x, axis));
  if (x.numel() != o.numel()) return operand_mismatch("cumprod", x, o);
  const AxisView v = axis_view(x, int(axis));
  return visit_dtype(x.dtype, [&](auto ti) {
    return visit_dtype(o.dtype, [&](auto to) -> Status {
      constexpr DType In = decltype(ti)::value;
      constexpr DType Out = decltype(to)::value;
      if constexpr ((In == Out && In != DType::kBool && In != DType::kI32) ||
                    (Out == DType::kI64 && !is_float(In))) {
        cumprod_lanes<In, Out>(x, o, v);
        return Status::Ok();
      } else {
        return unsupported_dtypes("cumprod", In, Out);
      }
    });
  });
}

template <DType T>
void search_values(const TensorRef& a, const TensorRef& v, TensorRef& o, bool right) {
  using C = Compute<T>;
  const Storage<T>* pa = a.as<Storage<T>>();
  const Storage<T>* pv = v.as<Storage<T>>();
  int64_t* po = o.as<int64_t>();
  const int64_t n = a.numel(), m = v.numel();
  for (int64_t j = 0; j < m; ++j) {
    const C x = load<T>(pv[j]);
    // left: the first i with !(a[i] < x); right: the first i with x < a[i].
    int64_t lo = 0, hi = n;
    while (lo < hi) {
      const int64_t mid = lo + (hi - lo) / 2;
      const C y = load<T>(pa[mid]);
      const bool go_right = right ? !less_nan_last(x, y) : less_nan_last(y, x);
      if (go_right) lo = mid + 1;
      else hi = mid;
    }
    po[j] = lo;
  }
}

Status searchsorted_kernel(const KernelContext&, const ops::Attrs& attrs, std::span<const TensorRef> in,
                           std::span<TensorRef> out) {
  SG_RETURN_IF_ERROR(check_arity("searchsorted", in, 2, out));
  const TensorRef& a = in[0];
  const TensorRef& v = in[1];
  TensorRef& o = out[0];
  if (attrs.values.empty()) return internal_error("searchsorted: missing attributes");
  if (a.rank != 1 || a.dtype != v.dtype || o.dtype != DType::kI64 || o.numel() != v.numel())
    return internal_error("searchsorted: " + describe(a) + ", " + describe(v) + " -> " + describe(o));
  const bool right = attrs.i(ops::attr::kSearchSortedRight) != 0;
  return visit_dtype(a.dtype, [&](auto t) -> Status {
    search_values<decltype(t)::value>(a, v, o, right);
    return Status::Ok();
  });
}

}  // namespace

KernelFn scan_search_kernel(ops::OpId op) {
  switch (op) {
    case ops::OpId::CumProd: SG_RETURN_IF_SELECTED(CumProd, cumprod_kernel);
    case ops::OpId::SearchSorted: SG_RETURN_IF_SELECTED(SearchSorted, searchsorted_kernel);
    default: return nullptr;
  }
}

}  // namespace sg::kernels
