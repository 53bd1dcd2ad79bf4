// Tensor lists (issue 4): `lst.append(x)` in a staged loop is a Concatenate of the
// carried list with the item on axis 0. The runtime appends in amortized
// O(len(x)): 10,000 appends make O(log n) allocations, and value semantics hold —
// a list read before an append never sees the appended item, and two lists grown
// from one list never see each other's items.
#include <gtest/gtest.h>

#include <cmath>

#include "test_util.h"

namespace sg::testing {
namespace {

class CountingAllocator final : public Allocator {
 public:
  void* allocate(size_t bytes, size_t alignment) override {
    ++allocations;
    return default_allocator()->allocate(bytes, alignment);
  }
  void deallocate(void* p, size_t bytes, size_t alignment) override {
    default_allocator()->deallocate(p, bytes, alignment);
  }
  uint64_t allocations = 0;
};

const auto kI64 = std::pair<DType, ShapeSpec>{DType::kI64, {}};

struct ListGraph {
  GraphSpec g;
  int32_t zero, one, empty;
  uint32_t cond, body, snap_cond, snap_body;
};

// cond(i, lst, n, c) = i < n
// body(i, lst, n, c) = (i + 1, concatenate(lst, expand_dims(i + c, 0)), n, c)
// snap_cond(i, lst, snap, n) = i < n
// snap_body(i, lst, snap, n) = (i + 1, concatenate(lst, expand_dims(i, 0)), lst, n)
ListGraph list_functions() {
  ListGraph l;
  GraphSpec& g = l.g;
  g.symbols = {"L"};
  l.zero = g.add_constant<int64_t>({0});
  l.one = g.add_constant<int64_t>({1});
  l.empty = g.add_constant<int64_t>({});
  const ShapeSpec list = {sym(0)};
  const auto append = [&](FunctionSpec& f, uint32_t lst, uint32_t item) {
    const uint32_t row = f.op("expand_dims", {item}, DType::kI64, shape({1}), 7, 9);
    f.nodes.back().attrs = {{"axes", ops::AttrValue::Ints({0})}};
    const uint32_t grown = f.op("concatenate", {lst, row}, DType::kI64, list, 7, 9);
    f.nodes.back().attrs = {{"axis", ops::AttrValue::Int(0)}};
    return grown;
  };
  // (i, lst, n, c) -> i < n; with `snap`: (i, lst, snap, n) -> i < n
  const auto make_cond = [&](const char* name, bool snap) {
    FunctionSpec f;
    f.name = name;
    const uint32_t i = f.param(DType::kI64, {});
    f.param(DType::kI64, list);
    const uint32_t third = f.param(DType::kI64, snap ? list : ShapeSpec{});
    const uint32_t fourth = f.param(DType::kI64, {});
    f.results = {f.op("less", {i, snap ? fourth : third}, DType::kBool, {}, 6, 14)};
    return g.add_function(std::move(f));
  };
  l.cond = make_cond("list_cond", false);
  {
    FunctionSpec f;
    f.name = "list_body";
    const uint32_t i = f.param(DType::kI64, {}), lst = f.param(DType::kI64, list);
    const uint32_t n = f.param(DType::kI64, {}), c = f.param(DType::kI64, {});
    const uint32_t k1 = f.value(DType::kI64, {}, l.one);
    const uint32_t grown = append(f, lst, f.op("add", {i, c}, DType::kI64, {}));
    f.results = {f.op("add", {i, k1}, DType::kI64, {}), grown, n, c};
    l.body = g.add_function(std::move(f));
  }
  l.snap_cond = make_cond("snap_cond", true);
  {
    FunctionSpec f;
    f.name = "snap_body";
    const uint32_t i = f.param(DType::kI64, {}), lst = f.param(DType::kI64, list);
    f.param(DType::kI64, list);
    const uint32_t n = f.param(DType::kI64, {});
    const uint32_t k1 = f.value(DType::kI64, {}, l.one);
    const uint32_t grown = append(f, lst, i);
    f.results = {f.op("add", {i, k1}, DType::kI64, {}), grown, lst, n};
    l.snap_body = g.add_function(std::move(f));
  }
  return l;
}

// Entries:
//   grow(n)     = the list [0, 1, ..., n-1] built by n appends
//   fork(n, m)  = (base, base + [100, ..., 100+m-1], base + [1000, ..., 1000+m-1]),
//                 base = grow(n), both grown from the one base list
//   snapshot(n) = (lst, snap): snap is lst as it was before its last append
GraphSpec list_graph() {
  ListGraph l = list_functions();
  GraphSpec& g = l.g;
  const int32_t k100 = g.add_constant<int64_t>({100});
  const int32_t k1000 = g.add_constant<int64_t>({1000});
  const auto loop = [&](FunctionSpec& f, uint32_t start, uint32_t n, uint32_t c) {
    const uint32_t k0 = f.value(DType::kI64, {}, l.zero);
    return f.control(fb::NodeKind::While, {l.cond, l.body}, {k0, start, n, c},
                     {kI64, {DType::kI64, {sym(0)}}, kI64, kI64}, 6)[1];
  };
  FunctionSpec grow;
  grow.name = "grow";
  {
    const uint32_t n = grow.param(DType::kI64, {});
    const uint32_t empty = grow.value(DType::kI64, shape({0}), l.empty);
    grow.results = {loop(grow, empty, n, grow.value(DType::kI64, {}, l.zero))};
  }
  FunctionSpec fork;
  fork.name = "fork";
  {
    const uint32_t n = fork.param(DType::kI64, {});
    const uint32_t m = fork.param(DType::kI64, {});
    const uint32_t empty = fork.value(DType::kI64, shape({0}), l.empty);
    const uint32_t base = loop(fork, empty, n, fork.value(DType::kI64, {}, l.zero));
    const uint32_t a = loop(fork, base, m, fork.value(DType::kI64, {}, k100));
    const uint32_t b = loop(fork, base, m, fork.value(DType::kI64, {}, k1000));
    fork.results = {base, a, b};
  }
  FunctionSpec snapshot;
  snapshot.name = "snapshot";
  {
    const uint32_t n = snapshot.param(DType::kI64, {});
    const uint32_t empty = snapshot.value(DType::kI64, shape({0}), l.empty);
    const uint32_t k0 = snapshot.value(DType::kI64, {}, l.zero);
    const auto out = snapshot.control(fb::NodeKind::While, {l.snap_cond, l.snap_body}, {k0, empty, empty, n},
                                      {kI64, {DType::kI64, {sym(0)}}, {DType::kI64, {sym(0)}}, kI64}, 6);
    snapshot.results = {out[1], out[2]};
  }
  g.add_entry("grow", g.add_function(std::move(grow)), {"n"}, {"lst"});
  g.add_entry("fork", g.add_function(std::move(fork)), {"n", "m"}, {"base", "a", "b"});
  g.add_entry("snapshot", g.add_function(std::move(snapshot)), {"n"}, {"lst", "snap"});
  return g;
}

std::vector<int64_t> range(int64_t from, int64_t n) {
  std::vector<int64_t> v;
  for (int64_t k = 0; k < n; ++k) v.push_back(from + k);
  return v;
}

std::vector<int64_t> joined(std::vector<int64_t> a, const std::vector<int64_t>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

TEST(TensorList, TenThousandAppendsMakeLogarithmicallyManyAllocations) {
  auto program = load_ok(list_graph());
  ASSERT_NE(program, nullptr);
  constexpr int64_t kN = 10000;
  CountingAllocator counter;
  SessionOptions options;
  options.allocator = &counter;
  auto s = Session::create(program, "grow", options);
  ASSERT_TRUE(s.ok());
  ASSERT_TRUE((*s)->set_input("n", scalar_i64(kN)).ok());
  ASSERT_TRUE((*s)->run().ok());
  // The list doubles its room: ~log2(10,000) = 14 buffers, plus the frame stack,
  // the loop counter and the output. A copy per append would be 10,000.
  const uint64_t cold = counter.allocations;
  EXPECT_LE(cold, uint64_t(2 * std::ceil(std::log2(double(kN))) + 10)) << cold << " allocations";
  EXPECT_EQ(values_of<int64_t>((*s)->output(0)), range(0, kN));
  // A warm run finds every buffer of the doubling sequence in the Session's cache.
  ASSERT_TRUE((*s)->run().ok());
  EXPECT_LE(counter.allocations - cold, 1u);  // at most the output the caller keeps
  EXPECT_EQ(values_of<int64_t>((*s)->output(0)), range(0, kN));
}

TEST(TensorList, ListsGrownFromOneListDoNotSeeEachOthersItems) {
  auto program = load_ok(list_graph());
  ASSERT_NE(program, nullptr);
  auto s = Session::create(program, "fork");
  ASSERT_TRUE(s.ok());
  // 9 items leave the base list room for 7 more: appending to it in place from
  // both loops would write both lists' items into the same bytes.
  for (auto [n, m] : {std::pair<int64_t, int64_t>{9, 3}, {9, 7}, {1000, 1000}}) {
    ASSERT_TRUE((*s)->set_input("n", scalar_i64(n)).ok());
    ASSERT_TRUE((*s)->set_input("m", scalar_i64(m)).ok());
    ASSERT_TRUE((*s)->run().ok());
    const std::vector<int64_t> base = range(0, n);
    EXPECT_EQ(values_of<int64_t>((*s)->output(0)), base);
    EXPECT_EQ(values_of<int64_t>((*s)->output(1)), joined(base, range(100, m)));
    EXPECT_EQ(values_of<int64_t>((*s)->output(2)), joined(base, range(1000, m)));
  }
}

TEST(TensorList, AListReadBeforeAnAppendDoesNotSeeTheItem) {
  auto program = load_ok(list_graph());
  ASSERT_NE(program, nullptr);
  auto s = Session::create(program, "snapshot");
  ASSERT_TRUE(s.ok());
  for (int64_t n : {1, 7, 3000}) {
    ASSERT_TRUE((*s)->set_input("n", scalar_i64(n)).ok());
    ASSERT_TRUE((*s)->run().ok());
    EXPECT_EQ(values_of<int64_t>((*s)->output(0)), range(0, n));
    EXPECT_EQ(values_of<int64_t>((*s)->output(1)), range(0, n - 1));
  }
}

TEST(TensorList, ZeroIterationsGiveTheEmptyList) {
  auto program = load_ok(list_graph());
  ASSERT_NE(program, nullptr);
  auto s = Session::create(program, "grow");
  ASSERT_TRUE(s.ok());
  ASSERT_TRUE((*s)->set_input("n", scalar_i64(0)).ok());
  ASSERT_TRUE((*s)->run().ok());
  EXPECT_EQ((*s)->output(0)->numel(), 0);
  EXPECT_EQ((*s)->output(0)->rank(), 1);
}

}  // namespace
}  // namespace sg::testing
