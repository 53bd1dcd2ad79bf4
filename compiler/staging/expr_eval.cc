// Expression evaluation: names, literals, operators, attribute access,
// subscripts of Python values, comprehensions, calls.
#include "staging/classes.h"
#include "staging/control_state.h"
#include "staging/differentiation.h"
#include "staging/sg_ops_internal.h"  // sg_member_attribute
#include "staging/sg_variables.h"
#include "staging/staged_if.h"
#include "staging/stager.h"

namespace sg::compiler::staging {
namespace {

const char* const kDTypeNames[] = {"f32", "f16", "i32", "i64", "bool"};

[[noreturn]] void staged_control_flow(Stager& s, SourceSpan span, const std::string& what) {
  s.fail(span, what + " needs a value known at compile time, but this one is known only at run time");
}

}  // namespace

Value Stager::lookup_name(const std::string& name, SourceSpan span) {
  const Value* v = frame_ ? frame_->scope->lookup(name) : globals_->lookup(name);
  if (!v) {
    if (is_builtin(name) || Records::is_class_builtin(name)) return Value(BuiltinV{name});
    fail(span, "name '" + name + "' is not defined");
  }
  if (v->is<UndefinedV>()) {
    const UndefinedV& u = v->as<UndefinedV>();
    if (u.reported) throw StageAbort{};
    if (!u.message.empty()) fail(span, u.message, {Note{u.span, "the loop is here"}});
    fail(span, "variable '" + name + "' is assigned in only one branch of the staged `if` at line " +
                   std::to_string(u.span.line) + ": it is not defined after " + u.missing_in + " runs",
         {Note{u.span, "the staged `if` is here"}});
  }
  if (frame_) check_bound(name, span);
  return *v;
}

// A variable that may be unbound here: an Assert on its defined flag, with
// Python's UnboundLocalError message and why it may be unbound.
void Stager::check_bound(const std::string& name, SourceSpan span) {
  const Value* flag = frame_->scope->lookup(defined_flag(name));
  if (!flag || flag_true(flag) || !(flag->is<bool>() || flag->is<Staged>())) return;
  auto why = control().unbound_why.find(name);
  const std::string message = "UnboundLocalError: cannot access local variable '" + name +
                              "' where it is not associated with a value" +
                              (why == control().unbound_why.end() ? std::string() : ": " + why->second);
  if (flag->is<bool>()) fail(span, message);
  assert_at_run_time(*flag, message, span);
}

bool Stager::truth(const Value& v, SourceSpan span, const std::string& what) {
  if (v.is<NoneV>()) return false;
  if (v.is<bool>()) return v.as<bool>();
  if (v.is<int64_t>()) return v.as<int64_t>() != 0;
  if (v.is<double>()) return v.as<double>() != 0;
  if (v.is<std::string>()) return !v.as<std::string>().empty();
  if (v.is<TuplePtr>()) return !v.as<TuplePtr>()->empty();
  if (v.is<ListPtr>()) return !v.as<ListPtr>()->items.empty();
  if (v.is<DictPtr>()) return !v.as<DictPtr>()->items.empty();
  if (v.is<RangeV>()) return v.as<RangeV>().size() > 0;
  if (v.is<StaticTensorPtr>()) {
    const StaticTensor& t = *v.as<StaticTensorPtr>();
    if (t.numel() != 1)
      fail(span, "the truth value of a tensor of shape " + ops::shape_to_string(t.shape) +
                     " is ambiguous; use sg.any or sg.all");
    return t.element_as_double(0) != 0;
  }
  if (v.is<Staged>()) staged_control_flow(*this, span, what);
  return true;
}

int64_t Stager::to_int(const Value& v, SourceSpan span, const std::string& what) {
  if (v.is<int64_t>()) return v.as<int64_t>();
  if (v.is<bool>()) return v.as<bool>();
  if (v.is<StaticTensorPtr>()) {
    const StaticTensor& t = *v.as<StaticTensorPtr>();
    if (t.shape.empty() && (is_int(t.dtype) || t.dtype == DType::kBool)) return t.element_as_int(0);
  }
  if (v.is<Staged>()) fail(span, what + ": value is only known at run time");
  fail(span, what + " must be an int, got " + type_name(v));
}

std::vector<Value> Stager::to_list(const Value& iterable, SourceSpan span) {
  std::vector<Value> items;
  iterate(iterable, span, "iteration", [&](const Value& v) {
    if (items.size() >= size_t(kMaxUnrolledIterations) * 10) fail(span, "sequence too long at compile time");
    items.push_back(v);
    return true;
  });
  return items;
}

void Stager::iterate(const Value& it_in, SourceSpan span, const std::string& what,
                     const std::function<bool(const Value&)>& body) {
  Value it = it_in.is<TensorListV>() ? Value(resolve_tensor_list(it_in.as<TensorListV>(), "list", span)) : it_in;
  if (std::optional<Value> t = record_as_tuple(it)) it = *t;
  if (it.is<RangeV>()) {
    const RangeV r = it.as<RangeV>();
    const int64_t n = r.size();
    for (int64_t i = 0; i < n; ++i)
      if (!body(Value(r.start + i * r.step))) return;
    return;
  }
  if (it.is<TuplePtr>()) {
    TuplePtr t = it.as<TuplePtr>();
    for (const Value& v : *t)
      if (!body(v)) return;
    return;
  }
  if (it.is<ListPtr>()) {
    ListPtr l = it.as<ListPtr>();
    for (size_t i = 0; i < l->items.size(); ++i) {  // live: appends while iterating are seen
      Value v = l->items[i];
      if (!body(v)) return;
    }
    return;
  }
  if (it.is<DictPtr>()) {
    DictPtr d = it.as<DictPtr>();
    std::vector<Value> keys;
    for (const auto& kv : d->items) keys.push_back(kv.first);
    for (const Value& k : keys)
      if (!body(k)) return;
    return;
  }
  if (it.is<std::string>()) {
    const std::string s = it.as<std::string>();
    for (char c : s)
      if (!body(Value(std::string(1, c)))) return;
    return;
  }
  if (it.is_tensor()) {
    const ir::Type t = tensor_type(it);
    if (t.shape.empty()) fail(span, "iteration over a 0-d tensor");
    std::optional<int64_t> n = t.shape[0].as_static();
    if (!n)
      fail(span, "staged control flow: " + what + " over a tensor whose first dim " + module_->format_dim(t.shape[0]) +
                     " is known only at run time is not supported yet");
    for (int64_t i = 0; i < *n; ++i)
      if (!body(index_tensor_value(it, Value(i), span))) return;
    return;
  }
  fail(span, "'" + type_name(it) + "' object is not iterable");
}

Value Stager::get_attribute(const Value& v, const std::string& name, SourceSpan span) {
  if (v.is<VariablesPtr>()) return variables().attribute(v.as<VariablesPtr>(), name, span);
  if (v.is<InstancePtr>() || v.is<ClassPtr>() || v.is<SuperV>() || v.is<ExceptionV>() || v.is<PyModuleV>())
    return records().object_attribute(v, name, span);
  if (v.is<SgModuleV>()) {
    for (int i = 0; i < kNumDTypes; ++i)
      if (name == kDTypeNames[i]) return Value(DTypeV{DType(i)});
    if (is_library_module(name)) return library_module(name, span);
    if (!is_sg_member(name)) fail(span, "module 'stagegraph' has no attribute '" + name + "'");
    return Value(SgMember{name});
  }
  if (v.is<SgMember>()) return sg_member_attribute(*this, v.as<SgMember>().name, name, span);
  auto method = [&]() { return Value(BoundMethod{name, std::make_shared<Value>(v)}); };
  if (v.is_tensor()) {
    if (name == "shape") return shape_tuple(v, span);
    if (name == "ndim") return Value(int64_t(tensor_rank(v)));
    if (name == "dtype") return Value(DTypeV{tensor_dtype(v)});
    if (name == "T") {
      Args args;
      args.pos = {v};
      args.span = span;
      return call_sg("transpose", args);
    }
    if (name == "size") {
      const ir::Type t = tensor_type(v);
      if (auto n = ops::dim_product(t.shape).as_static()) return Value(*n);
      fail(span, "x.size of a tensor with symbolic dims is not supported; use the shape");
    }
    // NumPy's array methods for ops of the library; eager mode's Tensor has the same.
    static const char* const kMethods[] = {"astype", "reshape", "transpose", "sum",    "mean",  "max",
                                           "min",    "prod",    "any",       "all",    "argmax", "argmin",
                                           "squeeze", "flatten", "cumsum",   "clip",   "round", "dot",
                                           "cumprod"};
    for (const char* m : kMethods)
      if (name == m) return method();
    fail(span, "tensors have no attribute '" + name + "'");
  }
  if (v.is<TensorListV>())
    fail(span, "a tensor list (a list appended to in a staged loop) supports only `name.append(value)` as a "
               "statement, len, indexing, sg.stack and sg.concatenate");
  if (v.is<ListPtr>() && (name == "append" || name == "extend" || name == "pop" || name == "index" || name == "sort" ||
                          name == "reverse"))
    return method();
  if (v.is<DictPtr>() && (name == "items" || name == "keys" || name == "values" || name == "get"))
    return method();
  if (v.is<std::string>() && name == "join") return method();
  fail(span, "'" + type_name(v) + "' object has no attribute '" + name + "'");
}

Value Stager::call_value(const Value& callee, Args& args) {
  if (callee.is<std::shared_ptr<FunctionV>>()) return call_function(callee.as<std::shared_ptr<FunctionV>>(), args);
  if (callee.is<BuiltinV>()) return call_builtin(callee.as<BuiltinV>().name, args);
  if (callee.is<SgMember>()) return call_sg(callee.as<SgMember>().name, args);
  if (callee.is<TransformV>()) return differentiation().call_transform(callee.as<TransformV>(), args);
  if (callee.is<BoundMethod>()) {
    const BoundMethod& m = callee.as<BoundMethod>();
    if (m.self->is<InstancePtr>()) return records().call_record_method(m.self->as<InstancePtr>(), m.name, args);
    return call_method(m, args);
  }
  if (callee.is<BoundFunction>()) {
    const BoundFunction& b = callee.as<BoundFunction>();
    Args bound = args;
    bound.pos.insert(bound.pos.begin(), *b.self);
    bound.pos_spans.insert(bound.pos_spans.begin(), args.span);
    return call_function(b.fn, bound);
  }
  if (callee.is<ClassPtr>()) return records().instantiate(callee.as<ClassPtr>(), args);
  if (callee.is<InstancePtr>()) {
    const InstancePtr& obj = callee.as<InstancePtr>();
    if (find_class_attr(obj->cls, "__call__"))
      return call_value(records().object_attribute(callee, "__call__", args.span), args);
    fail(args.span, "'" + obj->cls->name + "' object is not callable");
  }
  if (callee.is<DTypeV>()) {  // sg.f32(3) builds a 0-d tensor, as NumPy's dtype constructors do
    if (args.pos.size() != 1 || !args.kw.empty()) fail(args.span, "a dtype call takes one argument");
    return to_tensor(args.pos[0], callee.as<DTypeV>().dtype, args.span);
  }
  fail(args.span, "'" + type_name(callee) + "' object is not callable");
}

namespace {

// Python's slice of a sequence of length n: the indices taken.
std::vector<int64_t> slice_indices(int64_t n, std::optional<int64_t> lo, std::optional<int64_t> hi,
                                   int64_t step) {
  std::vector<int64_t> out;
  auto clamp = [&](int64_t i, int64_t low, int64_t high) {
    if (i < 0) i += n;
    return i < low ? low : i > high ? high : i;
  };
  if (step > 0) {
    const int64_t b = lo ? clamp(*lo, 0, n) : 0, e = hi ? clamp(*hi, 0, n) : n;
    for (int64_t i = b; i < e; i += step) out.push_back(i);
  } else {
    const int64_t b = lo ? clamp(*lo, -1, n - 1) : n - 1, e = hi ? clamp(*hi, -1, n - 1) : -1;
    for (int64_t i = b; i > e; i += step) out.push_back(i);
  }
  return out;
}

}  // namespace

void Stager::dict_set(DictObj& d, Value k, Value v, SourceSpan key_span) {
  if (k.is_tensor() || k.is<ListPtr>() || k.is<DictPtr>())
    fail(key_span, "dict keys must be static strings, numbers or tuples, got " + type_name(k));
  for (auto& kv : d.items)
    if (static_equal(kv.first, k).value_or(false)) {
      kv.second = std::move(v);
      return;
    }
  d.items.emplace_back(std::move(k), std::move(v));
}

Value Stager::eval_dict(const Expr& e) {
  auto d = std::make_shared<DictObj>();
  for (size_t i = 0; i < e.keys.size(); ++i) {
    Value k = eval(*e.keys[i]);
    dict_set(*d, std::move(k), eval(*e.elts[i]), e.keys[i]->span);
  }
  return Value(d);
}

void Stager::eval_items(const std::vector<ExprPtr>& elts, std::vector<Value>& out, std::vector<SourceSpan>* spans) {
  for (const ExprPtr& x : elts) {
    if (x->kind != ExprKind::kStarred) {
      out.push_back(eval(*x));
      if (spans) spans->push_back(x->span);
      continue;
    }
    Value items = eval(*x->a);
    if (items.is<DictPtr>()) {  // `*d` unpacks the keys
      for (const auto& kv : items.as<DictPtr>()->items) out.push_back(kv.first);
    } else {
      iterate(items, x->a->span, "a '*' unpacking", [&](const Value& item) {
        out.push_back(item);
        return true;
      });
    }
    if (spans) spans->resize(out.size(), x->span);
  }
}

Value Stager::eval_compare(const Expr& e) {
  Value left = eval(*e.a);
  Value result;
  // `a < b < c` of scalar tensors is `a < b and b < c`, b evaluated once: both
  // as logical_and where the later operands cannot fail.
  std::optional<Value> chain;
  for (size_t i = 0; i < e.cmp_ops.size(); ++i) {
    Value right = eval(*e.elts[i]);
    // One comparison of the chain: its operands, at its operator.
    const SourceSpan& from = i == 0 ? e.a->span : e.elts[i - 1]->span;
    const SourceSpan& to = e.elts[i]->span;
    const SourceSpan operands{from.file, from.line, from.col, to.end_line, to.end_col};
    result = compare(e.cmp_ops[i], left, right,
                     i < e.op_spans.size() ? operator_span(operands, e.op_spans[i]) : e.span);
    if (i + 1 < e.cmp_ops.size()) {
      if (result.is_tensor()) {
        if (tensor_rank(result) != 0)
          fail(e.span, "chained comparisons of tensors are ambiguous; combine them with &",
               provenance_notes({result}));
        for (size_t j = i + 1; j < e.elts.size(); ++j)
          if (!cannot_fail(*e.elts[j]))
            fail(e.elts[j]->span, "a chained comparison of staged values evaluates this operand only when "
                                  "the comparisons before it hold; write the chain with `and`");
        chain = chain ? tensor_binary(ops::OpId::LogicalAnd, *chain, result, e.span) : result;
        left = std::move(right);
        continue;
      }
      if (!truth(result, e.span, "a comparison")) return chain ? to_tensor(result, DType::kBool, e.span) : result;
    }
    left = std::move(right);
  }
  if (chain) {
    if (result.is_tensor() && tensor_rank(result) != 0)
      fail(e.span, "chained comparisons of tensors are ambiguous; combine them with &", provenance_notes({result}));
    return tensor_binary(ops::OpId::LogicalAnd, *chain, to_tensor(result, DType::kBool, e.span), e.span);
  }
  return result;
}

Value Stager::eval_subscript(const Expr& e) {
  Value v = eval(*e.a);
  if (std::optional<Value> t = record_as_tuple(v)) v = *t;
  if (v.is<TensorListV>()) v = Value(resolve_tensor_list(v.as<TensorListV>(), "list", e.a->span));
  if (v.is_tensor()) return index_tensor(v, *e.b, e.span);
  if (v.is<DTypeV>()) {  // an annotation: sg.f32[N, 784]
    AnnotationV ann{v.as<DTypeV>().dtype, {}};
    Value idx = eval(*e.b);
    std::vector<Value> dims = idx.is<TuplePtr>() ? *idx.as<TuplePtr>() : std::vector<Value>{idx};
    for (const Value& d : dims) {
      if (d.is<std::string>()) ann.dims.emplace_back(d.as<std::string>());
      else if (d.is<int64_t>() && d.as<int64_t>() >= 0) ann.dims.emplace_back(d.as<int64_t>());
      else fail(e.b->span, "a dim in a type annotation must be a non-negative int or a string, got " + py_repr(d));
    }
    return Value(ann);
  }
  if (e.b->kind == ExprKind::kSlice) {
    auto bound = [&](const ExprPtr& x) -> std::optional<int64_t> {
      if (!x) return std::nullopt;
      Value b = eval(*x);
      if (b.is<NoneV>()) return std::nullopt;
      return to_int(b, x->span, "a slice bound");
    };
    std::optional<int64_t> lo = bound(e.b->a), hi = bound(e.b->b), st = bound(e.b->c);
    const int64_t step = st.value_or(1);
    if (step == 0) fail(e.b->span, "slice step cannot be zero");
    if (v.is<std::string>()) {
      const std::string& s = v.as<std::string>();
      std::string out;
      for (int64_t i : slice_indices(int64_t(s.size()), lo, hi, step)) out += s[size_t(i)];
      return Value(out);
    }
    if (!v.is<TuplePtr>() && !v.is<ListPtr>()) fail(e.span, "'" + type_name(v) + "' object cannot be sliced");
    const std::vector<Value>& items = v.is<TuplePtr>() ? *v.as<TuplePtr>() : v.as<ListPtr>()->items;
    std::vector<Value> out;
    for (int64_t i : slice_indices(int64_t(items.size()), lo, hi, step)) out.push_back(items[size_t(i)]);
    return v.is<TuplePtr>() ? make_tuple(std::move(out)) : make_list(std::move(out));
  }
  Value idx = eval(*e.b);
  if (v.is<DictPtr>()) {
    for (const auto& kv : v.as<DictPtr>()->items)
      if (static_equal(kv.first, idx).value_or(false)) return kv.second;
    fail(e.span, "key " + py_repr(idx) + " is not in the dict");
  }
  if (idx.is<Staged>() && (v.is<TuplePtr>() || v.is<ListPtr>()))
    fail(e.b->span, "indexing a " + type_name(v) + " with a value known only at run time; stack it into a tensor first");
  const int64_t i = to_int(idx, e.b->span, "an index");
  int64_t n = 0;
  if (v.is<TuplePtr>()) n = int64_t(v.as<TuplePtr>()->size());
  else if (v.is<ListPtr>()) n = int64_t(v.as<ListPtr>()->items.size());
  else if (v.is<std::string>()) n = int64_t(v.as<std::string>().size());
  else if (v.is<RangeV>()) n = v.as<RangeV>().size();
  else fail(e.span, "'" + type_name(v) + "' object is not subscriptable");
  const int64_t k = i < 0 ? i + n : i;
  if (k < 0 || k >= n) fail(e.b->span, type_name(v) + " index " + std::to_string(i) + " out of range (length " + std::to_string(n) + ")");
  if (v.is<TuplePtr>()) return (*v.as<TuplePtr>())[size_t(k)];
  if (v.is<ListPtr>()) return v.as<ListPtr>()->items[size_t(k)];
  if (v.is<RangeV>()) return Value(v.as<RangeV>().start + k * v.as<RangeV>().step);
  return Value(std::string(1, v.as<std::string>()[size_t(k)]));
}

// A list, dict or generator comprehension; a generator expression is evaluated
// at once, to a list (staging iterates only static sequences, so nothing is lost).
Value Stager::eval_list_comp(const Expr& e) {
  auto out = std::make_shared<ListObj>();
  auto dict = std::make_shared<DictObj>();
  const char* what = e.kind == ExprKind::kDictComp ? "dict comprehension"
                     : e.kind == ExprKind::kGenExp ? "generator expression"
                                                   : "list comprehension";
  // A comprehension has its own scope: its targets do not leak.
  CallFrame* outer = frame_;
  CallFrame inner{std::make_shared<Scope>(outer ? outer->scope : globals_), Value()};
  frame_ = &inner;
  int64_t count = 0;
  std::function<void(size_t)> loop = [&](size_t g) {
    if (g == e.generators.size()) {
      if (e.kind != ExprKind::kDictComp) {
        out->items.push_back(eval(*e.a));
        return;
      }
      Value k = eval(*e.a);
      dict_set(*dict, std::move(k), eval(*e.b), e.a->span);
      return;
    }
    const Comprehension& c = e.generators[g];
    Value iterable = eval(*c.iter);
    iterate(iterable, c.iter->span, std::string("a ") + what, [&](const Value& item) {
      if (++count > kMaxUnrolledIterations)
        fail(e.span, std::string(what) + " runs more than " + std::to_string(kMaxUnrolledIterations) + " iterations at compile time");
      count_step(e.span);
      assign(*c.target, item, c.target->span);
      for (const ExprPtr& cond : c.ifs) {
        Value t = eval(*cond);
        if (!truth(t, cond->span, "a comprehension condition")) return true;
      }
      loop(g + 1);
      return true;
    });
  };
  try {
    loop(0);
  } catch (...) {
    frame_ = outer;
    throw;
  }
  frame_ = outer;
  if (e.kind == ExprKind::kDictComp) return Value(dict);
  return Value(out);
}

Value Stager::eval(const Expr& e) {
  // The parser bounds an expression's nesting; this is the backstop for the
  // staging stack itself, with an eighth of it kept for what runs between evals.
  if (stack_bytes_ != 0) {
    const char* here = static_cast<const char*>(__builtin_frame_address(0));
    if (here < stack_base_ && size_t(stack_base_ - here) > stack_bytes_ - stack_bytes_ / 8)
      fail(e.span, "expression or compile-time recursion nested too deeply for the staging stack (" +
                       std::to_string(stack_bytes_ >> 20) + " MiB)");
  }
  switch (e.kind) {
    case ExprKind::kName: return lookup_name(e.name, e.span);
    case ExprKind::kInt: return Value(e.int_value);
    case ExprKind::kFloat: return Value(e.float_value);
    case ExprKind::kString: return Value(e.str_value);
    case ExprKind::kBool: return Value(e.bool_value);
    case ExprKind::kNone: return Value(NoneV{});
    case ExprKind::kEllipsis: return Value(EllipsisV{});
    case ExprKind::kTuple:
    case ExprKind::kList: {
      std::vector<Value> items;
      eval_items(e.elts, items, nullptr);
      return e.kind == ExprKind::kTuple ? make_tuple(std::move(items)) : make_list(std::move(items));
    }
    case ExprKind::kDict: return eval_dict(e);
    case ExprKind::kBinOp: {
      Value a = eval(*e.a);
      Value b = eval(*e.b);
      return binary(e.bin_op, a, b, e.op_spans.empty() ? e.span : operator_span(e.span, e.op_spans[0]));
    }
    case ExprKind::kUnaryOp: return unary(e.unary_op, eval(*e.a), e.span);
    case ExprKind::kBoolOp: return branches().eval_bool_op(e);
    case ExprKind::kCompare: return eval_compare(e);
    case ExprKind::kCall: {
      Value callee = eval(*e.a);
      Args args;
      args.span = e.span;
      eval_items(e.elts, args.pos, &args.pos_spans);
      for (const Keyword& k : e.keywords) {
        if (!k.name.empty()) {
          args.kw.emplace_back(k.name, eval(*k.value));
          continue;
        }
        Value d = eval(*k.value);  // `**mapping`
        if (!d.is<DictPtr>()) fail(k.value->span, "argument after ** must be a dict, not " + type_name(d));
        for (const auto& [key, value] : d.as<DictPtr>()->items) {
          if (!key.is<std::string>()) fail(k.value->span, "keywords must be strings, got " + py_repr(key));
          for (const auto& kw : args.kw)
            if (kw.first == key.as<std::string>())
              fail(k.span, "got multiple values for keyword argument '" + kw.first + "'");
          args.kw.emplace_back(key.as<std::string>(), value);
        }
      }
      return call_value(callee, args);
    }
    case ExprKind::kAttribute: return get_attribute(eval(*e.a), e.name, e.span);
    case ExprKind::kSubscript: return eval_subscript(e);
    case ExprKind::kSlice: fail(e.span, "a slice is only allowed inside a subscript");
    case ExprKind::kLambda: return Value(make_function(*e.lambda_def, frame_ ? frame_->scope : globals_));
    case ExprKind::kIfExp: return branches().eval_if_exp(e);
    case ExprKind::kListComp:
    case ExprKind::kGenExp:
    case ExprKind::kDictComp: return eval_list_comp(e);
    case ExprKind::kStarred:
      fail(e.span, "a starred expression ('*x') is allowed only in a call's arguments or in a tuple or list display");
  }
  fail(e.span, "unsupported expression");
}

}  // namespace sg::compiler::staging
