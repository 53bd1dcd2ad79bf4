/* Tests of the C API, written in C and compiled as C99.
 *
 *   capi_test GRAPH TEST [CUSTOM_OP_GRAPH]
 *
 * GRAPH is tests/capi/capi_programs.py compiled by graph-compile; TEST names one
 * of the tests below (ctest runs each on its own); the custom_op test also takes
 * tests/capi/capi_custom.py compiled. Exit 0 when every check holds. */
#define _POSIX_C_SOURCE 200809L

#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "stagegraph/c_api.h"

static int failures = 0;
static const char* graph_path = NULL;
static const char* custom_graph_path = NULL;

#define CHECK(cond)                                                       \
  do {                                                                    \
    if (!(cond)) {                                                        \
      fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
      ++failures;                                                         \
    }                                                                     \
  } while (0)

/* Checks that `call` returned `code`, printing the status otherwise. */
#define CHECK_CODE(call, code, st)                                                          \
  do {                                                                                      \
    sg_code got_ = (call);                                                                  \
    if (got_ != (code)) {                                                                   \
      fprintf(stderr, "%s:%d: %s returned %s (%s), expected %s\n", __FILE__, __LINE__, #call, \
              sg_code_name(got_), sg_status_message(st), sg_code_name(code));               \
      ++failures;                                                                           \
    }                                                                                       \
  } while (0)

#define CHECK_OK(call, st) CHECK_CODE(call, SG_OK, st)
#define CONTAINS(text, part) (strstr((text), (part)) != NULL)

static double now_seconds(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void sleep_ms(long ms) {
  struct timespec ts;
  ts.tv_sec = ms / 1000;
  ts.tv_nsec = (ms % 1000) * 1000000L;
  nanosleep(&ts, NULL);
}

static sg_program* load(sg_status* st) {
  sg_program* p = NULL;
  CHECK_OK(sg_program_load_file(graph_path, 0, &p, st), st);
  return p;
}

static sg_session* session_for(const sg_program* p, const char* entry, const sg_session_options* o,
                               sg_status* st) {
  sg_session* s = NULL;
  CHECK_OK(sg_session_create(p, entry, o, &s, st), st);
  return s;
}

/* The whole file at `path`, in memory from malloc (NULL if it cannot be read). */
static unsigned char* read_file(const char* path, size_t* size) {
  FILE* f = fopen(path, "rb");
  unsigned char* bytes;
  long n;
  if (f == NULL) return NULL;
  fseek(f, 0, SEEK_END);
  n = ftell(f);
  fseek(f, 0, SEEK_SET);
  bytes = (unsigned char*)malloc((size_t)n + 64);
  if (bytes != NULL && fread(bytes, 1, (size_t)n, f) != (size_t)n) {
    free(bytes);
    bytes = NULL;
  }
  fclose(f);
  *size = (size_t)n;
  return bytes;
}

/* The whole graph file, in memory from malloc. */
static unsigned char* read_graph(size_t* size) { return read_file(graph_path, size); }

static const float kX[6] = {1, 2, 3, 4, 5, 6};   /* [2, 3] */
static const float kW[6] = {1, 0, 0, 1, 1, 1};   /* [3, 2] */
static const float kY[4] = {5, 6, 11, 12};       /* x @ w + 1 */

/* Binds x [2, 3] and w, runs affine and checks its output in place. */
static void run_affine(sg_session* s, sg_status* st) {
  const int64_t xs[2] = {2, 3}, ws[2] = {3, 2};
  const void* data = NULL;
  sg_dtype dtype = -1;
  const int64_t* shape = NULL;
  size_t rank = 0;
  CHECK_OK(sg_session_set_input(s, "x", SG_F32, xs, 2, kX, sizeof kX, st), st);
  CHECK_OK(sg_session_set_input(s, "w", SG_F32, ws, 2, kW, sizeof kW, st), st);
  CHECK_OK(sg_session_run(s, st), st);
  CHECK_OK(sg_session_output(s, 0, &data, &dtype, &shape, &rank, st), st);
  CHECK(dtype == SG_F32);
  CHECK(rank == 2);
  if (shape != NULL && rank == 2) CHECK(shape[0] == 2 && shape[1] == 2);
  if (data != NULL) CHECK(memcmp(data, kY, sizeof kY) == 0);
  CHECK(sg_session_output_nbytes(s, 0) == sizeof kY);
}

static void test_version(void) {
  uint16_t major = 0, max_minor = 99;
  char expected[32];
  const uint32_t v = sg_version();
  snprintf(expected, sizeof expected, "%u.%u.%u", v / 10000, v / 100 % 100, v % 100);
  CHECK(strcmp(sg_version_string(), expected) == 0);
  CHECK(sg_c_api_version() >= SG_C_API_VERSION);
  sg_format_versions(&major, &max_minor);
  CHECK(major >= 1);
  CHECK(strcmp(sg_code_name(SG_OK), "ok") == 0);
  CHECK(strcmp(sg_code_name(SG_CANCELLED), "cancelled") == 0);
  CHECK(strcmp(sg_code_name(SG_DEADLINE_EXCEEDED), "deadline exceeded") == 0);
  CHECK(strcmp(sg_code_name(SG_NOT_FOUND), "not found") == 0);
  CHECK(strcmp(sg_code_name(1000), "?") == 0);
  CHECK(sg_dtype_size(SG_F16) == 2 && sg_dtype_size(SG_I64) == 8 && sg_dtype_size(77) == 0);
  CHECK(strcmp(sg_dtype_name(SG_BOOL), "bool") == 0);
}

static void test_inspect(void) {
  sg_status* st = sg_status_create();
  sg_program* p = load(st);
  const sg_entry* e;
  const sg_tensor_info* x;
  const sg_tensor_info* y;
  uint16_t major = 0, minor = 0;
  if (p == NULL) return;
  sg_program_format_version(p, &major, &minor);
  CHECK(major >= 1);
  CHECK(sg_program_num_entries(p) == 7);
  CHECK(sg_program_entry(p, 7) == NULL);
  CHECK(sg_program_find_entry(p, "nope") == NULL);
  e = sg_program_find_entry(p, "affine");
  CHECK(e != NULL);
  if (e == NULL) return;
  CHECK(strcmp(sg_entry_name(e), "affine") == 0);
  CHECK(sg_entry_num_inputs(e) == 2);
  CHECK(sg_entry_num_outputs(e) == 1);
  x = sg_entry_input(e, 0);
  CHECK(strcmp(sg_tensor_info_name(x), "x") == 0);
  CHECK(sg_tensor_info_dtype(x) == SG_F32);
  CHECK(sg_tensor_info_rank(x) == 2);
  CHECK(sg_tensor_info_dim(x, 0) == -1);
  CHECK(strcmp(sg_tensor_info_dim_name(x, 0), "N") == 0);
  CHECK(sg_tensor_info_dim(x, 1) == 3);
  CHECK(strcmp(sg_tensor_info_dim_name(x, 1), "") == 0);
  CHECK(sg_tensor_info_dim(x, 2) == -1 && strcmp(sg_tensor_info_dim_name(x, 2), "") == 0);
  CHECK(strcmp(sg_tensor_info_name(sg_entry_input(e, 1)), "w") == 0);
  CHECK(sg_entry_input(e, 2) == NULL);
  y = sg_entry_output(e, 0);
  CHECK(sg_tensor_info_rank(y) == 2 && sg_tensor_info_dim(y, 0) == -1 && sg_tensor_info_dim(y, 1) == 2);
  CHECK(strcmp(sg_tensor_info_dim_name(y, 0), "N") == 0);
  /* NULL handles are answered, not dereferenced. */
  CHECK(sg_program_num_entries(NULL) == 0 && sg_entry_num_inputs(NULL) == 0);
  CHECK(strcmp(sg_entry_name(NULL), "") == 0 && sg_tensor_info_rank(NULL) == 0);
  sg_program_release(p);
  sg_status_release(st);
}

static void test_load_memory(void) {
  sg_status* st = sg_status_create();
  size_t size = 0;
  unsigned char* bytes = read_graph(&size);
  void* aligned = NULL;
  sg_program* p = NULL;
  sg_session* s;
  CHECK(bytes != NULL);
  if (bytes == NULL) return;
  /* Copied: the bytes may go right away. */
  CHECK_OK(sg_program_load_memory(bytes, size, SG_LOAD_COPY, &p, st), st);
  memset(bytes, 0, size);
  free(bytes);
  s = session_for(p, "affine", NULL, st);
  if (s != NULL) run_affine(s, st);
  sg_session_release(s);
  sg_program_release(p);
  /* Borrowed: 64-byte aligned bytes the caller keeps while the program lives. */
  bytes = read_graph(&size);
  CHECK(posix_memalign(&aligned, 64, size) == 0);
  memcpy(aligned, bytes, size);
  free(bytes);
  CHECK_OK(sg_program_load_memory(aligned, size, SG_LOAD_VERIFY_DATA, &p, st), st);
  s = session_for(p, "affine", NULL, st);
  sg_program_release(p); /* the session keeps it */
  if (s != NULL) run_affine(s, st);
  sg_session_release(s);
  free(aligned);
  /* Not a graph; unknown flags. */
  CHECK_CODE(sg_program_load_memory("hello", 5, 0, &p, st), SG_INVALID_GRAPH, st);
  CHECK(p == NULL);
  CHECK_CODE(sg_program_load_memory("hello", 5, 0x80, &p, st), SG_INVALID_ARGUMENT, st);
  CHECK(CONTAINS(sg_status_message(st), "unknown flags"));
  CHECK_CODE(sg_program_load_memory(NULL, 5, 0, &p, st), SG_INVALID_ARGUMENT, st);
  CHECK_CODE(sg_program_load_file("/nonexistent/x.sgraph", 0, &p, st), SG_NOT_FOUND, st);
  CHECK(CONTAINS(sg_status_message(st), "/nonexistent/x.sgraph"));
  CHECK_CODE(sg_program_load_file("/", 0, &p, st), SG_INVALID_GRAPH, st); /* there, but not a graph */
  sg_status_release(st);
}

/* The graph with one byte of its data segment (where constants lie) flipped,
 * written to a temporary file whose path goes to `path`; its size to `size`. */
static unsigned char* flipped_graph(char* path, size_t* size) {
  unsigned char* bytes = read_graph(size);
  uint64_t data_offset = 0;
  int k, fd;
  if (bytes == NULL) return NULL;
  for (k = 7; k >= 0; --k) data_offset = data_offset << 8 | bytes[32 + k]; /* header: data offset, LE */
  CHECK(data_offset > 0 && data_offset < *size);
  bytes[data_offset] ^= 0x01;
  fd = mkstemp(path);
  CHECK(fd >= 0);
  if (fd >= 0) {
    CHECK(write(fd, bytes, *size) == (ssize_t)*size);
    close(fd);
  }
  return bytes;
}

/* Every load checks the data segment's checksum unless told not to, whatever it
 * loads from; SG_LOAD_NO_VERIFY_DATA is the one way to skip it. */
static void test_verify_data(void) {
  sg_status* st = sg_status_create();
  char path[] = "/tmp/sg_capi_flip_XXXXXX";
  size_t size = 0;
  unsigned char* bytes = flipped_graph(path, &size);
  sg_program* p = NULL;
  int fd;
  if (bytes == NULL) return;
  CHECK_CODE(sg_program_load_file(path, 0, &p, st), SG_INVALID_GRAPH, st);
  CHECK(p == NULL && CONTAINS(sg_status_message(st), "data segment checksum mismatch"));
  CHECK_CODE(sg_program_load_file(path, SG_LOAD_VERIFY_DATA, &p, st), SG_INVALID_GRAPH, st);
  CHECK_CODE(sg_program_load_memory(bytes, size, SG_LOAD_COPY, &p, st), SG_INVALID_GRAPH, st);
  CHECK(CONTAINS(sg_status_message(st), "data segment checksum mismatch"));
  fd = open(path, O_RDONLY);
  CHECK_CODE(sg_program_load_fd(fd, 0, 0, 0, &p, st), SG_INVALID_GRAPH, st);
  CHECK(CONTAINS(sg_status_message(st), "data segment checksum mismatch"));
  /* The opt-out: the caller vouches for the bytes. */
  CHECK_OK(sg_program_load_fd(fd, 0, 0, SG_LOAD_NO_VERIFY_DATA, &p, st), st);
  sg_program_release(p);
  close(fd);
  CHECK_OK(sg_program_load_file(path, SG_LOAD_NO_VERIFY_DATA, &p, st), st);
  sg_program_release(p);
  CHECK_OK(sg_program_load_memory(bytes, size, SG_LOAD_COPY | SG_LOAD_NO_VERIFY_DATA, &p, st), st);
  sg_program_release(p);
  p = NULL;
  CHECK_CODE(sg_program_load_file(path, SG_LOAD_VERIFY_DATA | SG_LOAD_NO_VERIFY_DATA, &p, st), SG_INVALID_ARGUMENT,
             st);
  CHECK(p == NULL && CONTAINS(sg_status_message(st), "contradict"));
  /* The file as compiled loads with every flag. */
  CHECK_OK(sg_program_load_file(graph_path, 0, &p, st), st);
  sg_program_release(p);
  CHECK_OK(sg_program_load_file(graph_path, SG_LOAD_VERIFY_DATA, &p, st), st);
  sg_program_release(p);
  unlink(path);
  free(bytes);
  sg_status_release(st);
}

/* A file holding `prefix` bytes of junk, the graph, then 100 more: as an APK holds
 * an uncompressed asset. */
static void load_fd_at(size_t prefix, sg_status* st) {
  char path[] = "/tmp/sg_capi_fd_XXXXXX";
  size_t size = 0, k;
  unsigned char* bytes = read_graph(&size);
  unsigned char junk[100];
  sg_program* p = NULL;
  sg_session* s;
  int fd = mkstemp(path);
  CHECK(fd >= 0 && bytes != NULL);
  if (fd < 0 || bytes == NULL) return;
  memset(junk, 0x5A, sizeof junk);
  for (k = 0; k < prefix; k += sizeof junk) {
    const size_t n = prefix - k < sizeof junk ? prefix - k : sizeof junk;
    CHECK(write(fd, junk, n) == (ssize_t)n);
  }
  CHECK(write(fd, bytes, size) == (ssize_t)size);
  CHECK(write(fd, junk, sizeof junk) == (ssize_t)sizeof junk);
  free(bytes);
  CHECK_OK(sg_program_load_fd(fd, prefix, size, 0, &p, st), st);
  close(fd); /* the program does not need the descriptor */
  unlink(path);
  s = session_for(p, "affine", NULL, st);
  if (s != NULL) run_affine(s, st);
  sg_session_release(s);
  sg_program_release(p);
}

static void test_load_fd(void) {
  sg_status* st = sg_status_create();
  sg_program* p = NULL;
  int fd;
  load_fd_at(0, st);
  load_fd_at(100, st);   /* misaligned: copied */
  load_fd_at(8192, st);  /* page aligned: mapped */
  fd = open(graph_path, O_RDONLY);
  CHECK_CODE(sg_program_load_fd(fd, 0, 1u << 30, 0, &p, st), SG_INVALID_GRAPH, st);
  CHECK(CONTAINS(sg_status_message(st), "passes the end of the file"));
  CHECK_CODE(sg_program_load_fd(fd, 64, 0, 0, &p, st), SG_INVALID_GRAPH, st);
  close(fd);
  {
    /* Bytes after the graph's end, as when it is taken to the end of a bigger file. */
    char path[] = "/tmp/sg_capi_tail_XXXXXX";
    size_t size = 0;
    unsigned char* bytes = read_graph(&size);
    fd = mkstemp(path);
    CHECK(fd >= 0 && bytes != NULL);
    if (fd >= 0 && bytes != NULL) {
      CHECK(write(fd, bytes, size) == (ssize_t)size);
      CHECK(write(fd, "trailing", 8) == 8);
      CHECK_CODE(sg_program_load_fd(fd, 0, 0, 0, &p, st), SG_INVALID_GRAPH, st);
      CHECK(CONTAINS(sg_status_message(st), "8 bytes follow its end"));
      CHECK_OK(sg_program_load_fd(fd, 0, size, 0, &p, st), st); /* its own range loads */
      sg_program_release(p);
      p = NULL;
      close(fd);
      unlink(path);
    }
    free(bytes);
  }
  CHECK_CODE(sg_program_load_fd(-1, 0, 0, 0, &p, st), SG_INVALID_ARGUMENT, st);
  CHECK(p == NULL);
  sg_status_release(st);
}

static void test_run(void) {
  sg_status* st = sg_status_create();
  sg_program* p = load(st);
  sg_session* s = session_for(p, "affine", NULL, st);
  const float x1[3] = {1, 1, 1};
  const int64_t x1s[2] = {1, 3};
  const void* data = NULL;
  const int64_t* shape = NULL;
  size_t rank = 0, index = 99;
  if (s == NULL) return;
  run_affine(s, st);
  run_affine(s, st); /* again, same inputs */
  /* By index, another N; w stays bound. */
  CHECK_OK(sg_session_input_index(s, "x", &index, st), st);
  CHECK(index == 0);
  CHECK_OK(sg_session_set_input_at(s, index, SG_F32, x1s, 2, x1, sizeof x1, st), st);
  CHECK_OK(sg_session_run(s, st), st);
  CHECK_OK(sg_session_output(s, 0, &data, NULL, &shape, &rank, st), st);
  CHECK(rank == 2 && shape[0] == 1 && shape[1] == 2);
  CHECK(((const float*)data)[0] == 3.0f && ((const float*)data)[1] == 3.0f);
  CHECK_OK(sg_session_output_index(s, "output_0", &index, st), st);
  CHECK(index == 0);
  CHECK(sg_session_num_outputs(s) == 1);
  CHECK(sg_session_entry(s) == sg_program_find_entry(p, "affine"));
  sg_session_release(s);
  sg_program_release(p);
  sg_status_release(st);
}

/* Bound input memory is read afresh by each run: a buffer refilled between runs is
 * seen without a new bind, and the runtime never writes it. */
static void test_input_memory_changes(void) {
  sg_status* st = sg_status_create();
  sg_program* p = load(st);
  sg_session* s = session_for(p, "affine", NULL, st);
  const int64_t xs[2] = {2, 3}, ws[2] = {3, 2};
  float x[6], w[6];
  const void* data = NULL;
  int round, k;
  if (s == NULL) return;
  memcpy(w, kW, sizeof w);
  CHECK_OK(sg_session_set_input(s, "x", SG_F32, xs, 2, x, sizeof x, st), st);
  CHECK_OK(sg_session_set_input(s, "w", SG_F32, ws, 2, w, sizeof w, st), st);
  for (round = 0; round < 3; ++round) {
    for (k = 0; k < 6; ++k) x[k] = kX[k] * (float)(round + 1);
    CHECK_OK(sg_session_run(s, st), st);
    CHECK_OK(sg_session_output(s, 0, &data, NULL, NULL, NULL, st), st);
    /* (round + 1) * (x @ w) + 1 */
    for (k = 0; data != NULL && k < 4; ++k) CHECK(((const float*)data)[k] == (kY[k] - 1) * (float)(round + 1) + 1);
    for (k = 0; k < 6; ++k) CHECK(x[k] == kX[k] * (float)(round + 1) && w[k] == kW[k]);
  }
  sg_session_release(s);
  sg_program_release(p);
  sg_status_release(st);
}

static void test_bound_outputs(void) {
  sg_status* st = sg_status_create();
  sg_program* p = load(st);
  sg_session* s = session_for(p, "affine", NULL, st);
  float y[4] = {0, 0, 0, 0};
  float small[2];
  const void* data = NULL;
  if (s == NULL) return;
  CHECK_OK(sg_session_bind_output(s, 0, y, sizeof y, st), st);
  run_affine(s, st);
  CHECK(memcmp(y, kY, sizeof kY) == 0);
  CHECK_OK(sg_session_output(s, 0, &data, NULL, NULL, NULL, st), st);
  CHECK(data == (const void*)y);
  /* Too small: the run fails naming the output and the bytes. */
  CHECK_OK(sg_session_bind_output(s, 0, small, sizeof small, st), st);
  CHECK_CODE(sg_session_run(s, st), SG_INVALID_ARGUMENT, st);
  CHECK(CONTAINS(sg_status_message(st), "output_0") && CONTAINS(sg_status_message(st), "16 bytes"));
  CHECK_CODE(sg_session_output(s, 0, &data, NULL, NULL, NULL, st), SG_INVALID_ARGUMENT, st);
  /* Unbound: in place again. */
  CHECK_OK(sg_session_bind_output(s, 0, NULL, 0, st), st);
  run_affine(s, st);
  CHECK_CODE(sg_session_bind_output(s, 3, y, sizeof y, st), SG_INVALID_ARGUMENT, st);
  sg_session_release(s);
  sg_program_release(p);
  sg_status_release(st);
}

/* An unknown input name is the same error, code and message, from
 * sg_session_input_index and sg_session_set_input. */
static void test_unknown_input(void) {
  sg_status* st = sg_status_create();
  sg_program* p = load(st);
  sg_session* s = NULL;
  const int64_t xs[2] = {2, 3};
  size_t index = 99;
  char by_index[256];
  if (p == NULL) return;
  s = session_for(p, "affine", NULL, st);
  if (s == NULL) return;
  CHECK_CODE(sg_session_input_index(s, "q", &index, st), SG_INVALID_INPUT, st);
  CHECK(index == 99);
  snprintf(by_index, sizeof by_index, "%s", sg_status_message(st));
  CHECK(strcmp(by_index, "unknown input 'q' (the entry takes: x, w)") == 0);
  CHECK_CODE(sg_session_set_input(s, "q", SG_F32, xs, 2, kX, sizeof kX, st), SG_INVALID_INPUT, st);
  CHECK(strcmp(sg_status_message(st), by_index) == 0);
  /* An unknown output stays the caller's mistake, naming the outputs. */
  CHECK_CODE(sg_session_output_index(s, "q", &index, st), SG_INVALID_ARGUMENT, st);
  CHECK(CONTAINS(sg_status_message(st), "unknown output 'q'") && CONTAINS(sg_status_message(st), "output_0"));
  sg_session_release(s);
  sg_program_release(p);
  sg_status_release(st);
}

static void test_errors(void) {
  sg_status* st = sg_status_create();
  sg_program* p = load(st);
  sg_session* s = NULL;
  sg_session_options* o = NULL;
  const int64_t xs[2] = {2, 3}, bad[2] = {2, 4}, neg[2] = {-2, 3};
  const int32_t xi[6] = {0, 0, 0, 0, 0, 0};
  const void* data = NULL;
  if (p == NULL) return;
  CHECK_CODE(sg_session_create(p, "nope", NULL, &s, st), SG_INVALID_ARGUMENT, st);
  CHECK(CONTAINS(sg_status_message(st), "nope") && CONTAINS(sg_status_message(st), "affine"));
  CHECK(s == NULL);
  CHECK_CODE(sg_session_create(NULL, "affine", NULL, &s, st), SG_INVALID_ARGUMENT, st);
  CHECK_CODE(sg_session_create(p, NULL, NULL, &s, st), SG_INVALID_ARGUMENT, st);
  CHECK_CODE(sg_session_create(p, "affine", NULL, NULL, st), SG_INVALID_ARGUMENT, st);
  s = session_for(p, "affine", NULL, st);
  /* Before any run; bad index. */
  CHECK_CODE(sg_session_output(s, 0, &data, NULL, NULL, NULL, st), SG_INVALID_ARGUMENT, st);
  CHECK(CONTAINS(sg_status_message(st), "no run"));
  CHECK_CODE(sg_session_run(s, st), SG_INVALID_INPUT, st);
  CHECK(CONTAINS(sg_status_message(st), "missing input"));
  CHECK_CODE(sg_session_set_input(s, "nope", SG_F32, xs, 2, kX, sizeof kX, st), SG_INVALID_INPUT, st);
  CHECK(CONTAINS(sg_status_message(st), "'nope'"));
  CHECK_CODE(sg_session_set_input(s, "x", SG_I32, xs, 2, xi, sizeof xi, st), SG_INVALID_INPUT, st);
  CHECK(CONTAINS(sg_status_message(st), "expected f32[N, 3]"));
  CHECK_CODE(sg_session_set_input(s, "x", SG_F32, bad, 2, kX, 32, st), SG_INVALID_INPUT, st);
  CHECK_CODE(sg_session_set_input(s, "x", SG_F32, neg, 2, kX, sizeof kX, st), SG_INVALID_INPUT, st);
  CHECK(CONTAINS(sg_status_message(st), "negative dim"));
  CHECK_CODE(sg_session_set_input(s, "x", SG_F32, xs, 2, kX, 4, st), SG_INVALID_INPUT, st);
  CHECK(CONTAINS(sg_status_message(st), "4 bytes given"));
  CHECK_CODE(sg_session_set_input(s, "x", 42, xs, 2, kX, sizeof kX, st), SG_INVALID_ARGUMENT, st);
  CHECK(CONTAINS(sg_status_message(st), "unknown dtype code 42"));
  CHECK_CODE(sg_session_set_input(s, "x", SG_F32, NULL, 2, kX, sizeof kX, st), SG_INVALID_ARGUMENT, st);
  CHECK_CODE(sg_session_set_input(s, "x", SG_F32, xs, 2, NULL, sizeof kX, st), SG_INVALID_ARGUMENT, st);
  CHECK_CODE(sg_session_set_input_at(s, 7, SG_F32, xs, 2, kX, sizeof kX, st), SG_INVALID_ARGUMENT, st);
  CHECK_CODE(sg_session_output(s, 7, &data, NULL, NULL, NULL, st), SG_INVALID_ARGUMENT, st);
  CHECK(CONTAINS(sg_status_message(st), "out of range"));
  CHECK(sg_session_output_nbytes(s, 7) == 0);
  run_affine(s, st);
  CHECK_CODE(sg_session_output(s, 1, &data, NULL, NULL, NULL, st), SG_INVALID_ARGUMENT, st);
  CHECK_CODE(sg_session_run(NULL, st), SG_INVALID_ARGUMENT, st);
  CHECK_CODE(sg_session_run(NULL, NULL), SG_INVALID_ARGUMENT, NULL); /* no status: the code still tells */
  /* A successful call resets the status. */
  run_affine(s, st);
  CHECK(sg_status_code(st) == SG_OK && strcmp(sg_status_message(st), "") == 0);
  /* Options. */
  CHECK_OK(sg_session_options_create(&o, st), st);
#ifndef SG_CAPI_TEST_CUDA
  CHECK_CODE(sg_session_options_set_device(o, "cuda:0", st), SG_UNSUPPORTED, st);
  CHECK(CONTAINS(sg_status_message(st), "not available in this build"));
#endif
  CHECK_OK(sg_session_options_set_device(o, "cpu", st), st);
  CHECK_CODE(sg_session_options_set_num_threads(o, 0, st), SG_INVALID_ARGUMENT, st);
  CHECK_CODE(sg_session_options_set_max_call_depth(o, -1, st), SG_INVALID_ARGUMENT, st);
  CHECK_CODE(sg_session_options_set_num_threads(NULL, 2, st), SG_INVALID_ARGUMENT, st);
  sg_session_options_release(o);
  sg_session_cancel(NULL);
  sg_session_release(NULL);
  sg_program_release(NULL);
  sg_session_release(s);
  sg_program_release(p);
  sg_status_release(st);
}

struct canceller {
  sg_session* session;
  long delay_ms;
};

static void* cancel_later(void* arg) {
  const struct canceller* c = (const struct canceller*)arg;
  sleep_ms(c->delay_ms);
  sg_session_cancel(c->session);
  return NULL;
}

/* Runs the session (endless) and cancels it from another thread after 100 ms. */
static void cancel_endless(sg_session* s, sg_status* st) {
  pthread_t thread;
  struct canceller c;
  double start;
  c.session = s;
  c.delay_ms = 100;
  CHECK(pthread_create(&thread, NULL, cancel_later, &c) == 0);
  start = now_seconds();
  CHECK_CODE(sg_session_run(s, st), SG_CANCELLED, st);
  CHECK(now_seconds() - start < 10.0);
  CHECK(CONTAINS(sg_status_message(st), "capi_programs.py:"));
  CHECK(CONTAINS(sg_status_message(st), "cancelled"));
  pthread_join(thread, NULL);
}

static void test_cancel(void) {
  sg_status* st = sg_status_create();
  sg_program* p = load(st);
  sg_session* s = session_for(p, "spin", NULL, st);
  sg_session* v = session_for(p, "spin_vector", NULL, st);
  const int64_t one = 1;
  const float x[4] = {0, 1, 2, 3};
  const int64_t xs[1] = {4};
  const void* data = NULL;
  if (s == NULL || v == NULL) return;
  CHECK_OK(sg_session_set_input(s, "n", SG_I64, NULL, 0, &one, sizeof one, st), st);
  cancel_endless(s, st);
  /* The session stays usable: the request ended with the run. */
  cancel_endless(s, st);
  CHECK_CODE(sg_session_output(s, 0, &data, NULL, NULL, NULL, st), SG_INVALID_ARGUMENT, st);
  /* A cancel before the run ends the next run at once. */
  sg_session_cancel(s);
  CHECK_CODE(sg_session_run(s, st), SG_CANCELLED, st);
  /* A loop over a tensor (not a register loop). */
  CHECK_OK(sg_session_set_input(v, "x", SG_F32, xs, 1, x, sizeof x, st), st);
  cancel_endless(v, st);
  sg_session_release(v);
  sg_session_release(s);
  sg_program_release(p);
  sg_status_release(st);
}

static void* run_in_thread(void* arg) {
  sg_status* st = sg_status_create();
  sg_code* code = (sg_code*)malloc(sizeof(sg_code));
  *code = sg_session_run((sg_session*)arg, st);
  sg_status_release(st);
  return code;
}

static void test_second_thread(void) {
  sg_status* st = sg_status_create();
  sg_program* p = load(st);
  sg_session_options* o = NULL;
  sg_session* s;
  const int64_t one = 1;
  pthread_t thread;
  void* result = NULL;
  /* The timeout bounds the test should this thread's run start first. */
  CHECK_OK(sg_session_options_create(&o, st), st);
  CHECK_OK(sg_session_options_set_run_timeout_us(o, 20000000, st), st);
  s = session_for(p, "spin", o, st);
  sg_session_options_release(o);
  if (s == NULL) return;
  CHECK_OK(sg_session_set_input(s, "n", SG_I64, NULL, 0, &one, sizeof one, st), st);
  CHECK(pthread_create(&thread, NULL, run_in_thread, s) == 0);
  sleep_ms(100); /* the other thread is in its endless run by now */
  CHECK_CODE(sg_session_run(s, st), SG_INVALID_ARGUMENT, st);
  CHECK(CONTAINS(sg_status_message(st), "in progress"));
  CHECK_CODE(sg_session_set_input(s, "n", SG_I64, NULL, 0, &one, sizeof one, st), SG_INVALID_ARGUMENT, st);
  sg_session_cancel(s);
  pthread_join(thread, &result);
  CHECK(result != NULL && *(sg_code*)result == SG_CANCELLED);
  free(result);
  sg_session_release(s);
  sg_program_release(p);
  sg_status_release(st);
}

static void test_deadline(void) {
  sg_status* st = sg_status_create();
  sg_program* p = load(st);
  sg_session_options* o = NULL;
  sg_session* s;
  const int64_t one = 1;
  double start, took;
  CHECK_OK(sg_session_options_create(&o, st), st);
  CHECK_OK(sg_session_options_set_run_timeout_us(o, 30000, st), st);
  s = session_for(p, "spin", o, st);
  sg_session_options_release(o);
  if (s == NULL) return;
  CHECK_OK(sg_session_set_input(s, "n", SG_I64, NULL, 0, &one, sizeof one, st), st);
  start = now_seconds();
  CHECK_CODE(sg_session_run(s, st), SG_DEADLINE_EXCEEDED, st);
  took = now_seconds() - start;
  CHECK(took >= 0.029 && took < 10.0);
  CHECK(CONTAINS(sg_status_message(st), "capi_programs.py:"));
  CHECK(CONTAINS(sg_status_message(st), "deadline"));
  /* Again, with a timeout changed on the session. */
  CHECK_OK(sg_session_set_run_timeout_us(s, 10000, st), st);
  CHECK_CODE(sg_session_run(s, st), SG_DEADLINE_EXCEEDED, st);
  sg_session_release(s);
  sg_program_release(p);
  sg_status_release(st);
}

static void test_memory_limit(void) {
  sg_status* st = sg_status_create();
  sg_program* p = load(st);
  sg_session_options* o = NULL;
  sg_session* s;
  float* x = (float*)calloc(4096, sizeof(float));
  const int64_t big = 4096, small = 16;
  const void* data = NULL;
  CHECK_OK(sg_session_options_create(&o, st), st);
  CHECK_OK(sg_session_options_set_memory_limit(o, 1u << 20, st), st);
  s = session_for(p, "outer", o, st);
  sg_session_options_release(o);
  if (s == NULL) return;
  /* 4096 x 4096 floats: 64 MiB, over the 1 MiB limit. */
  CHECK_OK(sg_session_set_input(s, "x", SG_F32, &big, 1, x, 4096 * sizeof(float), st), st);
  CHECK_CODE(sg_session_run(s, st), SG_LIMIT_EXCEEDED, st);
  CHECK(CONTAINS(sg_status_message(st), "memory limit of 1048576 bytes"));
  CHECK(CONTAINS(sg_status_message(st), "capi_programs.py:"));
  /* The same session runs what fits. */
  x[0] = 1;
  x[1] = 2;
  CHECK_OK(sg_session_set_input(s, "x", SG_F32, &small, 1, x, 16 * sizeof(float), st), st);
  CHECK_OK(sg_session_run(s, st), st);
  CHECK_OK(sg_session_output(s, 0, &data, NULL, NULL, NULL, st), st);
  if (data != NULL) CHECK(*(const float*)data == 9.0f);
  free(x);
  sg_session_release(s);
  sg_program_release(p);
  sg_status_release(st);
}

struct text_log {
  int prints, diagnostics;
  char last_print[256], last_diagnostic[512];
};

static void on_text(void* user, int32_t kind, const char* text, size_t length) {
  struct text_log* log = (struct text_log*)user;
  char* into = kind == SG_TEXT_PRINT ? log->last_print : log->last_diagnostic;
  const size_t cap = kind == SG_TEXT_PRINT ? sizeof log->last_print : sizeof log->last_diagnostic;
  const size_t n = length < cap - 1 ? length : cap - 1;
  memcpy(into, text, n);
  into[n] = '\0';
  if (kind == SG_TEXT_PRINT) ++log->prints;
  else ++log->diagnostics;
}

static void test_text_callback(void) {
  sg_status* st = sg_status_create();
  sg_program* p = load(st);
  sg_session_options* o = NULL;
  sg_session* s;
  struct text_log log;
  const float good[2] = {1, 2}, bad[2] = {-1, 2};
  const int64_t shape[1] = {2};
  memset(&log, 0, sizeof log);
  CHECK_OK(sg_session_options_create(&o, st), st);
  CHECK_OK(sg_session_options_set_text_callback(o, on_text, &log, st), st);
  s = session_for(p, "chatty", o, st);
  sg_session_options_release(o);
  if (s == NULL) return;
  CHECK_OK(sg_session_set_input(s, "x", SG_F32, shape, 1, good, sizeof good, st), st);
  CHECK_OK(sg_session_run(s, st), st);
  CHECK(log.prints == 1 && log.diagnostics == 0);
  if (!CONTAINS(log.last_print, "x is [1")) fprintf(stderr, "printed: %s\n", log.last_print);
  CHECK(CONTAINS(log.last_print, "x is [1"));
  CHECK_OK(sg_session_set_input(s, "x", SG_F32, shape, 1, bad, sizeof bad, st), st);
  CHECK_CODE(sg_session_run(s, st), SG_RUNTIME_ERROR, st);
  CHECK(log.prints == 2 && log.diagnostics == 1);
  CHECK(CONTAINS(log.last_diagnostic, "x must be positive"));
  CHECK(CONTAINS(log.last_diagnostic, "capi_programs.py:"));
  CHECK(strcmp(log.last_diagnostic, sg_status_message(st)) == 0);
  sg_session_release(s);
  sg_program_release(p);
  sg_status_release(st);
}

static void test_shared_pool(void) {
  enum { kSessions = 4 };
  sg_status* st = sg_status_create();
  sg_program* p = load(st);
  sg_thread_pool* pool = NULL;
  sg_session_options* o = NULL;
  sg_session* s[kSessions];
  int k;
  CHECK_CODE(sg_thread_pool_create(0, &pool, st), SG_INVALID_ARGUMENT, st);
  CHECK_OK(sg_thread_pool_create(2, &pool, st), st);
  CHECK_OK(sg_session_options_create(&o, st), st);
  CHECK_OK(sg_session_options_set_thread_pool(o, pool, st), st);
  for (k = 0; k < kSessions; ++k) s[k] = session_for(p, "affine", o, st);
  sg_session_options_release(o);
  sg_thread_pool_release(pool); /* the sessions hold it */
  for (k = 0; k < kSessions; ++k)
    if (s[k] != NULL) run_affine(s[k], st);
  for (k = 0; k < kSessions; ++k) sg_session_release(s[k]);
  sg_program_release(p);
  sg_status_release(st);
}

/* A custom op's kernel, written in C: `user` counts the calls and says which code
 * a negative input gets. */
struct scale3_state {
  int calls;
  sg_code negative;
};

static sg_code scale3(void* user, size_t num_inputs, const void* const* inputs, const sg_dtype* input_dtypes,
                      const int64_t* const* input_dims, const size_t* input_ranks, void* output,
                      sg_dtype output_dtype, const int64_t* output_dims, size_t output_rank, const char** message) {
  int64_t i;
  const float* x = (const float*)inputs[0];
  float* y = (float*)output;
  struct scale3_state* state = (struct scale3_state*)user;
  (void)input_dims;
  ++state->calls;
  if (num_inputs != 1 || input_dtypes[0] != SG_F32 || output_dtype != SG_F32 || input_ranks[0] != 1 ||
      output_rank != 1) {
    *message = "scale3: unexpected operands";
    return SG_INVALID_ARGUMENT;
  }
  for (i = 0; i < output_dims[0]; ++i) {
    if (x[i] < 0) {
      *message = "scale3: negative input";
      return state->negative;
    }
    y[i] = 3.0f * x[i];
  }
  return SG_OK;
}

/* The same kernel through sg_custom_ops_add_v2: its operands in one struct. */
static sg_code scale3_v2(void* user, const sg_custom_kernel_call* call, const char** message) {
  size_t i;
  const float* x;
  float* y = (float*)call->output;
  struct scale3_state* state = (struct scale3_state*)user;
  ++state->calls;
  if (call->struct_size < sizeof(sg_custom_kernel_call) || !SG_CALL_HAS(call, output_rank) ||
      strcmp(call->name, "test.scale3") != 0) {
    *message = "scale3_v2: not the call this header describes";
    return SG_INVALID_ARGUMENT;
  }
  if (call->num_inputs != 1 || call->input_dtypes[0] != SG_F32 || call->output_dtype != SG_F32 ||
      call->input_ranks[0] != 1 || call->output_rank != 1 || call->input_dims[0][0] != call->output_dims[0]) {
    *message = "scale3_v2: unexpected operands";
    return SG_INVALID_ARGUMENT;
  }
  x = (const float*)call->inputs[0];
  for (i = 0; i < (size_t)call->output_dims[0]; ++i) {
    if (x[i] < 0) {
      *message = "scale3_v2: negative input";
      return state->negative;
    }
    y[i] = 3.0f * x[i];
  }
  return SG_OK;
}

/* sg_custom_ops_add_v2: the kernel gets a sized sg_custom_kernel_call; errors end
 * the run as the old form's do, and a name takes one kernel, of either form. */
static void test_custom_op_v2(void) {
  sg_status* st = sg_status_create();
  sg_program* p = NULL;
  sg_session* s = NULL;
  sg_session_options* o = NULL;
  sg_custom_ops* ops = NULL;
  struct scale3_state state = {0, SG_RUNTIME_ERROR};
  const float x[3] = {1, 2, 3}, bad[1] = {-1};
  const int64_t xs[1] = {3}, bs[1] = {1};
  const void* data = NULL;
  CHECK(sg_c_api_version() >= 4);
  CHECK_OK(sg_program_load_file(custom_graph_path, 0, &p, st), st);
  CHECK_OK(sg_session_options_create(&o, st), st);
  CHECK_OK(sg_custom_ops_create(&ops, st), st);
  if (p == NULL || o == NULL || ops == NULL) return;
  CHECK_CODE(sg_custom_ops_add_v2(ops, "test.scale3", NULL, NULL, st), SG_INVALID_ARGUMENT, st);
  CHECK(CONTAINS(sg_status_message(st), "sg_custom_ops_add_v2: kernel is NULL"));
  CHECK_CODE(sg_custom_ops_add_v2(NULL, "test.scale3", scale3_v2, &state, st), SG_INVALID_ARGUMENT, st);
  CHECK_CODE(sg_custom_ops_add_v2(ops, NULL, scale3_v2, &state, st), SG_INVALID_ARGUMENT, st);
  CHECK_CODE(sg_custom_ops_add_v2(ops, "", scale3_v2, &state, st), SG_INVALID_ARGUMENT, st);
  CHECK_OK(sg_custom_ops_add_v2(ops, "test.scale3", scale3_v2, &state, st), st);
  CHECK_CODE(sg_custom_ops_add_v2(ops, "test.scale3", scale3_v2, &state, st), SG_INVALID_ARGUMENT, st);
  CHECK_CODE(sg_custom_ops_add(ops, "test.scale3", scale3, &state, st), SG_INVALID_ARGUMENT, st);
  CHECK_OK(sg_session_options_set_custom_ops(o, ops, st), st);
  CHECK_OK(sg_session_create(p, "scaled", o, &s, st), st);
  sg_custom_ops_release(ops);
  sg_session_options_release(o);
  if (s == NULL) return;
  CHECK_OK(sg_session_set_input(s, "x", SG_F32, xs, 1, x, sizeof x, st), st);
  CHECK_OK(sg_session_run(s, st), st);
  CHECK_OK(sg_session_output(s, 0, &data, NULL, NULL, NULL, st), st);
  CHECK(data != NULL && ((const float*)data)[0] == 4.0f && ((const float*)data)[2] == 10.0f);
  CHECK(state.calls == 1);
  CHECK_OK(sg_session_set_input(s, "x", SG_F32, bs, 1, bad, sizeof bad, st), st);
  state.negative = SG_INVALID_INPUT;
  CHECK_CODE(sg_session_run(s, st), SG_INVALID_INPUT, st);
  CHECK(CONTAINS(sg_status_message(st), "scale3_v2: negative input"));
  CHECK(CONTAINS(sg_status_message(st), "capi_custom.py:"));
  state.negative = 1000;
  CHECK_CODE(sg_session_run(s, st), SG_INTERNAL, st);
  CHECK(CONTAINS(sg_status_message(st), "unknown code 1000"));
  CHECK(state.calls == 3);
  sg_session_release(s);
  sg_program_release(p);
  sg_status_release(st);
}

static void test_custom_op(void) {
  sg_status* st = sg_status_create();
  sg_program* p = NULL;
  sg_session* s = NULL;
  sg_session_options* o = NULL;
  sg_custom_ops* ops = NULL;
  struct scale3_state state = {0, SG_RUNTIME_ERROR};
  const sg_code codes[4] = {SG_RUNTIME_ERROR, SG_INVALID_INPUT, SG_OUT_OF_MEMORY, 1000};
  const sg_code expected[4] = {SG_RUNTIME_ERROR, SG_INVALID_INPUT, SG_OUT_OF_MEMORY, SG_INTERNAL};
  int k;
  const float x[3] = {1, 2, 3}, bad[1] = {-1};
  const int64_t xs[1] = {3}, bs[1] = {1};
  const void* data = NULL;
  CHECK_OK(sg_program_load_file(custom_graph_path, 0, &p, st), st);
  CHECK_OK(sg_session_options_create(&o, st), st);
  if (p == NULL || o == NULL) return;
  /* No kernel registered: refused on creation, naming the op and its line, in C. */
  CHECK_CODE(sg_session_create(p, "scaled", o, &s, st), SG_INVALID_ARGUMENT, st);
  CHECK(s == NULL && CONTAINS(sg_status_message(st), "test.scale3"));
  CHECK(CONTAINS(sg_status_message(st), "capi_custom.py:"));
  CHECK(CONTAINS(sg_status_message(st), "sg_session_options_set_custom_ops"));
  CHECK(!CONTAINS(sg_status_message(st), "SessionOptions"));
  CHECK_CODE(sg_session_create(p, "scaled", NULL, &s, st), SG_INVALID_ARGUMENT, st);
  /* An entry that reaches no custom op needs no kernel. */
  CHECK_OK(sg_session_create(p, "plain", NULL, &s, st), st);
  if (s != NULL) {
    CHECK_OK(sg_session_set_input(s, "x", SG_F32, xs, 1, x, sizeof x, st), st);
    CHECK_OK(sg_session_run(s, st), st);
    CHECK_OK(sg_session_output(s, 0, &data, NULL, NULL, NULL, st), st);
    CHECK(data != NULL && ((const float*)data)[2] == 4.0f);
    sg_session_release(s);
    s = NULL;
  }
  CHECK_OK(sg_custom_ops_create(&ops, st), st);
  /* A registry without the op: the refusal says to add it. */
  CHECK_OK(sg_session_options_set_custom_ops(o, ops, st), st);
  CHECK_CODE(sg_session_create(p, "scaled", o, &s, st), SG_INVALID_ARGUMENT, st);
  CHECK(CONTAINS(sg_status_message(st), "sg_custom_ops_add"));
  CHECK_CODE(sg_custom_ops_add(ops, "test.scale3", NULL, NULL, st), SG_INVALID_ARGUMENT, st);
  CHECK_OK(sg_custom_ops_add(ops, "test.scale3", scale3, &state, st), st);
  CHECK_CODE(sg_custom_ops_add(ops, "test.scale3", scale3, &state, st), SG_INVALID_ARGUMENT, st);
  CHECK_OK(sg_session_options_set_custom_ops(o, ops, st), st);
  CHECK_OK(sg_session_create(p, "scaled", o, &s, st), st);
  /* The session keeps the registry alive. */
  sg_custom_ops_release(ops);
  sg_session_options_release(o);
  if (s == NULL) return;
  CHECK_OK(sg_session_set_input(s, "x", SG_F32, xs, 1, x, sizeof x, st), st);
  CHECK_OK(sg_session_run(s, st), st);
  CHECK_OK(sg_session_output(s, 0, &data, NULL, NULL, NULL, st), st);
  CHECK(data != NULL && ((const float*)data)[0] == 4.0f && ((const float*)data)[2] == 10.0f);
  CHECK(state.calls == 1);
  /* The kernel's error ends the run with its code (one the library does not know:
   * SG_INTERNAL, saying so) and message, and the op's line. */
  CHECK_OK(sg_session_set_input(s, "x", SG_F32, bs, 1, bad, sizeof bad, st), st);
  for (k = 0; k < 4; ++k) {
    state.negative = codes[k];
    CHECK_CODE(sg_session_run(s, st), expected[k], st);
    CHECK(CONTAINS(sg_status_message(st), "negative input"));
    CHECK(CONTAINS(sg_status_message(st), "capi_custom.py:"));
  }
  CHECK(CONTAINS(sg_status_message(st), "unknown code 1000"));
  sg_session_release(s);
  /* The gradient through the op runs the kernel forward and the program's vjp rule. */
  s = NULL;
  CHECK_OK(sg_session_options_create(&o, st), st);
  CHECK_OK(sg_custom_ops_create(&ops, st), st);
  CHECK_OK(sg_custom_ops_add(ops, "test.scale3", scale3, &state, st), st);
  CHECK_OK(sg_session_options_set_custom_ops(o, ops, st), st);
  CHECK_OK(sg_session_create(p, "scaled_grad", o, &s, st), st);
  sg_custom_ops_release(ops);
  sg_session_options_release(o);
  if (s != NULL) {
    CHECK_OK(sg_session_set_input(s, "x", SG_F32, xs, 1, x, sizeof x, st), st);
    CHECK_OK(sg_session_run(s, st), st);
    CHECK_OK(sg_session_output(s, 0, &data, NULL, NULL, NULL, st), st);
    CHECK(data != NULL && ((const float*)data)[0] == 6.0f && ((const float*)data)[2] == 18.0f);
    sg_session_release(s);
  }
  sg_program_release(p);
  sg_status_release(st);
}

struct test {
  const char* name;
  void (*run)(void);
};

/* Devices: "cpu" always; "cuda" where this library has the CUDA backend
 * (SG_CAPI_TEST_CUDA: the test linked with it), where a machine without a GPU
 * refuses the session (SG_UNSUPPORTED, "no CUDA device: ...") and one with a GPU
 * runs it. A malformed device is SG_INVALID_ARGUMENT. */
static void test_device(void) {
  sg_status* st = sg_status_create();
  sg_program* p = load(st);
  sg_session_options* o = NULL;
  CHECK_OK(sg_session_options_create(&o, st), st);
  CHECK_CODE(sg_session_options_set_device(o, "cuda:x", st), SG_INVALID_ARGUMENT, st);
  CHECK(CONTAINS(sg_status_message(st), "invalid device 'cuda:x'"));
  CHECK_CODE(sg_session_options_set_device(o, "tpu", st), SG_INVALID_ARGUMENT, st);
  CHECK_CODE(sg_session_options_set_device(o, "cuda:", st), SG_INVALID_ARGUMENT, st);
  CHECK_OK(sg_session_options_set_device(o, "cpu", st), st);
#ifdef SG_CAPI_TEST_CUDA
  {
    sg_code code;
    sg_session* s = NULL;
    CHECK_OK(sg_session_options_set_device(o, "cuda", st), st);
    code = sg_session_create(p, "affine", o, &s, st);
    if (code == SG_UNSUPPORTED) {
      CHECK(CONTAINS(sg_status_message(st), "no CUDA device: "));
      CHECK(s == NULL);
      printf("device: no GPU here: %s\n", sg_status_message(st));
    } else {
      const int64_t xs[2] = {2, 3}, ws[2] = {3, 2};
      const void* data = NULL;
      size_t k;
      CHECK(code == SG_OK);
      if (s != NULL) {
        CHECK_OK(sg_session_set_input(s, "x", SG_F32, xs, 2, kX, sizeof kX, st), st);
        CHECK_OK(sg_session_set_input(s, "w", SG_F32, ws, 2, kW, sizeof kW, st), st);
        CHECK_OK(sg_session_run(s, st), st);
        CHECK_OK(sg_session_output(s, 0, &data, NULL, NULL, NULL, st), st);
        for (k = 0; data != NULL && k < sizeof kY / sizeof kY[0]; ++k) {
          const float got = ((const float*)data)[k], want = kY[k];
          CHECK(got - want <= 1e-5f * (want < 0 ? -want : want) + 1e-6f &&
                want - got <= 1e-5f * (want < 0 ? -want : want) + 1e-6f);
        }
        sg_session_release(s);
      }
    }
  }
#else
  CHECK_CODE(sg_session_options_set_device(o, "cuda", st), SG_UNSUPPORTED, st);
  CHECK(CONTAINS(sg_status_message(st), "not available in this build"));
#endif
  /* The test device (host memory behind the device interface) is always there. */
  CHECK_OK(sg_session_options_set_device(o, "test", st), st);
  CHECK_OK(sg_session_options_set_device(o, "cpu", st), st);
  sg_session_options_release(o);
  sg_program_release(p);
  sg_status_release(st);
}

/* fit_step's loss on x, y (N = 4), or -1 when the run fails. */
static float fit_once(sg_session* s, const float* x, const float* y, sg_status* st) {
  const int64_t xs[2] = {4, 3}, ys[1] = {4};
  const void* data = NULL;
  if (sg_session_set_input(s, "x", SG_F32, xs, 2, x, 12 * sizeof(float), st) != SG_OK) return -1.0f;
  if (sg_session_set_input(s, "y", SG_F32, ys, 1, y, 4 * sizeof(float), st) != SG_OK) return -1.0f;
  if (sg_session_run(s, st) != SG_OK) return -1.0f;
  if (sg_session_output(s, 0, &data, NULL, NULL, NULL, st) != SG_OK) return -1.0f;
  return *(const float*)data;
}

/* fit_predict's output 0 (4 floats) on x into `out`; 0 when the run fails. */
static int predict_once(sg_session* s, const float* x, float* out, sg_status* st) {
  const int64_t xs[2] = {4, 3};
  const void* data = NULL;
  if (sg_session_set_input(s, "x", SG_F32, xs, 2, x, 12 * sizeof(float), st) != SG_OK) return 0;
  if (sg_session_run(s, st) != SG_OK) return 0;
  if (sg_session_output(s, 0, &data, NULL, NULL, NULL, st) != SG_OK || data == NULL) return 0;
  memcpy(out, data, 4 * sizeof(float));
  return 1;
}

/* Whether the files at a and b hold the same bytes. */
static int same_file(const char* a, const char* b) {
  size_t na = 0, nb = 0;
  unsigned char* x = read_file(a, &na);
  unsigned char* y = read_file(b, &nb);
  const int same = x != NULL && y != NULL && na == nb && memcmp(x, y, na) == 0;
  free(x);
  free(y);
  return same;
}

/* Training through the C API: the loss falls over steps; a failed step changes no
 * variable; the variables saved and loaded into new sessions give the same
 * predictions bit for bit (and not an untrained session's), the same next step,
 * and save back to the same bytes; a missing or truncated file is refused and
 * changes nothing. */
static void test_variables(void) {
  sg_status* st = sg_status_create();
  sg_program* p = load(st);
  sg_program* q = load(st);
  sg_session* train = session_for(p, "fit_step", NULL, st);
  sg_session* again = session_for(p, "fit_step", NULL, st);
  sg_session* predict = session_for(p, "fit_predict", NULL, st);
  sg_session* untrained = session_for(p, "fit_predict", NULL, st);
  sg_session* other = session_for(q, "fit_predict", NULL, st);
  const float x[12] = {1, 0, 0, 0, 1, 0, 0, 0, 1, 1, 1, 1};
  const float y[4] = {1, -2, 0.5f, -0.5f}, bad[4] = {1, 2, 3, 1e6f};
  const char* path = "capi_variables.safetensors";
  const char* resaved = "capi_variables_resaved.safetensors";
  const char* cut = "capi_variables_cut.safetensors";
  const void* data = NULL;
  float losses[201], next, replay, before[4], trained[4], reloaded[4], after[4];
  unsigned char* bytes;
  size_t nbytes = 0;
  FILE* f;
  int i, falls = 1;
  if (train == NULL || again == NULL || predict == NULL || untrained == NULL || other == NULL) return;
  CHECK(predict_once(untrained, x, before, st));
  for (i = 0; i < 201; ++i) losses[i] = fit_once(train, x, y, st);
  /* The loss falls at every step, by three orders of magnitude overall. */
  for (i = 1; i < 201; ++i) falls = falls && losses[i] >= 0.0f && losses[i] < losses[i - 1];
  CHECK(falls);
  CHECK(losses[0] > 0.5f && losses[200] < losses[0] * 1e-3f);
  /* A failing step (its assert) stores nothing. */
  CHECK(fit_once(train, x, bad, st) < 0.0f && sg_status_code(st) == SG_RUNTIME_ERROR);
  CHECK_OK(sg_session_save_variables(train, path, st), st);
  next = fit_once(train, x, y, st);
  /* Another session loaded from the file saves the same bytes and takes the same next step. */
  CHECK_OK(sg_session_load_variables(again, path, st), st);
  CHECK_OK(sg_session_save_variables(again, resaved, st), st);
  CHECK(same_file(path, resaved));
  replay = fit_once(again, x, y, st);
  CHECK(next >= 0.0f && replay == next);
  /* Predictions from the loaded variables fit y, differ from the untrained ones, and
   * are the same bits from a session of another program loaded from the file. */
  CHECK_OK(sg_session_load_variables(predict, path, st), st);
  CHECK(predict_once(predict, x, trained, st));
  for (i = 0; i < 4; ++i) CHECK(fabsf(trained[i] - y[i]) < 0.05f);
  CHECK(memcmp(trained, before, sizeof trained) != 0);
  CHECK_OK(sg_session_load_variables(other, path, st), st);
  CHECK(predict_once(other, x, reloaded, st));
  CHECK(memcmp(trained, reloaded, sizeof trained) == 0);
  CHECK_OK(sg_session_output(predict, 1, &data, NULL, NULL, NULL, st), st);
  CHECK(data != NULL && *(const int64_t*)data == 201);
  /* The untrained session's variables are its own: still the file's values. */
  CHECK(predict_once(untrained, x, after, st));
  CHECK(memcmp(before, after, sizeof before) == 0);
  /* Refused files change nothing: a missing one, a truncated one. */
  CHECK_CODE(sg_session_load_variables(predict, "no_such_file.safetensors", st), SG_NOT_FOUND, st);
  CHECK(CONTAINS(sg_status_message(st), "no_such_file.safetensors"));
  bytes = read_file(path, &nbytes);
  CHECK(bytes != NULL && nbytes > 8);
  f = fopen(cut, "wb");
  CHECK(f != NULL);
  if (f != NULL && bytes != NULL && nbytes > 8) {
    CHECK(fwrite(bytes, 1, nbytes - 4, f) == nbytes - 4);
    fclose(f);
    CHECK(sg_session_load_variables(predict, cut, st) != SG_OK);
    CHECK(CONTAINS(sg_status_message(st), cut));
  } else if (f != NULL) {
    fclose(f);
  }
  free(bytes);
  CHECK(predict_once(predict, x, after, st));
  CHECK(memcmp(trained, after, sizeof trained) == 0);
  /* Copied between sessions without a file: from another fit_predict session, and
   * from fit_step's session (one step past the file) into sessions of this program
   * and of the other one, which then predict the same bits as each other. */
  CHECK_OK(sg_session_copy_variables(untrained, predict, st), st);
  CHECK(predict_once(untrained, x, after, st));
  CHECK(memcmp(trained, after, sizeof trained) == 0);
  CHECK_OK(sg_session_copy_variables(untrained, train, st), st);
  CHECK_OK(sg_session_copy_variables(other, train, st), st);
  CHECK(predict_once(untrained, x, after, st));
  CHECK(predict_once(other, x, reloaded, st));
  CHECK(memcmp(after, reloaded, sizeof after) == 0 && memcmp(after, trained, sizeof after) != 0);
  CHECK_CODE(sg_session_copy_variables(untrained, NULL, st), SG_INVALID_ARGUMENT, st);
  remove(path);
  remove(resaved);
  remove(cut);
  sg_session_release(train);
  sg_session_release(again);
  sg_session_release(predict);
  sg_session_release(untrained);
  sg_session_release(other);
  sg_program_release(p);
  sg_program_release(q);
  sg_status_release(st);
}

static const struct test kTests[] = {
    {"version", test_version},
    {"inspect", test_inspect},
    {"load_memory", test_load_memory},
    {"load_fd", test_load_fd},
    {"verify_data", test_verify_data},
    {"run", test_run},
    {"input_memory_changes", test_input_memory_changes},
    {"bound_outputs", test_bound_outputs},
    {"unknown_input", test_unknown_input},
    {"errors", test_errors},
    {"cancel", test_cancel},
    {"second_thread", test_second_thread},
    {"deadline", test_deadline},
    {"memory_limit", test_memory_limit},
    {"text_callback", test_text_callback},
    {"shared_pool", test_shared_pool},
    {"custom_op", test_custom_op},
    {"custom_op_v2", test_custom_op_v2},
    {"device", test_device},
    {"variables", test_variables},
};

int main(int argc, char** argv) {
  size_t i;
  if (argc != 3 && argc != 4) {
    fprintf(stderr, "usage: capi_test GRAPH TEST [CUSTOM_OP_GRAPH]\n");
    return 2;
  }
  graph_path = argv[1];
  custom_graph_path = argc == 4 ? argv[3] : NULL;
  for (i = 0; i < sizeof kTests / sizeof kTests[0]; ++i) {
    if (strcmp(argv[2], kTests[i].name) != 0) continue;
    kTests[i].run();
    if (failures == 0) printf("%s: passed\n", kTests[i].name);
    return failures == 0 ? 0 : 1;
  }
  fprintf(stderr, "capi_test: unknown test '%s'\n", argv[2]);
  return 2;
}
