// Quantized constants in the file (SPEC.md §13): a dense layer with int8 weights
// loads and runs with its activations quantized per run (or, weight-only, on the
// widened values); the f32 copy exists only where some use needs it; every field
// the verifier checks is refused, with a message, when wrong.
#include <gtest/gtest.h>

#include <cstring>
#include <string>

#include "program_impl.h"
#include "quant/dynamic_gemm.h"
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

std::vector<float> run_dense(const std::shared_ptr<const Program>& program) {
  auto s = Session::create(program, "dense").value();
  EXPECT_TRUE(s->set_input("x", make_tensor<float>(DType::kF32, {1, 4}, {1, 2, 3, 4})).ok());
  EXPECT_TRUE(s->run().ok());
  return values_of<float>(s->output(0));
}

TEST(QuantizedLoad, DenseQuantizesItsActivations) {
  auto program = load_ok(dense_int8());
  ASSERT_NE(program, nullptr);
  const std::vector<float> y = run_dense(program);
  const kernels::quant::Layout l = kernels::quant::default_layout(kernels::quant::Storage::kInt8, {4, 3});
  const kernels::quant::Quantized q = kernels::quant::quantize(l, kW);
  const float x[4] = {1, 2, 3, 4};
  float want[3];
  kernels::quant::dynamic_gemm_reference(kernels::quant::WeightView{&l, q.data.data(), q.scales.data()}, x, want, 1);
  for (int c = 0; c < 3; ++c) EXPECT_EQ(y[size_t(c)], want[c]) << c;
}

TEST(QuantizedLoad, WeightOnlyRunsOnTheWidenedWeights) {
  LoadOptions options;
  options.dynamic_quantization = false;
  auto loaded = load_owned(build_sgraph(dense_int8()), options);
  ASSERT_TRUE(loaded.ok()) << loaded.status().message();
  const std::vector<float> y = run_dense(*loaded);
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

// A constant every use of which has a quantized kernel keeps no f32 copy; one that
// is also a result (or any other use) is widened once.
TEST(QuantizedLoad, WidensOnlyWhereAUseNeedsF32) {
  auto dense = load_ok(dense_int8());
  ASSERT_NE(dense, nullptr);
  const ProgramImpl& impl = runtime::program_impl(*dense);
  EXPECT_TRUE(impl.widened_constants.empty());
  const runtime::ValueInfo& w = impl.functions[0].values[1];
  ASSERT_NE(w.quant, nullptr);
  EXPECT_FALSE(w.quant->widened());
  EXPECT_TRUE(w.quant->values.empty());

  GraphSpec g = dense_int8();
  g.functions[0].results.push_back(1);  // w itself: a result needs its f32 values
  g.entries[0].outputs.push_back({"w", DType::kF32, shape({4, 3})});
  auto both = load_ok(g);
  ASSERT_NE(both, nullptr);
  const ProgramImpl& impl2 = runtime::program_impl(*both);
  ASSERT_EQ(impl2.widened_constants.size(), 1u);
  EXPECT_EQ(impl2.widened_constants[0]->values.size(), 12u + 16u);
  auto s = Session::create(both, "dense").value();
  ASSERT_TRUE(s->set_input("x", make_tensor<float>(DType::kF32, {1, 4}, {1, 2, 3, 4})).ok());
  ASSERT_TRUE(s->run().ok());
  const kernels::quant::Layout l = kernels::quant::default_layout(kernels::quant::Storage::kInt8, {4, 3});
  const kernels::quant::Quantized q = kernels::quant::quantize(l, kW);
  float wide[12];
  kernels::quant::dequantize(kernels::quant::WeightView{&l, q.data.data(), q.scales.data()}, 0, 12, wide);
  const std::vector<float> wout = values_of<float>(s->output(1));
  for (int i = 0; i < 12; ++i) EXPECT_EQ(wout[size_t(i)], wide[i]) << i;
  // The dense use still reads the stored bytes.
  EXPECT_EQ(values_of<float>(s->output(0)), run_dense(dense));
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
