// Stagegraph runtime: load a .sgraph file and run its entry points.
//
//   auto program = sg::Program::load_file("mlp.sgraph");        // header, checksum,
//   if (!program.ok()) { ... program.status().message() ... }   // verifier, semantic checks
//   auto session = sg::Session::create(*program, "mlp");         // one per thread
//   (*session)->set_input("x", x_tensor);                         // dtype/shape checked
//   sg::Status s = (*session)->run();                             // kRuntimeError: message
//   sg::Result<sg::Tensor> y = (*session)->output(0);             //   "FILE:LINE:COL: error: ..."
//
// A Program is immutable and may be shared by many threads; a Session is used by
// one thread at a time and owns its memory, plans and frame stack (a second
// thread entering run() meanwhile gets kInvalidArgument), except cancel(), which
// any thread may call. No exceptions cross this API and there is no global
// mutable state. The public headers compile as C++17; c_api.h is the C API.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "stagegraph/custom_op.h"
#include "stagegraph/dtype.h"
#include "stagegraph/export.h"
#include "stagegraph/span.h"
#include "stagegraph/status.h"
#include "stagegraph/tensor.h"

namespace sg {

// A signature entry: static dims have dim_names[i] empty and shape[i] >= 0;
// symbolic dims have shape[i] == -1 and their name in dim_names[i].
struct SG_API TensorSpec {
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
  // Program state (SPEC §12): the variables the entry reads and those it assigns,
  // by index into Program::variables().
  std::vector<size_t> reads;
  std::vector<size_t> writes;
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
  // verified the file themselves. The one place this is set: the C API's
  // SG_LOAD_NO_VERIFY_DATA, Java's Program.LoadOptions and graph-run's
  // --no-verify-data all come here.
  bool verify_data = true;
  // int8 and int4 weights of dense layers (SPEC.md §13): true quantizes each row of
  // the activations to int8 per run and multiplies in integers (the fast path);
  // false computes in f32 with the widened weights (weight-only quantization, the
  // values eager mode's sg.weight(quantize=) gives). graph-run --weight-only-quant.
  bool dynamic_quantization = true;
};

class ProgramImpl;
namespace runtime {
struct ProgramAccess;  // runtime/src/program_impl.h: the runtime's own way in
}

class SG_API Program {
 public:
  // Memory-maps the file; constants are used in place from the map.
  static Result<std::shared_ptr<const Program>> load_file(const std::string& path,
                                                          const LoadOptions& options = {});
  // Uses `bytes` in place when 64-byte aligned (the caller keeps them alive while
  // the Program lives); otherwise copies them once.
  static Result<std::shared_ptr<const Program>> load_memory(Span<const uint8_t> bytes,
                                                            const LoadOptions& options = {});
  // The `length` bytes at `offset` of the open file `fd` (0: to its end), as a
  // graph stored uncompressed inside an Android APK: memory-mapped when `offset`
  // is a multiple of 64 (the constants' alignment), else copied. `fd` stays the
  // caller's and may be closed as soon as this returns.
  static Result<std::shared_ptr<const Program>> load_fd(int fd, uint64_t offset, uint64_t length,
                                                        const LoadOptions& options = {});

  const std::vector<EntryInfo>& entries() const;
  const EntryInfo* find_entry(std::string_view name) const;
  // The program's variables (sg.variables), named by path; every dim static.
  const std::vector<TensorSpec>& variables() const;
  std::vector<FunctionInfo> functions() const;
  uint64_t constant_bytes() const;
  uint16_t format_major() const;
  uint16_t format_minor() const;

  ~Program();
  Program(const Program&) = delete;
  Program& operator=(const Program&) = delete;

 private:
  friend struct runtime::ProgramAccess;
  explicit Program(std::unique_ptr<ProgramImpl> impl);
  std::unique_ptr<ProgramImpl> impl_;
};

// Threads that several Sessions share (SessionOptions::thread_pool), so that N
// Sessions on C cores use C threads rather than each its own. Its kernels' work
// is forked on it one run at a time (pthreadpool serializes them); a Session
// that finds it busy waits for it, so the CPUs are never oversubscribed. Share
// it by shared_ptr: every Session holds it.
class SG_API ThreadPool {
 public:
  // 1 to SessionOptions::kMaxThreads threads, the calling thread's included, and no
  // more than the CPUs the creating thread may run on. A build without XNNPACK has
  // no pool: num_threads() is 1 and Sessions run on their caller's thread.
  static Result<std::shared_ptr<ThreadPool>> create(int num_threads);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;
  int num_threads() const { return num_threads_; }
  void* native_handle() const { return pool_; }  // a pthreadpool_t, or null

 private:
  ThreadPool(void* pool, int num_threads) : pool_(pool), num_threads_(num_threads) {}
  void* pool_;
  int num_threads_;
};

// What a run writes as text: a graph `print` line (without its newline), or a
// diagnostic (a failed run's "FILE:LINE:COL: error: MESSAGE", an Assert's included).
enum class TextKind : int { kPrint = 0, kDiagnostic = 1 };
using TextCallback = std::function<void(TextKind kind, std::string_view text)>;

// A device a Session runs on (SessionOptions::device): an immutable value from
// the device's library, shared by any number of Sessions. sg::test_device() below;
// sg::cuda_device(N) from the CUDA library (stagegraph/cuda.h). The runtime itself
// links no device library.
class Device;

// The test device: host memory behind the device interface, with buffers of its
// own (allocated apart, poisoned when freed, and checked on every launch and copy,
// so that a kernel handed host memory by mistake fails), running the CPU's
// reference kernels. Every copy between host and device is counted (profile():
// "transfer" rows). For testing the runtime's device path on any machine.
struct TestDeviceOptions {
  // Ops (by name) the device declines: they run on the host. print writes on the host.
  std::vector<std::string> host_ops = {"print"};
};
SG_API std::shared_ptr<const Device> test_device(const TestDeviceOptions& options = {});

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
  Allocator* allocator = nullptr;  // host allocations; nullptr: the default

  // Bytes of memory the runs may hold at once: frame arenas, the Session's own
  // tensors (loop-carried values, results, kernel scratch), and the buffers and
  // frame stack chunks it keeps between runs. 0: no limit. A run that would pass it
  // ends with kLimitExceeded naming the op and its FILE:LINE:COL; the Session stays
  // usable. Packed weights (memory_bytes()) and outputs handed to the caller do not
  // count. Costs nothing on the hot path (counted where memory is allocated).
  size_t memory_limit_bytes = 0;
  // Wall time each run may take; zero: no limit. A run past it ends with
  // kDeadlineExceeded naming the source line it stopped at, whatever the number
  // of nodes: at the deadline a thread of the Session's own (started by its first
  // timed run) raises the flag cancel() raises, so the run ends as a cancelled one
  // does, and the run itself reads no clock.
  std::chrono::microseconds run_timeout{0};
  // Runs fork kernel work on this pool instead of threads of their own (num_threads
  // is then ignored); null: the Session's own threads.
  std::shared_ptr<ThreadPool> thread_pool;
  // Where graph `print` lines and diagnostics go, on the thread calling run(); it
  // must not call back into the Session. Empty: prints go to stdout, and
  // diagnostics are only returned in the Status.
  TextCallback text_callback;
  // Kernels of the graph's custom ops (stagegraph/custom_op.h); must outlive the
  // Session. An entry that reaches a custom op with none here is refused by
  // create(); custom ops only other entries reach need none.
  const CustomOps* custom_ops = nullptr;
  // Where the Session runs; null: the CPU. The executor places each op node its
  // device has a kernel for there, runs the rest (and all control flow) on the
  // host, and copies values between host and device where they cross: once per
  // value and frame, constants once per Session (profile(): "transfer" rows, there
  // whether or not the Session profiles). allow_tf32 below is the CUDA device's.
  std::shared_ptr<const Device> device;
  // On a GPU, matmuls may use TF32 tensor cores (about 1e-3 relative error);
  // false keeps them in full f32, within f32 tolerance of the CPU.
  bool allow_tf32 = false;
};

// OK for 1 to SessionOptions::kMaxThreads threads; else kInvalidArgument,
// "num_threads must be between 1 and 256 (got N)". The one check of a thread
// count: Session::create, ThreadPool::create, the C API and graph-run's --threads.
SG_API Status check_num_threads(int num_threads);

struct NodeProfile {
  std::string function;
  uint32_t node = 0;
  std::string op;       // op name, or "if"/"while"/"call"
  std::string kernel;   // e.g. "reference", "xnnpack"
  std::string location; // "FILE:LINE:COL"
  uint64_t calls = 0;
  uint64_t total_ns = 0;
  // A While a gradient widened, or a Call of a recursion's taped forward: the most
  // bytes its tapes (what the backward reads per iteration or per call) held at its
  // end, in any run so far.
  uint64_t tape_bytes = 0;
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

class SG_API Session {
 public:
  static Result<std::unique_ptr<Session>> create(std::shared_ptr<const Program> program,
                                                 std::string_view entry,
                                                 const SessionOptions& options = {});
  ~Session();

  const EntryInfo& entry() const;

  // Binds an input by its parameter name or position. kInvalidInput, naming the
  // input, when the name is unknown or the dtype, rank or a static dim differs, or
  // a dim is negative; symbolic dims are bound here and must agree with earlier
  // inputs of this run. The tensor is shared, not copied (Tensor::wrap binds
  // caller memory, which must then stay valid while bound). Each run reads the
  // bound memory afresh and never writes it: the caller may change its contents
  // between runs (not during one) and run again without binding it again, as a
  // loop refilling one buffer does; the dims stay those given here.
  Status set_input(std::string_view name, Tensor value);
  Status set_input(size_t index, Tensor value);
  // Positions by name. An unknown input name is kInvalidInput, with the message
  // set_input gives for it ("unknown input 'q' (the entry takes: x, y)"); an
  // unknown output name kInvalidArgument, naming the outputs there are.
  Result<size_t> input_index(std::string_view name) const;
  Result<size_t> output_index(std::string_view name) const;

  // Output `i` of later runs is written into `capacity_bytes` at `data` (caller
  // memory, C order, no allocation); a run whose output does not fit fails with
  // kInvalidArgument naming the output and the bytes it needs. output(i) and
  // output_view(i) then refer to `data`. `data` null: unbinds.
  Status bind_output(size_t i, void* data, size_t capacity_bytes);

  // Runs the entry point. Missing inputs: kInvalidInput. Failures while running:
  // kRuntimeError / kLimitExceeded / kOutOfMemory / kCancelled / kDeadlineExceeded
  // with "FILE:LINE:COL: error: MESSAGE"; the Session stays usable after each.
  // Inputs stay bound; call set_input again to change them.
  Status run();

  // Ends the run in progress at its next check with kCancelled: between nodes, at
  // loop back-edges and Call entries, and inside long kernels between the blocks
  // they split their work into (dense layers and matmuls: a few hundred rows at a
  // time), so it lands within about a millisecond, not a whole kernel. With no run
  // in progress, the next run ends so as soon as it starts, so that a cancel racing
  // with a run's start is never lost. Every run's end clears the request. Any
  // thread, any time; lock-free.
  void cancel();
  // Changes SessionOptions::run_timeout for later runs (not while one runs).
  Status set_run_timeout(std::chrono::microseconds timeout);

  size_t num_outputs() const;
  // Output `i` of the last successful run, as a Tensor the caller may keep past the
  // Session, in the Session's allocator: the result itself, without a copy, when the
  // run left it in a buffer of its own (the usual case: no memory limit, not an
  // input, constant or variable passed through), else a copy made on the first
  // request after a run; or the bound buffer. A later run never writes into it. kInvalidArgument for `i` out of range, or before a
  // successful run (none yet, or the last one failed).
  Result<Tensor> output(size_t i) const;
  Result<Tensor> output(std::string_view name) const;
  // The same without a copy: a Tensor borrowing the Session's memory, valid until
  // the next run, bind_output or the Session's end; do not keep it longer.
  Result<Tensor> output_view(size_t i) const;
  // The dims of output `i` of the last successful run, held by the Session until
  // the next run; empty when output(i) would fail.
  Span<const int64_t> output_shape(size_t i) const;

  // The Session's variables (SPEC §12): its own, starting from the file's values.
  // A run reads them as they were when it started; its assignments are stored, all
  // together and without a copy, only when it succeeds (a failed, cancelled or
  // timed-out run changes none). variable() is a copy the caller may keep.
  // save_variables writes safetensors named by path, to a temporary file renamed
  // into place; load_variables checks every name, dtype and shape before it
  // changes anything (kInvalidArgument naming the first mismatch), and reads files
  // that hold all of this Program's variables (more are refused).
  Result<Tensor> variable(std::string_view name) const;
  Status save_variables(const std::string& path) const;
  Status load_variables(const std::string& path);
  // This Session's variables become copies of `other`'s (another entry of the same
  // Program, or of a Program with the same variables: names, dtypes, shapes), all
  // at once: how a `predict` Session takes what a `train_step` Session learned,
  // without a file. kInvalidArgument naming the first variable that differs;
  // refused, as save/load are, while either Session runs.
  Status copy_variables_from(const Session& other);

  // Per-node timings accumulated since creation (SessionOptions::profile), with the
  // kernel each node runs.
  std::vector<NodeProfile> profile() const;

  // Bytes this Session's prepared kernels hold (packed weights): the memory each
  // extra Session on the same Program adds beyond its arenas.
  size_t memory_bytes() const;
  MemoryReport memory_report() const;
  // Tensor data copies made since creation. Values move between frames by
  // reference, and output() hands a result over without one, so the only copies are
  // results output() cannot hand over (see there), bound outputs (one per run), and
  // assigned variables that borrow memory the Session does not own; none by output_view.
  uint64_t tensor_copies() const;
  ScheduleStats schedule_stats() const;

  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

 private:
  explicit Session(std::unique_ptr<SessionImpl> impl);
  std::unique_ptr<SessionImpl> impl_;
};

}  // namespace sg
