// FrameStack: the memory of the active frames' arenas. Frames are pushed and popped
// in LIFO order, so each arena is a bump allocation; the stack grows by chunks that
// never move (a pointer into a frame's arena stays valid while the frame lives) and
// are kept for later runs, so a warm Session allocates nothing here.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "stagegraph/status.h"
#include "stagegraph/tensor.h"

namespace sg::runtime {

class FrameStack {
 public:
  struct Mark {
    size_t chunk = 0;
    size_t used = 0;
  };

  explicit FrameStack(Allocator* host) : host_(host) {}
  ~FrameStack();
  FrameStack(const FrameStack&) = delete;
  FrameStack& operator=(const FrameStack&) = delete;

  Mark mark() const { return {current_, chunks_.empty() ? 0 : chunks_[current_].used}; }
  // `bytes` aligned to kTensorAlignment, with kTensorPadding readable bytes after.
  Result<uint8_t*> push(size_t bytes);
  // Releases everything pushed since `m`.
  void pop(Mark m);
  // Bytes reserved in chunks (the frame stack's footprint).
  size_t reserved_bytes() const;

 private:
  struct Chunk {
    uint8_t* data;
    size_t size;
    size_t used;
  };
  static constexpr size_t kMinChunk = size_t(64) << 10;

  Allocator* host_;
  std::vector<Chunk> chunks_;
  size_t current_ = 0;
};

}  // namespace sg::runtime
