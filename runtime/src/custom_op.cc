// The custom op registry (stagegraph/custom_op.h) and the prepared kernel that
// runs a registered kernel for a `custom` node.
#include "stagegraph/custom_op.h"

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

class CustomKernel final : public kernels::PreparedKernel {
 public:
  CustomKernel(const CustomOps::Entry& entry, size_t operands) : entry_(entry), operands_(operands) {}

  Status run(const kernels::KernelContext&, std::span<const kernels::TensorRef> inputs,
             std::span<kernels::TensorRef> outputs) override {
    if (inputs.size() < operands_ || outputs.size() != 1)
      return internal_error("custom op '" + entry_.name + "': operand count");
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
};

}  // namespace

std::unique_ptr<kernels::PreparedKernel> custom_kernel(const CustomOps* ops, const ops::Attrs& attrs) {
  if (ops == nullptr) return nullptr;
  const CustomOps::Entry* e = ops->find(attrs.s(ops::attr::kCustomName));
  if (e == nullptr) return nullptr;
  return std::make_unique<CustomKernel>(*e, size_t(attrs.i(ops::attr::kCustomOperands)));
}

Status check_custom_kernels(const ProgramImpl& program, const CustomOps* ops) {
  for (const FunctionImpl& fn : program.functions) {
    for (const NodeInfo& node : fn.nodes) {
      if (node.kind != NodeKind::kOp || node.op != ops::OpId::Custom) continue;
      const std::string& name = node.attrs.s(ops::attr::kCustomName);
      if (ops == nullptr || ops->find(name) == nullptr)
        return invalid_argument("the graph uses custom op '" + name + "', which has no registered kernel" +
                                (ops == nullptr ? " (SessionOptions::custom_ops is not set)"
                                                : " (add it to SessionOptions::custom_ops)"));
    }
  }
  return Status::Ok();
}

}  // namespace runtime
}  // namespace sg
