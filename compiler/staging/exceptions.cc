// `raise` and `try` (SPEC.md §4). A raise on a path staging follows at compile
// time is a compile error with the program's message, unless a try around it
// catches it; a raise inside a staged branch or loop body stops the run there
// (an Assert node that always fails, as assert's), and the branch that raised
// leaves stand-ins for the values the other branch gives (staged_if.cc).
// try/except/finally are decided at compile time: finally always runs, and an
// except that would have to catch an error raised at run time is refused.
#include <utility>

#include "staging/classes.h"
#include "staging/control_state.h"

namespace sg::compiler::staging {
namespace {

// Builtin exceptions and their bases.
const char* const kExceptions[][2] = {
    {"BaseException", ""},           {"Exception", "BaseException"},
    {"ArithmeticError", "Exception"}, {"ZeroDivisionError", "ArithmeticError"},
    {"OverflowError", "ArithmeticError"}, {"LookupError", "Exception"},
    {"IndexError", "LookupError"},   {"KeyError", "LookupError"},
    {"ValueError", "Exception"},     {"TypeError", "Exception"},
    {"RuntimeError", "Exception"},   {"NotImplementedError", "RuntimeError"},
    {"AssertionError", "Exception"}, {"AttributeError", "Exception"},
    {"StopIteration", "Exception"},
};

// Whether an `except` clause's type (a class, a builtin exception, a tuple of
// them; null: a bare except) catches `exc`.
bool handler_matches(Stager& st, const ExceptHandler& h, const ExceptionV& exc) {
  if (!h.type) return true;
  const Value t = st.eval(*h.type);
  std::vector<Value> types = t.is<TuplePtr>() ? *t.as<TuplePtr>() : std::vector<Value>{t};
  for (const Value& x : types) {
    std::string name;
    if (x.is<BuiltinV>() && is_exception_name(x.as<BuiltinV>().name)) name = x.as<BuiltinV>().name;
    else if (x.is<ClassPtr>() && x.as<ClassPtr>()->kind == ClassObj::Kind::kException) name = x.as<ClassPtr>()->name;
    else st.fail(h.type->span, "an except clause takes an exception class or a tuple of them, got " + type_name(x));
    for (const std::string& n : exc.types)
      if (n == name) return true;
  }
  return false;
}

}  // namespace

bool is_exception_name(const std::string& name) {
  for (const auto& e : kExceptions)
    if (name == e[0]) return true;
  return false;
}

std::vector<std::string> exception_chain(const std::string& name) {
  std::vector<std::string> out;
  std::string cur = name;
  while (!cur.empty()) {
    out.push_back(cur);
    std::string next;
    for (const auto& e : kExceptions)
      if (cur == e[0]) next = e[1];
    cur = next;
  }
  return out;
}

std::string exception_text(const ExceptionV& e) {
  const std::string type = e.types.empty() ? "Exception" : e.types[0];
  return e.message.empty() ? type : type + ": " + e.message;
}

Flow Records::exec_raise(const Stmt& s) {
  ExceptionV exc;
  if (!s.value) {
    const Value* cur = s_.frame() ? s_.scope().lookup("$handling") : nullptr;
    if (!cur) s_.fail(s.span, "a bare `raise` is only allowed inside an except clause");
    exc = cur->as<ExceptionV>();
  } else {
    Value v = s_.eval(*s.value);
    if (s.msg) s_.eval(*s.msg);  // `from cause`: evaluated for its errors only
    Args none;
    none.span = s.value->span;
    if (v.is<ClassPtr>()) v = instantiate(v.as<ClassPtr>(), none);
    else if (v.is<BuiltinV>() && is_exception_name(v.as<BuiltinV>().name)) v = call_class_builtin(v.as<BuiltinV>().name, none);
    if (!v.is<ExceptionV>())
      s_.fail(s.value->span, "exceptions must derive from BaseException; got " + type_name(v));
    exc = v.as<ExceptionV>();
  }
  RaiseSignal r{exc, s.span};
  if (raise_catchers_ == 0 && try_stack_.empty()) s_.fail(s.span, exception_text(exc));
  throw r;
}

void Records::stage_raise(const RaiseSignal& r) {
  for (const auto& [t, catchers] : try_stack_) {
    if (catchers >= raise_catchers_) continue;  // a try inside the branch: it did not catch this
    for (const ExceptHandler& h : t->handlers)
      if (handler_matches(s_, h, r.exc))
        s_.fail(r.span, "this raise runs under a staged condition, so the " + r.exc.types[0] +
                            " happens at run time, but the except clause at line " + std::to_string(h.span.line) +
                            " would have to catch it; try/except works only where staging decides the outcome at "
                            "compile time: test the condition and handle the error without raising",
                {Note{h.span, "the except clause is here"}});
  }
  s_.assert_at_run_time(Value(scalar_tensor(DType::kBool, 0, 0)), exception_text(r.exc), r.span);
}

Flow Records::exec_try(const Stmt& s) {
  Flow flow = Flow::kNormal;
  std::optional<RaiseSignal> pending;
  auto guarded = [&](const std::vector<StmtPtr>& body) {
    try_stack_.emplace_back(&s, raise_catchers_);
    try {
      flow = s_.exec_block(body);
    } catch (RaiseSignal& r) {
      pending = std::move(r);
    } catch (...) {
      try_stack_.pop_back();
      throw;
    }
    try_stack_.pop_back();
  };
  guarded(s.body);
  if (pending) {
    const ExceptHandler* handler = nullptr;
    for (const ExceptHandler& h : s.handlers)
      if (!handler && handler_matches(s_, h, pending->exc)) handler = &h;
    if (handler) {
      const ExceptionV exc = pending->exc;
      pending.reset();
      if (!handler->name.empty()) s_.scope().set(handler->name, Value(exc));
      const Value* outer = s_.scope().find_local("$handling");
      const std::optional<Value> saved = outer ? std::optional<Value>(*outer) : std::nullopt;
      s_.scope().set("$handling", Value(exc));
      // A raise inside the handler goes to an enclosing try, not to this one's handlers.
      try {
        flow = s_.exec_block(handler->body);
      } catch (RaiseSignal& r) {
        pending = std::move(r);
      }
      if (saved) s_.scope().set("$handling", *saved);
      else s_.scope().erase("$handling");
      if (!handler->name.empty()) s_.scope().erase(handler->name);  // as Python deletes it
    }
  } else if (flow == Flow::kNormal && !s.orelse.empty()) {
    try {
      flow = s_.exec_block(s.orelse);
    } catch (RaiseSignal& r) {
      pending = std::move(r);
    }
  }
  if (!s.finalbody.empty()) {
    // finally runs with the jump flags cleared; a jump in it replaces what was
    // pending (a return, a raise), as in Python, and otherwise the flags come back.
    const char* const kJumpFlags[] = {kReturnFlag, kBreakFlag, kContinueFlag};
    std::vector<std::optional<Value>> saved;
    bool was_jumping = false;
    for (const char* name : kJumpFlags) {
      const Value* v = s_.scope().find_local(name);
      saved.push_back(v ? std::optional<Value>(*v) : std::nullopt);
      was_jumping = was_jumping || flag_true(v) || flag_staged(v);
      if (v) s_.scope().set(name, Value(false));
    }
    const Flow f = s_.exec_block(s.finalbody);
    bool jumped = f != Flow::kNormal;
    for (const char* name : kJumpFlags) {
      const Value* v = s_.scope().find_local(name);
      if (flag_staged(v) && was_jumping)
        s_.fail(s.finalbody.front()->span, "a jump under a staged condition in this finally block, after the try "
                                           "block jumped, is not supported; move it out of the finally block");
      jumped = jumped || flag_true(v) || flag_staged(v);
    }
    if (jumped) {
      flow = f;
      pending.reset();
    } else {
      for (size_t i = 0; i < saved.size(); ++i)
        if (saved[i]) s_.scope().set(kJumpFlags[i], *saved[i]);
    }
  }
  if (pending) {
    if (raise_catchers_ == 0 && try_stack_.empty()) s_.fail(pending->span, exception_text(pending->exc));
    throw *pending;
  }
  return flow;
}

}  // namespace sg::compiler::staging
