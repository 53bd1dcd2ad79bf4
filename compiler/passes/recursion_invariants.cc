// Invariant code motion out of recursion: what hoist_loop_invariants does for a
// While body, for a group of functions that call each other. The adjoint of a
// recursive function is recursive, and its `dh @ A^T` transposes the same weight A
// at every call: 254 transposes of 64 x 64 in tree_rnn_grad's backward.
//
// The group is a strongly connected component of the graph of Calls and If
// branches. A parameter of a member is invariant when every Call and If inside the
// group that reaches it passes a parameter of the caller that is itself invariant:
// such parameters fall into classes (union-find over those edges), and where a class
// holds at most one parameter of each function, within one activation of the group,
// entered by one Call from outside, every member of the class holds the value that
// Call passed. A pure node of a member whose inputs are
// all invariant parameters therefore computes one value per entry. It moves to
// every Call that enters the group, and the value travels down as an extra
// parameter of every member (and of the other branch of an If whose one branch is
// a member; it ignores it).
//
// As with loops, a moved node also runs when the activation never reaches it, so
// only nodes that cannot fail move (the loop pass's hoistable ops, static shapes).
#include <algorithm>
#include <map>
#include <numeric>
#include <set>
#include <tuple>
#include <vector>

#include "passes/pass_util.h"
#include "passes/passes.h"

namespace sg::compiler::passes {
namespace {

struct Site {  // a Call or an If naming a function
  size_t fn, node;
};

// Tarjan's strongly connected components of the Call/If graph.
struct Components {
  explicit Components(const ir::Module& m) : m_(m), index_(m.functions.size(), -1), low_(m.functions.size(), 0),
                                             on_(m.functions.size(), false) {
    for (size_t f = 0; f < m.functions.size(); ++f)
      if (index_[f] < 0) visit(f);
  }
  std::vector<std::vector<size_t>> members;

 private:
  void visit(size_t f) {  // recursion depth is bounded by the module's function count
    index_[f] = low_[f] = next_++;
    stack_.push_back(f);
    on_[f] = true;
    for (const ir::Node& n : m_.functions[f].nodes) {
      if (n.kind != ir::NodeKind::kCall && n.kind != ir::NodeKind::kIf) continue;
      for (int32_t g : n.functions) {
        if (index_[size_t(g)] < 0) {
          visit(size_t(g));
          low_[f] = std::min(low_[f], low_[size_t(g)]);
        } else if (on_[size_t(g)]) {
          low_[f] = std::min(low_[f], index_[size_t(g)]);
        }
      }
    }
    if (low_[f] != index_[f]) return;
    members.emplace_back();
    for (size_t g = SIZE_MAX; g != f;) {
      g = stack_.back();
      stack_.pop_back();
      on_[g] = false;
      members.back().push_back(g);
    }
  }
  const ir::Module& m_;
  std::vector<int32_t> index_, low_;
  std::vector<bool> on_;
  std::vector<size_t> stack_;
  int32_t next_ = 0;
};

// One recursive group: its members, the extra branches its Ifs hand values to, the
// Calls that enter it, and its parameters' classes.
struct Group {
  std::set<size_t> members, others;
  std::vector<Site> inner, entries;
  std::map<std::pair<size_t, size_t>, size_t> slot;  // (function, param) -> union-find index
  std::vector<size_t> parent;
  std::vector<bool> bad;

  size_t find(size_t x) {
    while (parent[x] != x) x = parent[x] = parent[parent[x]];
    return x;
  }
  // The class of value v of function f, when v is an invariant parameter.
  std::optional<size_t> class_of(const ir::Function& fn, size_t f, int32_t v) {
    const auto it = std::find(fn.params.begin(), fn.params.end(), v);
    if (it == fn.params.end()) return std::nullopt;
    const size_t c = find(slot.at({f, size_t(it - fn.params.begin())}));
    if (bad[c]) return std::nullopt;
    return c;
  }
};

// The group of component `members`, or nothing when it is not recursive or is
// reached other than by Calls and Ifs (an entry, a While).
std::optional<Group> group_of(const ir::Module& m, const std::vector<size_t>& members) {
  Group g;
  g.members.insert(members.begin(), members.end());
  for (const ir::Entry& e : m.entries)
    if (g.members.count(size_t(e.function))) return std::nullopt;
  bool recursive = false;
  std::map<size_t, int> references;
  for (size_t f = 0; f < m.functions.size(); ++f)
    for (size_t n = 0; n < m.functions[f].nodes.size(); ++n) {
      const ir::Node& node = m.functions[f].nodes[n];
      bool names_member = false;
      for (int32_t h : node.functions) {
        ++references[size_t(h)];
        names_member = names_member || g.members.count(size_t(h));
      }
      if (!names_member) continue;
      if (node.kind == ir::NodeKind::kWhile) return std::nullopt;
      const bool inside = g.members.count(f) > 0;
      recursive = recursive || inside;
      if (!inside && node.kind != ir::NodeKind::kCall) return std::nullopt;
      (inside ? g.inner : g.entries).push_back({f, n});
      for (int32_t h : node.functions)
        if (!g.members.count(size_t(h))) g.others.insert(size_t(h));
    }
  if (!recursive) return std::nullopt;
  for (size_t h : g.others)
    if (references[h] != 1) return std::nullopt;  // another user would lack the parameter
  for (size_t f : g.members)
    for (size_t j = 0; j < m.functions[f].params.size(); ++j) {
      g.slot[{f, j}] = g.parent.size();
      g.parent.push_back(g.parent.size());
    }
  g.bad.assign(g.parent.size(), false);
  for (const Site& s : g.inner) {
    const ir::Function& caller = m.functions[s.fn];
    const ir::Node& node = caller.nodes[s.node];
    const size_t first = node.kind == ir::NodeKind::kIf ? 1 : 0;
    if (node.functions.size() == 2 && g.members.count(size_t(node.functions[0])) &&
        g.members.count(size_t(node.functions[1])))  // both branches receive one value
      for (size_t k = first; k < node.inputs.size(); ++k)
        g.parent[g.find(g.slot.at({size_t(node.functions[0]), k - first}))] =
            g.find(g.slot.at({size_t(node.functions[1]), k - first}));
    for (int32_t h : node.functions) {
      if (!g.members.count(size_t(h))) continue;
      for (size_t k = first; k < node.inputs.size(); ++k) {
        const size_t to = g.slot.at({size_t(h), k - first});
        const auto p = std::find(caller.params.begin(), caller.params.end(), node.inputs[k]);
        if (p == caller.params.end()) {
          g.bad[to] = true;
        } else {
          g.parent[g.find(to)] = g.find(g.slot.at({s.fn, size_t(p - caller.params.begin())}));
        }
      }
    }
  }
  for (size_t x = 0; x < g.parent.size(); ++x)
    if (g.bad[x]) g.bad[g.find(x)] = true;
  // Two parameters of one function in a class may differ (f(x, w, u) calling
  // f(x, u, w) swaps them at every level): such a class is not invariant.
  std::set<std::pair<size_t, size_t>> seen;  // (function, class)
  for (const auto& [at, x] : g.slot)
    if (!seen.insert({at.first, g.find(x)}).second) g.bad[g.find(x)] = true;
  return g;
}

// A node that moves: its op and attributes over the parameter classes it reads.
struct Moved {
  ir::Node node;                 // inputs rewritten to class ids
  std::vector<ir::Type> types;   // of its outputs
};

bool same(const ir::Node& a, const ir::Node& b) { return a.op == b.op && a.inputs == b.inputs && a.attrs == b.attrs; }

// For each member entered from outside: the first parameter of each class, so an
// entering Call has every class value a moved node reads.
std::map<size_t, std::map<size_t, size_t>> entry_params(const ir::Module& m, Group& g) {
  std::map<size_t, std::map<size_t, size_t>> out;
  for (const Site& s : g.entries) {
    const size_t f = size_t(m.functions[s.fn].nodes[s.node].functions[0]);
    for (size_t j = m.functions[f].params.size(); j > 0; --j) out[f][g.find(g.slot.at({f, j - 1}))] = j - 1;
  }
  return out;
}

bool hoist_group(ir::Module& m, Group& g) {
  const auto entered = entry_params(m, g);
  std::vector<Moved> moved;
  std::map<std::pair<size_t, size_t>, size_t> which;  // (member, node) -> moved index
  for (size_t f : g.members) {
    const ir::Function& fn = m.functions[f];
    for (size_t n = 0; n < fn.nodes.size(); ++n) {
      const ir::Node& node = fn.nodes[n];
      if (!hoistable_op(fn, node) || node.inputs.empty()) continue;
      Moved mv;
      mv.node = node;
      bool ok = true;
      for (int32_t& v : mv.node.inputs) {
        const std::optional<size_t> c = g.class_of(fn, f, v);
        ok = ok && c.has_value();
        v = c ? int32_t(*c) : -1;
      }
      for (const auto& [e, classes] : entered)
        for (int32_t c : mv.node.inputs) ok = ok && classes.count(size_t(c));
      if (!ok) continue;
      for (int32_t o : node.outputs) mv.types.push_back(fn.values[size_t(o)].type);
      size_t k = 0;
      while (k < moved.size() && !same(moved[k].node, mv.node)) ++k;
      if (k == moved.size()) moved.push_back(std::move(mv));
      which[{f, n}] = k;
    }
  }
  if (moved.empty()) return false;
  // Every member and other branch: one parameter per moved output, in order.
  std::map<size_t, std::vector<int32_t>> extra;
  for (const std::set<size_t>* set : {&g.members, &g.others})
    for (size_t f : *set) {
      ir::Function& fn = m.functions[f];
      for (const Moved& mv : moved)
        for (const ir::Type& t : mv.types) extra[f].push_back(fn.add_value(t, "", mv.node.span));
    }
  // Calls and Ifs inside the group hand their own parameters on (before erasing
  // moves the nodes the sites name).
  for (const Site& s : g.inner) {
    ir::Node& node = m.functions[s.fn].nodes[s.node];
    bool into = false;
    for (int32_t h : node.functions) into = into || g.members.count(size_t(h));
    if (into) node.inputs.insert(node.inputs.end(), extra[s.fn].begin(), extra[s.fn].end());
  }
  // A moved node's outputs become reads of those parameters.
  for (size_t f : g.members) {
    ir::Function& fn = m.functions[f];
    std::vector<bool> erase(fn.nodes.size(), false);
    std::vector<size_t> first(moved.size(), 0);
    for (size_t k = 1; k < moved.size(); ++k) first[k] = first[k - 1] + moved[k - 1].types.size();
    for (const auto& [at, k] : which) {
      if (at.first != f) continue;
      erase[at.second] = true;
      const std::vector<int32_t> outs = fn.nodes[at.second].outputs;
      for (size_t o = 0; o < outs.size(); ++o) replace_uses(fn, outs[o], extra[f][first[k] + o]);
    }
    erase_nodes(fn, erase);
  }
  for (const std::set<size_t>* set : {&g.members, &g.others})
    for (size_t f : *set) {
      ir::Function& fn = m.functions[f];
      fn.params.insert(fn.params.end(), extra[f].begin(), extra[f].end());
    }
  // Each entering Call computes the moved nodes from its arguments, just before it.
  std::map<size_t, std::vector<size_t>> by_fn;
  for (const Site& s : g.entries) by_fn[s.fn].push_back(s.node);
  for (auto& [f, nodes] : by_fn) {
    std::sort(nodes.rbegin(), nodes.rend());  // later sites first: indices stay valid
    for (size_t n : nodes) {
      ir::Function& fn = m.functions[f];
      ir::Node call = fn.nodes[n];
      const size_t callee = size_t(call.functions[0]);
      std::vector<ir::Node> computed;
      for (const Moved& mv : moved) {
        ir::Node x = mv.node;
        for (int32_t& v : x.inputs) v = call.inputs[entered.at(callee).at(size_t(v))];
        x.outputs.clear();
        for (const ir::Type& t : mv.types) {
          x.outputs.push_back(fn.add_value(t, "", call.span));
          call.inputs.push_back(x.outputs.back());
        }
        computed.push_back(std::move(x));
      }
      fn.nodes[n] = std::move(call);
      fn.nodes.insert(fn.nodes.begin() + std::ptrdiff_t(n), computed.begin(), computed.end());
    }
  }
  return true;
}

// Whether the inner site `node` hands its input `k` to a member.
bool into_member(const Group& g, const ir::Node& node, size_t k) {
  if (node.kind == ir::NodeKind::kIf && k == 0) return false;
  for (int32_t h : node.functions)
    if (g.members.count(size_t(h))) return true;
  return false;
}

// Parameters that no member reads but to hand them on to members (the recursion's
// own arguments, kept for nothing: a weight the backward does not use, now that
// its transpose comes in hoisted) go, with the arguments that passed them. Each
// Call and If of a recursion then copies fewer values in and out of its frame.
bool remove_dead_params(ir::Module& m, Group& g) {
  std::vector<bool> live(g.parent.size(), false);
  for (size_t f : g.members) {
    const ir::Function& fn = m.functions[f];
    std::vector<int32_t> uses = count_uses(fn);
    for (const Site& s : g.inner)
      if (s.fn == f)
        for (size_t k = 0; k < fn.nodes[s.node].inputs.size(); ++k)
          if (into_member(g, fn.nodes[s.node], k)) --uses[size_t(fn.nodes[s.node].inputs[k])];
    for (size_t j = 0; j < fn.params.size(); ++j)
      if (uses[size_t(fn.params[j])] != 0) live[g.find(g.slot.at({f, j}))] = true;
  }
  // The other branch of an If receives what its member branch does.
  for (const Site& s : g.inner) {
    const ir::Node& node = m.functions[s.fn].nodes[s.node];
    if (node.kind != ir::NodeKind::kIf) continue;
    for (size_t b = 0; b < 2; ++b) {
      const size_t other = size_t(node.functions[b]), member = size_t(node.functions[1 - b]);
      if (!g.others.count(other) || !g.members.count(member)) continue;
      const std::vector<int32_t> uses = count_uses(m.functions[other]);
      for (size_t j = 0; j < m.functions[other].params.size(); ++j)
        if (uses[size_t(m.functions[other].params[j])] != 0) live[g.find(g.slot.at({member, j}))] = true;
    }
  }
  // Which parameters each member and other branch keeps, then every Call and If
  // that hands them values drops the same positions.
  std::map<size_t, std::vector<bool>> keep;
  for (size_t f : g.members)
    for (size_t j = 0; j < m.functions[f].params.size(); ++j) keep[f].push_back(live[g.find(g.slot.at({f, j}))]);
  for (const Site& s : g.inner) {
    const ir::Node& node = m.functions[s.fn].nodes[s.node];
    for (size_t b = 0; node.kind == ir::NodeKind::kIf && b < 2; ++b)
      if (g.others.count(size_t(node.functions[b]))) keep[size_t(node.functions[b])] = keep.at(size_t(node.functions[1 - b]));
  }
  bool any = false;
  std::vector<Site> sites = g.inner;
  sites.insert(sites.end(), g.entries.begin(), g.entries.end());
  for (const Site& s : sites) {
    ir::Node& node = m.functions[s.fn].nodes[s.node];
    const size_t first = node.kind == ir::NodeKind::kIf ? 1 : 0;
    const std::vector<bool>& mask = keep.at(size_t(node.functions[0]));
    std::vector<int32_t> kept = kept_ids(node.inputs, mask, first);
    any = any || kept.size() != node.inputs.size();
    node.inputs = std::move(kept);
  }
  for (const auto& [f, mask] : keep) m.functions[f].params = kept_ids(m.functions[f].params, mask);
  return any;
}

// ---- results that hand a parameter back -------------------------------------------
// A recursive backward hands the gradients it does not add to (a weight whose
// products went to row lists) through every Call and returns them: a result that is
// a parameter, or a Call's result that is. Such results go; the Calls that enter the
// group read the argument instead (and the parameter, now only handed on, goes too).

constexpr int kUnknown = -2;  // not yet known (the optimistic start), or not a parameter (-1)

// The parameter of function f that value v is, through the Calls and Ifs of the group,
// given what each function's results are (`pass`).
int trace(const ir::Module& m, const std::map<size_t, std::vector<int>>& pass, size_t f, int32_t v) {
  const ir::Function& fn = m.functions[f];
  for (size_t step = 0; step <= fn.nodes.size(); ++step) {
    const auto p = std::find(fn.params.begin(), fn.params.end(), v);
    if (p != fn.params.end()) return int(p - fn.params.begin());
    const ir::Node* at = nullptr;
    size_t o = 0;
    for (const ir::Node& n : fn.nodes)
      for (size_t k = 0; k < n.outputs.size(); ++k)
        if (n.outputs[k] == v) at = &n, o = k;
    if (at == nullptr || at->kind == ir::NodeKind::kOp || at->kind == ir::NodeKind::kWhile) return -1;
    int q = kUnknown;
    for (int32_t h : at->functions) {
      const auto it = pass.find(size_t(h));
      const int r = it == pass.end() ? -1 : it->second[o];
      if (r == -1 || (q >= 0 && r >= 0 && q != r)) return -1;
      if (r >= 0) q = r;
    }
    if (q == kUnknown) return kUnknown;
    v = at->inputs[size_t(q) + (at->kind == ir::NodeKind::kIf ? 1 : 0)];
  }
  return -1;
}

std::map<size_t, std::vector<int>> passed_results(const ir::Module& m, const Group& g) {
  std::map<size_t, std::vector<int>> pass;
  for (size_t f : g.others)
    for (int32_t r : m.functions[f].results) {
      const auto& ps = m.functions[f].params;
      const auto p = std::find(ps.begin(), ps.end(), r);
      pass[f].push_back(p == ps.end() ? -1 : int(p - ps.begin()));
    }
  for (size_t f : g.members) pass[f].assign(m.functions[f].results.size(), kUnknown);
  // Optimistic rounds (a member's result is what its recursion makes it, by
  // induction from the branches that end it), then unknowns are not parameters and
  // rounds run until nothing changes.
  for (int phase = 0; phase < 2; ++phase) {
    for (size_t round = 0, changed = 1; changed && round <= 2 * g.members.size() + 2; ++round) {
      changed = 0;
      for (size_t f : g.members)
        for (size_t r = 0; r < pass[f].size(); ++r) {
          int t = trace(m, pass, f, m.functions[f].results[r]);
          if (phase == 1 && t == kUnknown) t = -1;
          if (t != pass[f][r] && (phase == 1 || t != kUnknown)) pass[f][r] = t, changed = 1;
        }
    }
    if (phase == 0)
      for (auto& [f, rs] : pass)
        for (int& r : rs) r = r == kUnknown ? -1 : r;
  }
  return pass;
}

bool remove_passed_results(ir::Module& m, Group& g) {
  std::map<size_t, std::vector<int>> pass = passed_results(m, g);
  std::vector<Site> sites = g.inner;
  sites.insert(sites.end(), g.entries.begin(), g.entries.end());
  // An If's branches return one list of results: a position goes from both or neither.
  for (bool changed = true; changed;) {
    changed = false;
    for (const Site& s : sites) {
      const ir::Node& node = m.functions[s.fn].nodes[s.node];
      if (node.functions.size() != 2) continue;
      std::vector<int>& a = pass[size_t(node.functions[0])];
      std::vector<int>& b = pass[size_t(node.functions[1])];
      for (size_t r = 0; r < a.size(); ++r)
        if (a[r] != b[r] && (a[r] >= 0 || b[r] >= 0)) a[r] = b[r] = -1, changed = true;
    }
  }
  bool any = false;
  for (const Site& s : sites) {
    ir::Function& fn = m.functions[s.fn];
    ir::Node& node = fn.nodes[s.node];
    const std::vector<int>& rs = pass.at(size_t(node.functions[0]));
    std::vector<int32_t> outputs;
    for (size_t o = 0; o < node.outputs.size(); ++o) {
      if (rs[o] < 0) {
        outputs.push_back(node.outputs[o]);
        continue;
      }
      replace_uses(fn, node.outputs[o], node.inputs[size_t(rs[o]) + (node.kind == ir::NodeKind::kIf ? 1 : 0)]);
      any = true;
    }
    fn.nodes[s.node].outputs = std::move(outputs);
  }
  for (auto& [f, rs] : pass) {
    std::vector<bool> keep;
    for (int r : rs) keep.push_back(r < 0);
    m.functions[f].results = kept_ids(m.functions[f].results, keep);
  }
  return any;
}

}  // namespace

bool hoist_recursion_invariants(ir::Module& m) {
  const Components c(m);
  bool changed = false;
  for (const std::vector<size_t>& members : c.members) {
    std::optional<Group> g = group_of(m, members);
    if (g) changed |= hoist_group(m, *g);
    g = group_of(m, members);  // with the hoisted parameters
    if (g) changed |= remove_passed_results(m, *g);
    g = group_of(m, members);
    if (g) changed |= remove_dead_params(m, *g);
  }
  return changed;
}

}  // namespace sg::compiler::passes
