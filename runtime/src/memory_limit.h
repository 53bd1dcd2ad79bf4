// MemoryLimit: the allocator a Session's executor allocates through when the
// Session has a memory limit (SessionOptions::memory_limit_bytes). It counts the
// bytes held (arenas' frame stack chunks, the buffer cache's blocks, kernel
// scratch) and refuses a request that would pass the limit, which the executor
// reports like exhausted memory, at the node that asked; the Session then turns
// that report into kLimitExceeded.
//
// Single-threaded like the executor that uses it.
#pragma once

#include <cstddef>

#include "stagegraph/tensor.h"

namespace sg::runtime {

class MemoryLimit final : public Allocator {
 public:
  MemoryLimit(Allocator* host, size_t limit) : host_(host), limit_(limit) {}

  void* allocate(size_t bytes, size_t alignment) override {
    if (bytes > limit_ || held_ > limit_ - bytes) {
      refused_ = bytes;
      return nullptr;
    }
    void* p = host_->allocate(bytes, alignment);
    if (p != nullptr) {
      held_ += bytes;
      refused_ = 0;  // a retry that fit (after the cache let go of its blocks)
    }
    return p;
  }
  void deallocate(void* p, size_t bytes, size_t alignment) override {
    held_ -= bytes;
    host_->deallocate(p, bytes, alignment);
  }

  size_t limit() const { return limit_; }
  size_t held() const { return held_; }
  // The request refused last, when no allocation succeeded since (0: none).
  size_t refused() const { return refused_; }
  void clear_refused() { refused_ = 0; }

 private:
  Allocator* host_;
  size_t limit_;
  size_t held_ = 0;
  size_t refused_ = 0;
};

}  // namespace sg::runtime
