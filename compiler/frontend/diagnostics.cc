#include "diagnostics.h"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <sstream>

namespace sg::compiler {

std::string_view SourceFile::line(uint32_t line_no) const {
  if (line_no == 0 || line_no > line_starts.size()) return {};
  size_t begin = line_starts[line_no - 1];
  size_t end = line_no < line_starts.size() ? line_starts[line_no] - 1 : text.size();
  std::string_view s(text.data() + begin, end - begin);
  if (!s.empty() && s.back() == '\r') s.remove_suffix(1);
  return s;
}

SourceSpan operator_span(const SourceSpan& expr, const SourceSpan& op) {
  if (!op.valid() || !expr.valid()) return expr;
  SourceSpan s = expr;
  s.line = op.line;
  s.col = op.col;
  const bool before = expr.line < op.line || (expr.line == op.line && expr.col < op.col);
  s.start_line = before ? expr.line : 0;
  s.start_col = before ? expr.col : 0;
  return s;
}

uint32_t SourceManager::add(std::string path, std::string text) {
  SourceFile f;
  f.path = std::move(path);
  f.text = std::move(text);
  f.line_starts.push_back(0);
  for (size_t i = 0; i < f.text.size(); ++i) {
    if (f.text[i] == '\n') f.line_starts.push_back(i + 1);
  }
  files_.push_back(std::move(f));
  return static_cast<uint32_t>(files_.size() - 1);
}

void DiagnosticEngine::error(SourceSpan span, std::string message, std::vector<Note> notes) {
  report(Diagnostic{Severity::kError, span, std::move(message), std::move(notes)});
}

void DiagnosticEngine::warning(SourceSpan span, std::string message, std::vector<Note> notes) {
  report(Diagnostic{Severity::kWarning, span, std::move(message), std::move(notes)});
}

void DiagnosticEngine::report(Diagnostic d) { diags_.push_back(std::move(d)); }

bool DiagnosticEngine::has_errors() const { return error_count() > 0; }

size_t DiagnosticEngine::error_count() const {
  return static_cast<size_t>(std::count_if(diags_.begin(), diags_.end(), [&](const Diagnostic& d) {
    return d.severity == Severity::kError || (werror_ && d.severity == Severity::kWarning);
  }));
}

namespace {

bool has_location(const SourceManager& sources, const SourceSpan& span) {
  return span.valid() && span.file < sources.size();
}

// "    x = a @ b\n        ~~^~~" under the span's line: the caret at line:col,
// tildes over the rest of the span on that line (from its start, or from the
// line's first non-blank when the span starts on an earlier line). Tabs are
// kept so the caret lines up, and UTF-8 continuation bytes take no column.
void print_source_excerpt(std::ostream& os, const SourceFile& file, const SourceSpan& span) {
  std::string_view line = file.line(span.line);
  os << "    " << line << "\n    ";
  const size_t caret = span.col - 1;
  size_t from = caret;
  if (span.start_line == span.line && span.start_col >= 1 && span.start_col - 1 < caret) {
    from = span.start_col - 1;
  } else if (span.start_line != 0 && span.start_line < span.line) {
    from = std::min(caret, line.find_first_not_of(" \t") == std::string_view::npos ? caret
                                                                                  : line.find_first_not_of(" \t"));
  }
  size_t end = span.end_line == span.line ? std::max<size_t>(span.end_col - 1, caret + 1)
                                          : std::max(line.size(), caret + 1);
  for (size_t i = 0; i < end; ++i) {
    const char c = i < line.size() ? line[i] : ' ';
    if ((static_cast<unsigned char>(c) & 0xC0) == 0x80) continue;
    if (i == caret) os << '^';
    else if (i < from) os << (c == '\t' ? '\t' : ' ');
    else if (i < line.size()) os << '~';
    else if (i < caret) os << ' ';
  }
  os << '\n';
}

// `excerpt` false: the location only (a note that is a hint, at its diagnostic's place).
void print_one(std::ostream& os, const SourceManager& sources, const SourceSpan& span,
               std::string_view label, std::string_view message, bool excerpt = true) {
  if (has_location(sources, span)) {
    const SourceFile& file = sources.file(span.file);
    os << file.path << ':' << span.line << ':' << span.col << ": " << label << ": " << message << '\n';
    if (excerpt) print_source_excerpt(os, file, span);
  } else {
    os << label << ": " << message << '\n';
  }
}

}  // namespace

std::string DiagnosticEngine::format(const Diagnostic& d) const {
  std::ostringstream os;
  std::string message = d.message;
  const char* label = "error";
  if (d.severity == Severity::kWarning) {
    if (werror_) {
      message += " [-Werror]";
    } else {
      label = "warning";
    }
  } else if (d.severity == Severity::kNote) {
    label = "note";
  }
  print_one(os, sources_, d.span, label, message);
  // A note without a place of its own (a hint) is given its diagnostic's, so every
  // line reads FILE:LINE:COL.
  for (const Note& n : d.notes) {
    const bool own = has_location(sources_, n.span);
    print_one(os, sources_, own ? n.span : d.span, "note", n.message, own);
  }
  return os.str();
}

void DiagnosticEngine::print_text(std::ostream& os) const {
  for (const Diagnostic& d : diags_) os << format(d);
}

// Locations that are absent print as file "", line 0, column 0 so every object has
// the same fields (a note without one takes its diagnostic's). Under --Werror a
// warning's severity is "error".
void DiagnosticEngine::print_json(std::ostream& os) const {
  using Json = nlohmann::ordered_json;
  auto locate = [&](Json& j, const SourceSpan& span) {
    bool located = has_location(sources_, span);
    j["file"] = located ? sources_.file(span.file).path : std::string();
    j["line"] = located ? span.line : 0;
    j["column"] = located ? span.col : 0;
  };
  for (const Diagnostic& d : diags_) {
    Json j;
    locate(j, d.span);
    bool as_error = d.severity == Severity::kError || (werror_ && d.severity == Severity::kWarning);
    j["severity"] = as_error ? "error" : d.severity == Severity::kWarning ? "warning" : "note";
    j["message"] = d.message;
    Json notes = Json::array();
    for (const Note& n : d.notes) {
      Json note;
      locate(note, has_location(sources_, n.span) ? n.span : d.span);
      note["message"] = n.message;
      notes.push_back(std::move(note));
    }
    j["notes"] = std::move(notes);
    os << j.dump(-1, ' ', false, Json::error_handler_t::replace) << '\n';
  }
}

}  // namespace sg::compiler
