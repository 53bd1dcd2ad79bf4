// Session creation's check that every custom op an entry reaches has a kernel
// (stagegraph/custom_op.h), in the words of the API the caller uses.
#pragma once

#include <cstddef>

#include "stagegraph/custom_op.h"
#include "stagegraph/runtime.h"
#include "stagegraph/status.h"

namespace sg::runtime {

// Whose names a refusal gives for registering a kernel.
enum class CustomOpsApi { kCpp, kC };

// kInvalidArgument naming the first custom op that entry `entry` of `program`
// reaches (through If, While and Call) without a kernel in `ops`, with its source
// line; custom ops only other entries reach need none.
Status check_custom_kernels(const Program& program, size_t entry, const CustomOps* ops,
                            CustomOpsApi api = CustomOpsApi::kCpp);

}  // namespace sg::runtime
