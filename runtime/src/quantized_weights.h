// Constants stored quantized or in half precision (SPEC.md §13) at run time. Each
// value of such a constant keeps its layout and stored bytes (read in place by the
// kernels of kernels/quant/), int8 and int4 dense weights their column panels for
// the kernels over quantized activations (packed once, on first use, shared by the
// Sessions), and, only when some use has no quantized kernel (another op, control
// flow, a result), its f32 values widened once at load.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <span>
#include <vector>

#include "interface/kernel.h"
#include "quant/dynamic_gemm.h"
#include "quant/half_gemm.h"
#include "quant/weight_format.h"
#include "stagegraph_generated.h"

namespace sg::runtime {

struct QuantizedConstant {
  kernels::quant::Layout layout;
  const uint8_t* data = nullptr;    // in the data segment
  const uint8_t* scales = nullptr;  // in the data segment, or null
  // The widened f32 tensor (and 16 bytes of slack); empty when every use of the
  // constant has a quantized kernel (widen_quantized decides, at load).
  std::vector<float> values;
  bool widened() const { return !values.empty(); }
  // The weights packed for kernels::quant::dynamic_gemm_columns, made on first call
  // (thread-safe); null where the layout or the CPU has no such kernel.
  std::shared_ptr<const kernels::quant::PackedWeights> packed() const;
  // bf16 and f16 dense weights packed for kernels::quant::half_gemm_columns' kernel
  // `isa` (the same for every call: best_half_isa), made on first call
  // (thread-safe); null for kNone.
  std::shared_ptr<const kernels::quant::HalfPanels> half_panels(kernels::quant::HalfIsa isa) const;

 private:
  mutable std::once_flag pack_once_, half_once_;
  mutable std::shared_ptr<const kernels::quant::PackedWeights> packed_;
  mutable std::shared_ptr<const kernels::quant::HalfPanels> half_;
};

// Fills q.values with the constant's f32 values.
void widen_quantized(QuantizedConstant& q);
// Whether input `input` of an op node (op, attrs) reading quantized constant `q` has
// a kernel that reads the stored bytes (so needs no f32 copy); `dynamic`:
// LoadOptions::dynamic_quantization.
bool has_quantized_kernel(ops::OpId op, const ops::Attrs& attrs, size_t input, const QuantizedConstant& q,
                          bool dynamic);

// The quantized constants of a graph, decoded once per (constant, shape).
class QuantizedConstants {
 public:
  QuantizedConstants(const fb::Graph& g, std::span<const uint8_t> data) : g_(g), data_(data) {}
  // Null when constant `c` is stored as plain bytes of its dtype.
  // Not yet widened: see widen_quantized.
  std::shared_ptr<QuantizedConstant> get(uint32_t c, const std::vector<int64_t>& dims);

 private:
  const fb::Graph& g_;
  std::span<const uint8_t> data_;
  std::map<std::pair<uint32_t, std::vector<int64_t>>, std::shared_ptr<QuantizedConstant>> decoded_;
};

// The kernel of an op node one of whose inputs is a quantized constant it reads in
// place (kernels::quant::reads_quantized), else null. `quant[i]` is input i's.
// `dynamic`: int8 and int4 dense layers quantize their activations per run (the
// default); false: weight-only, f32 products over the widened weights.
std::unique_ptr<kernels::PreparedKernel> quantized_kernel(
    ops::OpId op, const ops::Attrs& attrs, std::span<const QuantizedConstant* const> quant, bool dynamic = true);

}  // namespace sg::runtime
