// stagegraph._runtime: the runtime in process (SPEC §14). Program and Session over
// the C++ API (stagegraph/runtime.h), linked statically.
//
//   - Inputs are bound in place: a NumPy array, anything with the buffer protocol
//     or DLPack (nanobind's ndarray) becomes a Tensor::wrap of its memory, kept
//     alive by the Session until the entry's next call. A dtype, rank or shape that
//     does not match the signature is a ValueError naming the input; nothing is
//     converted (a Python scalar for a 0-d input is the one exception).
//   - Outputs are NumPy arrays over the Tensor Session::output() returns (a buffer
//     of the runtime's allocator), owned through a capsule: no copy in the binding.
//   - The GIL is released while a run runs; graph print lines are written to
//     sys.stdout after it.
//   - A Python Session serves every entry of its Program, one C++ Session per
//     entry made on first use, and is used by one thread at a time as a C++
//     Session is: a second thread calling it meanwhile gets a RuntimeError.
//     cancel() is the exception, from any thread.
// This run path (bind, run, wrap outputs) is what later callers reuse (eager mode
// on one-node programs, serving): PySession::call.
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/string_view.h>
#include <nanobind/stl/vector.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "device_capsule.h"
#include "op_graph.h"
#include "stagegraph/runtime.h"

// NumPy's C API, for the hot path: an ndarray input is read and an output array
// made without going through DLPack or the buffer protocol (about 1 us each way
// less); anything else takes nanobind's ndarray path.
#define NPY_NO_DEPRECATED_API NPY_1_7_API_VERSION
#define PY_ARRAY_UNIQUE_SYMBOL sg_numpy_api
#include <numpy/arrayobject.h>

namespace nb = nanobind;

namespace {

using ProgramPtr = std::shared_ptr<const sg::Program>;

// ---- errors ----

// Raises the Python exception for a failed Status: ValueError for what the caller
// passed (inputs, bad options), FileNotFoundError for a missing file, and
// stagegraph.RunError (with .code, .file, .line) for what failed while running.
[[noreturn]] void raise_status(const sg::Status& s, const char* what = nullptr) {
  std::string message = what != nullptr ? std::string(what) + ": " + s.message() : s.message();
  switch (s.code()) {
    case sg::StatusCode::kInvalidInput:
    case sg::StatusCode::kInvalidArgument:
    case sg::StatusCode::kInvalidGraph:
    case sg::StatusCode::kUnsupported:
      throw nb::value_error(message.c_str());
    case sg::StatusCode::kNotFound:
      PyErr_SetString(PyExc_FileNotFoundError, message.c_str());
      throw nb::python_error();
    case sg::StatusCode::kRuntimeError:
    case sg::StatusCode::kLimitExceeded:
    case sg::StatusCode::kOutOfMemory:
    case sg::StatusCode::kCancelled:
    case sg::StatusCode::kDeadlineExceeded: {
      nb::object cls = nb::module_::import_("stagegraph._errors").attr("RunError");
      nb::object err = cls(message, sg::status_code_name(s.code()));
      PyErr_SetObject(cls.ptr(), err.ptr());
      throw nb::python_error();
    }
    default:
      throw std::runtime_error(message);
  }
}

// ---- dtypes ----

std::optional<sg::DType> from_dlpack(nb::dlpack::dtype t) {
  using C = nb::dlpack::dtype_code;
  if (t.lanes != 1) return std::nullopt;
  if (t.code == uint8_t(C::Float) && t.bits == 32) return sg::DType::kF32;
  if (t.code == uint8_t(C::Float) && t.bits == 16) return sg::DType::kF16;
  if (t.code == uint8_t(C::Int) && t.bits == 32) return sg::DType::kI32;
  if (t.code == uint8_t(C::Int) && t.bits == 64) return sg::DType::kI64;
  if (t.code == uint8_t(C::Bool) && t.bits == 8) return sg::DType::kBool;
  return std::nullopt;
}

std::string dlpack_name(nb::dlpack::dtype t) {
  using C = nb::dlpack::dtype_code;
  const char* kind = t.code == uint8_t(C::Int)      ? "int"
                     : t.code == uint8_t(C::UInt)   ? "uint"
                     : t.code == uint8_t(C::Float)  ? "float"
                     : t.code == uint8_t(C::Bfloat) ? "bfloat"
                     : t.code == uint8_t(C::Bool)   ? "bool"
                     : t.code == uint8_t(C::Complex) ? "complex"
                                                     : "unknown";
  std::string s = kind + std::to_string(t.bits);
  if (t.lanes != 1) s += "x" + std::to_string(t.lanes);
  return s;
}

// ---- outputs ----

int numpy_type(sg::DType t) {
  switch (t) {
    case sg::DType::kF32: return NPY_FLOAT32;
    case sg::DType::kF16: return NPY_FLOAT16;
    case sg::DType::kI32: return NPY_INT32;
    case sg::DType::kI64: return NPY_INT64;
    case sg::DType::kBool: return NPY_BOOL;
  }
  return NPY_FLOAT32;
}

// The dtype of a NumPy array the runtime can take (native byte order), if any.
std::optional<sg::DType> from_numpy(PyArrayObject* a) {
  if (!PyArray_ISNOTSWAPPED(a)) return std::nullopt;
  const char kind = PyArray_DESCR(a)->kind;
  const npy_intp size = PyArray_ITEMSIZE(a);
  if (kind == 'f' && size == 4) return sg::DType::kF32;
  if (kind == 'f' && size == 2) return sg::DType::kF16;
  if (kind == 'i' && size == 4) return sg::DType::kI32;
  if (kind == 'i' && size == 8) return sg::DType::kI64;
  if (kind == 'b' && size == 1) return sg::DType::kBool;
  return std::nullopt;
}

// A NumPy array over `t`'s buffer, owning a reference to it (the capsule's Tensor):
// no copy; the buffer is freed when the array and every view of it are.
nb::object to_numpy(sg::Tensor&& t) {
  auto* held = new sg::Tensor(std::move(t));
  PyObject* owner = PyCapsule_New(held, "stagegraph.Tensor", [](PyObject* c) {
    delete static_cast<sg::Tensor*>(PyCapsule_GetPointer(c, "stagegraph.Tensor"));
  });
  if (owner == nullptr) {
    delete held;
    throw nb::python_error();
  }
  npy_intp dims[sg::kMaxRank];
  for (int a = 0; a < held->rank(); ++a) dims[a] = npy_intp(held->dim(a));
  static char empty_data[sg::kTensorAlignment];
  void* data = held->data() != nullptr ? held->data() : empty_data;  // a 0-element tensor
  PyObject* array = PyArray_New(&PyArray_Type, held->rank(), dims, numpy_type(held->dtype()), nullptr, data, 0,
                                NPY_ARRAY_CARRAY, nullptr);
  if (array == nullptr || PyArray_SetBaseObject(reinterpret_cast<PyArrayObject*>(array), owner) != 0) {
    Py_XDECREF(array);
    if (array == nullptr) Py_DECREF(owner);  // SetBaseObject steals it even when it fails
    throw nb::python_error();
  }
  return nb::steal(array);
}

// ---- signatures ----

nb::tuple shape_tuple(const sg::TensorSpec& s) {
  nb::list dims;
  for (size_t a = 0; a < s.shape.size(); ++a) {
    if (s.shape[a] >= 0) dims.append(nb::int_(s.shape[a]));
    else dims.append(nb::str(s.dim_names[a].c_str()));
  }
  return nb::tuple(dims);
}

struct PyTensorSpec {
  std::string name;
  std::string dtype;
  nb::tuple shape;
  std::string text;  // "x: f32[N, 784]"
  std::string repr() const { return "TensorSpec(" + text + ")"; }
};

PyTensorSpec to_py(const sg::TensorSpec& s) {
  return {s.name, sg::dtype_name(s.dtype), shape_tuple(s), s.name + ": " + sg::dtype_name(s.dtype) + s.shape_string()};
}

struct PyEntry {
  std::string name;
  std::vector<PyTensorSpec> inputs;
  std::vector<PyTensorSpec> outputs;
  std::vector<std::string> reads;   // variables read, by path
  std::vector<std::string> writes;  // variables assigned
};

// ---- Program ----

struct PyProgram {
  ProgramPtr program;
  nb::object keep;  // the bytes a Program loaded from memory may use in place
};

PyProgram load_file(const std::string& path, bool verify_data, bool dynamic_quantization) {
  sg::LoadOptions o;
  o.verify_data = verify_data;
  o.dynamic_quantization = dynamic_quantization;
  sg::Result<ProgramPtr> p = [&] {
    nb::gil_scoped_release release;
    return sg::Program::load_file(path, o);
  }();
  if (!p.ok()) raise_status(p.status());
  return {std::move(*p), nb::none()};
}

PyProgram load_bytes(nb::bytes data, bool verify_data, bool dynamic_quantization) {
  sg::LoadOptions o;
  o.verify_data = verify_data;
  o.dynamic_quantization = dynamic_quantization;
  const auto* bytes = reinterpret_cast<const uint8_t*>(data.c_str());
  const size_t size = data.size();
  sg::Result<ProgramPtr> p = [&] {
    nb::gil_scoped_release release;
    return sg::Program::load_memory(sg::Span<const uint8_t>(bytes, size), o);
  }();
  if (!p.ok()) raise_status(p.status());
  return {std::move(*p), data};
}

// ---- Session ----

class PySession;

// session.<entry>: calls that entry.
struct EntryCall {
  PySession* session;
  nb::object owner;  // the Python Session, kept alive while the callable lives
  size_t entry;
};

class PySession {
 public:
  // `keep` owns the bytes a Program loaded from memory reads in place: the Session
  // holds it too, so a Session outlives the Python Program it came from.
  PySession(ProgramPtr program, nb::object keep, sg::SessionOptions options)
      : keep_(std::move(keep)), program_(std::move(program)), options_(std::move(options)) {
    const auto& entries = program_->entries();
    slots_.resize(entries.size());
    for (auto& s : slots_) s = std::make_unique<Slot>();
    options_.text_callback = [this](sg::TextKind kind, std::string_view text) {
      if (kind == sg::TextKind::kPrint) prints_.append(text).push_back('\n');
    };
  }

  const ProgramPtr& program() const { return program_; }

  size_t entry_index(std::string_view name) const {
    const auto& entries = program_->entries();
    for (size_t e = 0; e < entries.size(); ++e)
      if (entries[e].name == name) return e;
    std::string known;
    for (const auto& e : entries) known += (known.empty() ? "" : ", ") + e.name;
    throw nb::value_error(("no entry '" + std::string(name) + "' in this program (its entries: " + known + ")").c_str());
  }

  // Binds the inputs, runs entry `e` with the GIL released and returns its
  // outputs: one array, or a dict by name when the entry has several (or none).
  nb::object call(size_t e, nb::args args, nb::kwargs kwargs) {
    Use use(this);
    sg::Session& s = session(e);
    Slot& slot = *slots_[e];
    const sg::EntryInfo& info = s.entry();
    const size_t n_in = info.inputs.size();
    if (args.size() > n_in)
      throw nb::type_error(("entry '" + info.name + "' takes " + std::to_string(n_in) + " inputs (" +
                            std::to_string(args.size()) + " given)").c_str());
    uint64_t given_small = 0;
    std::vector<bool> given_large(n_in > 64 ? n_in : 0);
    auto mark = [&](size_t k) {
      bool seen;
      if (n_in <= 64) {
        seen = (given_small >> k) & 1;
        given_small |= uint64_t(1) << k;
      } else {
        seen = given_large[k];
        given_large[k] = true;
      }
      if (seen)
        throw nb::type_error(("input '" + info.inputs[k].name + "' of entry '" + info.name + "' given twice").c_str());
    };
    for (size_t k = 0; k < args.size(); ++k) {
      mark(k);
      bind(s, slot, info, k, nb::handle(PyTuple_GET_ITEM(args.ptr(), Py_ssize_t(k))));
    }
    for (auto [key, value] : kwargs) {
      const char* name = PyUnicode_AsUTF8(key.ptr());
      if (name == nullptr) throw nb::python_error();
      size_t k = n_in;
      for (size_t i = 0; i < n_in; ++i)
        if (info.inputs[i].name == name) k = i;
      if (k == n_in) {
        sg::Result<size_t> r = s.input_index(name);  // the runtime's message, naming the inputs there are
        raise_status(r.ok() ? sg::Status(sg::StatusCode::kInvalidInput, "unknown input '" + std::string(name) + "'")
                            : r.status(),
                     ("entry '" + info.name + "'").c_str());
      }
      mark(k);
      bind(s, slot, info, k, value);
    }
    for (size_t k = 0; k < n_in; ++k) {
      const bool given = n_in <= 64 ? ((given_small >> k) & 1) != 0 : bool(given_large[k]);
      if (!given)
        throw nb::type_error(("missing input '" + info.inputs[k].name + "' of entry '" + info.name + "'").c_str());
    }
    if (!info.reads.empty()) take_variables(e);
    run(s);
    if (!info.writes.empty()) var_owner_ = int(e);

    const size_t n_out = info.outputs.size();
    if (n_out == 1) return output(s, 0);
    nb::dict out;
    for (size_t i = 0; i < n_out; ++i) out[info.outputs[i].name.c_str()] = output(s, i);
    return out;
  }

  nb::object run_entry(std::string_view entry, nb::args args, nb::kwargs kwargs) {
    return call(entry_index(entry), std::move(args), std::move(kwargs));
  }

  // Any thread, any time: ends the run in progress, or else the next one.
  void cancel() {
    pending_cancel_.store(true, std::memory_order_release);
    if (sg::Session* s = current_.load(std::memory_order_acquire)) s->cancel();
  }

  nb::dict variables() {
    Use use(this);
    nb::dict out;
    if (program_->variables().empty()) return out;
    sg::Session& s = variable_session();
    for (const sg::TensorSpec& v : program_->variables()) {
      sg::Result<sg::Tensor> t = s.variable(v.name);
      if (!t.ok()) raise_status(t.status());
      out[v.name.c_str()] = to_numpy(std::move(*t));
    }
    return out;
  }

  void save_variables(const std::string& path) {
    Use use(this);
    sg::Session& s = variable_session();
    sg::Status st;
    {
      nb::gil_scoped_release release;
      st = s.save_variables(path);
    }
    if (!st.ok()) raise_status(st, ("save_variables('" + path + "')").c_str());
  }

  void load_variables(const std::string& path) {
    Use use(this);
    sg::Session& s = variable_session();
    sg::Status st;
    {
      nb::gil_scoped_release release;
      st = s.load_variables(path);
    }
    if (!st.ok()) raise_status(st, ("load_variables('" + path + "')").c_str());
  }

  // For the tests: the address output `i` of the entry's last run has in the
  // Session's memory (output_view) and in the buffer output() hands out, and the
  // tensor copies the runtime made.
  uintptr_t output_view_address(size_t e, size_t i) {
    sg::Result<sg::Tensor> t = session(e).output_view(i);
    if (!t.ok()) raise_status(t.status());
    return reinterpret_cast<uintptr_t>(t->data());
  }
  uintptr_t output_address(size_t e, size_t i) {
    sg::Result<sg::Tensor> t = session(e).output(i);
    if (!t.ok()) raise_status(t.status());
    return reinterpret_cast<uintptr_t>(t->data());
  }
  uint64_t tensor_copies(size_t e) { return session(e).tensor_copies(); }

 private:
  struct Slot {
    std::unique_ptr<sg::Session> session;
    // What each bound input wraps, kept alive while the Session may read it.
    std::vector<nb::ndarray<nb::ro>> held;  // DLPack and buffer-protocol inputs
    std::vector<nb::object> arrays;        // NumPy arrays
    std::vector<sg::Tensor> scalars;       // inputs given as Python scalars
  };

  // One user at a time (SPEC §14, runtime.h's rule for Sessions).
  class Use {
   public:
    explicit Use(PySession* s) : s_(s) {
      if (s_->busy_.exchange(true, std::memory_order_acquire))
        throw std::runtime_error(
            "this stagegraph Session is in use by another thread: a Session runs one call at a time "
            "(make a Session per thread with program.session(); cancel() is the one call any thread may make)");
    }
    ~Use() { s_->busy_.store(false, std::memory_order_release); }
    Use(const Use&) = delete;
    Use& operator=(const Use&) = delete;

   private:
    PySession* s_;
  };

  sg::Session& session(size_t e) {
    Slot& slot = *slots_[e];
    if (!slot.session) {
      sg::Result<std::unique_ptr<sg::Session>> s = [&] {
        nb::gil_scoped_release release;  // prepares kernels (packs weights)
        return sg::Session::create(program_, program_->entries()[e].name, options_);
      }();
      if (!s.ok()) raise_status(s.status(), ("creating a session for entry '" + program_->entries()[e].name + "'").c_str());
      slot.held.resize((*s)->entry().inputs.size());
      slot.arrays.resize((*s)->entry().inputs.size());
      slot.scalars.resize((*s)->entry().inputs.size());
      slot.session = std::move(*s);
    }
    return *slot.session;
  }

  void bind(sg::Session& s, Slot& slot, const sg::EntryInfo& info, size_t k, nb::handle value) {
    const sg::TensorSpec& spec = info.inputs[k];
    auto fail = [&](const std::string& why) {
      throw nb::value_error(("input '" + spec.name + "' of entry '" + info.name + "': " + why).c_str());
    };
    if (PyArray_Check(value.ptr())) {
      bind_numpy(s, slot, info, k, reinterpret_cast<PyArrayObject*>(value.ptr()));
      return;
    }
    nb::ndarray<nb::ro> a;
    if (!nb::try_cast(value, a, false)) {
      bind_scalar(s, slot, info, k, value);
      return;
    }
    if (a.device_type() != nb::device::cpu::value)
      fail("it is in device memory (DLPack device type " + std::to_string(a.device_type()) +
           "); pass host memory, e.g. the tensor's .cpu()");
    const std::optional<sg::DType> dt = from_dlpack(a.dtype());
    if (!dt || *dt != spec.dtype)
      fail("it is " + dlpack_name(a.dtype()) + ", the entry takes " + sg::dtype_name(spec.dtype) + spec.shape_string() +
           dtype_hint(spec.dtype));
    const size_t rank = a.ndim();
    if (rank > size_t(sg::kMaxRank)) fail("it has rank " + std::to_string(rank) + ", over the most, 8");
    int64_t dims[sg::kMaxRank];
    int64_t expect = 1;
    bool contiguous = true;
    for (size_t d = rank; d-- > 0;) {
      dims[d] = int64_t(a.shape(d));
      if (dims[d] != 1 && a.stride(d) != expect) contiguous = false;
      expect *= dims[d];
    }
    if (!contiguous && expect != 0)
      fail("it is not C-contiguous (strided or transposed); pass np.ascontiguousarray(x)");
    const sg::Status st = s.set_input(k, sg::Tensor::wrap(*dt, sg::Span<const int64_t>(dims, rank), a.data()));
    if (!st.ok()) raise_status(st, ("entry '" + info.name + "'").c_str());
    slot.held[k] = std::move(a);
    slot.arrays[k] = nb::object();
    slot.scalars[k] = sg::Tensor();
  }

  static std::string dtype_hint(sg::DType t) {
    return std::string(" (convert it first, e.g. x.astype(np.") +
           (t == sg::DType::kF32   ? "float32"
            : t == sg::DType::kF16 ? "float16"
            : t == sg::DType::kI32 ? "int32"
            : t == sg::DType::kI64 ? "int64"
                                   : "bool_") +
           "))";
  }

  void bind_numpy(sg::Session& s, Slot& slot, const sg::EntryInfo& info, size_t k, PyArrayObject* a) {
    const sg::TensorSpec& spec = info.inputs[k];
    auto fail = [&](const std::string& why) {
      throw nb::value_error(("input '" + spec.name + "' of entry '" + info.name + "': " + why).c_str());
    };
    const std::optional<sg::DType> dt = from_numpy(a);
    if (!dt || *dt != spec.dtype)
      fail("it is " + nb::cast<std::string>(nb::str(reinterpret_cast<PyObject*>(PyArray_DESCR(a)))) +
           ", the entry takes " + sg::dtype_name(spec.dtype) + spec.shape_string() + dtype_hint(spec.dtype));
    const int rank = PyArray_NDIM(a);
    if (rank > sg::kMaxRank) fail("it has rank " + std::to_string(rank) + ", over the most, 8");
    if (!PyArray_IS_C_CONTIGUOUS(a) || !PyArray_ISALIGNED(a))
      fail("it is not C-contiguous and aligned (strided or transposed); pass np.ascontiguousarray(x)");
    int64_t dims[sg::kMaxRank];
    const npy_intp* shape = PyArray_DIMS(a);
    for (int d = 0; d < rank; ++d) dims[d] = int64_t(shape[d]);
    const sg::Status st =
        s.set_input(k, sg::Tensor::wrap(*dt, sg::Span<const int64_t>(dims, size_t(rank)), PyArray_DATA(a)));
    if (!st.ok()) raise_status(st, ("entry '" + info.name + "'").c_str());
    slot.arrays[k] = nb::borrow(reinterpret_cast<PyObject*>(a));
    if (slot.held[k].is_valid()) slot.held[k] = nb::ndarray<nb::ro>();
    if (slot.scalars[k].defined() && slot.scalars[k].data() != nullptr) slot.scalars[k] = sg::Tensor();
  }

  // A Python bool, int or float for a 0-d input: the one conversion, exact or refused.
  void bind_scalar(sg::Session& s, Slot& slot, const sg::EntryInfo& info, size_t k, nb::handle value) {
    const sg::TensorSpec& spec = info.inputs[k];
    auto fail = [&](const std::string& why) {
      throw nb::value_error(("input '" + spec.name + "' of entry '" + info.name + "': " + why).c_str());
    };
    const bool is_bool = PyBool_Check(value.ptr());
    const bool is_int = !is_bool && PyLong_Check(value.ptr());
    const bool is_float = PyFloat_Check(value.ptr());
    if (!is_bool && !is_int && !is_float)
      fail("a " + nb::cast<std::string>(nb::str(value.type().attr("__name__"))) +
           " is not an array (pass a NumPy array, an object with the buffer protocol or DLPack, or a Python "
           "number for a 0-d input)");
    if (!spec.shape.empty())
      fail("a Python number for a " + std::string(sg::dtype_name(spec.dtype)) + spec.shape_string() + " input; pass an array");
    sg::Result<sg::Tensor> t = sg::Tensor::empty(spec.dtype, {});
    if (!t.ok()) raise_status(t.status());
    const char* kind = is_bool ? "bool" : is_int ? "int" : "float";
    switch (spec.dtype) {
      case sg::DType::kBool:
        if (!is_bool) fail(std::string("a Python ") + kind + " for a bool input");
        *t->data_as<bool>() = value.ptr() == Py_True;
        break;
      case sg::DType::kI32:
      case sg::DType::kI64: {
        if (!is_int) fail(std::string("a Python ") + kind + " for an integer input");
        int overflow = 0;
        const long long v = PyLong_AsLongLongAndOverflow(value.ptr(), &overflow);
        const bool i32 = spec.dtype == sg::DType::kI32;
        if (overflow != 0 || (i32 && (v < INT32_MIN || v > INT32_MAX)))
          fail(std::string("the value does not fit ") + sg::dtype_name(spec.dtype));
        if (i32) *t->data_as<int32_t>() = int32_t(v);
        else *t->data_as<int64_t>() = int64_t(v);
        break;
      }
      case sg::DType::kF32: {
        if (is_bool) fail("a Python bool for an f32 input");
        const double v = PyFloat_AsDouble(value.ptr());
        if (v == -1.0 && PyErr_Occurred()) throw nb::python_error();
        *t->data_as<float>() = float(v);
        break;
      }
      default:
        fail(std::string("a Python number for an ") + sg::dtype_name(spec.dtype) + " input; pass an array");
    }
    const sg::Status st = s.set_input(k, *t);
    if (!st.ok()) raise_status(st, ("entry '" + info.name + "'").c_str());
    slot.scalars[k] = std::move(*t);
    slot.held[k] = nb::ndarray<nb::ro>();
    slot.arrays[k] = nb::object();
  }

  void run(sg::Session& s) {
    current_.store(&s, std::memory_order_release);
    if (pending_cancel_.exchange(false, std::memory_order_acq_rel)) s.cancel();
    sg::Status st;
    {
      nb::gil_scoped_release release;
      st = s.run();
    }
    current_.store(nullptr, std::memory_order_release);
    pending_cancel_.store(false, std::memory_order_release);
    if (!prints_.empty()) {
      std::string text = std::move(prints_);
      prints_.clear();
      nb::module_::import_("sys").attr("stdout").attr("write")(text);
    }
    if (!st.ok()) raise_status(st);
  }

  nb::object output(sg::Session& s, size_t i) {
    sg::Result<sg::Tensor> t = s.output(i);
    if (!t.ok()) raise_status(t.status());
    return to_numpy(std::move(*t));
  }

  // The Session whose variables are this Python Session's: the entry that last
  // assigned them (or loaded them), else the first entry's.
  sg::Session& variable_session() {
    if (var_owner_ < 0) var_owner_ = 0;
    return session(size_t(var_owner_));
  }

  // Each C++ Session holds its own variables; before entry `e` reads them, the
  // values the last assigning entry left are copied over (Session::copy_variables_from).
  void take_variables(size_t e) {
    if (var_owner_ < 0 || size_t(var_owner_) == e) return;
    sg::Session& from = session(size_t(var_owner_));
    sg::Session& to = session(e);
    sg::Status st;
    {
      nb::gil_scoped_release release;
      st = to.copy_variables_from(from);
    }
    if (!st.ok()) raise_status(st, "passing the variables between entries");
    var_owner_ = int(e);
  }

  nb::object keep_;  // declared first, so destroyed after the Program that reads it
  ProgramPtr program_;
  sg::SessionOptions options_;
  std::vector<std::unique_ptr<Slot>> slots_;
  std::atomic<bool> busy_{false};
  std::atomic<sg::Session*> current_{nullptr};
  std::atomic<bool> pending_cancel_{false};
  int var_owner_ = -1;
  std::string prints_;  // the run's print lines, written to sys.stdout after it
};

// ---- devices ----

constexpr const char* kDevices =
    "'cpu', 'cuda' or 'cuda:N' (GPU N, where this stagegraph has the CUDA device), or 'test' (the runtime's test "
    "device)";

// The index of "cuda" (0) or "cuda:N"; nullopt for any other device string.
std::optional<int> cuda_index(std::string_view device) {
  if (device == "cuda") return 0;
  if (device.substr(0, 5) != "cuda:") return std::nullopt;
  const std::string_view digits = device.substr(5);
  int index = 0;
  bool ok = !digits.empty() && digits.size() <= 6;
  for (char c : digits) {
    if (c < '0' || c > '9') ok = false;
    else index = index * 10 + (c - '0');
  }
  if (!ok)
    throw nb::value_error(("device '" + std::string(device) + "': a GPU is 'cuda' or 'cuda:N' with N a GPU index, 0 "
                           "or more (the accepted devices: " + kDevices + ")").c_str());
  return index;
}

// GPU `index` from stagegraph._cuda (python/src/cuda_module.cc), imported here on
// first use so that this module loads no CUDA library: RuntimeError "no CUDA
// device: ..." where the package has no CUDA device or CUDA's libraries, driver
// or GPU are missing. The capsule's device is shared with _cuda (device_capsule.h).
std::shared_ptr<const sg::Device> cuda_device(int index) {
  nb::object module;
  try {
    module = nb::module_::import_("stagegraph._cuda");
  } catch (nb::python_error& e) {
    const bool absent = e.matches(PyExc_ModuleNotFoundError);
    const std::string why = nb::cast<std::string>(nb::str(e.value()));
    if (absent)
      throw std::runtime_error("no CUDA device: this stagegraph was built without the CUDA device "
                               "(stagegraph._cuda is not in the package: " + why + ")");
    throw std::runtime_error("no CUDA device: CUDA's libraries could not be loaded (" + why + ")");
  }
  nb::object capsule = module.attr("device")(index);
  void* p = PyCapsule_GetPointer(capsule.ptr(), SG_DEVICE_CAPSULE_NAME);
  if (p == nullptr) {
    PyErr_Clear();
    throw std::runtime_error("stagegraph._cuda is not from the build of stagegraph._runtime (reinstall stagegraph)");
  }
  return *static_cast<const std::shared_ptr<const sg::Device>*>(p);
}

sg::SessionOptions session_options(int threads, std::string_view device, nb::object max_memory, nb::object timeout) {
  sg::SessionOptions o;
  if (sg::Status st = sg::check_num_threads(threads); !st.ok()) raise_status(st, "threads");
  o.num_threads = threads;
  if (device == "test") {
    o.device = sg::test_device();
  } else if (const std::optional<int> gpu = cuda_index(device)) {
    o.device = cuda_device(*gpu);
  } else if (device != "cpu") {
    throw nb::value_error(("device '" + std::string(device) + "' is not a device: the accepted devices are " +
                           kDevices).c_str());
  }
  if (!max_memory.is_none()) {
    const long long b = nb::cast<long long>(max_memory);
    if (b <= 0) throw nb::value_error(("max_memory must be a positive number of bytes (got " + std::to_string(b) + ")").c_str());
    o.memory_limit_bytes = size_t(b);
  }
  if (!timeout.is_none()) {
    const double seconds = nb::cast<double>(timeout);
    if (!(seconds > 0) || !std::isfinite(seconds))
      throw nb::value_error(("timeout must be a positive number of seconds (got " + std::to_string(seconds) + ")").c_str());
    o.run_timeout = std::chrono::microseconds(std::max<int64_t>(1, int64_t(std::llround(seconds * 1e6))));
  }
  return o;
}

std::vector<PyEntry> entries_of(const sg::Program& p) {
  std::vector<PyEntry> out;
  for (const sg::EntryInfo& e : p.entries()) {
    PyEntry pe;
    pe.name = e.name;
    for (const auto& s : e.inputs) pe.inputs.push_back(to_py(s));
    for (const auto& s : e.outputs) pe.outputs.push_back(to_py(s));
    for (size_t v : e.reads) pe.reads.push_back(p.variables()[v].name);
    for (size_t v : e.writes) pe.writes.push_back(p.variables()[v].name);
    out.push_back(std::move(pe));
  }
  return out;
}

}  // namespace

NB_MODULE(_runtime, m) {
  if (_import_array() < 0) throw nb::python_error();
  m.doc() = "The Stagegraph runtime, in process (use stagegraph.load / stagegraph.compile).";

  nb::class_<PyTensorSpec>(m, "TensorSpec")
      .def_ro("name", &PyTensorSpec::name)
      .def_ro("dtype", &PyTensorSpec::dtype, "'f32', 'f16', 'i32', 'i64' or 'bool'")
      .def_ro("shape", &PyTensorSpec::shape, "dims: an int, or the name of a symbolic dim")
      .def("__repr__", &PyTensorSpec::repr);

  nb::class_<PyEntry>(m, "Entry")
      .def_ro("name", &PyEntry::name)
      .def_ro("inputs", &PyEntry::inputs)
      .def_ro("outputs", &PyEntry::outputs)
      .def_ro("reads", &PyEntry::reads, "the variables the entry reads")
      .def_ro("writes", &PyEntry::writes, "the variables the entry assigns")
      .def("__repr__", [](const PyEntry& e) {
        std::string s = "Entry(" + e.name + "(";
        for (size_t i = 0; i < e.inputs.size(); ++i) s += (i ? ", " : "") + e.inputs[i].text;
        s += ") -> (";
        for (size_t i = 0; i < e.outputs.size(); ++i) s += (i ? ", " : "") + e.outputs[i].text;
        return s + "))";
      });

  nb::class_<PyProgram>(m, "Program")
      .def_prop_ro("entries", [](const PyProgram& p) { return entries_of(*p.program); })
      .def_prop_ro("variables",
                   [](const PyProgram& p) {
                     std::vector<PyTensorSpec> out;
                     for (const auto& v : p.program->variables()) out.push_back(to_py(v));
                     return out;
                   })
      .def_prop_ro("constant_bytes", [](const PyProgram& p) { return p.program->constant_bytes(); })
      .def(
          "session",
          [](const PyProgram& p, int threads, std::string_view device, nb::object max_memory, nb::object timeout) {
            auto* s = new PySession(p.program, p.keep, session_options(threads, device, std::move(max_memory), std::move(timeout)));
            nb::object obj = nb::cast(s, nb::rv_policy::take_ownership);
            return obj;
          },
          nb::kw_only(), nb::arg("threads") = 1, nb::arg("device") = "cpu", nb::arg("max_memory") = nb::none(),
          nb::arg("timeout") = nb::none(),
          "A Session on this Program: threads (1-256), device ('cpu', 'cuda' or 'cuda:N', 'test'), max_memory (bytes the runs may hold), "
          "timeout (seconds per run).")
      .def("__repr__", [](const PyProgram& p) {
        std::string s = "<stagegraph.Program entries=[";
        const auto& entries = p.program->entries();
        for (size_t e = 0; e < entries.size(); ++e) s += (e ? ", " : "") + entries[e].name;
        return s + "]>";
      });

  nb::class_<PySession>(m, "Session")
      .def("run", &PySession::run_entry,
           "Runs `entry` on the inputs (by position or name); returns its output, or a dict of them.")
      .def("cancel", &PySession::cancel, "Ends the run in progress (or the next); any thread.")
      .def_prop_ro("variables", &PySession::variables, "The Session's variables: a dict of copies by path.")
      .def("save_variables", &PySession::save_variables, nb::arg("path"))
      .def("load_variables", &PySession::load_variables, nb::arg("path"))
      .def_prop_ro("entries", [](const PySession& s) { return entries_of(*s.program()); })
      // session.<entry>(...): a callable for the entry (keep it to skip this lookup).
      .def("__getattr__",
           [](nb::handle self, std::string_view name) {
             PySession& s = nb::cast<PySession&>(self);
             if (!name.empty() && name[0] == '_') throw nb::attribute_error(std::string(name).c_str());
             const auto& entries = s.program()->entries();
             for (size_t e = 0; e < entries.size(); ++e)
               if (entries[e].name == name) return EntryCall{&s, nb::borrow(self), e};
             throw nb::attribute_error(("stagegraph Session has no attribute or entry '" + std::string(name) + "'").c_str());
           })
      .def("_output_view_address", [](PySession& s, std::string_view e, size_t i) { return s.output_view_address(s.entry_index(e), i); })
      .def("_output_address", [](PySession& s, std::string_view e, size_t i) { return s.output_address(s.entry_index(e), i); })
      .def("_tensor_copies", [](PySession& s, std::string_view e) { return s.tensor_copies(s.entry_index(e)); });

  nb::class_<EntryCall>(m, "EntryCall")
      .def("__call__",
           [](EntryCall& c, nb::args args, nb::kwargs kwargs) { return c.session->call(c.entry, std::move(args), std::move(kwargs)); })
      .def_prop_ro("entry", [](const EntryCall& c) { return c.session->program()->entries()[c.entry].name; });

  m.def("load_file", &load_file, nb::arg("path"), nb::arg("verify_data") = true,
        nb::arg("dynamic_quantization") = true);
  m.def("load_bytes", &load_bytes, nb::arg("data"), nb::arg("verify_data") = true,
        nb::arg("dynamic_quantization") = true);
  register_op_graph(m);
}
