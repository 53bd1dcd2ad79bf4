#include <gtest/gtest.h>

#include <set>
#include <string>

#include "ops/op_table.h"

namespace sg::ops {
namespace {

TEST(OpTable, EveryOpIsFoundByItsName) {
  std::set<std::string> names;
  for (int i = 0; i < kNumOps; ++i) {
    const OpDef& def = op_def(OpId(i));
    EXPECT_EQ(def.id, OpId(i));
    EXPECT_TRUE(names.insert(def.name).second) << "duplicate op name " << def.name;
    EXPECT_EQ(find_op(def.name), OpId(i));
    EXPECT_GE(def.version, 1);
    EXPECT_GE(def.min_inputs, OpId(i) == OpId::Eye || OpId(i) == OpId::Print || OpId(i) == OpId::Custom ? 0 : 1)
        << def.name;  // eye is all attributes
    EXPECT_TRUE(def.max_inputs == -1 || def.max_inputs >= def.min_inputs) << def.name;
    const bool effect = OpId(i) == OpId::Print || OpId(i) == OpId::Assert;
    const bool pair = OpId(i) == OpId::TopK || OpId(i) == OpId::Slogdet || OpId(i) == OpId::Qr || OpId(i) == OpId::Eigh;
    // custom: one result; elementwise_chain: as many as its `outputs` attribute names
    const bool variadic = OpId(i) == OpId::ElementwiseChain;
    EXPECT_EQ(def.num_outputs, variadic ? -1 : pair ? 2 : effect ? 0 : 1) << def.name;
    // Optional attributes come last.
    for (size_t k = required_attrs(def); k < def.attrs.size(); ++k) EXPECT_TRUE(def.attrs[k].optional) << def.name;
  }
  EXPECT_FALSE(find_op("no_such_op"));
  EXPECT_FALSE(find_op(""));
  EXPECT_FALSE(find_op("Add"));  // names are case-sensitive
}

TEST(OpTable, Arities) {
  EXPECT_EQ(op_def(OpId::Add).min_inputs, 2);
  EXPECT_EQ(op_def(OpId::Add).max_inputs, 2);
  EXPECT_EQ(op_def(OpId::Where).min_inputs, 3);
  EXPECT_EQ(op_def(OpId::Concatenate).max_inputs, -1);
  EXPECT_EQ(op_def(OpId::Reshape).max_inputs, -1);
  EXPECT_STREQ(op_def(OpId::LogSoftmax).name, "log_softmax");
}

// The runtime and the compiler store OpIds: ops are only ever appended.
TEST(OpTable, IdsAreStable) {
  EXPECT_EQ(int(OpId::Add), 0);
  EXPECT_EQ(int(OpId::AvgPool2D), 63);
  EXPECT_EQ(int(OpId::CumSum), 64);
  EXPECT_EQ(int(OpId::SliceUpdate), 74);
  EXPECT_EQ(int(OpId::Print), 75);
  EXPECT_EQ(int(OpId::Assert), 76);
  EXPECT_EQ(int(OpId::Conv2DBias), 78);
  EXPECT_EQ(int(OpId::ElementwiseChain), 79);
  EXPECT_EQ(int(OpId::Random), 80);
  EXPECT_EQ(int(OpId::Custom), 81);
  EXPECT_EQ(int(OpId::ScatterAdd), 82);  // appended: every earlier id keeps its value
  EXPECT_EQ(int(OpId::CumProd), 83);
  EXPECT_EQ(int(OpId::SearchSorted), 84);
  EXPECT_EQ(int(OpId::Scatter), 85);
  EXPECT_EQ(int(OpId::FlatNonzero), 86);
  EXPECT_TRUE(has_flag(OpId::FlatNonzero, kDataDependentShape));  // its length only its operand's values decide
  EXPECT_EQ(int(OpId::Inv), 87);  // sg.linalg, appended
  EXPECT_EQ(int(OpId::Eigh), 93);
  EXPECT_EQ(kNumOps, 94);
  EXPECT_TRUE(has_flag(OpId::Custom, kSideEffect));  // never folded, merged or removed
  EXPECT_TRUE(has_flag(OpId::Print, kSideEffect));
  EXPECT_TRUE(has_flag(OpId::Assert, kSideEffect));
  EXPECT_STREQ(op_def(OpId::SliceUpdate).name, "slice_update");
  EXPECT_EQ(op_def(OpId::Eye).max_inputs, 0);
  EXPECT_EQ(op_def(OpId::Arange).min_inputs, attr::kArangeIntInputs);
  EXPECT_EQ(op_def(OpId::Arange).max_inputs, attr::kArangeFloatInputs);
  EXPECT_EQ(op_def(OpId::SliceUpdate).max_inputs, -1);
}

TEST(OpTable, Flags) {
  EXPECT_TRUE(has_flag(OpId::Less, kComparison));
  EXPECT_TRUE(has_flag(OpId::Less, kElementwiseBinary));
  EXPECT_FALSE(has_flag(OpId::Add, kComparison));
  EXPECT_TRUE(has_flag(OpId::Exp, kElementwiseUnary));
  EXPECT_TRUE(has_flag(OpId::ArgMax, kReduction));
  EXPECT_TRUE(has_flag(OpId::Slice, kValueDependentShape));
  EXPECT_FALSE(has_flag(OpId::MatMul, kElementwiseBinary));
  EXPECT_TRUE(has_flag(OpId::Arange, kValueDependentShape));
  EXPECT_TRUE(has_flag(OpId::SliceUpdate, kValueDependentShape));
  EXPECT_FALSE(has_flag(OpId::CumSum, kReduction));  // keeps its axis
}

void expect_attrs(OpId op, std::vector<std::pair<std::string, AttrKind>> expected) {
  const OpDef& def = op_def(op);
  ASSERT_EQ(def.attrs.size(), expected.size()) << def.name;
  for (size_t k = 0; k < expected.size(); ++k) {
    EXPECT_EQ(def.attrs[k].name, expected[k].first) << def.name;
    EXPECT_EQ(def.attrs[k].kind, expected[k].second) << def.name << "." << expected[k].first;
  }
}

TEST(OpTable, AttributeListsMatchTheirPositions) {
  expect_attrs(OpId::Add, {});
  expect_attrs(OpId::Relu, {});
  expect_attrs(OpId::Cast, {{"dtype", AttrKind::kInt}});
  expect_attrs(OpId::Sum, {{"axes", AttrKind::kInts}, {"keepdims", AttrKind::kInt}});
  expect_attrs(OpId::All, {{"axes", AttrKind::kInts}, {"keepdims", AttrKind::kInt}});
  expect_attrs(OpId::ArgMin, {{"axis", AttrKind::kInt}, {"keepdims", AttrKind::kInt}});
  expect_attrs(OpId::Reshape, {{"shape", AttrKind::kInts}});
  expect_attrs(OpId::Full, {{"shape", AttrKind::kInts}});
  expect_attrs(OpId::Transpose, {{"perm", AttrKind::kInts}});
  expect_attrs(OpId::Squeeze, {{"axes", AttrKind::kInts}});
  expect_attrs(OpId::Take, {{"axis", AttrKind::kInt}});
  expect_attrs(OpId::Slice, {{"begin", AttrKind::kInts},
                             {"end", AttrKind::kInts},
                             {"step", AttrKind::kInts},
                             {"flags", AttrKind::kInts}});
  expect_attrs(OpId::Conv2D, {{"stride", AttrKind::kInts},
                              {"dilation", AttrKind::kInts},
                              {"padding", AttrKind::kString},
                              {"groups", AttrKind::kInt}});
  expect_attrs(OpId::AvgPool2D,
               {{"size", AttrKind::kInts}, {"stride", AttrKind::kInts}, {"padding", AttrKind::kString}});
  expect_attrs(OpId::CumSum, {{"axis", AttrKind::kInt}});
  expect_attrs(OpId::ArgSort, {{"axis", AttrKind::kInt}});
  expect_attrs(OpId::TopK, {{"k", AttrKind::kInt}, {"axis", AttrKind::kInt}});
  expect_attrs(OpId::Tile, {{"reps", AttrKind::kInts}});
  expect_attrs(OpId::Pad, {{"pads", AttrKind::kInts}, {"value", AttrKind::kFloat}, {"mode", AttrKind::kString}});
  expect_attrs(OpId::Eye,
               {{"n", AttrKind::kInt}, {"m", AttrKind::kInt}, {"k", AttrKind::kInt}, {"dtype", AttrKind::kInt}});
  expect_attrs(OpId::Arange, {});
  expect_attrs(OpId::LayerNorm, {{"eps", AttrKind::kFloat}});
  expect_attrs(OpId::OneHot, {{"depth", AttrKind::kInt}, {"dtype", AttrKind::kInt}});
  expect_attrs(OpId::SliceUpdate, {{"begin", AttrKind::kInts},
                                   {"end", AttrKind::kInts},
                                   {"step", AttrKind::kInts},
                                   {"flags", AttrKind::kInts}});
  EXPECT_STREQ(op_def(OpId::TopK).attrs[attr::kTopKAxis].name, "axis");
  EXPECT_STREQ(op_def(OpId::Pad).attrs[attr::kPadValue].name, "value");
  EXPECT_STREQ(op_def(OpId::Eye).attrs[attr::kEyeK].name, "k");
  EXPECT_STREQ(op_def(OpId::OneHot).attrs[attr::kOneHotDType].name, "dtype");
  EXPECT_EQ(op_def(OpId::Cast).attrs[attr::kCastDType].kind, AttrKind::kInt);
  EXPECT_STREQ(op_def(OpId::Conv2D).attrs[attr::kConvGroups].name, "groups");
  EXPECT_STREQ(op_def(OpId::MaxPool2D).attrs[attr::kPoolStride].name, "stride");
}

}  // namespace
}  // namespace sg::ops
