// libFuzzer target: graphs that load are run, under a deadline and a memory limit.
// Arbitrary bytes go through Program::load_memory as in fuzz_load (a variant with
// the checksums repaired, so that mutations reach the verifier and the executor);
// each entry point of a graph that loads runs once on inputs of its declared
// types (symbolic dims 2, every element from the input's own bytes). A run may
// succeed or fail with any status; what it may not do is crash, read out of
// bounds, hang or grow without bound: an endless loop ends at the deadline
// (kDeadlineExceeded) and a runaway allocation at the memory limit
// (kLimitExceeded), so both count as handled, not as findings.
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <span>
#include <vector>

#include "sgraph_header.h"
#include "stagegraph/runtime.h"

namespace {

constexpr size_t kMemoryLimit = size_t(64) << 20;
constexpr auto kDeadline = std::chrono::milliseconds(200);

void load_and_run(std::span<const uint8_t> bytes) {
  auto program = sg::Program::load_memory(bytes);
  if (!program.ok()) return;
  for (const sg::EntryInfo& entry : (*program)->entries()) {
    sg::SessionOptions options;
    options.memory_limit_bytes = kMemoryLimit;
    options.run_timeout = kDeadline;
    options.max_call_depth = 200;
    auto session = sg::Session::create(*program, entry.name, options);
    if (!session.ok()) std::abort();  // every verified entry can be opened
    bool bound = true;
    for (size_t i = 0; i < entry.inputs.size() && bound; ++i) {
      std::vector<int64_t> shape;
      int64_t numel = 1;
      for (int64_t d : entry.inputs[i].shape) {
        shape.push_back(d < 0 ? 2 : d);
        numel *= shape.back();
      }
      if (numel > (int64_t(1) << 20)) return;  // a declared input too large to make here
      auto t = sg::Tensor::zeros(entry.inputs[i].dtype, shape);
      if (!t.ok()) return;
      // Small integers (loop bounds, indices) from the graph's own bytes: varied,
      // and the same for the same input.
      uint8_t* p = static_cast<uint8_t*>(t->data());
      const size_t n = t->nbytes();
      if (entry.inputs[i].dtype == sg::DType::kI64 || entry.inputs[i].dtype == sg::DType::kI32) {
        const size_t width = sg::dtype_size(entry.inputs[i].dtype);
        for (size_t k = 0; k + width <= n; k += width) p[k] = bytes.empty() ? 0 : bytes[(k + i) % bytes.size()] % 16;
      } else if (entry.inputs[i].dtype == sg::DType::kBool) {
        for (size_t k = 0; k < n; ++k) p[k] = bytes.empty() ? 0 : bytes[(k + i) % bytes.size()] & 1;
      }
      bound = (*session)->set_input(i, std::move(*t)).ok();
    }
    if (!bound) continue;
    const auto start = std::chrono::steady_clock::now();
    const sg::Status s = (*session)->run();
    // The deadline is checked between nodes: a run may pass it by one kernel, not
    // by seconds. (Generous under the sanitizers.)
    if (std::chrono::steady_clock::now() - start > kDeadline + std::chrono::seconds(10)) std::abort();
    (void)s;
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  sg::format::Header h;
  if (!sg::format::decode_header(data, size, &h) || h.table_offset > size || h.table_size > size - h.table_offset ||
      h.data_offset > size || h.data_size > size - h.data_offset) {
    load_and_run(std::span<const uint8_t>(data, size));
    return 0;
  }
  std::vector<uint8_t> fixed(data, data + size);
  h.table_crc = sg::format::crc32(fixed.data() + h.table_offset, size_t(h.table_size));
  h.data_crc = sg::format::crc32(fixed.data() + h.data_offset, size_t(h.data_size));
  h.data_xxh3 = sg::format::xxh3_64(fixed.data() + h.data_offset, size_t(h.data_size));
  sg::format::encode_header(h, fixed.data());
  load_and_run(fixed);
  return 0;
}
