#include "frame_stack.h"

#include <string>

namespace sg::runtime {
namespace {

size_t align_up(size_t n) { return (n + kTensorAlignment - 1) / kTensorAlignment * kTensorAlignment; }

}  // namespace

FrameStack::~FrameStack() {
  for (const Chunk& c : chunks_) host_->deallocate(c.data, c.size, kTensorAlignment);
}

Result<uint8_t*> FrameStack::push(size_t bytes) {
  const size_t need = align_up(bytes) + align_up(kTensorPadding);
  if (bytes == 0) return static_cast<uint8_t*>(nullptr);
  // Later chunks are tried in order: after a pop they are empty again.
  for (size_t c = chunks_.empty() ? 0 : current_; c < chunks_.size(); ++c) {
    Chunk& chunk = chunks_[c];
    if (c != current_) chunk.used = 0;
    if (chunk.size - chunk.used >= need) {
      current_ = c;
      uint8_t* p = chunk.data + chunk.used;
      chunk.used += align_up(bytes);  // the padding may overlap the next frame: it is only read
      return p;
    }
  }
  size_t size = chunks_.empty() ? kMinChunk : chunks_.back().size * 2;
  if (size < need) size = align_up(need);
  if (chunks_.size() == chunks_.capacity()) chunks_.reserve(chunks_.size() * 2 + 4);
  void* data = host_->allocate(size, kTensorAlignment);
  if (data == nullptr) return out_of_memory("cannot allocate " + std::to_string(size) + " bytes of frame stack");
  chunks_.push_back({static_cast<uint8_t*>(data), size, align_up(bytes)});
  current_ = chunks_.size() - 1;
  return chunks_.back().data;
}

void FrameStack::pop(Mark m) {
  if (chunks_.empty()) return;
  current_ = m.chunk;
  chunks_[current_].used = m.used;
}

size_t FrameStack::reserved_bytes() const {
  size_t n = 0;
  for (const Chunk& c : chunks_) n += c.size;
  return n;
}

}  // namespace sg::runtime
