#include "verifier.h"

#include <limits>
#include <set>
#include <string_view>
#include <vector>

#include "ops/infer.h"
#include "interface/kernel.h"
#include "quant/weight_format.h"
#include "sgraph_header.h"
#include "shape_check.h"
#include "stagegraph/tensor.h"

namespace sg::runtime {
namespace {

template <class V>
size_t len(const V* v) {
  return v == nullptr ? 0 : v->size();
}

std::string_view str(const flatbuffers::String* s) {
  return s == nullptr ? std::string_view() : s->string_view();
}

// The FlatBuffers verifier checks a vector's length field for alignment but not
// its elements; vectors of 8-byte scalars or structs must be 8-byte aligned to be
// read at all (the table itself starts 64-byte aligned).
template <class V>
bool elements_aligned(const V* v) {
  return v == nullptr || v->size() == 0 || reinterpret_cast<uintptr_t>(v->Data()) % 8 == 0;
}

bool valid_dtype(fb::DType t) { return int(t) >= 0 && int(t) < kNumDTypes; }

// Whether a type of `dtype` whose static dims are `shape`'s needs at most
// kMaxDeclaredBytes (symbolic dims and zeros count as 1). The dims are >= 0.
bool plausible_size(fb::DType dtype, const flatbuffers::Vector<const fb::Dim*>* shape) {
  uint64_t bytes = dtype_size(DType(dtype));
  for (size_t i = 0; i < len(shape); ++i) {
    const fb::Dim* d = shape->Get(uint32_t(i));
    if (d->symbol() >= 0 || d->value() == 0) continue;
    if (uint64_t(d->value()) > kMaxDeclaredBytes / bytes) return false;
    bytes *= uint64_t(d->value());
  }
  return true;
}

const char* attr_kind_name(int kind) {
  switch (kind) {
    case int(ops::AttrKind::kInt): return "an int";
    case int(ops::AttrKind::kInts): return "a list of ints";
    case int(ops::AttrKind::kFloat): return "a float";
    case int(ops::AttrKind::kFloats): return "a list of floats";
    case int(ops::AttrKind::kString): return "a string";
  }
  return "of an unknown kind";
}

// The record of constant `c` in Graph.quantized (sorted by constant), or null.
const fb::QuantizedConstant* find_quantized(const fb::Graph& g, uint32_t c) {
  const auto* q = g.quantized();
  size_t lo = 0, hi = len(q);
  while (lo < hi) {
    const size_t mid = (lo + hi) / 2;
    const uint32_t at = q->Get(uint32_t(mid))->constant();
    if (at == c) return q->Get(uint32_t(mid));
    if (at < c) lo = mid + 1;
    else hi = mid;
  }
  return nullptr;
}

// The storage layout of quantized constant `q` read as an f32 tensor of `dims`.
kernels::quant::Layout quant_layout(const fb::QuantizedConstant& q, std::vector<int64_t> dims) {
  kernels::quant::Layout l;
  l.storage = kernels::quant::Storage(q.storage());
  l.axis = q.axis();
  l.block = q.block_size();
  l.scale_type = kernels::quant::ScaleType(q.scale_type());
  l.dims = std::move(dims);
  return l;
}

// Checks one function's values, params and results (indices and shapes only);
// nodes come in a second pass, once every callee's signature is known to be sane.
class FunctionChecker {
 public:
  FunctionChecker(const fb::Graph& g, uint32_t index) : g_(g), fn_(*g.functions()->Get(index)) {}

  Status check_signature() {
    for (size_t v = 0; v < len(fn_.values()); ++v) SG_RETURN_IF_ERROR(check_value(uint32_t(v)));
    for (uint32_t p : index_list(fn_.params())) SG_RETURN_IF_ERROR(check_index(p, "parameter"));
    for (uint32_t r : index_list(fn_.results())) SG_RETURN_IF_ERROR(check_index(r, "result"));
    return Status::Ok();
  }

  Status check_body() {
    const size_t n = len(fn_.values());
    std::vector<bool> defined(n, false);
    for (size_t v = 0; v < n; ++v) defined[v] = fn_.values()->Get(uint32_t(v))->constant() >= 0;
    for (uint32_t p : index_list(fn_.params())) {
      if (defined[p]) return error("value " + std::to_string(p) + " is defined more than once (parameter)");
      defined[p] = true;
    }
    for (size_t i = 0; i < len(fn_.nodes()); ++i) {
      const fb::Node& node = *fn_.nodes()->Get(uint32_t(i));
      SG_RETURN_IF_ERROR(check_node(node, i, defined));
    }
    for (uint32_t r : index_list(fn_.results()))
      if (!defined[r]) return error("result value " + std::to_string(r) + " is never defined");
    return Status::Ok();
  }

 private:
  static std::vector<uint32_t> index_list(const flatbuffers::Vector<uint32_t>* v) {
    return v == nullptr ? std::vector<uint32_t>() : std::vector<uint32_t>(v->begin(), v->end());
  }

  Status error(const std::string& what) const {
    return invalid_graph("invalid graph: function '" + std::string(str(fn_.name())) + "': " + what);
  }
  // "node 3 ('add') at model.py:2:18: what"; the location once it is known valid.
  Status node_error(size_t i, const fb::Node& node, const std::string& what, bool located = false) const {
    std::string op = std::string(str(node.op()));
    if (op.empty()) op = node_kind_name(node.kind());
    std::string at;
    if (const fb::SourceLoc* loc = node.loc(); located && loc != nullptr && loc->line() > 0)
      at = " at " + std::string(str(g_.source_files()->Get(loc->file()))) + ":" + std::to_string(loc->line()) +
           ":" + std::to_string(loc->column());
    return error("node " + std::to_string(i) + " ('" + op + "')" + at + ": " + what);
  }

  Status check_index(uint32_t v, const char* role) const {
    if (v >= len(fn_.values()))
      return error(std::string(role) + " value index " + std::to_string(v) + " is out of range (" +
                   std::to_string(len(fn_.values())) + " values)");
    return Status::Ok();
  }

  Status check_value(uint32_t v) const {
    const fb::Value& value = *fn_.values()->Get(v);
    const std::string what = "value " + std::to_string(v);
    if (!valid_dtype(value.dtype())) return error(what + " has an invalid dtype " + std::to_string(int(value.dtype())));
    SG_RETURN_IF_ERROR(check_shape(value.shape(), what));
    if (!plausible_size(value.dtype(), value.shape()))
      return error(what + " has an implausible size: its static dims need more than 2^" +
                   std::to_string(kMaxDeclaredBytesLog2) + " bytes");
    const int32_t c = value.constant();
    if (c < -1) return error(what + " has an invalid constant index " + std::to_string(c));
    if (c >= 0) {
      if (size_t(c) >= len(g_.constants()))
        return error(what + " refers to constant " + std::to_string(c) + " of " +
                     std::to_string(len(g_.constants())));
      uint64_t numel = 1;
      for (size_t i = 0; i < len(value.shape()); ++i) {
        const fb::Dim* d = value.shape()->Get(uint32_t(i));
        if (d->symbol() >= 0) return error(what + " is a constant with a symbolic dim");
        const uint64_t dim = uint64_t(d->value());
        if (dim != 0 && numel > std::numeric_limits<uint64_t>::max() / 8 / dim)
          return error(what + " is a constant of implausible size");
        numel *= dim;
      }
      const uint64_t bytes = numel * dtype_size(DType(value.dtype()));
      const fb::Constant* k = g_.constants()->Get(uint32_t(c));
      if (const fb::QuantizedConstant* q = find_quantized(g_, uint32_t(c))) return check_quantized_value(what, value, c, *q);
      if (k->size() != bytes)
        return error(what + ": constant " + std::to_string(c) + " holds " + std::to_string(k->size()) +
                     " bytes but its type needs " + std::to_string(bytes));
    }
    return Status::Ok();
  }

  // A value whose constant is stored quantized (SPEC §13): f32, and the constant's
  // bytes and scales exactly what its layout needs for the value's dims.
  Status check_quantized_value(const std::string& what, const fb::Value& value, int32_t c,
                               const fb::QuantizedConstant& q) const {
    namespace quant = kernels::quant;
    if (value.dtype() != fb::DType::F32)
      return error(what + " refers to quantized constant " + std::to_string(c) + " but is " +
                   dtype_name(DType(value.dtype())) + ", not f32");
    std::vector<int64_t> dims;
    for (size_t i = 0; i < len(value.shape()); ++i) dims.push_back(value.shape()->Get(uint32_t(i))->value());
    const quant::Layout l = quant_layout(q, std::move(dims));
    if (std::string bad = quant::check_layout(l); !bad.empty())
      return error(what + ": quantized constant " + std::to_string(c) + ": " + bad);
    const uint64_t want = quant::data_bytes(l), have = g_.constants()->Get(uint32_t(c))->size();
    if (have != want)
      return error(what + ": quantized constant " + std::to_string(c) + " holds " + std::to_string(have) +
                   " bytes but " + quant::storage_name(l.storage) + " storage of its shape needs " + std::to_string(want));
    const uint64_t scales = quant::scale_count(l);
    if (scales == 0) {
      if (q.scales() != -1)
        return error(what + ": " + quant::storage_name(l.storage) + " constant " + std::to_string(c) + " has scales");
      return Status::Ok();
    }
    if (q.scales() < 0 || size_t(q.scales()) >= len(g_.constants()))
      return error(what + ": quantized constant " + std::to_string(c) + " has no valid scales constant (" +
                   std::to_string(q.scales()) + ")");
    const uint64_t scale_bytes = g_.constants()->Get(uint32_t(q.scales()))->size();
    if (scale_bytes != quant::scale_bytes(l))
      return error(what + ": quantized constant " + std::to_string(c) + " has " + std::to_string(scale_bytes) +
                   " bytes of scales, but " + std::to_string(scales) + " " + quant::scale_type_name(l.scale_type) +
                   " scales (one per " + (l.storage == quant::Storage::kInt8 ? "channel of axis " + std::to_string(l.axis)
                                          : "block of " + std::to_string(l.block) + " along axis " + std::to_string(l.axis)) +
                   ") need " + std::to_string(quant::scale_bytes(l)));
    return Status::Ok();
  }

  Status check_shape(const flatbuffers::Vector<const fb::Dim*>* shape, const std::string& what) const {
    if (!elements_aligned(shape)) return error(what + " has a misaligned shape");
    if (len(shape) > size_t(kMaxRank))
      return error(what + " has rank " + std::to_string(len(shape)) + ", more than the maximum " +
                   std::to_string(kMaxRank));
    for (size_t i = 0; i < len(shape); ++i) {
      const fb::Dim* d = shape->Get(uint32_t(i));
      if (d->symbol() >= 0) {
        if (size_t(d->symbol()) >= len(g_.symbols()))
          return error(what + " dim " + std::to_string(i) + " refers to symbol " +
                       std::to_string(d->symbol()) + " of " + std::to_string(len(g_.symbols())));
      } else if (d->value() < 0) {
        return error(what + " dim " + std::to_string(i) + " is negative (" + std::to_string(d->value()) + ")");
      }
    }
    return Status::Ok();
  }

  const fb::Value& value(uint32_t v) const { return *fn_.values()->Get(v); }
  static const fb::Value& value_of(const fb::Function& f, uint32_t v) { return *f.values()->Get(v); }

  Status check_node(const fb::Node& node, size_t i, std::vector<bool>& defined) const {
    for (uint32_t v : index_list(node.inputs())) {
      if (v >= defined.size())
        return node_error(i, node, "input value " + std::to_string(v) + " is out of range");
      if (!defined[v])
        return node_error(i, node, "input value " + std::to_string(v) + " is used before it is defined");
    }
    for (uint32_t v : index_list(node.outputs())) {
      if (v >= defined.size())
        return node_error(i, node, "output value " + std::to_string(v) + " is out of range");
      if (defined[v])
        return node_error(i, node, "output value " + std::to_string(v) + " is defined more than once");
      defined[v] = true;
    }
    if (const fb::SourceLoc* loc = node.loc(); loc != nullptr && loc->line() > 0 &&
                                               loc->file() >= len(g_.source_files()))
      return node_error(i, node, "source file index " + std::to_string(loc->file()) + " is out of range");
    switch (node.kind()) {
      case fb::NodeKind::Op: return check_op(node, i);
      case fb::NodeKind::If:
      case fb::NodeKind::While:
      case fb::NodeKind::Call: return check_control(node, i);
    }
    return node_error(i, node, "invalid node kind " + std::to_string(int(node.kind())));
  }

  Status check_op(const fb::Node& node, size_t i) const {
    const std::string_view name = str(node.op());
    const std::optional<ops::OpId> id = ops::find_op(name);
    if (!id) return node_error(i, node, "unknown op '" + std::string(name) + "'");
    if (!kernels::op_available(*id))  // a selective build (-DSG_SELECTED_OPS) without it
      return node_error(i, node, "op '" + std::string(name) + "' is not in this runtime's selected ops (SG_SELECTED_OPS); "
                                     "rebuild with the list graph-inspect --ops writes for this graph");
    const ops::OpDef& def = ops::op_def(*id);
    if (node.op_version() > def.version)
      return node_error(i, node, "op '" + std::string(name) + "' version " + std::to_string(node.op_version()) +
                                     " is not supported by this runtime (have " + std::to_string(def.version) + ")");
    if (len(node.functions()) != 0) return node_error(i, node, "an op node must not name functions");
    const size_t n_in = len(node.inputs());
    if (n_in < size_t(def.min_inputs) || (def.max_inputs >= 0 && n_in > size_t(def.max_inputs)))
      return node_error(i, node, "takes " + std::to_string(n_in) + " inputs, expected " +
                                     (def.max_inputs == def.min_inputs ? std::to_string(def.min_inputs)
                                      : def.max_inputs < 0 ? "at least " + std::to_string(def.min_inputs)
                                      : std::to_string(def.min_inputs) + " to " + std::to_string(def.max_inputs)));
    ops::Attrs attrs;
    if (Status s = decode_attrs(node, def, &attrs); !s.ok()) return node_error(i, node, s.message());
    std::vector<size_t> ranks;
    for (uint32_t v : index_list(node.inputs())) ranks.push_back(len(value(v).shape()));
    const Status s = ops::check_attrs(*id, attrs, ranks);
    if (!s.ok()) return node_error(i, node, s.message());
    const size_t outputs = ops::output_count(*id, attrs);  // the attributes are checked
    if (len(node.outputs()) != outputs)
      return node_error(i, node, "has " + std::to_string(len(node.outputs())) + " outputs, expected " +
                                     std::to_string(outputs));
    const Status typed = check_declared_outputs(g_, fn_, node, *id, attrs);
    if (!typed.ok()) return node_error(i, node, typed.message(), /*located=*/true);
    return Status::Ok();
  }

  // `what` values of `callee` (its params or results) must match `ours` by count
  // and dtype.
  Status match_signature(size_t i, const fb::Node& node, uint32_t callee, bool results,
                         const std::vector<uint32_t>& ours, const char* ours_role) const {
    const fb::Function& f = *g_.functions()->Get(callee);
    const std::vector<uint32_t> theirs = index_list(results ? f.results() : f.params());
    const std::string where = "function '" + std::string(str(f.name())) + "'";
    if (theirs.size() != ours.size())
      return node_error(i, node, where + " has " + std::to_string(theirs.size()) +
                                     (results ? " results" : " parameters") + " but the node has " +
                                     std::to_string(ours.size()) + " " + ours_role);
    for (size_t k = 0; k < ours.size(); ++k) {
      const fb::DType a = value(ours[k]).dtype(), b = value_of(f, theirs[k]).dtype();
      if (a != b)
        return node_error(i, node, std::string(ours_role) + " " + std::to_string(k) + " is " +
                                       dtype_name(DType(a)) + " but " + where + " has " + dtype_name(DType(b)));
    }
    return Status::Ok();
  }

  Status check_control(const fb::Node& node, size_t i) const {
    if (node.op_version() > kControlFlowVersion)
      return node_error(i, node, "op '" + std::string(node_kind_name(node.kind())) + "' version " +
                                     std::to_string(node.op_version()) + " is not supported by this runtime (have " +
                                     std::to_string(kControlFlowVersion) + ")");
    const std::vector<uint32_t> fns = index_list(node.functions());
    const size_t want = node.kind() == fb::NodeKind::Call ? 1 : 2;
    if (fns.size() != want)
      return node_error(i, node, "names " + std::to_string(fns.size()) + " functions, expected " + std::to_string(want));
    for (uint32_t f : fns)
      if (f >= len(g_.functions()))
        return node_error(i, node, "function index " + std::to_string(f) + " is out of range");
    const std::vector<uint32_t> in = index_list(node.inputs()), out = index_list(node.outputs());
    switch (node.kind()) {
      case fb::NodeKind::If: {
        if (in.empty()) return node_error(i, node, "has no condition input");
        const fb::Value& cond = value(in[0]);
        if (cond.dtype() != fb::DType::Bool || len(cond.shape()) != 0)
          return node_error(i, node, "the condition must be a bool scalar");
        const std::vector<uint32_t> args(in.begin() + 1, in.end());
        for (uint32_t f : fns) {
          SG_RETURN_IF_ERROR(match_signature(i, node, f, false, args, "inputs"));
          SG_RETURN_IF_ERROR(match_signature(i, node, f, true, out, "outputs"));
        }
        return Status::Ok();
      }
      case fb::NodeKind::While: {
        SG_RETURN_IF_ERROR(match_signature(i, node, fns[0], false, in, "inputs"));
        SG_RETURN_IF_ERROR(match_signature(i, node, fns[1], false, in, "inputs"));
        SG_RETURN_IF_ERROR(match_signature(i, node, fns[1], true, in, "inputs"));
        if (out.size() != in.size())
          return node_error(i, node, "has " + std::to_string(out.size()) + " outputs for " +
                                         std::to_string(in.size()) + " loop-carried inputs");
        for (size_t k = 0; k < in.size(); ++k)
          if (value(in[k]).dtype() != value(out[k]).dtype())
            return node_error(i, node, "output " + std::to_string(k) + " has a different dtype from its input");
        const fb::Function& cond = *g_.functions()->Get(fns[0]);
        if (len(cond.results()) != 1)
          return node_error(i, node, "the condition function must return one value");
        const fb::Value& c = value_of(cond, cond.results()->Get(0));
        if (c.dtype() != fb::DType::Bool || len(c.shape()) != 0)
          return node_error(i, node, "the condition function must return a bool scalar");
        return Status::Ok();
      }
      case fb::NodeKind::Call:
        SG_RETURN_IF_ERROR(match_signature(i, node, fns[0], false, in, "inputs"));
        return match_signature(i, node, fns[0], true, out, "outputs");
      case fb::NodeKind::Op: break;
    }
    return internal_error("unreachable node kind");
  }

  const fb::Graph& g_;
  const fb::Function& fn_;
};

// Graph.quantized: in range, sorted, each constant once, scales that are plain
// constants; declared by the header. The layouts are checked with the values
// that use them (check_quantized_value).
Status check_quantized_table(const fb::Graph& g, uint32_t header_flags) {
  const auto* q = g.quantized();
  if (len(q) == 0) return Status::Ok();
  if ((header_flags & format::kFlagQuantizedWeights) == 0)
    return invalid_graph("invalid graph: it stores quantized constants but its header does not set the flag of " +
                         std::string(format::flag_feature(1)));
  for (size_t i = 0; i < len(q); ++i) {
    const fb::QuantizedConstant& r = *q->Get(uint32_t(i));
    const std::string what = "invalid graph: quantized constant record " + std::to_string(i);
    if (r.constant() >= len(g.constants())) return invalid_graph(what + " refers to constant " + std::to_string(r.constant()) + " of " + std::to_string(len(g.constants())));
    if (i > 0 && q->Get(uint32_t(i - 1))->constant() >= r.constant())
      return invalid_graph(what + ": records are not sorted by constant, or repeat one");
    if (r.scales() >= 0 && (size_t(r.scales()) >= len(g.constants()) || find_quantized(g, uint32_t(r.scales())) != nullptr))
      return invalid_graph(what + ": scales constant " + std::to_string(r.scales()) + " is out of range or itself quantized");
  }
  for (size_t v = 0; v < len(g.variables()); ++v)
    if (find_quantized(g, g.variables()->Get(uint32_t(v))->initial()) != nullptr)
      return invalid_graph("invalid graph: variable '" + std::string(str(g.variables()->Get(uint32_t(v))->name())) +
                           "' starts from a quantized constant");
  return Status::Ok();
}

Status check_constants(const fb::Graph& g, std::span<const uint8_t> data) {
  if (!elements_aligned(g.constants())) return invalid_graph("invalid graph: misaligned constant table");
  for (size_t c = 0; c < len(g.constants()); ++c) {
    const fb::Constant* k = g.constants()->Get(uint32_t(c));
    const uint64_t off = k->offset(), size = k->size(), total = data.size();
    if (off % format::kAlignment != 0)
      return invalid_graph("invalid graph: constant " + std::to_string(c) + " is not 64-byte aligned (offset " +
                           std::to_string(off) + ")");
    // The segment must keep kDataTailPadding readable bytes after every constant.
    if (off > total || size > total - off || total - off - size < format::kDataTailPadding)
      return invalid_graph("invalid graph: constant " + std::to_string(c) + " (offset " + std::to_string(off) +
                           ", " + std::to_string(size) + " bytes) lies outside the " + std::to_string(total) +
                           "-byte data segment or its padding");
  }
  return Status::Ok();
}

// "f32[N, 3]", with the file's symbol names.
std::string type_text(const fb::Graph& g, fb::DType dtype, const flatbuffers::Vector<const fb::Dim*>* shape) {
  std::string s = std::string(dtype_name(DType(dtype))) + "[";
  for (size_t i = 0; i < len(shape); ++i) {
    const fb::Dim* d = shape->Get(uint32_t(i));
    s += (i > 0 ? ", " : "") + (d->symbol() >= 0 ? std::string(str(g.symbols()->Get(uint32_t(d->symbol()))))
                                                 : std::to_string(d->value()));
  }
  return s + "]";
}

// Same rank, and dim by dim the same static size or the same symbol (by name:
// the emitter writes one symbol per name, but a table that repeats one is valid).
bool same_dims(const fb::Graph& g, const flatbuffers::Vector<const fb::Dim*>* a,
               const flatbuffers::Vector<const fb::Dim*>* b) {
  if (len(a) != len(b)) return false;
  for (size_t i = 0; i < len(a); ++i) {
    const fb::Dim* x = a->Get(uint32_t(i));
    const fb::Dim* y = b->Get(uint32_t(i));
    if ((x->symbol() >= 0) != (y->symbol() >= 0)) return false;
    if (x->symbol() < 0 ? x->value() != y->value()
                        : str(g.symbols()->Get(uint32_t(x->symbol()))) != str(g.symbols()->Get(uint32_t(y->symbol()))))
      return false;
  }
  return true;
}

Status check_sig_list(const fb::Graph& g, const std::string& entry, const fb::Function& f,
                      const flatbuffers::Vector<flatbuffers::Offset<fb::TensorSig>>* sigs,
                      const flatbuffers::Vector<uint32_t>* values, const char* role, size_t variables) {
  const std::string where = "invalid graph: entry '" + entry + "': ";
  if (len(sigs) + variables != len(values))
    return invalid_graph(where + std::to_string(len(sigs)) + " " + role + " and " + std::to_string(variables) +
                         " variables but its function has " + std::to_string(len(values)));
  std::set<std::string_view> names;
  for (size_t k = 0; k < len(sigs); ++k) {
    const fb::TensorSig& sig = *sigs->Get(uint32_t(k));
    const std::string what = std::string(role) + " '" + std::string(str(sig.name())) + "'";
    if (!names.insert(str(sig.name())).second) return invalid_graph(where + "duplicate " + what);
    if (!valid_dtype(sig.dtype())) return invalid_graph(where + what + " has an invalid dtype");
    if (len(sig.shape()) > size_t(kMaxRank) || !elements_aligned(sig.shape()))
      return invalid_graph(where + what + " has an invalid shape");
    for (size_t i = 0; i < len(sig.shape()); ++i) {
      const fb::Dim* d = sig.shape()->Get(uint32_t(i));
      if (d->symbol() >= 0 ? size_t(d->symbol()) >= len(g.symbols()) : d->value() < 0)
        return invalid_graph(where + what + " has an invalid dim");
    }
    const fb::Value& v = *f.values()->Get(values->Get(uint32_t(k)));
    if (v.dtype() != sig.dtype() || !same_dims(g, v.shape(), sig.shape()))
      return invalid_graph(where + what + " is " + type_text(g, sig.dtype(), sig.shape()) +
                           ", which does not match its function's value type " +
                           type_text(g, v.dtype(), v.shape()));
  }
  return Status::Ok();
}

// Each variable: a name of its own, a valid dtype, static dims, and an initial value
// (a constant) of exactly its bytes.
Status check_variables(const fb::Graph& g) {
  std::set<std::string_view> names;
  for (size_t v = 0; v < len(g.variables()); ++v) {
    const fb::Variable& var = *g.variables()->Get(uint32_t(v));
    const std::string what = "invalid graph: variable '" + std::string(str(var.name())) + "'";
    if (str(var.name()).empty() || !names.insert(str(var.name())).second)
      return invalid_graph(what + ": empty or repeated name");
    if (!valid_dtype(var.dtype())) return invalid_graph(what + " has an invalid dtype");
    if (len(var.shape()) > size_t(kMaxRank)) return invalid_graph(what + " has an invalid shape");
    uint64_t bytes = dtype_size(DType(var.dtype()));
    for (size_t d = 0; d < len(var.shape()); ++d) {
      const fb::Dim* dim = var.shape()->Get(uint32_t(d));
      if (dim->symbol() >= 0 || dim->value() < 0 || (dim->value() > 0 && bytes > (uint64_t(1) << 48) / uint64_t(dim->value())))
        return invalid_graph(what + " has a dim that is not a static size");
      bytes *= uint64_t(dim->value());
    }
    if (var.initial() >= len(g.constants()) || g.constants()->Get(var.initial())->size() != bytes)
      return invalid_graph(what + ": its initial value is not a constant of " + std::to_string(bytes) + " bytes");
  }
  return Status::Ok();
}

// The variables an entry reads (or assigns): each once, of the type of the parameter
// (or result) after the inputs (or outputs) it is bound to.
Status check_entry_variables(const fb::Graph& g, const std::string& entry, const fb::Function& f,
                             const flatbuffers::Vector<uint32_t>* vars, const flatbuffers::Vector<uint32_t>* values,
                             size_t first, const char* role) {
  std::set<uint32_t> seen;
  for (size_t k = 0; k < len(vars); ++k) {
    const uint32_t v = vars->Get(uint32_t(k));
    const std::string where = "invalid graph: entry '" + entry + "' " + role + " variable " + std::to_string(v);
    if (v >= len(g.variables()) || !seen.insert(v).second) return invalid_graph(where + ": out of range or repeated");
    const fb::Variable& var = *g.variables()->Get(v);
    const fb::Value& value = *f.values()->Get(values->Get(uint32_t(first + k)));
    if (value.dtype() != var.dtype() || !same_dims(g, value.shape(), var.shape()))
      return invalid_graph(where + " ('" + std::string(str(var.name())) + "', " + type_text(g, var.dtype(), var.shape()) +
                           ") through a value of type " + type_text(g, value.dtype(), value.shape()));
  }
  return Status::Ok();
}

Status check_entries(const fb::Graph& g) {
  std::set<std::string_view> names;
  for (size_t e = 0; e < len(g.entries()); ++e) {
    const fb::Entry& entry = *g.entries()->Get(uint32_t(e));
    const std::string name(str(entry.name()));
    if (!names.insert(str(entry.name())).second)
      return invalid_graph("invalid graph: duplicate entry '" + name + "'");
    if (entry.function() >= len(g.functions()))
      return invalid_graph("invalid graph: entry '" + name + "' refers to function " +
                           std::to_string(entry.function()) + " of " + std::to_string(len(g.functions())));
    const fb::Function& f = *g.functions()->Get(entry.function());
    SG_RETURN_IF_ERROR(check_sig_list(g, name, f, entry.inputs(), f.params(), "inputs", len(entry.reads())));
    SG_RETURN_IF_ERROR(check_sig_list(g, name, f, entry.outputs(), f.results(), "outputs", len(entry.writes())));
    SG_RETURN_IF_ERROR(check_entry_variables(g, name, f, entry.reads(), f.params(), len(entry.inputs()), "reads"));
    SG_RETURN_IF_ERROR(check_entry_variables(g, name, f, entry.writes(), f.results(), len(entry.outputs()), "assigns"));
  }
  return Status::Ok();
}

// Recursion must go through Call nodes, which the executor counts against the
// depth limit. A function that reaches itself through If/While nodes alone would
// grow the frame stack without bound, so the If/While graph must be acyclic
// (Kahn's algorithm: no recursion in the verifier).
Status check_nesting_acyclic(const fb::Graph& g) {
  const size_t n = len(g.functions());
  std::vector<std::vector<uint32_t>> preds(n);
  std::vector<std::vector<uint32_t>> succs(n);
  std::vector<size_t> indegree(n, 0);
  for (size_t f = 0; f < n; ++f) {
    const fb::Function& fn = *g.functions()->Get(uint32_t(f));
    for (size_t i = 0; i < len(fn.nodes()); ++i) {
      const fb::Node& node = *fn.nodes()->Get(uint32_t(i));
      if (node.kind() != fb::NodeKind::If && node.kind() != fb::NodeKind::While) continue;
      for (uint32_t callee : *node.functions()) {
        succs[f].push_back(callee);
        preds[callee].push_back(uint32_t(f));
        ++indegree[callee];
      }
    }
  }
  std::vector<uint32_t> ready;
  for (size_t f = 0; f < n; ++f)
    if (indegree[f] == 0) ready.push_back(uint32_t(f));
  size_t done = 0;
  while (!ready.empty()) {
    const uint32_t f = ready.back();
    ready.pop_back();
    ++done;
    for (uint32_t s : succs[f])
      if (--indegree[s] == 0) ready.push_back(s);
  }
  if (done == n) return Status::Ok();
  // Every function left has a predecessor left: walking back n steps lands on a cycle.
  uint32_t f = 0;
  while (indegree[f] == 0) ++f;
  for (size_t step = 0; step < n; ++step) {
    for (uint32_t p : preds[f])
      if (indegree[p] > 0) {
        f = p;
        break;
      }
  }
  return invalid_graph("invalid graph: function '" + std::string(str(g.functions()->Get(f)->name())) +
                       "' reaches itself through If/While nodes (recursion must go through Call)");
}

}  // namespace

const char* node_kind_name(fb::NodeKind kind) {
  switch (kind) {
    case fb::NodeKind::Op: return "op";
    case fb::NodeKind::If: return "if";
    case fb::NodeKind::While: return "while";
    case fb::NodeKind::Call: return "call";
  }
  return "?";
}

Status decode_attrs(const fb::Node& node, const ops::OpDef& def, ops::Attrs* out) {
  const size_t n = def.attrs.size();
  out->values.assign(n, ops::AttrValue());
  std::vector<bool> seen(n, false);
  for (size_t a = 0; a < len(node.attrs()); ++a) {
    const fb::Attr& attr = *node.attrs()->Get(uint32_t(a));
    const std::string_view name = str(attr.name());
    size_t k = 0;
    while (k < n && name != def.attrs[k].name) ++k;
    if (k == n) return invalid_graph("op '" + std::string(def.name) + "' has no attribute '" + std::string(name) + "'");
    if (seen[k]) return invalid_graph("attribute '" + std::string(name) + "' is given twice");
    seen[k] = true;
    if (!elements_aligned(attr.ints()) || !elements_aligned(attr.floats()))
      return invalid_graph("attribute '" + std::string(name) + "' is misaligned");
    const ops::AttrKind want = def.attrs[k].kind;
    if (int(attr.kind()) != int(want))
      return invalid_graph("attribute '" + std::string(name) + "' is " + attr_kind_name(int(attr.kind())) +
                           " but op '" + def.name + "' takes " + attr_kind_name(int(want)));
    ops::AttrValue& v = out->values[k];
    v.kind = want;
    switch (want) {
      case ops::AttrKind::kInt: v.i = attr.i(); break;
      case ops::AttrKind::kFloat: v.f = attr.f(); break;
      case ops::AttrKind::kString: v.s = std::string(str(attr.s())); break;
      case ops::AttrKind::kInts:
        if (attr.ints() != nullptr) v.ints.assign(attr.ints()->begin(), attr.ints()->end());
        break;
      case ops::AttrKind::kFloats:
        if (attr.floats() != nullptr) v.floats.assign(attr.floats()->begin(), attr.floats()->end());
        break;
    }
  }
  // Optional attributes left out at the end: the node has fewer values.
  size_t given = n;
  while (given > ops::required_attrs(def) && !seen[given - 1]) --given;
  out->values.resize(given);
  for (size_t k = 0; k < given; ++k)
    if (!seen[k])
      return invalid_graph("op '" + std::string(def.name) + "' is missing attribute '" + def.attrs[k].name + "'");
  return Status::Ok();
}

Status verify_graph(const fb::Graph& g, std::span<const uint8_t> data_segment, uint32_t header_flags) {
  SG_RETURN_IF_ERROR(check_constants(g, data_segment));
  SG_RETURN_IF_ERROR(check_quantized_table(g, header_flags));
  const size_t n = len(g.functions());
  // Two passes over the functions, no walk of the call graph: call sites only look
  // at their callee's signature, which the first pass has checked.
  for (size_t f = 0; f < n; ++f) SG_RETURN_IF_ERROR(FunctionChecker(g, uint32_t(f)).check_signature());
  for (size_t f = 0; f < n; ++f) SG_RETURN_IF_ERROR(FunctionChecker(g, uint32_t(f)).check_body());
  SG_RETURN_IF_ERROR(check_nesting_acyclic(g));
  SG_RETURN_IF_ERROR(check_variables(g));
  return check_entries(g);
}

}  // namespace sg::runtime
