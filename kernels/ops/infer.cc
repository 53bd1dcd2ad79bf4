// infer(): validates attributes and dispatches to the rule of the op's family;
// the dtype table of SPEC §3; helpers shared by the rule files.
#include "ops/infer.h"

#include <algorithm>

#include "ops/infer_rules.h"

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
  if constexpr (kConcrete<D>) {
    if (!r.ctx.scalars_may_be_unknown())
      return internal_error(name + ": the value of input " + std::to_string(input) + " is not known");
  }
  return std::optional<D>();
}

template bool broadcast_shapes<int64_t>(std::span<const std::vector<int64_t>* const>, std::vector<int64_t>&);
template bool broadcast_shapes<SymDim>(std::span<const std::vector<SymDim>* const>, std::vector<SymDim>&);
template Result<std::optional<int64_t>> dynamic_scalar<int64_t>(const Rule<int64_t>&, size_t);
template Result<std::optional<SymDim>> dynamic_scalar<SymDim>(const Rule<SymDim>&, size_t);

}  // namespace rules

template <class D>
Status infer(OpId op, const Attrs& attrs, std::span<const TensorType<D>> in,
             std::span<const std::optional<D>> scalars, std::vector<TensorType<D>>& out,
             InferContext<D>& ctx) {
  if (size_t(op) >= size_t(kNumOps)) return invalid_graph("unknown op id " + std::to_string(int(op)));
  // The rules index attributes and inputs by position: validate them first so a
  // malformed node gives an error, never an out-of-range read.
  std::vector<size_t> ranks;
  ranks.reserve(in.size());
  for (const TensorType<D>& t : in) ranks.push_back(t.rank());
  SG_RETURN_IF_ERROR(check_attrs(op, attrs, ranks));
  out.assign(size_t(op_def(op).num_outputs), TensorType<D>{});
  const rules::Rule<D> r{op, attrs, in, scalars, out, ctx};
  using namespace rules;
  switch (op) {
    case OpId::Add: case OpId::Sub: case OpId::Mul: case OpId::Div: case OpId::FloorDiv:
    case OpId::Mod: case OpId::Pow: case OpId::Maximum: case OpId::Minimum: case OpId::Less:
    case OpId::LessEqual: case OpId::Greater: case OpId::GreaterEqual: case OpId::Equal:
    case OpId::NotEqual: case OpId::LogicalAnd: case OpId::LogicalOr:
      return infer_binary(r);
    case OpId::Neg: case OpId::Abs: case OpId::Exp: case OpId::Log: case OpId::Sqrt:
    case OpId::Rsqrt: case OpId::Sin: case OpId::Cos: case OpId::Tanh: case OpId::Sigmoid:
    case OpId::Relu: case OpId::Gelu: case OpId::Floor: case OpId::Ceil: case OpId::Round:
    case OpId::Sign: case OpId::Square: case OpId::LogicalNot: case OpId::IsNan:
      return infer_unary(r);
    case OpId::Where: return infer_where(r);
    case OpId::Clip: return infer_clip(r);
    case OpId::Cast: return infer_cast(r);
    case OpId::Sum: case OpId::Mean: case OpId::Max: case OpId::Min: case OpId::Prod:
    case OpId::Any: case OpId::All:
      return infer_reduce(r);
    case OpId::ArgMax: case OpId::ArgMin: return infer_arg_reduce(r);
    case OpId::MatMul: return infer_matmul(r);
    case OpId::Reshape: return infer_reshape(r);
    case OpId::BroadcastTo: return infer_broadcast_to(r);
    case OpId::Transpose: return infer_transpose(r);
    case OpId::ExpandDims: return infer_expand_dims(r);
    case OpId::Squeeze: return infer_squeeze(r);
    case OpId::Concatenate: return infer_concatenate(r);
    case OpId::Slice: return infer_slice(r);
    case OpId::Take: return infer_take(r);
    case OpId::ShapeDim: return infer_shape_dim(r);
    case OpId::Full: return infer_full(r);
    case OpId::Softmax: case OpId::LogSoftmax: return infer_softmax(r);
    case OpId::Conv2D: return infer_conv2d(r);
    case OpId::MaxPool2D: case OpId::AvgPool2D: return infer_pool2d(r);
    case OpId::CumSum: return infer_cumsum(r);
    case OpId::Sort: case OpId::ArgSort: return infer_sort(r);
    case OpId::TopK: return infer_topk(r);
    case OpId::Tile: return infer_tile(r);
    case OpId::Pad: return infer_pad(r);
    case OpId::Eye: return infer_eye(r);
    case OpId::Arange: return infer_arange(r);
    case OpId::LayerNorm: return infer_layer_norm(r);
    case OpId::OneHot: return infer_one_hot(r);
    case OpId::SliceUpdate: return infer_slice_update(r);
    case OpId::FullyConnected: return infer_fully_connected(r);
    case OpId::Conv2DBias: return infer_conv2d_bias(r);
    case OpId::ElementwiseChain: return infer_elementwise_chain(r);
    case OpId::Random: return infer_random(r);
    case OpId::Custom: return infer_custom(r);
    case OpId::Print: return Status::Ok();  // no outputs; any inputs
    case OpId::Assert:
      if (in[0].dtype != DType::kBool || !in[0].shape.empty())
        return runtime_error("assert: the condition must be a bool scalar, got " +
                             std::string(dtype_name(in[0].dtype)) + ctx.format(in[0].shape));
      return Status::Ok();
  }
  return internal_error("no shape rule for op " + std::string(op_def(op).name));
}

template Status infer<int64_t>(OpId, const Attrs&, std::span<const TensorType<int64_t>>,
                               std::span<const std::optional<int64_t>>,
                               std::vector<TensorType<int64_t>>&, InferContext<int64_t>&);
template Status infer<SymDim>(OpId, const Attrs&, std::span<const TensorType<SymDim>>,
                              std::span<const std::optional<SymDim>>,
                              std::vector<TensorType<SymDim>>&, InferContext<SymDim>&);

}  // namespace sg::ops
