// graph-compile: stages a Python model into a .sgraph file (SPEC.md §8, §9).
// Exit status: 0 success (warnings alone included), 1 usage or compile error.
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "emit/emit.h"
#include "frontend/diagnostics.h"
#include "frontend/parser.h"
#include "ir/ir.h"
#include "passes/passes.h"
#include "staging/stage.h"

namespace {

constexpr const char* kUsage =
    "usage: graph-compile MODEL.py [-o OUT.sgraph] [--entry NAME]... [--weights FILE.safetensors]\n"
    "                     [--Werror] [-O0|-O1|-O2] [--explain-staging] [--diagnostics=text|json]\n"
    "                     [--dump-ir]\n";

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
    } else if (a.size() > 1 && a[0] == '-') {
      return usage_error("unknown option '" + std::string(a) + "'");
    } else if (o->model.empty()) {
      o->model = std::string(a);
    } else {
      return usage_error("more than one model file: '" + o->model + "' and '" + std::string(a) + "'");
    }
  }
  if (o->model.empty()) return usage_error("no model file given");
  if (o->output.empty()) {
    const std::string& m = o->model;
    const bool py = m.size() > 3 && m.compare(m.size() - 3, 3, ".py") == 0;
    o->output = (py ? m.substr(0, m.size() - 3) : m) + ".sgraph";
  }
  return -1;
}

bool read_file(const std::string& path, std::string* text, std::string* error) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) {
    *error = "it is a directory";
    return false;
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    *error = std::strerror(errno);
    return false;
  }
  std::ostringstream ss;
  ss << in.rdbuf();
  if (in.bad()) {
    *error = std::strerror(errno);
    return false;
  }
  *text = ss.str();
  return true;
}

// Writes beside the target and renames, so a failed or interrupted compile never
// leaves a half-written graph where a good one is expected.
bool write_file_atomically(const std::string& path, const std::vector<uint8_t>& bytes, std::string* error) {
  const std::string tmp = path + ".tmp-" + std::to_string(getpid());
  FILE* f = std::fopen(tmp.c_str(), "wb");
  if (!f) {
    *error = "cannot write '" + tmp + "': " + std::strerror(errno);
    return false;
  }
  const bool written = std::fwrite(bytes.data(), 1, bytes.size(), f) == bytes.size();
  const int write_errno = errno;
  if (std::fclose(f) != 0 || !written) {
    *error = "cannot write '" + tmp + "': " + std::strerror(written ? errno : write_errno);
    std::remove(tmp.c_str());
    return false;
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    *error = "cannot write '" + path + "': " + std::strerror(errno);
    std::remove(tmp.c_str());
    return false;
  }
  return true;
}

int compile(const Options& o) {
  namespace sc = sg::compiler;
  std::string text, error;
  if (!read_file(o.model, &text, &error)) {
    std::cerr << "graph-compile: error: cannot read '" << o.model << "': " << error << "\n";
    return 1;
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
    std::error_code ec;
    const bool dir = std::filesystem::is_directory(o.weights, ec);
    if (dir || !std::ifstream(o.weights, std::ios::binary)) {
      std::cerr << "graph-compile: error: cannot read weights file '" << o.weights
                << "': " << (dir ? "it is a directory" : std::strerror(errno)) << "\n";
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

  std::vector<uint8_t> bytes;
  if (!sc::emit_graph(*ir, &bytes, &error)) {
    std::cerr << "graph-compile: error: " << error << "\n";
    return 1;
  }
  if (!write_file_atomically(o.output, bytes, &error)) {
    std::cerr << "graph-compile: error: " << error << "\n";
    return 1;
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  Options options;
  if (int rc = parse_args(argc, argv, &options); rc >= 0) return rc;
  return compile(options);
}
