#include "quantized_weights.h"

#ifndef SG_SELECTED_OPS_INC
#include "quant/quantized_kernels.h"
#endif
#if defined(SG_HAVE_XNNPACK) && !defined(SG_SELECTED_OPS_INC)
#include "xnnpack/xnnpack_backend.h"
#endif

namespace sg::runtime {

std::shared_ptr<QuantizedConstant> QuantizedConstants::get(uint32_t c, const std::vector<int64_t>& dims) {
  const auto* table = g_.quantized();
  if (table == nullptr) return nullptr;
  const fb::QuantizedConstant* record = nullptr;
  for (const fb::QuantizedConstant* q : *table)
    if (q->constant() == c) record = q;
  if (record == nullptr) return nullptr;
  auto key = std::make_pair(c, dims);
  if (auto it = decoded_.find(key); it != decoded_.end()) return it->second;
  auto q = std::make_shared<QuantizedConstant>();
  q->layout.storage = kernels::quant::Storage(record->storage());
  q->layout.axis = record->axis();
  q->layout.block = record->block_size();
  q->layout.scale_type = kernels::quant::ScaleType(record->scale_type());
  q->layout.dims = dims;
  q->data = data_.data() + g_.constants()->Get(c)->offset();
  if (record->scales() >= 0) q->scales = data_.data() + g_.constants()->Get(uint32_t(record->scales()))->offset();
  decoded_.emplace(std::move(key), q);
  return q;
}

void widen_quantized(QuantizedConstant& q) {
  if (q.widened()) return;
  const uint64_t n = kernels::quant::element_count(q.layout);
  q.values.assign(n + 16, 0.0f);
  kernels::quant::dequantize(kernels::quant::WeightView{&q.layout, q.data, q.scales}, 0, n, q.values.data());
}

bool has_quantized_kernel(ops::OpId op, const ops::Attrs& attrs, size_t input, const QuantizedConstant& q,
                          bool dynamic) {
#ifdef SG_SELECTED_OPS_INC
  (void)op;
  (void)attrs;
  (void)input;
  (void)q;
  (void)dynamic;
  return false;
#else
  return kernels::quant::reads_quantized(op, attrs, input, q.layout, dynamic);
#endif
}

std::shared_ptr<const kernels::quant::PackedWeights> QuantizedConstant::packed() const {
#ifdef SG_SELECTED_OPS_INC
  return nullptr;
#else
  std::call_once(pack_once_, [this] {
    // A convolution's filter packs as its [kh*kw*I][O] matrix.
    const kernels::quant::Layout dense = kernels::quant::gemm_layout(layout);
    const kernels::quant::DynIsa isa = kernels::quant::best_dyn_isa(dense);
    if (isa != kernels::quant::DynIsa::kReference)
      packed_ = kernels::quant::pack_weights(kernels::quant::WeightView{&dense, data, scales}, isa);
  });
  return packed_;
#endif
}

std::shared_ptr<const kernels::quant::HalfPanels> QuantizedConstant::half_panels(kernels::quant::HalfIsa isa) const {
#ifdef SG_SELECTED_OPS_INC
  (void)isa;
  return nullptr;
#else
  std::call_once(half_once_, [this, isa] {
    if (isa != kernels::quant::HalfIsa::kNone)
      half_ = kernels::quant::pack_half(kernels::quant::WeightView{&layout, data, scales}, isa);
  });
  return half_;
#endif
}

std::unique_ptr<kernels::PreparedKernel> quantized_kernel(
    ops::OpId op, const ops::Attrs& attrs, std::span<const QuantizedConstant* const> quant, bool dynamic) {
#ifdef SG_SELECTED_OPS_INC
  // The mobile core (every source compiled with an op selection): quantized weights
  // run through their widened f32 values, and no quantized kernel is linked.
  (void)op;
  (void)attrs;
  (void)quant;
  (void)dynamic;
  return nullptr;
#else
  for (size_t i = 0; i < quant.size(); ++i) {
    const QuantizedConstant* q = quant[i];
    if (q != nullptr && kernels::quant::reads_quantized(op, attrs, i, q->layout, dynamic)) {
      std::shared_ptr<const kernels::quant::PackedWeights> packed;
      const kernels::quant::Layout dense = kernels::quant::gemm_layout(q->layout);
      if (dynamic && op != ops::OpId::Take && kernels::quant::dynamic_layout(dense)) packed = q->packed();
      std::shared_ptr<const kernels::quant::HalfPanels> half;
      if (op == ops::OpId::MatMul || op == ops::OpId::FullyConnected)
        half = q->half_panels(kernels::quant::best_half_isa(q->layout));
      void (*tanh_row)(const float*, float*, size_t) = nullptr;
#ifdef SG_HAVE_XNNPACK
      // fully_connected's tanh as the f32 kernels compute it (sg:tanh_f32).
      tanh_row = kernels::xnnpack_tanh_row();
#endif
      return kernels::quant::prepare_quantized(op, attrs, q->layout, q->data, q->scales,
                                               kernels::quant::best_gemm_isa(dense), std::move(packed), tanh_row,
                                               std::move(half));
    }
  }
  return nullptr;
#endif
}

}  // namespace sg::runtime
