// XXH3-64 compiled for AVX2 (runtime/CMakeLists.txt gives this file -mavx2 on
// x86-64, and defines SG_CHECKSUM_AVX2 there): data_xxh3 calls it only where
// the CPU has AVX2. XXH_INLINE_ALL makes every xxhash function static, so no
// AVX2 code is shared with, or picked by the linker for, any other file.
#include "checksum.h"

#if SG_CHECKSUM_AVX2
#ifndef XXH_INLINE_ALL
#define XXH_INLINE_ALL
#endif
#include <xxhash.h>

#if XXH_VECTOR != XXH_AVX2 && XXH_VECTOR != XXH_AVX512
#error "checksum_avx2.cc must be compiled with -mavx2"
#endif

namespace sg::runtime::detail {

uint64_t data_xxh3_avx2(const void* data, size_t size) { return XXH3_64bits(data, size); }

}  // namespace sg::runtime::detail
#endif
