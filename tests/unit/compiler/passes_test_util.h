// Shared by the pass tests: runs a pass on a hand-built module, checks the result
// with ir::verify, and returns its text for golden comparison.
#pragma once

#include <gtest/gtest.h>

#include <string>

#include "compiler/ir_test_modules.h"
#include "ir/ir.h"
#include "passes/passes.h"

namespace sg::compiler::testing {

template <class Pass>
std::string run_pass(Pass pass, ir::Module& m, bool expect_change = true) {
  EXPECT_EQ(ir::verify(m), "") << "the module before the pass is invalid";
  EXPECT_EQ(pass(m), expect_change);
  EXPECT_EQ(ir::verify(m), "") << ir::print(m);
  return ir::print(m);
}

inline ops::Attrs attrs_of(std::vector<ops::AttrValue> v) {
  ops::Attrs a;
  a.values = std::move(v);
  return a;
}

// A module with one function `f` of the given parameters, exported as entry "f".
inline std::unique_ptr<TestModule> make_single(std::vector<std::pair<std::string, Type>> params) {
  auto tm = std::make_unique<TestModule>();
  tm->sources.add("t.py", "import stagegraph as sg\n");
  tm->module.sources = &tm->sources;
  tm->module.functions.emplace_back();
  ir::Function& f = tm->module.functions.back();
  f.name = "f";
  ir::Entry e{"f", 0, {}, {}};
  for (auto& [name, type] : params) {
    f.params.push_back(f.add_value(type, name));
    e.input_names.push_back(name);
  }
  tm->module.entries.push_back(e);
  return tm;
}

// Sets f's results and the entry's output names (output_0...).
inline void set_results(ir::Module& m, std::vector<int32_t> results) {
  m.functions[0].results = results;
  m.entries[0].output_names.clear();
  for (size_t i = 0; i < results.size(); ++i) m.entries[0].output_names.push_back("output_" + std::to_string(i));
}

}  // namespace sg::compiler::testing
