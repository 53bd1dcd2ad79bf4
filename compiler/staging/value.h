// The values the stager computes with (SPEC.md §3): Python values, static
// tensors (known now, computed by the reference kernels) and staged tensors (IR
// values of a graph function under construction).
//
// Lists and dicts are shared objects, as in Python (append through one name is
// seen through every other); tuples, numbers and strings are plain values.
#pragma once

#include <cmath>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "frontend/ast.h"
#include "ir/ir.h"
#include "stagegraph/dtype.h"

namespace sg::compiler::staging {

class Scope;
struct Value;

// Where a tensor's shape came from, for `note:` lines (SPEC §8): "x declared as"
// or "`h @ w2` produced", followed by the type and "here".
struct Origin {
  SourceSpan span;
  std::string what;
};

// A tensor known at compile time, C order. A splat holds one element and stands
// for a tensor of `shape` filled with it: zeros/ones/full stay this small and
// become a `full` node, so constant folding never makes the file bigger.
struct StaticTensor {
  DType dtype = DType::kF32;
  std::vector<int64_t> shape;
  std::vector<uint8_t> bytes;
  bool splat = false;
  Origin origin;
  // sg.weight(name, quantize=...): the weight's name, the storage asked for, and
  // its f32 values as read (`bytes` then holds them quantized and widened back, as
  // eager mode computes with them; the graph file stores them quantized).
  std::string weight;
  std::string quantize;
  std::shared_ptr<const std::vector<uint8_t>> unquantized;

  int64_t numel() const;
  // The dense bytes (a splat repeated numel() times).
  std::vector<uint8_t> dense_bytes() const;
  // Element `i` (of the dense tensor) as a double / an int64.
  double element_as_double(int64_t i) const;
  int64_t element_as_int(int64_t i) const;
};
using StaticTensorPtr = std::shared_ptr<const StaticTensor>;

// A tensor known only at run time: value `id` of IR function `fn`. An integer
// 0-d value taken from a symbolic dim (x.shape[i], len(x)) keeps that dim in
// `known`, so it can be used as a shape without losing the dim's identity.
struct Staged {
  int32_t fn = -1;
  int32_t id = -1;
  std::optional<ir::Dim> known;
};

struct NoneV { bool operator==(const NoneV&) const = default; };
struct EllipsisV { bool operator==(const EllipsisV&) const = default; };
// `import stagegraph as sg` binds the module; sg.NAME is an SgMember unless NAME
// is a dtype.
struct SgModuleV {};
struct SgMember { std::string name; };
struct BuiltinV { std::string name; };
struct DTypeV { DType dtype; };
// A parameter annotation: sg.f32[N, 784]. Dims: static ints or symbol names.
struct AnnotationV {
  DType dtype;
  std::vector<std::variant<int64_t, std::string>> dims;
};
struct RangeV { int64_t start = 0, stop = 0, step = 1; int64_t size() const; };

struct ClassObj;

struct FunctionV {
  const FunctionDef* def = nullptr;
  std::shared_ptr<Scope> closure;  // the scope the def statement ran in
  std::vector<std::shared_ptr<Value>> defaults;  // per param; null: none
  bool is_entry = false;           // decorated @sg.function
  // A method: the class whose body defined it (for super()), and how it binds.
  std::weak_ptr<ClassObj> owner;
  enum class Binding : uint8_t { kInstance, kStatic, kClass, kProperty } binding = Binding::kInstance;
};

struct ListObj { std::vector<Value> items; };
struct DictObj { std::vector<std::pair<Value, Value>> items; };  // insertion order
using ListPtr = std::shared_ptr<ListObj>;
using DictPtr = std::shared_ptr<DictObj>;
using TuplePtr = std::shared_ptr<const std::vector<Value>>;

// A method looked up on a value: x.astype, xs.append, ...
struct BoundMethod {
  std::string name;
  std::shared_ptr<Value> self;
};

// A module-level class (classes.h): its methods and class attributes, its base
// among the module's classes (or a builtin exception), and the record kinds
// whose __init__ the compiler writes (namedtuple, NamedTuple, dataclass).
struct ClassObj {
  // kModule: one of stagegraph's modules written in the staged language
  // (stagegraph.optim): its attrs are the module's names.
  enum class Kind : uint8_t { kPlain, kNamedTuple, kDataclass, kException, kModule };
  std::string name;
  const ClassDef* def = nullptr;  // null for collections.namedtuple
  std::shared_ptr<ClassObj> base;
  std::string builtin_base;       // kException: the builtin exception it derives from
  Kind kind = Kind::kPlain;
  bool frozen = false;            // a frozen dataclass or a named tuple
  std::map<std::string, std::shared_ptr<Value>> attrs;  // methods and class attributes
  std::vector<std::string> fields;                      // records: in order
  std::map<std::string, std::shared_ptr<Value>> field_defaults;
  std::map<std::string, std::shared_ptr<Value>> field_factories;  // dataclasses.field(default_factory=...)
};
using ClassPtr = std::shared_ptr<ClassObj>;

// An instance: a compile-time object whose attributes (a dict, so that staged
// branches and loops carry them like a dict's items) may hold staged values.
struct InstanceObj {
  ClassPtr cls;
  std::shared_ptr<struct DictObj> attrs;
};
using InstancePtr = std::shared_ptr<InstanceObj>;

// A user method bound to its instance (or class, for a classmethod).
struct BoundFunction {
  std::shared_ptr<FunctionV> fn;
  std::shared_ptr<Value> self;
};

// super() in a method: attribute lookup starts at `start`, binding `self`.
struct SuperV {
  ClassPtr start;
  std::shared_ptr<Value> self;
};

// An exception value (raise, except ... as e): its class names from the most
// derived up to BaseException, and its arguments' text.
struct ExceptionV {
  std::vector<std::string> types;
  std::string message;
};

// `import collections` / `typing` / `dataclasses`: only the record makers are used.
struct PyModuleV {
  std::string name;
};

// A variable assigned in only one branch of a staged `if`: reading it is an error.
struct UndefinedV {
  std::string name;
  std::string missing_in;  // "the else branch"
  SourceSpan span;
  std::string message;     // when set, the whole error (a staged loop's variables)
  // A module-level constant whose assignment failed, already reported: a use
  // stops quietly instead of adding "not defined".
  bool reported = false;
};

// A list appended to inside a staged loop (SPEC §5): a tensor whose leading
// dim counts the items. Without `tensor` it is the loop's incoming value, whose
// element type is known only after the first append (control_state.h).
struct TensorListSlot;
struct TensorListV {
  std::shared_ptr<TensorListSlot> slot;
  std::optional<Staged> tensor;
};

// An f-string with values known only at run time: its text parts (std::string)
// and staged values in order. Only print takes it (a Print node's format).
struct FormattedV {
  std::vector<Value> parts;
};

// A function made by sg.grad, sg.value_and_grad, sg.checkpoint, or the pullback
// sg.vjp returns (sg_grad.cc).
struct PullbackData;
struct TransformV {
  enum class Kind : uint8_t { kGrad, kValueAndGrad, kCheckpoint, kPullback } kind = Kind::kGrad;
  std::shared_ptr<Value> fn;
  std::vector<int64_t> argnums{0};
  bool argnums_tuple = false;
  bool has_aux = false;
  int64_t segment = 0;  // sg.checkpoint(f, segment=...), 0 for the sqrt(T) schedule
  std::shared_ptr<PullbackData> pullback;
};

// Program state made by sg.variables (SPEC §12, sg_variables.cc): per attribute, its
// initial structure; per leaf path, the module variable it is.
struct VariablesObj {
  std::vector<std::pair<std::string, std::shared_ptr<struct Value>>> attrs;
  std::map<std::string, int32_t> leaves;
};
using VariablesPtr = std::shared_ptr<VariablesObj>;

struct Value {
  using Data = std::variant<NoneV, bool, int64_t, double, std::string, TuplePtr, ListPtr, DictPtr,
                            StaticTensorPtr, Staged, SgModuleV, SgMember, BuiltinV, DTypeV,
                            AnnotationV, RangeV, std::shared_ptr<FunctionV>, BoundMethod,
                            EllipsisV, UndefinedV, TensorListV, FormattedV, ClassPtr, InstancePtr,
                            BoundFunction, SuperV, ExceptionV, PyModuleV, TransformV, VariablesPtr>;
  Data data;

  Value() : data(NoneV{}) {}
  template <class T>
  Value(T v) : data(std::move(v)) {}  // NOLINT(implicit): values are built from their parts

  template <class T> bool is() const { return std::holds_alternative<T>(data); }
  template <class T> const T& as() const { return std::get<T>(data); }
  template <class T> T& as() { return std::get<T>(data); }

  bool is_tensor() const { return is<StaticTensorPtr>() || is<Staged>(); }
  // A Python number (bool included).
  bool is_number() const { return is<bool>() || is<int64_t>() || is<double>(); }
};

Value make_tuple(std::vector<Value> items);
Value make_list(std::vector<Value> items);

// "int", "tuple", "tensor", ... for messages.
std::string type_name(const Value& v);

// A double truncated toward zero to int64, clamped at its ends and 0 for NaN: no
// undefined conversion for values beyond int64 (callers that must refuse them
// check first).
inline int64_t saturating_int64(double d) {
  if (std::isnan(d)) return 0;
  if (d >= 0x1p63) return INT64_MAX;
  if (d < -0x1p63) return INT64_MIN;
  return int64_t(d);
}

// Python's str()/repr() of a static value (static print, messages). Tensors
// print as NumPy does for small ones ("[1. 2.]") and as their type otherwise.
std::string py_str(const Value& v);
std::string py_repr(const Value& v);
std::string format_float(double d);

// Static equality (==) of two static Python values; nullopt when the kinds
// cannot be compared statically (tensors).
std::optional<bool> static_equal(const Value& a, const Value& b);

// A scalar static tensor of `dtype` holding `v`.
StaticTensorPtr scalar_tensor(DType dtype, double v, int64_t iv, Origin origin = {});
// The dtype a Python number takes on its own (SPEC §3): int -> i64, float -> f32.
DType python_number_dtype(const Value& v);

}  // namespace sg::compiler::staging
