// What a selective build (-DSG_SELECTED_OPS=FILE, selected_ops.h) has kernels for,
// asked at run time; kernel_table.cc, compiled with the selection, answers.
#pragma once

#include "ops/op_table.h"
#include "reference/kernel.h"

namespace sg::kernels {

// Whether this build has kernels for `op`: false only for the ops a selective build
// left out. The runtime refuses, on load, a graph that uses such an op.
// (reference_kernel(op) of such an op is a kernel that fails with kInternal.)
bool op_available(ops::OpId op);

// scalar_binary_kernel and scalar_binary_fixed (kernel.h) of the binary family,
// defined beside its other kernels; kernel_table.cc routes to them when the build
// has that family.
KernelFn scalar_binary_kernel_of(ops::OpId op, DType in, DType out);
FixedFn scalar_binary_fixed_of(ops::OpId op, DType in, DType out);

}  // namespace sg::kernels
