// check_attrs: the load-time validation of a node's arity and attributes, so
// that rules and kernels can index attributes and axes without re-checking.
#include <cstdint>
#include <limits>
#include <string>

#include "ops/infer.h"

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

  Status dynamic_inputs(size_t count) const {
    if (ranks_.size() != count + 1) {
      return fail("expects " + std::to_string(count) + " dynamic scalar inputs, got " +
                  std::to_string(ranks_.size() - 1));
    }
    for (size_t i = 1; i < ranks_.size(); ++i) {
      if (ranks_[i] != 0) return fail("input " + std::to_string(i) + " must be a scalar");
    }
    return Status::Ok();
  }

  Status slice(size_t rank) const {
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
    return dynamic_inputs(dynamic);
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

Status check_values(OpId op, const AttrChecker& c, const Attrs& attrs, std::span<const size_t> ranks) {
  const size_t rank = ranks[0];
  switch (op) {
    case OpId::Cast: {
      const int64_t t = attrs.i(attr::kCastDType);
      if (t < 0 || t >= kNumDTypes) return c.fail("invalid dtype " + std::to_string(t));
      return Status::Ok();
    }
    case OpId::Sum: case OpId::Mean: case OpId::Max: case OpId::Min: case OpId::Prod:
    case OpId::Any: case OpId::All:
      SG_RETURN_IF_ERROR(c.sorted_axes(attr::kReduceAxes, "axis", rank));
      return c.flag(attr::kReduceKeepdims, "keepdims");
    case OpId::ArgMax: case OpId::ArgMin:
      SG_RETURN_IF_ERROR(c.axis(attr::kArgAxis, rank));
      return c.flag(attr::kArgKeepdims, "keepdims");
    case OpId::Reshape: return c.target_shape(true);
    case OpId::BroadcastTo: case OpId::Full: return c.target_shape(false);
    case OpId::Transpose: return c.perm(rank);
    case OpId::ExpandDims:
      return c.sorted_axes(attr::kAxesList, "axis", rank + attrs.ints(attr::kAxesList).size());
    case OpId::Squeeze: return c.sorted_axes(attr::kAxesList, "axis", rank);
    case OpId::Concatenate: case OpId::Take: case OpId::ShapeDim: case OpId::Softmax:
    case OpId::LogSoftmax:
      return c.axis(attr::kAxisValue, rank);
    case OpId::Slice: return c.slice(rank);
    case OpId::Conv2D:
      SG_RETURN_IF_ERROR(c.pair(attr::kConvStride, "stride"));
      SG_RETURN_IF_ERROR(c.pair(attr::kConvDilation, "dilation"));
      SG_RETURN_IF_ERROR(c.padding(attr::kConvPadding));
      if (attrs.i(attr::kConvGroups) < 1 || attrs.i(attr::kConvGroups) > kMaxWindowParam) {
        return c.fail("groups must be positive, got " + std::to_string(attrs.i(attr::kConvGroups)));
      }
      return Status::Ok();
    case OpId::MaxPool2D: case OpId::AvgPool2D:
      SG_RETURN_IF_ERROR(c.pair(attr::kPoolSize, "size"));
      SG_RETURN_IF_ERROR(c.pair(attr::kPoolStride, "stride"));
      return c.padding(attr::kPoolPadding);
    default:
      return Status::Ok();  // no attributes
  }
}

}  // namespace

Status check_attrs(OpId op, const Attrs& attrs, std::span<const size_t> input_ranks) {
  if (size_t(op) >= size_t(kNumOps)) return invalid_graph("unknown op id " + std::to_string(int(op)));
  const OpDef& def = op_def(op);
  const std::string name = def.name;
  const size_t n = input_ranks.size();
  if (n < size_t(def.min_inputs) || (def.max_inputs >= 0 && n > size_t(def.max_inputs))) {
    std::string expected = std::to_string(def.min_inputs);
    if (def.max_inputs < 0) expected = "at least " + expected;
    else if (def.max_inputs != def.min_inputs) expected += " to " + std::to_string(def.max_inputs);
    return invalid_graph(name + ": expects " + expected + " inputs, got " + std::to_string(n));
  }
  if (attrs.values.size() != def.attrs.size()) {
    return invalid_graph(name + ": expects " + std::to_string(def.attrs.size()) + " attributes, got " +
                         std::to_string(attrs.values.size()));
  }
  for (size_t k = 0; k < def.attrs.size(); ++k) {
    if (attrs.values[k].kind != def.attrs[k].kind) {
      return invalid_graph(name + ": attribute '" + def.attrs[k].name + "' must be " +
                           kind_name(def.attrs[k].kind) + ", got " + kind_name(attrs.values[k].kind));
    }
  }
  return check_values(op, AttrChecker(op, attrs, input_ranks), attrs, input_ranks);
}

}  // namespace sg::ops
