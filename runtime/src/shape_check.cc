#include "shape_check.h"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ops/infer.h"

namespace sg::runtime {
namespace {

using ops::SymDim;
using SymType = ops::TensorType<SymDim>;

// The compile-time side of the rules, over the file's symbols: a fresh dim (a
// staged slice bound, an arange length) gets an id past the file's symbols, so it
// equals nothing the file declares.
class LoadInferContext final : public ops::InferContext<SymDim> {
 public:
  explicit LoadInferContext(const fb::Graph& g)
      : symbols_(g.symbols()), next_fresh_(int32_t(symbols_ == nullptr ? 0 : symbols_->size())) {}

  SymDim fresh_dim(std::string_view) override { return SymDim::symbol(next_fresh_++); }
  bool scalars_may_be_unknown() const override { return true; }
  std::string format(const std::vector<SymDim>& shape) const override {
    return ops::shape_to_string(shape, [this](int32_t id) { return name(id); });
  }

 private:
  // A derived symbol ("N*2") in parentheses, so that N*2 times 3 reads "(N*2)*3".
  std::string name(int32_t id) const {
    if (symbols_ == nullptr || id < 0 || uint32_t(id) >= symbols_->size()) return "?";
    const std::string s = symbols_->Get(uint32_t(id))->str();
    return s.find_first_of("+-*/() ") == std::string::npos ? s : "(" + s + ")";
  }

  const flatbuffers::Vector<flatbuffers::Offset<flatbuffers::String>>* symbols_;
  int32_t next_fresh_;
};

SymType declared_type(const fb::Value& v) {
  SymType t;
  t.dtype = DType(v.dtype());
  if (v.shape() == nullptr) return t;
  for (const fb::Dim* d : *v.shape())
    t.shape.push_back(d->symbol() >= 0 ? SymDim::symbol(d->symbol()) : SymDim(d->value()));
  return t;
}

std::string type_text(const SymType& t, const LoadInferContext& ctx) {
  return std::string(dtype_name(t.dtype)) + ctx.format(t.shape);
}

std::string types_text(const std::vector<SymType>& types, const LoadInferContext& ctx) {
  std::string s;
  for (size_t k = 0; k < types.size(); ++k) s += (k > 0 ? ", " : "") + type_text(types[k], ctx);
  return s.empty() ? "none" : s;
}

// True when a binding of the symbols exists under which both types are the same:
// dtype and rank equal, and no static dim against a different static dim.
bool compatible(const SymType& declared, const SymType& inferred) {
  if (declared.dtype != inferred.dtype || declared.rank() != inferred.rank()) return false;
  for (size_t d = 0; d < declared.rank(); ++d) {
    const std::optional<int64_t> a = declared.shape[d].as_static(), b = inferred.shape[d].as_static();
    if (a && b && *a != *b) return false;
  }
  return true;
}

}  // namespace

Status check_declared_outputs(const fb::Graph& g, const fb::Function& fn, const fb::Node& node, ops::OpId op,
                              const ops::Attrs& attrs) {
  std::vector<SymType> in;
  if (node.inputs() != nullptr)
    for (uint32_t v : *node.inputs()) in.push_back(declared_type(*fn.values()->Get(v)));
  const std::vector<std::optional<SymDim>> scalars(in.size());
  std::vector<SymType> out;
  LoadInferContext ctx(g);
  const Status inferred = ops::infer<SymDim>(op, attrs, in, scalars, out, ctx);
  if (!inferred.ok()) {
    // A rule that reports its own limits (an internal error) has not decided.
    if (inferred.code() == StatusCode::kInternal) return Status::Ok();
    return invalid_graph("its inputs' declared types (" + types_text(in, ctx) +
                         ") fail the op's shape rule: " + inferred.message());
  }
  const size_t n_out = node.outputs() == nullptr ? 0 : node.outputs()->size();
  if (out.size() != n_out) return Status::Ok();  // the arity check has already refused such a node
  for (size_t k = 0; k < n_out; ++k) {
    const SymType declared = declared_type(*fn.values()->Get(node.outputs()->Get(uint32_t(k))));
    if (compatible(declared, out[k])) continue;
    return invalid_graph("output " + std::to_string(k) + " is declared " + type_text(declared, ctx) +
                         " but the op's shape rule gives " + type_text(out[k], ctx) + " for inputs " +
                         types_text(in, ctx));
  }
  return Status::Ok();
}

}  // namespace sg::runtime
