// Whose malloc, free and operator new/delete a program gets once it links the
// runtime. The runtime calls mimalloc only through its allocator interface, and
// libmimalloc.so also exports malloc and new: an executable that has it in its own
// DT_NEEDED list ahead of libc gets mimalloc for the whole process, which a
// library must never decide for its host.
//
//   malloc_owner EXPECT [GRAPH]
//
// EXPECT is the library the host's malloc and operator new must come from: "libc"
// (malloc from libc.so, new from libstdc++.so) or "mimalloc" (the control case, a
// program that links mimalloc itself). With GRAPH, its first entry point is run on
// inputs of ones (symbolic dims 2) before the check, so the runtime's allocator has
// served tensors and plans.
#include <dlfcn.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "stagegraph/runtime.h"
#include "stagegraph/version.h"

namespace {

std::string library_of(const char* symbol) {
  void* address = dlsym(RTLD_DEFAULT, symbol);
  Dl_info info;
  if (address == nullptr || dladdr(address, &info) == 0 || info.dli_fname == nullptr) return "(not found)";
  return info.dli_fname;
}

bool basename_starts_with(const std::string& path, const std::string& prefix) {
  const size_t slash = path.rfind('/');
  return path.compare(slash == std::string::npos ? 0 : slash + 1, prefix.size(), prefix) == 0;
}

int run_graph(const char* path) {
  auto program = sg::Program::load_file(path);
  if (!program.ok()) {
    std::fprintf(stderr, "%s: %s\n", path, program.status().message().c_str());
    return 1;
  }
  const sg::EntryInfo& entry = (*program)->entries().at(0);
  auto session = sg::Session::create(*program, entry.name);
  if (!session.ok()) {
    std::fprintf(stderr, "%s\n", session.status().message().c_str());
    return 1;
  }
  for (const sg::TensorSpec& spec : entry.inputs) {
    std::vector<int64_t> shape = spec.shape;
    for (int64_t& d : shape) d = d < 0 ? 2 : d;
    auto t = sg::Tensor::zeros(spec.dtype, shape);
    if (!t.ok()) return 1;
    if (spec.dtype == sg::DType::kF32)
      for (int64_t i = 0; i < t->numel(); ++i) t->data_as<float>()[i] = 1.0f / float(1 + i % 7);
    sg::Status s = (*session)->set_input(spec.name, *t);
    if (!s.ok()) {
      std::fprintf(stderr, "%s\n", s.message().c_str());
      return 1;
    }
  }
  for (int run = 0; run < 2; ++run) {
    sg::Status s = (*session)->run();
    if (!s.ok()) {
      std::fprintf(stderr, "%s\n", s.message().c_str());
      return 1;
    }
  }
  sg::Result<sg::Tensor> output = (*session)->output(0);
  if (!output.ok()) {
    std::fprintf(stderr, "%s\n", output.status().message().c_str());
    return 1;
  }
  const sg::Tensor& y = *output;
  if (y.dtype() == sg::DType::kF32)
    for (int64_t i = 0; i < y.numel(); ++i)
      if (!std::isfinite(y.data_as<float>()[i])) {
        std::fprintf(stderr, "%s: output %lld is not finite\n", path, static_cast<long long>(i));
        return 1;
      }
  std::printf("ran %s: %s, %lld output values\n", path, entry.name.c_str(), static_cast<long long>(y.numel()));
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2 || (std::strcmp(argv[1], "libc") != 0 && std::strcmp(argv[1], "mimalloc") != 0)) {
    std::fprintf(stderr, "usage: malloc_owner libc|mimalloc [GRAPH]\n");
    return 2;
  }
  const bool expect_libc = std::strcmp(argv[1], "libc") == 0;
  const sg::LibraryVersion v = sg::library_version();
  if (std::strcmp(v.string, STAGEGRAPH_VERSION_STRING) != 0) {
    std::fprintf(stderr, "library version %s, headers %s\n", v.string, STAGEGRAPH_VERSION_STRING);
    return 1;
  }
  // The runtime's own allocator (mimalloc in the shared library), the host's.
  auto t = sg::Tensor::zeros(sg::DType::kF32, std::vector<int64_t>{256, 256});
  if (!t.ok()) return 1;
  auto host = std::make_unique<float[]>(4096);
  void* p = std::malloc(1000);
  std::free(p);
  if (argc > 2 && run_graph(argv[2]) != 0) return 1;

  struct Check {
    const char* symbol;
    const char* what;
    const char* expected;
  };
  const char* c_lib = expect_libc ? "libc.so" : "libmimalloc";
  const char* cxx_lib = expect_libc ? "libstdc++.so" : "libmimalloc";
  const Check checks[] = {
      {"malloc", "malloc", c_lib},
      {"free", "free", c_lib},
      {"calloc", "calloc", c_lib},
      {"realloc", "realloc", c_lib},
      {"posix_memalign", "posix_memalign", c_lib},
      {"_Znwm", "operator new(size_t)", cxx_lib},
      {"_ZdlPv", "operator delete(void*)", cxx_lib},
      {"_ZnwmSt11align_val_t", "operator new(size_t, align_val_t)", cxx_lib},
  };
  int failures = 0;
  for (const Check& c : checks) {
    const std::string lib = library_of(c.symbol);
    const bool ok = basename_starts_with(lib, c.expected);
    std::printf("%-36s %s\n", c.what, lib.c_str());
    if (!ok) {
      std::printf("  error: %s comes from %s, expected %s\n", c.what, lib.c_str(), c.expected);
      ++failures;
    }
  }
  return failures == 0 ? 0 : 1;
}
