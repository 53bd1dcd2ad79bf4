// Python builtins (SPEC §4): len range min max abs int float bool enumerate zip
// isinstance print, and the list/tuple/str constructors. They act on static
// values; len, min, max and abs also take staged scalars.
#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <optional>

#include "staging/classes.h"
#include "staging/staged_loop.h"
#include "staging/stager.h"

namespace sg::compiler::staging {
namespace {

const char* const kBuiltins[] = {"len", "range", "min", "max", "abs", "int", "float", "bool", "enumerate",
                                 "zip", "isinstance", "print", "list", "tuple", "str", "reversed", "dict",
                                 "sum", "any", "all", "sorted", "$fstring"};

void expect_args(Stager& s, const Args& a, const std::string& name, size_t lo, size_t hi) {
  if (a.pos.size() < lo || a.pos.size() > hi)
    s.fail(a.span, name + "() takes " + (lo == hi ? std::to_string(lo) : std::to_string(lo) + " to " + std::to_string(hi)) +
                       " arguments, got " + std::to_string(a.pos.size()));
}

// Python's format(v, spec) for numbers and strings: [[fill]align][sign][#][0]
// [width][,|_][.precision][type]. Returns nullopt for a spec it does not take.
std::optional<std::string> format_with_spec(const Value& v, const std::string& spec) {
  size_t i = 0;
  char fill = ' ', align = 0, sign = '-', grouping = 0, type = 0;
  bool alternate = false;
  int width = 0, precision = -1;
  auto is_align = [](char c) { return c == '<' || c == '>' || c == '^' || c == '='; };
  if (spec.size() >= 2 && is_align(spec[1])) {
    fill = spec[0];
    align = spec[1];
    i = 2;
  } else if (!spec.empty() && is_align(spec[0])) {
    align = spec[0];
    i = 1;
  }
  if (i < spec.size() && (spec[i] == '+' || spec[i] == '-' || spec[i] == ' ')) sign = spec[i++];
  if (i < spec.size() && spec[i] == '#') alternate = true, ++i;
  if (i < spec.size() && spec[i] == '0') {
    if (!align) fill = '0', align = '=';
    ++i;
  }
  auto digits = [&](int& out) {
    size_t start = i;
    while (i < spec.size() && spec[i] >= '0' && spec[i] <= '9' && i - start < 4) out = out * 10 + (spec[i++] - '0');
    return i > start;
  };
  digits(width);
  if (i < spec.size() && (spec[i] == ',' || spec[i] == '_')) grouping = spec[i++];
  if (i < spec.size() && spec[i] == '.') {
    ++i;
    precision = 0;
    if (!digits(precision)) return std::nullopt;
  }
  if (i < spec.size()) type = spec[i++];
  if (i != spec.size()) return std::nullopt;

  std::string body, prefix;  // prefix: the sign and a base marker, before any '=' padding
  const bool is_string = v.is<std::string>();
  if (is_string) {
    if (type && type != 's') return std::nullopt;
    if (sign != '-' || alternate || grouping || align == '=') return std::nullopt;
    body = v.as<std::string>();
    if (precision >= 0 && size_t(precision) < body.size()) body.resize(size_t(precision));
  } else if (v.is<bool>() || v.is<int64_t>() || v.is<double>()) {
    const bool integral = !v.is<double>() && (!type || std::string("dxXob").find(type) != std::string::npos);
    auto group = [&](std::string& number, size_t every) {
      if (!grouping) return;
      size_t end = number.find_first_not_of("0123456789abcdefABCDEF");
      if (end == std::string::npos) end = number.size();
      for (size_t k = end; k > every; k -= every) number.insert(k - every, 1, grouping);
    };
    bool negative = false;
    if (integral) {
      if (precision >= 0) return std::nullopt;
      const int64_t n = v.is<bool>() ? int64_t(v.as<bool>()) : v.as<int64_t>();
      negative = n < 0;
      uint64_t m = negative ? 0 - uint64_t(n) : uint64_t(n);
      const int base = type == 'x' || type == 'X' ? 16 : type == 'o' ? 8 : type == 'b' ? 2 : 10;
      do {
        body.insert(body.begin(), "0123456789abcdef"[m % uint64_t(base)]);
        m /= uint64_t(base);
      } while (m);
      if (type == 'X')
        for (char& c : body) c = char(std::toupper(static_cast<unsigned char>(c)));
      group(body, base == 10 ? 3 : 4);
      if (alternate && base != 10) prefix = type == 'b' ? "0b" : type == 'o' ? "0o" : type == 'X' ? "0X" : "0x";
    } else {
      if (type && std::string("eEfFgG%n").find(type) == std::string::npos) return std::nullopt;
      double d = v.is<double>() ? v.as<double>() : v.is<bool>() ? double(v.as<bool>()) : double(v.as<int64_t>());
      negative = std::signbit(d) && !std::isnan(d);
      d = std::fabs(d);
      if (!type && precision < 0) {
        body = format_float(d);
        group(body, 3);
      } else {
        char conv = type == 'n' || !type ? 'g' : type == '%' ? 'f' : type;
        if (type == '%') d *= 100;
        const std::string fmt = std::string("%") + (alternate ? "#" : "") + ".*" + conv;
        char buf[512];
        const int len = std::snprintf(buf, sizeof buf, fmt.c_str(), precision < 0 ? 6 : std::min(precision, 200), d);
        if (len < 0 || size_t(len) >= sizeof buf) return std::nullopt;
        body.assign(buf, size_t(len));
        // Python's general format without a type keeps at least one digit after a point.
        if (!type && body.find_first_of(".einf") == std::string::npos) body += ".0";
        group(body, 3);
        if (type == '%') body += '%';
      }
    }
    prefix = (negative ? "-" : sign == '+' ? "+" : sign == ' ' ? " " : "") + prefix;
  } else {
    return std::nullopt;
  }
  const size_t shown = prefix.size() + body.size();
  const size_t pad = size_t(width) > shown ? size_t(width) - shown : 0;
  if (!align) align = is_string ? '<' : '>';
  switch (align) {
    case '<': return prefix + body + std::string(pad, fill);
    case '^': return std::string(pad / 2, fill) + prefix + body + std::string(pad - pad / 2, fill);
    case '=': return prefix + std::string(pad, fill) + body;
    default: return std::string(pad, fill) + prefix + body;
  }
}

bool is_instance(const Value& v, const Value& type) {
  if (type.is<ClassPtr>()) return instance_of(v, type.as<ClassPtr>());
  if (!type.is<BuiltinV>()) return false;
  const std::string& t = type.as<BuiltinV>().name;
  if (t == "int") return v.is<int64_t>() || v.is<bool>();
  if (t == "bool") return v.is<bool>();
  if (t == "float") return v.is<double>();
  if (t == "str") return v.is<std::string>();
  if (t == "tuple") return v.is<TuplePtr>() || record_as_tuple(v).has_value();
  if (t == "object") return true;
  if (t == "list") return v.is<ListPtr>();
  if (t == "dict") return v.is<DictPtr>();
  return false;
}

}  // namespace

bool Stager::is_builtin(const std::string& name) {
  for (const char* b : kBuiltins)
    if (name == b) return true;
  return false;
}

int64_t Stager::enumerate_start(const Args& a) {
  expect_args(*this, a, "enumerate", 1, 2);
  int64_t start = a.pos.size() == 2 ? to_int(a.pos[1], a.span, "enumerate() start") : 0;
  for (const auto& [k, v] : a.kw) {
    if (k != "start") fail(a.span, "enumerate() got an unexpected keyword argument '" + k + "'");
    start = to_int(v, a.span, "enumerate() start");
  }
  return start;
}

namespace {

// The builtins other than print, one function each (call_builtin dispatches).
Value builtin_len(Stager& s, Args& a, const std::string& name) {
  const SourceSpan span = a.span;
  expect_args(s, a, name, 1, 1);
  const Value v = a.pos[0].is<TensorListV>() ? Value(s.resolve_tensor_list(a.pos[0].as<TensorListV>(), "list", span))
                                             : a.pos[0];
  if (v.is_tensor()) {
    if (s.tensor_rank(v) == 0) s.fail(span, "len() of a 0-d tensor");
    return s.shape_item(v, 0, span);
  }
  if (v.is<TuplePtr>()) return Value(int64_t(v.as<TuplePtr>()->size()));
  if (v.is<ListPtr>()) return Value(int64_t(v.as<ListPtr>()->items.size()));
  if (v.is<DictPtr>()) return Value(int64_t(v.as<DictPtr>()->items.size()));
  if (v.is<std::string>()) return Value(int64_t(v.as<std::string>().size()));
  if (v.is<RangeV>()) return Value(v.as<RangeV>().size());
  s.fail(span, "object of type '" + type_name(v) + "' has no len()");
}

Value builtin_range(Stager& s, Args& a, const std::string& name) {
  const SourceSpan span = a.span;
  expect_args(s, a, name, 1, 3);
  for (const Value& v : a.pos)
    if (v.is<Staged>())
      s.fail(span, "staged control flow: range() with a bound known only at run time is not supported yet");
  RangeV r;
  if (a.pos.size() == 1) {
    r.stop = s.to_int(a.pos[0], span, "range()");
  } else {
    r.start = s.to_int(a.pos[0], span, "range()");
    r.stop = s.to_int(a.pos[1], span, "range()");
    if (a.pos.size() == 3) r.step = s.to_int(a.pos[2], span, "range()");
  }
  if (r.step == 0) s.fail(span, "range() arg 3 must not be zero");
  return Value(r);
}

// key= and the other keywords of min, max and sorted. The keys of static items
// must be static: the order is decided at compile time.
struct OrderOptions {
  Value key;  // None: the items themselves
  bool reverse = false;
  std::optional<Value> fallback;  // min/max default=
};

OrderOptions order_options(Stager& s, const Args& a, const std::string& name) {
  OrderOptions o;
  for (const auto& [k, v] : a.kw) {
    if (k == "key") o.key = v;
    else if (k == "reverse" && name == "sorted") o.reverse = s.truth(v, a.span, "sorted(reverse=...)");
    else if (k == "default" && name != "sorted") o.fallback = v;
    else s.fail(a.span, name + "() got an unexpected keyword argument '" + k + "'");
  }
  return o;
}

std::vector<Value> order_keys(Stager& s, const std::vector<Value>& items, const OrderOptions& o, const std::string& name,
                              SourceSpan span) {
  std::vector<Value> keys;
  for (const Value& item : items) {
    if (o.key.is<NoneV>()) {
      keys.push_back(item);
      continue;
    }
    Args call;
    call.pos = {item};
    call.span = span;
    keys.push_back(s.call_value(o.key, call));
    if (keys.back().is<Staged>() || keys.back().is<TensorListV>())
      s.fail(span, name + "(key=...): the key of an item is known only at run time; the order must be static "
                          "(use sg.argsort or sg.argmax on a tensor of keys)");
  }
  return keys;
}

bool static_less(Stager& s, const Value& x, const Value& y, const std::string& name, SourceSpan span) {
  const Value lt = s.compare(CmpOp::kLt, x, y, span);
  if (!lt.is<bool>())
    s.fail(span, name + "() compares values known only at run time; the order must be static (use sg.sort or sg.argsort)");
  return lt.as<bool>();
}

Value builtin_min_max(Stager& s, Args& a, const std::string& name) {
  const SourceSpan span = a.span;
  const OrderOptions o = order_options(s, a, name);
  if (a.pos.empty()) s.fail(span, name + "() expects at least one argument");
  if (o.fallback && a.pos.size() > 1)
    s.fail(span, "Cannot specify a default for " + name + "() with multiple positional arguments");
  std::vector<Value> items = a.pos.size() == 1 ? (a.pos[0].is_tensor() ? std::vector<Value>{} : s.to_list(a.pos[0], span)) : a.pos;
  if (a.pos.size() == 1 && a.pos[0].is_tensor())
    s.fail(span, name + "() of a tensor: use sg." + name + "(x) to reduce it");
  if (items.empty() && o.fallback) return *o.fallback;
  if (items.empty()) s.fail(span, name + "() arg is an empty sequence");
  if (!o.key.is<NoneV>()) {
    const std::vector<Value> keys = order_keys(s, items, o, name, span);
    size_t best = 0;
    for (size_t i = 1; i < items.size(); ++i)
      if (name == "max" ? static_less(s, keys[best], keys[i], name, span) : static_less(s, keys[i], keys[best], name, span))
        best = i;
    return items[best];
  }
  Value best = items[0];
  for (size_t i = 1; i < items.size(); ++i) {
    const Value& v = items[i];
    if (v.is_tensor() || best.is_tensor()) {
      for (const Value* t : std::initializer_list<const Value*>{&v, &best})
        if (t->is_tensor() && s.tensor_rank(*t) != 0)
          s.fail(span, name + "() of tensors: use sg.maximum/sg.minimum elementwise, or sg." + name + " to reduce");
      best = s.tensor_binary(name == "max" ? ops::OpId::Maximum : ops::OpId::Minimum, best, v, span);
      continue;
    }
    const Value gt = s.compare(name == "max" ? CmpOp::kGt : CmpOp::kLt, v, best, span);
    if (gt.as<bool>()) best = v;
  }
  return best;
}

// Python's sorted: stable, also with reverse=True (equal keys keep their order).
Value builtin_sorted(Stager& s, Args& a, const std::string& name) {
  const SourceSpan span = a.span;
  expect_args(s, a, name, 1, 1);
  const OrderOptions o = order_options(s, a, name);
  if (a.pos[0].is_tensor()) s.fail(span, "sorted() of a tensor: use sg.sort(x)");
  std::vector<Value> items = s.to_list(a.pos[0], span);
  const std::vector<Value> keys = order_keys(s, items, o, name, span);
  std::vector<size_t> order(items.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](size_t i, size_t j) {
    return o.reverse ? static_less(s, keys[j], keys[i], name, span) : static_less(s, keys[i], keys[j], name, span);
  });
  std::vector<Value> out;
  for (size_t i : order) out.push_back(items[i]);
  return make_list(std::move(out));
}

Value builtin_abs(Stager& s, Args& a, const std::string& name) {
  const SourceSpan span = a.span;
  expect_args(s, a, name, 1, 1);
  const Value& v = a.pos[0];
  if (v.is_tensor()) {
    Value r = s.apply(ops::OpId::Abs, {}, {v}, span);
    if (const WeakOrigin* w = s.weak_origin(v)) s.loops().mark_weak(r, *w);  // abs(i) is a Python int too
    return r;
  }
  if (v.is<double>()) return Value(std::fabs(v.as<double>()));
  if (v.is<int64_t>() || v.is<bool>()) {
    const int64_t i = v.is<bool>() ? v.as<bool>() : v.as<int64_t>();
    if (i == INT64_MIN) s.fail(span, "integer overflow at compile time");
    return Value(i < 0 ? -i : i);
  }
  s.fail(span, "bad operand type for abs(): '" + type_name(v) + "'");
}

Value builtin_number(Stager& s, Args& a, const std::string& name) {
  const SourceSpan span = a.span;
  expect_args(s, a, name, 0, 1);
  if (a.pos.empty()) return name == "int" ? Value(int64_t(0)) : name == "float" ? Value(0.0) : Value(false);
  const Value& v = a.pos[0];
  if (v.is<Staged>()) s.fail(span, name + "(): value is only known at run time");
  if (name == "bool") return Value(s.truth(v, span, "bool()"));
  double d = 0;
  if (v.is<StaticTensorPtr>()) {
    const StaticTensor& t = *v.as<StaticTensorPtr>();
    if (t.numel() != 1) s.fail(span, name + "() of a tensor with more than one element");
    if (name == "int" && t.dtype != DType::kF32 && t.dtype != DType::kF16) return Value(t.element_as_int(0));
    d = t.element_as_double(0);
  } else if (v.is<std::string>()) {
    const std::string& text = v.as<std::string>();
    char* endp = nullptr;
    if (name == "int") {
      const long long i = std::strtoll(text.c_str(), &endp, 10);
      if (text.empty() || *endp) s.fail(span, "invalid literal for int(): '" + text + "'");
      return Value(int64_t(i));
    }
    d = std::strtod(text.c_str(), &endp);
    if (text.empty() || *endp) s.fail(span, "could not convert string to float: '" + text + "'");
    return Value(d);
  } else if (v.is<double>()) {
    d = v.as<double>();
  } else if (v.is<int64_t>() || v.is<bool>()) {
    const int64_t i = v.is<bool>() ? v.as<bool>() : v.as<int64_t>();
    return name == "int" ? Value(i) : Value(double(i));
  } else {
    s.fail(span, name + "() argument must be a number, got " + type_name(v));
  }
  if (name == "float") return Value(d);
  if (!std::isfinite(d) || std::fabs(d) >= 9.2e18) s.fail(span, "cannot convert " + format_float(d) + " to int");
  return Value(int64_t(std::trunc(d)));
}

Value builtin_enumerate(Stager& s, Args& a, const std::string&) {
  const SourceSpan span = a.span;
  int64_t start = s.enumerate_start(a);
  std::vector<Value> out;
  for (Value& v : s.to_list(a.pos[0], span)) out.push_back(make_tuple({Value(start++), std::move(v)}));
  return make_list(std::move(out));
}

Value builtin_zip(Stager& s, Args& a, const std::string&) {
  const SourceSpan span = a.span;
  std::vector<std::vector<Value>> lists;
  size_t n = a.pos.empty() ? 0 : SIZE_MAX;
  for (const Value& v : a.pos) {
    lists.push_back(s.to_list(v, span));
    n = std::min(n, lists.back().size());
  }
  std::vector<Value> out;
  for (size_t i = 0; i < n; ++i) {
    std::vector<Value> t;
    for (auto& l : lists) t.push_back(l[i]);
    out.push_back(make_tuple(std::move(t)));
  }
  return make_list(std::move(out));
}

Value builtin_isinstance(Stager& s, Args& a, const std::string& name) {
  const SourceSpan span = a.span;
  expect_args(s, a, name, 2, 2);
  const Value& t = a.pos[1];
  if (t.is<TuplePtr>()) {
    for (const Value& x : *t.as<TuplePtr>())
      if (is_instance(a.pos[0], x)) return Value(true);
    return Value(false);
  }
  if (!t.is<BuiltinV>() && !t.is<ClassPtr>()) s.fail(span, "isinstance() arg 2 must be a type or a tuple of types");
  return Value(is_instance(a.pos[0], t));
}

Value builtin_sequence(Stager& s, Args& a, const std::string& name) {
  const SourceSpan span = a.span;
  expect_args(s, a, name, name == "reversed" ? 1 : 0, 1);
  std::vector<Value> items = a.pos.empty() ? std::vector<Value>{} : s.to_list(a.pos[0], span);
  if (name == "reversed") std::reverse(items.begin(), items.end());
  return name == "tuple" ? make_tuple(std::move(items)) : make_list(std::move(items));
}

Value builtin_fstring(Stager& s, Args& a, const std::string&) {
  // The lexer's form of an f-string (lexer.h): text, then per field the value,
  // its conversion and its spec, then text.
  std::vector<Value> parts;
  std::string text = a.pos[0].as<std::string>();
  for (size_t i = 1; i + 3 < a.pos.size(); i += 4) {
    const Value& v = a.pos[i].is<TensorListV>()
                         ? Value(s.resolve_tensor_list(a.pos[i].as<TensorListV>(), "list", a.pos_spans[i]))
                         : a.pos[i];
    const std::string& conversion = a.pos[i + 1].as<std::string>();
    const std::string& spec = a.pos[i + 2].as<std::string>();
    if (v.is<Staged>()) {
      if (!spec.empty())
        s.fail(a.pos_spans[i], "f-string: the format spec ':" + spec +
                                 "' of a value known only at run time is not supported (print shows the value "
                                 "as the runtime formats it)");
      parts.push_back(Value(text));
      parts.push_back(v);
      text.clear();
    } else if (!conversion.empty() && conversion != "s") {
      text += py_repr(v);
    } else if (spec.empty()) {
      text += py_str(v);
    } else {
      const std::optional<std::string> formatted = format_with_spec(v, spec);
      if (!formatted)
        s.fail(a.pos_spans[i], "f-string: format spec ':" + spec + "' is not supported for " + type_name(v));
      text += *formatted;
    }
    text += a.pos[i + 3].as<std::string>();
  }
  if (parts.empty()) return Value(text);
  parts.push_back(Value(text));
  return Value(FormattedV{std::move(parts)});
}

Value builtin_sum(Stager& s, Args& a, const std::string& name) {
  const SourceSpan span = a.span;
  expect_args(s, a, name, 1, 2);
  Value total = a.pos.size() == 2 ? a.pos[1] : Value(int64_t(0));
  for (const auto& [k, v] : a.kw) {
    if (k != "start") s.fail(span, "sum() got an unexpected keyword argument '" + k + "'");
    total = v;
  }
  const Value& over = a.pos[0];
  if (over.is_tensor() && s.tensor_rank(over) > 0 && !s.tensor_type(over).shape[0].as_static())
    s.fail(span, "sum() of a tensor whose first dim is known only at run time: use sg.sum(x, axis=0)");
  s.iterate(over, span, "sum()", [&](const Value& v) {
    total = s.binary(BinOp::kAdd, total, v, span);
    return true;
  });
  return total;
}

Value builtin_any_all(Stager& s, Args& a, const std::string& name) {
  const SourceSpan span = a.span;
  // Python's any/all over a static sequence; staged scalar items combine with
  // logical_or/logical_and (each item is already evaluated, so nothing short-circuits).
  expect_args(s, a, name, 1, 1);
  if (a.pos[0].is_tensor()) s.fail(span, name + "() of a tensor: use sg." + name + "(x)");
  const bool is_any = name == "any";
  std::optional<Value> staged_part;
  bool decided = false;
  for (const Value& v : s.to_list(a.pos[0], span)) {
    if (v.is<Staged>()) {
      if (s.tensor_rank(v) != 0)
        s.fail(span, name + "() of a non-scalar tensor item " + s.module().format_type(s.tensor_type(v)) + ": use sg." +
                       name + " to reduce it");
      Value b = s.tensor_dtype(v) == DType::kBool ? v : s.tensor_binary(ops::OpId::NotEqual, v, Value(int64_t(0)), span);
      staged_part = staged_part ? s.tensor_binary(is_any ? ops::OpId::LogicalOr : ops::OpId::LogicalAnd, *staged_part,
                                                b, span)
                                : b;
    } else if (s.truth(v, span, name + "()") == is_any) {
      decided = true;  // a static True for any (False for all) settles it
    }
  }
  if (decided || !staged_part) return Value(decided ? is_any : !is_any);
  return *staged_part;
}

Value builtin_str(Stager& s, Args& a, const std::string& name) {
  const SourceSpan span = a.span;
  expect_args(s, a, name, 0, 1);
  if (!a.pos.empty() && a.pos[0].is<Staged>()) s.fail(span, "str(): value is only known at run time");
  return Value(a.pos.empty() ? std::string() : py_str(a.pos[0]));
}

Value builtin_dict(Stager& s, Args& a, const std::string& name) {
  const SourceSpan span = a.span;
  // dict(), dict(mapping or pairs), dict(key=value, ...): a new dict, keys in order.
  expect_args(s, a, name, 0, 1);
  auto d = std::make_shared<DictObj>();
  auto put = [&](const Value& key, const Value& v) {
    if (key.is_tensor()) s.fail(span, "dict keys must be static");
    for (auto& kv : d->items)
      if (static_equal(kv.first, key).value_or(false)) {
        kv.second = v;
        return;
      }
    d->items.emplace_back(key, v);
  };
  if (!a.pos.empty()) {
    if (a.pos[0].is<DictPtr>()) {
      for (const auto& [k, v] : a.pos[0].as<DictPtr>()->items) put(k, v);
    } else {
      for (const Value& pair : s.to_list(a.pos[0], span)) {
        std::vector<Value> kv = pair.is<TuplePtr>() || pair.is<ListPtr>() ? s.to_list(pair, span) : std::vector<Value>{};
        if (kv.size() != 2) s.fail(span, "dict(): each item of the sequence must be a (key, value) pair");
        put(kv[0], kv[1]);
      }
    }
  }
  for (const auto& [key, v] : a.kw) put(Value(key), v);
  return Value(DictPtr(d));
}

const std::pair<const char*, Value (*)(Stager&, Args&, const std::string&)> kBuiltinHandlers[] = {
    {"len", builtin_len},
    {"range", builtin_range},
    {"min", builtin_min_max},
    {"max", builtin_min_max},
    {"abs", builtin_abs},
    {"int", builtin_number},
    {"float", builtin_number},
    {"bool", builtin_number},
    {"enumerate", builtin_enumerate},
    {"zip", builtin_zip},
    {"isinstance", builtin_isinstance},
    {"list", builtin_sequence},
    {"tuple", builtin_sequence},
    {"reversed", builtin_sequence},
    {"$fstring", builtin_fstring},
    {"sum", builtin_sum},
    {"any", builtin_any_all},
    {"all", builtin_any_all},
    {"str", builtin_str},
    {"dict", builtin_dict},
    {"sorted", builtin_sorted},
};

}  // namespace

Value Stager::call_builtin(const std::string& name, Args& a) {
  const SourceSpan span = a.span;
  if (name.rfind("math.", 0) == 0) return call_math(name.substr(5), a);
  if (Records::is_class_builtin(name) || name.find('.') != std::string::npos || name == "$object_init")
    return records().call_class_builtin(name, a);
  // Named tuples are tuples to the builtins.
  for (Value& p : a.pos)
    if (std::optional<Value> t = record_as_tuple(p); t && name != "isinstance" && name != "print" && name != "str")
      p = *t;
  if (name == "print") {
    std::string sep = " ", end = "\n";
    for (auto& [k, v] : a.kw) {
      if (k == "sep" && v.is<std::string>()) sep = v.as<std::string>();
      else if (k == "end" && v.is<std::string>()) end = v.as<std::string>();
      else fail(span, "print() got an unsupported keyword argument '" + k + "'");
    }
    bool any_staged = false;
    for (const Value& v : a.pos)
      any_staged = any_staged || v.is<Staged>() || v.is<TensorListV>() || v.is<FormattedV>();
    if (any_staged) {
      stage_print(a, sep, end);
      return Value();
    }
    std::string line;
    for (size_t i = 0; i < a.pos.size(); ++i) line += (i ? sep : "") + py_str(a.pos[i]);
    if (options_.compile_time_stdout) print_out(options_.compile_time_stdout, line + end);
    return Value();
  }
  if (!a.kw.empty() && name != "enumerate" && name != "dict" && name != "min" && name != "max" && name != "sorted")
    fail(span, name + "() takes no keyword arguments");
  for (const auto& [builtin, handler] : kBuiltinHandlers)
    if (name == builtin) return handler(*this, a, name);
  fail(span, "unsupported builtin '" + name + "'");
}

}  // namespace sg::compiler::staging
