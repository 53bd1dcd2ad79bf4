// stagegraph._runtime.op_graph (op_graph.cc): one-node programs for eager mode.
#pragma once

#include <nanobind/nanobind.h>

void register_op_graph(nanobind::module_& m);
