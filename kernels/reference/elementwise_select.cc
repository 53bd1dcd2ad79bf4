// where(cond, a, b) and clip(x, lo, hi): three operands broadcast together.
#include <string>

#include "interface/binary_ops.h"
#include "reference/broadcast.h"
#include "reference/dtype_dispatch.h"
#include "reference/kernel_util.h"
#include "reference/reference_kernels.h"
#include "selection/selected_ops.h"

namespace sg::kernels {
namespace {

Status plan_three(const char* op, std::span<const TensorRef> in, std::span<TensorRef> out,
                  BroadcastPlan<3>& plan) {
  SG_RETURN_IF_ERROR(check_arity(op, in, 3, out));
  if (in[1].dtype != in[2].dtype || out[0].dtype != in[1].dtype)
    return internal_error(std::string(op) + ": operand dtypes differ: " + describe(in[1]) + ", " +
                          describe(in[2]) + " -> " + describe(out[0]));
  if (!make_broadcast_plan<3>(out[0], {&in[0], &in[1], &in[2]}, plan))
    return internal_error(std::string(op) + ": cannot broadcast " + describe(in[0]) + ", " +
                          describe(in[1]) + " and " + describe(in[2]) + " to " + describe(out[0]));
  return Status::Ok();
}

template <DType Cond, DType T>
void where_rows(const BroadcastPlan<3>& plan, const TensorRef& c, const TensorRef& a,
                const TensorRef& b, TensorRef& o) {
  const Storage<Cond>* pc = c.as<Storage<Cond>>();
  const Storage<T>* pa = a.as<Storage<T>>();
  const Storage<T>* pb = b.as<Storage<T>>();
  Storage<T>* po = o.as<Storage<T>>();
  for_each_broadcast_row<3>(plan, [&](int64_t oo, const int64_t* off, int64_t n, const int64_t* step) {
    const Storage<Cond>* x = pc + off[0];
    const Storage<T>* y = pa + off[1];
    const Storage<T>* z = pb + off[2];
    Storage<T>* r = po + oo;
    const int64_t s0 = step[0], s1 = step[1], s2 = step[2];
    for (int64_t j = 0; j < n; ++j)
      r[j] = convert<bool>(load<Cond>(x[j * s0])) ? y[j * s1] : z[j * s2];
  });
}

Status where_kernel(const KernelContext&, const ops::Attrs&, std::span<const TensorRef> in,
                    std::span<TensorRef> out) {
  BroadcastPlan<3> plan;
  SG_RETURN_IF_ERROR(plan_three("where", in, out, plan));
  visit_dtype(in[0].dtype, [&](auto tc) {
    visit_dtype(in[1].dtype, [&](auto tv) {
      where_rows<decltype(tc)::value, decltype(tv)::value>(plan, in[0], in[1], in[2], out[0]);
    });
  });
  return Status::Ok();
}

template <DType T>
void clip_rows(const BroadcastPlan<3>& plan, const TensorRef& x, const TensorRef& lo,
               const TensorRef& hi, TensorRef& o) {
  using C = Compute<T>;
  const Storage<T>* px = x.as<Storage<T>>();
  const Storage<T>* pl = lo.as<Storage<T>>();
  const Storage<T>* ph = hi.as<Storage<T>>();
  Storage<T>* po = o.as<Storage<T>>();
  for_each_broadcast_row<3>(plan, [&](int64_t oo, const int64_t* off, int64_t n, const int64_t* step) {
    const Storage<T>* a = px + off[0];
    const Storage<T>* l = pl + off[1];
    const Storage<T>* h = ph + off[2];
    Storage<T>* r = po + oo;
    if (step[0] && !step[1] && !step[2]) {  // clip(x, scalar, scalar)
      const C lv = load<T>(l[0]), hv = load<T>(h[0]);
      for (int64_t j = 0; j < n; ++j)
        r[j] = store<T>(binary::Minimum::apply<C>(binary::Maximum::apply<C>(load<T>(a[j]), lv), hv));
      return;
    }
    const int64_t s0 = step[0], s1 = step[1], s2 = step[2];
    for (int64_t j = 0; j < n; ++j) {
      const C v = binary::Maximum::apply<C>(load<T>(a[j * s0]), load<T>(l[j * s1]));
      r[j] = store<T>(binary::Minimum::apply<C>(v, load<T>(h[j * s2])));
    }
  });
}

Status clip_kernel(const KernelContext&, const ops::Attrs&, std::span<const TensorRef> in,
                   std::span<TensorRef> out) {
  BroadcastPlan<3> plan;
  SG_RETURN_IF_ERROR(plan_three("clip", in, out, plan));
  if (in[0].dtype != in[1].dtype)
    return internal_error("clip: operand dtypes differ: " + describe(in[0]) + " and " + describe(in[1]));
  visit_dtype(in[0].dtype, [&](auto t) { clip_rows<decltype(t)::value>(plan, in[0], in[1], in[2], out[0]); });
  return Status::Ok();
}

}  // namespace

KernelFn select_kernel(ops::OpId op) {
  switch (op) {
    case ops::OpId::Where: SG_RETURN_IF_SELECTED(Where, where_kernel);
    case ops::OpId::Clip: SG_RETURN_IF_SELECTED(Clip, clip_kernel);
    default: return nullptr;
  }
}

}  // namespace sg::kernels
