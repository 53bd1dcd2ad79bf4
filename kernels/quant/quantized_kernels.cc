#include "quant/quantized_kernels.h"

#include <cmath>
#include <span>
#include <string>
#include <vector>

#include "reference/reference_kernels.h"

namespace sg::kernels::quant {
namespace {

std::string shape_text(const TensorRef& t) {
  std::string s = "[";
  for (int i = 0; i < t.rank; ++i) s += (i > 0 ? ", " : "") + std::to_string(t.shape[i]);
  return s + "]";
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
    DynTask task{packed_.get(), &rows, p.m, p.c, p.n, dynamic_column_tile(packed_->isa), e};
    const size_t tiles = (p.n + task.tile - 1) / task.tile;
    if (ctx.team != nullptr && tiles > 1) ctx.team->run(&DynTask::run, &task, tiles);
    else
      for (size_t i = 0; i < tiles; ++i) DynTask::run(&task, i);
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

bool reads_quantized(ops::OpId op, const ops::Attrs& attrs, size_t input, const Layout& l) {
  if (l.storage == Storage::kF32) return false;
  switch (op) {
    case ops::OpId::MatMul:
    case ops::OpId::FullyConnected: return input == 1 && l.dims.size() == 2;
    case ops::OpId::Take:
      return input == 0 && !l.dims.empty() && !attrs.values.empty() && attrs.i(ops::attr::kAxisValue) == 0;
    default: return false;
  }
}

std::unique_ptr<PreparedKernel> prepare_quantized(ops::OpId op, const ops::Attrs& attrs, const Layout& l,
                                                  const uint8_t* data, const uint8_t* scales, GemmIsa isa,
                                                  std::shared_ptr<const PackedWeights> packed,
                                                  void (*tanh_row)(const float*, float*, size_t),
                                                  std::shared_ptr<const HalfPanels> half) {
  if (op == ops::OpId::Take) return std::make_unique<QuantizedTake>(l, data, scales);
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
