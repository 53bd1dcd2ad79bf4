// Shared by the GPU benchmarks (bench/gpu/): the device check that turns "no
// GPU" into exit 77, pinned host buffers, timing, and the summary line that
// tools/gpu-check.sh puts in its table.
//
// Every benchmark prints, as its last line,
//   row: NAME | MEASURED | GOAL | MET
// (MET is "yes", "no", or "n/a" when skipped); gpu-check.sh collects these rows.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "stagegraph/status.h"

namespace sg::bench_gpu {

constexpr int kSkipped = 77;  // ctest's and gpu-check.sh's "skipped"

// Empty when a CUDA device is usable, else why not (the CUDA error's text).
inline std::string no_device_reason() {
  int count = 0;
  const cudaError_t e = cudaGetDeviceCount(&count);
  if (e != cudaSuccess) {
    (void)cudaGetLastError();
    return std::string(cudaGetErrorName(e)) + ": " + cudaGetErrorString(e);
  }
  if (count == 0) return "cudaGetDeviceCount found 0 devices";
  return {};
}

// Prints the skip message and the table row; the caller returns kSkipped.
inline int skip(const std::string& name, const std::string& goal, const std::string& reason) {
  std::printf("skipped: no CUDA device (%s)\n", reason.c_str());
  std::printf("row: %s | skipped (no CUDA device) | %s | n/a\n", name.c_str(), goal.c_str());
  std::fflush(stdout);
  return kSkipped;
}

inline int fail(const std::string& what, const Status& s) {
  std::fprintf(stderr, "error: %s: %s\n", what.c_str(), s.message().c_str());
  return 1;
}

inline int fail_cuda(const std::string& what, cudaError_t e) {
  std::fprintf(stderr, "error: %s: %s: %s\n", what.c_str(), cudaGetErrorName(e), cudaGetErrorString(e));
  return 1;
}

// Page-locked host memory, so that copies to and from the GPU run at full speed
// and asynchronously (for the Session and the baselines alike).
class PinnedBuffer {
 public:
  PinnedBuffer() = default;
  ~PinnedBuffer() {
    if (p_ != nullptr) cudaFreeHost(p_);
  }
  PinnedBuffer(const PinnedBuffer&) = delete;
  PinnedBuffer& operator=(const PinnedBuffer&) = delete;
  cudaError_t allocate(size_t bytes) {
    bytes_ = bytes;
    return cudaMallocHost(&p_, bytes == 0 ? 1 : bytes);
  }
  template <class T> T* as() const { return static_cast<T*>(p_); }
  void* data() const { return p_; }
  size_t bytes() const { return bytes_; }

 private:
  void* p_ = nullptr;
  size_t bytes_ = 0;
};

using Clock = std::chrono::steady_clock;

inline double us_since(Clock::time_point t) {
  return std::chrono::duration<double, std::micro>(Clock::now() - t).count();
}

inline double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

// A small deterministic generator (xorshift64*) for inputs: uniform in [lo, hi).
class Rng {
 public:
  explicit Rng(uint64_t seed) : s_(seed == 0 ? 0x9E3779B97F4A7C15ull : seed) {}
  float uniform(float lo, float hi) {
    s_ ^= s_ >> 12;
    s_ ^= s_ << 25;
    s_ ^= s_ >> 27;
    const uint64_t r = s_ * 0x2545F4914F6CDD1Dull;
    return lo + (hi - lo) * float(double(r >> 40) / double(1ull << 24));
  }

 private:
  uint64_t s_;
};

// Integer value of "--name VALUE" style options; exits 1 (usage) when malformed.
inline long long parse_count(const char* flag, const char* text) {
  char* end = nullptr;
  const long long v = std::strtoll(text, &end, 10);
  if (end == text || *end != '\0' || v <= 0) {
    std::fprintf(stderr, "error: %s takes a positive integer, got '%s'\n", flag, text);
    std::exit(1);
  }
  return v;
}

}  // namespace sg::bench_gpu
