// print writes its format with the values in place; assert fails with its message.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "interface/kernel.h"

namespace sg::kernels {
namespace {

void capture(void* user, const char* text, size_t size) {
  static_cast<std::vector<std::string>*>(user)->emplace_back(text, size);
}

TensorRef ref(DType dtype, std::vector<int64_t> shape, void* data) {
  TensorRef t;
  t.dtype = dtype;
  t.rank = int(shape.size());
  for (size_t i = 0; i < shape.size(); ++i) t.shape[i] = shape[i];
  t.data = data;
  return t;
}

TEST(PrintKernel, PlacesValuesInTheFormat) {
  std::vector<std::string> lines;
  KernelContext ctx;
  ctx.print = &capture;
  ctx.print_user = &lines;
  int64_t step = 7;
  float xs[2][2] = {{1.0f, 0.5f}, {-2.0f, 3.25f}};
  uint8_t flag = 1;
  const std::vector<TensorRef> in = {ref(DType::kI64, {}, &step), ref(DType::kF32, {2, 2}, xs), ref(DType::kBool, {}, &flag)};
  ops::Attrs attrs{{ops::AttrValue::String("step {}: x = {} {{ok}} {}")}};
  ASSERT_TRUE(reference_kernel(ops::OpId::Print)(ctx, attrs, in, {}).ok());
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0], "step 7: x = [[1.0 0.5] [-2.0 3.25]] {ok} True");
}

TEST(AssertKernel, FailsWithTheMessageOnlyWhenFalse) {
  KernelContext ctx;
  uint8_t cond = 1;
  const std::vector<TensorRef> in = {ref(DType::kBool, {}, &cond)};
  ops::Attrs attrs{{ops::AttrValue::String("x must be positive")}};
  EXPECT_TRUE(reference_kernel(ops::OpId::Assert)(ctx, attrs, in, {}).ok());
  cond = 0;
  const Status s = reference_kernel(ops::OpId::Assert)(ctx, attrs, in, {});
  EXPECT_EQ(s.code(), StatusCode::kRuntimeError);
  EXPECT_EQ(s.message(), "assertion failed: x must be positive");
}

}  // namespace
}  // namespace sg::kernels
