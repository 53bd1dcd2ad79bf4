// stage_module: the module level (imports, constants, function definitions),
// entry points (signatures from annotations, results) and the staging thread.
#include "staging/stage.h"

#include <pthread.h>

#include <cstring>
#include <new>

#include <algorithm>
#include <cmath>
#include <exception>
#include <functional>
#include <ostream>

#include "quant/weight_format.h"
#include "staging/calls.h"
#include "staging/classes.h"
#include "staging/differentiation.h"
#include "staging/sg_variables.h"
#include "staging/staged_if.h"
#include "staging/staged_loop.h"
#include "staging/stager.h"

namespace sg::compiler {
namespace staging {
namespace {

bool is_main_guard(const Expr& test) {
  if (test.kind != ExprKind::kCompare || test.cmp_ops.size() != 1 || test.cmp_ops[0] != CmpOp::kEq) return false;
  const Expr& a = *test.a;
  const Expr& b = *test.elts[0];
  auto is_name = [](const Expr& e) { return e.kind == ExprKind::kName && e.name == "__name__"; };
  auto is_main = [](const Expr& e) { return e.kind == ExprKind::kString && e.str_value == "__main__"; };
  return (is_name(a) && is_main(b)) || (is_main(a) && is_name(b));
}

// Restores the stager's current function and activation when an entry point
// is done, also when it unwinds on an error.
struct ContextGuard {
  FnBuilder*& cur;
  CallFrame*& frame;
  FnBuilder* saved_cur;
  CallFrame* saved_frame;
  ContextGuard(FnBuilder*& c, CallFrame*& f) : cur(c), frame(f), saved_cur(c), saved_frame(f) {}
  ~ContextGuard() {
    cur = saved_cur;
    frame = saved_frame;
  }
};

}  // namespace

Stager::Stager(const Module& module, const SourceManager& sources, DiagnosticEngine& diags,
               const StageOptions& options)
    : ast_(module), sources_(sources), diags_(diags), options_(options),
      module_(std::make_unique<ir::Module>()), globals_(std::make_shared<Scope>()),
      variables_(std::make_unique<ProgramVariables>(*this)),
      differentiation_(std::make_unique<Differentiation>(*this)), calls_(std::make_unique<Calls>(*this, module)),
      loops_(std::make_unique<Loops>(*this)), records_(std::make_unique<Records>(*this)),
      branches_(std::make_unique<Branches>(*this)) {
  module_->sources = &sources;
}

Stager::~Stager() {
  for (const auto& [os, text] : held_output_) *os << text << std::flush;
  for (const std::weak_ptr<Scope>& w : closure_scopes_)
    if (std::shared_ptr<Scope> scope = w.lock()) scope->vars().clear();
}

void Stager::stage_module_body(const std::vector<StmtPtr>& body, bool library) {
  for (const StmtPtr& sp : body) {
    const Stmt& s = *sp;
    try {
      switch (s.kind) {
        case StmtKind::kImport:
          for (const ImportName& n : s.imports) {
            if (n.name == "collections" || n.name == "typing" || n.name == "dataclasses" || n.name == "math") {
              globals_->set(n.alias.empty() ? n.name : n.alias, Value(PyModuleV{n.name}));
              continue;
            }
            if (n.name.rfind("stagegraph.", 0) == 0 && !n.alias.empty()) {  // import stagegraph.optim as optim
              globals_->set(n.alias, get_attribute(Value(SgModuleV{}), n.name.substr(11), n.span));
              continue;
            }
            if (n.name.rfind("stagegraph.", 0) == 0) {  // import stagegraph.optim: binds stagegraph
              get_attribute(Value(SgModuleV{}), n.name.substr(11), n.span);
              globals_->set("stagegraph", Value(SgModuleV{}));
              continue;
            }
            if (n.name != "stagegraph")
              fail(n.span, "import of module '" + n.name + "' at line " + std::to_string(s.span.line) +
                               " is not supported: a staged program may import only stagegraph, math (and collections, "
                               "typing and dataclasses for records)");
            globals_->set(n.alias.empty() ? n.name : n.alias, Value(SgModuleV{}));
          }
          break;
        case StmtKind::kImportFrom:
          if (s.module == "collections" || s.module == "typing" || s.module == "dataclasses" || s.module == "math") {
            for (const ImportName& n : s.imports)
              globals_->set(n.alias.empty() ? n.name : n.alias,
                            records().object_attribute(Value(PyModuleV{s.module}), n.name, n.span));
            break;
          }
          if (s.module.rfind("stagegraph.", 0) == 0 && is_library_module(s.module.substr(11))) {
            const Value mod = get_attribute(Value(SgModuleV{}), s.module.substr(11), s.span);
            for (const ImportName& n : s.imports)
              globals_->set(n.alias.empty() ? n.name : n.alias, get_attribute(mod, n.name, n.span));
            break;
          }
          if (s.module != "stagegraph")
            fail(s.span, "import from module '" + s.module + "' at line " + std::to_string(s.span.line) +
                             " is not supported: a staged program may import only stagegraph, math (and collections, "
                             "typing and dataclasses for records)");
          for (const ImportName& n : s.imports) {
            Value v = get_attribute(Value(SgModuleV{}), n.name, n.span);
            globals_->set(n.alias.empty() ? n.name : n.alias, v);
          }
          break;
        case StmtKind::kFunctionDef: {
          auto f = make_function(*s.func, globals_);
          globals_->set(s.func->name, Value(f));
          if (!library) top_functions_.emplace_back(s.func->name, f);
          break;
        }
        case StmtKind::kClassDef:
          records().define_class(s);
          break;
        case StmtKind::kAssign:
        case StmtKind::kAnnAssign:
        case StmtKind::kAugAssign:
          exec(s);
          break;
        case StmtKind::kExpr:
          if (s.value->kind != ExprKind::kString)
            fail(s.span, "only imports, constant assignments and function definitions are allowed at module level");
          break;
        case StmtKind::kIf:
          if (!is_main_guard(*s.test))
            fail(s.span, "only `if __name__ == \"__main__\":` is allowed at module level");
          break;
        case StmtKind::kPass: break;
        default:
          fail(s.span, "only imports, constant assignments and function definitions are allowed at module level");
      }
    } catch (StageAbort&) {
      // Reported; go on with the next statement so that more errors show at once.
      // The names it would have bound stay quiet when used.
      if (s.kind == StmtKind::kClassDef) {
        UndefinedV u{s.cls->name, "", s.cls->name_span, ""};
        u.reported = true;
        globals_->set(s.cls->name, Value(u));
      }
      if (s.kind == StmtKind::kAssign || s.kind == StmtKind::kAnnAssign) {
        std::vector<const Expr*> names;
        for (const ExprPtr& t : s.targets) names.push_back(t.get());
        if (s.target) names.push_back(s.target.get());
        for (size_t i = 0; i < names.size(); ++i) {
          const Expr& t = *names[i];
          if (t.kind == ExprKind::kName) {
            UndefinedV u{t.name, "", t.span, ""};
            u.reported = true;
            globals_->set(t.name, Value(u));
          } else if (t.kind == ExprKind::kTuple || t.kind == ExprKind::kList) {
            for (const ExprPtr& e : t.elts) names.push_back(e.get());
          }
        }
      }
    }
  }
}

ir::Type Stager::annotation_type(const Param& p) {
  const std::string example = " such as sg.f32[\"N\", 784] (or sg.f32 for a scalar)";
  if (!p.annotation) fail(p.span, "parameter '" + p.name + "' of an entry point needs a type annotation" + example);
  Value v = eval(*p.annotation);
  ir::Type t;
  if (v.is<DTypeV>()) {
    t.dtype = v.as<DTypeV>().dtype;
    return t;
  }
  if (!v.is<AnnotationV>())
    fail(p.annotation->span, "the annotation of parameter '" + p.name + "' must be a dtype with dims" + example +
                                 ", got " + type_name(v));
  const AnnotationV& a = v.as<AnnotationV>();
  t.dtype = a.dtype;
  for (const auto& d : a.dims) {
    if (std::holds_alternative<int64_t>(d)) {
      t.shape.push_back(ir::Dim(std::get<int64_t>(d)));
    } else {
      const std::string& name = std::get<std::string>(d);
      if (name.empty() || name.find('#') != std::string::npos)
        fail(p.annotation->span, "a symbolic dim needs a plain name, got \"" + name + "\"");
      t.shape.push_back(ir::Dim::symbol(module_->symbols.intern(name)));
    }
  }
  return t;
}

void Stager::stage_entry(const std::shared_ptr<FunctionV>& f) {
  const FunctionDef& def = *f->def;
  ContextGuard guard(cur_, frame_);
  module_->functions.push_back(ir::Function{});
  const int32_t fn_id = int32_t(module_->functions.size() - 1);
  module_->functions.back().name = def.name;
  calls().name_entry(fn_id, def.name);
  FnBuilder builder;
  builder.fn = fn_id;
  cur_ = &builder;

  ir::Entry entry;
  entry.name = def.name;
  entry.function = fn_id;
  auto scope_ptr = std::make_shared<Scope>(f->closure);
  CallFrame annotations{globals_, Value()};
  for (const Param& p : def.params) {
    if (p.kind == ParamKind::kVarPositional || p.kind == ParamKind::kVarKeyword)
      fail(p.span, "an entry point takes named, annotated inputs; '" + std::string(p.kind == ParamKind::kVarPositional ? "*" : "**") +
                       p.name + "' is allowed in the functions it calls");
    frame_ = &annotations;  // annotations name module constants
    ir::Type t = annotation_type(p);
    const int32_t id = fn().add_value(std::move(t), p.name, p.span);
    fn().params.push_back(id);
    set_origin(fn_id, id, Origin{p.annotation ? p.annotation->span : p.span, p.name + " declared as"});
    scope_ptr->set(p.name, staged(id));
    entry.input_names.push_back(p.name);
  }
  CallFrame frame{scope_ptr, Value()};
  frame_ = &frame;
  call_depth_ = 1;
  variables().begin_entry(builder);
  exec_block(def.body);

  // A return inside a staged `if` or loop leaves its value in the frame's flags.
  const Value r = frame_result(def, def.name_span);
  // Nested results are flattened in order into outputs named by their path (SPEC §2).
  std::vector<std::pair<std::string, Value>> outputs;
  std::function<void(const std::string&, const Value&)> flatten_result = [&](const std::string& path,
                                                                              const Value& v) {
    auto join = [&](const std::string& part) { return path.empty() ? part : path + "." + part; };
    if (v.is<DictPtr>()) {
      for (const auto& [k, item] : v.as<DictPtr>()->items) {
        if (!k.is<std::string>()) fail(def.name_span, "the keys of a returned dict must be strings, got " + py_repr(k));
        if (k.as<std::string>().empty()) fail(def.name_span, "the keys of a returned dict must not be empty");
        flatten_result(join(k.as<std::string>()), item);
      }
    } else if (v.is<TuplePtr>() || v.is<ListPtr>()) {
      const auto& items = v.is<TuplePtr>() ? *v.as<TuplePtr>() : v.as<ListPtr>()->items;
      for (size_t i = 0; i < items.size(); ++i)
        flatten_result(path.empty() ? "output_" + std::to_string(i) : join(std::to_string(i)), items[i]);
    } else if (v.is<InstancePtr>()) {
      for (const auto& [k, item] : v.as<InstancePtr>()->attrs->items)
        if (k.is<std::string>()) flatten_result(join(k.as<std::string>()), item);
    } else if (path.empty() || !(v.is<NoneV>() || v.is<std::string>())) {
      // None and strings inside a structure (an object's settings) are not results.
      if (!v.is<NoneV>()) outputs.emplace_back(path.empty() ? "output_0" : path, v);
    }
  };
  flatten_result("", r);
  if (outputs.empty() && !variables().any_assigned())
    fail(def.name_span, "entry point '" + def.name + "' must return a tensor, a tuple of tensors or a dict of them");
  for (auto& [name, v] : outputs) {
    if (!v.is_tensor() && !v.is_number())
      fail(def.name_span, "entry point '" + def.name + "' returns a " + type_name(v) + " as '" + name +
                              "'; results must be tensors or numbers");
    Value t = to_tensor(v, std::nullopt, def.name_span);
    const int32_t id = materialize(t, def.name_span);
    fn().results.push_back(id);
    entry.output_names.push_back(name);
  }
  variables().finish_entry(entry, def.name_span);
  module_->entries.push_back(std::move(entry));
}

Value Stager::load_weight(const std::string& name, SourceSpan span, const std::string& quantize) {
  if (options_.weights_path.empty())
    fail(span, "sg.weight(\"" + name + "\") needs a weights file: pass --weights FILE.safetensors");
  if (!weights_) {
    auto w = std::make_unique<WeightsFile>();
    Status st = w->open(options_.weights_path);
    if (!st.ok()) fail(span, st.message());
    weights_ = std::move(w);
  }
  Result<StaticTensorPtr> t = weights_->read(name);
  if (!t.ok()) fail(span, t.status().message());
  auto with_origin = std::make_shared<StaticTensor>(**t);
  with_origin->origin = Origin{span, "weight '" + name + "' is"};
  with_origin->weight = name;
  if (!quantize.empty()) quantize_weight(*with_origin, quantize, span);
  return Value(StaticTensorPtr(with_origin));
}

void Stager::quantize_weight(StaticTensor& t, const std::string& scheme, SourceSpan span) {
  namespace quant = kernels::quant;
  quant::Storage storage;
  if (!quant::storage_from_name(scheme, &storage))
    fail(span, "sg.weight(\"" + t.weight + "\", quantize=\"" + scheme + "\"): unknown storage; use 'int8', 'int4', "
               "'bf16' or 'f16'");
  if (t.dtype != DType::kF32 || t.splat)
    fail(span, "sg.weight(\"" + t.weight + "\", quantize=...) needs an f32 weight, not " + dtype_name(t.dtype));
  const quant::Layout l = quant::default_layout(storage, t.shape);
  const auto* w = reinterpret_cast<const float*>(t.bytes.data());
  for (uint64_t i = 0; i < quant::element_count(l); ++i)
    if (!std::isfinite(w[i])) fail(span, "sg.weight(\"" + t.weight + "\") has non-finite values; it cannot be quantized");
  const quant::Quantized q = quant::quantize(l, w);
  t.unquantized = std::make_shared<const std::vector<uint8_t>>(t.bytes);
  quant::dequantize(quant::WeightView{&l, q.data.data(), q.scales.data()}, 0, quant::element_count(l),
                    reinterpret_cast<float*>(t.bytes.data()));
  t.quantize = scheme;
}

std::unique_ptr<ir::Module> Stager::run() {
  stack_base_ = static_cast<const char*>(__builtin_frame_address(0));
  const size_t errors_before = diags_.error_count();
  CallFrame top{globals_, Value()};
  frame_ = &top;
  stage_module_body(ast_.body, false);

  std::vector<std::shared_ptr<FunctionV>> entries;
  if (options_.entries.empty()) {
    for (const auto& [name, f] : top_functions_)
      if (f->is_entry) entries.push_back(f);
    if (entries.empty() && diags_.error_count() == errors_before)
      diags_.error({}, "no entry point: decorate a top-level function with @sg.function");
  } else {
    for (const std::string& name : options_.entries) {
      std::shared_ptr<FunctionV> found;
      for (const auto& [n, f] : top_functions_)
        if (n == name) found = f;
      if (!found || !found->is_entry) {
        std::string known;
        for (const auto& [n, f] : top_functions_)
          if (f->is_entry) known += (known.empty() ? "" : ", ") + n;
        diags_.error({}, "unknown entry point '" + name + "'" +
                             (found ? ": '" + name + "' is not decorated with @sg.function" : std::string()) +
                             (known.empty() ? "" : " (entry points: " + known + ")"));
        continue;
      }
      // --entry NAME twice exports it once.
      if (std::find(entries.begin(), entries.end(), found) == entries.end()) entries.push_back(found);
    }
  }
  for (const auto& f : entries) {
    try {
      stage_entry(f);
    } catch (StageAbort&) {
      // Reported; the other entry points are still checked.
      limit_exceeded_ = false;
    }
  }
  frame_ = nullptr;
  if (diags_.error_count() > errors_before) return nullptr;
  return std::move(module_);
}

}  // namespace staging

namespace {

struct StagingJob {
  staging::Stager* stager = nullptr;
  std::unique_ptr<ir::Module> result;
  std::string crash;
  bool out_of_memory = false;
};

void* run_job(void* p) {
  auto* job = static_cast<StagingJob*>(p);
  try {
    job->result = job->stager->run();
  } catch (const std::bad_alloc&) {
    job->out_of_memory = true;
  } catch (const std::exception& e) {
    job->crash = e.what();
  } catch (...) {
    job->crash = "unknown exception";
  }
  return nullptr;
}

}  // namespace

std::unique_ptr<ir::Module> stage_module(const Module& module, const SourceManager& sources,
                                         DiagnosticEngine& diags, const StageOptions& options) {
  staging::Stager stager(module, sources, diags, options);
  StagingJob job;
  job.stager = &stager;
  // Compile-time recursion (up to 10,000 Python-level calls) runs on the C++
  // stack of the interpreter: give it a thread with a stack that large. Under
  // AddressSanitizer, frames carry redzones and a call level takes ~50 KiB: 4 GiB
  // of address space, touched only as deep as the recursion goes.
#if SG_ADDRESS_SANITIZER
  constexpr size_t kStackBytes = size_t(4) << 30;
#else
  constexpr size_t kStackBytes = size_t(512) << 20;
#endif
  // Under an address-space limit (ulimit -v) a stack that large may not be had:
  // smaller ones are tried, the compile-time recursion depth shrinking with the
  // stack, down to kMinStackBytes; below that staging is refused with a message.
  // (The main thread's stack is never used: its 8 MiB hold a few hundred levels.)
  constexpr size_t kMinStackBytes = kStackBytes / 64;
  pthread_t thread;
  bool threaded = false;
  size_t stack_bytes = options.stack_bytes != 0 ? std::min(options.stack_bytes, kStackBytes) : kStackBytes;
  int create_error = 0;
  for (; !threaded && stack_bytes >= kMinStackBytes; stack_bytes /= 2) {
    pthread_attr_t attr;
    if (pthread_attr_init(&attr) != 0) break;
    create_error = pthread_attr_setstacksize(&attr, stack_bytes);
    if (create_error == 0) {
      stager.set_stack_bytes(stack_bytes);
      stager.set_max_compile_time_depth(
          int(int64_t(staging::kMaxCompileTimeDepth) * int64_t(stack_bytes / kMinStackBytes) / 64));
      create_error = pthread_create(&thread, &attr, run_job, &job);
      threaded = create_error == 0;
    }
    pthread_attr_destroy(&attr);
  }
  if (!threaded) {
    diags.error({}, "cannot start staging: no thread with a stack of at least " +
                        std::to_string(kMinStackBytes >> 20) + " MiB could be created (" +
                        std::strerror(create_error) + "); raise the address-space limit (ulimit -v)");
    return nullptr;
  }
  pthread_join(thread, nullptr);
  if (job.out_of_memory) {
    diags.error({}, "out of memory while staging (raise the memory limit, or give the program less to hold "
                    "at compile time)");
    return nullptr;
  }
  if (!job.crash.empty()) {
    diags.error({}, "internal error while staging: " + job.crash);
    return nullptr;
  }
  return std::move(job.result);
}

}  // namespace sg::compiler
