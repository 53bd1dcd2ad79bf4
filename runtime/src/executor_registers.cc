// Loops on a register file. A stable While loop whose cond runs beneath its body
// (executor.h) still moves every carried value twice per iteration and binds its
// operands' data pointers from slots on every node. When the cond and the body are
// straight lines of direct steps and every carried value is small (a counter, a
// flag, an accumulator, a decoder's hidden state: kCarriedBytes), the loop instead
// runs to its end here: each carried value gets one fixed register, every value
// the body's plan owns gets another (up to kRegisterBytes: a decoder's logits),
// all TensorRefs are bound once, and the loop becomes one instruction sequence
// (below) that needs no code generated at run time. The same kernels (or, for the
// scalar ops, the reference's arithmetic) run on the same bytes, so the results
// are those of the usual path; the carried values go back into the cond's slots
// when the loop ends.
#include <algorithm>
#include <cstring>

#include "executor.h"
#include "executor_detail.h"
#include "interface/binary_ops.h"

namespace sg::runtime {

using detail::at_alloc;

namespace {

// The largest value a register holds, and the whole file: beside counters and
// flags, the hidden state and logits of a decoding loop (beam: 128 and 1,000
// floats) fit. A register takes its value's bytes rounded up to 64 (a kernel may
// read 16 bytes past an operand; the file ends with kTensorPadding).
constexpr size_t kRegisterBytes = size_t(64) << 10;
// A carried value is copied back into its register every iteration (the usual
// path moves a tensor handle instead): only small ones.
constexpr size_t kCarriedBytes = size_t(4) << 10;
constexpr size_t kMaxFileBytes = size_t(1) << 20;
constexpr size_t register_size(size_t bytes) { return (std::max<size_t>(bytes, 1) + 63) / 64 * 64; }

bool direct_only(const FramePlan& plan) {
  return std::all_of(plan.steps.begin(), plan.steps.end(),
                     [](const PlanStep& s) { return s.mode == StepMode::kDirect || s.mode == StepMode::kFixed; });
}

// The register bytes of the values `plan` owns (its outputs not in its arena).
size_t owned_bytes(const FramePlan& plan) {
  size_t n = 0;
  for (const PlanStep& s : plan.steps) {
    const OperandBind* b = plan.binds.data() + s.bind_begin + s.n_arena + s.n_slot;
    for (const OperandBind* e = b + s.n_owned; b != e; ++b) n += register_size(plan.refs[b->ref].nbytes());
  }
  return n;
}

// ---- the instruction set ------------------------------------------------------------
// A loop on registers runs as one sequence of instructions: its body, the copies of
// the results back into the carried registers, then its cond, whose last
// instruction branches back to the body's first while the flag holds. A node on
// rank-0 operands of the ops below becomes one instruction that reads and writes
// the registers itself (the reference's arithmetic, binary_ops.h: the same bytes as
// its kernel); a comparison that computes the flag also branches (a
// superinstruction); every other node is a call of its kernel, as before. A result
// made by one instruction and not read again in the iteration is written straight
// into its carried register (no copy back). The dispatch is one switch over a
// dense code; each instruction's operands are register addresses, fixed while the
// loop runs.
#define SG_REG_TYPES(X, op) X(op, F32, float) X(op, I32, int32_t) X(op, I64, int64_t)
#define SG_REG_ARITHMETIC(X)                                                                  \
  SG_REG_TYPES(X, Add) SG_REG_TYPES(X, Sub) SG_REG_TYPES(X, Mul) SG_REG_TYPES(X, Maximum) \
      SG_REG_TYPES(X, Minimum) X(Div, F32, float)
#define SG_REG_COMPARISONS(X)                                                                       \
  SG_REG_TYPES(X, Less) SG_REG_TYPES(X, LessEqual) SG_REG_TYPES(X, Greater) SG_REG_TYPES(X, GreaterEqual) \
      SG_REG_TYPES(X, Equal) SG_REG_TYPES(X, NotEqual)

enum Code : uint32_t {
  kCall,      // reg_ops_[index]
  kCopy,      // `index` bytes from a to out
  kCopy1,
  kCopy4,
  kCopy8,
  kBranchIf,  // back to the start while the byte at a is not 0, else the loop ends
  kAnd,       // bool
  kOr,
#define SG_CODE(op, T, t) k##op##T,
  SG_REG_ARITHMETIC(SG_CODE) SG_REG_COMPARISONS(SG_CODE)
#undef SG_CODE
#define SG_CODE(op, T, t) k##op##T##Branch,
  SG_REG_COMPARISONS(SG_CODE)
#undef SG_CODE
  kNumCodes
};

// The instruction of a binary node on rank-0 operands of dtype `in` (its result of
// dtype `out`), or kCall where there is none.
uint32_t scalar_code(ops::OpId op, DType in, DType out) {
  using ops::OpId;
  if (in == DType::kBool && out == DType::kBool) {
    if (op == OpId::LogicalAnd) return kAnd;
    if (op == OpId::LogicalOr) return kOr;
    return kCall;
  }
#define SG_MATCH(name, T, t) \
  if (op == OpId::name && in == DType::k##T && out == DType::k##T) return k##name##T;
  SG_REG_ARITHMETIC(SG_MATCH)
#undef SG_MATCH
#define SG_MATCH(name, T, t) \
  if (op == OpId::name && in == DType::k##T && out == DType::kBool) return k##name##T;
  SG_REG_COMPARISONS(SG_MATCH)
#undef SG_MATCH
  return kCall;
}

// The branching form of a comparison's code; kCall for other codes.
uint32_t branch_code(uint32_t code) {
  switch (code) {
#define SG_BRANCH(op, T, t) \
  case k##op##T: return k##op##T##Branch;
    SG_REG_COMPARISONS(SG_BRANCH)
#undef SG_BRANCH
    default: return kCall;
  }
}

}  // namespace

bool Executor::bind_registers(const Frame& frame, uint8_t*& next, const uint8_t* end) {
  const FunctionImpl& fn = program_.functions[frame.fn];
  const FramePlan& plan = *frame.plan;
  void** addr = reg_addr_.data();
  std::fill(addr, addr + fn.values.size(), nullptr);
  for (size_t k = 0; k < fn.params.size(); ++k) addr[fn.params[k]] = reg_params_[k];
  for (uint32_t pc = 0; pc < uint32_t(plan.steps.size()); ++pc) {
    const PlanStep& step = plan.steps[pc];
    const uint32_t first = uint32_t(reg_refs_.size());
    const auto refs = plan.refs.begin() + step.ref_begin;
    reg_refs_.insert(reg_refs_.end(), refs, refs + step.n_in + step.n_out);  // constants come bound
    const auto ref = [&](const OperandBind& b) -> kernels::TensorRef& {
      return reg_refs_[first + (b.ref - step.ref_begin)];
    };
    const OperandBind* b = plan.binds.data() + step.bind_begin;
    for (const OperandBind* e = b + step.n_arena; b != e; ++b) addr[b->value] = ref(*b).data = frame.arena + b->offset;
    for (const OperandBind* e = b + step.n_slot; b != e; ++b) {
      if (addr[b->value] == nullptr) return false;  // a slot value made nowhere in the loop
      ref(*b).data = addr[b->value];
    }
    for (const OperandBind* e = b + step.n_owned; b != e; ++b) {
      kernels::TensorRef& r = ref(*b);
      const size_t size = register_size(r.nbytes());
      if (r.nbytes() > kRegisterBytes || size_t(end - next) < size) return false;
      addr[b->value] = r.data = next;
      next += size;
    }
    if (step.mode == StepMode::kFixed)
      reg_ops_.push_back({nullptr, nullptr, nullptr, step.fixed, step.word, first, step.n_in, step.n_out, frame.fn, pc});
    else
      reg_ops_.push_back({step.fn, step.prepared, step.attrs, nullptr, 0, first, step.n_in, step.n_out, frame.fn, pc});
  }
  return true;
}

Status Executor::run_in_registers(Frame& body, Frame& cond, bool& ran) {
  ran = false;
  // Profiling times nodes one by one, through the usual path.
  if (profile_ || !direct_only(*cond.plan) || !direct_only(*body.plan)) return Status::Ok();
  const FunctionImpl& bf = program_.functions[body.fn];
  const FunctionImpl& cf = program_.functions[cond.fn];
  const size_t n_carried = cf.params.size();
  if (bf.params.size() != n_carried || bf.results.size() != n_carried) return Status::Ok();
  for (uint32_t p : cf.params) {
    const Tensor& t = cond.slots[p];
    if (t.data() == nullptr || t.nbytes() > kCarriedBytes) return Status::Ok();
  }
  // The cond's flag must be read where the cond's caller reads it afterwards
  // (loop_condition): its arena, or a carried value's slot.
  const uint32_t r = cf.results[0];
  const bool flag_is_param = std::find(cf.params.begin(), cf.params.end(), r) != cf.params.end();
  if (cf.values[r].dtype != DType::kBool || !cf.values[r].dims.empty() ||
      !(flag_is_param || cond.plan->placement[r] == Placement::kArena))
    return Status::Ok();

  // Registers: carried values, staging for their copies back, owned values.
  size_t carried_bytes = 0;
  for (uint32_t p : cf.params) carried_bytes += register_size(cond.slots[p].nbytes());
  const size_t file_bytes = 2 * carried_bytes + owned_bytes(*cond.plan) + owned_bytes(*body.plan);
  if (file_bytes > kMaxFileBytes) return Status::Ok();
  const size_t bytes = file_bytes + kTensorPadding;
  if (size_t(reg_file_.numel()) < bytes) {
    const int64_t n = int64_t(bytes);
    reg_file_ = Tensor();
    Result<Tensor> t = Tensor::empty(DType::kBool, std::span<const int64_t>(&n, 1), &cache_);
    if (!t.ok()) return Status::Ok();  // the usual path needs no more memory than it had
    reg_file_ = std::move(t).value();
  }
  uint8_t* next = reg_file_.data_as<uint8_t>();
  const uint8_t* const end = next + file_bytes;
  reg_params_.clear();
  reg_staging_.clear();
  for (size_t k = 0; k < n_carried; ++k) {
    reg_params_.push_back(next);
    reg_staging_.push_back(next + carried_bytes);
    next += register_size(cond.slots[cf.params[k]].nbytes());
  }
  next += carried_bytes;
  reg_ops_.clear();
  reg_refs_.clear();
  if (!bind_registers(cond, next, end)) return Status::Ok();
  const size_t n_cond = reg_ops_.size();
  const uint8_t* const flag = static_cast<const uint8_t*>(reg_addr_[r]);
  if (flag == nullptr || !bind_registers(body, next, end)) return Status::Ok();
  reg_back_.clear();
  bool reads_carried = false;  // some result is another carried value: copy through staging
  for (size_t k = 0; k < n_carried; ++k) {
    const uint32_t v = bf.results[k];
    const ValueInfo& info = bf.values[v];
    const uint32_t size = uint32_t(cond.slots[cf.params[k]].nbytes());
    const auto* from = static_cast<const uint8_t*>(info.is_constant ? info.constant.data() : reg_addr_[v]);
    if (from == nullptr || (info.is_constant && info.constant.nbytes() != size)) return Status::Ok();
    if (from == reg_params_[k]) continue;  // passed through unchanged
    reads_carried = reads_carried || std::find(reg_params_.begin(), reg_params_.end(), from) != reg_params_.end();
    reg_back_.push_back({from, uint32_t(k), size});
  }

  const size_t entry = compile_registers(n_cond, flag, reads_carried);

  ran = true;
  ++schedule_counts_.register_loops;
  for (size_t k = 0; k < n_carried; ++k) {
    const Tensor& t = cond.slots[cf.params[k]];
    std::memcpy(reg_params_[k], t.data(), t.nbytes());
  }
  for (uint32_t v : body.plan->held) body.slots[v].reset();  // as an iteration of next_iteration starts
  SG_RETURN_IF_ERROR(run_register_program(entry));
  // The carried values back into the cond's slots, where the loop's end reads them;
  // a buffer someone else shares (or a constant's) is replaced, never written.
  for (const RegisterCopy& c : reg_back_) {
    Tensor& t = cond.slots[cf.params[c.k]];
    if (!t.unique()) {
      Result<Tensor> fresh = Tensor::empty(t.dtype(), t.shape(), &cache_);
      if (!fresh.ok()) {
        const NodeInfo& node = program_.functions[frames_[depth_ - 3].fn].nodes[frames_[depth_ - 3].pc];
        return at_alloc(node, fresh.status());
      }
      t = std::move(fresh).value();
    }
    std::memcpy(t.data(), reg_params_[c.k], c.bytes);
  }
  cond.pc = uint32_t(cond.plan->steps.size());
  return Status::Ok();
}

}  // namespace sg::runtime

namespace sg::runtime {

size_t Executor::compile_registers(size_t n_cond, const uint8_t* flag, bool reads_carried) {
  // One instruction per op: a scalar one where the node is, else a call.
  const auto instruction = [&](uint32_t i) -> RegisterInst {
    const RegisterOp& op = reg_ops_[i];
    RegisterInst inst{kCall, i, nullptr, nullptr, nullptr};
    if (op.n_in != 2 || op.n_out != 1) return inst;
    const kernels::TensorRef* r = reg_refs_.data() + op.ref_begin;
    if (r[0].rank != 0 || r[1].rank != 0 || r[2].rank != 0 || r[1].dtype != r[0].dtype) return inst;
    const uint32_t code = scalar_code(program_.functions[op.function].nodes[op.node].op, r[0].dtype, r[2].dtype);
    if (code == kCall) return inst;
    return {code, i, static_cast<uint8_t*>(r[2].data), static_cast<const uint8_t*>(r[0].data),
            static_cast<const uint8_t*>(r[1].data)};
  };
  // Whether instruction `inst` reads the bytes at `p`.
  const auto reads = [&](const RegisterInst& inst, const void* p) {
    if (inst.code != kCall) return inst.a == p || inst.b == p;
    const RegisterOp& op = reg_ops_[inst.index];
    for (uint32_t j = 0; j < op.n_in; ++j)
      if (reg_refs_[op.ref_begin + j].data == p) return true;
    return false;
  };
  // The body first, in reg_prog_ itself (its capacity stays from one run to the
  // next: a warm loop allocates nothing).
  reg_prog_.clear();
  for (uint32_t i = uint32_t(n_cond); i < uint32_t(reg_ops_.size()); ++i) reg_prog_.push_back(instruction(i));
  std::vector<RegisterInst>& body = reg_prog_;
  const size_t body_size = body.size();

  // Results written straight into their carried register: made by a scalar
  // instruction of the body, the only result of that value, and the carried value's
  // old bytes read by nothing after that instruction (nor by a copy back).
  for (size_t c = 0; c < reg_back_.size(); ++c) {
    const RegisterCopy& copy = reg_back_[c];
    uint8_t* const reg = reg_params_[copy.k];
    if (std::find(reg_params_.begin(), reg_params_.end(), copy.from) != reg_params_.end()) continue;
    bool ok = true;
    for (size_t d = 0; d < reg_back_.size() && ok; ++d)
      ok = reg_back_[d].from != reg && (d == c || reg_back_[d].from != copy.from);
    size_t j = body.size();
    for (size_t i = 0; i < body.size(); ++i)
      if (body[i].code != kCall && body[i].out == copy.from) j = i;
    if (!ok || j == body.size()) continue;
    for (size_t i = j + 1; i < body.size() && ok; ++i) ok = !reads(body[i], reg) && body[i].out != copy.from;
    if (!ok) continue;
    body[j].out = reg;
    for (size_t i = j + 1; i < body.size(); ++i) {
      RegisterInst& inst = body[i];
      if (inst.code != kCall) {
        if (inst.a == copy.from) inst.a = reg;
        if (inst.b == copy.from) inst.b = reg;
        continue;
      }
      const RegisterOp& op = reg_ops_[inst.index];
      for (uint32_t q = 0; q < op.n_in; ++q)
        if (reg_refs_[op.ref_begin + q].data == copy.from) reg_refs_[op.ref_begin + q].data = reg;
    }
  }
  // A copy made unneeded above: an instruction writes the carried register itself
  // (no other instruction's output is a carried register).
  const auto direct = [&](const RegisterCopy& copy) {
    for (size_t i = 0; i < body_size; ++i)
      if (body[i].code != kCall && body[i].out == reg_params_[copy.k]) return true;
    return false;
  };
  const auto copy_code = [](uint32_t bytes) {
    return bytes == 1 ? kCopy1 : bytes == 4 ? kCopy4 : bytes == 8 ? kCopy8 : kCopy;
  };
  for (size_t c = 0; c < reg_back_.size(); ++c) {
    const RegisterCopy copy = reg_back_[c];
    if (direct(copy)) continue;
    uint8_t* const to = reads_carried ? reg_staging_[copy.k] : reg_params_[copy.k];
    reg_prog_.push_back({copy_code(copy.bytes), copy.bytes, to, copy.from, nullptr});
  }
  if (reads_carried)
    for (size_t c = 0; c < reg_back_.size(); ++c) {
      const RegisterCopy copy = reg_back_[c];
      if (direct(copy)) continue;
      reg_prog_.push_back({copy_code(copy.bytes), copy.bytes, reg_params_[copy.k], reg_staging_[copy.k], nullptr});
    }
  const size_t entry = reg_prog_.size();
  for (uint32_t i = 0; i < uint32_t(n_cond); ++i) reg_prog_.push_back(instruction(i));
  // The flag's comparison branches itself where it is the cond's last instruction.
  RegisterInst* last = entry < reg_prog_.size() ? &reg_prog_.back() : nullptr;
  if (last != nullptr && last->out == flag && branch_code(last->code) != kCall) last->code = branch_code(last->code);
  else reg_prog_.push_back({kBranchIf, 0, nullptr, flag, nullptr});
  return entry;
}

// Its code aligned to a cache line: the dispatch loop's speed moved from one
// build to the next (3.7 and 6.5 ns per loop_overhead iteration, the same
// instructions executed) with where the linker put it.
__attribute__((aligned(64))) Status Executor::run_register_program(size_t entry) {
  const kernels::KernelContext& ctx = direct_ctx_;
  kernels::TensorRef* const refs = reg_refs_.data();
  const RegisterInst* const start = reg_prog_.data();
  const RegisterInst* pc = start + entry;
  // Cancellation and the run's deadline are checked at the loop's back-edge.
  const NodeInfo& loop_node = program_.functions[frames_[depth_ - 3].fn].nodes[frames_[depth_ - 3].pc];
  using namespace kernels::binary;
  while (true) {
    switch (pc->code) {
      case kCall: {
        const RegisterOp& op = reg_ops_[pc->index];
        if (op.fixed != nullptr) {
          op.fixed(op.word, refs + op.ref_begin);
        } else {
          const std::span<const kernels::TensorRef> in(refs + op.ref_begin, op.n_in);
          const std::span<kernels::TensorRef> out(refs + op.ref_begin + op.n_in, op.n_out);
          const Status s = op.prepared != nullptr ? op.prepared->run(ctx, in, out) : op.fn(ctx, *op.attrs, in, out);
          if (!s.ok()) [[unlikely]]
            return kernel_failed(program_.functions[op.function].nodes[op.node], s);
        }
        ++pc;
        break;
      }
      case kCopy: std::memcpy(pc->out, pc->a, pc->index); ++pc; break;
      case kCopy1: *pc->out = *pc->a; ++pc; break;
      case kCopy4: std::memcpy(pc->out, pc->a, 4); ++pc; break;
      case kCopy8: std::memcpy(pc->out, pc->a, 8); ++pc; break;
      case kBranchIf:
        if (*pc->a == 0) return Status::Ok();
        if (should_poll()) [[unlikely]]
          SG_RETURN_IF_ERROR(check_interrupt(&loop_node));
        pc = start;
        break;
      case kAnd: *pc->out = uint8_t(LogicalAnd::apply(*pc->a != 0, *pc->b != 0)); ++pc; break;
      case kOr: *pc->out = uint8_t(LogicalOr::apply(*pc->a != 0, *pc->b != 0)); ++pc; break;
#define SG_CASE(op, T, t)                                                                      \
  case k##op##T: {                                                                             \
    t x, y;                                                                                    \
    std::memcpy(&x, pc->a, sizeof(t));                                                         \
    std::memcpy(&y, pc->b, sizeof(t));                                                         \
    const t z = op::apply<t>(x, y);                                                            \
    std::memcpy(pc->out, &z, sizeof(t));                                                       \
    ++pc;                                                                                      \
    break;                                                                                     \
  }
        SG_REG_ARITHMETIC(SG_CASE)
#undef SG_CASE
#define SG_CASE(op, T, t)                                                                      \
  case k##op##T: {                                                                             \
    t x, y;                                                                                    \
    std::memcpy(&x, pc->a, sizeof(t));                                                         \
    std::memcpy(&y, pc->b, sizeof(t));                                                         \
    *pc->out = uint8_t(op::apply<t>(x, y));                                                    \
    ++pc;                                                                                      \
    break;                                                                                     \
  }
        SG_REG_COMPARISONS(SG_CASE)
#undef SG_CASE
#define SG_CASE(op, T, t)                                                                      \
  case k##op##T##Branch: {                                                                     \
    t x, y;                                                                                    \
    std::memcpy(&x, pc->a, sizeof(t));                                                         \
    std::memcpy(&y, pc->b, sizeof(t));                                                         \
    const bool f = op::apply<t>(x, y);                                                         \
    *pc->out = uint8_t(f);                                                                     \
    if (!f) return Status::Ok();                                                               \
    if (should_poll()) [[unlikely]]                                                            \
      SG_RETURN_IF_ERROR(check_interrupt(&loop_node));                                         \
    pc = start;                                                                                \
    break;                                                                                     \
  }
        SG_REG_COMPARISONS(SG_CASE)
#undef SG_CASE
      default: return internal_error("register loop: bad instruction");
    }
  }
}

}  // namespace sg::runtime
