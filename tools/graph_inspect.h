// graph-inspect's parts beyond the text summary: the per-node Graphviz drawing
// and the op table dump.
#pragma once

#include <ostream>
#include <string>

namespace sg::tools {

// Writes a Graphviz digraph of the graph file at `path`, which Program::load_file
// has accepted: one cluster per graph function, one box per node (op, output
// types, source line), an edge per value from its producer (a node, a parameter,
// a constant) to each use, and dashed edges from If/While/Call nodes to the
// clusters of their functions. Returns the exit status (2: unreadable).
int print_dot(const std::string& path, std::ostream& out, std::ostream& err);

// Writes one line per op of the op table: name, the operand whose dtype varies,
// and the dtypes the op's rule accepts there.
int print_op_table(std::ostream& out);

}  // namespace sg::tools
