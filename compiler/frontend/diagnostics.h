// Diagnostics in the compiler convention (SPEC.md §8):
//   FILE:LINE:COL: error: MESSAGE
//       x = a @ b
//           ~~^~~
//   FILE:LINE:COL: note: ...
// LINE:COL and the caret name where the problem is: for an operation written
// with an operator, the operator; the tildes show the rest of the expression.
// or, with --diagnostics=json, one JSON object per line:
//   {"file":..,"line":..,"column":..,"severity":..,"message":..,"notes":[{file,line,column,message}]}
#pragma once

#include <cstdint>
#include <deque>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

namespace sg::compiler {

// 1-based line and column; end is exclusive (end_col one past the last char on
// end_line). line == 0 means "no location".
struct SourceSpan {
  uint32_t file = 0;
  uint32_t line = 0;
  uint32_t col = 0;
  uint32_t end_line = 0;
  uint32_t end_col = 0;
  // Where the text starts when that is before line:col (an operation points
  // at its operator, `x @ w` at the `@`, and still covers the whole
  // expression); 0 when it starts at line:col.
  uint32_t start_line = 0;
  uint32_t start_col = 0;
  bool valid() const { return line != 0; }
};

// The span of an operation: at its operator `op`, covering the expression `expr`.
SourceSpan operator_span(const SourceSpan& expr, const SourceSpan& op);

struct SourceFile {
  std::string path;  // as given on the command line
  std::string text;
  std::vector<size_t> line_starts;  // offset of each line's first char
  std::string_view line(uint32_t line_no) const;  // 1-based, without the newline
};

class SourceManager {
 public:
  uint32_t add(std::string path, std::string text);
  const SourceFile& file(uint32_t id) const { return files_[id]; }
  size_t size() const { return files_.size(); }

 private:
  std::deque<SourceFile> files_;  // a deque: a file keeps its address when another is added
};

enum class Severity : uint8_t { kError, kWarning, kNote };

struct Note {
  SourceSpan span;  // may be invalid: then printed as "note: ..." without a location
  std::string message;
};

struct Diagnostic {
  Severity severity = Severity::kError;
  SourceSpan span;
  std::string message;
  std::vector<Note> notes;
};

// Collects diagnostics; the tools print them and map them to exit codes.
class DiagnosticEngine {
 public:
  explicit DiagnosticEngine(const SourceManager& sources) : sources_(sources) {}

  void error(SourceSpan span, std::string message, std::vector<Note> notes = {});
  void warning(SourceSpan span, std::string message, std::vector<Note> notes = {});
  void report(Diagnostic d);
  // Drops the diagnostics after the first `count` (a staging attempt undone).
  void truncate(size_t count) {
    if (count < diags_.size()) diags_.resize(count);
  }

  void set_werror(bool on) { werror_ = on; }
  bool has_errors() const;  // counts warnings too under --Werror
  size_t error_count() const;
  const std::vector<Diagnostic>& diagnostics() const { return diags_; }

  // gcc style with the source line and a caret under the span.
  void print_text(std::ostream& os) const;
  // One JSON object per line.
  void print_json(std::ostream& os) const;
  std::string format(const Diagnostic& d) const;  // text form of one diagnostic

 private:
  const SourceManager& sources_;
  std::vector<Diagnostic> diags_;
  bool werror_ = false;
};

}  // namespace sg::compiler
