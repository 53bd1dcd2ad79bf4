// graph-inspect --dot: a Graphviz drawing of a graph file, node by node. The
// runtime's Program answers summary questions only, so the drawing reads the
// FlatBuffers table itself, after Program::load_file has accepted the file (the
// verifier and the index checks ran there; the table is verified again here so
// a file changed in between is an error, not an out-of-range read).
#include <cstdint>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include "graph_inspect.h"
#include "sgraph_header.h"
#include "stagegraph/dtype.h"
#include "stagegraph_generated.h"

namespace sg::tools {
namespace {

std::string escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  return out;
}

const char* dtype_text(fb::DType t) {
  const auto i = int(t);
  return i >= 0 && i < kNumDTypes ? dtype_name(DType(i)) : "?";
}

class DotWriter {
 public:
  DotWriter(const fb::Graph& graph, std::ostream& out) : g_(graph), out_(out) {}

  void write() {
    out_ << "digraph stagegraph {\n  compound=true;\n  node [shape=box, fontname=\"monospace\"];\n";
    const auto* fns = g_.functions();
    for (uint32_t f = 0; fns && f < fns->size(); ++f) write_function(f, *fns->Get(f));
    write_entries();
    for (const std::string& e : cross_edges_) out_ << e;
    out_ << "}\n";
  }

 private:
  std::string type_text(const fb::Value& v) const {
    std::string s = std::string(dtype_text(v.dtype())) + "[";
    const auto* shape = v.shape();
    for (uint32_t k = 0; shape && k < shape->size(); ++k) {
      const fb::Dim* d = shape->Get(k);
      if (k) s += ", ";
      const auto* symbols = g_.symbols();
      if (d->symbol() >= 0 && symbols && uint32_t(d->symbol()) < symbols->size())
        s += symbols->Get(uint32_t(d->symbol()))->str();
      else
        s += std::to_string(d->value());
    }
    return s + "]";
  }

  const fb::Value* value(const fb::Function& fn, uint32_t v) const {
    const auto* values = fn.values();
    return values && v < values->size() ? values->Get(v) : nullptr;
  }

  std::string loc_text(const fb::SourceLoc* loc) const {
    if (!loc || loc->line() == 0) return "";
    std::string file;
    const auto* files = g_.source_files();
    if (files && loc->file() < files->size()) {
      file = files->Get(loc->file())->str();
      const size_t slash = file.find_last_of('/');
      if (slash != std::string::npos) file = file.substr(slash + 1);
    }
    return file + ":" + std::to_string(loc->line()) + ":" + std::to_string(loc->column());
  }

  // The Graphviz id of what defines value v of function f: a node, a parameter or
  // a constant (drawn on first use). Empty when nothing does (a malformed graph).
  std::string producer(uint32_t f, const fb::Function& fn, uint32_t v) {
    if (v < producers_.size() && !producers_[v].empty()) return producers_[v];
    const fb::Value* val = value(fn, v);
    if (!val || val->constant() < 0) return "";
    const std::string id = "f" + std::to_string(f) + "_c" + std::to_string(v);
    out_ << "    " << id << " [shape=note, fontsize=9, label=\"const " << escape(type_text(*val)) << "\"];\n";
    if (v < producers_.size()) producers_[v] = id;
    return id;
  }

  void write_function(uint32_t f, const fb::Function& fn) {
    const std::string fid = "f" + std::to_string(f);
    out_ << "  subgraph cluster_" << f << " {\n    label=\"" << escape(fn.name()->str()) << "\";\n";
    // The anchor that edges into the cluster (entries, If/While/Call) point at.
    out_ << "    " << fid << " [shape=plaintext, label=\"" << escape(fn.name()->str()) << "\"];\n";
    producers_.assign(fn.values() ? fn.values()->size() : 0, "");
    const auto* params = fn.params();
    for (uint32_t i = 0; params && i < params->size(); ++i) {
      const uint32_t v = params->Get(i);
      const fb::Value* val = value(fn, v);
      const std::string id = fid + "_p" + std::to_string(i);
      std::string label = val && val->name() ? val->name()->str() + ": " : "";
      if (val) label += type_text(*val);
      out_ << "    " << id << " [shape=oval, label=\"" << escape(label) << "\"];\n";
      if (v < producers_.size()) producers_[v] = id;
    }
    const auto* nodes = fn.nodes();
    for (uint32_t n = 0; nodes && n < nodes->size(); ++n) write_node(f, fn, n, *nodes->Get(n));
    const auto* results = fn.results();
    for (uint32_t i = 0; results && i < results->size(); ++i) {
      const std::string id = fid + "_r" + std::to_string(i);
      out_ << "    " << id << " [shape=oval, style=dashed, label=\"result " << i << "\"];\n";
      const std::string from = producer(f, fn, results->Get(i));
      if (!from.empty()) out_ << "    " << from << " -> " << id << ";\n";
    }
    out_ << "  }\n";
  }

  void write_node(uint32_t f, const fb::Function& fn, uint32_t n, const fb::Node& node) {
    const std::string id = "f" + std::to_string(f) + "_n" + std::to_string(n);
    std::string op = node.op() ? node.op()->str() : "?";
    const auto* callees = node.functions();
    const auto* fns = g_.functions();
    if (node.kind() == fb::NodeKind::Call && callees && callees->size() == 1 && fns &&
        callees->Get(0) < fns->size()) {
      op += " " + fns->Get(callees->Get(0))->name()->str();
    }
    std::string types;
    const auto* outputs = node.outputs();
    for (uint32_t k = 0; outputs && k < outputs->size(); ++k) {
      const fb::Value* val = value(fn, outputs->Get(k));
      types += (k ? ", " : "") + (val ? type_text(*val) : std::string("?"));
    }
    std::string label = op + "\n" + (types.empty() ? "(no outputs)" : types);
    const std::string loc = loc_text(node.loc());
    if (!loc.empty()) label += "\n" + loc;
    const bool control = node.kind() != fb::NodeKind::Op;
    out_ << "    " << id << " [label=\"" << escape(label) << "\"" << (control ? ", style=bold" : "") << "];\n";
    const auto* inputs = node.inputs();
    for (uint32_t k = 0; inputs && k < inputs->size(); ++k) {
      const std::string from = producer(f, fn, inputs->Get(k));
      if (!from.empty()) out_ << "    " << from << " -> " << id << ";\n";
    }
    for (uint32_t k = 0; outputs && k < outputs->size(); ++k)
      if (outputs->Get(k) < producers_.size()) producers_[outputs->Get(k)] = id;
    if (!control || !callees) return;
    static constexpr const char* kIfRoles[] = {"then", "else"};
    static constexpr const char* kWhileRoles[] = {"cond", "body"};
    for (uint32_t k = 0; k < callees->size(); ++k) {
      const uint32_t callee = callees->Get(k);
      std::string role = "call";
      if (node.kind() == fb::NodeKind::If && k < 2) role = kIfRoles[k];
      if (node.kind() == fb::NodeKind::While && k < 2) role = kWhileRoles[k];
      std::string edge = "  " + id + " -> f" + std::to_string(callee) + " [style=dashed, label=\"" + role + "\"";
      // Graphviz cannot clip an edge at a cluster that contains both its ends.
      if (callee != f) edge += ", lhead=cluster_" + std::to_string(callee);
      cross_edges_.push_back(edge + "];\n");
    }
  }

  void write_entries() {
    const auto* entries = g_.entries();
    for (uint32_t i = 0; entries && i < entries->size(); ++i) {
      const fb::Entry* e = entries->Get(i);
      const std::string id = "entry_" + std::to_string(i);
      out_ << "  " << id << " [shape=doubleoctagon, label=\"entry " << escape(e->name()->str()) << "\"];\n";
      out_ << "  " << id << " -> f" << e->function() << " [lhead=cluster_" << e->function() << "];\n";
    }
  }

  const fb::Graph& g_;
  std::ostream& out_;
  std::vector<std::string> producers_;    // of the function being written, by value
  std::vector<std::string> cross_edges_;  // If/While/Call edges, written after all clusters
};

}  // namespace

const fb::Graph* read_graph_table(const std::string& path, std::vector<uint64_t>& storage, std::ostream& err) {
  std::ifstream file(path, std::ios::binary | std::ios::ate);
  if (!file) {
    err << "graph-inspect: " << path << ": cannot read the file again\n";
    return nullptr;
  }
  const auto size = static_cast<size_t>(file.tellg());
  // uint64_t storage keeps the table (at a 64-byte offset) aligned for FlatBuffers.
  storage.assign((size + 7) / 8, 0);
  auto* bytes = reinterpret_cast<uint8_t*>(storage.data());
  file.seekg(0);
  file.read(reinterpret_cast<char*>(bytes), std::streamsize(size));
  format::Header h;
  if (!file || !format::decode_header(bytes, size, &h) || h.table_offset > size ||
      h.table_size > size - h.table_offset) {
    err << "graph-inspect: " << path << ": the file changed since it was loaded\n";
    return nullptr;
  }
  const uint8_t* table = bytes + h.table_offset;
  flatbuffers::Verifier verifier(table, size_t(h.table_size));
  if (!fb::VerifyGraphBuffer(verifier)) {
    err << "graph-inspect: " << path << ": the graph table does not verify\n";
    return nullptr;
  }
  return fb::GetGraph(table);
}

int print_dot(const std::string& path, std::ostream& out, std::ostream& err) {
  std::vector<uint64_t> storage;
  const fb::Graph* graph = read_graph_table(path, storage, err);
  if (graph == nullptr) return 2;
  DotWriter(*graph, out).write();
  return 0;
}

}  // namespace sg::tools
