// Elementwise binary ops with NumPy broadcasting.
#include <string>

#include "interface/binary_ops.h"
#include "reference/broadcast.h"
#include "reference/dtype_dispatch.h"
#include "reference/kernel_util.h"
#include "reference/reference_kernels.h"
#include "reference/scalar_binary.h"
#include "selection/selected_ops.h"

namespace sg::kernels {
namespace {

using binary::Kind;

// The ops of the family; each op's OpId and functor (binary_ops.h) share its name.
#define SG_BINARY_OPS(X)                                                                               \
  X(Add) X(Sub) X(Mul) X(Div) X(FloorDiv) X(Mod) X(Pow) X(Maximum) X(Minimum) X(Less) X(LessEqual) \
  X(Greater) X(GreaterEqual) X(Equal) X(NotEqual) X(LogicalAnd) X(LogicalOr)

// A functor with its op's id, so that a kernel can ask the selection for its dtypes.
template <ops::OpId Id, class Functor>
struct Bound : Functor {
  static constexpr ops::OpId kId = Id;
};

// Op's loops are built for operands of dtype In: every dtype in a full build, the
// graphs' dtypes in a selective one (selection/selected_ops.h).
template <class Op, DType In>
constexpr bool built_for() {
  return selection::dtype_selected(Op::kId, In);
}

// The type the op computes in: comparisons compare the operands as they are;
// arithmetic computes in the result type, in double where integers give a float
// result (int / int) so that the one rounding is the final one.
template <class Op, DType In, DType Out>
struct ComputeOf {
  using type = std::conditional_t<
      Op::kKind == Kind::kLogical, bool,
      std::conditional_t<Op::kKind == Kind::kComparison, Compute<In>,
                         std::conditional_t<is_float(Out) && !is_float(In), double, Compute<Out>>>>;
};

template <class Op, DType In, DType Out>
constexpr bool supported() {
  switch (Op::kKind) {
    case Kind::kComparison:
    case Kind::kLogical:
      return Out == DType::kBool;
    case Kind::kArithmetic:
      return In == Out || (is_float(Out) && !is_float(In)) ||
             (In == DType::kBool && is_int(Out));
  }
  return false;
}

// The full build's loops: both operands walked, one of them broadcast, or both.
template <class Op, DType In, DType Out>
void run_broadcast_cases(const BroadcastPlan<2>& plan, const Storage<In>* pa, const Storage<In>* pb, Storage<Out>* po) {
  using C = typename ComputeOf<Op, In, Out>::type;
  auto ld = [](Storage<In> v) { return convert<C>(load<In>(v)); };
  for_each_broadcast_row<2>(plan, [&](int64_t oo, const int64_t* off, int64_t n, const int64_t* step) {
    const Storage<In>* x = pa + off[0];
    const Storage<In>* y = pb + off[1];
    Storage<Out>* z = po + oo;
    if (step[0] && step[1]) {
      for (int64_t j = 0; j < n; ++j) z[j] = store<Out>(Op::apply(ld(x[j]), ld(y[j])));
    } else if (step[1]) {
      const C xs = ld(x[0]);
      for (int64_t j = 0; j < n; ++j) z[j] = store<Out>(Op::apply(xs, ld(y[j])));
    } else if (step[0]) {
      const C ys = ld(y[0]);
      for (int64_t j = 0; j < n; ++j) z[j] = store<Out>(Op::apply(ld(x[j]), ys));
    } else {
      const Storage<Out> v = store<Out>(Op::apply(ld(x[0]), ld(y[0])));
      for (int64_t j = 0; j < n; ++j) z[j] = v;
    }
  });
}

template <class Op, DType In, DType Out>
void run_rows(const BroadcastPlan<2>& plan, const TensorRef& a, const TensorRef& b, TensorRef& o) {
  const Storage<In>* pa = a.as<Storage<In>>();
  const Storage<In>* pb = b.as<Storage<In>>();
  Storage<Out>* po = o.as<Storage<Out>>();
  if constexpr (!selection::kAllOps) {
    using C = typename ComputeOf<Op, In, Out>::type;
    auto ld = [](Storage<In> v) { return convert<C>(load<In>(v)); };
    // A selective build (selected_ops.h) keeps one strided loop per op and dtype:
    // the same values, in a fourth of the code of the cases below.
    for_each_broadcast_row<2>(plan, [&](int64_t oo, const int64_t* off, int64_t n, const int64_t* step) {
      const Storage<In>* x = pa + off[0];
      const Storage<In>* y = pb + off[1];
      Storage<Out>* z = po + oo;
      for (int64_t j = 0; j < n; ++j) z[j] = store<Out>(Op::apply(ld(x[j * step[0]]), ld(y[j * step[1]])));
    });
  } else {
    run_broadcast_cases<Op, In, Out>(plan, pa, pb, po);
  }
}

// Integer floordiv/mod by zero and integer powers with negative exponents are
// errors (SPEC §3, NumPy); checking the right operand first keeps the loops free
// of error paths.
template <class Op, class C>
constexpr bool checks_right_operand() {
  constexpr bool kDivision = std::is_base_of_v<binary::FloorDiv, Op> || std::is_base_of_v<binary::Mod, Op>;
  constexpr bool kPow = std::is_base_of_v<binary::Pow, Op>;
  return (kDivision && std::is_integral_v<C>) || (kPow && binary::kIsInt<C>);
}

template <class Op, DType In, class C>
Status check_right_operand(const TensorRef& b) {
  constexpr bool kDivision = std::is_base_of_v<binary::FloorDiv, Op> || std::is_base_of_v<binary::Mod, Op>;
  if constexpr (checks_right_operand<Op, C>()) {
    const Storage<In>* p = b.as<Storage<In>>();
    const int64_t n = b.numel();
    for (int64_t i = 0; i < n; ++i) {
      const C v = convert<C>(load<In>(p[i]));
      if constexpr (kDivision) {
        if (v == C(0)) return runtime_error(std::string(Op::kName) + ": integer division by zero");
      } else {
        if (v < 0) return runtime_error("pow: integers to negative integer powers are not allowed");
      }
    }
  }
  return Status::Ok();
}

// One element of a supported op and dtype pair.
template <class Op, DType In, DType Out>
Status apply_one(const TensorRef& a, const TensorRef& b, TensorRef& o) {
  using C = typename ComputeOf<Op, In, Out>::type;
  SG_RETURN_IF_ERROR((check_right_operand<Op, In, C>(b)));
  const C x = convert<C>(load<In>(*a.as<Storage<In>>()));
  const C y = convert<C>(load<In>(*b.as<Storage<In>>()));
  *o.as<Storage<Out>>() = store<Out>(Op::apply(x, y));
  return Status::Ok();
}

// Rank-0 operands (loop counters, conditions): one element, no broadcast plan.
template <class Op>
Status scalar_binary(const TensorRef& a, const TensorRef& b, TensorRef& o) {
  return visit_dtype(a.dtype, [&](auto ti) {
    return visit_dtype(o.dtype, [&](auto to) -> Status {
      constexpr DType In = decltype(ti)::value;
      constexpr DType Out = decltype(to)::value;
      if constexpr (supported<Op, In, Out>() && built_for<Op, In>()) return apply_one<Op, In, Out>(a, b, o);
      else return unsupported_dtypes(Op::kName, In, Out);
    });
  });
}

// The checks and the plan of every op of the family, shared (not per op; unused
// where a selective build has none of its ops).
[[maybe_unused]] Status check_operands(const char* name, std::span<const TensorRef> in, std::span<TensorRef> out) {
  SG_RETURN_IF_ERROR(check_arity(name, in, 2, out));
  if (in[0].dtype != in[1].dtype)
    return internal_error(std::string(name) + ": operand dtypes differ: " + describe(in[0]) + " and " +
                          describe(in[1]));
  return Status::Ok();
}

[[maybe_unused]] Status plan_operands(const char* name, const TensorRef& a, const TensorRef& b, const TensorRef& o,
                     BroadcastPlan<2>& plan) {
  if (!make_broadcast_plan<2>(o, {&a, &b}, plan))
    return internal_error(std::string(name) + ": cannot broadcast " + describe(a) + " and " + describe(b) +
                          " to " + describe(o));
  return Status::Ok();
}

template <class Op>
Status binary_kernel(const KernelContext&, const ops::Attrs&, std::span<const TensorRef> in,
                     std::span<TensorRef> out) {
  SG_RETURN_IF_ERROR(check_operands(Op::kName, in, out));
  const TensorRef& a = in[0];
  const TensorRef& b = in[1];
  TensorRef& o = out[0];
  // (A selective build runs rank-0 operands through the plan below: one element.)
  if constexpr (selection::kAllOps) {
    if ((a.rank | b.rank | o.rank) == 0) return scalar_binary<Op>(a, b, o);
  }
  BroadcastPlan<2> plan;
  SG_RETURN_IF_ERROR(plan_operands(Op::kName, a, b, o, plan));
  return visit_dtype(a.dtype, [&](auto ti) {
    return visit_dtype(o.dtype, [&](auto to) -> Status {
      constexpr DType In = decltype(ti)::value;
      constexpr DType Out = decltype(to)::value;
      if constexpr (supported<Op, In, Out>() && built_for<Op, In>()) {
        using C = typename ComputeOf<Op, In, Out>::type;
        if (plan.numel > 0) SG_RETURN_IF_ERROR((check_right_operand<Op, In, C>(b)));
        run_rows<Op, In, Out>(plan, a, b, o);
        return Status::Ok();
      } else {
        return unsupported_dtypes(Op::kName, In, Out);
      }
    });
  });
}

// The rank-0 kernel of one op and dtype pair: the node's declared types fixed
// them, so it checks only that it got scalars of those dtypes.
template <class Op, DType In, DType Out>
Status fixed_scalar(const KernelContext&, const ops::Attrs&, std::span<const TensorRef> in, std::span<TensorRef> out) {
  if (in.size() != 2 || out.size() != 1 || ((in[0].rank | in[1].rank | out[0].rank) != 0) || in[0].dtype != In ||
      in[1].dtype != In || out[0].dtype != Out) [[unlikely]]
    return internal_error(std::string(Op::kName) + ": the scalar kernel got other operands");
  return apply_one<Op, In, Out>(in[0], in[1], out[0]);
}

// The same as a fixed run (kernel.h) where no value makes the op fail.
template <class Op, DType In, DType Out>
void fixed_scalar_run(uint64_t, const TensorRef* t) {
  using C = typename ComputeOf<Op, In, Out>::type;
  const C x = convert<C>(load<In>(*t[0].as<Storage<In>>()));
  const C y = convert<C>(load<In>(*t[1].as<Storage<In>>()));
  *t[2].as<Storage<Out>>() = store<Out>(Op::apply(x, y));
}

template <class Op>
FixedFn fixed_scalar_run_for(DType in, DType out) {
  return visit_dtype(in, [&](auto ti) {
    return visit_dtype(out, [&](auto to) -> FixedFn {
      constexpr DType In = decltype(ti)::value;
      constexpr DType Out = decltype(to)::value;
      if constexpr (supported<Op, In, Out>() && built_for<Op, In>()) {
        if constexpr (!checks_right_operand<Op, typename ComputeOf<Op, In, Out>::type>())
          return &fixed_scalar_run<Op, In, Out>;
      }
      return nullptr;
    });
  });
}

template <class Op>
KernelFn fixed_scalar_for(DType in, DType out) {
  return visit_dtype(in, [&](auto ti) {
    return visit_dtype(out, [&](auto to) -> KernelFn {
      constexpr DType In = decltype(ti)::value;
      constexpr DType Out = decltype(to)::value;
      if constexpr (supported<Op, In, Out>() && built_for<Op, In>()) return &fixed_scalar<Op, In, Out>;
      else return nullptr;
    });
  });
}

// f(Bound<op, functor>{}) for a selected op of the family; null for the others, whose
// kernels are then never instantiated (selection/selected_ops.h).
template <class R, class F>
R with_selected_op(ops::OpId op, F f) {
  switch (op) {
#define SG_CASE(Name)                                                   \
  case ops::OpId::Name:                                                 \
    if constexpr (selection::selected(ops::OpId::Name))                 \
      return f(Bound<ops::OpId::Name, binary::Name>{});                 \
    else                                                                \
      return nullptr;
    SG_BINARY_OPS(SG_CASE)
#undef SG_CASE
    default: return nullptr;
  }
}

}  // namespace

KernelFn scalar_binary_kernel_of(ops::OpId op, DType in, DType out) {
  return with_selected_op<KernelFn>(op, [&](auto o) { return fixed_scalar_for<decltype(o)>(in, out); });
}

FixedFn scalar_binary_fixed_of(ops::OpId op, DType in, DType out) {
  return with_selected_op<FixedFn>(op, [&](auto o) { return fixed_scalar_run_for<decltype(o)>(in, out); });
}

KernelFn elementwise_binary_kernel(ops::OpId op) {
  return with_selected_op<KernelFn>(op, [](auto o) -> KernelFn { return &binary_kernel<decltype(o)>; });
}

#undef SG_BINARY_OPS

}  // namespace sg::kernels
