// The data segment's checksum on load: XXH3-64 (seed 0), the same function as
// format::xxh3_64, compiled for speed and, on x86-64, once more for AVX2 and
// picked at run time (checksum.cc). format::xxh3_64 is inlined at the default
// optimization level with x86-64's baseline SSE2, about half of what memory
// gives on a fast machine (bench/load/checksum_probe.cc).
#pragma once

#include <cstddef>
#include <cstdint>

namespace sg::runtime {

// XXH3-64 of `size` bytes at `data`: equal to format::xxh3_64(data, size).
uint64_t data_xxh3(const void* data, size_t size);

namespace detail {
// The portable build (SSE2 on x86-64, NEON on aarch64), at -O3.
uint64_t data_xxh3_baseline(const void* data, size_t size);
// checksum_avx2.cc, compiled with -mavx2 (x86-64 only); called only where the CPU has AVX2.
uint64_t data_xxh3_avx2(const void* data, size_t size);
}  // namespace detail

}  // namespace sg::runtime
