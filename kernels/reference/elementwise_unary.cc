// Elementwise unary ops. Integer operands of the transcendental ops give f32
// (SPEC §3): each is rounded to f32 first, as eager mode's astype does, then
// computed as an f32 operand would be.
#include <cmath>
#include <string>

#include "interface/binary_ops.h"
#include "reference/dtype_dispatch.h"
#include "reference/kernel_util.h"
#include "reference/reference_kernels.h"
#include "selection/selected_ops.h"

namespace sg::kernels {
namespace {

using binary::is_nan;
using binary::kIsInt;

enum class Kind {
  kMath,       // float result
  kKeep,       // result of the operand's dtype (or f32 for integer operands)
  kPredicate,  // bool result
};

// Variadic so that the body may contain commas.
#define SG_UNARY(Name, str, kind, ...)                   \
  struct Name {                                          \
    static constexpr const char* kName = str;            \
    static constexpr Kind kKind = kind;                  \
    template <class C> static auto apply(C x) __VA_ARGS__ \
  };

SG_UNARY(Neg, "neg", Kind::kKeep, {
  if constexpr (kIsInt<C>) return wrap_sub(C(0), x);
  else if constexpr (std::is_same_v<C, bool>) return x;
  else return C(-x);
})
SG_UNARY(Abs, "abs", Kind::kKeep, {
  if constexpr (kIsInt<C>) return x < 0 ? wrap_sub(C(0), x) : x;
  else if constexpr (std::is_same_v<C, bool>) return x;
  else return C(std::fabs(x));
})
SG_UNARY(Exp, "exp", Kind::kMath, { return C(std::exp(x)); })
SG_UNARY(Log, "log", Kind::kMath, { return C(std::log(x)); })
SG_UNARY(Sqrt, "sqrt", Kind::kMath, { return C(std::sqrt(x)); })
SG_UNARY(Rsqrt, "rsqrt", Kind::kMath, { return C(C(1) / std::sqrt(x)); })
SG_UNARY(Sin, "sin", Kind::kMath, { return C(std::sin(x)); })
SG_UNARY(Cos, "cos", Kind::kMath, { return C(std::cos(x)); })
SG_UNARY(Tanh, "tanh", Kind::kMath, { return C(std::tanh(x)); })
// Never exponentiates a large positive number, so never inf/inf.
SG_UNARY(Sigmoid, "sigmoid", Kind::kMath, {
  if (x >= 0) return C(C(1) / (C(1) + std::exp(-x)));
  const C e = std::exp(x);
  return C(e / (C(1) + e));
})
// 1 + erf(x/√2) as erfc(-x/√2): no cancellation where erf nears -1 (x below -4).
SG_UNARY(Gelu, "gelu", Kind::kMath, {
  return C(C(0.5) * x * std::erfc(x * C(-0.70710678118654752440)));
})
SG_UNARY(Relu, "relu", Kind::kKeep, { return binary::Maximum::apply<C>(x, C(0)); })
SG_UNARY(Floor, "floor", Kind::kKeep, {
  if constexpr (std::is_floating_point_v<C>) return C(std::floor(x));
  else return x;
})
SG_UNARY(Ceil, "ceil", Kind::kKeep, {
  if constexpr (std::is_floating_point_v<C>) return C(std::ceil(x));
  else return x;
})
// Round half to even, as np.round (the default rounding mode of nearbyint).
SG_UNARY(Round, "round", Kind::kKeep, {
  if constexpr (std::is_floating_point_v<C>) return C(std::nearbyint(x));
  else return x;
})
SG_UNARY(Sign, "sign", Kind::kKeep, {
  if constexpr (std::is_same_v<C, bool>) return x;
  else if constexpr (std::is_floating_point_v<C>) return is_nan(x) ? x : C((x > 0) - (x < 0));
  else return C((x > 0) - (x < 0));
})
SG_UNARY(Square, "square", Kind::kKeep, {
  if constexpr (kIsInt<C>) return wrap_mul(x, x);
  else if constexpr (std::is_same_v<C, bool>) return x;
  else return C(x * x);
})
SG_UNARY(LogicalNot, "logical_not", Kind::kPredicate, { return !convert<bool>(x); })
SG_UNARY(IsNan, "isnan", Kind::kPredicate, { return is_nan(x); })
#undef SG_UNARY

template <class Op, DType In, DType Out>
constexpr bool supported() {
  switch (Op::kKind) {
    case Kind::kMath: return is_float(Out) && (In == Out || !is_float(In));
    case Kind::kKeep: return In == Out || (is_float(Out) && !is_float(In));
    case Kind::kPredicate: return Out == DType::kBool;
  }
  return false;
}

template <class Op, DType In, DType Out>
using ComputeOf = std::conditional_t<Op::kKind == Kind::kPredicate, Compute<In>, Compute<Out>>;

// Id is Op's OpId: the loops are built for the operand dtypes the selection lists
// (every dtype in a full build; selection/selected_ops.h).
template <ops::OpId Id, class Op>
Status unary_kernel(const KernelContext&, const ops::Attrs&, std::span<const TensorRef> in,
                    std::span<TensorRef> out) {
  SG_RETURN_IF_ERROR(check_arity(Op::kName, in, 1, out));
  const TensorRef& x = in[0];
  TensorRef& o = out[0];
  const int64_t n = o.numel();
  if (x.numel() != n)
    return operand_mismatch(Op::kName, x, o);
  return visit_dtype(x.dtype, [&](auto ti) {
    return visit_dtype(o.dtype, [&](auto to) -> Status {
      constexpr DType In = decltype(ti)::value;
      constexpr DType Out = decltype(to)::value;
      if constexpr (supported<Op, In, Out>() && selection::dtype_selected(Id, In)) {
        using C = ComputeOf<Op, In, Out>;
        const Storage<In>* px = x.as<Storage<In>>();
        Storage<Out>* po = o.as<Storage<Out>>();
        for (int64_t i = 0; i < n; ++i) po[i] = store<Out>(Op::apply(convert<C>(load<In>(px[i]))));
        return Status::Ok();
      } else {
        return unsupported_dtypes(Op::kName, In, Out);
      }
    });
  });
}

}  // namespace

KernelFn elementwise_unary_kernel(ops::OpId op) {
  // Each op's OpId and functor share its name; an op the build does not select is
  // never instantiated.
  switch (op) {
#define SG_CASE(Name) \
  case ops::OpId::Name: SG_RETURN_IF_SELECTED(Name, unary_kernel<ops::OpId::Name, Name>);
    SG_CASE(Neg) SG_CASE(Abs) SG_CASE(Exp) SG_CASE(Log) SG_CASE(Sqrt) SG_CASE(Rsqrt) SG_CASE(Sin)
    SG_CASE(Cos) SG_CASE(Tanh) SG_CASE(Sigmoid) SG_CASE(Relu) SG_CASE(Gelu) SG_CASE(Floor) SG_CASE(Ceil)
    SG_CASE(Round) SG_CASE(Sign) SG_CASE(Square) SG_CASE(LogicalNot) SG_CASE(IsNan)
#undef SG_CASE
    default: return nullptr;
  }
}

}  // namespace sg::kernels
