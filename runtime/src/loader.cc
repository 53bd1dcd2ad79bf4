#include "loader.h"

#include "checksum.h"

#include <algorithm>
#include <cstring>
#include <string>

namespace sg::runtime {
namespace {

std::string version_string(uint16_t major, uint16_t minor) {
  return std::to_string(major) + "." + std::to_string(minor);
}

// A file whose magic is ours but for its last byte, the format generation (1 in
// "SGRAPH\0\1"): a Stagegraph file of another generation, refused naming both
// versions (SPEC.md §10), with the major.minor its header gives. `bytes` holds a
// whole header.
Status other_generation(std::span<const uint8_t> bytes) {
  const unsigned generation = bytes[7];
  const std::string theirs = version_string(uint16_t(bytes[8] | bytes[9] << 8), uint16_t(bytes[10] | bytes[11] << 8)) +
                             " (magic generation " + std::to_string(generation) + ")";
  const std::string ours = version_string(format::kMajorVersion, format::kMinorVersion) + " (magic generation " +
                           std::to_string(unsigned(format::kMagic[7])) + ")";
  return invalid_graph("graph file format " + theirs + " is " +
                       (generation > unsigned(format::kMagic[7]) ? "newer than" : "older than") +
                       " this runtime's " + ours);
}

// Checks that [offset, offset+size) lies within a file of `file_size` bytes.
bool in_file(uint64_t offset, uint64_t size, uint64_t file_size) {
  return offset <= file_size && size <= file_size - offset;
}

Status check_ranges(const format::Header& h, uint64_t file_size) {
  if (h.table_offset < format::kHeaderSize || h.table_offset % format::kAlignment != 0)
    return invalid_graph("corrupt graph file: table offset " + std::to_string(h.table_offset) +
                         " is not a 64-byte aligned position after the header");
  if (!in_file(h.table_offset, h.table_size, file_size))
    return invalid_graph("corrupt graph file: the table (offset " + std::to_string(h.table_offset) +
                         ", " + std::to_string(h.table_size) + " bytes) extends past the end of the " +
                         std::to_string(file_size) + "-byte file (truncated?)");
  if (h.table_size < 8 || h.table_size >= (uint64_t(1) << 31))
    return invalid_graph("corrupt graph file: implausible table size " + std::to_string(h.table_size));
  if (h.data_offset % format::kAlignment != 0)
    return invalid_graph("corrupt graph file: data segment offset " + std::to_string(h.data_offset) +
                         " is not 64-byte aligned");
  if (!in_file(h.data_offset, h.data_size, file_size))
    return invalid_graph("corrupt graph file: the data segment (offset " +
                         std::to_string(h.data_offset) + ", " + std::to_string(h.data_size) +
                         " bytes) extends past the end of the " + std::to_string(file_size) +
                         "-byte file (truncated?)");
  if (h.data_size > 0 && h.data_offset < h.table_offset + h.table_size &&
      h.table_offset < h.data_offset + h.data_size)
    return invalid_graph("corrupt graph file: the table and the data segment overlap");
  // A file ends where its table or data segment does (the data segment's padding
  // included). Bytes after that are covered by no checksum, so they are refused
  // rather than carried along unseen; a graph stored inside a bigger file (an
  // APK) is loaded by its range.
  const uint64_t end = std::max(h.table_offset + h.table_size, h.data_offset + h.data_size);
  if (file_size > end)
    return invalid_graph("corrupt graph file: " + std::to_string(file_size - end) + " bytes follow its end at byte " +
                         std::to_string(end) + " (appended to, or concatenated?); a graph inside a bigger file is "
                         "loaded by its offset and length (sg_program_load_fd, Program::load_fd)");
  return Status::Ok();
}

}  // namespace

Status check_data_checksum(std::span<const uint8_t> data_segment, const format::Header& h) {
  if (h.flags & format::kFlagDataXxh3) {
    const uint64_t computed = data_xxh3(data_segment.data(), data_segment.size());
    if (computed != h.data_xxh3)
      return invalid_graph("corrupt graph file: data segment checksum mismatch (XXH3-64 stored " +
                           std::to_string(h.data_xxh3) + ", computed " + std::to_string(computed) +
                           "); the file was changed or damaged after it was compiled");
    return Status::Ok();
  }
  // Format 1.0: CRC-32.
  const uint32_t data_crc = format::crc32(data_segment.data(), data_segment.size());
  if (data_crc != h.data_crc)
    return invalid_graph("corrupt graph file: data segment checksum mismatch (CRC-32 stored " +
                         std::to_string(h.data_crc) + ", computed " + std::to_string(data_crc) + ")");
  return Status::Ok();
}

Result<CheckedFile> check_file(std::span<const uint8_t> bytes, const LoadOptions& options) {
  if (bytes.size() < format::kHeaderSize)
    return invalid_graph("not a Stagegraph graph file: " + std::to_string(bytes.size()) +
                         " bytes is shorter than the " + std::to_string(format::kHeaderSize) +
                         "-byte header");
  CheckedFile out;
  if (!format::decode_header(bytes.data(), bytes.size(), &out.header)) {
    if (std::memcmp(bytes.data(), format::kMagic, 7) == 0) return other_generation(bytes);
    return invalid_graph("not a Stagegraph graph file (bad magic)");
  }
  const format::Header& h = out.header;
  if (h.major > format::kMajorVersion)
    return invalid_graph("graph file format " + version_string(h.major, h.minor) +
                         " is newer than this runtime's " +
                         version_string(format::kMajorVersion, format::kMinorVersion));
  if (h.major < format::kMajorVersion)
    return invalid_graph("graph file format " + version_string(h.major, h.minor) +
                         " is older than this runtime supports (" +
                         version_string(format::kMajorVersion, format::kMinorVersion) + ")");
  if (h.flags & ~format::kKnownFlags)
    return invalid_graph("graph file format " + version_string(h.major, h.minor) + " sets header flag bits " +
                         std::to_string(h.flags & ~format::kKnownFlags) + " that this runtime does not know (a newer compiler wrote it?)");
  if ((h.flags & format::kFlagQuantizedWeights) != 0 && h.minor < 2)
    return invalid_graph(std::string("graph file format ") + version_string(h.major, h.minor) + " sets the flag of " +
                         format::flag_feature(1) + ", which needs format 1.2");
  SG_RETURN_IF_ERROR(check_ranges(h, bytes.size()));

  const uint8_t* table = bytes.data() + h.table_offset;
  const uint32_t table_crc = format::crc32(table, size_t(h.table_size));
  if (table_crc != h.table_crc)
    return invalid_graph("corrupt graph file: table checksum mismatch (stored " +
                         std::to_string(h.table_crc) + ", computed " + std::to_string(table_crc) + ")");
  out.data_segment = bytes.subspan(size_t(h.data_offset), size_t(h.data_size));
  if (options.verify_data) SG_RETURN_IF_ERROR(check_data_checksum(out.data_segment, h));

  // Bounds the verifier's work on hostile input while admitting any real graph
  // (each table is at least a few bytes).
  const size_t max_tables = std::max<size_t>(1000000, size_t(h.table_size) / 4);
  flatbuffers::Verifier verifier(table, size_t(h.table_size), /*max_depth=*/64, max_tables);
  if (!fb::VerifyGraphBuffer(verifier))
    return invalid_graph("corrupt graph file: the table fails FlatBuffers verification "
                         "(bad identifier, offsets or lengths)");
  out.graph = fb::GetGraph(table);
  return out;
}

}  // namespace sg::runtime
