// sum, mean, max, min, prod, any, all over a normalized axes list; argmax, argmin
// over one axis. keepdims changes only the output's shape, never its data order.
#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "interface/binary_ops.h"
#include "reference/dtype_dispatch.h"
#include "reference/kernel_util.h"
#include "reference/reduction_plan.h"
#include "reference/reference_kernels.h"
#include "selection/selected_ops.h"

namespace sg::kernels {
namespace {

// Floats accumulate in double; integers in uint64 so that overflow wraps.
template <DType Out>
using SumAcc = std::conditional_t<is_float(Out), double, uint64_t>;

struct Sum {
  static constexpr const char* kName = "sum";
  template <DType In, DType Out> static constexpr bool supported() {
    return In == Out || (Out == DType::kI64 && !is_float(In));
  }
  template <DType In, DType Out> struct Impl {
    using Acc = SumAcc<Out>;
    static Acc init() { return 0; }
    static Acc step(Acc a, Compute<In> x) { return a + convert<Acc>(x); }
    static Storage<Out> finish(Acc a, int64_t) { return store<Out>(a); }
  };
};
struct Prod {
  static constexpr const char* kName = "prod";
  template <DType In, DType Out> static constexpr bool supported() { return Sum::supported<In, Out>(); }
  template <DType In, DType Out> struct Impl {
    using Acc = SumAcc<Out>;
    static Acc init() { return 1; }
    static Acc step(Acc a, Compute<In> x) { return a * convert<Acc>(x); }
    static Storage<Out> finish(Acc a, int64_t) { return store<Out>(a); }
  };
};
struct Mean {
  static constexpr const char* kName = "mean";
  template <DType In, DType Out> static constexpr bool supported() {
    return is_float(Out) && (In == Out || !is_float(In));
  }
  template <DType In, DType Out> struct Impl {
    using Acc = double;
    static Acc init() { return 0; }
    static Acc step(Acc a, Compute<In> x) { return a + double(x); }
    // 0/0 is NaN: the mean of nothing, as NumPy.
    static Storage<Out> finish(Acc a, int64_t n) { return store<Out>(a / double(n)); }
  };
};
template <bool kIsMax>
struct Extremum {
  static constexpr const char* kName = kIsMax ? "max" : "min";
  static constexpr bool kNeedsElements = true;
  template <DType In, DType Out> static constexpr bool supported() { return In == Out; }
  template <DType In, DType Out> struct Impl {
    using Acc = Compute<In>;
    static Acc init() {
      if constexpr (std::is_floating_point_v<Acc>)
        return kIsMax ? -std::numeric_limits<Acc>::infinity() : std::numeric_limits<Acc>::infinity();
      else return kIsMax ? std::numeric_limits<Acc>::lowest() : std::numeric_limits<Acc>::max();
    }
    static Acc step(Acc a, Acc x) {
      if constexpr (kIsMax) return binary::Maximum::apply<Acc>(x, a);
      else return binary::Minimum::apply<Acc>(x, a);
    }
    static Storage<Out> finish(Acc a, int64_t) { return store<Out>(a); }
  };
};
template <bool kIsAll>
struct Logical {
  static constexpr const char* kName = kIsAll ? "all" : "any";
  template <DType In, DType Out> static constexpr bool supported() { return Out == DType::kBool; }
  template <DType In, DType Out> struct Impl {
    using Acc = bool;
    static Acc init() { return kIsAll; }
    static Acc step(Acc a, Compute<In> x) {
      return kIsAll ? (a && convert<bool>(x)) : (a || convert<bool>(x));
    }
    static Storage<Out> finish(Acc a, int64_t) { return a ? 1 : 0; }
  };
};

template <class R>
constexpr bool needs_elements() {
  if constexpr (requires { R::kNeedsElements; }) return R::kNeedsElements;
  else return false;
}

// (Unused in a selective build whose only reductions are argmax and argmin.)
[[maybe_unused]] Status read_axes(const char* op, const TensorRef& x, const ops::Attrs& attrs, bool* reduced) {
  for (int d = 0; d < kMaxRank; ++d) reduced[d] = false;
  if (attrs.values.empty()) return internal_error(std::string(op) + ": missing attributes");
  for (int64_t a : attrs.ints(ops::attr::kReduceAxes)) {
    SG_RETURN_IF_ERROR(check_axis(op, x, a));
    reduced[a] = true;
  }
  return Status::Ok();
}

// One reduced axis with kept dims after it ([outer, n, inner], inner > 1): walking
// each output element down its strided column would touch one element per cache
// line, so whole rows are folded into a block of accumulators instead.
template <class Impl, DType In, DType Out>
void reduce_columns(const ReductionPlan& p, const Storage<In>* px, Storage<Out>* po) {
  constexpr int64_t kBlock = 256;
  typename Impl::Acc acc[kBlock];
  const int64_t n = p.red_shape[0], inner = p.red_stride[0], outer = p.out_numel / inner;
  for (int64_t a = 0; a < outer; ++a)
    for (int64_t j0 = 0; j0 < inner; j0 += kBlock) {
      const int64_t nb = std::min(kBlock, inner - j0);
      for (int64_t j = 0; j < nb; ++j) acc[j] = Impl::init();
      const Storage<In>* col = px + a * n * inner + j0;
      for (int64_t i = 0; i < n; ++i, col += inner)
        for (int64_t j = 0; j < nb; ++j) acc[j] = Impl::step(acc[j], load<In>(col[j]));
      for (int64_t j = 0; j < nb; ++j) po[a * inner + j0 + j] = Impl::finish(acc[j], p.count);
    }
}

// Id is R's OpId: the loops are built for the operand dtypes the selection lists
// (every dtype in a full build; selection/selected_ops.h).
template <ops::OpId Id, class R>
Status reduce_kernel(const KernelContext&, const ops::Attrs& attrs, std::span<const TensorRef> in,
                     std::span<TensorRef> out) {
  SG_RETURN_IF_ERROR(check_arity(R::kName, in, 1, out));
  const TensorRef& x = in[0];
  TensorRef& o = out[0];
  bool reduced[kMaxRank];
  SG_RETURN_IF_ERROR(read_axes(R::kName, x, attrs, reduced));
  const ReductionPlan plan = make_reduction_plan(x, reduced);
  if (plan.out_numel != o.numel())
    return operand_mismatch(R::kName, x, o);
  if (needs_elements<R>() && plan.count == 0 && plan.out_numel > 0)
    return runtime_error(std::string("zero-size array to reduction operation ") + R::kName +
                         " which has no identity");
  return visit_dtype(x.dtype, [&](auto ti) {
    return visit_dtype(o.dtype, [&](auto to) -> Status {
      constexpr DType In = decltype(ti)::value;
      constexpr DType Out = decltype(to)::value;
      if constexpr (R::template supported<In, Out>() && selection::dtype_selected(Id, In)) {
        using Impl = typename R::template Impl<In, Out>;
        const Storage<In>* px = x.as<Storage<In>>();
        Storage<Out>* po = o.as<Storage<Out>>();
        if (plan.red_rank == 1 && plan.red_stride[0] > 1) {
          reduce_columns<Impl, In, Out>(plan, px, po);
          return Status::Ok();
        }
        for_each_kept(plan, [&](int64_t oi, int64_t base) {
          auto acc = Impl::init();
          for_each_reduced(plan, base, [&](int64_t i) { acc = Impl::step(acc, load<In>(px[i])); });
          po[oi] = Impl::finish(acc, plan.count);
        });
        return Status::Ok();
      } else {
        return unsupported_dtypes(R::kName, In, Out);
      }
    });
  });
}

// First index of the max (min); a NaN counts as the extreme, so the first NaN wins.
template <ops::OpId Id, bool kIsMax>
Status arg_kernel(const KernelContext&, const ops::Attrs& attrs, std::span<const TensorRef> in,
                  std::span<TensorRef> out) {
  const char* name = kIsMax ? "argmax" : "argmin";
  SG_RETURN_IF_ERROR(check_arity(name, in, 1, out));
  const TensorRef& x = in[0];
  TensorRef& o = out[0];
  if (attrs.values.empty()) return internal_error(std::string(name) + ": missing attributes");
  const int64_t axis = attrs.i(ops::attr::kArgAxis);
  SG_RETURN_IF_ERROR(check_axis(name, x, axis));
  if (o.dtype != DType::kI64) return unsupported_dtypes(name, x.dtype, o.dtype);
  const AxisView v = axis_view(x, int(axis));
  if (v.outer * v.inner != o.numel())
    return operand_mismatch(name, x, o);
  if (v.n == 0 && o.numel() > 0)
    return runtime_error(std::string("attempt to get ") + name + " of an empty sequence");
  int64_t* po = o.as<int64_t>();
  return visit_dtype(x.dtype, [&](auto t) -> Status {
    constexpr DType T = decltype(t)::value;
    if constexpr (!selection::dtype_selected(Id, T)) return unsupported_dtypes(name, T, DType::kI64);
    using C = Compute<T>;
    const Storage<T>* px = x.as<Storage<T>>();
    for (int64_t a = 0; a < v.outer; ++a) {
      for (int64_t b = 0; b < v.inner; ++b) {
        const Storage<T>* p = px + a * v.n * v.inner + b;
        C best = load<T>(p[0]);
        int64_t best_i = 0;
        for (int64_t i = 1; i < v.n && !binary::is_nan(best); ++i) {
          const C c = load<T>(p[i * v.inner]);
          if ((kIsMax ? c > best : c < best) || binary::is_nan(c)) {
            best = c;
            best_i = i;
          }
        }
        po[a * v.inner + b] = best_i;
      }
    }
    return Status::Ok();
  });
}

}  // namespace

KernelFn reduction_kernel(ops::OpId op) {
  using ops::OpId;
  switch (op) {
    case OpId::Sum: SG_RETURN_IF_SELECTED(Sum, reduce_kernel<OpId::Sum, Sum>);
    case OpId::Mean: SG_RETURN_IF_SELECTED(Mean, reduce_kernel<OpId::Mean, Mean>);
    case OpId::Max: SG_RETURN_IF_SELECTED(Max, reduce_kernel<OpId::Max, Extremum<true>>);
    case OpId::Min: SG_RETURN_IF_SELECTED(Min, reduce_kernel<OpId::Min, Extremum<false>>);
    case OpId::Prod: SG_RETURN_IF_SELECTED(Prod, reduce_kernel<OpId::Prod, Prod>);
    case OpId::Any: SG_RETURN_IF_SELECTED(Any, reduce_kernel<OpId::Any, Logical<false>>);
    case OpId::All: SG_RETURN_IF_SELECTED(All, reduce_kernel<OpId::All, Logical<true>>);
    case OpId::ArgMax: SG_RETURN_IF_SELECTED(ArgMax, arg_kernel<OpId::ArgMax, true>);
    case OpId::ArgMin: SG_RETURN_IF_SELECTED(ArgMin, arg_kernel<OpId::ArgMin, false>);
    default: return nullptr;
  }
}

}  // namespace sg::kernels
