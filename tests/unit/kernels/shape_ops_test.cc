// Shape ops: data movement checked element by element against index arithmetic.
#include <algorithm>
#include <numeric>

#include "kernels/kernel_tester.h"

namespace sg::kernels::testing {
namespace {

using ops::OpId;
using Shape = std::vector<int64_t>;

TEST(ShapeOps, ReshapeExpandDimsSqueezeCopy) {
  for (DType dt : {DType::kF32, DType::kI64, DType::kBool, DType::kF16}) {
    HostTensor x = HostTensor::random(dt, {2, 3, 4}, 3, -5, 5);
    const auto values = x.values();
    KernelTester(OpId::Reshape).in(x).out(dt, {6, 4}).attr_ints({6, -1}).expect(values);
    KernelTester(OpId::ExpandDims).in(x).out(dt, {2, 1, 3, 4}).attr_ints({1}).expect(values);
    KernelTester(OpId::Squeeze)
        .in(HostTensor::of(dt, {1, 3, 1}, {1, 0, 1}))
        .out(dt, {3})
        .attr_ints({0, 2})
        .expect({1, 0, 1});
  }
  KernelTester(OpId::Reshape).in(HostTensor(DType::kF32, {0, 3})).out(DType::kF32, {3, 0}).attr_ints({3, 0}).expect({});
}

TEST(ShapeOps, BroadcastTo) {
  for (const auto& [in, out] : std::vector<std::pair<Shape, Shape>>{
           {{3}, {2, 3}}, {{2, 1}, {2, 4}}, {{}, {2, 2}}, {{1, 3, 1}, {2, 3, 4}}, {{3}, {0, 3}}}) {
    HostTensor x = HostTensor::random(DType::kI32, in, 9, -99, 99);
    const auto want = broadcast_reference(out, {&x}, [](const std::vector<double>& v) { return v[0]; });
    KernelTester(OpId::BroadcastTo).in(x).out(DType::kI32, out).attr_ints(out).expect(want);
  }
}

TEST(ShapeOps, TransposeEveryPermutationOf3D) {
  const Shape shape = {2, 3, 4};
  std::vector<int64_t> perm = {0, 1, 2};
  do {
    for (DType dt : {DType::kF32, DType::kI64, DType::kF16}) {
      HostTensor x = HostTensor::random(dt, shape, 4, -9, 9);
      Shape out = {shape[perm[0]], shape[perm[1]], shape[perm[2]]};
      std::vector<double> want;
      for (int64_t i = 0; i < numel_of(out); ++i) {
        const auto idx = unravel(i, out);
        std::vector<int64_t> src(3);
        for (int d = 0; d < 3; ++d) src[perm[d]] = idx[d];
        want.push_back(x.at((src[0] * shape[1] + src[1]) * shape[2] + src[2]));
      }
      KernelTester(OpId::Transpose).in(x).out(dt, out).attr_ints(perm).expect(want);
    }
  } while (std::next_permutation(perm.begin(), perm.end()));
  // Size-1 dims moved around only: a copy.
  KernelTester(OpId::Transpose)
      .in(HostTensor::of(DType::kF32, {1, 3, 1}, {1, 2, 3}))
      .out(DType::kF32, {3, 1, 1})
      .attr_ints({1, 2, 0})
      .expect({1, 2, 3});
  // A big 2-D transpose.
  HostTensor x = HostTensor::random(DType::kF32, {37, 53}, 5);
  std::vector<double> want;
  for (int64_t j = 0; j < 53; ++j)
    for (int64_t i = 0; i < 37; ++i) want.push_back(x.at(i * 53 + j));
  KernelTester(OpId::Transpose).in(x).out(DType::kF32, {53, 37}).attr_ints({1, 0}).expect(want);
}

TEST(ShapeOps, ConcatenateEveryAxis) {
  for (int axis = 0; axis < 3; ++axis) {
    Shape a = {2, 3, 4}, b = {2, 3, 4}, c = {2, 3, 4};
    a[size_t(axis)] = 1;
    b[size_t(axis)] = 0;
    c[size_t(axis)] = 2;
    Shape out = {2, 3, 4};
    out[size_t(axis)] = 3;
    HostTensor ta = HostTensor::random(DType::kI64, a, 1, -9, 9), tb(DType::kI64, b),
               tc = HostTensor::random(DType::kI64, c, 2, -9, 9);
    std::vector<double> want;
    for (int64_t i = 0; i < numel_of(out); ++i) {
      auto idx = unravel(i, out);
      const HostTensor& src = idx[size_t(axis)] < 1 ? ta : tc;
      if (idx[size_t(axis)] >= 1) idx[size_t(axis)] -= 1;
      int64_t flat = 0;
      for (size_t d = 0; d < 3; ++d) flat = flat * src.shape()[d] + idx[d];
      want.push_back(src.at(flat));
    }
    KernelTester(OpId::Concatenate).in(ta).in(tb).in(tc).out(DType::kI64, out).attr_int(axis).expect(want);
  }
}

}  // namespace
}  // namespace sg::kernels::testing
