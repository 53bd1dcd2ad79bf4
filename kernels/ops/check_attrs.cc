// check_attrs: the load-time validation of a node's arity and attributes, so
// that rules and kernels can index attributes and axes without re-checking.
#include <cstdint>
#include <limits>
#include <string>

#include "ops/infer.h"
#include "selection/selected_ops.h"

namespace sg::ops {
namespace {

const char* kind_name(AttrKind k) {
  switch (k) {
    case AttrKind::kInt: return "int";
    case AttrKind::kInts: return "ints";
    case AttrKind::kFloat: return "float";
    case AttrKind::kFloats: return "floats";
    case AttrKind::kString: return "string";
  }
  return "?";
}

// Window sizes, strides and dilations stay far from overflow in the rules' arithmetic.
constexpr int64_t kMaxWindowParam = std::numeric_limits<int32_t>::max();
// Sizes given as attributes (eye's n and m, one_hot's depth, tile's reps, pad's
// widths): large enough for any tensor, small enough that dims stay far from overflow.
constexpr int64_t kMaxSize = std::numeric_limits<int32_t>::max();

class AttrChecker {
 public:
  AttrChecker(OpId op, const Attrs& attrs, std::span<const size_t> ranks)
      : name_(op_def(op).name), attrs_(attrs), ranks_(ranks) {}

  Status fail(const std::string& message) const { return invalid_graph(name_ + ": " + message); }

  // Axes that must be in [0, limit), strictly increasing (normalized).
  Status sorted_axes(size_t k, const char* what, size_t limit) const {
    const std::vector<int64_t>& axes = attrs_.ints(k);
    for (size_t i = 0; i < axes.size(); ++i) {
      if (axes[i] < 0 || uint64_t(axes[i]) >= limit) return out_of_range(what, axes[i], limit);
      if (i > 0 && axes[i] <= axes[i - 1]) return fail(std::string(what) + " must be sorted and unique");
    }
    return Status::Ok();
  }

  // elementwise_chain's (op, a, b) triples over `inputs` inputs (attr::Chain).
  Status chain_steps(size_t inputs) const {
    const std::vector<int64_t>& steps = attrs_.ints(attr::kChainSteps);
    if (steps.empty() || steps.size() % 3 != 0 || steps.size() / 3 > attr::kMaxChainSteps)
      return fail("steps must be 1 to " + std::to_string(attr::kMaxChainSteps) + " (op, a, b) triples, got " +
                  std::to_string(steps.size()) + " numbers");
    for (size_t j = 0; j < steps.size() / 3; ++j) {
      const int64_t op = steps[3 * j], a = steps[3 * j + 1], b = steps[3 * j + 2];
      const std::string step = "step " + std::to_string(j);
      if (op < 0 || op >= kNumOps || !attr::chain_step_op(OpId(op)))
        return fail(step + ": op " + std::to_string(op) + " cannot be chained");
      const uint64_t known = inputs + j;  // the inputs and the steps before this one
      if (a < 0 || uint64_t(a) >= known)
        return fail(step + ": operand " + std::to_string(a) + " is not an input or an earlier step");
      if (has_flag(OpId(op), kElementwiseUnary) ? b != -1 : (b < 0 || uint64_t(b) >= known))
        return fail(step + ": second operand " + std::to_string(b) + " is not " +
                    (has_flag(OpId(op), kElementwiseUnary) ? "-1 (a unary op)" : "an input or an earlier step"));
    }
    return chain_outputs(steps.size() / 3);
  }

  // elementwise_chain's `outputs`, where given: increasing steps ending with the last.
  Status chain_outputs(size_t n_steps) const {
    if (attrs_.values.size() <= attr::kChainOutputs) return Status::Ok();
    const std::vector<int64_t>& outputs = attrs_.ints(attr::kChainOutputs);
    for (size_t k = 0; k < outputs.size(); ++k)
      if (outputs[k] < 0 || uint64_t(outputs[k]) >= n_steps || (k > 0 && outputs[k] <= outputs[k - 1]))
        return fail("outputs must be increasing steps below " + std::to_string(n_steps) + ", got " +
                    std::to_string(outputs[k]) + " at " + std::to_string(k));
    if (!outputs.empty() && uint64_t(outputs.back()) != n_steps - 1)
      return fail("the last output must be the last step's result");
    return Status::Ok();
  }

  Status axis(size_t k, size_t rank) const {
    const int64_t a = attrs_.i(k);
    if (a < 0 || uint64_t(a) >= rank) return out_of_range("axis", a, rank);
    return Status::Ok();
  }

  Status flag(size_t k, const char* what) const {
    if (attrs_.i(k) != 0 && attrs_.i(k) != 1) return fail(std::string(what) + " must be 0 or 1");
    return Status::Ok();
  }

  Status perm(size_t rank) const {
    const std::vector<int64_t>& p = attrs_.ints(attr::kPermAxes);
    if (p.size() != rank) {
      return fail("perm has " + std::to_string(p.size()) + " entries for an input of rank " + std::to_string(rank));
    }
    std::vector<bool> seen(rank, false);
    for (int64_t a : p) {
      if (a < 0 || uint64_t(a) >= rank) return out_of_range("perm entry", a, rank);
      if (seen[size_t(a)]) return fail("perm repeats axis " + std::to_string(a));
      seen[size_t(a)] = true;
    }
    return Status::Ok();
  }

  // -2 entries are the dynamic scalar inputs 1.. in order.
  Status target_shape(bool allow_infer) const {
    size_t infer = 0;
    size_t dynamic = 0;
    for (int64_t d : attrs_.ints(attr::kShapeDims)) {
      if (d == attr::kInferDim && allow_infer) {
        ++infer;
      } else if (d == attr::kDynamicDim) {
        ++dynamic;
      } else if (d < 0) {
        return fail("invalid shape entry " + std::to_string(d));
      }
    }
    if (infer > 1) return fail("at most one -1 is allowed in a shape");
    return dynamic_inputs(dynamic);
  }

  // Inputs first.. are `count` scalars (dynamic dims or bounds, arange's operands).
  Status dynamic_inputs(size_t count, size_t first = 1) const {
    if (ranks_.size() != count + first) {
      return fail("expects " + std::to_string(count) + " dynamic scalar inputs, got " +
                  std::to_string(ranks_.size() < first ? 0 : ranks_.size() - first));
    }
    for (size_t i = first; i < ranks_.size(); ++i) {
      if (ranks_[i] != 0) return fail("input " + std::to_string(i) + " must be a scalar");
    }
    return Status::Ok();
  }

  // slice: dynamic bounds from input 1; slice_update: from input 2 (after the value).
  Status slice(size_t rank, size_t first_dynamic) const {
    using namespace attr;
    for (size_t k : {kSliceBegin, kSliceEnd, kSliceStep, kSliceFlags}) {
      if (attrs_.ints(k).size() != rank) {
        return fail("slice lists must have one entry per input axis (" + std::to_string(rank) + ")");
      }
    }
    size_t dynamic = 0;
    constexpr int64_t kKnown = kHasBegin | kHasEnd | kIndex | kDynBegin | kDynEnd;
    for (size_t i = 0; i < rank; ++i) {
      const int64_t f = attrs_.ints(kSliceFlags)[i];
      const int64_t step = attrs_.ints(kSliceStep)[i];
      const std::string where = "axis " + std::to_string(i) + ": ";
      if ((f & ~kKnown) != 0) return fail(where + "unknown slice flags " + std::to_string(f));
      if ((f & kHasBegin) && (f & kDynBegin)) return fail(where + "begin is both static and dynamic");
      if ((f & kHasEnd) && (f & kDynEnd)) return fail(where + "end is both static and dynamic");
      if ((f & kIndex) && (f & (kHasEnd | kDynEnd))) return fail(where + "an index has no end");
      if (!(f & kIndex) && (step == 0 || step == std::numeric_limits<int64_t>::min())) {
        return fail(where + "slice step cannot be " + std::to_string(step));
      }
      dynamic += ((f & kDynBegin) ? 1 : 0) + ((f & kDynEnd) ? 1 : 0);
    }
    return dynamic_inputs(dynamic, first_dynamic);
  }

  // An Int attribute in [lo, hi].
  Status int_in(size_t k, const char* what, int64_t lo, int64_t hi) const {
    const int64_t v = attrs_.i(k);
    if (v < lo || v > hi) {
      return fail(std::string(what) + " must be in [" + std::to_string(lo) + ", " + std::to_string(hi) +
                  "], got " + std::to_string(v));
    }
    return Status::Ok();
  }

  Status dtype(size_t k) const {
    const int64_t t = attrs_.i(k);
    if (t < 0 || t >= kNumDTypes) return fail("invalid dtype " + std::to_string(t));
    return Status::Ok();
  }

  // Ints attribute entries in [0, kMaxSize]: tile's reps, pad's widths.
  Status sizes(size_t k, const char* what, size_t count) const {
    const std::vector<int64_t>& v = attrs_.ints(k);
    if (v.size() != count) {
      return fail(std::string(what) + " must have " + std::to_string(count) + " entries, got " +
                  std::to_string(v.size()));
    }
    for (int64_t x : v) {
      if (x < 0 || x > kMaxSize) {
        return fail(std::string(what) + " must be in [0, " + std::to_string(kMaxSize) + "], got " + std::to_string(x));
      }
    }
    return Status::Ok();
  }

  // Two positive window parameters (sizes, strides, dilations).
  Status pair(size_t k, const char* what) const {
    const std::vector<int64_t>& v = attrs_.ints(k);
    if (v.size() != 2) return fail(std::string(what) + " must have 2 entries, got " + std::to_string(v.size()));
    for (int64_t x : v) {
      if (x < 1 || x > kMaxWindowParam) return fail(std::string(what) + " must be positive, got " + std::to_string(x));
    }
    return Status::Ok();
  }

  Status padding(size_t k) const {
    const std::string& p = attrs_.s(k);
    if (p != "VALID" && p != "SAME") return fail("padding must be \"VALID\" or \"SAME\", got \"" + p + "\"");
    return Status::Ok();
  }

 private:
  Status out_of_range(const char* what, int64_t v, size_t limit) const {
    return fail(std::string(what) + " " + std::to_string(v) + " is out of range for rank " + std::to_string(limit));
  }

  std::string name_;
  const Attrs& attrs_;
  std::span<const size_t> ranks_;
};

// The checks of an op are named only where the op is selected (selected_ops.h):
// a selective build links the checks of its ops only, the core none.
#define SG_CHECK(...) if constexpr (!selection::any_of<__VA_ARGS__>()) break; else

Status check_values(OpId op, const AttrChecker& c, const Attrs& attrs, std::span<const size_t> ranks) {
  const size_t rank = ranks.empty() ? 0 : ranks[0];  // eye has no inputs
  switch (op) {
    case OpId::Cast: SG_CHECK(OpId::Cast) return c.dtype(attr::kCastDType);
    case OpId::Sum: case OpId::Mean: case OpId::Max: case OpId::Min: case OpId::Prod:
    case OpId::Any: case OpId::All:
      SG_CHECK(OpId::Sum, OpId::Mean, OpId::Max, OpId::Min, OpId::Prod, OpId::Any, OpId::All) {
        SG_RETURN_IF_ERROR(c.sorted_axes(attr::kReduceAxes, "axis", rank));
        return c.flag(attr::kReduceKeepdims, "keepdims");
      }
    case OpId::ArgMax: case OpId::ArgMin:
      SG_CHECK(OpId::ArgMax, OpId::ArgMin) {
        SG_RETURN_IF_ERROR(c.axis(attr::kArgAxis, rank));
        return c.flag(attr::kArgKeepdims, "keepdims");
      }
    case OpId::Reshape: SG_CHECK(OpId::Reshape) return c.target_shape(true);
    case OpId::BroadcastTo: case OpId::Full: SG_CHECK(OpId::BroadcastTo, OpId::Full) return c.target_shape(false);
    case OpId::Transpose: SG_CHECK(OpId::Transpose) return c.perm(rank);
    case OpId::ExpandDims:
      SG_CHECK(OpId::ExpandDims)
      return c.sorted_axes(attr::kAxesList, "axis", rank + attrs.ints(attr::kAxesList).size());
    case OpId::Squeeze: SG_CHECK(OpId::Squeeze) return c.sorted_axes(attr::kAxesList, "axis", rank);
    case OpId::Concatenate: case OpId::Take: case OpId::ShapeDim: case OpId::Softmax:
    case OpId::LogSoftmax: case OpId::ScatterAdd: case OpId::Scatter:
      SG_CHECK(OpId::Concatenate, OpId::Take, OpId::ShapeDim, OpId::Softmax, OpId::LogSoftmax, OpId::ScatterAdd,
               OpId::Scatter)
      return c.axis(attr::kAxisValue, rank);
    case OpId::Slice: SG_CHECK(OpId::Slice) return c.slice(rank, 1);
    case OpId::SliceUpdate: SG_CHECK(OpId::SliceUpdate) return c.slice(rank, 2);
    case OpId::CumSum: case OpId::Sort: case OpId::ArgSort:
      SG_CHECK(OpId::CumSum, OpId::Sort, OpId::ArgSort) return c.axis(attr::kAxisValue, rank);
    case OpId::CumProd: SG_CHECK(OpId::CumProd) return c.axis(attr::kAxisValue, rank);
    case OpId::SearchSorted: SG_CHECK(OpId::SearchSorted) return c.flag(attr::kSearchSortedRight, "right");
    case OpId::TopK:
      SG_CHECK(OpId::TopK) {
        SG_RETURN_IF_ERROR(c.axis(attr::kTopKAxis, rank));
        return c.int_in(attr::kTopKK, "k", 0, std::numeric_limits<int64_t>::max());
      }
    case OpId::Tile:
      SG_CHECK(OpId::Tile) {
        const size_t reps = attrs.ints(attr::kTileReps).size();
        return c.sizes(attr::kTileReps, "reps", reps);
      }
    case OpId::Pad:
      SG_CHECK(OpId::Pad) {
        SG_RETURN_IF_ERROR(c.sizes(attr::kPadWidths, "pads", 2 * rank));
        if (attrs.s(attr::kPadMode) != "constant") {
          return c.fail("mode must be \"constant\", got \"" + attrs.s(attr::kPadMode) + "\"");
        }
        return Status::Ok();
      }
    case OpId::Eye:
      SG_CHECK(OpId::Eye) {
        SG_RETURN_IF_ERROR(c.int_in(attr::kEyeN, "n", 0, kMaxSize));
        SG_RETURN_IF_ERROR(c.int_in(attr::kEyeM, "m", 0, kMaxSize));
        return c.dtype(attr::kEyeDType);
      }
    case OpId::Arange: SG_CHECK(OpId::Arange) return c.dynamic_inputs(ranks.size(), 0);
    case OpId::LayerNorm:
      SG_CHECK(OpId::LayerNorm) {
        const double eps = attrs.f(attr::kLayerNormEps);
        if (!(eps >= 0) || eps == std::numeric_limits<double>::infinity()) {
          return c.fail("eps must be finite and >= 0, got " + std::to_string(eps));
        }
        return Status::Ok();
      }
    case OpId::OneHot:
      SG_CHECK(OpId::OneHot) {
        SG_RETURN_IF_ERROR(c.int_in(attr::kOneHotDepth, "depth", 0, kMaxSize));
        return c.dtype(attr::kOneHotDType);
      }
    case OpId::Conv2D:
    case OpId::Conv2DBias:
      SG_CHECK(OpId::Conv2D, OpId::Conv2DBias) {
        SG_RETURN_IF_ERROR(c.pair(attr::kConvStride, "stride"));
        SG_RETURN_IF_ERROR(c.pair(attr::kConvDilation, "dilation"));
        SG_RETURN_IF_ERROR(c.padding(attr::kConvPadding));
        if (attrs.i(attr::kConvGroups) < 1 || attrs.i(attr::kConvGroups) > kMaxWindowParam) {
          return c.fail("groups must be positive, got " + std::to_string(attrs.i(attr::kConvGroups)));
        }
        if (op == OpId::Conv2D) return Status::Ok();
        return c.int_in(attr::kConvActivation, "activation", 0, attr::kNumActivations - 1);
      }
    case OpId::FullyConnected:
      SG_CHECK(OpId::FullyConnected) return c.int_in(attr::kFcActivation, "activation", 0, attr::kNumActivations - 1);
    case OpId::ElementwiseChain: SG_CHECK(OpId::ElementwiseChain) return c.chain_steps(ranks.size());
    case OpId::Custom:
      SG_CHECK(OpId::Custom) {
        if (attrs.s(attr::kCustomName).empty()) return c.fail("the name must not be empty");
        const int64_t operands = attrs.i(attr::kCustomOperands);
        if (operands < 0 || uint64_t(operands) > ranks.size())
          return c.fail("operands must be in [0, " + std::to_string(ranks.size()) + "], got " +
                        std::to_string(operands));
        size_t dynamic = 0;
        for (int64_t d : attrs.ints(attr::kCustomShape)) {
          if (d == attr::kDynamicDim) ++dynamic;
          else if (d < 0) return c.fail("invalid shape entry " + std::to_string(d));
        }
        SG_RETURN_IF_ERROR(c.dynamic_inputs(dynamic, size_t(operands)));
        return c.dtype(attr::kCustomDType);
      }
    case OpId::Random:
      SG_CHECK(OpId::Random) {
        SG_RETURN_IF_ERROR(c.target_shape(false));
        return c.int_in(attr::kRandomDistribution, "distribution", 0, attr::kNumRandomDistributions - 1);
      }
    case OpId::MaxPool2D: case OpId::AvgPool2D:
      SG_CHECK(OpId::MaxPool2D, OpId::AvgPool2D) {
        SG_RETURN_IF_ERROR(c.pair(attr::kPoolSize, "size"));
        SG_RETURN_IF_ERROR(c.pair(attr::kPoolStride, "stride"));
        return c.padding(attr::kPoolPadding);
      }
    case OpId::TriangularSolve:
      SG_CHECK(OpId::TriangularSolve) return c.flag(attr::kTriangularLower, "lower");
    default:
      return Status::Ok();  // no attributes
  }
  return Status::Ok();  // not selected: check_attrs refuses the op before this
}

#undef SG_CHECK

}  // namespace

Status check_attrs(OpId op, const Attrs& attrs, std::span<const size_t> input_ranks) {
  if (size_t(op) >= size_t(kNumOps)) return invalid_graph("unknown op id " + std::to_string(int(op)));
  const OpDef& def = op_def(op);
  const std::string name = def.name;
  if constexpr (!selection::kAllOps) {
    if (!selection::selected(op)) return invalid_graph(name + ": not in this runtime's selected ops (SG_SELECTED_OPS)");
  }
  const size_t n = input_ranks.size();
  if (n < size_t(def.min_inputs) || (def.max_inputs >= 0 && n > size_t(def.max_inputs))) {
    std::string expected = std::to_string(def.min_inputs);
    if (def.max_inputs < 0) expected = "at least " + expected;
    else if (def.max_inputs != def.min_inputs) expected += " to " + std::to_string(def.max_inputs);
    return invalid_graph(name + ": expects " + expected + " inputs, got " + std::to_string(n));
  }
  if (attrs.values.size() < required_attrs(def) || attrs.values.size() > def.attrs.size()) {
    const std::string expected = required_attrs(def) == def.attrs.size()
                                     ? std::to_string(def.attrs.size())
                                     : std::to_string(required_attrs(def)) + " to " + std::to_string(def.attrs.size());
    return invalid_graph(name + ": expects " + expected + " attributes, got " + std::to_string(attrs.values.size()));
  }
  for (size_t k = 0; k < attrs.values.size(); ++k) {
    if (attrs.values[k].kind != def.attrs[k].kind) {
      return invalid_graph(name + ": attribute '" + def.attrs[k].name + "' must be " +
                           kind_name(def.attrs[k].kind) + ", got " + kind_name(attrs.values[k].kind));
    }
  }
  return check_values(op, AttrChecker(op, attrs, input_ranks), attrs, input_ranks);
}

}  // namespace sg::ops
