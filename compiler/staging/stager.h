// The stager: an abstract interpreter over the AST (DESIGN.md #2). It evaluates
// expressions to Values; operations on static values are computed now (Python
// semantics, or the reference kernels for tensors), operations on staged values
// append nodes to the graph function under construction.
//
// Errors are reported to the DiagnosticEngine at once and then unwind the
// interpretation of the current entry point with StageAbort (internal to the
// stager: stage_module catches it and returns null).
#pragma once

#include <cstddef>
#include <functional>
#include <iosfwd>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "frontend/ast.h"
#include "frontend/diagnostics.h"
#include "ir/ir.h"
#include "staging/scope.h"
#include "staging/stage.h"
#include "staging/value.h"
#include "staging/weights.h"

namespace sg::compiler::staging {

// True where evaluating `e` can neither fail nor have an effect (names, numbers,
// comparisons, elementwise +, -, *): both sides of a staged `and` may run.
bool cannot_fail(const Expr& e);

// Unwinds after an error diagnostic has been reported.
struct StageAbort {};

// A recursive call whose result type is still being inferred, met while a
// probe stages the function's body (staged_call.h): the control path it lies
// on is pending. A staged branch that is pending gives way to the other
// branch; a probe all of whose paths are pending cannot infer the type.
struct PendingResult {
  size_t spec;
};

// A variable that entered a staged loop as a Python number (`total = 0`) is
// carried in the number's own dtype (i64, f32) until the body shows otherwise:
// where it meets a tensor of another dtype that the number can take (NEP 50:
// `0 + x` with an f32 `x` is f32), run_staged_loop stages the loop again with
// the number in that dtype, as eager mode's first iteration gives it
// (staged_loop.cc). `loop` is that loop's token; values derived from the
// variable by arithmetic with numbers share its origin.
//
// Values that stand for Python ints in eager mode without being carried (a
// staged `for` counter, `x.shape[0]`, `len(x)`) are weak too, with no loop:
// beside a tensor of another dtype they are cast at that use, as eager's int is.
struct WeakOrigin {
  int64_t loop = 0;  // 0: not a carried variable (nothing to stage again)
  std::string name;
  Value number;          // the number, or one of its kind (int or float)
  bool retyped = false;  // given a dtype already: no second change

  // A value that stands for a Python number of `number`'s kind and is carried by
  // no loop: its dtype is fixed, and it is cast at a use beside a tensor.
  static WeakOrigin of_number(Value number) { return WeakOrigin{0, "", std::move(number), true}; }
};
struct WeakRetype {
  int64_t loop;
  std::string name;
  DType dtype;
};

// The state of staged control flow: the statement stack for liveness, relaxed
// dims, unset values (control_state.h).
struct ControlState;

// Graph functions called through Call nodes: recursion, @sg.function helpers
// (calls.h, staged_call.h).
struct GraphCalls;
class Calls;

// Staged loops' tokens and the Python numbers they carry (staged_loop.h).
class Loops;

// The program's variables, sg.variables (sg_variables.h).
class ProgramVariables;

// sg.grad and the other transforms (differentiation.h).
class Differentiation;

// Classes, instances, records, raise and try (classes.h).
class Records;

// Staged if, and/or and conditional expressions (staged_if.h).
class Branches;

// How a statement ended (static control flow).
enum class Flow : uint8_t { kNormal, kBreak, kContinue, kReturn };

struct Args {
  std::vector<Value> pos;
  std::vector<SourceSpan> pos_spans;
  std::vector<std::pair<std::string, Value>> kw;
  SourceSpan span;  // the whole call
};

// One graph function under construction. Branch and loop-body functions have a
// parent: staged values of enclosing functions used inside become parameters
// (captures), which the If/While node passes in.
struct FnBuilder {
  int32_t fn = -1;
  FnBuilder* parent = nullptr;
  std::map<std::pair<int32_t, int32_t>, int32_t> imported;  // outer (fn, id) -> param
  std::vector<std::pair<int32_t, Staged>> captures;          // param id, outer value
  std::map<int32_t, int32_t> constant_values;                // module constant -> value
  std::map<std::pair<int32_t, int64_t>, int32_t> shape_dims; // (value, axis) -> value
  // Splats materialized as `full` nodes: (element constant, shape) -> value.
  std::map<std::pair<int32_t, std::vector<int64_t>>, int32_t> splats;
};

// One Python-level function activation.
struct CallFrame {
  std::shared_ptr<Scope> scope;
  Value return_value;
  // Staged branches and loops open when the call began: a nonlocal or global
  // rebound inside one opened since would not be joined (classes.cc).
  size_t staged_depth = 0;
};

// A shape given as a value: static dims with -1 (infer) and -2 (the next dynamic
// input) entries, the dynamic scalars, and their known dims.
struct ShapeArg {
  std::vector<int64_t> dims;
  std::vector<Value> dynamic;
  bool all_static() const { return dynamic.empty(); }
};

// Built with AddressSanitizer (GCC's macro or clang's feature test).
#if defined(__SANITIZE_ADDRESS__)
#define SG_ADDRESS_SANITIZER 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SG_ADDRESS_SANITIZER 1
#endif
#endif
#ifndef SG_ADDRESS_SANITIZER
#define SG_ADDRESS_SANITIZER 0
#endif

inline constexpr int kMaxCompileTimeDepth = 10000;

// Python's `math` module (math_module.cc): its constants and function names.
bool is_math_constant(const std::string& name, double& value);
bool is_math_function(const std::string& name);

// The dtype of `tensor <op> number` (SPEC §3): the tensor's, except f32 for a float
// beside an integer or bool tensor and i64 for an int beside a bool one.
DType dtype_beside(DType tensor, const Value& number);

// The name of a branch or loop-body function staged inside function `parent`:
// "f.if6.else" inside "f". Names show the nesting while it is shallow; past a
// few levels (an if/elif chain of N branches nests N deep) only the root
// function's name is kept, so that the names, and the graph file, grow linearly
// in N instead of quadratically ("f..if4012.else").
inline std::string nested_function_name(const std::string& parent, const std::string& part) {
  constexpr size_t kMaxNameLength = 96;
  if (parent.size() + 1 + part.size() <= kMaxNameLength) return parent + "." + part;
  return parent.substr(0, parent.find('.')) + ".." + part;
}
inline constexpr int64_t kMaxUnrolledIterations = 100000;

class Stager {
 public:
  Stager(const Module& module, const SourceManager& sources, DiagnosticEngine& diags,
         const StageOptions& options);
  ~Stager();
  Stager(const Stager&) = delete;
  Stager& operator=(const Stager&) = delete;
  std::unique_ptr<ir::Module> run();
  // Compile-time recursion deeper than this is an error (kMaxCompileTimeDepth
  // unless the staging thread's stack is smaller than planned).
  void set_max_compile_time_depth(int depth) { max_compile_time_depth_ = depth; }
  // The staging thread's stack size: eval stops with a located error before the
  // recursion (an expression's, or a compile-time call chain's) runs past it.
  void set_stack_bytes(size_t bytes) { stack_bytes_ = bytes; }
  int max_compile_time_depth() const { return max_compile_time_depth_; }

  // ---- diagnostics and provenance (provenance.cc) ------------------------------
  [[noreturn]] void fail(SourceSpan span, std::string message, std::vector<Note> notes = {});
  // One unit of compile-time work (an unrolled iteration, a comprehension item, a
  // Python-level call) at `span`; fails once StageOptions::max_compile_time_steps
  // are spent.
  void count_step(SourceSpan span) {
    if (++compile_time_steps_ > options_.max_compile_time_steps) steps_spent(span);
  }
  // One pass over a graph-function specialisation for the call at `span`
  // (staged_call.cc); fails once StageOptions::max_specialisation_passes are
  // spent, at once and for good (no enclosing pass retries).
  void count_specialisation_pass(SourceSpan span);
  void warn(SourceSpan span, std::string message, std::vector<Note> notes = {});
  std::string source_text(SourceSpan span) const;
  std::optional<Note> provenance_note(const Value& tensor) const;
  std::vector<Note> provenance_notes(const std::vector<Value>& tensors) const;
  void set_origin(int32_t fn, int32_t id, Origin origin);
  [[noreturn]] void fail_op(ops::OpId op, const Status& status, const std::vector<Value>& inputs,
                            SourceSpan span);
  void explain(SourceSpan span, const std::string& construct, const std::string& how);
  // Compile-time output (print of static values, --explain-staging lines), held
  // until staging ends so that a loop staged again (WeakRetype) prints once.
  void print_out(std::ostream* os, const std::string& text);
  // Whether explain() prints: callers skip building costly explanations otherwise.
  bool explaining() const { return options_.explain_staging != nullptr; }
  // Remembers that `result` came from a reduction that dropped `axes`, for the
  // keepdims=True suggestion when it later fails to broadcast.
  void note_reduction(const Value& result, std::vector<int64_t> axes);

  // ---- expressions (expr_eval.cc) ---------------------------------------------
  Value eval(const Expr& e);
  Value eval_dict(const Expr& e);
  // d[k] = v for a static key (an error at key_span otherwise).
  void dict_set(DictObj& d, Value k, Value v, SourceSpan key_span);
  // Evaluates items, `*x` ones unpacked; with spans, one per value.
  void eval_items(const std::vector<ExprPtr>& elts, std::vector<Value>& out, std::vector<SourceSpan>* spans);
  Value eval_compare(const Expr& e);   // chains included
  Value eval_subscript(const Expr& e);
  Value eval_list_comp(const Expr& e);
  Value lookup_name(const std::string& name, SourceSpan span);
  void check_bound(const std::string& name, SourceSpan span);
  Value get_attribute(const Value& v, const std::string& name, SourceSpan span);
  Value call_value(const Value& callee, Args& args);
  // Static truth value; a staged value is an error naming `what`.
  bool truth(const Value& v, SourceSpan span, const std::string& what);
  // Calls `body` for each item of a static iterable (or a tensor with a static
  // first dim) until it returns false; `what` names the construct for errors.
  void iterate(const Value& iterable, SourceSpan span, const std::string& what,
               const std::function<bool(const Value&)>& body);
  std::vector<Value> to_list(const Value& iterable, SourceSpan span);
  int64_t to_int(const Value& v, SourceSpan span, const std::string& what);

  // ---- Python operators on any values (operators.cc) ---------------------------
  Value binary(BinOp op, const Value& a, const Value& b, SourceSpan span);
  Value compare(CmpOp op, const Value& a, const Value& b, SourceSpan span);
  Value unary(UnaryOp op, const Value& a, SourceSpan span);
  Value python_binary(BinOp op, const Value& a, const Value& b, SourceSpan span);

  // ---- tensors (tensor_ops.cc) ------------------------------------------------
  ir::Type tensor_type(const Value& t) const;
  DType tensor_dtype(const Value& t) const { return tensor_type(t).dtype; }
  size_t tensor_rank(const Value& t) const { return tensor_type(t).shape.size(); }
  // A tensor of `dtype` from a tensor (cast when needed) or a Python number.
  Value to_tensor(const Value& v, std::optional<DType> dtype, SourceSpan span);
  Value cast(const Value& t, DType dtype, SourceSpan span);
  // Applies a single-output op: folded now when every input is static, else a
  // node in the current function. Inputs must be tensors.
  Value apply(ops::OpId op, ops::Attrs attrs, std::vector<Value> inputs, SourceSpan span);
  // The same for an op of any number of outputs (topk), one value per output.
  std::vector<Value> apply_all(ops::OpId op, ops::Attrs attrs, std::vector<Value> inputs, SourceSpan span);
  // An elementwise binary op with SPEC §3's dtype rules for Python scalars.
  Value tensor_binary(ops::OpId op, const Value& a, const Value& b, SourceSpan span);
  Value shape_item(const Value& t, int64_t axis, SourceSpan span);
  Value shape_tuple(const Value& t, SourceSpan span);
  ShapeArg shape_arg(const Value& v, SourceSpan span, bool allow_infer);
  // The known integer value of a scalar (Python int, static 0-d int tensor, or a
  // staged scalar tied to a dim).
  std::optional<ir::Dim> known_dim(const Value& v) const;
  // The value id of a tensor in the current function (constants and captures
  // are added on first use).
  int32_t materialize(const Value& tensor, SourceSpan span);
  int32_t local(const Staged& s, SourceSpan span = {});
  Value staged(int32_t id, std::optional<ir::Dim> known = std::nullopt) const;
  ir::Function& fn() { return module_->functions[size_t(cur_->fn)]; }
  int32_t add_constant(const StaticTensor& t);

  // ---- indexing (indexing.cc) ---------------------------------------------------
  Value index_tensor(const Value& x, const Expr& index, SourceSpan span);
  Value index_tensor_value(const Value& x, const Value& index, SourceSpan span);
  // x with x[index] = v (slice_update); v is broadcast to the region, a Python
  // number takes x's dtype.
  Value index_update(const Value& x, const Expr& index, const Value& v, SourceSpan span);

  // ---- statements (statements.cc) ---------------------------------------------
  // `loop`: the loop statement whose body this is (null for other blocks).
  Flow exec_block(const std::vector<StmtPtr>& body, const Stmt* loop = nullptr);
  Flow exec(const Stmt& s);
  void assign(const Expr& target, const Value& v, SourceSpan span);
  Value call_function(const std::shared_ptr<FunctionV>& f, Args& args);
  void bind_params(const FunctionV& f, const Args& args, Scope& scope);
  // math.FN(...) (math_module.cc).
  Value call_math(const std::string& fn, Args& a);
  Value staged_math(const std::string& fn, const Args& a);  // on a staged scalar
  std::shared_ptr<FunctionV> make_function(const FunctionDef& def, std::shared_ptr<Scope> closure);

  // ---- calls through Call nodes (calls.h; staged_call*.cc, call_graph.cc) -----------
  Calls& calls() { return *calls_; }

  // ---- loop statements, staged loops' marks on values (staged_loop.h: Loops) -----------
  Loops& loops() { return *loops_; }
  // Loops::weak_origin, for the op library.
  const WeakOrigin* weak_origin(const Value& v) const;
  // Whether a Python number keeps its meaning as a tensor of `dtype` (NEP 50):
  // floats only as floats, ints not as bool, i32 only within its range.
  static bool number_fits(const Value& number, DType dtype);

  // ---- staging attempts that are undone (staged_call.cc) ------------------------------
  // What a staging attempt adds, so that it can be undone: the module's
  // functions and constants after these counts, the specialisations begun,
  // diagnostics and held output, the control state, the scope, and what the
  // current graph function gained.
  struct Checkpoint {
    size_t functions = 0, constants = 0, specs = 0, diagnostics = 0, output = 0;
    int64_t pending_branches = 0;
    std::shared_ptr<const ControlState> control;  // a copy
    std::map<std::string, Value> vars;
    FnBuilder* builder = nullptr;
    // The current graph function as it was, and its builder's caches.
    size_t values = 0, params = 0, results = 0, nodes = 0;
    std::optional<FnBuilder> builder_state;
    std::map<int32_t, Value> variable_current;  // sg.variables' values now
  };
  Checkpoint checkpoint();
  void rollback(const Checkpoint& c);
  // Drops the per-value records of functions from `functions` on.
  void forget_functions(size_t functions, size_t constants);

  // ---- staged if, and/or, x if c else y (staged_if.h: Branches) ------------------------
  Branches& branches() { return *branches_; }

  // ---- jumps, print, assert, tensor lists under staged control flow
  //      (control_flags*.cc, staged_loop_lists.cc) --------------------------------------
  // Runs statements `from`.. of `body`; after a statement that may have jumped
  // under a staged test (a staged flag), the rest runs under an If on the flags.
  Flow exec_block_from(const std::vector<StmtPtr>& body, size_t from, const Stmt* loop, bool continues);
  Flow exec_jump(const Stmt& s);
  // The value a Python function call returns, from its frame's flags.
  Value frame_result(const FunctionDef& def, SourceSpan span);
  Value sg_relax(Args& args);
  // print(...) with staged values: a Print node; assert with a staged test: an Assert node.
  void stage_print(const Args& args, const std::string& sep, const std::string& end);
  void stage_assert(const Stmt& s, const Value& test);
  // An Assert node in program order: the run stops with `message` at `span`
  // unless the bool scalar `ok` holds (the ops' own run-time checks use it too).
  void assert_at_run_time(const Value& ok, const std::string& message, SourceSpan span);
  // sg.stack / sg.concatenate of a tensor list.
  Value tensor_list_join(const TensorListV& list, const std::string& op, const Value& axis, SourceSpan span);
  // A value of `model`'s types on a path where it is never read.
  Value unset_value_like(const Value& model, SourceSpan span);
  // The tensor of a tensor list in the current function.
  Staged resolve_tensor_list(const TensorListV& list, const std::string& name, SourceSpan span);
  ControlState& control();
  FnBuilder* builder() const { return cur_; }
  void set_builder(FnBuilder* b) { cur_ = b; }
  CallFrame* frame() const { return frame_; }
  void set_frame(CallFrame* f) { frame_ = f; }
  const std::shared_ptr<Scope>& globals() const { return globals_; }

  // ---- builtins, the op library, methods (builtins.cc, sg_ops.cc, methods.cc) --------
  Value call_builtin(const std::string& name, Args& args);
  // enumerate(x[, start]) / enumerate(x, start=...): checks the arguments, gives start.
  int64_t enumerate_start(const Args& a);
  Value call_sg(const std::string& name, Args& args);
  Value call_method(const BoundMethod& m, Args& args);
  Value call_tensor_method(const BoundMethod& m, Args& args);  // methods.cc
  std::optional<Value> call_list_method(const BoundMethod& m, Args& args);
  // sg.weight(name): a tensor of the --weights file.
  // `quantize`: "" or the storage sg.weight(name, quantize=...) asks for.
  Value load_weight(const std::string& name, SourceSpan span, const std::string& quantize = {});
  // Replaces an f32 weight's values by their quantized values widened back (SPEC §13).
  void quantize_weight(StaticTensor& t, const std::string& scheme, SourceSpan span);
  static bool is_builtin(const std::string& name);
  static bool is_sg_member(const std::string& name);
  // stagegraph's modules written in the staged language (library_modules.cc):
  // `optim`. library_module stages one on first use and returns it (a module object).
  static bool is_library_module(const std::string& name);
  Value library_module(const std::string& name, SourceSpan span);

  Scope& scope() { return *frame_->scope; }
  ir::Module& module() { return *module_; }

  // ---- classes, records, raise and try (classes.h: Records) --------------------------
  Records& records() { return *records_; }

  // ---- scopes: del, global and nonlocal (statements.cc, classes.cc) -------------------
  bool scope_has(const std::string& name) const;
  void del_target(const Expr& t);
  // A name bound by `global` or `nonlocal` in the running function: where it lives.
  Scope* declared_scope(const std::string& name, SourceSpan span, bool for_store);
  // Staged branches and loops open now (for nonlocal and global stores).
  size_t staged_depth();

  // ---- differentiation (differentiation.h; sg_grad.cc, autodiff*.cc) ----------------
  Differentiation& differentiation() { return *differentiation_; }
  // Differentiation::call_sg and stable_log, for the op library.
  Value call_sg_grad(const std::string& name, Args& args);
  std::optional<Value> stable_log(const Value& x, SourceSpan span);

  // sg.variables (sg_variables.cc, sg_variables.h): the program's variables.
  ProgramVariables& variables() { return *variables_; }
  Value make_variables(const Args& args);

 private:
  // An error inside one of stagegraph's staged modules while the program's call into
  // it runs is reported at the program's call, with a note at the module's line.
  void relocate_library_diagnostic(SourceSpan& span, std::vector<Note>& notes) const;
  // The statements of a module: the program's (ast_) or, with `library`, one of
  // stagegraph's own modules written in the staged language (its functions are
  // never entry points).
  void stage_module_body(const std::vector<StmtPtr>& body, bool library);
  void stage_entry(const std::shared_ptr<FunctionV>& f);
  ir::Type annotation_type(const Param& p);

  const Module& ast_;
  const SourceManager& sources_;
  DiagnosticEngine& diags_;
  const StageOptions& options_;
  std::unique_ptr<ir::Module> module_;
  std::shared_ptr<Scope> globals_;
  std::vector<std::pair<std::string, std::shared_ptr<FunctionV>>> top_functions_;
  // stagegraph's modules written in the staged language (library_modules.cc), staged
  // on first use: name -> the module object; their ASTs live as long as the stager.
  std::map<std::string, Value> library_modules_;
  std::vector<std::unique_ptr<Module>> library_asts_;
  // The files of those modules, and the program's calls into them that are running,
  // innermost last (LibraryCall pushes and pops them).
  friend class LibraryCall;
  std::set<uint32_t> library_files_;
  std::vector<SourceSpan> library_call_sites_;

  // The current graph function and Python activation.
  FnBuilder* cur_ = nullptr;
  CallFrame* frame_ = nullptr;
  int call_depth_ = 0;
  int64_t compile_time_steps_ = 0;
  int64_t specialisation_passes_ = 0;
  int max_compile_time_depth_ = kMaxCompileTimeDepth;
  size_t stack_bytes_ = 0;  // 0: not known, not checked
  const char* stack_base_ = nullptr;
  [[noreturn]] void steps_spent(SourceSpan span);

  std::map<std::pair<int32_t, int32_t>, Origin> origins_;
  // Values produced by a reduction without keepdims: (fn, id) -> reduced axes,
  // for the keepdims=True suggestion.
  std::map<std::pair<int32_t, int32_t>, std::vector<int64_t>> reduced_;
  // Scopes captured by function values. A scope that holds a function closing
  // over it is a reference cycle; the destructor clears these scopes to free them.
  std::vector<std::weak_ptr<Scope>> closure_scopes_;
  size_t compact_closures_at_ = 64;
  // The --weights file, opened on the first sg.weight.
  std::unique_ptr<WeightsFile> weights_;
  // Module constants by content hash, for deduplication.
  std::unordered_multimap<size_t, int32_t> constant_index_;
  // Staged control flow (control_flags.cc); shared_ptr: the type is incomplete here.
  std::shared_ptr<ControlState> control_;
  // Specialisations of graph functions reach the module and diagnostics (staged_call.cc).
  friend struct GraphCalls;
  // A recursion ran past kMaxCompileTimeDepth, or staging past
  // StageOptions::max_specialisation_passes: reported, and not retried.
  bool limit_exceeded_ = false;
  std::vector<std::pair<std::ostream*, std::string>> held_output_;
  std::unique_ptr<ProgramVariables> variables_;
  std::unique_ptr<Differentiation> differentiation_;
  std::unique_ptr<Calls> calls_;
  std::unique_ptr<Loops> loops_;
  std::unique_ptr<Records> records_;
  std::unique_ptr<Branches> branches_;
};

// A call of a function of stagegraph's staged modules from the program's own code:
// its site is where errors inside are reported while it runs (library_modules.cc).
class LibraryCall {
 public:
  LibraryCall(Stager& s, const FunctionDef& callee, SourceSpan site);
  ~LibraryCall();
  LibraryCall(const LibraryCall&) = delete;
  LibraryCall& operator=(const LibraryCall&) = delete;

 private:
  Stager& s_;
  bool pushed_ = false;
};

}  // namespace sg::compiler::staging
