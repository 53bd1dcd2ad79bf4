// The runtime's side of custom ops (stagegraph/custom_op.h): a prepared kernel
// calling the registered kernel of a `custom` node (custom_op_check.h has the
// Session-creation check that every custom op an entry reaches has one).
#pragma once

#include <memory>

#include "program_impl.h"
#include "interface/kernel.h"
#include "stagegraph/custom_op.h"

namespace sg::runtime {

// The kernel registered in `ops` under the node's name, or null where there is none.
std::unique_ptr<kernels::PreparedKernel> custom_kernel(const CustomOps* ops, const ops::Attrs& attrs);

}  // namespace sg::runtime
