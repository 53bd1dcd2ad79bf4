// The kernels that read a quantized constant in place (SPEC.md §13): a dense layer
// (matmul with the weight as its [K][N] right operand, fully_connected), a
// convolution of one group with an int8 filter (conv2d, conv2d_bias: its
// patches through the dense kernel), and take along axis 0 of an embedding table,
// which widens only the rows it reads. The runtime gives every other use of such a
// constant its f32 values.
#pragma once

#include <memory>

#include "interface/kernel.h"
#include "quant/dynamic_gemm.h"
#include "quant/half_gemm.h"
#include "quant/quantized_gemm.h"
#include "quant/weight_format.h"

namespace sg::kernels::quant {

// Whether input `input` of a node (op, attrs) has a kernel here when it is a
// quantized constant of layout `l` (the node's other inputs f32 or indices).
// `dynamic`: the Program quantizes activations (LoadOptions::dynamic_quantization);
// a convolution reads its filter only then, and only where a dynamic kernel runs
// (else the f32 convolution over the widened filter is the faster).
bool reads_quantized(ops::OpId op, const ops::Attrs& attrs, size_t input, const Layout& l, bool dynamic = true);

// The kernel for such a node; `data` and `scales` stay valid while it lives. `isa`
// forces a kernel (tests compare them); by default the best this CPU runs.
std::unique_ptr<PreparedKernel> prepare_quantized(ops::OpId op, const ops::Attrs& attrs, const Layout& l,
                                                  const uint8_t* data, const uint8_t* scales);
std::unique_ptr<PreparedKernel> prepare_quantized(ops::OpId op, const ops::Attrs& attrs, const Layout& l,
                                                  const uint8_t* data, const uint8_t* scales, GemmIsa isa);
// With `packed` (pack_weights of the same weights): a dense layer quantizes its
// activations per run and multiplies in integers (dynamic_gemm.h); rows holding a
// non-finite value, and every row without `packed`, run the weight-only kernel `isa`.
std::unique_ptr<PreparedKernel> prepare_quantized(ops::OpId op, const ops::Attrs& attrs, const Layout& l,
                                                  const uint8_t* data, const uint8_t* scales, GemmIsa isa,
                                                  std::shared_ptr<const PackedWeights> packed,
                                                  void (*tanh_row)(const float*, float*, size_t) = nullptr,
                                                  std::shared_ptr<const HalfPanels> half = nullptr);
// `tanh_row`: fully_connected's tanh activation over a row (y may be x), the f32
// kernels' vectorized tanh where the runtime has one; null: std::tanh per element.
// `half` (pack_half of the same bf16 or f16 weights): a dense layer runs that panel
// kernel (half_gemm.h) instead of `isa`.

}  // namespace sg::kernels::quant
