// The emitter: header fields, checksums, alignment, the FlatBuffers verifier, and
// the decoded table of hand-built modules.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "compiler/ir_test_modules.h"
#include "emit/emit.h"
#include "sgraph_header.h"
#include "stagegraph_generated.h"

namespace sg::compiler {
namespace {

using testing::make_control_module;
using testing::make_mlp_module;

struct Emitted {
  std::vector<uint8_t> bytes;
  format::Header header;
  const fb::Graph* graph = nullptr;
};

// Emits `m` and checks everything every file must satisfy.
Emitted emit_and_check(const ir::Module& m) {
  Emitted e;
  std::string error;
  EXPECT_TRUE(emit_graph(m, &e.bytes, &error)) << error;
  EXPECT_TRUE(format::decode_header(e.bytes.data(), e.bytes.size(), &e.header));
  const format::Header& h = e.header;
  EXPECT_EQ(std::memcmp(e.bytes.data(), "SGRAPH\0\1", 8), 0);
  EXPECT_EQ(h.major, format::kMajorVersion);
  EXPECT_EQ(h.minor, format::kMinorVersionWithoutQuantization);  // 1.2 only with quantized weights
  EXPECT_EQ(h.flags, format::kFlagDataXxh3);
  EXPECT_EQ(h.table_offset, 64u);
  EXPECT_GT(h.table_size, 0u);
  EXPECT_EQ(h.data_offset % 64, 0u);
  EXPECT_GE(h.data_offset, h.table_offset + h.table_size);
  EXPECT_EQ(h.data_size % 64, 0u);
  EXPECT_GE(h.data_size, 64u);
  EXPECT_EQ(e.bytes.size(), h.data_offset + h.data_size);
  for (uint64_t i = h.table_offset + h.table_size; i < h.data_offset; ++i) EXPECT_EQ(e.bytes[i], 0);
  EXPECT_EQ(h.table_crc, format::crc32(e.bytes.data() + h.table_offset, h.table_size));
  EXPECT_EQ(h.data_crc, 0u);
  EXPECT_EQ(h.data_xxh3, format::xxh3_64(e.bytes.data() + h.data_offset, h.data_size));

  const uint8_t* table = e.bytes.data() + h.table_offset;
  flatbuffers::Verifier verifier(table, h.table_size);
  EXPECT_TRUE(fb::VerifyGraphBuffer(verifier));
  EXPECT_TRUE(fb::GraphBufferHasIdentifier(table));
  e.graph = fb::GetGraph(table);
  EXPECT_STREQ(e.graph->producer()->c_str(), "stagegraph-compiler 0.1");

  // Every constant: in its slot, 64-byte aligned, bytes as given, and >= 64 zero
  // bytes after the last one.
  const auto* constants = e.graph->constants();
  EXPECT_EQ(constants ? constants->size() : 0u, m.constants.size());
  uint64_t end = 0;
  for (size_t i = 0; constants && i < constants->size(); ++i) {
    const fb::Constant* c = constants->Get(uint32_t(i));
    EXPECT_EQ(c->offset() % 64, 0u) << "constant " << i;
    EXPECT_EQ(c->size(), m.constants[i].bytes.size());
    EXPECT_GE(c->offset(), end) << "constants overlap";
    end = c->offset() + c->size();
    EXPECT_LE(end + 64, h.data_size);
    if (c->size() > 0) {
      EXPECT_EQ(std::memcmp(e.bytes.data() + h.data_offset + c->offset(), m.constants[i].bytes.data(), c->size()), 0);
    }
  }
  for (uint64_t i = end; i < h.data_size; ++i) EXPECT_EQ(e.bytes[h.data_offset + i], 0) << "data byte " << i;
  return e;
}

std::string str(const flatbuffers::String* s) { return s ? s->str() : "<null>"; }

TEST(Emit, MlpHeaderTableAndData) {
  auto tm = make_mlp_module();
  Emitted e = emit_and_check(tm->module);
  const fb::Graph* g = e.graph;
  ASSERT_EQ(g->functions()->size(), 1u);
  ASSERT_EQ(g->symbols()->size(), 1u);
  EXPECT_EQ(str(g->symbols()->Get(0)), "N");
  ASSERT_EQ(g->source_files()->size(), 1u);
  EXPECT_EQ(str(g->source_files()->Get(0)), "models/mlp.py");

  const fb::Function* f = g->functions()->Get(0);
  EXPECT_EQ(str(f->name()), "mlp");
  ASSERT_EQ(f->values()->size(), 9u);
  const fb::Value* x = f->values()->Get(0);
  EXPECT_EQ(str(x->name()), "x");
  EXPECT_EQ(x->dtype(), fb::DType::F32);
  ASSERT_EQ(x->shape()->size(), 2u);
  EXPECT_EQ(x->shape()->Get(0)->value(), -1);
  EXPECT_EQ(x->shape()->Get(0)->symbol(), 0);
  EXPECT_EQ(x->shape()->Get(1)->value(), 4);
  EXPECT_EQ(x->shape()->Get(1)->symbol(), -1);
  EXPECT_EQ(x->constant(), -1);
  EXPECT_EQ(f->values()->Get(2)->constant(), 0);
  EXPECT_EQ(f->values()->Get(3)->name(), nullptr);  // unnamed values carry no name
  EXPECT_EQ(f->values()->Get(3)->shape()->size(), 0u);
  EXPECT_EQ(f->values()->Get(3)->dtype(), fb::DType::I64);
  ASSERT_EQ(f->params()->size(), 2u);
  EXPECT_EQ(f->params()->Get(1), 1u);
  ASSERT_EQ(f->results()->size(), 1u);
  EXPECT_EQ(f->results()->Get(0), 8u);

  ASSERT_EQ(f->nodes()->size(), 4u);
  const fb::Node* mm = f->nodes()->Get(0);
  EXPECT_EQ(mm->kind(), fb::NodeKind::Op);
  EXPECT_EQ(str(mm->op()), "matmul");
  EXPECT_EQ(mm->op_version(), ops::op_def(ops::OpId::MatMul).version);
  EXPECT_EQ(mm->inputs()->Get(0), 0u);
  EXPECT_EQ(mm->inputs()->Get(1), 1u);
  EXPECT_EQ(mm->outputs()->Get(0), 5u);
  ASSERT_NE(mm->loc(), nullptr);
  EXPECT_EQ(mm->loc()->file(), 0u);
  EXPECT_EQ(mm->loc()->line(), 4u);
  EXPECT_EQ(mm->loc()->column(), 9u);
  EXPECT_EQ(mm->functions(), nullptr);

  const fb::Node* sum = f->nodes()->Get(3);
  EXPECT_EQ(str(sum->op()), "sum");
  ASSERT_EQ(sum->attrs()->size(), 2u);
  const fb::Attr* axes = sum->attrs()->Get(0);
  EXPECT_EQ(str(axes->name()), "axes");
  EXPECT_EQ(axes->kind(), fb::AttrKind::Ints);
  ASSERT_EQ(axes->ints()->size(), 1u);
  EXPECT_EQ(axes->ints()->Get(0), 1);
  const fb::Attr* keepdims = sum->attrs()->Get(1);
  EXPECT_EQ(str(keepdims->name()), "keepdims");
  EXPECT_EQ(keepdims->kind(), fb::AttrKind::Int);
  EXPECT_EQ(keepdims->i(), 1);

  ASSERT_EQ(g->entries()->size(), 1u);
  const fb::Entry* entry = g->entries()->Get(0);
  EXPECT_EQ(str(entry->name()), "mlp");
  EXPECT_EQ(entry->function(), 0u);
  ASSERT_EQ(entry->inputs()->size(), 2u);
  EXPECT_EQ(str(entry->inputs()->Get(0)->name()), "x");
  EXPECT_EQ(entry->inputs()->Get(0)->shape()->Get(0)->symbol(), 0);
  EXPECT_EQ(str(entry->inputs()->Get(1)->name()), "w");
  EXPECT_EQ(entry->inputs()->Get(1)->shape()->Get(0)->value(), 4);
  ASSERT_EQ(entry->outputs()->size(), 1u);
  const fb::TensorSig* out = entry->outputs()->Get(0);
  EXPECT_EQ(str(out->name()), "output_0");
  EXPECT_EQ(out->dtype(), fb::DType::F32);
  ASSERT_EQ(out->shape()->size(), 2u);
  EXPECT_EQ(out->shape()->Get(0)->symbol(), 0);
  EXPECT_EQ(out->shape()->Get(1)->value(), 1);

  // Three constants of 12, 8 and 200 bytes: each in its own 64-byte slot.
  EXPECT_EQ(g->constants()->Get(0)->offset(), 0u);
  EXPECT_EQ(g->constants()->Get(1)->offset(), 64u);
  EXPECT_EQ(g->constants()->Get(2)->offset(), 128u);
  EXPECT_EQ(e.header.data_size, 128u + 256u + 64u);
}

TEST(Emit, ControlFlowNodesAndDerivedSymbols) {
  auto tm = make_control_module();
  Emitted e = emit_and_check(tm->module);
  const fb::Graph* g = e.graph;
  ASSERT_EQ(g->functions()->size(), 6u);
  // Symbols are the printed forms of the dims that occur, in order of first use.
  ASSERT_EQ(g->symbols()->size(), 2u);
  EXPECT_EQ(str(g->symbols()->Get(0)), "K");
  EXPECT_EQ(str(g->symbols()->Get(1)), "K*2");

  const fb::Function* main = g->functions()->Get(0);
  ASSERT_EQ(main->nodes()->size(), 3u);
  const fb::Node* if_node = main->nodes()->Get(0);
  EXPECT_EQ(if_node->kind(), fb::NodeKind::If);
  EXPECT_EQ(str(if_node->op()), "if");
  ASSERT_EQ(if_node->functions()->size(), 2u);
  EXPECT_EQ(if_node->functions()->Get(0), 1u);
  EXPECT_EQ(if_node->functions()->Get(1), 2u);
  EXPECT_EQ(if_node->inputs()->size(), 2u);
  EXPECT_EQ(if_node->attrs(), nullptr);

  const fb::Node* call = main->nodes()->Get(1);
  EXPECT_EQ(call->kind(), fb::NodeKind::Call);
  EXPECT_EQ(str(call->op()), "call");
  EXPECT_EQ(call->functions()->Get(0), 3u);
  const fb::Value* doubled = main->values()->Get(call->outputs()->Get(0));
  EXPECT_EQ(doubled->shape()->Get(0)->symbol(), 1);
  EXPECT_EQ(doubled->shape()->Get(0)->value(), -1);

  const fb::Node* loop = main->nodes()->Get(2);
  EXPECT_EQ(loop->kind(), fb::NodeKind::While);
  EXPECT_EQ(str(loop->op()), "while");
  EXPECT_EQ(loop->functions()->Get(0), 4u);
  EXPECT_EQ(loop->functions()->Get(1), 5u);

  const fb::Node* concat = g->functions()->Get(3)->nodes()->Get(0);
  EXPECT_EQ(str(concat->op()), "concatenate");
  EXPECT_EQ(str(concat->attrs()->Get(0)->name()), "axis");
  EXPECT_EQ(concat->attrs()->Get(0)->i(), 0);

  // Constants: bool[3], the empty f32[0], and i64 scalars in three functions.
  ASSERT_EQ(g->constants()->size(), 5u);
  EXPECT_EQ(g->constants()->Get(1)->size(), 0u);
  EXPECT_EQ(g->functions()->Get(4)->values()->Get(1)->constant(), 3);

  const fb::Entry* entry = g->entries()->Get(0);
  ASSERT_EQ(entry->outputs()->size(), 3u);
  EXPECT_EQ(str(entry->outputs()->Get(1)->name()), "doubled");
  EXPECT_EQ(entry->outputs()->Get(2)->dtype(), fb::DType::Bool);
  EXPECT_EQ(entry->outputs()->Get(2)->shape()->Get(0)->value(), 3);
}

TEST(Emit, StringAndFloatAttributes) {
  ir::Module m;
  m.functions.emplace_back();
  ir::Function& f = m.functions.back();
  f.name = "conv";
  const int32_t x = f.add_value(testing::t(DType::kF32, {1, 8, 8, 2}), "x");
  const int32_t w = f.add_value(testing::t(DType::kF32, {3, 3, 2, 4}), "w");
  const int32_t y = f.add_value(testing::t(DType::kF32, {1, 4, 4, 4}));
  f.params = {x, w};
  ops::Attrs a;
  a.values = {ops::AttrValue::Ints({2, 2}), ops::AttrValue::Ints({1, 1}), ops::AttrValue::String("SAME"),
              ops::AttrValue::Int(1)};
  f.nodes.push_back(testing::op_node(ops::OpId::Conv2D, {x, w}, {y}, {}, a));
  f.results = {y};
  m.entries.push_back(ir::Entry{"conv", 0, {"x", "w"}, {"output_0"}});
  Emitted e = emit_and_check(m);
  const fb::Node* n = e.graph->functions()->Get(0)->nodes()->Get(0);
  ASSERT_EQ(n->attrs()->size(), 4u);
  EXPECT_EQ(str(n->attrs()->Get(2)->name()), "padding");
  EXPECT_EQ(n->attrs()->Get(2)->kind(), fb::AttrKind::String);
  EXPECT_EQ(str(n->attrs()->Get(2)->s()), "SAME");
  EXPECT_EQ(n->attrs()->Get(0)->ints()->Get(1), 2);
  // No sources: locations are zero, and there are no source files.
  EXPECT_EQ(n->loc()->line(), 0u);
  EXPECT_EQ(e.graph->source_files()->size(), 0u);
  // No constants: the data segment is the 64 bytes of padding alone.
  EXPECT_EQ(e.header.data_size, 64u);
}

TEST(Emit, IsDeterministic) {
  auto a = make_control_module();
  auto b = make_control_module();
  std::vector<uint8_t> x, y;
  std::string error;
  ASSERT_TRUE(emit_graph(a->module, &x, &error)) << error;
  ASSERT_TRUE(emit_graph(b->module, &y, &error)) << error;
  EXPECT_EQ(x, y);
}

TEST(Emit, RefusesInvalidIr) {
  auto tm = make_mlp_module();
  tm->module.functions[0].nodes[0].inputs[1] = 42;
  std::vector<uint8_t> out;
  std::string error;
  EXPECT_FALSE(emit_graph(tm->module, &out, &error));
  EXPECT_NE(error.find("invalid IR"), std::string::npos) << error;
}

}  // namespace
}  // namespace sg::compiler
