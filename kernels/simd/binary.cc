// f32 add, sub, mul, div, maximum, minimum with NumPy broadcasting, on our own
// SIMD rows (simd.h). XNNPACK has these ops, but its output clamp to [-inf, inf]
// turns every NaN result (0/0, inf-inf, a NaN operand) into -inf and its
// maximum/minimum drop NaN, where NumPy propagates it.
//
// The shapes are coalesced first: size-1 output dims dropped and neighbouring dims
// merged where both operands broadcast alike, so [2,3,4,5] + [4,5] runs as 6 rows
// of 20 against one row of 20. Each row is then a vector loop in which each
// operand either advances or repeats one value.

#include <algorithm>
#include <type_traits>

#include "simd/simd.h"
#include "simd/simd_kernels.h"

namespace sg::kernels::xnn {
namespace {

using namespace simd;

// Functors with always-inline templates (never lambdas: see activations.cc).
struct Add {
  template <class V> SG_SIMD_INLINE V operator()(V a, V b) const { return a + b; }
};
struct Sub {
  template <class V> SG_SIMD_INLINE V operator()(V a, V b) const { return a - b; }
};
struct Mul {
  template <class V> SG_SIMD_INLINE V operator()(V a, V b) const { return a * b; }
};
struct Div {
  template <class V> SG_SIMD_INLINE V operator()(V a, V b) const { return a / b; }
};
// NumPy's maximum/minimum: NaN if either operand is NaN. Their select tests an OR
// of two compares, which GCC 12 does lane by lane for 16-lane vectors in these
// baseline templates (the mask type of the comparison is the baseline's, not
// AVX-512's k registers, and every rewrite with two compares in one select ended
// the same way), so on AVX-512 they run the AVX2 rows: compare, compare, or, blend.
struct Max {
  template <class V> SG_SIMD_INLINE V operator()(V a, V b) const { return ((a >= b) | (a != a)) ? a : b; }
};
struct Min {
  template <class V> SG_SIMD_INLINE V operator()(V a, V b) const { return ((a <= b) | (a != a)) ? a : b; }
};

// The instruction set whose rows run `Op`.
template <class Op>
Isa rows_isa(Isa isa) {
  constexpr bool two_compares = std::is_same_v<Op, Max> || std::is_same_v<Op, Min>;
  return isa == Isa::kAvx512 && two_compares ? Isa::kAvx2 : isa;
}

enum class BinOp { kAdd, kSub, kMul, kDiv, kMax, kMin };

// o[i] = op(a[kA ? i : 0], b[kB ? i : 0]) for i < n. A repeated operand is
// splat once, before the loop: GCC builds a 16-lane splat in these baseline
// templates as 16 masked broadcasts, which in the loop made `0.5 * x` over 2.5M
// floats spend half its time there.
template <class V, class Op, bool kA, bool kB>
SG_SIMD_INLINE void row(const float* a, const float* b, float* o, size_t n) {
  constexpr Op op{};
  V a0{}, b0{};
  if constexpr (!kA) a0 = splat<V>(a[0]);
  if constexpr (!kB) b0 = splat<V>(b[0]);
  size_t i = 0;
  for (; i + kLanes<V> <= n; i += kLanes<V>) {
    const V va = kA ? load<V>(a + i) : a0;
    const V vb = kB ? load<V>(b + i) : b0;
    store<V>(o + i, op(va, vb));
  }
  for (; i < n; ++i) o[i] = op(a[kA ? i : 0], b[kB ? i : 0]);
}

template <class V, class Op>
SG_SIMD_INLINE void row_steps(const float* a, bool step_a, const float* b, bool step_b, float* o, size_t n) {
  if (step_a && step_b) row<V, Op, true, true>(a, b, o, n);
  else if (step_a) row<V, Op, true, false>(a, b, o, n);
  else if (step_b) row<V, Op, false, true>(a, b, o, n);
  else row<V, Op, false, false>(a, b, o, n);
}

// One row of one op on one instruction set, chosen when the kernel is made: a
// small op runs one call of it, a broadcast plan one per row, neither a switch.
using FlatFn = BinaryRowFn;

template <class Op>
void flat_baseline(const float* a, bool sa, const float* b, bool sb, float* o, size_t n) {
  row_steps<V4, Op>(a, sa, b, sb, o, n);
}
#ifdef SG_SIMD_X86
template <class Op>
SG_TARGET_AVX512 void flat_avx512(const float* a, bool sa, const float* b, bool sb, float* o, size_t n) {
  row_steps<V16, Op>(a, sa, b, sb, o, n);
}
template <class Op>
SG_TARGET_AVX2 void flat_avx2(const float* a, bool sa, const float* b, bool sb, float* o, size_t n) {
  row_steps<V8, Op>(a, sa, b, sb, o, n);
}
#endif

template <class Op>
FlatFn flat_for(Isa isa) {
  switch (rows_isa<Op>(isa)) {
#ifdef SG_SIMD_X86
    case Isa::kAvx512: return &flat_avx512<Op>;
    case Isa::kAvx2: return &flat_avx2<Op>;
#endif
    default: return &flat_baseline<Op>;
  }
}

FlatFn flat_fn(BinOp op, Isa isa) {
  switch (op) {
    case BinOp::kAdd: return flat_for<Add>(isa);
    case BinOp::kSub: return flat_for<Sub>(isa);
    case BinOp::kMul: return flat_for<Mul>(isa);
    case BinOp::kDiv: return flat_for<Div>(isa);
    case BinOp::kMax: return flat_for<Max>(isa);
    case BinOp::kMin: return flat_for<Min>(isa);
  }
  return nullptr;
}

// A small op's fixed run (kernel.h): operands `t` = a, b, o, the word the element
// count; whether each operand advances is fixed too.
template <class V, class Op, bool kA, bool kB>
SG_SIMD_INLINE void fixed_row(uint64_t n, const TensorRef* t) {
  row<V, Op, kA, kB>(t[0].as<const float>(), t[1].as<const float>(), t[2].as<float>(), size_t(n));
}
template <class Op, bool kA, bool kB>
void fixed_baseline(uint64_t n, const TensorRef* t) {
  fixed_row<V4, Op, kA, kB>(n, t);
}
#ifdef SG_SIMD_X86
template <class Op, bool kA, bool kB>
SG_TARGET_AVX512 void fixed_avx512(uint64_t n, const TensorRef* t) {
  fixed_row<V16, Op, kA, kB>(n, t);
}
template <class Op, bool kA, bool kB>
SG_TARGET_AVX2 void fixed_avx2(uint64_t n, const TensorRef* t) {
  fixed_row<V8, Op, kA, kB>(n, t);
}
#endif

template <class Op, bool kA, bool kB>
FixedFn fixed_steps(Isa isa) {
  switch (rows_isa<Op>(isa)) {
#ifdef SG_SIMD_X86
    case Isa::kAvx512: return &fixed_avx512<Op, kA, kB>;
    case Isa::kAvx2: return &fixed_avx2<Op, kA, kB>;
#endif
    default: return &fixed_baseline<Op, kA, kB>;
  }
}

template <class Op>
FixedFn fixed_for(Isa isa, bool step_a, bool step_b) {
  if (step_a && step_b) return fixed_steps<Op, true, true>(isa);
  if (step_a) return fixed_steps<Op, true, false>(isa);
  if (step_b) return fixed_steps<Op, false, true>(isa);
  return fixed_steps<Op, false, false>(isa);
}

FixedFn fixed_fn(BinOp op, Isa isa, bool step_a, bool step_b) {
  switch (op) {
    case BinOp::kAdd: return fixed_for<Add>(isa, step_a, step_b);
    case BinOp::kSub: return fixed_for<Sub>(isa, step_a, step_b);
    case BinOp::kMul: return fixed_for<Mul>(isa, step_a, step_b);
    case BinOp::kDiv: return fixed_for<Div>(isa, step_a, step_b);
    case BinOp::kMax: return fixed_for<Max>(isa, step_a, step_b);
    case BinOp::kMin: return fixed_for<Min>(isa, step_a, step_b);
  }
  return nullptr;
}

// The coalesced problem: `rank` output dims, each operand's element stride per dim
// (0 where it broadcasts); the last dim is the row.
struct Plan {
  FlatFn row;  // the op's row function on this CPU
  const float* a;
  const float* b;
  float* o;
  int rank;
  size_t dims[kMaxRank];
  size_t a_strides[kMaxRank], b_strides[kMaxRank];
};

// False when the shapes do not broadcast to the output's.
bool make_plan(const TensorRef& a, const TensorRef& b, const TensorRef& o, Plan& p) {
  if (a.rank > o.rank || b.rank > o.rank) return false;
  bool a_full[kMaxRank], b_full[kMaxRank];
  int prev = -1;  // pattern of the last kept dim: bit 0 a advances, bit 1 b advances
  p.rank = 0;
  for (int d = 0; d < o.rank; ++d) {
    const int64_t od = o.shape[d];
    const int da = d - (o.rank - a.rank), db = d - (o.rank - b.rank);
    const int64_t ad = da >= 0 ? a.shape[da] : 1, bd = db >= 0 ? b.shape[db] : 1;
    if ((ad != od && ad != 1) || (bd != od && bd != 1) || (od != 1 && ad != od && bd != od)) return false;
    if (od == 1) continue;
    const bool fa = ad != 1, fb = bd != 1;
    const int pattern = int(fa) | int(fb) << 1;
    if (pattern == prev) {
      p.dims[p.rank - 1] *= size_t(od);
    } else {
      p.dims[p.rank] = size_t(od);
      a_full[p.rank] = fa;
      b_full[p.rank] = fb;
      ++p.rank;
      prev = pattern;
    }
  }
  if (p.rank == 0) {
    p.dims[0] = 1;
    a_full[0] = b_full[0] = false;
    p.rank = 1;
  }
  size_t sa = 1, sb = 1;
  for (int d = p.rank - 1; d >= 0; --d) {
    p.a_strides[d] = a_full[d] ? sa : 0;
    p.b_strides[d] = b_full[d] ? sb : 0;
    if (a_full[d]) sa *= p.dims[d];
    if (b_full[d]) sb *= p.dims[d];
  }
  p.a = a.as<const float>();
  p.b = b.as<const float>();
  p.o = o.as<float>();
  return true;
}

void run_task(void* arg, size_t start, size_t count) {
  const Plan& p = *static_cast<const Plan*>(arg);
  const size_t n = p.dims[p.rank - 1];
  const bool step_a = p.a_strides[p.rank - 1] != 0, step_b = p.b_strides[p.rank - 1] != 0;
  for (size_t r = start; r < start + count; ++r) {
    size_t rest = r, a_off = 0, b_off = 0;
    for (int d = p.rank - 2; d >= 0; --d) {
      const size_t i = rest % p.dims[d];
      rest /= p.dims[d];
      a_off += i * p.a_strides[d];
      b_off += i * p.b_strides[d];
    }
    p.row(p.a + a_off, step_a, p.b + b_off, step_b, p.o + r * n, n);
  }
}

// Output elements per task.
constexpr size_t kTaskElements = 8192;

// Below this many elements an op runs as one flat row on this thread when each
// operand is either the output's shape or a single value: no plan, no division.
constexpr int64_t kFlatElements = 4096;

// Whether `t` is read as a whole row of o's elements (its shape is o's) or as one
// repeated value (one element, rank at most o's); false for any other broadcast.
SG_SIMD_INLINE bool flat_operand(const TensorRef& t, const TensorRef& o, bool& steps) {
  bool same = t.rank == o.rank;
  for (int d = 0; same && d < t.rank; ++d) same = t.shape[d] == o.shape[d];
  steps = same;
  return same || (t.rank <= o.rank && t.numel() == 1);
}

__attribute__((noinline, cold)) Status wrong_operands(const char* name) {
  return internal_error(std::string(name) + ": wrong operand count");
}

class BinaryKernel final : public PreparedKernel {
 public:
  BinaryKernel(ops::OpId id, BinOp op, const char* name)
      : id_(id), op_(op), isa_(best_isa()), flat_(flat_fn(op, isa_)), name_(name) {}

  Status run(const KernelContext& ctx, std::span<const TensorRef> in, std::span<TensorRef> out) override {
    if (in.size() != 2 || out.size() != 1) [[unlikely]] return wrong_operands(name_);
    const TensorRef &a = in[0], &b = in[1], &o = out[0];
    // Equal shapes or a single value, on a small output (a chain of small ops): one
    // row, straight away. dispatch's 1,000 ops on 16 floats: 32 -> 16 ns per node.
    bool step_a = false, step_b = false;
    const int64_t n_out = o.numel();
    if (n_out <= kFlatElements && is_f32(a) && is_f32(b) && is_f32(o) && flat_operand(a, o, step_a) &&
        flat_operand(b, o, step_b)) [[likely]] {
      if (n_out > 0) flat_(a.as<const float>(), step_a, b.as<const float>(), step_b, o.as<float>(), size_t(n_out));
      return Status::Ok();
    }
    return run_planned(ctx, in, out);
  }
  const char* name() const override { return name_; }
  // Elementwise rows read x[j] and y[j] before writing z[j]; the reference fallback too.
  bool runs_in_place() const override { return true; }
  // What run() takes as one flat row, fixed with each operand's step.
  FixedRun fix(std::span<const TensorRef> in, std::span<const TensorRef> out) const override {
    if (in.size() != 2 || out.size() != 1) return {};
    const TensorRef &a = in[0], &b = in[1], &o = out[0];
    bool step_a = false, step_b = false;
    const int64_t n_out = o.numel();
    if (n_out <= 0 || n_out > kFlatElements || !is_f32(a) || !is_f32(b) || !is_f32(o) ||
        !flat_operand(a, o, step_a) || !flat_operand(b, o, step_b))
      return {};
    return {fixed_fn(op_, isa_, step_a, step_b), uint64_t(n_out)};
  }

 private:
  // Any other broadcast, or a large output: the coalesced plan, split over threads.
  __attribute__((noinline)) Status run_planned(const KernelContext& ctx, std::span<const TensorRef> in,
                                               std::span<TensorRef> out) const {
    const TensorRef &a = in[0], &b = in[1], &o = out[0];
    Plan p;
    // What this plan does not take goes to the reference kernel, whose checks
    // give the error message.
    if (!is_f32(a) || !is_f32(b) || !is_f32(o) || !make_plan(a, b, o, p)) return run_reference(id_, {}, ctx, in, out);
    if (o.numel() == 0) return Status::Ok();
    p.row = flat_;
    const size_t n = p.dims[p.rank - 1];
    // One row (scalars, equal shapes): no division, no pool (small ops in loops).
    if (size_t(o.numel()) == n) {
      run_task(&p, 0, 1);
      return Status::Ok();
    }
    const size_t rows = size_t(o.numel()) / n;
    const size_t rows_per_task = std::max<size_t>(1, kTaskElements / n);
    if (rows <= rows_per_task) run_task(&p, 0, rows);
    else parallelize_tiles(ctx, run_task, &p, rows, rows_per_task);
    return Status::Ok();
  }

  ops::OpId id_;
  BinOp op_;
  Isa isa_;
  FlatFn flat_;  // the op's row function on this CPU
  const char* name_;
};

}  // namespace

BinaryRowFn binary_row(ops::OpId op, Isa isa) {
  using ops::OpId;
  switch (op) {
    case OpId::Add: return flat_fn(BinOp::kAdd, isa);
    case OpId::Sub: return flat_fn(BinOp::kSub, isa);
    case OpId::Mul: return flat_fn(BinOp::kMul, isa);
    case OpId::Div: return flat_fn(BinOp::kDiv, isa);
    case OpId::Maximum: return flat_fn(BinOp::kMax, isa);
    case OpId::Minimum: return flat_fn(BinOp::kMin, isa);
    default: return nullptr;
  }
}

std::unique_ptr<PreparedKernel> make_binary(ops::OpId op, std::span<const InputInfo> in) {
  if (in.size() != 2 || !is_f32(in[0]) || !is_f32(in[1])) return nullptr;
  using ops::OpId;
  switch (op) {
    case OpId::Add: return std::make_unique<BinaryKernel>(op, BinOp::kAdd, "sg:add_f32");
    case OpId::Sub: return std::make_unique<BinaryKernel>(op, BinOp::kSub, "sg:sub_f32");
    case OpId::Mul: return std::make_unique<BinaryKernel>(op, BinOp::kMul, "sg:mul_f32");
    case OpId::Div: return std::make_unique<BinaryKernel>(op, BinOp::kDiv, "sg:div_f32");
    case OpId::Maximum: return std::make_unique<BinaryKernel>(op, BinOp::kMax, "sg:maximum_f32");
    case OpId::Minimum: return std::make_unique<BinaryKernel>(op, BinOp::kMin, "sg:minimum_f32");
    default: return nullptr;
  }
}

}  // namespace sg::kernels::xnn
