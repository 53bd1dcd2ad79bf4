// The blocked transpose (kernels/xnnpack/transpose.cc) against the reference kernel,
// byte for byte: every element size, matrices with edges that are not whole tiles,
// batched and 4-D permutations, size-1 and empty dims, and one or two threads.
#include <cstring>

#include "xnnpack/xnn_tester.h"

namespace sg::kernels::testing {
namespace {

using ops::OpId;

ops::Attrs perm_attrs(std::vector<int64_t> perm) {
  ops::Attrs a;
  a.values = {ops::AttrValue::Ints(std::move(perm))};
  return a;
}

void expect_same(DType dtype, std::vector<int64_t> shape, std::vector<int64_t> perm, int threads = 1) {
  SCOPED_TRACE(std::string(dtype_name(dtype)) + " " + shape_string(shape) + " perm " + shape_string(perm) + " on " +
               std::to_string(threads) + " threads");
  const ops::Attrs attrs = perm_attrs(perm);
  HostTensor x = HostTensor::random(dtype, shape, 3, -100, 100);
  auto k = xnnpack_prepare(OpId::Transpose, attrs, std::vector<InputInfo>{info_of(x, false, true)});
  ASSERT_NE(k, nullptr);
  EXPECT_STREQ(k->name(), "sg:transpose");
  const std::vector<int64_t> out_shape = infer_shape(OpId::Transpose, attrs, {x});
  HostTensor want(dtype, out_shape), got(dtype, out_shape);
  want.poison();
  got.poison();
  const TensorRef in = x.ref();
  TensorRef w = want.ref(), g = got.ref();
  ThreadPool pool(threads);
  KernelContext ctx;
  ctx.threadpool = pool.get();
  ASSERT_TRUE(reference_kernel(OpId::Transpose)(KernelContext{}, attrs, std::span<const TensorRef>(&in, 1),
                                                std::span<TensorRef>(&w, 1))
                  .ok());
  const Status s = k->run(ctx, std::span<const TensorRef>(&in, 1), std::span<TensorRef>(&g, 1));
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_TRUE(got.guard_intact());
  EXPECT_EQ(std::memcmp(g.data, w.data, size_t(want.numel()) * dtype_size(dtype)), 0);
}

TEST(OwnTranspose, MatricesOfEveryElementSize) {
  for (DType t : {DType::kF32, DType::kF16, DType::kI32, DType::kI64, DType::kBool})
    for (const std::vector<int64_t>& shape : {std::vector<int64_t>{1, 1}, {3, 5}, {32, 32}, {33, 65}, {100, 7}})
      expect_same(t, shape, {1, 0});
}

TEST(OwnTranspose, BatchedAndHigherRankPermutations) {
  expect_same(DType::kF32, {4, 37, 70}, {0, 2, 1});
  expect_same(DType::kF32, {4, 37, 70}, {2, 1, 0});
  expect_same(DType::kF32, {4, 37, 70}, {1, 2, 0});
  expect_same(DType::kI64, {2, 3, 40, 33}, {0, 3, 1, 2});
  expect_same(DType::kF32, {2, 3, 40, 33}, {3, 2, 1, 0});
  expect_same(DType::kF32, {5, 1, 40}, {2, 1, 0});   // size-1 dims dropped
  expect_same(DType::kF32, {2, 3, 4, 5}, {0, 2, 1, 3});  // rows stay contiguous: the reference
  expect_same(DType::kF32, {0, 40}, {1, 0});
  expect_same(DType::kF32, {}, {});
}

TEST(OwnTranspose, LargeOnTwoThreads) {
  expect_same(DType::kF32, {600, 700}, {1, 0}, 2);
  expect_same(DType::kF32, {3, 300, 400}, {0, 2, 1}, 2);
}

}  // namespace
}  // namespace sg::kernels::testing
