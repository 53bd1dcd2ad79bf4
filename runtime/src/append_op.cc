// Appending to a tensor list in amortized O(len(item)) time. The compiler stages
// `lst.append(x)` in a loop as concatenate(lst, expand_dims(x, 0)) on axis 0,
// which as a kernel copies the whole list every iteration. When the list is a
// parameter that dies at that node (NodeKernel::appends) the executor instead:
//   - appends in place when the frame holds the list's buffer alone and it has
//     room: value semantics hold, as nobody else can see the buffer;
//   - else copies the list into a new buffer with room to spare (twice its size
//     inside loops, branches and calls), so the next appends are in place.
// On axis 0 a C-order concatenation is the inputs' bytes one after another.
#include <cstring>

#include "executor.h"
#include "executor_detail.h"

namespace sg::runtime {

using detail::at;
using detail::at_alloc;
using detail::now_ns;

Status Executor::run_append(Frame& frame, const FunctionImpl& fn, const NodeInfo& node, bool& handled) {
  handled = false;
  const uint32_t pc = frame.pc;
  const uint64_t start = profile_ ? now_ns() : 0;
  Tensor& base = frame.slots[node.inputs[0]];
  const ValueInfo& declared = fn.values[node.outputs[0]];
  const int rank = base.rank();
  if (rank < 1 || base.dtype() != declared.dtype || size_t(rank) != declared.dims.size()) return Status::Ok();
  // Items of another dtype, rank or row shape take the usual path, which reports them.
  const size_t n_in = node.inputs.size();
  int64_t rows = base.dim(0);
  for (size_t k = 1; k < n_in; ++k) {
    const kernels::TensorRef item = operand(frame, fn, node.inputs[k]);
    if (item.dtype != base.dtype() || item.rank != rank) return Status::Ok();
    for (int d = 1; d < rank; ++d)
      if (item.shape[d] != base.dim(d)) return Status::Ok();
    rows += item.shape[0];
    in_refs_[k] = item;
  }
  int64_t dims[kMaxRank];
  for (int d = 0; d < rank; ++d) dims[d] = base.dim(d);
  dims[0] = rows;
  const std::span<const int64_t> shape(dims, size_t(rank));

  const size_t old_bytes = base.nbytes();
  Tensor out;
  if (base.reshape_within_capacity(shape)) {
    out = std::move(base);
  } else {
    const bool grows = frame.role != Role::kEntry;  // loops, branches and recursive calls append again
    Result<Tensor> t = Tensor::empty_with_capacity(base.dtype(), shape, grows ? 2 * old_bytes : 0, &cache_);
    if (!t.ok()) return at_alloc(node, t.status());
    out = std::move(t).value();
    if (old_bytes > 0) std::memcpy(out.data(), base.data(), old_bytes);
  }
  auto* dst = out.data_as<uint8_t>() + old_bytes;
  for (size_t k = 1; k < n_in; ++k) {
    const size_t bytes = in_refs_[k].nbytes();
    if (bytes > 0) std::memcpy(dst, in_refs_[k].data, bytes);
    dst += bytes;
  }
  frame.slots[node.outputs[0]] = std::move(out);
  const FramePlan& plan = *frame.plan;
  for (uint32_t k = plan.release_begin[pc]; k < plan.release_begin[pc + 1]; ++k) frame.slots[plan.release[k]].reset();
  if (profile_) record(frame, pc, start);
  handled = true;
  return Status::Ok();
}

}  // namespace sg::runtime
