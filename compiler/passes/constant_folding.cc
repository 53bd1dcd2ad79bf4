// Constant folding with the reference kernels: the values the runtime would
// compute, computed once here. A node folds when every input is a constant, its
// op has no effect, its result types are static, and the result does not grow
// the file (see fold_constants in passes.h). A kernel error (an integer division
// by zero, an index out of range) leaves the node for the run, which reports it
// with the node's source location.
#include <algorithm>
#include <cstring>
#include <optional>
#include <vector>

#include "passes/pass_util.h"
#include "passes/passes.h"
#include "interface/kernel.h"

namespace sg::compiler::passes {
namespace {

// A result this small folds even when it frees nothing: the node it replaces
// takes more room in the file than the constant does.
constexpr size_t kAlwaysFoldBytes = 16;
// Nor does a node fold whose evaluation takes more multiply-adds than this
// (ops::op_work): a matmul of two 2048 x 2048 weights (2^33) is left to the run
// rather than costing the compiler seconds.
constexpr uint64_t kMaxFoldWork = uint64_t(1) << 28;

struct Folded {
  std::vector<ir::Constant> outputs;
};

// Computes the node's outputs, or nullopt when it must stay a node.
std::optional<Folded> evaluate(const ir::Module& m, const ir::Function& f, const ir::Node& n, size_t freed_bytes) {
  const size_t count = n.inputs.size();
  std::vector<ops::TensorType<int64_t>> types(count);
  std::vector<std::optional<int64_t>> scalars(count);
  std::vector<kernels::TensorRef> refs(count);
  for (size_t i = 0; i < count; ++i) {
    const ir::Constant& k = *constant_of(m, f, n.inputs[i]);
    if (k.shape.size() > size_t(kernels::kMaxRank)) return std::nullopt;
    types[i] = ops::TensorType<int64_t>{k.dtype, k.shape};
    if (k.shape.empty() && (k.dtype == DType::kI64 || k.dtype == DType::kI32)) {
      if (k.dtype == DType::kI64) {
        int64_t v;
        std::memcpy(&v, k.bytes.data(), 8);
        scalars[i] = v;
      } else {
        int32_t v;
        std::memcpy(&v, k.bytes.data(), 4);
        scalars[i] = v;
      }
    }
    kernels::TensorRef& r = refs[i];
    r.dtype = k.dtype;
    r.rank = int(k.shape.size());
    for (size_t d = 0; d < k.shape.size(); ++d) r.shape[d] = k.shape[d];
    r.data = const_cast<uint8_t*>(k.bytes.data());  // kernels only read inputs
  }
  std::vector<ops::TensorType<int64_t>> out_types;
  ops::ConcreteInferContext ctx;
  if (!ops::infer<int64_t>(n.op, n.attrs, types, scalars, out_types, ctx).ok()) return std::nullopt;
  if (out_types.size() != n.outputs.size()) return std::nullopt;
  if (ops::op_work(n.op, types, out_types) > kMaxFoldWork) return std::nullopt;

  Folded folded;
  size_t out_bytes = 0;
  std::vector<size_t> output_bytes;
  for (size_t o = 0; o < out_types.size(); ++o) {
    // The IR's type must be this static type, or later nodes' types would not match.
    const ir::Type& declared = f.values[size_t(n.outputs[o])].type;
    const std::optional<std::vector<int64_t>> shape = static_shape(declared);
    if (!shape || *shape != out_types[o].shape || declared.dtype != out_types[o].dtype) return std::nullopt;
    if (shape->size() > size_t(kernels::kMaxRank)) return std::nullopt;
    ir::Constant k;
    k.dtype = declared.dtype;
    k.shape = *shape;
    size_t bytes = dtype_size(k.dtype);
    for (int64_t d : k.shape)
      if (__builtin_mul_overflow(bytes, size_t(d), &bytes)) return std::nullopt;
    if (__builtin_add_overflow(out_bytes, bytes, &out_bytes)) return std::nullopt;
    output_bytes.push_back(bytes);
    folded.outputs.push_back(std::move(k));
  }
  // Sized before anything is allocated: a Full of a huge shape stays a node.
  if (out_bytes > freed_bytes && out_bytes > kAlwaysFoldBytes) return std::nullopt;
  for (size_t o = 0; o < folded.outputs.size(); ++o) folded.outputs[o].bytes.assign(output_bytes[o], 0);

  std::vector<kernels::TensorRef> outs(folded.outputs.size());
  for (size_t o = 0; o < outs.size(); ++o) {
    ir::Constant& k = folded.outputs[o];
    outs[o].dtype = k.dtype;
    outs[o].rank = int(k.shape.size());
    for (size_t d = 0; d < k.shape.size(); ++d) outs[o].shape[d] = k.shape[d];
    outs[o].data = k.bytes.data();
  }
  std::vector<uint8_t> scratch(kernels::reference_scratch_size(n.op, n.attrs, refs));
  kernels::KernelContext kctx;
  kctx.scratch = scratch.data();
  kctx.scratch_size = scratch.size();
  if (!kernels::reference_kernel(n.op)(kctx, n.attrs, refs, outs).ok()) return std::nullopt;
  return folded;
}

bool foldable(const ir::Function& f, const ir::Node& n) {
  if (n.kind != ir::NodeKind::kOp || ops::has_flag(n.op, ops::kSideEffect) || n.outputs.empty()) return false;
  for (int32_t v : n.inputs)
    if (f.values[size_t(v)].constant < 0) return false;
  return true;
}

}  // namespace

bool fold_constants(ir::Module& m) {
  // How many values refer to each constant, module-wide: a constant's bytes leave
  // the file only when its one value's last use folds.
  std::vector<int32_t> refs(m.constants.size(), 0);
  for (const ir::Function& f : m.functions)
    for (const ir::Value& v : f.values)
      if (v.constant >= 0) ++refs[size_t(v.constant)];
  for (const ir::Variable& v : m.variables) ++refs[size_t(v.constant)];  // an initial value stays

  bool changed = false;
  for (ir::Function& f : m.functions) {
    std::vector<int32_t> uses = count_uses(f);
    std::vector<bool> erase(f.nodes.size(), false);
    for (size_t i = 0; i < f.nodes.size(); ++i) {
      const ir::Node& n = f.nodes[i];
      if (!foldable(f, n)) continue;
      size_t freed = 0;
      std::vector<int32_t> distinct;
      for (int32_t v : n.inputs) {
        if (std::find(distinct.begin(), distinct.end(), v) != distinct.end()) continue;
        distinct.push_back(v);
        const int32_t k = f.values[size_t(v)].constant;
        const auto in_node = std::count(n.inputs.begin(), n.inputs.end(), v);
        if (refs[size_t(k)] == 1 && uses[size_t(v)] == in_node) freed += m.constants[size_t(k)].bytes.size();
      }
      std::optional<Folded> folded = evaluate(m, f, n, freed);
      if (!folded) continue;
      for (int32_t v : n.inputs) --uses[size_t(v)];
      for (size_t o = 0; o < n.outputs.size(); ++o) {
        f.values[size_t(n.outputs[o])].constant = int32_t(m.constants.size());
        m.constants.push_back(std::move(folded->outputs[o]));
        refs.push_back(1);
      }
      erase[i] = changed = true;
    }
    erase_nodes(f, erase);
  }
  return changed;
}

}  // namespace sg::compiler::passes
