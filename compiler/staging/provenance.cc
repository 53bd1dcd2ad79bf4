// Diagnostics of the stager: errors at the op's span with `note:` lines that say
// where each operand's shape came from (SPEC §8), and suggestions where the fix
// is obvious.
#include <ostream>
#include <string>

#include "staging/calls.h"
#include "staging/staged_loop.h"
#include "staging/stager.h"

#if SG_ADDRESS_SANITIZER
#include <pthread.h>
#include <sanitizer/asan_interface.h>
#endif

namespace sg::compiler::staging {
namespace {

// ASan clears the stack's redzones when an exception is thrown, but declines to for a
// stack more than 64 MiB deep, as deep compile-time recursion gets on staging's
// large thread; the frames that unwinding runs would then trip over stale
// redzones. Under ASan an error clears them itself, from here to the stack's top.
void clear_stack_redzones_for_unwinding() {
#if SG_ADDRESS_SANITIZER
  pthread_attr_t attr;
  if (pthread_getattr_np(pthread_self(), &attr) != 0) return;
  void* base = nullptr;
  size_t size = 0;
  if (pthread_attr_getstack(&attr, &base, &size) == 0) {
    char* here = static_cast<char*>(__builtin_frame_address(0));
    char* top = static_cast<char*>(base) + size;
    if (here < top) __asan_unpoison_memory_region(here, size_t(top - here));
  }
  pthread_attr_destroy(&attr);
#endif
}

}  // namespace

void Stager::fail(SourceSpan span, std::string message, std::vector<Note> notes) {
  relocate_library_diagnostic(span, notes);
  if (!calls().speculative()) diags_.error(span, std::move(message), std::move(notes));
  clear_stack_redzones_for_unwinding();
  throw StageAbort{};
}

void Loops::retype_weak(const Value& v, DType dtype) {
  const WeakOrigin* w = weak_origin(v);
  if (!w || w->loop == 0 || w->retyped || s_.tensor_dtype(v) == dtype || !Stager::number_fits(w->number, dtype)) return;
  const WeakRetype r{w->loop, w->name, dtype};
  clear_stack_redzones_for_unwinding();
  throw r;
}

void Stager::steps_spent(SourceSpan span) {
  fail(span, "compile-time evaluation runs past " + std::to_string(options_.max_compile_time_steps) +
                 " steps (unrolled loop iterations and Python-level calls, in all); keep the loops in the "
                 "graph with sg.range or tensor loop variables");
}

void Stager::count_specialisation_pass(SourceSpan span) {
  if (++specialisation_passes_ <= options_.max_specialisation_passes) return;
  const std::string message =
      "staging graph functions runs past " + std::to_string(options_.max_specialisation_passes) +
      " specialisation passes, in all; this call needed one more (each call of a recursive function with new "
      "static arguments or shapes is a specialisation of its own, staged in a pass or a few): pass the argument "
      "that changes at each call as a staged tensor, or bound the static values it takes";
  limit_exceeded_ = true;
  // Speculative passes hold errors back; this one is final.
  if (calls().speculative()) diags_.error(span, message);
  fail(span, message);
}

void Stager::warn(SourceSpan span, std::string message, std::vector<Note> notes) {
  diags_.warning(span, std::move(message), std::move(notes));
}

void Stager::explain(SourceSpan span, const std::string& construct, const std::string& how) {
  if (!options_.explain_staging) return;
  std::string where;
  if (span.valid() && span.file < sources_.size())
    where = sources_.file(span.file).path + ":" + std::to_string(span.line) + ":" +
            std::to_string(span.col) + ": ";
  print_out(options_.explain_staging, where + construct + ": " + how + "\n");
}

void Stager::print_out(std::ostream* os, const std::string& text) {
  held_output_.emplace_back(os, text);
}

std::string Stager::source_text(SourceSpan span) const {
  if (!span.valid() || span.file >= sources_.size()) return "";
  if (span.start_line != 0) {  // the whole expression, not from its operator
    span.line = span.start_line;
    span.col = span.start_col;
  }
  const SourceFile& f = sources_.file(span.file);
  if (span.line > f.line_starts.size()) return "";
  std::string_view line = f.line(span.line);
  const size_t begin = span.col > 0 ? span.col - 1 : 0;
  if (begin >= line.size()) return "";
  size_t end = line.size();
  bool cut = span.end_line != span.line;
  if (!cut && span.end_col > span.col) end = std::min(end, size_t(span.end_col - 1));
  std::string text(line.substr(begin, end - begin));
  constexpr size_t kMax = 48;
  if (text.size() > kMax) {
    text.resize(kMax);
    cut = true;
  }
  return cut ? text + " ..." : text;
}

void Stager::set_origin(int32_t fn_id, int32_t id, Origin origin) {
  origins_[{fn_id, id}] = std::move(origin);
}

std::optional<Note> Stager::provenance_note(const Value& tensor) const {
  Origin origin;
  std::string type;
  if (tensor.is<StaticTensorPtr>()) {
    const StaticTensor& t = *tensor.as<StaticTensorPtr>();
    origin = t.origin;
    type = dtype_name(t.dtype) + ops::shape_to_string(t.shape);
  } else if (tensor.is<Staged>()) {
    const Staged& s = tensor.as<Staged>();
    auto it = origins_.find({s.fn, s.id});
    if (it == origins_.end()) return std::nullopt;
    origin = it->second;
    type = module_->format_type(module_->functions[size_t(s.fn)].values[size_t(s.id)].type);
  } else {
    return std::nullopt;
  }
  if (!origin.span.valid()) return std::nullopt;
  std::string what = origin.what;
  if (what.empty()) what = "`" + source_text(origin.span) + "` produced";
  return Note{origin.span, what + " " + type + " here"};
}

std::vector<Note> Stager::provenance_notes(const std::vector<Value>& tensors) const {
  std::vector<Note> notes;
  for (const Value& t : tensors) {
    std::optional<Note> n = provenance_note(t);
    if (!n) continue;
    bool dup = false;
    for (const Note& m : notes) dup = dup || (m.message == n->message && m.span.line == n->span.line);
    if (!dup) notes.push_back(std::move(*n));
  }
  return notes;
}

void Stager::note_reduction(const Value& result, std::vector<int64_t> axes) {
  if (!result.is<Staged>()) return;
  const Staged& s = result.as<Staged>();
  reduced_[{s.fn, s.id}] = std::move(axes);
}

void Stager::fail_op(ops::OpId op, const Status& status, const std::vector<Value>& inputs,
                     SourceSpan span) {
  std::vector<Note> notes = provenance_notes(inputs);
  // Suggestions where the fix is obvious.
  if (op == ops::OpId::MatMul && inputs.size() == 2) {
    ir::Type a = tensor_type(inputs[0]), b = tensor_type(inputs[1]);
    if (a.rank() >= 2 && b.rank() >= 2) {
      const ir::Dim& ak = a.shape.back();
      if (ops::dim_equal(ak, b.shape.back()) == ops::Tri::kYes)
        notes.push_back(Note{{}, "the inner dims match if the right operand is transposed: use `.T` "
                                 "or sg.transpose on it"});
      else if (ops::dim_equal(a.shape[a.rank() - 2], b.shape[b.rank() - 2]) == ops::Tri::kYes)
        notes.push_back(Note{{}, "the inner dims match if the left operand is transposed: use `.T` "
                                 "or sg.transpose on it"});
    }
  }
  if (ops::has_flag(op, ops::kElementwiseBinary)) {
    for (const Value& in : inputs) {
      if (!in.is<Staged>()) continue;
      auto it = reduced_.find({in.as<Staged>().fn, in.as<Staged>().id});
      if (it == reduced_.end()) continue;
      std::string text = "a reduction dropped the reduced axes of this operand";
      if (auto n = provenance_note(in)) text += " (" + source_text(n->span) + ")";
      notes.push_back(Note{{}, text + "; pass keepdims=True to keep them for broadcasting"});
      break;
    }
  }
  fail(span, status.message(), std::move(notes));
}

}  // namespace sg::compiler::staging
