// The bytes of a graph file and who keeps them alive: a read-only memory map of the
// file, a 64-byte aligned copy, or memory borrowed from the caller.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

#include "stagegraph/status.h"

namespace sg::runtime {

class MappedBytes {
 public:
  MappedBytes() = default;
  MappedBytes(const MappedBytes&) = delete;
  MappedBytes& operator=(const MappedBytes&) = delete;
  MappedBytes(MappedBytes&& o) noexcept;
  MappedBytes& operator=(MappedBytes&& o) noexcept;
  ~MappedBytes();

  // Maps the whole file read-only; the descriptor is closed before returning.
  static Result<MappedBytes> map_file(const std::string& path);
  // Uses `bytes` in place when 64-byte aligned (borrowed), else copies them once.
  static Result<MappedBytes> from_memory(std::span<const uint8_t> bytes);
  // Always copies (aligned, padded).
  static Result<MappedBytes> copy_of(std::span<const uint8_t> bytes);
  // Maps `length` bytes at `offset` of the open file `fd` (0: to its end); the
  // descriptor stays open. An offset that is not a multiple of 64 is copied.
  static Result<MappedBytes> map_range(int fd, uint64_t offset, uint64_t length);

  const uint8_t* data() const { return data_; }
  size_t size() const { return size_; }
  std::span<const uint8_t> span() const { return {data_, size_}; }
  bool contains(const void* p) const {
    auto* b = static_cast<const uint8_t*>(p);
    return data_ != nullptr && b >= data_ && b < data_ + size_;
  }

 private:
  enum class Kind : uint8_t { kNone, kMapped, kOwnedCopy, kBorrowed };
  void reset();
  Kind kind_ = Kind::kNone;
  const uint8_t* data_ = nullptr;
  size_t size_ = 0;
  // kMapped: the mapping, which starts at a page boundary at or before data_.
  const uint8_t* map_base_ = nullptr;
  size_t map_size_ = 0;
};

}  // namespace sg::runtime
