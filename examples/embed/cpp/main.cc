// A C++ application that embeds the Stagegraph runtime: it loads a graph compiled
// from examples/mlp.py, runs it on inputs it makes, and checks the probabilities
// against the same network computed here with plain loops. Then what a server or
// an app needs around that, each in a function of its own: inputs bound in place
// and refilled between runs, an output written into the application's buffer,
// Sessions sharing one thread pool, a memory limit, a run timeout, a cancel from
// another thread, and (given examples/embed/swish.py compiled) a custom op whose
// kernel is written here.
//
//   graph-compile examples/mlp.py -o mlp.sgraph
//   graph-compile examples/embed/swish.py -o swish.sgraph
//   cmake -S examples/embed/cpp -B build-embed -DCMAKE_PREFIX_PATH=PREFIX
//   cmake --build build-embed && build-embed/embed_cpp mlp.sgraph swish.sgraph
#include <stagegraph/runtime.h>
#include <stagegraph/version.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <thread>
#include <vector>

namespace {

struct Matrix {
  int64_t rows = 0, cols = 0;
  std::vector<float> data;
  float& at(int64_t r, int64_t c) { return data[size_t(r * cols + c)]; }
  float at(int64_t r, int64_t c) const { return data[size_t(r * cols + c)]; }
};

// Uniform values in [-scale, scale) from a fixed-seed generator.
Matrix random_matrix(int64_t rows, int64_t cols, float scale, uint32_t& state) {
  Matrix m{rows, cols, std::vector<float>(size_t(rows * cols))};
  for (float& v : m.data) {
    state = state * 1664525u + 1013904223u;
    v = scale * (float(state >> 8) / float(1u << 24) * 2.0f - 1.0f);
  }
  return m;
}

// y = x @ w + b, then relu or a row-wise softmax.
Matrix dense(const Matrix& x, const Matrix& w, const Matrix& b, bool softmax) {
  Matrix y{x.rows, w.cols, std::vector<float>(size_t(x.rows * w.cols))};
  for (int64_t r = 0; r < x.rows; ++r) {
    for (int64_t c = 0; c < w.cols; ++c) {
      double sum = b.data[size_t(c)];
      for (int64_t k = 0; k < x.cols; ++k) sum += double(x.at(r, k)) * w.at(k, c);
      y.at(r, c) = softmax ? float(sum) : std::max(float(sum), 0.0f);
    }
    if (softmax) {
      const float top = *std::max_element(&y.at(r, 0), &y.at(r, 0) + y.cols);
      double total = 0;
      for (int64_t c = 0; c < y.cols; ++c) total += std::exp(double(y.at(r, c)) - top);
      for (int64_t c = 0; c < y.cols; ++c) y.at(r, c) = float(std::exp(double(y.at(r, c)) - top) / total);
    }
  }
  return y;
}

struct Mlp {
  Matrix w1, b1, w2, b2, w3, b3;
  Matrix reference(const Matrix& x) const {
    return dense(dense(dense(x, w1, b1, false), w2, b2, false), w3, b3, true);
  }
};

// Binds x and the weights in place: each run reads them afresh, none is copied.
sg::Status bind(sg::Session& session, const Mlp& m, const Matrix& x) {
  const struct {
    const char* name;
    const Matrix& value;
    bool vector;
  } inputs[] = {{"x", x, false},     {"w1", m.w1, false}, {"b1", m.b1, true}, {"w2", m.w2, false},
                {"b2", m.b2, true},  {"w3", m.w3, false}, {"b3", m.b3, true}};
  for (const auto& in : inputs) {
    const std::vector<int64_t> shape =
        in.vector ? std::vector<int64_t>{in.value.cols} : std::vector<int64_t>{in.value.rows, in.value.cols};
    sg::Status s = session.set_input(in.name, sg::Tensor::wrap(sg::DType::kF32, shape, in.value.data.data()));
    if (!s.ok()) return s;
  }
  return sg::Status::Ok();
}

double largest_difference(const float* probs, const Matrix& expected) {
  double worst = 0;
  for (size_t i = 0; i < expected.data.size(); ++i) worst = std::max(worst, std::fabs(double(probs[i]) - expected.data[i]));
  return worst;
}

int fail(const sg::Status& status) {
  std::fprintf(stderr, "error: %s: %s\n", sg::status_code_name(status.code()), status.message().c_str());
  return 1;
}

// Prints what `got` is; 0 when it has the code expected.
int expect(const sg::Status& got, sg::StatusCode code, const char* what) {
  std::printf("%s: %s%s%s\n", what, sg::status_code_name(got.code()), got.ok() ? "" : ": ", got.message().c_str());
  if (got.code() == code) return 0;
  std::fprintf(stderr, "error: %s: expected %s\n", what, sg::status_code_name(code));
  return 1;
}

// Output 0 written by each run straight into the application's buffer, and x
// refilled in place between runs (no new set_input).
int show_bound_memory(sg::Session& session, const Mlp& m, Matrix& x) {
  std::vector<float> probs(size_t(x.rows * 10));
  sg::Status s = session.bind_output(0, probs.data(), probs.size() * sizeof(float));
  for (int round = 0; s.ok() && round < 2; ++round) {
    for (float& v : x.data) v = -v;
    s = session.run();
    if (!s.ok()) break;
    const double worst = largest_difference(probs.data(), m.reference(x));
    std::printf("bound output, refilled input (round %d): largest difference %.2g\n", round, worst);
    if (worst > 1e-4) return 1;
  }
  if (s.ok()) s = session.bind_output(0, nullptr, 0);
  return s.ok() ? 0 : fail(s);
}

// Two Sessions on one pool of 2 threads (a server's workers share the cores).
int show_shared_pool(const std::shared_ptr<const sg::Program>& program, const Mlp& m, const Matrix& x) {
  auto pool = sg::ThreadPool::create(2);
  if (!pool.ok()) return fail(pool.status());
  sg::SessionOptions options;
  options.thread_pool = *pool;  // every Session holds it
  int failures = 0;
  for (int k = 0; k < 2; ++k) {
    auto session = sg::Session::create(program, "mlp", options);
    if (!session.ok()) return fail(session.status());
    sg::Status s = bind(**session, m, x);
    if (s.ok()) s = (*session)->run();
    if (!s.ok()) return fail(s);
    failures += largest_difference((*session)->output_view(0)->data_as<float>(), m.reference(x)) > 1e-4;
  }
  std::printf("two sessions sharing a pool of 2 threads: %s\n", failures == 0 ? "ok" : "wrong results");
  return failures;
}

// A batch of 2048 rows (about 2.7 GFLOP) under a 64 KiB memory limit, a 2 ms
// timeout and a cancel 5 ms in; the Session stays usable after each.
int show_limits(const std::shared_ptr<const sg::Program>& program, const Mlp& m, const Matrix& big) {
  int failures = 0;
  sg::SessionOptions limited;
  limited.memory_limit_bytes = 64 << 10;
  auto session = sg::Session::create(program, "mlp", limited);
  if (!session.ok()) return fail(session.status());
  sg::Status s = bind(**session, m, big);
  if (!s.ok()) return fail(s);
  failures += expect((*session)->run(), sg::StatusCode::kLimitExceeded, "64 KiB memory limit");

  sg::SessionOptions timed;
  timed.run_timeout = std::chrono::milliseconds(2);
  session = sg::Session::create(program, "mlp", timed);
  if (!session.ok()) return fail(session.status());
  sg::Session& ses = **session;
  s = bind(ses, m, big);
  if (!s.ok()) return fail(s);
  failures += expect(ses.run(), sg::StatusCode::kDeadlineExceeded, "2 ms timeout");

  s = ses.set_run_timeout(std::chrono::microseconds(0));
  if (!s.ok()) return fail(s);
  std::thread canceller([&ses] {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    ses.cancel();  // any thread, any time
  });
  failures += expect(ses.run(), sg::StatusCode::kCancelled, "cancel after 5 ms");
  canceller.join();
  const Matrix three{3, big.cols, std::vector<float>(big.data.begin(), big.data.begin() + 3 * big.cols)};
  s = bind(ses, m, three);
  failures += expect(s.ok() ? ses.run() : s, sg::StatusCode::kOk, "the same session, 3 rows");
  return failures;
}

// The kernel of my_app.swish: y = x * sigmoid(x), into the output the runtime
// allocated with the dims of the compiled result rule.
sg::Status swish(void*, const sg::CustomOpTensor* in, size_t n, const sg::CustomOpTensor* out) {
  if (n != 1 || in[0].dtype != sg::DType::kF32 || out->dtype != sg::DType::kF32 || out->numel() != in[0].numel())
    return sg::invalid_input("my_app.swish: expected one f32 tensor");  // this code ends the run
  const float* x = static_cast<const float*>(in[0].data);
  float* y = static_cast<float*>(out->data);
  for (int64_t i = 0; i < out->numel(); ++i) y[i] = x[i] / (1.0f + std::exp(-x[i]));
  return sg::Status::Ok();
}

int show_custom_op(const char* path) {
  auto program = sg::Program::load_file(path);
  if (!program.ok()) return fail(program.status());
  // Without its kernel the Session is refused, naming the op.
  if (expect(sg::Session::create(*program, "gate").status(), sg::StatusCode::kInvalidArgument,
             "gate without a kernel"))
    return 1;
  sg::CustomOps ops;  // outlives the Session
  sg::Status s = ops.add("my_app.swish", &swish);
  if (!s.ok()) return fail(s);
  sg::SessionOptions options;
  options.custom_ops = &ops;
  auto session = sg::Session::create(*program, "gate", options);
  if (!session.ok()) return fail(session.status());
  const float x[3] = {0, 1, -1};
  s = (*session)->set_input("x", sg::Tensor::wrap(sg::DType::kF32, std::vector<int64_t>{3}, x));
  if (s.ok()) s = (*session)->run();
  if (!s.ok()) return fail(s);
  const float* y = (*session)->output_view(0)->data_as<float>();
  std::printf("gate (2 * my_app.swish(x), the kernel here): %.4f %.4f %.4f\n", y[0], y[1], y[2]);
  return std::fabs(y[1] - 1.4621172f) < 1e-5f && std::fabs(y[2] + 0.5378828f) < 1e-5f ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2 && argc != 3) {
    std::fprintf(stderr, "usage: %s mlp.sgraph [swish.sgraph]\n", argv[0]);
    return 2;
  }
  const sg::LibraryVersion version = sg::library_version();
  std::printf("stagegraph %s (built against %s), graph format %u\n", version.string, STAGEGRAPH_VERSION_STRING,
              unsigned(version.format_major));

  // The file's checksums, its weights' included, are checked on load.
  auto program = sg::Program::load_file(argv[1]);
  if (!program.ok()) return fail(program.status());
  auto session = sg::Session::create(*program, "mlp");
  if (!session.ok()) return fail(session.status());

  uint32_t seed = 1;
  Matrix x = random_matrix(3, 784, 1.0f, seed);
  Mlp m;
  m.w1 = random_matrix(784, 512, 0.05f, seed), m.b1 = random_matrix(1, 512, 0.1f, seed);
  m.w2 = random_matrix(512, 512, 0.05f, seed), m.b2 = random_matrix(1, 512, 0.1f, seed);
  m.w3 = random_matrix(512, 10, 0.05f, seed), m.b3 = random_matrix(1, 10, 0.1f, seed);
  const Matrix big = random_matrix(2048, 784, 1.0f, seed);
  sg::Status s = bind(**session, m, x);
  if (s.ok()) s = (*session)->run();
  if (!s.ok()) return fail(s);
  sg::Result<sg::Tensor> output = (*session)->output(0);  // a copy the caller may keep
  if (!output.ok()) return fail(output.status());
  const sg::Tensor& probs = *output;

  const Matrix expected = m.reference(x);
  if (probs.rank() != 2 || probs.dim(0) != expected.rows || probs.dim(1) != expected.cols) {
    std::fprintf(stderr, "error: output has the wrong shape\n");
    return 1;
  }
  for (int64_t r = 0; r < expected.rows; ++r) {
    const float* row = probs.data_as<float>() + r * expected.cols;
    std::printf("row %lld: class %lld, p = %.4f\n", static_cast<long long>(r),
                static_cast<long long>(std::max_element(row, row + expected.cols) - row),
                double(*std::max_element(row, row + expected.cols)));
  }
  const double worst = largest_difference(probs.data_as<float>(), expected);
  std::printf("largest difference from the plain loops: %.2g\n", worst);

  int failures = worst <= 1e-4 ? 0 : 1;
  failures += show_bound_memory(**session, m, x);
  failures += show_shared_pool(*program, m, x);
  failures += show_limits(*program, m, big);
  if (argc == 3) failures += show_custom_op(argv[2]);
  std::printf("%s\n", failures == 0 ? "all as expected" : "FAILED");
  return failures == 0 ? 0 : 1;
}
