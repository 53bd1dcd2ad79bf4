// The selection of a selective build (ops/selected_ops.h), for the kernels' routing.
#pragma once

#include "ops/selected_ops.h"

namespace sg::kernels {
namespace selection = ::sg::ops::selection;
}  // namespace sg::kernels
