// The data segment's checksum (XXH3-64, which Program::load_file checks by
// default) against this machine's memory bandwidth, and the load time of a graph
// with a large data segment with and without the check.
//
//   sg_checksum_probe [GRAPH.sgraph] [--mib N] [--reps R]
//
// prints one JSON line per measurement, the best (and the median) of R runs:
//   memset, memcpy, read: N MiB (default 256) written, copied (counted once) and
//     summed as 64-bit words: the ceiling a hash over N MiB can reach;
//   xxh3: format::xxh3_64 (XXH3 inlined from libxxhash-dev at this file's -O2;
//     XXH_VECTOR names the instruction set it was compiled for), over N MiB;
//   xxh3_runtime: runtime::data_xxh3, what Program::load_file checks the data
//     segment with (-O3, and AVX2 where the CPU has it), over N MiB;
//   xxh3_runtime_baseline: its portable build (-O3, SSE2 or NEON), which CPUs
//     without AVX2 run;
//   ..._in_cache: the same over 256 KiB at a time (starting at one of the
//     first 64 bytes, so that no call repeats the last), N MiB in all: the
//     hash's own speed where memory does not bound it;
//   xxh3_dispatch (where libxxhash's shared library has it): XXH3 with its x86
//     dispatch (AVX2, AVX-512 where the CPU has them), over N MiB;
//   load (GRAPH given): Program::load_file with verify_data true and false, page
//     cache warm, and the check's rate: the data segment's size over the
//     difference of the two.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "checksum.h"  // runtime/src
#include "sgraph_header.h"
#include "stagegraph/runtime.h"

#if SG_XXH3_DISPATCH
extern "C" XXH64_hash_t XXH3_64bits_dispatch(const void* input, size_t len);
#endif

namespace {

using Clock = std::chrono::steady_clock;

struct Timing {
  double best_s = 0, median_s = 0;
};

// Runs `fn` `reps` times (after one warm-up run); what it returns is kept so
// that the work is not optimized away.
Timing time_it(int reps, const std::function<uint64_t()>& fn, uint64_t* sink) {
  *sink += fn();
  std::vector<double> t;
  for (int r = 0; r < reps; ++r) {
    const Clock::time_point start = Clock::now();
    *sink += fn();
    t.push_back(std::chrono::duration<double>(Clock::now() - start).count());
  }
  std::sort(t.begin(), t.end());
  return Timing{t.front(), t[t.size() / 2]};
}

void report(const char* what, size_t bytes, const Timing& t, const std::string& extra = "") {
  std::printf("{\"what\": \"%s\", \"mib\": %.1f, \"gb_s\": %.2f, \"median_gb_s\": %.2f, \"best_ms\": %.3f%s}\n", what,
              double(bytes) / (1 << 20), double(bytes) / t.best_s / 1e9, double(bytes) / t.median_s / 1e9,
              t.best_s * 1e3, extra.c_str());
  std::fflush(stdout);
}

const char* vector_name() {
  switch (XXH_VECTOR) {
    case XXH_SCALAR: return "scalar";
    case XXH_SSE2: return "sse2";
    case XXH_AVX2: return "avx2";
    case XXH_AVX512: return "avx512";
    case XXH_NEON: return "neon";
    default: return "other";
  }
}

int load(const std::string& graph, int reps, uint64_t* sink) {
  std::FILE* f = std::fopen(graph.c_str(), "rb");
  if (!f) {
    std::fprintf(stderr, "sg_checksum_probe: cannot open %s\n", graph.c_str());
    return 2;
  }
  uint8_t head[sg::format::kHeaderSize];
  const size_t got = std::fread(head, 1, sizeof head, f);
  std::fclose(f);
  sg::format::Header h;
  if (got != sizeof head || !sg::format::decode_header(head, sizeof head, &h)) {
    std::fprintf(stderr, "sg_checksum_probe: %s is not a graph file\n", graph.c_str());
    return 2;
  }
  Timing with{}, without{};
  for (const bool verify : {true, false}) {
    bool failed = false;
    const Timing t = time_it(reps, [&]() -> uint64_t {
      sg::LoadOptions options;
      options.verify_data = verify;
      auto program = sg::Program::load_file(graph, options);
      if (!program.ok()) {
        std::fprintf(stderr, "sg_checksum_probe: %s: %s\n", graph.c_str(), program.status().message().c_str());
        failed = true;
        return 0;
      }
      return (*program)->entries().size();
    }, sink);
    if (failed) return 2;
    (verify ? with : without) = t;
  }
  const double check_s = with.best_s - without.best_s;
  std::printf(
      "{\"what\": \"load\", \"data_mib\": %.1f, \"verify_best_ms\": %.3f, \"verify_median_ms\": %.3f, "
      "\"no_verify_best_ms\": %.3f, \"no_verify_median_ms\": %.3f, \"check_gb_s\": %.2f, \"checksum\": \"%s\"}\n",
      double(h.data_size) / (1 << 20), with.best_s * 1e3, with.median_s * 1e3, without.best_s * 1e3,
      without.median_s * 1e3, check_s > 0 ? double(h.data_size) / check_s / 1e9 : 0.0,
      (h.flags & sg::format::kFlagDataXxh3) ? "xxh3" : "crc32");
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  std::string graph;
  size_t mib = 256;
  int reps = 7;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--mib" && i + 1 < argc) {
      mib = size_t(std::strtoull(argv[++i], nullptr, 10));
    } else if (arg == "--reps" && i + 1 < argc) {
      reps = std::atoi(argv[++i]);
    } else if (!arg.empty() && arg[0] != '-' && graph.empty()) {
      graph = arg;
    } else {
      std::fprintf(stderr, "usage: sg_checksum_probe [GRAPH.sgraph] [--mib N] [--reps R]\n");
      return 1;
    }
  }
  if (mib == 0 || mib > (size_t(1) << 16) || reps < 1) {
    std::fprintf(stderr, "sg_checksum_probe: --mib takes 1..65536, --reps at least 1\n");
    return 1;
  }
  const size_t n = mib << 20;
  std::vector<uint8_t> a(n), b(n);
  uint64_t x = 0x9E3779B97F4A7C15u;
  for (size_t i = 0; i + 8 <= n; i += 8) {  // xorshift: bytes no hash can shortcut
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    std::memcpy(a.data() + i, &x, 8);
  }
  std::memset(b.data(), 1, n);
  uint64_t sink = 0;
  report("memset", n, time_it(reps, [&]() -> uint64_t {
           std::memset(b.data(), int(sink & 0x7F), n);
           return b[n / 2];
         }, &sink));
  report("memcpy", n, time_it(reps, [&]() -> uint64_t {
           std::memcpy(b.data(), a.data(), n);
           return b[n / 3];
         }, &sink));
  report("read", n, time_it(reps, [&]() -> uint64_t {
           uint64_t s = 0;
           for (size_t i = 0; i + 8 <= n; i += 8) {
             uint64_t w;
             std::memcpy(&w, a.data() + i, 8);
             s += w;
           }
           return s;
         }, &sink));
  const std::string vec = std::string(", \"xxh_vector\": \"") + vector_name() + "\"";
  report("xxh3", n, time_it(reps, [&]() -> uint64_t { return sg::format::xxh3_64(a.data(), n); }, &sink), vec);
  report("xxh3_runtime", n, time_it(reps, [&]() -> uint64_t { return sg::runtime::data_xxh3(a.data(), n); }, &sink));
  constexpr size_t kChunk = 256 << 10;
  report("xxh3_in_cache", n, time_it(reps, [&]() -> uint64_t {
           uint64_t h = 0;
           for (size_t i = 0; i < n / kChunk; ++i) h ^= sg::format::xxh3_64(a.data() + (i & 63), kChunk);
           return h;
         }, &sink), vec);
  report("xxh3_runtime_baseline", n,
         time_it(reps, [&]() -> uint64_t { return sg::runtime::detail::data_xxh3_baseline(a.data(), n); }, &sink));
  report("xxh3_runtime_baseline_in_cache", n, time_it(reps, [&]() -> uint64_t {
           uint64_t h = 0;
           for (size_t i = 0; i < n / kChunk; ++i) h ^= sg::runtime::detail::data_xxh3_baseline(a.data() + (i & 63), kChunk);
           return h;
         }, &sink));
  report("xxh3_runtime_in_cache", n, time_it(reps, [&]() -> uint64_t {
           uint64_t h = 0;
           for (size_t i = 0; i < n / kChunk; ++i) h ^= sg::runtime::data_xxh3(a.data() + (i & 63), kChunk);
           return h;
         }, &sink));
  const uint64_t expected = sg::format::xxh3_64(a.data() + 3, n - 3);
  if (sg::runtime::data_xxh3(a.data() + 3, n - 3) != expected ||
      sg::runtime::detail::data_xxh3_baseline(a.data() + 3, n - 3) != expected) {
    std::fprintf(stderr, "sg_checksum_probe: runtime::data_xxh3 differs from format::xxh3_64\n");
    return 2;
  }
#if SG_XXH3_DISPATCH
  report("xxh3_dispatch", n, time_it(reps, [&]() -> uint64_t { return XXH3_64bits_dispatch(a.data(), n); }, &sink));
  report("xxh3_dispatch_in_cache", n, time_it(reps, [&]() -> uint64_t {
           uint64_t h = 0;
           for (size_t i = 0; i < n / kChunk; ++i) h ^= XXH3_64bits_dispatch(a.data() + (i & 63), kChunk);
           return h;
         }, &sink));
#endif
  int rc = 0;
  if (!graph.empty()) rc = load(graph, reps, &sink);
  std::fprintf(stderr, "(%llu)\n", static_cast<unsigned long long>(sink & 1));
  return rc;
}
