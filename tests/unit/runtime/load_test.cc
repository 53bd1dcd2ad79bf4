// The loader's first gate: header, ranges, checksums, FlatBuffers verification,
// and the in-place / copy / mmap ways of getting the bytes.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <string>

#include "program_impl.h"
#include "test_graphs.h"
#include "test_util.h"

namespace sg::testing {
namespace {

std::string load_error(std::span<const uint8_t> bytes, const LoadOptions& options = {}) {
  auto p = load_owned(bytes, options);
  if (p.ok()) return "(loaded)";
  EXPECT_EQ(p.status().code(), StatusCode::kInvalidGraph) << p.status().message();
  return p.status().message();
}

void rewrite_header(std::vector<uint8_t>& file, void (*edit)(format::Header&)) {
  format::Header h;
  ASSERT_TRUE(format::decode_header(file.data(), file.size(), &h));
  edit(h);
  format::encode_header(h, file.data());
}

TEST(Load, ValidGraphLoads) {
  auto program = load_ok(affine_graph());
  ASSERT_NE(program, nullptr);
  EXPECT_EQ(program->format_major(), 1);
  EXPECT_EQ(program->format_minor(), format::kMinorVersion);
  ASSERT_EQ(program->entries().size(), 1u);
  const EntryInfo& e = program->entries()[0];
  EXPECT_EQ(e.name, "affine");
  ASSERT_EQ(e.inputs.size(), 1u);
  EXPECT_EQ(e.inputs[0].name, "x");
  EXPECT_EQ(e.inputs[0].shape_string(), "[N, 3]");
  EXPECT_EQ(e.inputs[0].shape, (std::vector<int64_t>{-1, 3}));
  EXPECT_EQ(program->constant_bytes(), 16u);
  EXPECT_NE(program->find_entry("affine"), nullptr);
  EXPECT_EQ(program->find_entry("nope"), nullptr);
}

TEST(Load, AlignedMemoryIsUsedInPlace) {
  const std::vector<uint8_t> bytes = build_sgraph(affine_graph());
  AlignedBytes aligned(bytes);
  auto program = Program::load_memory(aligned.span());
  ASSERT_TRUE(program.ok()) << program.status().message();
  EXPECT_TRUE(runtime::program_impl(**program).owns_pointer(aligned.span().data() + 100));
}

TEST(Load, FileIsMapped) {
  const std::vector<uint8_t> bytes = build_sgraph(affine_graph());
  const std::string path = ::testing::TempDir() + "/load_test_affine.sgraph";
  {
    std::ofstream out(path, std::ios::binary);
    out.write(reinterpret_cast<const char*>(bytes.data()), std::streamsize(bytes.size()));
  }
  auto program = Program::load_file(path);
  std::remove(path.c_str());  // the mapping outlives the directory entry
  ASSERT_TRUE(program.ok()) << program.status().message();
  EXPECT_EQ((*program)->entries()[0].name, "affine");
  auto missing = Program::load_file(path);
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("cannot open"), std::string::npos);
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
}

TEST(Load, RejectsForeignFiles) {
  std::vector<uint8_t> bytes = build_sgraph(affine_graph());
  bytes[0] = 'X';
  EXPECT_NE(load_error(bytes).find("not a Stagegraph graph file"), std::string::npos);
  const std::vector<uint8_t> text = {'h', 'e', 'l', 'l', 'o'};
  EXPECT_NE(load_error(text).find("not a Stagegraph graph file"), std::string::npos);
  EXPECT_NE(load_error({}).find("not a Stagegraph graph file"), std::string::npos);
}

TEST(Load, RefusesNewerMajorVersionNamingBoth) {
  GraphSpec g = affine_graph();
  g.major = 2;
  g.minor = 0;
  EXPECT_EQ(load_error(build_sgraph(g)), "graph file format 2.0 is newer than this runtime's 1.2");
  // A newer minor version of the same major is readable.
  g.major = 1;
  g.minor = 7;
  EXPECT_EQ(load_error(build_sgraph(g)), "(loaded)");
}

// A file whose magic says another format generation ("SGRAPH\0\2", the byte a
// writer of a new major format may bump) is refused naming both versions too,
// not as a foreign file.
TEST(Load, RefusesAnotherMagicGenerationNamingBothVersions) {
  GraphSpec g = affine_graph();
  g.major = 2;
  g.minor = 0;
  std::vector<uint8_t> bytes = build_sgraph(g);
  bytes[7] = 2;
  EXPECT_EQ(load_error(bytes), "graph file format 2.0 (magic generation 2) is newer than this runtime's 1.2 (magic "
                               "generation 1)");
  bytes[7] = 0;
  EXPECT_NE(load_error(bytes).find("is older than this runtime's 1.2"), std::string::npos) << load_error(bytes);
}

// A file ends where its data segment does: bytes after it are covered by no
// checksum and refused, however few.
TEST(Load, RefusesBytesAppendedAfterItsEnd) {
  std::vector<uint8_t> bytes = build_sgraph(affine_graph());
  const size_t size = bytes.size();
  for (const size_t extra : {size_t(1), size_t(64), size_t(4096)}) {
    bytes.resize(size + extra, 0x5a);
    const std::string error = load_error(bytes);
    EXPECT_NE(error.find(std::to_string(extra) + " bytes follow its end at byte " + std::to_string(size)),
              std::string::npos)
        << error;
  }
  bytes.resize(size);
  EXPECT_EQ(load_error(bytes), "(loaded)");
}

TEST(Load, RefusesEveryTruncation) {
  const std::vector<uint8_t> bytes = build_sgraph(affine_graph());
  for (size_t n = 0; n < bytes.size(); ++n) {
    auto p = load_owned(std::span<const uint8_t>(bytes).first(n));
    ASSERT_FALSE(p.ok()) << "truncated to " << n << " bytes";
    EXPECT_EQ(p.status().code(), StatusCode::kInvalidGraph);
  }
}

TEST(Load, RejectsBadRanges) {
  std::vector<uint8_t> bytes = build_sgraph(affine_graph());
  std::vector<uint8_t> b = bytes;
  rewrite_header(b, [](format::Header& h) { h.table_offset += 8; });
  EXPECT_NE(load_error(b).find("not a 64-byte aligned"), std::string::npos);
  b = bytes;
  rewrite_header(b, [](format::Header& h) { h.table_size = ~uint64_t(0) - 10; });
  EXPECT_NE(load_error(b).find("extends past the end"), std::string::npos);
  b = bytes;
  rewrite_header(b, [](format::Header& h) { h.data_offset += 1; });
  EXPECT_NE(load_error(b).find("data segment offset"), std::string::npos);
  b = bytes;
  rewrite_header(b, [](format::Header& h) { h.data_size = ~uint64_t(0); });
  EXPECT_NE(load_error(b).find("data segment"), std::string::npos);
  b = bytes;
  rewrite_header(b, [](format::Header& h) { h.data_offset = h.table_offset; });
  EXPECT_NE(load_error(b).find("overlap"), std::string::npos);
}

TEST(Load, TableChecksumIsAlwaysChecked) {
  std::vector<uint8_t> bytes = build_sgraph(affine_graph());
  format::Header h;
  ASSERT_TRUE(format::decode_header(bytes.data(), bytes.size(), &h));
  bytes[h.table_offset + h.table_size / 2] ^= 0x40;
  EXPECT_NE(load_error(bytes).find("table checksum mismatch"), std::string::npos);
}

// The file as format 1.1 writes it: the data checksum as XXH3-64 (flag 1).
std::vector<uint8_t> with_xxh3_checksum(std::vector<uint8_t> bytes) {
  format::Header h;
  EXPECT_TRUE(format::decode_header(bytes.data(), bytes.size(), &h));
  h.flags = format::kFlagDataXxh3;
  h.data_crc = 0;
  h.data_xxh3 = format::xxh3_64(bytes.data() + h.data_offset, h.data_size);
  format::encode_header(h, bytes.data());
  return bytes;
}

// A changed constant could turn a terminating loop into an endless one: the data
// segment is checked on every load unless the caller opts out. Files of format
// 1.0 (CRC-32, as graph_builder writes them) and 1.1 (XXH3-64) both.
TEST(Load, DataChecksumByDefault) {
  for (const bool xxh3 : {false, true}) {
    std::vector<uint8_t> bytes = build_sgraph(affine_graph());
    if (xxh3) bytes = with_xxh3_checksum(bytes);
    format::Header h;
    ASSERT_TRUE(format::decode_header(bytes.data(), bytes.size(), &h));
    EXPECT_EQ(load_error(bytes), "(loaded)");
    bytes[h.data_offset + 1] ^= 0x01;
    const std::string error = load_error(bytes);
    EXPECT_NE(error.find("data segment checksum mismatch"), std::string::npos) << error;
    EXPECT_NE(error.find(xxh3 ? "XXH3-64" : "CRC-32"), std::string::npos) << error;
    LoadOptions skip;
    skip.verify_data = false;
    EXPECT_EQ(load_error(bytes, skip), "(loaded)");
  }
}

TEST(Load, UnknownHeaderFlagsAreRefused) {
  std::vector<uint8_t> bytes = build_sgraph(affine_graph());
  format::Header h;
  ASSERT_TRUE(format::decode_header(bytes.data(), bytes.size(), &h));
  h.flags = 1u << 5;
  format::encode_header(h, bytes.data());
  EXPECT_NE(load_error(bytes).find("flag bits 32"), std::string::npos) << load_error(bytes);
}

// XXH3 reads at memory speed; the figure is measured in bench/, here only its
// agreement with the reference: the empty input's published value.
TEST(Load, Xxh3MatchesItsReferenceValue) {
  EXPECT_EQ(format::xxh3_64("", 0), 0x2D06800538D394C2ull);
}

// SPEC.md §10: the data check is made once, on load (LoadOptions::verify_data); a
// Program loaded without it runs what its bytes say.
TEST(Load, DataChecksumIsALoadOptionOnly) {
  std::vector<uint8_t> bytes = with_xxh3_checksum(build_sgraph(affine_graph()));
  format::Header h;
  ASSERT_TRUE(format::decode_header(bytes.data(), bytes.size(), &h));
  bytes[h.data_offset + 1] ^= 0x01;
  auto refused = load_owned(bytes);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), StatusCode::kInvalidGraph);
  LoadOptions skip;
  skip.verify_data = false;
  auto flipped = load_owned(bytes, skip);
  ASSERT_TRUE(flipped.ok()) << flipped.status().message();
  EXPECT_TRUE(Session::create(*flipped, "affine").ok());
}

TEST(Load, FlatBuffersVerifierRunsAfterTheChecksum) {
  std::vector<uint8_t> bytes = build_sgraph(affine_graph());
  format::Header h;
  ASSERT_TRUE(format::decode_header(bytes.data(), bytes.size(), &h));
  // The root offset points outside the table; the checksum is made to match.
  bytes[h.table_offset + 0] = 0xF0;
  bytes[h.table_offset + 1] = 0xFF;
  fix_table_crc(bytes);
  EXPECT_NE(load_error(bytes).find("FlatBuffers verification"), std::string::npos);
  // A wrong file identifier.
  bytes = build_sgraph(affine_graph());
  bytes[h.table_offset + 4] = 'X';
  fix_table_crc(bytes);
  EXPECT_NE(load_error(bytes).find("FlatBuffers verification"), std::string::npos);
}

}  // namespace
}  // namespace sg::testing
