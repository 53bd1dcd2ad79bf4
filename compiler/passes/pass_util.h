// Helpers shared by the passes: use counts, value replacement, node flags and
// reading constants.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

#include "ir/ir.h"

namespace sg::compiler::passes {

// uses[v]: how many node inputs and function results name value v.
std::vector<int32_t> count_uses(const ir::Function& f);

// Replaces every use of `from` (node inputs, results) by `to`.
void replace_uses(ir::Function& f, int32_t from, int32_t to);

// For each function: whether running it can have an effect (print, assert, or a
// node calling a function that can), found over the call graph (recursion too).
std::vector<bool> functions_with_effects(const ir::Module& m);

// True for a node that must stay even when its outputs are unused.
bool node_has_effect(const ir::Node& n, const std::vector<bool>& effects);

// The constant behind value v, or null.
const ir::Constant* constant_of(const ir::Module& m, const ir::Function& f, int32_t v);

// True when the constant has at least one element and every element equals `x`
// (f32, f16, i32, i64, bool).
bool constant_is_splat(const ir::Constant& k, double x);

// True when every element is a zero of the given sign (integers: every element is
// 0). x + -0 and x - +0 are x for every float x; x + +0 is not where x is -0
// (-0 + +0 is +0), nor is x - -0.
bool constant_is_zero_splat(const ir::Constant& k, bool negative);

// The shape as int64s when every dim is static.
std::optional<std::vector<int64_t>> static_shape(const ir::Type& t);

// A node that may run where it did not before (hoisted out of a loop or a
// recursion): a pure op with static shapes that cannot fail at run time (its shape
// checks were all done at compile time; integer floordiv, mod and pow can).
bool hoistable_op(const ir::Function& f, const ir::Node& n);

// The ids v[0, first) and then v[first + j] where keep[j] (a node's inputs after
// an If's condition, a function's parameters or results), in order.
std::vector<int32_t> kept_ids(const std::vector<int32_t>& v, const std::vector<bool>& keep, size_t first = 0);

// Erases the nodes whose flag is set, keeping the order of the rest.
void erase_nodes(ir::Function& f, const std::vector<bool>& erase);

// Calls rewrite(fi, w) for every While node f.nodes[w] of every function fi whose
// cond and body functions no other node or entry uses, so that the rewrite may change
// their signatures. rewrite returns how many nodes it inserted before the While.
// Returns true when any rewrite inserted nodes.
bool rewrite_sole_user_whiles(ir::Module& m, const std::function<size_t(size_t fi, size_t w)>& rewrite);

}  // namespace sg::compiler::passes
