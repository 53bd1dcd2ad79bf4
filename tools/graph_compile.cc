// graph-compile: stages a Python model into a .sgraph file (SPEC.md §8, §9).
// Exit status: 0 success (warnings alone included), 1 usage or compile error.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "emit/emit.h"
#include "frontend/diagnostics.h"
#include "frontend/parser.h"
#include "ir/ir.h"
#include "out_of_memory.h"
#include "passes/passes.h"
#include "staging/stage.h"

namespace {

constexpr const char* kUsage =
    "usage: graph-compile MODEL.py [-o OUT.sgraph] [--entry NAME]... [--weights FILE.safetensors]\n"
    "                     [--Werror] [-O0|-O1|-O2] [--explain-staging] [--diagnostics=text|json]\n"
    "                     [--dump-ir] [--quantize int8|int4|bf16|f16] [--quantize-embeddings]\n"
    "                     [--quantize-report]\n";

constexpr const char* kHelp =
    "Stages a Stagegraph Python model into a graph file.\n"
    "\n"
    "  MODEL.py                the model; FILE in diagnostics is this path as given\n"
    "  -o OUT.sgraph           output file (default: MODEL.sgraph beside the source)\n"
    "  --entry NAME            export only this @sg.function entry point (repeatable;\n"
    "                          default: every top-level @sg.function)\n"
    "  --weights FILE          safetensors file that sg.weight(name) reads, baked into the graph\n"
    "  --Werror                treat warnings as errors\n"
    "  -O0, -O1, -O2           optimization level (default -O2): -O1 simplifies (an if\n"
    "                          that only chooses values becomes a where), folds constants,\n"
    "                          merges common subexpressions and removes dead code; -O2\n"
    "                          also fuses matmul/conv2d + bias + relu (matmul + bias +\n"
    "                          tanh too) and hoists loop invariants out of while loops\n"
    "  --explain-staging       print, for every if/while/for, whether it was staged or run\n"
    "                          at compile time, and why\n"
    "  --diagnostics=FORMAT    'text' (default; gcc style) or 'json' (one object per line)\n"
    "  --dump-ir               print the IR to stdout\n"
    "  --quantize STORAGE      store the weights of dense and convolution layers as int8 (a\n"
    "                          scale per output channel), int4 (a scale per block of 32),\n"
    "                          bf16 or f16; sg.weight(name, quantize=...) sets one weight\n"
    "  --quantize-embeddings   with --quantize: embedding tables (read by take) too\n"
    "  --quantize-report       print each quantized weight's bytes before and after and its\n"
    "                          max and mean absolute quantization error\n"
    "  -h, --help              show this help\n"
    "\n"
    "Exit status: 0 on success (warnings alone included), 1 on a usage or compile error.\n";

struct Options {
  std::string model;
  std::string output;
  std::vector<std::string> entries;
  std::string weights;
  bool werror = false;
  int opt_level = 2;
  bool explain_staging = false;
  bool json = false;
  bool dump_ir = false;
  sg::compiler::QuantizeOptions quantize;
  bool quantize_report = false;
};

int usage_error(const std::string& message) {
  std::cerr << "graph-compile: error: " << message << "\n" << kUsage;
  return 1;
}

// Parses argv into *o. Returns -1 to continue, else the exit status.
int parse_args(int argc, char** argv, Options* o) {
  for (int i = 1; i < argc; ++i) {
    std::string_view a = argv[i];
    // Options with a value take it either as the next argument or after '='.
    auto value = [&](std::string_view flag, std::string* out) -> int {
      if (a == flag) {
        if (i + 1 >= argc) return usage_error(std::string(flag) + " needs a value");
        *out = argv[++i];
        return 0;
      }
      *out = std::string(a.substr(flag.size() + 1));
      if (out->empty()) return usage_error(std::string(flag) + " needs a value");
      return 0;
    };
    auto has_value = [&](std::string_view flag) {
      return a == flag || (a.size() > flag.size() && a.substr(0, flag.size()) == flag && a[flag.size()] == '=');
    };
    std::string v;
    if (a == "-h" || a == "--help") {
      std::cout << kUsage << "\n" << kHelp;
      return 0;
    } else if (has_value("-o") || has_value("--output")) {
      if (int rc = value(a.substr(0, 2) == "--" ? "--output" : "-o", &o->output)) return rc;
    } else if (has_value("--entry")) {
      if (int rc = value("--entry", &v)) return rc;
      o->entries.push_back(v);
    } else if (has_value("--weights")) {
      if (int rc = value("--weights", &o->weights)) return rc;
    } else if (a == "--Werror") {
      o->werror = true;
    } else if (a == "-O0" || a == "-O1" || a == "-O2") {
      o->opt_level = a[2] - '0';
    } else if (a == "--explain-staging") {
      o->explain_staging = true;
    } else if (a == "--diagnostics=text" || a == "--diagnostics=json") {
      o->json = a == "--diagnostics=json";
    } else if (a.substr(0, 13) == "--diagnostics") {
      return usage_error("--diagnostics must be 'text' or 'json'");
    } else if (a == "--dump-ir") {
      o->dump_ir = true;
    } else if (has_value("--quantize")) {
      if (int rc = value("--quantize", &v)) return rc;
      sg::kernels::quant::Storage storage;
      if (!sg::kernels::quant::storage_from_name(v, &storage) || storage == sg::kernels::quant::Storage::kF32)
        return usage_error("--quantize must be int8, int4, bf16 or f16, not '" + v + "'");
      o->quantize.storage = storage;
    } else if (a == "--quantize-embeddings") {
      o->quantize.embeddings = true;
    } else if (a == "--quantize-report") {
      o->quantize_report = true;
    } else if (a.size() > 1 && a[0] == '-') {
      return usage_error("unknown option '" + std::string(a) + "'");
    } else if (o->model.empty()) {
      o->model = std::string(a);
    } else {
      return usage_error("more than one model file: '" + o->model + "' and '" + std::string(a) + "'");
    }
  }
  if (o->model.empty()) return usage_error("no model file given");
  if (o->quantize.embeddings && !o->quantize.storage) return usage_error("--quantize-embeddings needs --quantize");
  if (o->output.empty()) {
    const std::string& m = o->model;
    const bool py = m.size() > 3 && m.compare(m.size() - 3, 3, ".py") == 0;
    o->output = (py ? m.substr(0, m.size() - 3) : m) + ".sgraph";
  }
  return -1;
}

// Sources are a few hundred KiB at most; past this the compile is refused before
// anything is read (a program this large would stage for minutes anyway).
constexpr uint64_t kMaxSourceBytes = uint64_t(16) << 20;

// Reads the model. Only a regular file is read, and only when it is within
// kMaxSourceBytes: a device or pipe (/dev/zero) could go on forever.
bool read_file(const std::string& path, std::string* text, std::string* error) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) {
    *error = std::strerror(errno);
    return false;
  }
  struct stat st {};
  bool ok = ::fstat(fd, &st) == 0;
  if (!ok) {
    *error = std::strerror(errno);
  } else if (S_ISDIR(st.st_mode)) {
    *error = "it is a directory";
    ok = false;
  } else if (!S_ISREG(st.st_mode)) {
    *error = "it is not a regular file (a device, pipe or socket); save the program to a file";
    ok = false;
  } else if (uint64_t(st.st_size) > kMaxSourceBytes) {
    *error = "it is " + std::to_string(st.st_size) + " bytes, over the limit of " + std::to_string(kMaxSourceBytes) +
             " bytes for a source file";
    ok = false;
  }
  if (ok) {
    text->resize(size_t(st.st_size));
    size_t got = 0;
    while (got < text->size()) {
      const ssize_t n = ::read(fd, text->data() + got, text->size() - got);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) {
        *error = std::strerror(errno);
        ok = false;
        break;
      }
      if (n == 0) break;  // the file shrank while being read
      got += size_t(n);
    }
    text->resize(got);
  }
  ::close(fd);
  return ok;
}

// Whether `a` and `b` name one file (both exist, same device and inode).
bool same_file(const std::string& a, const std::string& b) {
  struct stat sa {}, sb {};
  return ::stat(a.c_str(), &sa) == 0 && ::stat(b.c_str(), &sb) == 0 && sa.st_dev == sb.st_dev &&
         sa.st_ino == sb.st_ino;
}

bool write_all(int fd, const std::vector<uint8_t>& bytes) {
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += size_t(n);
  }
  return true;
}

// Writes the graph to `path`. A regular file (or a new one) is written beside the
// target and renamed over it, so a failed or interrupted compile never leaves a
// half-written graph where a good one is expected; a link is followed to the file
// it names, and that file is replaced. Anything else (a device such as /dev/null,
// a FIFO, /dev/stdout) is opened and written in place: renaming over it would
// replace the device node itself.
bool write_output(const std::string& path, const std::vector<uint8_t>& bytes, std::string* error) {
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode)) {
    if (S_ISDIR(st.st_mode)) {
      *error = "cannot write '" + path + "': it is a directory";
      return false;
    }
    const int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
    if (fd < 0) {
      *error = "cannot write '" + path + "': " + std::strerror(errno);
      return false;
    }
    const bool written = write_all(fd, bytes);
    const int write_errno = errno;
    if (::close(fd) != 0 || !written) {
      *error = "cannot write '" + path + "': " + std::strerror(written ? errno : write_errno);
      return false;
    }
    return true;
  }
  // A link is resolved so that the rename replaces its target, not the link.
  std::error_code ec;
  std::string target = path;
  if (std::filesystem::is_symlink(path, ec)) {
    const std::filesystem::path resolved = std::filesystem::weakly_canonical(path, ec);
    if (!ec) target = resolved.string();
  }
  const std::string tmp = target + ".tmp-" + std::to_string(getpid());
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
  if (fd < 0) {
    *error = "cannot write '" + tmp + "': " + std::strerror(errno);
    return false;
  }
  const bool written = write_all(fd, bytes);
  const int write_errno = errno;
  if (::close(fd) != 0 || !written) {
    *error = "cannot write '" + tmp + "': " + std::strerror(written ? errno : write_errno);
    std::remove(tmp.c_str());
    return false;
  }
  if (std::rename(tmp.c_str(), target.c_str()) != 0) {
    *error = "cannot write '" + target + "': " + std::strerror(errno);
    std::remove(tmp.c_str());
    return false;
  }
  return true;
}

// The runtime refuses a value whose static dims need more than 2^40 bytes (1 TiB;
// runtime/src/shape_check.h, kMaxDeclaredBytesLog2), zeros and symbolic dims
// skipped: such a graph is a compile error here, at the value's source location,
// rather than a file graph-run refuses with no location.
constexpr int kMaxDeclaredBytesLog2 = 40;

bool check_value_sizes(const sg::compiler::ir::Module& m, sg::compiler::DiagnosticEngine& diags) {
  constexpr uint64_t kMax = uint64_t(1) << kMaxDeclaredBytesLog2;
  bool ok = true;
  for (const auto& fn : m.functions) {
    for (const auto& v : fn.values) {
      uint64_t bytes = sg::dtype_size(v.type.dtype);
      bool over = false;
      for (const auto& d : v.type.shape) {
        const std::optional<int64_t> n = d.as_static();
        if (!n || *n <= 0) continue;
        if (bytes > kMax / uint64_t(*n)) {
          over = true;
          break;
        }
        bytes *= uint64_t(*n);
      }
      if (!over) continue;
      diags.error(v.span, "a tensor of type " + m.format_type(v.type) + " needs more than 2^" +
                              std::to_string(kMaxDeclaredBytesLog2) +
                              " bytes (1 TiB), more than any Stagegraph runtime holds");
      ok = false;
      break;  // one per function is enough: the rest follow from it
    }
  }
  return ok;
}

int compile(const Options& o) {
  namespace sc = sg::compiler;
  std::string text, error;
  if (!read_file(o.model, &text, &error)) {
    std::cerr << "graph-compile: error: cannot read '" << o.model << "': " << error << "\n";
    return 1;
  }
  // Checked before staging, which can take long: -o naming the source (or the
  // weights) would replace the program with its graph.
  for (const std::string* input : {&o.model, &o.weights}) {
    if (!input->empty() && same_file(*input, o.output)) {
      std::cerr << "graph-compile: error: the output '" << o.output << "' is the "
                << (input == &o.model ? "model source" : "weights file") << " '" << *input
                << "'; refusing to overwrite it (choose another -o)\n";
      return 1;
    }
  }
  sc::SourceManager sources;
  const uint32_t file = sources.add(o.model, std::move(text));
  sc::DiagnosticEngine diags(sources);
  diags.set_werror(o.werror);
  auto print_diagnostics = [&] {
    if (o.json) diags.print_json(std::cerr);
    else diags.print_text(std::cerr);
  };

  // The stager opens the weights file at the first sg.weight; one named on the
  // command line that cannot be read is a usage error even when no sg.weight is
  // reached, rather than silently unused.
  if (!o.weights.empty()) {
    struct stat st {};
    const bool exists = ::stat(o.weights.c_str(), &st) == 0;
    const int stat_errno = errno;
    const char* problem = !exists                 ? std::strerror(stat_errno)
                          : S_ISDIR(st.st_mode)   ? "it is a directory"
                          : !S_ISREG(st.st_mode)  ? "it is not a regular file"
                          : ::access(o.weights.c_str(), R_OK) != 0 ? std::strerror(errno)
                                                                  : nullptr;
    if (problem) {
      std::cerr << "graph-compile: error: cannot read weights file '" << o.weights << "': " << problem << "\n";
      return 1;
    }
  }
  std::unique_ptr<sc::Module> ast = sc::parse_module(sources, file, diags);
  if (!ast || diags.has_errors()) {
    print_diagnostics();
    return 1;
  }
  sc::StageOptions stage_options;
  stage_options.entries = o.entries;
  stage_options.weights_path = o.weights;
  stage_options.explain_staging = o.explain_staging ? &std::cout : nullptr;
  stage_options.compile_time_stdout = &std::cout;
  std::unique_ptr<sc::ir::Module> ir = sc::stage_module(*ast, sources, diags, stage_options);
  if (ir && !diags.has_errors()) check_value_sizes(*ir, diags);
  print_diagnostics();
  if (!ir || diags.has_errors()) return 1;
  ir->sources = &sources;

  if (std::string problem = sc::ir::verify(*ir); !problem.empty()) {
    std::cerr << "graph-compile: internal error: the staged IR is invalid: " << problem << "\n";
    return 1;
  }
  sc::passes::run_pipeline(*ir, o.opt_level);
  if (std::string problem = sc::ir::verify(*ir); !problem.empty()) {
    std::cerr << "graph-compile: internal error: the IR after -O" << o.opt_level << " is invalid: " << problem
              << "\n";
    return 1;
  }
  if (o.dump_ir) std::cout << sc::ir::print(*ir) << std::flush;

  std::vector<std::string> notes;
  const std::vector<sc::QuantizedConstant> quantized = sc::quantize_constants(*ir, o.quantize, &notes);
  for (const std::string& note : notes) std::cerr << "graph-compile: note: " << note << "\n";
  if (o.quantize_report) sc::print_quantize_report(quantized, std::cout);
  std::vector<uint8_t> bytes;
  if (!sc::emit_graph(*ir, &bytes, &error, &quantized)) {
    std::cerr << "graph-compile: error: " << error << "\n";
    return 1;
  }
  if (!write_output(o.output, bytes, &error)) {
    std::cerr << "graph-compile: error: " << error << "\n";
    return 1;
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  sg::tools::exit_on_out_of_memory("graph-compile", 1);
  return sg::tools::guard_out_of_memory([&] {
    Options options;
    if (int rc = parse_args(argc, argv, &options); rc >= 0) return rc;
    return compile(options);
  });
}
