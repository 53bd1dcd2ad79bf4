// stagegraph._compiler: the compiler in process (SPEC §14, sg.compile). The same
// pipeline as graph-compile (tools/graph_compile.cc): parse, stage, check, the
// passes at the asked level, emit; the graph comes back as bytes, never a file.
// The GIL is released while it compiles (staging runs on a thread of its own).
#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "emit/emit.h"
#include "emit/quantize.h"
#include "frontend/diagnostics.h"
#include "frontend/parser.h"
#include "ir/ir.h"
#include "passes/passes.h"
#include "staging/stage.h"

namespace nb = nanobind;
namespace sc = sg::compiler;

namespace {

// As graph-compile's check: the runtime refuses a value whose static dims need
// more than 2^40 bytes, so such a graph is a compile error at the value's line.
constexpr int kMaxDeclaredBytesLog2 = 40;

void check_value_sizes(const sc::ir::Module& m, sc::DiagnosticEngine& diags) {
  constexpr uint64_t kMax = uint64_t(1) << kMaxDeclaredBytesLog2;
  for (const auto& fn : m.functions) {
    for (const auto& v : fn.values) {
      uint64_t bytes = sg::dtype_size(v.type.dtype);
      bool over = false;
      for (const auto& d : v.type.shape) {
        const std::optional<int64_t> n = d.as_static();
        if (!n || *n <= 0) continue;
        if (bytes > kMax / uint64_t(*n)) {
          over = true;
          break;
        }
        bytes *= uint64_t(*n);
      }
      if (!over) continue;
      diags.error(v.span, "a tensor of type " + m.format_type(v.type) + " needs more than 2^" +
                              std::to_string(kMaxDeclaredBytesLog2) +
                              " bytes (1 TiB), more than any Stagegraph runtime holds");
      break;
    }
  }
}

struct CompileResult {
  bool ok = false;
  nb::bytes graph;          // the .sgraph bytes when ok
  std::string text;         // every diagnostic, gcc style (as graph-compile prints them)
  std::string json;         // the same, one JSON object per line (--diagnostics=json)
  std::string stdout_text;  // what static print(...) wrote at compile time
  std::string explain;      // --explain-staging's lines, when asked
  std::string error;        // a failure with no source location (internal, emit)
};

CompileResult compile_source(const std::string& path, std::string text, const std::vector<std::string>& entries,
                             const std::string& weights, int opt_level, bool werror, bool explain_staging) {
  CompileResult r;
  std::vector<uint8_t> bytes;
  {
    nb::gil_scoped_release release;
    sc::SourceManager sources;
    const uint32_t file = sources.add(path, std::move(text));
    sc::DiagnosticEngine diags(sources);
    diags.set_werror(werror);
    std::ostringstream explain, out;
    auto finish = [&] {
      std::ostringstream t, j;
      diags.print_text(t);
      diags.print_json(j);
      r.text = t.str();
      r.json = j.str();
      r.stdout_text = out.str();
      r.explain = explain.str();
    };
    std::unique_ptr<sc::Module> ast = sc::parse_module(sources, file, diags);
    if (!ast || diags.has_errors()) {
      finish();
      return r;
    }
    sc::StageOptions options;
    options.entries = entries;
    options.weights_path = weights;
    options.explain_staging = explain_staging ? &explain : nullptr;
    options.compile_time_stdout = &out;
    std::unique_ptr<sc::ir::Module> ir = sc::stage_module(*ast, sources, diags, options);
    if (ir && !diags.has_errors()) check_value_sizes(*ir, diags);
    finish();
    if (!ir || diags.has_errors()) return r;
    ir->sources = &sources;
    if (std::string problem = sc::ir::verify(*ir); !problem.empty()) {
      r.error = "internal error: the staged IR is invalid: " + problem;
      return r;
    }
    sc::passes::run_pipeline(*ir, opt_level);
    if (std::string problem = sc::ir::verify(*ir); !problem.empty()) {
      r.error = "internal error: the IR after -O" + std::to_string(opt_level) + " is invalid: " + problem;
      return r;
    }
    std::string error;
    // sg.weight(name, quantize=...) requests (SPEC §13), as graph-compile without
    // --quantize; its notes (weights left f32) come back with the warnings' text.
    std::vector<std::string> notes;
    const std::vector<sc::QuantizedConstant> quantized = sc::quantize_constants(*ir, sc::QuantizeOptions{}, &notes);
    for (const std::string& note : notes) r.text += "graph-compile: note: " + note + "\n";
    if (!sc::emit_graph(*ir, &bytes, &error, quantized.empty() ? nullptr : &quantized)) {
      r.error = error;
      return r;
    }
  }
  r.ok = true;
  r.graph = nb::bytes(reinterpret_cast<const char*>(bytes.data()), bytes.size());
  return r;
}

}  // namespace

NB_MODULE(_compiler, m) {
  m.doc() = "The Stagegraph compiler, in process (use stagegraph.compile).";
  nb::class_<CompileResult>(m, "CompileResult")
      .def_ro("ok", &CompileResult::ok)
      .def_ro("graph", &CompileResult::graph)
      .def_ro("text", &CompileResult::text)
      .def_ro("json", &CompileResult::json)
      .def_ro("stdout", &CompileResult::stdout_text)
      .def_ro("explain", &CompileResult::explain)
      .def_ro("error", &CompileResult::error);
  m.def(
      "compile_source",
      [](const std::string& path, std::string text, const std::vector<std::string>& entries, const std::string& weights,
         int opt_level, bool werror, bool explain_staging) {
        if (opt_level < 0 || opt_level > 2)
          throw nb::value_error(("opt_level must be 0, 1 or 2 (got " + std::to_string(opt_level) + ")").c_str());
        return compile_source(path, std::move(text), entries, weights, opt_level, werror, explain_staging);
      },
      nb::arg("path"), nb::arg("text"), nb::arg("entries"), nb::arg("weights"), nb::arg("opt_level"),
      nb::arg("werror"), nb::arg("explain_staging"),
      "Stages `text` (diagnostics name it `path`) into graph bytes; never raises for a compile error.");
}
