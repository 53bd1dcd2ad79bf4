// graph-compile --quantize (SPEC.md §13): which constants the graph file stores
// quantized or in half precision, and their stored bytes. The weights of dense
// layers (matmul's right operand, fully_connected) and convolutions (their
// filters) take the storage asked for; embedding tables (take's first operand)
// only with `embeddings`; a weight loaded with sg.weight(name, quantize=...) takes
// its own; everything else stays f32. Layouts are default_layout's.
#pragma once

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "ir/ir.h"
#include "quant/weight_format.h"

namespace sg::compiler {

struct QuantizeOptions {
  std::optional<kernels::quant::Storage> storage;  // --quantize; none: only per-weight requests
  bool embeddings = false;                          // --quantize-embeddings
};

struct QuantizedConstant {
  int32_t constant = -1;  // index into Module::constants
  std::string name;       // the weight's, or "constant N"
  kernels::quant::Layout layout;
  kernels::quant::Quantized stored;
  // Against the f32 values read: bytes before and after, max and mean abs error.
  uint64_t f32_bytes = 0;
  double max_abs_error = 0, mean_abs_error = 0;
  uint64_t stored_bytes() const { return stored.data.size() + stored.scales.size(); }
};

// The constants to store quantized, in constant order. `notes` gets a line for each
// weight that was asked for but stays f32 (non-finite values, a variable's initial
// value, not f32).
std::vector<QuantizedConstant> quantize_constants(const ir::Module& m, const QuantizeOptions& o,
                                                  std::vector<std::string>* notes);

// --quantize-report: one line per weight, then the totals.
void print_quantize_report(const std::vector<QuantizedConstant>& q, std::ostream& out);

}  // namespace sg::compiler
