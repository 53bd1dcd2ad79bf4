// stagegraph._runtime.op_graph: the .sgraph bytes of a one-node program, for eager
// mode on the runtime's kernels (SPEC §1, §14; stagegraph/_kernels.py). The graph
// is written with schema/builder/graph_builder.h, as the runtime's tests and
// benchmarks write theirs: the op table's own shape rule gives the result types,
// so no compiler code is linked.
#include "op_graph.h"

#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "graph_builder.h"
#include "ops/infer.h"
#include "ops/op_table.h"

namespace nb = nanobind;

namespace {

// One attribute from its Python value, by the kind the op table declares.
sg::ops::AttrValue attr_value(const sg::ops::AttrSpec& spec, nb::handle v, std::string_view op) {
  using sg::ops::AttrKind;
  using sg::ops::AttrValue;
  try {
    switch (spec.kind) {
      case AttrKind::kInt: return AttrValue::Int(nb::cast<int64_t>(v));
      case AttrKind::kInts: return AttrValue::Ints(nb::cast<std::vector<int64_t>>(v));
      case AttrKind::kFloat: return AttrValue::Float(nb::cast<double>(v));
      case AttrKind::kFloats: return AttrValue::Floats(nb::cast<std::vector<double>>(v));
      case AttrKind::kString: return AttrValue::String(nb::cast<std::string>(v));
    }
  } catch (const nb::cast_error&) {
  }
  throw nb::type_error(("op_graph: attribute '" + std::string(spec.name) + "' of " + std::string(op) +
                        " has the wrong kind").c_str());
}

nb::bytes op_graph(const std::string& op, const std::vector<std::pair<std::string, std::vector<int64_t>>>& inputs,
                   nb::dict attrs) {
  namespace ops = sg::ops;
  const std::optional<ops::OpId> id = ops::find_op(op);
  if (!id) throw nb::value_error(("op_graph: no op '" + op + "'").c_str());
  const ops::OpDef& def = ops::op_def(*id);
  if (ops::has_flag(*id, ops::kSideEffect)) throw nb::value_error(("op_graph: '" + op + "' has effects").c_str());

  ops::Attrs decoded;
  sg::testing::NodeSpec node;
  node.op = op;
  node.version = def.version;
  for (const ops::AttrSpec& spec : def.attrs) {
    if (spec.optional && !attrs.contains(spec.name)) break;  // the optional ones come last
    if (!attrs.contains(spec.name))
      throw nb::value_error(("op_graph: " + op + " needs the attribute '" + spec.name + "'").c_str());
    ops::AttrValue v = attr_value(spec, attrs[spec.name], op);
    node.attrs.emplace_back(spec.name, v);
    decoded.values.push_back(std::move(v));
  }
  if (attrs.size() != decoded.values.size())
    throw nb::value_error(("op_graph: " + op + " has " + std::to_string(def.attrs.size()) + " attributes").c_str());

  std::vector<ops::TensorType<int64_t>> in;
  std::vector<size_t> ranks;
  for (const auto& [name, shape] : inputs) {
    const std::optional<sg::DType> dtype = sg::dtype_from_name(name);
    if (!dtype) throw nb::value_error(("op_graph: no dtype '" + name + "'").c_str());
    in.push_back({*dtype, shape});
    ranks.push_back(shape.size());
  }
  if (int(in.size()) < def.min_inputs || (def.max_inputs >= 0 && int(in.size()) > def.max_inputs))
    throw nb::value_error(("op_graph: " + op + " takes another number of inputs").c_str());
  sg::Status st = ops::check_attrs(*id, decoded, ranks);
  std::vector<ops::TensorType<int64_t>> out;
  if (st.ok()) {
    const std::vector<std::optional<int64_t>> scalars(in.size());
    ops::ConcreteInferContext ctx;
    st = ops::infer<int64_t>(*id, decoded, in, scalars, out, ctx);
  }
  if (!st.ok()) throw nb::value_error(st.message().c_str());

  sg::testing::FunctionSpec f;
  f.name = op;
  std::vector<std::string> in_names, out_names;
  for (const auto& t : in) {
    std::vector<int64_t> dims(t.shape.begin(), t.shape.end());
    sg::testing::ShapeSpec s;
    for (int64_t d : dims) s.push_back({d, -1});
    node.inputs.push_back(f.param(t.dtype, std::move(s)));
    in_names.push_back("x" + std::to_string(in_names.size()));
  }
  for (const auto& t : out) {
    sg::testing::ShapeSpec s;
    for (int64_t d : t.shape) s.push_back({d, -1});
    node.outputs.push_back(f.value(t.dtype, std::move(s)));
    f.results.push_back(node.outputs.back());
    out_names.push_back("y" + std::to_string(out_names.size()));
  }
  node.line = 1;
  node.column = 1;
  f.nodes.push_back(std::move(node));
  sg::testing::GraphSpec g;
  g.source_files = {"<eager " + op + ">"};
  g.add_entry("op", g.add_function(std::move(f)), in_names, out_names);
  const std::vector<uint8_t> bytes = sg::testing::build_sgraph(g);
  return nb::bytes(reinterpret_cast<const char*>(bytes.data()), bytes.size());
}

}  // namespace

void register_op_graph(nb::module_& m) {
  m.def("op_graph", &op_graph, nb::arg("op"), nb::arg("inputs"), nb::arg("attrs"),
        "The .sgraph bytes of a program with one entry 'op' (inputs x0.., outputs y0..) that runs "
        "`op` once: inputs are (dtype name, shape) pairs, attrs the op's attributes by name.");
}
