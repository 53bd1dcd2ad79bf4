// Test helpers for staging: parse and stage a program given as a string, then
// look at the IR and the diagnostics.
#pragma once

#include <memory>
#include <sstream>
#include <stdexcept>
#include <string>

#include "frontend/ast.h"
#include "frontend/diagnostics.h"
#include "frontend/parser.h"
#include "ir/ir.h"
#include "staging/stage.h"

namespace sg::compiler::testing {

struct StageResult {
  std::unique_ptr<SourceManager> sources;
  std::unique_ptr<DiagnosticEngine> diags;
  std::unique_ptr<Module> ast;
  std::unique_ptr<ir::Module> ir;  // null on errors
  std::string printed;             // compile-time print(...) output
  std::string explained;           // explain_staging output

  // "LINE:COL: severity: MESSAGE" per diagnostic, then "  LINE:COL: note: MESSAGE" per note.
  std::string locations() const {
    std::string out;
    for (const Diagnostic& d : diags->diagnostics()) {
      const char* sev = d.severity == Severity::kError ? "error" : d.severity == Severity::kWarning ? "warning" : "note";
      out += std::to_string(d.span.line) + ":" + std::to_string(d.span.col) + ": " + sev + ": " + d.message + "\n";
      for (const Note& n : d.notes)
        out += "  " + std::to_string(n.span.line) + ":" + std::to_string(n.span.col) + ": note: " + n.message + "\n";
    }
    return out;
  }
  const ir::Entry& entry(const std::string& name) const {
    for (const ir::Entry& e : ir->entries)
      if (e.name == name) return e;
    throw std::runtime_error("no entry " + name);
  }
  const ir::Function& function(const std::string& entry_name) const {
    return ir->functions.at(size_t(entry(entry_name).function));
  }
  // The type of result `i` of an entry, e.g. "f32[N, 10]".
  std::string result_type(const std::string& entry_name, size_t i = 0) const {
    const ir::Function& f = function(entry_name);
    return ir->format_type(f.values.at(size_t(f.results.at(i))).type);
  }
  size_t count_ops(const std::string& entry_name, ops::OpId op) const {
    size_t n = 0;
    for (const ir::Node& node : function(entry_name).nodes) n += node.kind == ir::NodeKind::kOp && node.op == op;
    return n;
  }
};

inline StageResult stage_source(const std::string& text, StageOptions options = {}) {
  StageResult r;
  r.sources = std::make_unique<SourceManager>();
  const uint32_t file = r.sources->add("model.py", text);
  r.diags = std::make_unique<DiagnosticEngine>(*r.sources);
  r.ast = parse_module(*r.sources, file, *r.diags);
  if (!r.ast) return r;
  std::ostringstream out, explain;
  options.compile_time_stdout = &out;
  options.explain_staging = &explain;
  r.ir = stage_module(*r.ast, *r.sources, *r.diags, options);
  r.printed = out.str();
  r.explained = explain.str();
  return r;
}

}  // namespace sg::compiler::testing
