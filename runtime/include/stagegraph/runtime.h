// Stagegraph runtime: load a .sgraph file and run its entry points.
//
//   auto program = sg::Program::load_file("mlp.sgraph");        // header, checksum,
//   if (!program.ok()) { ... program.status().message() ... }   // verifier, semantic checks
//   auto session = sg::Session::create(*program, "mlp");         // one per thread
//   (*session)->set_input("x", x_tensor);                         // dtype/shape checked
//   sg::Status s = (*session)->run();                             // kRuntimeError: message
//   const sg::Tensor& y = (*session)->output(0);                  //   "FILE:LINE:COL: error: ..."
//
// A Program is immutable and may be shared by many threads; a Session is used by
// one thread at a time and owns its memory, plans and frame stack. No exceptions
// cross this API and there is no global mutable state.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "stagegraph/dtype.h"
#include "stagegraph/status.h"
#include "stagegraph/tensor.h"

namespace sg {

// A signature entry: static dims have dim_names[i] empty and shape[i] >= 0;
// symbolic dims have shape[i] == -1 and their name in dim_names[i].
struct TensorSpec {
  std::string name;
  DType dtype = DType::kF32;
  std::vector<int64_t> shape;
  std::vector<std::string> dim_names;
  std::string shape_string() const;  // "[N, 784]"
};

struct EntryInfo {
  std::string name;
  std::vector<TensorSpec> inputs;
  std::vector<TensorSpec> outputs;
};

// For graph-inspect.
struct FunctionInfo {
  std::string name;
  size_t num_values = 0;
  size_t num_nodes = 0;
  std::vector<std::pair<std::string, size_t>> op_counts;  // by op name, sorted
  struct Edge {
    std::string kind;  // "if-then", "if-else", "while-cond", "while-body", "call"
    uint32_t function;
  };
  std::vector<Edge> edges;
};

struct LoadOptions {
  // Checks the data segment's checksum on load (XXH3-64, at memory speed: a
  // changed constant is refused, kInvalidGraph). false skips it, for callers that
  // verified the file themselves.
  bool verify_data = true;
};

class ProgramImpl;

class Program {
 public:
  // Memory-maps the file; constants are used in place from the map.
  static Result<std::shared_ptr<const Program>> load_file(const std::string& path,
                                                          const LoadOptions& options = {});
  // Uses `bytes` in place when 64-byte aligned (the caller keeps them alive while
  // the Program lives); otherwise copies them once.
  static Result<std::shared_ptr<const Program>> load_memory(std::span<const uint8_t> bytes,
                                                            const LoadOptions& options = {});

  const std::vector<EntryInfo>& entries() const;
  const EntryInfo* find_entry(std::string_view name) const;
  std::vector<FunctionInfo> functions() const;
  uint64_t constant_bytes() const;
  uint16_t format_major() const;
  uint16_t format_minor() const;

  const ProgramImpl& impl() const { return *impl_; }
  ~Program();
  explicit Program(std::unique_ptr<ProgramImpl> impl);

 private:
  std::unique_ptr<ProgramImpl> impl_;
};

struct SessionOptions {
  // Threads to run on, the caller's included. More than one: a pthreadpool when
  // some kernel runs an XNNPACK operator, else (up to 5) a team of threads that
  // spin between tasks, so that a kernel of a few microseconds can still split;
  // a team's helpers sleep after 0.2 ms without work. 1 to kMaxThreads: a pool's
  // threads spin between tasks too, so thousands of them on a few cores turn a
  // run of milliseconds into hours. The Session uses no more threads than the
  // CPUs the creating thread may run on (its affinity mask, as taskset or a
  // container's cpuset set it); ScheduleStats::threads says how many it uses.
  static constexpr int kMaxThreads = 256;
  int num_threads = 1;
  int max_call_depth = 10000;  // active Call frames (If/While bodies do not count)
  bool profile = false;        // collect per-node timings
  // With num_threads > 1: run independent heavy nodes concurrently, one thread
  // each (ScheduleStats); false: nodes one at a time, each kernel on all threads.
  bool concurrent_nodes = true;
  // Checks the data segment's checksum when the Session is created (kInvalidGraph
  // on a mismatch), unless LoadOptions::verify_data already did on load.
  bool verify_data = false;
  Allocator* allocator = nullptr;  // host allocations; nullptr: the default
};

struct NodeProfile {
  std::string function;
  uint32_t node = 0;
  std::string op;       // op name, or "if"/"while"/"call"
  std::string kernel;   // e.g. "reference", "xnnpack"
  std::string location; // "FILE:LINE:COL"
  uint64_t calls = 0;
  uint64_t total_ns = 0;
};

// What a Session holds beyond its Program (Session::memory_report).
struct MemoryReport {
  // Planned activation memory of the last run: the most bytes the active frames'
  // arenas held at once, beside the largest live set of those values (the lower
  // bound any placement of them needs).
  size_t arena_bytes = 0;
  size_t lower_bound_bytes = 0;
  size_t frame_stack_bytes = 0;  // reserved for frame arenas (kept between runs)
  size_t cached_bytes = 0;       // freed tensor buffers kept for reuse
  size_t kernel_bytes = 0;       // prepared kernels (packed weights), = memory_bytes()
};

// How a Session's runs used its threads (Session::schedule_stats), counted over
// all runs since creation. With more than one thread, independent nodes that are
// each heavy enough (a large matmul, convolution...) run concurrently in "waves",
// one node per thread.
struct ScheduleStats {
  uint64_t waves = 0;       // waves run
  uint64_t wave_nodes = 0;  // nodes those waves ran
  // The threads work was handed to: 1 (none), or a pool (pthreadpool, which
  // XNNPACK's operators need), or a team that spins between tasks and takes them
  // in a fraction of the time (chosen when no kernel runs an XNNPACK operator).
  int threads = 1;
  bool team = false;
  // While loops whose cond and body are straight lines over small carried values
  // (scalars, mostly) that ran on a register file instead of moving tensors.
  uint64_t register_loops = 0;
};

class SessionImpl;

class Session {
 public:
  static Result<std::unique_ptr<Session>> create(std::shared_ptr<const Program> program,
                                                 std::string_view entry,
                                                 const SessionOptions& options = {});
  ~Session();

  const EntryInfo& entry() const;

  // Binds an input by its parameter name. kInvalidInput, naming the input, when the
  // name is unknown or the dtype, rank or a static dim differs; symbolic dims are
  // bound here and must agree with earlier inputs of this run.
  Status set_input(std::string_view name, Tensor value);

  // Runs the entry point. Missing inputs: kInvalidInput. Failures while running:
  // kRuntimeError / kLimitExceeded with "FILE:LINE:COL: error: MESSAGE".
  // Inputs stay bound; call set_input again to change them.
  Status run();

  size_t num_outputs() const;
  const Tensor& output(size_t i) const;
  Result<Tensor> output(std::string_view name) const;

  // Per-node timings accumulated since creation (SessionOptions::profile), with the
  // kernel each node runs.
  std::vector<NodeProfile> profile() const;

  // Bytes this Session's prepared kernels hold (packed weights): the memory each
  // extra Session on the same Program adds beyond its arenas.
  size_t memory_bytes() const;
  MemoryReport memory_report() const;
  // Tensor data copies made since creation. Values move between frames by
  // reference, so the only copies are the entry's results handed to the caller
  // (one per output per run).
  uint64_t tensor_copies() const;
  ScheduleStats schedule_stats() const;

  explicit Session(std::unique_ptr<SessionImpl> impl);

 private:
  std::unique_ptr<SessionImpl> impl_;
};

}  // namespace sg
