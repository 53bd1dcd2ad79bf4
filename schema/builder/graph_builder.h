// A writer of complete .sgraph files for the runtime's tests and benchmarks (target
// sg_graph_builder), so that neither needs the compiler: the fixed header, the
// FlatBuffers table (64-byte aligned) and the data segment (64-byte aligned
// constants, >= 64 bytes of tail padding), with both checksums. A caller describes
// a graph with plain structs, serializes it, then corrupts or runs the bytes. Not
// part of the installed library.
#pragma once

#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "flatbuffers/flatbuffers.h"
#include "ops/attrs.h"
#include "sgraph_header.h"
#include "stagegraph/dtype.h"
#include "stagegraph_generated.h"

namespace sg::testing {

struct DimSpec {
  int64_t value = 0;
  int32_t symbol = -1;  // >= 0: index into GraphSpec::symbols
};
using ShapeSpec = std::vector<DimSpec>;
inline DimSpec sym(int32_t s) { return {0, s}; }
inline ShapeSpec shape(std::initializer_list<int64_t> dims) {
  ShapeSpec s;
  for (int64_t d : dims) s.push_back({d, -1});
  return s;
}

struct ValueSpec {
  DType dtype = DType::kF32;
  ShapeSpec shape;
  int32_t constant = -1;
};

struct NodeSpec {
  fb::NodeKind kind = fb::NodeKind::Op;
  std::string op;
  uint16_t version = 1;
  std::vector<uint32_t> inputs, outputs, functions;
  std::vector<std::pair<std::string, ops::AttrValue>> attrs;
  uint32_t line = 0, column = 0, file = 0;
};

struct FunctionSpec {
  std::string name;
  std::vector<ValueSpec> values;
  std::vector<uint32_t> params, results;
  std::vector<NodeSpec> nodes;

  uint32_t value(DType t, ShapeSpec s, int32_t constant = -1) {
    values.push_back({t, std::move(s), constant});
    return uint32_t(values.size() - 1);
  }
  uint32_t param(DType t, ShapeSpec s) {
    params.push_back(value(t, std::move(s)));
    return params.back();
  }
  // Adds an op node with one output of the given type; returns the output value.
  uint32_t op(const std::string& name, std::vector<uint32_t> in, DType t, ShapeSpec s, uint32_t line = 1,
              uint32_t column = 1) {
    const uint32_t out = value(t, std::move(s));
    NodeSpec n;
    n.op = name;
    n.inputs = std::move(in);
    n.outputs = {out};
    n.line = line;
    n.column = column;
    nodes.push_back(std::move(n));
    return out;
  }
  // Adds an If/While/Call node with outputs of the given types; returns them.
  std::vector<uint32_t> control(fb::NodeKind kind, std::vector<uint32_t> fns, std::vector<uint32_t> in,
                                std::vector<std::pair<DType, ShapeSpec>> out_types, uint32_t line = 1) {
    NodeSpec n;
    n.kind = kind;
    n.op = kind == fb::NodeKind::If ? "if" : kind == fb::NodeKind::While ? "while" : "call";
    n.functions = std::move(fns);
    n.inputs = std::move(in);
    for (auto& [t, s] : out_types) n.outputs.push_back(value(t, s));
    n.line = line;
    n.column = 5;
    nodes.push_back(n);
    return n.outputs;
  }
};

struct SigSpec {
  std::string name;
  DType dtype = DType::kF32;
  ShapeSpec shape;
};

struct EntrySpec {
  std::string name;
  uint32_t function = 0;
  std::vector<SigSpec> inputs, outputs;
};

// A Graph.quantized record (SPEC.md §13).
struct QuantizedSpec {
  uint32_t constant = 0;
  fb::WeightStorage storage = fb::WeightStorage::Int8;
  int32_t axis = 0;
  int64_t block_size = 0;
  fb::ScaleType scale_type = fb::ScaleType::F32;
  int32_t scales = -1;
};

struct GraphSpec {
  std::vector<FunctionSpec> functions;
  std::vector<EntrySpec> entries;
  std::vector<std::vector<uint8_t>> constants;
  std::vector<std::string> symbols;
  std::vector<std::string> source_files{"model.py"};
  uint16_t major = format::kMajorVersion, minor = format::kMinorVersion;
  // When set, written as the constant table instead of the computed (offset, size)
  // pairs: for tests of misplaced constants.
  std::vector<std::pair<uint64_t, uint64_t>> constant_table_override;
  std::vector<QuantizedSpec> quantized;  // written as Graph.quantized when not empty
  uint32_t flags = 0;                    // the header's

  uint32_t add_function(FunctionSpec f) {
    functions.push_back(std::move(f));
    return uint32_t(functions.size() - 1);
  }
  template <class T>
  int32_t add_constant(std::initializer_list<T> values) {
    return add_constant(std::span<const T>(std::data(values), values.size()));
  }
  template <class T>
  int32_t add_constant(std::span<const T> values) {
    std::vector<uint8_t> bytes(values.size() * sizeof(T));
    if (!bytes.empty()) std::memcpy(bytes.data(), values.data(), bytes.size());
    constants.push_back(std::move(bytes));
    return int32_t(constants.size() - 1);
  }
  // An entry whose signature copies its function's parameter and result types.
  void add_entry(const std::string& name, uint32_t fn, std::vector<std::string> in_names,
                 std::vector<std::string> out_names) {
    EntrySpec e{name, fn, {}, {}};
    const FunctionSpec& f = functions[fn];
    for (size_t k = 0; k < f.params.size(); ++k)
      e.inputs.push_back({in_names.at(k), f.values[f.params[k]].dtype, f.values[f.params[k]].shape});
    for (size_t k = 0; k < f.results.size(); ++k)
      e.outputs.push_back({out_names.at(k), f.values[f.results[k]].dtype, f.values[f.results[k]].shape});
    entries.push_back(std::move(e));
  }
};

namespace detail {

inline flatbuffers::Offset<flatbuffers::Vector<const fb::Dim*>> dims(flatbuffers::FlatBufferBuilder& b,
                                                                     const ShapeSpec& s) {
  std::vector<fb::Dim> d;
  for (const DimSpec& x : s) d.emplace_back(x.value, x.symbol);
  return b.CreateVectorOfStructs(d);
}

inline flatbuffers::Offset<fb::Attr> attr(flatbuffers::FlatBufferBuilder& b, const std::string& name,
                                          const ops::AttrValue& v) {
  auto n = b.CreateString(name);
  auto ints = v.kind == ops::AttrKind::kInts ? b.CreateVector(v.ints) : 0;
  auto floats = v.kind == ops::AttrKind::kFloats ? b.CreateVector(v.floats) : 0;
  auto s = v.kind == ops::AttrKind::kString ? b.CreateString(v.s) : 0;
  return fb::CreateAttr(b, n, fb::AttrKind(v.kind), v.i, ints, v.f, floats, s);
}

inline flatbuffers::Offset<fb::Function> function(flatbuffers::FlatBufferBuilder& b, const FunctionSpec& f) {
  std::vector<flatbuffers::Offset<fb::Value>> values;
  for (const ValueSpec& v : f.values)
    values.push_back(fb::CreateValue(b, 0, fb::DType(v.dtype), dims(b, v.shape), v.constant));
  std::vector<flatbuffers::Offset<fb::Node>> nodes;
  for (const NodeSpec& n : f.nodes) {
    std::vector<flatbuffers::Offset<fb::Attr>> attrs;
    for (const auto& [name, v] : n.attrs) attrs.push_back(attr(b, name, v));
    const fb::SourceLoc loc(n.file, n.line, n.column);
    nodes.push_back(fb::CreateNode(b, n.kind, b.CreateString(n.op), n.version, b.CreateVector(n.inputs),
                                   b.CreateVector(n.outputs), b.CreateVector(attrs), b.CreateVector(n.functions),
                                   &loc));
  }
  return fb::CreateFunction(b, b.CreateString(f.name), b.CreateVector(values), b.CreateVector(f.params),
                            b.CreateVector(f.results), b.CreateVector(nodes));
}

inline flatbuffers::Offset<fb::TensorSig> sig(flatbuffers::FlatBufferBuilder& b, const SigSpec& s) {
  return fb::CreateTensorSig(b, b.CreateString(s.name), fb::DType(s.dtype), dims(b, s.shape));
}

}  // namespace detail

// The complete file: header, table, data segment.
inline flatbuffers::Offset<flatbuffers::Vector<flatbuffers::Offset<fb::QuantizedConstant>>> quantized_records(
    flatbuffers::FlatBufferBuilder& b, const GraphSpec& g) {
  if (g.quantized.empty()) return 0;
  std::vector<flatbuffers::Offset<fb::QuantizedConstant>> out;
  for (const QuantizedSpec& q : g.quantized)
    out.push_back(fb::CreateQuantizedConstant(b, q.constant, q.storage, q.axis, q.block_size, q.scale_type, q.scales));
  return b.CreateVector(out);
}

inline std::vector<uint8_t> build_sgraph(const GraphSpec& g) {
  flatbuffers::FlatBufferBuilder b;
  std::vector<flatbuffers::Offset<fb::Function>> fns;
  for (const FunctionSpec& f : g.functions) fns.push_back(detail::function(b, f));
  std::vector<flatbuffers::Offset<fb::Entry>> entries;
  for (const EntrySpec& e : g.entries) {
    std::vector<flatbuffers::Offset<fb::TensorSig>> in, out;
    for (const SigSpec& s : e.inputs) in.push_back(detail::sig(b, s));
    for (const SigSpec& s : e.outputs) out.push_back(detail::sig(b, s));
    entries.push_back(fb::CreateEntry(b, b.CreateString(e.name), e.function, b.CreateVector(in), b.CreateVector(out)));
  }
  std::vector<fb::Constant> constants;
  uint64_t data_size = 0;
  for (const std::vector<uint8_t>& c : g.constants) {
    constants.emplace_back(data_size, c.size());
    data_size = format::align_up(data_size + c.size());
  }
  data_size += format::kDataTailPadding;
  std::vector<fb::Constant> table_constants = constants;
  if (!g.constant_table_override.empty()) {
    table_constants.clear();
    for (auto [offset, size] : g.constant_table_override) table_constants.emplace_back(offset, size);
  }
  auto graph = fb::CreateGraph(b, b.CreateVector(fns), b.CreateVector(entries), b.CreateVectorOfStructs(table_constants),
                               b.CreateVectorOfStrings(g.symbols), b.CreateVectorOfStrings(g.source_files),
                               b.CreateString("graph_builder"), 0, quantized_records(b, g));
  fb::FinishGraphBuffer(b, graph);

  format::Header h;
  h.major = g.major;
  h.minor = g.minor;
  h.flags = g.flags;
  h.table_offset = format::kHeaderSize;
  h.table_size = b.GetSize();
  h.data_offset = format::align_up(h.table_offset + h.table_size);
  h.data_size = data_size;
  std::vector<uint8_t> file(h.data_offset + h.data_size, 0);
  std::memcpy(file.data() + h.table_offset, b.GetBufferPointer(), b.GetSize());
  for (size_t c = 0; c < g.constants.size(); ++c)
    if (!g.constants[c].empty())
      std::memcpy(file.data() + h.data_offset + constants[c].offset(), g.constants[c].data(), g.constants[c].size());
  h.table_crc = format::crc32(file.data() + h.table_offset, h.table_size);
  h.data_crc = format::crc32(file.data() + h.data_offset, h.data_size);
  format::encode_header(h, file.data());
  return file;
}

// After a test edits the table in place, makes the table checksum right again so
// that the loader's later checks are the ones exercised.
inline void fix_table_crc(std::vector<uint8_t>& file) {
  format::Header h;
  if (!format::decode_header(file.data(), file.size(), &h)) return;
  if (h.table_offset > file.size() || h.table_size > file.size() - h.table_offset) return;
  h.table_crc = format::crc32(file.data() + h.table_offset, h.table_size);
  format::encode_header(h, file.data());
}

// A 64-byte aligned copy, so load_memory uses the bytes in place.
class AlignedBytes {
 public:
  explicit AlignedBytes(std::span<const uint8_t> bytes) : storage_(bytes.size() + 64) {
    const size_t skew = reinterpret_cast<uintptr_t>(storage_.data()) % 64;
    begin_ = storage_.data() + (skew == 0 ? 0 : 64 - skew);
    if (!bytes.empty()) std::memcpy(begin_, bytes.data(), bytes.size());
    size_ = bytes.size();
  }
  std::span<const uint8_t> span() const { return {begin_, size_}; }

 private:
  std::vector<uint8_t> storage_;
  uint8_t* begin_ = nullptr;
  size_t size_ = 0;
};

}  // namespace sg::testing
