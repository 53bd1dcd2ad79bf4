// The loop statements (SPEC §5): dispatch on the kind of the test or the
// iterable. A static test or iterable unrolls at compile time; where a jump
// inside it depends on a run-time value (a staged flag), each later iteration
// runs under an If on the flags. A staged one becomes a While node
// (staged_loop.cc).
#include <map>
#include <set>

#include "staging/liveness.h"
#include "staging/staged_if.h"
#include "staging/staged_loop.h"

namespace sg::compiler::staging {
namespace {

// Saves the enclosing loop's break/continue flags; the loop in between owns them.
class LoopFlagsScope {
 public:
  explicit LoopFlagsScope(Stager& st) : scope_(&st.scope()) {
    for (int k = 0; k < 2; ++k) {
      const Value* v = scope_->find_local(names_[k]);
      if (v) saved_[k] = *v;
    }
    scope_->set(kBreakFlag, Value(false));
    scope_->set(kContinueFlag, Value(false));
  }
  ~LoopFlagsScope() {
    for (int k = 0; k < 2; ++k) {
      if (saved_[k]) scope_->set(names_[k], *saved_[k]);
      else scope_->erase(names_[k]);
    }
  }
  LoopFlagsScope(const LoopFlagsScope&) = delete;
  LoopFlagsScope& operator=(const LoopFlagsScope&) = delete;

 private:
  Scope* scope_;
  const char* names_[2] = {kBreakFlag, kContinueFlag};
  std::optional<Value> saved_[2];
};

// One iteration of a compile-time loop. Returns false when the loop ends;
// `result` becomes kReturn when it ended by a return.
bool static_iteration(Stager& st, const Stmt& s, const std::function<void()>& iteration, Flow& result) {
  Scope& sc = st.scope();
  std::vector<std::string> staged_flags;
  for (const char* f : {kBreakFlag, kReturnFlag})
    if (flag_staged(sc.find_local(f))) staged_flags.push_back(f);
  sc.set(kContinueFlag, Value(false));
  if (staged_flags.empty()) {
    iteration();
  } else {
    // An earlier iteration may have left under a run-time test.
    Value any = *sc.find_local(staged_flags[0]);
    if (staged_flags.size() > 1) any = st.tensor_binary(ops::OpId::LogicalOr, any, *sc.find_local(staged_flags[1]), s.span);
    st.branches().staged_branches(
        s.span, st.apply(ops::OpId::LogicalNot, {}, {any}, s.span), "iter",
        [&] {
          for (const std::string& f : staged_flags) sc.set(f, Value(false));
          iteration();
          sc.set(kContinueFlag, Value(false));
        },
        [&] {
          if (staged_flags.size() == 1) sc.set(staged_flags[0], Value(true));
        });
  }
  sc.set(kContinueFlag, Value(false));
  if (flag_true(sc.find_local(kBreakFlag))) return false;
  if (flag_true(sc.find_local(kReturnFlag))) {
    result = Flow::kReturn;
    return false;
  }
  return true;
}

[[noreturn]] void too_many(Stager& st, const Stmt& s) {
  st.fail(s.span, "this loop runs more than " + std::to_string(kMaxUnrolledIterations) +
                      " iterations at compile time; use sg.range to keep it a loop in the graph");
}

void target_names(const Expr& t, std::set<std::string>& out) {
  if (t.kind == ExprKind::kName) out.insert(t.name);
  for (const ExprPtr& e : t.elts) target_names(*e, out);
}

std::string counter_name(const Stmt& s) {
  return "$for" + std::to_string(s.span.line) + ":" + std::to_string(s.span.col);
}

}  // namespace

Flow Loops::exec_while(const Stmt& s) {
  Value test = s_.eval(*s.test);
  if (test.is<Staged>()) {
    if (s_.explaining())
      s_.explain(s.span, "while", "staged (test `" + s_.source_text(s.test->span) + "` " + staged_reason(s_, test) + ")");
    StagedLoopSpec spec{s, "while", [&] { return s_.eval(*s.test); }, [] {}, {}, {}};
    return run_staged_loop(s_, spec);
  }
  // A loop with a static test that leaves by a staged break or return (`while
  // True:`, `while j < 3:` with an `if x[j] > t: break`) becomes a While node once
  // that shows, before its second test: staged from the start again. Its test
  // would otherwise turn staged there (the variables it reads now depend on
  // whether the loop left), and a static test cannot say when a run leaves.
  std::optional<Stager::Checkpoint> before;
  const LoopJumps jumps = loop_jumps(s.body);
  if (jumps.has_break || jumps.has_return) before = s_.checkpoint();
  s_.explain(s.span, "while", "compile time (the test `" + s_.source_text(s.test->span) + "` is static)");
  LoopFlagsScope flags(s_);
  int64_t iterations = 0;
  Flow result = Flow::kNormal;
  for (;;) {
    if (iterations > 0) {
      if (before && (flag_staged(s_.scope().find_local(kBreakFlag)) || flag_staged(s_.scope().find_local(kReturnFlag)))) {
        s_.rollback(*before);
        s_.explain(s.span, "while", "staged (the test `" + s_.source_text(s.test->span) +
                                        "` is static, but the loop ends by a break or return known only at run time)");
        StagedLoopSpec spec{s, "while", [&] { return s_.eval(*s.test); }, [] {}, {}, {}};
        return run_staged_loop(s_, spec);
      }
      test = s_.eval(*s.test);
      if (test.is<Staged>())
        s_.fail(s.span, "the test `" + s_.source_text(s.test->span) + "` of this while loop became known only at run time after " +
                            std::to_string(iterations) + " iterations at compile time; start the loop variables as "
                            "tensors (e.g. i = sg.zeros((), dtype=sg.i64)) so that the test is staged from the start, "
                            "or use sg.range");
    }
    if (!s_.truth(test, s.test->span, "a while loop")) break;
    if (++iterations > kMaxUnrolledIterations) too_many(s_, s);
    s_.count_step(s.span);
    if (!static_iteration(s_, s, [&] { s_.exec_block(s.body, &s); }, result)) break;
  }
  return result;
}

// `for x in range(...)` / `sg.range(...)`: staged when a bound is staged (or by
// sg.range), else the static range to unroll, left in `iterable`.
std::optional<Flow> Loops::exec_for_range(const Stmt& s, bool sg_range, const std::set<std::string>& targets,
                                          Value& iterable) {
  const bool py_range = !sg_range;
  Args a;
  a.span = s.iter->span;
  for (const ExprPtr& x : s.iter->elts) {
    a.pos.push_back(s_.eval(*x));
    a.pos_spans.push_back(x->span);
  }
  if (!s.iter->keywords.empty()) s_.fail(s.iter->span, "range() takes no keyword arguments");
  if (a.pos.empty() || a.pos.size() > 3)
    s_.fail(s.iter->span, "range expected 1 to 3 arguments, got " + std::to_string(a.pos.size()));
  bool any_staged = false;
  for (const Value& v : a.pos) any_staged = any_staged || v.is<Staged>();
  if (py_range && !any_staged) {
    iterable = s_.call_builtin("range", a);
  } else {
    Value start = a.pos.size() > 1 ? a.pos[0] : Value(int64_t(0));
    Value stop = a.pos.size() > 1 ? a.pos[1] : a.pos[0];
    Value step = a.pos.size() > 2 ? a.pos[2] : Value(int64_t(1));
    for (Value* v : {&start, &stop, &step}) {
      if (v->is_tensor() && (!is_int(s_.tensor_dtype(*v)) || s_.tensor_rank(*v) != 0))
        s_.fail(s.iter->span, "range bounds must be integer scalars, got " + s_.module().format_type(s_.tensor_type(*v)));
      if (!v->is_tensor() && !(v->is<int64_t>() || v->is<bool>()))
        s_.fail(s.iter->span, "range bounds must be integers, got " + type_name(*v));
      *v = s_.to_tensor(*v, DType::kI64, s.iter->span);
    }
    std::optional<int64_t> static_step;
    if (step.is<StaticTensorPtr>()) {
      static_step = step.as<StaticTensorPtr>()->element_as_int(0);
      if (*static_step == 0) s_.fail(s.iter->span, "range() arg 3 must not be zero");
    } else {
      // A staged step is checked where the loop starts, as Python's range() does.
      s_.assert_at_run_time(s_.compare(CmpOp::kNe, step, Value(int64_t(0)), s.iter->span),
                            "range() arg 3 must not be zero", s.iter->span);
    }
    if (s_.explaining()) {
      std::string why = sg_range ? "sg.range always stages" : "";
      for (size_t i = 0; i < a.pos.size() && why.empty(); ++i)
        if (a.pos[i].is<Staged>())
          why = "bound `" + s_.source_text(a.pos_spans[i]) + "` " + staged_reason(s_, a.pos[i]);
      s_.explain(s.span, "for", "staged (" + why + ")");
    }
    const std::string counter = counter_name(s);
    const SourceSpan span = s.iter->span;
    StagedLoopSpec spec{
        s, "for",
        [&, counter] {
          Value c = s_.lookup_name(counter, span);
          if (static_step) return s_.compare(*static_step > 0 ? CmpOp::kLt : CmpOp::kGt, c, stop, span);
          Value up = s_.compare(CmpOp::kLt, c, stop, span), down = s_.compare(CmpOp::kGt, c, stop, span);
          Args w;
          w.pos = {s_.compare(CmpOp::kGt, step, Value(int64_t(0)), span), up, down};
          w.span = span;
          return s_.call_sg("where", w);
        },
        [&, counter] {
          Value c = s_.lookup_name(counter, span);
          mark_weak_int(c);  // a Python int in eager mode
          s_.assign(*s.target, c, s.target->span);
          s_.scope().set(counter, s_.binary(BinOp::kAdd, c, step, span));
        },
        {{counter, start}},
        targets};
    if (static_step) {
      const std::optional<ir::Dim> lo = s_.known_dim(start), hi = s_.known_dim(stop);
      if (lo && hi) spec.may_run_zero_times = !at_least_one(*static_step > 0 ? *hi - *lo : *lo - *hi);
    }
    return run_staged_loop(s_, spec);
  }
  return std::nullopt;
}

// A staged loop over tensors whose first dim is known only at run time (zipped, or
// enumerated from `index_base`): a counter indexes each.
Flow Loops::exec_for_over_tensors(const Stmt& s, const Value& iterable, const std::vector<Value>& zipped,
                                  std::optional<int64_t> index_base,
                                  const std::vector<std::pair<size_t, Value>>& zipped_numbers,
                                  const std::set<std::string>& targets) {
  const SourceSpan span = s.iter->span;
  const std::vector<Value> seqs = zipped.empty() ? std::vector<Value>{iterable} : zipped;
  // zip stops at the shortest: the least of the first dims (one where they are equal).
  std::optional<ir::Dim> first;
  Value n;
  bool runs = true;  // at least once, for every binding
  for (const Value& seq : seqs) {
    const ir::Dim d = s_.tensor_type(seq).shape[0];
    runs = runs && at_least_one(d);
    if (first && *first == d) continue;
    n = first ? s_.tensor_binary(ops::OpId::Minimum, n, s_.shape_item(seq, 0, span), span) : s_.shape_item(seq, 0, span);
    first = d;
  }
  s_.explain(s.span, "for", "staged (iterating over " + std::string(zipped.empty() ? "a tensor" : "tensors") +
                                " whose first dim " + s_.module().format_dim(s_.tensor_type(seqs[0]).shape[0]) +
                                " is known only at run time)");
  const std::string counter = counter_name(s);
  StagedLoopSpec spec{
      s, "for",
      [&, counter] { return s_.compare(CmpOp::kLt, s_.lookup_name(counter, span), n, span); },
      [&, counter] {
        Value c = s_.lookup_name(counter, span);
        mark_weak_int(c);  // enumerate's index: a Python int in eager mode
        std::vector<Value> items;
        for (const Value& seq : seqs) items.push_back(s_.index_tensor_value(seq, c, span));
        for (const auto& [k, number] : zipped_numbers) mark_weak(items[k], WeakOrigin::of_number(number));
        Value item = zipped.empty() ? items[0] : make_tuple(std::move(items));
        if (index_base)
          item = make_tuple({*index_base == 0 ? c : s_.binary(BinOp::kAdd, c, Value(*index_base), span), item});
        s_.assign(*s.target, item, s.target->span);
        s_.scope().set(counter, s_.binary(BinOp::kAdd, c, Value(int64_t(1)), span));
      },
      {{counter, s_.to_tensor(Value(int64_t(0)), DType::kI64, span)}},
      targets};
  spec.may_run_zero_times = !runs;
  return run_staged_loop(s_, spec);
}

Flow Loops::exec_for(const Stmt& s) {
  std::set<std::string> targets;
  target_names(*s.target, targets);
  Value iterable;
  std::optional<int64_t> index_base;  // `for i, row in enumerate(x)` over a tensor
  std::vector<Value> zipped;          // `for a, b in zip(x, y)` over tensors
  std::vector<std::pair<size_t, Value>> zipped_numbers;  // those stacked from Python numbers: index, a number
  if (s.iter->kind == ExprKind::kCall) {
    Value callee = s_.eval(*s.iter->a);
    if (callee.is<BuiltinV>() && callee.as<BuiltinV>().name == "zip" && s.iter->keywords.empty()) {
      Args a;
      a.span = s.iter->span;
      bool tensors = !s.iter->elts.empty(), symbolic = false;
      for (const ExprPtr& x : s.iter->elts) {
        Value v = s_.eval(*x);
        if (v.is<TensorListV>()) v = Value(s_.resolve_tensor_list(v.as<TensorListV>(), "list", x->span));
        tensors = tensors && v.is_tensor() && s_.tensor_rank(v) > 0;
        symbolic = symbolic || (v.is_tensor() && s_.tensor_rank(v) > 0 && !s_.tensor_type(v).shape[0].as_static());
        a.pos.push_back(std::move(v));
      }
      if (symbolic && !tensors) {
        // A static list beside them becomes a tensor, indexed by the counter like
        // the others: its numbers (each item standing for a Python number, cast
        // at each use as eager's would be) or its tensors of one type.
        for (size_t k = 0; k < a.pos.size(); ++k) {
          Value& v = a.pos[k];
          if (v.is_tensor()) continue;
          const SourceSpan at = s.iter->elts[k]->span;
          if (!v.is<ListPtr>() && !v.is<TuplePtr>() && !v.is<RangeV>())
            s_.fail(at, "zip over a tensor whose first dim is known only at run time takes tensors and static lists, "
                        "got " + type_name(v));
          std::vector<Value> items = s_.to_list(v, at);
          if (items.empty()) s_.fail(at, "zip over a tensor whose first dim is known only at run time: this list is empty");
          bool numbers = true, tensors_alike = true;
          for (const Value& item : items) {
            numbers = numbers && item.is_number() && item.data.index() == items[0].data.index();
            tensors_alike = tensors_alike && item.is_tensor() && items[0].is_tensor() &&
                            s_.tensor_type(item) == s_.tensor_type(items[0]);
          }
          if (!numbers && !tensors_alike)
            s_.fail(at, "zip over a tensor whose first dim is known only at run time takes a static list of numbers "
                        "of one kind (all ints or all floats) or of tensors of one dtype and shape");
          Args st;
          st.span = at;
          st.pos.push_back(Value(ListPtr(std::make_shared<ListObj>(ListObj{items}))));
          v = s_.call_sg("stack", st);
          if (numbers) zipped_numbers.emplace_back(k, items[0]);
        }
      }
      if (symbolic) zipped = a.pos;
      else iterable = s_.call_builtin("zip", a);
    }
    if (callee.is<BuiltinV>() && callee.as<BuiltinV>().name == "enumerate") {
      Args a;
      a.span = s.iter->span;
      for (const ExprPtr& x : s.iter->elts) a.pos.push_back(s_.eval(*x));
      for (const Keyword& k : s.iter->keywords) a.kw.emplace_back(k.name, s_.eval(*k.value));
      Value over = a.pos.empty() ? Value() : a.pos[0];
      if (over.is<TensorListV>()) over = Value(s_.resolve_tensor_list(over.as<TensorListV>(), "list", s.iter->span));
      if (over.is_tensor() && s_.tensor_rank(over) > 0 && !s_.tensor_type(over).shape[0].as_static()) {
        // Over a symbolic first dim: the loop below, each item with its index.
        index_base = s_.enumerate_start(a);
        iterable = over;
      } else {
        iterable = s_.call_builtin("enumerate", a);
      }
    }
    const bool sg_range = callee.is<SgMember>() && callee.as<SgMember>().name == "range";
    const bool py_range = callee.is<BuiltinV>() && callee.as<BuiltinV>().name == "range";
    if (sg_range || py_range)
      if (std::optional<Flow> f = exec_for_range(s, sg_range, targets, iterable)) return *f;
  }
  if (iterable.is<NoneV>() && zipped.empty()) iterable = s_.eval(*s.iter);
  if (iterable.is<TensorListV>()) iterable = Value(s_.resolve_tensor_list(iterable.as<TensorListV>(), "list", s.iter->span));
  if (!zipped.empty() ||
      (iterable.is_tensor() && s_.tensor_rank(iterable) > 0 && !s_.tensor_type(iterable).shape[0].as_static()))
    return exec_for_over_tensors(s, iterable, zipped, index_base, zipped_numbers, targets);
  if (iterable.is<SgMember>()) s_.fail(s.iter->span, "unexpected " + type_name(iterable));
  s_.explain(s.span, "for", "compile time (unrolled over a static " + type_name(iterable) + ")");
  LoopFlagsScope flags(s_);
  int64_t iterations = 0;
  Flow result = Flow::kNormal;
  s_.iterate(iterable, s.iter->span, "a for loop", [&](const Value& item) {
    if (++iterations > kMaxUnrolledIterations) too_many(s_, s);
    s_.count_step(s.span);
    return static_iteration(
        s_, s,
        [&] {
          s_.assign(*s.target, item, s.target->span);
          s_.exec_block(s.body, &s);
        },
        result);
  });
  return result;
}

Value Stager::sg_relax(Args& a) {
  if (a.pos.size() != 3 || !a.kw.empty()) fail(a.span, "sg.relax(x, name, axis) takes three positional arguments");
  if (!a.pos[1].is<std::string>() || a.pos[1].as<std::string>().empty())
    fail(a.span, "sg.relax: the dim name must be a non-empty string");
  const std::string name = a.pos[1].as<std::string>();
  Value x = to_tensor(a.pos[0], std::nullopt, a.span);
  const int64_t rank = int64_t(tensor_rank(x));
  int64_t axis = to_int(a.pos[2], a.span, "sg.relax's axis");
  if (axis < -rank || axis >= rank)
    fail(a.span, "sg.relax: axis " + std::to_string(axis) + " is out of range for rank " + std::to_string(rank));
  if (axis < 0) axis += rank;
  if (!cur_) fail(a.span, "sg.relax is only allowed inside a function");
  // A new name: one already known (an entry's dim, another relax) gets a suffix.
  bool known = false;
  for (const std::string& n : module_->symbols.names) known = known || n == name;
  const int32_t sym = known ? module_->symbols.fresh(name) : module_->symbols.intern(name);
  const int32_t id = materialize(x, a.span);
  control().relaxed[{cur_->fn, id}][axis] = sym;
  return staged(id);
}

std::string staged_reason(Stager& st, const Value& v) {
  if (!v.is<Staged>()) return "is static";
  std::set<std::string> inputs, carried;
  std::vector<std::pair<FnBuilder*, int32_t>> work{{st.builder(), st.local(v.as<Staged>())}};
  std::set<std::pair<int32_t, int32_t>> seen;
  // Per function visited, the node that defines each value (-1: none), built once:
  // scanning the nodes per value made an unrolled loop of staged ifs cubic.
  std::map<int32_t, std::vector<int32_t>> defined_by;
  const auto defining_node = [&](int32_t fn, const ir::Function& f, int32_t id) {
    auto [it, fresh] = defined_by.try_emplace(fn);
    if (fresh) {
      it->second.assign(f.values.size(), -1);
      for (size_t n = 0; n < f.nodes.size(); ++n)
        for (int32_t o : f.nodes[n].outputs)
          if (o >= 0 && size_t(o) < it->second.size()) it->second[size_t(o)] = int32_t(n);
    }
    return size_t(id) < it->second.size() ? it->second[size_t(id)] : -1;
  };
  while (!work.empty() && seen.size() < 4096) {
    auto [b, id] = work.back();
    work.pop_back();
    if (!seen.insert({b->fn, id}).second) continue;
    const ir::Function& f = st.module().functions[size_t(b->fn)];
    // Parameters of a function under construction may not be listed yet: a
    // value no node defines is a parameter.
    const int32_t def = defining_node(b->fn, f, id);
    const bool param = f.values[size_t(id)].constant < 0 && def < 0;
    if (param) {
      bool capture = false;
      for (const auto& c : b->captures)
        if (c.first == id && b->parent) {
          work.emplace_back(b->parent, c.second.id);
          capture = true;
        }
      if (!capture) (b->parent ? carried : inputs).insert(f.values[size_t(id)].name);
      continue;
    }
    if (def >= 0)
      for (int32_t i : f.nodes[size_t(def)].inputs) work.emplace_back(b, i);
  }
  auto list = [](const std::set<std::string>& names) {
    std::string out;
    size_t k = 0;
    for (const std::string& n : names) {
      out += (k == 0 ? "" : k + 1 == names.size() ? " and " : ", ") + ("'" + n + "'");
      ++k;
    }
    return out;
  };
  std::string out = "depends on ";
  if (!inputs.empty()) out += (inputs.size() == 1 ? "input " : "inputs ") + list(inputs);
  if (!carried.empty()) out += std::string(inputs.empty() ? "" : " and on ") + "loop variable" + (carried.size() == 1 ? " " : "s ") + list(carried);
  if (inputs.empty() && carried.empty()) out = "is known only at run time";
  return out;
}

}  // namespace sg::compiler::staging
