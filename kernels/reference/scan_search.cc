// cumprod along one axis (cumsum's loop with a product) and searchsorted: a binary
// search of each value in a sorted 1-D sequence, O(m log n), with NaN ordered last
// as sort orders it (NumPy's searchsorted compares the same way).
#include <algorithm>
#include <cmath>
#include <string>
#include <type_traits>

#include "reference/dtype_dispatch.h"
#include "reference/kernel_util.h"
#include "reference/reference_kernels.h"
#include "selection/selected_ops.h"

namespace sg::kernels {
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

// a < b with NaN greater than everything (NaN and NaN are equal), as sort orders.
template <class T>
bool less_nan_last(T a, T b) {
  if constexpr (std::is_floating_point_v<T>) {
    if (std::isnan(a)) return false;
    if (std::isnan(b)) return true;
  }
  return a < b;
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
