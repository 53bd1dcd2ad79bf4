// Semantic checks of a structurally valid graph table (SPEC.md §10): every index in
// range, dtypes and ranks valid, declared sizes plausible, ops known at a supported
// version, attributes of the right kinds, op outputs declared as the op's shape rule
// gives them (shape_check.h), values defined once and before use, control-flow
// signatures consistent, entry signatures matching their functions dim by dim.
// After this passes, the decoder and the executor trust the table.
#pragma once

#include <cstdint>
#include <span>
#include <string>

#include "ops/attrs.h"
#include "ops/op_table.h"
#include "stagegraph/status.h"
#include "stagegraph_generated.h"

namespace sg::runtime {

// The op version a control-flow node (If/While/Call) may carry.
inline constexpr uint16_t kControlFlowVersion = 1;

// `header_flags`: the file header's (format::kFlagQuantizedWeights allows Graph.quantized).
Status verify_graph(const fb::Graph& graph, std::span<const uint8_t> data_segment, uint32_t header_flags = 0);

// Decodes a node's attributes, stored by name in the file, into the positions of
// the op's AttrSpec list. Every attribute must be present exactly once with the
// declared kind.
Status decode_attrs(const fb::Node& node, const ops::OpDef& def, ops::Attrs* out);

// "control-flow node" names for messages and inspection.
const char* node_kind_name(fb::NodeKind kind);

}  // namespace sg::runtime
