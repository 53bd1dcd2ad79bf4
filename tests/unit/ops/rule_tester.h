// Helpers for the shape-rule tests: run a rule on concrete dims (the run-time
// side) or symbolic dims (the compile-time side) and capture the result, the
// warnings and the fresh dims it asked for.
#pragma once

#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

#include "ops/infer.h"
#include "ops/infer_rules.h"

namespace sg::ops::testing {

// Symbols 0, 1, 2 print as N, M, K; fresh dims as F0, F1, ...
inline const SymDim N = SymDim::symbol(0);
inline const SymDim M = SymDim::symbol(1);
inline const SymDim K = SymDim::symbol(2);

class SymTestContext final : public InferContext<SymDim> {
 public:
  SymDim fresh_dim(std::string_view) override {
    names_.push_back("F" + std::to_string(fresh_count++));
    return SymDim::symbol(int32_t(names_.size() - 1));
  }
  void warn(std::string message) override { warnings.push_back(std::move(message)); }
  std::string format(const std::vector<SymDim>& shape) const override {
    return shape_to_string(shape, [this](int32_t id) { return name(id); });
  }
  std::string name(int32_t id) const { return size_t(id) < names_.size() ? names_[size_t(id)] : "?"; }

  std::vector<std::string> warnings;
  int fresh_count = 0;

 private:
  std::vector<std::string> names_{"N", "M", "K"};
};

// The run-time context, recording warnings; a rule must never ask it for a fresh dim.
class ConcreteTestContext final : public InferContext<int64_t> {
 public:
  int64_t fresh_dim(std::string_view why) override {
    ADD_FAILURE() << "fresh_dim at run time: " << why;
    return 0;
  }
  void warn(std::string message) override { warnings.push_back(std::move(message)); }
  std::string format(const std::vector<int64_t>& shape) const override { return shape_to_string(shape); }

  std::vector<std::string> warnings;
};

template <class D>
struct Inferred {
  Status status;
  TensorType<D> type;  // the first output
  std::vector<TensorType<D>> outputs;  // all of them
  std::vector<std::string> shapes;     // all output shapes as text
  std::vector<std::string> warnings;
  int fresh = 0;        // fresh dims asked for (symbolic only)
  std::string shape;    // the output shape as text
};

inline TensorType<int64_t> T(DType dtype, std::vector<int64_t> shape) { return {dtype, std::move(shape)}; }
inline TensorType<SymDim> S(DType dtype, std::vector<SymDim> shape) { return {dtype, std::move(shape)}; }
inline TensorType<int64_t> F32(std::vector<int64_t> shape) { return T(DType::kF32, std::move(shape)); }
inline TensorType<SymDim> SF32(std::vector<SymDim> shape) { return S(DType::kF32, std::move(shape)); }

inline Attrs attrs(std::vector<AttrValue> values) { return Attrs{std::move(values)}; }
inline AttrValue I(int64_t v) { return AttrValue::Int(v); }
inline AttrValue Is(std::vector<int64_t> v) { return AttrValue::Ints(std::move(v)); }
inline AttrValue Str(std::string v) { return AttrValue::String(std::move(v)); }
inline AttrValue Fl(double v) { return AttrValue::Float(v); }

inline Inferred<int64_t> run(OpId op, const Attrs& a, std::vector<TensorType<int64_t>> in,
                             std::vector<std::optional<int64_t>> scalars = {}) {
  ConcreteTestContext ctx;
  std::vector<TensorType<int64_t>> out;
  Inferred<int64_t> r;
  r.status = infer<int64_t>(op, a, in, scalars, out, ctx);
  if (r.status.ok() && !out.empty()) r.type = out[0];
  if (r.status.ok()) r.outputs = out;
  for (const auto& t : r.outputs) r.shapes.push_back(shape_to_string(t.shape));
  r.warnings = ctx.warnings;
  r.shape = shape_to_string(r.type.shape);
  return r;
}

inline Inferred<SymDim> run(OpId op, const Attrs& a, std::vector<TensorType<SymDim>> in,
                            std::vector<std::optional<SymDim>> scalars = {}) {
  SymTestContext ctx;
  std::vector<TensorType<SymDim>> out;
  Inferred<SymDim> r;
  r.status = infer<SymDim>(op, a, in, scalars, out, ctx);
  if (r.status.ok() && !out.empty()) r.type = out[0];
  if (r.status.ok()) r.outputs = out;
  for (const auto& t : r.outputs) r.shapes.push_back(ctx.format(t.shape));
  r.warnings = ctx.warnings;
  r.fresh = ctx.fresh_count;
  r.shape = ctx.format(r.type.shape);
  return r;
}

// Runs the rule on concrete dims and on the same dims as static SymDims: both
// instantiations must agree (shape, dtype, status, warnings).
inline Inferred<int64_t> run_both(OpId op, const Attrs& a, std::vector<TensorType<int64_t>> in,
                                  std::vector<std::optional<int64_t>> scalars = {}) {
  std::vector<TensorType<SymDim>> sym_in;
  for (const auto& t : in) sym_in.push_back(TensorType<SymDim>{t.dtype, {t.shape.begin(), t.shape.end()}});
  std::vector<std::optional<SymDim>> sym_scalars;
  for (const auto& s : scalars) sym_scalars.push_back(s ? std::optional<SymDim>(*s) : std::nullopt);
  Inferred<int64_t> c = run(op, a, in, scalars);
  Inferred<SymDim> s = run(op, a, sym_in, sym_scalars);
  EXPECT_EQ(c.status.ok(), s.status.ok()) << c.status.message() << " | " << s.status.message();
  EXPECT_EQ(c.status.message(), s.status.message());
  EXPECT_EQ(c.shape, s.shape);
  EXPECT_EQ(c.shapes, s.shapes);
  EXPECT_EQ(c.type.dtype, s.type.dtype);
  EXPECT_EQ(c.warnings, s.warnings);
  EXPECT_EQ(s.fresh, 0);
  // A selective build's concrete shapes: the SymDim rules on constants.
  ConcreteTestContext via_ctx;
  std::vector<TensorType<int64_t>> via;
  const Status v = rules::infer_through_symbolic(op, a, in, scalars, via, via_ctx);
  EXPECT_EQ(c.status.ok(), v.ok()) << c.status.message() << " | " << v.message();
  EXPECT_EQ(c.status.message(), v.message());
  if (c.status.ok() && v.ok()) {
    EXPECT_EQ(c.outputs, via);
  }
  EXPECT_EQ(c.warnings, via_ctx.warnings);
  return c;
}

}  // namespace sg::ops::testing

// Messages are checked for their key words.
#define EXPECT_ERROR_HAS(result, text)                                              \
  do {                                                                              \
    EXPECT_FALSE((result).status.ok());                                             \
    EXPECT_NE((result).status.message().find(text), std::string::npos)             \
        << "message: " << (result).status.message();                                \
  } while (0)
