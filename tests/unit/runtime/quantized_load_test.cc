// Quantized constants in the file (SPEC.md §13): a dense layer with int8 weights
// loads and runs on the widened values; every field the verifier checks is refused,
// with a message, when wrong.
#include <gtest/gtest.h>

#include <cstring>
#include <string>

#include "program_impl.h"
#include "quant/weight_format.h"
#include "test_util.h"

namespace sg::testing {
namespace {

const float kW[12] = {0.5f, -1.0f, 2.0f, 0.25f, 0.0f, -2.0f, 1.0f, 1.0f, 0.5f, -0.75f, 0.125f, 1.5f};

// y[1, 3] = x[1, 4] @ w[4, 3], w stored int8 with a scale per column.
GraphSpec dense_int8() {
  GraphSpec g;
  const kernels::quant::Layout l = kernels::quant::default_layout(kernels::quant::Storage::kInt8, {4, 3});
  const kernels::quant::Quantized q = kernels::quant::quantize(l, kW);
  g.constants.push_back(q.data);
  g.constants.push_back(q.scales);
  g.quantized.push_back({0, fb::WeightStorage::Int8, 1, 0, fb::ScaleType::F32, 1});
  g.flags = format::kFlagQuantizedWeights;
  FunctionSpec f;
  f.name = "dense";
  const uint32_t x = f.value(DType::kF32, shape({1, 4}));
  const uint32_t w = f.value(DType::kF32, shape({4, 3}), 0);
  f.params = {x};
  f.results = {f.op("matmul", {x, w}, DType::kF32, shape({1, 3}))};
  g.add_entry("dense", g.add_function(std::move(f)), {"x"}, {"y"});
  return g;
}

std::string load_error(const GraphSpec& g) {
  auto p = load_owned(build_sgraph(g));
  if (p.ok()) return "(loaded)";
  EXPECT_EQ(p.status().code(), StatusCode::kInvalidGraph) << p.status().message();
  return p.status().message();
}

::testing::AssertionResult refused(const GraphSpec& g, const std::string& part) {
  const std::string message = load_error(g);
  if (message.find(part) != std::string::npos) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "message '" << message << "' lacks '" << part << "'";
}

TEST(QuantizedLoad, DenseRunsOnTheWidenedWeights) {
  auto program = load_ok(dense_int8());
  ASSERT_NE(program, nullptr);
  auto s = Session::create(program, "dense").value();
  ASSERT_TRUE(s->set_input("x", make_tensor<float>(DType::kF32, {1, 4}, {1, 2, 3, 4})).ok());
  ASSERT_TRUE(s->run().ok());
  const std::vector<float> y = values_of<float>(s->output(0));
  // The same weights widened by the format's own code; the int8 grid moves them off kW.
  const kernels::quant::Layout l = kernels::quant::default_layout(kernels::quant::Storage::kInt8, {4, 3});
  const kernels::quant::Quantized q = kernels::quant::quantize(l, kW);
  float wide[12];
  kernels::quant::dequantize(kernels::quant::WeightView{&l, q.data.data(), q.scales.data()}, 0, 12, wide);
  for (int c = 0; c < 3; ++c) {
    const float want = 1 * wide[c] + 2 * wide[3 + c] + 3 * wide[6 + c] + 4 * wide[9 + c];
    EXPECT_NEAR(y[size_t(c)], want, 1e-5f) << c;
  }
}

TEST(QuantizedLoad, RefusesEachBadField) {
  GraphSpec g = dense_int8();
  g.flags = 0;
  EXPECT_TRUE(refused(g, "does not set the flag of quantized weights"));
  g = dense_int8();
  g.constants[1].resize(8);  // 2 scales for 3 channels
  EXPECT_TRUE(refused(g, "has 8 bytes of scales, but 3 f32 scales (one per channel of axis 1) need 12"));
  g = dense_int8();
  g.constants[0].resize(11);
  EXPECT_TRUE(refused(g, "holds 11 bytes but int8 storage of its shape needs 12"));
  g = dense_int8();
  g.quantized[0].axis = 2;
  EXPECT_TRUE(refused(g, "int8 axis 2 is out of range for rank 2"));
  g = dense_int8();
  g.quantized[0].storage = fb::WeightStorage::Int4;
  g.quantized[0].axis = 0;
  g.quantized[0].block_size = 3;
  EXPECT_TRUE(refused(g, "int4 block size 3 does not divide axis 0 of size 4"));
  g = dense_int8();
  g.quantized[0].storage = fb::WeightStorage(9);
  EXPECT_TRUE(refused(g, "unknown weight storage 9"));
  g = dense_int8();
  g.quantized[0].scales = 7;
  EXPECT_TRUE(refused(g, "scales constant 7 is out of range or itself quantized"));
  g = dense_int8();
  g.quantized.push_back(g.quantized[0]);
  EXPECT_TRUE(refused(g, "not sorted by constant, or repeat one"));
  g = dense_int8();
  g.quantized[0].storage = fb::WeightStorage::BF16;
  g.quantized[0].axis = 0;
  g.constants[0].resize(24);  // 12 bf16 values
  EXPECT_TRUE(refused(g, "bf16 constant 0 has scales"));
}

TEST(QuantizedLoad, AFlagWithoutFormat12IsRefused) {
  GraphSpec g = dense_int8();
  g.minor = 1;
  EXPECT_TRUE(refused(g, "needs format 1.2"));
}

}  // namespace
}  // namespace sg::testing
