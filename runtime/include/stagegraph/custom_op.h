// Custom ops: kernels an application adds for ops the op table lacks (SPEC §7).
//
// A staged program declares such an op with sg.custom_op("my_ns.swish", fn=...,
// result=...); the graph file records it as a `custom` node naming "my_ns.swish",
// with the result's dtype and shape the compiler worked out. The application
// registers a kernel under that name and passes the registry to the Session:
//
//   sg::CustomOps ops;
//   ops.add("my_ns.swish", &swish_kernel);
//   sg::SessionOptions options;
//   options.custom_ops = &ops;  // must outlive the Session
//   auto session = sg::Session::create(program, "main", options);
//
// Session::create refuses an entry that reaches (itself, or through If, While and
// Call) a custom op without a registered kernel, naming the op and its source line;
// ops only other entries reach need none. The kernel gets its output allocated
// with the dtype and dims of the compiled result rule, zero-filled, and is to
// write all of it. A kernel's failure ends the run with the Status it returned: its
// code as it is (kRuntimeError, kInvalidInput, kOutOfMemory...), its message after
// the op's name and source line.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "stagegraph/dtype.h"
#include "stagegraph/export.h"
#include "stagegraph/status.h"

namespace sg {

// An operand or the result of a custom op: a dense, C-order tensor. Operands are
// read only; the result is allocated with the recorded dtype and shape (checked
// against the compiled rule before each call) and zero-filled.
struct CustomOpTensor {
  DType dtype = DType::kF32;
  int rank = 0;
  const int64_t* shape = nullptr;  // `rank` dims
  void* data = nullptr;

  int64_t numel() const {
    int64_t n = 1;
    for (int i = 0; i < rank; ++i) n *= shape[i];
    return n;
  }
};

// The kernel of a custom op: `user` is the pointer given to CustomOps::add. It may
// be called from any of the Session's threads, one call at a time per Session.
using CustomOpKernel = Status (*)(void* user, const CustomOpTensor* inputs, size_t num_inputs,
                                  const CustomOpTensor* output);

// A registry of custom op kernels by name. Not thread-safe while being filled;
// read only once given to Sessions.
class SG_API CustomOps {
 public:
  struct Entry {
    std::string name;
    CustomOpKernel kernel = nullptr;
    void* user = nullptr;
  };

  // kInvalidArgument for an empty name, a null kernel, or a name already added.
  Status add(std::string_view name, CustomOpKernel kernel, void* user = nullptr);
  // The entry for `name`, or null.
  const Entry* find(std::string_view name) const;
  size_t size() const { return entries_.size(); }

 private:
  std::vector<Entry> entries_;
};

}  // namespace sg
