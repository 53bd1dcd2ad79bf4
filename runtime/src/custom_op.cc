// The custom op registry (stagegraph/custom_op.h) and the prepared kernel that
// runs a registered kernel for a `custom` node.
#include "stagegraph/custom_op.h"

#include <cstring>
#include <string>
#include <vector>

#include "custom_op_check.h"
#include "custom_op_kernel.h"

namespace sg {

Status CustomOps::add(std::string_view name, CustomOpKernel kernel, void* user) {
  if (name.empty()) return invalid_argument("CustomOps::add: the op name is empty");
  if (kernel == nullptr) return invalid_argument("CustomOps::add: no kernel for custom op '" + std::string(name) + "'");
  if (find(name) != nullptr)
    return invalid_argument("CustomOps::add: custom op '" + std::string(name) + "' is already registered");
  entries_.push_back(Entry{std::string(name), kernel, user});
  return Status::Ok();
}

const CustomOps::Entry* CustomOps::find(std::string_view name) const {
  for (const Entry& e : entries_)
    if (e.name == name) return &e;
  return nullptr;
}

namespace runtime {
namespace {

// The value of a dynamic dim input (a scalar of an integer type), or -1.
int64_t scalar_dim(const kernels::TensorRef& t) {
  if (t.numel() != 1) return -1;
  if (t.dtype == DType::kI64) return *t.as<const int64_t>();
  if (t.dtype == DType::kI32) return *t.as<const int32_t>();
  return -1;
}

std::string type_string(DType dtype, const int64_t* dims, size_t rank) {
  std::string s = std::string(dtype_name(dtype)) + "[";
  for (size_t a = 0; a < rank; ++a) s += (a ? ", " : "") + std::to_string(dims[a]);
  return s + "]";
}

class CustomKernel final : public kernels::PreparedKernel {
 public:
  CustomKernel(const CustomOps::Entry& entry, const ops::Attrs& attrs)
      : entry_(entry),
        operands_(size_t(attrs.i(ops::attr::kCustomOperands))),
        dtype_(DType(attrs.i(ops::attr::kCustomDType))),
        rule_(attrs.ints(ops::attr::kCustomShape)) {}

  Status run(const kernels::KernelContext&, std::span<const kernels::TensorRef> inputs,
             std::span<kernels::TensorRef> outputs) override {
    if (inputs.size() < operands_ || outputs.size() != 1)
      return internal_error("custom op '" + entry_.name + "': operand count");
    SG_RETURN_IF_ERROR(check_output(inputs, outputs[0]));
    // The kernel is to write every item of the output; one that makes fewer
    // leaves zeros, never the bytes of an earlier value.
    if (outputs[0].nbytes() > 0) std::memset(outputs[0].data, 0, outputs[0].nbytes());
    CustomOpTensor in[kMaxOperands];
    std::vector<CustomOpTensor> many;
    CustomOpTensor* args = in;
    if (operands_ > kMaxOperands) {
      many.resize(operands_);
      args = many.data();
    }
    for (size_t k = 0; k < operands_; ++k) args[k] = view(inputs[k]);
    const CustomOpTensor out = view(outputs[0]);
    const Status s = entry_.kernel(entry_.user, args, operands_, &out);
    if (s.ok()) return s;
    // The kernel's own code ends the run (custom_op.h); the executor adds the line.
    return Status(s.code(), "custom op '" + entry_.name + "': " + s.message());
  }

  const char* name() const override { return "custom"; }

 private:
  static constexpr size_t kMaxOperands = 8;

  // The output the kernel is handed must be what the compiled rule says: its
  // dtype, its static dims, and its dynamic dims the values of the inputs after
  // the operands (in order).
  Status check_output(std::span<const kernels::TensorRef> inputs, const kernels::TensorRef& out) const {
    bool same = out.dtype == dtype_ && size_t(out.rank) == rule_.size();
    std::vector<int64_t> want;
    size_t next = operands_;
    for (const int64_t entry : rule_) {
      int64_t d = entry;
      if (entry == ops::attr::kDynamicDim) d = next < inputs.size() ? scalar_dim(inputs[next++]) : -1;
      same = same && want.size() < size_t(out.rank) && out.shape[want.size()] == d;
      want.push_back(d);
    }
    if (same) return Status::Ok();
    return internal_error("custom op '" + entry_.name + "': its output is " +
                          type_string(out.dtype, out.shape, size_t(out.rank)) + " but the compiled rule makes it " +
                          type_string(dtype_, want.data(), want.size()));
  }

  static CustomOpTensor view(const kernels::TensorRef& t) {
    CustomOpTensor v;
    v.dtype = t.dtype;
    v.rank = t.rank;
    v.shape = t.shape;
    v.data = t.data;
    return v;
  }

  const CustomOps::Entry entry_;  // a copy: the registry may grow after the Session is made
  size_t operands_;
  DType dtype_;               // the compiled rule: the result's dtype,
  std::vector<int64_t> rule_;  // and its dims (attr::kDynamicDim: the next dynamic dim input)
};

}  // namespace

std::unique_ptr<kernels::PreparedKernel> custom_kernel(const CustomOps* ops, const ops::Attrs& attrs) {
  if (ops == nullptr) return nullptr;
  const CustomOps::Entry* e = ops->find(attrs.s(ops::attr::kCustomName));
  if (e == nullptr) return nullptr;
  return std::make_unique<CustomKernel>(*e, attrs);
}

Status check_custom_kernels(const Program& program, size_t entry, const CustomOps* ops, CustomOpsApi api) {
  const ProgramImpl& impl = program_impl(program);
  if (entry >= impl.entry_impls.size()) return Status::Ok();  // Session::create names it
  // The functions the entry reaches, in the order they are first met.
  std::vector<uint32_t> reached{impl.entry_impls[entry].function};
  std::vector<bool> seen(impl.functions.size(), false);
  seen[reached[0]] = true;
  for (size_t i = 0; i < reached.size(); ++i) {
    for (const NodeInfo& node : impl.functions[reached[i]].nodes) {
      for (uint32_t callee : node.functions)
        if (!seen[callee]) {
          seen[callee] = true;
          reached.push_back(callee);
        }
      if (node.kind != NodeKind::kOp || node.op != ops::OpId::Custom) continue;
      const std::string& name = node.attrs.s(ops::attr::kCustomName);
      if (ops != nullptr && ops->find(name) != nullptr) continue;
      const bool c = api == CustomOpsApi::kC;
      const char* how = ops == nullptr ? (c ? "no registry was given: sg_session_options_set_custom_ops"
                                            : "SessionOptions::custom_ops is not set")
                                       : (c ? "add it with sg_custom_ops_add_v2" : "add it to SessionOptions::custom_ops");
      return invalid_argument(node.location + ": entry '" + impl.entries[entry].name + "' uses custom op '" + name +
                              "', which has no registered kernel (" + how + ")");
    }
  }
  return Status::Ok();
}

}  // namespace runtime
}  // namespace sg
