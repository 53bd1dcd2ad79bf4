// infer(): validates attributes and dispatches to the rule of the op's family;
// the dtype table of SPEC §3; helpers shared by the rule files.
#include "ops/infer.h"

#include <algorithm>
#include <iterator>
#include <type_traits>

#include "ops/infer_rules.h"
#include "selection/selected_ops.h"

namespace sg::ops {

uint64_t op_work(OpId op, std::span<const TensorType<int64_t>> in, std::span<const TensorType<int64_t>> out) {
  const auto saturating_mul = [](uint64_t a, uint64_t b) {
    uint64_t r;
    return __builtin_mul_overflow(a, b, &r) ? UINT64_MAX : r;
  };
  const auto elements = [&](const std::vector<int64_t>& shape) {
    uint64_t n = 1;
    for (int64_t d : shape) n = saturating_mul(n, uint64_t(d < 0 ? 0 : d));
    return n;
  };
  // dim d of input i (negative d from the end); 1 where it does not exist.
  const auto dim = [&](size_t i, int d) -> uint64_t {
    if (i >= in.size()) return 1;
    const std::vector<int64_t>& shape = in[i].shape;
    const int r = int(shape.size()), at = d < 0 ? r + d : d;
    return at >= 0 && at < r && shape[size_t(at)] > 0 ? uint64_t(shape[size_t(at)]) : 1;
  };
  uint64_t per_output = 1;
  switch (op) {
    case OpId::MatMul:
    case OpId::FullyConnected: per_output = dim(0, -1); break;
    case OpId::Conv2D:
    case OpId::Conv2DBias: per_output = saturating_mul(saturating_mul(dim(1, 0), dim(1, 1)), dim(1, 2)); break;
    case OpId::MaxPool2D:
    case OpId::AvgPool2D: per_output = saturating_mul(dim(0, 1), dim(0, 2)); break;
    default: break;
  }
  uint64_t work = 0;
  for (const TensorType<int64_t>& t : out) work = std::max(work, saturating_mul(elements(t.shape), per_output));
  for (const TensorType<int64_t>& t : in) work = std::max(work, elements(t.shape));
  return work;
}

DType binary_result_dtype(OpId op, DType t) {
  if (has_flag(op, kComparison) || op == OpId::LogicalAnd || op == OpId::LogicalOr) return DType::kBool;
  if (op == OpId::Div) return is_float(t) ? t : DType::kF32;
  return t;
}

DType unary_result_dtype(OpId op, DType t) {
  switch (op) {
    case OpId::LogicalNot:
    case OpId::IsNan:
      return DType::kBool;
    case OpId::Exp: case OpId::Log: case OpId::Sqrt: case OpId::Rsqrt: case OpId::Sin:
    case OpId::Cos: case OpId::Tanh: case OpId::Sigmoid: case OpId::Gelu:
      return is_float(t) ? t : DType::kF32;
    default:
      return t;
  }
}

DType reduction_result_dtype(OpId op, DType t) {
  switch (op) {
    case OpId::Sum:
    case OpId::Prod:
    case OpId::CumSum:
    case OpId::CumProd:
      return (t == DType::kBool || t == DType::kI32) ? DType::kI64 : t;
    case OpId::Mean:
      return is_float(t) ? t : DType::kF32;
    case OpId::Any:
    case OpId::All:
      return DType::kBool;
    case OpId::ArgMax:
    case OpId::ArgMin:
      return DType::kI64;
    default:
      return t;
  }
}

namespace rules {

Status rule_error(const char* name, std::initializer_list<std::string_view> parts) {
  std::string message = name;
  message += ": ";
  for (std::string_view part : parts) message += part;
  return runtime_error(std::move(message));
}

Status check_binary_dtype(OpId op, DType t) {
  const std::string name = op_def(op).name;
  if (op == OpId::LogicalAnd || op == OpId::LogicalOr) {
    if (t != DType::kBool) return runtime_error(name + ": operands must be bool, got " + dtype_name(t));
    return Status::Ok();
  }
  if (t != DType::kBool || has_flag(op, kComparison)) return Status::Ok();
  switch (op) {
    case OpId::Maximum:
    case OpId::Minimum:
    case OpId::Div:  // bool / bool is f32, as for ints
      return Status::Ok();
    default:
      return runtime_error(name + ": not defined for bool operands; cast with astype");
  }
}

Status check_unary_dtype(OpId op, DType t) {
  const std::string name = op_def(op).name;
  switch (op) {
    case OpId::LogicalNot:
      if (t != DType::kBool) return runtime_error(name + ": operand must be bool, got " + dtype_name(t));
      return Status::Ok();
    case OpId::Neg: case OpId::Abs: case OpId::Sign: case OpId::Square: case OpId::Floor:
    case OpId::Ceil: case OpId::Round: case OpId::Relu:
      if (t == DType::kBool) return runtime_error(name + ": not defined for bool; cast with astype");
      return Status::Ok();
    default:
      return Status::Ok();
  }
}

template <class D>
bool broadcast_shapes(std::span<const std::vector<D>* const> shapes, std::vector<D>& result) {
  size_t rank = 0;
  for (const std::vector<D>* s : shapes) rank = std::max(rank, s->size());
  result.assign(rank, D(1));
  for (size_t k = 0; k < rank; ++k) {  // k counts from the right
    D& res = result[rank - 1 - k];
    for (const std::vector<D>* s : shapes) {
      if (k >= s->size()) continue;
      const D& d = (*s)[s->size() - 1 - k];
      if (is_static_value(res, 1)) {
        res = d;
        continue;
      }
      if (is_static_value(d, 1)) continue;
      const Tri eq = dim_equal(res, d);
      if (eq == Tri::kNo) return false;
      if (eq == Tri::kUnknown && dim_static(d)) res = d;
    }
  }
  return true;
}

template <class D>
Result<std::optional<D>> dynamic_scalar(const Rule<D>& r, size_t input) {
  const std::string name = r.name();
  if (input >= r.in.size()) {
    return invalid_graph(name + ": expects a dynamic scalar as input " + std::to_string(input));
  }
  const TensorType<D>& t = r.in[input];
  if (t.rank() != 0 || !is_int(t.dtype)) {
    return r.error("input " + std::to_string(input) + " must be an integer scalar, got " +
                   dtype_name(t.dtype) + r.fmt(t.shape));
  }
  if (input < r.scalars.size() && r.scalars[input]) return std::optional<D>(*r.scalars[input]);
  if (concrete(r) && !r.ctx.scalars_may_be_unknown())
    return internal_error(name + ": the value of input " + std::to_string(input) + " is not known");
  return std::optional<D>();
}

template bool broadcast_shapes<int64_t>(std::span<const std::vector<int64_t>* const>, std::vector<int64_t>&);
template bool broadcast_shapes<SymDim>(std::span<const std::vector<SymDim>* const>, std::vector<SymDim>&);
template Result<std::optional<int64_t>> dynamic_scalar<int64_t>(const Rule<int64_t>&, size_t);
template Result<std::optional<SymDim>> dynamic_scalar<SymDim>(const Rule<SymDim>&, size_t);

}  // namespace rules

namespace {

template <class D>
Status infer_by_rule(OpId op, const Attrs& attrs, std::span<const TensorType<D>> in,
                     std::span<const std::optional<D>> scalars, std::vector<TensorType<D>>& out,
                     InferContext<D>& ctx) {
  if (size_t(op) >= size_t(kNumOps)) return invalid_graph("unknown op id " + std::to_string(int(op)));
  // The rules index attributes and inputs by position: validate them first so a
  // malformed node gives an error, never an out-of-range read.
  std::vector<size_t> ranks;
  ranks.reserve(in.size());
  for (const TensorType<D>& t : in) ranks.push_back(t.rank());
  SG_RETURN_IF_ERROR(check_attrs(op, attrs, ranks));
  out.assign(output_count(op, attrs), TensorType<D>{});
  const rules::Rule<D> r{op, attrs, in, scalars, out, ctx};
  using namespace rules;
  // A rule is named only where one of its ops is selected (selected_ops.h): a
  // selective build links the rules of its ops only, the core none.
#define SG_RULE(rule, ...)                                             \
  if constexpr (selection::any_of<__VA_ARGS__>()) return rule(r);      \
  else break
  switch (op) {
    case OpId::Add: case OpId::Sub: case OpId::Mul: case OpId::Div: case OpId::FloorDiv:
    case OpId::Mod: case OpId::Pow: case OpId::Maximum: case OpId::Minimum: case OpId::Less:
    case OpId::LessEqual: case OpId::Greater: case OpId::GreaterEqual: case OpId::Equal:
    case OpId::NotEqual: case OpId::LogicalAnd: case OpId::LogicalOr:
      SG_RULE(infer_binary, OpId::Add, OpId::Sub, OpId::Mul, OpId::Div, OpId::FloorDiv, OpId::Mod,
              OpId::Pow, OpId::Maximum, OpId::Minimum, OpId::Less, OpId::LessEqual, OpId::Greater,
              OpId::GreaterEqual, OpId::Equal, OpId::NotEqual, OpId::LogicalAnd, OpId::LogicalOr);
    case OpId::Neg: case OpId::Abs: case OpId::Exp: case OpId::Log: case OpId::Sqrt:
    case OpId::Rsqrt: case OpId::Sin: case OpId::Cos: case OpId::Tanh: case OpId::Sigmoid:
    case OpId::Relu: case OpId::Gelu: case OpId::Floor: case OpId::Ceil: case OpId::Round:
    case OpId::Sign: case OpId::Square: case OpId::LogicalNot: case OpId::IsNan:
      SG_RULE(infer_unary, OpId::Neg, OpId::Abs, OpId::Exp, OpId::Log, OpId::Sqrt, OpId::Rsqrt,
              OpId::Sin, OpId::Cos, OpId::Tanh, OpId::Sigmoid, OpId::Relu, OpId::Gelu, OpId::Floor,
              OpId::Ceil, OpId::Round, OpId::Sign, OpId::Square, OpId::LogicalNot, OpId::IsNan);
    case OpId::Where: SG_RULE(infer_where, OpId::Where);
    case OpId::Clip: SG_RULE(infer_clip, OpId::Clip);
    case OpId::Cast: SG_RULE(infer_cast, OpId::Cast);
    case OpId::Sum: case OpId::Mean: case OpId::Max: case OpId::Min: case OpId::Prod:
    case OpId::Any: case OpId::All:
      SG_RULE(infer_reduce, OpId::Sum, OpId::Mean, OpId::Max, OpId::Min, OpId::Prod, OpId::Any,
              OpId::All);
    case OpId::ArgMax: case OpId::ArgMin: SG_RULE(infer_arg_reduce, OpId::ArgMax, OpId::ArgMin);
    case OpId::MatMul: SG_RULE(infer_matmul, OpId::MatMul);
    case OpId::Reshape: SG_RULE(infer_reshape, OpId::Reshape);
    case OpId::BroadcastTo: SG_RULE(infer_broadcast_to, OpId::BroadcastTo);
    case OpId::Transpose: SG_RULE(infer_transpose, OpId::Transpose);
    case OpId::ExpandDims: SG_RULE(infer_expand_dims, OpId::ExpandDims);
    case OpId::Squeeze: SG_RULE(infer_squeeze, OpId::Squeeze);
    case OpId::Concatenate: SG_RULE(infer_concatenate, OpId::Concatenate);
    case OpId::Slice: SG_RULE(infer_slice, OpId::Slice);
    case OpId::Take: SG_RULE(infer_take, OpId::Take);
    case OpId::ScatterAdd: SG_RULE(infer_scatter_add, OpId::ScatterAdd);
    case OpId::Scatter: SG_RULE(infer_scatter, OpId::Scatter);
    case OpId::FlatNonzero: SG_RULE(infer_flat_nonzero, OpId::FlatNonzero);
    case OpId::ShapeDim: SG_RULE(infer_shape_dim, OpId::ShapeDim);
    case OpId::Full: SG_RULE(infer_full, OpId::Full);
    case OpId::Softmax: case OpId::LogSoftmax: SG_RULE(infer_softmax, OpId::Softmax, OpId::LogSoftmax);
    case OpId::Conv2D: SG_RULE(infer_conv2d, OpId::Conv2D);
    case OpId::MaxPool2D: case OpId::AvgPool2D: SG_RULE(infer_pool2d, OpId::MaxPool2D, OpId::AvgPool2D);
    case OpId::CumSum: SG_RULE(infer_cumsum, OpId::CumSum);
    case OpId::CumProd: SG_RULE(infer_cumsum, OpId::CumProd);
    case OpId::SearchSorted: SG_RULE(infer_searchsorted, OpId::SearchSorted);
    case OpId::Sort: case OpId::ArgSort: SG_RULE(infer_sort, OpId::Sort, OpId::ArgSort);
    case OpId::TopK: SG_RULE(infer_topk, OpId::TopK);
    case OpId::Tile: SG_RULE(infer_tile, OpId::Tile);
    case OpId::Pad: SG_RULE(infer_pad, OpId::Pad);
    case OpId::Eye: SG_RULE(infer_eye, OpId::Eye);
    case OpId::Arange: SG_RULE(infer_arange, OpId::Arange);
    case OpId::LayerNorm: SG_RULE(infer_layer_norm, OpId::LayerNorm);
    case OpId::OneHot: SG_RULE(infer_one_hot, OpId::OneHot);
    case OpId::SliceUpdate: SG_RULE(infer_slice_update, OpId::SliceUpdate);
    case OpId::FullyConnected: SG_RULE(infer_fully_connected, OpId::FullyConnected);
    case OpId::Conv2DBias: SG_RULE(infer_conv2d_bias, OpId::Conv2DBias);
    case OpId::ElementwiseChain: SG_RULE(infer_elementwise_chain, OpId::ElementwiseChain);
    case OpId::Random: SG_RULE(infer_random, OpId::Random);
    case OpId::Custom: SG_RULE(infer_custom, OpId::Custom);
    case OpId::Inv: case OpId::Cholesky: SG_RULE(infer_square, OpId::Inv, OpId::Cholesky);
    case OpId::Solve: case OpId::TriangularSolve: SG_RULE(infer_solve, OpId::Solve, OpId::TriangularSolve);
    case OpId::Slogdet: SG_RULE(infer_slogdet, OpId::Slogdet);
    case OpId::Qr: SG_RULE(infer_qr, OpId::Qr);
    case OpId::Eigh: SG_RULE(infer_eigh, OpId::Eigh);
    case OpId::Print: return Status::Ok();  // no outputs; any inputs
    case OpId::Assert:
      if (in[0].dtype != DType::kBool || !in[0].shape.empty())
        return runtime_error("assert: the condition must be a bool scalar, got " +
                             std::string(dtype_name(in[0].dtype)) + ctx.format(in[0].shape));
      return Status::Ok();
  }
#undef SG_RULE
  if constexpr (!selection::kAllOps) {
    if (!selection::selected(op))
      return invalid_graph(std::string(op_def(op).name) + ": not in this runtime's selected ops (SG_SELECTED_OPS)");
  }
  return internal_error("no shape rule for op " + std::string(op_def(op).name));
}

// A concrete context seen through the symbolic rules: dims are SymDim constants,
// and every service is the concrete context's (rules::concrete() is true).
class ConcreteAsSymbolic final : public InferContext<SymDim> {
 public:
  explicit ConcreteAsSymbolic(InferContext<int64_t>& ctx) : ctx_(ctx) {}
  SymDim fresh_dim(std::string_view why) override { return SymDim(ctx_.fresh_dim(why)); }
  void warn(std::string message) override { ctx_.warn(std::move(message)); }
  std::string format(const std::vector<SymDim>& shape) const override { return ctx_.format(constants(shape)); }
  bool scalars_may_be_unknown() const override { return ctx_.scalars_may_be_unknown(); }
  std::optional<SymDim> reported_dim(size_t i) const override {
    const std::optional<int64_t> d = ctx_.reported_dim(i);
    if (!d) return std::nullopt;
    return SymDim(*d);
  }
  bool dims_are_concrete() const override { return true; }

  // Every dim of a concrete invocation is static (fresh_dim gives constants too).
  static std::vector<int64_t> constants(const std::vector<SymDim>& shape) {
    std::vector<int64_t> dims(shape.size());
    for (size_t i = 0; i < shape.size(); ++i) dims[i] = shape[i].constant();
    return dims;
  }

 private:
  InferContext<int64_t>& ctx_;
};

}  // namespace

namespace rules {

Status infer_through_symbolic(OpId op, const Attrs& attrs, std::span<const TensorType<int64_t>> in,
                              std::span<const std::optional<int64_t>> scalars,
                              std::vector<TensorType<int64_t>>& out, InferContext<int64_t>& ctx) {
  std::vector<TensorType<SymDim>> sym_in(in.size());
  for (size_t i = 0; i < in.size(); ++i) {
    sym_in[i].dtype = in[i].dtype;
    sym_in[i].shape.assign(in[i].shape.begin(), in[i].shape.end());
  }
  std::vector<std::optional<SymDim>> sym_scalars(scalars.size());
  for (size_t i = 0; i < scalars.size(); ++i)
    if (scalars[i]) sym_scalars[i] = SymDim(*scalars[i]);
  std::vector<TensorType<SymDim>> sym_out;
  ConcreteAsSymbolic sym_ctx(ctx);
  const Status s = infer_by_rule<SymDim>(op, attrs, sym_in, sym_scalars, sym_out, sym_ctx);
  out.resize(sym_out.size());
  for (size_t i = 0; i < sym_out.size(); ++i)
    out[i] = TensorType<int64_t>{sym_out[i].dtype, ConcreteAsSymbolic::constants(sym_out[i].shape)};
  return s;
}

}  // namespace rules

template <class D>
Status infer(OpId op, const Attrs& attrs, std::span<const TensorType<D>> in,
             std::span<const std::optional<D>> scalars, std::vector<TensorType<D>>& out,
             InferContext<D>& ctx) {
  // A selective build with ops; the core (none) has no rules to share.
  constexpr bool kThroughSymbolic = !selection::kAllOps && std::size(selection::kSelected) > 1;
  if constexpr (std::is_same_v<D, int64_t> && kThroughSymbolic) {
    return rules::infer_through_symbolic(op, attrs, in, scalars, out, ctx);
  } else {
    return infer_by_rule<D>(op, attrs, in, scalars, out, ctx);
  }
}

template Status infer<int64_t>(OpId, const Attrs&, std::span<const TensorType<int64_t>>,
                               std::span<const std::optional<int64_t>>,
                               std::vector<TensorType<int64_t>>&, InferContext<int64_t>&);
template Status infer<SymDim>(OpId, const Attrs&, std::span<const TensorType<SymDim>>,
                              std::span<const std::optional<SymDim>>,
                              std::vector<TensorType<SymDim>>&, InferContext<SymDim>&);

}  // namespace sg::ops
