// No allocation on the hot path: once a Session has run, later runs of the same
// shapes call neither its Allocator nor operator new, and loop-carried values move
// between iterations without copies (issue 4: 10,000 iterations over 4,096 floats).
#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <new>

#include "test_graphs.h"
#include "test_util.h"

// GCC cannot see that the replaced operator new below is malloc.
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"

namespace {

// operator new calls while `counting` is set, for the whole test binary.
std::atomic<bool> counting{false};
std::atomic<uint64_t> news{0};

}  // namespace

// Every unaligned form is replaced, so each new pairs with its delete (the aligned
// forms keep the library's pair).
namespace {
void* counted_malloc(size_t n) noexcept {
  if (counting.load(std::memory_order_relaxed)) news.fetch_add(1, std::memory_order_relaxed);
  return std::malloc(n == 0 ? 1 : n);
}
}  // namespace

void* operator new(size_t n) {
  if (void* p = counted_malloc(n)) return p;
  throw std::bad_alloc();
}
void* operator new[](size_t n) {
  if (void* p = counted_malloc(n)) return p;
  throw std::bad_alloc();
}
void* operator new(size_t n, const std::nothrow_t&) noexcept { return counted_malloc(n); }
void* operator new[](size_t n, const std::nothrow_t&) noexcept { return counted_malloc(n); }
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, size_t) noexcept { std::free(p); }
void operator delete[](void* p, size_t) noexcept { std::free(p); }
void operator delete(void* p, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete[](void* p, const std::nothrow_t&) noexcept { std::free(p); }

namespace sg::testing {
namespace {

class CountingAllocator final : public Allocator {
 public:
  void* allocate(size_t bytes, size_t alignment) override {
    ++allocations;
    return default_allocator()->allocate(bytes, alignment);
  }
  void deallocate(void* p, size_t bytes, size_t alignment) override {
    ++deallocations;
    default_allocator()->deallocate(p, bytes, alignment);
  }
  uint64_t allocations = 0;
  uint64_t deallocations = 0;
};

struct Counts {
  uint64_t allocations, news;
};

// Runs `s` once more and takes its outputs, counting the allocations made.
Counts counted_run(Session& s, CountingAllocator& a) {
  const uint64_t before = a.allocations;
  news = 0;
  counting = true;
  const Status st = s.run();
  for (size_t i = 0; st.ok() && i < s.num_outputs(); ++i) EXPECT_TRUE(s.output(i).ok());
  counting = false;
  EXPECT_TRUE(st.ok()) << st.message();
  return {a.allocations - before, news.load()};
}

// def carry(n: i64, v: f32[4096]):
//     i = 0
//     while i < n: v = v + 1.0; i = i + 1
//     return v
GraphSpec carry_graph() {
  GraphSpec g;
  const int32_t zero = g.add_constant<int64_t>({0});
  const int32_t one = g.add_constant<int64_t>({1});
  const int32_t onef = g.add_constant<float>({1.0f});
  const ShapeSpec vec = shape({4096});
  FunctionSpec cond;  // (i, v, n) -> i < n
  cond.name = "carry_cond";
  {
    const uint32_t i = cond.param(DType::kI64, {});
    cond.param(DType::kF32, vec);
    const uint32_t n = cond.param(DType::kI64, {});
    cond.results = {cond.op("less", {i, n}, DType::kBool, {})};
  }
  FunctionSpec body;  // (i, v, n) -> (i + 1, v + 1.0, n)
  body.name = "carry_body";
  {
    const uint32_t i = body.param(DType::kI64, {});
    const uint32_t v = body.param(DType::kF32, vec);
    const uint32_t n = body.param(DType::kI64, {});
    const uint32_t k1 = body.value(DType::kI64, {}, one);
    const uint32_t k1f = body.value(DType::kF32, {}, onef);
    const uint32_t v2 = body.op("add", {v, k1f}, DType::kF32, vec);
    const uint32_t i2 = body.op("add", {i, k1}, DType::kI64, {});
    body.results = {i2, v2, n};
  }
  FunctionSpec main;
  main.name = "carry";
  const uint32_t n = main.param(DType::kI64, {});
  const uint32_t v = main.param(DType::kF32, vec);
  const uint32_t k0 = main.value(DType::kI64, {}, zero);
  main.results = {main.control(fb::NodeKind::While, {1, 2}, {k0, v, n},
                               {{DType::kI64, {}}, {DType::kF32, vec}, {DType::kI64, {}}})[1]};
  g.add_function(std::move(main));
  g.add_function(std::move(cond));
  g.add_function(std::move(body));
  g.add_entry("carry", 0, {"n", "v"}, {"v"});
  return g;
}

TEST(Allocation, StraightLineRunsAllocateNothingOnceWarm) {
  auto program = load_ok(affine_graph());
  ASSERT_NE(program, nullptr);
  CountingAllocator counter;
  SessionOptions options;
  options.allocator = &counter;
  auto s = Session::create(program, "affine", options);
  ASSERT_TRUE(s.ok());
  ASSERT_TRUE((*s)->set_input("x", make_tensor<float>(DType::kF32, {4, 3}, std::vector<float>(12, 1.0f))).ok());
  const Counts first = counted_run(**s, counter);
  EXPECT_GT(first.allocations, 0u);  // the counters see the runtime's memory
  EXPECT_GT(first.news, 0u);
  for (int r = 0; r < 5; ++r) {
    const Counts c = counted_run(**s, counter);
    EXPECT_EQ(c.allocations, 0u) << "run " << r;
    EXPECT_EQ(c.news, 0u) << "run " << r;
  }
  EXPECT_EQ(values_of<float>((*s)->output(0))[2], 5.0f);  // 1 * 2 + 3
  // An output the caller keeps is not reused: the next run gets a new buffer.
  const Tensor kept = (*s)->output(0).value();
  EXPECT_EQ(counted_run(**s, counter).allocations, 1u);
  EXPECT_EQ(values_of<float>(kept)[0], 3.0f);
}

TEST(Allocation, WhileLoopsAllocateNothingOnceWarm) {
  auto program = load_ok(while_sum_graph());
  ASSERT_NE(program, nullptr);
  CountingAllocator counter;
  SessionOptions options;
  options.allocator = &counter;
  auto s = Session::create(program, "total", options);
  ASSERT_TRUE(s.ok());
  ASSERT_TRUE((*s)->set_input("n", scalar_i64(1000)).ok());
  counted_run(**s, counter);
  const Counts warm = counted_run(**s, counter);
  EXPECT_EQ(warm.allocations, 0u);
  EXPECT_EQ(warm.news, 0u);
  EXPECT_EQ(*(*s)->output(0)->data_as<int64_t>(), 999 * 1000 / 2);
}

TEST(Allocation, CarriedValuesMoveWithoutCopiesOrAllocations) {
  auto program = load_ok(carry_graph());
  ASSERT_NE(program, nullptr);
  CountingAllocator counter;
  SessionOptions options;
  options.allocator = &counter;
  auto s = Session::create(program, "carry", options);
  ASSERT_TRUE(s.ok());
  ASSERT_TRUE((*s)->set_input("n", scalar_i64(10000)).ok());
  ASSERT_TRUE((*s)->set_input("v", make_tensor<float>(DType::kF32, {4096}, std::vector<float>(4096, 0.5f))).ok());
  counted_run(**s, counter);
  const uint64_t copies = (*s)->tensor_copies();
  const Counts warm = counted_run(**s, counter);
  EXPECT_EQ(warm.allocations, 0u);
  EXPECT_EQ(warm.news, 0u);
  // 10,000 iterations and no copy: the result is handed to the caller as it is,
  // and its buffer comes back to the Session once the caller let go of it.
  EXPECT_EQ((*s)->tensor_copies() - copies, 0u);
  const std::vector<float> v = values_of<float>((*s)->output(0));
  EXPECT_EQ(v.front(), 10000.5f);
  EXPECT_EQ(v.back(), 10000.5f);
}

// def pair(x, y: f32[128, 128]): return x @ x, y @ y
// With two threads the two matmuls run as a wave, their results in fresh buffers.
TEST(Allocation, WavesAllocateNothingOnceWarm) {
  GraphSpec g;
  FunctionSpec f;
  f.name = "pair";
  const ShapeSpec sq = shape({128, 128});
  const uint32_t x = f.param(DType::kF32, sq);
  const uint32_t y = f.param(DType::kF32, sq);
  f.results = {f.op("matmul", {x, x}, DType::kF32, sq), f.op("matmul", {y, y}, DType::kF32, sq)};
  g.add_entry("pair", g.add_function(std::move(f)), {"x", "y"}, {"a", "b"});
  auto program = load_ok(g);
  ASSERT_NE(program, nullptr);
  CountingAllocator counter;
  SessionOptions options;
  options.allocator = &counter;
  options.num_threads = 2;
  auto s = Session::create(program, "pair", options);
  ASSERT_TRUE(s.ok());
  ASSERT_TRUE((*s)->set_input("x", make_tensor<float>(DType::kF32, {128, 128}, std::vector<float>(128 * 128, 1.0f))).ok());
  ASSERT_TRUE((*s)->set_input("y", make_tensor<float>(DType::kF32, {128, 128}, std::vector<float>(128 * 128, 2.0f))).ok());
  counted_run(**s, counter);
  for (int r = 0; r < 3; ++r) {
    const Counts c = counted_run(**s, counter);
    EXPECT_EQ(c.allocations, 0u) << "run " << r;
    EXPECT_EQ(c.news, 0u) << "run " << r;
  }
#ifdef SG_HAVE_XNNPACK
  if (two_cpus()) {
    EXPECT_EQ((*s)->schedule_stats().waves, 4u);
  }
#endif
  EXPECT_EQ(values_of<float>((*s)->output(0))[0], 128.0f);
  EXPECT_EQ(values_of<float>((*s)->output(1))[5], 512.0f);
}

// def rows(xs: f32[8, 16]):
//     acc = zeros(16); i = 0
//     while i < 8: acc = acc + neg(xs[i]); i = i + 1
//     return acc
// def layers(x: f32[4, 64], img: f32[1, 8, 8, 4]):
//     h = relu(x @ W + b)                      # fully_connected, constant W and b
//     p = softmax(tanh(h * 0.5), axis=1)       # elementwise_chain, softmax
//     c = relu(conv2d(img, K, "SAME") + kb)    # conv2d_bias, constant K and kb
//     return p, c
// The backend's kernels (packed GEMM, XNNPACK's softmax and convolution, the
// chain) run on memory the Session gave them at creation or on the first run.
GraphSpec layers_graph() {
  GraphSpec g;
  std::vector<float> w(64 * 128), b(128), k(3 * 3 * 4 * 8), kb(8);
  for (size_t i = 0; i < w.size(); ++i) w[i] = float(int(i % 17) - 8) / 64.0f;
  for (size_t i = 0; i < b.size(); ++i) b[i] = float(int(i % 5) - 2) / 8.0f;
  for (size_t i = 0; i < k.size(); ++i) k[i] = float(int(i % 7) - 3) / 16.0f;
  for (size_t i = 0; i < kb.size(); ++i) kb[i] = 0.125f * float(i);
  const int32_t cw = g.add_constant<float>(w), cb = g.add_constant<float>(b), half = g.add_constant<float>({0.5f});
  const int32_t ck = g.add_constant<float>(k), ckb = g.add_constant<float>(kb);
  FunctionSpec f;
  f.name = "layers";
  const uint32_t x = f.param(DType::kF32, shape({4, 64}));
  const uint32_t img = f.param(DType::kF32, shape({1, 8, 8, 4}));
  const uint32_t h = f.op("fully_connected",
                          {x, f.value(DType::kF32, shape({64, 128}), cw), f.value(DType::kF32, shape({128}), cb)},
                          DType::kF32, shape({4, 128}));
  f.nodes.back().attrs = {{"activation", ops::AttrValue::Int(ops::attr::kActRelu)}};
  const uint32_t e = f.op("elementwise_chain", {h, f.value(DType::kF32, {}, half)}, DType::kF32, shape({4, 128}));
  f.nodes.back().attrs = {{"steps", ops::AttrValue::Ints({int64_t(ops::OpId::Mul), 0, 1, int64_t(ops::OpId::Tanh), 2,
                                                          -1})}};
  const uint32_t p = f.op("softmax", {e}, DType::kF32, shape({4, 128}));
  f.nodes.back().attrs = {{"axis", ops::AttrValue::Int(1)}};
  const uint32_t c = f.op("conv2d_bias",
                          {img, f.value(DType::kF32, shape({3, 3, 4, 8}), ck), f.value(DType::kF32, shape({8}), ckb)},
                          DType::kF32, shape({1, 8, 8, 8}));
  f.nodes.back().attrs = {{"stride", ops::AttrValue::Ints({1, 1})},
                          {"dilation", ops::AttrValue::Ints({1, 1})},
                          {"padding", ops::AttrValue::String("SAME")},
                          {"groups", ops::AttrValue::Int(1)},
                          {"activation", ops::AttrValue::Int(ops::attr::kActRelu)}};
  f.results = {p, c};
  g.add_function(std::move(f));
  g.add_entry("layers", 0, {"x", "img"}, {"p", "c"});
  return g;
}

TEST(Allocation, BackendKernelsAndRecursionAllocateNothingOnceWarm) {
  auto layers = load_ok(layers_graph());
  auto recursion = load_ok(recursive_graph("add", 0, 1));  // an If and a Call per level
  ASSERT_NE(layers, nullptr);
  ASSERT_NE(recursion, nullptr);
  for (int threads : {1, 2}) {
    SCOPED_TRACE(::testing::Message() << threads << " threads");
    CountingAllocator counter;
    SessionOptions options;
    options.allocator = &counter;
    options.num_threads = threads;
    auto s = Session::create(layers, "layers", options);
    ASSERT_TRUE(s.ok()) << s.status().message();
    ASSERT_TRUE((*s)->set_input("x", make_tensor<float>(DType::kF32, {4, 64}, std::vector<float>(256, 0.25f))).ok());
    ASSERT_TRUE(
        (*s)->set_input("img", make_tensor<float>(DType::kF32, {1, 8, 8, 4}, std::vector<float>(256, 0.5f))).ok());
    counted_run(**s, counter);
    for (int r = 0; r < 3; ++r) {
      const Counts c = counted_run(**s, counter);
      EXPECT_EQ(c.allocations, 0u) << "run " << r;
      EXPECT_EQ(c.news, 0u) << "run " << r;
    }
    const std::vector<float> p = values_of<float>((*s)->output(0));
    float row = 0;
    for (int j = 0; j < 128; ++j) row += p[size_t(j)];
    EXPECT_NEAR(row, 1.0f, 1e-5f);
#ifdef SG_HAVE_XNNPACK
    // What ran were the backend's kernels, not the reference ones.
    SessionOptions profiled = options;
    profiled.profile = true;
    auto named = Session::create(layers, "layers", profiled);
    ASSERT_TRUE(named.ok());
    ASSERT_TRUE((*named)->set_input("x", make_tensor<float>(DType::kF32, {4, 64}, std::vector<float>(256, 0.25f))).ok());
    ASSERT_TRUE(
        (*named)->set_input("img", make_tensor<float>(DType::kF32, {1, 8, 8, 4}, std::vector<float>(256, 0.5f))).ok());
    ASSERT_TRUE((*named)->run().ok());
    const std::vector<NodeProfile> nodes = (*named)->profile();
    EXPECT_EQ(nodes.size(), 4u);
    for (const NodeProfile& n : nodes) EXPECT_NE(n.kernel, "reference") << n.op;
#endif

    auto r = Session::create(recursion, "rec", options);
    ASSERT_TRUE(r.ok()) << r.status().message();
    ASSERT_TRUE((*r)->set_input("n", make_tensor<int64_t>(DType::kI64, {}, {20})).ok());
    counted_run(**r, counter);
    const Counts c = counted_run(**r, counter);
    EXPECT_EQ(c.allocations, 0u);
    EXPECT_EQ(c.news, 0u);
    EXPECT_EQ(values_of<int64_t>((*r)->output(0))[0], 1 + 20 * 21 / 2);
  }
}

// The body reads a row at the loop counter, a run-time index: the row and what
// follows it are planned, so a warm run allocates nothing (the rnn benchmark's body).
TEST(Allocation, RowsReadAtTheLoopCounterAllocateNothingOnceWarm) {
  GraphSpec g;
  const int32_t zero = g.add_constant<int64_t>({0});
  const int32_t one = g.add_constant<int64_t>({1});
  const int32_t eight = g.add_constant<int64_t>({8});
  const int32_t zeros = g.add_constant<float>({0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0});
  const ShapeSpec mat = shape({8, 16}), vec = shape({16});
  FunctionSpec cond;  // (i, acc, xs) -> i < 8
  cond.name = "rows_cond";
  {
    const uint32_t i = cond.param(DType::kI64, {});
    cond.param(DType::kF32, vec);
    cond.param(DType::kF32, mat);
    cond.results = {cond.op("less", {i, cond.value(DType::kI64, {}, eight)}, DType::kBool, {})};
  }
  FunctionSpec body;  // (i, acc, xs) -> (i + 1, acc + neg(xs[i]), xs)
  body.name = "rows_body";
  {
    const uint32_t i = body.param(DType::kI64, {});
    const uint32_t acc = body.param(DType::kF32, vec);
    const uint32_t xs = body.param(DType::kF32, mat);
    const uint32_t row = body.op("slice", {xs, i}, DType::kF32, vec);
    body.nodes.back().attrs = row_at_input_index();
    const uint32_t acc2 = body.op("add", {acc, body.op("neg", {row}, DType::kF32, vec)}, DType::kF32, vec);
    body.results = {body.op("add", {i, body.value(DType::kI64, {}, one)}, DType::kI64, {}), acc2, xs};
  }
  FunctionSpec main;
  main.name = "rows";
  const uint32_t xs = main.param(DType::kF32, mat);
  main.results = {main.control(fb::NodeKind::While, {1, 2},
                               {main.value(DType::kI64, {}, zero), main.value(DType::kF32, vec, zeros), xs},
                               {{DType::kI64, {}}, {DType::kF32, vec}, {DType::kF32, mat}})[1]};
  g.add_function(std::move(main));
  g.add_function(std::move(cond));
  g.add_function(std::move(body));
  g.add_entry("rows", 0, {"xs"}, {"acc"});

  auto program = load_ok(g);
  ASSERT_NE(program, nullptr);
  CountingAllocator counter;
  SessionOptions options;
  options.allocator = &counter;
  auto s = Session::create(program, "rows", options);
  ASSERT_TRUE(s.ok());
  std::vector<float> x(8 * 16);
  for (size_t k = 0; k < x.size(); ++k) x[k] = float(k % 16);
  ASSERT_TRUE((*s)->set_input("xs", make_tensor<float>(DType::kF32, {8, 16}, x)).ok());
  counted_run(**s, counter);
  const Counts warm = counted_run(**s, counter);
  EXPECT_EQ(warm.allocations, 0u);
  EXPECT_EQ(warm.news, 0u);
  const std::vector<float> acc = values_of<float>((*s)->output(0));
  EXPECT_EQ(acc[0], 0.0f);
  EXPECT_EQ(acc[15], -120.0f);  // eight rows of -15
}

}  // namespace
}  // namespace sg::testing
