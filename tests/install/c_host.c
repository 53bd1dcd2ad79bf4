/* A C host of libstagegraph.so (linked by the C compiler: no libstdc++ of its
 * own), as a C application or a JVM is. After running a graph through the C API
 * it checks whose allocator the process got:
 *
 *   c_host GRAPH MIMALLOC_SONAME|system
 *
 * malloc and free must come from libc, operator new and delete from libstdc++
 * (which libstagegraph.so brought), and nothing of mimalloc may be in the global
 * symbol scope. Given mimalloc's SONAME (a build with SG_WITH_MIMALLOC), the
 * runtime must have loaded it for its own tensors all the same, privately. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <stagegraph/c_api.h>

static int failures = 0;

static const char* library_of(const char* symbol) {
  Dl_info info;
  void* address = dlsym(RTLD_DEFAULT, symbol);
  if (address == NULL || dladdr(address, &info) == 0 || info.dli_fname == NULL) return "(not found)";
  return info.dli_fname;
}

static void expect_from(const char* symbol, const char* library) {
  const char* path = library_of(symbol);
  const char* slash = strrchr(path, '/');
  const char* base = slash != NULL ? slash + 1 : path;
  printf("%-28s %s\n", symbol, path);
  if (strncmp(base, library, strlen(library)) != 0) {
    printf("  error: %s comes from %s, expected %s\n", symbol, path, library);
    ++failures;
  }
}

/* Runs the first entry on inputs of ones (symbolic dims 2), twice. */
static int run_graph(const char* path) {
  sg_status* st = sg_status_create();
  sg_program* p = NULL;
  sg_session* s = NULL;
  void* buffers[16] = {0};
  size_t k, n = 0;
  int ok = sg_program_load_file(path, 0, &p, st) == SG_OK &&
           sg_session_create(p, sg_entry_name(sg_program_entry(p, 0)), NULL, &s, st) == SG_OK;
  const sg_entry* e = ok ? sg_session_entry(s) : NULL;
  for (k = 0; ok && k < sg_entry_num_inputs(e) && k < 16; ++k) {
    const sg_tensor_info* in = sg_entry_input(e, k);
    int64_t shape[8];
    size_t a, count = 1, rank = sg_tensor_info_rank(in);
    for (a = 0; a < rank && a < 8; ++a) {
      shape[a] = sg_tensor_info_dim(in, a) < 0 ? 2 : sg_tensor_info_dim(in, a);
      count *= (size_t)shape[a];
    }
    buffers[n] = calloc(count, sg_dtype_size(sg_tensor_info_dtype(in)));
    ok = buffers[n] != NULL && sg_session_set_input_at(s, k, sg_tensor_info_dtype(in), shape, rank, buffers[n],
                                                       count * sg_dtype_size(sg_tensor_info_dtype(in)), st) == SG_OK;
    ++n;
  }
  ok = ok && sg_session_run(s, st) == SG_OK && sg_session_run(s, st) == SG_OK;
  if (!ok) fprintf(stderr, "%s: %s\n", path, sg_status_message(st));
  else printf("ran %s: %s\n", path, sg_entry_name(e));
  for (k = 0; k < n; ++k) free(buffers[k]);
  sg_session_release(s);
  sg_program_release(p);
  sg_status_release(st);
  return ok;
}

int main(int argc, char** argv) {
  void* mimalloc;
  const int expect_mimalloc = argc == 3 && strcmp(argv[2], "system") != 0;
  if (argc != 3) {
    fprintf(stderr, "usage: c_host GRAPH MIMALLOC_SONAME|system\n");
    return 2;
  }
  if (!run_graph(argv[1])) return 1;
  expect_from("malloc", "libc.so");
  expect_from("free", "libc.so");
  expect_from("posix_memalign", "libc.so");
  expect_from("_Znwm", "libstdc++.so");
  expect_from("_ZdlPv", "libstdc++.so");
  expect_from("_ZnwmSt11align_val_t", "libstdc++.so");
  if (dlsym(RTLD_DEFAULT, "mi_malloc") != NULL || dlsym(RTLD_DEFAULT, "mi_free") != NULL) {
    printf("  error: mimalloc's functions are in the process's global scope (%s)\n", library_of("mi_malloc"));
    ++failures;
  }
  /* Loaded (privately) by the runtime's allocator, or not at all. */
  mimalloc = expect_mimalloc ? dlopen(argv[2], RTLD_LAZY | RTLD_NOLOAD) : NULL;
  if (expect_mimalloc) {
    printf("%s %s\n", argv[2], mimalloc != NULL ? "loaded by the runtime, not global" : "not loaded");
    if (mimalloc == NULL) {
      printf("  error: the runtime did not load %s for its tensors\n", argv[2]);
      ++failures;
    }
  }
  if (mimalloc != NULL) dlclose(mimalloc);
  return failures == 0 ? 0 : 1;
}
