// The fixed header at the start of every .sgraph file (SPEC.md §10).
//
//   offset  size  field
//   0       8     magic "SGRAPH\0\1"
//   8       2     format major version (little-endian)
//   10      2     format minor version
//   12      4     flags (0)
//   16      8     table offset (from file start; 64-byte aligned)
//   24      8     table size in bytes
//   32      8     data segment offset (64-byte aligned)
//   40      8     data segment size in bytes (includes >= 64 bytes of padding)
//   48      4     CRC-32 of the table bytes
//   52      4     CRC-32 of the data segment bytes (0 when flag 1 is set)
//   56      8     XXH3-64 of the data segment bytes (flag 1; else reserved, 0)
//
// Flags: bit 0 (kFlagDataXxh3, format 1.1): the data segment's checksum is the
// XXH3-64 at offset 56, which runs at memory speed, so that the runtime checks it
// on every load; files of format 1.0 (flags 0) carry the CRC-32 at offset 52 and
// still load, checked at CRC-32's speed. Bit 1 (kFlagQuantizedWeights, format
// 1.2): some constants are stored quantized or in half precision (Graph.quantized,
// SPEC.md §13); a runtime without that feature refuses the file before parsing
// it. Other bits are refused by the reader.
//
// The header is read and checked before the table is parsed, so a foreign or newer
// file is refused first. Shared by the compiler (writer) and runtime (reader);
// header-only and dependency-free.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

// XXH3 from libxxhash (Debian's libxxhash-dev), inlined: nothing to link.
#ifndef XXH_INLINE_ALL
#define XXH_INLINE_ALL
#endif
#include <xxhash.h>

namespace sg::format {

inline constexpr char kMagic[8] = {'S', 'G', 'R', 'A', 'P', 'H', '\0', '\1'};
inline constexpr uint16_t kMajorVersion = 1;
inline constexpr uint16_t kMinorVersion = 2;
// The minor version a file without quantized weights is written with, so that the
// runtimes of format 1.1 still load it.
inline constexpr uint16_t kMinorVersionWithoutQuantization = 1;
inline constexpr uint32_t kFlagDataXxh3 = 1u << 0;
inline constexpr uint32_t kFlagQuantizedWeights = 1u << 1;
inline constexpr uint32_t kKnownFlags = kFlagDataXxh3 | kFlagQuantizedWeights;

// The feature each header flag bit stands for, for messages ("" past the known ones).
inline const char* flag_feature(int bit) {
  switch (bit) {
    case 0: return "XXH3-64 data checksum";
    case 1: return "quantized weights (int8/int4/bf16/f16)";
    default: return "";
  }
}
inline constexpr size_t kHeaderSize = 64;
inline constexpr size_t kAlignment = 64;
inline constexpr size_t kDataTailPadding = 64;

struct Header {
  uint16_t major = kMajorVersion;
  uint16_t minor = kMinorVersion;
  uint32_t flags = 0;
  uint64_t table_offset = 0;
  uint64_t table_size = 0;
  uint64_t data_offset = 0;
  uint64_t data_size = 0;
  uint32_t table_crc = 0;
  uint32_t data_crc = 0;
  uint64_t data_xxh3 = 0;  // with kFlagDataXxh3
};

namespace detail {
inline void put16(uint8_t* p, uint16_t v) { for (int i = 0; i < 2; ++i) p[i] = uint8_t(v >> (8 * i)); }
inline void put32(uint8_t* p, uint32_t v) { for (int i = 0; i < 4; ++i) p[i] = uint8_t(v >> (8 * i)); }
inline void put64(uint8_t* p, uint64_t v) { for (int i = 0; i < 8; ++i) p[i] = uint8_t(v >> (8 * i)); }
inline uint16_t get16(const uint8_t* p) { return uint16_t(p[0] | (p[1] << 8)); }
inline uint32_t get32(const uint8_t* p) {
  uint32_t v = 0;
  for (int i = 3; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}
inline uint64_t get64(const uint8_t* p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}
}  // namespace detail

inline void encode_header(const Header& h, uint8_t out[kHeaderSize]) {
  std::memset(out, 0, kHeaderSize);
  std::memcpy(out, kMagic, 8);
  detail::put16(out + 8, h.major);
  detail::put16(out + 10, h.minor);
  detail::put32(out + 12, h.flags);
  detail::put64(out + 16, h.table_offset);
  detail::put64(out + 24, h.table_size);
  detail::put64(out + 32, h.data_offset);
  detail::put64(out + 40, h.data_size);
  detail::put32(out + 48, h.table_crc);
  detail::put32(out + 52, h.data_crc);
  detail::put64(out + 56, h.data_xxh3);
}

// Decodes the fields; returns false when the magic does not match. Range and
// version checks are the reader's job (it knows the file size).
inline bool decode_header(const uint8_t* in, size_t size, Header* h) {
  if (size < kHeaderSize || std::memcmp(in, kMagic, 8) != 0) return false;
  h->major = detail::get16(in + 8);
  h->minor = detail::get16(in + 10);
  h->flags = detail::get32(in + 12);
  h->table_offset = detail::get64(in + 16);
  h->table_size = detail::get64(in + 24);
  h->data_offset = detail::get64(in + 32);
  h->data_size = detail::get64(in + 40);
  h->table_crc = detail::get32(in + 48);
  h->data_crc = detail::get32(in + 52);
  h->data_xxh3 = detail::get64(in + 56);
  return true;
}

// CRC-32 (IEEE 802.3, reflected, as zlib's crc32), slicing-by-1 over a table built
// at compile time (about 280 MB/s): the table's checksum, and the data segment's
// in format 1.0 files.
namespace detail {
struct Crc32Table {
  uint32_t t[256];
  constexpr Crc32Table() : t() {
    for (uint32_t i = 0; i < 256; ++i) {
      uint32_t c = i;
      for (int k = 0; k < 8; ++k) c = (c & 1) ? 0xEDB88320u ^ (c >> 1) : c >> 1;
      t[i] = c;
    }
  }
};
inline constexpr Crc32Table kCrc32Table{};
}  // namespace detail

inline uint32_t crc32(const void* data, size_t size, uint32_t crc = 0) {
  const auto* p = static_cast<const uint8_t*>(data);
  crc = ~crc;
  for (size_t i = 0; i < size; ++i) crc = detail::kCrc32Table.t[(crc ^ p[i]) & 0xFF] ^ (crc >> 8);
  return ~crc;
}

// XXH3-64 (seed 0), the data segment's checksum in format 1.1: tens of GB/s with
// SSE2 (x86-64's baseline) or NEON (aarch64).
inline uint64_t xxh3_64(const void* data, size_t size) { return XXH3_64bits(data, size); }

inline constexpr uint64_t align_up(uint64_t v, uint64_t a = kAlignment) { return (v + a - 1) / a * a; }

}  // namespace sg::format
