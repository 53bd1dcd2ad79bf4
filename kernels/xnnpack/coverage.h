// Which ops the XNNPACK backend may take, for graph-inspect --ops.
#pragma once

#include "ops/op_table.h"

namespace sg::kernels {

// Whether xnnpack_prepare may give a kernel for some f32 nodes of `op` (it decides
// per node, by shapes, attributes and constants).
bool xnnpack_covers(ops::OpId op);

}  // namespace sg::kernels
