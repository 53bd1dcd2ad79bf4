// Reverse-mode differentiation of staged graph functions (SPEC §11, DESIGN.md #14).
//
// vjp_function(f) builds a graph function that runs f's forward and then its
// backward: given f's parameters and a cotangent for each result asked for, it
// returns f's results (when kept) and a gradient for each parameter asked for.
// The backward nodes are staged through Stager::apply at the span of the forward
// node they differentiate, so their shapes are checked like any staged value and
// a shape bug in the backward is reported at the forward line that caused it.
//
// Control flow:
//   - If: the backward is an If on the same predicate over the branches' adjoints.
//   - While: the forward loop is widened to count its iterations and to append
//     the carried values each iteration starts from (only the ones that change)
//     to tapes; the backward is a While that runs as many iterations in reverse,
//     each reading its state from the tapes and calling the body's adjoint.
//   - Call: where the callee calls other functions (recursion included), the
//     forward calls a taped variant of it that appends, per activation, the
//     values its backward reads to tapes threaded through its Calls and Ifs, and
//     the backward is a Call of the callee's backward, which reads them back at
//     the row that activation wrote (autodiff_tape.cc): each forward runs once.
//     Otherwise (and for sg.checkpoint functions) a Call of the callee's adjoint,
//     which recomputes the callee's forward in its own frame.
#pragma once

#include <cstdint>
#include <vector>

#include "frontend/diagnostics.h"

namespace sg::compiler::staging {

class Stager;

struct VjpRequest {
  int32_t fn = -1;
  std::vector<bool> diff_params;  // per parameter: return its gradient
  std::vector<bool> ct_results;   // per result: take a cotangent parameter for it
  bool keep_primal = true;        // the results of f come first
};

// The new function's parameters: f's parameters, then one cotangent per result
// with ct_results set (the result's type). Its results: f's results (when
// keep_primal), then one gradient per parameter with diff_params set. Fails
// (located at `span` or at the forward node) where a gradient cannot be formed.
int32_t vjp_function(Stager& s, const VjpRequest& request, SourceSpan span);

}  // namespace sg::compiler::staging
