// The CUDA backend's kernels, as prepare.cc calls them. Each enqueues its work on
// the context's stream and returns launch errors; TensorRefs hold device pointers.
// Each is defined in the file of its ops' family (ops/op_families.h): <family>.cu.
#pragma once

#include <span>

#include "cuda/cuda_backend.h"

namespace sg::kernels::cuda {

bool binary_covered(ops::OpId op, DType in);
Status run_binary(Context& ctx, ops::OpId op, const TensorRef& a, const TensorRef& b, TensorRef& o);
bool unary_covered(ops::OpId op, DType in);
Status run_unary(Context& ctx, ops::OpId op, const TensorRef& x, TensorRef& o);
Status run_where(Context& ctx, const TensorRef& c, const TensorRef& a, const TensorRef& b, TensorRef& o);
// The fused elementwise chains (fused.cu).
Status run_chain(Context& ctx, const ops::Attrs& attrs, std::span<const TensorRef> in, TensorRef& o);

// Reductions (reduction.cu): sum, mean, max, min of f32 over any axes; argmax/argmin over one.
Status run_reduce(Context& ctx, ops::OpId op, const ops::Attrs& attrs, const TensorRef& x, TensorRef& o);
Status run_arg_reduce(Context& ctx, ops::OpId op, const ops::Attrs& attrs, const TensorRef& x, TensorRef& o);
// softmax and layer_norm (nn.cu).
Status run_softmax(Context& ctx, bool log, int axis, const TensorRef& x, TensorRef& o);
Status run_layer_norm(Context& ctx, double eps, const TensorRef& x, const TensorRef& g, const TensorRef& b,
                      TensorRef& o);
// The ordering family (ordering.cu): cumsum of f32 or i64 along one axis.
Status run_cumsum(Context& ctx, int axis, const TensorRef& x, TensorRef& o);

// Data movement, any dtype: shape.cu, and take (indexing.cu).
Status run_transpose(Context& ctx, const std::vector<int64_t>& perm, const TensorRef& x, TensorRef& o);
Status run_take(Context& ctx, int axis, const TensorRef& x, const TensorRef& idx, TensorRef& o);
Status run_concatenate(Context& ctx, int axis, std::span<const TensorRef> in, TensorRef& o);
Status run_copy(Context& ctx, const TensorRef& x, TensorRef& o);  // reshape, squeeze, expand_dims

// Neural network (nn.cu: f32, NHWC / HWIO).
Status run_conv2d(Context& ctx, const ops::Attrs& attrs, const TensorRef& x, const TensorRef& w, const TensorRef* bias,
                  int64_t activation, TensorRef& o);
Status run_pool(Context& ctx, bool max, const ops::Attrs& attrs, const TensorRef& x, TensorRef& o);
Status run_activation(Context& ctx, int64_t activation, TensorRef& o);  // in place

// GEMM through cuBLASLt: a prepared matmul keeps its descriptors and algorithm for
// the last shapes it ran.
class Gemm {
 public:
  Gemm();
  ~Gemm();
  // o = act(a @ b + bias), NumPy matmul semantics (1-D promotion, batch broadcasting).
  Status run(Context& ctx, const TensorRef& a, const TensorRef& b, const TensorRef* bias, int64_t activation,
             TensorRef& o);

 private:
  struct Plan;
  Plan* plan_;
};

}  // namespace sg::kernels::cuda
