/* A C application that embeds the Stagegraph runtime through its C API: it loads
 * a graph compiled from examples/mlp.py, runs it on inputs it makes (bound without
 * a copy), and checks the probabilities against the same network computed here
 * with plain loops. Then what a server or an app needs around that, each in a
 * function of its own: an output written into the application's buffer, inputs
 * refilled in place, sessions sharing one thread pool, a memory limit, a run
 * timeout, a cancel from another thread, and (given examples/embed/swish.py
 * compiled) a custom op whose kernel is written here.
 *
 *   graph-compile examples/mlp.py -o mlp.sgraph
 *   graph-compile examples/embed/swish.py -o swish.sgraph
 *   make -C examples/embed/c PKG_CONFIG_PATH=PREFIX/lib/pkgconfig BUILD=/tmp/embed-c
 *   /tmp/embed-c/embed_c mlp.sgraph swish.sgraph
 */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <stagegraph/c_api.h>

enum { kBatch = 3, kBig = 2048, kIn = 784, kHidden = 512, kOut = 10 };

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

/* Expects `code` from a call, printing what happened; 0 when it came. */
static int expect(sg_code got, sg_code code, const char* what, const sg_status* st) {
  printf("%s: %s%s%s\n", what, sg_code_name(got), got != SG_OK ? ": " : "", got != SG_OK ? sg_status_message(st) : "");
  if (got == code) return 0;
  fprintf(stderr, "error: %s: expected %s\n", what, sg_code_name(code));
  return 1;
}

/* The weights, and the inputs of a batch of `rows` (x is rows x 784). */
struct mlp {
  float *w1, *b1, *w2, *b2, *w3, *b3;
};

static int bind_mlp(sg_session* s, const struct mlp* m, const float* x, int64_t rows, sg_status* st) {
  const struct {
    const char* name;
    const float* data;
    int64_t shape[2];
    size_t rank;
  } inputs[] = {{"x", x, {rows, kIn}, 2},            {"w1", m->w1, {kIn, kHidden}, 2}, {"b1", m->b1, {kHidden}, 1},
                {"w2", m->w2, {kHidden, kHidden}, 2}, {"b2", m->b2, {kHidden}, 1},      {"w3", m->w3, {kHidden, kOut}, 2},
                {"b3", m->b3, {kOut}, 1}};
  for (size_t i = 0; i < sizeof inputs / sizeof inputs[0]; ++i) {
    size_t n = 1;
    for (size_t d = 0; d < inputs[i].rank; ++d) n *= (size_t)inputs[i].shape[d];
    if (sg_session_set_input(s, inputs[i].name, SG_F32, inputs[i].shape, inputs[i].rank, inputs[i].data,
                             n * sizeof(float), st) != SG_OK)
      return 0;
  }
  return 1;
}

/* The network with plain loops: relu(x @ w1 + b1), relu(. @ w2 + b2), softmax(. @ w3 + b3);
 * the largest difference from `probs`. */
static double check_probs(const struct mlp* m, const float* x, const float* probs) {
  static float h1[kBatch * kHidden], h2[kBatch * kHidden], logits[kBatch * kOut];
  double worst = 0;
  dense(x, m->w1, m->b1, h1, kBatch, kIn, kHidden, 1);
  dense(h1, m->w2, m->b2, h2, kBatch, kHidden, kHidden, 1);
  dense(h2, m->w3, m->b3, logits, kBatch, kHidden, kOut, 0);
  for (int r = 0; r < kBatch; ++r) {
    float top = logits[r * kOut];
    for (int c = 1; c < kOut; ++c)
      if (logits[r * kOut + c] > top) top = logits[r * kOut + c];
    double total = 0;
    for (int c = 0; c < kOut; ++c) total += exp((double)logits[r * kOut + c] - top);
    for (int c = 0; c < kOut; ++c) {
      const double diff = fabs(probs[r * kOut + c] - exp((double)logits[r * kOut + c] - top) / total);
      if (diff > worst) worst = diff;
    }
  }
  return worst;
}

/* Output 0 written straight into the application's buffer by every run, and x
 * refilled in place between runs: bound memory is read afresh by each run. */
static int show_bound_memory(sg_session* s, const struct mlp* m, float* x, sg_status* st) {
  float probs[kBatch * kOut];
  const void* data = NULL;
  if (sg_session_bind_output(s, 0, probs, sizeof probs, st) != SG_OK) return fail(st);
  for (int round = 0; round < 2; ++round) {
    for (int i = 0; i < kBatch * kIn; ++i) x[i] = -x[i]; /* new inputs, same buffer, no new bind */
    if (sg_session_run(s, st) != SG_OK || sg_session_output(s, 0, &data, NULL, NULL, NULL, st) != SG_OK)
      return fail(st);
    const double worst = check_probs(m, x, probs);
    printf("bound output, refilled input (round %d): in the buffer: %s, largest difference %.2g\n", round,
           data == (const void*)probs ? "yes" : "no", worst);
    if (data != (const void*)probs || worst > 1e-4) return 1;
  }
  return sg_session_bind_output(s, 0, NULL, 0, st) == SG_OK ? 0 : fail(st);
}

/* Two sessions on one pool of 2 threads (a server's workers share the cores). */
static int show_shared_pool(const sg_program* p, const struct mlp* m, const float* x, sg_status* st) {
  sg_thread_pool* pool = NULL;
  sg_session_options* o = NULL;
  sg_session* s[2] = {NULL, NULL};
  int failed = 0;
  if (sg_thread_pool_create(2, &pool, st) != SG_OK || sg_session_options_create(&o, st) != SG_OK ||
      sg_session_options_set_thread_pool(o, pool, st) != SG_OK)
    return fail(st);
  for (int k = 0; k < 2 && !failed; ++k) {
    const void* probs = NULL;
    failed = sg_session_create(p, "mlp", o, &s[k], st) != SG_OK || !bind_mlp(s[k], m, x, kBatch, st) ||
             sg_session_run(s[k], st) != SG_OK || sg_session_output(s[k], 0, &probs, NULL, NULL, NULL, st) != SG_OK ||
             check_probs(m, x, probs) > 1e-4;
  }
  printf("two sessions sharing a pool of 2 threads: %s\n", failed ? "failed" : "ok");
  sg_session_release(s[0]);
  sg_session_release(s[1]);
  sg_session_options_release(o);
  sg_thread_pool_release(pool); /* the sessions held it */
  return failed ? fail(st) : 0;
}

struct canceller {
  sg_session* session;
  long after_ms;
};

static void* cancel_later(void* arg) {
  const struct canceller* c = arg;
  struct timespec ts = {c->after_ms / 1000, c->after_ms % 1000 * 1000000L};
  nanosleep(&ts, NULL);
  sg_session_cancel(c->session); /* any thread, any time */
  return NULL;
}

/* A batch of 2048 rows (about 2.7 GFLOP) under a 64 KiB memory limit, a 2 ms
 * timeout, and a cancel 5 ms in; the session stays usable after each. */
static int show_limits(const sg_program* p, const struct mlp* m, const float* big, sg_status* st) {
  sg_session_options* o = NULL;
  sg_session* s = NULL;
  pthread_t thread;
  struct canceller c;
  int failures = 0;
  if (sg_session_options_create(&o, st) != SG_OK || sg_session_options_set_memory_limit(o, 64 << 10, st) != SG_OK ||
      sg_session_create(p, "mlp", o, &s, st) != SG_OK || !bind_mlp(s, m, big, kBig, st))
    return fail(st);
  sg_session_options_release(o);
  failures += expect(sg_session_run(s, st), SG_LIMIT_EXCEEDED, "64 KiB memory limit", st);
  sg_session_release(s);

  if (sg_session_options_create(&o, st) != SG_OK || sg_session_options_set_run_timeout_us(o, 2000, st) != SG_OK ||
      sg_session_create(p, "mlp", o, &s, st) != SG_OK || !bind_mlp(s, m, big, kBig, st))
    return fail(st);
  sg_session_options_release(o);
  failures += expect(sg_session_run(s, st), SG_DEADLINE_EXCEEDED, "2 ms timeout", st);

  if (sg_session_set_run_timeout_us(s, 0, st) != SG_OK) return fail(st);
  c.session = s;
  c.after_ms = 5;
  if (pthread_create(&thread, NULL, cancel_later, &c) != 0) return 1;
  failures += expect(sg_session_run(s, st), SG_CANCELLED, "cancel after 5 ms", st);
  pthread_join(thread, NULL);
  /* Still usable: the first 3 rows run. */
  failures += expect(bind_mlp(s, m, big, kBatch, st) ? sg_session_run(s, st) : sg_status_code(st), SG_OK,
                     "the same session, 3 rows", st);
  sg_session_release(s);
  return failures;
}

/* The kernel of my_app.swish: y = x * sigmoid(x). The runtime hands it its output
 * allocated with the dims of the compiled result rule. */
static sg_code swish(void* user, size_t num_inputs, const void* const* inputs, const sg_dtype* input_dtypes,
                     const int64_t* const* input_dims, const size_t* input_ranks, void* output, sg_dtype output_dtype,
                     const int64_t* output_dims, size_t output_rank, const char** message) {
  const float* x = inputs[0];
  float* y = output;
  (void)user, (void)input_dims;
  if (num_inputs != 1 || input_dtypes[0] != SG_F32 || input_ranks[0] != 1 || output_dtype != SG_F32 ||
      output_rank != 1) {
    *message = "my_app.swish: expected one f32 vector";
    return SG_INVALID_INPUT; /* this code ends the run */
  }
  for (int64_t i = 0; i < output_dims[0]; ++i) y[i] = x[i] / (1.0f + expf(-x[i]));
  return SG_OK;
}

static int show_custom_op(const char* path, sg_status* st) {
  sg_program* p = NULL;
  sg_custom_ops* ops = NULL;
  sg_session_options* o = NULL;
  sg_session* s = NULL;
  const float x[3] = {0, 1, -1};
  const int64_t n = 3;
  const void* data = NULL;
  if (sg_program_load_file(path, 0, &p, st) != SG_OK) return fail(st);
  /* Without its kernel the session is refused, naming the op. */
  if (expect(sg_session_create(p, "gate", NULL, &s, st), SG_INVALID_ARGUMENT, "gate without a kernel", st)) return 1;
  if (sg_custom_ops_create(&ops, st) != SG_OK || sg_custom_ops_add(ops, "my_app.swish", swish, NULL, st) != SG_OK ||
      sg_session_options_create(&o, st) != SG_OK || sg_session_options_set_custom_ops(o, ops, st) != SG_OK ||
      sg_session_create(p, "gate", o, &s, st) != SG_OK)
    return fail(st);
  sg_custom_ops_release(ops); /* the session keeps the registry */
  sg_session_options_release(o);
  if (sg_session_set_input(s, "x", SG_F32, &n, 1, x, sizeof x, st) != SG_OK || sg_session_run(s, st) != SG_OK ||
      sg_session_output(s, 0, &data, NULL, NULL, NULL, st) != SG_OK)
    return fail(st);
  const float* y = data;
  printf("gate (2 * my_app.swish(x), the kernel here): %.4f %.4f %.4f\n", y[0], y[1], y[2]);
  sg_session_release(s);
  sg_program_release(p);
  return fabsf(y[1] - 1.4621172f) < 1e-5f && fabsf(y[2] + 0.5378828f) < 1e-5f ? 0 : 1;
}

int main(int argc, char** argv) {
  if (argc != 2 && argc != 3) {
    fprintf(stderr, "usage: %s mlp.sgraph [swish.sgraph]\n", argv[0]);
    return 2;
  }
  printf("stagegraph %s, C API %u\n", sg_version_string(), (unsigned)sg_c_api_version());

  uint32_t seed = 1;
  struct mlp m;
  float* x = random_values(kBatch * kIn, 1.0f, &seed);
  m.w1 = random_values(kIn * kHidden, 0.05f, &seed);
  m.b1 = random_values(kHidden, 0.1f, &seed);
  m.w2 = random_values(kHidden * kHidden, 0.05f, &seed);
  m.b2 = random_values(kHidden, 0.1f, &seed);
  m.w3 = random_values(kHidden * kOut, 0.05f, &seed);
  m.b3 = random_values(kOut, 0.1f, &seed);
  float* big = random_values((size_t)kBig * kIn, 1.0f, &seed);
  if (!x || !m.w1 || !m.b1 || !m.w2 || !m.b2 || !m.w3 || !m.b3 || !big) return 1;

  sg_status* st = sg_status_create();
  sg_program* program = NULL;
  sg_session* session = NULL;
  /* Flags 0: the file's checksums, its weights' included, are checked on load. */
  if (sg_program_load_file(argv[1], 0, &program, st) != SG_OK) return fail(st);
  if (sg_session_create(program, "mlp", NULL, &session, st) != SG_OK) return fail(st);
  if (!bind_mlp(session, &m, x, kBatch, st)) return fail(st);
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
  for (int r = 0; r < kBatch; ++r) {
    int best = 0;
    for (int c = 1; c < kOut; ++c)
      if (probs[r * kOut + c] > probs[r * kOut + best]) best = c;
    printf("row %d: class %d, p = %.4f\n", r, best, (double)probs[r * kOut + best]);
  }
  const double worst = check_probs(&m, x, probs);
  printf("largest difference from the plain loops: %.2g\n", worst);

  int failures = worst <= 1e-4 ? 0 : 1;
  failures += show_bound_memory(session, &m, x, st);
  failures += show_shared_pool(program, &m, x, st);
  failures += show_limits(program, &m, big, st);
  if (argc == 3) failures += show_custom_op(argv[2], st);

  sg_session_release(session);
  sg_program_release(program);
  sg_status_release(st);
  free(x), free(m.w1), free(m.b1), free(m.w2), free(m.b2), free(m.w3), free(m.b3), free(big);
  printf("%s\n", failures == 0 ? "all as expected" : "FAILED");
  return failures == 0 ? 0 : 1;
}
