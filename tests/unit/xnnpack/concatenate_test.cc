// concatenate (kernels/xnnpack/concatenate.cc) against the reference kernel, byte for
// byte, on one thread (the reference runs it) and two (rows split above 1 MiB):
// every axis, inputs of different lengths and an empty one, several dtypes.
#include <cstring>

#include "xnnpack/xnn_tester.h"

namespace sg::kernels::testing {
namespace {

using ops::OpId;

void expect_same(DType dtype, std::vector<std::vector<int64_t>> shapes, int64_t axis, int threads) {
  SCOPED_TRACE(std::string(dtype_name(dtype)) + " axis " + std::to_string(axis) + " on " + std::to_string(threads) +
               " threads, first " + shape_string(shapes[0]));
  const ops::Attrs attrs = axis_attrs(axis);
  std::vector<HostTensor> in;
  std::vector<InputInfo> infos;
  uint32_t seed = 1;
  for (const auto& s : shapes) in.push_back(HostTensor::random(dtype, s, seed++, -50, 50));
  for (HostTensor& t : in) infos.push_back(info_of(t, false, true));
  auto k = xnnpack_prepare(OpId::Concatenate, attrs, infos);
  ASSERT_NE(k, nullptr);
  EXPECT_STREQ(k->name(), "sg:concatenate");
  const std::vector<int64_t> out_shape = infer_shape(OpId::Concatenate, attrs, in);
  HostTensor want(dtype, out_shape), got(dtype, out_shape);
  want.poison();
  got.poison();
  std::vector<TensorRef> refs;
  for (HostTensor& t : in) refs.push_back(t.ref());
  TensorRef w = want.ref(), g = got.ref();
  ASSERT_TRUE(reference_kernel(OpId::Concatenate)(KernelContext{}, attrs, refs, std::span<TensorRef>(&w, 1)).ok());
  ThreadPool pool(threads);
  KernelContext ctx;
  ctx.threadpool = pool.get();
  const Status s = k->run(ctx, refs, std::span<TensorRef>(&g, 1));
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_TRUE(got.guard_intact());
  EXPECT_EQ(std::memcmp(g.data, w.data, size_t(want.numel()) * dtype_size(dtype)), 0);
}

TEST(OwnConcatenate, EveryAxisSmallAndLarge) {
  for (int threads : {1, 2}) {
    expect_same(DType::kF32, {{300, 700}, {300, 300}, {300, 0}}, 1, threads);  // 1.2 MB: split on 2 threads
    expect_same(DType::kF32, {{300, 700}, {200, 700}}, 0, threads);             // one outer row
    expect_same(DType::kI64, {{64, 30, 40}, {64, 10, 40}}, 1, threads);
    expect_same(DType::kBool, {{2, 3}, {2, 5}}, 1, threads);
    expect_same(DType::kF16, {{1000, 300}, {1000, 500}}, 1, threads);
  }
}

}  // namespace
}  // namespace sg::kernels::testing
