// Emission: IR -> the bytes of a .sgraph file (SPEC.md §10): the fixed header
// (schema/sgraph_header.h), the FlatBuffers table (schema/stagegraph.fbs), then the
// 64-byte aligned data segment with every constant, padded by >= 64 bytes.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "emit/quantize.h"
#include "ir/ir.h"

namespace sg::compiler {

// Fails (returns false with *error set) only on internal limits: a table over
// 2 GiB (weights live in the data segment, so this means an enormous graph).
// `quantized` (quantize_constants): constants stored quantized, with their scales
// appended as constants of their own; the file is then format 1.2 with the header's
// kFlagQuantizedWeights, else 1.1.
bool emit_graph(const ir::Module& module, std::vector<uint8_t>* out, std::string* error,
                const std::vector<QuantizedConstant>* quantized = nullptr);

}  // namespace sg::compiler
