// Optimizer update ops: MXNet's sgd_update, sgd_mom_update and adam_update, one call per
// parameter instead of the six to ten elementwise ops the rule takes in Python; and
// multi-weight forms (MXNet's preloaded_multi_sgd_update / preloaded_multi_sgd_mom_update,
// ndx's _multi_adam_update / _multi_adamw_update), one call for all of a Trainer's parameters.
// The weight is the output (pass out=weight to update it in place, as MXNet's optimizers do);
// the states (momentum, moments), inputs, are updated in place. The math is in
// operator/math/nn-inl.h.
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
#include <algorithm>
#include <limits>
#include <utility>
#include <vector>

#include "kernel/dispatch.h"
#include "kernel/elementwise.h"
#include "kernel/gpu.h"
#include "kernel/parallel.h"
#include "ndx/graph.h"
#include "ndx/op_util.h"
#include "operator/nn_check.h"

namespace ndx {
namespace {

#define NDX_KERNEL(F) NDX_ELEMENTWISE(F)
// A functor compiled for the CPU alone (the ops using it have no GPU kernel).
#define NDX_CPU_KERNEL(F)                                                                  \
  ::ndx::kernel::ElementwiseFn(NDX_DISPATCH(elementwise, F), nullptr,                      \
                               ::ndx::kernel::types_of<::ndx::kernel::HWY_NAMESPACE::F>(), \
                               NDX_DISPATCH(elementwise_block, F),                         \
                               NDX_DISPATCH_NONFLOAT(elementwise, F))

// The fields every update rule shares (MXNet's): how the gradient is turned into the term the
// rule uses, clip(rescale_grad * grad, clip_gradient) + wd * weight.
template <class P>
void declare_gradient_fields(ParamDecl<P>& d) {
  if constexpr (requires(P p) { p.wd; })
    d.field("wd", &P::wd)
        .set_default(0.0)
        .describe("Weight decay: wd * weight is added to the gradient.");
  d.field("rescale_grad", &P::rescale_grad)
      .set_default(1.0)
      .describe("The gradient is multiplied by this first.");
  d.field("clip_gradient", &P::clip_gradient)
      .set_default(-1.0)
      .describe(
          "The rescaled gradient is clipped to [-clip_gradient, clip_gradient]; no clipping "
          "when it is not positive.");
}
template <class P>
void declare_lazy_update(ParamDecl<P>& d) {
  d.field("lazy_update", &P::lazy_update)
      .set_default(true)
      .describe("For row-sparse gradients; ndx's arrays are dense, so it changes nothing.");
}

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
    declare_gradient_fields(d);
    declare_lazy_update(d);
  }
};

// adam_update's params (MXNet's).
struct AdamParam {
  double lr = 0, beta1 = 0.9, beta2 = 0.999, epsilon = 1e-8, wd = 0, rescale_grad = 1,
         clip_gradient = -1;
  bool lazy_update = true;
  static void declare(ParamDecl<AdamParam>& d) {
    d.field("lr", &AdamParam::lr).set_lower_bound(0).describe("Learning rate.");
    declare_moment_fields(d);
    declare_gradient_fields(d);
    declare_lazy_update(d);
  }
  template <class P>
  static void declare_moment_fields(ParamDecl<P>& d) {
    d.field("beta1", &P::beta1)
        .set_default(0.9)
        .set_range(0, 1)
        .describe("The decay rate of the first moment estimates.");
    d.field("beta2", &P::beta2)
        .set_default(0.999)
        .set_range(0, 1)
        .describe("The decay rate of the second moment estimates.");
    d.field("epsilon", &P::epsilon)
        .set_default(1e-8)
        .set_lower_bound(0)
        .describe("Added to sqrt(var) in the denominator, for numerical stability.");
  }
};

// The multi-weight ops' params: MXNet's preloaded_multi_sgd_update, preloaded_multi_sgd_mom_update
// (with momentum), and ndx's _multi_adam_update / _multi_adamw_update (with the beta / epsilon
// fields). Each weight's
// learning rate and weight decay come in the last two inputs, `lrs` and `wds`.
enum class RuleKind { kSgd, kSgdMom, kAdam, kAdamW };
template <RuleKind K>
struct MultiParam {
  static constexpr int kPer = K == RuleKind::kSgd ? 2 : K == RuleKind::kSgdMom ? 3 : 4;
  double momentum = 0, beta1 = 0.9, beta2 = 0.999, epsilon = 1e-8, rescale_grad = 1,
         clip_gradient = -1;
  int64_t num_weights = 1;
  static void declare(ParamDecl<MultiParam>& d) {
    if constexpr (K == RuleKind::kSgdMom)
      d.field("momentum", &MultiParam::momentum)
          .set_default(0.0)
          .set_lower_bound(0)
          .describe("The momentum's decay per step.");
    if constexpr (K == RuleKind::kAdam || K == RuleKind::kAdamW)
      AdamParam::declare_moment_fields(d);
    declare_gradient_fields(d);
    d.field("num_weights", &MultiParam::num_weights)
        .set_default(int64_t{1})
        .set_range(1, Op::kMaxArity / 8)
        .describe("The number of weights updated.");
  }
};

// One weight's update with every scalar resolved: what the one-weight and the multi-weight ops
// share. term() packs the gradient term's scalars the functors read (nn-inl.h).
struct Rule {
  double lr = 0, wd = 0, rescale = 1, clip = -1, momentum = 0;
  double beta1 = 0.9, beta2 = 0.999, epsilon = 1e-8;
  kernel::FunctorArgs term(double e) const {
    kernel::FunctorArgs a;
    a.a = lr;
    a.b = wd;
    a.c = rescale;
    a.d = clip > 0 ? clip : std::numeric_limits<double>::infinity();
    a.e = e;
    return a;
  }
};
Rule make_rule(double lr, double wd, const auto& p) {
  Rule r;
  r.lr = lr, r.wd = wd, r.rescale = p.rescale_grad, r.clip = p.clip_gradient;
  if constexpr (requires { p.momentum; }) r.momentum = p.momentum;
  if constexpr (requires { p.beta1; }) r.beta1 = p.beta1, r.beta2 = p.beta2, r.epsilon = p.epsilon;
  return r;
}

// w: (weight, grad). The weight - lr * term.
void sgd_one(const Rule& r, const TBlob* w, const TBlob& out, OpReqType req) {
  kernel::apply(NDX_KERNEL(SgdStep), {w[0], w[1]}, out, req, out.dtype, r.term(0));
}
// w: (weight, grad, mom). mom = momentum * mom - lr * term in place, then weight + mom.
void sgd_mom_one(const Rule& r, const TBlob* w, const TBlob& out, OpReqType req) {
  kernel::apply(NDX_KERNEL(SgdMomentum), {w[2], w[0], w[1]}, w[2], kWriteTo, w[2].dtype,
                r.term(r.momentum));
  kernel::apply(NDX_KERNEL(Plus), {w[0], w[2]}, out, req, out.dtype);
}
// w: (weight, grad, mean, var). Both moments in place, from the gradient term with `decay`
// (the old weight's: mean first, then var); then the step writes the weight.
void adam_moments(const Rule& r, double decay, const TBlob* w) {
  Rule t = r;
  t.wd = decay;
  kernel::apply(NDX_KERNEL(AdamMean), {w[2], w[0], w[1]}, w[2], kWriteTo, w[2].dtype,
                t.term(r.beta1));
  kernel::apply(NDX_KERNEL(AdamVar), {w[3], w[0], w[1]}, w[3], kWriteTo, w[3].dtype,
                t.term(r.beta2));
}
// Adam: the decay in the gradient term. Three passes, each a functor on the engine (it
// writes one output per pass).
void adam_one(const Rule& r, const TBlob* w, const TBlob& out, OpReqType req) {
  adam_moments(r, r.wd, w);
  kernel::FunctorArgs step;
  step.a = r.lr;
  step.b = r.epsilon;
  kernel::apply(NDX_KERNEL(AdamStep), {w[0], w[2], w[3]}, out, req, out.dtype, step);
}
// AdamW (decoupled decay): the moments from the gradient alone, the decay in the step.
void adamw_one(const Rule& r, const TBlob* w, const TBlob& out, OpReqType req) {
  adam_moments(r, 0, w);
  kernel::FunctorArgs step;
  step.a = r.lr;
  step.b = r.epsilon;
  step.c = r.wd;
  kernel::apply(NDX_CPU_KERNEL(AdamWStep), {w[0], w[2], w[3]}, out, req, out.dtype, step);
}
using UpdateOne = void (*)(const Rule&, const TBlob*, const TBlob&, OpReqType);

// The update of one weight whose `count` arrays (weight, grad, states) are given: on the CPU,
// when every array is contiguous, a block of about 64 KB of each at a time (threads take
// blocks), so that the rule's second and third passes read the block from cache: one trip
// through memory per array instead of one per pass. Results are the whole-array passes'
// (each element's arithmetic is the same).
void update_blocked(UpdateOne update, const Rule& r, const TBlob* w, int count, const TBlob& out,
                    OpReqType req) {
  const int64_t n = out.size();
  const int64_t block = (int64_t{64} << 10) / dtype_size(out.dtype);
  bool contiguous = out.is_contiguous();
  for (int i = 0; i < count; ++i) contiguous = contiguous && w[i].is_contiguous();
  if (!out.device.is_cpu() || !contiguous || n <= block) {
    update(r, w, out, req);
    return;
  }
  auto piece = [](const TBlob& b, int64_t begin, int64_t len) {
    TBlob p = b;
    p.dptr = static_cast<char*>(b.dptr) + begin * dtype_size(b.dtype);
    p.shape = Shape{len};
    p.strides = Shape{1};
    return p;
  };
  kernel::parallel_for(n, block, [&](int64_t begin, int64_t end) {
    TBlob parts[4];
    for (int64_t at = begin; at < end; at += block) {
      const int64_t len = std::min(block, end - at);
      for (int i = 0; i < count; ++i) parts[i] = piece(w[i], at, len);
      update(r, parts, piece(out, at, len), req);
    }
  });
}

// The names of one weight's inputs, in order, for messages.
constexpr const char* kInputNames[] = {"weight", "grad", "mom", "var"};
constexpr const char* kAdamNames[] = {"weight", "grad", "mean", "var"};

// Every input has the weight's shape (and dtype, a float one); so has the output.
template <int kInputs>
bool one_shape(const NodeAttrs& attrs, ShapeVector* in, ShapeVector* out) {
  const Shape w = (*in)[0];
  if (!w.is_known()) return false;
  const auto* names = kInputs == 4 ? kAdamNames : kInputNames;
  for (int i = 1; i < kInputs; ++i)
    nn_check::expect_shape(attrs, in, i, w, names[i], " (the weight's shape)");
  assign_shape(attrs, &(*out)[0], w, "output", 0);
  return true;
}

bool one_type(const NodeAttrs& attrs, DTypeVector* in, DTypeVector* out) {
  if (in->size() == 4)
    return nn_check::same_float_type(attrs, in, out, {kAdamNames, kAdamNames + 4});
  return nn_check::same_float_type(attrs, in, out, {"weight", "grad", "mom"});
}

template <class P, UpdateOne kUpdate>
void one_compute(const NodeAttrs& attrs, const OpContext&, const std::vector<TBlob>& in,
                 const std::vector<OpReqType>& req, const std::vector<TBlob>& out) {
  const auto& p = attrs.get<P>();
  update_blocked(kUpdate, make_rule(p.lr, p.wd, p), in.data(), static_cast<int>(in.size()), out[0],
                 req[0]);
}

// ---- the multi-weight ops: inputs (weight, grad[, state...]) per weight, then lrs and wds ----
template <RuleKind K>
int64_t weight_count(const NodeAttrs& attrs) {
  return attrs.get<MultiParam<K>>().num_weights;
}

template <RuleKind K, int kPer = MultiParam<K>::kPer>
bool multi_shape(const NodeAttrs& attrs, ShapeVector* in, ShapeVector* out) {
  const int64_t n = weight_count<K>(attrs);
  const auto* names = kPer == 4 ? kAdamNames : kInputNames;
  bool known = true;
  for (int64_t i = 0; i < n; ++i) {
    const Shape w = (*in)[i * kPer];
    if (!w.is_known()) {
      known = false;
      continue;
    }
    for (int j = 1; j < kPer; ++j)
      nn_check::expect_shape(attrs, in, static_cast<int>(i * kPer + j), w, names[j],
                             " (the shape of weight " + std::to_string(i) + ")");
    assign_shape(attrs, &(*out)[i], w, "output", static_cast<int>(i));
  }
  const Shape per_weight{n};
  nn_check::expect_shape(attrs, in, static_cast<int>(n * kPer), per_weight, "lrs",
                         " (one learning rate per weight)");
  nn_check::expect_shape(attrs, in, static_cast<int>(n * kPer + 1), per_weight, "wds",
                         " (one weight decay per weight)");
  return known;
}

template <RuleKind K, int kPer = MultiParam<K>::kPer>
bool multi_type(const NodeAttrs& attrs, DTypeVector* in, DTypeVector* out) {
  const int64_t n = weight_count<K>(attrs);
  const auto* names = kPer == 4 ? kAdamNames : kInputNames;
  bool known = true;
  for (int64_t i = 0; i < n; ++i) {
    const DType t = (*in)[i * kPer];
    if (t == DType::kUnknown) {
      known = false;
      continue;
    }
    nn_check::require_float(attrs, t, names[0]);
    for (int j = 1; j < kPer; ++j) {
      DType& tj = (*in)[i * kPer + j];
      if (tj == DType::kUnknown) tj = t;
      nn_check::require_same_type(attrs, tj, t, names[j], names[0]);
    }
    (*out)[i] = t;
  }
  for (int k = 0; k < 2; ++k) {
    DType& t = (*in)[n * kPer + k];
    if (t == DType::kUnknown) t = DType::kFloat64;
    if (t != DType::kFloat32 && t != DType::kFloat64)
      type_error("[", op_name(attrs), "] argument '", k == 0 ? "lrs" : "wds",
                 "' must be float32 or float64, got ", t);
  }
  return known;
}

// The i-th value of a 1-d float32 / float64 array on the host.
double value_at(const TBlob& b, int64_t i) {
  const int64_t at = i * b.strides[0];
  return b.dtype == DType::kFloat32 ? double(b.ptr<float>()[at]) : b.ptr<double>()[at];
}

template <RuleKind K, UpdateOne kUpdate, int kPer = MultiParam<K>::kPer>
void multi_compute(const NodeAttrs& attrs, const OpContext&, const std::vector<TBlob>& in,
                   const std::vector<OpReqType>& req, const std::vector<TBlob>& out) {
  const auto& p = attrs.get<MultiParam<K>>();
  const TBlob& lrs = in[p.num_weights * kPer];
  const TBlob& wds = in[p.num_weights * kPer + 1];
  for (int64_t i = 0; i < p.num_weights; ++i)  // all checked before any weight changes
    if (!(value_at(lrs, i) >= 0))
      value_error("[", op_name(attrs), "] lrs[", i, "] must be >= 0, got ", value_at(lrs, i));
  for (int64_t i = 0; i < p.num_weights; ++i) {
    const Rule r = make_rule(value_at(lrs, i), value_at(wds, i), p);
    update_blocked(kUpdate, r, &in[i * kPer], kPer, out[i], req[i]);
  }
}

[[noreturn]] void no_gradient(const char* name) {
  not_implemented("[", name,
                  "] has no gradient: an optimizer update is not differentiable (run it "
                  "outside autograd.record)");
}

// What every update op shares: float weights updated (out=weight in place: the output may take
// the weight's buffer), states changed in place, strided inputs taken as they are (a state
// that is a view is updated where it lives), no gradient.
Op& register_update(const char* name, const char* doc) {
  return OpRegistry::global()
      .register_op(name)
      .describe(doc)
      .set_attr<TStridedInputs>("TStridedInputs", true)
      .set_attr<FGradient>(
          "FGradient",
          [name](const NodePtr&, const std::vector<NodeEntry>&) -> std::vector<NodeEntry> {
            no_gradient(name);
          });
}

template <class P, int kInputs, UpdateOne kUpdate>
Op& register_one(const char* name, const char* doc) {
  Op& op = register_update(name, doc)
               .set_num_inputs(kInputs)
               .set_num_outputs(1)
               .add_argument("weight", "NDArray", "The weight.")
               .add_argument("grad", "NDArray", "Its gradient.");
  if (kInputs == 3) op.add_argument("mom", "NDArray", "The momentum, updated in place.");
  if (kInputs == 4)
    op.add_argument("mean", "NDArray", "The first moment, updated in place.")
        .add_argument("var", "NDArray", "The second moment, updated in place.");
  op.set_params<P>();
  op.set_attr<FInferShape>("FInferShape", one_shape<kInputs>);
  op.set_attr<FInferType>("FInferType", one_type);
  op.set_attr<FInplaceOption>("FInplaceOption", [](const NodeAttrs&) {
    return std::vector<std::pair<int, int>>{{0, 0}};
  });
  op.set_attr<FCompute>("FCompute<cpu>", one_compute<P, kUpdate>);
  op.set_attr<FCompute>("FCompute<gpu>", one_compute<P, kUpdate>);
  return op;
}

// CPU only: the per-weight rates are read on the host (the optimizers call the one-weight ops
// for weights on a GPU). Every rate must be >= 0 (NaN is refused), as the one-weight ops' lr.
template <RuleKind K, UpdateOne kUpdate, int kPer = MultiParam<K>::kPer>
Op& register_multi(const char* name, const char* doc) {
  Op& op = register_update(name, doc);
  op.set_num_inputs(FNumArgs([](const NodeAttrs& attrs) {
    return static_cast<uint32_t>(weight_count<K>(attrs) * kPer + 2);
  }));
  op.set_num_outputs(FNumArgs(
      [](const NodeAttrs& attrs) { return static_cast<uint32_t>(weight_count<K>(attrs)); }));
  op.add_argument("data", "NDArray[]",
                  "Per weight: the weight, its gradient and its states; then lrs and wds, 1-d "
                  "arrays of one learning rate and one weight decay per weight.");
  op.set_params<MultiParam<K>>();
  op.set_attr<FInferShape>("FInferShape", multi_shape<K>);
  op.set_attr<FInferType>("FInferType", multi_type<K>);
  op.set_attr<FInplaceOption>("FInplaceOption", [](const NodeAttrs& attrs) {
    std::vector<std::pair<int, int>> pairs;
    for (int64_t i = 0; i < weight_count<K>(attrs); ++i)
      pairs.emplace_back(static_cast<int>(i * kPer), static_cast<int>(i));
    return pairs;
  });
  op.set_attr<FCompute>("FCompute<cpu>", multi_compute<K, kUpdate>);
  // Not the host fallback: it would update host copies of the states and drop them.
  op.set_attr<FCompute>(
      "FCompute<gpu>", [](const NodeAttrs& attrs, const OpContext&, const std::vector<TBlob>&,
                          const std::vector<OpReqType>&, const std::vector<TBlob>&) {
        not_implemented(
            "[", op_name(attrs),
            "] runs on the CPU only (it reads the rates on the host); update GPU "
            "weights with the one-weight ops (sgd_update, sgd_mom_update, adam_update)");
      });
  return op;
}

const bool registered = [] {
  register_one<SgdParam<false>, 2, sgd_one>(
      "sgd_update",
      "One SGD step: weight - lr * (clip(rescale_grad * grad, clip_gradient) + wd * weight). "
      "MXNet's op; out=weight updates in place.");
  register_one<SgdParam<true>, 3, sgd_mom_one>(
      "sgd_mom_update",
      "One SGD step with momentum: mom = momentum * mom - lr * (clip(rescale_grad * grad, "
      "clip_gradient) + wd * weight) in place, and the result weight + mom. MXNet's op; "
      "out=weight updates in place.");
  register_one<AdamParam, 4, adam_one>(
      "adam_update",
      "One Adam step: with g = clip(rescale_grad * grad + wd * weight, clip_gradient) (the "
      "decay added before clipping, as MXNet's kernel does), mean = "
      "beta1 * mean + (1 - beta1) * g and var = beta2 * var + (1 - beta2) * g^2 in place, and "
      "the result weight - lr * mean / (sqrt(var) + epsilon) (lr already bias-corrected, as "
      "MXNet's Adam passes it). MXNet's op; out=weight updates in place.");
  register_multi<RuleKind::kSgd, sgd_one>(
      "preloaded_multi_sgd_update",
      "sgd_update of num_weights weights in one call: inputs weight_0, grad_0, weight_1, ..., "
      "lrs, wds; outputs the num_weights new weights. MXNet's op.");
  register_multi<RuleKind::kSgdMom, sgd_mom_one>(
      "preloaded_multi_sgd_mom_update",
      "sgd_mom_update of num_weights weights in one call: inputs weight_0, grad_0, mom_0, "
      "weight_1, ..., lrs, wds; outputs the num_weights new weights. MXNet's op.");
  register_multi<RuleKind::kAdam, adam_one>(
      "_multi_adam_update",
      "adam_update of num_weights weights in one call (gluon's Adam uses it): inputs weight_0, "
      "grad_0, mean_0, var_0, weight_1, ..., lrs, wds; outputs the num_weights new weights.");
  register_multi<RuleKind::kAdamW, adamw_one>(
      "_multi_adamw_update",
      "AdamW (decoupled weight decay, gluon's AdamW) of num_weights weights in one call: with g "
      "= clip(rescale_grad * grad, clip_gradient), the moments as adam_update's and the result "
      "weight - lr * (mean / (sqrt(var) + epsilon) + wd * weight); inputs weight_0, grad_0, "
      "mean_0, var_0, weight_1, ..., lrs, wds; outputs the num_weights new weights.");
  return true;
}();

}  // namespace
}  // namespace ndx
#endif  // HWY_ONCE
