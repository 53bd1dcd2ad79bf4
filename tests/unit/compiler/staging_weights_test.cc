// sg.weight: tensors of a safetensors file become constants of the graph.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>

#include "compiler/staging_test_util.h"

namespace sg::compiler {
namespace {

using testing::stage_source;

// A safetensors file with one F32 tensor "fc.w" of shape [2, 3] holding 0..5.
std::string write_weights(const std::string& name) {
  const std::string path = ::testing::TempDir() + name;
  const std::string header = R"({"fc.w":{"dtype":"F32","shape":[2,3],"data_offsets":[0,24]},"__metadata__":{}})";
  std::ofstream out(path, std::ios::binary);
  uint64_t n = header.size();
  for (int i = 0; i < 8; ++i) out.put(char((n >> (8 * i)) & 0xFF));
  out << header;
  for (int i = 0; i < 6; ++i) {
    float f = float(i);
    out.write(reinterpret_cast<const char*>(&f), 4);
  }
  return path;
}

const char* kProgram = R"(import stagegraph as sg

W = sg.weight("fc.w")

@sg.function
def f(x: sg.f32["N", 2]):
    return x @ W + W[0]
)";

TEST(StagingWeights, WeightsBecomeConstants) {
  StageOptions options;
  options.weights_path = write_weights("staging_weights_ok.safetensors");
  auto r = stage_source(kProgram, options);
  ASSERT_TRUE(r.ir) << r.locations();
  EXPECT_EQ(r.result_type("f"), "f32[N, 3]");
  ASSERT_EQ(r.ir->constants.size(), 2u);  // W and its folded row W[0]
  float v[6];
  std::memcpy(v, r.ir->constants[0].bytes.data(), 24);
  EXPECT_EQ(v[5], 5.0f);
  std::remove(options.weights_path.c_str());
}

TEST(StagingWeights, MissingFileOrTensorIsAnError) {
  auto none = stage_source(kProgram);
  EXPECT_FALSE(none.ir);
  EXPECT_NE(none.locations().find("3:5: error: sg.weight(\"fc.w\") needs a weights file"), std::string::npos)
      << none.locations();

  StageOptions options;
  options.weights_path = write_weights("staging_weights_missing.safetensors");
  auto r = stage_source(R"(import stagegraph as sg

@sg.function
def f(x: sg.f32[2]):
    return x + sg.weight("nope")
)", options);
  EXPECT_FALSE(r.ir);
  EXPECT_NE(r.locations().find("has no tensor 'nope'"), std::string::npos) << r.locations();
  std::remove(options.weights_path.c_str());
}

}  // namespace
}  // namespace sg::compiler
