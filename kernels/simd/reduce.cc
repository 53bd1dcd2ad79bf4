// f32 max, min, argmax and argmin over contiguous rows: the reduced axes are the
// last ones (or all of them), so each output element folds one dense row. This
// XNNPACK has no max/min reduction, and the reference kernel's per-element NaN
// test makes a 1,000-wide max of logits cost microseconds inside a decoding loop.
//
// NumPy's results, exactly as the reference kernel gives them:
//   max/min: NaN if the row holds one; between +0 and -0 the sign of the last zero
//            of the row (the reference keeps the later of equal values);
//   argmax/argmin: the first NaN's index if there is one, else the first index
//            of the extreme value.
// A row is scanned with SIMD vectors for the extreme and for NaN; the rare cases
// (a NaN, a zero result, an arg reduction) then find their index with a scan.
// Any other layout, and empty rows (an error), go to the reference kernel.
#include <cmath>
#include <cstdint>
#include <cstring>

#include "ops/op_table.h"
#include "reference/reduction_plan.h"
#include "simd/simd.h"
#include "simd/simd_kernels.h"

namespace sg::kernels::xnn {
namespace {

using namespace simd;

struct RowExtreme {
  float value;
  bool nan;
};

// The extreme of x[0, n) ignoring NaN (-inf/+inf for none), and whether a NaN occurs.
template <class V, bool kMax>
SG_SIMD_INLINE RowExtreme extreme_of(const float* x, size_t n) {
  const float start = kMax ? -INFINITY : INFINITY;
  V best = splat<V>(start);
  V nan = splat<V>(0.0f);  // lanes that saw a NaN are nonzero (all bits set)
  size_t i = 0;
  for (; i + kLanes<V> <= n; i += kLanes<V>) {
    const V v = load<V>(x + i);
    best = kMax ? (v > best ? v : best) : (v < best ? v : best);
    nan = bit_cast<V>(bit_cast<IntOf<V>>(nan) | bit_cast<IntOf<V>>(v != v));
  }
  float m = start;
  bool saw_nan = false;
  for (int l = 0; l < kLanes<V>; ++l) {
    const float b = best[l];
    m = kMax ? (b > m ? b : m) : (b < m ? b : m);
    saw_nan |= bit_cast<IntOf<V>>(nan)[l] != 0;
  }
  for (; i < n; ++i) {
    m = kMax ? (x[i] > m ? x[i] : m) : (x[i] < m ? x[i] : m);
    saw_nan |= std::isnan(x[i]);
  }
  return {m, saw_nan};
}

template <class V>
SG_SIMD_INLINE RowExtreme extreme_dispatch(bool is_max, const float* x, size_t n) {
  return is_max ? extreme_of<V, true>(x, n) : extreme_of<V, false>(x, n);
}

#ifdef SG_SIMD_X86
SG_TARGET_AVX512 RowExtreme extreme_avx512(bool is_max, const float* x, size_t n) {
  return extreme_dispatch<V16>(is_max, x, n);
}
SG_TARGET_AVX2 RowExtreme extreme_avx2(bool is_max, const float* x, size_t n) {
  return extreme_dispatch<V8>(is_max, x, n);
}
#endif
RowExtreme extreme_baseline(bool is_max, const float* x, size_t n) { return extreme_dispatch<V4>(is_max, x, n); }

RowExtreme extreme(Isa isa, bool is_max, const float* x, size_t n) {
  switch (isa) {
#ifdef SG_SIMD_X86
    case Isa::kAvx512: return extreme_avx512(is_max, x, n);
    case Isa::kAvx2: return extreme_avx2(is_max, x, n);
#endif
    default: return extreme_baseline(is_max, x, n);
  }
}

// The first i with x[i] == value (n if none).
template <class V>
SG_SIMD_INLINE size_t find_of(const float* x, size_t n, float value) {
  const V target = splat<V>(value);
  size_t i = 0;
  for (; i + kLanes<V> <= n; i += kLanes<V>) {
    // Any lane equal: OR the compare's mask as 64-bit words.
    uint64_t words[sizeof(V) / 8];
    const IntOf<V> hit = load<V>(x + i) == target;
    std::memcpy(words, &hit, sizeof(V));
    uint64_t any = 0;
    for (size_t w = 0; w < sizeof(V) / 8; ++w) any |= words[w];
    if (any != 0) break;
  }
  while (i < n && x[i] != value) ++i;
  return i;
}

#ifdef SG_SIMD_X86
SG_TARGET_AVX512 size_t find_avx512(const float* x, size_t n, float value) { return find_of<V16>(x, n, value); }
SG_TARGET_AVX2 size_t find_avx2(const float* x, size_t n, float value) { return find_of<V8>(x, n, value); }
#endif
size_t find_baseline(const float* x, size_t n, float value) { return find_of<V4>(x, n, value); }

size_t find(Isa isa, const float* x, size_t n, float value) {
  switch (isa) {
#ifdef SG_SIMD_X86
    case Isa::kAvx512: return find_avx512(x, n, value);
    case Isa::kAvx2: return find_avx2(x, n, value);
#endif
    default: return find_baseline(x, n, value);
  }
}

size_t first_nan(const float* x, size_t n) {
  size_t i = 0;
  while (i < n && !std::isnan(x[i])) ++i;
  return i;
}

// The value max/min gives for a row (n >= 1).
float reduce_row(Isa isa, bool is_max, const float* x, size_t n) {
  const RowExtreme e = extreme(isa, is_max, x, n);
  if (e.nan) return x[first_nan(x, n)];  // that NaN's own bits, as the reference keeps it
  if (e.value != 0.0f) return e.value;
  size_t last = n - 1;  // a zero result: the sign of the row's last zero
  while (x[last] != 0.0f) --last;
  return x[last];
}

// The index argmax/argmin gives for a row (n >= 1).
int64_t arg_row(Isa isa, bool is_max, const float* x, size_t n) {
  const RowExtreme e = extreme(isa, is_max, x, n);
  if (e.nan) return int64_t(first_nan(x, n));
  return int64_t(find(isa, x, n, e.value));  // the extreme is in the row (an all-inf row holds inf)
}

class ReduceKernel final : public PreparedKernel {
 public:
  ReduceKernel(ops::OpId op, const ops::Attrs& attrs)
      : op_(op),
        attrs_(attrs),
        is_max_(op == ops::OpId::Max || op == ops::OpId::ArgMax),
        is_arg_(op == ops::OpId::ArgMax || op == ops::OpId::ArgMin),
        isa_(best_isa()) {}

  Status run(const KernelContext& ctx, std::span<const TensorRef> in, std::span<TensorRef> out) override {
    if (in.size() != 1 || out.size() != 1 || !is_f32(in[0])) return fallback(ctx, in, out);
    const TensorRef& x = in[0];
    TensorRef& o = out[0];
    size_t rows = 0, n = 0;
    if (!rows_of(x, rows, n) || n == 0 || size_t(o.numel()) != rows ||
        o.dtype != (is_arg_ ? DType::kI64 : DType::kF32))
      return fallback(ctx, in, out);
    const float* px = x.as<const float>();
    if (is_arg_) {
      int64_t* po = o.as<int64_t>();
      for (size_t r = 0; r < rows; ++r) po[r] = arg_row(isa_, is_max_, px + r * n, n);
    } else {
      float* po = o.as<float>();
      for (size_t r = 0; r < rows; ++r) po[r] = reduce_row(isa_, is_max_, px + r * n, n);
    }
    return Status::Ok();
  }
  const char* name() const override { return "sg:reduce_f32"; }

 private:
  Status fallback(const KernelContext& ctx, std::span<const TensorRef> in, std::span<TensorRef> out) const {
    return reference_kernel(op_)(ctx, attrs_, in, out);
  }

  // Whether the reduction folds `rows` dense rows of `n` elements each.
  bool rows_of(const TensorRef& x, size_t& rows, size_t& n) const {
    bool reduced[kMaxRank] = {};
    if (is_arg_) {
      const int64_t axis = attrs_.i(ops::attr::kArgAxis);
      if (axis < 0 || axis >= x.rank) return false;
      reduced[axis] = true;
    } else {
      for (int64_t a : attrs_.ints(ops::attr::kReduceAxes)) {
        if (a < 0 || a >= x.rank) return false;
        reduced[a] = true;
      }
    }
    const ReductionPlan p = make_reduction_plan(x, reduced);
    // One reduced run of unit stride, and the kept dims all before it.
    if (p.red_rank > 1 || (p.red_rank == 1 && p.red_stride[0] != 1)) return false;
    if (p.kept_rank > 1 || (p.kept_rank == 1 && p.kept_stride[0] != p.count)) return false;
    rows = size_t(p.out_numel);
    n = size_t(p.count);
    return true;
  }

  ops::OpId op_;
  ops::Attrs attrs_;
  bool is_max_, is_arg_;
  Isa isa_;
};

}  // namespace

std::unique_ptr<PreparedKernel> make_reduce(ops::OpId op, const ops::Attrs& attrs, std::span<const InputInfo> in) {
  if (in.size() != 1 || !is_f32(in[0]) || attrs.values.empty()) return nullptr;
  return std::make_unique<ReduceKernel>(op, attrs);
}

}  // namespace sg::kernels::xnn
