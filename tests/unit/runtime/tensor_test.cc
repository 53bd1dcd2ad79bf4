#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <vector>

#include "stagegraph/tensor.h"

namespace sg {
namespace {

// Counts live allocations, to show that storage is released exactly once.
class CountingAllocator final : public Allocator {
 public:
  void* allocate(size_t bytes, size_t alignment) override {
    ++live;
    last_bytes = bytes;
    return default_allocator()->allocate(bytes, alignment);
  }
  void deallocate(void* p, size_t bytes, size_t alignment) override {
    --live;
    default_allocator()->deallocate(p, bytes, alignment);
  }
  int live = 0;
  size_t last_bytes = 0;
};

TEST(Tensor, EmptyIsAlignedAndPadded) {
  CountingAllocator alloc;
  const int64_t shape[] = {3, 5};
  Tensor t = Tensor::empty(DType::kF32, shape, &alloc).value();
  EXPECT_EQ(reinterpret_cast<uintptr_t>(t.data()) % kTensorAlignment, 0u);
  EXPECT_EQ(t.numel(), 15);
  EXPECT_EQ(t.nbytes(), 60u);
  EXPECT_GE(alloc.last_bytes, t.nbytes() + kTensorPadding);
  // The padding is readable and writable (kernels may touch it).
  std::memset(t.data(), 0xAB, t.nbytes() + kTensorPadding);
  EXPECT_EQ(alloc.live, 1);
}

TEST(Tensor, CopiesShareStorageAndReleaseOnce) {
  CountingAllocator alloc;
  const int64_t shape[] = {4};
  {
    Tensor a = Tensor::zeros(DType::kI32, shape, &alloc).value();
    EXPECT_TRUE(a.unique());
    Tensor b = a;
    EXPECT_FALSE(a.unique());
    EXPECT_EQ(a.data(), b.data());
    b.data_as<int32_t>()[2] = 7;
    EXPECT_EQ(a.data_as<int32_t>()[2], 7);
    Tensor c = std::move(b);
    EXPECT_FALSE(b.defined());
    EXPECT_FALSE(a.unique());
    c = Tensor();
    EXPECT_TRUE(a.unique());
    Tensor& same = a;
    a = same;  // self-assignment keeps the storage
    EXPECT_TRUE(a.unique());
    EXPECT_EQ(alloc.live, 1);
  }
  EXPECT_EQ(alloc.live, 0);
}

TEST(Tensor, CloneCopiesData) {
  const int64_t shape[] = {2, 2};
  Tensor a = Tensor::zeros(DType::kI64, shape).value();
  a.data_as<int64_t>()[3] = 42;
  Tensor b = a.clone().value();
  EXPECT_NE(a.data(), b.data());
  EXPECT_EQ(b.data_as<int64_t>()[3], 42);
  b.data_as<int64_t>()[3] = 1;
  EXPECT_EQ(a.data_as<int64_t>()[3], 42);
  EXPECT_TRUE(a.unique());
  EXPECT_TRUE(b.unique());
}

TEST(Tensor, WrapDoesNotOwn) {
  alignas(64) float buffer[6] = {1, 2, 3, 4, 5, 6};
  const int64_t shape[] = {2, 3};
  Tensor w = Tensor::wrap(DType::kF32, shape, buffer);
  EXPECT_TRUE(w.defined());
  EXPECT_FALSE(w.unique());  // not owned: never reused in place
  Tensor copy = w;
  EXPECT_EQ(copy.data(), buffer);
  EXPECT_EQ(copy.dim(1), 3);
  Tensor owned = w.clone().value();
  EXPECT_EQ(owned.data_as<float>()[5], 6.0f);
}

// Read-only memory wraps without a cast (an input the runtime only reads).
TEST(Tensor, WrapTakesConstData) {
  alignas(64) static const float kWeights[4] = {1, 2, 3, 4};
  const int64_t shape[] = {4};
  const Tensor w = Tensor::wrap(DType::kF32, shape, kWeights);
  EXPECT_EQ(w.data(), static_cast<const void*>(kWeights));
  EXPECT_EQ(w.data_as<float>()[3], 4.0f);
  EXPECT_FALSE(w.unique());
}

TEST(Tensor, ScalarsAndEmptyTensors) {
  Tensor s = Tensor::zeros(DType::kBool, {}).value();
  EXPECT_EQ(s.rank(), 0);
  EXPECT_EQ(s.numel(), 1);
  const int64_t none[] = {0, 4};
  Tensor e = Tensor::empty(DType::kF16, none).value();
  EXPECT_EQ(e.numel(), 0);
  EXPECT_TRUE(e.defined());
  EXPECT_FALSE(Tensor().defined());
}

TEST(Tensor, RejectsBadShapes) {
  const int64_t negative[] = {2, -1};
  EXPECT_EQ(Tensor::empty(DType::kF32, negative).status().code(), StatusCode::kInvalidArgument);
  const int64_t too_many[9] = {1, 1, 1, 1, 1, 1, 1, 1, 1};
  EXPECT_EQ(Tensor::empty(DType::kF32, too_many).status().code(), StatusCode::kInvalidArgument);
  const int64_t huge[] = {int64_t(1) << 40, int64_t(1) << 40};
  EXPECT_EQ(Tensor::empty(DType::kF32, huge).status().code(), StatusCode::kOutOfMemory);
}

// More than the machine's memory (1 TiB here) is refused when asked for, not
// granted by overcommit and fatal when touched.
TEST(Tensor, MoreThanPhysicalMemoryIsOutOfMemory) {
  const int64_t terabyte[] = {int64_t(1) << 38};
  Result<Tensor> t = Tensor::empty(DType::kF32, terabyte);
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.status().code(), StatusCode::kOutOfMemory);
  EXPECT_EQ(default_allocator()->allocate(size_t(1) << 40, 64), nullptr);
}

}  // namespace
}  // namespace sg
