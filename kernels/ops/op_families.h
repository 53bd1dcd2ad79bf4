// Every op's family: the one name its code goes by in every layer (DESIGN.md,
// "Op families"). An op of family F has its shape rule in kernels/ops/infer_F.cc,
// its reference kernel in kernels/reference/F.cc, its CUDA kernel (if any) in
// kernels/cuda/F.cu, its staging (sg.NAME) in compiler/staging/sg_F.cc and its
// eager function in compiler/python/stagegraph/_F.py (F.py for the public
// submodules sg.linalg and sg.random). A layer may have no file of a family.
//
// This table is the one list: the static_assert below checks that it names every
// op of SG_OPS exactly once, and tools/lint/op_families.py (ctest
// lint.op_families) reads it to check that each layer puts each op where its
// family says.
#pragma once

#include <string_view>

#include "ops/op_table.h"

namespace sg::ops {

struct OpFamily {
  std::string_view name;
  std::string_view ops;  // op names, space-separated
};

// op families (read by tools/lint/op_families.py: one {"family", "ops..."} per family)
inline constexpr OpFamily kOpFamilies[] = {
    {"elementwise",
     "add sub mul div floordiv mod pow maximum minimum less less_equal greater greater_equal equal "
     "not_equal logical_and logical_or neg abs exp log sqrt rsqrt sin cos tanh sigmoid relu gelu floor "
     "ceil round sign square logical_not isnan where clip cast"},
    {"reduction", "sum mean max min prod any all argmax argmin"},
    {"ordering", "cumsum cumprod sort argsort topk searchsorted"},
    {"linalg", "matmul inv solve slogdet cholesky triangular_solve qr eigh"},
    {"shape", "reshape broadcast_to transpose expand_dims squeeze concatenate tile pad shape_dim"},
    {"indexing", "slice take slice_update scatter_add scatter flat_nonzero"},
    {"creation", "full eye arange one_hot"},
    {"nn", "softmax log_softmax layer_norm conv2d max_pool2d avg_pool2d"},
    {"fused", "fully_connected conv2d_bias elementwise_chain"},
    {"random", "random"},
    {"effects", "print assert"},
    {"custom", "custom"},
};
// end of op families

namespace family_check {

constexpr int count_word(std::string_view words, std::string_view word) {
  int n = 0;
  while (!words.empty()) {
    const size_t end = words.find(' ');
    if (words.substr(0, end) == word) ++n;
    if (end == std::string_view::npos) break;
    words.remove_prefix(end + 1);
  }
  return n;
}

constexpr int count_words(std::string_view words) {
  int n = 0;
  for (size_t i = 0; i < words.size(); ++i)
    if (words[i] != ' ' && (i == 0 || words[i - 1] == ' ')) ++n;
  return n;
}

constexpr bool every_op_in_one_family() {
  constexpr std::string_view kNames[] = {
#define SG_OP_FAMILY_NAME(e, name, ver, mn, mx, nout, attrs, flags) name,
      SG_OPS(SG_OP_FAMILY_NAME)
#undef SG_OP_FAMILY_NAME
  };
  int listed = 0;
  for (const OpFamily& f : kOpFamilies) listed += count_words(f.ops);
  if (listed != kNumOps) return false;
  for (std::string_view name : kNames) {
    int found = 0;
    for (const OpFamily& f : kOpFamilies) found += count_word(f.ops, name);
    if (found != 1) return false;
  }
  return true;
}

}  // namespace family_check

static_assert(family_check::every_op_in_one_family(),
              "kOpFamilies must name every op of SG_OPS exactly once: add a new op to its family");

// The family of `op` (its name in kOpFamilies).
constexpr std::string_view op_family(OpId op) {
  constexpr std::string_view kNames[] = {
#define SG_OP_FAMILY_NAME(e, name, ver, mn, mx, nout, attrs, flags) name,
      SG_OPS(SG_OP_FAMILY_NAME)
#undef SG_OP_FAMILY_NAME
  };
  for (const OpFamily& f : kOpFamilies)
    if (family_check::count_word(f.ops, kNames[size_t(op)]) == 1) return f.name;
  return {};
}

}  // namespace sg::ops
