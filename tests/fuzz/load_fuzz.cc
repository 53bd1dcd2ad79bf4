// libFuzzer target: arbitrary bytes through Program::load_memory (header, checksums,
// FlatBuffers verifier, semantic checks, decoding). A graph that loads gets a
// Session for each entry point; nothing runs, since a valid graph may loop forever.
// The checksums make random inputs fail early, so the fuzzer also gets a variant
// of each input with them repaired (when the header parses).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <span>
#include <vector>

#include "sgraph_header.h"
#include "stagegraph/runtime.h"

namespace {

void load_and_open(std::span<const uint8_t> bytes) {
  auto program = sg::Program::load_memory(bytes);
  if (!program.ok()) {
    if (program.status().code() != sg::StatusCode::kInvalidGraph &&
        program.status().code() != sg::StatusCode::kOutOfMemory)
      std::abort();  // load failures must be reported as an invalid graph
    return;
  }
  for (const sg::EntryInfo& entry : (*program)->entries()) {
    auto session = sg::Session::create(*program, entry.name);
    if (!session.ok()) std::abort();  // every verified entry can be opened
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  load_and_open(std::span<const uint8_t>(data, size));

  sg::format::Header h;
  if (sg::format::decode_header(data, size, &h) && h.table_offset <= size && h.table_size <= size - h.table_offset) {
    std::vector<uint8_t> fixed(data, data + size);
    h.table_crc = sg::format::crc32(fixed.data() + h.table_offset, size_t(h.table_size));
    if (h.data_offset <= size && h.data_size <= size - h.data_offset) {
      h.data_crc = sg::format::crc32(fixed.data() + h.data_offset, size_t(h.data_size));
      h.data_xxh3 = sg::format::xxh3_64(fixed.data() + h.data_offset, size_t(h.data_size));
    }
    sg::format::encode_header(h, fixed.data());
    load_and_open(fixed);
  }
  return 0;
}
