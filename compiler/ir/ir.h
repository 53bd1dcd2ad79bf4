// The compiler's IR: a module of graph functions over SSA values (DESIGN.md #3).
// A node has inputs, outputs, attributes, a source span and, for If/While/Call,
// references to other functions (which may include the function itself: recursion).
// The file format (schema/stagegraph.fbs) is this IR, frozen; see emit/.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "frontend/diagnostics.h"
#include "ops/attrs.h"
#include "ops/dim.h"
#include "ops/infer.h"
#include "ops/op_table.h"

namespace sg::compiler::ir {

using Dim = ops::SymDim;
using Type = ops::TensorType<ops::SymDim>;

// Constant data (module constants, folded values, weights), C order.
struct Constant {
  DType dtype = DType::kF32;
  std::vector<int64_t> shape;
  std::vector<uint8_t> bytes;
  // From sg.weight: its name (for --quantize-report), and with quantize= the storage
  // asked for and the f32 values before quantization (bytes holds them widened back).
  std::string weight;
  std::string quantize;
  std::shared_ptr<const std::vector<uint8_t>> unquantized;
};

struct Value {
  Type type;
  std::string name;       // a source variable name where one exists, for messages
  int32_t constant = -1;  // index into Module::constants, or -1
  SourceSpan span;        // where it was defined
};

enum class NodeKind : uint8_t { kOp, kIf, kWhile, kCall };

// Semantics per kind are those of schema/stagegraph.fbs:
//   kIf:    inputs[0] bool scalar cond, inputs[1..] passed to both branches;
//           functions = {then, else}; outputs = branch results.
//   kWhile: inputs = initial carried values; functions = {cond, body};
//           outputs = final carried values.
//   kCall:  functions = {callee}; inputs = args; outputs = results.
struct Node {
  NodeKind kind = NodeKind::kOp;
  ops::OpId op = ops::OpId::Add;  // kOp only
  ops::Attrs attrs;
  std::vector<int32_t> inputs;    // value ids in the enclosing function
  std::vector<int32_t> outputs;
  std::vector<int32_t> functions; // function ids in the module
  SourceSpan span;
};

struct Function {
  std::string name;
  std::vector<Value> values;
  std::vector<int32_t> params;
  std::vector<int32_t> results;
  std::vector<Node> nodes;  // in execution order

  int32_t add_value(Type type, std::string value_name = {}, SourceSpan span = {}) {
    values.push_back(Value{std::move(type), std::move(value_name), -1, span});
    return int32_t(values.size() - 1);
  }
};

struct Entry {
  std::string name;
  int32_t function = -1;
  std::vector<std::string> input_names;   // the function's first params, in order
  std::vector<std::string> output_names;  // its first results: output_0... or dict keys
  // Program state (SPEC §12): the variables the entry reads, bound to the params after
  // the inputs, and those it assigns, taken from the results after the outputs.
  std::vector<int32_t> reads;
  std::vector<int32_t> writes;
};

// A variable of sg.variables: named by its path ("params.0.w"), with a static type
// and its initial value (a module constant).
struct Variable {
  std::string name;
  Type type;
  int32_t constant = -1;
};

// Symbolic dim names, module-wide. Entry dims keep their source names ("N");
// derived dims get fresh names ("N#1"); the file stores each dim by name or, for
// polynomials, by its printed form ("N*2").
struct SymbolTable {
  std::vector<std::string> names;
  int32_t intern(const std::string& name);   // existing id or a new one
  int32_t fresh(const std::string& hint);    // always new, named hint#k
  std::string name(int32_t id) const { return names.at(size_t(id)); }
};

struct Module {
  std::vector<Function> functions;
  std::vector<Entry> entries;
  std::vector<Variable> variables;
  std::vector<Constant> constants;
  SymbolTable symbols;
  const SourceManager* sources = nullptr;

  std::string format_dim(const Dim& d) const;
  std::string format_shape(const std::vector<Dim>& shape) const;  // "[N, 784]"
  std::string format_type(const Type& t) const;                   // "f32[N, 784]"
};

// Checks structural invariants: ids in range, each value defined once before
// use, op arities and attribute kinds, If/While/Call signatures agree with their
// functions, entries refer to functions. Returns "" when valid, else a message.
std::string verify(const Module& m);

// A stable text form used by golden tests and `graph-compile --dump-ir`.
std::string print(const Module& m);

}  // namespace sg::compiler::ir
