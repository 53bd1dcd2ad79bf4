// Compares the XNNPACK backend's prepared kernels with the reference kernels:
// one kernel is prepared per node, then run on several shapes in a row (to
// exercise re-planning), with 1 and 2 threads, on the same inputs as the
// reference kernel; outputs must agree within SPEC §1's float32 tolerance and
// NaN where the reference gives NaN.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "kernels/kernel_tester.h"
#include "ops/infer.h"
#include "xnnpack/xnnpack_backend.h"

namespace sg::kernels::testing {

// The attributes of conv2d / pooling in op-table order.
inline ops::Attrs conv_attrs(std::vector<int64_t> stride, std::vector<int64_t> dilation, const std::string& padding,
                             int64_t groups) {
  ops::Attrs a;
  a.values = {ops::AttrValue::Ints(std::move(stride)), ops::AttrValue::Ints(std::move(dilation)),
              ops::AttrValue::String(padding), ops::AttrValue::Int(groups)};
  return a;
}
inline ops::Attrs pool_attrs(std::vector<int64_t> size, std::vector<int64_t> stride, const std::string& padding) {
  ops::Attrs a;
  a.values = {ops::AttrValue::Ints(std::move(size)), ops::AttrValue::Ints(std::move(stride)),
              ops::AttrValue::String(padding)};
  return a;
}
inline ops::Attrs axis_attrs(int64_t axis) {
  ops::Attrs a;
  a.values = {ops::AttrValue::Int(axis)};
  return a;
}

inline InputInfo info_of(HostTensor& t, bool constant, bool symbolic = false) {
  InputInfo i;
  const TensorRef r = t.ref();
  i.dtype = r.dtype;
  i.rank = r.rank;
  for (int d = 0; d < r.rank; ++d) i.shape[d] = symbolic ? -1 : r.shape[d];
  i.constant = constant ? r.data : nullptr;
  return i;
}

// The output shape by the op's own run-time rule.
inline std::vector<int64_t> infer_shape(ops::OpId op, const ops::Attrs& attrs, const std::vector<HostTensor>& in) {
  std::vector<ops::TensorType<int64_t>> types;
  for (const HostTensor& t : in) types.push_back({t.dtype(), t.shape()});
  std::vector<std::optional<int64_t>> scalars(in.size());
  std::vector<ops::TensorType<int64_t>> out;
  ops::ConcreteInferContext ctx;
  const Status s = ops::infer<int64_t>(op, attrs, types, scalars, out, ctx);
  EXPECT_TRUE(s.ok()) << s.message();
  return s.ok() ? out[0].shape : std::vector<int64_t>{};
}

// SPEC §1: max |got - want| <= 1e-4 * max |want| (1e-6 where that is 0).
inline void expect_close(const HostTensor& got, const HostTensor& want, const std::string& what, double rel = 1e-4) {
  ASSERT_EQ(got.numel(), want.numel()) << what;
  double scale = 0;
  for (int64_t i = 0; i < want.numel(); ++i)
    if (std::isfinite(want.at(i))) scale = std::max(scale, std::fabs(want.at(i)));
  const double tol = scale > 0 ? rel * scale : 1e-6;
  int bad = 0;
  for (int64_t i = 0; i < want.numel() && bad < 5; ++i) {
    const double g = got.at(i), w = want.at(i);
    const bool ok = std::isnan(w) ? std::isnan(g) : std::isinf(w) ? g == w : std::fabs(g - w) <= tol;
    if (!ok) {
      ++bad;
      ADD_FAILURE() << what << ": element " << i << ": got " << g << ", want " << w << " (tolerance " << tol << ")";
    }
  }
}

// One run of a prepared kernel against the reference on the same inputs.
inline void compare_once(PreparedKernel& kernel, ops::OpId op, const ops::Attrs& attrs, std::vector<HostTensor>& in,
                         void* pool, const std::string& what, double rel = 1e-4) {
  std::vector<TensorRef> refs;
  for (HostTensor& t : in) refs.push_back(t.ref());
  const std::vector<int64_t> out_shape = infer_shape(op, attrs, in);
  const DType out_dtype = in[0].dtype();
  HostTensor want(out_dtype, out_shape), got(out_dtype, out_shape);
  want.poison();
  got.poison();
  TensorRef want_ref = want.ref(), got_ref = got.ref();
  KernelContext ref_ctx;
  ASSERT_EQ(reference_scratch_size(op, attrs, refs), 0u);
  const Status rs = reference_kernel(op)(ref_ctx, attrs, refs, std::span<TensorRef>(&want_ref, 1));
  ASSERT_TRUE(rs.ok()) << what << ": reference: " << rs.message();
  KernelContext ctx;
  ctx.threadpool = pool;
  const Status s = kernel.run(ctx, refs, std::span<TensorRef>(&got_ref, 1));
  ASSERT_TRUE(s.ok()) << what << ": " << kernel.name() << ": " << s.message();
  EXPECT_TRUE(got.guard_intact()) << what << ": " << kernel.name() << " wrote past its output";
  expect_close(got, want, what + " [" + kernel.name() + "]", rel);
}

inline std::string shape_string(const std::vector<int64_t>& shape) {
  std::string s = "[";
  for (size_t d = 0; d < shape.size(); ++d) s += (d ? ", " : "") + std::to_string(shape[d]);
  return s + "]";
}

// Owns a pthreadpool for a test.
class ThreadPool {
 public:
  explicit ThreadPool(int threads) : pool_(xnnpack_create_threadpool(threads)) {}
  ~ThreadPool() { xnnpack_destroy_threadpool(pool_); }
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;
  void* get() const { return pool_; }

 private:
  void* pool_;
};

// Prepares `op` from `infos`, then runs every case in order with 1 and 2 threads.
// `cases` are input lists; inputs that were constants at prepare time must be the
// same HostTensor data in every case.
inline void compare_cases(ops::OpId op, const ops::Attrs& attrs, const std::vector<InputInfo>& infos,
                          std::vector<std::vector<HostTensor>>& cases, double rel = 1e-4) {
  ASSERT_TRUE(xnnpack_init().ok());
  for (int threads : {1, 2}) {
    ThreadPool pool(threads);
    std::unique_ptr<PreparedKernel> kernel = xnnpack_prepare(op, attrs, infos);
    ASSERT_NE(kernel, nullptr) << ops::op_def(op).name << " was not prepared";
    for (size_t c = 0; c < cases.size(); ++c) {
      std::string what = std::string(ops::op_def(op).name) + " case " + std::to_string(c) + " (" +
                         std::to_string(threads) + " threads):";
      for (const HostTensor& t : cases[c]) what += " " + shape_string(t.shape());
      compare_once(*kernel, op, attrs, cases[c], pool.get(), what, rel);
    }
  }
}

}  // namespace sg::kernels::testing
