// Optimizer update ops, MXNet's sgd_update and sgd_mom_update: one call per parameter instead
// of the six elementwise ops the rule takes in Python (gluon.Trainer's SGD runs on them). The
// weight is the output (pass out=weight to update it in place, as MXNet's optimizers do); the
// momentum, an input, is updated in place. The math is in operator/math/nn-inl.h.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "operator/optimizer.cc"
#include <hwy/foreach_target.h>  // IWYU pragma: keep

#include "kernel/rowwise-inl.h"  // the vocabulary and the reducers nn-inl.h names

HWY_BEFORE_NAMESPACE();
namespace ndx::kernel::HWY_NAMESPACE {
#include "operator/math/nn-inl.h"
}  // namespace ndx::kernel::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
#include <limits>
#include <utility>
#include <vector>

#include "kernel/dispatch.h"
#include "kernel/elementwise.h"
#include "kernel/gpu.h"
#include "ndx/graph.h"
#include "ndx/op_util.h"
#include "operator/nn_check.h"

namespace ndx {
namespace {

#define NDX_KERNEL(F) NDX_ELEMENTWISE(F)

// sgd_update's params, and sgd_mom_update's with `momentum`.
template <bool kMomentum>
struct SgdParam {
  double lr = 0, momentum = 0, wd = 0, rescale_grad = 1, clip_gradient = -1;
  bool lazy_update = true;
  static void declare(ParamDecl<SgdParam>& d) {
    d.field("lr", &SgdParam::lr).set_lower_bound(0).describe("Learning rate.");
    if constexpr (kMomentum)
      d.field("momentum", &SgdParam::momentum)
          .set_default(0.0)
          .set_lower_bound(0)
          .describe("The momentum's decay per step.");
    d.field("wd", &SgdParam::wd)
        .set_default(0.0)
        .describe("Weight decay: wd * weight is added to the gradient.");
    d.field("rescale_grad", &SgdParam::rescale_grad)
        .set_default(1.0)
        .describe("The gradient is multiplied by this first.");
    d.field("clip_gradient", &SgdParam::clip_gradient)
        .set_default(-1.0)
        .describe(
            "The rescaled gradient is clipped to [-clip_gradient, clip_gradient]; no clipping "
            "when it is not positive.");
    d.field("lazy_update", &SgdParam::lazy_update)
        .set_default(true)
        .describe("For row-sparse gradients; ndx's arrays are dense, so it changes nothing.");
  }
};

template <bool kMomentum>
kernel::FunctorArgs sgd_args(const SgdParam<kMomentum>& p) {
  kernel::FunctorArgs a;
  a.a = p.lr;
  a.b = p.wd;
  a.c = p.rescale_grad;
  a.d = p.clip_gradient > 0 ? p.clip_gradient : std::numeric_limits<double>::infinity();
  a.e = p.momentum;
  return a;
}

// Every input has the weight's shape (and dtype, a float one); so has the output.
template <int kInputs>
bool sgd_shape(const NodeAttrs& attrs, ShapeVector* in, ShapeVector* out) {
  const Shape w = (*in)[0];
  if (!w.is_known()) return false;
  static const char* const names[] = {"weight", "grad", "mom"};
  for (int i = 1; i < kInputs; ++i)
    nn_check::expect_shape(attrs, in, i, w, names[i], " (the weight's shape)");
  assign_shape(attrs, &(*out)[0], w, "output", 0);
  return true;
}

bool sgd_type(const NodeAttrs& attrs, DTypeVector* in, DTypeVector* out) {
  return nn_check::same_float_type(attrs, in, out, {"weight", "grad", "mom"});
}

void sgd_compute(const NodeAttrs& attrs, const OpContext&, const std::vector<TBlob>& in,
                 const std::vector<OpReqType>& req, const std::vector<TBlob>& out) {
  const auto a = sgd_args(attrs.get<SgdParam<false>>());
  kernel::apply(NDX_KERNEL(SgdStep), {in[0], in[1]}, out[0], req[0], out[0].dtype, a);
}

// mom = momentum * mom - lr * term in place, then weight + mom.
void sgd_mom_compute(const NodeAttrs& attrs, const OpContext&, const std::vector<TBlob>& in,
                     const std::vector<OpReqType>& req, const std::vector<TBlob>& out) {
  const auto a = sgd_args(attrs.get<SgdParam<true>>());
  kernel::apply(NDX_KERNEL(SgdMomentum), {in[2], in[0], in[1]}, in[2], kWriteTo, in[2].dtype, a);
  kernel::apply(NDX_KERNEL(Plus), {in[0], in[2]}, out[0], req[0], out[0].dtype);
}

Op& register_sgd(const char* name, const char* doc, int inputs, FInferShape shape,
                 FCompute compute) {
  Op& op = OpRegistry::global()
               .register_op(name)
               .describe(doc)
               .set_num_inputs(static_cast<uint32_t>(inputs))
               .set_num_outputs(1)
               .add_argument("weight", "NDArray", "The weight.")
               .add_argument("grad", "NDArray", "Its gradient.");
  if (inputs == 3) op.add_argument("mom", "NDArray", "The momentum, updated in place.");
  // The engine takes strided inputs, so a momentum that is a view is updated where it lives;
  // the weight's buffer may be the output's (out=weight, MXNet's in-place update).
  return op.set_attr<FInferShape>("FInferShape", std::move(shape))
      .set_attr<FInferType>("FInferType", sgd_type)
      .set_attr<TStridedInputs>("TStridedInputs", true)
      .set_attr<FInplaceOption>("FInplaceOption",
                                [](const NodeAttrs&) {
                                  return std::vector<std::pair<int, int>>{{0, 0}};
                                })
      .set_attr<FCompute>("FCompute<cpu>", compute)
      .set_attr<FCompute>("FCompute<gpu>", compute)
      .set_attr<FGradient>(
          "FGradient",
          [name](const NodePtr&, const std::vector<NodeEntry>&) -> std::vector<NodeEntry> {
            not_implemented("[", name,
                            "] has no gradient: an optimizer update is not "
                            "differentiable (run it outside autograd.record)");
          });
}

const bool registered = [] {
  register_sgd("sgd_update",
               "One SGD step: weight - lr * (clip(rescale_grad * grad, clip_gradient) + wd * "
               "weight). MXNet's op; out=weight updates in place.",
               2, sgd_shape<2>, sgd_compute)
      .set_params<SgdParam<false>>();
  register_sgd("sgd_mom_update",
               "One SGD step with momentum: mom = momentum * mom - lr * (clip(rescale_grad * "
               "grad, clip_gradient) + wd * weight) in place, and the result weight + mom. "
               "MXNet's op; out=weight updates in place.",
               3, sgd_shape<3>, sgd_mom_compute)
      .set_params<SgdParam<true>>();
  return true;
}();

}  // namespace
}  // namespace ndx
#endif  // HWY_ONCE
