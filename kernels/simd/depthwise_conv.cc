// conv2d and conv2d_bias (+ relu) with a run-time filter and groups > 1: depthwise
// convolutions (one input channel per group) and grouped ones, which XNNPACK's
// operators (their filter packed once) and our GEMM (one group) cannot take.
//
// Direct, vectorized over output channels: each output pixel's cout channels are
// summed in place in the output row, tap by tap of the window (and input channel
// by input channel of a group), the filter's row for that tap being contiguous in
// HWIO. A depthwise filter with one output per group reads the input pixel's
// channels as they lie; other groupings gather the input channel each output
// channel reads into a row first. Rows of output pixels are split over threads.
// As for the dense kernels, an input, filter or bias that could overflow, or holds
// NaN or infinity, runs the reference kernel (bound: max|x| * taps * cin per group
// * max|f| + max|b|).
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "simd/simd.h"
#include "simd/simd_kernels.h"

namespace sg::kernels::xnn {
namespace {

using namespace simd;

struct Shape {
  int64_t h, w, cin, oh, ow, cout, cin_g, cout_g;
  int64_t pad_y, pad_x;
};

struct Task {
  const float* x;
  const float* f;
  const float* bias;
  float* out;
  const Window2D* win;
  const Shape* s;
  const int32_t* base;  // per output channel: its group's first input channel
  float* gather;        // per thread: cout floats (grouped filters only)
  size_t rows_per_task;
  size_t rows;  // n * oh
  bool relu;
};

template <class V>
SG_SIMD_INLINE void axpy(float* o, const float* x, const float* f, size_t n) {
  constexpr size_t L = size_t(kLanes<V>);
  size_t c = 0;
  for (; c + L <= n; c += L) store<V>(o + c, load<V>(o + c) + load<V>(x + c) * load<V>(f + c));
  for (; c < n; ++c) o[c] += x[c] * f[c];
}

template <class V>
SG_SIMD_INLINE void finish(float* o, const float* bias, size_t n, bool relu) {
  constexpr size_t L = size_t(kLanes<V>);
  size_t c = 0;
  for (; c + L <= n; c += L) {
    V v = load<V>(o + c);
    if (bias != nullptr) v += load<V>(bias + c);
    if (relu) v = v < splat<V>(0.0f) ? splat<V>(0.0f) : v;  // NaN stays NaN
    store<V>(o + c, v);
  }
  for (; c < n; ++c) {
    const float v = o[c] + (bias != nullptr ? bias[c] : 0.0f);
    o[c] = relu && v < 0.0f ? 0.0f : v;
  }
}

// Output rows [begin, end) (row = image * oh + oy).
template <class V>
SG_SIMD_INLINE void conv_rows(const Task& t, size_t begin, size_t end, float* gather) {
  const Shape& s = *t.s;
  const Window2D& w = *t.win;
  const size_t cout = size_t(s.cout), cin = size_t(s.cin);
  const bool direct = s.cin_g == 1 && s.cout_g == 1;
  for (size_t row = begin; row < end; ++row) {
    const int64_t n = int64_t(row) / s.oh, oy = int64_t(row) % s.oh;
    const float* image = t.x + size_t(n * s.h * s.w) * cin;
    for (int64_t ox = 0; ox < s.ow; ++ox) {
      float* o = t.out + (row * size_t(s.ow) + size_t(ox)) * cout;
      std::fill(o, o + cout, 0.0f);
      for (int64_t ky = 0; ky < w.kh; ++ky) {
        const int64_t iy = oy * w.sh - s.pad_y + ky * w.dh;
        if (iy < 0 || iy >= s.h) continue;
        for (int64_t kx = 0; kx < w.kw; ++kx) {
          const int64_t ix = ox * w.sw - s.pad_x + kx * w.dw;
          if (ix < 0 || ix >= s.w) continue;
          const float* px = image + size_t(iy * s.w + ix) * cin;
          const float* tap = t.f + size_t((ky * w.kw + kx) * s.cin_g) * cout;
          if (direct) {
            axpy<V>(o, px, tap, cout);
            continue;
          }
          for (int64_t ci = 0; ci < s.cin_g; ++ci) {
            for (size_t c = 0; c < cout; ++c) gather[c] = px[size_t(t.base[c] + ci)];
            axpy<V>(o, gather, tap + size_t(ci) * cout, cout);
          }
        }
      }
      finish<V>(o, t.bias, cout, t.relu);
    }
  }
}

#ifdef SG_SIMD_X86
SG_TARGET_AVX512 void rows_avx512(const Task& t, size_t b, size_t e, float* g) { conv_rows<V16>(t, b, e, g); }
SG_TARGET_AVX2 void rows_avx2(const Task& t, size_t b, size_t e, float* g) { conv_rows<V8>(t, b, e, g); }
#endif
void rows_baseline(const Task& t, size_t b, size_t e, float* g) { conv_rows<V4>(t, b, e, g); }

using RowsFn = void (*)(const Task&, size_t, size_t, float*);

struct Split {
  const Task* task;
  RowsFn fn;
};

void run_split(void* context, size_t i) {
  const Split& sp = *static_cast<const Split*>(context);
  const Task& t = *sp.task;
  const size_t begin = i * t.rows_per_task, end = std::min(t.rows, begin + t.rows_per_task);
  sp.fn(t, begin, end, t.gather != nullptr ? t.gather + i * size_t(t.s->cout) : nullptr);
}

class GroupedConvKernel final : public PreparedKernel {
 public:
  GroupedConvKernel(ops::OpId id, ops::Attrs attrs, const Window2D& w, int64_t groups, int64_t cin_g, int64_t cout,
                    bool relu, std::string name)
      : id_(id), attrs_(std::move(attrs)), w_(w), groups_(groups), cin_g_(cin_g), cout_(cout), relu_(relu),
        name_(std::move(name)), isa_(best_isa()) {
    const int64_t cout_g = cout / groups;
    base_.resize(size_t(cout));
    for (int64_t c = 0; c < cout; ++c) base_[size_t(c)] = int32_t(c / cout_g * cin_g);
    switch (isa_) {
#ifdef SG_SIMD_X86
      case Isa::kAvx512: fn_ = rows_avx512; break;
      case Isa::kAvx2: fn_ = rows_avx2; break;
#endif
      default: fn_ = rows_baseline; break;
    }
  }

  Status run(const KernelContext& ctx, std::span<const TensorRef> in, std::span<TensorRef> out) override {
    const bool fused = id_ == ops::OpId::Conv2DBias;
    const char* op_name = fused ? "conv2d_bias" : "conv2d";
    if (in.size() != (fused ? 3u : 2u) || out.size() != 1)
      return internal_error(std::string(op_name) + ": wrong operand count");
    const TensorRef &x = in[0], &f = in[1], &o = out[0];
    const int64_t cin = cin_g_ * groups_;
    Shape s{};
    if (is_f32(x) && x.rank == 4) {
      s = {x.shape[1], x.shape[2], cin, output_size(x.shape[1], w_.kh, w_.sh, w_.dh, w_.same),
           output_size(x.shape[2], w_.kw, w_.sw, w_.dw, w_.same), cout_, cin_g_, cout_ / groups_, 0, 0};
      s.pad_y = padding_before(s.h, s.oh, w_.kh, w_.sh, w_.dh, w_.same);
      s.pad_x = padding_before(s.w, s.ow, w_.kw, w_.sw, w_.dw, w_.same);
    }
    if (!is_f32(x) || !is_f32(o) || !is_f32(f) || x.rank != 4 || o.rank != 4 || f.rank != 4 || x.shape[3] != cin ||
        o.shape[0] != x.shape[0] || o.shape[1] != s.oh || o.shape[2] != s.ow || o.shape[3] != cout_ ||
        f.shape[0] != w_.kh || f.shape[1] != w_.kw || f.shape[2] != cin_g_ || f.shape[3] != cout_ ||
        (fused && (!is_f32(in[2]) || in[2].rank != 1 || in[2].shape[0] != cout_)))
      return internal_error(std::string(op_name) + ": " + describe_shape(x) + " * filter " + describe_shape(f) +
                            " -> " + describe_shape(o) + " for " + std::to_string(groups_) + " groups");
    const size_t rows = size_t(o.shape[0] * s.oh);
    if (rows == 0 || s.ow == 0 || cout_ == 0) return Status::Ok();
    const float* bias = fused ? in[2].as<const float>() : nullptr;
    const size_t taps = size_t(w_.kh * w_.kw * cin_g_);
    const float max_x = max_magnitude(x.as<const float>(), size_t(x.numel()), isa_);
    const float max_f = max_magnitude(f.as<const float>(), size_t(f.numel()), isa_);
    const float max_b = bias != nullptr ? max_magnitude(bias, size_t(cout_), isa_) : 0.0f;
    OverflowBound bound;
    bound.weights = double(taps) * double(max_f);
    bound.bias = max_b;
    if (!std::isfinite(max_f) || !std::isfinite(max_b) || !bound.safe(max_x))
      return run_reference(id_, attrs_, ctx, in, out);

    const size_t flops = 2 * rows * size_t(s.ow) * size_t(cout_) * taps;
    const size_t threads = flops >= size_t(kMinPoolFlops) ? std::min(threads_of(ctx), rows) : 1;
    const size_t per_task = (rows + threads - 1) / threads;
    const size_t tasks = (rows + per_task - 1) / per_task;
    const bool direct = cin_g_ == 1 && cout_ == groups_;
    if (!direct && gather_.size() < tasks * size_t(cout_)) gather_.assign(tasks * size_t(cout_), 0.0f);
    Task t{x.as<const float>(), f.as<const float>(), bias, o.as<float>(), &w_, &s, base_.data(),
           direct ? nullptr : gather_.data(), per_task, rows, relu_};
    Split sp{&t, fn_};
    if (tasks == 1) run_split(&sp, 0);
    else parallelize(ctx, run_split, &sp, tasks);
    return Status::Ok();
  }
  const char* name() const override { return name_.c_str(); }
  size_t memory_bytes() const override { return (base_.size() + gather_.size()) * sizeof(float); }

 private:
  ops::OpId id_;
  ops::Attrs attrs_;
  Window2D w_;
  int64_t groups_, cin_g_, cout_;
  bool relu_;
  std::string name_;
  Isa isa_;
  RowsFn fn_;
  std::vector<int32_t> base_;
  std::vector<float> gather_;
};

}  // namespace

std::unique_ptr<PreparedKernel> make_depthwise_run_time(const ops::Attrs& attrs, std::span<const InputInfo> in,
                                                        const Window2D& win, int64_t groups, int64_t activation) {
  const bool fused = in.size() == 3;
  const InputInfo& f = in[1];
  if (groups <= 1) return nullptr;
  for (int d = 0; d < 4; ++d)
    if (f.shape[d] <= 0) return nullptr;  // static, non-empty filters only
  const int64_t cin_g = f.shape[2], cout = f.shape[3];
  if (cout % groups != 0 || cout > (int64_t(1) << 24) || cin_g * groups > (int64_t(1) << 30)) return nullptr;
  if (in[0].shape[3] >= 0 && in[0].shape[3] != cin_g * groups) return nullptr;
  if (fused && (in[2].rank != 1 || (in[2].shape[0] >= 0 && in[2].shape[0] != cout))) return nullptr;
  const bool relu = activation == ops::attr::kActRelu;
  std::string name = cin_g == 1 ? "sg:depthwise_conv_f32(run-time filter)" : "sg:grouped_conv_f32(run-time filter)";
  if (fused) name += "+bias";
  if (relu) name += "+relu";
  return std::make_unique<GroupedConvKernel>(fused ? ops::OpId::Conv2DBias : ops::OpId::Conv2D, attrs, win, groups,
                                             cin_g, cout, relu, std::move(name));
}

}  // namespace sg::kernels::xnn
