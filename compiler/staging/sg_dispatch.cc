// sg.NAME(...) dispatch: one table from library names to handlers. The handlers of
// the op table's ops are in the files of their families, sg_<family>.cc
// (kernels/ops/op_families.h); the ones here are the library's own (weight,
// relax, variables, the grad family).
#include <string>

#include "staging/arg_binding.h"
#include "staging/indexing.h"
#include "staging/sg_ops_everyday.h"
#include "staging/sg_ops_internal.h"

namespace sg::compiler::staging {
namespace {

using Handler = Value (*)(Stager&, const Args&, const std::string&);

Value weight(Stager& s, const Args& a, const std::string& name) {
  BoundArgs b(s, a, name, {"name", "quantize"}, 1);
  if (!b[0].is<std::string>()) s.fail(a.span, "sg.weight needs the tensor's name as a string");
  if (b.has(1) && !b[1].is<std::string>())
    s.fail(b.span(1), "sg.weight's quantize= takes 'int8', 'int4', 'bf16' or 'f16'");
  return s.load_weight(b[0].as<std::string>(), a.span, b.has(1) ? b[1].as<std::string>() : std::string());
}

Value relax(Stager& s, const Args& a, const std::string&) {
  Args copy = a;
  return s.sg_relax(copy);
}

Value not_yet(Stager& s, const Args& a, const std::string& name) {
  if (name == "range")
    s.fail(a.span, "sg.range is only allowed as the iterable of a for loop (for i in sg.range(n):)");
  if (name == "function") s.fail(a.span, "sg.function is a decorator: write @sg.function above a def");
  if (name == "load_weights") return Value();
  s.fail(a.span, "sg." + name + " needs an op the op library does not have yet");
}

Value variables(Stager& s, const Args& a, const std::string&) { return s.make_variables(a); }

Value grad_family(Stager& s, const Args& a, const std::string& name) {
  Args copy = a;
  return s.call_sg_grad(name, copy);
}

struct Entry {
  const char* name;
  Handler handler;
};

const Entry kTable[] = {
    {"abs", sg_unary}, {"exp", sg_unary}, {"log", sg_unary}, {"sqrt", sg_unary}, {"rsqrt", sg_unary},
    {"sin", sg_unary}, {"cos", sg_unary}, {"tanh", sg_unary}, {"sigmoid", sg_unary}, {"relu", sg_unary},
    {"gelu", sg_unary}, {"floor", sg_unary}, {"ceil", sg_unary}, {"round", sg_unary}, {"sign", sg_unary},
    {"square", sg_unary}, {"logical_not", sg_unary}, {"isnan", sg_unary}, {"negative", sg_unary},
    {"add", sg_binary}, {"subtract", sg_binary}, {"multiply", sg_binary}, {"divide", sg_binary},
    {"true_divide", sg_binary}, {"floor_divide", sg_binary}, {"mod", sg_binary}, {"remainder", sg_binary},
    {"power", sg_binary}, {"maximum", sg_binary}, {"minimum", sg_binary}, {"less", sg_binary},
    {"less_equal", sg_binary}, {"greater", sg_binary}, {"greater_equal", sg_binary}, {"equal", sg_binary},
    {"not_equal", sg_binary}, {"logical_and", sg_binary}, {"logical_or", sg_binary},
    {"sum", sg_reduction}, {"mean", sg_reduction}, {"max", sg_reduction}, {"min", sg_reduction}, {"amax", sg_reduction},
    {"amin", sg_reduction}, {"prod", sg_reduction}, {"any", sg_reduction}, {"all", sg_reduction}, {"argmax", sg_reduction},
    {"argmin", sg_reduction},
    {"matmul", sg_matmul}, {"dot", sg_matmul}, {"where", sg_where}, {"clip", sg_clip},
    {"reshape", sg_reshape}, {"transpose", sg_transpose}, {"expand_dims", sg_expand_squeeze},
    {"squeeze", sg_expand_squeeze}, {"concatenate", sg_concat_stack}, {"stack", sg_concat_stack},
    {"broadcast_to", sg_broadcast_to}, {"take", sg_take}, {"nonzero", sg_nonzero}, {"flatnonzero", sg_nonzero},
    {"compress", sg_compress},
    {"zeros", sg_creation}, {"ones", sg_creation}, {"full", sg_creation}, {"zeros_like", sg_creation},
    {"ones_like", sg_creation}, {"full_like", sg_creation}, {"arange", sg_arange}, {"eye", sg_eye},
    {"astype", sg_astype}, {"softmax", sg_softmax}, {"log_softmax", sg_softmax}, {"layer_norm", sg_layer_norm},
    {"conv2d", sg_conv2d}, {"max_pool2d", sg_pool2d}, {"avg_pool2d", sg_pool2d}, {"one_hot", sg_one_hot},
    {"range", not_yet}, {"relax", relax}, {"weight", weight}, {"function", not_yet},
    {"load_weights", not_yet}, {"cumsum", sg_ordering}, {"sort", sg_ordering}, {"argsort", sg_ordering},
    {"topk", sg_topk}, {"split", sg_split}, {"tile", sg_tile}, {"pad", sg_pad},
    {"random", sg_random}, {"random.key", sg_random}, {"random.split", sg_random},
    {"random.bits", sg_random}, {"random.uniform", sg_random}, {"random.normal", sg_random},
    {"random.categorical", sg_random}, {"random.bernoulli", sg_random}, {"custom_op", sg_custom_op},
    {"grad", grad_family}, {"value_and_grad", grad_family}, {"vjp", grad_family}, {"checkpoint", grad_family},
    {"stop_gradient", grad_family}, {"logsumexp", grad_family}, {"nn", grad_family},
    {"nn.cross_entropy", grad_family}, {"nn.binary_cross_entropy_with_logits", grad_family}, {"nn.mse", grad_family},
    {"nn.l1", grad_family}, {"variables", variables}, {"tree_map", sg_tree},
    {"searchsorted", sg_searchsorted}, {"cumprod", sg_cumprod}, {"logaddexp", sg_logaddexp}, {"diff", sg_diff},
    {"flip", sg_flip}, {"roll", sg_roll}, {"meshgrid", sg_meshgrid}, {"outer", sg_outer}, {"einsum", sg_einsum},
    {"isclose", sg_isclose}, {"allclose", sg_isclose},
    {"linalg", sg_linalg}, {"linalg.inv", sg_linalg}, {"linalg.solve", sg_linalg}, {"linalg.det", sg_linalg},
    {"linalg.slogdet", sg_linalg}, {"linalg.cholesky", sg_linalg}, {"linalg.triangular_solve", sg_linalg},
    {"linalg.qr", sg_linalg}, {"linalg.eigh", sg_linalg}, {"linalg.norm", sg_linalg},
};

const Entry* find_entry(const std::string& name) {
  for (const Entry& e : kTable)
    if (name == e.name) return &e;
  return nullptr;
}

}  // namespace

bool Stager::is_sg_member(const std::string& name) { return find_entry(name) != nullptr; }

Value Stager::call_sg(const std::string& name, Args& args) {
  const Entry* e = find_entry(name);
  if (!e) fail(args.span, "module 'stagegraph' has no function '" + name + "'");
  return e->handler(*this, args, name);
}

}  // namespace sg::compiler::staging
