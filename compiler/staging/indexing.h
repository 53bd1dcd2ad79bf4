// Indexing shared by basic indexing (indexing.cc) and indexing with a tensor of
// indices or a boolean mask (advanced_indexing.cc), which lowers to basic
// indexing plus take / flat_nonzero / scatter.
#pragma once

#include <vector>

#include "staging/stager.h"

namespace sg::compiler::staging {

struct IndexItem {
  enum Kind { kIndex, kSlice, kNewAxis, kEllipsis } kind = kIndex;
  Value index;             // kIndex
  Value lo, hi, step;      // kSlice; NoneV when absent
  SourceSpan span;
};

// x[items] by basic indexing (one slice node, expand_dims for None), or with
// `update` x with x[items] = *update (one slice_update node).
Value basic_index(Stager& s, const Value& x, std::vector<IndexItem> items, SourceSpan span,
                  const Value* update = nullptr, bool from_source = false);

// Whether an item is a tensor of indices (rank >= 1) or a boolean mask.
bool is_advanced_item(Stager& s, const IndexItem& it);

// x[items] (or x with x[items] = *update) where one item is a tensor of integer
// indices (gathered with take, written with scatter) or a boolean mask (its
// nonzero positions, a length known only at run time).
Value advanced_index(Stager& s, const Value& x, std::vector<IndexItem> items, SourceSpan span,
                     const Value* update = nullptr);

// sg.nonzero / sg.where(cond) (a tuple of i64 index vectors), sg.flatnonzero,
// sg.compress (advanced_indexing.cc).
Value sg_nonzero(Stager& s, const Args& a, const std::string& name);
Value sg_compress(Stager& s, const Args& a, const std::string& name);

}  // namespace sg::compiler::staging
