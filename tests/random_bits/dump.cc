// Prints the generator's words and float transforms for a few keys, one line per
// element (hex bit patterns), for check.sh to compare with eager mode across
// compilers and architectures. Not part of the build.
#include <bit>
#include <cstdio>

#include "reference/random.h"

int main() {
  namespace rnd = sg::kernels::random;
  const uint32_t keys[3][2] = {{0, 42}, {0xffffffffu, 7}, {123456, 987654321}};
  for (const auto& k : keys) {
    for (uint64_t i = 0; i < 20000; ++i) {
      const rnd::Words w = rnd::draw_words(k[0], k[1], i);
      const uint32_t b = w.w0 ^ w.w1;
      std::printf("%08x %08x %08x %08x %08x %08x\n", w.w0, w.w1, b, std::bit_cast<uint32_t>(rnd::uniform01(b)),
                  std::bit_cast<uint32_t>(rnd::normal_from_bits(b)), std::bit_cast<uint32_t>(rnd::gumbel_from_bits(b)));
    }
  }
}
