// BufferCache: the allocator behind a Session's own tensors (values that escape a
// frame: function results, loop-carried values, values of shapes known only while
// running). Freed blocks are kept and handed back for the next request of the same
// size, so a loop that frees a carried value and allocates its successor every
// iteration reaches a steady state without calling the host allocator.
//
// Single-threaded by design: only the Session's executor allocates and frees through
// it, and tensors it backs never reach the caller (entry results are copied out).
#pragma once

#include <cstddef>
#include <vector>

#include "stagegraph/tensor.h"

namespace sg::runtime {

class BufferCache final : public Allocator {
 public:
  explicit BufferCache(Allocator* host);
  ~BufferCache() override;
  BufferCache(const BufferCache&) = delete;
  BufferCache& operator=(const BufferCache&) = delete;

  void* allocate(size_t bytes, size_t alignment) override;
  void deallocate(void* p, size_t bytes, size_t alignment) override;

  // Where the blocks come from and go: a block of this cache may be freed there
  // directly, and one of the host's handed here.
  Allocator* host() const { return host_; }

  // Bytes held in free blocks right now.
  size_t cached_bytes() const { return cached_bytes_; }

 private:
  struct Block {
    void* p;
    size_t bytes;
    size_t alignment;
  };
  // Bounds on what is kept, so shapes that change every iteration cannot hoard memory.
  static constexpr size_t kMaxBlocks = 64;
  static constexpr size_t kMaxCachedBytes = size_t(256) << 20;

  void evict_oldest();

  Allocator* host_;
  std::vector<Block> free_;  // oldest first; capacity reserved up front
  size_t cached_bytes_ = 0;
};

}  // namespace sg::runtime
