// Session: input binding (names, dtypes, shapes, symbolic dims), running the entry
// function on the executor, results and profiles.
#include <algorithm>
#include <atomic>
#include <memory>
#include <string>

#include <cstring>

#include "custom_op_check.h"
#include "device_interface.h"
#include "device_placement.h"
#include "executor.h"
#include "memory_limit.h"
#include "node_kernels.h"
#include "program_impl.h"
#include "run_timer.h"
#include "safetensors.h"

namespace sg {

class SessionImpl {
 public:
  SessionImpl(std::shared_ptr<const Program> p, size_t entry, const SessionOptions& o,
              std::unique_ptr<runtime::DeviceContext> dev)
      : program(std::move(p)),
        impl(runtime::program_impl(*program)),
        entry_index(entry),
        options(o),
        allocator(o.allocator != nullptr ? o.allocator : default_allocator()),
        limit(o.memory_limit_bytes != 0 ? std::make_unique<runtime::MemoryLimit>(allocator, o.memory_limit_bytes)
                                        : nullptr),
        kernels(impl, o.num_threads, o.thread_pool ? o.thread_pool->native_handle() : nullptr,
                o.thread_pool ? o.thread_pool->num_threads() : 1, o.custom_ops),
        device(std::move(dev)),
        placement(device != nullptr ? std::make_unique<runtime::DevicePlacement>(impl, *device) : nullptr),
        executor(impl, kernels, limit != nullptr ? static_cast<Allocator*>(limit.get()) : allocator,
                 o.max_call_depth, o.profile, o.concurrent_nodes),
        timer(&SessionImpl::expire, this) {
    const size_t n = info().inputs.size();
    inputs.resize(n);
    run_args.reserve(n);
    const size_t m = info().outputs.size();
    results.reserve(m);
    outputs.resize(m);
    copied.assign(m, false);
    handed.assign(m, false);
    bound_data.assign(m, nullptr);
    bound_capacity.assign(m, 0);
    bound.assign(n, false);
    fresh.assign(n, false);
    executor.set_timeout(uint64_t(o.run_timeout.count()) * 1000);
    if (options.text_callback) executor.set_print(&SessionImpl::print_line, this);
    if (device != nullptr) executor.set_device(device.get(), placement.get(), options.device->name());
    values = executor.value_allocator();
  }

  const EntryInfo& info() const { return impl.entries[entry_index]; }

  // The RunTimer's call at a run's deadline (on its thread).
  static void expire(void* user) { static_cast<SessionImpl*>(user)->executor.expire_deadline(); }

  static void print_line(void* user, const char* text, size_t size) {
    static_cast<SessionImpl*>(user)->options.text_callback(TextKind::kPrint, std::string_view(text, size));
  }

  // Symbolic dims of input k must agree with each other and with every input j for
  // which `consider(j)` holds.
  template <class Pred>
  Status check_symbols(size_t k, const Tensor& t, Pred consider) const {
    const TensorSpec& spec = info().inputs[k];
    for (size_t a = 0; a < spec.dim_names.size(); ++a) {
      const std::string& name = spec.dim_names[a];
      if (name.empty()) continue;
      for (size_t b = 0; b < a; ++b)
        if (spec.dim_names[b] == name && t.dim(int(b)) != t.dim(int(a)))
          return invalid_input("input '" + spec.name + "': dim '" + name + "' is " + std::to_string(t.dim(int(a))) +
                               " at axis " + std::to_string(a) + " but " + std::to_string(t.dim(int(b))) +
                               " at axis " + std::to_string(b));
      for (size_t j = 0; j < inputs.size(); ++j) {
        if (j == k || !bound[j] || !consider(j)) continue;
        const TensorSpec& other = info().inputs[j];
        for (size_t b = 0; b < other.dim_names.size(); ++b)
          if (other.dim_names[b] == name && inputs[j].dim(int(b)) != t.dim(int(a)))
            return invalid_input("input '" + spec.name + "': dim '" + name + "' is " +
                                 std::to_string(t.dim(int(a))) + " here but " +
                                 std::to_string(inputs[j].dim(int(b))) + " in input '" + other.name + "'");
      }
    }
    return Status::Ok();
  }

  Status set_input(size_t k, Tensor value);
  Status run();
  // Each variable from the file's value, in storage of the Session's own.
  Status init_variables();
  Result<size_t> variable_index(std::string_view name) const;
  // A failed run's status as the caller sees it: a refusal of the memory limit
  // becomes kLimitExceeded; the text callback hears it.
  Status failed(Status s);
  // Writes the results into the bound buffers, all or none.
  Status write_bound();
  Status check_output(size_t i) const;
  Status not_running(const char* what) const;
  void append_transfers(std::vector<NodeProfile>& out) const;

  std::shared_ptr<const Program> program;
  const ProgramImpl& impl;
  size_t entry_index;
  SessionOptions options;
  Allocator* allocator;
  std::unique_ptr<runtime::MemoryLimit> limit;  // before the executor, which allocates through it
  runtime::NodeKernels kernels;  // before the executor, which runs them
  // SessionOptions::device's state for this Session, and which nodes run there;
  // before the executor, whose tensors may live in the device's memory.
  std::unique_ptr<runtime::DeviceContext> device;
  std::unique_ptr<runtime::DevicePlacement> placement;
  runtime::Executor executor;
  // Raises the executor's interrupt flag at each run's deadline; after the
  // executor, so that it is gone (its thread joined) before the executor is.
  runtime::RunTimer timer;
  std::atomic<bool> running{false};
  std::vector<Tensor> inputs;
  std::vector<bool> bound;
  std::vector<bool> fresh;  // set since the last run: symbolic dims must agree among these
  std::vector<Tensor> run_args;  // reused by every run, as is `results`
  // The last run's results, in the executor's memory, kept until the next run
  // (output_view reads them in place).
  std::vector<Tensor> results;
  bool has_results = false;  // the last run succeeded
  // What output() handed out: a result itself, moved from the executor's memory
  // (`values`) to the caller's allocator (handed), or a copy there, whose buffer
  // the next run's copy reuses when the caller let go of it.
  mutable std::vector<Tensor> outputs;
  mutable std::vector<bool> copied;
  mutable std::vector<bool> handed;
  Allocator* values = nullptr;
  mutable uint64_t tensor_copies = 0;
  std::vector<void*> bound_data;  // bind_output, per output
  std::vector<size_t> bound_capacity;
  // The Session's variables (all of the Program's), replaced by a run's assigned
  // values when it succeeds.
  std::vector<Tensor> variables;
};

Status SessionImpl::init_variables() {
  variables.clear();
  for (const runtime::VariableImpl& v : impl.variable_impls) {
    SG_ASSIGN_OR_RETURN(Tensor t, v.initial.clone(allocator));
    variables.push_back(std::move(t));
  }
  return Status::Ok();
}

Result<size_t> SessionImpl::variable_index(std::string_view name) const {
  for (size_t v = 0; v < impl.variables.size(); ++v)
    if (impl.variables[v].name == name) return v;
  return Status(StatusCode::kNotFound, "no variable '" + std::string(name) + "' in this program");
}

Status SessionImpl::not_running(const char* what) const {
  if (!running.load(std::memory_order_acquire)) return Status::Ok();
  return invalid_argument(std::string(what) + " while a run of this Session is in progress (a Session is used by one thread at a time)");
}

Status SessionImpl::failed(Status s) {
  if (limit != nullptr && limit->refused() != 0) {
    s = Status(StatusCode::kLimitExceeded, s.message() + ": over the Session's memory limit of " +
                                               std::to_string(limit->limit()) + " bytes (" +
                                               std::to_string(limit->held()) + " held, " +
                                               std::to_string(limit->refused()) + " more asked)");
    limit->clear_refused();
  }
  if (options.text_callback) options.text_callback(TextKind::kDiagnostic, s.message());
  return s;
}

Status SessionImpl::write_bound() {
  for (size_t i = 0; i < results.size(); ++i) {
    if (bound_data[i] == nullptr || results[i].nbytes() <= bound_capacity[i]) continue;
    const Tensor& r = results[i];
    std::string type = std::string(dtype_name(r.dtype())) + "[";
    for (int a = 0; a < r.rank(); ++a) type += (a ? ", " : "") + std::to_string(r.dim(a));
    return invalid_argument("output '" + info().outputs[i].name + "' is " + type + "], " +
                            std::to_string(r.nbytes()) + " bytes, but its bound buffer holds " +
                            std::to_string(bound_capacity[i]));
  }
  for (size_t i = 0; i < results.size(); ++i) {
    if (bound_data[i] == nullptr) continue;
    // memmove: an output may be an input the caller bound over the same memory.
    if (results[i].nbytes() > 0) std::memmove(bound_data[i], results[i].data(), results[i].nbytes());
    results[i] = Tensor::wrap(results[i].dtype(), results[i].shape(), bound_data[i]);
    ++tensor_copies;
  }
  return Status::Ok();
}

Status SessionImpl::check_output(size_t i) const {
  if (i >= info().outputs.size())
    return invalid_argument("output index " + std::to_string(i) + " is out of range (the entry has " +
                            std::to_string(info().outputs.size()) + " outputs)");
  if (!has_results)
    return invalid_argument("output '" + info().outputs[i].name + "' is not available: " +
                            "no run of this Session has succeeded since it was created or its last run failed");
  return Status::Ok();
}

namespace {

std::string type_string(DType dtype, Span<const int64_t> shape) {
  std::string s = std::string(dtype_name(dtype)) + "[";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

std::string join_names(const std::vector<TensorSpec>& specs) {
  std::string s;
  for (const TensorSpec& spec : specs) s += (s.empty() ? "" : ", ") + spec.name;
  return s.empty() ? "no inputs" : s;
}

}  // namespace

Session::Session(std::unique_ptr<SessionImpl> impl) : impl_(std::move(impl)) {}
Session::~Session() = default;

Result<std::unique_ptr<Session>> Session::create(std::shared_ptr<const Program> program, std::string_view entry,
                                                 const SessionOptions& options) {
  if (program == nullptr) return invalid_argument("Session::create: no program");
  if (options.max_call_depth < 0) return invalid_argument("max_call_depth must not be negative");
  SG_RETURN_IF_ERROR(check_num_threads(options.num_threads));
  if (options.run_timeout.count() < 0)
    return invalid_argument("run_timeout must not be negative (got " + std::to_string(options.run_timeout.count()) +
                            " us)");
  const std::vector<EntryInfo>& entries = program->entries();
  for (size_t e = 0; e < entries.size(); ++e) {
    if (entries[e].name != entry) continue;
    SG_RETURN_IF_ERROR(runtime::check_custom_kernels(*program, e, options.custom_ops));
    std::unique_ptr<runtime::DeviceContext> device;
    if (options.device != nullptr) {
      runtime::DeviceOpenOptions open;
      open.allow_tf32 = options.allow_tf32;
      SG_ASSIGN_OR_RETURN(device, options.device->open(open));
    }
    auto impl = std::make_unique<SessionImpl>(std::move(program), e, options, std::move(device));
    SG_RETURN_IF_ERROR(impl->init_variables());
    return std::unique_ptr<Session>(new Session(std::move(impl)));
  }
  std::string names;
  for (const EntryInfo& e : entries) names += (names.empty() ? "" : ", ") + e.name;
  return invalid_argument("unknown entry '" + std::string(entry) + "' (the graph has: " +
                          (names.empty() ? "no entries" : names) + ")");
}

const EntryInfo& Session::entry() const { return impl_->info(); }

// The one answer to an unknown input name, from input_index and set_input (and the
// C API's, which call input_index).
Result<size_t> Session::input_index(std::string_view name) const {
  const std::vector<TensorSpec>& specs = impl_->info().inputs;
  for (size_t k = 0; k < specs.size(); ++k)
    if (specs[k].name == name) return k;
  return invalid_input("unknown input '" + std::string(name) + "' (the entry takes: " + join_names(specs) + ")");
}

Result<size_t> Session::output_index(std::string_view name) const {
  const std::vector<TensorSpec>& specs = impl_->info().outputs;
  for (size_t k = 0; k < specs.size(); ++k)
    if (specs[k].name == name) return k;
  std::string names;
  for (const TensorSpec& spec : specs) names += (names.empty() ? "" : ", ") + spec.name;
  return invalid_argument("unknown output '" + std::string(name) + "' (the entry returns: " +
                          (names.empty() ? "no outputs" : names) + ")");
}

Status Session::set_input(std::string_view name, Tensor value) {
  const Result<size_t> k = input_index(name);
  if (!k.ok()) return k.status();
  return impl_->set_input(*k, std::move(value));
}

Status Session::set_input(size_t index, Tensor value) {
  if (index >= impl_->info().inputs.size())
    return invalid_input("input index " + std::to_string(index) + " is out of range (the entry takes " +
                         std::to_string(impl_->info().inputs.size()) + " inputs)");
  return impl_->set_input(index, std::move(value));
}

Status SessionImpl::set_input(size_t k, Tensor value) {
  SG_RETURN_IF_ERROR(not_running("set_input"));
  const TensorSpec& spec = info().inputs[k];
  for (int a = 0; a < value.rank(); ++a)
    if (value.dim(a) < 0)
      return invalid_input("input '" + spec.name + "': negative dim " + std::to_string(value.dim(a)) + " at axis " +
                           std::to_string(a));
  if (!value.defined()) return invalid_input("input '" + spec.name + "': no data");
  bool match = value.dtype() == spec.dtype && size_t(value.rank()) == spec.shape.size();
  for (size_t a = 0; match && a < spec.shape.size(); ++a)
    match = spec.shape[a] < 0 || spec.shape[a] == value.dim(int(a));
  if (!match)
    return invalid_input("input '" + spec.name + "': expected " + dtype_name(spec.dtype) + spec.shape_string() +
                         ", got " + type_string(value.dtype(), value.shape()));
  SG_RETURN_IF_ERROR(check_symbols(k, value, [&](size_t j) { return bool(fresh[j]); }));
  inputs[k] = std::move(value);
  bound[k] = true;
  fresh[k] = true;
  return Status::Ok();
}

Status Session::bind_output(size_t i, void* data, size_t capacity_bytes) {
  SessionImpl& s = *impl_;
  SG_RETURN_IF_ERROR(s.not_running("bind_output"));
  if (i >= s.info().outputs.size())
    return invalid_argument("output index " + std::to_string(i) + " is out of range (the entry has " +
                            std::to_string(s.info().outputs.size()) + " outputs)");
  s.bound_data[i] = data;
  s.bound_capacity[i] = data != nullptr ? capacity_bytes : 0;
  // The last run's output no longer refers to what the caller bound.
  s.has_results = false;
  return Status::Ok();
}

Status Session::run() {
  SessionImpl& s = *impl_;
  if (s.running.exchange(true, std::memory_order_acquire))
    return invalid_argument("run() entered while another run of this Session is in progress (a Session is used by "
                            "one thread at a time)");
  const bool timed = s.options.run_timeout.count() > 0;
  Status status;
  if (timed) status = s.timer.arm(runtime::RunTimer::Clock::now() + s.options.run_timeout);
  if (status.ok()) status = s.run();
  if (timed) s.timer.disarm();
  s.executor.clear_cancel();  // a request made during this run ends with it, as does the deadline
  s.running.store(false, std::memory_order_release);
  return status;
}

Status SessionImpl::run() {
  has_results = false;
  results.clear();  // the last run's values go back to the executor's cache
  std::fill(copied.begin(), copied.end(), false);
  // So do the results output() handed over, once the caller let go of them: a loop
  // of runs that drops each output before the next allocates nothing.
  for (size_t i = 0; i < outputs.size(); ++i) {
    if (!handed[i]) continue;
    handed[i] = false;
    if (outputs[i].unique()) outputs[i].move_storage(allocator, values);
    outputs[i] = Tensor();
  }
  const std::vector<TensorSpec>& specs = info().inputs;
  for (size_t k = 0; k < specs.size(); ++k)
    if (!bound[k]) return invalid_input("missing input '" + specs[k].name + "'");
  // Inputs kept from an earlier run must still agree with the ones just bound
  // (those were checked against each other by set_input).
  for (size_t k = 0; k < specs.size(); ++k)
    if (!fresh[k]) SG_RETURN_IF_ERROR(check_symbols(k, inputs[k], [](size_t) { return true; }));
  std::fill(fresh.begin(), fresh.end(), false);

  run_args.assign(inputs.begin(), inputs.end());  // shared, not copied: inputs stay bound
  for (size_t v : info().reads) run_args.push_back(variables[v]);  // their values as the run starts
  const Status ran = executor.run(impl.entry_impls[entry_index].function, run_args, results);
  run_args.clear();
  if (!ran.ok()) {
    results.clear();
    return failed(ran);
  }
  // The assigned values follow the outputs; they become the variables only once
  // nothing can fail any more.
  const size_t n_out = info().outputs.size();
  std::vector<Tensor> assigned(std::make_move_iterator(results.begin() + std::ptrdiff_t(n_out)),
                               std::make_move_iterator(results.end()));
  results.resize(n_out);
  for (Tensor& t : assigned) {
    // A value that borrows memory the Session does not own (an input the caller
    // bound, a variable passed through) is copied, so the variable stays the Session's.
    if (t.capacity_bytes() != 0 || t.nbytes() == 0 || impl.owns_pointer(t.data())) continue;
    Result<Tensor> copy = t.clone(allocator);
    if (!copy.ok()) {
      results.clear();
      return failed(copy.status());
    }
    t = std::move(*copy);
    ++tensor_copies;
  }
  const Status written = write_bound();
  if (!written.ok()) {
    results.clear();
    return failed(written);
  }
  for (size_t k = 0; k < assigned.size(); ++k) variables[info().writes[k]] = std::move(assigned[k]);
  has_results = true;
  return Status::Ok();
}

void Session::cancel() {
  impl_->executor.request_cancel();
}

Status Session::set_run_timeout(std::chrono::microseconds timeout) {
  SG_RETURN_IF_ERROR(impl_->not_running("set_run_timeout"));
  if (timeout.count() < 0)
    return invalid_argument("run_timeout must not be negative (got " + std::to_string(timeout.count()) + " us)");
  impl_->options.run_timeout = timeout;
  impl_->executor.set_timeout(uint64_t(timeout.count()) * 1000);
  return Status::Ok();
}

size_t Session::memory_bytes() const { return impl_->kernels.memory_bytes(); }

MemoryReport Session::memory_report() const {
  const SessionImpl& s = *impl_;
  const runtime::ArenaUse use = s.executor.last_arena_use();
  MemoryReport r;
  r.arena_bytes = use.arena_bytes;
  r.lower_bound_bytes = use.lower_bound_bytes;
  r.frame_stack_bytes = s.executor.frame_stack_bytes();
  r.cached_bytes = s.executor.cached_bytes() + (s.device != nullptr ? s.device->cached_bytes() : 0);
  r.kernel_bytes = s.kernels.memory_bytes();
  return r;
}

uint64_t Session::tensor_copies() const { return impl_->tensor_copies; }
ScheduleStats Session::schedule_stats() const { return impl_->executor.schedule_stats(); }

size_t Session::num_outputs() const { return impl_->info().outputs.size(); }

Span<const int64_t> Session::output_shape(size_t i) const {
  if (!impl_->check_output(i).ok()) return {};
  return impl_->results[i].shape();
}

Result<Tensor> Session::output_view(size_t i) const {
  const SessionImpl& s = *impl_;
  SG_RETURN_IF_ERROR(s.check_output(i));
  const Tensor& r = s.results[i];
  return Tensor::wrap(r.dtype(), r.shape(), r.data());
}

// The caller may keep an output past the Session and the Program, and release it
// on any thread: outputs live in the caller's allocator, never in the executor's
// cache. A result the Session holds alone, in the executor's memory, is handed over
// as it is: its storage moves to the caller's allocator, which the cache allocates
// from (not under a memory limit, whose accounting ends with the Session). Other
// results (an input or a constant passed through, a value that is also a variable)
// are copied into a buffer of that allocator (the last copy's, when nobody else
// holds it and the type matches).
Result<Tensor> Session::output(size_t i) const {
  const SessionImpl& s = *impl_;
  SG_RETURN_IF_ERROR(s.check_output(i));
  const Tensor& r = s.results[i];
  if (s.bound_data[i] != nullptr) return r;  // wraps the caller's own buffer
  if (!s.copied[i] && s.limit == nullptr && r.unique()) {
    Tensor out = r;
    if (out.move_storage(s.values, s.allocator)) {
      s.outputs[i] = std::move(out);
      s.handed[i] = true;
      s.copied[i] = true;
    }
  }
  if (!s.copied[i]) {
    Tensor& out = s.outputs[i];
    if (!(out.unique() && out.dtype() == r.dtype() &&
          std::equal(r.shape().begin(), r.shape().end(), out.shape().begin(), out.shape().end()))) {
      out = Tensor();
      SG_ASSIGN_OR_RETURN(out, Tensor::empty(r.dtype(), r.shape(), s.allocator));
    }
    if (r.nbytes() > 0) std::memcpy(out.data(), r.data(), r.nbytes());
    ++s.tensor_copies;
    s.copied[i] = true;
  }
  return s.outputs[i];
}

Result<Tensor> Session::output(std::string_view name) const {
  SG_ASSIGN_OR_RETURN(const size_t i, output_index(name));
  return output(i);
}

std::vector<NodeProfile> Session::profile() const {
  std::vector<NodeProfile> out;
  const auto& stats = impl_->executor.stats();
  const runtime::DevicePlacement* placed = impl_->placement.get();
  for (size_t f = 0; f < stats.size(); ++f) {
    const runtime::FunctionImpl& fn = impl_->impl.functions[f];
    for (size_t n = 0; n < stats[f].size(); ++n) {
      if (stats[f][n].calls == 0) continue;
      const runtime::NodeInfo& node = fn.nodes[n];
      NodeProfile p;
      p.function = fn.name;
      p.node = uint32_t(n);
      p.op = node.op_name;
      const runtime::DeviceKernel* on_device = placed != nullptr ? placed->at(uint32_t(f), uint32_t(n)) : nullptr;
      p.kernel = on_device != nullptr ? on_device->name() : impl_->kernels.name(uint32_t(f), uint32_t(n));
      p.location = node.location;
      p.calls = stats[f][n].calls;
      p.total_ns = stats[f][n].total_ns;
      p.tape_bytes = stats[f][n].tape_bytes;
      out.push_back(std::move(p));
    }
  }
  impl_->append_transfers(out);
  return out;
}

// With a device: per function, a row for each direction of its copies, after its
// nodes (NodeProfile::node is the function's node count), counted whether or not
// the Session profiles.
void SessionImpl::append_transfers(std::vector<NodeProfile>& out) const {
  const std::vector<runtime::TransferStats>& transfers = executor.transfers();
  if (options.device == nullptr) return;
  const std::string name = options.device->name();
  for (size_t f = 0; f < transfers.size(); ++f) {
    const runtime::TransferStats& t = transfers[f];
    for (int dir = 0; dir < 2; ++dir) {
      const uint64_t calls = dir == 0 ? t.uploads : t.downloads;
      if (calls == 0) continue;
      NodeProfile p;
      p.function = impl.functions[f].name;
      p.node = uint32_t(impl.functions[f].nodes.size());
      p.op = "transfer";
      p.kernel = name + (dir == 0 ? ":host-to-device" : ":device-to-host");
      p.calls = calls;
      p.total_ns = dir == 0 ? t.upload_ns : t.download_ns;
      out.push_back(std::move(p));
    }
  }
}

}  // namespace sg

namespace sg {

Result<Tensor> Session::variable(std::string_view name) const {
  SG_ASSIGN_OR_RETURN(size_t v, impl_->variable_index(name));
  return impl_->variables[v].clone(impl_->allocator);
}

Status Session::save_variables(const std::string& path) const {
  SG_RETURN_IF_ERROR(impl_->not_running("save_variables"));
  std::vector<runtime::NamedTensor> named;
  for (size_t v = 0; v < impl_->variables.size(); ++v)
    named.push_back(runtime::NamedTensor{impl_->impl.variables[v].name, impl_->variables[v]});
  return runtime::write_safetensors(path, named);
}

Status Session::copy_variables_from(const Session& other) {
  SG_RETURN_IF_ERROR(impl_->not_running("copy_variables_from"));
  if (&other == this) return Status::Ok();
  SG_RETURN_IF_ERROR(other.impl_->not_running("copy_variables_from (the other Session)"));
  const std::vector<TensorSpec>& mine = impl_->impl.variables;
  const std::vector<TensorSpec>& theirs = other.impl_->impl.variables;
  for (size_t v = 0; v < std::max(mine.size(), theirs.size()); ++v) {
    if (v >= mine.size() || v >= theirs.size() || mine[v].name != theirs[v].name)
      return invalid_argument("copy_variables_from: the other Session's program has other variables (" +
                              std::to_string(theirs.size()) + " against " + std::to_string(mine.size()) +
                              (v < mine.size() ? ", no '" + mine[v].name + "' at position " + std::to_string(v)
                                               : std::string()) +
                              ")");
    if (mine[v].dtype != theirs[v].dtype || mine[v].shape != theirs[v].shape)
      return invalid_argument("copy_variables_from: variable '" + mine[v].name + "' is " +
                              type_string(theirs[v].dtype, Span<const int64_t>(theirs[v].shape)) +
                              " in the other Session's program but " +
                              type_string(mine[v].dtype, Span<const int64_t>(mine[v].shape)) + " in this one");
  }
  std::vector<Tensor> next;
  next.reserve(mine.size());
  for (const Tensor& t : other.impl_->variables) {
    SG_ASSIGN_OR_RETURN(Tensor copy, t.clone(impl_->allocator));
    next.push_back(std::move(copy));
  }
  impl_->variables = std::move(next);  // every copy made: now all change at once
  return Status::Ok();
}

Status Session::load_variables(const std::string& path) {
  SG_RETURN_IF_ERROR(impl_->not_running("load_variables"));
  SG_ASSIGN_OR_RETURN(std::vector<runtime::NamedTensor> read, runtime::read_safetensors(path, impl_->allocator));
  const std::vector<TensorSpec>& specs = impl_->impl.variables;
  std::vector<Tensor> next(specs.size());
  std::vector<bool> found(specs.size(), false);
  for (runtime::NamedTensor& t : read) {
    Result<size_t> v = impl_->variable_index(t.name);
    if (!v.ok())
      return invalid_argument("'" + path + "' holds '" + t.name + "', which is not a variable of this program");
    const TensorSpec& spec = specs[*v];
    const Span<const int64_t> shape = t.tensor.shape();
    const bool same = t.tensor.dtype() == spec.dtype && shape.size() == spec.shape.size() &&
                      std::equal(spec.shape.begin(), spec.shape.end(), shape.begin());
    if (!same)
      return invalid_argument("'" + path + "': variable '" + t.name + "' is " + type_string(t.tensor.dtype(), shape) +
                              " there but " + type_string(spec.dtype, Span<const int64_t>(spec.shape)) +
                              " in this program");
    next[*v] = std::move(t.tensor);
    found[*v] = true;
  }
  for (size_t v = 0; v < specs.size(); ++v)
    if (!found[v]) return invalid_argument("'" + path + "' has no value for variable '" + specs[v].name + "'");
  impl_->variables = std::move(next);  // all checked: now every variable changes at once
  return Status::Ok();
}

}  // namespace sg
