#include "npy.h"

#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace sg::tools {
namespace {

// A .npy image with the given version, header text and data bytes; the header is
// used verbatim (no padding) so malformed ones can be written too.
std::vector<uint8_t> npy_image(int major, const std::string& header, size_t data_bytes,
                               uint8_t fill = 0) {
  std::vector<uint8_t> out = {0x93, 'N', 'U', 'M', 'P', 'Y', uint8_t(major), 0};
  const size_t n = header.size();
  out.push_back(uint8_t(n & 0xFF));
  out.push_back(uint8_t((n >> 8) & 0xFF));
  if (major >= 2) {
    out.push_back(uint8_t((n >> 16) & 0xFF));
    out.push_back(uint8_t((n >> 24) & 0xFF));
  }
  out.insert(out.end(), header.begin(), header.end());
  out.insert(out.end(), data_bytes, fill);
  return out;
}

std::string header_for(const std::string& descr, const std::string& shape,
                       const std::string& fortran = "False") {
  return "{'descr': '" + descr + "', 'fortran_order': " + fortran + ", 'shape': " + shape +
         ", }\n";
}

std::string error_of(const std::vector<uint8_t>& bytes) {
  Result<Tensor> t = parse_npy(bytes);
  EXPECT_FALSE(t.ok());
  if (t.ok()) return "";
  EXPECT_EQ(t.status().code(), StatusCode::kInvalidInput);
  return t.status().message();
}

TEST(Npy, ParsesEachSupportedDtype) {
  struct Case { const char* descr; DType dtype; size_t size; };
  for (const Case& c : {Case{"<f4", DType::kF32, 4}, Case{"<f2", DType::kF16, 2},
                        Case{"<i4", DType::kI32, 4}, Case{"<i8", DType::kI64, 8},
                        Case{"|b1", DType::kBool, 1}}) {
    Result<Tensor> t = parse_npy(npy_image(1, header_for(c.descr, "(2, 3)"), 6 * c.size, 1));
    ASSERT_TRUE(t.ok()) << c.descr << ": " << t.status().message();
    EXPECT_EQ(t->dtype(), c.dtype);
    ASSERT_EQ(t->rank(), 2);
    EXPECT_EQ(t->dim(0), 2);
    EXPECT_EQ(t->dim(1), 3);
  }
}

TEST(Npy, ReadsValuesOfVersion2And3Headers) {
  const float values[3] = {1.5f, -2.0f, 0.25f};
  for (int major : {1, 2, 3}) {
    std::vector<uint8_t> img = npy_image(major, header_for("<f4", "(3,)"), 0);
    const auto* p = reinterpret_cast<const uint8_t*>(values);
    img.insert(img.end(), p, p + sizeof values);
    Result<Tensor> t = parse_npy(img);
    ASSERT_TRUE(t.ok()) << t.status().message();
    ASSERT_EQ(t->rank(), 1);
    EXPECT_EQ(t->data_as<float>()[0], 1.5f);
    EXPECT_EQ(t->data_as<float>()[1], -2.0f);
    EXPECT_EQ(t->data_as<float>()[2], 0.25f);
  }
}

TEST(Npy, ZeroDimAndEmptyArrays) {
  Result<Tensor> scalar = parse_npy(npy_image(1, header_for("<i8", "()"), 8, 0));
  ASSERT_TRUE(scalar.ok()) << scalar.status().message();
  EXPECT_EQ(scalar->rank(), 0);
  EXPECT_EQ(scalar->numel(), 1);
  Result<Tensor> empty = parse_npy(npy_image(1, header_for("<f4", "(0, 5)"), 0));
  ASSERT_TRUE(empty.ok()) << empty.status().message();
  EXPECT_EQ(empty->numel(), 0);
}

TEST(Npy, AcceptsKeysInAnyOrderAndDoubleQuotes) {
  const std::string h = "{\"shape\": (2,), \"fortran_order\": False, \"descr\": \"<i4\"}";
  Result<Tensor> t = parse_npy(npy_image(1, h, 8));
  ASSERT_TRUE(t.ok()) << t.status().message();
  EXPECT_EQ(t->dtype(), DType::kI32);
}

TEST(Npy, BoolBytesAreNormalized) {
  std::vector<uint8_t> img = npy_image(1, header_for("|b1", "(2,)"), 0);
  img.push_back(0);
  img.push_back(7);
  Result<Tensor> t = parse_npy(img);
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(t->data_as<uint8_t>()[0], 0);
  EXPECT_EQ(t->data_as<uint8_t>()[1], 1);
}

TEST(Npy, RejectsUnsupportedDtypesNamingThem) {
  EXPECT_NE(error_of(npy_image(1, header_for("|u1", "(2,)"), 2)).find("'|u1'"), std::string::npos);
  EXPECT_NE(error_of(npy_image(1, header_for("<f8", "(2,)"), 16)).find("'<f8'"), std::string::npos);
  EXPECT_NE(error_of(npy_image(1, header_for(">f4", "(2,)"), 8)).find("big-endian"),
            std::string::npos);
  EXPECT_NE(error_of(npy_image(1, header_for("|O", "(2,)"), 16)).find("object arrays"),
            std::string::npos);
  const std::string structured =
      "{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (2,), }";
  EXPECT_NE(error_of(npy_image(1, structured, 8)).find("structured"), std::string::npos);
}

TEST(Npy, RejectsFortranOrder) {
  EXPECT_NE(error_of(npy_image(1, header_for("<f4", "(2, 2)", "True"), 16)).find("Fortran"),
            std::string::npos);
}

TEST(Npy, RejectsBadMagicAndVersion) {
  std::vector<uint8_t> img = npy_image(1, header_for("<f4", "(1,)"), 4);
  img[1] = 'X';
  EXPECT_NE(error_of(img).find("bad magic"), std::string::npos);
  EXPECT_NE(error_of({}).find("bad magic"), std::string::npos);
  EXPECT_NE(error_of(npy_image(4, header_for("<f4", "(1,)"), 4)).find("version 4.0"),
            std::string::npos);
}

TEST(Npy, RejectsTruncatedFiles) {
  EXPECT_NE(error_of(npy_image(1, header_for("<f4", "(2, 3)"), 20)).find("truncated .npy data"),
            std::string::npos);
  std::vector<uint8_t> img = npy_image(1, header_for("<f4", "(2, 3)"), 24);
  img.resize(20);  // cut inside the header
  EXPECT_NE(error_of(img).find("truncated .npy header"), std::string::npos);
  img.resize(9);
  EXPECT_NE(error_of(img).find("truncated"), std::string::npos);
  EXPECT_NE(error_of(npy_image(1, header_for("<f4", "(2,)"), 12)).find("unexpected bytes"),
            std::string::npos);
}

TEST(Npy, RejectsHeadersThatAreNotADict) {
  for (const std::string h :
       {"[1, 2]", "{'descr': '<f4', 'fortran_order': False, 'shape': (2,)",
        "{'descr': '<f4' 'shape': (2,)}", "{'descr': '<f4', 'fortran_order': maybe, 'shape': (2,)}",
        "{'descr': '<f4', 'fortran_order': False, 'shape': (-2,)}", "", "{} trailing"}) {
    EXPECT_NE(error_of(npy_image(1, h, 8)).find("malformed .npy header"), std::string::npos) << h;
  }
  EXPECT_NE(error_of(npy_image(1, "{'descr': '<f4', 'shape': (2,)}", 8)).find("lacks"),
            std::string::npos);
  EXPECT_NE(error_of(npy_image(1, header_for("<f4", "[2]"), 8)).find("'shape' is not a tuple"),
            std::string::npos);
  EXPECT_NE(error_of(npy_image(1, header_for("<f4", "(2, 'a')"), 8)).find("'shape' is not a tuple"),
            std::string::npos);
  const std::string extra = "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), 'x': 1}";
  EXPECT_NE(error_of(npy_image(1, extra, 8)).find("unexpected key 'x'"), std::string::npos);
}

// A header nesting tuples or lists tens of thousands deep once overflowed the
// parser's stack (SIGSEGV); nesting is bounded and the message says so.
TEST(Npy, RejectsDeeplyNestedHeadersWithoutRecursingOnThem) {
  for (const char* open : {"(", "[", "([", "[("}) {
    std::string nest;
    for (int i = 0; i < 100000; ++i) nest += open;
    const std::string message = error_of(npy_image(2, header_for("<f4", nest), 8));
    EXPECT_NE(message.find("nested more than 16 deep"), std::string::npos) << message.substr(0, 300);
    EXPECT_LT(message.size(), 600u) << "the message quotes only the start of the header";
    const std::string in_descr = error_of(npy_image(2, "{'descr': " + nest + "}", 8));
    EXPECT_NE(in_descr.find("nested more than 16 deep"), std::string::npos);
  }
  // NumPy's own nesting (a structured dtype's list of tuples) stays a plain refusal.
  EXPECT_NE(error_of(npy_image(1, "{'descr': [('a', '<f4', (2,))], 'fortran_order': False, 'shape': (1,)}", 8))
                .find("structured arrays"),
            std::string::npos);
}

TEST(Npy, RejectsHugeHeaderLengthsBeforeReadingThem) {
  std::vector<uint8_t> image = npy_image(2, header_for("<f4", "(2,)"), 8);
  image[8] = image[9] = image[10] = image[11] = 0xFF;  // 4 GiB of header announced
  EXPECT_NE(error_of(image).find("over the limit"), std::string::npos);
  const std::string path = testing::TempDir() + "npy_huge_header.npy";
  std::ofstream(path, std::ios::binary).write(reinterpret_cast<const char*>(image.data()), std::streamsize(image.size()));
  Result<Tensor> t = read_npy(path);
  ASSERT_FALSE(t.ok());
  EXPECT_NE(t.status().message().find("over the limit"), std::string::npos) << t.status().message();
  std::filesystem::remove(path);
}

TEST(Npy, RejectsShapesThatOverflow) {
  EXPECT_NE(error_of(npy_image(1, header_for("<f4", "(99999999999999999999,)"), 8))
                .find("does not fit in 64 bits"),
            std::string::npos);
  EXPECT_NE(error_of(npy_image(1, header_for("<f4", "(4294967296, 4294967296)"), 8))
                .find("overflows"),
            std::string::npos);
  EXPECT_NE(error_of(npy_image(1, header_for("<f4", "(1, 1, 1, 1, 1, 1, 1, 1, 1)"), 4))
                .find("rank 9"),
            std::string::npos);
}

Tensor make_tensor(DType dtype, std::vector<int64_t> shape) {
  Result<Tensor> t = Tensor::zeros(dtype, shape);
  EXPECT_TRUE(t.ok());
  return std::move(t).value();
}

TEST(Npy, EncodedHeaderIsPaddedTo64BytesAndNewlineTerminated) {
  for (const std::vector<int64_t>& shape : {std::vector<int64_t>{}, {5}, {2, 3, 4, 5, 6, 7, 8, 9}}) {
    const std::vector<uint8_t> img = encode_npy(make_tensor(DType::kI32, shape));
    const size_t header_len = size_t(img[8]) | size_t(img[9]) << 8;
    EXPECT_EQ((10 + header_len) % 64, 0u);
    EXPECT_EQ(img[10 + header_len - 1], '\n');
    EXPECT_EQ(img[6], 1);
    EXPECT_EQ(img[7], 0);
  }
  const std::vector<uint8_t> scalar = encode_npy(make_tensor(DType::kF32, {}));
  const std::string text(scalar.begin() + 10, scalar.begin() + 64);
  EXPECT_NE(text.find("'shape': ()"), std::string::npos) << text;
  const std::vector<uint8_t> vec = encode_npy(make_tensor(DType::kBool, {3}));
  const std::string vec_text(vec.begin() + 10, vec.begin() + 64);
  EXPECT_NE(vec_text.find("'descr': '|b1'"), std::string::npos) << vec_text;
  EXPECT_NE(vec_text.find("'shape': (3,)"), std::string::npos) << vec_text;
}

TEST(Npy, WriteThenReadRoundTrips) {
  Tensor t = make_tensor(DType::kF16, {2, 2});
  const uint16_t bits[4] = {float_to_half(1.0f), float_to_half(-0.5f), float_to_half(65504.0f),
                            float_to_half(0.0f)};
  std::memcpy(t.data(), bits, sizeof bits);
  const std::string path =
      (std::filesystem::temp_directory_path() / "sg_npy_roundtrip_test.npy").string();
  ASSERT_TRUE(write_npy(path, t).ok());
  Result<Tensor> back = read_npy(path);
  std::filesystem::remove(path);
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(back->dtype(), DType::kF16);
  EXPECT_EQ(describe(*back), "f16[2, 2]");
  EXPECT_EQ(std::memcmp(back->data(), bits, sizeof bits), 0);
}

TEST(Npy, ReadNamesThePath) {
  Result<Tensor> t = read_npy("/nonexistent/dir/x.npy");
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.status().code(), StatusCode::kInvalidInput);
  EXPECT_NE(t.status().message().find("/nonexistent/dir/x.npy"), std::string::npos);
}

// read_npy reads a file in steps (prelude, header, data) rather than whole; each
// step's failures read as parse_npy's do, and nothing past the data is read.
std::string read_error_of(const std::vector<uint8_t>& bytes) {
  const std::string path = (std::filesystem::temp_directory_path() / "sg_npy_read_error_test.npy").string();
  {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(bytes.data()), std::streamsize(bytes.size()));
  }
  Result<Tensor> t = read_npy(path);
  std::filesystem::remove(path);
  EXPECT_FALSE(t.ok());
  if (t.ok()) return "";
  EXPECT_EQ(t.status().code(), StatusCode::kInvalidInput);
  EXPECT_EQ(t.status().message().rfind(path, 0), 0u) << t.status().message();
  return t.status().message();
}

TEST(Npy, ReadFromFileRejectsWhatParseRejects) {
  const std::vector<uint8_t> good = npy_image(2, header_for("|b1", "(3,)"), 3, 7);
  const std::string path = (std::filesystem::temp_directory_path() / "sg_npy_read_good_test.npy").string();
  {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(good.data()), std::streamsize(good.size()));
  }
  Result<Tensor> t = read_npy(path);
  std::filesystem::remove(path);
  ASSERT_TRUE(t.ok()) << t.status().message();
  EXPECT_EQ(describe(*t), "bool[3]");
  EXPECT_EQ(format_values(*t, 3), "[True, True, True]");

  EXPECT_NE(read_error_of({}).find("bad magic"), std::string::npos);
  EXPECT_NE(read_error_of({0x93, 'N', 'U', 'M', 'P', 'Y', 1}).find("truncated .npy header"), std::string::npos);
  std::vector<uint8_t> img = npy_image(1, header_for("<f4", "(2, 3)"), 24);
  img.resize(20);
  EXPECT_NE(read_error_of(img).find("truncated .npy header"), std::string::npos);
  EXPECT_NE(read_error_of(npy_image(1, header_for("<f4", "(2, 3)"), 20)).find("truncated .npy data"),
            std::string::npos);
  EXPECT_NE(read_error_of(npy_image(1, header_for("<f4", "(2,)"), 12)).find("unexpected bytes"),
            std::string::npos);
  EXPECT_NE(read_error_of(npy_image(1, header_for(">f4", "(2,)"), 8)).find("big-endian"), std::string::npos);
  EXPECT_NE(read_error_of(npy_image(1, header_for("<f4", "(2, 2)", "True"), 16)).find("Fortran"),
            std::string::npos);
  // A header that announces a terabyte over 16 bytes of data is refused as truncated,
  // without trying to allocate the tensor.
  EXPECT_NE(read_error_of(npy_image(1, header_for("<f4", "(262144, 1048576)"), 16)).find("truncated .npy data"),
            std::string::npos);
}

TEST(Npy, ReadStopsAtWhatTheHeaderAnnounces) {
  // A device that never ends: reading it whole would never return.
  if (!std::filesystem::exists("/dev/zero")) GTEST_SKIP() << "no /dev/zero";
  Result<Tensor> t = read_npy("/dev/zero");
  ASSERT_FALSE(t.ok());
  EXPECT_NE(t.status().message().find("bad magic"), std::string::npos) << t.status().message();
}

TEST(Npy, FormatValues) {
  Tensor f = make_tensor(DType::kF32, {5});
  const float v[5] = {0.12345f, -1.5f, 2.0f, 3.0f, 4.0f};
  std::memcpy(f.data(), v, sizeof v);
  EXPECT_EQ(format_values(f, 3), "[0.1235, -1.5, 2, ...]");
  EXPECT_EQ(format_values(f, 10), "[0.1235, -1.5, 2, 3, 4]");
  Tensor i = make_tensor(DType::kI64, {});
  i.data_as<int64_t>()[0] = -7;
  EXPECT_EQ(format_values(i, 4), "-7");
  Tensor b = make_tensor(DType::kBool, {2});
  b.data_as<uint8_t>()[1] = 1;
  EXPECT_EQ(format_values(b, 4), "[False, True]");
  EXPECT_EQ(format_values(make_tensor(DType::kI32, {0}), 4), "[]");
  EXPECT_EQ(describe(i), "i64[]");
}

}  // namespace
}  // namespace sg::tools
