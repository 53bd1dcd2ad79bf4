/* sg-capi-probe GRAPH [ENTRY]: size_probe.cc's program in C over the C API: load a
 * graph file, create a session on an entry point (the first by default), bind each
 * input to zeros (symbolic dims 1), run once, print each output's dtype and shape.
 * Linked against the core (sg-core-capi-probe) it measures the core + the C API.
 * Exit status: 0 ok, 1 usage, 2 graph refused, 3 run failed. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "stagegraph/c_api.h"

static int fail(sg_status* st, int code) {
  fprintf(stderr, "sg-capi-probe: %s\n", sg_status_message(st));
  return code;
}

int main(int argc, char** argv) {
  if (argc < 2 || argc > 3) {
    fprintf(stderr, "usage: sg-capi-probe GRAPH.sgraph [ENTRY]\n");
    return 1;
  }
  sg_status* st = sg_status_create();
  sg_program* prog = NULL;
  if (sg_program_load_file(argv[1], 0, &prog, st) != SG_OK) return fail(st, 2);
  const sg_entry* entry = argc == 3 ? sg_program_find_entry(prog, argv[2]) : sg_program_entry(prog, 0);
  if (entry == NULL) {
    fprintf(stderr, "sg-capi-probe: %s: no such entry point\n", argv[1]);
    return 2;
  }
  sg_session* s = NULL;
  if (sg_session_create(prog, sg_entry_name(entry), NULL, &s, st) != SG_OK) return fail(st, 2);
  const size_t n_in = sg_entry_num_inputs(entry);
  void** buffers = calloc(n_in + 1, sizeof(void*));
  for (size_t i = 0; i < n_in; ++i) {
    const sg_tensor_info* t = sg_entry_input(entry, i);
    const size_t rank = sg_tensor_info_rank(t);
    int64_t shape[16];
    size_t bytes = sg_dtype_size(sg_tensor_info_dtype(t));
    for (size_t d = 0; d < rank && d < 16; ++d) {
      const int64_t dim = sg_tensor_info_dim(t, d);
      shape[d] = dim < 0 ? 1 : dim;
      bytes *= (size_t)shape[d];
    }
    buffers[i] = calloc(bytes > 0 ? bytes : 1, 1);
    if (sg_session_set_input_at(s, i, sg_tensor_info_dtype(t), shape, rank, buffers[i], bytes, st) != SG_OK)
      return fail(st, 2);
  }
  if (sg_session_run(s, st) != SG_OK) return fail(st, 3);
  for (size_t i = 0; i < sg_session_num_outputs(s); ++i) {
    sg_dtype dtype;
    const int64_t* dims;
    size_t rank;
    if (sg_session_output(s, i, NULL, &dtype, &dims, &rank, st) != SG_OK) return fail(st, 3);
    printf("%s: %s[", sg_tensor_info_name(sg_entry_output(entry, i)), sg_dtype_name(dtype));
    for (size_t d = 0; d < rank; ++d) printf(d ? ", %lld" : "%lld", (long long)dims[d]);
    printf("]\n");
  }
  sg_session_release(s);
  sg_program_release(prog);
  for (size_t i = 0; i < n_in; ++i) free(buffers[i]);
  free(buffers);
  sg_status_release(st);
  return 0;
}
