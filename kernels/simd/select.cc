// f32 comparisons (greater, greater_equal, less, less_equal, equal, not_equal)
// and where(cond, x, y) with f32 values: relu's gradient, where(z > 0, g, 0), is
// one of each over every activation of a training step. The reference kernels
// walk a broadcasting index per element; here each operand is either the
// output's shape (it advances) or one element (splat once), and a row is a vector
// loop. A comparison and a select are exact, so the bytes are the reference
// kernels' (NaN compares false but for not_equal; a bool is one byte, 0 or 1, and
// any nonzero condition byte picks x). Other shapes go to the reference kernels.
#include <string>

#include "simd/simd.h"
#include "simd/simd_kernels.h"

#ifdef SG_SIMD_X86
#include <immintrin.h>
#endif

namespace sg::kernels::xnn {
namespace {

using simd::best_isa;
using simd::Isa;

enum class Cmp { kGreater, kGreaterEqual, kLess, kLessEqual, kEqual, kNotEqual };

template <Cmp C>
SG_SIMD_INLINE bool compare(float a, float b) {
  if constexpr (C == Cmp::kGreater) return a > b;
  else if constexpr (C == Cmp::kGreaterEqual) return a >= b;
  else if constexpr (C == Cmp::kLess) return a < b;
  else if constexpr (C == Cmp::kLessEqual) return a <= b;
  else if constexpr (C == Cmp::kEqual) return a == b;
  else return a != b;
}

// Rows: o[i] = a[i or 0] C b[i or 0] as 0/1 bytes; o[i] = c[i] != 0 ? x[i or 0] : y[i or 0].
// Which operands advance is a run-time choice, the comparison a template one.
using CompareFn = void (*)(const float*, bool, const float*, bool, uint8_t*, size_t);
using SelectFn = void (*)(const uint8_t*, const float*, bool, const float*, bool, float*, size_t);

template <Cmp C>
void compare_baseline(const float* a, bool sa, const float* b, bool sb, uint8_t* o, size_t n) {
  for (size_t i = 0; i < n; ++i) o[i] = compare<C>(a[sa ? i : 0], b[sb ? i : 0]) ? 1 : 0;
}
void select_baseline(const uint8_t* c, const float* x, bool sx, const float* y, bool sy, float* o, size_t n) {
  for (size_t i = 0; i < n; ++i) o[i] = c[i] != 0 ? x[sx ? i : 0] : y[sy ? i : 0];
}

#ifdef SG_SIMD_X86
// AVX2 rows, which AVX-512 machines run too: these ops are bound by memory, and
// GCC 12 widens bytes to lanes element by element in the vector-extension form.
// The ordered predicates are false for NaN, the unordered not-equal true, as the
// scalar operators.
template <Cmp C>
constexpr int kPredicate = C == Cmp::kGreater        ? _CMP_GT_OQ
                           : C == Cmp::kGreaterEqual ? _CMP_GE_OQ
                           : C == Cmp::kLess         ? _CMP_LT_OQ
                           : C == Cmp::kLessEqual    ? _CMP_LE_OQ
                           : C == Cmp::kEqual        ? _CMP_EQ_OQ
                                                     : _CMP_NEQ_UQ;

template <Cmp C>
SG_TARGET_AVX2 void compare_avx2(const float* a, bool sa, const float* b, bool sb, uint8_t* o, size_t n) {
  const __m256 va0 = _mm256_set1_ps(a[0]), vb0 = _mm256_set1_ps(b[0]);
  const __m256i one = _mm256_set1_epi32(1);
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256 va = sa ? _mm256_loadu_ps(a + i) : va0, vb = sb ? _mm256_loadu_ps(b + i) : vb0;
    const __m256i bits = _mm256_and_si256(_mm256_castps_si256(_mm256_cmp_ps(va, vb, kPredicate<C>)), one);
    const __m128i words = _mm_packs_epi32(_mm256_castsi256_si128(bits), _mm256_extracti128_si256(bits, 1));
    _mm_storel_epi64(reinterpret_cast<__m128i*>(o + i), _mm_packs_epi16(words, words));
  }
  compare_baseline<C>(sa ? a + i : a, sa, sb ? b + i : b, sb, o + i, n - i);
}

SG_TARGET_AVX2 void select_avx2(const uint8_t* c, const float* x, bool sx, const float* y, bool sy, float* o,
                                size_t n) {
  const __m256 vx0 = _mm256_set1_ps(x[0]), vy0 = _mm256_set1_ps(y[0]);
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256i cond = _mm256_cvtepu8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(c + i)));
    const __m256 zero = _mm256_castsi256_ps(_mm256_cmpeq_epi32(cond, _mm256_setzero_si256()));
    const __m256 vx = sx ? _mm256_loadu_ps(x + i) : vx0, vy = sy ? _mm256_loadu_ps(y + i) : vy0;
    _mm256_storeu_ps(o + i, _mm256_blendv_ps(vx, vy, zero));  // y where the condition byte is 0
  }
  select_baseline(c + i, sx ? x + i : x, sx, sy ? y + i : y, sy, o + i, n - i);
}
#endif

template <Cmp C>
CompareFn compare_for(Isa isa) {
#ifdef SG_SIMD_X86
  if (isa != Isa::kBaseline) return &compare_avx2<C>;
#endif
  (void)isa;
  return &compare_baseline<C>;
}

SelectFn select_for(Isa isa) {
#ifdef SG_SIMD_X86
  if (isa != Isa::kBaseline) return &select_avx2;
#endif
  (void)isa;
  return &select_baseline;
}

// Elements per task when a row splits over threads.
constexpr size_t kTile = 16384;

// Whether `t` has n elements (it advances) or one (it repeats): false when neither.
bool advances(const TensorRef& t, int64_t n, bool& step) {
  step = t.numel() == n && n != 1;
  return t.numel() == n || t.numel() == 1;
}

struct CompareTask {
  CompareFn fn;
  const float *a, *b;
  bool sa, sb;
  uint8_t* o;
};

void compare_tile(void* arg, size_t start, size_t count) {
  const CompareTask& t = *static_cast<const CompareTask*>(arg);
  t.fn(t.sa ? t.a + start : t.a, t.sa, t.sb ? t.b + start : t.b, t.sb, t.o + start, count);
}

class CompareKernel final : public PreparedKernel {
 public:
  CompareKernel(ops::OpId op, CompareFn fn, std::string name) : op_(op), fn_(fn), name_(std::move(name)) {}

  Status run(const KernelContext& ctx, std::span<const TensorRef> in, std::span<TensorRef> out) override {
    CompareTask t{fn_, nullptr, nullptr, false, false, nullptr};
    if (in.size() != 2 || out.size() != 1 || !is_f32(in[0]) || !is_f32(in[1]) || out[0].dtype != DType::kBool ||
        !advances(in[0], out[0].numel(), t.sa) || !advances(in[1], out[0].numel(), t.sb))
      return run_reference(op_, ops::Attrs{}, ctx, in, out);
    t.a = in[0].as<const float>();
    t.b = in[1].as<const float>();
    t.o = out[0].as<uint8_t>();
    const size_t n = size_t(out[0].numel());
    if (n <= kTile) compare_tile(&t, 0, n);
    else parallelize_tiles(ctx, compare_tile, &t, n, kTile);
    return Status::Ok();
  }
  const char* name() const override { return name_.c_str(); }

 private:
  ops::OpId op_;
  CompareFn fn_;
  std::string name_;
};

struct SelectTask {
  SelectFn fn;
  const uint8_t* c;
  const float *x, *y;
  bool sx, sy;
  float* o;
};

void select_tile(void* arg, size_t start, size_t count) {
  const SelectTask& t = *static_cast<const SelectTask*>(arg);
  t.fn(t.c + start, t.sx ? t.x + start : t.x, t.sx, t.sy ? t.y + start : t.y, t.sy, t.o + start, count);
}

class SelectKernel final : public PreparedKernel {
 public:
  SelectKernel() : fn_(select_for(best_isa())) {}

  Status run(const KernelContext& ctx, std::span<const TensorRef> in, std::span<TensorRef> out) override {
    SelectTask t{fn_, nullptr, nullptr, nullptr, false, false, nullptr};
    const int64_t n = out.size() == 1 ? out[0].numel() : -1;
    if (in.size() != 3 || n < 0 || in[0].dtype != DType::kBool || in[0].numel() != n || !is_f32(in[1]) ||
        !is_f32(in[2]) || !is_f32(out[0]) || !advances(in[1], n, t.sx) || !advances(in[2], n, t.sy))
      return run_reference(ops::OpId::Where, ops::Attrs{}, ctx, in, out);
    t.c = in[0].as<const uint8_t>();
    t.x = in[1].as<const float>();
    t.y = in[2].as<const float>();
    t.o = out[0].as<float>();
    if (size_t(n) <= kTile) select_tile(&t, 0, size_t(n));
    else parallelize_tiles(ctx, select_tile, &t, size_t(n), kTile);
    return Status::Ok();
  }
  const char* name() const override { return "sg:where_f32"; }

 private:
  SelectFn fn_;
};

}  // namespace

std::unique_ptr<PreparedKernel> make_compare(ops::OpId op, std::span<const InputInfo> in) {
  if (in.size() != 2 || !is_f32(in[0]) || !is_f32(in[1])) return nullptr;
  const Isa isa = best_isa();
  const std::string name = std::string("sg:") + ops::op_def(op).name + "_f32";
  switch (op) {
    case ops::OpId::Greater: return std::make_unique<CompareKernel>(op, compare_for<Cmp::kGreater>(isa), name);
    case ops::OpId::GreaterEqual:
      return std::make_unique<CompareKernel>(op, compare_for<Cmp::kGreaterEqual>(isa), name);
    case ops::OpId::Less: return std::make_unique<CompareKernel>(op, compare_for<Cmp::kLess>(isa), name);
    case ops::OpId::LessEqual: return std::make_unique<CompareKernel>(op, compare_for<Cmp::kLessEqual>(isa), name);
    case ops::OpId::Equal: return std::make_unique<CompareKernel>(op, compare_for<Cmp::kEqual>(isa), name);
    case ops::OpId::NotEqual: return std::make_unique<CompareKernel>(op, compare_for<Cmp::kNotEqual>(isa), name);
    default: return nullptr;
  }
}

std::unique_ptr<PreparedKernel> make_where(std::span<const InputInfo> in) {
  if (in.size() != 3 || in[0].dtype != DType::kBool || !is_f32(in[1]) || !is_f32(in[2])) return nullptr;
  return std::make_unique<SelectKernel>();
}

}  // namespace sg::kernels::xnn
