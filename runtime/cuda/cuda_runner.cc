// A Session's executor on a CUDA GPU (DESIGN.md #12): placement.h decides
// where each node runs, the CUDA backend's kernels (kernels/cuda) run the GPU's
// nodes on the Session's own stream, cuBLASLt handle and workspace, and the host
// kernels run the rest, with the copies between them made where a value is
// first needed on the other side and counted in the profile.
//
// Memory: constants read on the GPU are uploaded once, when the Session is
// created, into one allocation; each function's frames use the memory planner's
// plan for their parameter shapes (device_plan.h), whose arena values live in one
// device arena per plan (one cudaMalloc, kept between runs); values the plan owns
// (those crossing frames, shapes known only mid-run) get a buffer of their own.
// The entry's inputs are copied in once per run where the GPU reads them, its
// results copied out once.
//
// Control flow is host-driven: If and While read their condition through pinned
// host memory, and If/While/Call push frames on an explicit stack (graph
// recursion never uses the C++ stack; SessionOptions::max_call_depth bounds it).
// Kernel faults surface at the next synchronisation (a condition, a copy to the
// host, the end of the run) and are reported at the node that synchronised.
#include <cuda_runtime.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "cuda/cuda_backend.h"
#include "device_backend.h"
#include "device_plan.h"
#include "executor_detail.h"
#include "ops/infer.h"
#include "placement.h"
#include "stagegraph/cuda.h"

namespace sg::runtime {
namespace {

namespace kc = kernels::cuda;
using detail::at;
using detail::at_alloc;
using detail::now_ns;
using kernels::TensorRef;

constexpr size_t kAlign = 256;
size_t align_up(size_t n) { return (n + kAlign - 1) / kAlign * kAlign; }

// Freed device buffers kept by size for the next run (cudaFree synchronises the
// whole device). Reusing one is safe on the Session's single stream: the kernels
// that read it were queued before any that will write it again.
class BufferPool {
 public:
  static constexpr size_t kMaxHeldBytes = size_t(256) << 20;
  explicit BufferPool(kc::Context* ctx) : ctx_(ctx) {}
  ~BufferPool() { clear(); }
  Result<void*> get(size_t bytes) {
    const auto it = free_.find(bytes);
    if (it != free_.end()) {
      void* p = it->second;
      free_.erase(it);
      held_ -= bytes;
      return p;
    }
    Result<void*> got = ctx_->allocate(bytes);
    if (got.ok() || free_.empty()) return got;
    clear();  // out of memory: give back what is kept, and try once more
    return ctx_->allocate(bytes);
  }
  void put(void* p, size_t bytes) {
    if (held_ + bytes > kMaxHeldBytes) {
      ctx_->release(p);
      return;
    }
    free_.emplace(bytes, p);
    held_ += bytes;
  }
  void clear() {
    for (const auto& [bytes, p] : free_) ctx_->release(p);
    free_.clear();
    held_ = 0;
  }
  size_t held_bytes() const { return held_; }

 private:
  kc::Context* ctx_;
  std::unordered_multimap<size_t, void*> free_;
  size_t held_ = 0;
};

struct DeviceBuffer {
  BufferPool* pool = nullptr;
  void* p = nullptr;
  size_t bytes = 0;
  ~DeviceBuffer() {
    if (p != nullptr) pool->put(p, bytes);
  }
};

// A value of a frame: its host copy, its device copy, or both.
struct Value {
  DType dtype = DType::kF32;
  int rank = 0;
  int64_t dims[kernels::kMaxRank] = {};
  Tensor host;
  void* dev = nullptr;
  std::shared_ptr<DeviceBuffer> owned;  // holds `dev` when it is in no arena and not a weight
  bool on_host = false, on_dev = false;

  std::span<const int64_t> shape() const { return {dims, size_t(rank)}; }
  size_t nbytes() const {
    size_t n = dtype_size(dtype);
    for (int i = 0; i < rank; ++i) n *= size_t(dims[i]);
    return n;
  }
  void set_shape(DType t, std::span<const int64_t> s) {
    dtype = t;
    rank = int(s.size());
    for (int i = 0; i < rank; ++i) dims[i] = s[size_t(i)];
  }
  TensorRef ref(bool device) const {
    TensorRef r;
    r.dtype = dtype;
    r.rank = rank;
    for (int i = 0; i < rank; ++i) r.shape[i] = dims[i];
    r.data = device ? dev : const_cast<void*>(host.data());
    return r;
  }
};

Value host_value(const Tensor& t) {
  Value v;
  v.set_shape(t.dtype(), std::span<const int64_t>(t.shape().data(), t.shape().size()));
  v.host = t;
  v.on_host = true;
  return v;
}

enum class Role : uint8_t { kEntry, kIfBranch, kWhileCond, kWhileBody, kCall };

struct Frame {
  uint32_t fn = 0;
  uint32_t pc = 0;
  Role role = Role::kEntry;
  std::vector<Value> vals;
  DevicePlanCache::Entry* plan = nullptr;
  uint8_t* arena = nullptr;
  uint64_t start_ns = 0;
};

struct TransferStats {
  uint64_t uploads = 0, downloads = 0;
  uint64_t upload_ns = 0, download_ns = 0;
};

Result<void*> allocate_on(void* ctx, size_t bytes) { return static_cast<kc::Context*>(ctx)->allocate(bytes); }
void free_on(void* ctx, void* p) { static_cast<kc::Context*>(ctx)->release(p); }

class CudaRunner final : public DeviceRunner {
 public:
  CudaRunner(const DeviceOpen& request, std::unique_ptr<kc::Context> ctx)
      : program_(*request.program),
        entry_(request.entry_function),
        options_(*request.options),
        host_kernels_(*request.host_kernels),
        allocator_(request.allocator),
        ctx_(std::move(ctx)),
        pool_(ctx_.get()) {}

  ~CudaRunner() override {
    frames_.clear();
    const_vals_.clear();
    pool_.clear();
    plans_.clear();  // arenas go back through ctx_, which is still alive
    if (weights_ != nullptr) ctx_->release(weights_);
    if (pinned_ != nullptr) cudaFreeHost(pinned_);
  }

  Status open() {
    const size_t nf = program_.functions.size();
    gpu_kernels_.resize(nf);
    plan_kernels_.resize(nf);
    stats_.resize(nf);
    transfers_.resize(nf);
    plans_.reserve(nf);
    for (uint32_t f = 0; f < nf; ++f) {
      const FunctionImpl& fn = program_.functions[f];
      gpu_kernels_[f].resize(fn.nodes.size());
      stats_[f].resize(fn.nodes.size());
      plan_kernels_[f] = device_plan_kernels(fn);
      is_param_.emplace_back(fn.values.size(), 0);
      for (uint32_t p : fn.params) is_param_.back()[p] = 1;
      plans_.push_back(std::make_unique<DevicePlanCache>(&allocate_on, &free_on, ctx_.get()));
      for (uint32_t n = 0; n < fn.nodes.size(); ++n) {
        const NodeInfo& node = fn.nodes[n];
        if (node.kind != NodeKind::kOp) continue;
        std::vector<kernels::InputInfo> infos(node.inputs.size());
        bool fits = true;
        for (size_t k = 0; k < node.inputs.size(); ++k) {
          const ValueInfo& vi = fn.values[node.inputs[k]];
          if (vi.dims.size() > size_t(kernels::kMaxRank)) fits = false;
          infos[k].dtype = vi.dtype;
          infos[k].rank = int(std::min(vi.dims.size(), size_t(kernels::kMaxRank)));
          for (int d = 0; d < infos[k].rank; ++d) infos[k].shape[d] = vi.dims[size_t(d)];
          infos[k].constant = vi.is_constant ? vi.constant.data() : nullptr;
        }
        if (fits) gpu_kernels_[f][n] = kc::prepare(node.op, node.attrs, infos);
      }
    }
    placement_ = place(program_, [this](const FunctionImpl& fn, const NodeInfo& node) {
      const size_t f = size_t(&fn - program_.functions.data());
      const size_t n = size_t(&node - fn.nodes.data());
      return gpu_kernels_[f][n] != nullptr;
    });
    SG_RETURN_IF_ERROR(upload_weights());
    void* pinned = nullptr;
    const cudaError_t e = cudaMallocHost(&pinned, 64);
    if (e != cudaSuccess)
      return Status(StatusCode::kOutOfMemory, std::string("cuda: pinned memory for loop conditions: ") +
                                                   cudaGetErrorString(e));
    pinned_ = static_cast<uint8_t*>(pinned);
    return Status::Ok();
  }

  Status run(std::span<Tensor> args, std::vector<Tensor>& results) override {
    frames_.clear();
    active_calls_ = 0;
    deadline_ns_ = options_.run_timeout.count() > 0 ? now_ns() + uint64_t(options_.run_timeout.count()) * 1000 : 0;
    std::vector<Value> params;
    params.reserve(args.size());
    for (Tensor& t : args) params.push_back(host_value(t));
    Status s = push(entry_, Role::kEntry, params, nullptr);
    while (s.ok() && !frames_.empty()) s = step(results);
    if (!s.ok()) {
      unwind();
      // Work queued before the failure may still be running: wait for it, and
      // clear a device-side flag it raised so that the next run starts clean.
      (void)ctx_->synchronize();
      results.clear();
    }
    return s;
  }

  std::vector<NodeProfile> profile() const override {
    std::vector<NodeProfile> out;
    for (size_t f = 0; f < stats_.size(); ++f) {
      const FunctionImpl& fn = program_.functions[f];
      for (size_t n = 0; n < stats_[f].size(); ++n) {
        if (stats_[f][n].calls == 0) continue;
        const NodeInfo& node = fn.nodes[n];
        NodeProfile p;
        p.function = fn.name;
        p.node = uint32_t(n);
        p.op = node.op_name;
        if (node.kind != NodeKind::kOp)
          p.kernel = "host-driven";  // If/While read their condition on the host; calls push frames
        else if (gpu_kernels_[f][n] != nullptr)
          p.kernel = gpu_kernels_[f][n]->name();
        else
          p.kernel = std::string("cpu:") + host_kernels_.name(uint32_t(f), uint32_t(n));
        p.location = node.location;
        p.calls = stats_[f][n].calls;
        p.total_ns = stats_[f][n].total_ns;
        out.push_back(std::move(p));
      }
      const TransferStats& t = transfers_[f];
      for (int dir = 0; dir < 2; ++dir) {
        const uint64_t calls = dir == 0 ? t.uploads : t.downloads;
        if (calls == 0) continue;
        NodeProfile p;
        p.function = fn.name;
        p.node = uint32_t(fn.nodes.size());  // after its nodes: the function's copies
        p.op = "transfer";
        p.kernel = dir == 0 ? "cuda:host-to-device" : "cuda:device-to-host";
        p.calls = calls;
        p.total_ns = dir == 0 ? t.upload_ns : t.download_ns;
        out.push_back(std::move(p));
      }
    }
    return out;
  }

  MemoryReport memory_report() const override {
    MemoryReport r;
    for (const auto& cache : plans_) {
      r.arena_bytes += cache->arena_bytes();
      r.lower_bound_bytes += cache->lower_bound_bytes();
    }
    r.kernel_bytes = weights_bytes_;
    r.cached_bytes = pool_.held_bytes();
    return r;
  }

  void request_cancel() override { cancel_.store(true, std::memory_order_relaxed); }
  void clear_cancel() override { cancel_.store(false, std::memory_order_relaxed); }

 private:
  // One allocation for every constant a GPU node reads, filled once.
  Status upload_weights() {
    const size_t nf = program_.functions.size();
    const_vals_.resize(nf);
    std::vector<std::vector<size_t>> offset(nf);
    size_t total = 0;
    for (size_t f = 0; f < nf; ++f) {
      const FunctionImpl& fn = program_.functions[f];
      const_vals_[f].resize(fn.values.size());
      offset[f].assign(fn.values.size(), SIZE_MAX);
      for (uint32_t v = 0; v < fn.values.size(); ++v)
        if (fn.values[v].is_constant) const_vals_[f][v] = host_value(fn.values[v].constant);
      for (size_t n = 0; n < fn.nodes.size(); ++n) {
        if (placement_.functions[f].nodes[n].device != Device::kGpu || fn.nodes[n].kind != NodeKind::kOp) continue;
        for (uint32_t v : fn.nodes[n].inputs)
          if (fn.values[v].is_constant && offset[f][v] == SIZE_MAX) {
            offset[f][v] = total;
            total += align_up(std::max<size_t>(fn.values[v].constant.nbytes(), 1));
          }
      }
    }
    if (total == 0) return Status::Ok();
    Result<void*> got = ctx_->allocate(total);
    if (!got.ok()) return Status(got.status().code(), "cuda: the graph's weights: " + got.status().message());
    weights_ = *got;
    weights_bytes_ = total;
    for (size_t f = 0; f < nf; ++f)
      for (size_t v = 0; v < offset[f].size(); ++v) {
        if (offset[f][v] == SIZE_MAX) continue;
        Value& c = const_vals_[f][v];
        c.dev = static_cast<uint8_t*>(weights_) + offset[f][v];
        c.on_dev = true;
        if (c.nbytes() > 0) SG_RETURN_IF_ERROR(ctx_->upload(c.dev, c.host.data(), c.nbytes()));
      }
    return ctx_->synchronize();
  }

  Value& value(Frame& frame, uint32_t v) {
    return program_.functions[frame.fn].values[v].is_constant ? const_vals_[frame.fn][v] : frame.vals[v];
  }

  Status push(uint32_t fn, Role role, std::vector<Value>& args, const NodeInfo* caller) {
    const FunctionImpl& f = program_.functions[fn];
    Frame frame;
    frame.fn = fn;
    frame.role = role;
    frame.vals.resize(f.values.size());
    std::vector<Tensor> shapes;
    shapes.reserve(f.params.size());
    for (size_t k = 0; k < f.params.size() && k < args.size(); ++k) {
      shapes.push_back(Tensor::wrap(args[k].dtype, args[k].shape(), nullptr));
      frame.vals[f.params[k]] = std::move(args[k]);
    }
    frame.plan = &plans_[fn]->find(f, plan_kernels_[fn], shapes);
    Result<uint8_t*> arena = plans_[fn]->acquire(*frame.plan);
    if (!arena.ok()) {  // acquire counted no frame
      const Status& s = arena.status();
      const std::string what = "cuda: the device arena of '" + detail::source_name(f.name) + "': " + s.message();
      return caller != nullptr ? at_alloc(*caller, Status(s.code(), what)) : Status(s.code(), what);
    }
    frame.arena = *arena;
    frames_.push_back(std::move(frame));
    return Status::Ok();
  }

  void pop() {
    Frame& f = frames_.back();
    plans_[f.fn]->release(*f.plan);
    frames_.pop_back();
  }

  void unwind() {
    while (!frames_.empty()) pop();
  }

  Status check_interrupt(const NodeInfo& node) {
    if (cancel_.load(std::memory_order_relaxed))
      return at(node, StatusCode::kCancelled, "the run was cancelled");
    if (deadline_ns_ != 0 && now_ns() >= deadline_ns_)
      return at(node, StatusCode::kDeadlineExceeded,
                "the run passed its deadline (a timeout of " + std::to_string(options_.run_timeout.count()) + " us)");
    return Status::Ok();
  }

  Status step(std::vector<Tensor>& results) {
    Frame& frame = frames_.back();
    const FunctionImpl& fn = program_.functions[frame.fn];
    if (frame.pc == fn.nodes.size()) return finish_frame(results);
    const NodeInfo& node = fn.nodes[frame.pc];
    SG_RETURN_IF_ERROR(check_interrupt(node));
    if (node.kind == NodeKind::kOp) {
      const uint64_t start = options_.profile ? now_ns() : 0;
      SG_RETURN_IF_ERROR(run_op(frame, fn, node));
      if (options_.profile) {
        // Timed to the kernel's end, so that a node's time is its own.
        const Status synced = ctx_->synchronize();
        if (!synced.ok()) return at(node, synced.code(), synced.message());
        NodeStats& st = stats_[frame.fn][frame.pc];
        ++st.calls;
        st.total_ns += now_ns() - start;
      }
      release(frame, node);
      ++frame.pc;
      return Status::Ok();
    }
    return start_control(frame, fn, node);
  }

  // Drops the values whose last use was `node`; a While cond keeps its
  // parameters, which the loop carries on (to the body, or out as its results).
  void release(Frame& frame, const NodeInfo& node) {
    const std::vector<uint8_t>& param = is_param_[frame.fn];
    for (uint32_t v : node.release_after)
      if (frame.role != Role::kWhileCond || !param[v]) frame.vals[v] = Value();
    for (uint32_t v : node.dead_outputs) frame.vals[v] = Value();
  }

  Result<bool> read_bool(Frame& frame, uint32_t v, const NodeInfo& node) {
    Value& val = value(frame, v);
    if (val.dtype != DType::kBool || val.rank != 0)
      return at(node, StatusCode::kRuntimeError, "the condition of '" + node.op_name + "' is not a bool scalar");
    if (val.on_host) return *static_cast<const uint8_t*>(val.host.data()) != 0;
    const uint64_t start = now_ns();
    Status s = ctx_->download(pinned_, val.dev, 1);
    if (s.ok()) s = ctx_->synchronize();
    if (!s.ok()) return at(node, s.code(), s.message());
    TransferStats& t = transfers_[frame.fn];
    ++t.downloads;
    t.download_ns += now_ns() - start;
    return pinned_[0] != 0;
  }

  Status start_control(Frame& frame, const FunctionImpl& fn, const NodeInfo& node) {
    frame.start_ns = options_.profile ? now_ns() : 0;
    std::vector<Value> args;
    switch (node.kind) {
      case NodeKind::kIf: {
        SG_ASSIGN_OR_RETURN(const bool cond, read_bool(frame, node.inputs[0], node));
        for (size_t k = 1; k < node.inputs.size(); ++k) args.push_back(value(frame, node.inputs[k]));
        return push(node.functions[cond ? 0 : 1], Role::kIfBranch, args, &node);
      }
      case NodeKind::kWhile:
        for (uint32_t v : node.inputs) args.push_back(value(frame, v));
        return push(node.functions[0], Role::kWhileCond, args, &node);
      case NodeKind::kCall:
        if (active_calls_ >= options_.max_call_depth)
          return at(node, StatusCode::kLimitExceeded,
                    "recursion depth limit " + std::to_string(options_.max_call_depth) + " exceeded calling '" +
                        detail::source_name(program_.functions[node.functions[0]].name) + "'");
        ++active_calls_;
        for (uint32_t v : node.inputs) args.push_back(value(frame, v));
        return push(node.functions[0], Role::kCall, args, &node);
      case NodeKind::kOp: break;
    }
    (void)fn;
    return Status(StatusCode::kInternal, "not a control-flow node");
  }

  // The caller's control-flow node gets `outs` as its outputs and moves on.
  void deliver(std::vector<Value>& outs) {
    Frame& caller = frames_.back();
    const NodeInfo& node = program_.functions[caller.fn].nodes[caller.pc];
    for (size_t k = 0; k < node.outputs.size() && k < outs.size(); ++k) caller.vals[node.outputs[k]] = std::move(outs[k]);
    if (options_.profile) {
      NodeStats& st = stats_[caller.fn][caller.pc];
      ++st.calls;
      st.total_ns += now_ns() - caller.start_ns;
    }
    release(caller, node);
    ++caller.pc;
  }

  Status finish_frame(std::vector<Tensor>& results) {
    Frame& frame = frames_.back();
    const FunctionImpl& fn = program_.functions[frame.fn];
    const Role role = frame.role;
    if (role == Role::kWhileCond) {
      const Frame& caller = frames_[frames_.size() - 2];
      const NodeInfo& loop = program_.functions[caller.fn].nodes[caller.pc];
      SG_ASSIGN_OR_RETURN(const bool go_on, read_bool(frame, fn.results[0], loop));
      std::vector<Value> carried;
      for (uint32_t p : fn.params) carried.push_back(std::move(frame.vals[p]));
      pop();
      if (!go_on) {
        deliver(carried);
        return Status::Ok();
      }
      SG_RETURN_IF_ERROR(check_interrupt(loop));
      return push(loop.functions[1], Role::kWhileBody, carried, &loop);
    }
    std::vector<Value> outs;
    for (uint32_t r : fn.results) outs.push_back(value(frame, r));
    pop();
    switch (role) {
      case Role::kEntry: return download_results(outs, results);
      case Role::kWhileBody: {
        const Frame& caller = frames_.back();
        const NodeInfo& loop = program_.functions[caller.fn].nodes[caller.pc];
        return push(loop.functions[0], Role::kWhileCond, outs, &loop);
      }
      case Role::kCall: --active_calls_; [[fallthrough]];
      case Role::kIfBranch: deliver(outs); return Status::Ok();
      case Role::kWhileCond: break;
    }
    return Status::Ok();
  }

  Status download_results(std::vector<Value>& outs, std::vector<Tensor>& results) {
    results.clear();
    const FunctionImpl& fn = program_.functions[entry_];
    for (Value& v : outs) {
      if (!v.on_host) SG_RETURN_IF_ERROR(to_host(entry_, v, nullptr));
      results.push_back(v.host);
    }
    const Status s = ctx_->synchronize();
    if (!s.ok())
      return Status(s.code(), (fn.nodes.empty() ? std::string() : fn.nodes.back().location + ": error: ") +
                                  s.message() + " (reported when the run's results were copied back)");
    return Status::Ok();
  }

  // A device buffer for value `v` of `frame`: its arena place where the plan has
  // one of this size, else a buffer of its own.
  Status place_on_device(Frame& frame, uint32_t v, Value& val, const NodeInfo* node) {
    const FramePlan& plan = frame.plan->plan;
    const size_t bytes = val.nbytes();
    if (!program_.functions[frame.fn].values[v].is_constant && v < plan.placement.size() &&
        plan.placement[v] == Placement::kArena && plan.known[v] && frame.arena != nullptr) {
      const PlannedShape& ps = plan.shape[v];
      size_t planned = dtype_size(val.dtype);
      for (int i = 0; i < ps.rank; ++i) planned *= size_t(ps.dims[i]);
      if (planned == bytes) {
        val.dev = frame.arena + plan.offset[v];
        val.owned.reset();
        return Status::Ok();
      }
    }
    auto buf = std::make_shared<DeviceBuffer>();
    buf->pool = &pool_;
    if (bytes > 0) {
      Result<void*> got = pool_.get(bytes);
      if (!got.ok()) return node != nullptr ? at_alloc(*node, got.status()) : got.status();
      buf->p = *got;
      buf->bytes = bytes;
    }
    val.dev = buf->p;
    val.owned = std::move(buf);
    return Status::Ok();
  }

  Status to_device(Frame& frame, uint32_t v, Value& val, const NodeInfo& node) {
    if (val.on_dev) return Status::Ok();
    const uint64_t start = now_ns();
    SG_RETURN_IF_ERROR(place_on_device(frame, v, val, &node));
    if (val.nbytes() > 0) {
      const Status s = ctx_->upload(val.dev, val.host.data(), val.nbytes());
      if (!s.ok()) return at(node, s.code(), s.message());
    }
    val.on_dev = true;
    TransferStats& t = transfers_[frame.fn];
    ++t.uploads;
    t.upload_ns += now_ns() - start;
    return Status::Ok();
  }

  Status to_host(uint32_t fn, Value& val, const NodeInfo* node) {
    if (val.on_host) return Status::Ok();
    const uint64_t start = now_ns();
    Result<Tensor> t = Tensor::empty(val.dtype, Span<const int64_t>(val.dims, size_t(val.rank)), allocator_);
    if (!t.ok()) return node != nullptr ? at_alloc(*node, t.status()) : t.status();
    Status s = val.nbytes() > 0 ? ctx_->download(t->data(), val.dev, val.nbytes()) : Status::Ok();
    if (s.ok()) s = ctx_->synchronize();
    if (!s.ok()) return node != nullptr ? at(*node, s.code(), s.message()) : s;
    val.host = std::move(t).value();
    val.on_host = true;
    TransferStats& st = transfers_[fn];
    ++st.downloads;
    st.download_ns += now_ns() - start;
    return Status::Ok();
  }

  Status output_types(const Frame& frame, const FunctionImpl& fn, const NodeInfo& node,
                      std::vector<Value*>& ins) {
    const FramePlan& plan = frame.plan->plan;
    bool known = true;
    for (uint32_t v : node.outputs) known = known && v < plan.known.size() && plan.known[v];
    out_types_.resize(node.outputs.size());
    if (known) {
      for (size_t k = 0; k < node.outputs.size(); ++k) {
        const uint32_t v = node.outputs[k];
        out_types_[k].dtype = fn.values[v].dtype;
        const std::span<const int64_t> s = plan.shape[v].span();
        out_types_[k].shape.assign(s.begin(), s.end());
      }
      return Status::Ok();
    }
    in_types_.resize(ins.size());
    scalars_.assign(ins.size(), std::nullopt);
    for (size_t k = 0; k < ins.size(); ++k) {
      in_types_[k].dtype = ins[k]->dtype;
      in_types_[k].shape.assign(ins[k]->dims, ins[k]->dims + ins[k]->rank);
      if (node.value_dependent_shape && ins[k]->rank == 0 && ins[k]->on_host) {
        if (ins[k]->dtype == DType::kI64) scalars_[k] = *static_cast<const int64_t*>(ins[k]->host.data());
        if (ins[k]->dtype == DType::kI32) scalars_[k] = *static_cast<const int32_t*>(ins[k]->host.data());
      }
    }
    const Status inferred = ops::infer<int64_t>(node.op, node.attrs, in_types_, scalars_, out_types_, infer_ctx_);
    if (!inferred.ok()) return at(node, StatusCode::kRuntimeError, inferred.message());
    if (out_types_.size() != node.outputs.size())
      return at(node, StatusCode::kInternal, "op '" + node.op_name + "' inferred the wrong number of outputs");
    for (size_t k = 0; k < out_types_.size(); ++k)
      if (out_types_[k].shape.size() > size_t(kernels::kMaxRank))
        return at(node, StatusCode::kRuntimeError, "op '" + node.op_name + "' produced a rank above 8");
    return Status::Ok();
  }

  static void print_line(void* user, const char* text, size_t size) {
    static_cast<CudaRunner*>(user)->options_.text_callback(TextKind::kPrint, std::string_view(text, size));
  }

  Status run_op(Frame& frame, const FunctionImpl& fn, const NodeInfo& node) {
    const uint32_t n = frame.pc;
    kc::Kernel* gpu = gpu_kernels_[frame.fn][n].get();
    ins_.clear();
    for (size_t k = 0; k < node.inputs.size(); ++k) {
      const uint32_t v = node.inputs[k];
      Value& val = value(frame, v);
      if (gpu != nullptr) {
        SG_RETURN_IF_ERROR(to_device(frame, v, val, node));
        // Shapes set by run-time scalars are inferred on the host.
        if (node.value_dependent_shape && val.rank == 0) SG_RETURN_IF_ERROR(to_host(frame.fn, val, &node));
      } else {
        SG_RETURN_IF_ERROR(to_host(frame.fn, val, &node));
      }
      ins_.push_back(&val);
    }
    SG_RETURN_IF_ERROR(output_types(frame, fn, node, ins_));
    in_refs_.clear();
    for (Value* v : ins_) in_refs_.push_back(v->ref(gpu != nullptr));
    out_refs_.clear();
    for (size_t k = 0; k < node.outputs.size(); ++k) {
      const uint32_t v = node.outputs[k];
      Value out;
      out.set_shape(out_types_[k].dtype, out_types_[k].shape);
      if (gpu != nullptr) {
        SG_RETURN_IF_ERROR(place_on_device(frame, v, out, &node));
        out.on_dev = true;
      } else {
        Result<Tensor> t = Tensor::empty(out.dtype, Span<const int64_t>(out.dims, size_t(out.rank)), allocator_);
        if (!t.ok()) return at_alloc(node, t.status());
        out.host = std::move(t).value();
        out.on_host = true;
      }
      out_refs_.push_back(out.ref(gpu != nullptr));
      frame.vals[v] = std::move(out);
    }
    Status ran;
    if (gpu != nullptr) {
      ran = gpu->run(*ctx_, in_refs_, out_refs_);
    } else {
      const NodeKernel& hk = host_kernels_.at(frame.fn, n);
      kernels::KernelContext kctx;
      kctx.threadpool = host_kernels_.threadpool();
      kctx.team = host_kernels_.team();
      if (options_.text_callback) {
        kctx.print = &CudaRunner::print_line;
        kctx.print_user = this;
      }
      if (hk.prepared == nullptr) {
        const size_t scratch = kernels::reference_scratch_size(node.op, node.attrs, in_refs_);
        if (scratch_.size() < scratch) scratch_.resize(scratch);
        kctx.scratch = scratch_.data();
        kctx.scratch_size = scratch_.size();
        ran = hk.fn(kctx, node.attrs, in_refs_, out_refs_);
      } else {
        ran = hk.prepared->run(kctx, in_refs_, out_refs_);
      }
    }
    if (!ran.ok()) return at(node, ran.code(), ran.message());
    return Status::Ok();
  }

  const ProgramImpl& program_;
  uint32_t entry_;
  const SessionOptions& options_;
  const NodeKernels& host_kernels_;
  Allocator* allocator_;
  std::unique_ptr<kc::Context> ctx_;  // declared before everything holding device memory
  BufferPool pool_;                    // before every Value, whose buffers return to it
  void* weights_ = nullptr;
  size_t weights_bytes_ = 0;
  uint8_t* pinned_ = nullptr;
  std::vector<std::unique_ptr<DevicePlanCache>> plans_;  // per function
  std::vector<std::vector<std::unique_ptr<kc::Kernel>>> gpu_kernels_;
  std::vector<std::vector<NodeKernel>> plan_kernels_;
  std::vector<std::vector<Value>> const_vals_;
  std::vector<std::vector<uint8_t>> is_param_;  // per function, per value
  ProgramPlacement placement_;
  std::vector<Frame> frames_;
  int active_calls_ = 0;
  uint64_t deadline_ns_ = 0;
  std::atomic<bool> cancel_{false};
  struct NodeStats {
    uint64_t calls = 0, total_ns = 0;
  };
  std::vector<std::vector<NodeStats>> stats_;
  std::vector<TransferStats> transfers_;
  // Per-node scratch.
  std::vector<Value*> ins_;
  std::vector<TensorRef> in_refs_, out_refs_;
  std::vector<ops::TensorType<int64_t>> in_types_, out_types_;
  std::vector<std::optional<int64_t>> scalars_;
  std::vector<uint8_t> scratch_;
  ops::ConcreteInferContext infer_ctx_;
};

class CudaBackend final : public DeviceBackend {
 public:
  DeviceKind kind() const override { return DeviceKind::kCuda; }

  Result<std::unique_ptr<DeviceRunner>> open(const DeviceOpen& request) const override {
    int count = 0;
    const cudaError_t e = cudaGetDeviceCount(&count);
    if (e != cudaSuccess) {
      (void)cudaGetLastError();  // not sticky: leave no error behind for later calls
      return Status(StatusCode::kUnsupported, std::string("no CUDA device: ") + cudaGetErrorString(e));
    }
    if (count == 0) return Status(StatusCode::kUnsupported, "no CUDA device: the driver reports none");
    if (request.device.index >= count)
      return Status(StatusCode::kInvalidArgument, "no CUDA device " + std::to_string(request.device.index) +
                                                      ": this machine has " + std::to_string(count) +
                                                      (count == 1 ? " (cuda:0)" : " (cuda:0 to cuda:" +
                                                                                       std::to_string(count - 1) + ")"));
    kc::ContextOptions copts;
    copts.device = request.device.index;
    copts.allow_tf32 = request.options->allow_tf32;
    Result<std::unique_ptr<kc::Context>> ctx = kc::Context::create(copts);
    if (!ctx.ok()) return ctx.status();
    auto runner = std::make_unique<CudaRunner>(request, std::move(ctx).value());
    SG_RETURN_IF_ERROR(runner->open());
    return std::unique_ptr<DeviceRunner>(std::move(runner));
  }
};

}  // namespace
}  // namespace sg::runtime

namespace sg {

const DeviceBackend* cuda_backend() {
  static const runtime::CudaBackend kBackend;  // immutable: no state of its own
  return &kBackend;
}

}  // namespace sg
