// sg-size-probe GRAPH [ENTRY]: the smallest complete use of the C++ runtime — load a
// graph file, create a Session on an entry point (the first by default), bind each
// input to zeros (symbolic dims 1), run once, print each output's dtype and shape.
// mobile/sizes.sh measures its stripped size for each build (core, selective,
// everything) and counts its instructions under callgrind (load + first run).
// Exit status: 0 ok, 1 usage, 2 graph refused, 3 run failed.
#include <cstdio>
#include <string>
#include <vector>

#include "stagegraph/runtime.h"

int main(int argc, char** argv) {
  if (argc < 2 || argc > 3) {
    std::fprintf(stderr, "usage: sg-size-probe GRAPH.sgraph [ENTRY]\n");
    return 1;
  }
  auto program = sg::Program::load_file(argv[1]);
  if (!program.ok()) {
    std::fprintf(stderr, "sg-size-probe: %s: %s\n", argv[1], program.status().message().c_str());
    return 2;
  }
  const std::vector<sg::EntryInfo>& entries = (*program)->entries();
  const sg::EntryInfo* entry = argc == 3 ? (*program)->find_entry(argv[2]) : entries.empty() ? nullptr : &entries[0];
  if (entry == nullptr) {
    std::fprintf(stderr, "sg-size-probe: %s: no such entry point\n", argv[1]);
    return 2;
  }
  auto session = sg::Session::create(*program, entry->name);
  if (!session.ok()) {
    std::fprintf(stderr, "sg-size-probe: %s\n", session.status().message().c_str());
    return 2;
  }
  for (const sg::TensorSpec& in : entry->inputs) {
    std::vector<int64_t> shape;
    for (int64_t d : in.shape) shape.push_back(d < 0 ? 1 : d);
    auto t = sg::Tensor::zeros(in.dtype, shape);
    if (!t.ok()) {
      std::fprintf(stderr, "sg-size-probe: %s\n", t.status().message().c_str());
      return 3;
    }
    if (sg::Status s = (*session)->set_input(in.name, std::move(*t)); !s.ok()) {
      std::fprintf(stderr, "sg-size-probe: %s\n", s.message().c_str());
      return 2;
    }
  }
  if (sg::Status s = (*session)->run(); !s.ok()) {
    std::fprintf(stderr, "sg-size-probe: %s\n", s.message().c_str());
    return 3;
  }
  for (size_t i = 0; i < (*session)->num_outputs(); ++i) {
    auto out = (*session)->output(i);
    if (!out.ok()) {
      std::fprintf(stderr, "sg-size-probe: %s\n", out.status().message().c_str());
      return 3;
    }
    const sg::Tensor& y = *out;
    std::string shape;
    for (int64_t d : y.shape()) shape += (shape.empty() ? "" : ", ") + std::to_string(d);
    std::printf("%s: %s[%s]\n", i < entry->outputs.size() ? entry->outputs[i].name.c_str() : "?",
                sg::dtype_name(y.dtype()), shape.c_str());
  }
  return 0;
}
