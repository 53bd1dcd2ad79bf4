// The C API (stagegraph/c_api.h) over the C++ API. Every entry point checks its
// pointers, catches nothing because nothing below throws across it except
// allocation of the handles themselves (made with nothrow new), and reports
// through the caller's sg_status.
#include "stagegraph/c_api.h"
#include "stagegraph/custom_op.h"

#include <chrono>
#include <cstdio>
#include <cstring>
#include <deque>
#include <memory>
#include <new>
#include <string>
#include <string_view>
#include <utility>

#include "custom_op_check.h"
#include "device.h"
#include "sgraph_header.h"
#include "stagegraph/runtime.h"

#include "stagegraph/version.h"

// The library's version (stagegraph/version.h, generated from the project version).
#define SG_VERSION_MAJOR STAGEGRAPH_VERSION_MAJOR
#define SG_VERSION_MINOR STAGEGRAPH_VERSION_MINOR
#define SG_VERSION_PATCH STAGEGRAPH_VERSION_PATCH
#define SG_C_STR2(x) #x
#define SG_C_STR(x) SG_C_STR2(x)

struct sg_status {
  sg_code code = SG_OK;
  std::string message;
};

struct sg_program {
  std::shared_ptr<const sg::Program> program;
};

struct sg_thread_pool {
  std::shared_ptr<sg::ThreadPool> pool;
};

// A C kernel behind the C++ registry's function pointer: the registry holds one of
// these per op, at a stable address, as the kernel's `user` pointer.
struct sg_custom_entry {
  sg_custom_kernel kernel = nullptr;        // sg_custom_ops_add (deprecated)
  sg_custom_kernel_v2 kernel_v2 = nullptr;  // sg_custom_ops_add_v2
  void* user = nullptr;
  std::string name;
};

struct sg_custom_ops {
  struct Shared {
    sg::CustomOps ops;
    std::deque<sg_custom_entry> entries;
  };
  std::shared_ptr<Shared> shared = std::make_shared<Shared>();
};

struct sg_session_options {
  sg::SessionOptions options;
  std::shared_ptr<sg_custom_ops::Shared> custom_ops;  // keeps options.custom_ops alive
  sg_text_callback callback = nullptr;
  void* user = nullptr;
};

struct sg_session {
  std::unique_ptr<sg::Session> session;
  std::shared_ptr<sg_custom_ops::Shared> custom_ops;  // the Session's kernels, kept alive
};

// sg_entry and sg_tensor_info are never defined: their pointers are the
// Program's own sg::EntryInfo and sg::TensorSpec.

namespace {

static_assert(SG_OK == int(sg::StatusCode::kOk) && SG_INVALID_ARGUMENT == int(sg::StatusCode::kInvalidArgument) &&
              SG_INVALID_GRAPH == int(sg::StatusCode::kInvalidGraph) &&
              SG_INVALID_INPUT == int(sg::StatusCode::kInvalidInput) &&
              SG_RUNTIME_ERROR == int(sg::StatusCode::kRuntimeError) &&
              SG_LIMIT_EXCEEDED == int(sg::StatusCode::kLimitExceeded) &&
              SG_OUT_OF_MEMORY == int(sg::StatusCode::kOutOfMemory) &&
              SG_CANCELLED == int(sg::StatusCode::kCancelled) &&
              SG_UNSUPPORTED == int(sg::StatusCode::kUnsupported) &&
              SG_INTERNAL == int(sg::StatusCode::kInternal) &&
              SG_DEADLINE_EXCEEDED == int(sg::StatusCode::kDeadlineExceeded) &&
              SG_NOT_FOUND == int(sg::StatusCode::kNotFound),
              "the C API's codes are sg::StatusCode's numbers");
static_assert(SG_F32 == int(sg::DType::kF32) && SG_F16 == int(sg::DType::kF16) && SG_I32 == int(sg::DType::kI32) &&
                  SG_I64 == int(sg::DType::kI64) && SG_BOOL == int(sg::DType::kBool),
              "the C API's dtypes are sg::DType's numbers");

constexpr uint32_t kLoadFlags = SG_LOAD_VERIFY_DATA | SG_LOAD_COPY | SG_LOAD_NO_VERIFY_DATA;
constexpr sg_code kLastCode = SG_NOT_FOUND;

sg_code report(sg_status* status, sg_code code, std::string message) {
  if (status != nullptr) {
    status->code = code;
    status->message = std::move(message);
  }
  return code;
}

sg_code report(sg_status* status, const sg::Status& s) {
  if (s.ok()) return report(status, SG_OK, std::string());
  return report(status, sg_code(s.code()), s.message());
}

sg_code ok(sg_status* status) { return report(status, SG_OK, std::string()); }

sg_code null_argument(sg_status* status, const char* function, const char* argument) {
  return report(status, SG_INVALID_ARGUMENT, std::string(function) + ": " + argument + " is NULL");
}

const sg_entry* entry_of(const sg::EntryInfo* e) { return reinterpret_cast<const sg_entry*>(e); }
const sg::EntryInfo& info_of(const sg_entry* e) { return *reinterpret_cast<const sg::EntryInfo*>(e); }
const sg::TensorSpec& spec_of(const sg_tensor_info* t) { return *reinterpret_cast<const sg::TensorSpec*>(t); }

bool valid_dtype(sg_dtype d) { return d >= SG_F32 && d <= SG_BOOL; }

sg_code make_program(sg::Result<std::shared_ptr<const sg::Program>> loaded, sg_program** out, sg_status* status) {
  if (!loaded.ok()) return report(status, loaded.status());
  auto* p = new (std::nothrow) sg_program{std::move(loaded).value()};
  if (p == nullptr) return report(status, SG_OUT_OF_MEMORY, "cannot allocate a program handle");
  *out = p;
  return ok(status);
}

// The data check is on unless asked off (LoadOptions' default, not restated here).
sg::LoadOptions load_options(uint32_t flags) {
  sg::LoadOptions o;
  if ((flags & SG_LOAD_NO_VERIFY_DATA) != 0) o.verify_data = false;
  return o;
}

sg_code check_flags(uint32_t flags, const char* function, sg_status* status) {
  if ((flags & SG_LOAD_VERIFY_DATA) != 0 && (flags & SG_LOAD_NO_VERIFY_DATA) != 0)
    return report(status, SG_INVALID_ARGUMENT,
                  std::string(function) + ": SG_LOAD_VERIFY_DATA and SG_LOAD_NO_VERIFY_DATA contradict each other");
  if ((flags & ~kLoadFlags) == 0) return SG_OK;
  return report(status, SG_INVALID_ARGUMENT,
                std::string(function) + ": unknown flags 0x" + [&] {
                  char buf[16];
                  std::snprintf(buf, sizeof buf, "%x", unsigned(flags & ~kLoadFlags));
                  return std::string(buf);
                }());
}

sg_code set_input(sg_session* session, const char* function, size_t index, sg_dtype dtype, const int64_t* shape,
                  size_t rank, const void* data, size_t nbytes, sg_status* status) {
  const sg::TensorSpec& spec = session->session->entry().inputs[index];
  const std::string what = std::string(function) + ": input '" + spec.name + "'";
  // A code no version of the C API defines: the caller's mistake (ABI rules).
  if (!valid_dtype(dtype))
    return report(status, SG_INVALID_ARGUMENT, what + ": unknown dtype code " + std::to_string(dtype));
  if (rank > size_t(sg::kMaxRank))
    return report(status, SG_INVALID_INPUT,
                  what + ": rank " + std::to_string(rank) + " exceeds the maximum " + std::to_string(sg::kMaxRank));
  if (rank > 0 && shape == nullptr) return report(status, SG_INVALID_ARGUMENT, what + ": shape is NULL");
  uint64_t elements = 1;
  bool overflow = false;
  for (size_t a = 0; a < rank; ++a) {
    if (shape[a] < 0)
      return report(status, SG_INVALID_INPUT,
                    what + ": negative dim " + std::to_string(shape[a]) + " at axis " + std::to_string(a));
    if (shape[a] != 0 && elements > UINT64_MAX / uint64_t(shape[a])) overflow = true;
    elements *= uint64_t(shape[a]);
  }
  const size_t elem = sg::dtype_size(sg::DType(dtype));
  if (overflow || elements > UINT64_MAX / elem || elements * elem != uint64_t(nbytes))
    return report(status, SG_INVALID_INPUT,
                  what + ": " + std::to_string(nbytes) + " bytes given, but the shape and dtype take " +
                      (overflow ? std::string("more than 2^64") : std::to_string(elements * elem)));
  if (data == nullptr && nbytes > 0) return report(status, SG_INVALID_ARGUMENT, what + ": data is NULL");
  // The Tensor wraps the caller's memory (read only: the runtime never writes an input).
  sg::Tensor t = sg::Tensor::wrap(sg::DType(dtype), sg::Span<const int64_t>(shape, rank), data);
  return report(status, session->session->set_input(index, std::move(t)));
}

}  // namespace

namespace {

// The C++ registry's kernel for every C one: `user` is its sg_custom_entry.
sg::Status run_custom_kernel(void* user, const sg::CustomOpTensor* inputs, size_t num_inputs,
                             const sg::CustomOpTensor* output) {
  const auto* entry = static_cast<const sg_custom_entry*>(user);
  std::vector<const void*> data(num_inputs);
  std::vector<sg_dtype> dtypes(num_inputs);
  std::vector<const int64_t*> dims(num_inputs);
  std::vector<size_t> ranks(num_inputs);
  for (size_t i = 0; i < num_inputs; ++i) {
    data[i] = inputs[i].data;
    dtypes[i] = sg_dtype(inputs[i].dtype);
    dims[i] = inputs[i].shape;
    ranks[i] = size_t(inputs[i].rank);
  }
  const char* message = nullptr;
  sg_code code = SG_OK;
  if (entry->kernel_v2 != nullptr) {
    sg_custom_kernel_call call{};
    call.struct_size = sizeof call;
    call.name = entry->name.c_str();
    call.num_inputs = num_inputs;
    call.inputs = data.data();
    call.input_dtypes = dtypes.data();
    call.input_dims = dims.data();
    call.input_ranks = ranks.data();
    call.output = output->data;
    call.output_dtype = sg_dtype(output->dtype);
    call.output_dims = output->shape;
    call.output_rank = size_t(output->rank);
    code = entry->kernel_v2(entry->user, &call, &message);
  } else {
    code = entry->kernel(entry->user, num_inputs, data.data(), dtypes.data(), dims.data(), ranks.data(), output->data,
                         sg_dtype(output->dtype), output->shape, size_t(output->rank), &message);
  }
  if (code == SG_OK) return sg::Status::Ok();
  std::string text = message != nullptr ? std::string(message) : std::string("the custom kernel failed");
  // Its code ends the run as it is; one this library does not know is a broken promise.
  if (code > SG_OK && code <= kLastCode) return sg::Status(sg::StatusCode(code), std::move(text));
  return sg::Status(sg::StatusCode::kInternal, std::move(text) + " (the kernel returned the unknown code " +
                                                    std::to_string(code) + ")");
}

}  // namespace

extern "C" {

size_t sg_dtype_size(sg_dtype dtype) { return valid_dtype(dtype) ? sg::dtype_size(sg::DType(dtype)) : 0; }
const char* sg_dtype_name(sg_dtype dtype) { return valid_dtype(dtype) ? sg::dtype_name(sg::DType(dtype)) : "?"; }

const char* sg_version_string(void) {
  return SG_C_STR(SG_VERSION_MAJOR) "." SG_C_STR(SG_VERSION_MINOR) "." SG_C_STR(SG_VERSION_PATCH);
}
uint32_t sg_version(void) { return SG_VERSION_MAJOR * 10000u + SG_VERSION_MINOR * 100u + SG_VERSION_PATCH; }
uint32_t sg_c_api_version(void) { return SG_C_API_VERSION; }

void sg_format_versions(uint16_t* major, uint16_t* max_minor) {
  if (major != nullptr) *major = sg::format::kMajorVersion;
  if (max_minor != nullptr) *max_minor = sg::format::kMinorVersion;
}

// ---- status ----

sg_status* sg_status_create(void) { return new (std::nothrow) sg_status(); }
void sg_status_release(sg_status* status) { delete status; }
sg_code sg_status_code(const sg_status* status) { return status == nullptr ? SG_OK : status->code; }
const char* sg_status_message(const sg_status* status) { return status == nullptr ? "" : status->message.c_str(); }

const char* sg_code_name(sg_code code) {
  if (code < SG_OK || code > kLastCode) return "?";
  return sg::status_code_name(sg::StatusCode(code));
}

// ---- programs ----

sg_code sg_program_load_file(const char* path, uint32_t flags, sg_program** out, sg_status* status) {
  if (out == nullptr) return null_argument(status, "sg_program_load_file", "out");
  *out = nullptr;
  if (path == nullptr) return null_argument(status, "sg_program_load_file", "path");
  if (check_flags(flags, "sg_program_load_file", status) != SG_OK) return SG_INVALID_ARGUMENT;
  return make_program(sg::Program::load_file(path, load_options(flags)), out, status);
}

sg_code sg_program_load_memory(const void* data, size_t size, uint32_t flags, sg_program** out, sg_status* status) {
  if (out == nullptr) return null_argument(status, "sg_program_load_memory", "out");
  *out = nullptr;
  if (data == nullptr) return null_argument(status, "sg_program_load_memory", "data");
  if (check_flags(flags, "sg_program_load_memory", status) != SG_OK) return SG_INVALID_ARGUMENT;
  const auto* bytes = static_cast<const uint8_t*>(data);
  if ((flags & SG_LOAD_COPY) != 0 && reinterpret_cast<uintptr_t>(bytes) % sg::format::kAlignment == 0) {
    // Aligned bytes would be borrowed: go through a misaligned copy, which the
    // loader copies again, aligned, and owns. Twice the copying, once, on load.
    auto skewed = std::unique_ptr<uint8_t[]>(new (std::nothrow) uint8_t[size + 1]);
    if (skewed == nullptr) return report(status, SG_OUT_OF_MEMORY, "cannot allocate a copy of the graph");
    std::memcpy(skewed.get() + 1, bytes, size);
    return make_program(sg::Program::load_memory(sg::Span<const uint8_t>(skewed.get() + 1, size),
                                                 load_options(flags)),
                        out, status);
  }
  return make_program(sg::Program::load_memory(sg::Span<const uint8_t>(bytes, size), load_options(flags)), out,
                      status);
}

sg_code sg_program_load_fd(int fd, uint64_t offset, uint64_t length, uint32_t flags, sg_program** out,
                           sg_status* status) {
  if (out == nullptr) return null_argument(status, "sg_program_load_fd", "out");
  *out = nullptr;
  if (check_flags(flags, "sg_program_load_fd", status) != SG_OK) return SG_INVALID_ARGUMENT;
  return make_program(sg::Program::load_fd(fd, offset, length, load_options(flags)), out, status);
}

void sg_program_release(sg_program* program) { delete program; }

void sg_program_format_version(const sg_program* program, uint16_t* major, uint16_t* minor) {
  if (major != nullptr) *major = program != nullptr ? program->program->format_major() : 0;
  if (minor != nullptr) *minor = program != nullptr ? program->program->format_minor() : 0;
}

size_t sg_program_num_entries(const sg_program* program) {
  return program == nullptr ? 0 : program->program->entries().size();
}

const sg_entry* sg_program_entry(const sg_program* program, size_t index) {
  if (program == nullptr || index >= program->program->entries().size()) return nullptr;
  return entry_of(&program->program->entries()[index]);
}

const sg_entry* sg_program_find_entry(const sg_program* program, const char* name) {
  if (program == nullptr || name == nullptr) return nullptr;
  const sg::EntryInfo* e = program->program->find_entry(name);
  return e == nullptr ? nullptr : entry_of(e);
}

// ---- entries and tensor descriptions ----

const char* sg_entry_name(const sg_entry* entry) { return entry == nullptr ? "" : info_of(entry).name.c_str(); }
size_t sg_entry_num_inputs(const sg_entry* entry) { return entry == nullptr ? 0 : info_of(entry).inputs.size(); }
size_t sg_entry_num_outputs(const sg_entry* entry) { return entry == nullptr ? 0 : info_of(entry).outputs.size(); }

const sg_tensor_info* sg_entry_input(const sg_entry* entry, size_t index) {
  if (entry == nullptr || index >= info_of(entry).inputs.size()) return nullptr;
  return reinterpret_cast<const sg_tensor_info*>(&info_of(entry).inputs[index]);
}

const sg_tensor_info* sg_entry_output(const sg_entry* entry, size_t index) {
  if (entry == nullptr || index >= info_of(entry).outputs.size()) return nullptr;
  return reinterpret_cast<const sg_tensor_info*>(&info_of(entry).outputs[index]);
}

const char* sg_tensor_info_name(const sg_tensor_info* info) { return info == nullptr ? "" : spec_of(info).name.c_str(); }
sg_dtype sg_tensor_info_dtype(const sg_tensor_info* info) {
  return info == nullptr ? SG_F32 : sg_dtype(spec_of(info).dtype);
}
size_t sg_tensor_info_rank(const sg_tensor_info* info) { return info == nullptr ? 0 : spec_of(info).shape.size(); }

int64_t sg_tensor_info_dim(const sg_tensor_info* info, size_t axis) {
  if (info == nullptr || axis >= spec_of(info).shape.size()) return -1;
  return spec_of(info).shape[axis];
}

const char* sg_tensor_info_dim_name(const sg_tensor_info* info, size_t axis) {
  if (info == nullptr || axis >= spec_of(info).dim_names.size()) return "";
  return spec_of(info).dim_names[axis].c_str();
}

// ---- thread pools ----

sg_code sg_thread_pool_create(int32_t num_threads, sg_thread_pool** out, sg_status* status) {
  if (out == nullptr) return null_argument(status, "sg_thread_pool_create", "out");
  *out = nullptr;
  auto pool = sg::ThreadPool::create(num_threads);
  if (!pool.ok()) return report(status, pool.status());
  auto* p = new (std::nothrow) sg_thread_pool{std::move(pool).value()};
  if (p == nullptr) return report(status, SG_OUT_OF_MEMORY, "cannot allocate a thread pool handle");
  *out = p;
  return ok(status);
}

void sg_thread_pool_release(sg_thread_pool* pool) { delete pool; }

// ---- session options ----

sg_code sg_session_options_create(sg_session_options** out, sg_status* status) {
  if (out == nullptr) return null_argument(status, "sg_session_options_create", "out");
  *out = new (std::nothrow) sg_session_options();
  if (*out == nullptr) return report(status, SG_OUT_OF_MEMORY, "cannot allocate session options");
  return ok(status);
}

void sg_session_options_release(sg_session_options* options) { delete options; }

sg_code sg_session_options_set_num_threads(sg_session_options* options, int32_t num_threads, sg_status* status) {
  if (options == nullptr) return null_argument(status, "sg_session_options_set_num_threads", "options");
  const sg::Status checked = sg::check_num_threads(num_threads);
  if (!checked.ok()) return report(status, checked.with_context("sg_session_options_set_num_threads"));
  options->options.num_threads = num_threads;
  return ok(status);
}

sg_code sg_session_options_set_max_call_depth(sg_session_options* options, int32_t depth, sg_status* status) {
  if (options == nullptr) return null_argument(status, "sg_session_options_set_max_call_depth", "options");
  if (depth < 0)
    return report(status, SG_INVALID_ARGUMENT, "max_call_depth must not be negative (got " + std::to_string(depth) + ")");
  options->options.max_call_depth = depth;
  return ok(status);
}

sg_code sg_session_options_set_memory_limit(sg_session_options* options, uint64_t bytes, sg_status* status) {
  if (options == nullptr) return null_argument(status, "sg_session_options_set_memory_limit", "options");
  if (bytes > uint64_t(SIZE_MAX))
    return report(status, SG_INVALID_ARGUMENT, "memory limit " + std::to_string(bytes) + " exceeds the address space");
  options->options.memory_limit_bytes = size_t(bytes);
  return ok(status);
}

sg_code sg_session_options_set_run_timeout_us(sg_session_options* options, uint64_t microseconds,
                                              sg_status* status) {
  if (options == nullptr) return null_argument(status, "sg_session_options_set_run_timeout_us", "options");
  if (microseconds > uint64_t(INT64_MAX) / 1000)
    return report(status, SG_INVALID_ARGUMENT, "run timeout of " + std::to_string(microseconds) + " us is too long");
  options->options.run_timeout = std::chrono::microseconds(int64_t(microseconds));
  return ok(status);
}

sg_code sg_session_options_set_thread_pool(sg_session_options* options, sg_thread_pool* pool, sg_status* status) {
  if (options == nullptr) return null_argument(status, "sg_session_options_set_thread_pool", "options");
  options->options.thread_pool = pool != nullptr ? pool->pool : nullptr;
  return ok(status);
}

sg_code sg_session_options_set_device(sg_session_options* options, const char* device, sg_status* status) {
  if (options == nullptr) return null_argument(status, "sg_session_options_set_device", "options");
  if (device == nullptr) return null_argument(status, "sg_session_options_set_device", "device");
  sg::Result<sg::runtime::DeviceSpec> spec = sg::runtime::parse_device(device);
  if (!spec.ok()) return report(status, spec.status());
  switch (spec->kind) {
    case sg::runtime::DeviceKind::kCpu: options->options.device = nullptr; return ok(status);
    case sg::runtime::DeviceKind::kTest: options->options.device = sg::test_device(); return ok(status);
    case sg::runtime::DeviceKind::kCuda: break;
  }
  // The C API links no device library (it is compiled once, into the runtime): a
  // CUDA device is a value of the CUDA library (sg::cuda_device, C++ only so far).
  return report(status, SG_UNSUPPORTED,
                "device '" + std::string(device) +
                    "' is not available in this build of the C API (it has: cpu, test): it links no device "
                    "library");
}

sg_code sg_session_options_set_text_callback(sg_session_options* options, sg_text_callback callback, void* user,
                                             sg_status* status) {
  if (options == nullptr) return null_argument(status, "sg_session_options_set_text_callback", "options");
  options->callback = callback;
  options->user = user;
  if (callback == nullptr) {
    options->options.text_callback = nullptr;
  } else {
    options->options.text_callback = [callback, user](sg::TextKind kind, std::string_view text) {
      callback(user, int32_t(kind), text.data(), text.size());
    };
  }
  return ok(status);
}

// ---- sessions ----


sg_code sg_custom_ops_create(sg_custom_ops** out, sg_status* status) {
  if (out == nullptr) return null_argument(status, "sg_custom_ops_create", "out");
  *out = new (std::nothrow) sg_custom_ops;
  if (*out == nullptr) return report(status, SG_OUT_OF_MEMORY, "cannot allocate a custom op registry");
  return ok(status);
}

void sg_custom_ops_release(sg_custom_ops* ops) { delete ops; }

namespace {

sg_code add_custom_kernel(sg_custom_ops* ops, const char* name, sg_custom_entry entry, const char* function,
                          sg_status* status) {
  if (ops == nullptr) return null_argument(status, function, "ops");
  if (name == nullptr) return null_argument(status, function, "name");
  if (entry.kernel == nullptr && entry.kernel_v2 == nullptr) return null_argument(status, function, "kernel");
  sg_custom_ops::Shared& shared = *ops->shared;
  entry.name = name;
  shared.entries.push_back(std::move(entry));
  const sg::Status s = shared.ops.add(name, &run_custom_kernel, &shared.entries.back());
  if (!s.ok()) {
    shared.entries.pop_back();
    return report(status, s);
  }
  return ok(status);
}

}  // namespace

sg_code sg_custom_ops_add_v2(sg_custom_ops* ops, const char* name, sg_custom_kernel_v2 kernel, void* user,
                             sg_status* status) {
  sg_custom_entry entry;
  entry.kernel_v2 = kernel;
  entry.user = user;
  return add_custom_kernel(ops, name, std::move(entry), "sg_custom_ops_add_v2", status);
}

sg_code sg_custom_ops_add(sg_custom_ops* ops, const char* name, sg_custom_kernel kernel, void* user,
                          sg_status* status) {
  sg_custom_entry entry;
  entry.kernel = kernel;
  entry.user = user;
  return add_custom_kernel(ops, name, std::move(entry), "sg_custom_ops_add", status);
}

sg_code sg_session_options_set_custom_ops(sg_session_options* options, sg_custom_ops* ops, sg_status* status) {
  if (options == nullptr) return null_argument(status, "sg_session_options_set_custom_ops", "options");
  options->custom_ops = ops != nullptr ? ops->shared : nullptr;
  options->options.custom_ops = ops != nullptr ? &ops->shared->ops : nullptr;
  return ok(status);
}

sg_code sg_session_create(const sg_program* program, const char* entry, const sg_session_options* options,
                          sg_session** out, sg_status* status) {
  if (out == nullptr) return null_argument(status, "sg_session_create", "out");
  *out = nullptr;
  if (program == nullptr) return null_argument(status, "sg_session_create", "program");
  if (entry == nullptr) return null_argument(status, "sg_session_create", "entry");
  // A missing custom kernel is refused here, in the C API's words (Session::create
  // would name SessionOptions::custom_ops).
  if (const sg::EntryInfo* e = program->program->find_entry(entry)) {
    const size_t index = size_t(e - program->program->entries().data());
    const sg::Status kernels = sg::runtime::check_custom_kernels(
        *program->program, index, options != nullptr ? options->options.custom_ops : nullptr,
        sg::runtime::CustomOpsApi::kC);
    if (!kernels.ok()) return report(status, kernels);
  }
  auto session = sg::Session::create(program->program, entry, options != nullptr ? options->options
                                                                                  : sg::SessionOptions());
  if (!session.ok()) return report(status, session.status());
  auto* s = new (std::nothrow)
      sg_session{std::move(session).value(), options != nullptr ? options->custom_ops : nullptr};
  if (s == nullptr) return report(status, SG_OUT_OF_MEMORY, "cannot allocate a session handle");
  *out = s;
  return ok(status);
}

void sg_session_release(sg_session* session) { delete session; }

const sg_entry* sg_session_entry(const sg_session* session) {
  return session == nullptr ? nullptr : entry_of(&session->session->entry());
}

sg_code sg_session_input_index(const sg_session* session, const char* name, size_t* index, sg_status* status) {
  if (session == nullptr) return null_argument(status, "sg_session_input_index", "session");
  if (name == nullptr) return null_argument(status, "sg_session_input_index", "name");
  if (index == nullptr) return null_argument(status, "sg_session_input_index", "index");
  auto i = session->session->input_index(name);
  if (!i.ok()) return report(status, i.status());
  *index = *i;
  return ok(status);
}

sg_code sg_session_output_index(const sg_session* session, const char* name, size_t* index, sg_status* status) {
  if (session == nullptr) return null_argument(status, "sg_session_output_index", "session");
  if (name == nullptr) return null_argument(status, "sg_session_output_index", "name");
  if (index == nullptr) return null_argument(status, "sg_session_output_index", "index");
  auto i = session->session->output_index(name);
  if (!i.ok()) return report(status, i.status());
  *index = *i;
  return ok(status);
}

sg_code sg_session_set_input(sg_session* session, const char* name, sg_dtype dtype, const int64_t* shape, size_t rank,
                             const void* data, size_t nbytes, sg_status* status) {
  if (session == nullptr) return null_argument(status, "sg_session_set_input", "session");
  if (name == nullptr) return null_argument(status, "sg_session_set_input", "name");
  auto i = session->session->input_index(name);
  if (!i.ok()) return report(status, i.status());
  return set_input(session, "sg_session_set_input", *i, dtype, shape, rank, data, nbytes, status);
}

sg_code sg_session_set_input_at(sg_session* session, size_t index, sg_dtype dtype, const int64_t* shape, size_t rank,
                                const void* data, size_t nbytes, sg_status* status) {
  if (session == nullptr) return null_argument(status, "sg_session_set_input_at", "session");
  const size_t n = session->session->entry().inputs.size();
  if (index >= n)
    return report(status, SG_INVALID_ARGUMENT,
                  "sg_session_set_input_at: input index " + std::to_string(index) + " is out of range (the entry takes " +
                      std::to_string(n) + " inputs)");
  return set_input(session, "sg_session_set_input_at", index, dtype, shape, rank, data, nbytes, status);
}

sg_code sg_session_bind_output(sg_session* session, size_t index, void* data, size_t capacity, sg_status* status) {
  if (session == nullptr) return null_argument(status, "sg_session_bind_output", "session");
  return report(status, session->session->bind_output(index, data, capacity));
}

sg_code sg_session_run(sg_session* session, sg_status* status) {
  if (session == nullptr) return null_argument(status, "sg_session_run", "session");
  return report(status, session->session->run());
}

sg_code sg_session_save_variables(const sg_session* session, const char* path, sg_status* status) {
  if (session == nullptr) return null_argument(status, "sg_session_save_variables", "session");
  if (path == nullptr) return null_argument(status, "sg_session_save_variables", "path");
  return report(status, session->session->save_variables(path));
}

sg_code sg_session_load_variables(sg_session* session, const char* path, sg_status* status) {
  if (session == nullptr) return null_argument(status, "sg_session_load_variables", "session");
  if (path == nullptr) return null_argument(status, "sg_session_load_variables", "path");
  return report(status, session->session->load_variables(path));
}

sg_code sg_session_copy_variables(sg_session* session, const sg_session* from, sg_status* status) {
  if (session == nullptr) return null_argument(status, "sg_session_copy_variables", "session");
  if (from == nullptr) return null_argument(status, "sg_session_copy_variables", "from");
  return report(status, session->session->copy_variables_from(*from->session));
}

void sg_session_cancel(sg_session* session) {
  if (session != nullptr) session->session->cancel();
}

sg_code sg_session_set_run_timeout_us(sg_session* session, uint64_t microseconds, sg_status* status) {
  if (session == nullptr) return null_argument(status, "sg_session_set_run_timeout_us", "session");
  if (microseconds > uint64_t(INT64_MAX) / 1000)
    return report(status, SG_INVALID_ARGUMENT, "run timeout of " + std::to_string(microseconds) + " us is too long");
  return report(status, session->session->set_run_timeout(std::chrono::microseconds(int64_t(microseconds))));
}

size_t sg_session_num_outputs(const sg_session* session) {
  return session == nullptr ? 0 : session->session->num_outputs();
}

sg_code sg_session_output(const sg_session* session, size_t index, const void** data, sg_dtype* dtype,
                          const int64_t** shape, size_t* rank, sg_status* status) {
  if (session == nullptr) return null_argument(status, "sg_session_output", "session");
  // The view is a Tensor of its own; the dims handed out are the Session's, which
  // live until the next run.
  auto view = session->session->output_view(index);
  if (!view.ok()) return report(status, view.status());
  if (data != nullptr) *data = view->data();
  if (dtype != nullptr) *dtype = sg_dtype(view->dtype());
  if (rank != nullptr) *rank = size_t(view->rank());
  if (shape != nullptr) *shape = session->session->output_shape(index).data();
  return ok(status);
}

size_t sg_session_output_nbytes(const sg_session* session, size_t index) {
  if (session == nullptr) return 0;
  auto view = session->session->output_view(index);
  return view.ok() ? view->nbytes() : 0;
}

}  // extern "C"
