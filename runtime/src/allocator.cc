// The default host allocator: mimalloc's aligned API when the runtime is built with
// it (SG_WITH_MIMALLOC), else aligned operator new. Stateless, so one shared
// instance serves every Session and thread.
#include <new>

#include "stagegraph/tensor.h"

#ifdef SG_WITH_MIMALLOC
#include <mimalloc.h>
#endif

namespace sg {
namespace {

class DefaultAllocator final : public Allocator {
 public:
  void* allocate(size_t bytes, size_t alignment) override {
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
};

}  // namespace

Allocator* default_allocator() {
  // No state: a function-local instance is shared safely between threads.
  static DefaultAllocator allocator;
  return &allocator;
}

}  // namespace sg
