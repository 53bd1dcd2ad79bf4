// sg.weight: tensors of a safetensors file become constants of the graph.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>

#include "compiler/staging_test_util.h"
#include "staging/weights.h"

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
  // One error: the uses of W that follow do not add "name 'W' is not defined".
  EXPECT_EQ(none.diags->error_count(), 1u) << none.locations();

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

// The header parser: every field is checked, and errors name the tensor.
using staging::parse_safetensors_header;

std::string header_error(const std::string& header, uint64_t data_size) {
  auto r = parse_safetensors_header(header, data_size);
  EXPECT_FALSE(r.ok());
  if (r.ok()) return "";
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidInput);
  return r.status().message();
}

TEST(SafetensorsHeader, ReadsEntries) {
  auto r = parse_safetensors_header(R"({"w": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]},)"
                                    R"( "b": {"dtype": "I64", "shape": [2, 1], "data_offsets": [8, 24]},)"
                                    R"( "flag": {"dtype": "BOOL", "shape": [], "data_offsets": [24, 25]},)"
                                    R"( "__metadata__": {"format": "pt"}})",
                                    25);
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_EQ(r->size(), 3u);
  EXPECT_EQ(r->at("b").dtype, DType::kI64);
  EXPECT_EQ(r->at("b").shape, (std::vector<int64_t>{2, 1}));
  EXPECT_EQ(r->at("flag").shape.size(), 0u);
  EXPECT_EQ(r->at("w").end, 8u);
}

TEST(SafetensorsHeader, RejectsOtherDtypesNamingThem) {
  const std::string msg = header_error(R"({"x": {"dtype": "BF16", "shape": [2], "data_offsets": [0, 4]}})", 4);
  EXPECT_NE(msg.find("'BF16'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("tensor 'x'"), std::string::npos) << msg;
}

TEST(SafetensorsHeader, RejectsBadOffsetsShapesAndSizes) {
  EXPECT_NE(header_error(R"({"x": {"dtype": "F32", "shape": [4], "data_offsets": [0, 16]}})", 8).find("outside"),
            std::string::npos);
  EXPECT_NE(header_error(R"({"x": {"dtype": "F32", "shape": [3], "data_offsets": [0, 8]}})", 8).find("needs 12"),
            std::string::npos);
  EXPECT_NE(header_error(R"({"x": {"dtype": "F32", "shape": [-1], "data_offsets": [0, 8]}})", 8).find("non-negative"),
            std::string::npos);
  EXPECT_NE(header_error(R"({"x": {"dtype": "F32", "shape": [2]}})", 8).find("data_offsets"), std::string::npos);
  EXPECT_NE(header_error(R"({"x": {"dtype": "F32", "shape": [4294967296, 4294967296], "data_offsets": [0, 8]}})", 8)
                .find("too large"),
            std::string::npos);
  EXPECT_NE(header_error(R"({"x": {"dtype": "F32", "shape": [1,1,1,1,1,1,1,1,1], "data_offsets": [0, 4]}})", 8)
                .find("rank 9"),
            std::string::npos);
  EXPECT_NE(header_error("{not json", 0).find("not a JSON object"), std::string::npos);
  EXPECT_NE(header_error("[1, 2]", 0).find("not a JSON object"), std::string::npos);
}

// A header nesting arrays a million deep is refused before the JSON parser sees
// it (a recursive reader would overflow its stack; an iterative one spends memory).
TEST(SafetensorsHeader, RejectsDeepNestingBeforeParsing) {
  for (const char* open : {"[", "{\"a\":"}) {
    std::string deep = "{\"x\": ";
    for (int i = 0; i < 1000000; ++i) deep += open;
    EXPECT_NE(header_error(deep, 0).find("more than 64 deep"), std::string::npos);
  }
  // Brackets inside strings are not nesting.
  auto r = parse_safetensors_header(R"({"w[[[[": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]},)"
                                    R"( "__metadata__": {"note": ")" + std::string(200, '[') + R"("}})",
                                    8);
  EXPECT_TRUE(r.ok()) << r.status().message();
}

TEST(SafetensorsHeader, TruncatedFilesAreErrorsNamingThePath) {
  const std::string path = ::testing::TempDir() + "staging_weights_short.safetensors";
  {
    std::ofstream out(path, std::ios::binary);
    out << "\xff\xff\x01";  // shorter than the 8-byte length
  }
  staging::WeightsFile w;
  Status st = w.open(path);
  EXPECT_FALSE(st.ok());
  EXPECT_NE(st.message().find("shorter than 8 bytes"), std::string::npos) << st.message();
  {
    std::ofstream out(path, std::ios::binary);
    out << std::string("\xff\x00\x00\x00\x00\x00\x00\x00", 8) << "{}";  // 255-byte header announced
  }
  st = w.open(path);
  EXPECT_FALSE(st.ok());
  EXPECT_NE(st.message().find("announced"), std::string::npos) << st.message();
  EXPECT_NE(st.message().find(path), std::string::npos) << st.message();
  std::remove(path.c_str());
}

}  // namespace
}  // namespace sg::compiler
