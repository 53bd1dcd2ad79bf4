// What a quantized or half-precision GEMM's store adds to C (fully_connected's bias
// and relu, fused as the f32 GEMM does): C = sum + bias[n], then relu as
// `v < 0 ? 0 : v` (NaN stays NaN). The same two steps as the unfused nodes, so the
// result is bit-identical to them.
#pragma once

#include <cstddef>
#include <new>
#include <vector>

namespace sg::kernels::quant {

// Storage for packed panels and quantized rows, 64-byte aligned: the kernels read
// them a cache line at a time (zmm loads, AMX tile rows), and malloc's 16-byte
// alignment would split every such read across two lines (mlp b64 int8 ran 1.6x
// slower when the heap happened to place a panel so).
template <class T>
struct CacheLineAllocator {
  using value_type = T;
  CacheLineAllocator() = default;
  template <class U>
  CacheLineAllocator(const CacheLineAllocator<U>&) noexcept {}
  T* allocate(size_t n) { return static_cast<T*>(::operator new(n * sizeof(T), std::align_val_t{64})); }
  void deallocate(T* p, size_t) noexcept { ::operator delete(p, std::align_val_t{64}); }
  template <class U>
  bool operator==(const CacheLineAllocator<U>&) const noexcept { return true; }
};
template <class T>
using AlignedVector = std::vector<T, CacheLineAllocator<T>>;

struct Epilogue {
  const float* bias = nullptr;  // [n], or null
  bool relu = false;
};

}  // namespace sg::kernels::quant
