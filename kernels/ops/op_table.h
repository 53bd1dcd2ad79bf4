// The op table: every op's name, version, arity and attributes, in one list.
// The compiler (shape inference, constant folding, emission), the runtime
// (loading, verification, dispatch) and the kernels all index it by OpId.
//
// Adding an op: one SG_OPS line, its attribute list below (if any), its family in
// op_families.h, then its rule, reference kernel, CUDA kernel (if any), staging and
// eager function, each in the file of its family (docs/DESIGN.md, "Op families";
// tools/lint/op_families.py checks it), and its tests. The tables are generated
// from the X-macro so they cannot drift apart.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

#include "attrs.h"

namespace sg::ops {

// Flags on an op.
enum OpFlags : uint32_t {
  kElementwiseUnary = 1u << 0,
  kElementwiseBinary = 1u << 1,   // NumPy broadcasting of two operands
  kReduction = 1u << 2,
  // The output shape depends on the values of integer scalar inputs (dynamic dims,
  // staged slice bounds): the rule reads them through `scalars`.
  kValueDependentShape = 1u << 3,
  kComparison = 1u << 4,          // result bool
  // Has an effect beyond its outputs (print, assert): never removed, reordered
  // across other effects, or folded at compile time.
  kSideEffect = 1u << 5,
  // The output's length depends on the values of a tensor operand (nonzero): the
  // kernel family reports it (kernels::reported_dims) before the rule runs, and a
  // rule without that report fails, so the planner leaves the value to the run.
  kDataDependentShape = 1u << 6,
};

// X(Enum, "name", version, min_inputs, max_inputs (-1: variadic), num_outputs (-1: given by
// the attributes, see output_count), attrs, flags)
// `attrs` names an array in namespace attr_specs (kNone for none).
#define SG_OPS(X)                                                                        \
  /* elementwise binary, NumPy broadcasting, dtypes per SPEC §3 */                       \
  X(Add, "add", 1, 2, 2, 1, kNone, kElementwiseBinary)                                   \
  X(Sub, "sub", 1, 2, 2, 1, kNone, kElementwiseBinary)                                   \
  X(Mul, "mul", 1, 2, 2, 1, kNone, kElementwiseBinary)                                   \
  X(Div, "div", 1, 2, 2, 1, kNone, kElementwiseBinary)                                   \
  X(FloorDiv, "floordiv", 1, 2, 2, 1, kNone, kElementwiseBinary)                         \
  X(Mod, "mod", 1, 2, 2, 1, kNone, kElementwiseBinary)                                   \
  X(Pow, "pow", 1, 2, 2, 1, kNone, kElementwiseBinary)                                   \
  X(Maximum, "maximum", 1, 2, 2, 1, kNone, kElementwiseBinary)                           \
  X(Minimum, "minimum", 1, 2, 2, 1, kNone, kElementwiseBinary)                           \
  X(Less, "less", 1, 2, 2, 1, kNone, kElementwiseBinary | kComparison)                   \
  X(LessEqual, "less_equal", 1, 2, 2, 1, kNone, kElementwiseBinary | kComparison)        \
  X(Greater, "greater", 1, 2, 2, 1, kNone, kElementwiseBinary | kComparison)             \
  X(GreaterEqual, "greater_equal", 1, 2, 2, 1, kNone, kElementwiseBinary | kComparison)  \
  X(Equal, "equal", 1, 2, 2, 1, kNone, kElementwiseBinary | kComparison)                 \
  X(NotEqual, "not_equal", 1, 2, 2, 1, kNone, kElementwiseBinary | kComparison)          \
  X(LogicalAnd, "logical_and", 1, 2, 2, 1, kNone, kElementwiseBinary)                    \
  X(LogicalOr, "logical_or", 1, 2, 2, 1, kNone, kElementwiseBinary)                      \
  /* elementwise unary */                                                                \
  X(Neg, "neg", 1, 1, 1, 1, kNone, kElementwiseUnary)                                    \
  X(Abs, "abs", 1, 1, 1, 1, kNone, kElementwiseUnary)                                    \
  X(Exp, "exp", 1, 1, 1, 1, kNone, kElementwiseUnary)                                    \
  X(Log, "log", 1, 1, 1, 1, kNone, kElementwiseUnary)                                    \
  X(Sqrt, "sqrt", 1, 1, 1, 1, kNone, kElementwiseUnary)                                  \
  X(Rsqrt, "rsqrt", 1, 1, 1, 1, kNone, kElementwiseUnary)                                \
  X(Sin, "sin", 1, 1, 1, 1, kNone, kElementwiseUnary)                                    \
  X(Cos, "cos", 1, 1, 1, 1, kNone, kElementwiseUnary)                                    \
  X(Tanh, "tanh", 1, 1, 1, 1, kNone, kElementwiseUnary)                                  \
  X(Sigmoid, "sigmoid", 1, 1, 1, 1, kNone, kElementwiseUnary)                            \
  X(Relu, "relu", 1, 1, 1, 1, kNone, kElementwiseUnary)                                  \
  X(Gelu, "gelu", 1, 1, 1, 1, kNone, kElementwiseUnary)                                  \
  X(Floor, "floor", 1, 1, 1, 1, kNone, kElementwiseUnary)                                \
  X(Ceil, "ceil", 1, 1, 1, 1, kNone, kElementwiseUnary)                                  \
  X(Round, "round", 1, 1, 1, 1, kNone, kElementwiseUnary)                                \
  X(Sign, "sign", 1, 1, 1, 1, kNone, kElementwiseUnary)                                  \
  X(Square, "square", 1, 1, 1, 1, kNone, kElementwiseUnary)                              \
  X(LogicalNot, "logical_not", 1, 1, 1, 1, kNone, kElementwiseUnary)                     \
  X(IsNan, "isnan", 1, 1, 1, 1, kNone, kElementwiseUnary)                                \
  /* where(cond: bool, a, b); clip(x, lo, hi) with lo/hi tensors of x's dtype */         \
  X(Where, "where", 1, 3, 3, 1, kNone, 0)                                                \
  X(Clip, "clip", 1, 3, 3, 1, kNone, 0)                                                  \
  X(Cast, "cast", 1, 1, 1, 1, kCast, 0)                                                  \
  /* reductions: axes normalized (non-negative, sorted, unique); empty = none */         \
  X(Sum, "sum", 1, 1, 1, 1, kReduce, kReduction)                                         \
  X(Mean, "mean", 1, 1, 1, 1, kReduce, kReduction)                                       \
  X(Max, "max", 1, 1, 1, 1, kReduce, kReduction)                                         \
  X(Min, "min", 1, 1, 1, 1, kReduce, kReduction)                                         \
  X(Prod, "prod", 1, 1, 1, 1, kReduce, kReduction)                                       \
  X(Any, "any", 1, 1, 1, 1, kReduce, kReduction)                                         \
  X(All, "all", 1, 1, 1, 1, kReduce, kReduction)                                         \
  X(ArgMax, "argmax", 1, 1, 1, 1, kArgReduce, kReduction)                                \
  X(ArgMin, "argmin", 1, 1, 1, 1, kArgReduce, kReduction)                                \
  /* linear algebra: NumPy matmul (1-D promotion, batch broadcasting) */                 \
  X(MatMul, "matmul", 1, 2, 2, 1, kNone, 0)                                              \
  /* shape ops */                                                                        \
  X(Reshape, "reshape", 1, 1, -1, 1, kShape, kValueDependentShape)                       \
  X(BroadcastTo, "broadcast_to", 1, 1, -1, 1, kShape, kValueDependentShape)              \
  X(Transpose, "transpose", 1, 1, 1, 1, kPerm, 0)                                        \
  X(ExpandDims, "expand_dims", 1, 1, 1, 1, kAxes, 0)                                     \
  X(Squeeze, "squeeze", 1, 1, 1, 1, kAxes, 0)                                            \
  X(Concatenate, "concatenate", 1, 1, -1, 1, kAxis, 0)                                   \
  X(Slice, "slice", 1, 1, -1, 1, kSlice, kValueDependentShape)                           \
  X(Take, "take", 1, 2, 2, 1, kAxis, 0)                                                  \
  X(ShapeDim, "shape_dim", 1, 1, 1, 1, kAxis, 0)                                         \
  /* creation: full(value: 0-d tensor, dynamic dims...) -> value's dtype */              \
  X(Full, "full", 1, 1, -1, 1, kShape, kValueDependentShape)                             \
  /* neural network */                                                                   \
  X(Softmax, "softmax", 1, 1, 1, 1, kAxis, 0)                                            \
  X(LogSoftmax, "log_softmax", 1, 1, 1, 1, kAxis, 0)                                     \
  X(Conv2D, "conv2d", 1, 2, 2, 1, kConv, 0)                                              \
  X(MaxPool2D, "max_pool2d", 1, 1, 1, 1, kPool, 0)                                       \
  X(AvgPool2D, "avg_pool2d", 1, 1, 1, 1, kPool, 0)                                       \
  /* ops are only appended: graph files and the runtime store OpIds */                   \
  /* along one normalized axis; cumsum: bool, i32 -> i64; argsort: i64, stable */        \
  X(CumSum, "cumsum", 1, 1, 1, 1, kAxis, 0)                                              \
  X(Sort, "sort", 1, 1, 1, 1, kAxis, 0)                                                  \
  X(ArgSort, "argsort", 1, 1, 1, 1, kAxis, 0)                                            \
  /* topk -> (values, indices i64): largest first, ties by lower index, NaN largest */   \
  X(TopK, "topk", 1, 1, 1, 2, kTopK, 0)                                                  \
  X(Tile, "tile", 1, 1, 1, 1, kTile, 0)                                                  \
  X(Pad, "pad", 1, 1, 1, 1, kPad, 0)                                                     \
  /* eye: no inputs, everything is an attribute */                                       \
  X(Eye, "eye", 1, 0, 0, 1, kEye, 0)                                                     \
  /* arange(start, stop, step[, length]): 0-d; see attr::kArangeIntInputs */             \
  X(Arange, "arange", 1, 3, 4, 1, kNone, kValueDependentShape)                           \
  /* layer_norm(x, gamma, beta) over the last axis */                                    \
  X(LayerNorm, "layer_norm", 1, 3, 3, 1, kLayerNorm, 0)                                  \
  X(OneHot, "one_hot", 1, 1, 1, 1, kOneHot, 0)                                           \
  /* slice_update(x, v, dynamic bounds...): x with x[slice] = v (value semantics) */     \
  X(SliceUpdate, "slice_update", 1, 2, -1, 1, kSlice, kValueDependentShape)             \
  /* print(values...): writes `format` with each "{}" replaced by the next value */     \
  X(Print, "print", 1, 0, -1, 0, kPrint, kSideEffect)                                    \
  /* assert(cond: bool 0-d): fails the run with `message` when cond is false */          \
  X(Assert, "assert", 1, 1, 1, 0, kAssert, kSideEffect)                                  \
  /* fused by the -O2 compiler (f32): activation(x @ w + b), w rank 2, b [w.shape[1]] */ \
  X(FullyConnected, "fully_connected", 1, 3, 3, 1, kFullyConnected, 0)                   \
  /* activation(conv2d(x, w) + b), b [w.shape[3]]; conv2d's attributes + activation */   \
  X(Conv2DBias, "conv2d_bias", 1, 3, 3, 1, kConvBias, 0)                                \
  /* fused by the -O2 compiler (f32): elementwise steps in one pass; see attr::Chain */  \
  X(ElementwiseChain, "elementwise_chain", 1, 1, -1, -1, kChain, 0)                     \
  /* random(key: i64[2], dynamic dims...): counter-based draws; see attr::Random */     \
  X(Random, "random", 1, 1, -1, 1, kRandom, kValueDependentShape)                       \
  /* custom(operands..., dynamic dims...): an op the application adds; attr::Custom */  \
  X(Custom, "custom", 1, 0, -1, 1, kCustom, kValueDependentShape | kSideEffect)         \
  /* scatter_add(x, idx, updates): zeros of x's type with updates added at idx along */ \
  /* the axis, repeated indices accumulating (take's gradient) */                        \
  X(ScatterAdd, "scatter_add", 1, 3, 3, 1, kAxis, 0)                                   \
  /* cumprod along one normalized axis; bool, i32 -> i64 (as prod) */                    \
  X(CumProd, "cumprod", 1, 1, 1, 1, kAxis, 0)                                            \
  /* searchsorted(a: sorted 1-D, v) -> i64 of v's shape, NumPy's; see attr::Search */   \
  X(SearchSorted, "searchsorted", 1, 2, 2, 1, kSearchSorted, 0)                         \
  /* scatter(x, idx, updates): x with x[..., idx[i], ...] = updates[..., i, ...] along  */ \
  /* the axis (take's layout), the last of repeated indices winning (item assignment) */  \
  X(Scatter, "scatter", 1, 3, 3, 1, kAxis, 0)                                            \
  /* flat_nonzero(x): i64[count], the C-order positions of x's nonzero elements; count */ \
  /* is known only when it runs (kDataDependentShape) */                                 \
  X(FlatNonzero, "flat_nonzero", 1, 1, 1, 1, kNone, kDataDependentShape)                \
  /* sg.linalg (f32, over the last two axes, batched over the leading ones; the     */  \
  /* operands of solve/triangular_solve have equal batch dims): kernels/reference/  */  \
  /* linalg.cc. slogdet -> (sign, logabsdet); qr -> (q, r) reduced; eigh -> (w, v)  */  \
  X(Inv, "inv", 1, 1, 1, 1, kNone, 0)                                                   \
  X(Solve, "solve", 1, 2, 2, 1, kNone, 0)                                               \
  X(Slogdet, "slogdet", 1, 1, 1, 2, kNone, 0)                                           \
  X(Cholesky, "cholesky", 1, 1, 1, 1, kNone, 0)                                         \
  X(TriangularSolve, "triangular_solve", 1, 2, 2, 1, kTriangularSolve, 0)               \
  X(Qr, "qr", 1, 1, 1, 2, kNone, 0)                                                     \
  X(Eigh, "eigh", 1, 1, 1, 2, kNone, 0)

enum class OpId : uint16_t {
#define SG_OP_ENUM(e, name, ver, mn, mx, nout, attrs, flags) e,
  SG_OPS(SG_OP_ENUM)
#undef SG_OP_ENUM
};

#define SG_OP_COUNT(e, name, ver, mn, mx, nout, attrs, flags) +1
inline constexpr int kNumOps = 0 SG_OPS(SG_OP_COUNT);
#undef SG_OP_COUNT

// Attribute lists, by position. Kernels and rules index Attrs with these enums.
namespace attr {
// cast
enum Cast { kCastDType = 0 };            // Int: DType value
// sum/mean/max/min/prod/any/all
enum Reduce { kReduceAxes = 0, kReduceKeepdims = 1 };  // Ints (normalized), Int 0/1
// argmax/argmin: one axis (normalized); axis=None is lowered to a flatten first
enum ArgReduce { kArgAxis = 0, kArgKeepdims = 1 };
// reshape/broadcast_to/full: target shape. Entries >= 0 static, -1 "infer" (reshape
// only, at most one), -2 "the next dynamic input" (inputs 1.. are i64/i32 scalars).
enum Shape { kShapeDims = 0 };
inline constexpr int64_t kInferDim = -1;
inline constexpr int64_t kDynamicDim = -2;
// transpose
enum Perm { kPermAxes = 0 };              // Ints, a permutation
// expand_dims/squeeze: axes of the output (expand_dims) or input (squeeze), normalized
enum Axes { kAxesList = 0 };
// concatenate, take, shape_dim, softmax, log_softmax: one normalized axis
enum Axis { kAxisValue = 0 };
// slice: one entry per input axis in each list. flags per axis:
//   kHasBegin, kHasEnd: the bound is given (otherwise NumPy's default for the step sign)
//   kIndex: an integer index (begin), the axis is dropped; out of range is an error
//   kDynBegin, kDynEnd: the bound is the next dynamic scalar input (inputs 1..)
// Static bounds may be negative (count from the end) and are clamped like NumPy's.
enum Slice { kSliceBegin = 0, kSliceEnd = 1, kSliceStep = 2, kSliceFlags = 3 };
enum SliceFlag : int64_t { kHasBegin = 1, kHasEnd = 2, kIndex = 4, kDynBegin = 8, kDynEnd = 16 };
// conv2d(x NHWC, w HWIO): strides [sh, sw], dilations [dh, dw], padding "VALID"|"SAME"
enum Conv { kConvStride = 0, kConvDilation = 1, kConvPadding = 2, kConvGroups = 3 };
// max_pool2d/avg_pool2d: window [kh, kw], strides [sh, sw], padding "VALID"|"SAME"
enum Pool { kPoolSize = 0, kPoolStride = 1, kPoolPadding = 2 };
// cumsum, sort, argsort use Axis. topk: k in [0, size of the axis], one normalized axis
enum TopK { kTopKK = 0, kTopKAxis = 1 };
// tile: NumPy's reps (>= 0); the shorter of reps and the shape is padded with
// leading 1s, so the result has rank max(rank, reps.size())
enum Tile { kTileReps = 0 };
// pad: widths [before_0, after_0, before_1, after_1, ...] (>= 0), one pair per
// axis; the fill value converted to x's dtype; mode "constant" (the only one)
enum Pad { kPadWidths = 0, kPadValue = 1, kPadMode = 2 };
// eye: [n, m] with ones on diagonal k (k > 0 above the main one); dtype a DType value
enum Eye { kEyeN = 0, kEyeM = 1, kEyeK = 2, kEyeDType = 3 };
// arange has no attributes. Integer start/stop/step (i32, i64): the length is
// computed from their values, max(ceil((stop - start) / step), 0). Float ones
// (f32, f16): the length is a 4th input, an integer scalar that the compiler
// computes (exactly, in double, where the bounds are Python numbers), because
// shape rules only see the values of integer scalars. The dtype is the inputs'.
inline constexpr int kArangeIntInputs = 3;
inline constexpr int kArangeFloatInputs = 4;
// layer_norm: eps >= 0; gamma and beta have x's dtype and shape [] or [1] or [d]
// for the last dim d
enum LayerNorm { kLayerNormEps = 0 };
// one_hot(idx: i32|i64) -> idx.shape + [depth] of dtype
enum OneHot { kOneHotDepth = 0, kOneHotDType = 1 };
// slice_update takes Slice's attributes; its dynamic bounds are inputs 2.. (after x, v)
// print: the text, "{}" where each input's value goes (in order); "{{" and "}}" are braces
enum Print { kPrintFormat = 0 };
// assert: the message of the run-time error when the condition is false
enum Assert { kAssertMessage = 0 };
// fully_connected: the activation applied after the bias, an Activation value
enum FullyConnected { kFcActivation = 0 };
// conv2d_bias: Conv's four attributes at the same positions, then the activation
enum ConvBias { kConvActivation = 4 };
// The activations fused ops apply. Only those whose fused kernels keep NumPy's
// NaN behaviour are listed; relu(NaN) and tanh(NaN) are NaN.
enum Activation : int64_t { kActNone = 0, kActRelu = 1, kActTanh = 2 };
inline constexpr int64_t kNumActivations = 3;
// elementwise_chain: `steps` holds (op, a, b) triples, run in order. An operand
// below the input count names an input, input count + j the result of step j; b is
// -1 for a unary op. Every input is f32 and has the result's shape or one element;
// every step's result has the result's shape. `outputs` (optional) lists the steps
// whose results are the node's outputs, in increasing order and ending with the
// last step (an optimizer's update writes the parameter and its moments in one
// pass); without it the one output is the last step's result.
enum Chain { kChainSteps = 0, kChainOutputs = 1 };
inline constexpr size_t kMaxChainSteps = 16;
// random(key, dynamic dims...): `shape` as kShape's (no -1), `distribution` one of
// RandomDistribution. The key is an i64[2] holding two 32-bit words (the low 32 bits
// of each are used). Element i (C order) of the result takes Threefry-2x32 (20
// rounds) of the key and the counter (i >> 32, i & 0xffffffff), giving two words
// (b0, b1); bits = b0 ^ b1 (JAX's partitionable construction). kBits: the bits as an
// i64 in [0, 2^32); kUniform: f32 in [0, 1), ((bits >> 9) | 0x3f800000) as a float
// minus 1; kNormal: sqrt(2)·erfinv(u) with u uniform on [nextafter(-1, 0), 1);
// kGumbel: -log(-log(u)) with u uniform on [tiny, 1); kKeys: the result has shape +
// [2], the new key i being (b0, b1). The float transforms are exactly specified
// f32 arithmetic (kernels/reference/random.cc, compiler/python/stagegraph/random.py).
enum Random { kRandomShape = 0, kRandomDistribution = 1 };
enum RandomDistribution : int64_t { kBits = 0, kUniform = 1, kNormal = 2, kGumbel = 3, kKeys = 4 };
inline constexpr int64_t kNumRandomDistributions = 5;
// custom: an op the op table lacks, declared by the staged program (sg.custom_op)
// and computed by a kernel the application registers with the runtime
// (stagegraph/custom_op.h). `name` names it ("my_ns.swish"); the first `operands`
// inputs are its operands, the rest the dynamic dims of its result, whose dtype
// and shape (kShape's entries, no -1) the compiler worked out from the program's
// declared rule. Never folded or merged: the kernel is the application's.
enum Custom { kCustomShape = 0, kCustomDType = 1, kCustomName = 2, kCustomOperands = 3 };
// searchsorted: right = 0 gives the first index i with v <= a[i] (NumPy's
// side='left'), 1 the first with v < a[i] ('right'); NaN sorts last, as sort does
enum SearchSorted { kSearchSortedRight = 0 };
// triangular_solve(a, b): a's lower (lower = 1) or upper (0) triangle solves a x = b
enum TriangularSolve { kTriangularLower = 0 };
// The ops a chain may hold: those whose f32 kernels are loops over one element at a
// time, the same in a chain as alone.
constexpr bool chain_step_op(OpId op) {
  switch (op) {
    case OpId::Add: case OpId::Sub: case OpId::Mul: case OpId::Div: case OpId::Maximum:
    case OpId::Minimum: case OpId::Tanh: case OpId::Gelu: case OpId::Relu: case OpId::Sqrt:
      return true;
    default:
      return false;
  }
}
}  // namespace attr

struct OpDef {
  OpId id;
  const char* name;
  uint16_t version;
  int8_t min_inputs;
  int8_t max_inputs;  // -1: variadic
  int8_t num_outputs;
  std::span<const AttrSpec> attrs;
  uint32_t flags;
};

const OpDef& op_def(OpId id);
// The number of outputs a node of `op` with these (checked) attributes has:
// num_outputs, or for elementwise_chain the length of its `outputs`.
size_t output_count(OpId op, const Attrs& attrs);
// The attributes a node of `op` must give (the optional ones follow them).
size_t required_attrs(const OpDef& def);
std::optional<OpId> find_op(std::string_view name);
inline bool has_flag(OpId id, uint32_t f) { return (op_def(id).flags & f) != 0; }

}  // namespace sg::ops
