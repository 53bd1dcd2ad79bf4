// Liveness over the AST: backward dataflow over statements, with a fixpoint
// at each loop's back edge. See liveness.h.
#include "staging/liveness.h"

namespace sg::compiler::staging {
namespace {

void target_names(const Expr& t, NameSet& out) {
  if (t.kind == ExprKind::kName) out.insert(t.name);
  if (t.kind == ExprKind::kTuple || t.kind == ExprKind::kList)
    for (const ExprPtr& e : t.elts) target_names(*e, out);
  // x[i] = v rebinds x (value semantics: SPEC §4).
  if (t.kind == ExprKind::kSubscript && t.a->kind == ExprKind::kName) out.insert(t.a->name);
}

// What assigning to a target reads: containers and indices of item assignments.
void target_reads(const Expr& t, NameSet& out) {
  if (t.kind == ExprKind::kTuple || t.kind == ExprKind::kList)
    for (const ExprPtr& e : t.elts) target_reads(*e, out);
  if (t.kind == ExprKind::kSubscript || t.kind == ExprKind::kAttribute) {
    expr_reads(*t.a, out);
    if (t.b) expr_reads(*t.b, out);
  }
}

// Names a target binds outright (killed before the statement).
void killed_names(const Expr& t, NameSet& out) {
  if (t.kind == ExprKind::kName) out.insert(t.name);
  if (t.kind == ExprKind::kTuple || t.kind == ExprKind::kList)
    for (const ExprPtr& e : t.elts) killed_names(*e, out);
}

void def_reads(const FunctionDef& def, NameSet& out) {
  for (const Param& p : def.params)
    if (p.default_value) expr_reads(*p.default_value, out);
  for (const ExprPtr& d : def.decorators) expr_reads(*d, out);
  block_reads(def.body, out);
}

void stmt_reads(const Stmt& s, NameSet& out) {
  for (const ExprPtr& t : s.targets) target_reads(*t, out);
  if (s.target) {
    if (s.kind == StmtKind::kAugAssign) expr_reads(*s.target, out);
    else target_reads(*s.target, out);
  }
  for (const Expr* e : {s.value.get(), s.test.get(), s.msg.get(), s.iter.get()})
    if (e) expr_reads(*e, out);
  block_reads(s.body, out);
  block_reads(s.orelse, out);
  block_reads(s.finalbody, out);
  for (const ExceptHandler& h : s.handlers) {
    if (h.type) expr_reads(*h.type, out);
    block_reads(h.body, out);
  }
  if (s.func) def_reads(*s.func, out);
}

NameSet live_stmt(const Stmt& s, const NameSet& out, const LoopExits& exits);

NameSet live_block(const std::vector<StmtPtr>& body, size_t from, const NameSet& out, const LoopExits& exits) {
  NameSet live = out;
  for (size_t i = body.size(); i > from; --i) live = live_stmt(*body[i - 1], live, exits);
  return live;
}

NameSet live_stmt(const Stmt& s, const NameSet& out, const LoopExits& exits) {
  NameSet live;
  switch (s.kind) {
    case StmtKind::kAssign:
    case StmtKind::kAnnAssign: {
      if (s.kind == StmtKind::kAnnAssign && !s.value) return out;
      live = out;
      NameSet killed;
      if (s.kind == StmtKind::kAssign) {
        for (const ExprPtr& t : s.targets) killed_names(*t, killed);
      } else {
        killed_names(*s.target, killed);
      }
      for (const std::string& n : killed) live.erase(n);
      for (const ExprPtr& t : s.targets) target_reads(*t, live);
      if (s.target) target_reads(*s.target, live);
      expr_reads(*s.value, live);
      return live;
    }
    case StmtKind::kAugAssign:
      live = out;
      expr_reads(*s.target, live);
      expr_reads(*s.value, live);
      return live;
    case StmtKind::kExpr:
    case StmtKind::kAssert:
      live = out;
      if (s.value) expr_reads(*s.value, live);
      if (s.test) expr_reads(*s.test, live);
      if (s.msg) expr_reads(*s.msg, live);
      return live;
    case StmtKind::kIf:
      live = live_block(s.body, 0, out, exits);
      for (const std::string& n : live_block(s.orelse, 0, out, exits)) live.insert(n);
      expr_reads(*s.test, live);
      return live;
    case StmtKind::kWhile:
    case StmtKind::kFor: {
      live = loop_entry_live(s, out);
      if (s.iter) expr_reads(*s.iter, live);
      return live;
    }
    case StmtKind::kBreak: return exits.after ? *exits.after : out;
    case StmtKind::kContinue: return exits.entry ? *exits.entry : out;
    case StmtKind::kReturn:
      if (s.value) expr_reads(*s.value, live);
      return live;
    case StmtKind::kFunctionDef:
      live = out;
      live.erase(s.func->name);
      def_reads(*s.func, live);
      return live;
    case StmtKind::kPass:
    case StmtKind::kImport:
    case StmtKind::kImportFrom:
    case StmtKind::kClassDef:
    case StmtKind::kGlobal:
    case StmtKind::kNonlocal: return out;
    case StmtKind::kDel:
      live = out;
      for (const ExprPtr& t : s.targets) expr_reads(*t, live);
      return live;
    case StmtKind::kRaise:
      if (s.value) expr_reads(*s.value, live);
      if (s.msg) expr_reads(*s.msg, live);
      return live;
    case StmtKind::kTry: {
      // Any statement of the body may raise: what a handler reads is live on entry.
      const NameSet after_final = live_block(s.finalbody, 0, out, exits);
      live = live_block(s.body, 0, live_block(s.orelse, 0, after_final, exits), exits);
      for (const ExceptHandler& h : s.handlers) {
        for (const std::string& n : live_block(h.body, 0, after_final, exits)) live.insert(n);
        if (h.type) expr_reads(*h.type, live);
      }
      for (const std::string& n : after_final) live.insert(n);
      return live;
    }
  }
  return out;
}

void find_jumps(const std::vector<StmtPtr>& body, bool nested_loop, LoopJumps& j) {
  for (const StmtPtr& s : body) {
    switch (s->kind) {
      case StmtKind::kBreak: j.has_break = j.has_break || !nested_loop; break;
      case StmtKind::kContinue: j.has_continue = j.has_continue || !nested_loop; break;
      case StmtKind::kReturn: j.has_return = true; break;
      case StmtKind::kIf:
        find_jumps(s->body, nested_loop, j);
        find_jumps(s->orelse, nested_loop, j);
        break;
      case StmtKind::kWhile:
      case StmtKind::kFor: find_jumps(s->body, true, j); break;
      case StmtKind::kTry:
        find_jumps(s->body, nested_loop, j);
        find_jumps(s->orelse, nested_loop, j);
        find_jumps(s->finalbody, nested_loop, j);
        for (const ExceptHandler& h : s->handlers) find_jumps(h.body, nested_loop, j);
        break;
      default: break;
    }
  }
}

}  // namespace

void expr_reads(const Expr& e, NameSet& out) {
  if (e.kind == ExprKind::kName) out.insert(e.name);
  for (const Expr* x : {e.a.get(), e.b.get(), e.c.get()})
    if (x) expr_reads(*x, out);
  for (const ExprPtr& x : e.elts) expr_reads(*x, out);
  for (const ExprPtr& x : e.keys) expr_reads(*x, out);
  for (const Keyword& k : e.keywords) expr_reads(*k.value, out);
  for (const Comprehension& c : e.generators) {
    expr_reads(*c.iter, out);
    for (const ExprPtr& x : c.ifs) expr_reads(*x, out);
  }
}

void block_reads(const std::vector<StmtPtr>& body, NameSet& out) {
  for (const StmtPtr& s : body) stmt_reads(*s, out);
}

namespace {

// `name.append(...)` as a statement: the name.
const std::string* appended_name(const Stmt& s) {
  if (s.kind == StmtKind::kExpr && s.value->kind == ExprKind::kCall && s.value->a->kind == ExprKind::kAttribute &&
      s.value->a->name == "append" && s.value->a->a->kind == ExprKind::kName)
    return &s.value->a->a->name;
  return nullptr;
}

}  // namespace

void block_assigns(const std::vector<StmtPtr>& body, NameSet& out) {
  for (const StmtPtr& sp : body) {
    const Stmt& s = *sp;
    for (const ExprPtr& t : s.targets) target_names(*t, out);
    if (s.target && (s.kind != StmtKind::kAnnAssign || s.value)) target_names(*s.target, out);
    if (s.kind == StmtKind::kFunctionDef) out.insert(s.func->name);
    if (const std::string* name = appended_name(s)) out.insert(*name);
    block_assigns(s.body, out);
    block_assigns(s.orelse, out);
    block_assigns(s.finalbody, out);
    for (const ExceptHandler& h : s.handlers) {
      if (!h.name.empty()) out.insert(h.name);
      block_assigns(h.body, out);
    }
  }
}

void block_appends(const std::vector<StmtPtr>& body, NameSet& out) {
  for (const StmtPtr& sp : body) {
    if (const std::string* name = appended_name(*sp)) out.insert(*name);
    block_appends(sp->body, out);
    block_appends(sp->orelse, out);
    block_appends(sp->finalbody, out);
    for (const ExceptHandler& h : sp->handlers) block_appends(h.body, out);
  }
}

NameSet live_before(const std::vector<StmtPtr>& body, size_t from, const NameSet& live_out,
                    const LoopExits& exits) {
  return live_block(body, from, live_out, exits);
}

NameSet loop_entry_live(const Stmt& loop, const NameSet& after) {
  NameSet target;
  if (loop.kind == StmtKind::kFor) killed_names(*loop.target, target);
  NameSet entry = after;
  if (loop.test) expr_reads(*loop.test, entry);
  for (int round = 0; round < 64; ++round) {
    const LoopExits exits{&after, &entry};
    NameSet next = live_block(loop.body, 0, entry, exits);
    for (const std::string& n : target) next.erase(n);
    if (loop.kind == StmtKind::kFor && loop.target) target_reads(*loop.target, next);
    for (const std::string& n : after) next.insert(n);
    if (loop.test) expr_reads(*loop.test, next);
    if (next == entry) break;
    entry = std::move(next);
  }
  return entry;
}

LoopJumps loop_jumps(const std::vector<StmtPtr>& body) {
  LoopJumps j;
  find_jumps(body, false, j);
  return j;
}

}  // namespace sg::compiler::staging
