// Result types of graph functions: return annotations, the results a body
// returns, and the comparisons of result-type inference (staged_call.h).
#include <map>

#include "staging/staged_call.h"

namespace sg::compiler::staging {

std::optional<ResultSig> GraphCalls::annotation(Stager& s, const FunctionDef& def,
                                                const std::shared_ptr<Scope>& closure) {
  if (!def.returns) return std::nullopt;
  CallFrame frame{closure, Value()};
  CallFrame* outer = s.frame_;
  s.frame_ = &frame;
  Value v;
  try {
    v = s.eval(*def.returns);
  } catch (...) {
    s.frame_ = outer;
    throw;
  }
  s.frame_ = outer;
  // One name means one dim within the annotation; it is unrelated to the
  // caller's dims of that name.
  std::map<std::string, int32_t> names;
  auto convert = [&](auto&& self, const Value& a) -> ResultSig {
    ResultSig r;
    if (a.is<NoneV>()) return r;
    if (a.is<TuplePtr>()) {
      r.kind = ResultSig::Kind::kTuple;
      for (const Value& item : *a.as<TuplePtr>()) r.items.push_back(self(self, item));
      return r;
    }
    r.kind = ResultSig::Kind::kTensor;
    if (a.is<DTypeV>()) {
      r.type.dtype = a.as<DTypeV>().dtype;
      return r;
    }
    if (!a.is<AnnotationV>())
      s.fail(def.returns->span, "the return annotation of '" + def.name +
                                    "' must be a dtype with dims such as sg.f32[\"N\", 16], a tuple of them, or None; got " +
                                    type_name(a));
    r.type.dtype = a.as<AnnotationV>().dtype;
    for (const auto& d : a.as<AnnotationV>().dims) {
      if (std::holds_alternative<int64_t>(d)) {
        r.type.shape.push_back(ir::Dim(std::get<int64_t>(d)));
        continue;
      }
      const std::string& name = std::get<std::string>(d);
      auto it = names.find(name);
      if (it == names.end()) it = names.emplace(name, s.module().symbols.fresh(name)).first;
      r.type.shape.push_back(ir::Dim::symbol(it->second));
    }
    return r;
  };
  return convert(convert, v);
}

ResultSig GraphCalls::materialize_result(Stager& s, const Value& v, const FunctionDef& def) {
  ResultSig r;
  if (v.is<NoneV>()) return r;
  if (v.is<TuplePtr>()) {
    r.kind = ResultSig::Kind::kTuple;
    for (const Value& item : *v.as<TuplePtr>()) r.items.push_back(materialize_result(s, item, def));
    return r;
  }
  if (!v.is_tensor() && !v.is_number())
    s.fail(def.name_span, "'" + def.name + "' is compiled as a graph function (it is called with values known only "
                              "at run time and is recursive or an @sg.function) and returns a " + type_name(v) +
                              "; it may return tensors, numbers, tuples of them, or None");
  const Value t = s.to_tensor(v, std::nullopt, def.name_span);
  const int32_t id = s.materialize(t, def.name_span);
  s.fn().results.push_back(id);
  r.kind = ResultSig::Kind::kTensor;
  r.type = s.fn().values[size_t(id)].type;
  // A Python number, or a value that stands for one (a counter, `1 + f(n - 1)`
  // over such a result): a Python number in eager mode too.
  const WeakOrigin* w = s.weak_origin(v);
  r.weak = v.is_number() || (w && w->loop == 0 && !w->number.is<bool>());
  return r;
}

bool GraphCalls::promote_weak(ResultSig& r) {
  bool changed = false;
  if (r.kind == ResultSig::Kind::kTensor && r.weak && (r.type.dtype == DType::kI64 || r.type.dtype == DType::kBool)) {
    r.type.dtype = DType::kF32;
    changed = true;
  }
  r.weak = false;
  for (ResultSig& item : r.items) changed = promote_weak(item) || changed;
  return changed;
}

namespace {

// A dim an assumption keeps: static, or over parameter symbols only.
bool kept(const ir::Dim& d, const std::set<int32_t>& params) {
  for (const ir::Dim::Term& t : d.terms())
    for (int32_t sym : t.symbols)
      if (!params.count(sym)) return false;
  return true;
}

}  // namespace

ResultSig GraphCalls::hypothesis(Stager& s, const ResultSig& r, const std::set<int32_t>& params,
                                 const std::string& hint) const {
  ResultSig h = r;
  for (ir::Dim& d : h.type.shape)
    if (!kept(d, params)) d = ir::Dim::symbol(s.module().symbols.fresh(hint));
  for (ResultSig& item : h.items) item = hypothesis(s, item, params, hint);
  return h;
}

bool GraphCalls::bears_out(const ResultSig& r, const ResultSig& h, const std::set<int32_t>& params) {
  if (r.kind != h.kind || r.items.size() != h.items.size()) return false;
  if (r.kind == ResultSig::Kind::kTensor) {
    if (r.type.dtype != h.type.dtype || r.type.rank() != h.type.rank()) return false;
    for (size_t i = 0; i < r.type.rank(); ++i)
      if (kept(h.type.shape[i], params) && !(r.type.shape[i] == h.type.shape[i])) return false;
  }
  for (size_t i = 0; i < r.items.size(); ++i)
    if (!bears_out(r.items[i], h.items[i], params)) return false;
  return true;
}

std::set<int32_t> GraphCalls::parameter_symbols(size_t idx) const {
  std::set<int32_t> out;
  for (const ir::Type& t : specs[idx].param_types)
    for (const ir::Dim& d : t.shape)
      if (std::optional<int32_t> sym = d.as_symbol()) out.insert(*sym);
  return out;
}

bool GraphCalls::fits(const ResultSig& r, const ResultSig& g) {
  if (r.kind != g.kind || r.items.size() != g.items.size()) return false;
  if (r.kind == ResultSig::Kind::kTensor) {
    if (r.type.dtype != g.type.dtype || r.type.rank() != g.type.rank()) return false;
    for (size_t i = 0; i < r.type.rank(); ++i)
      if (g.type.shape[i].is_static() && !(r.type.shape[i] == g.type.shape[i])) return false;
  }
  for (size_t i = 0; i < r.items.size(); ++i)
    if (!fits(r.items[i], g.items[i])) return false;
  return true;
}

std::optional<ResultSig> GraphCalls::join(Stager& s, const ResultSig& a, const ResultSig& b,
                                          const std::string& hint) const {
  if (a.kind != b.kind || a.items.size() != b.items.size()) return std::nullopt;
  ResultSig r = a;
  r.weak = a.weak && b.weak;
  if (a.kind == ResultSig::Kind::kTensor) {
    if (a.type.dtype != b.type.dtype || a.type.rank() != b.type.rank()) return std::nullopt;
    for (size_t i = 0; i < a.type.rank(); ++i)
      if (!(a.type.shape[i] == b.type.shape[i])) r.type.shape[i] = ir::Dim::symbol(s.module().symbols.fresh(hint));
  }
  for (size_t i = 0; i < a.items.size(); ++i) {
    std::optional<ResultSig> item = join(s, a.items[i], b.items[i], hint);
    if (!item) return std::nullopt;
    r.items[i] = std::move(*item);
  }
  return r;
}

std::string GraphCalls::format(const Stager& s, const ResultSig& r) const {
  switch (r.kind) {
    case ResultSig::Kind::kNone: return "None";
    case ResultSig::Kind::kTensor: return const_cast<Stager&>(s).module().format_type(r.type);
    case ResultSig::Kind::kTuple: {
      std::string out = "(";
      for (size_t i = 0; i < r.items.size(); ++i) out += (i ? ", " : "") + format(s, r.items[i]);
      return out + (r.items.size() == 1 ? ",)" : ")");
    }
  }
  return "";
}

}  // namespace sg::compiler::staging
