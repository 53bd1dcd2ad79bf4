// graph-inspect's parts beyond the text summary: the per-node Graphviz drawing
// and the op table dump.
#pragma once

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

namespace sg::fb {
struct Graph;
}

namespace sg::tools {

// The graph table of the file at `path`, which Program::load_file has accepted,
// read again into `storage` and verified (a file changed in between is an error
// written to `err`, then null).
const fb::Graph* read_graph_table(const std::string& path, std::vector<uint64_t>& storage, std::ostream& err);

// Writes a Graphviz digraph of the graph file at `path`, which Program::load_file
// has accepted: one cluster per graph function, one box per node (op, output
// types, source line), an edge per value from its producer (a node, a parameter,
// a constant) to each use, and dashed edges from If/While/Call nodes to the
// clusters of their functions. Returns the exit status (2: unreadable).
int print_dot(const std::string& path, std::ostream& out, std::ostream& err);

// Writes one line per op of the op table: name, the operand whose dtype varies,
// and the dtypes the op's rule accepts there.
int print_op_table(std::ostream& out);

// --ops: writes the ops the graph files at `paths` need, one line each, sorted:
// name, the dtypes of its main operand (the one --op-table varies), then after
// " : " the kernels that may run it ("reference", and "xnnpack" for the f32
// nodes of ops the XNNPACK backend covers). -DSG_SELECTED_OPS=FILE reads the
// first word of each line. Every file must load (exit 2 naming it otherwise).
int print_ops(const std::vector<std::string>& paths, std::ostream& out, std::ostream& err);

}  // namespace sg::tools
