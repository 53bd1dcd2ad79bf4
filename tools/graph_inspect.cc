// graph-inspect GRAPH.sgraph [--dot]: what a graph file holds (SPEC.md §9) — its
// format version, entry points with signatures, graph functions with node counts
// by op and their If/While/Call edges, constant bytes; --dot draws it for Graphviz
// node by node (graph_inspect_dot.cc). --op-table lists the ops and the dtypes
// their rules accept (graph_inspect_ops.cc), for the op-coverage test; --ops
// GRAPH... the ops a set of graphs needs, for a selective build.
#include <cstdio>
#include <iostream>
#include <string>
#include <string_view>
#include <vector>

#include "graph_inspect.h"
#include "out_of_memory.h"
#include "stagegraph/runtime.h"

namespace {

constexpr const char* kUsage =
    "usage: graph-inspect GRAPH.sgraph [--dot]\n"
    "       graph-inspect --op-table\n"
    "       graph-inspect --ops GRAPH.sgraph...\n"
    "\n"
    "Prints a graph file's format version, entry points with their signatures, its\n"
    "graph functions (node counts by op, If/While/Call edges) and constant bytes.\n"
    "\n"
    "  --dot       print a Graphviz digraph instead: one cluster per function,\n"
    "              one box per node (op, output types, source line), an edge\n"
    "              per value, dashed edges from If/While/Call to their functions\n"
    "  --op-table  print each op of the op table with the operand dtypes its\n"
    "              rule accepts (no graph file)\n"
    "  --ops       print the ops the graph files need, with the dtypes of their\n"
    "              operands and the kernels that may run them: the list that\n"
    "              -DSG_SELECTED_OPS=FILE builds a runtime for\n"
    "  --help      show this message\n"
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

int inspect_main(int argc, char** argv);

}  // namespace

int main(int argc, char** argv) {
  sg::tools::exit_on_out_of_memory("graph-inspect", 2);
  return sg::tools::guard_out_of_memory([&] { return inspect_main(argc, argv); });
}

namespace {

int inspect_main(int argc, char** argv) {
  std::vector<std::string> paths;
  bool dot = false;
  bool op_table = false;
  bool ops = false;
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (arg == "--help" || arg == "-h") {
      std::cout << kUsage;
      return 0;
    }
    if (arg == "--dot") {
      dot = true;
    } else if (arg == "--op-table") {
      op_table = true;
    } else if (arg == "--ops") {
      ops = true;
    } else if (!arg.empty() && arg[0] == '-') {
      std::cerr << "graph-inspect: unknown option '" << arg << "'\n" << kUsage;
      return 1;
    } else {
      paths.emplace_back(arg);
    }
  }
  if (ops) {
    if (paths.empty() || dot || op_table) {
      std::cerr << "graph-inspect: --ops takes one or more graph files, and no --dot or --op-table\n" << kUsage;
      return 1;
    }
    return sg::tools::print_ops(paths, std::cout, std::cerr);
  }
  if (paths.size() > 1) {
    std::cerr << "graph-inspect: more than one graph file given\n" << kUsage;
    return 1;
  }
  const std::string path = paths.empty() ? std::string() : paths[0];
  if (op_table) {
    if (!path.empty() || dot) {
      std::cerr << "graph-inspect: --op-table takes no graph file and no --dot\n" << kUsage;
      return 1;
    }
    return sg::tools::print_op_table(std::cout);
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
  if (dot) return sg::tools::print_dot(path, std::cout, std::cerr);
  print_text(**program, path);
  return 0;
}

}  // namespace
