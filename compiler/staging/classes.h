// Classes, records and exceptions as compile-time objects (SPEC.md §4):
// helpers shared by classes.cc, exceptions.cc and the staging of branches and
// loops, which carry an instance's attributes like variables.
#pragma once

#include <optional>
#include <string>
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

}  // namespace sg::compiler::staging
