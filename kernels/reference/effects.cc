// The ops with effects: print writes a line, assert fails the run. Both run at
// their place in program order (the executor never reorders effects).
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <string>

#include "interface/kernel.h"
#include "reference/reference_kernels.h"

namespace sg::kernels {
namespace {

void append_scalar(std::string& out, DType dtype, const void* p) {
  char buf[64];
  switch (dtype) {
    case DType::kBool:
      out += *static_cast<const uint8_t*>(p) ? "True" : "False";
      return;
    case DType::kI32:
      std::snprintf(buf, sizeof buf, "%" PRId32, *static_cast<const int32_t*>(p));
      break;
    case DType::kI64:
      std::snprintf(buf, sizeof buf, "%" PRId64, *static_cast<const int64_t*>(p));
      break;
    case DType::kF32:
    case DType::kF16: {
      const double v = dtype == DType::kF32 ? double(*static_cast<const float*>(p))
                                            : double(half_to_float(*static_cast<const uint16_t*>(p)));
      if (std::isnan(v)) {
        out += "nan";
        return;
      }
      if (std::isinf(v)) {
        out += v > 0 ? "inf" : "-inf";
        return;
      }
      // Like NumPy's float32 str: shortest round-trip digits, "1.0" for integers.
      if (v == std::floor(v) && std::fabs(v) < 1e16) {
        std::snprintf(buf, sizeof buf, "%.1f", v);
      } else {
        std::snprintf(buf, sizeof buf, "%.*g", dtype == DType::kF32 ? 8 : 4, v);
      }
      break;
    }
  }
  out += buf;
}

// NumPy-like nested brackets, elements separated by spaces.
void append_tensor(std::string& out, const TensorRef& t) {
  const size_t elem = dtype_size(t.dtype);
  const auto* base = static_cast<const uint8_t*>(t.data);
  if (t.rank == 0) {
    append_scalar(out, t.dtype, base);
    return;
  }
  const int64_t n = t.numel();
  int64_t index[kMaxRank] = {};
  if (n == 0) {
    for (int d = 0; d < t.rank; ++d) out += '[';
    for (int d = 0; d < t.rank; ++d) out += ']';
    return;
  }
  for (int d = 0; d < t.rank; ++d) out += '[';
  for (int64_t i = 0; i < n; ++i) {
    append_scalar(out, t.dtype, base + size_t(i) * elem);
    int closed = 0;
    for (int d = t.rank - 1; d >= 0; --d) {
      if (++index[d] < t.shape[d]) break;
      index[d] = 0;
      ++closed;
    }
    for (int c = 0; c < closed; ++c) out += ']';
    if (i + 1 < n) {
      out += ' ';
      for (int c = 0; c < closed; ++c) out += '[';
    }
  }
}

Status print_kernel(const KernelContext& ctx, const ops::Attrs& attrs, std::span<const TensorRef> inputs,
                    std::span<TensorRef>) {
  if (attrs.values.size() != 1) return internal_error("print: expects a format attribute");
  const std::string& format = attrs.s(ops::attr::kPrintFormat);
  std::string line;
  size_t next = 0;
  for (size_t i = 0; i < format.size(); ++i) {
    const char c = format[i];
    if ((c == '{' || c == '}') && i + 1 < format.size() && format[i + 1] == c) {
      line += c;
      ++i;
    } else if (c == '{' && i + 1 < format.size() && format[i + 1] == '}') {
      if (next < inputs.size()) append_tensor(line, inputs[next++]);
      ++i;
    } else {
      line += c;
    }
  }
  for (; next < inputs.size(); ++next) {  // values the format did not place
    line += ' ';
    append_tensor(line, inputs[next]);
  }
  if (ctx.print) {
    ctx.print(ctx.print_user, line.data(), line.size());
  } else {
    line += '\n';
    std::fwrite(line.data(), 1, line.size(), stdout);
    std::fflush(stdout);
  }
  return Status::Ok();
}

Status assert_kernel(const KernelContext&, const ops::Attrs& attrs, std::span<const TensorRef> inputs,
                     std::span<TensorRef>) {
  if (inputs.size() != 1 || inputs[0].dtype != DType::kBool || inputs[0].rank != 0 || attrs.values.size() != 1)
    return internal_error("assert: expects one bool scalar and a message attribute");
  if (*inputs[0].as<const uint8_t>() != 0) return Status::Ok();
  const std::string& message = attrs.s(ops::attr::kAssertMessage);
  return runtime_error(message.empty() ? std::string("assertion failed") : "assertion failed: " + message);
}

}  // namespace

KernelFn effect_kernel(ops::OpId op) {
  return op == ops::OpId::Print ? &print_kernel : &assert_kernel;
}

}  // namespace sg::kernels
