// Binding of call arguments to an op's parameter names, Python style:
// positional first, then keywords; unknown, duplicate or missing ones are errors
// at the call.
#pragma once

#include <initializer_list>
#include <string>
#include <vector>

#include "staging/stager.h"

namespace sg::compiler::staging {

class BoundArgs {
 public:
  // The first `required` names must be given.
  BoundArgs(Stager& s, const Args& a, const std::string& fn, std::initializer_list<const char*> names,
            size_t required)
      : names_(names.begin(), names.end()), values_(names_.size()), given_(names_.size(), false), spans_(names_.size(), a.span) {
    if (a.pos.size() > names_.size())
      s.fail(a.span, fn + "() takes at most " + std::to_string(names_.size()) + " positional arguments, got " +
                         std::to_string(a.pos.size()));
    for (size_t i = 0; i < a.pos.size(); ++i) {
      values_[i] = a.pos[i];
      given_[i] = true;
      if (i < a.pos_spans.size()) spans_[i] = a.pos_spans[i];
    }
    for (const auto& [name, value] : a.kw) {
      size_t i = 0;
      while (i < names_.size() && name != names_[i]) ++i;
      if (i == names_.size()) s.fail(a.span, fn + "() got an unexpected keyword argument '" + name + "'");
      if (given_[i]) s.fail(a.span, fn + "() got multiple values for argument '" + name + "'");
      values_[i] = value;
      given_[i] = true;
    }
    for (size_t i = 0; i < required; ++i)
      if (!given_[i]) s.fail(a.span, fn + "() missing required argument '" + names_[i] + "'");
  }

  // Given and not None.
  bool has(size_t i) const { return given_[i] && !values_[i].is<NoneV>(); }
  // Given as None (NumPy's "all axes" / "flattened" for an axis).
  bool none(size_t i) const { return given_[i] && values_[i].is<NoneV>(); }
  const Value& operator[](size_t i) const { return values_[i]; }
  Value get(size_t i, Value fallback) const { return has(i) ? values_[i] : fallback; }
  SourceSpan span(size_t i) const { return spans_[i]; }

 private:
  std::vector<std::string> names_;
  std::vector<Value> values_;
  std::vector<bool> given_;
  std::vector<SourceSpan> spans_;
};

}  // namespace sg::compiler::staging
