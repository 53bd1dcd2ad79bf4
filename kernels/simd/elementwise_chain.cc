// elementwise_chain (the -O2 compiler's fusion of elementwise steps) on the row
// functions our own f32 kernels run: each block of kBlock elements goes through
// every step, its intermediates in L1, and only the inputs and the results touch
// memory (a step whose result is an output writes it there, and later steps read
// it back from the block just written). Each step is the op's own row function, called alone on its block (no
// expression across steps for the compiler to contract into an FMA), and each
// element of a row is the same whichever block it lies in, so the result has the
// unfused nodes' bytes on the same CPU.
#include <algorithm>
#include <string>
#include <vector>

#include "simd/simd.h"
#include "simd/simd_kernels.h"

namespace sg::kernels::xnn {
namespace {

using ops::attr::kMaxChainSteps;

// Elements per block: with 15 intermediates, 15 KiB of stack.
constexpr size_t kBlock = 256;
// Elements per task when the chain splits over threads.
constexpr size_t kTile = 16 * kBlock;
// Inputs a chain can name: two per step at most.
constexpr size_t kMaxInputs = 2 * kMaxChainSteps;

struct Step {
  BinaryRowFn binary = nullptr;  // one of the two
  UnaryRowFn unary = nullptr;
  uint32_t a = 0, b = 0;  // operands: inputs, then steps
  int32_t output = -1;    // the output it writes, or -1 (a temporary)
};

struct ChainTask {
  const std::vector<Step>* steps;
  size_t inputs;
  const float* in[kMaxInputs];
  bool step[kMaxInputs];  // false: the input is one element
  float* out[kMaxChainSteps];
};

void run_range(void* context, size_t begin, size_t count) {
  const ChainTask& t = *static_cast<const ChainTask*>(context);
  const std::vector<Step>& steps = *t.steps;
  alignas(64) float temps[kMaxChainSteps - 1][kBlock];
  for (size_t start = begin; start < begin + count; start += kBlock) {
    const size_t len = std::min(kBlock, begin + count - start);
    // Value v of this block, and whether it advances along it.
    const auto at = [&](uint32_t v, bool& step) -> const float* {
      if (v < t.inputs) {
        step = t.step[v];
        return step ? t.in[v] + start : t.in[v];
      }
      step = true;
      const int32_t output = steps[v - t.inputs].output;
      return output >= 0 ? t.out[output] + start : temps[v - t.inputs];
    };
    for (size_t j = 0; j < steps.size(); ++j) {
      const Step& s = steps[j];
      float* const o = s.output >= 0 ? t.out[s.output] + start : temps[j];
      bool step_a = true, step_b = true;
      const float* a = at(s.a, step_a);
      if (s.unary != nullptr) {
        s.unary(a, o, len);
      } else {
        const float* b = at(s.b, step_b);
        s.binary(a, step_a, b, step_b, o, len);
      }
    }
  }
}

class ChainKernel final : public PreparedKernel {
 public:
  ChainKernel(ops::Attrs attrs, size_t inputs, size_t outputs, std::vector<Step> steps, std::string name)
      : attrs_(std::move(attrs)),
        inputs_(inputs),
        outputs_(outputs),
        steps_(std::move(steps)),
        name_(std::move(name)) {}

  Status run(const KernelContext& ctx, std::span<const TensorRef> in, std::span<TensorRef> out) override {
    // What this kernel does not take goes to the reference kernel, whose checks
    // give the error message.
    if (in.size() != inputs_ || out.size() != outputs_)
      return run_reference(ops::OpId::ElementwiseChain, attrs_, ctx, in, out);
    const size_t n = size_t(out[0].numel());
    ChainTask task{&steps_, inputs_, {}, {}, {}};
    for (size_t k = 0; k < outputs_; ++k) {
      if (!is_f32(out[k]) || size_t(out[k].numel()) != n)
        return run_reference(ops::OpId::ElementwiseChain, attrs_, ctx, in, out);
      task.out[k] = out[k].as<float>();
    }
    for (size_t i = 0; i < inputs_; ++i) {
      const size_t numel = size_t(in[i].numel());
      if (!is_f32(in[i]) || (numel != n && numel != 1))
        return run_reference(ops::OpId::ElementwiseChain, attrs_, ctx, in, out);
      task.in[i] = in[i].as<const float>();
      task.step[i] = numel == n && n != 1;
    }
    if (n <= kTile) run_range(&task, 0, n);
    else parallelize_tiles(ctx, run_range, &task, n, kTile);
    return Status::Ok();
  }
  const char* name() const override { return name_.c_str(); }

 private:
  ops::Attrs attrs_;  // for the reference kernel
  size_t inputs_, outputs_;
  std::vector<Step> steps_;
  std::string name_;
};

}  // namespace

std::unique_ptr<PreparedKernel> make_elementwise_chain(const ops::Attrs& attrs, std::span<const InputInfo> in) {
  if (attrs.values.empty() || in.size() > kMaxInputs) return nullptr;
  for (const InputInfo& i : in)
    if (!is_f32(i)) return nullptr;
  const std::vector<int64_t>& triples = attrs.ints(ops::attr::kChainSteps);  // checked on load
  const simd::Isa isa = simd::best_isa();
  std::vector<Step> steps(triples.size() / 3);
  std::string name = "sg:elementwise_chain_f32(";
  for (size_t j = 0; j < steps.size(); ++j) {
    const ops::OpId op = ops::OpId(triples[3 * j]);
    Step& s = steps[j];
    s.binary = binary_row(op, isa);
    s.unary = unary_row(op, isa);
    if ((s.binary == nullptr) == (s.unary == nullptr)) return nullptr;
    s.a = uint32_t(triples[3 * j + 1]);
    s.b = s.binary != nullptr ? uint32_t(triples[3 * j + 2]) : 0;
    name += std::string(j > 0 ? "," : "") + ops::op_def(op).name;
  }
  // The steps that write an output: `outputs` (checked on load), else the last.
  const size_t outputs = ops::output_count(ops::OpId::ElementwiseChain, attrs);
  if (outputs == 1) steps.back().output = 0;
  else
    for (size_t k = 0; k < outputs; ++k) steps[size_t(attrs.ints(ops::attr::kChainOutputs)[k])].output = int32_t(k);
  if (outputs > 1) name += " -> " + std::to_string(outputs) + " outputs";
  return std::make_unique<ChainKernel>(attrs, in.size(), outputs, std::move(steps), name + ")");
}

}  // namespace sg::kernels::xnn
