// The call graph: lexical resolution of called names, then reachability.
#include "staging/call_graph.h"

#include <functional>

namespace sg::compiler::staging {
namespace {

// The defs a body introduces at its own level (inside if/while/for blocks too,
// not inside nested defs, which have their own level).
void collect_defs(const std::vector<StmtPtr>& body, std::map<std::string, const FunctionDef*>& out) {
  for (const StmtPtr& s : body) {
    if (s->kind == StmtKind::kFunctionDef) {
      out[s->func->name] = s->func.get();
      continue;
    }
    collect_defs(s->body, out);
    collect_defs(s->orelse, out);
    collect_defs(s->finalbody, out);
    for (const ExceptHandler& h : s->handlers) collect_defs(h.body, out);
  }
}

}  // namespace

CallGraph::CallGraph(const Module& module) {
  std::map<std::string, const FunctionDef*> top;
  collect_defs(module.body, top);
  for (const StmtPtr& s : module.body)
    if (s->kind == StmtKind::kFunctionDef) visit_def(*s->func, top);
  for (const StmtPtr& s : module.body) {
    if (s->kind != StmtKind::kClassDef) continue;
    std::map<std::string, const FunctionDef*> methods;
    for (const StmtPtr& m : s->cls->body)
      if (m->kind == StmtKind::kFunctionDef) methods[m->func->name] = m->func.get();
    methods_ = &methods;
    for (const auto& [name, def] : methods) visit_def(*def, top);
    methods_ = nullptr;
  }
  find_cycles();
}

void CallGraph::visit_def(const FunctionDef& def, std::map<std::string, const FunctionDef*> visible) {
  order_.push_back(&def);
  collect_defs(def.body, visible);
  Node& node = nodes_[&def];
  std::function<void(const Expr*)> expr = [&](const Expr* e) {
    if (!e) return;
    if (e->kind == ExprKind::kName) node.names.insert(e->name);
    if (e->kind == ExprKind::kCall && e->a && e->a->kind == ExprKind::kName) {
      auto it = visible.find(e->a->name);
      if (it != visible.end()) node.callees.push_back(it->second);
    }
    if (methods_ && e->kind == ExprKind::kCall && e->a && e->a->kind == ExprKind::kAttribute &&
        e->a->a->kind == ExprKind::kName && e->a->a->name == "self") {
      auto it = methods_->find(e->a->name);
      if (it != methods_->end()) node.callees.push_back(it->second);
    }
    if (e->kind == ExprKind::kLambda && e->lambda_def) {
      for (const Param& p : e->lambda_def->params) expr(p.default_value.get());
      for (const StmtPtr& r : e->lambda_def->body) expr(r->value.get());
    }
    expr(e->a.get());
    expr(e->b.get());
    expr(e->c.get());
    for (const ExprPtr& x : e->elts) expr(x.get());
    for (const ExprPtr& x : e->keys) expr(x.get());
    for (const Keyword& k : e->keywords) expr(k.value.get());
    for (const Comprehension& c : e->generators) {
      expr(c.target.get());
      expr(c.iter.get());
      for (const ExprPtr& x : c.ifs) expr(x.get());
    }
  };
  std::function<void(const std::vector<StmtPtr>&)> block = [&](const std::vector<StmtPtr>& body) {
    for (const StmtPtr& s : body) {
      if (s->kind == StmtKind::kFunctionDef) {
        const FunctionDef& inner = *s->func;
        for (const Param& p : inner.params) expr(p.default_value.get());
        visit_def(inner, visible);
        // A nested def reads the enclosing scope: its names are this body's too.
        const std::set<std::string>& inner_names = nodes_[&inner].names;
        nodes_[&def].names.insert(inner_names.begin(), inner_names.end());
        continue;
      }
      for (const ExprPtr& t : s->targets) expr(t.get());
      expr(s->target.get());
      expr(s->value.get());
      expr(s->test.get());
      expr(s->msg.get());
      expr(s->iter.get());
      block(s->body);
      block(s->orelse);
      block(s->finalbody);
      for (const ExceptHandler& h : s->handlers) {
        expr(h.type.get());
        block(h.body);
      }
    }
  };
  block(def.body);
}

void CallGraph::find_cycles() {
  for (const FunctionDef* start : order_) {
    std::set<const FunctionDef*> seen;
    std::vector<const FunctionDef*> stack(nodes_[start].callees.begin(), nodes_[start].callees.end());
    while (!stack.empty()) {
      const FunctionDef* f = stack.back();
      stack.pop_back();
      if (f == start) {
        on_cycle_.insert(start);
        break;
      }
      if (!seen.insert(f).second) continue;
      for (const FunctionDef* g : nodes_[f].callees) stack.push_back(g);
    }
  }
}

const std::set<std::string>& CallGraph::names_reached(const FunctionDef* def) {
  auto cached = reached_.find(def);
  if (cached != reached_.end()) return cached->second;
  std::set<std::string> names;
  std::set<const FunctionDef*> seen;
  std::vector<const FunctionDef*> stack = {def};
  while (!stack.empty()) {
    const FunctionDef* f = stack.back();
    stack.pop_back();
    if (!seen.insert(f).second) continue;
    auto it = nodes_.find(f);
    if (it == nodes_.end()) continue;
    names.insert(it->second.names.begin(), it->second.names.end());
    for (const FunctionDef* g : it->second.callees) stack.push_back(g);
  }
  return reached_[def] = std::move(names);
}

}  // namespace sg::compiler::staging
