// graph-inspect GRAPH.sgraph [--dot]: what a graph file holds (SPEC.md §9) — its
// format version, entry points with signatures, graph functions with node counts
// by op and their If/While/Call edges, constant bytes; --dot draws it for Graphviz.
#include <cstdio>
#include <iostream>
#include <string>
#include <string_view>
#include <vector>

#include "stagegraph/runtime.h"

namespace {

constexpr const char* kUsage =
    "usage: graph-inspect GRAPH.sgraph [--dot]\n"
    "\n"
    "Prints a graph file's format version, entry points with their signatures, its\n"
    "graph functions (node counts by op, If/While/Call edges) and constant bytes.\n"
    "\n"
    "  --dot     print a Graphviz digraph instead: one cluster per function,\n"
    "            edges for If/While/Call\n"
    "  --help    show this message\n"
    "\n"
    "exit status: 0 ok, 1 usage error, 2 the file cannot be loaded\n";

std::string spec_string(const sg::TensorSpec& t) {
  return t.name + ": " + sg::dtype_name(t.dtype) + t.shape_string();
}

std::string signature(const sg::EntryInfo& e) {
  std::string s = e.name + "(";
  for (size_t i = 0; i < e.inputs.size(); ++i) s += (i ? ", " : "") + spec_string(e.inputs[i]);
  s += ") -> (";
  for (size_t i = 0; i < e.outputs.size(); ++i) s += (i ? ", " : "") + spec_string(e.outputs[i]);
  return s + ")";
}

std::string function_name(const std::vector<sg::FunctionInfo>& fns, uint32_t f) {
  return f < fns.size() ? fns[f].name : "#" + std::to_string(f);
}

void print_text(const sg::Program& program, const std::string& path) {
  const std::vector<sg::FunctionInfo> fns = program.functions();
  std::cout << "graph: " << path << "\n";
  std::cout << "format: " << program.format_major() << "." << program.format_minor() << "\n";
  std::cout << "entry points (" << program.entries().size() << "):\n";
  for (const sg::EntryInfo& e : program.entries()) std::cout << "  " << signature(e) << "\n";
  std::cout << "functions (" << fns.size() << "):\n";
  for (size_t f = 0; f < fns.size(); ++f) {
    const sg::FunctionInfo& fn = fns[f];
    std::cout << "  " << fn.name << ": " << fn.num_nodes << (fn.num_nodes == 1 ? " node" : " nodes") << ", "
              << fn.num_values << " values\n";
    for (const auto& [op, count] : fn.op_counts) std::cout << "    " << op << ": " << count << "\n";
    for (const sg::FunctionInfo::Edge& e : fn.edges)
      std::cout << "    -> " << function_name(fns, e.function) << " (" << e.kind << ")\n";
  }
  std::cout << "constant bytes: " << program.constant_bytes() << "\n";
}

std::string dot_escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out;
}

void print_dot(const sg::Program& program) {
  const std::vector<sg::FunctionInfo> fns = program.functions();
  std::cout << "digraph stagegraph {\n  compound=true;\n  node [shape=box, fontname=\"monospace\"];\n";
  for (size_t f = 0; f < fns.size(); ++f) {
    const sg::FunctionInfo& fn = fns[f];
    std::string label = fn.name + "\\n" + std::to_string(fn.num_nodes) + " nodes";
    for (const auto& [op, count] : fn.op_counts) label += "\\l" + dot_escape(op) + ": " + std::to_string(count);
    std::cout << "  subgraph cluster_" << f << " {\n    label=\"" << dot_escape(fn.name) << "\";\n"
              << "    f" << f << " [label=\"" << label << "\\l\"];\n  }\n";
  }
  for (const sg::EntryInfo& e : program.entries()) {
    const std::string id = "entry_" + std::to_string(&e - program.entries().data());
    std::cout << "  " << id << " [shape=oval, label=\"" << dot_escape(signature(e)) << "\"];\n";
    for (size_t f = 0; f < fns.size(); ++f)
      if (fns[f].name == e.name) std::cout << "  " << id << " -> f" << f << " [lhead=cluster_" << f << "];\n";
  }
  for (size_t f = 0; f < fns.size(); ++f)
    for (const sg::FunctionInfo::Edge& e : fns[f].edges)
    {
      std::cout << "  f" << f << " -> f" << e.function << " [label=\"" << e.kind << "\"";
      // Graphviz cannot clip an edge at a cluster that contains both its ends.
      if (e.function != f) std::cout << ", lhead=cluster_" << e.function << ", ltail=cluster_" << f;
      std::cout << "];\n";
    }
  std::cout << "}\n";
}

}  // namespace

int main(int argc, char** argv) {
  std::string path;
  bool dot = false;
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (arg == "--help" || arg == "-h") {
      std::cout << kUsage;
      return 0;
    }
    if (arg == "--dot") {
      dot = true;
    } else if (!arg.empty() && arg[0] == '-') {
      std::cerr << "graph-inspect: unknown option '" << arg << "'\n" << kUsage;
      return 1;
    } else if (path.empty()) {
      path = std::string(arg);
    } else {
      std::cerr << "graph-inspect: more than one graph file given\n" << kUsage;
      return 1;
    }
  }
  if (path.empty()) {
    std::cerr << "graph-inspect: no graph file given\n" << kUsage;
    return 1;
  }
  auto program = sg::Program::load_file(path);
  if (!program.ok()) {
    std::cerr << "graph-inspect: " << path << ": " << program.status().message() << "\n";
    return 2;
  }
  if (dot)
    print_dot(**program);
  else
    print_text(**program, path);
  return 0;
}
