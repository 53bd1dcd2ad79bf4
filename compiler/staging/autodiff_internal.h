// The reverse-mode transform's internals, shared by autodiff.cc (functions, control
// flow, tapes) and autodiff_rules.cc (the ops' rules). See autodiff.h.
#pragma once

#include "staging/autodiff.h"
#include "staging/differentiation.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <map>
#include <memory>
#include <numeric>
#include <optional>
#include <set>
#include <tuple>
#include <string>
#include <utility>

#include "staging/stager.h"

namespace sg::compiler::staging::autodiff_detail {

using ops::OpId;
using Grads = std::vector<std::optional<Value>>;


inline ops::Attrs ints_attr(std::vector<int64_t> v) {
  ops::Attrs a;
  a.values.push_back(ops::AttrValue::Ints(std::move(v)));
  return a;
}

// The While widened to keep what its backward reads (DESIGN.md #14).
struct Tape {
  int32_t count = -1;               // iterations run (i64 scalar), in the new function
  std::vector<int32_t> taped;       // body values kept per iteration (ids in the body)
  std::vector<int32_t> stacks;      // one tape per taped value, [T, ...], in the new function
  // Carried lists the body appends to (concatenate(list, item) on axis 0): the
  // value an iteration starts from is a prefix of the final list, as long as the
  // list was then plus the iteration's index, so no tape is needed.
  std::vector<size_t> appended;
  std::vector<int32_t> start_lengths;  // the list's length before the loop (i64)
  std::vector<bool> mask;           // the carried positions differentiated
  int32_t adjoint = -1;             // the body's adjoint (recomputes its forward)
  // Where the body's backward could be split from its forward: the function that
  // runs the backward alone from the values it reads (body ids), kept per iteration.
  int32_t backward = -1;
  std::vector<int32_t> backward_reads;
  std::map<int32_t, size_t> shifted;  // body value -> the tape (index into taped) read one on
};

// Ops a loop's backward recomputes from what it has rather than keep per iteration.
inline bool cheap_to_recompute(ops::OpId op) {
  switch (op) {
    case ops::OpId::Slice: case ops::OpId::Take: case ops::OpId::ExpandDims: case ops::OpId::Squeeze:
    case ops::OpId::Reshape: case ops::OpId::Cast: case ops::OpId::ShapeDim:
      return true;
    default:
      return false;
  }
}

// Whether body result j appends to parameter j: concatenate(param_j, item) on axis 0.
inline bool appends_to(const ir::Function& body, size_t j) {
  for (const ir::Node& n : body.nodes)
    if (n.kind == ir::NodeKind::kOp && n.op == ops::OpId::Concatenate && n.outputs[0] == body.results[j])
      return n.attrs.i(0) == 0 && n.inputs.size() == 2 && n.inputs[0] == body.params[j];
  return false;
}

// A set of graph functions differentiated together through tapes (autodiff_tape.cc).
// The results of a Call or If node that depend on its differentiated inputs
// (`results`) and that a cotangent reaches (`useful`, per value of the enclosing
// function): only those get a cotangent parameter in the adjoint, so a result the
// program never reads (a branch's value kept for nothing) adds no zeros to it.
inline std::vector<bool> reached_results(std::vector<bool> results, const ir::Node& node,
                                         const std::vector<bool>& useful) {
  for (size_t k = 0; k < results.size(); ++k) results[k] = results[k] && useful[size_t(node.outputs[k])];
  return results;
}

struct Closure {
  struct Member {
    std::tuple<int32_t, std::vector<bool>, std::vector<bool>> key;  // fn, params, results
    std::map<size_t, size_t> children;  // taped node -> member (its then member for an If)
    std::map<size_t, size_t> else_children;
    std::vector<int32_t> residuals;     // fn's values kept
    std::vector<ir::Type> types;        // one per residual
    int32_t core = -1;                  // the backward over (params, cotangents, residuals)
    int32_t forward = -1, backward = -1;
    size_t first_tape = 0;
    // With residuals: its counter (the rows of its tapes not yet read back), and in
    // its backward the row it reads, one below the counter it is handed.
    size_t counter = SIZE_MAX;
    int32_t row = -1;
  };
  std::vector<Member> members;
  std::vector<ir::Type> tapes;  // every member's, in order: [T, residual shape...]
  size_t counters = 0;          // members with residuals
  // Weight gradients deferred to one product after the root's backward
  // (autodiff_defer.cc): row lists ([S, K] and [S, N], S a fresh symbol), which every
  // member's backward takes and returns after its gradients, and per product the
  // root member's gradient (index into its backward's results) that P^T Q adds to,
  // with the lists of P's and Q's rows (terms of one member with one Q share its list);
  // a bias's gradient (acc + q per activation, q a vector) keeps q's rows only
  // (rows_a kNoRows) and adds their sum.
  std::vector<ir::Type> row_lists;
  static constexpr size_t kNoRows = SIZE_MAX;
  // Where P's rows are the member's own residual (h_left), one row per activation,
  // the forward's tape holds them already (`tape`, rows_a kNoRows): the backward
  // appends Q's rows before it calls its callees, so its list runs in exactly the
  // reverse order of the tape's rows, and the product is tape^T flip(Q).
  struct DeferredRows {
    size_t slot = 0, rows_a = 0, rows_b = 0, tape = kNoRows;
  };
  bool rows_before_calls = false;  // the backwards append before their Calls
  std::vector<DeferredRows> deferred;
  // In a member's backward: add node `add` = acc + term, term = matmul(P^T, Q),
  // bypassed; P's and Q's rows go to the lists of `deferred[product]`.
  struct DeferredTerm {
    size_t add = 0;
    int32_t acc = -1, term = -1;
    size_t product = 0;
    bool sum = false;  // term is the row itself (a bias), not matmul(P^T, Q)
  };
};

class Vjp {
 public:
  Vjp(Stager& s, SourceSpan span) : s_(s), call_span_(span) {}

  int32_t build(const VjpRequest& r);

 private:
  // The adjoint of a branch, loop body or callee: every float parameter gets a
  // gradient, every float result a cotangent, no primal results. Memoized, so
  // the adjoint of a recursive function calls itself.
  int32_t nested(int32_t f, const std::vector<bool>& params, const std::vector<bool>& results);
  // Which results of function f depend on its parameters that `params` marks.
  std::vector<bool> active_results(int32_t f, const std::vector<bool>& params);
  // The carried positions of a loop body that depend on those `params` marks,
  // through any number of iterations.
  std::vector<bool> loop_mask(int32_t body, std::vector<bool> params);
  // Per input of `node` from `first` on: a float value that depends on a differentiated one.
  std::vector<bool> active_inputs(const ir::Node& node, size_t first);

  // ---- per function being built ------------------------------------------------
  struct Work {
    ir::Function src;
    int32_t src_id = -1;
    std::vector<int32_t> map;               // src value -> new value
    std::map<int32_t, Value> ct;            // src value -> cotangent
    std::vector<bool> active;               // depends on a differentiated parameter
    std::vector<bool> useful;               // a cotangent reaches it
    std::map<size_t, Tape> tapes;           // node index -> its widened While
    // Recursion through a tape (autodiff_tape.cc): the closure whose member this
    // adjoint is (its Calls and Ifs then read the callee's residuals off the tapes),
    // and in other functions, the Calls that run a closure's taped forward.
    const Closure* closure = nullptr;
    size_t member = 0;
    struct TapedCall {
      const Closure* closure = nullptr;
      std::vector<int32_t> tapes;  // after the forward, in the new function
    };
    std::map<size_t, TapedCall> taped_calls;  // node index -> its taped forward
  };
  Work* w_ = nullptr;

  int32_t remap(int32_t id);
  Value fwd(int32_t src_id) { return s_.staged(remap(src_id)); }
  void accumulate(int32_t src_id, const Value& g);
  std::optional<Value> ct_of(int32_t src_id) const {
    auto it = w_->ct.find(src_id);
    if (it == w_->ct.end()) return std::nullopt;
    return it->second;
  }
  Value ct_or_zeros(int32_t src_id) {
    if (auto c = ct_of(src_id)) return *c;
    return zeros_like(fwd(src_id));
  }
  void copy_forward(size_t index, const ir::Node& node);
  void widen_while(size_t index, const ir::Node& node);
  void backward(size_t index, const ir::Node& node);
  void backward_if(size_t index, const ir::Node& node);
  void backward_call(size_t index, const ir::Node& node);
  void backward_while(size_t index, const ir::Node& node);
  // ---- recursion through a tape (autodiff_tape.cc) ------------------------------
  // The closure of a differentiated Call of a function that calls others (recursion
  // included): every (function, params, results) variant its Calls and Ifs reach.
  // Each gets a taped forward (its results, and each tape with its own residuals
  // appended after its callees') and a backward that reads its residuals back
  // instead of recomputing its forward. The backwards run in exactly the reverse
  // order of the forwards, so each reads the last row not yet read: a counter per
  // member runs through the backwards instead of row indices kept on tapes.
  using Variant = std::tuple<int32_t, std::vector<bool>, std::vector<bool>>;
  // Null where the closure cannot be taped (a differentiated While inside, a
  // residual without a static shape): the Call keeps its recomputing adjoint.
  const Closure* tape_closure(const Variant& root);
  std::optional<Closure> discover(const Variant& root);
  bool split_core(Closure& c, size_t k, int32_t adj);
  void taped_forward(const Closure& c, size_t k);
  void taped_backward(Closure& c, size_t k);
  // zeros([0, ...]) of a tape or row list's type.
  int32_t empty_rows(const ir::Type& t);
  // In a function outside the closure: runs the closure's forward from empty tapes.
  bool taped_call(size_t index, const ir::Node& node);
  // The backward of a Call or If whose forward kept its residuals, false if it did
  // not: it hands the callee the gradients of `grads_for` so far, which come back
  // with the callee's added (no zeros where a callee does not use a parameter).
  bool backward_taped(size_t index, const ir::Node& node, const std::vector<int32_t>& inputs,
                      const std::vector<ir::Type>& types, const std::vector<int32_t>& grads_for);
  // Values a differentiated parameter reaches, and values a cotangent reaches.
  void activity(int32_t f, const ir::Function& src, const std::vector<bool>& params,
                const std::vector<bool>& results, std::vector<bool>& active, std::vector<bool>& useful) const;
  Grads op_rule(const ir::Node& node);
  Grads elementwise_rule(const ir::Node& node, const std::vector<Value>& in, const Value& out, const Value& g);
  Grads reduction_rule(const ir::Node& node, const std::vector<Value>& in, const Value& out, const Value& g);
  Grads shape_rule(const ir::Node& node, const std::vector<Value>& in, const Value& out, const Value& g);
  Grads nn_rule(const ir::Node& node, const std::vector<Value>& in, const Value& out, const Value& g);
  Grads scatter_rule(const ir::Node& node, const std::vector<Value>& in, const Value& g);
  // sg.linalg's ops (autodiff_linalg.cc); qr and eigh are refused.
  Grads linalg_rule(const ir::Node& node, const std::vector<Value>& in, const Value& out, const Value& g);
  Value triangle_weights(const Value& like, double diagonal, bool lower);

  // A function with `types` as parameters (and nothing else yet).
  int32_t new_function(const std::string& name, const std::vector<ir::Type>& types);
  // A copy of function f with parameters of `extra` types appended.
  int32_t clone_with_params(int32_t f, const std::string& name, const std::vector<ir::Type>& extra);
  // Copies function f's nodes into the current function with its parameters bound to
  // `args`; the ids of its results. (A loop body's backward inlined into the reverse
  // loop: what reads only invariants, a weight's transpose, is hoisted out of it.)
  std::vector<int32_t> inline_function(int32_t f, const std::vector<int32_t>& args, bool checkpoints = false);
  // ---- weight gradients of a reverse loop, deferred (autodiff_defer.cc) -------------
  // An invariant's gradient that a reverse loop accumulates as acc + matmul(P, Q) per
  // iteration (P [K, B], Q [B, N]: a weight's outer products) is instead kept as the
  // rows of P^T and Q appended to two lists, multiplied once after the loop: one GEMM
  // of T·B rows instead of T memory-bound rank-B updates of a K x N accumulator.
  struct Deferred {
    size_t k = 0;                  // the differentiated position (index into floats)
    ir::Type rows_a, rows_b;       // [S, K] and [S, N], S one fresh symbol
  };
  // In the reverse body being built: rewrites results[1 + k] for the positions whose
  // gradient has that form, appending the lists' parameters and results.
  std::vector<Deferred> defer_products(const std::vector<bool>& invariant, std::vector<int32_t>& results,
                                       const std::vector<int32_t>& p);
  // The reverse loop's cond, init and types take the lists too (empty to begin with).
  void carry_deferred(const std::vector<Deferred>& d, int32_t cond, std::vector<int32_t>& init,
                      std::vector<ir::Type>& types);
  // After the loop: the gradient of a deferred position, from the loop's outputs.
  Value finish_deferred(const Value& accumulated, int32_t rows_a, int32_t rows_b);
  // The same through a closure's recursion: in each member's backward, a gradient the
  // member receives, adds P^T Q to and hands on (to its callees' backwards, then as
  // its result) keeps P's and Q's rows in lists instead, which the root's caller
  // multiplies once (Closure::deferred).
  void defer_closure_products(Closure& c);
  // Member k's backward takes and returns every list, hands them through its Calls
  // and Ifs of members' backwards, and appends its terms' rows.
  void thread_deferred(const Closure& c, size_t k, const std::vector<Closure::DeferredTerm>& terms,
                       const std::map<int32_t, size_t>& member_of);
  void append_rows(const Closure& c, const std::vector<Closure::DeferredTerm>& terms, std::vector<int32_t>& lists);
  // ---- segmented checkpointing (autodiff_segment.cc) ------------------------------
  // Rewrites, in `src`, each While whose body calls an sg.checkpoint function into a
  // loop over segments whose body runs one segment as a Call: the outer loop keeps
  // one state per segment, the segment's adjoint recomputes its iterations.
  void segment_loops(ir::Function& src);
  // The segment length of the checkpoint function body `f` calls, if it calls one.
  std::optional<int64_t> checkpoint_call(int32_t f) const;
  void segment_loop(ir::Function& src, ir::Node& node, int64_t segment);
  // Adds a control node to the current function; its outputs have `types`.
  std::vector<int32_t> emit(ir::NodeKind kind, std::vector<int32_t> fns, std::vector<int32_t> inputs,
                            const std::vector<ir::Type>& types);
  std::vector<int32_t> ids(const std::vector<Value>& vs) {
    std::vector<int32_t> out;
    for (const Value& v : vs) out.push_back(s_.materialize(v, span_));
    return out;
  }
  ir::Type type_of(int32_t f, int32_t v) const { return s_.module().functions[size_t(f)].values[size_t(v)].type; }

  // ---- op helpers (at span_) -----------------------------------------------------
  Value bin(OpId op, const Value& a, const Value& b) { return s_.tensor_binary(op, a, b, span_); }
  Value un(OpId op, const Value& a) { return s_.apply(op, {}, {a}, span_); }
  Value mul(const Value& a, const Value& b) { return bin(OpId::Mul, a, b); }
  Value add(const Value& a, const Value& b) { return bin(OpId::Add, a, b); }
  Value sub(const Value& a, const Value& b) { return bin(OpId::Sub, a, b); }
  Value div(const Value& a, const Value& b) { return bin(OpId::Div, a, b); }
  Value neg(const Value& a) { return un(OpId::Neg, a); }
  Value zeros_like(const Value& x) { return call("zeros_like", {x}); }
  Value where(const Value& c, const Value& a, const Value& b) {
    return s_.apply(OpId::Where, {}, {c, s_.to_tensor(a, s_.tensor_dtype(b.is_tensor() ? b : a), span_),
                                      s_.to_tensor(b, s_.tensor_dtype(a.is_tensor() ? a : b), span_)},
                    span_);
  }
  Value sum(const Value& x, std::vector<int64_t> axes, bool keepdims) {
    ops::Attrs a = ints_attr(std::move(axes));
    a.values.push_back(ops::AttrValue::Int(keepdims));
    return s_.apply(OpId::Sum, std::move(a), {x}, span_);
  }
  Value call(const std::string& name, std::vector<Value> pos) {
    Args a;
    a.pos = std::move(pos);
    a.span = span_;
    return s_.call_sg(name, a);
  }
  Value transpose(const Value& x, std::vector<int64_t> perm) { return s_.apply(OpId::Transpose, ints_attr(std::move(perm)), {x}, span_); }
  Value expand(const Value& x, std::vector<int64_t> axes) { return s_.apply(OpId::ExpandDims, ints_attr(std::move(axes)), {x}, span_); }
  Value squeeze(const Value& x, std::vector<int64_t> axes) { return s_.apply(OpId::Squeeze, ints_attr(std::move(axes)), {x}, span_); }
  Value reshape_like(const Value& x, const Value& like) { return call("reshape", {x, s_.shape_tuple(like, span_)}); }
  Value broadcast_like(const Value& x, const Value& like) { return call("broadcast_to", {x, s_.shape_tuple(like, span_)}); }
  size_t rank(const Value& v) { return s_.tensor_rank(v); }
  // Sums a cotangent down to the shape of `x` it was broadcast from.
  Value unbroadcast(const Value& g, const Value& x);
  // The cotangent of a reduction's input: g (keepdims or not) broadcast back.
  Value unreduce(const Value& g, const Value& x, const std::vector<int64_t>& axes, bool keepdims);
  std::vector<int64_t> all_axes(size_t n) {
    std::vector<int64_t> a(n);
    std::iota(a.begin(), a.end(), 0);
    return a;
  }
  Value swap_last(const Value& x) {
    std::vector<int64_t> perm = all_axes(rank(x));
    std::swap(perm[perm.size() - 1], perm[perm.size() - 2]);
    return transpose(x, perm);
  }
  Grads matmul_rule(const Value& a, const Value& b, const Value& g);
  // The gradient of a gather along the last axis of a row-wise permutation or
  // selection: g [..., k] scattered to [..., n] at `idx` [..., k].
  Value scatter_last(const Value& g, const Value& idx, const Value& like);
  Value take_rule(const Value& x, const Value& idx, const Value& g, int64_t axis);
  // Convolution and pooling adjoints, composed from the forward ops (conv_grad.cc's
  // kernels are the forward kernels on rearranged operands).
  Grads conv_rule(const ir::Node& node, const Value& x, const Value& w, const Value& g);
  Value pool_rule(const ir::Node& node, const Value& x, const Value& out, const Value& g);
  struct Window {
    int64_t h = 0, w = 0, kh = 0, kw = 0, sh = 1, sw = 1, dh = 1, dw = 1, oh = 0, ow = 0;
    int64_t top = 0, bottom = 0, left = 0, right = 0;  // padding
  };
  Window window(const ir::Node& node, const Value& x, int64_t kh, int64_t kw, const std::vector<int64_t>& stride,
                const std::vector<int64_t>& dilation, const std::string& padding);
  // x sliced per axis: (begin, end, step) with end -1 for "to the end".
  Value slice(const Value& x, const std::vector<std::array<int64_t, 3>>& axes);
  Value pad_spatial(const Value& x, int64_t top, int64_t bottom, int64_t left, int64_t right, double value);
  // Inserts s - 1 zeros between the items of axis 1 (rows) or 2 (columns) of an NHWC tensor.
  Value dilate(const Value& x, int64_t axis, int64_t s);
  [[noreturn]] void refuse(const std::string& what);

  Stager& s_;
  SourceSpan call_span_;
  SourceSpan span_;
  std::map<std::tuple<int32_t, std::vector<bool>, std::vector<bool>>, int32_t> memo_;
  // Per adjoint built: where its forward copy ends, and body value -> adjoint value.
  struct Built {
    size_t forward_nodes = 0;
    size_t source_params = 0;
    std::vector<int32_t> map;
  };
  std::map<int32_t, Built> built_;
  std::map<Variant, std::shared_ptr<Closure>> closures_;  // by root Call; null: not taped
  Closure* building_ = nullptr;  // the closure the next build() is a member of
  size_t building_member_ = 0;
  // The backward of loop body `body`'s adjoint `adj` as a function of its own, over
  // the forward values it reads (the residuals), when the forward part has no loop
  // or call and every residual has the same shape each iteration.
  struct Split {
    int32_t fn = -1;
    std::vector<int32_t> reads;  // body value ids, one per leading parameter of fn
    // Reads that are what the body hands to the next iteration at carried position
    // j, while the value it starts from there is read too: the same tape, one on.
    std::map<int32_t, size_t> shifted;  // body value -> carried position
  };
  std::optional<Split> split_backward(int32_t adj, int32_t body);
  // The empty tape [0, dims...] for body value `v` of `body`, dims read off the
  // loop's inputs; nullopt where a dim cannot be found.
  std::optional<Value> empty_tape(const ir::Function& body, const ir::Node& node, const ir::Type& t);
};

}  // namespace sg::compiler::staging::autodiff_detail
