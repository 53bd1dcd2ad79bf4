// graph-inspect --op-table: every op of the op table with the operand dtypes its
// shape/dtype rule accepts; --ops GRAPH...: the ops a set of graphs needs, the
// list a selective build (-DSG_SELECTED_OPS=FILE) is made from. The dtypes are not listed anywhere by hand: each op's
// rule is asked, through ops::infer, about a small well-formed call with each dtype
// in turn, so the list cannot drift from the rules. The op-coverage test reads it.
#include "graph_inspect.h"

#include <iostream>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "ops/infer.h"
#include "stagegraph/runtime.h"
#include "stagegraph_generated.h"
#ifdef SG_HAVE_XNNPACK
#include "xnnpack/coverage.h"
#endif

namespace sg::tools {
namespace {

using ops::AttrKind;
using ops::AttrValue;
using ops::OpId;
using Type = ops::TensorType<int64_t>;

// A call of one op: attributes, operand types and the values of scalar operands.
struct Probe {
  ops::Attrs attrs;
  std::vector<Type> in;
  std::vector<std::optional<int64_t>> scalars;
  const char* role = "x";  // which operand the varied dtype is
};

// Attributes of the op's kinds with neutral values, overwritten per op below.
ops::Attrs default_attrs(OpId op) {
  ops::Attrs attrs;
  for (const ops::AttrSpec& spec : ops::op_def(op).attrs) {
    switch (spec.kind) {
      case AttrKind::kInt: attrs.values.push_back(AttrValue::Int(0)); break;
      case AttrKind::kInts: attrs.values.push_back(AttrValue::Ints({})); break;
      case AttrKind::kFloat: attrs.values.push_back(AttrValue::Float(0)); break;
      case AttrKind::kFloats: attrs.values.push_back(AttrValue::Floats({})); break;
      case AttrKind::kString: attrs.values.push_back(AttrValue::String("")); break;
    }
  }
  return attrs;
}

Type type(DType t, std::vector<int64_t> shape) { return Type{t, std::move(shape)}; }

void set_slice(ops::Attrs& a) {
  using namespace ops::attr;
  a.values[kSliceBegin] = AttrValue::Ints({0, 0});
  a.values[kSliceEnd] = AttrValue::Ints({1, 3});
  a.values[kSliceStep] = AttrValue::Ints({1, 1});
  a.values[kSliceFlags] = AttrValue::Ints({kHasBegin | kHasEnd, kHasBegin | kHasEnd});
}

void set_conv(ops::Attrs& a) {
  using namespace ops::attr;
  a.values[kConvStride] = AttrValue::Ints({1, 1});
  a.values[kConvDilation] = AttrValue::Ints({1, 1});
  a.values[kConvPadding] = AttrValue::String("VALID");
  a.values[kConvGroups] = AttrValue::Int(1);
}

// A well-formed call of `op` whose main operand has dtype `t` (the other
// operands take the dtype the op needs beside it).
Probe probe_for(OpId op, DType t) {
  using namespace ops::attr;
  Probe p;
  p.attrs = default_attrs(op);
  auto& a = p.attrs.values;
  const Type x = type(t, {2, 3});
  if (ops::has_flag(op, ops::kElementwiseBinary)) {
    p.in = {x, x};
    return p;
  }
  if (ops::has_flag(op, ops::kElementwiseUnary)) {
    p.in = {x};
    return p;
  }
  switch (op) {
    case OpId::Where: p.in = {type(DType::kBool, {2, 3}), x, x}; p.role = "values"; break;
    case OpId::Clip: p.in = {x, x, x}; break;
    case OpId::Cast: p.in = {x}; a[kCastDType] = AttrValue::Int(int64_t(DType::kF32)); break;
    case OpId::Sum: case OpId::Mean: case OpId::Max: case OpId::Min: case OpId::Prod:
    case OpId::Any: case OpId::All:
      p.in = {x};
      a[kReduceAxes] = AttrValue::Ints({1});
      break;
    case OpId::ArgMax: case OpId::ArgMin: p.in = {x}; a[kArgAxis] = AttrValue::Int(1); break;
    case OpId::MatMul: p.in = {x, type(t, {3, 4})}; break;
    case OpId::Reshape: p.in = {x}; a[kShapeDims] = AttrValue::Ints({3, 2}); break;
    case OpId::BroadcastTo: p.in = {type(t, {1, 3})}; a[kShapeDims] = AttrValue::Ints({2, 3}); break;
    case OpId::Full: p.in = {type(t, {})}; a[kShapeDims] = AttrValue::Ints({2, 3}); p.role = "value"; break;
    case OpId::Transpose: p.in = {x}; a[kPermAxes] = AttrValue::Ints({1, 0}); break;
    case OpId::ExpandDims: p.in = {x}; a[kAxesList] = AttrValue::Ints({0}); break;
    case OpId::Squeeze: p.in = {type(t, {1, 3})}; a[kAxesList] = AttrValue::Ints({0}); break;
    case OpId::Concatenate: p.in = {x, x}; break;
    case OpId::Slice: p.in = {x}; set_slice(p.attrs); break;
    case OpId::SliceUpdate: p.in = {x, type(t, {1, 3})}; set_slice(p.attrs); break;
    case OpId::Take: p.in = {x, type(DType::kI64, {2})}; break;
    case OpId::ScatterAdd: case OpId::Scatter: p.in = {x, type(DType::kI64, {2}), type(t, {2, 3})}; break;
    case OpId::FlatNonzero: p.in = {x}; break;
    case OpId::Inv: case OpId::Cholesky: case OpId::Slogdet: case OpId::Eigh: p.in = {type(t, {3, 3})}; break;
    case OpId::Solve: case OpId::TriangularSolve: p.in = {type(t, {3, 3}), type(t, {3, 2})}; break;
    case OpId::Qr: p.in = {x}; break;
    case OpId::ShapeDim: p.in = {x}; break;
    case OpId::Softmax: case OpId::LogSoftmax: p.in = {x}; a[kAxisValue] = AttrValue::Int(1); break;
    case OpId::Conv2D: case OpId::Conv2DBias:
      p.in = {type(t, {1, 4, 4, 2}), type(t, {3, 3, 2, 2})};
      if (op == OpId::Conv2DBias) p.in.push_back(type(t, {2}));
      set_conv(p.attrs);
      break;
    case OpId::MaxPool2D: case OpId::AvgPool2D:
      p.in = {type(t, {1, 4, 4, 2})};
      a[kPoolSize] = AttrValue::Ints({2, 2});
      a[kPoolStride] = AttrValue::Ints({2, 2});
      a[kPoolPadding] = AttrValue::String("VALID");
      break;
    case OpId::CumSum: case OpId::Sort: case OpId::ArgSort: case OpId::CumProd:
      p.in = {x};
      a[kAxisValue] = AttrValue::Int(1);
      break;
    case OpId::SearchSorted: p.in = {type(t, {4}), x}; break;
    case OpId::TopK: p.in = {x}; a[kTopKK] = AttrValue::Int(2); a[kTopKAxis] = AttrValue::Int(1); break;
    case OpId::Tile: p.in = {x}; a[kTileReps] = AttrValue::Ints({2, 1}); break;
    case OpId::Pad:
      p.in = {x};
      a[kPadWidths] = AttrValue::Ints({1, 1, 0, 0});
      a[kPadMode] = AttrValue::String("constant");
      break;
    case OpId::Eye:
      a[kEyeN] = AttrValue::Int(2);
      a[kEyeM] = AttrValue::Int(2);
      a[kEyeDType] = AttrValue::Int(int64_t(t));
      p.role = "dtype";
      break;
    case OpId::Arange:
      p.in = {type(t, {}), type(t, {}), type(t, {})};
      p.scalars = {0, 4, 1};
      if (is_float(t)) {  // a float arange's length is a 4th, integer, input
        p.in.push_back(type(DType::kI64, {}));
        p.scalars.push_back(4);
      }
      p.role = "bounds";
      break;
    case OpId::LayerNorm: p.in = {x, type(t, {3}), type(t, {3})}; break;
    case OpId::OneHot:
      p.in = {type(t, {2})};
      a[kOneHotDepth] = AttrValue::Int(3);
      p.role = "indices";
      break;
    case OpId::FullyConnected: p.in = {x, type(t, {3, 4}), type(t, {4})}; break;
    case OpId::ElementwiseChain:  // tanh(x + x)
      p.in = {x};
      a[kChainSteps] = AttrValue::Ints({int64_t(OpId::Add), 0, 0, int64_t(OpId::Tanh), 1, -1});
      break;
    case OpId::Print: p.in = {x}; a[kPrintFormat] = AttrValue::String("{}"); break;
    case OpId::Custom:  // an application's op of one operand, its result x's type
      p.in = {x};
      a[kCustomShape] = AttrValue::Ints({2, 3});
      a[kCustomDType] = AttrValue::Int(int64_t(t));
      a[kCustomName] = AttrValue::String("probe");
      a[kCustomOperands] = AttrValue::Int(1);
      break;
    case OpId::Random:  // uniform draws of [2, 3] under a key
      p.in = {type(t, {2})};
      a[kRandomShape] = AttrValue::Ints({2, 3});
      a[kRandomDistribution] = AttrValue::Int(kUniform);
      p.role = "key";
      break;
    case OpId::Assert: p.in = {type(t, {})}; p.role = "condition"; break;
    default: break;  // every op is routed above; the binary and unary ones by flag
  }
  return p;
}

// The operand of a node of `op` whose dtype --op-table varies (probe_for's role):
// an input's index, or -1 for the first output (eye's dtype attribute).
int main_operand(OpId op) {
  const std::string_view role = probe_for(op, DType::kF32).role;
  if (role == "values") return 1;  // where(cond, a, b)
  if (role == "dtype") return -1;
  return 0;
}

// elementwise_chain runs each step's op with that op's f32 kernel (reference/fused.cc),
// so a selective build needs those too: (op, a, b) triples in its `steps`.
void collect_chain_steps(const fb::Node& node, std::map<OpId, std::set<DType>>& ops) {
  const auto* attrs = node.attrs();
  for (uint32_t a = 0; attrs != nullptr && a < attrs->size(); ++a) {
    const fb::Attr& attr = *attrs->Get(a);
    if (attr.ints() == nullptr || attr.name()->string_view() != ops::op_def(OpId::ElementwiseChain).attrs[0].name)
      continue;
    for (uint32_t j = 0; j + 2 < attr.ints()->size(); j += 3) {  // checked on load
      const int64_t step = attr.ints()->Get(j);
      if (step >= 0 && step < ops::kNumOps) ops[OpId(step)].insert(DType::kF32);
    }
  }
}

// The ops one graph file's functions use, with their main operands' dtypes (and
// the ops of elementwise_chain's steps).
void collect_ops(const fb::Graph& g, std::map<OpId, std::set<DType>>& ops) {
  const auto* fns = g.functions();
  for (uint32_t f = 0; fns != nullptr && f < fns->size(); ++f) {
    const fb::Function& fn = *fns->Get(f);
    const auto* nodes = fn.nodes();
    const auto* values = fn.values();
    for (uint32_t n = 0; nodes != nullptr && n < nodes->size(); ++n) {
      const fb::Node& node = *nodes->Get(n);
      if (node.kind() != fb::NodeKind::Op || node.op() == nullptr) continue;
      const std::optional<OpId> op = ops::find_op(node.op()->string_view());
      if (!op) continue;  // the loader has refused unknown ops already
      std::set<DType>& dtypes = ops[*op];
      const int k = main_operand(*op);
      const auto* list = k < 0 ? node.outputs() : node.inputs();
      const uint32_t at = uint32_t(k < 0 ? 0 : k);
      if (list == nullptr || at >= list->size() || values == nullptr || list->Get(at) >= values->size()) continue;
      const int dtype = int(values->Get(list->Get(at))->dtype());
      if (dtype >= 0 && dtype < kNumDTypes) dtypes.insert(DType(dtype));
      if (*op == OpId::ElementwiseChain) collect_chain_steps(node, ops);
    }
  }
}

}  // namespace

int print_ops(const std::vector<std::string>& paths, std::ostream& out, std::ostream& err) {
  std::map<OpId, std::set<DType>> ops;
  for (const std::string& path : paths) {
    auto program = Program::load_file(path);
    if (!program.ok()) {
      err << "graph-inspect: " << path << ": " << program.status().message() << "\n";
      return 2;
    }
    std::vector<uint64_t> storage;
    const fb::Graph* graph = read_graph_table(path, storage, err);
    if (graph == nullptr) return 2;
    collect_ops(*graph, ops);
  }
  out << "# ops needed by";
  for (const std::string& path : paths) out << " " << path;
  out << "\n# op dtypes : kernels (a build with -DSG_SELECTED_OPS=THIS_FILE has kernels for these ops only)\n";
  // Sorted by name, so that the list diffs well.
  std::map<std::string_view, std::string> lines;
  for (const auto& [op, dtypes] : ops) {
    std::string line;
    bool f32 = false;
    for (DType t : dtypes) {
      line += std::string(" ") + dtype_name(t);
      f32 |= t == DType::kF32;
    }
    if (dtypes.empty()) line += " -";
    line += " : reference";
#ifdef SG_HAVE_XNNPACK
    if (f32 && kernels::xnnpack_covers(op)) line += " xnnpack";
#else
    (void)f32;
#endif
    lines[ops::op_def(op).name] = line;
  }
  for (const auto& [name, line] : lines) out << name << line << "\n";
  return 0;
}

int print_op_table(std::ostream& out) {
  out << "# op role dtypes: each op of the op table, the operand its dtype is, and the\n"
         "# dtypes its rule accepts there (asked of the rule with a small call each)\n";
  ops::ConcreteInferContext ctx;
  for (int i = 0; i < ops::kNumOps; ++i) {
    const OpId op = OpId(i);
    std::string dtypes;
    const char* role = "x";
    // A data-dependent length (flat_nonzero's count) as its kernel would report it.
    static constexpr int64_t kReportedCount[] = {2};
    ctx.reported = ops::has_flag(op, ops::kDataDependentShape) ? std::span<const int64_t>(kReportedCount)
                                                               : std::span<const int64_t>();
    for (int d = 0; d < kNumDTypes; ++d) {
      Probe p = probe_for(op, DType(d));
      role = p.role;
      std::vector<Type> result;
      const Status s = ops::infer<int64_t>(op, p.attrs, p.in, p.scalars, result, ctx);
      if (s.ok()) dtypes += std::string(" ") + dtype_name(DType(d));
    }
    out << ops::op_def(op).name << " " << role << (dtypes.empty() ? " -" : dtypes) << "\n";
  }
  return 0;
}

}  // namespace sg::tools
