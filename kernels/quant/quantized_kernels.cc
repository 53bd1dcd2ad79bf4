#include "quant/quantized_kernels.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "reference/kernel_util.h"
#include "reference/reference_kernels.h"

namespace sg::kernels::quant {
namespace {

std::string shape_text(const TensorRef& t) {
  std::string s = "[";
  for (int i = 0; i < t.rank; ++i) s += (i > 0 ? ", " : "") + std::to_string(t.shape[i]);
  return s + "]";
}

// C = the quantized rows times the packed weights, in column tiles over the team
// where there is one; the epilogue in the store. Rows whose `finite` is 0 are left.
struct DynTask {
  const PackedWeights* packed;
  const QuantizedRows* rows;
  size_t m;
  float* c;
  size_t n, tile;
  Epilogue e;
  static void run(void* context, size_t i) {
    const DynTask& t = *static_cast<const DynTask*>(context);
    const size_t begin = i * t.tile, end = std::min(t.n, begin + t.tile);
    dynamic_gemm_columns(*t.packed, *t.rows, t.m, t.c, begin, end, t.e);
  }
};

void run_dynamic_columns(const KernelContext& ctx, const PackedWeights& packed, const QuantizedRows& rows, size_t m,
                         float* c, size_t n, const Epilogue& e) {
  DynTask task{&packed, &rows, m, c, n, dynamic_column_tile(packed.isa), e};
  const size_t tiles = (n + task.tile - 1) / task.tile;
  if (ctx.team != nullptr && tiles > 1) ctx.team->run(&DynTask::run, &task, tiles);
  else
    for (size_t i = 0; i < tiles; ++i) DynTask::run(&task, i);
}

// matmul(x, W) and fully_connected(x, W, b) with W [K][N] quantized: x [..., K].
class QuantizedDense final : public PreparedKernel {
 public:
  QuantizedDense(ops::OpId op, int64_t activation, const Layout& l, const uint8_t* data, const uint8_t* scales,
                 GemmIsa isa, std::shared_ptr<const PackedWeights> packed,
                 void (*tanh_row)(const float*, float*, size_t), std::shared_ptr<const HalfPanels> half)
      : op_(op),
        activation_(activation),
        layout_(l),
        isa_(isa),
        packed_(std::move(packed)),
        half_(std::move(half)),
        tanh_row_(tanh_row) {
    view_ = WeightView{&layout_, data, scales};
    if (isa_ == GemmIsa::kReference) row_.resize(size_t(l.dims[1]));
    name_ = std::string("quant:") + storage_name(l.storage) + ":" +
            (packed_ != nullptr ? std::string("dynamic:") + dyn_isa_name(packed_->isa) + (packed_->amx ? "+amx" : "")
             : half_ != nullptr ? half_isa_name(half_->isa)
                                : gemm_isa_name(isa_));
  }

  Status run(const KernelContext& ctx, std::span<const TensorRef> inputs, std::span<TensorRef> outputs) override {
    const TensorRef& x = inputs[0];
    TensorRef& o = outputs[0];
    const size_t k = size_t(layout_.dims[0]), n = size_t(layout_.dims[1]);
    if (x.dtype != DType::kF32 || o.dtype != DType::kF32 || x.rank < 1 || size_t(x.shape[x.rank - 1]) != k ||
        size_t(o.numel()) != size_t(x.numel()) / k * n)
      return internal_error(name_ + ": input " + shape_text(x) + " and output " + shape_text(o) + " for weights [" +
                            std::to_string(k) + ", " + std::to_string(n) + "]");
    GemmProblem p;
    p.a = x.as<const float>();
    p.w = view_;
    p.c = o.as<float>();
    p.m = size_t(x.numel()) / k;
    p.k = k;
    p.n = n;
    // fully_connected's bias, and relu, in the packed kernels' store (as the f32 GEMM
    // does); tanh after it.
    const bool fc = op_ == ops::OpId::FullyConnected;
    const Epilogue e = fc ? Epilogue{inputs[2].as<const float>(), activation_ == ops::attr::kActRelu} : Epilogue{};
    bool biased = false;  // the kernel applied `e`
    if (p.m > 0 && n > 0 && packed_ != nullptr) {
      run_dynamic(ctx, p, e);
      biased = fc;
    } else if (p.m > 0 && n > 0 && half_ != nullptr) {
      run_half(ctx, p, e);
      biased = fc;
    } else if (p.m > 0 && n > 0) {
      if (isa_ == GemmIsa::kReference) {
        gemm_columns(isa_, p, 0, n, row_.data());
      } else {
        Task task{this, &p, gemm_column_tile(isa_)};
        // Column tiles over the Session's team where it has one (this library does
        // not link the pthreadpool of a build with XNNPACK: such Sessions run it on
        // one thread).
        const size_t tiles = (n + task.tile - 1) / task.tile;
        if (ctx.team != nullptr && tiles > 1) ctx.team->run(&Task::run, &task, tiles);
        else
          for (size_t i = 0; i < tiles; ++i) Task::run(&task, i);
      }
    }
    if (!fc || (biased && activation_ != ops::attr::kActTanh)) return Status::Ok();
    if (activation_ == ops::attr::kActTanh && tanh_row_ != nullptr) {
      for (size_t r = 0; r < p.m; ++r) {
        float* row = o.as<float>() + r * n;
        if (!biased)
          for (size_t c = 0; c < n; ++c) row[c] += e.bias[c];
        tanh_row_(row, row, n);
      }
    } else if (biased) {  // tanh without the SIMD row kernel: as the reference's tanh
      for (float& v : std::span<float>(o.as<float>(), p.m * n)) v = std::tanh(v);
    } else {
      bias_activation_f32(o.as<float>(), int64_t(p.m), int64_t(n), e.bias, activation_);
    }
    return Status::Ok();
  }

  const char* name() const override { return name_.c_str(); }
  size_t memory_bytes() const override { return row_.size() * sizeof(float); }

 private:
  // Activations quantized once, then column tiles; rows with a non-finite value
  // again in f32 (weight-only), so NaN and inf propagate as they would.
  void run_dynamic(const KernelContext& ctx, const GemmProblem& p, const Epilogue& e) {
    thread_local QuantizedRows rows;
    quantize_rows(*packed_, p.a, p.m, &rows);
    run_dynamic_columns(ctx, *packed_, rows, p.m, p.c, p.n, e);
    for (size_t r = 0; r < p.m; ++r) {
      if (rows.finite[r] != 0) continue;
      const GemmProblem one{p.a + r * p.k, p.w, p.c + r * p.n, 1, p.k, p.n};
      std::vector<float> row(p.n);
      gemm_columns(isa_, one, 0, p.n, row.data());
      float* out = p.c + r * p.n;
      for (size_t c = 0; e.bias != nullptr && c < p.n; ++c) {
        out[c] += e.bias[c];
        if (e.relu && out[c] < 0.0f) out[c] = 0.0f;
      }
    }
  }
  // bf16/f16 panels: the activations rounded to bf16 once (the dot kernel), then
  // column tiles.
  void run_half(const KernelContext& ctx, const GemmProblem& p, const Epilogue& e) {
    thread_local std::vector<uint16_t> a16;
    const uint16_t* rounded = nullptr;
    if (half_->isa == HalfIsa::kAvx512Bf16Dot) {
      a16.resize(p.m * half_->kpad);
      round_rows_bf16(p.a, p.m, p.k, half_->kpad, a16.data());
      rounded = a16.data();
    }
    HalfTask task{half_.get(), p.a, rounded, p.m, p.c, p.n, e};
    const size_t tiles = (p.n + kHalfColumnTile - 1) / kHalfColumnTile;
    if (ctx.team != nullptr && tiles > 1) ctx.team->run(&HalfTask::run, &task, tiles);
    else
      for (size_t i = 0; i < tiles; ++i) HalfTask::run(&task, i);
  }
  struct HalfTask {
    const HalfPanels* half;
    const float* a;
    const uint16_t* a16;
    size_t m;
    float* c;
    size_t n;
    Epilogue e;
    static void run(void* context, size_t i) {
      const HalfTask& t = *static_cast<const HalfTask*>(context);
      const size_t begin = i * kHalfColumnTile, end = std::min(t.n, begin + kHalfColumnTile);
      half_gemm_columns(*t.half, t.a, t.a16, t.m, t.c, begin, end, t.e);
    }
  };

  struct Task {
    QuantizedDense* self;
    const GemmProblem* p;
    size_t tile;
    static void run(void* context, size_t i) {
      const Task& t = *static_cast<const Task*>(context);
      const size_t begin = i * t.tile, end = std::min(t.p->n, begin + t.tile);
      gemm_columns(t.self->isa_, *t.p, begin, end, nullptr);
    }
  };

  ops::OpId op_;
  int64_t activation_;
  Layout layout_;
  WeightView view_;
  GemmIsa isa_;
  std::shared_ptr<const PackedWeights> packed_;
  std::shared_ptr<const HalfPanels> half_;
  void (*tanh_row_)(const float*, float*, size_t);
  std::vector<float> row_;
  std::string name_;
};

// conv2d and conv2d_bias (one group) with an int8 HWIO filter [kh][kw][cin]
// [cout], read as the dense layer [kh*kw*cin][cout] (gemm_layout: the same bytes and
// scales). Dynamic: each image quantized once, its patches' integers gathered as
// rows (quantize_patches), multiplied on the packed kernels with bias and relu in
// the store. An image holding NaN or inf, and every image without packed weights
// (weight-only, or no SIMD kernel), runs in f32: its patches (im2col, zeros outside)
// through the weight-only dense kernel.
class QuantizedConv final : public PreparedKernel {
 public:
  QuantizedConv(ops::OpId op, const ops::Attrs& attrs, const Layout& filter,
                std::shared_ptr<const PackedWeights> packed, std::unique_ptr<QuantizedDense> weight_only,
                void (*tanh_row)(const float*, float*, size_t))
      : op_(op),
        attrs_(attrs),
        filter_(filter),
        packed_(std::move(packed)),
        weight_only_(std::move(weight_only)),
        tanh_row_(tanh_row) {
    activation_ = op == ops::OpId::Conv2DBias ? attrs.i(ops::attr::kConvActivation) : ops::attr::kActNone;
    name_ = std::string("quant:conv:") + storage_name(filter.storage) + ":" +
            (packed_ != nullptr ? std::string("dynamic:") + dyn_isa_name(packed_->isa) + (packed_->amx ? "+amx" : "")
                                : std::string(weight_only_->name() + std::string_view("quant:").size()));
  }

  Status run(const KernelContext& ctx, std::span<const TensorRef> inputs, std::span<TensorRef> outputs) override {
    PatchGeometry g;
    SG_RETURN_IF_ERROR(geometry(inputs, outputs[0], g));
    const size_t rows = size_t(g.n * g.oh * g.ow), cout = size_t(filter_.dims[3]);
    if (rows == 0) return Status::Ok();
    float* out = outputs[0].as<float>();
    const float* x = inputs[0].as<const float>();
    const bool fused = op_ == ops::OpId::Conv2DBias;
    if (packed_ == nullptr) return f32_rows(ctx, inputs, g, 0, g.n, out);
    thread_local QuantizedRows q;
    quantize_patches(*packed_, x, g, &q);
    const Epilogue e = fused ? Epilogue{inputs[2].as<const float>(), activation_ == ops::attr::kActRelu} : Epilogue{};
    run_dynamic_columns(ctx, *packed_, q, rows, out, cout, e);
    const size_t per_image = size_t(g.oh * g.ow);
    for (int64_t n = 0; n < g.n; ++n) {
      float* image_out = out + size_t(n) * per_image * cout;
      if (q.finite[size_t(n) * per_image] == 0) {
        SG_RETURN_IF_ERROR(f32_rows(ctx, inputs, g, n, n + 1, out));
      } else if (activation_ == ops::attr::kActTanh) {
        for (size_t r = 0; r < per_image; ++r) tanh_of(image_out + r * cout, cout);
      }
    }
    return Status::Ok();
  }

  const char* name() const override { return name_.c_str(); }
  size_t memory_bytes() const override {
    return patches_.capacity() * sizeof(float) + weight_only_->memory_bytes();
  }

 private:
  // The window and shapes of this call; an internal error when they do not fit the filter.
  Status geometry(std::span<const TensorRef> inputs, const TensorRef& o, PatchGeometry& g) const {
    const TensorRef& x = inputs[0];
    const int64_t kh = filter_.dims[0], kw = filter_.dims[1], cin = filter_.dims[2], cout = filter_.dims[3];
    const bool fused = op_ == ops::OpId::Conv2DBias;
    if (x.dtype != DType::kF32 || o.dtype != DType::kF32 || x.rank != 4 || o.rank != 4 || x.shape[3] != cin ||
        o.shape[3] != cout || o.shape[0] != x.shape[0] || inputs.size() != (fused ? 3u : 2u) ||
        (fused && (inputs[2].rank != 1 || inputs[2].shape[0] != cout)))
      return internal_error(name_ + ": input " + shape_text(x) + " and output " + shape_text(o) + " for filter [" +
                            std::to_string(kh) + ", " + std::to_string(kw) + ", " + std::to_string(cin) + ", " +
                            std::to_string(cout) + "]");
    const std::string& padding = attrs_.s(ops::attr::kConvPadding);
    Window wy, wx;
    SG_RETURN_IF_ERROR(make_window(name_.c_str(), padding, x.shape[1], o.shape[1], kh,
                                   attr_pair(attrs_, ops::attr::kConvStride, 0),
                                   attr_pair(attrs_, ops::attr::kConvDilation, 0), wy));
    SG_RETURN_IF_ERROR(make_window(name_.c_str(), padding, x.shape[2], o.shape[2], kw,
                                   attr_pair(attrs_, ops::attr::kConvStride, 1),
                                   attr_pair(attrs_, ops::attr::kConvDilation, 1), wx));
    g = PatchGeometry{x.shape[0], x.shape[1], x.shape[2], cin, kh,        kw,         wy.out,        wx.out,
                      wy.stride,  wx.stride,  wy.dilation, wx.dilation, wy.pad_before, wx.pad_before};
    return Status::Ok();
  }

  // Images [n0, n1) in f32 over the widened weights: their patches, then the
  // weight-only dense kernel (bias and activation included).
  Status f32_rows(const KernelContext& ctx, std::span<const TensorRef> inputs, const PatchGeometry& g, int64_t n0,
                  int64_t n1, float* out) {
    const int64_t per_image = g.oh * g.ow, k = g.kh * g.kw * g.c, cout = filter_.dims[3];
    const int64_t rows = (n1 - n0) * per_image;
    patches_.resize(size_t(rows * k));
    const float* x = inputs[0].as<const float>();
    for (int64_t n = n0; n < n1; ++n) {
      PatchGeometry one = g;
      one.n = 1;
      gather_f32(one, x + n * g.h * g.w * g.c, patches_.data() + (n - n0) * per_image * k, size_t(k));
    }
    const bool fused = op_ == ops::OpId::Conv2DBias;
    TensorRef dense_in[3] = {TensorRef{DType::kF32, 2, {rows, k}, patches_.data()}, inputs[1],
                             fused ? inputs[2] : TensorRef{}};
    TensorRef dense_out[1] = {TensorRef{DType::kF32, 2, {rows, cout}, out + n0 * per_image * cout}};
    return weight_only_->run(ctx, std::span<const TensorRef>(dense_in, fused ? 3 : 2), dense_out);
  }

  // One image's patch rows in f32, zeros outside it.
  static void gather_f32(const PatchGeometry& g, const float* image, float* dst, size_t k) {
    for (int64_t oy = 0; oy < g.oh; ++oy)
      for (int64_t ox = 0; ox < g.ow; ++ox, dst += k)
        for (int64_t i = 0; i < g.kh; ++i)
          for (int64_t j = 0; j < g.kw; ++j) {
            const int64_t iy = oy * g.sy + i * g.dy - g.py, ix = ox * g.sx + j * g.dx - g.px;
            float* to = dst + (i * g.kw + j) * g.c;
            if (iy < 0 || iy >= g.h || ix < 0 || ix >= g.w) std::fill(to, to + g.c, 0.0f);
            else std::copy(image + (iy * g.w + ix) * g.c, image + (iy * g.w + ix + 1) * g.c, to);
          }
  }

  void tanh_of(float* row, size_t n) const {
    if (tanh_row_ != nullptr) tanh_row_(row, row, n);
    else
      for (size_t i = 0; i < n; ++i) row[i] = std::tanh(row[i]);
  }

  ops::OpId op_;
  ops::Attrs attrs_;
  Layout filter_;
  std::shared_ptr<const PackedWeights> packed_;
  std::unique_ptr<QuantizedDense> weight_only_;
  void (*tanh_row_)(const float*, float*, size_t);
  int64_t activation_ = 0;
  std::vector<float> patches_;
  std::string name_;
};

// take(table, indices) along axis 0: each row read is widened on its own.
class QuantizedTake final : public PreparedKernel {
 public:
  QuantizedTake(const Layout& l, const uint8_t* data, const uint8_t* scales) : layout_(l) {
    view_ = WeightView{&layout_, data, scales};
    name_ = std::string("quant:take:") + storage_name(l.storage);
  }

  Status run(const KernelContext&, std::span<const TensorRef> inputs, std::span<TensorRef> outputs) override {
    const TensorRef& idx = inputs[1];
    TensorRef& o = outputs[0];
    const int64_t rows = layout_.dims[0];
    uint64_t inner = 1;
    for (size_t d = 1; d < layout_.dims.size(); ++d) inner *= uint64_t(layout_.dims[d]);
    const int64_t count = idx.numel();
    if (o.dtype != DType::kF32 || uint64_t(o.numel()) != uint64_t(count) * inner ||
        (idx.dtype != DType::kI32 && idx.dtype != DType::kI64))
      return internal_error(name_ + ": indices " + shape_text(idx) + " -> output " + shape_text(o));
    float* dst = o.as<float>();
    for (int64_t i = 0; i < count; ++i) {
      int64_t r = idx.dtype == DType::kI32 ? int64_t(idx.as<const int32_t>()[i]) : idx.as<const int64_t>()[i];
      if (r < -rows || r >= rows)
        return runtime_error("take: index " + std::to_string(r) + " is out of bounds for axis 0 with size " +
                             std::to_string(rows));
      if (r < 0) r += rows;
      dequantize(view_, uint64_t(r) * inner, inner, dst + uint64_t(i) * inner);
    }
    return Status::Ok();
  }

  const char* name() const override { return name_.c_str(); }

 private:
  Layout layout_;
  WeightView view_;
  std::string name_;
};

}  // namespace

bool reads_quantized(ops::OpId op, const ops::Attrs& attrs, size_t input, const Layout& l, bool dynamic) {
  if (l.storage == Storage::kF32) return false;
  switch (op) {
    case ops::OpId::MatMul:
    case ops::OpId::FullyConnected: return input == 1 && l.dims.size() == 2;
    case ops::OpId::Take:
      return input == 0 && !l.dims.empty() && !attrs.values.empty() && attrs.i(ops::attr::kAxisValue) == 0;
    case ops::OpId::Conv2D:
    case ops::OpId::Conv2DBias:
      // int8 filters of one group, with activations quantized on a dynamic kernel
      // (weight-only im2col ran cnn 17x slower than the f32 convolution). int4 ones
      // (and bf16/f16) run f32 over the widened copy: on cnn's convolutions (many rows, short K blocks: 3, 16, 32 channels) the
      // int4 dynamic kernel's nibble unpacking and per-block scaling ran 2-9x slower
      // than the f32 convolution (docs/QUANTIZATION.md).
      return input == 1 && l.dims.size() == 4 && l.storage == Storage::kInt8 &&
             attrs.values.size() > size_t(ops::attr::kConvGroups) && attrs.i(ops::attr::kConvGroups) == 1 &&
             dynamic && best_dyn_isa(gemm_layout(l)) != DynIsa::kReference;
    default: return false;
  }
}

std::unique_ptr<PreparedKernel> prepare_quantized(ops::OpId op, const ops::Attrs& attrs, const Layout& l,
                                                  const uint8_t* data, const uint8_t* scales, GemmIsa isa,
                                                  std::shared_ptr<const PackedWeights> packed,
                                                  void (*tanh_row)(const float*, float*, size_t),
                                                  std::shared_ptr<const HalfPanels> half) {
  if (op == ops::OpId::Take) return std::make_unique<QuantizedTake>(l, data, scales);
  if (op == ops::OpId::Conv2D || op == ops::OpId::Conv2DBias) {
    const bool fused = op == ops::OpId::Conv2DBias;
    const int64_t activation = fused ? attrs.i(ops::attr::kConvActivation) : 0;
    auto weight_only = std::make_unique<QuantizedDense>(fused ? ops::OpId::FullyConnected : ops::OpId::MatMul,
                                                        activation, gemm_layout(l), data, scales, isa, nullptr,
                                                        tanh_row, nullptr);
    return std::make_unique<QuantizedConv>(op, attrs, l, std::move(packed), std::move(weight_only), tanh_row);
  }
  const int64_t activation = op == ops::OpId::FullyConnected ? attrs.i(ops::attr::kFcActivation) : 0;
  return std::make_unique<QuantizedDense>(op, activation, l, data, scales, isa, std::move(packed), tanh_row,
                                          std::move(half));
}

std::unique_ptr<PreparedKernel> prepare_quantized(ops::OpId op, const ops::Attrs& attrs, const Layout& l,
                                                  const uint8_t* data, const uint8_t* scales, GemmIsa isa) {
  return prepare_quantized(op, attrs, l, data, scales, isa, nullptr, nullptr);
}

std::unique_ptr<PreparedKernel> prepare_quantized(ops::OpId op, const ops::Attrs& attrs, const Layout& l,
                                                  const uint8_t* data, const uint8_t* scales) {
  return prepare_quantized(op, attrs, l, data, scales, best_gemm_isa(l));
}

}  // namespace sg::kernels::quant
