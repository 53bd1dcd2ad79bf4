// The C++ side of bench/python/overhead.py: the per-call time of a one-node graph
// through the C++ API, as the Python binding makes each call: bind the input
// (Tensor::wrap of caller memory), run, take the output (Session::output). The
// Python figures are read against these.
//
//   sg_python_overhead_probe GRAPH.sgraph ELEMENTS CALLS REPEATS
//
// The entry takes one f32[ELEMENTS]. Prints one JSON line: call_ns (bind, run,
// output) and run_ns (run alone, input bound once), each the median of REPEATS
// timings of CALLS calls.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "stagegraph/runtime.h"

namespace {

using Clock = std::chrono::steady_clock;

int fail(const char* what, const sg::Status& s) {
  std::fprintf(stderr, "sg_python_overhead_probe: %s: %s\n", what, s.message().c_str());
  return 2;
}

template <class F>
double median_ns(int calls, int repeats, F&& f) {
  std::vector<double> per_call;
  for (int r = 0; r < repeats; ++r) {
    const auto t0 = Clock::now();
    for (int i = 0; i < calls; ++i) f();
    per_call.push_back(std::chrono::duration<double, std::nano>(Clock::now() - t0).count() / calls);
  }
  std::sort(per_call.begin(), per_call.end());
  return per_call[per_call.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 5) {
    std::fprintf(stderr, "usage: sg_python_overhead_probe GRAPH.sgraph ELEMENTS CALLS REPEATS\n");
    return 1;
  }
  const int64_t n = std::atoll(argv[2]);
  const int calls = std::atoi(argv[3]);
  const int repeats = std::atoi(argv[4]);
  if (n <= 0 || calls <= 0 || repeats <= 0) {
    std::fprintf(stderr, "sg_python_overhead_probe: ELEMENTS, CALLS and REPEATS must be positive\n");
    return 1;
  }
  auto program = sg::Program::load_file(argv[1]);
  if (!program.ok()) return fail("load", program.status());
  if (program.value()->entries().size() != 1) {
    std::fprintf(stderr, "sg_python_overhead_probe: the graph must have one entry\n");
    return 1;
  }
  auto session = sg::Session::create(*program, program.value()->entries()[0].name);
  if (!session.ok()) return fail("session", session.status());
  sg::Session& s = **session;
  std::vector<float> x(size_t(n), 0.5f);
  const int64_t shape[1] = {n};
  bool ok = true;
  auto call = [&] {
    ok &= s.set_input(size_t(0), sg::Tensor::wrap(sg::DType::kF32, sg::Span<const int64_t>(shape, 1), x.data())).ok();
    ok &= s.run().ok();
    auto y = s.output(size_t(0));
    ok &= y.ok();
  };
  call();  // warm: plans, buffers
  const double call_ns = median_ns(calls, repeats, call);
  const double run_ns = median_ns(calls, repeats, [&] { ok &= s.run().ok(); });
  if (!ok) return fail("run", sg::Status(sg::StatusCode::kInternal, "a call failed"));
  std::printf("{\"call_ns\": %.1f, \"run_ns\": %.1f}\n", call_ns, run_ns);
  return 0;
}
