// XXH3-64 for the data segment's checksum (checksum.h). This file is compiled
// with -O3, which xxhash.h asks of GCC for its SSE2 and NEON paths (about twice
// -O2's speed); x86-64 CPUs with AVX2 take checksum_avx2.cc's build instead.
#include "checksum.h"

#ifndef XXH_INLINE_ALL
#define XXH_INLINE_ALL
#endif
#include <xxhash.h>

namespace sg::runtime {

uint64_t detail::data_xxh3_baseline(const void* data, size_t size) { return XXH3_64bits(data, size); }

uint64_t data_xxh3(const void* data, size_t size) {
#if SG_CHECKSUM_AVX2
  if (__builtin_cpu_supports("avx2")) return detail::data_xxh3_avx2(data, size);
#endif
  return detail::data_xxh3_baseline(data, size);
}

}  // namespace sg::runtime
