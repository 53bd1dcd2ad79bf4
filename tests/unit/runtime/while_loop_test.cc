// While loops move their carried values (issue 4): the cond borrows them, so
// nothing it runs — a Call, an op over a dying parameter, a parameter returned as
// the test — may take them away or overwrite them; carried types that change
// every iteration re-plan; a failure mid-loop releases every frame.
#include <gtest/gtest.h>

#include <string>

#include "test_util.h"

namespace sg::testing {
namespace {

const auto kI64 = std::pair<DType, ShapeSpec>{DType::kI64, {}};

// def count(n): i = 0; s = 0; while TEST(i, n): s = s + i; i = i + 1; return (i, s)
// The cond's test is built by `make_test(cond, i, n)`; `extra` adds functions it calls.
template <class MakeTest>
GraphSpec counting_loop(MakeTest make_test, std::vector<FunctionSpec> extra = {}) {
  GraphSpec g;
  const int32_t zero = g.add_constant<int64_t>({0});
  const int32_t one = g.add_constant<int64_t>({1});
  FunctionSpec main;
  main.name = "count";
  FunctionSpec cond;
  cond.name = "count_cond";
  {
    const uint32_t i = cond.param(DType::kI64, {});
    cond.param(DType::kI64, {});
    const uint32_t n = cond.param(DType::kI64, {});
    cond.results = {make_test(cond, i, n)};
  }
  FunctionSpec body;
  body.name = "count_body";
  {
    const uint32_t i = body.param(DType::kI64, {}), s = body.param(DType::kI64, {}), n = body.param(DType::kI64, {});
    const uint32_t k1 = body.value(DType::kI64, {}, one);
    const uint32_t s2 = body.op("add", {s, i}, DType::kI64, {});
    body.results = {body.op("add", {i, k1}, DType::kI64, {}), s2, n};
  }
  const uint32_t n = main.param(DType::kI64, {});
  const uint32_t k0 = main.value(DType::kI64, {}, zero);
  const auto out = main.control(fb::NodeKind::While, {1, 2}, {k0, k0, n}, {kI64, kI64, kI64}, 3);
  main.results = {out[0], out[1]};
  g.add_function(std::move(main));
  g.add_function(std::move(cond));
  g.add_function(std::move(body));
  for (FunctionSpec& f : extra) g.add_function(std::move(f));
  g.add_entry("count", 0, {"n"}, {"i", "s"});
  return g;
}

void expect_counts(const GraphSpec& g, std::initializer_list<int64_t> ns) {
  auto program = load_ok(g);
  ASSERT_NE(program, nullptr);
  auto s = Session::create(program, "count");
  ASSERT_TRUE(s.ok());
  for (int64_t n : ns) {
    ASSERT_TRUE((*s)->set_input("n", scalar_i64(n)).ok());
    const Status st = (*s)->run();
    ASSERT_TRUE(st.ok()) << st.message();
    const int64_t m = n > 0 ? n : 0;
    EXPECT_EQ(*(*s)->output(0)->data_as<int64_t>(), m) << "n = " << n;
    EXPECT_EQ(*(*s)->output(1)->data_as<int64_t>(), m * (m - 1) / 2) << "n = " << n;
  }
}

TEST(WhileLoop, CondMayCallAFunctionWithTheCarriedValues) {
  FunctionSpec lt;  // lt(a, b) = a < b: its arguments die at the cond's Call node
  lt.name = "lt";
  const uint32_t a = lt.param(DType::kI64, {}), b = lt.param(DType::kI64, {});
  lt.results = {lt.op("less", {a, b}, DType::kBool, {})};
  std::vector<FunctionSpec> extra;
  extra.push_back(std::move(lt));
  expect_counts(counting_loop(
                    [](FunctionSpec& cond, uint32_t i, uint32_t n) {
                      return cond.control(fb::NodeKind::Call, {3}, {i, n}, {{DType::kBool, {}}})[0];
                    },
                    std::move(extra)),
                {0, 1, 5, 300});
}

TEST(WhileLoop, CondOpsDoNotOverwriteTheCarriedValues) {
  // -i > -n: both negations are elementwise over a parameter that dies there,
  // which an owned value would let them overwrite.
  expect_counts(counting_loop([](FunctionSpec& cond, uint32_t i, uint32_t n) {
                  const uint32_t mi = cond.op("neg", {i}, DType::kI64, {});
                  const uint32_t mn = cond.op("neg", {n}, DType::kI64, {});
                  return cond.op("greater", {mi, mn}, DType::kBool, {});
                }),
                {0, 1, 7, 300});
}

// A stable loop whose cond and body are straight lines over scalars runs to its
// end on a register file once its cond runs beneath its body (executor_registers.cc):
// from its third test on;
// profiling keeps every node on the usual path, where it is timed.
TEST(WhileLoop, StraightLoopsOverScalarsRunOnRegisters) {
  auto program = load_ok(counting_loop(
      [](FunctionSpec& cond, uint32_t i, uint32_t n) { return cond.op("less", {i, n}, DType::kBool, {}); }));
  ASSERT_NE(program, nullptr);
  for (const bool profile : {false, true}) {
    SessionOptions options;
    options.profile = profile;
    auto s = Session::create(program, "count", options);
    ASSERT_TRUE(s.ok());
    uint64_t loops = 0;
    for (int64_t n : {0, 1, 2, 5, 300, 0, 3}) {
      ASSERT_TRUE((*s)->set_input("n", scalar_i64(n)).ok());
      ASSERT_TRUE((*s)->run().ok());
      EXPECT_EQ(*(*s)->output(0)->data_as<int64_t>(), n);
      EXPECT_EQ(*(*s)->output(1)->data_as<int64_t>(), n * (n - 1) / 2);
      loops += !profile && n >= 2;
      EXPECT_EQ((*s)->schedule_stats().register_loops, loops) << "n = " << n << (profile ? ", profiled" : "");
    }
  }
}

// def run(n): i = 0; go = 0 < n; while go: i = i + 1; go = i < n; return i
GraphSpec flag_loop() {
  GraphSpec g;
  const int32_t zero = g.add_constant<int64_t>({0});
  const int32_t one = g.add_constant<int64_t>({1});
  const auto flag = std::pair<DType, ShapeSpec>{DType::kBool, {}};
  FunctionSpec main;
  main.name = "run";
  const uint32_t n = main.param(DType::kI64, {});
  const uint32_t k0 = main.value(DType::kI64, {}, zero);
  const uint32_t go = main.op("less", {k0, n}, DType::kBool, {});
  main.results = {main.control(fb::NodeKind::While, {1, 2}, {k0, go, n}, {kI64, flag, kI64})[0]};
  FunctionSpec cond;  // the test is a carried value, returned as it is
  cond.name = "run_cond";
  cond.param(DType::kI64, {});
  cond.results = {cond.param(DType::kBool, {})};
  cond.param(DType::kI64, {});
  FunctionSpec body;
  body.name = "run_body";
  {
    const uint32_t i = body.param(DType::kI64, {});
    body.param(DType::kBool, {});
    const uint32_t m = body.param(DType::kI64, {});
    const uint32_t i2 = body.op("add", {i, body.value(DType::kI64, {}, one)}, DType::kI64, {});
    body.results = {i2, body.op("less", {i2, m}, DType::kBool, {}), m};
  }
  g.add_function(std::move(main));
  g.add_function(std::move(cond));
  g.add_function(std::move(body));
  g.add_entry("run", 0, {"n"}, {"i"});
  return g;
}

TEST(WhileLoop, CondMayReturnACarriedValue) {
  auto program = load_ok(flag_loop());
  ASSERT_NE(program, nullptr);
  auto s = Session::create(program, "run");
  ASSERT_TRUE(s.ok());
  for (int64_t n : {0, 1, 4, 1000}) {
    ASSERT_TRUE((*s)->set_input("n", scalar_i64(n)).ok());
    ASSERT_TRUE((*s)->run().ok());
    EXPECT_EQ(*(*s)->output(0)->data_as<int64_t>(), n) << "n = " << n;
  }
  // The carried flag is the test where the register file holds it.
  EXPECT_EQ((*s)->schedule_stats().register_loops, 2u);
}

// def doubling(n, v: i64[1]): i = 0; while i < n: v = concatenate(v, v); i = i + 1; return v
// The carried shape changes every iteration (not an append: v is both inputs).
GraphSpec doubling_loop() {
  GraphSpec g;
  g.symbols = {"D"};
  const int32_t zero = g.add_constant<int64_t>({0});
  const int32_t one = g.add_constant<int64_t>({1});
  const ShapeSpec vec = {sym(0)};
  FunctionSpec main;
  main.name = "doubling";
  const uint32_t n = main.param(DType::kI64, {});
  const uint32_t v = main.param(DType::kI64, shape({1}));
  const uint32_t k0 = main.value(DType::kI64, {}, zero);
  main.results = {main.control(fb::NodeKind::While, {1, 2}, {k0, v, n}, {kI64, {DType::kI64, vec}, kI64})[1]};
  FunctionSpec cond;
  cond.name = "doubling_cond";
  {
    const uint32_t i = cond.param(DType::kI64, {});
    cond.param(DType::kI64, vec);
    cond.results = {cond.op("less", {i, cond.param(DType::kI64, {})}, DType::kBool, {})};
  }
  FunctionSpec body;
  body.name = "doubling_body";
  {
    const uint32_t i = body.param(DType::kI64, {}), w = body.param(DType::kI64, vec), m = body.param(DType::kI64, {});
    const uint32_t twice = body.op("concatenate", {w, w}, DType::kI64, vec);
    body.nodes.back().attrs = {{"axis", ops::AttrValue::Int(0)}};
    body.results = {body.op("add", {i, body.value(DType::kI64, {}, one)}, DType::kI64, {}), twice, m};
  }
  g.add_function(std::move(main));
  g.add_function(std::move(cond));
  g.add_function(std::move(body));
  g.add_entry("doubling", 0, {"n", "v"}, {"v"});
  return g;
}

TEST(WhileLoop, CarriedShapesThatChangeEveryIterationArePlannedAgain) {
  auto program = load_ok(doubling_loop());
  ASSERT_NE(program, nullptr);
  auto s = Session::create(program, "doubling");
  ASSERT_TRUE(s.ok());
  ASSERT_TRUE((*s)->set_input("v", make_tensor<int64_t>(DType::kI64, {1}, {7})).ok());
  for (int64_t n : {0, 1, 2, 6, 12, 3}) {
    ASSERT_TRUE((*s)->set_input("n", scalar_i64(n)).ok());
    ASSERT_TRUE((*s)->run().ok());
    EXPECT_EQ(values_of<int64_t>((*s)->output(0)), std::vector<int64_t>(size_t(1) << n, 7)) << "n = " << n;
  }
}

// Runs counting_loop graph `g` whose loop divides by n - 3 - i: with n = 10 the
// run fails at `where`; the Session then runs n = 2 (no zero divisor) to the end.
void expect_failure_at_i_7(const GraphSpec& g, const std::string& where) {
  auto program = load_ok(g);
  ASSERT_NE(program, nullptr);
  auto s = Session::create(program, "count");
  ASSERT_TRUE(s.ok());
  ASSERT_TRUE((*s)->set_input("n", scalar_i64(10)).ok());
  const Status failed = (*s)->run();
  EXPECT_EQ(failed.code(), StatusCode::kRuntimeError);
  EXPECT_NE(failed.message().find(where), std::string::npos) << failed.message();
  ASSERT_TRUE((*s)->set_input("n", scalar_i64(2)).ok());
  ASSERT_TRUE((*s)->run().ok());
  EXPECT_EQ(*(*s)->output(0)->data_as<int64_t>(), 2);
}

TEST(WhileLoop, AFailureInTheBodyReleasesTheLoopAndLaterRunsWork) {
  // s = s + i is replaced by s = s // (n - 3 - i): a division by zero at i = n - 3.
  GraphSpec g = counting_loop([](FunctionSpec& cond, uint32_t i, uint32_t n) {
    return cond.op("less", {i, n}, DType::kBool, {});
  });
  {
    // Values of count_body: i = 0, s = 1, n = 2; node 0 makes s + i.
    FunctionSpec& body = g.functions[2];
    const uint32_t k3 = body.value(DType::kI64, {}, g.add_constant<int64_t>({3}));
    const uint32_t a = body.op("sub", {2, k3}, DType::kI64, {});  // n - 3
    const uint32_t d = body.op("sub", {a, 0}, DType::kI64, {});   // n - 3 - i
    NodeSpec div = body.nodes[0];
    div.op = "floordiv";
    div.inputs = {1, d};
    div.line = 9;
    div.column = 13;
    // The subtractions, then the division in place of s + i.
    std::vector<NodeSpec> nodes = {body.nodes[body.nodes.size() - 2], body.nodes.back(), div, body.nodes[1]};
    body.nodes = std::move(nodes);
  }
  expect_failure_at_i_7(g, "model.py:9:13");
}

// A stable loop runs its cond beneath the body's frame, which stays pushed; a
// control-flow node in the body still runs through the main loop and comes back.
TEST(WhileLoop, ABranchInTheBodyOfAStableLoop) {
  // then(s, i) = s + i, else(s, i) = i + s: the same sums by either path.
  std::vector<FunctionSpec> extra;
  for (const char* name : {"then", "else"}) {
    FunctionSpec f;
    f.name = name;
    const uint32_t a = f.param(DType::kI64, {}), b = f.param(DType::kI64, {});
    f.results = {std::string(name) == "then" ? f.op("add", {a, b}, DType::kI64, {}) : f.op("add", {b, a}, DType::kI64, {})};
    extra.push_back(std::move(f));
  }
  GraphSpec g = counting_loop(
      [](FunctionSpec& cond, uint32_t i, uint32_t n) { return cond.op("less", {i, n}, DType::kBool, {}); },
      std::move(extra));
  {
    // Values of count_body: i = 0, s = 1, n = 2, 1 = 3; node 0 makes s + i (value 4).
    FunctionSpec& body = g.functions[2];
    const uint32_t k3 = body.value(DType::kI64, {}, g.add_constant<int64_t>({3}));
    const uint32_t c = body.op("less", {0, k3}, DType::kBool, {});  // i < 3
    NodeSpec branch = body.nodes[0];
    branch.kind = fb::NodeKind::If;
    branch.op = "if";
    branch.functions = {3, 4};
    branch.inputs = {c, 1, 0};
    body.nodes = {body.nodes.back(), branch, body.nodes[1]};
  }
  expect_counts(g, {0, 1, 2, 5, 300, 4});
}

TEST(WhileLoop, AFailureInTheCondBeneathTheBodyNamesItsNode) {
  // The test is i + (n // (n - 3 - i)) * 0 < n: a division by zero at i = n - 3.
  GraphSpec g = counting_loop([](FunctionSpec& cond, uint32_t i, uint32_t n) {
    const uint32_t k3 = cond.value(DType::kI64, {}, 0);  // made 3 below
    const uint32_t k0 = cond.value(DType::kI64, {}, 0);  // the loop's own 0
    const uint32_t a = cond.op("sub", {n, k3}, DType::kI64, {});
    const uint32_t d = cond.op("sub", {a, i}, DType::kI64, {});
    const uint32_t q = cond.op("floordiv", {n, d}, DType::kI64, {});
    cond.nodes.back().line = 4;
    cond.nodes.back().column = 21;
    const uint32_t t = cond.op("add", {i, cond.op("mul", {q, k0}, DType::kI64, {})}, DType::kI64, {});
    return cond.op("less", {t, n}, DType::kBool, {});
  });
  g.functions[1].values[3].constant = g.add_constant<int64_t>({3});
  expect_failure_at_i_7(g, "model.py:4:21");
}

}  // namespace
}  // namespace sg::testing
