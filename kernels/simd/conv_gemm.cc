// conv2d and conv2d_bias (+ relu) with a constant filter and one group, on our
// packed-weight GEMM (dense_gemm.h): an HWIO filter [kh][kw][cin][cout] is already
// the weight matrix [kh*kw*cin][cout] of a dense layer, so each output position
// is one row of patches (im2col, zeros where the window hangs over a SAME border)
// times that matrix, with the bias and relu in the GEMM's last store.
//
// Chosen over XNNPACK's convolution where our GEMM wins for dense layers
// (packed_gemm_isa: on AVX-512, output channels filling at least 70% of the
// 32-wide panels; on AVX2) and there are enough output channels to amortize
// gathering; and
// for a filter that is a run-time input, which XNNPACK's operators cannot take,
// packed again on every run (make_conv_gemm_run_time). The patch rows are built in
// a buffer the kernel keeps (grown on a first run, reused after); with threads,
// each gathers the rows of its own block of outputs and multiplies them. Like
// the dense kernel, an input that could overflow, or holds NaN or infinity, runs
// the reference kernel.
#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "ops/op_table.h"
#include "simd/dense_gemm.h"
#include "simd/simd_kernels.h"

namespace sg::kernels::xnn {
namespace {

// Gathering copies each patch once per output row, about 1/cout of the GEMM's
// work per element: with 64 output channels ours ran a 3x3 8x8x32 convolution in
// 18.4 µs against XNNPACK's 20.1 (bench/micro/RESULTS.md); with 32, on 16x16x16,
// the copy cost more than the GEMM saved (24.8 against 18.7 µs). XNNPACK's indirect convolution copies nothing.
constexpr int64_t kMinChannels = 64;
// On AVX2 (EPYC, Zen 3), where this XNNPACK's convolution ran at ~30-35 GFLOP/s,
// ours took cnn's 16x16x16 -> 32 from 70 to 35 µs, but its 32x32x3 -> 16 from 30
// to 38 (27-wide patches of 3-channel pieces gather slowly): cnn at one thread
// ran 0.097 ms from 32 channels up, 0.107 from 16.
constexpr int64_t kMinChannelsAvx2 = 32;
// The gathered patches must stay in L2 for the GEMM to stream them from there:
// on 56x56x64 (7 MiB of patches) XNNPACK was 1.15x faster on one thread, 1.7x on
// two (the gather runs on one).
constexpr int64_t kMaxPatchBytes = int64_t(512) << 10;

struct Axis {
  int64_t in = 0, out = 0, pad = 0;  // pad: leading zeros (SAME puts the odd one after)
};

// One spatial axis; false when `out` is not the size SPEC §7 gives.
bool axis_of(int64_t in, int64_t out, int64_t k, int64_t stride, int64_t dilation, bool same, Axis& a) {
  if (output_size(in, k, stride, dilation, same) != out) return false;
  a = {in, out, padding_before(in, out, k, stride, dilation, same)};
  return true;
}

class ConvGemmKernel final : public PreparedKernel {
 public:
  // `run_time_filter`: the filter (and bias) are inputs, packed again on every run.
  ConvGemmKernel(PackedPanels packed, ops::OpId id, ops::Attrs attrs, const Window2D& w, int64_t cin, int64_t cout,
                 bool relu, OverflowBound bound, bool run_time_filter, std::string name)
      : packed_(std::move(packed)), id_(id), attrs_(std::move(attrs)), w_(w), cin_(cin), cout_(cout), relu_(relu),
        bound_(bound), run_time_filter_(run_time_filter), name_(std::move(name)), isa_(simd::best_isa()) {}

  Status run(const KernelContext& ctx, std::span<const TensorRef> in, std::span<TensorRef> out) override {
    const bool fused = id_ == ops::OpId::Conv2DBias;
    const char* op_name = fused ? "conv2d_bias" : "conv2d";
    if (in.size() != (fused ? 3u : 2u) || out.size() != 1)
      return internal_error(std::string(op_name) + ": wrong operand count");
    const TensorRef &x = in[0], &o = out[0];
    Axis ay, ax;
    if (!is_f32(x) || !is_f32(o) || x.rank != 4 || o.rank != 4 || x.shape[3] != cin_ || o.shape[3] != cout_ ||
        o.shape[0] != x.shape[0] || !axis_of(x.shape[1], o.shape[1], w_.kh, w_.sh, w_.dh, w_.same, ay) ||
        !axis_of(x.shape[2], o.shape[2], w_.kw, w_.sw, w_.dw, w_.same, ax) ||
        (fused && (in[2].rank != 1 || in[2].shape[0] != cout_)))
      return internal_error(std::string(op_name) + ": " + describe_shape(x) + " -> " + describe_shape(o) + " for " +
                            std::to_string(cin_) + " -> " + std::to_string(cout_) + " channels");
    const size_t rows = size_t(o.shape[0] * o.shape[1] * o.shape[2]);
    if (rows == 0) return Status::Ok();
    const size_t k = size_t(w_.kh * w_.kw * cin_);
    if (run_time_filter_) {
      const TensorRef& f = in[1];
      if (!is_f32(f) || f.rank != 4 || f.shape[0] != w_.kh || f.shape[1] != w_.kw || f.shape[2] != cin_ ||
          f.shape[3] != cout_ || (fused && !is_f32(in[2])))
        return internal_error(std::string(op_name) + ": filter " + describe_shape(f) + " for a " +
                              std::to_string(w_.kh) + "x" + std::to_string(w_.kw) + " window");
      const float* bias = fused ? in[2].as<const float>() : nullptr;
      bound_ = OverflowBound::of(f.as<const float>(), k, size_t(cout_), bias);
      repack_panels(packed_, f.as<const float>(), bias);
    }
    if (!bound_.safe(max_magnitude(x.as<const float>(), size_t(x.numel()), isa_)))
      return run_reference(id_, attrs_, ctx, in, out);
    if (patches_size_ < rows * k) {
      patches_ = try_floats(rows * k);
      patches_size_ = patches_ ? rows * k : 0;
      if (!patches_)
        return out_of_memory(std::string(op_name) + ": cannot allocate " + std::to_string(rows * k * sizeof(float)) +
                             " bytes of patches");
    }
    const size_t threads = threads_of(ctx);
    const size_t mr = packed_.isa.mr;
    if (threads <= 1 || 2 * rows * k * size_t(cout_) < kMinParallelGemmFlops || rows < 2 * mr) {
      gather(x.as<const float>(), ay, ax, 0, rows, patches_.get());
      run_packed_rows(packed_, patches_.get(), k, o.as<float>(), size_t(cout_), 0, rows, relu_);
      return Status::Ok();
    }
    // Each thread gathers the patch rows of its own block of outputs and
    // multiplies them by every panel. A split by panels would have every thread
    // read all the patch rows that one thread wrote: on two cores that traffic
    // made an 8x8x32 -> 64 convolution 1.8x slower than on one.
    RowBlocks task{this, x.as<const float>(), &ay, &ax, patches_.get(), o.as<float>(), k, rows,
                   ((rows + threads - 1) / threads + mr - 1) / mr * mr};
    parallelize(ctx, run_row_block, &task, (rows + task.block - 1) / task.block);
    return Status::Ok();
  }
  const char* name() const override { return name_.c_str(); }
  size_t memory_bytes() const override { return packed_.bytes() + patches_size_ * sizeof(float); }

 private:
  struct RowBlocks {
    const ConvGemmKernel* kernel;
    const float* x;
    const Axis *ay, *ax;
    float* patches;
    float* out;
    size_t k, rows, block;
  };

  static void run_row_block(void* context, size_t i) {
    const RowBlocks& t = *static_cast<const RowBlocks*>(context);
    const ConvGemmKernel& kernel = *t.kernel;
    const size_t begin = i * t.block, end = std::min(t.rows, begin + t.block);
    kernel.gather(t.x, *t.ay, *t.ax, begin, end, t.patches + begin * t.k);
    run_packed_rows(kernel.packed_, t.patches, t.k, t.out, size_t(kernel.cout_), begin, end, kernel.relu_);
  }

  // Patch rows [begin, end), one per output position (n, oy, ox) in order: the
  // kh x kw window's cin-channel pixels in HWIO order, zeros outside the image.
  void gather(const float* x, const Axis& ay, const Axis& ax, size_t begin, size_t end, float* dst) const {
    const size_t c = size_t(cin_), run = size_t(w_.kw) * c;
    const size_t per_image = size_t(ay.out * ax.out);
    for (size_t r = begin; r < end; ++r) {
      const size_t n = r / per_image, pos = r % per_image;
      const int64_t oy = int64_t(pos / size_t(ax.out)), ox = int64_t(pos % size_t(ax.out));
      const float* image = x + n * size_t(ay.in * ax.in) * c;
      for (int64_t ky = 0; ky < w_.kh; ++ky, dst += run) {
        const int64_t iy = oy * w_.sh - ay.pad + ky * w_.dh;
        const int64_t ix0 = ox * w_.sw - ax.pad;
        if (iy < 0 || iy >= ay.in) {
          std::memset(dst, 0, run * sizeof(float));
        } else if (w_.dw == 1 && ix0 >= 0 && ix0 + w_.kw <= ax.in) {
          // The window's row lies inside the image: one contiguous run.
          std::memcpy(dst, image + size_t(iy * ax.in + ix0) * c, run * sizeof(float));
        } else {
          for (int64_t kx = 0; kx < w_.kw; ++kx) {
            const int64_t ix = ix0 + kx * w_.dw;
            float* to = dst + size_t(kx) * c;
            if (ix < 0 || ix >= ax.in)
              std::memset(to, 0, c * sizeof(float));
            else
              std::memcpy(to, image + size_t(iy * ax.in + ix) * c, c * sizeof(float));
          }
        }
      }
    }
  }

  PackedPanels packed_;
  ops::OpId id_;
  ops::Attrs attrs_;
  Window2D w_;
  int64_t cin_, cout_;
  bool relu_;
  OverflowBound bound_;
  bool run_time_filter_;
  std::string name_;
  simd::Isa isa_;
  std::unique_ptr<float[]> patches_;
  size_t patches_size_ = 0;
};

}  // namespace

std::unique_ptr<PreparedKernel> make_conv_gemm(const ops::Attrs& attrs, std::span<const InputInfo> in,
                                               const Window2D& win, int64_t groups, int64_t activation) {
  const bool fused = in.size() == 3;
  const InputInfo& f = in[1];
  const int64_t cin = f.shape[2], cout = f.shape[3];
  const std::optional<simd::Isa> isa = packed_gemm_isa(cout);
  if (!isa || groups != 1 || cout < (*isa == simd::Isa::kAvx2 ? kMinChannelsAvx2 : kMinChannels) ||
      (in[0].shape[3] >= 0 && in[0].shape[3] != cin))
    return nullptr;
  // Static input dims only: the patch buffer's size is known here.
  const InputInfo& x = in[0];
  for (int d = 0; d < 3; ++d)
    if (x.shape[d] < 0) return nullptr;
  const int64_t oh = output_size(x.shape[1], win.kh, win.sh, win.dh, win.same);
  const int64_t ow = output_size(x.shape[2], win.kw, win.sw, win.dw, win.same);
  const int64_t k = win.kh * win.kw * cin;
  if (oh <= 0 || ow <= 0 || x.shape[0] * oh * ow * k * int64_t(sizeof(float)) > kMaxPatchBytes) return nullptr;
  const float* w = static_cast<const float*>(f.constant);
  const float* bias = fused ? static_cast<const float*>(in[2].constant) : nullptr;
  std::optional<PackedPanels> packed = pack_panels(*isa, w, size_t(k), size_t(cout), bias);
  if (!packed) return nullptr;
  const bool relu = activation == ops::attr::kActRelu;
  std::string name = std::string("sg:conv_gemm_f32(") + packed->isa.name + ")";
  if (fused) name += "+bias";
  if (relu) name += "+relu";
  return std::make_unique<ConvGemmKernel>(std::move(*packed), fused ? ops::OpId::Conv2DBias : ops::OpId::Conv2D, attrs,
                                          win, cin, cout, relu, OverflowBound::of(w, size_t(k), size_t(cout), bias),
                                          false, std::move(name));
}

std::unique_ptr<PreparedKernel> make_conv_gemm_run_time(const ops::Attrs& attrs, std::span<const InputInfo> in,
                                                        const Window2D& win, int64_t groups, int64_t activation) {
  const bool fused = in.size() == 3;
  const InputInfo& f = in[1];
  if (groups != 1) return nullptr;
  for (int d = 0; d < 4; ++d)
    if (f.shape[d] <= 0) return nullptr;  // static, non-empty filters only
  const int64_t cin = f.shape[2], cout = f.shape[3];
  // The panels are allocated here, before any filter arrives: only for a filter
  // of a conv's usual size (the declared shape is the graph's word, not data).
  constexpr int64_t kMaxRunTimeFilterBytes = int64_t(64) << 20;
  int64_t bytes = 0;
  if (__builtin_mul_overflow(f.shape[0], f.shape[1], &bytes) || __builtin_mul_overflow(bytes, cin, &bytes) ||
      __builtin_mul_overflow(bytes, cout, &bytes) ||
      bytes > kMaxRunTimeFilterBytes / int64_t(sizeof(float)))
    return nullptr;
  const int64_t k = win.kh * win.kw * cin;
  if (in[0].shape[3] >= 0 && in[0].shape[3] != cin) return nullptr;
  if (fused && (in[2].rank != 1 || (in[2].shape[0] >= 0 && in[2].shape[0] != cout))) return nullptr;
  // Any of our instruction sets beats the reference kernel, the alternative here.
  const simd::Isa isa = simd::best_isa();
  std::optional<PackedPanels> packed = allocate_panels(isa, size_t(k), size_t(cout), fused);
  if (!packed) return nullptr;
  const bool relu = activation == ops::attr::kActRelu;
  std::string name = std::string("sg:conv_gemm_f32(") + packed->isa.name + ",run-time filter)";
  if (fused) name += "+bias";
  if (relu) name += "+relu";
  return std::make_unique<ConvGemmKernel>(std::move(*packed), fused ? ops::OpId::Conv2DBias : ops::OpId::Conv2D, attrs,
                                          win, cin, cout, relu, OverflowBound{}, true, std::move(name));
}

}  // namespace sg::kernels::xnn
