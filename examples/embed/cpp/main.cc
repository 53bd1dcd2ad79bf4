// A C++ application that embeds the Stagegraph runtime: it loads a graph compiled
// from examples/mlp.py, runs it on inputs it makes, and checks the probabilities
// against the same network computed here with plain loops.
//
//   graph-compile examples/mlp.py -o mlp.sgraph
//   cmake -S examples/embed/cpp -B build-embed -DCMAKE_PREFIX_PATH=PREFIX
//   cmake --build build-embed && build-embed/embed_cpp mlp.sgraph
#include <stagegraph/runtime.h>
#include <stagegraph/version.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <string>
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

// Binds a matrix (or, with one row, a vector) as the input `name`.
sg::Status bind(sg::Session& session, const std::string& name, const Matrix& m, bool vector) {
  const std::vector<int64_t> shape = vector ? std::vector<int64_t>{m.cols} : std::vector<int64_t>{m.rows, m.cols};
  sg::Result<sg::Tensor> t = sg::Tensor::empty(sg::DType::kF32, shape);
  if (!t.ok()) return t.status();
  std::copy(m.data.begin(), m.data.end(), t->data_as<float>());
  return session.set_input(name, *t);
}

int fail(const sg::Status& status) {
  std::fprintf(stderr, "error: %s\n", status.message().c_str());
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s mlp.sgraph\n", argv[0]);
    return 2;
  }
  const sg::LibraryVersion version = sg::library_version();
  std::printf("stagegraph %s (built against %s), graph format %u\n", version.string, STAGEGRAPH_VERSION_STRING,
              unsigned(version.format_major));

  auto program = sg::Program::load_file(argv[1]);
  if (!program.ok()) return fail(program.status());
  auto session = sg::Session::create(*program, "mlp");
  if (!session.ok()) return fail(session.status());

  uint32_t seed = 1;
  const Matrix x = random_matrix(3, 784, 1.0f, seed);
  const Matrix w1 = random_matrix(784, 512, 0.05f, seed), b1 = random_matrix(1, 512, 0.1f, seed);
  const Matrix w2 = random_matrix(512, 512, 0.05f, seed), b2 = random_matrix(1, 512, 0.1f, seed);
  const Matrix w3 = random_matrix(512, 10, 0.05f, seed), b3 = random_matrix(1, 10, 0.1f, seed);
  const struct {
    const char* name;
    const Matrix& value;
    bool vector;
  } inputs[] = {{"x", x, false},   {"w1", w1, false}, {"b1", b1, true}, {"w2", w2, false},
                {"b2", b2, true},  {"w3", w3, false}, {"b3", b3, true}};
  for (const auto& input : inputs) {
    sg::Status s = bind(**session, input.name, input.value, input.vector);
    if (!s.ok()) return fail(s);
  }
  sg::Status s = (*session)->run();
  if (!s.ok()) return fail(s);
  sg::Result<sg::Tensor> output = (*session)->output(0);
  if (!output.ok()) return fail(output.status());
  const sg::Tensor& probs = *output;

  const Matrix expected = dense(dense(dense(x, w1, b1, false), w2, b2, false), w3, b3, true);
  if (probs.rank() != 2 || probs.dim(0) != expected.rows || probs.dim(1) != expected.cols) {
    std::fprintf(stderr, "error: output has the wrong shape\n");
    return 1;
  }
  double worst = 0;
  for (int64_t r = 0; r < expected.rows; ++r) {
    const float* row = probs.data_as<float>() + r * expected.cols;
    std::printf("row %lld: class %lld, p = %.4f\n", static_cast<long long>(r),
                static_cast<long long>(std::max_element(row, row + expected.cols) - row),
                double(*std::max_element(row, row + expected.cols)));
    for (int64_t c = 0; c < expected.cols; ++c) worst = std::max(worst, std::fabs(double(row[c]) - expected.at(r, c)));
  }
  std::printf("largest difference from the plain loops: %.2g\n", worst);
  return worst <= 1e-4 ? 0 : 1;
}
