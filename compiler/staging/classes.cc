// Classes (SPEC.md §4): module-level class definitions with single
// inheritance among the module's classes, collections.namedtuple,
// typing.NamedTuple and dataclasses.dataclass records, instances (compile-time
// objects whose attributes may hold staged values), bound methods, super(),
// and the scopes `global` and `nonlocal` name.
#include "staging/classes.h"

#include <algorithm>

#include "staging/control_state.h"
#include "staging/sg_variables.h"

namespace sg::compiler::staging {
namespace {

const char* const kRecordMakers[] = {"collections.namedtuple", "typing.NamedTuple", "dataclasses.dataclass",
                                     "dataclasses.field"};

bool is_record_maker(const std::string& name) {
  for (const char* m : kRecordMakers)
    if (name == m) return true;
  return false;
}

// The fields of a record class, its bases' first (dataclass inheritance).
void all_fields(const ClassPtr& cls, std::vector<std::string>& out, std::vector<ClassPtr>& owners) {
  if (cls->base && cls->base->kind == cls->kind) all_fields(cls->base, out, owners);
  for (const std::string& f : cls->fields) {
    auto it = std::find(out.begin(), out.end(), f);
    if (it == out.end()) {
      out.push_back(f);
      owners.push_back(cls);
    } else {
      owners[size_t(it - out.begin())] = cls;
    }
  }
}

// Restores the stager's activation when a class body is done.
struct FrameGuard {
  Stager& s;
  CallFrame* saved;
  ~FrameGuard() { s.set_frame(saved); }
};

}  // namespace

const std::shared_ptr<Value>* find_class_attr(const ClassPtr& cls, const std::string& name) {
  for (const ClassObj* c = cls.get(); c; c = c->base.get()) {
    auto it = c->attrs.find(name);
    if (it != c->attrs.end()) return &it->second;
  }
  return nullptr;
}

Value* find_instance_attr(const InstanceObj& obj, const std::string& name) {
  for (auto& [k, v] : obj.attrs->items)
    if (k.is<std::string>() && k.as<std::string>() == name) return &v;
  return nullptr;
}

void set_instance_attr(InstanceObj& obj, const std::string& name, const Value& v) {
  if (Value* slot = find_instance_attr(obj, name)) {
    *slot = v;
    return;
  }
  obj.attrs->items.emplace_back(Value(name), v);
}

std::optional<Value> record_as_tuple(const Value& v) {
  if (!v.is<InstancePtr>() || v.as<InstancePtr>()->cls->kind != ClassObj::Kind::kNamedTuple) return std::nullopt;
  std::vector<Value> items;
  for (const auto& kv : v.as<InstancePtr>()->attrs->items) items.push_back(kv.second);
  return make_tuple(std::move(items));
}

bool instance_of(const Value& v, const ClassPtr& cls) {
  if (!v.is<InstancePtr>()) return false;
  for (const ClassObj* c = v.as<InstancePtr>()->cls.get(); c; c = c->base.get())
    if (c == cls.get()) return true;
  return false;
}

bool Records::is_class_builtin(const std::string& name) {
  return name == "super" || name == "object" || name == "staticmethod" || name == "classmethod" ||
         name == "property" || is_exception_name(name);
}

void Records::define_class(const Stmt& s) {
  const ClassDef& def = *s.cls;
  auto cls = std::make_shared<ClassObj>();
  cls->name = def.name;
  cls->def = &def;
  for (const ExprPtr& b : def.bases) {
    const Value base = s_.eval(*b);
    if (base.is<BuiltinV>() && base.as<BuiltinV>().name == "object") continue;
    if (cls->base || !cls->builtin_base.empty() || cls->kind == ClassObj::Kind::kNamedTuple)
      s_.fail(b->span, "class '" + def.name + "' has more than one base class; only single inheritance is supported");
    if (base.is<ClassPtr>()) {
      cls->base = base.as<ClassPtr>();
      cls->kind = cls->base->kind;
      cls->builtin_base = cls->base->builtin_base;
      cls->frozen = cls->base->frozen;
    } else if (base.is<BuiltinV>() && is_exception_name(base.as<BuiltinV>().name)) {
      cls->kind = ClassObj::Kind::kException;
      cls->builtin_base = base.as<BuiltinV>().name;
    } else if (base.is<BuiltinV>() && base.as<BuiltinV>().name == "typing.NamedTuple") {
      cls->kind = ClassObj::Kind::kNamedTuple;
      cls->frozen = true;
    } else {
      s_.fail(b->span, "the base of class '" + def.name + "' must be a class defined in this module, a builtin "
                       "exception or typing.NamedTuple, got " + type_name(base));
    }
  }
  for (const ExprPtr& d : def.decorators) {
    const Expr& callee = d->kind == ExprKind::kCall ? *d->a : *d;
    const Value dv = s_.eval(callee);
    if (!dv.is<BuiltinV>() || dv.as<BuiltinV>().name != "dataclasses.dataclass")
      s_.fail(d->span, "unsupported class decorator: only @dataclasses.dataclass is allowed");
    cls->kind = ClassObj::Kind::kDataclass;
    if (d->kind == ExprKind::kCall) {
      if (!d->elts.empty()) s_.fail(d->span, "dataclass() takes keyword arguments only");
      for (const Keyword& k : d->keywords) {
        const Value kv = s_.eval(*k.value);
        if (k.name == "frozen") cls->frozen = s_.truth(kv, k.span, "frozen=");
        else if (k.name != "eq" && k.name != "repr" && k.name != "init")
          s_.fail(k.span, "dataclass() argument '" + k.name + "' is not supported (frozen, eq, repr and init are)");
      }
    }
  }
  // The class body runs in a scope of its own; methods close over the module.
  CallFrame frame{std::make_shared<Scope>(s_.globals()), Value()};
  FrameGuard guard{s_, s_.frame()};
  s_.set_frame(&frame);
  const bool record = cls->kind == ClassObj::Kind::kDataclass || cls->kind == ClassObj::Kind::kNamedTuple;
  for (const StmtPtr& sp : def.body) {
    const Stmt& st = *sp;
    switch (st.kind) {
      case StmtKind::kFunctionDef: {
        auto f = s_.make_function(*st.func, s_.globals());
        f->owner = cls;
        cls->attrs[st.func->name] = std::make_shared<Value>(Value(f));
        frame.scope->set(st.func->name, Value(f));
        break;
      }
      case StmtKind::kAnnAssign:
        if (st.target->kind != ExprKind::kName) s_.fail(st.span, "a class attribute must be a plain name");
        if (record) {
          const std::string& field = st.target->name;
          if (std::find(cls->fields.begin(), cls->fields.end(), field) == cls->fields.end())
            cls->fields.push_back(field);
          if (st.value) {
            const Value v = s_.eval(*st.value);
            if (v.is<TuplePtr>() && !v.as<TuplePtr>()->empty() && (*v.as<TuplePtr>())[0].is<std::string>() &&
                (*v.as<TuplePtr>())[0].as<std::string>() == "$dataclasses.field") {
              const auto& f = *v.as<TuplePtr>();
              if (!f[1].is<UndefinedV>()) cls->field_defaults[field] = std::make_shared<Value>(f[1]);
              if (!f[2].is<UndefinedV>()) cls->field_factories[field] = std::make_shared<Value>(f[2]);
            } else {
              if (v.is<ListPtr>() || v.is<DictPtr>())
                s_.fail(st.value->span, "mutable default " + type_name(v) + " for field '" + field +
                                            "' is not allowed: use dataclasses.field(default_factory=" +
                                            type_name(v) + ")");
              cls->field_defaults[field] = std::make_shared<Value>(v);
            }
          }
          break;
        }
        if (!st.value) break;  // an annotation only
        [[fallthrough]];
      case StmtKind::kAssign: {
        const Value v = s_.eval(*st.value);
        if (v.is<Staged>()) s_.fail(st.value->span, "a class attribute must be static");
        const std::vector<const Expr*> targets =
            st.kind == StmtKind::kAssign ? [&] {
              std::vector<const Expr*> t;
              for (const ExprPtr& e : st.targets) t.push_back(e.get());
              return t;
            }() : std::vector<const Expr*>{st.target.get()};
        for (const Expr* t : targets) {
          if (t->kind != ExprKind::kName) s_.fail(t->span, "a class attribute must be a plain name");
          cls->attrs[t->name] = std::make_shared<Value>(v);
          frame.scope->set(t->name, v);
        }
        break;
      }
      case StmtKind::kPass: break;
      case StmtKind::kExpr:
        if (st.value->kind == ExprKind::kString) break;
        [[fallthrough]];
      default:
        s_.fail(st.span, "only method definitions and class attributes are allowed in the body of class '" +
                             def.name + "'");
    }
  }
  s_.globals()->set(def.name, Value(cls));
}

Value Records::instantiate(const ClassPtr& cls, Args& args) {
  if (cls->kind == ClassObj::Kind::kException) {
    ExceptionV e;
    for (const ClassObj* c = cls.get(); c && c->kind == ClassObj::Kind::kException; c = c->base.get())
      e.types.push_back(c->name);
    for (const std::string& t : exception_chain(cls->builtin_base)) e.types.push_back(t);
    if (find_class_attr(cls, "__init__"))
      s_.fail(args.span, "exception class '" + cls->name + "' defines __init__; an exception raised by a staged "
                         "program takes only a message: " + cls->name + "(\"...\")");
    if (!args.kw.empty()) s_.fail(args.span, cls->name + "() takes no keyword arguments");
    if (args.pos.size() == 1) e.message = py_str(args.pos[0]);
    else if (args.pos.size() > 1) e.message = py_repr(make_tuple(args.pos));
    return Value(e);
  }
  auto obj = std::make_shared<InstanceObj>();
  obj->cls = cls;
  obj->attrs = std::make_shared<DictObj>();
  const Value self(obj);
  const std::shared_ptr<Value>* init = find_class_attr(cls, "__init__");
  const bool record = cls->kind == ClassObj::Kind::kDataclass || cls->kind == ClassObj::Kind::kNamedTuple;
  if (record && !(init && cls->kind == ClassObj::Kind::kDataclass)) {
    std::vector<std::string> fields;
    std::vector<ClassPtr> owners;
    all_fields(cls, fields, owners);
    if (args.pos.size() > fields.size())
      s_.fail(args.span, cls->name + "() takes " + std::to_string(fields.size()) + " positional arguments but " +
                             std::to_string(args.pos.size()) + " were given");
    std::vector<std::optional<Value>> values(fields.size());
    for (size_t i = 0; i < args.pos.size(); ++i) values[i] = args.pos[i];
    for (const auto& [name, v] : args.kw) {
      auto it = std::find(fields.begin(), fields.end(), name);
      if (it == fields.end()) s_.fail(args.span, cls->name + "() got an unexpected keyword argument '" + name + "'");
      std::optional<Value>& slot = values[size_t(it - fields.begin())];
      if (slot) s_.fail(args.span, cls->name + "() got multiple values for argument '" + name + "'");
      slot = v;
    }
    for (size_t i = 0; i < fields.size(); ++i) {
      if (!values[i]) {
        const ClassObj& owner = *owners[i];
        auto d = owner.field_defaults.find(fields[i]);
        auto f = owner.field_factories.find(fields[i]);
        if (d != owner.field_defaults.end()) {
          values[i] = *d->second;
        } else if (f != owner.field_factories.end()) {
          Args none;
          none.span = args.span;
          values[i] = s_.call_value(*f->second, none);
        } else {
          s_.fail(args.span, cls->name + "() missing required argument '" + fields[i] + "'");
        }
      }
      obj->attrs->items.emplace_back(Value(fields[i]), *values[i]);
    }
    if (const std::shared_ptr<Value>* post = find_class_attr(cls, "__post_init__")) {
      Args none;
      none.span = args.span;
      none.pos.push_back(self);
      s_.call_value(**post, none);
    }
    return self;
  }
  if (!init) {
    if (!args.pos.empty() || !args.kw.empty()) s_.fail(args.span, cls->name + "() takes no arguments");
    return self;
  }
  Args call = args;
  call.pos.insert(call.pos.begin(), self);
  call.pos_spans.insert(call.pos_spans.begin(), args.span);
  const Value r = s_.call_value(**init, call);
  if (!r.is<NoneV>()) s_.fail(args.span, "__init__() of '" + cls->name + "' should return None, not " + type_name(r));
  return self;
}

namespace {

Value bind_attr(Stager& st, const Value& attr, const Value& self, const ClassPtr& cls, SourceSpan span) {
  if (!attr.is<std::shared_ptr<FunctionV>>()) return attr;
  const auto& f = attr.as<std::shared_ptr<FunctionV>>();
  switch (f->binding) {
    case FunctionV::Binding::kStatic: return attr;
    case FunctionV::Binding::kClass: return Value(BoundFunction{f, std::make_shared<Value>(Value(cls))});
    case FunctionV::Binding::kProperty: {
      if (self.is<ClassPtr>()) return attr;
      Args a;
      a.span = span;
      a.pos.push_back(self);
      a.pos_spans.push_back(span);
      return st.call_function(f, a);
    }
    case FunctionV::Binding::kInstance:
      if (self.is<ClassPtr>()) return attr;  // Cls.method: the plain function
      return Value(BoundFunction{f, std::make_shared<Value>(self)});
  }
  return attr;
}

}  // namespace

Value Records::object_attribute(const Value& v, const std::string& name, SourceSpan span) {
  if (v.is<InstancePtr>()) {
    const InstancePtr& obj = v.as<InstancePtr>();
    if (Value* a = find_instance_attr(*obj, name)) return *a;
    if (const std::shared_ptr<Value>* a = find_class_attr(obj->cls, name)) return bind_attr(s_, **a, v, obj->cls, span);
    if (obj->cls->kind == ClassObj::Kind::kNamedTuple || obj->cls->kind == ClassObj::Kind::kDataclass) {
      if (name == "_fields" && obj->cls->kind == ClassObj::Kind::kNamedTuple) {
        std::vector<Value> names;
        for (const auto& kv : obj->attrs->items) names.push_back(kv.first);
        return make_tuple(std::move(names));
      }
      if (name == "_replace" || name == "_asdict") return Value(BoundMethod{name, std::make_shared<Value>(v)});
    }
    s_.fail(span, "'" + obj->cls->name + "' object has no attribute '" + name + "'");
  }
  if (v.is<ClassPtr>()) {
    const ClassPtr& cls = v.as<ClassPtr>();
    if (name == "__name__") return Value(cls->name);
    if (name == "_fields" && cls->kind == ClassObj::Kind::kNamedTuple) {
      std::vector<Value> names;
      std::vector<std::string> fields;
      std::vector<ClassPtr> owners;
      all_fields(cls, fields, owners);
      for (const std::string& f : fields) names.push_back(Value(f));
      return make_tuple(std::move(names));
    }
    if (const std::shared_ptr<Value>* a = find_class_attr(cls, name)) return bind_attr(s_, **a, v, cls, span);
    if (cls->kind == ClassObj::Kind::kModule) s_.fail(span, "module '" + cls->name + "' has no attribute '" + name + "'");
    s_.fail(span, "type object '" + cls->name + "' has no attribute '" + name + "'");
  }
  if (v.is<SuperV>()) {
    const SuperV& sv = v.as<SuperV>();
    if (sv.start)
      if (const std::shared_ptr<Value>* a = find_class_attr(sv.start, name))
        return bind_attr(s_, **a, *sv.self, sv.start, span);
    if (name == "__init__" || name == "__post_init__") return Value(BuiltinV{"$object_init"});
    s_.fail(span, "'super' object has no attribute '" + name + "'");
  }
  if (v.is<ExceptionV>()) {
    if (name == "args") return make_tuple({Value(v.as<ExceptionV>().message)});
    s_.fail(span, "'" + type_name(v) + "' object has no attribute '" + name + "'");
  }
  if (v.is<PyModuleV>()) {
    const std::string& mod = v.as<PyModuleV>().name;
    const std::string full = mod + "." + name;
    if (mod == "math") {
      double c = 0;
      if (is_math_constant(name, c)) return Value(c);
      if (is_math_function(name)) return Value(BuiltinV{full});
      s_.fail(span, "module 'math' has no attribute '" + name + "' that a staged program may use");
    }
    if (is_record_maker(full) || mod == "typing") return Value(BuiltinV{full});
    s_.fail(span, "module '" + mod + "' has no attribute '" + name + "' that a staged program may use (" + mod +
                      (mod == "collections" ? ".namedtuple" : ".dataclass and " + mod + ".field") + " are supported)");
  }
  s_.fail(span, "'" + type_name(v) + "' object has no attribute '" + name + "'");
}

void Records::set_attribute(const Value& target, const std::string& name, const Value& v, SourceSpan span) {
  if (target.is<VariablesPtr>()) return s_.variables().assign(target.as<VariablesPtr>(), name, v, span);
  if (target.is<InstancePtr>()) {
    InstanceObj& obj = *target.as<InstancePtr>();
    if (obj.cls->frozen)
      s_.fail(span, "cannot assign to field '" + name + "' of '" + obj.cls->name + "': it is a " +
                        (obj.cls->kind == ClassObj::Kind::kNamedTuple ? "named tuple" : "frozen dataclass") +
                        "; make a new one with _replace or the constructor");
    if (v.is<TensorListV>())
      s_.fail(span, "a list appended to in a staged loop cannot be stored in attribute '" + name +
                        "'; stack it with sg.stack first");
    set_instance_attr(obj, name, v);
    note_size_changes(s_.control(), span);
    return;
  }
  if (target.is<ClassPtr>()) {
    if (target.as<ClassPtr>()->kind == ClassObj::Kind::kModule)
      s_.fail(span, "cannot assign attribute '" + name + "' of module '" + target.as<ClassPtr>()->name + "'");
    if (v.is<Staged>()) s_.fail(span, "a class attribute must be static; store staged values on an instance");
    target.as<ClassPtr>()->attrs[name] = std::make_shared<Value>(v);
    return;
  }
  s_.fail(span, "cannot set attribute '" + name + "' of a " + type_name(target) + " object");
}

Value Records::call_record_method(const InstancePtr& self, const std::string& name, Args& args) {
  if (name == "_asdict") {
    auto d = std::make_shared<DictObj>();
    d->items = self->attrs->items;
    return Value(d);
  }
  // _replace(field=value, ...): a new record.
  if (!args.pos.empty()) s_.fail(args.span, "_replace() takes keyword arguments only");
  auto obj = std::make_shared<InstanceObj>();
  obj->cls = self->cls;
  obj->attrs = std::make_shared<DictObj>();
  obj->attrs->items = self->attrs->items;
  for (const auto& [k, v] : args.kw) {
    Value* slot = find_instance_attr(*obj, k);
    if (!slot) s_.fail(args.span, "_replace() got an unexpected field name '" + k + "'");
    *slot = v;
  }
  return Value(obj);
}

Value Records::call_class_builtin(const std::string& name, Args& args) {
  if (is_exception_name(name)) {
    ExceptionV e;
    e.types = exception_chain(name);
    if (!args.kw.empty()) s_.fail(args.span, name + "() takes no keyword arguments");
    if (args.pos.size() == 1) e.message = py_str(args.pos[0]);
    else if (args.pos.size() > 1) e.message = py_repr(make_tuple(args.pos));
    return Value(e);
  }
  if (name == "super") {
    if (!args.pos.empty() || !args.kw.empty())
      s_.fail(args.span, "super() takes no arguments in a staged program (the zero-argument form)");
    const Value* cls = s_.frame() ? s_.scope().find_local("$class") : nullptr;
    const Value* self = s_.frame() ? s_.scope().find_local("$self") : nullptr;
    if (!cls || !self) s_.fail(args.span, "super() is only allowed inside a method");
    return Value(SuperV{cls->as<ClassPtr>()->base, std::make_shared<Value>(*self)});
  }
  if (name == "$object_init") return Value(NoneV{});
  if (name == "collections.namedtuple") {
    if (args.pos.size() != 2) s_.fail(args.span, "namedtuple() takes a type name and its field names");
    if (!args.pos[0].is<std::string>()) s_.fail(args.span, "namedtuple() type name must be a string");
    auto cls = std::make_shared<ClassObj>();
    cls->name = args.pos[0].as<std::string>();
    cls->kind = ClassObj::Kind::kNamedTuple;
    cls->frozen = true;
    if (args.pos[1].is<std::string>()) {
      std::string f;
      for (char c : args.pos[1].as<std::string>() + " ") {
        if (c == ' ' || c == ',') {
          if (!f.empty()) cls->fields.push_back(f);
          f.clear();
        } else {
          f += c;
        }
      }
    } else {
      for (const Value& f : s_.to_list(args.pos[1], args.span)) {
        if (!f.is<std::string>()) s_.fail(args.span, "namedtuple() field names must be strings");
        cls->fields.push_back(f.as<std::string>());
      }
    }
    for (const auto& [k, v] : args.kw) {
      if (k != "defaults") s_.fail(args.span, "namedtuple() argument '" + k + "' is not supported (defaults is)");
      const std::vector<Value> d = s_.to_list(v, args.span);
      if (d.size() > cls->fields.size()) s_.fail(args.span, "namedtuple() got more defaults than fields");
      for (size_t i = 0; i < d.size(); ++i)
        cls->field_defaults[cls->fields[cls->fields.size() - d.size() + i]] = std::make_shared<Value>(d[i]);
    }
    return Value(cls);
  }
  if (name == "dataclasses.field") {
    if (!args.pos.empty()) s_.fail(args.span, "field() takes keyword arguments only");
    Value dflt = Value(UndefinedV{}), factory = Value(UndefinedV{});
    for (const auto& [k, v] : args.kw) {
      if (k == "default") dflt = v;
      else if (k == "default_factory") factory = v;
      else s_.fail(args.span, "field() argument '" + k + "' is not supported (default and default_factory are)");
    }
    return make_tuple({Value(std::string("$dataclasses.field")), dflt, factory});
  }
  if (name == "dataclasses.dataclass" || name == "typing.NamedTuple")
    s_.fail(args.span, name.substr(name.find('.') + 1) + " is supported as a class decorator or base only");
  if (name.rfind("typing.", 0) == 0) s_.fail(args.span, name + " is only allowed in annotations");
  s_.fail(args.span, "'" + name + "' cannot be called here");
}

size_t Stager::staged_depth() { return control().size_watches.size() + size_t(control().staged_loops); }

Scope* Stager::declared_scope(const std::string& name, SourceSpan span, bool for_store) {
  if (!frame_) return nullptr;
  const Value* g = scope().find_local("$global " + name);
  const Value* n = scope().find_local("$nonlocal " + name);
  if (!g && !n) return nullptr;
  Scope* target = nullptr;
  if (g) {
    target = globals_.get();
  } else {
    for (Scope* s = scope().parent().get(); s && s != globals_.get(); s = s->parent().get())
      if (s->find_local(name)) {
        target = s;
        break;
      }
    if (!target) fail(span, "no binding for nonlocal '" + name + "' found in an enclosing function");
  }
  if (for_store && staged_depth() > frame_->staged_depth)
    fail(span, std::string(g ? "global" : "nonlocal") + " variable '" + name +
                   "' is rebound inside a staged branch or loop of the function that declares it; its value "
                   "after the branch or loop would depend on run-time values: return the new value instead");
  return target;
}

}  // namespace sg::compiler::staging
