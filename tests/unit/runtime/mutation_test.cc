// Random corruption of valid files. The table checksum is recomputed after each
// mutation, so the FlatBuffers verifier and the semantic checks are what must
// catch it: every mutant either loads (and then runs or fails cleanly) or is
// refused with kInvalidGraph — never a crash or an out-of-bounds read (this test
// is meant to run under AddressSanitizer too).
#include <gtest/gtest.h>

#include <cstdlib>
#include <random>

#include "test_graphs.h"
#include "test_util.h"

namespace sg::testing {
namespace {

// Appends `b`'s functions, constants, symbols and entries to `a`, renumbering the
// references (both keep the default single source file).
GraphSpec merge(GraphSpec a, const GraphSpec& b) {
  const uint32_t fn0 = uint32_t(a.functions.size());
  const int32_t k0 = int32_t(a.constants.size()), s0 = int32_t(a.symbols.size());
  for (FunctionSpec f : b.functions) {
    for (ValueSpec& v : f.values) {
      if (v.constant >= 0) v.constant += k0;
      for (DimSpec& d : v.shape)
        if (d.symbol >= 0) d.symbol += s0;
    }
    for (NodeSpec& n : f.nodes)
      for (uint32_t& callee : n.functions) callee += fn0;
    a.functions.push_back(std::move(f));
  }
  for (EntrySpec e : b.entries) {
    e.function += fn0;
    for (auto* sigs : {&e.inputs, &e.outputs})
      for (SigSpec& sig : *sigs)
        for (DimSpec& d : sig.shape)
          if (d.symbol >= 0) d.symbol += s0;
    a.entries.push_back(std::move(e));
  }
  a.constants.insert(a.constants.end(), b.constants.begin(), b.constants.end());
  a.symbols.insert(a.symbols.end(), b.symbols.begin(), b.symbols.end());
  return a;
}

// Inputs that follow the entry's signature: symbolic dims 2, integers 3 (small
// recursion depths), floats 0.5. Nullopt when the (mutated) signature asks for
// something too large to bother with.
std::optional<std::vector<Tensor>> inputs_for(const EntryInfo& entry) {
  std::vector<Tensor> out;
  for (const TensorSpec& spec : entry.inputs) {
    std::vector<int64_t> shape;
    int64_t numel = 1;
    for (int64_t d : spec.shape) {
      shape.push_back(d < 0 ? 2 : d);
      if (shape.back() > 64) return std::nullopt;
      numel *= shape.back();
      if (numel > 4096) return std::nullopt;
    }
    Tensor t = Tensor::zeros(spec.dtype, shape).value();
    for (int64_t i = 0; i < numel; ++i) {
      switch (spec.dtype) {
        case DType::kF32: t.data_as<float>()[i] = 0.5f; break;
        case DType::kI32: t.data_as<int32_t>()[i] = 3; break;
        case DType::kI64: t.data_as<int64_t>()[i] = 3; break;
        case DType::kBool: t.data_as<uint8_t>()[i] = 1; break;
        case DType::kF16: t.data_as<uint16_t>()[i] = float_to_half(0.5f); break;
      }
    }
    out.push_back(std::move(t));
  }
  return out;
}

struct Outcome {
  int refused = 0, loaded = 0, ran = 0, run_failed = 0;
};

// Loads a mutant and, when `run`, runs each entry on inputs_for()'s inputs.
void try_mutant(const std::vector<uint8_t>& bytes, Outcome& outcome, bool run = true) {
  auto program = load_owned(bytes);
  if (!program.ok()) {
    ASSERT_EQ(program.status().code(), StatusCode::kInvalidGraph) << program.status().message();
    ASSERT_FALSE(program.status().message().empty());
    ++outcome.refused;
    return;
  }
  ++outcome.loaded;
  SessionOptions options;
  options.max_call_depth = 32;
  for (const EntryInfo& entry : (*program)->entries()) {
    auto session = Session::create(*program, entry.name, options);
    ASSERT_TRUE(session.ok()) << session.status().message();
    if (!run) continue;
    std::optional<std::vector<Tensor>> inputs = inputs_for(entry);
    if (!inputs) continue;
    bool bound = true;
    for (size_t k = 0; k < inputs->size(); ++k)
      bound = bound && (*session)->set_input(entry.inputs[k].name, (*inputs)[k]).ok();
    if (!bound) continue;  // e.g. a mutated signature repeating a symbol with two sizes
    const Status s = (*session)->run();
    if (s.ok()) {
      ++outcome.ran;
      for (size_t k = 0; k < (*session)->num_outputs(); ++k) ASSERT_TRUE((*session)->output(k).ok());
    } else {
      ++outcome.run_failed;
      ASSERT_NE(s.code(), StatusCode::kInternal) << s.message();
    }
  }
}

TEST(Mutation, CorruptTablesFailCleanly) {
  const GraphSpec g = merge(merge(merge(merge(recursive_graph("add", 0, 0), affine_graph()), pair_graph()), row_graph()),
                            pick_graph());
  const std::vector<uint8_t> original = build_sgraph(g);
  format::Header h;
  ASSERT_TRUE(format::decode_header(original.data(), original.size(), &h));
  {
    Outcome baseline;
    try_mutant(original, baseline);
    ASSERT_EQ(baseline.ran, 4);  // pick's declared [4] is wrong for N = 2: it fails cleanly
  }

  // SG_MUTANTS and SG_MUTATION_SEED widen a soak run; the defaults keep CI quick.
  const char* count_env = std::getenv("SG_MUTANTS");
  const char* seed_env = std::getenv("SG_MUTATION_SEED");
  const int kMutants = count_env != nullptr ? std::atoi(count_env) : 6000;
  std::mt19937 rng(seed_env != nullptr ? uint32_t(std::strtoul(seed_env, nullptr, 10)) : 20240607u);
  Outcome outcome;
  for (int i = 0; i < kMutants; ++i) {
    std::vector<uint8_t> bytes = original;
    const int edits = 1 + int(rng() % 4);
    for (int e = 0; e < edits; ++e) {
      // Mostly the table; sometimes the header or the data segment.
      const size_t pos = rng() % 16 != 0 ? size_t(h.table_offset + rng() % h.table_size) : size_t(rng() % bytes.size());
      switch (rng() % 4) {
        case 0: bytes[pos] ^= uint8_t(1u << (rng() % 8)); break;
        case 1: bytes[pos] = uint8_t(rng()); break;
        case 2: bytes[pos] = 0; break;
        default: bytes[pos] = 0xFF; break;
      }
    }
    fix_table_crc(bytes);
    try_mutant(bytes, outcome);
    if (::testing::Test::HasFatalFailure()) {
      ADD_FAILURE() << "mutant " << i;
      return;
    }
  }
  // Both outcomes must be common, or the mutations are not testing anything.
  EXPECT_GT(outcome.refused, kMutants / 10);
  EXPECT_GT(outcome.loaded, kMutants / 10);
  EXPECT_GT(outcome.ran, 0);
  std::printf("mutants: %d refused, %d loaded (%d runs ok, %d runs failed cleanly)\n", outcome.refused,
              outcome.loaded, outcome.ran, outcome.run_failed);
}

// A While may legitimately loop forever once its constants are swapped, so these
// mutants are loaded and opened but not run.
TEST(Mutation, WhileGraphMutantsLoadCleanly) {
  const std::vector<uint8_t> original = build_sgraph(while_sum_graph());
  format::Header h;
  ASSERT_TRUE(format::decode_header(original.data(), original.size(), &h));
  std::mt19937 rng(11);
  Outcome outcome;
  for (int i = 0; i < 3000; ++i) {
    std::vector<uint8_t> bytes = original;
    bytes[size_t(h.table_offset + rng() % h.table_size)] = uint8_t(rng());
    fix_table_crc(bytes);
    try_mutant(bytes, outcome, /*run=*/false);
    if (::testing::Test::HasFatalFailure()) return;
  }
  EXPECT_GT(outcome.refused, 0);
  EXPECT_GT(outcome.loaded, 0);
}

TEST(Mutation, HeaderFieldsFailCleanly) {
  const std::vector<uint8_t> original = build_sgraph(affine_graph());
  std::mt19937 rng(7);
  Outcome outcome;
  for (int i = 0; i < 2000; ++i) {
    std::vector<uint8_t> bytes = original;
    bytes[8 + rng() % (format::kHeaderSize - 8)] = uint8_t(rng());
    fix_table_crc(bytes);
    try_mutant(bytes, outcome);
    if (::testing::Test::HasFatalFailure()) return;
  }
  EXPECT_GT(outcome.refused, 0);
}

}  // namespace
}  // namespace sg::testing
