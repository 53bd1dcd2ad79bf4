// A fluent tester for the reference kernels: inputs built from double values or
// a fixed-seed RNG, the output allocated with guard bytes around it, and the
// result compared with a float64 reference computed by the test.
//
//   KernelTester(OpId::Add)
//       .in(HostTensor::random(DType::kF32, {2, 3}, /*seed=*/1))
//       .in(HostTensor::random(DType::kF32, {3}, /*seed=*/2))
//       .out(DType::kF32, {2, 3})
//       .expect(expected_values, /*rtol=*/1e-6);
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "interface/kernel.h"
#include "stagegraph/dtype.h"

namespace sg::kernels::testing {

inline int64_t numel_of(const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

// Row-major multi-index of flat index i.
inline std::vector<int64_t> unravel(int64_t i, const std::vector<int64_t>& shape) {
  std::vector<int64_t> idx(shape.size());
  for (int d = int(shape.size()) - 1; d >= 0; --d) {
    idx[d] = shape[d] ? i % shape[d] : 0;
    if (shape[d]) i /= shape[d];
  }
  return idx;
}

// Flat index in `shape` of the output multi-index `out_idx`, NumPy-broadcast
// (right-aligned; size-1 dims pinned to 0).
inline int64_t broadcast_flat(const std::vector<int64_t>& out_idx, const std::vector<int64_t>& shape) {
  const size_t lead = out_idx.size() - shape.size();
  int64_t flat = 0;
  for (size_t d = 0; d < shape.size(); ++d) flat = flat * shape[d] + (shape[d] == 1 ? 0 : out_idx[lead + d]);
  return flat;
}

// A tensor in host memory. Values go in and out as double.
class HostTensor {
 public:
  HostTensor() = default;
  HostTensor(DType dtype, std::vector<int64_t> shape)
      : dtype_(dtype), shape_(std::move(shape)), bytes_(size_t(numel_of(shape_)) * dtype_size(dtype_) + kGuard) {}

  static HostTensor of(DType dtype, std::vector<int64_t> shape, const std::vector<double>& values) {
    HostTensor t(dtype, std::move(shape));
    EXPECT_EQ(int64_t(values.size()), t.numel()) << "test data does not match its shape";
    for (int64_t i = 0; i < t.numel() && i < int64_t(values.size()); ++i) t.set(i, values[i]);
    return t;
  }
  static HostTensor scalar(DType dtype, double v) { return of(dtype, {}, {v}); }

  // Floats uniform in [lo, hi); ints uniform in [lo, hi]; bool fair coin.
  static HostTensor random(DType dtype, std::vector<int64_t> shape, uint32_t seed, double lo = -2,
                           double hi = 2) {
    HostTensor t(dtype, std::move(shape));
    std::mt19937 rng(seed);
    for (int64_t i = 0; i < t.numel(); ++i) {
      if (is_float(dtype)) t.set(i, std::uniform_real_distribution<double>(lo, hi)(rng));
      else if (dtype == DType::kBool) t.set(i, double(rng() & 1));
      else t.set(i, double(std::uniform_int_distribution<int64_t>(int64_t(lo), int64_t(hi))(rng)));
    }
    return t;
  }

  DType dtype() const { return dtype_; }
  const std::vector<int64_t>& shape() const { return shape_; }
  int64_t numel() const { return numel_of(shape_); }

  double at(int64_t i) const {
    const uint8_t* p = bytes_.data() + size_t(i) * dtype_size(dtype_);
    switch (dtype_) {
      case DType::kF32: { float v; std::memcpy(&v, p, 4); return v; }
      case DType::kF16: { uint16_t v; std::memcpy(&v, p, 2); return half_to_float(v); }
      case DType::kI32: { int32_t v; std::memcpy(&v, p, 4); return v; }
      case DType::kI64: { int64_t v; std::memcpy(&v, p, 8); return double(v); }
      case DType::kBool: return p[0];
    }
    return 0;
  }
  int64_t at_int(int64_t i) const {
    if (dtype_ == DType::kI64) { int64_t v; std::memcpy(&v, bytes_.data() + size_t(i) * 8, 8); return v; }
    return int64_t(at(i));
  }
  void set(int64_t i, double v) {
    uint8_t* p = bytes_.data() + size_t(i) * dtype_size(dtype_);
    switch (dtype_) {
      case DType::kF32: { const float f = float(v); std::memcpy(p, &f, 4); break; }
      case DType::kF16: { const uint16_t h = float_to_half(float(v)); std::memcpy(p, &h, 2); break; }
      case DType::kI32: { const int32_t x = int32_t(v); std::memcpy(p, &x, 4); break; }
      case DType::kI64: { const int64_t x = int64_t(v); std::memcpy(p, &x, 8); break; }
      case DType::kBool: p[0] = v != 0; break;
    }
  }
  void set_int(int64_t i, int64_t v) {
    if (dtype_ == DType::kI64) std::memcpy(bytes_.data() + size_t(i) * 8, &v, 8);
    else if (dtype_ == DType::kI32) { const int32_t x = int32_t(v); std::memcpy(bytes_.data() + size_t(i) * 4, &x, 4); }
    else set(i, double(v));
  }
  std::vector<double> values() const {
    std::vector<double> v(static_cast<size_t>(numel()));
    for (int64_t i = 0; i < numel(); ++i) v[size_t(i)] = at(i);
    return v;
  }

  // Fills data and guard with a pattern a kernel must overwrite (data) or keep (guard).
  void poison() { std::memset(bytes_.data(), 0xA5, bytes_.size()); }
  bool guard_intact() const {
    for (size_t i = bytes_.size() - kGuard; i < bytes_.size(); ++i)
      if (bytes_[i] != 0xA5) return false;
    return true;
  }

  TensorRef ref() {
    TensorRef r;
    r.dtype = dtype_;
    r.rank = int(shape_.size());
    for (size_t d = 0; d < shape_.size(); ++d) r.shape[d] = shape_[d];
    r.data = bytes_.data();
    return r;
  }

 private:
  static constexpr size_t kGuard = 64;
  DType dtype_ = DType::kF32;
  std::vector<int64_t> shape_;
  std::vector<uint8_t> bytes_ = std::vector<uint8_t>(kGuard);
};

// Relative tolerances that fit each dtype's rounding (integers and bool: exact).
inline double default_rtol(DType t) {
  switch (t) {
    case DType::kF32: return 2e-6;
    case DType::kF16: return 2e-3;
    default: return 0;
  }
}

class KernelTester {
 public:
  explicit KernelTester(ops::OpId op) : op_(op) {}

  KernelTester& in(HostTensor t) { inputs_.push_back(std::move(t)); return *this; }
  KernelTester& out(DType dtype, std::vector<int64_t> shape) {
    output_ = HostTensor(dtype, std::move(shape));
    return *this;
  }
  // Outputs after the first (topk's indices), checked with extra_output(k).
  KernelTester& also_out(DType dtype, std::vector<int64_t> shape) {
    extra_outputs_.emplace_back(dtype, std::move(shape));
    return *this;
  }
  KernelTester& attr_float(double v) { attrs_.values.push_back(ops::AttrValue::Float(v)); return *this; }
  KernelTester& attr_int(int64_t v) { attrs_.values.push_back(ops::AttrValue::Int(v)); return *this; }
  KernelTester& attr_ints(std::vector<int64_t> v) { attrs_.values.push_back(ops::AttrValue::Ints(std::move(v))); return *this; }
  KernelTester& attr_string(std::string v) { attrs_.values.push_back(ops::AttrValue::String(std::move(v))); return *this; }

  const std::vector<HostTensor>& inputs() const { return inputs_; }
  const HostTensor& output() const { return output_; }
  const HostTensor& extra_output(size_t k) const { return extra_outputs_.at(k); }

  // Runs the kernel with exactly the scratch it asks for, poisoned like the outputs.
  Status run() {
    std::vector<TensorRef> in;
    for (HostTensor& t : inputs_) in.push_back(t.ref());
    std::vector<TensorRef> out;
    output_.poison();
    out.push_back(output_.ref());
    for (HostTensor& t : extra_outputs_) {
      t.poison();
      out.push_back(t.ref());
    }
    std::vector<uint8_t> scratch(reference_scratch_size(op_, attrs_, in), 0xA5);
    KernelContext ctx;
    ctx.scratch = scratch.data();
    ctx.scratch_size = scratch.size();
    Status s = reference_kernel(op_)(ctx, attrs_, in, out);
    EXPECT_TRUE(output_.guard_intact()) << "the kernel wrote past its output";
    for (const HostTensor& t : extra_outputs_) EXPECT_TRUE(t.guard_intact()) << "the kernel wrote past an output";
    return s;
  }

  // Runs and compares every output element: |got - want| <= atol + rtol * |want|,
  // NaN matching NaN and infinities matching exactly.
  void expect(const std::vector<double>& want, double rtol = -1, double atol = 0) {
    const Status s = run();
    ASSERT_TRUE(s.ok()) << s.message();
    ASSERT_EQ(int64_t(want.size()), output_.numel());
    if (rtol < 0) rtol = default_rtol(output_.dtype());
    for (int64_t i = 0; i < output_.numel(); ++i) {
      const double got = output_.at(i), w = want[size_t(i)];
      if (std::isnan(w)) {
        EXPECT_TRUE(std::isnan(got)) << "element " << i << ": got " << got << ", want nan";
      } else if (std::isinf(w)) {
        EXPECT_EQ(got, w) << "element " << i;
      } else {
        EXPECT_LE(std::fabs(got - w), atol + rtol * std::fabs(w))
            << "element " << i << ": got " << got << ", want " << w;
      }
    }
  }

  // Exact comparison of integer results, full 64-bit.
  void expect_ints(const std::vector<int64_t>& want) {
    const Status s = run();
    ASSERT_TRUE(s.ok()) << s.message();
    ASSERT_EQ(int64_t(want.size()), output_.numel());
    for (int64_t i = 0; i < output_.numel(); ++i) EXPECT_EQ(output_.at_int(i), want[size_t(i)]) << "element " << i;
  }

  void expect_error(StatusCode code, const std::string& message) {
    const Status s = run();
    EXPECT_EQ(s.code(), code) << s.message();
    EXPECT_EQ(s.message(), message);
  }

 private:
  ops::OpId op_;
  std::vector<HostTensor> inputs_;
  HostTensor output_;
  std::vector<HostTensor> extra_outputs_;
  ops::Attrs attrs_;
};

// The float64 reference of an elementwise op over broadcast operands.
template <class F>
std::vector<double> broadcast_reference(const std::vector<int64_t>& out_shape,
                                        const std::vector<const HostTensor*>& ins, F&& f) {
  std::vector<double> want(size_t(numel_of(out_shape)));
  std::vector<double> args(ins.size());
  for (int64_t i = 0; i < numel_of(out_shape); ++i) {
    const std::vector<int64_t> idx = unravel(i, out_shape);
    for (size_t k = 0; k < ins.size(); ++k) args[k] = ins[k]->at(broadcast_flat(idx, ins[k]->shape()));
    want[size_t(i)] = f(args);
  }
  return want;
}

}  // namespace sg::kernels::testing
