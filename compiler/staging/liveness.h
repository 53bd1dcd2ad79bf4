// Liveness over the AST (SPEC.md §5, DESIGN.md #2): which variables a staged
// loop must carry is decided from the program text before anything is emitted.
// A variable is live at a point when some path from there reads it before
// assigning it. The analysis is by name and conservative: it may call a variable
// live that is not (then it is carried needlessly), never the reverse.
#pragma once

#include <set>
#include <string>
#include <vector>

#include "frontend/ast.h"

namespace sg::compiler::staging {

using NameSet = std::set<std::string>;

// Names an expression reads.
void expr_reads(const Expr& e, NameSet& out);
// Names a block (nested defs included) reads anywhere.
void block_reads(const std::vector<StmtPtr>& body, NameSet& out);
// Names a block rebinds: assignment targets, loop targets, defs, and the
// receivers of item assignment and of `.append` (a list appended to is
// rebound when it becomes a tensor list). Nested defs are not entered.
void block_assigns(const std::vector<StmtPtr>& body, NameSet& out);
// The receivers of `.append` calls in a block (nested defs not entered).
void block_appends(const std::vector<StmtPtr>& body, NameSet& out);

// Where break and continue go, for the statements of a loop body.
struct LoopExits {
  const NameSet* after = nullptr;  // live after the loop (break)
  const NameSet* entry = nullptr;  // live at the start of an iteration (continue)
};

// Names live before statement `from` of `body` when `live_out` is live after it.
NameSet live_before(const std::vector<StmtPtr>& body, size_t from, const NameSet& live_out,
                    const LoopExits& exits);

// Names live at the start of an iteration of `loop` (a while or for statement)
// when `after` is live after it: the fixpoint over the loop's back edge.
NameSet loop_entry_live(const Stmt& loop, const NameSet& after);

// Which jumps leave a loop's body: break/continue of this loop (not of nested
// ones), return from anywhere in it (nested defs excluded).
struct LoopJumps {
  bool has_break = false;
  bool has_continue = false;
  bool has_return = false;
};
LoopJumps loop_jumps(const std::vector<StmtPtr>& body);

}  // namespace sg::compiler::staging
