// What applications need of a Session beyond running: a memory limit, a thread
// pool shared by many Sessions, outputs bound to caller buffers or read in place,
// loading from a file descriptor range, and misuse reported as errors.
#include <gtest/gtest.h>

#include <cstdio>
#include <string>
#include <thread>
#include <unistd.h>
#include <vector>

#include "test_graphs.h"
#include "test_util.h"

namespace sg::testing {
namespace {

std::unique_ptr<Session> session_on(const std::shared_ptr<const Program>& program, const std::string& entry,
                                    const SessionOptions& o = {}) {
  if (program == nullptr) return nullptr;
  auto s = Session::create(program, entry, o);
  EXPECT_TRUE(s.ok()) << s.status().message();
  return s.ok() ? std::move(s).value() : nullptr;
}

Tensor rows_of_ones(int64_t n) { return make_tensor<float>(DType::kF32, {n, 3}, std::vector<float>(size_t(n) * 3, 1.0f)); }

TEST(SessionApi, MemoryLimitEndsTheRunAtTheOpThatPassesIt) {
  SessionOptions o;
  o.memory_limit_bytes = 256 << 10;  // the frame stack keeps chunks of 64 KiB and more
  auto s = session_on(load_ok(affine_graph()), "affine", o);
  ASSERT_NE(s, nullptr);
  // affine(x) = x * 2 + c over 100,000 rows: 1.2 MB a value.
  ASSERT_TRUE(s->set_input("x", rows_of_ones(100000)).ok());
  const Status st = s->run();
  EXPECT_EQ(st.code(), StatusCode::kLimitExceeded) << st.message();
  EXPECT_EQ(st.message().rfind("model.py:2:", 0), 0u) << st.message();
  EXPECT_TRUE(st.message().find("'mul'") != std::string::npos || st.message().find("'add'") != std::string::npos)
      << st.message();
  EXPECT_NE(st.message().find("memory limit of 262144 bytes"), std::string::npos) << st.message();
  // The Session stays usable for what fits, and stays within its limit.
  ASSERT_TRUE(s->set_input("x", rows_of_ones(2)).ok());
  const Status small = s->run();
  ASSERT_TRUE(small.ok()) << small.message();
  EXPECT_EQ(values_of<float>(s->output(0)), (std::vector<float>{3, 4, 5, 3, 4, 5}));
  const MemoryReport r = s->memory_report();
  EXPECT_LE(r.frame_stack_bytes + r.cached_bytes, size_t(256) << 10);
}

TEST(SessionApi, WithoutALimitTheSameRunSucceeds) {
  auto s = session_on(load_ok(affine_graph()), "affine");
  ASSERT_NE(s, nullptr);
  ASSERT_TRUE(s->set_input("x", rows_of_ones(100000)).ok());
  ASSERT_TRUE(s->run().ok());
  EXPECT_EQ(s->output_shape(0).size(), 2u);
  EXPECT_EQ(s->output_shape(0)[0], 100000);
}

TEST(SessionApi, ManySessionsShareOneThreadPool) {
  auto pool = ThreadPool::create(2);
  ASSERT_TRUE(pool.ok()) << pool.status().message();
  EXPECT_EQ(ThreadPool::create(0).status().code(), StatusCode::kInvalidArgument);
  auto program = load_ok(affine_graph());
  SessionOptions o;
  o.thread_pool = *pool;
  o.num_threads = 1;  // ignored: the pool's threads are used
  constexpr int kSessions = 8;
  std::vector<std::unique_ptr<Session>> sessions;
  for (int k = 0; k < kSessions; ++k) sessions.push_back(session_on(program, "affine", o));
  pool->reset();  // the Sessions hold it
  std::vector<std::thread> threads;
  std::vector<int> wrong(kSessions, 0);
  for (int k = 0; k < kSessions; ++k)
    threads.emplace_back([&, k] {
      Session& s = *sessions[size_t(k)];
      for (int r = 0; r < 50; ++r) {
        const float v = float(k * 100 + r);
        if (!s.set_input("x", make_tensor<float>(DType::kF32, {1, 3}, {v, v, v})).ok() || !s.run().ok()) {
          ++wrong[size_t(k)];
          continue;
        }
        if (values_of<float>(s.output(0)) != std::vector<float>{2 * v + 1, 2 * v + 2, 2 * v + 3}) ++wrong[size_t(k)];
      }
    });
  for (std::thread& t : threads) t.join();
  for (int k = 0; k < kSessions; ++k) EXPECT_EQ(wrong[size_t(k)], 0) << "session " << k;
#ifdef SG_HAVE_XNNPACK
  if (two_cpus()) {
    EXPECT_EQ(sessions[0]->schedule_stats().threads, 2);
  }
#endif
  EXPECT_FALSE(sessions[0]->schedule_stats().team);  // a shared pool, never a spinning team
}

TEST(SessionApi, OutputsBoundToCallerBuffers) {
  auto s = session_on(load_ok(affine_graph()), "affine");
  ASSERT_NE(s, nullptr);
  std::vector<float> y(6, -1.0f);
  ASSERT_TRUE(s->bind_output(0, y.data(), y.size() * sizeof(float)).ok());
  ASSERT_TRUE(s->set_input("x", make_tensor<float>(DType::kF32, {2, 3}, {0, 1, 2, 3, 4, 5})).ok());
  ASSERT_TRUE(s->run().ok());
  EXPECT_EQ(y, (std::vector<float>{1, 4, 7, 7, 10, 13}));
  EXPECT_EQ(s->output(0)->data(), y.data());
  EXPECT_EQ(s->output_view(0)->data(), y.data());
  // Too small for three rows: an error naming the output and the bytes.
  ASSERT_TRUE(s->set_input("x", rows_of_ones(3)).ok());
  const Status st = s->run();
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(st.message().find("output 'output_0' is f32[3, 3], 36 bytes, but its bound buffer holds 24"),
            std::string::npos)
      << st.message();
  EXPECT_EQ(s->output(0).status().code(), StatusCode::kInvalidArgument);
  // Unbound: the Session's memory again.
  ASSERT_TRUE(s->bind_output(0, nullptr, 0).ok());
  ASSERT_TRUE(s->run().ok());
  EXPECT_NE(s->output(0)->data(), y.data());
  EXPECT_EQ(s->bind_output(1, y.data(), 24).code(), StatusCode::kInvalidArgument);
}

TEST(SessionApi, OutputViewReadsInPlaceWithoutACopy) {
  auto s = session_on(load_ok(affine_graph()), "affine");
  ASSERT_NE(s, nullptr);
  ASSERT_TRUE(s->set_input("x", rows_of_ones(2)).ok());
  ASSERT_TRUE(s->run().ok());
  const uint64_t copies = s->tensor_copies();
  auto view = s->output_view(0);
  ASSERT_TRUE(view.ok());
  EXPECT_EQ(values_of<float>(*view), (std::vector<float>{3, 4, 5, 3, 4, 5}));
  EXPECT_EQ(s->tensor_copies(), copies);
  EXPECT_EQ(view->capacity_bytes(), 0u);  // borrowed, not owned
  // output() hands the result itself over (the run left it in a buffer of its own),
  // the same one on every request.
  EXPECT_EQ(s->output(0)->data(), view->data());
  EXPECT_EQ(s->output(0)->data(), s->output(0)->data());
  EXPECT_EQ(s->tensor_copies(), copies);
}

TEST(SessionApi, HandedOverOutputsOutliveTheSessionAndLaterRuns) {
  auto s = session_on(load_ok(affine_graph()), "affine");
  ASSERT_NE(s, nullptr);
  ASSERT_TRUE(s->set_input("x", rows_of_ones(2)).ok());
  ASSERT_TRUE(s->run().ok());
  Result<Tensor> kept = s->output(0);
  ASSERT_TRUE(kept.ok());
  const std::vector<float> before = values_of<float>(*kept);
  // The next run may not write into what the caller keeps.
  ASSERT_TRUE(s->set_input("x", rows_of_ones(3)).ok());
  ASSERT_TRUE(s->run().ok());
  EXPECT_NE(s->output(0)->data(), kept->data());
  EXPECT_EQ(values_of<float>(*kept), before);
  s.reset();  // the caller's allocator frees it, not the Session's cache
  EXPECT_EQ(values_of<float>(*kept), before);
}

TEST(SessionApi, UnderAMemoryLimitOutputsAreCopies) {
  SessionOptions options;
  options.memory_limit_bytes = size_t(64) << 20;
  auto s = Session::create(load_ok(affine_graph()), "affine", options);
  ASSERT_TRUE(s.ok());
  ASSERT_TRUE((*s)->set_input("x", rows_of_ones(2)).ok());
  ASSERT_TRUE((*s)->run().ok());
  const uint64_t copies = (*s)->tensor_copies();
  EXPECT_NE((*s)->output(0)->data(), (*s)->output_view(0)->data());
  EXPECT_EQ((*s)->tensor_copies(), copies + 1);
}

TEST(SessionApi, MisuseIsAnErrorNotAnEmptyValue) {
  auto s = session_on(load_ok(affine_graph()), "affine");
  ASSERT_NE(s, nullptr);
  // Before any run.
  EXPECT_EQ(s->output(0).status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s->output(0).status().message().find("no run"), std::string::npos);
  EXPECT_EQ(s->output_view(0).status().code(), StatusCode::kInvalidArgument);
  EXPECT_TRUE(s->output_shape(0).empty());
  // A negative dim, however the tensor was made.
  float data[6] = {};
  const int64_t negative[2] = {-2, 3};
  const Status neg = s->set_input("x", Tensor::wrap(DType::kF32, Span<const int64_t>(negative, 2), data));
  EXPECT_EQ(neg.code(), StatusCode::kInvalidInput);
  EXPECT_NE(neg.message().find("negative dim -2 at axis 0"), std::string::npos) << neg.message();
  EXPECT_EQ(s->set_input(size_t(1), rows_of_ones(1)).code(), StatusCode::kInvalidInput);
  ASSERT_TRUE(s->set_input(size_t(0), rows_of_ones(1)).ok());
  ASSERT_TRUE(s->run().ok());
  // Out of range, by index and by name.
  EXPECT_EQ(s->output(7).status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s->output(7).status().message().find("output index 7 is out of range (the entry has 1 outputs)"),
            std::string::npos);
  EXPECT_EQ(s->output("y").status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(*s->output_index("output_0"), 0u);
  EXPECT_EQ(*s->input_index("x"), 0u);
  EXPECT_EQ(s->input_index("q").status().code(), StatusCode::kInvalidInput);
}

// An unknown input name is one error, whichever call meets it.
TEST(SessionApi, UnknownInputNameIsTheSameStatusByIndexAndBySetInput) {
  auto s = session_on(load_ok(affine_graph()), "affine");
  ASSERT_NE(s, nullptr);
  const Result<size_t> by_index = s->input_index("q");
  const Status by_set = s->set_input("q", rows_of_ones(1));
  ASSERT_FALSE(by_index.ok());
  EXPECT_EQ(by_index.status().code(), StatusCode::kInvalidInput);
  EXPECT_EQ(by_set.code(), by_index.status().code());
  EXPECT_EQ(by_set.message(), by_index.status().message());
  EXPECT_EQ(by_set.message().rfind("unknown input 'q' (the entry takes: ", 0), 0u) << by_set.message();
}

TEST(SessionApi, LoadsAGraphFromAFileDescriptorRange) {
  const std::vector<uint8_t> graph = build_sgraph(affine_graph());
  for (const size_t prefix : {size_t(0), size_t(100), size_t(8192)}) {
    std::FILE* f = std::tmpfile();
    ASSERT_NE(f, nullptr);
    const std::vector<uint8_t> junk(prefix + 100, 0x5A);
    std::fwrite(junk.data(), 1, prefix, f);
    std::fwrite(graph.data(), 1, graph.size(), f);
    std::fwrite(junk.data(), 1, 100, f);
    std::fflush(f);
    auto program = Program::load_fd(fileno(f), prefix, graph.size());
    std::fclose(f);  // the Program does not need the descriptor
    ASSERT_TRUE(program.ok()) << "prefix " << prefix << ": " << program.status().message();
    auto s = session_on(*program, "affine");
    ASSERT_NE(s, nullptr);
    ASSERT_TRUE(s->set_input("x", rows_of_ones(1)).ok());
    ASSERT_TRUE(s->run().ok());
    EXPECT_EQ(values_of<float>(s->output(0)), (std::vector<float>{3, 4, 5})) << "prefix " << prefix;
  }
  EXPECT_EQ(Program::load_fd(-1, 0, 0).status().code(), StatusCode::kInvalidArgument);
}

// One function checks a thread count for Session::create, ThreadPool::create, the
// C API and graph-run, so all four say the same.
TEST(SessionApi, ThreadCountsAreCheckedInOnePlace) {
  EXPECT_TRUE(check_num_threads(1).ok());
  EXPECT_TRUE(check_num_threads(SessionOptions::kMaxThreads).ok());
  const Status zero = check_num_threads(0);
  EXPECT_EQ(zero.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(zero.message(), "num_threads must be between 1 and 256 (got 0)");
  SessionOptions o;
  o.num_threads = SessionOptions::kMaxThreads + 1;
  const auto s = Session::create(load_ok(affine_graph()), "affine", o);
  EXPECT_EQ(s.status().message(), check_num_threads(o.num_threads).message());
  const auto pool = ThreadPool::create(-3);
  EXPECT_EQ(pool.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(pool.status().message(), "ThreadPool::create: " + check_num_threads(-3).message());
}

// Result::value() on an error is a caller's bug that no exception reports (none
// crosses the API): it ends the process, naming the status, in every build type.
TEST(ResultDeathTest, ValueOfAnErrorEndsTheProcessNamingTheStatus) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  const Result<int> r = invalid_input("no input 'q'");
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidInput);
  EXPECT_EQ(r.value_or(7), 7);
  EXPECT_DEATH((void)r.value(), "sg::Result::value\\(\\) called on an error \\(invalid input\\): no input 'q'");
  EXPECT_DEATH((void)*r, "called on an error");
}

TEST(Result, ValueOrGivesTheValueWhenThereIsOne) {
  Result<std::string> r(std::string("kept"));
  EXPECT_EQ(r.value_or("fallback"), "kept");
  EXPECT_EQ(std::move(r).value_or("fallback"), "kept");
  const Result<std::string> e = not_found("gone");
  EXPECT_EQ(e.value_or("fallback"), "fallback");
}

}  // namespace
}  // namespace sg::testing
