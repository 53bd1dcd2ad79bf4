// Classes, records and exceptions as compile-time objects (SPEC.md §4):
// helpers shared by classes.cc, exceptions.cc and the staging of branches and
// loops, which carry an instance's attributes like variables.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "staging/stager.h"

namespace sg::compiler::staging {

// A builtin exception class name (ValueError, ...), and its bases up to
// BaseException, most derived first.
bool is_exception_name(const std::string& name);
std::vector<std::string> exception_chain(const std::string& name);

// A class attribute (method or constant) found along `cls`'s bases; null when none.
const std::shared_ptr<Value>* find_class_attr(const ClassPtr& cls, const std::string& name);

// An instance's attribute `name`, or null.
Value* find_instance_attr(const InstanceObj& obj, const std::string& name);
void set_instance_attr(InstanceObj& obj, const std::string& name, const Value& v);

// A named tuple instance as the tuple of its fields; nullopt for anything else.
std::optional<Value> record_as_tuple(const Value& v);

// Whether `v` is an instance of class `cls` (or of a class derived from it).
bool instance_of(const Value& v, const ClassPtr& cls);

// A raise that reached a staged branch or loop body (exceptions.cc): the path
// that runs it stops the program at run time. Thrown from exec_raise, caught
// where the staged construct is built.
struct RaiseSignal {
  ExceptionV exc;
  SourceSpan span;
  bool staged = false;  // its Assert node is made already (both branches of an If raise)
};

// The message a raise shows: "ValueError: n must be positive".
std::string exception_text(const ExceptionV& e);

// The Records concern of the stager: the program's classes and their instances,
// named tuples and dataclasses (classes.cc), and exceptions: raise, try and the
// staged branches and loop bodies that catch a raise (exceptions.cc).
class Records {
 public:
  explicit Records(Stager& s) : s_(s) {}
  Records(const Records&) = delete;
  Records& operator=(const Records&) = delete;

  void define_class(const Stmt& s);
  Value instantiate(const ClassPtr& cls, Args& args);
  // Attributes of instances, classes, super(), exceptions and the record modules.
  Value object_attribute(const Value& v, const std::string& name, SourceSpan span);
  void set_attribute(const Value& obj, const std::string& name, const Value& v, SourceSpan span);
  // super, the builtin exceptions, namedtuple, dataclass, field; `object` methods.
  static bool is_class_builtin(const std::string& name);
  Value call_class_builtin(const std::string& name, Args& args);
  Value call_record_method(const InstancePtr& self, const std::string& name, Args& args);

  Flow exec_raise(const Stmt& s);
  Flow exec_try(const Stmt& s);
  // A staged branch or loop body that caught a raise: `exc` stops the run at `span`
  // unless an enclosing try would have to catch it, which is an error.
  void stage_raise(const RaiseSignal& r);
  // Staged branches and loop bodies being staged; each catches a raise inside it.
  void open_raise_catcher() { ++raise_catchers_; }
  void close_raise_catcher() { --raise_catchers_; }
  bool catching_raises() const { return raise_catchers_ > 0; }

 private:
  Stager& s_;
  int raise_catchers_ = 0;
  // The try statements running, innermost last, and the raise catchers open when each began.
  std::vector<std::pair<const Stmt*, int>> try_stack_;
};

}  // namespace sg::compiler::staging
