/* A C application that embeds the Stagegraph runtime through its C API: it loads
 * a graph compiled from examples/mlp.py, runs it on inputs it makes (bound without
 * a copy), and checks the probabilities against the same network computed here
 * with plain loops.
 *
 *   graph-compile examples/mlp.py -o mlp.sgraph
 *   make -C examples/embed/c PKG_CONFIG_PATH=PREFIX/lib/pkgconfig BUILD=/tmp/embed-c
 *   /tmp/embed-c/embed_c mlp.sgraph
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <stagegraph/c_api.h>

enum { kBatch = 3, kIn = 784, kHidden = 512, kOut = 10 };

/* Uniform values in [-scale, scale) from a fixed-seed generator. */
static float* random_values(size_t n, float scale, uint32_t* state) {
  float* v = malloc(n * sizeof(float));
  for (size_t i = 0; v != NULL && i < n; ++i) {
    *state = *state * 1664525u + 1013904223u;
    v[i] = scale * ((float)(*state >> 8) / (float)(1u << 24) * 2.0f - 1.0f);
  }
  return v;
}

/* y[rows][cols] = x[rows][inner] @ w[inner][cols] + b, then relu (or nothing). */
static void dense(const float* x, const float* w, const float* b, float* y, int rows, int inner, int cols,
                  int relu) {
  for (int r = 0; r < rows; ++r)
    for (int c = 0; c < cols; ++c) {
      double sum = b[c];
      for (int k = 0; k < inner; ++k) sum += (double)x[r * inner + k] * w[k * cols + c];
      y[r * cols + c] = relu && sum < 0 ? 0.0f : (float)sum;
    }
}

static int fail(const sg_status* status) {
  fprintf(stderr, "error: %s: %s\n", sg_code_name(sg_status_code(status)), sg_status_message(status));
  return 1;
}

int main(int argc, char** argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: %s mlp.sgraph\n", argv[0]);
    return 2;
  }
  printf("stagegraph %s, C API %u\n", sg_version_string(), (unsigned)sg_c_api_version());

  uint32_t seed = 1;
  float* x = random_values(kBatch * kIn, 1.0f, &seed);
  float* w1 = random_values(kIn * kHidden, 0.05f, &seed);
  float* b1 = random_values(kHidden, 0.1f, &seed);
  float* w2 = random_values(kHidden * kHidden, 0.05f, &seed);
  float* b2 = random_values(kHidden, 0.1f, &seed);
  float* w3 = random_values(kHidden * kOut, 0.05f, &seed);
  float* b3 = random_values(kOut, 0.1f, &seed);
  float* h1 = malloc(kBatch * kHidden * sizeof(float));
  float* h2 = malloc(kBatch * kHidden * sizeof(float));
  float* logits = malloc(kBatch * kOut * sizeof(float));
  if (!x || !w1 || !b1 || !w2 || !b2 || !w3 || !b3 || !h1 || !h2 || !logits) return 1;

  sg_status* st = sg_status_create();
  sg_program* program = NULL;
  sg_session* session = NULL;
  if (sg_program_load_file(argv[1], 0, &program, st) != SG_OK) return fail(st);
  if (sg_session_create(program, "mlp", NULL, &session, st) != SG_OK) return fail(st);

  const struct {
    const char* name;
    const float* data;
    int64_t shape[2];
    size_t rank;
  } inputs[] = {{"x", x, {kBatch, kIn}, 2},       {"w1", w1, {kIn, kHidden}, 2}, {"b1", b1, {kHidden}, 1},
                {"w2", w2, {kHidden, kHidden}, 2}, {"b2", b2, {kHidden}, 1},     {"w3", w3, {kHidden, kOut}, 2},
                {"b3", b3, {kOut}, 1}};
  for (size_t i = 0; i < sizeof inputs / sizeof inputs[0]; ++i) {
    size_t n = 1;
    for (size_t d = 0; d < inputs[i].rank; ++d) n *= (size_t)inputs[i].shape[d];
    if (sg_session_set_input(session, inputs[i].name, SG_F32, inputs[i].shape, inputs[i].rank, inputs[i].data,
                             n * sizeof(float), st) != SG_OK)
      return fail(st);
  }
  if (sg_session_run(session, st) != SG_OK) return fail(st);
  const void* data = NULL;
  const int64_t* shape = NULL;
  size_t rank = 0;
  sg_dtype dtype = 0;
  if (sg_session_output(session, 0, &data, &dtype, &shape, &rank, st) != SG_OK) return fail(st);
  if (dtype != SG_F32 || rank != 2 || shape[0] != kBatch || shape[1] != kOut) {
    fprintf(stderr, "error: output is not f32[%d, %d]\n", kBatch, kOut);
    return 1;
  }
  const float* probs = data;

  /* The same network: relu(x @ w1 + b1), relu(. @ w2 + b2), softmax(. @ w3 + b3). */
  dense(x, w1, b1, h1, kBatch, kIn, kHidden, 1);
  dense(h1, w2, b2, h2, kBatch, kHidden, kHidden, 1);
  dense(h2, w3, b3, logits, kBatch, kHidden, kOut, 0);
  double worst = 0;
  for (int r = 0; r < kBatch; ++r) {
    float top = logits[r * kOut];
    int best = 0;
    for (int c = 1; c < kOut; ++c)
      if (logits[r * kOut + c] > top) top = logits[r * kOut + (best = c)];
    double total = 0;
    for (int c = 0; c < kOut; ++c) total += exp((double)logits[r * kOut + c] - top);
    for (int c = 0; c < kOut; ++c) {
      const double diff = fabs(probs[r * kOut + c] - exp((double)logits[r * kOut + c] - top) / total);
      if (diff > worst) worst = diff;
    }
    printf("row %d: class %d, p = %.4f\n", r, best, (double)probs[r * kOut + best]);
  }
  printf("largest difference from the plain loops: %.2g\n", worst);

  sg_session_release(session);
  sg_program_release(program);
  sg_status_release(st);
  free(x), free(w1), free(b1), free(w2), free(b2), free(w3), free(b3), free(h1), free(h2), free(logits);
  return worst <= 1e-4 ? 0 : 1;
}
