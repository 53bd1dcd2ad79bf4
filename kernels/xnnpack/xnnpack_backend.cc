// Entry points of the XNNPACK backend: process-wide initialization, thread pools,
// and the routing of each op to its kernel family.
#include "xnnpack/xnnpack_backend.h"

#include <pthread.h>
#include <pthreadpool.h>

#include <algorithm>
#include <limits>
#include <memory>
#include <mutex>
#include <new>

#include "selection/selected_ops.h"
#include "simd/simd_kernels.h"
#include "xnnpack/coverage.h"
#include "simd/simd.h"
#include "xnnpack/xnn_common.h"

namespace sg::kernels {
namespace xnn {

namespace {

const char* status_name(xnn_status s) {
  switch (s) {
    case xnn_status_success: return "success";
    case xnn_status_uninitialized: return "uninitialized";
    case xnn_status_invalid_parameter: return "invalid parameter";
    case xnn_status_invalid_state: return "invalid state";
    case xnn_status_unsupported_parameter: return "unsupported parameter";
    case xnn_status_unsupported_hardware: return "unsupported hardware";
    case xnn_status_out_of_memory: return "out of memory";
  }
  return "unknown status";
}

}  // namespace

size_t threads_of(const KernelContext& ctx) {
  if (ctx.team != nullptr) return ctx.team->threads();
  return ctx.threadpool != nullptr ? pthreadpool_get_threads_count(pool_of(ctx)) : 1;
}

namespace {
struct Tiles {
  void (*task)(void*, size_t, size_t);
  void* context;
  size_t range, tile;
};
void run_tile(void* arg, size_t i) {
  const Tiles& t = *static_cast<const Tiles*>(arg);
  const size_t begin = i * t.tile;
  t.task(t.context, begin, std::min(t.tile, t.range - begin));
}
}  // namespace

void parallelize_tiles(const KernelContext& ctx, void (*task)(void*, size_t, size_t), void* context, size_t range,
                       size_t tile) {
  if (ctx.team == nullptr) {
    pthreadpool_parallelize_1d_tile_1d(pool_of(ctx), task, context, range, tile, 0);
    return;
  }
  Tiles t{task, context, range, tile};
  ctx.team->run(run_tile, &t, (range + tile - 1) / tile);
}

Status check(xnn_status s, const char* what) {
  if (s == xnn_status_success) return Status::Ok();
  if (s == xnn_status_out_of_memory) return out_of_memory(std::string("xnnpack: ") + what + " ran out of memory");
  return internal_error(std::string("xnnpack: ") + what + " failed (" + status_name(s) + ")");
}

Status run_reference(ops::OpId op, const ops::Attrs& attrs, const KernelContext& ctx,
                     std::span<const TensorRef> in, std::span<TensorRef> out) {
  const size_t need = reference_scratch_size(op, attrs, in);
  if (need > ctx.scratch_size)
    return internal_error(std::string(ops::op_def(op).name) + ": the reference kernel needs " +
                          std::to_string(need) + " bytes of scratch, the context has " +
                          std::to_string(ctx.scratch_size));
  return reference_kernel(op)(ctx, attrs, in, out);
}

bool has_nan_or_neg_inf(const float* p, size_t n) {
  // Baseline vectors: the scan is memory-bound. !(x > -inf) holds exactly for NaN
  // and -inf.
  using I4 = int32_t __attribute__((vector_size(16)));
  const simd::V4 neg_inf = simd::splat<simd::V4>(-std::numeric_limits<float>::infinity());
  I4 all_above = ~I4{};
  size_t i = 0;
  for (; i + 4 <= n; i += 4) all_above &= simd::load<simd::V4>(p + i) > neg_inf;
  bool found = (all_above[0] & all_above[1] & all_above[2] & all_above[3]) == 0;
  for (; i < n; ++i) found |= !(p[i] > -std::numeric_limits<float>::infinity());
  return found;
}

std::string describe_shape(const TensorRef& t) {
  std::string s = dtype_name(t.dtype);
  s += '[';
  for (int i = 0; i < t.rank; ++i) {
    if (i) s += ", ";
    s += std::to_string(t.shape[i]);
  }
  return s + ']';
}

}  // namespace xnn

namespace {

// The outcome of the one xnn_initialize call of the process.
struct InitState {
  std::once_flag once;
  xnn_status status = xnn_status_uninitialized;
};

InitState& init_state() {
  static InitState state;
  return state;
}

}  // namespace

Status xnnpack_init() {
  InitState& st = init_state();
  std::call_once(st.once, [&] { st.status = xnn_initialize(nullptr); });
  if (st.status == xnn_status_success) return Status::Ok();
  if (st.status == xnn_status_unsupported_hardware)
    return unsupported("xnnpack: this CPU lacks the instructions XNNPACK needs");
  return xnn::check(st.status, "initialization");
}

std::unique_ptr<PreparedKernel> xnnpack_prepare(ops::OpId op, const ops::Attrs& attrs,
                                                std::span<const InputInfo> inputs) {
  if (!xnnpack_init().ok()) return nullptr;
  const ops::OpDef& def = ops::op_def(op);
  if (int(inputs.size()) < def.min_inputs || (def.max_inputs >= 0 && int(inputs.size()) > def.max_inputs))
    return nullptr;
  for (const InputInfo& in : inputs)
    if (in.rank < 0 || in.rank > kMaxRank) return nullptr;
  using ops::OpId;
  namespace sel = selection;
  // Each family is named only where the build selects one of its ops
  // (selection/selected_ops.h): the others are left out of the link.
  if (!sel::selected(op)) return nullptr;
  switch (op) {
    case OpId::MatMul:
      if constexpr (sel::any_of<OpId::MatMul>()) {
        if (inputs[1].constant != nullptr && inputs[1].rank == 2) return xnn::make_fully_connected(inputs);
        if (inputs[1].constant == nullptr && inputs[1].rank >= 2)
          if (auto run_time = xnn::make_run_time_gemm(inputs)) return run_time;
        return xnn::make_batch_matmul(inputs);
      }
      return nullptr;
    case OpId::Conv2D:
      if constexpr (sel::any_of<OpId::Conv2D>()) return xnn::make_conv2d(attrs, inputs);
      return nullptr;
    case OpId::FullyConnected:
    case OpId::Conv2DBias:
      if constexpr (sel::any_of<OpId::FullyConnected, OpId::Conv2DBias>()) return xnn::make_fused(op, attrs, inputs);
      return nullptr;
    case OpId::ElementwiseChain:
      if constexpr (sel::any_of<OpId::ElementwiseChain>()) return xnn::make_elementwise_chain(attrs, inputs);
      return nullptr;
    case OpId::MaxPool2D:
    case OpId::AvgPool2D:
      if constexpr (sel::any_of<OpId::MaxPool2D, OpId::AvgPool2D>()) return xnn::make_pool(op, attrs, inputs);
      return nullptr;
    case OpId::Softmax:
      if constexpr (sel::any_of<OpId::Softmax>()) return xnn::make_softmax(attrs, inputs);
      return nullptr;
    case OpId::Add:
    case OpId::Sub:
    case OpId::Mul:
    case OpId::Div:
    case OpId::Maximum:
    case OpId::Minimum:
      if constexpr (sel::any_of<OpId::Add, OpId::Sub, OpId::Mul, OpId::Div, OpId::Maximum, OpId::Minimum>())
        return xnn::make_binary(op, inputs);
      return nullptr;
    case OpId::Tanh:
    case OpId::Gelu:
    case OpId::Relu:
      if constexpr (sel::any_of<OpId::Tanh, OpId::Gelu, OpId::Relu>()) return xnn::make_activation(op, inputs);
      return nullptr;
    case OpId::Greater:
    case OpId::GreaterEqual:
    case OpId::Less:
    case OpId::LessEqual:
    case OpId::Equal:
    case OpId::NotEqual:
      if constexpr (sel::any_of<OpId::Greater, OpId::GreaterEqual, OpId::Less, OpId::LessEqual, OpId::Equal,
                                OpId::NotEqual>())
        return xnn::make_compare(op, inputs);
      return nullptr;
    case OpId::Where:
      if constexpr (sel::any_of<OpId::Where>()) return xnn::make_where(inputs);
      return nullptr;
    case OpId::Max:
    case OpId::Min:
    case OpId::ArgMax:
    case OpId::ArgMin:
      if constexpr (sel::any_of<OpId::Max, OpId::Min, OpId::ArgMax, OpId::ArgMin>())
        return xnn::make_reduce(op, attrs, inputs);
      return nullptr;
    case OpId::LayerNorm:
      if constexpr (sel::any_of<OpId::LayerNorm>()) return xnn::make_layer_norm(attrs, inputs);
      return nullptr;
    case OpId::Transpose:
      if constexpr (sel::any_of<OpId::Transpose>()) return xnn::make_transpose(attrs, inputs);
      return nullptr;
    case OpId::Concatenate:
      if constexpr (sel::any_of<OpId::Concatenate>()) return xnn::make_concatenate(attrs, inputs);
      return nullptr;
    default:
      if constexpr (sel::any_with_flag(ops::kElementwiseUnary)) return xnn::make_unary(op, inputs);
      return nullptr;
  }
}

bool xnnpack_covers(ops::OpId op) {
  using ops::OpId;
  switch (op) {
    case OpId::MatMul: case OpId::Conv2D: case OpId::FullyConnected: case OpId::Conv2DBias:
    case OpId::ElementwiseChain: case OpId::MaxPool2D: case OpId::AvgPool2D: case OpId::Softmax:
    case OpId::Add: case OpId::Sub: case OpId::Mul: case OpId::Div: case OpId::Maximum: case OpId::Minimum:
    case OpId::Tanh: case OpId::Gelu: case OpId::Relu: case OpId::Max: case OpId::Min: case OpId::ArgMax:
    case OpId::ArgMin: case OpId::LayerNorm: case OpId::Transpose: case OpId::Concatenate:
    case OpId::Greater: case OpId::GreaterEqual: case OpId::Less: case OpId::LessEqual: case OpId::Equal:
    case OpId::NotEqual: case OpId::Where:
    // make_unary's
    case OpId::Abs: case OpId::Neg: case OpId::Square: case OpId::Sqrt: case OpId::Floor: case OpId::Ceil:
    case OpId::Round: case OpId::Sigmoid:
      return true;
    default:
      return false;
  }
}

namespace {

// Whether `n` more threads can run at once here. pthreadpool_create waits for every
// worker it asked for and never returns when the system refuses one (seen under
// `ulimit -v`, where each thread's stack is counted), so the workers are first
// started here, all alive together, and the pool is made only if they all were.
struct ThreadProbe {
  pthread_mutex_t mutex = PTHREAD_MUTEX_INITIALIZER;
  pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
  bool go = false;
};

void* probe_wait(void* arg) {
  ThreadProbe& p = *static_cast<ThreadProbe*>(arg);
  pthread_mutex_lock(&p.mutex);
  while (!p.go) pthread_cond_wait(&p.cond, &p.mutex);
  pthread_mutex_unlock(&p.mutex);
  return nullptr;
}

bool can_start_threads(size_t n) {
  ThreadProbe probe;
  std::unique_ptr<pthread_t[]> threads(new (std::nothrow) pthread_t[n]);
  if (!threads) return false;
  size_t started = 0;
  while (started < n && pthread_create(&threads[started], nullptr, probe_wait, &probe) == 0) ++started;
  pthread_mutex_lock(&probe.mutex);
  probe.go = true;
  pthread_cond_broadcast(&probe.cond);
  pthread_mutex_unlock(&probe.mutex);
  for (size_t t = 0; t < started; ++t) pthread_join(threads[t], nullptr);
  return started == n;
}

}  // namespace

void (*xnnpack_tanh_row())(const float* x, float* y, size_t n) {
  return xnn::unary_row(ops::OpId::Tanh, simd::best_isa());
}

void* xnnpack_create_threadpool(int num_threads) {
  if (num_threads <= 1 || !can_start_threads(size_t(num_threads - 1))) return nullptr;
  return pthreadpool_create(size_t(num_threads));
}

void xnnpack_destroy_threadpool(void* pool) {
  if (pool != nullptr) pthreadpool_destroy(static_cast<pthreadpool_t>(pool));
}

void parallelize(const KernelContext& ctx, void (*task)(void*, size_t), void* context, size_t n) {
  if (ctx.team != nullptr) ctx.team->run(task, context, n);
  else pthreadpool_parallelize_1d(xnn::pool_of(ctx), task, context, n, 0);  // a null pool runs them here
}

}  // namespace sg::kernels
