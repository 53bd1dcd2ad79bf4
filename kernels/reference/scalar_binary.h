// scalar_binary_kernel and scalar_binary_fixed (interface/kernel.h) of the binary
// family, defined beside its other kernels (elementwise_binary.cc); kernel_table.cc
// routes to them when the build has that family (selection/selected_ops.h).
#pragma once

#include "interface/kernel.h"
#include "ops/op_table.h"

namespace sg::kernels {

KernelFn scalar_binary_kernel_of(ops::OpId op, DType in, DType out);
FixedFn scalar_binary_fixed_of(ops::OpId op, DType in, DType out);

}  // namespace sg::kernels
