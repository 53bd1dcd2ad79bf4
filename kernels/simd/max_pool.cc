// f32 max pooling (NHWC) with AVX-512 or AVX2 vectors (simd.h), channels 16 or 8 to
// a vector and the last ones one at a time. XNNPACK's max
// pooling skips NaN, so every input had to be scanned for NaN first and such
// inputs sent to the reference kernel; this kernel keeps NumPy's semantics itself,
// with the reference kernel's fold over the window's taps in order,
//     acc = (x >= acc || x is NaN) ? x : acc,  from -inf, padding cells never read,
// as one compare mask each and a select, so its results are bit-identical to
// the reference's, signed zeros included. Only built for x86 and chosen where the
// CPU has AVX-512F or AVX2; elsewhere XNNPACK's operator (and its NaN scan) stays.
#include "simd/simd_kernels.h"

#ifdef SG_SIMD_X86


#include <algorithm>

namespace sg::kernels::xnn {
namespace {

struct Geometry {
  const float* x;
  float* y;
  int64_t h, w, c;  // input
  int64_t oh, ow;   // output
  int64_t pad_top, pad_left;
  Window2D win;
};

using simd::Isa;
using simd::kLanes;

// The reference kernel's step on one lane: the later of equal values wins, and a
// NaN wins over any number (so the last NaN of the window is the result).
SG_SIMD_INLINE float take_max(float acc, float x) { return (x >= acc || x != x) ? x : acc; }

// The same fold on vectors, as two selects of one compare each: `acc` takes x
// unless x < acc (so a later equal value, or a NaN x, replaces it), `nan` keeps
// the last NaN seen, and a window that held one gives that NaN. Bit for bit the
// reference's result. Written as the reference's one select of an OR of two
// compares, GCC 12 cannot keep the mask in a k register for 16-lane vectors in a
// template compiled for the baseline and inlined into an AVX-512 function: it
// went lane by lane (0.05 ms of the cnn benchmark's 0.13 on an EPYC with AVX-512).
template <class V>
struct WindowMax {
  V acc = simd::splat<V>(-__builtin_inff()), nan = simd::splat<V>(0.0f);
  SG_SIMD_INLINE void take(V x) {
    acc = x < acc ? acc : x;
    nan = x != x ? x : nan;
  }
  SG_SIMD_INLINE V result() const { return nan != nan ? nan : acc; }
};

// Output rows [begin, end) of the flattened (n, oy): kLanes<V> channels to a
// vector, then the last channels one at a time.
template <class V>
SG_SIMD_INLINE void pool_rows(const Geometry& g, size_t begin, size_t end) {
  const int64_t c = g.c, lanes = kLanes<V>;
  for (size_t row = begin; row < end; ++row) {
    const int64_t n = int64_t(row) / g.oh, oy = int64_t(row) % g.oh;
    const int64_t y0 = oy * g.win.sh - g.pad_top;
    const int64_t ylo = std::max<int64_t>(y0, 0), yhi = std::min(y0 + g.win.kh, g.h);
    const float* image = g.x + n * g.h * g.w * c;
    for (int64_t ox = 0; ox < g.ow; ++ox) {
      const int64_t x0 = ox * g.win.sw - g.pad_left;
      const int64_t xlo = std::max<int64_t>(x0, 0), xhi = std::min(x0 + g.win.kw, g.w);
      float* out = g.y + ((n * g.oh + oy) * g.ow + ox) * c;
      int64_t j = 0;
      for (; j + lanes <= c; j += lanes) {
        WindowMax<V> m;
        for (int64_t iy = ylo; iy < yhi; ++iy)
          for (int64_t ix = xlo; ix < xhi; ++ix) m.take(simd::load<V>(image + (iy * g.w + ix) * c + j));
        simd::store<V>(out + j, m.result());
      }
      for (; j < c; ++j) {
        float acc = -__builtin_inff();
        for (int64_t iy = ylo; iy < yhi; ++iy)
          for (int64_t ix = xlo; ix < xhi; ++ix) acc = take_max(acc, image[(iy * g.w + ix) * c + j]);
        out[j] = acc;
      }
    }
  }
}

SG_TARGET_AVX512 void pool_rows_avx512(const Geometry& g, size_t begin, size_t end) {
  pool_rows<simd::V16>(g, begin, end);
}
SG_TARGET_AVX2 void pool_rows_avx2(const Geometry& g, size_t begin, size_t end) { pool_rows<simd::V8>(g, begin, end); }

struct PoolTask {
  const Geometry* g;
  Isa isa;
};

void pool(const PoolTask& t, size_t begin, size_t end) {
  if (t.isa == Isa::kAvx512) pool_rows_avx512(*t.g, begin, end);
  else pool_rows_avx2(*t.g, begin, end);
}

void run_rows(void* arg, size_t begin, size_t count) {
  pool(*static_cast<const PoolTask*>(arg), begin, begin + count);
}

class MaxPoolKernel final : public PreparedKernel {
 public:
  MaxPoolKernel(const Window2D& w, Isa isa) : w_(w), isa_(isa) {}

  Status run(const KernelContext& ctx, std::span<const TensorRef> in, std::span<TensorRef> out) override {
    if (in.size() != 1 || out.size() != 1) return internal_error("max_pool2d: wrong operand count");
    const TensorRef &x = in[0], &o = out[0];
    if (!is_f32(x) || !is_f32(o) || x.rank != 4 || o.rank != 4 || o.shape[0] != x.shape[0] ||
        o.shape[3] != x.shape[3] || o.shape[1] != output_size(x.shape[1], w_.kh, w_.sh, 1, w_.same) ||
        o.shape[2] != output_size(x.shape[2], w_.kw, w_.sw, 1, w_.same))
      return internal_error("max_pool2d: " + describe_shape(x) + " -> " + describe_shape(o));
    if (o.numel() == 0) return Status::Ok();
    const Geometry g{x.as<const float>(), o.as<float>(), x.shape[1], x.shape[2], x.shape[3], o.shape[1], o.shape[2],
                     padding_before(x.shape[1], o.shape[1], w_.kh, w_.sh, 1, w_.same),
                     padding_before(x.shape[2], o.shape[2], w_.kw, w_.sw, 1, w_.same), w_};
    const size_t rows = size_t(o.shape[0] * o.shape[1]);
    PoolTask task{&g, isa_};
    if (double(o.numel()) * double(w_.kh * w_.kw) < kMinPoolFlops || threads_of(ctx) <= 1) pool(task, 0, rows);
    else parallelize_tiles(ctx, run_rows, &task, rows, 1);
    return Status::Ok();
  }
  const char* name() const override {
    return isa_ == Isa::kAvx512 ? "sg:max_pool_f32(avx512)" : "sg:max_pool_f32(avx2)";
  }

 private:
  Window2D w_;
  Isa isa_;
};

}  // namespace

std::unique_ptr<PreparedKernel> make_max_pool(const Window2D& w) {
  const Isa isa = simd::best_isa();
  if (isa != Isa::kAvx512 && isa != Isa::kAvx2) return nullptr;
  return std::make_unique<MaxPoolKernel>(w, isa);
}

}  // namespace sg::kernels::xnn

#else

namespace sg::kernels::xnn {

std::unique_ptr<PreparedKernel> make_max_pool(const Window2D&) { return nullptr; }

}  // namespace sg::kernels::xnn

#endif
