// Program: load (loader.h), verify (verifier.h), then decode the table once into
// the immutable ProgramImpl the executor runs.
#include <algorithm>
#include <map>
#include <utility>

#include "loader.h"
#include "program_impl.h"
#include "verifier.h"

namespace sg {
namespace runtime {
namespace {

template <class V>
size_t len(const V* v) {
  return v == nullptr ? 0 : v->size();
}

std::string str(const flatbuffers::String* s) { return s == nullptr ? std::string() : s->str(); }

std::vector<std::string> strings(const flatbuffers::Vector<flatbuffers::Offset<flatbuffers::String>>* v) {
  std::vector<std::string> out;
  for (size_t i = 0; i < len(v); ++i) out.push_back(str(v->Get(uint32_t(i))));
  return out;
}

std::vector<uint32_t> indices(const flatbuffers::Vector<uint32_t>* v) {
  return v == nullptr ? std::vector<uint32_t>() : std::vector<uint32_t>(v->begin(), v->end());
}

std::string location_of(const fb::Node& node, const std::vector<std::string>& files, const std::string& fn) {
  const fb::SourceLoc* loc = node.loc();
  if (loc == nullptr || loc->line() == 0 || loc->file() >= files.size()) return "<function " + fn + ">";
  return files[loc->file()] + ":" + std::to_string(loc->line()) + ":" + std::to_string(loc->column());
}

// Frees each value right after its last reader, and drops outputs nobody reads,
// so peak memory follows the live set rather than the function's size.
void plan_releases(FunctionImpl& fn) {
  const size_t n = fn.values.size();
  std::vector<int64_t> last_use(n, -1);
  std::vector<int64_t> defined_by(n, -1);
  std::vector<bool> keep(n, false);
  for (uint32_t r : fn.results) keep[r] = true;
  for (size_t i = 0; i < fn.nodes.size(); ++i) {
    for (uint32_t v : fn.nodes[i].inputs) last_use[v] = int64_t(i);
    for (uint32_t v : fn.nodes[i].outputs) defined_by[v] = int64_t(i);
  }
  for (size_t v = 0; v < n; ++v) {
    if (keep[v] || fn.values[v].is_constant) continue;
    if (last_use[v] >= 0)
      fn.nodes[size_t(last_use[v])].release_after.push_back(uint32_t(v));
    else if (defined_by[v] >= 0)
      fn.nodes[size_t(defined_by[v])].dead_outputs.push_back(uint32_t(v));
  }
}

FunctionImpl decode_function(const fb::Function& f, std::span<const uint8_t> data,
                             const fb::Graph& g, const std::vector<std::string>& files, QuantizedConstants& quantized) {
  FunctionImpl fn;
  fn.name = str(f.name());
  for (size_t v = 0; v < len(f.values()); ++v) {
    const fb::Value& value = *f.values()->Get(uint32_t(v));
    ValueInfo info;
    info.dtype = DType(value.dtype());
    info.tape = value.name() != nullptr && value.name()->string_view() == "gradient tape";
    for (size_t d = 0; d < len(value.shape()); ++d) {
      const fb::Dim* dim = value.shape()->Get(uint32_t(d));
      info.dims.push_back(dim->symbol() >= 0 ? -1 : dim->value());
    }
    if (value.constant() >= 0) {
      const fb::Constant* k = g.constants()->Get(uint32_t(value.constant()));
      info.is_constant = true;
      // Kernels only read their inputs, so the read-only mapping is safe to wrap.
      info.constant = Tensor::wrap(info.dtype, info.dims, static_cast<const void*>(data.data() + k->offset()));
      // A quantized constant: `constant` is bound once widen_constants has decided.
      info.quant = quantized.get(uint32_t(value.constant()), info.dims);
    }
    fn.values.push_back(std::move(info));
  }
  fn.params = indices(f.params());
  fn.results = indices(f.results());
  for (size_t i = 0; i < len(f.nodes()); ++i) {
    const fb::Node& node = *f.nodes()->Get(uint32_t(i));
    NodeInfo info;
    info.kind = NodeKind(node.kind());
    info.inputs = indices(node.inputs());
    info.outputs = indices(node.outputs());
    info.functions = indices(node.functions());
    info.location = location_of(node, files, fn.name);
    if (info.kind == NodeKind::kOp) {
      info.op = *ops::find_op(str(node.op()));  // the verifier has resolved it
      info.kernel = kernels::reference_kernel(info.op);
      info.value_dependent_shape = ops::has_flag(info.op, ops::kValueDependentShape);
      info.data_dependent_shape = ops::has_flag(info.op, ops::kDataDependentShape);
      info.op_name = ops::op_def(info.op).name;
      (void)decode_attrs(node, ops::op_def(info.op), &info.attrs);
    } else {
      info.op_name = node_kind_name(node.kind());
    }
    fn.nodes.push_back(std::move(info));
  }
  plan_releases(fn);
  return fn;
}

// Quantized constants (SPEC §13): widened to f32 when some use of some value of
// theirs has no kernel reading the stored bytes (another op, control flow, a
// result); then every value of the constant is bound to the f32 copy, else to the
// stored bytes, which only the quantized kernels read.
void widen_constants(ProgramImpl& impl) {
  std::vector<QuantizedConstant*> needs;
  for (const FunctionImpl& fn : impl.functions) {
    for (uint32_t r : fn.results)
      if (fn.values[r].quant != nullptr) needs.push_back(fn.values[r].quant.get());
    for (const NodeInfo& node : fn.nodes)
      for (size_t i = 0; i < node.inputs.size(); ++i) {
        const ValueInfo& v = fn.values[node.inputs[i]];
        if (v.quant == nullptr) continue;
        if (node.kind != NodeKind::kOp || node.op == ops::OpId::Custom ||
            !has_quantized_kernel(node.op, node.attrs, i, *v.quant, impl.dynamic_quantization))
          needs.push_back(v.quant.get());
      }
  }
  for (QuantizedConstant* q : needs) widen_quantized(*q);
  for (FunctionImpl& fn : impl.functions)
    for (ValueInfo& v : fn.values) {
      if (v.quant == nullptr) continue;
      const void* bytes = v.quant->widened() ? static_cast<const void*>(v.quant->values.data()) : v.quant->data;
      v.constant = Tensor::wrap(v.dtype, v.dims, bytes);
      if (v.quant->widened() && std::find(impl.widened_constants.begin(), impl.widened_constants.end(), v.quant) ==
                                    impl.widened_constants.end())
        impl.widened_constants.push_back(v.quant);
    }
}

TensorSpec decode_sig(const fb::TensorSig& sig, const std::vector<std::string>& symbols) {
  TensorSpec spec;
  spec.name = str(sig.name());
  spec.dtype = DType(sig.dtype());
  for (size_t d = 0; d < len(sig.shape()); ++d) {
    const fb::Dim* dim = sig.shape()->Get(uint32_t(d));
    spec.shape.push_back(dim->symbol() >= 0 ? -1 : dim->value());
    spec.dim_names.push_back(dim->symbol() >= 0 ? symbols[size_t(dim->symbol())] : std::string());
  }
  return spec;
}

Result<std::shared_ptr<const Program>> build_program(MappedBytes bytes, const LoadOptions& options) {
  SG_ASSIGN_OR_RETURN(CheckedFile file, check_file(bytes.span(), options));
  const fb::Graph& g = *file.graph;
  SG_RETURN_IF_ERROR(verify_graph(g, file.data_segment, file.header.flags));

  auto impl = std::make_unique<ProgramImpl>();
  impl->major = file.header.major;
  impl->minor = file.header.minor;
  impl->dynamic_quantization = options.dynamic_quantization;
  const std::vector<std::string> symbols = strings(g.symbols());
  const std::vector<std::string> files = strings(g.source_files());
  QuantizedConstants quantized(g, file.data_segment);
  for (size_t f = 0; f < len(g.functions()); ++f)
    impl->functions.push_back(
        decode_function(*g.functions()->Get(uint32_t(f)), file.data_segment, g, files, quantized));
  widen_constants(*impl);
  for (size_t e = 0; e < len(g.entries()); ++e) {
    const fb::Entry& entry = *g.entries()->Get(uint32_t(e));
    EntryInfo info;
    info.name = str(entry.name());
    for (size_t k = 0; k < len(entry.inputs()); ++k)
      info.inputs.push_back(decode_sig(*entry.inputs()->Get(uint32_t(k)), symbols));
    for (size_t k = 0; k < len(entry.outputs()); ++k)
      info.outputs.push_back(decode_sig(*entry.outputs()->Get(uint32_t(k)), symbols));
    for (size_t k = 0; k < len(entry.reads()); ++k) info.reads.push_back(entry.reads()->Get(uint32_t(k)));
    for (size_t k = 0; k < len(entry.writes()); ++k) info.writes.push_back(entry.writes()->Get(uint32_t(k)));
    impl->entries.push_back(std::move(info));
    impl->entry_impls.push_back(EntryImpl{entry.function()});
  }
  for (size_t v = 0; v < len(g.variables()); ++v) {
    const fb::Variable& var = *g.variables()->Get(uint32_t(v));
    TensorSpec spec;
    spec.name = str(var.name());
    spec.dtype = DType(var.dtype());
    for (size_t d = 0; d < len(var.shape()); ++d) {
      spec.shape.push_back(var.shape()->Get(uint32_t(d))->value());
      spec.dim_names.emplace_back();
    }
    const fb::Constant* c = g.constants()->Get(var.initial());
    impl->variable_impls.push_back(
        VariableImpl{Tensor::wrap(spec.dtype, Span<const int64_t>(spec.shape), file.data_segment.data() + c->offset())});
    impl->variables.push_back(std::move(spec));
  }
  for (size_t c = 0; c < len(g.constants()); ++c) impl->constant_bytes += g.constants()->Get(uint32_t(c))->size();
  impl->data_segment = file.data_segment;  // moving `bytes` keeps its memory where it is
  impl->header = file.header;
  impl->bytes = std::move(bytes);
  return ProgramAccess::make(std::move(impl));
}

}  // namespace
}  // namespace runtime

Program::Program(std::unique_ptr<ProgramImpl> impl) : impl_(std::move(impl)) {}
Program::~Program() = default;

Result<std::shared_ptr<const Program>> Program::load_file(const std::string& path, const LoadOptions& options) {
  SG_ASSIGN_OR_RETURN(runtime::MappedBytes bytes, runtime::MappedBytes::map_file(path));
  return runtime::build_program(std::move(bytes), options);
}

Result<std::shared_ptr<const Program>> Program::load_memory(Span<const uint8_t> bytes,
                                                            const LoadOptions& options) {
  SG_ASSIGN_OR_RETURN(runtime::MappedBytes mapped, runtime::MappedBytes::from_memory(bytes));
  return runtime::build_program(std::move(mapped), options);
}

Result<std::shared_ptr<const Program>> Program::load_fd(int fd, uint64_t offset, uint64_t length,
                                                        const LoadOptions& options) {
  SG_ASSIGN_OR_RETURN(runtime::MappedBytes mapped, runtime::MappedBytes::map_range(fd, offset, length));
  return runtime::build_program(std::move(mapped), options);
}

const std::vector<EntryInfo>& Program::entries() const { return impl_->entries; }
const std::vector<TensorSpec>& Program::variables() const { return impl_->variables; }

const EntryInfo* Program::find_entry(std::string_view name) const {
  for (const EntryInfo& e : impl_->entries)
    if (e.name == name) return &e;
  return nullptr;
}

std::vector<FunctionInfo> Program::functions() const {
  std::vector<FunctionInfo> out;
  for (const runtime::FunctionImpl& fn : impl_->functions) {
    FunctionInfo info;
    info.name = fn.name;
    info.num_values = fn.values.size();
    info.num_nodes = fn.nodes.size();
    std::map<std::string, size_t> counts;
    for (const runtime::NodeInfo& node : fn.nodes) {
      ++counts[node.op_name];
      switch (node.kind) {
        case runtime::NodeKind::kIf:
          info.edges.push_back({"if-then", node.functions[0]});
          info.edges.push_back({"if-else", node.functions[1]});
          break;
        case runtime::NodeKind::kWhile:
          info.edges.push_back({"while-cond", node.functions[0]});
          info.edges.push_back({"while-body", node.functions[1]});
          break;
        case runtime::NodeKind::kCall: info.edges.push_back({"call", node.functions[0]}); break;
        case runtime::NodeKind::kOp: break;
      }
    }
    info.op_counts.assign(counts.begin(), counts.end());
    out.push_back(std::move(info));
  }
  return out;
}

uint64_t Program::constant_bytes() const { return impl_->constant_bytes; }
uint16_t Program::format_major() const { return impl_->major; }
uint16_t Program::format_minor() const { return impl_->minor; }

}  // namespace sg
