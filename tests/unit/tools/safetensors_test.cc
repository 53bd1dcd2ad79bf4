#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "npy.h"

namespace sg::tools {
namespace {

std::vector<uint8_t> safetensors_image(const std::string& header, const std::vector<uint8_t>& data) {
  std::vector<uint8_t> out(8);
  const uint64_t n = header.size();
  for (int i = 0; i < 8; ++i) out[size_t(i)] = uint8_t(n >> (8 * i));
  out.insert(out.end(), header.begin(), header.end());
  out.insert(out.end(), data.begin(), data.end());
  return out;
}

std::string error_of(const std::vector<uint8_t>& bytes) {
  auto r = parse_safetensors(bytes);
  EXPECT_FALSE(r.ok());
  if (r.ok()) return "";
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidInput);
  return r.status().message();
}

TEST(Safetensors, ReadsTensorsSortedByName) {
  std::vector<uint8_t> data(8 + 16 + 2);
  const float w[2] = {1.0f, -2.0f};
  const int64_t b[2] = {5, -6};
  std::memcpy(data.data(), w, 8);
  std::memcpy(data.data() + 8, b, 16);
  data[24] = 1;
  const std::string header =
      R"({"w": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]},)"
      R"( "b": {"dtype": "I64", "shape": [2, 1], "data_offsets": [8, 24]},)"
      R"( "flag": {"dtype": "BOOL", "shape": [], "data_offsets": [24, 25]},)"
      R"( "__metadata__": {"format": "pt"}})";
  auto r = parse_safetensors(safetensors_image(header, data));
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_EQ(r->size(), 3u);
  EXPECT_EQ((*r)[0].first, "b");
  EXPECT_EQ(describe((*r)[0].second), "i64[2, 1]");
  EXPECT_EQ((*r)[0].second.data_as<int64_t>()[1], -6);
  EXPECT_EQ((*r)[1].first, "flag");
  EXPECT_EQ((*r)[1].second.rank(), 0);
  EXPECT_EQ((*r)[1].second.data_as<uint8_t>()[0], 1);
  EXPECT_EQ((*r)[2].first, "w");
  EXPECT_EQ((*r)[2].second.data_as<float>()[1], -2.0f);
}

TEST(Safetensors, RejectsOtherDtypesNamingThem) {
  const std::string header = R"({"x": {"dtype": "BF16", "shape": [2], "data_offsets": [0, 4]}})";
  const std::string msg = error_of(safetensors_image(header, std::vector<uint8_t>(4)));
  EXPECT_NE(msg.find("'BF16'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("tensor 'x'"), std::string::npos) << msg;
}

TEST(Safetensors, RejectsBadOffsetsAndSizes) {
  const std::vector<uint8_t> data(8);
  EXPECT_NE(error_of(safetensors_image(
                R"({"x": {"dtype": "F32", "shape": [4], "data_offsets": [0, 16]}})", data))
                .find("outside"),
            std::string::npos);
  EXPECT_NE(error_of(safetensors_image(
                R"({"x": {"dtype": "F32", "shape": [3], "data_offsets": [0, 8]}})", data))
                .find("needs 12"),
            std::string::npos);
  EXPECT_NE(error_of(safetensors_image(
                R"({"x": {"dtype": "F32", "shape": [-1], "data_offsets": [0, 8]}})", data))
                .find("non-negative"),
            std::string::npos);
  EXPECT_NE(error_of(safetensors_image(R"({"x": {"dtype": "F32", "shape": [2]}})", data))
                .find("data_offsets"),
            std::string::npos);
}

TEST(Safetensors, RejectsMalformedFiles) {
  EXPECT_NE(error_of({1, 2, 3}).find("shorter than 8"), std::string::npos);
  std::vector<uint8_t> huge(16, 0);
  huge[0] = 0xFF;
  huge[7] = 0x7F;
  EXPECT_NE(error_of(huge).find("announced"), std::string::npos);
  EXPECT_NE(error_of(safetensors_image("{not json", {})).find("not a JSON object"),
            std::string::npos);
  EXPECT_NE(error_of(safetensors_image("[1, 2]", {})).find("not a JSON object"), std::string::npos);
}

}  // namespace
}  // namespace sg::tools
