#include "emit/quantize.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>

namespace sg::compiler {
namespace {

namespace quant = kernels::quant;

enum class Role : uint8_t { kNone, kWeight, kEmbedding };

// What each constant is used as: a dense or convolution weight wins over an
// embedding table.
std::vector<Role> constant_roles(const ir::Module& m) {
  std::vector<Role> roles(m.constants.size(), Role::kNone);
  for (const ir::Function& f : m.functions)
    for (const ir::Node& n : f.nodes) {
      if (n.kind != ir::NodeKind::kOp) continue;
      auto mark = [&](size_t input, Role role) {
        if (input >= n.inputs.size()) return;
        const int32_t c = f.values[size_t(n.inputs[input])].constant;
        if (c >= 0 && roles[size_t(c)] != Role::kWeight) roles[size_t(c)] = role;
      };
      switch (n.op) {
        case ops::OpId::MatMul:
        case ops::OpId::FullyConnected:
        case ops::OpId::Conv2D:
        case ops::OpId::Conv2DBias: mark(1, Role::kWeight); break;
        case ops::OpId::Take: mark(0, Role::kEmbedding); break;
        default: break;
      }
    }
  return roles;
}

}  // namespace

std::vector<QuantizedConstant> quantize_constants(const ir::Module& m, const QuantizeOptions& o,
                                                  std::vector<std::string>* notes) {
  const std::vector<Role> roles = constant_roles(m);
  std::vector<bool> variable(m.constants.size(), false);
  for (const ir::Variable& v : m.variables) variable[size_t(v.constant)] = true;
  std::vector<QuantizedConstant> out;
  for (size_t i = 0; i < m.constants.size(); ++i) {
    const ir::Constant& c = m.constants[i];
    std::optional<quant::Storage> storage;
    if (!c.quantize.empty()) {
      quant::Storage s;
      if (quant::storage_from_name(c.quantize, &s)) storage = s;
    } else if (o.storage && (roles[i] == Role::kWeight || (roles[i] == Role::kEmbedding && o.embeddings))) {
      storage = o.storage;
    }
    if (!storage) continue;
    const std::string name = c.weight.empty() ? "constant " + std::to_string(i) : "weight '" + c.weight + "'";
    if (c.dtype != DType::kF32 || variable[i]) {
      if (!c.quantize.empty()) notes->push_back(name + " stays f32: it is a variable's initial value or not f32");
      continue;
    }
    const std::vector<uint8_t>& f32 = c.unquantized ? *c.unquantized : c.bytes;
    const uint64_t n = f32.size() / 4;
    if (n == 0) continue;
    std::vector<float> w(n);
    std::memcpy(w.data(), f32.data(), f32.size());
    if (!std::all_of(w.begin(), w.end(), [](float v) { return std::isfinite(v); })) {
      notes->push_back(name + " stays f32: it has non-finite values");
      continue;
    }
    QuantizedConstant q;
    q.constant = int32_t(i);
    q.name = c.weight.empty() ? "constant " + std::to_string(i) : c.weight;
    q.layout = quant::default_layout(*storage, c.shape);
    q.stored = quant::quantize(q.layout, w.data());
    q.f32_bytes = f32.size();
    std::vector<float> back(n);
    quant::dequantize(quant::WeightView{&q.layout, q.stored.data.data(), q.stored.scales.data()}, 0, n, back.data());
    double sum = 0;
    for (uint64_t k = 0; k < n; ++k) {
      const double e = std::fabs(double(back[k]) - double(w[k]));
      q.max_abs_error = std::max(q.max_abs_error, e);
      sum += e;
    }
    q.mean_abs_error = sum / double(n);
    out.push_back(std::move(q));
  }
  return out;
}

void print_quantize_report(const std::vector<QuantizedConstant>& q, std::ostream& out) {
  char line[512];
  std::snprintf(line, sizeof line, "%-24s %-14s %-6s %12s %12s %12s %12s\n", "weight", "shape", "as", "f32 bytes",
                "bytes", "max |err|", "mean |err|");
  out << line;
  uint64_t before = 0, after = 0;
  for (const QuantizedConstant& c : q) {
    std::string shape = "[";
    for (size_t d = 0; d < c.layout.dims.size(); ++d) shape += (d ? "," : "") + std::to_string(c.layout.dims[d]);
    shape += "]";
    std::snprintf(line, sizeof line, "%-24s %-14s %-6s %12llu %12llu %12.4g %12.4g\n", c.name.c_str(), shape.c_str(),
                  quant::storage_name(c.layout.storage), static_cast<unsigned long long>(c.f32_bytes),
                  static_cast<unsigned long long>(c.stored_bytes()), c.max_abs_error, c.mean_abs_error);
    out << line;
    before += c.f32_bytes;
    after += c.stored_bytes();
  }
  std::snprintf(line, sizeof line, "%-24s %-14s %-6s %12llu %12llu\n", "total", "", "",
                static_cast<unsigned long long>(before), static_cast<unsigned long long>(after));
  out << line;
}

}  // namespace sg::compiler
