#include "placement.h"

#include <string>

namespace sg::runtime {
namespace {

class Placer {
 public:
  Placer(const ProgramImpl& program, const CoversFn& covers)
      : program_(program), covers_(covers), state_(program.functions.size(), kUnknown) {
    out_.functions.resize(program.functions.size());
  }

  ProgramPlacement run() {
    for (uint32_t f = 0; f < program_.functions.size(); ++f) classify(f);
    demote_callees_of_host_control();
    for (uint32_t f = 0; f < program_.functions.size(); ++f) place_function(f);
    return std::move(out_);
  }

 private:
  enum State : uint8_t { kUnknown, kVisiting, kDevice, kHost };

  static std::string describe(uint32_t n, const NodeInfo& node) {
    return "node " + std::to_string(n) + " (" + node.op_name + (node.location.empty() ? "" : " at " + node.location) +
           ")";
  }

  // Whether f is a device function; cycles (recursion) are host functions.
  bool classify(uint32_t f) {
    if (state_[f] == kDevice || state_[f] == kHost) return state_[f] == kDevice;
    if (state_[f] == kVisiting) return false;
    state_[f] = kVisiting;
    const FunctionImpl& fn = program_.functions[f];
    std::string reason;
    for (uint32_t n = 0; n < fn.nodes.size() && reason.empty(); ++n) {
      const NodeInfo& node = fn.nodes[n];
      switch (node.kind) {
        case NodeKind::kOp:
          if (!covers_(fn, node)) reason = describe(n, node) + " has no GPU kernel";
          else if (node.value_dependent_shape) reason = describe(n, node) + " takes its shape from run-time values";
          break;
        case NodeKind::kCall:
          reason = describe(n, node) + " is a call, run from the host";
          break;
        case NodeKind::kIf:
        case NodeKind::kWhile:
          for (uint32_t callee : node.functions)
            if (!classify(callee)) {
              reason = describe(n, node) + " holds " + program_.functions[callee].name + ", which runs on the host";
              break;
            }
          break;
      }
    }
    out_.functions[f].reason = reason;
    state_[f] = reason.empty() ? kDevice : kHost;
    return reason.empty();
  }

  // A function entered from the host (by a Call, or by an If/While that another
  // of its functions keeps on the host) takes its parameters in host memory, so
  // it is no device function whatever it holds; that may in turn keep another
  // If/While naming it on the host. Repeated until nothing changes.
  void demote_callees_of_host_control() {
    for (bool changed = true; changed;) {
      changed = false;
      for (const FunctionImpl& fn : program_.functions)
        for (uint32_t n = 0; n < fn.nodes.size(); ++n) {
          const NodeInfo& node = fn.nodes[n];
          if (node.kind == NodeKind::kOp) continue;
          bool all = node.kind != NodeKind::kCall;
          for (uint32_t callee : node.functions) all = all && state_[callee] == kDevice;
          if (all) continue;
          for (uint32_t callee : node.functions)
            if (state_[callee] == kDevice) {
              state_[callee] = kHost;
              out_.functions[callee].reason = "entered from the host by " + describe(n, node) + " of " + fn.name;
              changed = true;
            }
        }
    }
  }

  void place_function(uint32_t f) {
    const FunctionImpl& fn = program_.functions[f];
    FunctionPlacement& fp = out_.functions[f];
    fp.device_function = state_[f] == kDevice;
    fp.nodes.resize(fn.nodes.size());
    // Where each value is available: bit 0 host, bit 1 device.
    std::vector<uint8_t> avail(fn.values.size(), 0);
    const uint8_t home = fp.device_function ? 2 : 1;
    for (uint32_t p : fn.params) avail[p] = home;
    for (uint32_t v = 0; v < fn.values.size(); ++v)
      if (fn.values[v].is_constant) avail[v] |= 1;  // constants start in the mapped file (uploaded once per Session)
    const auto need = [&](std::vector<Transfer>& list, uint32_t v, Device d) {
      const uint8_t bit = d == Device::kGpu ? 2 : 1;
      if ((avail[v] & bit) != 0) return;
      if (d == Device::kGpu && fn.values[v].is_constant) {
        avail[v] |= bit;  // weights: uploaded with the Session, not per run
        return;
      }
      list.push_back({v, d});
      avail[v] |= bit;
      ++fp.transfers;
    };
    for (uint32_t n = 0; n < fn.nodes.size(); ++n) {
      const NodeInfo& node = fn.nodes[n];
      NodePlacement& np = fp.nodes[n];
      switch (node.kind) {
        case NodeKind::kOp:
          np.device = covers_(fn, node) ? Device::kGpu : Device::kCpu;
          break;
        case NodeKind::kCall:
          np.device = Device::kCpu;
          np.reason = "calls run from the host (frame stack)";
          break;
        case NodeKind::kIf:
        case NodeKind::kWhile: {
          bool all = true;
          for (uint32_t callee : node.functions) all = all && state_[callee] == kDevice;
          np.device_control = all;
          np.device = all ? Device::kGpu : Device::kCpu;
          if (!all)
            for (uint32_t callee : node.functions)
              if (state_[callee] != kDevice) {
                np.reason = program_.functions[callee].name + ": " + out_.functions[callee].reason;
                break;
              }
          break;
        }
      }
      for (size_t k = 0; k < node.inputs.size(); ++k) {
        const uint32_t v = node.inputs[k];
        need(np.before, v, np.device);
        // Shapes are inferred on the host from the scalar operands that set them.
        if (node.kind == NodeKind::kOp && node.value_dependent_shape && k > 0 && np.device == Device::kGpu)
          need(np.before, v, Device::kCpu);
      }
      const uint8_t made = np.device == Device::kGpu ? 2 : 1;
      for (uint32_t v : node.outputs) avail[v] = made;
    }
    for (uint32_t r : fn.results) need(fp.results, r, fp.device_function ? Device::kGpu : Device::kCpu);
  }

  const ProgramImpl& program_;
  const CoversFn& covers_;
  std::vector<State> state_;
  ProgramPlacement out_;
};

}  // namespace

const char* device_name(Device d) { return d == Device::kGpu ? "gpu" : "cpu"; }

ProgramPlacement place(const ProgramImpl& program, const CoversFn& gpu_covers) { return Placer(program, gpu_covers).run(); }

}  // namespace sg::runtime
