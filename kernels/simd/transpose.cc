// transpose, which this XNNPACK lacks, as a cache-blocked copy for every dtype
// (by element size). The permutation is first reduced like the reference kernel's:
// size-1 dims dropped, output dims that stay neighbours in the input merged. When
// the output's last dim then walks the input with a stride (a real transpose, not a
// permutation of whole rows), the copy goes in square tiles between that dim and
// the one the input is contiguous in, so reads and writes both stay within a few
// cache lines per tile; the reference walks the input with that stride across the
// whole tensor. Other permutations (the last dim already contiguous) are row copies
// and go to the reference kernel.

#include <cstdint>
#include <cstring>
#include <string>

#include "ops/op_table.h"
#include "simd/simd.h"
#include "simd/simd_kernels.h"

#ifdef SG_SIMD_X86
#include <immintrin.h>
#endif

namespace sg::kernels::xnn {
namespace {

// Elements per tile side: 32 x 32 four-byte elements are 4 KiB each way.
constexpr int64_t kTile = 32;

struct Plan {
  int rank = 0;                       // after merging
  int64_t shape[kMaxRank] = {};       // output dims
  int64_t in_stride[kMaxRank] = {};   // the input stride each output dim walks
  int64_t out_stride[kMaxRank] = {};  // dense output strides
  int contiguous = -1;                // the output dim whose input stride is 1
};

// The merged plan of `perm`; false when the permutation is malformed.
bool plan_of(const TensorRef& x, const TensorRef& o, const std::vector<int64_t>& perm, Plan& p) {
  if (int(perm.size()) != x.rank || o.rank != x.rank || o.dtype != x.dtype) return false;
  int64_t strides[kMaxRank];
  int64_t s = 1;
  for (int d = x.rank - 1; d >= 0; --d) {
    strides[d] = s;
    s *= x.shape[d];
  }
  bool seen[kMaxRank] = {};
  for (int d = 0; d < o.rank; ++d) {
    const int64_t a = perm[size_t(d)];
    if (a < 0 || a >= x.rank || seen[a] || o.shape[d] != x.shape[a]) return false;
    seen[a] = true;
    if (o.shape[d] == 1) continue;
    if (p.rank > 0 && p.in_stride[p.rank - 1] == strides[a] * o.shape[d]) {
      p.shape[p.rank - 1] *= o.shape[d];
      p.in_stride[p.rank - 1] = strides[a];
    } else {
      p.shape[p.rank] = o.shape[d];
      p.in_stride[p.rank] = strides[a];
      ++p.rank;
    }
  }
  int64_t os = 1;
  for (int d = p.rank - 1; d >= 0; --d) {
    p.out_stride[d] = os;
    os *= p.shape[d];
    if (p.in_stride[d] == 1) p.contiguous = d;
  }
  return true;
}

// A tile of four-byte elements: y[i * ys + j] = x[i + j * xs], rows x cols.
using Tile4Fn = void (*)(const uint32_t* x, uint32_t* y, int64_t rows, int64_t cols, int64_t xs, int64_t ys);

struct Task {
  const Plan* plan;
  const uint8_t* x;
  uint8_t* y;
  size_t elem;
  Tile4Fn tile4;
  int64_t tiles_c, tiles_l;  // tiles along the contiguous dim and the last dim
};

template <class T>
void copy_tile(const T* x, T* y, int64_t rows, int64_t cols, int64_t x_col_stride, int64_t y_row_stride) {
  // rows: along the input-contiguous dim; cols: along the output's last dim.
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j) y[i * y_row_stride + j] = x[i + j * x_col_stride];
}

#ifdef SG_SIMD_X86
// The tile in 8 x 8 blocks, each transposed in registers (unpack, shuffle, swap
// halves); the edges that are not whole blocks element by element.
SG_TARGET_AVX2 void copy_tile4_avx2(const uint32_t* x, uint32_t* y, int64_t rows, int64_t cols, int64_t xs,
                                    int64_t ys) {
  const int64_t rows8 = rows & ~int64_t(7), cols8 = cols & ~int64_t(7);
  for (int64_t i = 0; i < rows8; i += 8) {
    for (int64_t j = 0; j < cols8; j += 8) {
      const float* s = reinterpret_cast<const float*>(x + i + j * xs);
      __m256 r[8];
      for (int k = 0; k < 8; ++k) r[k] = _mm256_loadu_ps(s + k * xs);
      __m256 t[8], u[8];
      for (int k = 0; k < 8; k += 2) {
        t[k] = _mm256_unpacklo_ps(r[k], r[k + 1]);
        t[k + 1] = _mm256_unpackhi_ps(r[k], r[k + 1]);
      }
      for (int k = 0; k < 8; k += 4) {
        u[k] = _mm256_shuffle_ps(t[k], t[k + 2], _MM_SHUFFLE(1, 0, 1, 0));
        u[k + 1] = _mm256_shuffle_ps(t[k], t[k + 2], _MM_SHUFFLE(3, 2, 3, 2));
        u[k + 2] = _mm256_shuffle_ps(t[k + 1], t[k + 3], _MM_SHUFFLE(1, 0, 1, 0));
        u[k + 3] = _mm256_shuffle_ps(t[k + 1], t[k + 3], _MM_SHUFFLE(3, 2, 3, 2));
      }
      float* d = reinterpret_cast<float*>(y + i * ys + j);
      for (int k = 0; k < 4; ++k) {
        _mm256_storeu_ps(d + k * ys, _mm256_permute2f128_ps(u[k], u[k + 4], 0x20));
        _mm256_storeu_ps(d + (k + 4) * ys, _mm256_permute2f128_ps(u[k], u[k + 4], 0x31));
      }
    }
    for (int64_t ii = i; ii < i + 8; ++ii)
      for (int64_t j = cols8; j < cols; ++j) y[ii * ys + j] = x[ii + j * xs];
  }
  for (int64_t i = rows8; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j) y[i * ys + j] = x[i + j * xs];
}
#endif

Tile4Fn tile4_for(simd::Isa isa) {
#ifdef SG_SIMD_X86
  if (isa == simd::Isa::kAvx2 || isa == simd::Isa::kAvx512) return &copy_tile4_avx2;
#endif
  (void)isa;
  return &copy_tile<uint32_t>;
}

// One task: all tiles of one index of the other dims and one row of tiles.
void run_task(void* arg, size_t index) {
  const Task& t = *static_cast<const Task*>(arg);
  const Plan& p = *t.plan;
  const int last = p.rank - 1, c = p.contiguous;
  const int64_t tile_row = int64_t(index) % t.tiles_c;
  int64_t outer = int64_t(index) / t.tiles_c;
  int64_t xo = 0, yo = 0;
  for (int d = last; d >= 0; --d) {  // the odometer of the other dims, last fastest
    if (d == last || d == c) continue;
    const int64_t k = outer % p.shape[d];
    outer /= p.shape[d];
    xo += k * p.in_stride[d];
    yo += k * p.out_stride[d];
  }
  const int64_t i0 = tile_row * kTile, rows = std::min(kTile, p.shape[c] - i0);
  for (int64_t tl = 0; tl < t.tiles_l; ++tl) {
    const int64_t j0 = tl * kTile, cols = std::min(kTile, p.shape[last] - j0);
    const int64_t xs = xo + i0 + j0 * p.in_stride[last], ys = yo + i0 * p.out_stride[c] + j0;
    switch (t.elem) {
      case 1: copy_tile(t.x + xs, t.y + ys, rows, cols, p.in_stride[last], p.out_stride[c]); break;
      case 2:
        copy_tile(reinterpret_cast<const uint16_t*>(t.x) + xs, reinterpret_cast<uint16_t*>(t.y) + ys, rows, cols,
                  p.in_stride[last], p.out_stride[c]);
        break;
      case 4:
        t.tile4(reinterpret_cast<const uint32_t*>(t.x) + xs, reinterpret_cast<uint32_t*>(t.y) + ys, rows, cols,
                p.in_stride[last], p.out_stride[c]);
        break;
      default:
        copy_tile(reinterpret_cast<const uint64_t*>(t.x) + xs, reinterpret_cast<uint64_t*>(t.y) + ys, rows, cols,
                  p.in_stride[last], p.out_stride[c]);
        break;
    }
  }
}

class TransposeKernel final : public PreparedKernel {
 public:
  explicit TransposeKernel(ops::Attrs attrs) : attrs_(std::move(attrs)), tile4_(tile4_for(simd::best_isa())) {}

  Status run(const KernelContext& ctx, std::span<const TensorRef> in, std::span<TensorRef> out) override {
    if (in.size() != 1 || out.size() != 1) return internal_error("transpose: wrong operand count");
    const TensorRef &x = in[0], &o = out[0];
    Plan p;
    if (!plan_of(x, o, attrs_.ints(ops::attr::kPermAxes), p))
      return internal_error("transpose: bad permutation for " + describe_shape(x) + " -> " + describe_shape(o));
    const int last = p.rank - 1;
    // Nothing to tile: empty, a copy, or rows already contiguous in the input.
    if (o.numel() == 0 || p.rank < 2 || p.in_stride[last] == 1 || p.contiguous < 0)
      return run_reference(ops::OpId::Transpose, attrs_, ctx, in, out);
    Task t{&p,    static_cast<const uint8_t*>(x.data), static_cast<uint8_t*>(o.data), dtype_size(x.dtype), tile4_,
           (p.shape[p.contiguous] + kTile - 1) / kTile, (p.shape[last] + kTile - 1) / kTile};
    const size_t tasks = size_t(t.tiles_c * (o.numel() / (p.shape[p.contiguous] * p.shape[last])));
    // Below a quarter million elements one thread copies faster than two wake.
    if (o.numel() < (int64_t(1) << 18) || threads_of(ctx) <= 1) {
      for (size_t k = 0; k < tasks; ++k) run_task(&t, k);
    } else {
      parallelize(ctx, run_task, &t, tasks);
    }
    return Status::Ok();
  }
  const char* name() const override { return "sg:transpose"; }

 private:
  ops::Attrs attrs_;
  Tile4Fn tile4_;
};

}  // namespace

std::unique_ptr<PreparedKernel> make_transpose(const ops::Attrs& attrs, std::span<const InputInfo> in) {
  if (in.size() != 1 || attrs.values.empty()) return nullptr;
  return std::make_unique<TransposeKernel>(attrs);
}

}  // namespace sg::kernels::xnn
