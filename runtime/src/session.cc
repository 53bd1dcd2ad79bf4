// Session: input binding (names, dtypes, shapes, symbolic dims), running the entry
// function on the executor, results and profiles.
#include <algorithm>
#include <memory>
#include <string>

#include "executor.h"
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
        executor(impl, allocator, o.max_call_depth, o.profile) {
    const size_t n = info().inputs.size();
    inputs.resize(n);
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
  runtime::Executor executor;
  std::vector<Tensor> inputs;
  std::vector<bool> bound;
  std::vector<bool> fresh;  // set since the last run: symbolic dims must agree among these
  std::vector<Tensor> outputs;
  Tensor none;
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
  s.outputs.clear();
  const std::vector<TensorSpec>& specs = s.info().inputs;
  for (size_t k = 0; k < specs.size(); ++k)
    if (!s.bound[k]) return invalid_input("missing input '" + specs[k].name + "'");
  // Inputs kept from an earlier run must still agree with the ones just bound
  // (those were checked against each other by set_input).
  for (size_t k = 0; k < specs.size(); ++k)
    if (!s.fresh[k]) SG_RETURN_IF_ERROR(s.check_symbols(k, s.inputs[k], [](size_t) { return true; }));
  std::fill(s.fresh.begin(), s.fresh.end(), false);

  std::vector<Tensor> args(s.inputs.begin(), s.inputs.end());
  std::vector<Tensor> results;
  SG_RETURN_IF_ERROR(s.executor.run(s.impl.entry_impls[s.entry_index].function, args, results));
  for (Tensor& t : results) {
    // A constant result points into the graph's bytes; the caller may keep it
    // after the Program is gone, so it gets its own copy.
    if (t.data() != nullptr && s.impl.owns_pointer(t.data())) {
      SG_ASSIGN_OR_RETURN(t, t.clone(s.allocator));
    }
  }
  s.outputs = std::move(results);
  return Status::Ok();
}

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
      p.kernel = node.kind == runtime::NodeKind::kOp ? "reference" : "control-flow";
      p.location = node.location;
      p.calls = stats[f][n].calls;
      p.total_ns = stats[f][n].total_ns;
      out.push_back(std::move(p));
    }
  }
  return out;
}

}  // namespace sg
