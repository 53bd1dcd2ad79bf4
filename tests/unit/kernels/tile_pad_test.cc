// tile and pad. Expected values are NumPy's (np.tile and np.pad of aranges).
#include "kernels/kernel_tester.h"

namespace sg::kernels::testing {
namespace {

using ops::OpId;

std::vector<double> arange(int64_t n) {
  std::vector<double> v;
  for (int64_t i = 0; i < n; ++i) v.push_back(double(i));
  return v;
}

TEST(Tile, LikeNumPy) {
  const HostTensor x = HostTensor::of(DType::kI32, {2, 3}, arange(6));
  // np.tile(x, (2, 2))
  KernelTester(OpId::Tile).in(x).out(DType::kI32, {4, 6}).attr_ints({2, 2})
      .expect({0, 1, 2, 0, 1, 2, 3, 4, 5, 3, 4, 5, 0, 1, 2, 0, 1, 2, 3, 4, 5, 3, 4, 5});
  // np.tile(x, 2): reps padded on the left
  KernelTester(OpId::Tile).in(x).out(DType::kI32, {2, 6}).attr_ints({2}).expect({0, 1, 2, 0, 1, 2, 3, 4, 5, 3, 4, 5});
  // np.tile(x, (2, 1, 1)): x promoted to [1, 2, 3]
  KernelTester(OpId::Tile).in(x).out(DType::kI32, {2, 2, 3}).attr_ints({2, 1, 1})
      .expect({0, 1, 2, 3, 4, 5, 0, 1, 2, 3, 4, 5});
  // np.tile(x, (3, 1))
  KernelTester(OpId::Tile).in(x).out(DType::kI32, {6, 3}).attr_ints({3, 1})
      .expect({0, 1, 2, 3, 4, 5, 0, 1, 2, 3, 4, 5, 0, 1, 2, 3, 4, 5});
}

TEST(Tile, ScalarsEmptyAndEveryDtype) {
  KernelTester(OpId::Tile).in(HostTensor::scalar(DType::kF16, 1.5)).out(DType::kF16, {3}).attr_ints({3}).expect({1.5, 1.5, 1.5});
  KernelTester(OpId::Tile).in(HostTensor::scalar(DType::kI64, 4)).out(DType::kI64, {}).attr_ints({}).expect({4});
  KernelTester(OpId::Tile).in(HostTensor::of(DType::kF32, {2}, {1, 2})).out(DType::kF32, {0}).attr_ints({0}).expect({});
  for (DType t : {DType::kF32, DType::kF16, DType::kI32, DType::kI64, DType::kBool}) {
    const HostTensor x = HostTensor::random(t, {2, 1, 3}, 5);
    std::vector<double> want;
    for (int64_t a = 0; a < 2; ++a)          // np.tile(x, (2, 3, 2)) -> [4, 3, 6]
      for (int64_t i = 0; i < 2; ++i)
        for (int64_t j = 0; j < 3; ++j)
          for (int64_t r = 0; r < 2; ++r)
            for (int64_t c = 0; c < 3; ++c) want.push_back(x.at(i * 3 + c));
    KernelTester(OpId::Tile).in(x).out(t, {4, 3, 6}).attr_ints({2, 3, 2}).expect(want, 0);
  }
}

KernelTester pad(HostTensor x, std::vector<int64_t> widths, double value, std::vector<int64_t> out_shape) {
  KernelTester t(OpId::Pad);
  const DType dt = x.dtype();
  t.in(std::move(x)).out(dt, std::move(out_shape)).attr_ints(std::move(widths)).attr_float(value).attr_string("constant");
  return t;
}

TEST(Pad, ConstantLikeNumPy) {
  // np.pad(arange(6).reshape(2, 3), ((1, 0), (2, 1)), constant_values=9)
  pad(HostTensor::of(DType::kI64, {2, 3}, arange(6)), {1, 0, 2, 1}, 9, {3, 6})
      .expect({9, 9, 9, 9, 9, 9, 9, 9, 0, 1, 2, 9, 9, 9, 3, 4, 5, 9});
  pad(HostTensor::of(DType::kF32, {3}, {1, 2, 3}), {0, 2}, -0.5, {5}).expect({1, 2, 3, -0.5, -0.5});
  pad(HostTensor::of(DType::kF16, {2}, {1, 2}), {1, 1}, 0.25, {4}).expect({0.25, 1, 2, 0.25});
  pad(HostTensor::of(DType::kBool, {1}, {1}), {1, 1}, 0, {3}).expect({0, 1, 0});
  pad(HostTensor::of(DType::kI32, {2}, {7, 8}), {0, 0}, 1, {2}).expect({7, 8});
  pad(HostTensor::scalar(DType::kI32, 3), {}, 1, {}).expect({3});
  // An empty input becomes all padding.
  pad(HostTensor(DType::kI32, {0, 2}), {1, 1, 0, 0}, 4, {2, 2}).expect({4, 4, 4, 4});
  // The fill value converts like astype: 2.7 -> 2 for ints.
  pad(HostTensor::of(DType::kI32, {1}, {5}), {1, 0}, 2.7, {2}).expect({2, 5});
}

TEST(Pad, ThreeDims) {
  const HostTensor x = HostTensor::random(DType::kF32, {2, 3, 4}, 9);
  const std::vector<int64_t> w = {1, 2, 0, 1, 3, 0};
  std::vector<double> want;
  for (int64_t i = 0; i < 5; ++i)
    for (int64_t j = 0; j < 4; ++j)
      for (int64_t k = 0; k < 7; ++k) {
        const int64_t a = i - 1, b = j, c = k - 3;
        const bool inside = a >= 0 && a < 2 && b < 3 && c >= 0;
        want.push_back(inside ? x.at((a * 3 + b) * 4 + c) : 1.25);
      }
  pad(x, w, 1.25, {5, 4, 7}).expect(want, 0);
}

}  // namespace
}  // namespace sg::kernels::testing
