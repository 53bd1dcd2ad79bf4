// Staging: abstract interpretation of a parsed module into IR (SPEC.md §3-§6,
// DESIGN.md #2). Every value the interpreter meets is static (computed now, by
// the same reference kernels the runtime uses) or staged (an IR value); control
// constructs dispatch on the kind of their test.
#pragma once

#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "frontend/ast.h"
#include "frontend/diagnostics.h"
#include "ir/ir.h"

namespace sg::compiler {

struct StageOptions {
  // Entry points to export; empty: every top-level @sg.function.
  std::vector<std::string> entries;
  // Weights for sg.weight(name) (SPEC §2); empty: none given.
  std::string weights_path;
  // When set, a line per if/while/for: staged or compile time, and why.
  std::ostream* explain_staging = nullptr;
  // Where static print(...) writes at compile time.
  std::ostream* compile_time_stdout = nullptr;
  // Work done at compile time, in all: unrolled loop iterations, comprehension
  // items and calls evaluated in Python. Past it staging stops with an error rather
  // than running on (nested unrolled loops multiply).
  int64_t max_compile_time_steps = 10'000'000;
  // The staging thread's stack, which bounds compile-time recursion depth (in
  // proportion); 0: the default, 512 MiB (4 GiB under AddressSanitizer).
  size_t stack_bytes = 0;
  // Passes over graph-function specialisations, in all: each call of a recursive
  // function or @sg.function helper with new static arguments or shapes makes a
  // specialisation, staged in one pass or, while its result type is inferred, a
  // few; a pass abandoned drops the specialisations made inside it, which are
  // staged again. Past it staging stops with an error at the call that needed
  // one more, rather than running on (a blow-up in the number of passes).
  int64_t max_specialisation_passes = 20'000;
};

// Stages `module` into IR. Returns null when errors were reported to `diags`.
std::unique_ptr<ir::Module> stage_module(const Module& module, const SourceManager& sources,
                                         DiagnosticEngine& diags, const StageOptions& options);

}  // namespace sg::compiler
