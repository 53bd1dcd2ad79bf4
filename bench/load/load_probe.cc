// Load to first result in process, through the C++ API: the time from reading the
// graph file (Program::load_file) through Session::create and binding the inputs
// to the end of the first run, as the peers' in-process load is timed
// (bench/peers/probe.py), so that graph-run's process start and dynamic linking
// are not counted. The inputs' .npy files are read before the clock starts (a
// peer gets its inputs as arrays already in memory).
//
//   sg_load_probe GRAPH.sgraph [--threads N] [--input NAME=FILE.npy ...]
//
// prints one JSON line: load_ms (the whole), and its parts program_ms (file to
// Program), session_ms (Session::create) and run_ms (inputs bound, first run);
// and register_loops, the While loops that first run ran on a register file.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <utility>
#include <vector>

#include "npy.h"
#include "stagegraph/runtime.h"

namespace {

using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point t) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t).count();
}

int fail(const std::string& what, const sg::Status& s) {
  std::fprintf(stderr, "sg_load_probe: %s: %s\n", what.c_str(), s.message().c_str());
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: sg_load_probe GRAPH.sgraph [--threads N] [--input NAME=FILE.npy ...]\n");
    return 1;
  }
  const std::string graph = argv[1];
  int threads = 1;
  std::vector<std::pair<std::string, sg::Tensor>> inputs;
  for (int i = 2; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--threads" && i + 1 < argc) {
      threads = std::atoi(argv[++i]);
    } else if (arg == "--input" && i + 1 < argc) {
      const std::string spec = argv[++i];
      const size_t eq = spec.find('=');
      if (eq == std::string::npos) {
        std::fprintf(stderr, "sg_load_probe: --input takes NAME=FILE.npy, got '%s'\n", spec.c_str());
        return 1;
      }
      sg::Result<sg::Tensor> t = sg::tools::read_npy(spec.substr(eq + 1));
      if (!t.ok()) return fail("input '" + spec.substr(0, eq) + "'", t.status());
      inputs.emplace_back(spec.substr(0, eq), std::move(t).value());
    } else {
      std::fprintf(stderr, "sg_load_probe: unknown argument '%s'\n", arg.c_str());
      return 1;
    }
  }

  const Clock::time_point start = Clock::now();
  auto program = sg::Program::load_file(graph, sg::LoadOptions{});
  if (!program.ok()) return fail(graph, program.status());
  const double program_ms = ms_since(start);
  if ((*program)->entries().empty()) {
    std::fprintf(stderr, "sg_load_probe: %s has no entry points\n", graph.c_str());
    return 2;
  }
  const Clock::time_point session_start = Clock::now();
  sg::SessionOptions options;
  options.num_threads = threads;
  auto session = sg::Session::create(*program, (*program)->entries()[0].name, options);
  if (!session.ok()) return fail("session", session.status());
  const double session_ms = ms_since(session_start);
  const Clock::time_point run_start = Clock::now();
  for (auto& [name, value] : inputs) {
    const sg::Status s = (*session)->set_input(name, std::move(value));
    if (!s.ok()) return fail("input '" + name + "'", s);
  }
  const sg::Status s = (*session)->run();
  if (!s.ok()) return fail("run", s);
  const double run_ms = ms_since(run_start), load_ms = ms_since(start);
  std::printf(
      "{\"load_ms\": %.4f, \"program_ms\": %.4f, \"session_ms\": %.4f, \"run_ms\": %.4f, \"register_loops\": %llu}\n",
      load_ms, program_ms, session_ms, run_ms,
      static_cast<unsigned long long>((*session)->schedule_stats().register_loops));
  return 0;
}
