// concatenate, which this XNNPACK lacks (its copy operator moves one tensor), for
// every dtype. Each output row of the outer dims is a run of chunks, one per input,
// each a contiguous copy (glibc's memcpy is already vectorized for the CPU): the
// reference kernel does the same on one thread. This kernel splits the rows over the
// Session's threads when the output is large enough for a second thread to pay;
// smaller outputs, and anything malformed, go to the reference kernel.

#include <cstring>
#include <vector>

#include "ops/op_table.h"
#include "reference/kernel_util.h"
#include "simd/simd_kernels.h"

namespace sg::kernels::xnn {
namespace {

// Output bytes from which the copy is split: ~1 MiB, ~50 µs of copying.
constexpr size_t kMinParallelBytes = size_t(1) << 20;

struct Task {
  std::span<const TensorRef> in;
  uint8_t* out;
  size_t row_bytes;  // one output row of the outer dims
  size_t elem;
  int64_t inner;
  int axis;
};

void run_row(void* arg, size_t row) {
  const Task& t = *static_cast<const Task*>(arg);
  uint8_t* dst = t.out + row * t.row_bytes;
  for (const TensorRef& x : t.in) {
    const size_t chunk = size_t(x.shape[t.axis] * t.inner) * t.elem;
    std::memcpy(dst, static_cast<const uint8_t*>(x.data) + row * chunk, chunk);
    dst += chunk;
  }
}

class ConcatenateKernel final : public PreparedKernel {
 public:
  explicit ConcatenateKernel(ops::Attrs attrs) : attrs_(std::move(attrs)) {}

  Status run(const KernelContext& ctx, std::span<const TensorRef> in, std::span<TensorRef> out) override {
    if (in.empty() || out.size() != 1) return internal_error("concatenate: wrong operand count");
    const TensorRef& o = out[0];
    const int64_t axis = attrs_.i(ops::attr::kAxisValue);
    const size_t bytes = size_t(o.numel()) * dtype_size(o.dtype);
    if (threads_of(ctx) <= 1 || bytes < kMinParallelBytes || axis < 0 || axis >= o.rank)
      return run_reference(ops::OpId::Concatenate, attrs_, ctx, in, out);
    const AxisView ov = axis_view(o, int(axis));
    int64_t total = 0;
    for (const TensorRef& x : in) {
      const AxisView v = axis_view(x, int(axis));
      if (x.dtype != o.dtype || x.rank != o.rank || v.outer != ov.outer || v.inner != ov.inner)
        return run_reference(ops::OpId::Concatenate, attrs_, ctx, in, out);  // it names the problem
      total += v.n;
    }
    // One row (or a malformed operand, which the reference names): one memcpy per input.
    if (total != ov.n || ov.outer == 1) return run_reference(ops::OpId::Concatenate, attrs_, ctx, in, out);
    Task t{in, static_cast<uint8_t*>(o.data), size_t(ov.n * ov.inner) * dtype_size(o.dtype), dtype_size(o.dtype),
           ov.inner, int(axis)};
    parallelize(ctx, run_row, &t, size_t(ov.outer));
    return Status::Ok();
  }
  const char* name() const override { return "sg:concatenate"; }

 private:
  ops::Attrs attrs_;
};

}  // namespace

std::unique_ptr<PreparedKernel> make_concatenate(const ops::Attrs& attrs, std::span<const InputInfo> in) {
  if (in.empty() || attrs.values.empty()) return nullptr;
  return std::make_unique<ConcatenateKernel>(attrs);
}

}  // namespace sg::kernels::xnn
