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
  return r;
}

ResultSig GraphCalls::generalise(Stager& s, const ResultSig& r, const std::string& hint) const {
  ResultSig g = r;
  for (ir::Dim& d : g.type.shape)
    if (!d.is_static()) d = ir::Dim::symbol(s.module().symbols.fresh(hint));
  for (ResultSig& item : g.items) item = generalise(s, item, hint);
  return g;
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

std::vector<ResultSig> GraphCalls::candidates(Stager& s, const std::vector<ir::Type>& arg_types,
                                              const std::string& hint) const {
  std::vector<ResultSig> out;
  std::vector<std::string> seen;
  auto add = [&](const ir::Type& t) {
    ResultSig r;
    r.kind = ResultSig::Kind::kTensor;
    r.type = t;
    // Static dims identify a candidate; symbolic ones are all alike.
    std::string key = dtype_name(t.dtype);
    for (const ir::Dim& d : t.shape) key += "," + (d.is_static() ? std::to_string(d.constant()) : "?");
    for (const std::string& k : seen)
      if (k == key) return;
    seen.push_back(key);
    out.push_back(generalise(s, r, hint));
  };
  for (const ir::Type& t : arg_types) add(t);
  for (DType d : {DType::kF32, DType::kI64, DType::kBool, DType::kI32, DType::kF16}) add(ir::Type{d, {}});
  return out;
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
