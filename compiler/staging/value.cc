#include "staging/value.h"

#include <charconv>
#include <cmath>
#include <cstring>

#include "staging/scope.h"

namespace sg::compiler::staging {

// Saturates at INT64_MAX: a static shape may be far too large to hold (the size
// check after staging reports it, located); its count must not overflow first.
int64_t StaticTensor::numel() const {
  for (int64_t d : shape)
    if (d == 0) return 0;
  int64_t n = 1;
  for (int64_t d : shape)
    if (__builtin_mul_overflow(n, d, &n)) return INT64_MAX;
  return n;
}

std::vector<uint8_t> StaticTensor::dense_bytes() const {
  if (!splat) return bytes;
  const size_t esize = dtype_size(dtype);
  const int64_t n = numel();
  std::vector<uint8_t> out(size_t(n) * esize);
  for (int64_t i = 0; i < n; ++i) std::memcpy(out.data() + size_t(i) * esize, bytes.data(), esize);
  return out;
}

double StaticTensor::element_as_double(int64_t i) const {
  const size_t k = splat ? 0 : size_t(i);
  const uint8_t* p = bytes.data();
  switch (dtype) {
    case DType::kF32: { float f; std::memcpy(&f, p + k * 4, 4); return f; }
    case DType::kF16: { uint16_t h; std::memcpy(&h, p + k * 2, 2); return half_to_float(h); }
    case DType::kI32: { int32_t v; std::memcpy(&v, p + k * 4, 4); return v; }
    case DType::kI64: { int64_t v; std::memcpy(&v, p + k * 8, 8); return double(v); }
    case DType::kBool: return p[k] ? 1.0 : 0.0;
  }
  return 0;
}

int64_t StaticTensor::element_as_int(int64_t i) const {
  const size_t k = splat ? 0 : size_t(i);
  const uint8_t* p = bytes.data();
  switch (dtype) {
    case DType::kI32: { int32_t v; std::memcpy(&v, p + k * 4, 4); return v; }
    case DType::kI64: { int64_t v; std::memcpy(&v, p + k * 8, 8); return v; }
    case DType::kBool: return p[k] ? 1 : 0;
    case DType::kF32:
    case DType::kF16: return saturating_int64(element_as_double(i));
  }
  return 0;
}

int64_t RangeV::size() const {
  if (step > 0 && stop > start) return (stop - start + step - 1) / step;
  if (step < 0 && stop < start) return (start - stop - step - 1) / (-step);
  return 0;
}

Value make_tuple(std::vector<Value> items) {
  return Value(TuplePtr(std::make_shared<const std::vector<Value>>(std::move(items))));
}

Value make_list(std::vector<Value> items) {
  auto l = std::make_shared<ListObj>();
  l->items = std::move(items);
  return Value(l);
}

std::string type_name(const Value& v) {
  struct Namer {
    std::string operator()(const NoneV&) { return "None"; }
    std::string operator()(bool) { return "bool"; }
    std::string operator()(int64_t) { return "int"; }
    std::string operator()(double) { return "float"; }
    std::string operator()(const std::string&) { return "str"; }
    std::string operator()(const TuplePtr&) { return "tuple"; }
    std::string operator()(const ListPtr&) { return "list"; }
    std::string operator()(const DictPtr&) { return "dict"; }
    std::string operator()(const StaticTensorPtr&) { return "tensor"; }
    std::string operator()(const Staged&) { return "tensor"; }
    std::string operator()(const SgModuleV&) { return "module"; }
    std::string operator()(const SgMember& m) { return "sg." + m.name; }
    std::string operator()(const TransformV&) { return "function"; }
    std::string operator()(const VariablesPtr&) { return "variables"; }
    std::string operator()(const BuiltinV& b) { return "builtin " + b.name; }
    std::string operator()(const DTypeV&) { return "dtype"; }
    std::string operator()(const AnnotationV&) { return "type annotation"; }
    std::string operator()(const RangeV&) { return "range"; }
    std::string operator()(const std::shared_ptr<FunctionV>&) { return "function"; }
    std::string operator()(const BoundMethod&) { return "method"; }
    std::string operator()(const EllipsisV&) { return "ellipsis"; }
    std::string operator()(const UndefinedV&) { return "undefined"; }
    std::string operator()(const TensorListV&) { return "list"; }
    std::string operator()(const FormattedV&) { return "f-string of values known only at run time"; }
    std::string operator()(const ClassPtr&) { return "type"; }
    std::string operator()(const InstancePtr& o) { return o->cls->name; }
    std::string operator()(const BoundFunction&) { return "method"; }
    std::string operator()(const SuperV&) { return "super"; }
    std::string operator()(const ExceptionV& e) { return e.types.empty() ? "exception" : e.types[0]; }
    std::string operator()(const PyModuleV&) { return "module"; }
  };
  return std::visit(Namer{}, v.data);
}

std::string format_float(double d) {
  if (std::isnan(d)) return "nan";
  if (std::isinf(d)) return d > 0 ? "inf" : "-inf";
  char buf[64];
  auto r = std::to_chars(buf, buf + sizeof buf, d);
  std::string s(buf, r.ptr);
  // Python writes 1e+20 and keeps a ".0" on integral values.
  const size_t e = s.find('e');
  if (e != std::string::npos) {
    if (s[e + 1] != '-' && s[e + 1] != '+') s.insert(e + 1, "+");
    const size_t digits = s.find_first_not_of("+-", e + 1);
    if (s.size() - digits == 1) s.insert(digits, "0");
  } else if (s.find('.') == std::string::npos) {
    s += ".0";
  }
  return s;
}

namespace {

std::string tensor_str(const StaticTensor& t) {
  const int64_t n = t.numel();
  if (n > 32 || t.shape.size() > 1) {
    std::string s = std::string(dtype_name(t.dtype)) + "[";
    for (size_t i = 0; i < t.shape.size(); ++i) s += (i ? ", " : "") + std::to_string(t.shape[i]);
    return s + "]";
  }
  auto elem = [&](int64_t i) -> std::string {
    if (t.dtype == DType::kBool) return t.element_as_int(i) ? "True" : "False";
    if (is_int(t.dtype)) return std::to_string(t.element_as_int(i));
    std::string f = format_float(t.element_as_double(i));
    if (f.size() > 2 && f.compare(f.size() - 2, 2, ".0") == 0) f.pop_back();  // NumPy: "1."
    return f;
  };
  if (t.shape.empty()) return elem(0);
  std::string s = "[";
  for (int64_t i = 0; i < n; ++i) s += (i ? " " : "") + elem(i);
  return s + "]";
}

std::string seq_str(const std::vector<Value>& items, const char* open, const char* close,
                    bool one_tuple) {
  std::string s = open;
  for (size_t i = 0; i < items.size(); ++i) s += (i ? ", " : "") + py_repr(items[i]);
  if (one_tuple && items.size() == 1) s += ",";
  return s + close;
}

}  // namespace

std::string py_str(const Value& v) {
  if (v.is<std::string>()) return v.as<std::string>();
  if (v.is<ExceptionV>()) return v.as<ExceptionV>().message;
  return py_repr(v);
}

std::string py_repr(const Value& v) {
  if (v.is<NoneV>()) return "None";
  if (v.is<bool>()) return v.as<bool>() ? "True" : "False";
  if (v.is<int64_t>()) return std::to_string(v.as<int64_t>());
  if (v.is<double>()) return format_float(v.as<double>());
  if (v.is<std::string>()) return "'" + v.as<std::string>() + "'";
  if (v.is<TuplePtr>()) return seq_str(*v.as<TuplePtr>(), "(", ")", true);
  if (v.is<ListPtr>()) return seq_str(v.as<ListPtr>()->items, "[", "]", false);
  if (v.is<DictPtr>()) {
    std::string s = "{";
    bool first = true;
    for (const auto& [k, val] : v.as<DictPtr>()->items) {
      s += (first ? "" : ", ") + py_repr(k) + ": " + py_repr(val);
      first = false;
    }
    return s + "}";
  }
  if (v.is<StaticTensorPtr>()) return tensor_str(*v.as<StaticTensorPtr>());
  if (v.is<ClassPtr>()) return "<class '" + v.as<ClassPtr>()->name + "'>";
  if (v.is<ExceptionV>()) {
    const ExceptionV& e = v.as<ExceptionV>();
    return (e.types.empty() ? "Exception" : e.types[0]) + "(" + (e.message.empty() ? "" : "'" + e.message + "'") + ")";
  }
  if (v.is<InstancePtr>()) {
    const InstanceObj& o = *v.as<InstancePtr>();
    if (o.cls->kind == ClassObj::Kind::kPlain) return "<" + o.cls->name + " object>";
    std::string s = o.cls->name + "(";  // records print as namedtuple and dataclass do
    bool first = true;
    for (const auto& [k, val] : o.attrs->items) {
      s += (first ? "" : ", ") + py_str(k) + "=" + py_repr(val);
      first = false;
    }
    return s + ")";
  }
  if (v.is<DTypeV>()) return std::string("sg.") + dtype_name(v.as<DTypeV>().dtype);
  if (v.is<RangeV>()) {
    const RangeV& r = v.as<RangeV>();
    return "range(" + std::to_string(r.start) + ", " + std::to_string(r.stop) +
           (r.step != 1 ? ", " + std::to_string(r.step) : "") + ")";
  }
  if (v.is<std::shared_ptr<FunctionV>>()) return "<function " + v.as<std::shared_ptr<FunctionV>>()->def->name + ">";
  if (v.is<EllipsisV>()) return "Ellipsis";
  return "<" + type_name(v) + ">";
}

std::optional<bool> static_equal(const Value& a, const Value& b) {
  if (a.is_number() && b.is_number()) {
    if (a.is<double>() || b.is<double>()) {
      auto d = [](const Value& v) {
        return v.is<double>() ? v.as<double>() : v.is<bool>() ? double(v.as<bool>()) : double(v.as<int64_t>());
      };
      return d(a) == d(b);
    }
    auto i = [](const Value& v) { return v.is<bool>() ? int64_t(v.as<bool>()) : v.as<int64_t>(); };
    return i(a) == i(b);
  }
  if (a.is_tensor() || b.is_tensor()) return std::nullopt;
  if (a.is<NoneV>() || b.is<NoneV>()) return a.is<NoneV>() && b.is<NoneV>();
  if (a.is<std::string>() && b.is<std::string>()) return a.as<std::string>() == b.as<std::string>();
  if (a.is<DTypeV>() && b.is<DTypeV>()) return a.as<DTypeV>().dtype == b.as<DTypeV>().dtype;
  auto seq_equal = [](const std::vector<Value>& x, const std::vector<Value>& y) -> std::optional<bool> {
    if (x.size() != y.size()) return false;
    for (size_t i = 0; i < x.size(); ++i) {
      std::optional<bool> e = static_equal(x[i], y[i]);
      if (!e || !*e) return e;
    }
    return true;
  };
  if (a.is<TuplePtr>() && b.is<TuplePtr>()) return seq_equal(*a.as<TuplePtr>(), *b.as<TuplePtr>());
  if (a.is<ListPtr>() && b.is<ListPtr>()) return seq_equal(a.as<ListPtr>()->items, b.as<ListPtr>()->items);
  if (a.is<std::shared_ptr<FunctionV>>() && b.is<std::shared_ptr<FunctionV>>())
    return a.as<std::shared_ptr<FunctionV>>() == b.as<std::shared_ptr<FunctionV>>();
  if (a.is<ClassPtr>() && b.is<ClassPtr>()) return a.as<ClassPtr>() == b.as<ClassPtr>();
  if (a.is<InstancePtr>() && b.is<InstancePtr>()) {
    const InstancePtr &x = a.as<InstancePtr>(), &y = b.as<InstancePtr>();
    if (x == y) return true;
    // Records compare by value, as namedtuple and dataclass __eq__ do.
    if (x->cls != y->cls || x->cls->kind == ClassObj::Kind::kPlain) return false;
    const auto &xi = x->attrs->items, &yi = y->attrs->items;
    if (xi.size() != yi.size()) return false;
    for (size_t i = 0; i < xi.size(); ++i) {
      std::optional<bool> e = static_equal(xi[i].second, yi[i].second);
      if (!e || !*e) return e;
    }
    return true;
  }
  if (a.data.index() != b.data.index()) return false;
  return std::nullopt;
}

StaticTensorPtr scalar_tensor(DType dtype, double v, int64_t iv, Origin origin) {
  auto t = std::make_shared<StaticTensor>();
  t->dtype = dtype;
  t->bytes.resize(dtype_size(dtype));
  uint8_t* p = t->bytes.data();
  switch (dtype) {
    case DType::kF32: { float f = float(v); std::memcpy(p, &f, 4); break; }
    case DType::kF16: { uint16_t h = float_to_half(float(v)); std::memcpy(p, &h, 2); break; }
    case DType::kI32: { int32_t x = int32_t(iv); std::memcpy(p, &x, 4); break; }
    case DType::kI64: std::memcpy(p, &iv, 8); break;
    case DType::kBool: p[0] = iv != 0; break;
  }
  t->origin = std::move(origin);
  return t;
}

DType python_number_dtype(const Value& v) {
  if (v.is<bool>()) return DType::kBool;
  if (v.is<double>()) return DType::kF32;
  return DType::kI64;
}

}  // namespace sg::compiler::staging
