// Session: input binding (names, dtypes, shapes, symbolic dims), running the entry
// function on the executor, results and profiles.
#include <algorithm>
#include <memory>
#include <string>

#include <cstring>

#include "executor.h"
#include "loader.h"
#include "node_kernels.h"
#include "program_impl.h"

namespace sg {

class SessionImpl {
 public:
  SessionImpl(std::shared_ptr<const Program> p, size_t entry, const SessionOptions& o)
      : program(std::move(p)),
        impl(program->impl()),
        entry_index(entry),
        options(o),
        allocator(o.allocator != nullptr ? o.allocator : default_allocator()),
        kernels(impl, o.num_threads),
        executor(impl, kernels, allocator, o.max_call_depth, o.profile, o.concurrent_nodes) {
    const size_t n = info().inputs.size();
    inputs.resize(n);
    run_args.reserve(n);
    results.reserve(info().outputs.size());
    outputs.reserve(info().outputs.size());
    previous.reserve(info().outputs.size());
    bound.assign(n, false);
    fresh.assign(n, false);
  }

  const EntryInfo& info() const { return impl.entries[entry_index]; }

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

  std::shared_ptr<const Program> program;
  const ProgramImpl& impl;
  size_t entry_index;
  SessionOptions options;
  Allocator* allocator;
  runtime::NodeKernels kernels;  // before the executor, which runs them
  runtime::Executor executor;
  std::vector<Tensor> inputs;
  std::vector<bool> bound;
  std::vector<bool> fresh;  // set since the last run: symbolic dims must agree among these
  std::vector<Tensor> run_args;  // reused by every run, as are the two below
  std::vector<Tensor> results;   // the entry's results, in the executor's memory
  std::vector<Tensor> previous;  // the last run's outputs: their buffers are reused when the caller let go
  std::vector<Tensor> outputs;   // copies of `results` in the caller's allocator
  uint64_t tensor_copies = 0;
  Tensor none;

  // The caller may keep an output past the Session and the Program, and release it
  // on any thread: outputs get buffers of the caller's allocator (the last run's,
  // when nobody else holds them and the type matches), never the executor's memory.
  Status copy_out() {
    for (size_t i = 0; i < results.size(); ++i) {
      const Tensor& r = results[i];
      Tensor out;
      if (i < previous.size() && previous[i].unique() && previous[i].dtype() == r.dtype() &&
          std::equal(r.shape().begin(), r.shape().end(), previous[i].shape().begin(), previous[i].shape().end())) {
        out = std::move(previous[i]);
      } else {
        SG_ASSIGN_OR_RETURN(out, Tensor::empty(r.dtype(), r.shape(), allocator));
      }
      if (r.nbytes() > 0) std::memcpy(out.data(), r.data(), r.nbytes());
      ++tensor_copies;
      outputs.push_back(std::move(out));
    }
    results.clear();
    previous.clear();
    return Status::Ok();
  }
};

namespace {

std::string type_string(DType dtype, std::span<const int64_t> shape) {
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
  if (options.num_threads < 1 || options.num_threads > SessionOptions::kMaxThreads)
    return invalid_argument("num_threads must be between 1 and " + std::to_string(SessionOptions::kMaxThreads) +
                            " (got " + std::to_string(options.num_threads) + ")");
  const ProgramImpl& impl = program->impl();
  if (options.verify_data && !impl.data_verified)
    SG_RETURN_IF_ERROR(runtime::check_data_checksum(impl.data_segment, impl.header));
  const std::vector<EntryInfo>& entries = program->entries();
  for (size_t e = 0; e < entries.size(); ++e) {
    if (entries[e].name != entry) continue;
    return std::make_unique<Session>(std::make_unique<SessionImpl>(std::move(program), e, options));
  }
  std::string names;
  for (const EntryInfo& e : entries) names += (names.empty() ? "" : ", ") + e.name;
  return invalid_argument("unknown entry '" + std::string(entry) + "' (the graph has: " +
                          (names.empty() ? "no entries" : names) + ")");
}

const EntryInfo& Session::entry() const { return impl_->info(); }

Status Session::set_input(std::string_view name, Tensor value) {
  SessionImpl& s = *impl_;
  const std::vector<TensorSpec>& specs = s.info().inputs;
  const auto it = std::find_if(specs.begin(), specs.end(), [&](const TensorSpec& t) { return t.name == name; });
  if (it == specs.end())
    return invalid_input("unknown input '" + std::string(name) + "' (the entry takes: " + join_names(specs) + ")");
  const size_t k = size_t(it - specs.begin());
  const TensorSpec& spec = *it;
  if (!value.defined()) return invalid_input("input '" + spec.name + "': no data");
  bool match = value.dtype() == spec.dtype && size_t(value.rank()) == spec.shape.size();
  for (size_t a = 0; match && a < spec.shape.size(); ++a)
    match = spec.shape[a] < 0 || spec.shape[a] == value.dim(int(a));
  if (!match)
    return invalid_input("input '" + spec.name + "': expected " + dtype_name(spec.dtype) + spec.shape_string() +
                         ", got " + type_string(value.dtype(), value.shape()));
  SG_RETURN_IF_ERROR(s.check_symbols(k, value, [&](size_t j) { return bool(s.fresh[j]); }));
  s.inputs[k] = std::move(value);
  s.bound[k] = true;
  s.fresh[k] = true;
  return Status::Ok();
}

Status Session::run() {
  SessionImpl& s = *impl_;
  std::swap(s.previous, s.outputs);
  s.outputs.clear();
  const std::vector<TensorSpec>& specs = s.info().inputs;
  for (size_t k = 0; k < specs.size(); ++k)
    if (!s.bound[k]) return invalid_input("missing input '" + specs[k].name + "'");
  // Inputs kept from an earlier run must still agree with the ones just bound
  // (those were checked against each other by set_input).
  for (size_t k = 0; k < specs.size(); ++k)
    if (!s.fresh[k]) SG_RETURN_IF_ERROR(s.check_symbols(k, s.inputs[k], [](size_t) { return true; }));
  std::fill(s.fresh.begin(), s.fresh.end(), false);

  s.run_args.assign(s.inputs.begin(), s.inputs.end());  // shared, not copied: inputs stay bound
  const Status ran = s.executor.run(s.impl.entry_impls[s.entry_index].function, s.run_args, s.results);
  s.run_args.clear();
  if (!ran.ok()) {
    s.results.clear();
    return ran;
  }
  return s.copy_out();
}

size_t Session::memory_bytes() const { return impl_->kernels.memory_bytes(); }

MemoryReport Session::memory_report() const {
  const SessionImpl& s = *impl_;
  const runtime::ArenaUse use = s.executor.last_arena_use();
  MemoryReport r;
  r.arena_bytes = use.arena_bytes;
  r.lower_bound_bytes = use.lower_bound_bytes;
  r.frame_stack_bytes = s.executor.frame_stack_bytes();
  r.cached_bytes = s.executor.cached_bytes();
  r.kernel_bytes = s.kernels.memory_bytes();
  return r;
}

uint64_t Session::tensor_copies() const { return impl_->tensor_copies; }
ScheduleStats Session::schedule_stats() const { return impl_->executor.schedule_stats(); }

size_t Session::num_outputs() const { return impl_->info().outputs.size(); }

const Tensor& Session::output(size_t i) const {
  return i < impl_->outputs.size() ? impl_->outputs[i] : impl_->none;
}

Result<Tensor> Session::output(std::string_view name) const {
  const std::vector<TensorSpec>& specs = impl_->info().outputs;
  for (size_t i = 0; i < specs.size(); ++i)
    if (specs[i].name == name) {
      if (i >= impl_->outputs.size()) return invalid_argument("output '" + std::string(name) + "' is not computed yet");
      return impl_->outputs[i];
    }
  return invalid_argument("unknown output '" + std::string(name) + "'");
}

std::vector<NodeProfile> Session::profile() const {
  std::vector<NodeProfile> out;
  const auto& stats = impl_->executor.stats();
  for (size_t f = 0; f < stats.size(); ++f) {
    const runtime::FunctionImpl& fn = impl_->impl.functions[f];
    for (size_t n = 0; n < stats[f].size(); ++n) {
      if (stats[f][n].calls == 0) continue;
      const runtime::NodeInfo& node = fn.nodes[n];
      NodeProfile p;
      p.function = fn.name;
      p.node = uint32_t(n);
      p.op = node.op_name;
      p.kernel = impl_->kernels.name(uint32_t(f), uint32_t(n));
      p.location = node.location;
      p.calls = stats[f][n].calls;
      p.total_ns = stats[f][n].total_ns;
      out.push_back(std::move(p));
    }
  }
  return out;
}

}  // namespace sg
