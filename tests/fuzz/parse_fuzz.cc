// Fuzzes the frontend and staging with arbitrary source text: every input either
// compiles or produces diagnostics; nothing crashes or reads out of bounds.
#include <cstddef>
#include <cstdint>
#include <sstream>
#include <string>

#include "frontend/diagnostics.h"
#include "frontend/parser.h"
#include "staging/stage.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  sg::compiler::SourceManager sources;
  const uint32_t file = sources.add("fuzz.py", std::string(reinterpret_cast<const char*>(data), size));
  sg::compiler::DiagnosticEngine diags(sources);
  auto module = sg::compiler::parse_module(sources, file, diags);
  if (module) {
    std::ostringstream sink;
    sg::compiler::StageOptions options;
    options.compile_time_stdout = &sink;
    // Mutated loop bounds multiply; a smaller budget keeps every input fast under
    // the sanitizers and still reaches the error path that ends them.
    options.max_compile_time_steps = 10'000;
    // A 4 GiB staging stack per input (the ASan default) costs more than most
    // inputs' staging; the smallest one keeps a compile-time recursion depth of 156.
    options.stack_bytes = size_t(64) << 20;
    (void)sg::compiler::stage_module(*module, sources, diags, options);
  }
  std::ostringstream out;
  diags.print_text(out);
  return 0;
}
