#include "ops/op_table.h"

#include <cassert>
#include <iterator>

#include "ops/op_families.h"

namespace sg::ops {

// The attribute lists named by SG_OPS. Their order is the order of the enums in
// op_table.h's namespace attr, which kernels and rules index by.
namespace attr_specs {
inline constexpr std::span<const AttrSpec> kNone{};
inline constexpr AttrSpec kCast[] = {{"dtype", AttrKind::kInt}};
inline constexpr AttrSpec kReduce[] = {{"axes", AttrKind::kInts}, {"keepdims", AttrKind::kInt}};
inline constexpr AttrSpec kArgReduce[] = {{"axis", AttrKind::kInt}, {"keepdims", AttrKind::kInt}};
inline constexpr AttrSpec kShape[] = {{"shape", AttrKind::kInts}};
inline constexpr AttrSpec kPerm[] = {{"perm", AttrKind::kInts}};
inline constexpr AttrSpec kAxes[] = {{"axes", AttrKind::kInts}};
inline constexpr AttrSpec kAxis[] = {{"axis", AttrKind::kInt}};
inline constexpr AttrSpec kSlice[] = {{"begin", AttrKind::kInts},
                                      {"end", AttrKind::kInts},
                                      {"step", AttrKind::kInts},
                                      {"flags", AttrKind::kInts}};
inline constexpr AttrSpec kConv[] = {{"stride", AttrKind::kInts},
                                     {"dilation", AttrKind::kInts},
                                     {"padding", AttrKind::kString},
                                     {"groups", AttrKind::kInt}};
inline constexpr AttrSpec kPool[] = {{"size", AttrKind::kInts},
                                     {"stride", AttrKind::kInts},
                                     {"padding", AttrKind::kString}};
inline constexpr AttrSpec kTopK[] = {{"k", AttrKind::kInt}, {"axis", AttrKind::kInt}};
inline constexpr AttrSpec kTile[] = {{"reps", AttrKind::kInts}};
inline constexpr AttrSpec kPad[] = {{"pads", AttrKind::kInts},
                                    {"value", AttrKind::kFloat},
                                    {"mode", AttrKind::kString}};
inline constexpr AttrSpec kEye[] = {{"n", AttrKind::kInt},
                                    {"m", AttrKind::kInt},
                                    {"k", AttrKind::kInt},
                                    {"dtype", AttrKind::kInt}};
inline constexpr AttrSpec kLayerNorm[] = {{"eps", AttrKind::kFloat}};
inline constexpr AttrSpec kOneHot[] = {{"depth", AttrKind::kInt}, {"dtype", AttrKind::kInt}};
inline constexpr AttrSpec kPrint[] = {{"format", AttrKind::kString}};
inline constexpr AttrSpec kAssert[] = {{"message", AttrKind::kString}};
inline constexpr AttrSpec kFullyConnected[] = {{"activation", AttrKind::kInt}};
inline constexpr AttrSpec kConvBias[] = {{"stride", AttrKind::kInts},
                                         {"dilation", AttrKind::kInts},
                                         {"padding", AttrKind::kString},
                                         {"groups", AttrKind::kInt},
                                         {"activation", AttrKind::kInt}};
inline constexpr AttrSpec kChain[] = {{"steps", AttrKind::kInts}, {"outputs", AttrKind::kInts, true}};
inline constexpr AttrSpec kCustom[] = {{"shape", AttrKind::kInts},
                                      {"dtype", AttrKind::kInt},
                                      {"name", AttrKind::kString},
                                      {"operands", AttrKind::kInt}};
inline constexpr AttrSpec kSearchSorted[] = {{"right", AttrKind::kInt}};
inline constexpr AttrSpec kTriangularSolve[] = {{"lower", AttrKind::kInt}};
inline constexpr AttrSpec kRandom[] = {{"shape", AttrKind::kInts}, {"distribution", AttrKind::kInt}};
}  // namespace attr_specs

namespace {

constexpr OpDef kOpDefs[] = {
#define SG_OP_DEF(e, name, ver, mn, mx, nout, attrs, flags) \
  OpDef{OpId::e, name, ver, mn, mx, nout, attr_specs::attrs, uint32_t(flags)},
    SG_OPS(SG_OP_DEF)
#undef SG_OP_DEF
};

static_assert(std::size(kOpDefs) == size_t(kNumOps), "one OpDef per SG_OPS entry");

constexpr bool ids_match_positions() {
  for (size_t i = 0; i < std::size(kOpDefs); ++i) {
    if (size_t(kOpDefs[i].id) != i) return false;
  }
  return true;
}
static_assert(ids_match_positions(), "op_def indexes kOpDefs by OpId");

// The attribute positions used by kernels and rules must match the lists above.
static_assert(attr_specs::kReduce[attr::kReduceKeepdims].kind == AttrKind::kInt);
static_assert(attr_specs::kArgReduce[attr::kArgKeepdims].kind == AttrKind::kInt);
static_assert(attr_specs::kSlice[attr::kSliceFlags].kind == AttrKind::kInts);
static_assert(attr_specs::kConv[attr::kConvPadding].kind == AttrKind::kString);
static_assert(attr_specs::kConv[attr::kConvGroups].kind == AttrKind::kInt);
static_assert(attr_specs::kPool[attr::kPoolPadding].kind == AttrKind::kString);
static_assert(attr_specs::kTopK[attr::kTopKAxis].kind == AttrKind::kInt);
static_assert(attr_specs::kPad[attr::kPadValue].kind == AttrKind::kFloat);
static_assert(attr_specs::kChain[attr::kChainOutputs].optional, "a chain without `outputs` has one");
static_assert(attr_specs::kPad[attr::kPadMode].kind == AttrKind::kString);
static_assert(attr_specs::kEye[attr::kEyeDType].kind == AttrKind::kInt);
static_assert(attr_specs::kOneHot[attr::kOneHotDType].kind == AttrKind::kInt);
static_assert(attr_specs::kConvBias[attr::kConvPadding].kind == AttrKind::kString);
static_assert(attr_specs::kConvBias[attr::kConvGroups].kind == AttrKind::kInt);
static_assert(attr_specs::kConvBias[attr::kConvActivation].kind == AttrKind::kInt);
static_assert(int(attr::kRandomShape) == int(attr::kShapeDims), "random's shape is read as kShape's");
static_assert(attr_specs::kCustom[attr::kCustomName].kind == AttrKind::kString);
static_assert(attr_specs::kCustom[attr::kCustomOperands].kind == AttrKind::kInt);
static_assert(attr_specs::kRandom[attr::kRandomShape].kind == AttrKind::kInts);
static_assert(attr_specs::kRandom[attr::kRandomDistribution].kind == AttrKind::kInt);

}  // namespace

const OpDef& op_def(OpId id) {
  assert(size_t(id) < std::size(kOpDefs));
  return kOpDefs[size_t(id)];
}

size_t output_count(OpId op, const Attrs& attrs) {
  const OpDef& def = op_def(op);
  if (def.num_outputs >= 0) return size_t(def.num_outputs);
  // elementwise_chain, the one op whose outputs its attributes give
  if (attrs.values.size() <= attr::kChainOutputs || attrs.ints(attr::kChainOutputs).empty()) return 1;
  return attrs.ints(attr::kChainOutputs).size();
}

size_t required_attrs(const OpDef& def) {
  size_t n = 0;
  while (n < def.attrs.size() && !def.attrs[n].optional) ++n;
  return n;
}

std::optional<OpId> find_op(std::string_view name) {
  for (const OpDef& def : kOpDefs) {
    if (name == def.name) return def.id;
  }
  return std::nullopt;
}

}  // namespace sg::ops
