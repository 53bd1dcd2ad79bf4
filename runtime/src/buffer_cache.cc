#include "buffer_cache.h"

namespace sg::runtime {

BufferCache::BufferCache(Allocator* host) : host_(host) { free_.reserve(kMaxBlocks); }

BufferCache::~BufferCache() {
  for (const Block& b : free_) host_->deallocate(b.p, b.bytes, b.alignment);
}

void* BufferCache::allocate(size_t bytes, size_t alignment) {
  // Newest first: the block freed last is the one most likely still in cache.
  for (size_t i = free_.size(); i-- > 0;) {
    const Block b = free_[i];
    if (b.bytes != bytes || b.alignment != alignment) continue;
    free_.erase(free_.begin() + long(i));
    cached_bytes_ -= b.bytes;
    return b.p;
  }
  void* p = host_->allocate(bytes, alignment);
  if (p == nullptr && !free_.empty()) {
    // The host refused (exhausted, or the Session's memory limit): what is kept
    // here for reuse goes back first.
    while (!free_.empty()) evict_oldest();
    p = host_->allocate(bytes, alignment);
  }
  return p;
}

void BufferCache::deallocate(void* p, size_t bytes, size_t alignment) {
  if (bytes > kMaxCachedBytes) {
    host_->deallocate(p, bytes, alignment);
    return;
  }
  while (free_.size() >= kMaxBlocks || cached_bytes_ + bytes > kMaxCachedBytes) evict_oldest();
  free_.push_back({p, bytes, alignment});
  cached_bytes_ += bytes;
}

void BufferCache::evict_oldest() {
  const Block b = free_.front();
  free_.erase(free_.begin());
  cached_bytes_ -= b.bytes;
  host_->deallocate(b.p, b.bytes, b.alignment);
}

}  // namespace sg::runtime
