#include "device_placement.h"

namespace sg::runtime {

DevicePlacement::DevicePlacement(const ProgramImpl& program, DeviceContext& device) {
  kernels_.resize(program.functions.size());
  std::vector<kernels::InputInfo> infos;
  for (size_t f = 0; f < program.functions.size(); ++f) {
    const FunctionImpl& fn = program.functions[f];
    kernels_[f].resize(fn.nodes.size());
    for (size_t n = 0; n < fn.nodes.size(); ++n) {
      const NodeInfo& node = fn.nodes[n];
      if (node.kind != NodeKind::kOp) continue;
      infos.assign(node.inputs.size(), kernels::InputInfo());
      bool fits = true;
      for (size_t k = 0; k < node.inputs.size(); ++k) {
        const ValueInfo& v = fn.values[node.inputs[k]];
        fits = fits && v.dims.size() <= size_t(kernels::kMaxRank);
        infos[k].dtype = v.dtype;
        infos[k].rank = int(std::min(v.dims.size(), size_t(kernels::kMaxRank)));
        for (int d = 0; d < infos[k].rank; ++d) infos[k].shape[d] = v.dims[size_t(d)];
        infos[k].constant = v.is_constant ? v.constant.data() : nullptr;
        // A quantized constant kept only in its stored form runs on the host's
        // quantized kernel (a device reads f32 values).
        fits = fits && (v.quant == nullptr || v.quant->widened());
      }
      for (uint32_t v : node.outputs) fits = fits && fn.values[v].dims.size() <= size_t(kernels::kMaxRank);
      if (!fits) continue;
      kernels_[f][n] = device.prepare(node, infos);
      if (kernels_[f][n] != nullptr) ++device_nodes_;
    }
  }
}

}  // namespace sg::runtime
