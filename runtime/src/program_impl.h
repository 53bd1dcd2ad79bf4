// The decoded, immutable form of a loaded graph: what the executor runs. Built once
// by program.cc after the loader and the verifier have accepted the file, so the
// executor's hot loop trusts every index, kernel pointer and attribute in here.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "file_map.h"
#include "ops/attrs.h"
#include "ops/op_table.h"
#include "interface/kernel.h"
#include "quantized_weights.h"
#include "sgraph_header.h"
#include "stagegraph/runtime.h"
#include "stagegraph/tensor.h"

namespace sg {

namespace runtime {

enum class NodeKind : uint8_t { kOp = 0, kIf = 1, kWhile = 2, kCall = 3 };

struct ValueInfo {
  DType dtype = DType::kF32;
  // Declared dims: >= 0 static, -1 symbolic (checked only at entry inputs).
  std::vector<int64_t> dims;
  bool is_constant = false;
  Tensor constant;  // a wrapped view of the mapped data segment when is_constant
  // A constant stored quantized: its layout and stored bytes; `constant` then wraps
  // its widened f32 values (SPEC.md §13).
  std::shared_ptr<QuantizedConstant> quant;
  // What a loop keeps per iteration for a gradient (the compiler names it
  // "gradient tape"): profile() reports its bytes.
  bool tape = false;
};

struct NodeInfo {
  NodeKind kind = NodeKind::kOp;
  ops::OpId op = ops::OpId::Add;  // meaningful for kOp
  kernels::KernelFn kernel = nullptr;
  ops::Attrs attrs;
  bool value_dependent_shape = false;
  // Its output's length is what its kernel family reports from the operands'
  // values (ops::kDataDependentShape): always inferred when it runs.
  bool data_dependent_shape = false;
  std::vector<uint32_t> inputs;
  std::vector<uint32_t> outputs;
  std::vector<uint32_t> functions;  // If: [then, else]; While: [cond, body]; Call: [callee]
  // Values whose last use is this node: released once its inputs are consumed.
  std::vector<uint32_t> release_after;
  // Outputs nothing reads: dropped as soon as they are produced.
  std::vector<uint32_t> dead_outputs;
  std::string op_name;   // "add", ..., or "if" / "while" / "call"
  std::string location;  // "FILE:LINE:COL"
};

struct FunctionImpl {
  std::string name;
  std::vector<ValueInfo> values;
  std::vector<uint32_t> params;
  std::vector<uint32_t> results;
  std::vector<NodeInfo> nodes;
};

struct EntryImpl {
  uint32_t function = 0;
};

// A variable's initial value: a view of the mapped data segment.
struct VariableImpl {
  Tensor initial;
};

}  // namespace runtime

class ProgramImpl {
 public:
  // Keeps the bytes alive: a file mapping, an aligned copy, or nothing when the
  // caller owns aligned memory (Program::load_memory).
  runtime::MappedBytes bytes;
  uint16_t major = 0;
  uint16_t minor = 0;
  std::vector<runtime::FunctionImpl> functions;
  std::vector<EntryInfo> entries;
  std::vector<runtime::EntryImpl> entry_impls;  // parallel to entries
  std::vector<TensorSpec> variables;
  std::vector<runtime::VariableImpl> variable_impls;  // parallel to variables
  uint64_t constant_bytes = 0;
  // The data segment (inside `bytes`; its checksum is checked on load unless
  // LoadOptions::verify_data is false) and the file's header.
  std::span<const uint8_t> data_segment;
  format::Header header;

  // True when `p` points into the graph's own bytes (a constant): such results are
  // copied before they leave a Session, so they never outlive the Program.
  bool owns_pointer(const void* p) const {
    if (bytes.contains(p)) return true;
    for (const auto& q : widened_constants)
      if (p >= static_cast<const void*>(q->values.data()) && p < static_cast<const void*>(q->values.data() + q->values.size()))
        return true;
    return false;
  }
  // The quantized constants widened to f32 at load (SPEC.md §13): those with a use
  // that no quantized kernel serves.
  std::vector<std::shared_ptr<runtime::QuantizedConstant>> widened_constants;
  // LoadOptions::dynamic_quantization.
  bool dynamic_quantization = true;
};

namespace runtime {

// The runtime's way into a Program, which the public header keeps opaque: only
// code that includes this internal header builds a Program or reads its impl.
struct ProgramAccess {
  static std::shared_ptr<const Program> make(std::unique_ptr<ProgramImpl> impl) {
    return std::shared_ptr<const Program>(new Program(std::move(impl)));
  }
  static const ProgramImpl& impl(const Program& program) { return *program.impl_; }
};

inline const ProgramImpl& program_impl(const Program& program) { return ProgramAccess::impl(program); }

}  // namespace runtime
}  // namespace sg
