// The default host allocator: mimalloc's aligned API when the runtime is built with
// it (SG_WITH_MIMALLOC), else aligned operator new. Its one field is set at
// construction, so one shared instance serves every Session and thread.
#include <unistd.h>

#include <cstdint>
#include <new>

#include "stagegraph/tensor.h"

#ifdef SG_WITH_MIMALLOC
#include <mimalloc.h>
#endif

namespace sg {
namespace {

// Physical memory: a request above it fails here (an out-of-memory Status) instead
// of being granted by overcommit and killing the process when it is touched.
size_t physical_memory() {
#if defined(_SC_PHYS_PAGES) && defined(_SC_PAGESIZE)
  const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  if (pages > 0 && page > 0 && uint64_t(pages) <= SIZE_MAX / uint64_t(page)) return size_t(pages) * size_t(page);
#endif
  return SIZE_MAX;
}

class DefaultAllocator final : public Allocator {
 public:
  void* allocate(size_t bytes, size_t alignment) override {
    if (bytes > limit_) return nullptr;
#ifdef SG_WITH_MIMALLOC
    return mi_malloc_aligned(bytes, alignment);
#else
    return ::operator new(bytes, std::align_val_t(alignment), std::nothrow);
#endif
  }
  void deallocate(void* p, size_t bytes, size_t alignment) override {
    (void)bytes;
#ifdef SG_WITH_MIMALLOC
    (void)alignment;
    mi_free(p);
#else
    ::operator delete(p, std::align_val_t(alignment));
#endif
  }

 private:
  const size_t limit_ = physical_memory();
};

}  // namespace

Allocator* default_allocator() {
  // Immutable after construction: a function-local instance is shared safely
  // between threads.
  static DefaultAllocator allocator;
  return &allocator;
}

}  // namespace sg
