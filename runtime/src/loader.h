// The first gate of loading: the fixed header, the checksums and the FlatBuffers
// verifier (SPEC.md §10). Semantic checks follow in verifier.h.
#pragma once

#include <cstdint>
#include <span>

#include "sgraph_header.h"
#include "stagegraph/runtime.h"
#include "stagegraph/status.h"
#include "stagegraph_generated.h"

namespace sg::runtime {

struct CheckedFile {
  format::Header header;
  const fb::Graph* graph = nullptr;        // points into the file's bytes
  std::span<const uint8_t> data_segment;   // constants, 64-byte aligned offsets
};

// Checks in order: size, magic, major version, flags, table and data ranges, table
// CRC, data checksum (when options.verify_data, the default), FlatBuffers structure. `bytes` must be
// 64-byte aligned and outlive the result.
Result<CheckedFile> check_file(std::span<const uint8_t> bytes, const LoadOptions& options);

// The data segment's checksum against the one header `h` stores: XXH3-64 when
// h.flags has kFlagDataXxh3, else (format 1.0) CRC-32. kInvalidGraph on a
// mismatch. check_file's data check (LoadOptions::verify_data).
Status check_data_checksum(std::span<const uint8_t> data_segment, const format::Header& h);

}  // namespace sg::runtime
