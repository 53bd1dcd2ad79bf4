// The default host allocator: mimalloc's aligned API when the runtime is built with
// it (SG_WITH_MIMALLOC) and the library is there, else aligned operator new. Its
// fields are set at construction, so one shared instance serves every Session and
// thread.
//
// mimalloc is loaded at run time, by its SONAME (SG_MIMALLOC_SONAME), with
// RTLD_LOCAL, and called through mi_malloc_aligned and mi_free only. Debian's
// libmimalloc.so also defines malloc, free and operator new/delete: as a DT_NEEDED
// entry of libstagegraph.so it would join the process's global symbol scope, and a
// host that does not link libstdc++ itself (a C program, a JVM) would get mimalloc's
// operator new, as would every C++ plugin it loads later. Loaded locally, its
// symbols stay out of that scope: the host keeps its own allocator, and the runtime
// has mimalloc for its tensors (tests/install/c_host.c checks both).
#include <unistd.h>

#include <cstdint>
#include <new>

#include "stagegraph/tensor.h"

#ifdef SG_MIMALLOC_SONAME
#include <dlfcn.h>
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

// mimalloc's two entry points the allocator calls; null without the library.
struct Mimalloc {
#ifdef SG_MIMALLOC_SONAME
  decltype(&mi_malloc_aligned) malloc_aligned = nullptr;
  decltype(&mi_free) free = nullptr;
#else
  void* (*malloc_aligned)(size_t, size_t) = nullptr;
  void (*free)(void*) = nullptr;
#endif
};

Mimalloc load_mimalloc() {
  Mimalloc m;
#ifdef SG_MIMALLOC_SONAME
  // Never closed: blocks it served may be released as long as the process runs.
  void* library = dlopen(SG_MIMALLOC_SONAME, RTLD_NOW | RTLD_LOCAL);
  if (library == nullptr) return m;
  m.malloc_aligned = reinterpret_cast<decltype(&mi_malloc_aligned)>(dlsym(library, "mi_malloc_aligned"));
  m.free = reinterpret_cast<decltype(&mi_free)>(dlsym(library, "mi_free"));
  if (m.malloc_aligned == nullptr || m.free == nullptr) m = Mimalloc();
#endif
  return m;
}

class DefaultAllocator final : public Allocator {
 public:
  void* allocate(size_t bytes, size_t alignment) override {
    if (bytes > limit_) return nullptr;
    if (mimalloc_.malloc_aligned != nullptr) return mimalloc_.malloc_aligned(bytes, alignment);
    return ::operator new(bytes, std::align_val_t(alignment), std::nothrow);
  }
  void deallocate(void* p, size_t bytes, size_t alignment) override {
    (void)bytes;
    if (mimalloc_.free != nullptr)
      mimalloc_.free(p);
    else
      ::operator delete(p, std::align_val_t(alignment));
  }

 private:
  const size_t limit_ = physical_memory();
  const Mimalloc mimalloc_ = load_mimalloc();
};

}  // namespace

Allocator* default_allocator() {
  // Immutable after construction: a function-local instance is shared safely
  // between threads.
  static DefaultAllocator allocator;
  return &allocator;
}

}  // namespace sg
