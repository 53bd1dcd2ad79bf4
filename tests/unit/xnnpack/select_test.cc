// The f32 comparisons and where (simd/select.cc) give the reference kernels' bytes:
// full and one-element operands, NaN, infinities and signed zeros, lengths around
// the vector widths and the tiles, on 1 and 2 threads; other shapes go to the
// reference kernel.
#include <cmath>
#include <cstring>
#include <limits>

#include "xnnpack/xnn_common.h"
#include "xnnpack/xnn_tester.h"

namespace sg::kernels::testing {
namespace {

using ops::OpId;

// Runs `op` on the backend's prepared kernel and on the reference kernel; the
// outputs must agree byte for byte.
void expect_reference_bytes(OpId op, std::vector<HostTensor> in, DType out_dtype, const std::vector<int64_t>& shape,
                            const std::string& what) {
  ASSERT_TRUE(xnnpack_init().ok());
  std::vector<InputInfo> infos;
  std::vector<TensorRef> refs;
  for (HostTensor& t : in) {
    infos.push_back(info_of(t, false));
    refs.push_back(t.ref());
  }
  std::unique_ptr<PreparedKernel> k = xnnpack_prepare(op, {}, infos);
  ASSERT_NE(k, nullptr) << what;
  for (int threads : {1, 2}) {
    ThreadPool pool(threads);
    KernelContext ctx;
    ctx.threadpool = pool.get();
    HostTensor got(out_dtype, shape), want(out_dtype, shape);
    got.poison();
    TensorRef got_ref = got.ref(), want_ref = want.ref();
    const Status st = k->run(ctx, refs, std::span(&got_ref, 1));
    ASSERT_TRUE(st.ok()) << what << ": " << st.message();
    ASSERT_TRUE(reference_kernel(op)(ctx, {}, refs, std::span(&want_ref, 1)).ok()) << what;
    EXPECT_TRUE(got.guard_intact()) << what;
    const size_t bytes = size_t(want.numel()) * dtype_size(out_dtype);
    EXPECT_EQ(std::memcmp(got.ref().data, want.ref().data, bytes), 0)
        << what << " on " << threads << " threads (" << k->name() << ")";
  }
}

// Values with NaN, infinities and both zeros sprinkled in.
HostTensor specials(const std::vector<int64_t>& shape, uint32_t seed) {
  HostTensor t = HostTensor::random(DType::kF32, shape, seed, -2, 2);
  const double v[] = {std::numeric_limits<double>::quiet_NaN(), std::numeric_limits<double>::infinity(),
                      -std::numeric_limits<double>::infinity(), 0.0, -0.0, 1.0};
  for (int64_t i = 0; i < t.numel(); i += 7) t.set(i, v[(size_t(i) / 7 + seed) % 6]);
  return t;
}

const std::vector<std::vector<int64_t>> kShapes = {{1}, {7}, {16}, {33}, {64, 512}, {3, 16385}, {0, 5}};

TEST(XnnpackSelect, ComparisonsHaveTheReferenceBytes) {
  for (OpId op : {OpId::Greater, OpId::GreaterEqual, OpId::Less, OpId::LessEqual, OpId::Equal, OpId::NotEqual}) {
    for (const std::vector<int64_t>& shape : kShapes) {
      const std::string what = std::string(ops::op_def(op).name) + " " + shape_string(shape);
      HostTensor a = specials(shape, 1), b = specials(shape, 2);
      HostTensor zero = HostTensor::scalar(DType::kF32, 0.0), nan = HostTensor::scalar(DType::kF32, NAN);
      expect_reference_bytes(op, {a, b}, DType::kBool, shape, what + " full, full");
      expect_reference_bytes(op, {a, zero}, DType::kBool, shape, what + " full, 0");
      expect_reference_bytes(op, {zero, b}, DType::kBool, shape, what + " 0, full");
      expect_reference_bytes(op, {a, nan}, DType::kBool, shape, what + " full, NaN");
      expect_reference_bytes(op, {a, a}, DType::kBool, shape, what + " a, a");
    }
  }
}

TEST(XnnpackSelect, WhereHasTheReferenceBytes) {
  for (const std::vector<int64_t>& shape : kShapes) {
    const std::string what = "where " + shape_string(shape);
    HostTensor c = HostTensor::random(DType::kBool, shape, 3);
    HostTensor x = specials(shape, 4), y = specials(shape, 5), zero = HostTensor::scalar(DType::kF32, -0.0);
    expect_reference_bytes(OpId::Where, {c, x, y}, DType::kF32, shape, what + " full, full");
    expect_reference_bytes(OpId::Where, {c, x, zero}, DType::kF32, shape, what + " full, -0");
    expect_reference_bytes(OpId::Where, {c, zero, y}, DType::kF32, shape, what + " -0, full");
    expect_reference_bytes(OpId::Where, {c, zero, HostTensor::scalar(DType::kF32, 2.5)}, DType::kF32, shape,
                           what + " -0, 2.5");
  }
}

TEST(XnnpackSelect, BroadcastsGoToTheReferenceKernel) {
  // [4, 1] against [4, 8]: an operand that neither advances nor repeats one value.
  HostTensor a = specials({4, 8}, 1), col = specials({4, 1}, 2);
  expect_reference_bytes(OpId::Greater, {a, col}, DType::kBool, {4, 8}, "greater [4, 8] > [4, 1]");
  HostTensor c = HostTensor::random(DType::kBool, {4, 8}, 3), row_c = HostTensor::random(DType::kBool, {8}, 3);
  expect_reference_bytes(OpId::Where, {c, a, col}, DType::kF32, {4, 8}, "where with a [4, 1] value");
  expect_reference_bytes(OpId::Where, {row_c, a, a}, DType::kF32, {4, 8}, "where with a [8] condition");
}

TEST(XnnpackSelect, TakesF32ValuesAndBoolConditions) {
  ASSERT_TRUE(xnnpack_init().ok());
  HostTensor i = HostTensor::random(DType::kI32, {8}, 1), f = HostTensor::random(DType::kF32, {8}, 1);
  HostTensor b = HostTensor::random(DType::kBool, {8}, 1);
  EXPECT_EQ(xnnpack_prepare(OpId::Greater, {}, std::vector<InputInfo>{info_of(i, false), info_of(i, false)}),
            nullptr);
  EXPECT_EQ(xnnpack_prepare(OpId::Where, {}, std::vector<InputInfo>{info_of(b, false), info_of(i, false),
                                                                    info_of(i, false)}),
            nullptr);
  EXPECT_EQ(xnnpack_prepare(OpId::Where, {}, std::vector<InputInfo>{info_of(f, false), info_of(f, false),
                                                                    info_of(f, false)}),
            nullptr);
  EXPECT_NE(xnnpack_prepare(OpId::Where, {}, std::vector<InputInfo>{info_of(b, false), info_of(f, false),
                                                                    info_of(f, false)}),
            nullptr);
}

}  // namespace
}  // namespace sg::kernels::testing
