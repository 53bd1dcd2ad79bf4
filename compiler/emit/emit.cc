// IR -> .sgraph bytes (SPEC.md §10):
//   header (64 bytes) | FlatBuffers table at 64 | zero padding | data segment
// The data segment starts 64-byte aligned, every constant in it is 64-byte
// aligned, and it ends with >= 64 zero bytes so kernels may read a little past a
// buffer. Symbolic dims are stored by their printed form ("N", "N*2", "N#1").
#include "emit/emit.h"

#include <cstring>
#include <string>
#include <unordered_map>
#include <vector>

#include "sgraph_header.h"
#include "stagegraph_generated.h"

namespace sg::compiler {
namespace {

namespace fb = sg::fb;
using flatbuffers::FlatBufferBuilder;
using flatbuffers::Offset;

constexpr const char* kProducer = "stagegraph-compiler 0.1";
// FlatBuffers cannot address past 2 GiB; refuse well before the builder would abort.
constexpr uint64_t kMaxTableBytes = (uint64_t(1) << 31) - (uint64_t(1) << 24);

// An upper bound of the table's size, so that an enormous graph is refused with an
// error instead of overflowing the builder (which aborts).
uint64_t estimate_table_bytes(const ir::Module& m) {
  uint64_t total = 1024;
  for (const ir::Function& f : m.functions) {
    total += 128 + f.name.size() + 4 * (f.params.size() + f.results.size());
    for (const ir::Value& v : f.values) total += 64 + v.name.size() + 32 * v.type.shape.size();
    for (const ir::Node& n : f.nodes) {
      total += 128 + 4 * (n.inputs.size() + n.outputs.size() + n.functions.size());
      for (const ops::AttrValue& a : n.attrs.values)
        total += 96 + a.s.size() + 8 * (a.ints.size() + a.floats.size());
    }
  }
  for (const ir::Entry& e : m.entries) {
    total += 128 + e.name.size();
    for (const auto& n : e.input_names) total += 128 + n.size();
    for (const auto& n : e.output_names) total += 128 + n.size();
  }
  total += 32 * m.constants.size();
  for (const auto& s : m.symbols.names) total += 64 + 4 * s.size();
  return total;
}

class Emitter {
 public:
  Emitter(const ir::Module& m, const std::vector<QuantizedConstant>* quantized) : m_(m) {
    // The bytes of each constant as stored: its own, or its quantized data, then the
    // scales of the quantized ones as constants after the module's.
    for (const ir::Constant& k : m.constants) stored_.push_back(&k.bytes);
    if (quantized != nullptr)
      for (const QuantizedConstant& q : *quantized) {
        stored_[size_t(q.constant)] = &q.stored.data;
        int32_t scales = -1;
        if (!q.stored.scales.empty()) {
          scales = int32_t(stored_.size());
          stored_.push_back(&q.stored.scales);
        }
        records_.push_back({&q, scales});
      }
  }

  const std::vector<const std::vector<uint8_t>*>& stored() const { return stored_; }
  bool has_quantized() const { return !records_.empty(); }

  // Builds the table into b_ and lays out the constants; returns false on an
  // inconsistency that verify() would have reported.
  bool build(std::vector<fb::Constant>* layout, uint64_t* data_end, std::string* error) {
    uint64_t offset = 0;
    for (const std::vector<uint8_t>* bytes : stored_) {
      offset = format::align_up(offset);
      layout->emplace_back(offset, uint64_t(bytes->size()));
      offset += bytes->size();
    }
    *data_end = offset;

    std::vector<Offset<fb::Function>> functions;
    for (const ir::Function& f : m_.functions) {
      auto fn = function(f, error);
      if (!error->empty()) return false;
      functions.push_back(fn);
    }
    std::vector<Offset<fb::Entry>> entries;
    for (const ir::Entry& e : m_.entries) entries.push_back(entry(e));

    std::vector<Offset<flatbuffers::String>> source_files;
    if (m_.sources)
      for (size_t i = 0; i < m_.sources->size(); ++i)
        source_files.push_back(b_.CreateString(m_.sources->file(uint32_t(i)).path));
    // Symbols are complete only now that every shape has been visited.
    std::vector<Offset<flatbuffers::String>> symbols;
    for (const std::string& s : symbol_names_) symbols.push_back(b_.CreateString(s));

    std::vector<Offset<fb::Variable>> variables;
    for (const ir::Variable& v : m_.variables)
      variables.push_back(fb::CreateVariable(b_, b_.CreateString(v.name), fb::DType(v.type.dtype),
                                             shape(v.type.shape), uint32_t(v.constant)));
    auto graph = fb::CreateGraph(b_, b_.CreateVector(functions), b_.CreateVector(entries),
                                 b_.CreateVectorOfStructs(*layout), b_.CreateVector(symbols),
                                 b_.CreateVector(source_files), b_.CreateString(kProducer),
                                 m_.variables.empty() ? 0 : b_.CreateVector(variables),
                                 records_.empty() ? 0 : quantized_records());
    fb::FinishGraphBuffer(b_, graph);
    return true;
  }

  const uint8_t* table() const { return b_.GetBufferPointer(); }
  size_t table_size() const { return b_.GetSize(); }

 private:
  int32_t symbol_index(const std::string& printed) {
    auto [it, inserted] = symbol_ids_.emplace(printed, int32_t(symbol_names_.size()));
    if (inserted) symbol_names_.push_back(printed);
    return it->second;
  }

  Offset<flatbuffers::Vector<const fb::Dim*>> shape(const std::vector<ir::Dim>& dims) {
    std::vector<fb::Dim> out;
    out.reserve(dims.size());
    for (const ir::Dim& d : dims) {
      if (auto v = d.as_static()) out.emplace_back(*v, -1);
      else out.emplace_back(-1, symbol_index(m_.format_dim(d)));
    }
    return b_.CreateVectorOfStructs(out);
  }

  static fb::SourceLoc loc(const SourceSpan& s) {
    if (!s.valid()) return fb::SourceLoc(0, 0, 0);
    return fb::SourceLoc(s.file, s.line, s.col);
  }

  static std::vector<uint32_t> indices(const std::vector<int32_t>& ids) {
    return std::vector<uint32_t>(ids.begin(), ids.end());
  }

  Offset<fb::Attr> attr(const char* name, const ops::AttrValue& a) {
    auto n = b_.CreateSharedString(name);
    switch (a.kind) {
      case ops::AttrKind::kInt: return fb::CreateAttr(b_, n, fb::AttrKind::Int, a.i);
      case ops::AttrKind::kInts: return fb::CreateAttr(b_, n, fb::AttrKind::Ints, 0, b_.CreateVector(a.ints));
      case ops::AttrKind::kFloat: return fb::CreateAttr(b_, n, fb::AttrKind::Float, 0, 0, a.f);
      case ops::AttrKind::kFloats:
        return fb::CreateAttr(b_, n, fb::AttrKind::Floats, 0, 0, 0.0, b_.CreateVector(a.floats));
      case ops::AttrKind::kString:
        return fb::CreateAttr(b_, n, fb::AttrKind::String, 0, 0, 0.0, 0, b_.CreateString(a.s));
    }
    return fb::CreateAttr(b_, n);
  }

  Offset<fb::Node> node(const ir::Node& n, std::string* error) {
    fb::NodeKind kind = fb::NodeKind::Op;
    const char* op = nullptr;
    uint16_t version = 1;
    std::vector<Offset<fb::Attr>> attrs;
    switch (n.kind) {
      case ir::NodeKind::kOp: {
        if (int(n.op) >= ops::kNumOps) {
          *error = "op id " + std::to_string(int(n.op)) + " out of range";
          return 0;
        }
        const ops::OpDef& def = ops::op_def(n.op);
        op = def.name;
        version = def.version;
        if (n.attrs.values.size() < ops::required_attrs(def) || n.attrs.values.size() > def.attrs.size()) {
          *error = std::string("node '") + def.name + "' has " + std::to_string(n.attrs.values.size()) +
                   " attributes, its op declares " + std::to_string(def.attrs.size());
          return 0;
        }
        // Optional attributes left out stay out of the file.
        for (size_t k = 0; k < n.attrs.values.size(); ++k) attrs.push_back(attr(def.attrs[k].name, n.attrs.values[k]));
        break;
      }
      case ir::NodeKind::kIf: kind = fb::NodeKind::If; op = "if"; break;
      case ir::NodeKind::kWhile: kind = fb::NodeKind::While; op = "while"; break;
      case ir::NodeKind::kCall: kind = fb::NodeKind::Call; op = "call"; break;
    }
    const fb::SourceLoc l = loc(n.span);
    auto op_name = b_.CreateSharedString(op);
    auto inputs = b_.CreateVector(indices(n.inputs));
    auto outputs = b_.CreateVector(indices(n.outputs));
    auto attr_vec = attrs.empty() ? 0 : b_.CreateVector(attrs);
    auto functions = n.functions.empty() ? 0 : b_.CreateVector(indices(n.functions));
    return fb::CreateNode(b_, kind, op_name, version, inputs, outputs, attr_vec, functions, &l);
  }

  Offset<fb::Function> function(const ir::Function& f, std::string* error) {
    std::vector<Offset<fb::Value>> values;
    values.reserve(f.values.size());
    for (const ir::Value& v : f.values) {
      auto name = v.name.empty() ? 0 : b_.CreateSharedString(v.name);
      values.push_back(fb::CreateValue(b_, name, fb::DType(v.type.dtype), shape(v.type.shape), v.constant));
    }
    std::vector<Offset<fb::Node>> nodes;
    nodes.reserve(f.nodes.size());
    for (const ir::Node& n : f.nodes) {
      nodes.push_back(node(n, error));
      if (!error->empty()) {
        *error = "function '" + f.name + "': " + *error;
        return 0;
      }
    }
    return fb::CreateFunction(b_, b_.CreateString(f.name), b_.CreateVector(values),
                              b_.CreateVector(indices(f.params)), b_.CreateVector(indices(f.results)),
                              b_.CreateVector(nodes));
  }

  Offset<fb::TensorSig> signature(const std::string& name, const ir::Value& v) {
    return fb::CreateTensorSig(b_, b_.CreateString(name), fb::DType(v.type.dtype), shape(v.type.shape));
  }

  Offset<fb::Entry> entry(const ir::Entry& e) {
    const ir::Function& f = m_.functions[size_t(e.function)];
    std::vector<Offset<fb::TensorSig>> inputs, outputs;
    for (size_t i = 0; i < e.input_names.size(); ++i)
      inputs.push_back(signature(e.input_names[i], f.values[size_t(f.params[i])]));
    for (size_t i = 0; i < e.output_names.size(); ++i)
      outputs.push_back(signature(e.output_names[i], f.values[size_t(f.results[i])]));
    auto ids = [&](const std::vector<int32_t>& v) {
      std::vector<uint32_t> out(v.begin(), v.end());
      return v.empty() ? 0 : b_.CreateVector(out);
    };
    return fb::CreateEntry(b_, b_.CreateString(e.name), uint32_t(e.function), b_.CreateVector(inputs),
                           b_.CreateVector(outputs), ids(e.reads), ids(e.writes));
  }

  Offset<flatbuffers::Vector<Offset<fb::QuantizedConstant>>> quantized_records() {
    std::vector<Offset<fb::QuantizedConstant>> out;
    for (const auto& [q, scales] : records_)  // in constant order, as quantize_constants gives them
      out.push_back(fb::CreateQuantizedConstant(b_, uint32_t(q->constant), fb::WeightStorage(q->layout.storage),
                                                q->layout.axis, q->layout.block, fb::ScaleType(q->layout.scale_type),
                                                scales));
    return b_.CreateVector(out);
  }

  struct Record {
    const QuantizedConstant* q;
    int32_t scales;
  };
  const ir::Module& m_;
  std::vector<const std::vector<uint8_t>*> stored_;
  std::vector<Record> records_;
  FlatBufferBuilder b_{64 * 1024};
  std::unordered_map<std::string, int32_t> symbol_ids_;
  std::vector<std::string> symbol_names_;
};

}  // namespace

bool emit_graph(const ir::Module& module, std::vector<uint8_t>* out, std::string* error,
                const std::vector<QuantizedConstant>* quantized) {
  // The emitter indexes freely by the module's ids; a broken module must not
  // become an out-of-range read here or a corrupt file later.
  if (std::string problem = ir::verify(module); !problem.empty()) {
    *error = "invalid IR: " + problem;
    return false;
  }
  const uint64_t estimate = estimate_table_bytes(module);
  if (estimate > kMaxTableBytes) {
    *error = "the graph table would need about " + std::to_string(estimate >> 20) +
             " MiB, over the 2 GiB FlatBuffers limit";
    return false;
  }

  Emitter emitter(module, quantized);
  std::vector<fb::Constant> layout;
  uint64_t data_end = 0;
  error->clear();
  if (!emitter.build(&layout, &data_end, error)) return false;

  format::Header h;
  h.table_offset = format::kHeaderSize;
  h.table_size = emitter.table_size();
  h.data_offset = format::align_up(h.table_offset + h.table_size);
  h.data_size = format::align_up(data_end) + format::kDataTailPadding;

  out->assign(h.data_offset + h.data_size, 0);
  uint8_t* file = out->data();
  std::memcpy(file + h.table_offset, emitter.table(), h.table_size);
  uint8_t* data = file + h.data_offset;
  for (size_t i = 0; i < emitter.stored().size(); ++i) {
    const auto& bytes = *emitter.stored()[i];
    if (!bytes.empty()) std::memcpy(data + layout[i].offset(), bytes.data(), bytes.size());
  }
  h.flags = format::kFlagDataXxh3;
  h.minor = format::kMinorVersionWithoutQuantization;
  if (emitter.has_quantized()) {
    h.flags |= format::kFlagQuantizedWeights;
    h.minor = format::kMinorVersion;
  }
  h.table_crc = format::crc32(file + h.table_offset, h.table_size);
  h.data_xxh3 = format::xxh3_64(data, h.data_size);
  format::encode_header(h, file);
  return true;
}

}  // namespace sg::compiler
