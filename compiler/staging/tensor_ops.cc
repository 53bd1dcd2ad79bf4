// Tensor operations: one entry point (apply) that folds an op now when every
// operand is static — with the same reference kernels the runtime runs, so both
// agree bit for bit — and otherwise appends a node after inferring its type with
// the op table's rule over symbolic dims.
#include <cstring>
#include <functional>
#include <span>
#include <string_view>

#include "interface/kernel.h"
#include "staging/staged_loop.h"
#include "staging/stager.h"

namespace sg::compiler::staging {
namespace {

class StagingInferContext final : public ops::InferContext<ir::Dim> {
 public:
  StagingInferContext(Stager& s, SourceSpan span, const std::vector<Value>& inputs)
      : s_(s), span_(span), inputs_(inputs) {}
  ir::Dim fresh_dim(std::string_view) override {
    return ir::Dim::symbol(s_.module().symbols.fresh("D"));
  }
  void warn(std::string message) override {
    s_.warn(span_, std::move(message), s_.provenance_notes(inputs_));
  }
  std::string format(const std::vector<ir::Dim>& shape) const override {
    return s_.module().format_shape(shape);
  }

 private:
  Stager& s_;
  SourceSpan span_;
  const std::vector<Value>& inputs_;
};

bool splat_like(const StaticTensor& t) { return t.splat || t.numel() == 1; }

// Ops whose result on splat operands is a splat: elementwise ones, and shape
// ops that only rearrange equal elements.
bool elementwise(ops::OpId op) {
  return ops::has_flag(op, ops::kElementwiseUnary) || ops::has_flag(op, ops::kElementwiseBinary) ||
         op == ops::OpId::Where || op == ops::OpId::Clip || op == ops::OpId::Cast;
}
bool rearranging(ops::OpId op) {
  using ops::OpId;
  return op == OpId::Reshape || op == OpId::BroadcastTo || op == OpId::Transpose ||
         op == OpId::ExpandDims || op == OpId::Squeeze || op == OpId::Full;
}

}  // namespace

ir::Type Stager::tensor_type(const Value& t) const {
  if (t.is<StaticTensorPtr>()) {
    const StaticTensor& s = *t.as<StaticTensorPtr>();
    ir::Type type{s.dtype, {}};
    for (int64_t d : s.shape) type.shape.push_back(ir::Dim(d));
    return type;
  }
  const Staged& s = t.as<Staged>();
  return module_->functions[size_t(s.fn)].values[size_t(s.id)].type;
}

Value Stager::staged(int32_t id, std::optional<ir::Dim> known) const {
  return Value(Staged{cur_->fn, id, std::move(known)});
}

Value Stager::to_tensor(const Value& v, std::optional<DType> dtype, SourceSpan span) {
  if (v.is_tensor()) {
    if (dtype && tensor_dtype(v) != *dtype) return cast(v, *dtype, span);
    return v;
  }
  if (!v.is_number()) fail(span, "expected a tensor or a number, got " + type_name(v));
  const DType dt = dtype.value_or(python_number_dtype(v));
  double d = 0;
  int64_t i = 0;
  if (v.is<bool>()) d = i = v.as<bool>();
  if (v.is<int64_t>()) {
    d = double(i = v.as<int64_t>());
    // NumPy 2 (NEP 50) refuses a Python int its tensor's dtype cannot hold.
    if (dt == DType::kI32 && (i < INT32_MIN || i > INT32_MAX))
      fail(span, "the Python int " + py_repr(v) + " is out of range for i32; cast the tensor with astype(sg.i64)");
  }
  if (v.is<double>()) {
    d = v.as<double>();
    if (is_int(dt)) {  // truncation, as NumPy's cast; a float beyond int64 has no value there
      if (!(d >= -0x1p63 && d < 0x1p63))
        fail(span, "the number " + py_repr(v) + " does not fit " + dtype_name(dt));
      i = int64_t(d);
    } else {
      i = d != 0;  // bool(x), which is True for NaN
    }
  }
  // Python scalars get no origin: they never explain a shape.
  return Value(scalar_tensor(dt, d, i));
}

Value Stager::cast(const Value& t, DType dtype, SourceSpan span) {
  if (tensor_dtype(t) == dtype) return t;
  ops::Attrs attrs;
  attrs.values.push_back(ops::AttrValue::Int(int64_t(dtype)));
  return apply(ops::OpId::Cast, std::move(attrs), {t}, span);
}

std::optional<ir::Dim> Stager::known_dim(const Value& v) const {
  if (v.is<int64_t>()) return ir::Dim(v.as<int64_t>());
  if (v.is<StaticTensorPtr>()) {
    const StaticTensor& t = *v.as<StaticTensorPtr>();
    if (t.shape.empty() && is_int(t.dtype)) return ir::Dim(t.element_as_int(0));
    return std::nullopt;
  }
  if (v.is<Staged>()) return v.as<Staged>().known;
  return std::nullopt;
}

// ---- folding --------------------------------------------------------------------

namespace {

// Runs the reference kernel of `op` on dense static operands.
Status run_reference(ops::OpId op, const ops::Attrs& attrs, const std::vector<StaticTensor>& in,
                     const std::vector<ops::TensorType<int64_t>>& out_types,
                     std::vector<StaticTensor>& out) {
  std::vector<kernels::TensorRef> in_refs(in.size()), out_refs(out_types.size());
  auto fill = [](kernels::TensorRef& r, DType dt, const std::vector<int64_t>& shape, void* data) {
    if (shape.size() > size_t(kernels::kMaxRank))
      return invalid_argument("tensors of rank above " + std::to_string(kernels::kMaxRank) +
                              " are not supported");
    r.dtype = dt;
    r.rank = int(shape.size());
    for (size_t i = 0; i < shape.size(); ++i) r.shape[i] = shape[i];
    r.data = data;
    return Status::Ok();
  };
  for (size_t i = 0; i < in.size(); ++i)
    SG_RETURN_IF_ERROR(fill(in_refs[i], in[i].dtype, in[i].shape,
                            const_cast<uint8_t*>(in[i].bytes.data())));
  out.assign(out_types.size(), StaticTensor{});
  for (size_t i = 0; i < out_types.size(); ++i) {
    out[i].dtype = out_types[i].dtype;
    out[i].shape = out_types[i].shape;
    out[i].bytes.resize(size_t(out[i].numel()) * dtype_size(out[i].dtype));
    SG_RETURN_IF_ERROR(fill(out_refs[i], out[i].dtype, out[i].shape, out[i].bytes.data()));
  }
  std::vector<uint8_t> scratch(kernels::reference_scratch_size(op, attrs, in_refs));
  kernels::KernelContext ctx;
  ctx.scratch = scratch.data();
  ctx.scratch_size = scratch.size();
  return kernels::reference_kernel(op)(ctx, attrs, in_refs, out_refs);
}

}  // namespace

// Folds an op on static operands; nullopt when the result would be large and
// larger than its operands (a transposed or broadcast weight): constant folding
// must never make the file bigger, so such an op stays a node. Nor does it fold
// past kMaxFoldBytes of dense operands and results (a reduction of a huge splat).
constexpr uint64_t kMaxFoldBytes = uint64_t(256) << 20;
// Nor past kMaxFoldWork multiply-adds (ops::op_work; a matmul of two 4096 x 4096
// ones is 2^36): about a quarter of a second of the reference kernels.
constexpr uint64_t kMaxFoldWork = uint64_t(1) << 28;
static std::optional<std::vector<Value>> fold(Stager& s, ops::OpId op, const ops::Attrs& attrs,
                                 const std::vector<Value>& inputs, SourceSpan span, bool can_stage) {
  std::vector<ops::TensorType<int64_t>> types;
  std::vector<std::optional<int64_t>> scalars;
  bool all_splat = true;
  for (const Value& v : inputs) {
    const StaticTensor& t = *v.as<StaticTensorPtr>();
    types.push_back({t.dtype, t.shape});
    scalars.push_back(t.shape.empty() && is_int(t.dtype) ? std::optional<int64_t>(t.element_as_int(0))
                                                         : std::nullopt);
    all_splat = all_splat && splat_like(t);
  }
  std::vector<ops::TensorType<int64_t>> out_types;
  ops::ConcreteInferContext ctx;
  std::vector<int64_t> reported;
  if (ops::has_flag(op, ops::kDataDependentShape)) {  // a nonzero count of static operands
    std::vector<std::vector<uint8_t>> dense(inputs.size());
    std::vector<kernels::TensorRef> refs(inputs.size());
    for (size_t i = 0; i < inputs.size(); ++i) {
      const StaticTensor& t = *inputs[i].as<StaticTensorPtr>();
      if (t.shape.size() > size_t(kernels::kMaxRank)) return std::nullopt;
      dense[i] = t.dense_bytes();
      refs[i].dtype = t.dtype;
      refs[i].rank = int(t.shape.size());
      for (size_t d = 0; d < t.shape.size(); ++d) refs[i].shape[d] = t.shape[d];
      refs[i].data = dense[i].data();
    }
    if (!kernels::reported_dims(op, attrs, refs, reported).ok()) return std::nullopt;
    ctx.reported = reported;
  }
  Status st = ops::infer<int64_t>(op, attrs, types, scalars, out_types, ctx);
  if (!st.ok()) s.fail_op(op, st, inputs, span);

  auto result = std::make_shared<StaticTensor>();
  result->origin = Origin{span, ""};
  const bool big = ops::dim_product(out_types[0].shape) > 1;
  if (can_stage && !(all_splat && (rearranging(op) || elementwise(op)))) {
    size_t in_bytes = 0, out_bytes = 0;
    for (const Value& v : inputs) in_bytes += v.as<StaticTensorPtr>()->bytes.size();
    for (const auto& t : out_types) out_bytes += size_t(ops::dim_product(t.shape)) * dtype_size(t.dtype);
    constexpr size_t kFoldLimitBytes = size_t(1) << 20;
    if (out_bytes > kFoldLimitBytes && out_bytes > in_bytes) return std::nullopt;
  }
  if (all_splat && big && rearranging(op)) {
    const StaticTensor& first = *inputs[0].as<StaticTensorPtr>();
    result->dtype = out_types[0].dtype;
    result->shape = out_types[0].shape;
    result->bytes.assign(first.bytes.begin(), first.bytes.begin() + long(dtype_size(first.dtype)));
    result->splat = true;
    return std::vector<Value>{Value(StaticTensorPtr(result))};
  }
  const bool splat_result = all_splat && big && elementwise(op);
  if (!splat_result) {  // the reference kernels run on dense operands and results
    uint64_t dense_bytes = 0;
    auto add = [&](DType dt, const std::vector<int64_t>& shape) {
      uint64_t n = dtype_size(dt);
      for (int64_t d : shape)
        if (__builtin_mul_overflow(n, uint64_t(d), &n)) n = UINT64_MAX;
      if (__builtin_add_overflow(dense_bytes, n, &dense_bytes)) dense_bytes = UINT64_MAX;
    };
    for (const Value& v : inputs) add(v.as<StaticTensorPtr>()->dtype, v.as<StaticTensorPtr>()->shape);
    for (const auto& t : out_types) add(t.dtype, t.shape);
    if (dense_bytes > kMaxFoldBytes) {
      if (can_stage) return std::nullopt;
      s.fail(span, std::string(ops::op_def(op).name) + " on these static tensors needs " +
                       std::to_string(dense_bytes) + " bytes at compile time, more than the " +
                       std::to_string(kMaxFoldBytes >> 20) + " MiB limit; compute it inside a function",
             s.provenance_notes(inputs));
    }
    const uint64_t work = ops::op_work(op, types, out_types);
    if (work > kMaxFoldWork) {
      if (can_stage) return std::nullopt;
      s.fail(span, std::string(ops::op_def(op).name) + " on these static tensors takes " + std::to_string(work) +
                       " multiply-adds at compile time, more than the limit of " + std::to_string(kMaxFoldWork) +
                       "; compute it inside a function",
             s.provenance_notes(inputs));
    }
  }
  std::vector<StaticTensor> dense;
  std::vector<ops::TensorType<int64_t>> run_types = out_types;
  for (const Value& v : inputs) {
    const StaticTensor& t = *v.as<StaticTensorPtr>();
    StaticTensor d;
    d.dtype = t.dtype;
    if (splat_result) {  // compute one element, on 0-d operands
      d.bytes.assign(t.bytes.begin(), t.bytes.begin() + long(dtype_size(t.dtype)));
    } else {
      d.shape = t.shape;
      d.bytes = t.dense_bytes();
    }
    dense.push_back(std::move(d));
  }
  if (splat_result) run_types[0].shape.clear();
  std::vector<StaticTensor> out;
  Status ks = run_reference(op, attrs, dense, run_types, out);
  if (!ks.ok()) s.fail(span, ks.message(), s.provenance_notes(inputs));
  std::vector<Value> results;
  for (size_t i = 0; i < out.size(); ++i) {
    auto r = i == 0 ? result : std::make_shared<StaticTensor>();
    *r = std::move(out[i]);
    r->origin = Origin{span, ""};
    if (splat_result) {  // only single-output elementwise ops get here
      r->shape = out_types[i].shape;
      r->splat = true;
    }
    results.push_back(Value(StaticTensorPtr(r)));
  }
  return results;
}

Value Stager::apply(ops::OpId op, ops::Attrs attrs, std::vector<Value> inputs, SourceSpan span) {
  return apply_all(op, std::move(attrs), std::move(inputs), span).at(0);
}

std::vector<Value> Stager::apply_all(ops::OpId op, ops::Attrs attrs, std::vector<Value> inputs, SourceSpan span) {
  bool all_static = true;
  for (const Value& v : inputs) {
    if (!v.is_tensor()) fail(span, std::string(ops::op_def(op).name) + ": expected a tensor, got " + type_name(v));
    all_static = all_static && v.is<StaticTensorPtr>();
  }
  if (all_static && op != ops::OpId::Custom) {  // a custom op's kernel is the application's
    if (std::optional<std::vector<Value>> folded = fold(*this, op, attrs, inputs, span, cur_ != nullptr))
      return *folded;
  }
  if (!cur_) fail(span, "a value known only at run time cannot be used here");

  std::vector<int32_t> ids;
  std::vector<std::optional<ir::Dim>> scalars;
  for (const Value& v : inputs) {
    ids.push_back(materialize(v, span));
    scalars.push_back(known_dim(v));
  }
  std::vector<ir::Type> types;
  for (int32_t id : ids) types.push_back(fn().values[size_t(id)].type);
  std::vector<ir::Type> out;
  StagingInferContext ctx(*this, span, inputs);
  Status st = ops::infer<ir::Dim>(op, attrs, types, scalars, out, ctx);
  if (!st.ok()) {
    // A carried Python number beside a tensor of another dtype (where's value
    // operands, maximum, concatenate): the number may take that dtype.
    for (const Value& v : inputs)
      if (weak_origin(v))
        for (const Value& other : inputs)
          if (!weak_origin(other)) loops().retype_weak(v, tensor_dtype(other));
    fail_op(op, st, inputs, span);
  }

  ir::Node node;
  node.kind = ir::NodeKind::kOp;
  node.op = op;
  node.attrs = std::move(attrs);
  node.inputs = std::move(ids);
  node.span = span;
  for (ir::Type& t : out) {
    const int32_t id = fn().add_value(std::move(t), "", span);
    node.outputs.push_back(id);
    set_origin(cur_->fn, id, Origin{span, ""});
  }
  std::vector<Value> results;
  for (int32_t id : node.outputs) results.push_back(staged(id));
  fn().nodes.push_back(std::move(node));
  return results;
}

DType dtype_beside(DType tensor, const Value& number) {
  if (number.is<double>() && !is_float(tensor)) return DType::kF32;
  if (number.is<int64_t>() && tensor == DType::kBool) return DType::kI64;
  return tensor;
}

Value Stager::tensor_binary(ops::OpId op, const Value& a, const Value& b, SourceSpan span) {
  Value ta = a, tb = b;
  if (a.is_tensor() && b.is_tensor()) {
    const DType da = tensor_dtype(a), db = tensor_dtype(b);
    // A value that stands for a Python number takes the other operand's dtype at
    // this use, as the number does in eager mode (NEP 50): `x[i] * i`, `total + v`.
    // Between two of them, an int gives way to a float.
    const WeakOrigin* wa = da != db ? weak_origin(a) : nullptr;
    const WeakOrigin* wb = da != db ? weak_origin(b) : nullptr;
    const auto gives_way = [&](const WeakOrigin* w, const WeakOrigin* other, DType to) {
      if (!w || !number_fits(w->number, to)) return false;
      return !other || (w->number.is<int64_t>() && other->number.is<double>());
    };
    if (gives_way(wa, wb, db)) ta = cast(a, db, span);
    else if (gives_way(wb, wa, da)) tb = cast(b, da, span);
    // A bool tensor beside an int that stands for a Python int: i64 (SPEC §3).
    else if (wa && wa->number.is<int64_t>() && !wb && db == DType::kBool) tb = cast(b, da, span);
    else if (wb && wb->number.is<int64_t>() && !wa && da == DType::kBool) ta = cast(a, db, span);
    if (tensor_dtype(ta) != tensor_dtype(tb))
      fail(span,
           std::string(ops::op_def(op).name) + ": operands have different dtypes " + dtype_name(da) +
               " and " + dtype_name(db) + "; cast one with astype",
           provenance_notes({a, b}));
  } else {
    const bool left = a.is_tensor();
    const Value& t = left ? a : b;
    const Value& n = left ? b : a;
    if (!n.is_number()) fail(span, "unsupported operand type for " + std::string(ops::op_def(op).name) + ": " + type_name(n));
    const DType target = dtype_beside(tensor_dtype(t), n);
    Value tt = cast(t, target, span);
    Value nt = to_tensor(n, target, span);
    ta = left ? tt : nt;
    tb = left ? nt : tt;
  }
  Value r = apply(op, {}, {ta, tb}, span);
  // Arithmetic between a Python number's stand-in and numbers (or itself) keeps
  // standing for that number: `total * 2 + 1`, `i + 1` may still take a tensor's dtype.
  const WeakOrigin* wa = weak_origin(a);
  const WeakOrigin* wb = weak_origin(b);
  const WeakOrigin* w = wa ? wa : wb;
  // With two of them, a carried number with one carried by no loop (`cnt + i`, i a
  // counter) stays the carried one, as `cnt` stays a Python int in eager mode.
  const WeakOrigin* kept = nullptr;
  const Value* kept_operand = nullptr;
  if (wa && wb) {
    if (wa->loop == wb->loop && wa->name == wb->name) kept = wa, kept_operand = &a;
    else if (wb->loop == 0) kept = wa, kept_operand = &a;
    else if (wa->loop == 0) kept = wb, kept_operand = &b;
  } else if (wa && b.is_number()) {
    kept = wa, kept_operand = &a;
  } else if (wb && a.is_number()) {
    kept = wb, kept_operand = &b;
  }
  if (kept && r.is<Staged>() && !ops::has_flag(op, ops::kComparison) &&
      tensor_dtype(r) == tensor_dtype(*kept_operand))
    loops().mark_weak(r, *kept);
  // An int that stands for a Python int, with a Python float: a Python float
  // (`i + 0.5` beside an f16 tensor is f16, as in eager mode).
  else if (w && w->loop == 0 && w->number.is<int64_t>() && r.is<Staged>() && !ops::has_flag(op, ops::kComparison) &&
           (wa ? b : a).is<double>() && is_float(tensor_dtype(r)))
    loops().mark_weak(r, WeakOrigin::of_number(wa ? b : a));
  // A scalar tied to a dim keeps it through + - * (len(b) + 1 is M+1).
  if (r.is<Staged>() && tensor_rank(r) == 0 && is_int(tensor_dtype(r)) &&
      (op == ops::OpId::Add || op == ops::OpId::Sub || op == ops::OpId::Mul)) {
    std::optional<ir::Dim> ka = known_dim(a), kb = known_dim(b);
    if (ka && kb) {
      r.as<Staged>().known = op == ops::OpId::Add ? *ka + *kb : op == ops::OpId::Sub ? *ka - *kb : *ka * *kb;
    }
  }
  return r;
}

// ---- shapes as values -------------------------------------------------------------

Value Stager::shape_item(const Value& t, int64_t axis, SourceSpan span) {
  const ir::Type type = tensor_type(t);
  const ir::Dim& d = type.shape.at(size_t(axis));
  if (auto s = d.as_static()) return Value(*s);
  const int32_t id = materialize(t, span);
  auto it = cur_->shape_dims.find({id, axis});
  if (it != cur_->shape_dims.end()) return staged(it->second, d);
  ops::Attrs attrs;
  attrs.values.push_back(ops::AttrValue::Int(axis));
  Value r = apply(ops::OpId::ShapeDim, std::move(attrs), {staged(id)}, span);
  cur_->shape_dims[{id, axis}] = r.as<Staged>().id;
  r.as<Staged>().known = d;
  loops().mark_weak_int(r);  // a Python int in eager mode
  return r;
}

Value Stager::shape_tuple(const Value& t, SourceSpan span) {
  std::vector<Value> items;
  const size_t rank = tensor_rank(t);
  for (size_t i = 0; i < rank; ++i) items.push_back(shape_item(t, int64_t(i), span));
  return make_tuple(std::move(items));
}

ShapeArg Stager::shape_arg(const Value& v, SourceSpan span, bool allow_infer) {
  std::vector<Value> items;
  if (v.is<TuplePtr>()) items = *v.as<TuplePtr>();
  else if (v.is<ListPtr>()) items = v.as<ListPtr>()->items;
  else if (v.is_tensor() && tensor_rank(v) == 1) {
    // A shape read from a vector's values: its length, the rank, must be static.
    const ir::Type t = tensor_type(v);
    const std::optional<int64_t> n = t.shape[0].as_static();
    if (!n)
      fail(span, "a shape given as a tensor needs a static length (the rank of the result), got a " +
                     module_->format_type(t) + " tensor");
    for (int64_t k = 0; k < *n; ++k) items.push_back(index_tensor_value(v, Value(k), span));
  } else items.push_back(v);
  ShapeArg shape;
  bool inferred = false;
  for (const Value& item : items) {
    if (item.is<Staged>()) {
      const DType dt = tensor_dtype(item);
      if (!is_int(dt) || tensor_rank(item) != 0)
        fail(span, "a shape entry must be an integer scalar, got a " + module_->format_type(tensor_type(item)) + " tensor");
      shape.dims.push_back(ops::attr::kDynamicDim);
      shape.dynamic.push_back(item);
      continue;
    }
    if (item.is<bool>() || !(item.is<int64_t>() || item.is<StaticTensorPtr>()))
      fail(span, "a shape entry must be an int, got " + type_name(item));
    std::optional<ir::Dim> k = known_dim(item);
    if (!k) fail(span, "a shape entry must be an integer scalar");
    const int64_t d = *k->as_static();
    if (d == -1 && allow_infer && !inferred) {
      inferred = true;
    } else if (d < 0) {
      fail(span, d == -1 ? (allow_infer ? "only one shape entry may be -1" : "-1 is not allowed in this shape")
                         : "negative dimension " + std::to_string(d) + " in a shape");
    }
    shape.dims.push_back(d);
  }
  return shape;
}

// ---- materialization ------------------------------------------------------------------

int32_t Stager::add_constant(const StaticTensor& t) {
  std::string_view bytes(reinterpret_cast<const char*>(t.bytes.data()), t.bytes.size());
  size_t h = std::hash<std::string_view>{}(bytes) ^ (size_t(t.dtype) * 0x9e3779b97f4a7c15ull);
  for (int64_t d : t.shape) h = h * 31 + size_t(d);
  auto range = constant_index_.equal_range(h);
  for (auto it = range.first; it != range.second; ++it) {
    const ir::Constant& c = module_->constants[size_t(it->second)];
    if (c.dtype == t.dtype && c.shape == t.shape && c.bytes == t.bytes && c.quantize == t.quantize) return it->second;
  }
  module_->constants.push_back(ir::Constant{t.dtype, t.shape, t.bytes, t.weight, t.quantize, t.unquantized});
  const int32_t index = int32_t(module_->constants.size() - 1);
  constant_index_.emplace(h, index);
  return index;
}

int32_t Stager::local(const Staged& s, SourceSpan span) {
  if (s.fn == cur_->fn) return s.id;
  auto it = cur_->imported.find({s.fn, s.id});
  if (it != cur_->imported.end()) return it->second;
  FnBuilder* self = cur_;
  if (!self->parent) {
    // Kept past its function in a module-level list or dict: no graph path leads here.
    std::vector<Note> notes;
    auto o = origins_.find({s.fn, s.id});
    if (o != origins_.end() && o->second.span.line) notes.push_back(Note{o->second.span, "it was computed here"});
    fail(span, "this value was computed while staging '" + module_->functions[size_t(s.fn)].name +
                   "' and kept (in a module-level list or dict) past it; a staged value cannot leave its "
                   "function that way: return it, or pass it as an argument",
         std::move(notes));
  }
  cur_ = self->parent;
  const int32_t outer = local(s, span);
  const int32_t outer_fn = cur_->fn;
  ir::Value outer_value = fn().values[size_t(outer)];
  cur_ = self;
  const int32_t param = fn().add_value(outer_value.type, outer_value.name, outer_value.span);
  fn().params.push_back(param);
  self->captures.push_back({param, Staged{outer_fn, outer, std::nullopt}});
  self->imported[{s.fn, s.id}] = param;
  auto o = origins_.find({s.fn, s.id});
  if (o != origins_.end()) set_origin(self->fn, param, o->second);
  return param;
}

int32_t Stager::materialize(const Value& tensor, SourceSpan span) {
  if (tensor.is<Staged>()) return local(tensor.as<Staged>(), span);
  if (!cur_) fail(span, "internal error: no graph function to add a constant to");
  const StaticTensor& t = *tensor.as<StaticTensorPtr>();
  if (t.splat && t.numel() != 1) {
    StaticTensor element;
    element.dtype = t.dtype;
    element.bytes = t.bytes;
    element.origin = t.origin;
    const int32_t c = add_constant(element);
    auto it = cur_->splats.find({c, t.shape});
    if (it != cur_->splats.end()) return it->second;
    const int32_t elem_id = materialize(Value(std::make_shared<const StaticTensor>(element)), span);
    ir::Node node;
    node.op = ops::OpId::Full;
    node.attrs.values.push_back(ops::AttrValue::Ints(t.shape));
    node.inputs = {elem_id};
    node.span = t.origin.span.valid() ? t.origin.span : span;
    ir::Type type = tensor_type(tensor);
    const int32_t id = fn().add_value(std::move(type), "", node.span);
    node.outputs = {id};
    fn().nodes.push_back(std::move(node));
    set_origin(cur_->fn, id, t.origin);
    cur_->splats[{c, t.shape}] = id;
    return id;
  }
  StaticTensor dense;
  dense.dtype = t.dtype;
  dense.shape = t.shape;
  dense.bytes = t.dense_bytes();
  dense.weight = t.weight;
  dense.quantize = t.quantize;
  dense.unquantized = t.unquantized;
  const int32_t c = add_constant(dense);
  auto it = cur_->constant_values.find(c);
  if (it != cur_->constant_values.end()) return it->second;
  const int32_t id = fn().add_value(tensor_type(tensor), "", t.origin.span);
  fn().values[size_t(id)].constant = c;
  set_origin(cur_->fn, id, t.origin);
  cur_->constant_values[c] = id;
  return id;
}

}  // namespace sg::compiler::staging
