// graph-run: runs one entry point of a .sgraph file on .npy inputs (SPEC.md §9).
//
// Exit status: 0 ok; 1 usage; 2 rejected while loading the graph or binding inputs;
// 3 failed while running.
#include <algorithm>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <climits>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#include "npy.h"
#include "out_of_memory.h"
#include "stagegraph/runtime.h"
#ifdef SG_WITH_CUDA
#include "stagegraph/cuda.h"
#endif
#ifdef SG_CUDA_SIBLING
#include <unistd.h>
#endif

namespace sg::tools {
namespace {

constexpr int kExitOk = 0;
constexpr int kExitUsage = 1;
constexpr int kExitRejected = 2;
constexpr int kExitRunFailed = 3;
constexpr size_t kSummaryItems = 8;

constexpr const char* kUsage =
    "usage: graph-run GRAPH.sgraph [options]\n"
    "\n"
    "Runs one entry point of a Stagegraph graph file on .npy inputs and prints a\n"
    "summary of its outputs.\n"
    "\n"
    "options:\n"
    "  --entry NAME         the entry point to run (needed when the graph has several)\n"
    "  --input NAME=FILE    binds parameter NAME to a .npy file (C order, little-endian\n"
    "                       f32, f16, i32, i64 or bool; 0-d for scalars); repeatable\n"
    "  --output-dir DIR     writes each output to DIR/NAME.npy (DIR is created)\n"
    "  --device DEVICE      where to run: cpu (default), cuda or cuda:N (GPU N; a build\n"
    "                       with the CUDA backend; no such GPU here: exit 2), or test\n"
    "                       (host memory behind the device interface, for testing)\n"
    "  --threads N          worker threads, 1 to 256 (default 1)\n"
    "  --bench N            after warm-up runs (20 ms, at least 3), times N runs: min/median/max latency\n"
    "  --profile            prints the time per op kind and per node\n"
    "  --steps N            runs the entry N times (a training loop): each input .npy\n"
    "                       then has one more leading dim, and step i binds item i mod\n"
    "                       its length; prints each step's outputs (see --print-every)\n"
    "  --print-every K      with --steps, prints every K-th step (and the last)\n"
    "  --load-variables F   before the first run, the program's variables from the\n"
    "                       safetensors file F (every name, dtype and shape checked)\n"
    "  --save-variables F   after the last run, the variables to F (atomically)\n"
    "  --max-depth N        limit of active Call frames (default 10000)\n"
    "  --max-memory SIZE    memory a run may hold (frame arenas, loop values, scratch),\n"
    "                       in bytes or with a K, M or G suffix (1024-based); past it\n"
    "                       the run stops with exit 3 naming the op and its source line\n"
    "  --timeout SECONDS    wall time a run may take (decimals allowed); past it the run\n"
    "                       stops with exit 3 naming the source line it stopped at\n"
    "  --no-verify-data     skips the check of the data segment's checksum on load\n"
    "  --weight-only-quant  int8/int4 dense weights compute in f32 over their widened\n"
    "                       values instead of quantizing the activations per run\n"
    "                       (done by default; --verify-data, the old flag, is accepted)\n"
    "  -h, --help           prints this help\n"
    "\n"
    "exit status: 0 ok, 1 usage error, 2 graph or input rejected, 3 run failed\n";

struct Options {
  std::vector<char*> argv;  // as given, for graph-run-cuda
  std::string argv0;
  std::string graph;
  std::optional<std::string> entry;
  std::vector<std::pair<std::string, std::string>> inputs;  // name, file
  std::optional<std::string> output_dir;
  std::string device = "cpu";
  int threads = 1;
  int bench = 0;
  bool profile = false;
  int max_depth = 10000;
  size_t max_memory = 0;                 // 0: no limit
  std::chrono::microseconds timeout{0};  // 0: no limit
  bool verify_data = true;
  bool dynamic_quantization = true;
  bool help = false;
  int steps = 0;  // 0: one run, inputs as they are
  int print_every = 1;
  std::optional<std::string> load_variables, save_variables;
};

// A failure on its way to an exit status.
struct Failure {
  int exit_code;
  std::string message;
};

Failure usage_error(std::string message) { return {kExitUsage, std::move(message)}; }

// Run-time failures already carry "FILE:LINE:COL: error: ..." and are printed as is.
bool has_source_location(const std::string& m) {
  const size_t e = m.find(": error: ");
  if (e == std::string::npos) return false;
  const size_t col = m.rfind(':', e - 1);
  if (col == std::string::npos || col + 1 >= e) return false;
  const size_t line = m.rfind(':', col - 1);
  if (line == std::string::npos || line + 1 >= col || line == 0) return false;
  const auto digits = [&](size_t b, size_t end) {
    return std::all_of(m.begin() + long(b), m.begin() + long(end), [](char c) { return c >= '0' && c <= '9'; });
  };
  return digits(line + 1, col) && digits(col + 1, e);
}

int exit_code_for(StatusCode code, bool running) {
  switch (code) {
    case StatusCode::kOk: return kExitOk;
    case StatusCode::kInvalidArgument: return kExitUsage;
    case StatusCode::kInvalidGraph:
    case StatusCode::kInvalidInput:
    case StatusCode::kNotFound: return kExitRejected;
    case StatusCode::kRuntimeError:
    case StatusCode::kLimitExceeded:
    case StatusCode::kCancelled:
    case StatusCode::kDeadlineExceeded: return kExitRunFailed;
    // Memory that runs out while the graph loads or its inputs bind (a copy of the
    // file, packed weights, a Session's plan) rejects the graph: exit 2, as SPEC
    // section 9 puts everything before the run; during the run it is a limit.
    case StatusCode::kOutOfMemory:
    case StatusCode::kUnsupported:
    case StatusCode::kInternal: return running ? kExitRunFailed : kExitRejected;
  }
  return kExitRunFailed;
}

Failure from_status(const Status& s, bool running) {
  return {exit_code_for(s.code(), running), s.message()};
}

std::optional<int> parse_count(std::string_view text, int min_value, int max_value) {
  int v = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size() || v < min_value || v > max_value) return std::nullopt;
  return v;
}

// "4096", "512K", "64M", "2G" (1024-based); nullopt unless positive and in range.
std::optional<size_t> parse_size(std::string_view text) {
  uint64_t shift = 0;
  if (!text.empty()) {
    switch (text.back()) {
      case 'K': case 'k': shift = 10; break;
      case 'M': case 'm': shift = 20; break;
      case 'G': case 'g': shift = 30; break;
      default: break;
    }
    if (shift) text.remove_suffix(1);
  }
  uint64_t v = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size() || v == 0 || v > (SIZE_MAX >> shift)) return std::nullopt;
  return size_t(v << shift);
}

// "2", "0.25": microseconds, at least 1; nullopt unless positive and at most a day.
std::optional<std::chrono::microseconds> parse_seconds(std::string_view text) {
  const std::string s(text);
  char* end = nullptr;
  const double seconds = std::strtod(s.c_str(), &end);
  if (s.empty() || end != s.c_str() + s.size() || !(seconds > 0) || seconds > 86400) return std::nullopt;
  return std::chrono::microseconds(std::max<int64_t>(1, int64_t(seconds * 1e6)));
}

std::optional<Failure> parse_args(int argc, char** argv, Options* o) {
  std::vector<std::string_view> args(argv + 1, argv + argc);
  for (size_t i = 0; i < args.size(); ++i) {
    std::string_view arg = args[i];
    std::optional<std::string_view> inline_value;
    if (arg.starts_with("--") && arg.find('=') != std::string_view::npos) {
      inline_value = arg.substr(arg.find('=') + 1);
      arg = arg.substr(0, arg.find('='));
    }
    const auto value = [&]() -> std::optional<std::string_view> {
      if (inline_value) return inline_value;
      if (i + 1 < args.size()) return args[++i];
      return std::nullopt;
    };
    const auto count = [&](int* out, int min_value, int max_value = INT_MAX) -> std::optional<Failure> {
      const auto v = value();
      if (!v) return usage_error(std::string(arg) + " needs a value");
      const auto n = parse_count(*v, min_value, max_value);
      if (!n)
        return usage_error("bad value '" + std::string(*v) + "' for " + std::string(arg) + " (expected an integer " +
                           (max_value == INT_MAX ? ">= " + std::to_string(min_value)
                                                 : "from " + std::to_string(min_value) + " to " +
                                                       std::to_string(max_value)) +
                           ")");
      *out = *n;
      return std::nullopt;
    };
    const bool is_flag = arg == "--profile" || arg == "--verify-data" || arg == "--no-verify-data" ||
                         arg == "--weight-only-quant" || arg == "--help" || arg == "-h";
    if (is_flag && inline_value) return usage_error(std::string(arg) + " takes no value");

    if (arg == "-h" || arg == "--help") {
      o->help = true;
    } else if (arg == "--profile") {
      o->profile = true;
    } else if (arg == "--weight-only-quant") {
      o->dynamic_quantization = false;
    } else if (arg == "--verify-data" || arg == "--no-verify-data") {
      o->verify_data = arg == "--verify-data";
    } else if (arg == "--threads") {
      if (auto f = count(&o->threads, INT_MIN)) return f;
      const Status threads = check_num_threads(o->threads);
      if (!threads.ok()) return usage_error("--threads: " + threads.message());
    } else if (arg == "--bench") {
      if (auto f = count(&o->bench, 1)) return f;
    } else if (arg == "--steps") {
      if (auto f = count(&o->steps, 1)) return f;
    } else if (arg == "--print-every") {
      if (auto f = count(&o->print_every, 1)) return f;
    } else if (arg == "--load-variables" || arg == "--save-variables") {
      const auto v = value();
      if (!v) return usage_error(std::string(arg) + " needs a value");
      (arg == "--load-variables" ? o->load_variables : o->save_variables) = std::string(*v);
    } else if (arg == "--max-depth") {
      if (auto f = count(&o->max_depth, 1)) return f;
    } else if (arg == "--max-memory") {
      const auto v = value();
      if (!v) return usage_error("--max-memory needs a value");
      const auto bytes = parse_size(*v);
      if (!bytes)
        return usage_error("bad value '" + std::string(*v) +
                           "' for --max-memory (expected a positive size: bytes, or a number with K, M or G)");
      o->max_memory = *bytes;
    } else if (arg == "--timeout") {
      const auto v = value();
      if (!v) return usage_error("--timeout needs a value");
      const auto us = parse_seconds(*v);
      if (!us) return usage_error("bad value '" + std::string(*v) + "' for --timeout (expected seconds > 0, e.g. 2.5)");
      o->timeout = *us;
    } else if (arg == "--entry" || arg == "--output-dir" || arg == "--device" || arg == "--input") {
      const auto v = value();
      if (!v) return usage_error(std::string(arg) + " needs a value");
      if (arg == "--entry") {
        if (o->entry) return usage_error("--entry given twice; graph-run runs one entry point");
        o->entry = std::string(*v);
      } else if (arg == "--output-dir") {
        o->output_dir = std::string(*v);
      } else if (arg == "--device") {
        o->device = std::string(*v);  // parsed by Session::create: a bad one is exit 1
      } else {
        const size_t eq = v->find('=');
        if (eq == std::string_view::npos || eq == 0 || eq + 1 == v->size())
          return usage_error("bad --input '" + std::string(*v) + "' (expected NAME=FILE.npy)");
        const std::string name(v->substr(0, eq));
        for (const auto& [n, f] : o->inputs)
          if (n == name) return usage_error("input '" + name + "' given twice");
        o->inputs.emplace_back(name, std::string(v->substr(eq + 1)));
      }
    } else if (arg.starts_with("-") && arg.size() > 1) {
      return usage_error("unknown option '" + std::string(arg) + "'");
    } else {
      if (!o->graph.empty())
        return usage_error("more than one graph file given ('" + o->graph + "', '" + std::string(arg) + "')");
      o->graph = std::string(arg);
    }
  }
  if (!o->help && o->graph.empty()) return usage_error("no graph file given");
  return std::nullopt;
}

std::string list_entries(const Program& program) {
  std::string s;
  for (const EntryInfo& e : program.entries()) s += (s.empty() ? "" : ", ") + e.name;
  return s;
}

std::optional<Failure> choose_entry(const Program& program, const Options& o, std::string* entry) {
  if (o.entry) {
    if (!program.find_entry(*o.entry))
      return usage_error("no entry point '" + *o.entry + "' in " + o.graph + " (it has: " +
                         list_entries(program) + ")");
    *entry = *o.entry;
    return std::nullopt;
  }
  if (program.entries().empty()) return Failure{kExitRejected, o.graph + " has no entry points"};
  if (program.entries().size() > 1)
    return usage_error(o.graph + " has several entry points; choose one with --entry: " +
                       list_entries(program));
  *entry = program.entries()[0].name;
  return std::nullopt;
}

// Every --input names a parameter of the entry.
std::optional<Failure> check_input_names(const EntryInfo& entry, const Options& o) {
  std::string params;
  for (const TensorSpec& in : entry.inputs) params += (params.empty() ? "" : ", ") + in.name;
  for (const auto& input : o.inputs) {
    const std::string& name = input.first;  // a plain reference: clang 14 cannot capture a structured binding
    const bool known = std::any_of(entry.inputs.begin(), entry.inputs.end(),
                                   [&](const TensorSpec& s) { return s.name == name; });
    if (!known)
      return Failure{kExitRejected, "unknown input '" + name + "'; entry '" + entry.name +
                                        "' takes: " + (params.empty() ? "no inputs" : params)};
  }
  return std::nullopt;
}

std::optional<Failure> bind_inputs(Session& session, const Options& o) {
  const EntryInfo& entry = session.entry();
  if (auto f = check_input_names(entry, o)) return f;
  for (const TensorSpec& in : entry.inputs) {
    const auto given = std::find_if(o.inputs.begin(), o.inputs.end(),
                                    [&](const auto& p) { return p.first == in.name; });
    if (given == o.inputs.end())
      return Failure{kExitRejected, "missing input '" + in.name + "' (" + dtype_name(in.dtype) +
                                        in.shape_string() + "); pass --input " + in.name + "=FILE.npy"};
    Result<Tensor> value = read_npy(given->second);
    if (!value.ok())
      return Failure{kExitRejected, "input '" + in.name + "': " + value.status().message()};
    const Status s = session.set_input(in.name, std::move(value).value());
    if (!s.ok()) {
      const bool named = s.message().find("'" + in.name + "'") != std::string::npos;
      return Failure{exit_code_for(s.code(), false),
                     named ? s.message() : "input '" + in.name + "': " + s.message()};
    }
  }
  return std::nullopt;
}

// --steps: the inputs as datasets, one item per step (cycling), each step's outputs
// printed as "step I: NAME = ..." (every --print-every'th, and the last).
std::optional<Failure> run_steps(Session& session, const Options& o) {
  const EntryInfo& entry = session.entry();
  if (auto f = check_input_names(entry, o)) return f;
  std::vector<Tensor> data;
  for (const TensorSpec& in : entry.inputs) {
    const auto given = std::find_if(o.inputs.begin(), o.inputs.end(), [&](const auto& p) { return p.first == in.name; });
    if (given == o.inputs.end())
      return Failure{kExitRejected, "missing input '" + in.name + "'; with --steps pass --input " + in.name +
                                        "=FILE.npy holding one " + dtype_name(in.dtype) + in.shape_string() +
                                        " per step along a leading dim"};
    Result<Tensor> value = read_npy(given->second);
    if (!value.ok()) return Failure{kExitRejected, "input '" + in.name + "': " + value.status().message()};
    if (value->rank() != int(in.shape.size()) + 1 || value->dim(0) < 1)
      return Failure{kExitRejected, "input '" + in.name + "': with --steps its file needs a leading dim of steps before " +
                                        dtype_name(in.dtype) + in.shape_string() + "; it is " + describe(*value)};
    data.push_back(std::move(value).value());
  }
  set_out_of_memory_exit_code(kExitRunFailed);
  for (int step = 0; step < o.steps; ++step) {
    for (size_t k = 0; k < data.size(); ++k) {
      const Tensor& all = data[k];
      const int64_t item = step % all.dim(0);
      const Span<const int64_t> shape = all.shape();
      const std::vector<int64_t> dims(shape.begin() + 1, shape.end());
      const size_t bytes = all.nbytes() / size_t(all.dim(0));
      const Tensor view = Tensor::wrap(all.dtype(), Span<const int64_t>(dims),
                                       static_cast<const uint8_t*>(all.data()) + size_t(item) * bytes);
      const Status s = session.set_input(entry.inputs[k].name, view);
      if (!s.ok()) return Failure{exit_code_for(s.code(), false), "step " + std::to_string(step) + ": " + s.message()};
    }
    const Status s = session.run();
    if (!s.ok()) {
      std::fprintf(stderr, "graph-run: step %d of %d failed\n", step, o.steps);
      return from_status(s, true);
    }
    if (step % o.print_every != 0 && step != o.steps - 1) continue;
    for (size_t i = 0; i < session.num_outputs(); ++i) {
      const Result<Tensor> got = session.output_view(i);
      if (!got.ok()) return Failure{kExitRunFailed, got.status().message()};
      std::printf("step %d: %s = %s\n", step, entry.outputs[i].name.c_str(), format_values(*got, kSummaryItems).c_str());
    }
  }
  return std::nullopt;
}

std::string safe_file_name(const std::string& name) {
  std::string s = name;
  for (char& c : s)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.')) c = '_';
  if (s.empty() || s == "." || s == "..") s = "_" + s;
  return s;
}

std::optional<Failure> report_outputs(const Session& session, const Options& o) {
  const EntryInfo& entry = session.entry();
  if (o.output_dir) {
    // Dict keys are free text: two that map to one file name ("a/b", "a_b") would
    // leave one result silently overwritten by the other.
    std::map<std::string, std::string> files;
    for (const TensorSpec& out : entry.outputs) {
      const auto [it, fresh] = files.emplace(safe_file_name(out.name) + ".npy", out.name);
      if (!fresh)
        return Failure{kExitRunFailed, "outputs '" + it->second + "' and '" + out.name +
                                           "' would both be written to " +
                                           (std::filesystem::path(*o.output_dir) / it->first).string()};
    }
    std::error_code ec;
    std::filesystem::create_directories(*o.output_dir, ec);
    if (ec) return Failure{kExitRunFailed, "cannot create output directory '" + *o.output_dir + "': " + ec.message()};
  }
  std::string replaced_files;
  for (size_t i = 0; i < session.num_outputs(); ++i) {
    const std::string name = i < entry.outputs.size() ? entry.outputs[i].name : "output_" + std::to_string(i);
    const Result<Tensor> got = session.output(i);
    if (!got.ok()) return Failure{kExitRunFailed, got.status().message()};
    const Tensor& t = *got;
    std::printf("%s: %s = %s\n", name.c_str(), describe(t).c_str(), format_values(t, kSummaryItems).c_str());
    if (o.output_dir) {
      // Never through a link (it could point anywhere outside the directory),
      // never over a device or FIFO; an existing regular file is replaced, and said.
      const std::string file = safe_file_name(name) + ".npy";
      const std::string path = (std::filesystem::path(*o.output_dir) / file).string();
      bool replaced = false;
      const Status s = write_npy(path, t, &replaced);
      if (!s.ok()) return Failure{kExitRunFailed, s.message()};
      if (replaced) replaced_files += (replaced_files.empty() ? "" : ", ") + file;
    }
  }
  if (!replaced_files.empty())
    std::fprintf(stderr, "graph-run: note: replaced existing files in %s: %s\n", o.output_dir->c_str(),
                 replaced_files.c_str());
  return std::nullopt;
}

std::optional<Failure> run_bench(Session& session, int runs) {
  // Warm-up beyond the first run: a fresh process still has cold caches, page
  // tables and branch predictors, and a CPU at its idle clock, for the next few
  // milliseconds (a 1,000-node graph read 0.019 to 0.037 ms in its first 4 runs).
  // In-process peers stay warm between their rounds; so untimed runs go on for
  // 20 ms, at least 3 of them.
  const auto warm_start = std::chrono::steady_clock::now();
  for (int i = 0; i < 100000; ++i) {
    if (i >= 3 && std::chrono::steady_clock::now() - warm_start >= std::chrono::milliseconds(20)) break;
    const Status s = session.run();
    if (!s.ok()) return from_status(s, true);
  }
  std::vector<double> ms;
  for (int i = 0; i < runs; ++i) {
    const auto start = std::chrono::steady_clock::now();
    const Status s = session.run();
    const auto stop = std::chrono::steady_clock::now();
    if (!s.ok()) return from_status(s, true);
    ms.push_back(std::chrono::duration<double, std::milli>(stop - start).count());
  }
  std::sort(ms.begin(), ms.end());
  const size_t n = ms.size();
  const double median = n % 2 ? ms[n / 2] : (ms[n / 2 - 1] + ms[n / 2]) / 2;
  std::printf("bench: %d runs, min %.3f ms, median %.3f ms, max %.3f ms\n", runs, ms.front(), median,
              ms.back());
  return std::nullopt;
}

void print_profile(const Session& session) {
  const std::vector<NodeProfile> nodes = session.profile();
  struct Total { uint64_t calls = 0, ns = 0; };
  std::map<std::string, Total> by_op;
  uint64_t all_ns = 0;
  for (const NodeProfile& p : nodes) {
    by_op[p.op].calls += p.calls;
    by_op[p.op].ns += p.total_ns;
    all_ns += p.total_ns;
  }
  std::vector<std::pair<std::string, Total>> ops(by_op.begin(), by_op.end());
  std::stable_sort(ops.begin(), ops.end(), [](const auto& a, const auto& b) { return a.second.ns > b.second.ns; });
  const auto share = [&](uint64_t ns) { return all_ns ? 100.0 * double(ns) / double(all_ns) : 0.0; };
  std::printf("profile: time per op kind\n  %-20s %10s %12s %7s\n", "op", "calls", "total ms", "share");
  for (const auto& [op, t] : ops)
    std::printf("  %-20s %10llu %12.3f %6.1f%%\n", op.c_str(), static_cast<unsigned long long>(t.calls),
                double(t.ns) / 1e6, share(t.ns));
  std::vector<NodeProfile> sorted = nodes;
  std::stable_sort(sorted.begin(), sorted.end(), [](const auto& a, const auto& b) { return a.total_ns > b.total_ns; });
  std::printf("profile: time per node\n  %-16s %5s %-14s %-30s %-28s %8s %12s\n", "function", "node", "op",
              "kernel", "location", "calls", "total ms");
  for (const NodeProfile& p : sorted)
    std::printf("  %-16s %5u %-14s %-30s %-28s %8llu %12.3f\n", p.function.c_str(), p.node, p.op.c_str(),
                p.kernel.c_str(), p.location.c_str(), static_cast<unsigned long long>(p.calls),
                double(p.total_ns) / 1e6);
  bool tapes = false;
  for (const NodeProfile& p : nodes) {
    if (p.tape_bytes == 0) continue;
    if (!tapes) std::printf("profile: gradient tapes (what a loop or a recursion keeps per run for its backward)\n");
    tapes = true;
    std::printf("  %-28s %12llu bytes\n", p.location.c_str(), static_cast<unsigned long long>(p.tape_bytes));
  }
  const ScheduleStats sched = session.schedule_stats();
  std::printf("profile: threads\n  %d%s; %llu waves ran %llu nodes\n", sched.threads,
              sched.threads == 1 ? "" : sched.team ? " (team)" : " (pool)",
              static_cast<unsigned long long>(sched.waves), static_cast<unsigned long long>(sched.wave_nodes));
  const MemoryReport m = session.memory_report();
  const double ratio = m.lower_bound_bytes ? double(m.arena_bytes) / double(m.lower_bound_bytes) : 1.0;
  std::printf("profile: memory\n  arena %zu bytes, lower bound %zu bytes (%.3fx); frame stack %zu bytes; "
              "prepared kernels %zu bytes\n",
              m.arena_bytes, m.lower_bound_bytes, ratio, m.frame_stack_bytes, m.kernel_bytes);
}

// --device as a value: null for the CPU. Without the GPU there: "no CUDA device:
// ..." (kUnsupported), exit 2; a malformed name: kInvalidArgument, exit 1.
Result<std::shared_ptr<const Device>> choose_device(const std::string& name) {
  if (name == "cpu") return std::shared_ptr<const Device>();
  if (name == "test") return test_device();
  const auto bad = [&] {
    return Status(StatusCode::kInvalidArgument,
                  "invalid device '" + name + "' (expected cpu, test, cuda or cuda:N, N a device index)");
  };
  if (name.rfind("cuda", 0) != 0) return bad();
  int index = 0;
  if (name.size() > 4) {
    if (name[4] != ':' || name.size() == 5 || name.size() > 9) return bad();
    for (size_t i = 5; i < name.size(); ++i) {
      if (name[i] < '0' || name[i] > '9') return bad();
      index = index * 10 + (name[i] - '0');
    }
  }
#ifdef SG_WITH_CUDA
  return cuda_device(index);
#else
  (void)index;
  return Status(StatusCode::kInvalidArgument, "--device " + name + ": this build of graph-run has no CUDA support");
#endif
}

std::optional<Failure> run_tool(const Options& o) {
#if defined(SG_CUDA_SIBLING)
  // The CUDA half of graph-run is its own executable (graph-run-cuda, beside
  // this one), so that a CPU run never loads the CUDA libraries (cuBLASLt alone
  // maps half a gigabyte and costs ~0.2 s per start).
  if (o.device.rfind("cuda", 0) == 0) {
    std::error_code ec;
    const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", ec);
    const std::string sibling = (ec ? std::filesystem::path(o.argv0).parent_path() : self.parent_path()) /
                                "graph-run-cuda";
    std::vector<char*> args(o.argv.begin(), o.argv.end());
    args.push_back(nullptr);
    execv(sibling.c_str(), args.data());
    return Failure{kExitRejected, "--device " + o.device + ": cannot start " + sibling + " (" +
                                      std::strerror(errno) + "), the CUDA half of graph-run"};
  }
#elif !defined(SG_WITH_CUDA)
  if (o.device.rfind("cuda", 0) == 0)
    return usage_error("--device " + o.device + ": this build of graph-run has no CUDA support");
#endif
  LoadOptions load;
  load.verify_data = o.verify_data;
  load.dynamic_quantization = o.dynamic_quantization;
  auto program = Program::load_file(o.graph, load);
  if (!program.ok()) return from_status(program.status(), false);

  std::string entry;
  if (auto f = choose_entry(**program, o, &entry)) return f;

  SessionOptions options;
  options.num_threads = o.threads;
  options.max_call_depth = o.max_depth;
  options.memory_limit_bytes = o.max_memory;
  options.run_timeout = o.timeout;
  options.profile = o.profile;
  auto device = choose_device(o.device);
  if (!device.ok()) return from_status(device.status(), false);
  options.device = *device;
  auto session = Session::create(*program, entry, options);
  if (!session.ok()) return from_status(session.status(), false);
  if (const int used = (*session)->schedule_stats().threads; used < o.threads)
    std::fprintf(stderr,
                 "graph-run: note: running on %d of the %d threads asked (no more CPUs to run on, or no more "
                 "threads could start)\n",
                 used, o.threads);

  if (o.load_variables) {
    const Status loaded = (*session)->load_variables(*o.load_variables);
    if (!loaded.ok()) return Failure{kExitRejected, "--load-variables: " + loaded.message()};
  }
  if (o.steps > 0) {
    if (auto f = run_steps(**session, o)) return f;
  } else {
    if (auto f = bind_inputs(**session, o)) return f;
    set_out_of_memory_exit_code(kExitRunFailed);
    const Status s = (*session)->run();
    if (!s.ok()) return from_status(s, true);
    if (auto f = report_outputs(**session, o)) return f;
  }
  if (o.save_variables) {
    const Status saved = (*session)->save_variables(*o.save_variables);
    if (!saved.ok()) return Failure{kExitRunFailed, "--save-variables: " + saved.message()};
  }
  if (o.bench > 0)
    if (auto f = run_bench(**session, o.bench)) return f;
  if (o.profile) print_profile(**session);
  return std::nullopt;
}

int tool_main(int argc, char** argv);

}  // namespace
}  // namespace sg::tools

int main(int argc, char** argv) {
  using namespace sg::tools;
  exit_on_out_of_memory("graph-run", kExitRejected);
  return guard_out_of_memory([&] { return tool_main(argc, argv); });
}

namespace sg::tools {
namespace {

int tool_main(int argc, char** argv) {
  Options options;
  options.argv.assign(argv, argv + argc);
  options.argv0 = argc > 0 ? argv[0] : "graph-run";
  std::optional<Failure> failure = parse_args(argc, argv, &options);
  if (!failure && options.help) {
    std::fputs(kUsage, stdout);
    return kExitOk;
  }
  if (!failure) failure = run_tool(options);
  if (!failure) return kExitOk;
  if (has_source_location(failure->message)) {
    std::fprintf(stderr, "%s\n", failure->message.c_str());
  } else {
    std::fprintf(stderr, "graph-run: error: %s\n", failure->message.c_str());
  }
  if (failure->exit_code == kExitUsage && failure->message.find("entry point") == std::string::npos)
    std::fputs("run 'graph-run --help' for usage\n", stderr);
  return failure->exit_code;
}

}  // namespace
}  // namespace sg::tools
