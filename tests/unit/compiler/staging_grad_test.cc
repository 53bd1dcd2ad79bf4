// Reverse-mode differentiation at staging (compiler/staging/autodiff.cc,
// sg_grad.cc): the shape of the graphs it builds, and its diagnostics. The
// numbers are checked end to end against finite differences (tests/e2e/test_grad.py).
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "passes/passes.h"
#include "staging_test_util.h"

namespace sg::compiler {
namespace {

using ops::OpId;
using testing::stage_source;

size_t count_kind(const ir::Function& f, ir::NodeKind kind) {
  size_t n = 0;
  for (const ir::Node& node : f.nodes) n += node.kind == kind;
  return n;
}

const ir::Function* find_prefix(const ir::Module& m, const std::string& prefix) {
  for (const ir::Function& f : m.functions)
    if (f.name.rfind(prefix, 0) == 0) return &f;
  return nullptr;
}

TEST(StagingGrad, GradientsHaveTheirParametersTypesAndStructure) {
  auto r = stage_source(R"(import stagegraph as sg

def loss(p, x):
    return sg.sum(sg.tanh(x @ p["w"] + p["b"]))

@sg.function
def g(w: sg.f32[4, 3], b: sg.f32[3], x: sg.f32["N", 4]):
    value, grads = sg.value_and_grad(loss)({"w": w, "b": b}, x)
    return {"loss": value, "grads": grads}
)");
  ASSERT_TRUE(r.ir) << r.locations();
  EXPECT_EQ(ir::verify(*r.ir), "");
  const ir::Entry& e = r.entry("g");
  ASSERT_EQ(e.output_names.size(), 3u);
  EXPECT_EQ(e.output_names[0], "loss");
  EXPECT_EQ(e.output_names[1], "grads.w");
  EXPECT_EQ(e.output_names[2], "grads.b");
  EXPECT_EQ(r.result_type("g", 0), "f32[]");
  EXPECT_EQ(r.result_type("g", 1), "f32[4, 3]");
  EXPECT_EQ(r.result_type("g", 2), "f32[3]");
}

TEST(StagingGrad, TheGradientOfAWhileIsAReversedWhileOverTapes) {
  auto r = stage_source(R"(import stagegraph as sg

def run(w, xs, n):
    h = sg.zeros((4,))
    i = 0
    while i < n:
        h = sg.tanh(xs[i] @ w + h)
        i += 1
    return sg.sum(h)

@sg.function
def g(w: sg.f32[3, 4], xs: sg.f32["T", 3], n: sg.i64):
    return sg.grad(run)(w, xs, n)
)");
  ASSERT_TRUE(r.ir) << r.locations();
  EXPECT_EQ(ir::verify(*r.ir), "");
  ASSERT_NE(find_prefix(*r.ir, "g.grad"), nullptr);  // run's body, staged apart
  const ir::Function* adjoint = nullptr;
  for (const ir::Function& f : r.ir->functions)
    if (f.name.find(".vjp#") != std::string::npos && count_kind(f, ir::NodeKind::kWhile) == 2) adjoint = &f;
  ASSERT_NE(adjoint, nullptr) << ir::print(*r.ir);
  // The forward loop is widened with its count and a tape, the backward runs in reverse.
  bool taped = false, reversed = false, split = false;
  for (const ir::Function& f : r.ir->functions) {
    taped = taped || f.name.find(".taped#") != std::string::npos;
    reversed = reversed || f.name.find(".reverse#") != std::string::npos;
    // The body's backward runs apart from its forward, on the values the forward kept.
    split = split || f.name.find(".backward#") != std::string::npos;
  }
  EXPECT_TRUE(taped);
  EXPECT_TRUE(reversed);
  EXPECT_TRUE(split);
  EXPECT_EQ(r.result_type("g"), "f32[3, 4]");
}

TEST(StagingGrad, TheGradientOfARecursiveFunctionReadsItsTapeAndCallsItself) {
  auto r = stage_source(R"(import stagegraph as sg

def depth(x, w, n):
    if n <= 0:
        return sg.sum(x)
    return depth(sg.tanh(x @ w), w, n - 1)

@sg.function
def g(w: sg.f32[3, 3], x: sg.f32[3], n: sg.i64):
    return sg.grad(lambda v: depth(x, v, n))(w)
)");
  ASSERT_TRUE(r.ir) << r.locations();
  EXPECT_EQ(ir::verify(*r.ir), "");
  // The forward calls depth's taped copy, which keeps what the backward reads; depth's
  // backward is a function whose Calls (in its branches' backwards) reach itself, and
  // no backward calls anything else: no forward runs twice.
  std::set<int32_t> backwards;
  int32_t taped = -1;
  for (size_t i = 0; i < r.ir->functions.size(); ++i) {
    if (r.ir->functions[i].name.find(".backward#") != std::string::npos) backwards.insert(int32_t(i));
    if (r.ir->functions[i].name.rfind("depth.taped#", 0) == 0) taped = int32_t(i);
  }
  ASSERT_GE(taped, 0) << ir::print(*r.ir);
  bool recursive = false, recomputes = false, taped_forward = false;
  for (const ir::Function& f : r.ir->functions) {
    const bool in_backward = f.name.find(".backward#") != std::string::npos;
    for (const ir::Node& n : f.nodes) {
      if (n.kind != ir::NodeKind::kCall) continue;
      const bool to_backward = backwards.count(n.functions[0]) > 0;
      recursive = recursive || (in_backward && to_backward);
      recomputes = recomputes || (in_backward && !to_backward);
      taped_forward = taped_forward || (n.functions[0] == taped && f.name.find("taped") != std::string::npos);
    }
  }
  EXPECT_TRUE(recursive) << ir::print(*r.ir);
  EXPECT_FALSE(recomputes) << ir::print(*r.ir);
  EXPECT_TRUE(taped_forward) << ir::print(*r.ir);
  // No row index is kept: the backwards visit the members in the reverse order of
  // the appends, so the taped forwards append no i64 rows and read no tape's length
  // (they keep tanh's values and the If's predicates), and each backward reads one
  // below the counter it is handed and returns the counter it leaves.
  for (const ir::Function& f : r.ir->functions) {
    if (f.name.find(".taped#") == std::string::npos) continue;
    for (const ir::Node& n : f.nodes) {
      if (n.kind != ir::NodeKind::kOp) continue;
      EXPECT_NE(n.op, ops::OpId::ShapeDim) << f.name;
      if (n.op == ops::OpId::Concatenate) {
        EXPECT_NE(f.values[size_t(n.outputs[0])].type.dtype, DType::kI64) << f.name;
      }
    }
  }
  for (int32_t b : backwards) {
    const ir::Function& f = r.ir->functions[size_t(b)];
    bool counter = false;
    for (int32_t v : f.results) counter = counter || f.values[size_t(v)].type == ir::Type{DType::kI64, {}};
    EXPECT_TRUE(counter || f.nodes.empty()) << f.name;
  }
}

TEST(StagingGrad, ARecursiveBackwardKeepsOuterProductsAsRowsAndReadsHoistedTransposes) {
  // tree_rnn's shape: h = tanh(h_left @ u + h_right @ u + xs[i] @ w) at a node.
  auto r = stage_source(R"(import stagegraph as sg

def encode(i, left, right, xs, w, u):
    if left[i] < 0:
        h = sg.tanh(xs[i] @ w)
    else:
        h = sg.tanh(encode(left[i], left, right, xs, w, u) @ u + encode(right[i], left, right, xs, w, u) @ u +
                    xs[i] @ w)
    return h

@sg.function
def g(w: sg.f32[3, 4], u: sg.f32[4, 4], root: sg.i64, left: sg.i64["M"], right: sg.i64["M"], xs: sg.f32["M", 3]):
    return sg.grad(lambda a, b: sg.sum(encode(root, left, right, xs, a, b)), argnums=(0, 1))(w, u)
)");
  ASSERT_TRUE(r.ir) << r.locations();
  EXPECT_EQ(ir::verify(*r.ir), "");
  passes::eliminate_dead_code(*r.ir);  // the bypassed sums
  auto rank2 = [](const ir::Function& f, const ir::Node& n) {  // a [3, 4] or [4, 4] result
    const ir::Type& t = f.values[size_t(n.outputs[0])].type;
    return n.kind == ir::NodeKind::kOp && t.rank() == 2 && t.shape[0].as_static().value_or(1) > 1 &&
           t.shape[1].as_static() == 4;
  };
  // No backward adds a [3, 4] or [4, 4] product to its gradient per call: it appends
  // the rows (x and the cotangent) to lists, which the root's caller multiplies.
  size_t products_after = 0;
  for (const ir::Function& f : r.ir->functions) {
    const bool backward = f.name.find(".backward#") != std::string::npos;
    for (const ir::Node& n : f.nodes) {
      if (backward && rank2(f, n)) {
        EXPECT_NE(n.op, OpId::Add) << f.name << "\n" << ir::print(*r.ir);
        EXPECT_NE(n.op, OpId::MatMul) << f.name << "\n" << ir::print(*r.ir);
      }
      products_after += !backward && rank2(f, n) && n.op == OpId::MatMul;
    }
  }
  EXPECT_GE(products_after, 3u) << ir::print(*r.ir);  // w (leaves, nodes), u (both children, shared rows)
  // xs[i] is recomputed by the backward, not kept: the taped forwards append no f32[3] row.
  for (const ir::Function& f : r.ir->functions)
    if (f.name.find(".taped#") != std::string::npos)
      for (const ir::Node& n : f.nodes)
        if (n.kind == ir::NodeKind::kOp && n.op == OpId::Concatenate) {
          const ir::Type& t = f.values[size_t(n.outputs[0])].type;
          EXPECT_FALSE(t.rank() == 2 && t.shape[1].as_static() == 3) << f.name << "\n" << ir::print(*r.ir);
        }
  // -O2 moves u's transpose (the cotangent's dh @ u^T) out of the recursion: no
  // backward transposes, the Call that enters it does, once. The gradients of w and
  // u, whose products went to row lists, come back unchanged from every backward:
  // those results go, and with them the parameters the backward then only hands on
  // to itself (w and u, and their gradients so far).
  const size_t params_before = find_prefix(*r.ir, "encode.backward#")->params.size();
  const size_t results_before = find_prefix(*r.ir, "encode.backward#")->results.size();
  passes::run_pipeline(*r.ir, 2);  // (dead code elimination renumbers the functions)
  EXPECT_EQ(find_prefix(*r.ir, "encode.backward#")->params.size(), params_before - 2 + 1 - 2) << ir::print(*r.ir);
  EXPECT_EQ(find_prefix(*r.ir, "encode.backward#")->results.size(), results_before - 2) << ir::print(*r.ir);
  EXPECT_EQ(ir::verify(*r.ir), "");
  size_t outside = 0;
  for (const ir::Function& f : r.ir->functions)
    for (const ir::Node& n : f.nodes) {
      if (n.kind != ir::NodeKind::kOp || n.op != OpId::Transpose || f.values[size_t(n.inputs[0])].type.rank() != 2 ||
          f.values[size_t(n.inputs[0])].type.shape[0].as_static() != 4)
        continue;
      EXPECT_EQ(f.name.find(".backward#"), std::string::npos) << f.name << "\n" << ir::print(*r.ir);
      ++outside;
    }
  EXPECT_GE(outside, 1u) << ir::print(*r.ir);
}

TEST(StagingGrad, RefusalsAreLocatedAndSayWhatToDo) {
  auto scalar = stage_source(R"(import stagegraph as sg

@sg.function
def g(x: sg.f32[3]):
    return sg.grad(lambda v: v * 2.0)(x)
)");
  EXPECT_FALSE(scalar.ir);
  EXPECT_NE(scalar.locations().find("5:12: error: sg.grad needs the function to return a scalar float; it returned "
                                    "f32[3]: reduce it to a scalar (sg.sum, sg.mean), or use sg.vjp"),
            std::string::npos)
      << scalar.locations();
  auto integer = stage_source(R"(import stagegraph as sg

@sg.function
def g(i: sg.i64[3]):
    return sg.grad(lambda v: sg.sum(v * 2))(i)
)");
  EXPECT_FALSE(integer.ir);
  EXPECT_NE(integer.locations().find("error: sg.grad: argument 0 holds a i64 tensor, which has no gradient; "
                                     "differentiate with respect to float values (cast it with .astype(sg.f32))"),
            std::string::npos)
      << integer.locations();
  auto conv = stage_source(R"(import stagegraph as sg

@sg.function
def g(x: sg.f32[1, 4, 4, 2], w: sg.f32[2, 2, 1, 2]):
    return sg.grad(lambda v: sg.sum(sg.conv2d(x, v, groups=2)))(w)
)");
  EXPECT_FALSE(conv.ir);
  EXPECT_NE(conv.locations().find("5:37: error: cannot differentiate through sg.conv2d with groups > 1"), std::string::npos)
      << conv.locations();
}

constexpr const char* kCustom = R"(import stagegraph as sg

def double_eager(x):
    return x * 2.0

def double_result(x):
    return x.dtype, x.shape

def double_vjp(x, out, ct):
    return (sg.cos(ct) * 2.0,)

double = sg.custom_op("my_ns.double", fn=double_eager, result=double_result VJP)

@sg.function
def g(x: sg.f32[3]):
    return sg.grad(lambda v: sg.sum(double(v)))(x)
)";

TEST(StagingGrad, ACustomOpIsDifferentiatedByItsVjpRule) {
  std::string text = kCustom;
  text.replace(text.find(" VJP"), 4, ", vjp=double_vjp");
  auto r = stage_source(text);
  ASSERT_TRUE(r.ir) << r.locations();
  EXPECT_EQ(ir::verify(*r.ir), "");
  // The rule's cos is staged into the backward pass.
  size_t cos = 0;
  for (const ir::Function& f : r.ir->functions)
    for (const ir::Node& n : f.nodes) cos += n.kind == ir::NodeKind::kOp && n.op == ops::OpId::Cos;
  EXPECT_EQ(cos, 1u) << ir::print(*r.ir);

  text = kCustom;
  text.replace(text.find(" VJP"), 4, "");
  auto refused = stage_source(text);
  EXPECT_FALSE(refused.ir);
  EXPECT_NE(refused.locations().find("error: cannot differentiate through custom op 'my_ns.double': declare it with "
                                     "sg.custom_op(..., vjp=...)"),
            std::string::npos)
      << refused.locations();
}

TEST(StagingGrad, StableFormsAreRewrittenAndExplained) {
  auto r = stage_source(R"(import stagegraph as sg

@sg.function
def g(x: sg.f32[2, 3]):
    return sg.log(sg.softmax(x)), sg.log(1.0 + sg.exp(x))
)");
  ASSERT_TRUE(r.ir) << r.locations();
  // The softmax node left behind has no user; dead-code elimination drops it.
  EXPECT_EQ(r.count_ops("g", ops::OpId::LogSoftmax), 1u);
  EXPECT_EQ(r.count_ops("g", ops::OpId::Relu), 1u);
  EXPECT_NE(r.explained.find("model.py:5:12: log(softmax(x)): rewritten to log_softmax(x)"), std::string::npos)
      << r.explained;
  EXPECT_NE(r.explained.find("model.py:5:35: log(1 + exp(x)): rewritten to softplus(x)"), std::string::npos)
      << r.explained;
}

}  // namespace
}  // namespace sg::compiler
