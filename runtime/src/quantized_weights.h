// Constants stored quantized or in half precision (SPEC.md §13) at run time. Each
// value of such a constant keeps its layout and stored bytes (read in place by the
// kernels of kernels/quant/) and its f32 values, widened once at load, for every
// other use (any op, control flow, a result).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <span>
#include <vector>

#include "interface/kernel.h"
#include "quant/weight_format.h"
#include "stagegraph_generated.h"

namespace sg::runtime {

struct QuantizedConstant {
  kernels::quant::Layout layout;
  const uint8_t* data = nullptr;    // in the data segment
  const uint8_t* scales = nullptr;  // in the data segment, or null
  std::vector<float> values;        // the widened f32 tensor (and 16 bytes of slack)
};

// The quantized constants of a graph, decoded once per (constant, shape).
class QuantizedConstants {
 public:
  QuantizedConstants(const fb::Graph& g, std::span<const uint8_t> data) : g_(g), data_(data) {}
  // Null when constant `c` is stored as plain bytes of its dtype.
  std::shared_ptr<const QuantizedConstant> get(uint32_t c, const std::vector<int64_t>& dims);

 private:
  const fb::Graph& g_;
  std::span<const uint8_t> data_;
  std::map<std::pair<uint32_t, std::vector<int64_t>>, std::shared_ptr<const QuantizedConstant>> decoded_;
};

// The kernel of an op node one of whose inputs is a quantized constant it reads in
// place (kernels::quant::reads_quantized), else null. `quant[i]` is input i's.
std::unique_ptr<kernels::PreparedKernel> quantized_kernel(
    ops::OpId op, const ops::Attrs& attrs, std::span<const QuantizedConstant* const> quant);

}  // namespace sg::runtime
