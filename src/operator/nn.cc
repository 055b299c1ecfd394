// Neural-network ops of the numpy extension (ndx.npx, registered as _npx_*): activations,
// softmax / log_softmax, fully_connected, pick, one_hot, embedding, dropout, layer_norm and
// batch_norm, with their backward ops.
//
// Gradients of the elementwise activations and of softmax / log_softmax are composed of
// registered forward ops (differentiable again). fully_connected, layer_norm and batch_norm
// have first-order backward ops; pick and embedding have scatter backward ops whose own
// FGradient is the forward gather, so they differentiate twice as well.
//
// The math is in operator/math/nn-inl.h and runs on the kernel engine: activations are
// elementwise functors, softmax along the last axis is a row kernel (kernel/rowwise-inl.h),
// and the normalizations are reductions and elementwise functors over keepdims views.
// Statistics of 16-bit floats are kept in float32. This file is compiled once per SIMD target.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "operator/nn.cc"
#include <hwy/foreach_target.h>  // IWYU pragma: keep

#include "kernel/rowwise-inl.h"

HWY_BEFORE_NAMESPACE();
namespace ndx::kernel::HWY_NAMESPACE {
#include "operator/math/nn-inl.h"

// The softmax gradients as row ops (kernel/rowwise-inl.h's rowwise_grad; CPU only, so here
// rather than in nn-inl.h, which nn.cu compiles too), given the head gradient g and the
// forward's output y: softmax dx = y (g - sum(g y)), log_softmax dx = g - exp(y) sum(g).
struct SoftmaxGrad {
  template <class T>
  T term(T g, T y) const {
    return g * y;
  }
  template <class T>
  T out(T g, T y, T s) const {
    return y * (g - s);
  }
};
struct LogSoftmaxGrad {
  template <class T>
  T term(T g, T) const {
    return g;
  }
  template <class T>
  T out(T g, T y, T s) const {
    return g - exp(y) * s;
  }
};
}  // namespace ndx::kernel::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
#include <cblas.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <limits>
#include <numeric>
#include <string>

#include "kernel/blob.h"
#include "kernel/cast.h"
#include "kernel/dispatch.h"
#include "kernel/elementwise.h"
#include "kernel/gpu.h"
#include "kernel/gpu_fused.h"
#include "kernel/parallel.h"
#include "kernel/pointwise.h"
#include "kernel/random.h"
#include "kernel/reduce.h"
#include "ndx/autograd.h"
#include "ndx/graph.h"
#include "operator/conv_epilogue.h"
#include "operator/gemm.h"
#include "operator/kernel_util.h"
#include "operator/nn_check.h"

namespace ndx {
namespace {

using kernel::gemm;
using kernel::with_gemm_type;

using kernel::as_array;
using kernel::store;
using kernel::write_req;
using nn_check::check_with_forward;
using nn_check::expect_shape;
using nn_check::ForwardLayout;
using nn_check::ograd_float_type;
using nn_check::output_shape_of_input;
using nn_check::register_backward;
using nn_check::require_float;
using nn_check::require_no_bool;
using nn_check::require_same_type;
using nn_check::same_float_type;

// An array seen as (outer, n, inner) around `axis`.
struct AxisSplit {
  int64_t outer = 1, n = 1, inner = 1;
};
AxisSplit split_at(const Shape& s, int axis) {
  AxisSplit r;
  for (int d = 0; d < s.ndim(); ++d) {
    if (d < axis) r.outer *= s[d];
    if (d == axis) r.n = s[d];
    if (d > axis) r.inner *= s[d];
  }
  return r;
}

Shape with_axis(const Shape& s, int axis, int64_t len) {
  Shape o = s;
  o[axis] = len;
  return o;
}

Shape without_axis(const Shape& s, int axis) {
  std::vector<int64_t> dims;
  for (int d = 0; d < s.ndim(); ++d)
    if (d != axis) dims.push_back(s[d]);
  return Shape(dims.begin(), dims.end());
}

// Reads an index array of any dtype as int64 (floats truncate toward zero; nan reads as 0).
std::vector<int64_t> read_indices(const TBlob& b) {
  std::vector<int64_t> idx(static_cast<size_t>(b.size()));
  NDX_DTYPE_SWITCH(b.dtype, T, {
    const T* p = b.ptr<T>();
    for (size_t i = 0; i < idx.size(); ++i) {
      if constexpr (std::is_floating_point_v<compute_t<T>>)
        idx[i] = kernel::from_double<int64_t>(std::trunc(static_cast<double>(p[i])));
      else
        idx[i] = static_cast<int64_t>(p[i]);
    }
  });
  return idx;
}

// Indices of a (possibly GPU) array read on the host: they are small next to the data they
// index, and reading them there keeps one set of checks for both devices.
std::vector<int64_t> host_indices(const TBlob& b) {
  if (!b.device.is_gpu()) return read_indices(b);
  const NDArray h = kernel::as_array(b).to(cpu());
  return read_indices(kernel::to_blob(h));
}

// int64 values as an array on `device`.
NDArray on_device(const std::vector<int64_t>& v, Device device) {
  NDArray h(Shape{static_cast<int64_t>(v.size())}, DType::kInt64);
  std::copy(v.begin(), v.end(), h.data<int64_t>());
  return h.to(device);
}

std::map<std::string, std::string> params_dict(const NodeAttrs& attrs) {
  return attrs.op->params->to_dict(attrs.parsed);
}

NodeEntry op1(const char* op, NodeEntry a) { return make_node(op, {std::move(a)}); }
NodeEntry op2(const char* op, NodeEntry a, NodeEntry b) {
  return make_node(op, {std::move(a), std::move(b)});
}
NodeEntry zeros_like(NodeEntry a) { return op1("_np_zeros_like", std::move(a)); }

// A double written so that it parses back to the same value.
std::string exact(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

// ---- engine helpers ----
#define NDX_KERNEL(F) NDX_ELEMENTWISE(F)
#define NDX_REDUCER(R) NDX_REDUCE(R)
using kernel::to_blob;

// The dtype statistics (means, variances, softmax sums) are kept in: float32 for 16-bit floats.
DType stat_dtype(DType t) { return dtype_size(t) == 2 ? DType::kFloat32 : t; }

std::vector<bool> axis_mask(int ndim, int axis, bool reduced) {
  std::vector<bool> mask(ndim, !reduced);
  mask[axis] = reduced;
  return mask;
}

// A 1-d array (the length of `axis`) seen against `shape`: every other dim size 1, stride 0.
TBlob along_axis(const TBlob& v, const Shape& shape, int axis) {
  TBlob b = v;
  b.shape = Shape::filled(shape.ndim(), 1);
  b.strides = Shape::filled(shape.ndim(), 0);
  b.shape[axis] = shape[axis];
  b.strides[axis] = v.strides[0];
  return b;
}

// A 0-d blob holding one on the op's device, for fix_gamma (a host value would be read by a
// GPU kernel as device memory).
struct One {
  NDArray held;
  TBlob blob(Device d) {
    held = NDArray::scalar(1.0, DType::kFloat64).to(d);
    return to_blob(held);
  }
};

// out (keepdims over `in`, `mask` reduced) = reducer over in.
void reduce_into(kernel::ReduceFn fn, const TBlob& in, const NDArray& out,
                 const std::vector<bool>& mask) {
  kernel::reduce(fn, in, kernel::keepdims_view(to_blob(out), in.shape, mask), kWriteTo,
                 out.dtype());
}

// ============================== activations ==============================
enum class Act { kRelu, kSigmoid, kTanh, kSoftrelu, kLogSigmoid, kSoftsign, kMish };

kernel::ElementwiseFn act_kernel(Act a) {
  switch (a) {
    case Act::kRelu:
      return NDX_KERNEL(Relu);
    case Act::kSigmoid:
      return NDX_KERNEL(Sigmoid);
    case Act::kTanh:
      return NDX_KERNEL(TanhAct);
    case Act::kSoftrelu:
      return NDX_KERNEL(SoftRelu);
    case Act::kLogSigmoid:
      return NDX_KERNEL(LogSigmoid);
    case Act::kSoftsign:  // (the unary ops' kernels: unary_op_of)
    case Act::kMish:
      break;
  }
  return nullptr;
}

// activation's softsign and mish are the unary ops of those names (elemwise_unary.cc).
const Op* unary_op_of(Act a) {
  if (a == Act::kSoftsign) return Op::get("_npx_softsign");
  if (a == Act::kMish) return Op::get("_npx_mish");
  return nullptr;
}

void run_act(Act a, const TBlob& x, OpReqType req, const TBlob& out) {
  kernel::apply(act_kernel(a), {x}, out, req, out.dtype);
}

struct ActivationParam {
  std::string act_type;
  static void declare(ParamDecl<ActivationParam>& d) {
    d.field("act_type", &ActivationParam::act_type)
        .set_enum({"relu", "sigmoid", "tanh", "softrelu", "log_sigmoid", "softsign", "mish"})
        .describe("The activation function.");
  }
};

Act act_of(const std::string& s) {
  if (s == "relu") return Act::kRelu;
  if (s == "sigmoid") return Act::kSigmoid;
  if (s == "tanh") return Act::kTanh;
  if (s == "softrelu") return Act::kSoftrelu;
  if (s == "softsign") return Act::kSoftsign;
  if (s == "mish") return Act::kMish;
  return Act::kLogSigmoid;
}

// relu takes every numeric dtype; the others need floats.
bool act_type_infer(const NodeAttrs& attrs, DTypeVector* in, DTypeVector* out, Act a) {
  DType t = (*in)[0];
  if (t == DType::kUnknown) return false;
  if (a == Act::kRelu)
    require_no_bool(attrs, t, "x");
  else
    require_float(attrs, t, "x");
  (*out)[0] = t;
  return true;
}

// The gradient of activation `a` given ograd g, input x and output y: one backward op for
// relu, sigmoid and tanh (one pass, fusable), composed for the others.
NodeEntry act_grad(Act a, NodeEntry g, NodeEntry x, NodeEntry y) {
  switch (a) {
    case Act::kRelu:  // g * (x > 0)
      return op2("_backward_relu", g, x);
    case Act::kSigmoid:  // g * y * (1 - y)
      return op2("_backward_sigmoid", g, y);
    case Act::kTanh:  // g * (1 - y^2)
      return op2("_backward_tanh", g, y);
    case Act::kSoftrelu:  // g * sigmoid(x)
      return op2("_np_multiply", g, op1("_npx_sigmoid", x));
    case Act::kLogSigmoid:  // g * sigmoid(-x)
      return op2("_np_multiply", g, op1("_npx_sigmoid", op1("_np_negative", x)));
    case Act::kSoftsign:  // the unary op's gradient
    case Act::kMish: {
      static const auto& fgrad = Op::attr<FGradient>("FGradient");
      const Op* op = unary_op_of(a);
      const NodeEntry u = make_node(op->name, {x});
      return fgrad[op](u.node, {g})[0];
    }
  }
  return g;
}

// The gradients of the activation backward ops (ograd g, v) -> f(g, v), for second order:
// f is linear in g, so d/dg is the op itself on the new ograd; d/dv (given the new ograd o)
// is one of these, by hand.
using ActBackwardDv = NodeEntry (*)(const NodeEntry& o, const NodeEntry& g, const NodeEntry& v);

NodeEntry relu_backward_dx(const NodeEntry&, const NodeEntry&, const NodeEntry& x) {
  return zeros_like(x);  // g * (x > 0) is flat in x away from 0
}

NodeEntry sigmoid_backward_dy(const NodeEntry& o, const NodeEntry& g, const NodeEntry& y) {
  // d/dy g y (1 - y) = g (1 - 2y) = g ((1 - y) - y)
  const NodeEntry one_minus_2y =
      op2("_np_subtract", op2("_np_subtract", op1("_np_ones_like", y), y), y);
  return op2("_np_multiply", o, op2("_np_multiply", g, one_minus_2y));
}

NodeEntry tanh_backward_dy(const NodeEntry& o, const NodeEntry& g, const NodeEntry& y) {
  // d/dy g (1 - y^2) = -g (y + y)
  return op1("_np_negative", op2("_np_multiply", o, op2("_np_multiply", g, op2("_np_add", y, y))));
}

// (ograd, v) -> ograd * f'(v) for relu (v = the input), sigmoid and tanh (v = the output).
void register_act_backward(const char* name, const char* doc, const char* v_name,
                           kernel::ElementwiseFn fn, ActBackwardDv dv) {
  auto compute = [fn](const NodeAttrs&, const OpContext&, const std::vector<TBlob>& in,
                      const std::vector<OpReqType>& req, const std::vector<TBlob>& out) {
    kernel::apply(fn, {in[0], in[1]}, out[0], req[0], out[0].dtype);
  };
  Op& op =
      OpRegistry::global()
          .register_op(name)
          .describe(doc)
          .set_num_inputs(2)
          .add_argument("ograd", "NDArray", "Gradient of the output.")
          .add_argument(v_name, "NDArray", "The forward's input (relu) or output.")
          .set_attr<FInferShape>("FInferShape", ElemwiseShape<2, 1>)
          .set_attr<FInferType>("FInferType",
                                [](const NodeAttrs& attrs, DTypeVector* in, DTypeVector* out) {
                                  if ((*in)[0] == DType::kUnknown || (*in)[1] == DType::kUnknown)
                                    return false;
                                  if ((*in)[0] != (*in)[1])
                                    type_error("[", op_name(attrs),
                                               "] ograd and its second input must have one "
                                               "dtype; got ",
                                               (*in)[0], " and ", (*in)[1]);
                                  (*out)[0] = (*in)[0];
                                  return true;
                                })
          .set_attr<FInplaceOption>("FInplaceOption",
                                    [](const NodeAttrs&) {
                                      return std::vector<std::pair<int, int>>{{0, 0}, {1, 0}};
                                    })
          .set_attr<TIsBackward>("TIsBackward", true)
          .set_attr<TStridedInputs>("TStridedInputs", true)
          .set_attr<bool>("TElementwise", true)
          .set_attr<kernel::PointwiseKernel>("FPointwiseKernel", {fn})
          .set_attr<FCompute>("FCompute<cpu>", compute)
          .set_attr<FGradient>(
              "FGradient", [name, dv](const NodePtr& n, const std::vector<NodeEntry>& og) {
                const NodeEntry &g = n->inputs[0], &v = n->inputs[1];
                return std::vector<NodeEntry>{op2(name, og[0], v), dv(og[0], g, v)};
              });
  if (fn.gpu) op.set_attr<FCompute>("FCompute<gpu>", compute);
}

Op& register_act(const char* name, const char* doc, Act a) {
  return OpRegistry::global()
      .register_op(name)
      .describe(doc)
      .set_num_inputs(1)
      .add_argument("x", "NDArray", "Input array.")
      .set_attr<FInferShape>("FInferShape", ElemwiseShape<1, 1>)
      .set_attr<FInferType>("FInferType",
                            [a](const NodeAttrs& attrs, DTypeVector* in, DTypeVector* out) {
                              return act_type_infer(attrs, in, out, a);
                            })
      .set_attr<FInplaceOption>("FInplaceOption", InplaceIdentity())
      .set_attr<TStridedInputs>("TStridedInputs", true)
      .set_attr<bool>("TElementwise", true)
      .set_attr<kernel::PointwiseKernel>("FPointwiseKernel", {act_kernel(a)})
      .set_attr<FCompute>("FCompute<cpu>",
                          [a](const NodeAttrs&, const OpContext&, const std::vector<TBlob>& in,
                              const std::vector<OpReqType>& req,
                              const std::vector<TBlob>& out) { run_act(a, in[0], req[0], out[0]); })
      .set_attr<FCompute>("FCompute<gpu>",
                          [a](const NodeAttrs&, const OpContext&, const std::vector<TBlob>& in,
                              const std::vector<OpReqType>& req,
                              const std::vector<TBlob>& out) { run_act(a, in[0], req[0], out[0]); })
      .set_attr<FGradient>("FGradient", [a](const NodePtr& n, const std::vector<NodeEntry>& og) {
        return std::vector<NodeEntry>{act_grad(a, og[0], n->inputs[0], NodeEntry{n, 0, 0})};
      });
}

void activation_compute(const NodeAttrs& attrs, const OpContext& ctx, const std::vector<TBlob>& in,
                        const std::vector<OpReqType>& req, const std::vector<TBlob>& out) {
  const Act a = act_of(attrs.get<ActivationParam>().act_type);
  if (const Op* op = unary_op_of(a)) {
    static const auto& cpu = Op::attr<FCompute>("FCompute<cpu>");
    static const auto& gpu = Op::attr<FCompute>("FCompute<gpu>");
    static const NodeAttrs softsign = Op::get("_npx_softsign")->make_attrs(),
                           mish = Op::get("_npx_mish")->make_attrs();
    const FCompute& f = in[0].device.is_gpu() && gpu.count(op) ? gpu[op] : cpu[op];
    return f(a == Act::kSoftsign ? softsign : mish, ctx, in, req, out);
  }
  run_act(a, in[0], req[0], out[0]);
}

// ============================== leaky_relu ==============================
// MXNet's LeakyReLU family (npx.leaky_relu). rrelu draws random slopes in training, so
// npx.leaky_relu composes it from registered ops in Python; the op takes the others, on
// either device (the family's functors are in kernel/gpu.h's lists).
enum class Leaky { kLeaky, kPrelu, kElu, kSelu, kGeluErf, kGeluTanh };

struct LeakyReluParam {
  std::string act_type = "leaky";
  double slope = 0.25;
  static void declare(ParamDecl<LeakyReluParam>& d) {
    d.field("act_type", &LeakyReluParam::act_type)
        .set_default(std::string("leaky"))
        .set_enum({"leaky", "prelu", "elu", "selu", "gelu", "gelu_erf", "gelu_tanh"})
        .describe(
            "The activation: leaky, prelu (slopes from gamma), elu, selu, gelu_erf "
            "(gelu is MXNet 1.x's name for it) or gelu_tanh.");
    d.field("slope", &LeakyReluParam::slope)
        .set_default(0.25)
        .describe("The slope for x <= 0 of leaky, the scale of elu.");
  }
};

Leaky leaky_of(const NodeAttrs& attrs) {
  const std::string& s = attrs.get<LeakyReluParam>().act_type;
  if (s == "prelu") return Leaky::kPrelu;
  if (s == "elu") return Leaky::kElu;
  if (s == "selu") return Leaky::kSelu;
  if (s == "gelu" || s == "gelu_erf") return Leaky::kGeluErf;
  if (s == "gelu_tanh") return Leaky::kGeluTanh;
  return Leaky::kLeaky;
}

// The derivative of leaky / elu / selu / gelu at the node's input written with differentiable
// forward ops, for grad(create_graph=True) (a gradient penalty through a LeakyReLU critic):
// the fused backward op has no gradient of its own.
NodeEntry leaky_derivative(const NodePtr& n) {
  const NodeEntry& x = n->inputs[0];
  auto constant = [&](double v) {
    return make_node("_np_full_like", {x}, {{"fill_value", exact(v)}});
  };
  auto mul = [](NodeEntry a, NodeEntry b) {
    return op2("_np_multiply", std::move(a), std::move(b));
  };
  auto add = [](NodeEntry a, NodeEntry b) { return op2("_np_add", std::move(a), std::move(b)); };
  const NodeEntry positive = op2("_np_greater", x, constant(0));
  auto left = [&](NodeEntry below) {  // x > 0 ? 1 : below
    return make_node("_np_where", {positive, constant(1), std::move(below)});
  };
  const double lambda = 1.0507009873554804934, alpha = 1.6732632423543772848;
  auto below_0 = [&] { return op2("_np_minimum", x, constant(0)); };
  switch (leaky_of(n->attrs)) {
    // exp of min(x, 0): exp(x) of a large x would be inf in the branch where() leaves out,
    // and its gradient there 0 * inf = nan.
    case Leaky::kElu:
      return left(mul(constant(n->attrs.get<LeakyReluParam>().slope), op1("_np_exp", below_0())));
    case Leaky::kSelu:
      return mul(constant(lambda), left(mul(constant(alpha), op1("_np_exp", below_0()))));
    case Leaky::kGeluErf: {  // Phi(x) + x phi(x)
      const NodeEntry cdf =
          mul(constant(0.5),
              add(constant(1), op1("_npx_erf", mul(x, constant(0.70710678118654752440)))));
      const NodeEntry pdf =
          mul(constant(0.39894228040143267794), op1("_np_exp", mul(constant(-0.5), mul(x, x))));
      return add(cdf, mul(x, pdf));
    }
    case Leaky::kGeluTanh: {  // 0.5 (1 + t) + 0.5 x (1 - t^2) c (1 + 3 k x^2)
      const double c = 0.79788456080286535588, k = 0.044715;
      // t and du of x clipped to [-10, 10], where t has saturated: x^2 of a large float16 x
      // is inf, and (1 - t^2) * inf = nan
      const NodeEntry xc = op2("_np_minimum", op2("_np_maximum", x, constant(-10)), constant(10));
      const NodeEntry t =
          op1("_np_tanh", mul(constant(c), add(xc, mul(constant(k), mul(xc, mul(xc, xc))))));
      const NodeEntry du = mul(constant(c), add(constant(1), mul(constant(3 * k), mul(xc, xc))));
      const NodeEntry one_minus_t2 = op2("_np_subtract", constant(1), mul(t, t));
      return add(mul(constant(0.5), add(constant(1), t)),
                 mul(mul(constant(0.5), x), mul(one_minus_t2, du)));
    }
    default:  // leaky
      return left(constant(n->attrs.get<LeakyReluParam>().slope));
  }
}

uint32_t leaky_num_inputs(const NodeAttrs& attrs) {
  return leaky_of(attrs) == Leaky::kPrelu ? 2 : 1;
}

// prelu's channel axis, as MXNet aligns gamma: data's second axis (the first of 1-d data).
int prelu_axis(const Shape& d) { return d.ndim() >= 2 ? 1 : 0; }
int64_t prelu_channels(const Shape& d) { return d.ndim() ? d[prelu_axis(d)] : 1; }

bool leaky_shape(const NodeAttrs& attrs, ShapeVector* in, ShapeVector* out) {
  const Shape& d = (*in)[0];
  if (!d.is_known()) return false;
  if (leaky_of(attrs) == Leaky::kPrelu) {
    const int64_t c = prelu_channels(d);
    Shape& g = (*in)[1];
    if (!g.is_known()) g = Shape{c};
    if (g.ndim() != 1 || (g[0] != 1 && g[0] != c))
      value_error("[", op_name(attrs), "] argument 'gamma' has shape ", g.str(),
                  ", expected (1,) or (", c, ",): one slope, or one per channel along axis ",
                  prelu_axis(d), " of data of shape ", d.str());
  }
  assign_shape(attrs, &(*out)[0], d, "output", 0);
  return true;
}

// A 0-d blob as a 1-d one of one element (sum_to_shape needs the data's rank >= gamma's).
TBlob at_least_1d(const TBlob& b) {
  if (b.ndim()) return b;
  TBlob v = b;
  v.shape = Shape{1};
  v.strides = Shape{1};
  return v;
}

// gamma (or its gradient) seen against data's shape: one slope everywhere (strides 0), or one
// per channel along prelu's axis.
TBlob prelu_view(const TBlob& gamma, const Shape& shape) {
  if (shape.ndim() && gamma.shape[0] == prelu_channels(shape))
    return along_axis(gamma, shape, prelu_axis(shape));
  TBlob b = gamma;
  b.shape = Shape::filled(shape.ndim(), 1);
  b.strides = Shape::filled(shape.ndim(), 0);
  return b;
}

kernel::ElementwiseFn leaky_kernel(Leaky a, bool grad) {
  switch (a) {
    case Leaky::kElu:
      return grad ? NDX_KERNEL(EluGrad) : NDX_KERNEL(Elu);
    case Leaky::kSelu:
      return grad ? NDX_KERNEL(SeluGrad) : NDX_KERNEL(Selu);
    case Leaky::kGeluErf:
      return grad ? NDX_KERNEL(GeluErfGrad) : NDX_KERNEL(GeluErf);
    case Leaky::kGeluTanh:
      return grad ? NDX_KERNEL(GeluTanhGrad) : NDX_KERNEL(GeluTanh);
    case Leaky::kLeaky:
    case Leaky::kPrelu:  // prelu takes gamma: its own functors (leaky_relu_compute)
      break;
  }
  return grad ? NDX_KERNEL(LeakyReluGrad) : NDX_KERNEL(LeakyRelu);
}

void leaky_relu_compute(const NodeAttrs& attrs, const OpContext&, const std::vector<TBlob>& in,
                        const std::vector<OpReqType>& req, const std::vector<TBlob>& out) {
  const Leaky a = leaky_of(attrs);
  const TBlob& x = in[0];
  if (a == Leaky::kPrelu) {
    kernel::apply(NDX_KERNEL(Prelu), {x, prelu_view(in[1], x.shape)}, out[0], req[0], out[0].dtype);
    return;
  }
  kernel::FunctorArgs args;
  args.a = attrs.get<LeakyReluParam>().slope;
  kernel::apply(leaky_kernel(a, false), {x}, out[0], req[0], out[0].dtype, args);
}

// (ograd, data[, gamma]) -> (grad data[, grad gamma]). prelu's gamma gradient is the sum of
// ograd * min(data, 0) over the axes gamma is broadcast along.
void leaky_relu_backward(const NodeAttrs& attrs, const OpContext&, const std::vector<TBlob>& in,
                         const std::vector<OpReqType>& req, const std::vector<TBlob>& out) {
  const Leaky a = leaky_of(attrs);
  const TBlob &g = in[0], &x = in[1];
  const DType t = x.dtype;
  if (a != Leaky::kPrelu) {
    kernel::FunctorArgs args;
    args.a = attrs.get<LeakyReluParam>().slope;
    kernel::apply(leaky_kernel(a, true), {g, x}, out[0], req[0], t, args);
    return;
  }
  kernel::apply(NDX_KERNEL(PreluGrad), {g, x, prelu_view(in[2], x.shape)}, out[0], req[0], t);
  if (req[1] == kNullOp) return;
  const TBlob g1 = at_least_1d(g), x1 = at_least_1d(x);
  NDArray prod(x1.shape, t, x.device);
  kernel::apply(NDX_KERNEL(PreluGradGamma), {g1, x1}, to_blob(prod), kWriteTo, t);
  kernel::sum_to_shape(to_blob(prod), prelu_view(out[1], x1.shape), req[1]);
}

// ============================== softmax / log_softmax ==============================
struct SoftmaxParam {
  int64_t axis = -1;
  static void declare(ParamDecl<SoftmaxParam>& d) {
    d.field("axis", &SoftmaxParam::axis)
        .set_default(int64_t{-1})
        .describe("The axis along which to normalize.");
  }
};

bool softmax_shape(const NodeAttrs& attrs, ShapeVector* in, ShapeVector* out) {
  if (!(*in)[0].is_known()) return false;
  normalize_axis(attrs.get<SoftmaxParam>().axis, (*in)[0].ndim(), op_name(attrs).c_str());
  assign_shape(attrs, &(*out)[0], (*in)[0], "output", 0);
  return true;
}

// Along the last axis of contiguous float32 / float64 data: one row kernel (each row stays in
// cache across its passes). Otherwise: max, exp(x - max), sum and the division, each on the
// engine over keepdims statistics.
template <bool kLog>
void softmax_compute(const NodeAttrs& attrs, const OpContext&, const std::vector<TBlob>& in,
                     const std::vector<OpReqType>& req, const std::vector<TBlob>& out) {
  if (req[0] == kNullOp) return;
  const TBlob& x = in[0];
  const int ax = normalize_axis(attrs.get<SoftmaxParam>().axis, x.ndim(), op_name(attrs).c_str());
  const AxisSplit s = split_at(x.shape, ax);
  const DType t = x.dtype;
  if (s.inner == 1 && (t == DType::kFloat32 || t == DType::kFloat64) && req[0] != kAddTo &&
      x.is_contiguous() && out[0].is_contiguous() && x.device.is_cpu()) {
    kernel::RowwiseArgs a;
    a.in = x.dptr;
    a.out = out[0].dptr;
    a.dtype = t;
    a.rows = s.outer;
    a.n = s.n;
    (kLog ? NDX_DISPATCH(rowwise, LogSoftmax) : NDX_DISPATCH(rowwise, Softmax))(a);
    return;
  }
  if (s.inner == 1 && (t == DType::kFloat32 || t == DType::kFloat64) && req[0] != kAddTo &&
      x.is_contiguous() && out[0].is_contiguous() && x.device.is_gpu()) {
    kernel::gpu::softmax_rows(kLog, x, out[0], s.outer, s.n);
    return;
  }
  const DType st = stat_dtype(t);
  const std::vector<bool> mask = axis_mask(x.ndim(), ax, true);
  const Shape kd = with_axis(x.shape, ax, 1);
  NDArray mx(kd, st, x.device), sum(kd, st, x.device), e(x.shape, st, x.device);
  reduce_into(NDX_REDUCER(MaxReducer), x, mx, mask);
  kernel::apply(NDX_KERNEL(ExpMinus), {x, to_blob(mx)}, to_blob(e), kWriteTo, st);
  reduce_into(NDX_REDUCER(SumReducer), to_blob(e), sum, mask);
  if (kLog)
    kernel::apply(NDX_KERNEL(LogSoftmaxOut), {x, to_blob(mx), to_blob(sum)}, out[0], req[0], st);
  else
    kernel::apply(NDX_KERNEL(DivideRows), {to_blob(e), to_blob(sum)}, out[0], req[0], st);
}

std::map<std::string, std::string> sum_axis_dict(const NodePtr& n) {
  std::string axis = "(";
  axis += std::to_string(n->attrs.get<SoftmaxParam>().axis);
  axis += ",)";
  return {{"axis", axis}, {"keepdims", "True"}};
}

// (ograd g, output y) -> dx: softmax y * (g - sum(g * y)), log_softmax g - exp(y) * sum(g),
// the sums along the axis. The last axis of contiguous float32 / float64 CPU arrays is one row
// kernel; otherwise the sums are engine reductions and dx one NormGrad pass, whose
// (d - sum_d - xhat * sum_dx) * scale (inv_n = 1) is y * (g - s) with d = g, sum_d = s,
// xhat = 0, scale = y, and g - exp(y) * s with d = g, sum_d = 0, xhat = exp(y), sum_dx = s.
template <bool kLog>
void softmax_backward(const NodeAttrs& attrs, const OpContext&, const std::vector<TBlob>& in,
                      const std::vector<OpReqType>& req, const std::vector<TBlob>& out) {
  if (req[0] == kNullOp) return;
  const TBlob &g = in[0], &y = in[1];
  const int ax = normalize_axis(attrs.get<SoftmaxParam>().axis, y.ndim(), op_name(attrs).c_str());
  const AxisSplit s = split_at(y.shape, ax);
  const DType t = y.dtype;
  if (s.inner == 1 && s.n <= 65536 && (t == DType::kFloat32 || t == DType::kFloat64) &&
      g.dtype == t && req[0] != kAddTo && g.is_contiguous() && y.is_contiguous() &&
      out[0].is_contiguous() && y.device.is_cpu()) {
    kernel::RowwiseGradArgs a;
    a.g = g.dptr, a.y = y.dptr, a.dx = out[0].dptr, a.dtype = t, a.rows = s.outer, a.n = s.n;
    (kLog ? NDX_DISPATCH(rowwise_grad, LogSoftmaxGrad)
          : NDX_DISPATCH(rowwise_grad, SoftmaxGrad))(a);
    return;
  }
  const DType st = stat_dtype(t);
  const std::vector<bool> mask = axis_mask(y.ndim(), ax, true);
  const Shape kd = with_axis(y.shape, ax, 1);
  NDArray sum(kd, st, y.device), zero(kd, st, y.device);
  zero.fill(0);
  kernel::FunctorArgs unit;
  unit.a = 1.0;
  if (kLog) {
    reduce_into(NDX_REDUCER(SumReducer), g, sum, mask);
    NDArray e(y.shape, st, y.device), one(kd, st, y.device);
    one.fill(1);
    kernel::apply(NDX_KERNEL(ExpMinus), {y, to_blob(zero)}, to_blob(e), kWriteTo, st);
    kernel::apply(NDX_KERNEL(NormGrad), {g, to_blob(e), to_blob(zero), to_blob(sum), to_blob(one)},
                  out[0], req[0], st, unit);
  } else {
    NDArray prod(y.shape, st, y.device);
    kernel::apply(NDX_KERNEL(Product), {g, y}, to_blob(prod), kWriteTo, st);
    reduce_into(NDX_REDUCER(SumReducer), to_blob(prod), sum, mask);
    kernel::apply(NDX_KERNEL(NormGrad), {g, to_blob(zero), to_blob(sum), to_blob(zero), y}, out[0],
                  req[0], st, unit);
  }
}

std::vector<NodeEntry> softmax_grad(const NodePtr& n, const std::vector<NodeEntry>& og) {
  return {make_node("_backward_softmax", {og[0], NodeEntry{n, 0, 0}}, params_dict(n->attrs))};
}

std::vector<NodeEntry> log_softmax_grad(const NodePtr& n, const std::vector<NodeEntry>& og) {
  return {make_node("_backward_log_softmax", {og[0], NodeEntry{n, 0, 0}}, params_dict(n->attrs))};
}

// The backward ops' own gradients, composed of registered ops (so softmax differentiates any
// number of times). For dx = y (g - s), s = sum(g y): d/dg = y (h - sum(h y)), the backward
// op again; d/dy = h (g - s) - g sum(h y).
std::vector<NodeEntry> softmax_backward_grad(const NodePtr& n, const std::vector<NodeEntry>& og) {
  const NodeEntry &g = n->inputs[0], &y = n->inputs[1], &h = og[0];
  NodeEntry s = make_node("_np_sum", {op2("_np_multiply", g, y)}, sum_axis_dict(n));
  NodeEntry hy = make_node("_np_sum", {op2("_np_multiply", h, y)}, sum_axis_dict(n));
  return {make_node("_backward_softmax", {h, y}, params_dict(n->attrs)),
          op2("_np_subtract", op2("_np_multiply", h, op2("_np_subtract", g, s)),
              op2("_np_multiply", g, hy))};
}

// For dx = g - exp(y) sum(g): d/dg = h - sum(h exp(y)); d/dy = -h exp(y) sum(g).
std::vector<NodeEntry> log_softmax_backward_grad(const NodePtr& n,
                                                 const std::vector<NodeEntry>& og) {
  const NodeEntry &g = n->inputs[0], &y = n->inputs[1], &h = og[0];
  NodeEntry he = op2("_np_multiply", h, op1("_np_exp", y));
  NodeEntry sg = make_node("_np_sum", {g}, sum_axis_dict(n));
  return {op2("_np_subtract", h, make_node("_np_sum", {he}, sum_axis_dict(n))),
          op1("_np_negative", op2("_np_multiply", he, sg))};
}

Op& register_softmax(const char* name, const char* doc, FCompute compute, FGradient grad) {
  return OpRegistry::global()
      .register_op(name)
      .describe(doc)
      .set_num_inputs(1)
      .add_argument("data", "NDArray", "Input array.")
      .set_params<SoftmaxParam>()
      .set_attr<TStridedInputs>("TStridedInputs", true)
      .set_attr<FInferShape>("FInferShape", softmax_shape)
      .set_attr<FInferType>("FInferType",
                            [](const NodeAttrs& attrs, DTypeVector* in, DTypeVector* out) {
                              return same_float_type(attrs, in, out, {"data"});
                            })
      .set_attr<FInplaceOption>("FInplaceOption", InplaceIdentity())
      .set_attr<FCompute>("FCompute<cpu>", compute)
      .set_attr<FCompute>("FCompute<gpu>", compute)
      .set_attr<FGradient>("FGradient", grad);
}

// ============================== fully_connected ==============================
struct FullyConnectedParam {
  int64_t num_hidden = 0;
  bool no_bias = false;
  bool flatten = true;
  static void declare(ParamDecl<FullyConnectedParam>& d) {
    d.field("num_hidden", &FullyConnectedParam::num_hidden)
        .set_lower_bound(1)
        .describe("Number of hidden units (the output's last dimension).");
    d.field("no_bias", &FullyConnectedParam::no_bias)
        .set_default(false)
        .describe("Whether to leave out the bias (then the op takes data and weight only).");
    d.field("flatten", &FullyConnectedParam::flatten)
        .set_default(true)
        .describe("Whether to flatten data (N, ...) to (N, K); else the last axis is K.");
  }
};

uint32_t fc_num_inputs(const NodeAttrs& attrs) {
  return attrs.get<FullyConnectedParam>().no_bias ? 2 : 3;
}

// The gradient of fully_connected's backward B(g, x, w) = (g w, g^T x[, sum g]) for second
// and higher orders. F(x, w, c) = x w^T + c is bilinear in (x, w) and linear in c, so with
// output gradients ox, ow[, oc]: d/dg = F(ox, w) + F(x, ow, oc), d/dx = B_x(g, x, ow),
// d/dw = B_w(g, ox, w) (matmul's identity, see bilinear_backward_gradient in matmul.cc).
std::vector<NodeEntry> fc_backward_gradient(const NodePtr& n, const std::vector<NodeEntry>& og) {
  const auto& p = n->attrs.get<FullyConnectedParam>();
  const NodeEntry &g = n->inputs[0], &x = n->inputs[1], &w = n->inputs[2];
  auto params = [&](bool no_bias) {
    return std::map<std::string, std::string>{{"num_hidden", std::to_string(p.num_hidden)},
                                              {"flatten", p.flatten ? "True" : "False"},
                                              {"no_bias", no_bias ? "True" : "False"}};
  };
  std::vector<NodeEntry> with_ow{x, og[1]};
  if (!p.no_bias) with_ow.push_back(og[2]);
  const NodeEntry dg =
      make_node("_np_add", {make_node("_npx_fully_connected", {og[0], w}, params(true)),
                            make_node("_npx_fully_connected", with_ow, params(p.no_bias))});
  const NodeEntry by_x = make_node("_backward_fully_connected", {g, x, og[1]}, params(p.no_bias));
  const NodeEntry by_w = make_node("_backward_fully_connected", {g, og[0], w}, params(p.no_bias));
  std::vector<NodeEntry> grads{dg, NodeEntry{by_x.node, 0, 0}, NodeEntry{by_w.node, 1, 0}};
  return grads;
}

// (rows M, features K) of data under the params; raises for 0-d data.
std::pair<int64_t, int64_t> fc_dims(const NodeAttrs& attrs, const Shape& d) {
  if (d.ndim() < 1)
    value_error("[", op_name(attrs), "] argument 'data' must have at least 1 dimension, got shape ",
                d.str());
  const auto& p = attrs.get<FullyConnectedParam>();
  if (p.flatten) {
    int64_t k = 1;
    for (int i = 1; i < d.ndim(); ++i) k *= d[i];
    return {d[0], k};
  }
  int64_t k = d[d.ndim() - 1];
  return {k == 0 ? 0 : d.size() / k, k};
}

bool fc_shape(const NodeAttrs& attrs, ShapeVector* in, ShapeVector* out) {
  const Shape& d = (*in)[0];
  if (!d.is_known()) return false;
  const auto& p = attrs.get<FullyConnectedParam>();
  auto [m, k] = fc_dims(attrs, d);
  (void)m;
  expect_shape(attrs, in, 1, Shape{p.num_hidden, k}, "weight", " (num_hidden, input features)");
  if (!p.no_bias) expect_shape(attrs, in, 2, Shape{p.num_hidden}, "bias", " (num_hidden,)");
  Shape o;
  if (p.flatten) {
    o = Shape{d[0], p.num_hidden};
  } else {
    o = d;
    o[d.ndim() - 1] = p.num_hidden;
  }
  assign_shape(attrs, &(*out)[0], o, "output", 0);
  return true;
}

// Whether a GEMM of compute type ct can write `out` (req) itself: contiguous, of type ct, and
// written or added to (beta 0 or 1) rather than in place.
bool gemm_writes_directly(const TBlob& out, OpReqType req, DType ct) {
  return out.dtype == ct && out.is_contiguous() && (req == kWriteTo || req == kAddTo);
}

void fc_compute(const NodeAttrs& attrs, const OpContext&, const std::vector<TBlob>& in,
                const std::vector<OpReqType>& req, const std::vector<TBlob>& out) {
  if (req[0] == kNullOp) return;
  const auto& p = attrs.get<FullyConnectedParam>();
  const auto [m, k] = fc_dims(attrs, in[0].shape);
  const int64_t h = p.num_hidden;
  const DType ct = compute_dtype(in[0].dtype);
  std::vector<NDArray> keep;
  TBlob x = kernel::cast_blob(in[0], ct, &keep), w = kernel::cast_blob(in[1], ct, &keep);
  const Device dev = out[0].device;
  if (gemm_writes_directly(out[0], req[0], ct)) {
    // The bias rows first, then the product added onto them (beta 1): no scratch product, no
    // second pass over the output.
    bool add = req[0] == kAddTo;
    if (!p.no_bias) {
      TBlob rows = kernel::cast_blob(in[2], ct, &keep);
      rows.shape = Shape{m, h};
      rows.strides = Shape{0, rows.strides[0]};
      TBlob y = out[0];
      y.shape = rows.shape;
      y.strides = contiguous_strides(y.shape);
      kernel::copy(rows, y, req[0]);
      add = true;
    }
    with_gemm_type(ct, [&](auto tag) {
      using T = decltype(tag);
      gemm<T>(dev, false, true, m, h, k, x.ptr<T>(), w.ptr<T>(), T(add ? 1 : 0), out[0].ptr<T>());
    });
    return;
  }
  NDArray c(Shape{m, h}, ct, dev);
  with_gemm_type(ct, [&](auto tag) {
    using T = decltype(tag);
    gemm<T>(dev, false, true, m, h, k, x.ptr<T>(), w.ptr<T>(), T(0), c.data<T>());
  });
  const TBlob y = to_blob(c.reshape(out[0].shape));
  if (p.no_bias)
    kernel::copy(y, out[0], req[0]);
  else  // + bias, broadcast along the rows
    kernel::apply(NDX_KERNEL(Plus), {y, in[2]}, out[0], req[0], ct);
}

// out (req) = op(A) op(B) of compute type T, m x n: straight into out where it can be, else
// through a scratch product and write_req.
template <typename T>
void gemm_into(const Device& dev, bool ta, bool tb, int64_t m, int64_t n, int64_t k, const T* a,
               const T* b, const TBlob& out, OpReqType req) {
  if (req == kNullOp) return;
  if (gemm_writes_directly(out, req, dtype_of<T>)) {
    gemm<T>(dev, ta, tb, m, n, k, a, b, T(req == kAddTo ? 1 : 0), out.ptr<T>());
    return;
  }
  NDArray c(Shape{m, n}, dtype_of<T>, dev);
  gemm<T>(dev, ta, tb, m, n, k, a, b, T(0), c.data<T>());
  kernel::write_req(c.reshape(out.shape), kernel::as_array(out), req);
}

// (ograd, data, weight) -> (grad data, grad weight[, grad bias])
void fc_backward(const NodeAttrs& attrs, const OpContext&, const std::vector<TBlob>& in,
                 const std::vector<OpReqType>& req, const std::vector<TBlob>& out) {
  const auto& p = attrs.get<FullyConnectedParam>();
  const auto [m, k] = fc_dims(attrs, in[1].shape);
  const int64_t h = p.num_hidden;
  const DType ct = compute_dtype(in[0].dtype);
  std::vector<NDArray> keep;
  TBlob g = kernel::cast_blob(in[0], ct, &keep), x = kernel::cast_blob(in[1], ct, &keep),
        w = kernel::cast_blob(in[2], ct, &keep);
  const Device dev = out[0].device;
  with_gemm_type(ct, [&](auto tag) {
    using T = decltype(tag);
    gemm_into<T>(dev, false, false, m, k, h, g.ptr<T>(), w.ptr<T>(), out[0], req[0]);  // G W
    gemm_into<T>(dev, true, false, h, k, m, g.ptr<T>(), x.ptr<T>(), out[1], req[1]);   // G^T X
  });
  if (!p.no_bias && req[2] != kNullOp) {  // db: the column sums of G
    TBlob g2 = g;
    g2.shape = Shape{m, h};
    g2.strides = contiguous_strides(g2.shape);
    TBlob db = out[2];
    db.shape = Shape{1, h};
    db.strides = Shape{0, out[2].strides[0]};
    kernel::reduce(NDX_REDUCER(SumReducer), g2, db, req[2], ct);
  }
}

// ============================== pick ==============================
struct PickParam {
  int64_t axis = -1;
  bool keepdims = false;
  std::string mode = "clip";
  static void declare(ParamDecl<PickParam>& d) {
    d.field("axis", &PickParam::axis).set_default(int64_t{-1}).describe("The axis to pick along.");
    d.field("keepdims", &PickParam::keepdims)
        .set_default(false)
        .describe("Keep the picked axis as a dimension of size one.");
    d.field("mode", &PickParam::mode)
        .set_default(std::string("clip"))
        .set_enum({"clip", "wrap"})
        .describe("Out-of-range indices: 'clip' to the ends, or 'wrap' around.");
  }
};

// The picked axis (normalized); checks index's shape against data's.
int pick_axis(const NodeAttrs& attrs, const Shape& data, const Shape* index) {
  const auto& p = attrs.get<PickParam>();
  const int ax = normalize_axis(p.axis, data.ndim(), op_name(attrs).c_str());
  if (index && index->is_known() && *index != without_axis(data, ax) &&
      *index != with_axis(data, ax, 1))
    value_error("[", op_name(attrs), "] argument 'index' has shape ", index->str(), ", expected ",
                without_axis(data, ax).str(), " or ", with_axis(data, ax, 1).str(),
                " (data's shape without axis ", ax, ")");
  return ax;
}

bool pick_shape(const NodeAttrs& attrs, ShapeVector* in, ShapeVector* out) {
  if (!(*in)[0].is_known()) return false;
  const int ax = pick_axis(attrs, (*in)[0], &(*in)[1]);
  const Shape o =
      attrs.get<PickParam>().keepdims ? with_axis((*in)[0], ax, 1) : without_axis((*in)[0], ax);
  if (!(*in)[1].is_known()) (*in)[1] = o;
  assign_shape(attrs, &(*out)[0], o, "output", 0);
  return true;
}

bool pick_type(const NodeAttrs& attrs, DTypeVector* in, DTypeVector* out) {
  if ((*in)[0] == DType::kUnknown || (*in)[1] == DType::kUnknown) return false;
  require_no_bool(attrs, (*in)[1], "index");
  (*out)[0] = (*in)[0];
  return true;
}

// The position along the axis that `idx` picks out of n.
int64_t pick_position(const NodeAttrs& attrs, int64_t idx, int64_t n, bool wrap) {
  if (n == 0) index_error("[", op_name(attrs), "] cannot pick from an axis of length 0");
  if (wrap) return ((idx % n) + n) % n;
  return std::clamp<int64_t>(idx, 0, n - 1);
}

void pick_compute(const NodeAttrs& attrs, const OpContext&, const std::vector<TBlob>& in,
                  const std::vector<OpReqType>& req, const std::vector<TBlob>& out) {
  if (req[0] == kNullOp || out[0].size() == 0) return;
  const int ax = pick_axis(attrs, in[0].shape, nullptr);
  const AxisSplit s = split_at(in[0].shape, ax);
  const bool wrap = attrs.get<PickParam>().mode == "wrap";
  if (out[0].device.is_gpu()) {
    std::vector<int64_t> idx = host_indices(in[1]);
    for (int64_t& v : idx) v = pick_position(attrs, v, s.n, wrap);
    const NDArray k = on_device(idx, out[0].device);
    kernel::gpu::pick(in[0], k.data<int64_t>(), out[0], s.n, s.inner, req[0] == kAddTo, false);
    return;
  }
  const std::vector<int64_t> idx = read_indices(in[1]);
  NDX_DTYPE_SWITCH(in[0].dtype, T, {
    const T* xp = in[0].ptr<T>();
    T* yp = out[0].ptr<T>();
    for (int64_t o = 0; o < s.outer; ++o)
      for (int64_t i = 0; i < s.inner; ++i) {
        const int64_t j = o * s.inner + i;
        const int64_t k = pick_position(attrs, idx[j], s.n, wrap);
        store(yp + j, req[0], static_cast<compute_t<T>>(xp[(o * s.n + k) * s.inner + i]));
      }
  });
}

// (ograd, data, index) -> grad data: ograd scattered into zeros at the picked positions.
void pick_backward(const NodeAttrs& attrs, const OpContext&, const std::vector<TBlob>& in,
                   const std::vector<OpReqType>& req, const std::vector<TBlob>& out) {
  if (req[0] == kNullOp) return;
  const int ax = pick_axis(attrs, in[1].shape, nullptr);
  const AxisSplit s = split_at(in[1].shape, ax);
  const bool wrap = attrs.get<PickParam>().mode == "wrap";
  if (out[0].device.is_gpu()) {
    if (!is_float(out[0].dtype))
      type_error("[", op_name(attrs), "] gradients need a float dtype, got ", out[0].dtype);
    std::vector<int64_t> idx = host_indices(in[2]);
    for (int64_t& v : idx) v = pick_position(attrs, v, s.n, wrap);
    const NDArray k = on_device(idx, out[0].device);
    if (req[0] != kAddTo) kernel::fill_output(out[0], req[0], 0);
    kernel::gpu::pick(in[0], k.data<int64_t>(), out[0], s.n, s.inner, true, true);
    return;
  }
  const std::vector<int64_t> idx = read_indices(in[2]);
  if (req[0] != kAddTo) kernel::fill_output(out[0], req[0], 0);
  NDX_FLOAT_SWITCH(out[0].dtype, T, {
    using C = compute_t<T>;
    const T* gp = in[0].ptr<T>();
    T* dp = out[0].ptr<T>();
    for (int64_t o = 0; o < s.outer; ++o)
      for (int64_t i = 0; i < s.inner; ++i) {
        const int64_t j = o * s.inner + i;
        const int64_t k = pick_position(attrs, idx[j], s.n, wrap);
        T* d = dp + (o * s.n + k) * s.inner + i;
        *d = static_cast<T>(static_cast<C>(*d) + static_cast<C>(gp[j]));
      }
  });
}

// ============================== SoftmaxOutput ==============================
// MXNet's classic loss head: the forward is the softmax of data along the class axis (the
// last, or axis 1 with multi_output); the backward ignores the head gradient (unless
// out_grad) and gives (softmax - one_hot(label)) * grad_scale, the gradient of the
// cross-entropy loss, with MXNet's ignore_label, normalization and smooth_alpha.
struct SoftmaxOutputParam {
  double grad_scale = 1.0;
  double ignore_label = -1.0;
  bool multi_output = false;
  bool use_ignore = false;
  bool preserve_shape = false;
  std::string normalization = "null";
  bool out_grad = false;
  double smooth_alpha = 0.0;
  static void declare(ParamDecl<SoftmaxOutputParam>& d) {
    d.field("grad_scale", &SoftmaxOutputParam::grad_scale)
        .set_default(1.0)
        .describe("Scales the gradient.");
    d.field("ignore_label", &SoftmaxOutputParam::ignore_label)
        .set_default(-1.0)
        .describe("With use_ignore, positions with this label get no gradient.");
    d.field("multi_output", &SoftmaxOutputParam::multi_output)
        .set_default(false)
        .describe("Softmax along axis 1 of (N, C, ...) data with labels (N, ...).");
    d.field("use_ignore", &SoftmaxOutputParam::use_ignore)
        .set_default(false)
        .describe("Whether labels equal to ignore_label get no gradient.");
    d.field("preserve_shape", &SoftmaxOutputParam::preserve_shape)
        .set_default(false)
        .describe(
            "Softmax along the last axis of data with more than two axes (without it, over "
            "all of each example's elements).");
    d.field("normalization", &SoftmaxOutputParam::normalization)
        .set_default(std::string("null"))
        .set_enum({"null", "batch", "valid"})
        .describe(
            "'null': the gradient as it is; 'batch': divided by the batch size; 'valid': by "
            "the number of labels not ignored.");
    d.field("out_grad", &SoftmaxOutputParam::out_grad)
        .set_default(false)
        .describe("Whether the gradient is multiplied by the head gradient.");
    d.field("smooth_alpha", &SoftmaxOutputParam::smooth_alpha)
        .set_default(0.0)
        .set_range(0.0, 1.0)
        .describe(
            "Label smoothing: the target is 1 - alpha at the label, alpha / (C - 1) "
            "elsewhere.");
  }
};

// MXNet's three layouts of SoftmaxOutput's data as (rows, classes, positions): multi_output
// (N, C, d2, ...) -> (N, C, d2 * ...), classes along axis 1; preserve_shape or data of at most
// two axes -> (prod of the leading axes, last axis, 1); other data -> (N, the rest flattened,
// 1), the softmax of each example over all its elements.
struct SoftmaxOutputLayout {
  int64_t rows = 1, classes = 1, positions = 1;
  bool flattened = false;
};

SoftmaxOutputLayout softmax_output_layout(const NodeAttrs& attrs, const Shape& d) {
  const auto& p = attrs.get<SoftmaxOutputParam>();
  const int min_ndim = p.multi_output ? 2 : 1;
  if (d.ndim() < min_ndim)
    value_error("[", op_name(attrs), "] argument 'data' must have at least ", min_ndim,
                " dimension", min_ndim == 1 ? "" : "s", ", got shape ", d.str());
  SoftmaxOutputLayout l;
  if (p.multi_output) {
    l.rows = d[0];
    l.classes = d[1];
    for (int i = 2; i < d.ndim(); ++i) l.positions *= d[i];
  } else if (p.preserve_shape || d.ndim() <= 2) {
    for (int i = 0; i + 1 < d.ndim(); ++i) l.rows *= d[i];
    l.classes = d[d.ndim() - 1];
  } else {
    l.rows = d[0];
    for (int i = 1; i < d.ndim(); ++i) l.classes *= d[i];
    l.flattened = true;
  }
  return l;
}

// The label: class indices of data's shape without its last axis ((N, d2, ...), or
// (N, d2 * ...) or (N, 1, d2, ...) with multi_output, as MXNet), or probabilities of data's
// own shape.
bool softmax_output_shape(const NodeAttrs& attrs, ShapeVector* in, ShapeVector* out) {
  const Shape& d = (*in)[0];
  if (!d.is_known()) return false;
  const SoftmaxOutputLayout l = softmax_output_layout(attrs, d);
  Shape& label = (*in)[1];
  if (label.is_known() && label == d) {  // probabilities
  } else if (attrs.get<SoftmaxOutputParam>().multi_output) {
    Shape without_classes = d, ones_for_classes = d;
    without_classes.resize(0);
    for (int i = 0; i < d.ndim(); ++i)
      if (i != 1) without_classes.push_back(d[i]);
    ones_for_classes[1] = 1;
    const Shape flat{l.rows, l.positions};
    if (!label.is_known()) label = flat;
    if (label != flat && label != without_classes && label != ones_for_classes)
      value_error("[", op_name(attrs), "] argument 'label' has shape ", label.str(), ", expected ",
                  flat.str(), " or ", without_classes.str(), " (class indices) or data's shape ",
                  d.str(), " (probabilities)");
  } else {
    Shape want = d;
    want.resize(d.ndim() - 1);
    if (!label.is_known()) label = want;
    if (label != want)
      value_error("[", op_name(attrs), "] argument 'label' has shape ", label.str(), ", expected ",
                  want.str(),
                  " (data's shape without its last axis: class indices) or data's shape ", d.str(),
                  " (probabilities)");
  }
  assign_shape(attrs, &(*out)[0], d, "output", 0);
  return true;
}

bool softmax_output_type(const NodeAttrs& attrs, DTypeVector* in, DTypeVector* out) {
  const DType t = (*in)[0];
  if (t == DType::kUnknown) return false;
  require_float(attrs, t, "data");
  if ((*in)[1] == DType::kUnknown) (*in)[1] = t;  // MXNet's labels: data's dtype
  require_no_bool(attrs, (*in)[1], "label");
  (*out)[0] = t;
  return true;
}

// A contiguous blob viewed with another shape of the same size.
TBlob reshaped(const TBlob& b, Shape shape) {
  TBlob v = b;
  v.strides = Shape::filled(shape.ndim(), 1);
  for (int i = shape.ndim() - 2; i >= 0; --i) v.strides[i] = v.strides[i + 1] * shape[i + 1];
  v.shape = std::move(shape);
  return v;
}

void softmax_output_compute(const NodeAttrs& attrs, const OpContext& ctx,
                            const std::vector<TBlob>& in, const std::vector<OpReqType>& req,
                            const std::vector<TBlob>& out) {
  static const NodeAttrs by_classes = Op::get("_npx_softmax")->make_attrs({{"axis", "1"}});
  const SoftmaxOutputLayout l = softmax_output_layout(attrs, in[0].shape);
  const Shape s3{l.rows, l.classes, l.positions};
  softmax_compute<false>(by_classes, ctx, {reshaped(in[0], s3)}, {req[0]}, {reshaped(out[0], s3)});
}

// What each class index's gradient is divided by, as MXNet's SoftmaxOutput: 'batch' by the
// number of labels, 'valid' by those not equal to ignore_label (at least 1), 'null' by the
// positions per example with multi_output (else by 1).
double softmax_output_divisor(const SoftmaxOutputParam& p, const SoftmaxOutputLayout& l,
                              const std::vector<int64_t>& label, int64_t ignore) {
  if (p.normalization == "batch") return static_cast<double>(std::max<size_t>(label.size(), 1));
  if (p.normalization == "valid")
    return static_cast<double>(std::max<int64_t>(
        static_cast<int64_t>(
            std::count_if(label.begin(), label.end(), [ignore](int64_t k) { return k != ignore; })),
        1));
  return p.multi_output ? static_cast<double>(std::max<int64_t>(l.positions, 1)) : 1.0;
}

// (ograd, output, label) -> (grad data, grad label = 0).
void softmax_output_backward(const NodeAttrs& attrs, const OpContext&, const std::vector<TBlob>& in,
                             const std::vector<OpReqType>& req, const std::vector<TBlob>& out) {
  const auto& p = attrs.get<SoftmaxOutputParam>();
  if (req[1] != kNullOp && req[1] != kAddTo) kernel::fill_output(out[1], req[1], 0);
  if (req[0] == kNullOp) return;
  const TBlob &g = in[0], &y = in[1], &lab = in[2];
  const SoftmaxOutputLayout l = softmax_output_layout(attrs, y.shape);
  if (req[0] != kAddTo) kernel::fill_output(out[0], req[0], 0);
  if (lab.shape == y.shape) {  // probabilities: (y - label) * grad_scale
    require_same_type(attrs, lab.dtype, y.dtype, "label", "data");
    NDX_FLOAT_SWITCH(y.dtype, T, {
      using C = compute_t<T>;
      const T *yp = y.ptr<T>(), *lp = lab.ptr<T>(), *gp = g.ptr<T>();
      T* dp = out[0].ptr<T>();
      for (int64_t j = 0; j < y.size(); ++j) {
        double v = (static_cast<double>(yp[j]) - static_cast<double>(lp[j])) * p.grad_scale;
        if (p.out_grad) v *= static_cast<double>(gp[j]);
        dp[j] = static_cast<T>(static_cast<C>(dp[j]) + static_cast<C>(v));
      }
    });
    return;
  }
  if (l.flattened)
    not_implemented("[", op_name(attrs), "] the gradient for class-index labels of data with ",
                    "more than two axes needs preserve_shape=True (classes along the last axis) "
                    "or multi_output=True (along axis 1); got data of shape ",
                    y.shape.str());
  const std::vector<int64_t> label = host_indices(lab);
  const auto ignore = static_cast<int64_t>(std::llround(p.ignore_label));
  for (int64_t k : label)
    if (!(p.use_ignore && k == ignore) && (k < 0 || k >= l.classes))
      index_error("[", op_name(attrs), "] label ", k, " is out of range for ", l.classes,
                  " classes");
  const double scale = p.grad_scale / softmax_output_divisor(p, l, label, ignore);
  const double off = l.classes > 1 ? p.smooth_alpha / static_cast<double>(l.classes - 1) : 0.0;
  NDX_FLOAT_SWITCH(y.dtype, T, {
    using C = compute_t<T>;
    const T *yp = y.ptr<T>(), *gp = g.ptr<T>();
    T* dp = out[0].ptr<T>();
    for (int64_t o = 0; o < l.rows; ++o)
      for (int64_t i = 0; i < l.positions; ++i) {
        const int64_t k = label[static_cast<size_t>(o * l.positions + i)];
        if (p.use_ignore && k == ignore) continue;
        for (int64_t c = 0; c < l.classes; ++c) {
          const int64_t j = (o * l.classes + c) * l.positions + i;
          const double target = c == k ? 1.0 - p.smooth_alpha : off;
          double v = (static_cast<double>(yp[j]) - target) * scale;
          if (p.out_grad) v *= static_cast<double>(gp[j]);
          dp[j] = static_cast<T>(static_cast<C>(dp[j]) + static_cast<C>(v));
        }
      }
  });
}

// The FInferShape of a loss head's backward op (ograd, output, label) -> (grad data, grad
// label): the inputs checked against the forward's shape inference, the gradients shaped as
// data and label.
FInferShape loss_backward_shape(FInferShape forward) {
  return [forward = std::move(forward)](const NodeAttrs& attrs, ShapeVector* in, ShapeVector* out) {
    if (!check_with_forward(attrs, in, forward, {{1, 2}, {{0, 0}}}, {"ograd", "output", "label"}))
      return false;
    assign_shape(attrs, &(*out)[0], (*in)[1], "output", 0);
    assign_shape(attrs, &(*out)[1], (*in)[2], "output", 1);
    return true;
  };
}

// ============================== regression outputs ==============================
// MXNet's LinearRegressionOutput / LogisticRegressionOutput / MAERegressionOutput loss heads:
// the forward is the data (its sigmoid for the logistic one); the backward ignores the head
// gradient and gives grad_scale / num_output * (output - label) (sign(output - label) for
// MAE), num_output being the label's elements per example.
struct RegressionOutputParam {
  double grad_scale = 1.0;
  static void declare(ParamDecl<RegressionOutputParam>& d) {
    d.field("grad_scale", &RegressionOutputParam::grad_scale)
        .set_default(1.0)
        .describe("Scales the gradient.");
  }
};

enum class Regression { kLinear, kLogistic, kMAE };

// The label has data's shape, or (N,) for data (N, 1) (MXNet's 1-d labels).
bool regression_shape(const NodeAttrs& attrs, ShapeVector* in, ShapeVector* out) {
  const Shape& d = (*in)[0];
  if (!d.is_known()) return false;
  if (d.ndim() < 1)
    value_error("[", op_name(attrs), "] argument 'data' must have at least 1 dimension, got ",
                d.str());
  Shape& label = (*in)[1];
  if (!label.is_known()) label = d.ndim() == 2 && d[1] == 1 ? Shape{d[0]} : d;
  if (label.ndim() < 1 || label[0] != d[0] || label.size() != d.size())
    value_error("[", op_name(attrs), "] argument 'label' has shape ", label.str(),
                ", expected data's shape ", d.str(), " (or as many elements per example)");
  assign_shape(attrs, &(*out)[0], d, "output", 0);
  return true;
}

bool regression_type(const NodeAttrs& attrs, DTypeVector* in, DTypeVector* out) {
  return same_float_type(attrs, in, out, {"data", "label"});
}

template <Regression kind>
void regression_compute(const NodeAttrs&, const OpContext&, const std::vector<TBlob>& in,
                        const std::vector<OpReqType>& req, const std::vector<TBlob>& out) {
  if (req[0] == kNullOp) return;
  NDX_FLOAT_SWITCH(in[0].dtype, T, {
    using C = compute_t<T>;
    const T* x = in[0].ptr<T>();
    T* y = out[0].ptr<T>();
    for (int64_t j = 0; j < in[0].size(); ++j) {
      const double v = static_cast<double>(x[j]);
      const double r = kind == Regression::kLogistic ? 1.0 / (1.0 + std::exp(-v)) : v;
      store(y + j, req[0], static_cast<C>(r));
    }
  });
}

// (ograd, output, label) -> (grad data, zeros for label).
template <Regression kind>
void regression_backward(const NodeAttrs& attrs, const OpContext&, const std::vector<TBlob>& in,
                         const std::vector<OpReqType>& req, const std::vector<TBlob>& out) {
  if (req[1] != kNullOp && req[1] != kAddTo) kernel::fill_output(out[1], req[1], 0);
  if (req[0] == kNullOp) return;
  const TBlob &y = in[1], &label = in[2];
  const int64_t per_example = label.ndim() && label.shape[0] ? label.size() / label.shape[0] : 1;
  const double scale =
      attrs.get<RegressionOutputParam>().grad_scale / static_cast<double>(per_example);
  NDX_FLOAT_SWITCH(y.dtype, T, {
    using C = compute_t<T>;
    const T *yp = y.ptr<T>(), *lp = label.ptr<T>();
    T* dp = out[0].ptr<T>();
    for (int64_t j = 0; j < y.size(); ++j) {
      const double diff = static_cast<double>(yp[j]) - static_cast<double>(lp[j]);
      // (MXNet's minus_sign: -1 at a tie and for NaN)
      const double g = kind == Regression::kMAE ? (diff > 0 ? 1.0 : -1.0) : diff;
      store(dp + j, req[0], static_cast<C>(g * scale));
    }
  });
}

void register_regression_output(const char* name, const char* doc, FCompute forward,
                                FCompute backward_compute) {
  const std::string backward = std::string("_backward_") + name;
  OpRegistry::global()
      .register_op(name)
      .describe(doc)
      .set_num_inputs(2)
      .add_argument("data", "NDArray", "Predictions, (N, ...).")
      .add_argument("label", "NDArray", "Targets: data's shape, or (N,) for data (N, 1).")
      .set_params<RegressionOutputParam>()
      .set_attr<FInferShape>("FInferShape", regression_shape)
      .set_attr<TFillsInputs>("TFillsInputs", true)
      .set_attr<FInferType>("FInferType", regression_type)
      .set_attr<FCompute>("FCompute<cpu>", std::move(forward))
      .set_attr<FGradient>(
          "FGradient", [backward](const NodePtr& n, const std::vector<NodeEntry>& og) {
            return make_grad_node(backward, n, {og[0], NodeEntry{n, 0, 0}, n->inputs[1]}, true);
          });
  register_backward(backward.c_str(),
                    "Backward of a regression output: (ograd, output, label) -> (grad data, "
                    "zeros for label).")
      .set_num_inputs(3)
      .set_num_outputs(2)
      .set_params<RegressionOutputParam>()
      .set_attr<FInferShape>("FInferShape", loss_backward_shape(regression_shape))
      .set_attr<FInferType>("FInferType",
                            [](const NodeAttrs& attrs, DTypeVector* in, DTypeVector* out) {
                              if (!same_float_type(attrs, in, out, {"ograd", "output", "label"}))
                                return false;
                              (*out)[1] = (*in)[2];
                              return true;
                            })
      .set_attr<FCompute>("FCompute<cpu>", std::move(backward_compute))
      .set_attr<FGradient>("FGradient",
                           nn_check::no_gradient_yet(name,
                                                     "a regression output's gradient is a "
                                                     "loss gradient"));
}

// ============================== MakeLoss ==============================
// MXNet's MakeLoss: the data itself as a loss head; its gradient is grad_scale whatever the
// head gradient, divided by the batch size ('batch') or by the number of elements above
// valid_thresh ('valid', at least 1).
struct MakeLossParam {
  double grad_scale = 1.0;
  double valid_thresh = 0.0;
  std::string normalization = "null";
  static void declare(ParamDecl<MakeLossParam>& d) {
    d.field("grad_scale", &MakeLossParam::grad_scale).set_default(1.0).describe("The gradient.");
    d.field("valid_thresh", &MakeLossParam::valid_thresh)
        .set_default(0.0)
        .describe("'valid' counts the elements of data above this.");
    d.field("normalization", &MakeLossParam::normalization)
        .set_default(std::string("null"))
        .set_enum({"null", "batch", "valid"})
        .describe(
            "'null': grad_scale; 'batch': divided by the batch size; 'valid': by the "
            "elements above valid_thresh.");
  }
};

void make_loss_compute(const NodeAttrs&, const OpContext&, const std::vector<TBlob>& in,
                       const std::vector<OpReqType>& req, const std::vector<TBlob>& out) {
  if (req[0] == kNullOp) return;
  kernel::write_req(kernel::as_array(in[0]), kernel::as_array(out[0]), req[0]);
}

// (ograd, data) -> grad data.
void make_loss_backward(const NodeAttrs& attrs, const OpContext&, const std::vector<TBlob>& in,
                        const std::vector<OpReqType>& req, const std::vector<TBlob>& out) {
  if (req[0] == kNullOp) return;
  const auto& p = attrs.get<MakeLossParam>();
  const TBlob& x = in[1];
  double divisor = 1.0;
  if (p.normalization == "batch" && x.ndim() > 0) divisor = std::max<int64_t>(x.shape[0], 1);
  if (p.normalization == "valid") {
    int64_t valid = 0;
    NDX_FLOAT_SWITCH(x.dtype, T, {
      const T* xp = x.ptr<T>();
      for (int64_t j = 0; j < x.size(); ++j) valid += static_cast<double>(xp[j]) > p.valid_thresh;
    });
    divisor = static_cast<double>(std::max<int64_t>(valid, 1));
  }
  kernel::fill_output(out[0], req[0], p.grad_scale / divisor);
}

// ============================== one_hot ==============================
struct OneHotParam {
  int64_t depth = 0;
  double on_value = 1.0;
  double off_value = 0.0;
  DType dtype = DType::kFloat32;
  static void declare(ParamDecl<OneHotParam>& d) {
    d.field("depth", &OneHotParam::depth)
        .set_lower_bound(0)
        .describe("The length of the one-hot dimension.");
    d.field("on_value", &OneHotParam::on_value)
        .set_default(1.0)
        .describe("The value where the index matches.");
    d.field("off_value", &OneHotParam::off_value).set_default(0.0).describe("The value elsewhere.");
    d.field("dtype", &OneHotParam::dtype)
        .set_default(DType::kFloat32)
        .describe("The dtype of the result.");
  }
};

void one_hot_compute(const NodeAttrs& attrs, const OpContext&, const std::vector<TBlob>& in,
                     const std::vector<OpReqType>& req, const std::vector<TBlob>& out) {
  if (req[0] == kNullOp) return;
  const auto& p = attrs.get<OneHotParam>();
  if (out[0].device.is_gpu()) {
    // The device's cast truncates floats toward zero and reads nan as 0, as read_indices does.
    NDArray k(in[0].shape, DType::kInt64, out[0].device);
    kernel::copy(in[0], to_blob(k), kWriteTo);
    kernel::gpu::one_hot(k.data<int64_t>(), k.size(), p.depth, p.on_value, p.off_value, out[0],
                         req[0] == kAddTo);
    return;
  }
  const std::vector<int64_t> idx = read_indices(in[0]);
  NDX_DTYPE_SWITCH(out[0].dtype, T, {
    using C = compute_t<T>;
    const C on = kernel::from_double<T>(p.on_value), off = kernel::from_double<T>(p.off_value);
    T* yp = out[0].ptr<T>();
    for (size_t r = 0; r < idx.size(); ++r)
      for (int64_t d = 0; d < p.depth; ++d)
        store(yp + static_cast<int64_t>(r) * p.depth + d, req[0], d == idx[r] ? on : off);
  });
}

// ============================== embedding ==============================
struct EmbeddingParam {
  int64_t input_dim = 0;
  int64_t output_dim = 0;
  bool sparse_grad = false;
  static void declare(ParamDecl<EmbeddingParam>& d) {
    d.field("input_dim", &EmbeddingParam::input_dim)
        .set_lower_bound(1)
        .describe("The vocabulary size: indices must lie in [0, input_dim).");
    d.field("output_dim", &EmbeddingParam::output_dim)
        .set_lower_bound(1)
        .describe("The embedding size.");
    // Kept on the node so that a graph says which weights MXNet gives a row_sparse gradient
    // (the Module updates those rows lazily); the computed gradient is the same either way.
    d.field("sparse_grad", &EmbeddingParam::sparse_grad)
        .set_default(false)
        .describe("MXNet's row_sparse gradient of the weight: the rows of the looked-up ids.");
  }
};

bool embedding_shape(const NodeAttrs& attrs, ShapeVector* in, ShapeVector* out) {
  const auto& p = attrs.get<EmbeddingParam>();
  expect_shape(attrs, in, 1, Shape{p.input_dim, p.output_dim}, "weight",
               " (input_dim, output_dim)");
  if (!(*in)[0].is_known()) return false;
  std::vector<int64_t> dims((*in)[0].begin(), (*in)[0].end());
  dims.push_back(p.output_dim);
  assign_shape(attrs, &(*out)[0], Shape(dims.begin(), dims.end()), "output", 0);
  return true;
}

// The indices of `data`, each checked against input_dim (IndexError).
std::vector<int64_t> embedding_indices(const NodeAttrs& attrs, const TBlob& data) {
  const int64_t dim = attrs.get<EmbeddingParam>().input_dim;
  std::vector<int64_t> idx = host_indices(data);
  for (int64_t v : idx)
    if (v < 0 || v >= dim)
      index_error("[", op_name(attrs), "] index ", v, " is out of bounds for input_dim ", dim);
  return idx;
}

void embedding_compute(const NodeAttrs& attrs, const OpContext&, const std::vector<TBlob>& in,
                       const std::vector<OpReqType>& req, const std::vector<TBlob>& out) {
  if (req[0] == kNullOp) return;
  const int64_t d = attrs.get<EmbeddingParam>().output_dim;
  const std::vector<int64_t> idx = embedding_indices(attrs, in[0]);
  if (out[0].device.is_gpu()) {  // rows of the weight, gathered on the device
    const NDArray k = on_device(idx, out[0].device);
    kernel::gpu::gather(in[1], k.data<int64_t>(), out[0], 1, in[1].shape[0],
                        static_cast<int64_t>(idx.size()), d, req[0] == kAddTo);
    return;
  }
  NDX_DTYPE_SWITCH(in[1].dtype, T, {
    const T* wp = in[1].ptr<T>();
    T* yp = out[0].ptr<T>();
    for (size_t r = 0; r < idx.size(); ++r)
      for (int64_t c = 0; c < d; ++c)
        store(yp + static_cast<int64_t>(r) * d + c, req[0],
              static_cast<compute_t<T>>(wp[idx[r] * d + c]));
  });
}

// (ograd, data, weight) -> grad weight: rows of ograd added up per index.
// Each looked-up row of embedding's gradient: the ograd rows of its indices (order[starts[k]]
// to order[starts[k + 1]], in index order) summed in double and stored with `req` into out's
// row. Rows are independent: threads take groups of them.
template <class T>
void embedding_rows(const T* og, T* out, int64_t d, const std::vector<int64_t>& idx,
                    const std::vector<size_t>& order, const std::vector<size_t>& starts,
                    OpReqType req) {
  const auto groups = static_cast<int64_t>(starts.size()) - 1;
  const int64_t grain = std::max<int64_t>(1, kernel::kGrain / std::max<int64_t>(d, 1));
  kernel::parallel_for(groups, grain, [&](int64_t first, int64_t last) {
    std::vector<double> acc(static_cast<size_t>(d));
    for (auto k = static_cast<size_t>(first); k < static_cast<size_t>(last); ++k) {
      std::fill(acc.begin(), acc.end(), 0.0);
      for (size_t q = starts[k]; q < starts[k + 1]; ++q) {
        const T* g = og + static_cast<int64_t>(order[q]) * d;
        for (int64_t c = 0; c < d; ++c) acc[c] += static_cast<double>(g[c]);
      }
      T* row = out + idx[order[starts[k]]] * d;
      for (int64_t c = 0; c < d; ++c) store(row + c, req, static_cast<compute_t<T>>(acc[c]));
    }
  });
}

void embedding_backward(const NodeAttrs& attrs, const OpContext&, const std::vector<TBlob>& in,
                        const std::vector<OpReqType>& req, const std::vector<TBlob>& out) {
  if (req[0] == kNullOp) return;
  const int64_t d = attrs.get<EmbeddingParam>().output_dim;
  const std::vector<int64_t> idx = embedding_indices(attrs, in[1]);
  if (out[0].device.is_gpu()) {  // each row's gradients summed in index order, no atomics
    if (!is_float(out[0].dtype))
      type_error("[", op_name(attrs), "] gradients need a float dtype, got ", out[0].dtype);
    const auto m = static_cast<int64_t>(idx.size());
    std::vector<int64_t> order(idx.size()), rows, start;
    std::iota(order.begin(), order.end(), int64_t{0});
    if (!std::is_sorted(idx.begin(), idx.end()))
      std::stable_sort(order.begin(), order.end(),
                       [&](int64_t a, int64_t b) { return idx[a] < idx[b]; });
    for (int64_t q = 0; q < m; ++q)
      if (q == 0 || idx[order[q]] != idx[order[q - 1]]) {
        rows.push_back(idx[order[q]]);
        start.push_back(q);
      }
    start.push_back(m);
    if (req[0] != kAddTo) kernel::fill_output(out[0], req[0], 0);
    const NDArray r = on_device(rows, out[0].device), st = on_device(start, out[0].device),
                  ord = on_device(order, out[0].device);
    kernel::gpu::scatter_sum(in[0], r.data<int64_t>(), st.data<int64_t>(), ord.data<int64_t>(),
                             out[0], 1, out[0].shape[0], m, d, static_cast<int64_t>(rows.size()));
    return;
  }
  // CPU: the output is zeroed once (a threaded fill), then each looked-up row gets its
  // gradient rows summed in index order (in double): work in the rows looked up, not in the
  // vocabulary, which a dense accumulator paid for on every call (80 ms for a 200,000 x 64
  // table). The sums, and so the results, are the dense accumulator's.
  const size_t m = idx.size();
  const OpReqType row_req = req[0] == kAddTo ? kAddTo : kWriteTo;
  // Indices in increasing order, as the positions a recorded mask or slice reads: each row
  // gets one ograd row, written straight (no sort, no per-row runs).
  if (std::adjacent_find(idx.begin(), idx.end(), std::greater_equal<>()) == idx.end()) {
    if (req[0] != kAddTo) kernel::fill_output(out[0], req[0], 0);
    NDX_FLOAT_SWITCH(out[0].dtype, T, {
      const T* og = in[0].ptr<T>();
      T* grad = out[0].ptr<T>();
      const int64_t grain = std::max<int64_t>(1, kernel::kGrain / std::max<int64_t>(d, 1));
      kernel::parallel_for(static_cast<int64_t>(m), grain, [&](int64_t first, int64_t last) {
        for (int64_t r = first; r < last; ++r)
          for (int64_t c = 0; c < d; ++c)
            store(grad + idx[r] * d + c, row_req, static_cast<compute_t<T>>(og[r * d + c]));
      });
    });
    return;
  }
  std::vector<size_t> order(m);
  std::iota(order.begin(), order.end(), size_t{0});
  // (indices already in order, with repeats: no sort)
  if (!std::is_sorted(idx.begin(), idx.end()))
    std::stable_sort(order.begin(), order.end(),
                     [&](size_t a, size_t b) { return idx[a] < idx[b]; });
  std::vector<size_t> starts;  // where each looked-up row's run of `order` begins
  for (size_t q = 0; q < m; ++q)
    if (q == 0 || idx[order[q]] != idx[order[q - 1]]) starts.push_back(q);
  starts.push_back(m);
  if (req[0] != kAddTo) kernel::fill_output(out[0], req[0], 0);
  NDX_FLOAT_SWITCH(out[0].dtype, T, {
    embedding_rows(in[0].ptr<T>(), out[0].ptr<T>(), d, idx, order, starts, row_req);
  });
}

// ============================== dropout ==============================
struct DropoutParam {
  double p = 0.5;
  std::string mode = "training";
  Shape axes;
  static void declare(ParamDecl<DropoutParam>& d) {
    d.field("p", &DropoutParam::p)
        .set_default(0.5)
        .set_range(0, 1)
        .describe("The fraction of the input that gets dropped out during training.");
    d.field("mode", &DropoutParam::mode)
        .set_default(std::string("training"))
        .set_enum({"training", "always"})
        .describe("'training': drop only in training mode; 'always': in predict mode too.");
    d.field("axes", &DropoutParam::axes)
        .set_default(Shape())
        .describe(
            "Axes along which one mask value is shared (variational dropout): the mask has "
            "length 1 there and is broadcast.");
  }
};

// The mask's shape: the data's, with length 1 on the shared axes.
Shape dropout_mask_shape(const NodeAttrs& attrs, const Shape& data) {
  Shape mask = data;
  std::vector<bool> seen(data.ndim(), false);
  for (int64_t a : attrs.get<DropoutParam>().axes) {
    const int k = normalize_axis(a, data.ndim(), op_name(attrs).c_str());
    if (seen[k])
      value_error("[", op_name(attrs), "] duplicate value in 'axes': got ",
                  attrs.get<DropoutParam>().axes.str());
    seen[k] = true;
    mask[k] = 1;
  }
  return mask;
}

bool dropout_shape(const NodeAttrs& attrs, ShapeVector* in, ShapeVector* out) {
  if (!(*in)[0].is_known()) return false;
  const Shape mask = dropout_mask_shape(attrs, (*in)[0]);
  assign_shape(attrs, &(*out)[0], (*in)[0], "output", 0);
  assign_shape(attrs, &(*out)[1], mask, "mask", 1);
  return true;
}

// The mask (hidden output 1) holds 0 or 1 / (1 - p) per element, drawn from a counter-based
// stream seeded once per call: the same seed gives the same mask on any number of threads.
void dropout_compute(const NodeAttrs& attrs, const OpContext& ctx, const std::vector<TBlob>& in,
                     const std::vector<OpReqType>& req, const std::vector<TBlob>& out) {
  const auto& p = attrs.get<DropoutParam>();
  const bool active = (ctx.is_train || p.mode == "always") && p.p > 0;
  const double scale = p.p >= 1 ? 0.0 : 1.0 / (1.0 - p.p);
  // The mask goes straight to output 1 unless that output only accumulates or is not wanted.
  NDArray scratch;
  TBlob mask = out[1];
  if (req[1] == kNullOp || req[1] == kAddTo) {
    scratch = NDArray(out[1].shape, in[0].dtype, in[0].device);
    mask = to_blob(scratch);
  }
  const TBlob& x = in[0];
  // On a GPU, one kernel draws the mask and writes the product (the numbers of the two passes).
  const bool fused = active && x.device.is_gpu() && req[0] == kWriteTo && p.axes.ndim() == 0 &&
                     x.is_contiguous() && out[0].is_contiguous() && mask.is_contiguous() &&
                     (x.dtype == DType::kFloat32 || x.dtype == DType::kFloat64);
  if (fused)
    kernel::gpu::dropout(x, mask, out[0], p.p, scale, ctx.requested[0].next_random());
  else if (active)
    kernel::bernoulli_scaled(mask, p.p, scale, ctx.requested[0].next_random());
  else
    kernel::fill(mask, 1.0);
  if (mask.dptr != out[1].dptr) kernel::copy(mask, out[1], req[1]);
  if (!fused && req[0] != kNullOp)
    kernel::apply(NDX_KERNEL(Product), {x, mask}, out[0], req[0], x.dtype);
}

// ============================== layer_norm ==============================
struct LayerNormParam {
  int64_t axis = -1;
  double eps = 1e-5;
  bool output_mean_var = false;
  static void declare(ParamDecl<LayerNormParam>& d) {
    d.field("axis", &LayerNormParam::axis)
        .set_default(int64_t{-1})
        .describe("The axis to normalize over.");
    d.field("eps", &LayerNormParam::eps)
        .set_default(1e-5)
        .set_lower_bound(0)
        .describe("Added to the variance for numerical stability.");
    d.field("output_mean_var", &LayerNormParam::output_mean_var)
        .set_default(false)
        .describe(
            "Also return the mean and the standard deviation (no gradient flows "
            "through them).");
  }
};

// layer_norm's gradient written with differentiable ops, for grad(create_graph=True) (a
// gradient penalty through a LayerNorm): with xhat = (x - mean) * rstd along the axis,
// dx = rstd (d - mean(d) - xhat mean(d xhat)) where d = og gamma, dgamma = sum(og xhat) and
// dbeta = sum(og) over the other axes. The graph needs no rank, given the axis counted from
// the end (gamma gets trailing 1s, and collapse_sum_like sums down to it), so it serves the
// node copies of a hybridized block too; a non-negative axis takes the rank from the
// recorded output, and without one (a hybridized graph's node) there is no composite: empty.
std::vector<NodeEntry> layer_norm_composite_gradient(const NodePtr& n, const NodeEntry& og) {
  const auto& p = n->attrs.get<LayerNormParam>();
  int64_t axis = p.axis;
  if (axis >= 0) {
    if (n->values.empty()) return {};
    axis -= n->values[0].shape().ndim();
  }
  const std::map<std::string, std::string> along{{"axis", std::to_string(axis)}, {"keepdims", "1"}};
  auto mean_along = [&](NodeEntry e) { return make_node("_np_mean", {std::move(e)}, along); };
  NodeEntry gamma = n->inputs[1];  // (C,) -> (C, 1, ..., 1), aligned with the axis
  for (int64_t i = 0; i < -axis - 1; ++i)
    gamma = make_node("_np_expand_dims", {gamma}, {{"axis", "-1"}});
  auto sum_to_gamma = [&](NodeEntry e) {
    return make_node("_np_reshape", {make_node("_npi_collapse_sum_like", {std::move(e), gamma})},
                     {{"newshape", "(-1,)"}});
  };
  const NodeEntry& x = n->inputs[0];
  const NodeEntry centered = op2("_np_subtract", x, mean_along(x));
  const NodeEntry var = mean_along(op2("_np_multiply", centered, centered));
  const NodeEntry eps = make_node("_np_full_like", {var}, {{"fill_value", exact(p.eps)}});
  const NodeEntry rstd = op1("_np_reciprocal", op1("_np_sqrt", op2("_np_add", var, eps)));
  const NodeEntry xhat = op2("_np_multiply", centered, rstd);
  const NodeEntry d = op2("_np_multiply", og, gamma);
  const NodeEntry inner = op2("_np_subtract", op2("_np_subtract", d, mean_along(d)),
                              op2("_np_multiply", xhat, mean_along(op2("_np_multiply", d, xhat))));
  return {op2("_np_multiply", rstd, inner), sum_to_gamma(op2("_np_multiply", og, xhat)),
          sum_to_gamma(og)};
}

bool layer_norm_shape(const NodeAttrs& attrs, ShapeVector* in, ShapeVector* out) {
  const Shape& d = (*in)[0];
  if (!d.is_known()) return false;
  const int ax = normalize_axis(attrs.get<LayerNormParam>().axis, d.ndim(), op_name(attrs).c_str());
  const std::string why = " (the length of data's axis " + std::to_string(ax) + ")";
  expect_shape(attrs, in, 1, Shape{d[ax]}, "gamma", why);
  expect_shape(attrs, in, 2, Shape{d[ax]}, "beta", why);
  assign_shape(attrs, &(*out)[0], d, "output", 0);
  assign_shape(attrs, &(*out)[1], with_axis(d, ax, 1), "output", 1);
  assign_shape(attrs, &(*out)[2], with_axis(d, ax, 1), "output", 2);
  return true;
}

// Whether layer_norm along `ax` runs as the row kernels (kernel/rowwise-inl.h): the last
// axis of contiguous, non-empty float32 / float64 CPU arrays, every one of x's dtype.
bool layer_norm_by_rows(const TBlob& x, int ax, std::initializer_list<const TBlob*> others) {
  if (!x.device.is_cpu() || (x.dtype != DType::kFloat32 && x.dtype != DType::kFloat64) ||
      ax != x.ndim() - 1 || x.size() == 0 || !x.is_contiguous())
    return false;
  for (const TBlob* b : others)
    if (b->dtype != x.dtype || !b->is_contiguous()) return false;
  return true;
}

bool writes(OpReqType req) { return req == kWriteTo || req == kWriteInplace; }

void layer_norm_compute(const NodeAttrs& attrs, const OpContext&, const std::vector<TBlob>& in,
                        const std::vector<OpReqType>& req, const std::vector<TBlob>& out) {
  const auto& p = attrs.get<LayerNormParam>();
  const TBlob& x = in[0];
  const int ax = normalize_axis(p.axis, x.ndim(), op_name(attrs).c_str());
  const DType st = stat_dtype(x.dtype);
  const Shape kd = with_axis(x.shape, ax, 1);
  if (layer_norm_by_rows(x, ax, {&in[1], &in[2], &out[0]}) && writes(req[0])) {
    NDArray mean(kd, st), sd(kd, st);
    kernel::NormRowsArgs a;
    a.x = x.dptr, a.y = out[0].dptr, a.gamma = in[1].dptr, a.beta = in[2].dptr;
    a.mean = mean.raw_data(), a.sd = sd.raw_data();
    a.dtype = x.dtype, a.rows = x.size() / x.shape[ax], a.n = x.shape[ax], a.eps = p.eps;
    NDX_DISPATCH_FN(layer_norm_rows)(a);
    kernel::copy(to_blob(mean), out[1], req[1]);
    kernel::copy(to_blob(sd), out[2], req[2]);
    return;
  }
  const std::vector<bool> mask = axis_mask(x.ndim(), ax, true);
  NDArray mean(kd, st, x.device), var(kd, st, x.device), sd(kd, st, x.device),
      sq(x.shape, st, x.device);
  reduce_into(NDX_REDUCER(MeanReducer), x, mean, mask);
  kernel::apply(NDX_KERNEL(SquaredDiff), {x, to_blob(mean)}, to_blob(sq), kWriteTo, st);
  reduce_into(NDX_REDUCER(MeanReducer), to_blob(sq), var, mask);
  kernel::FunctorArgs eps;
  eps.a = p.eps;
  kernel::apply(NDX_KERNEL(SqrtPlusEps), {to_blob(var)}, to_blob(sd), kWriteTo, st, eps);
  kernel::apply(NDX_KERNEL(NormalizeDiv),
                {x, to_blob(mean), to_blob(sd), along_axis(in[1], x.shape, ax),
                 along_axis(in[2], x.shape, ax)},
                out[0], req[0], st);
  kernel::copy(to_blob(mean), out[1], req[1]);
  kernel::copy(to_blob(sd), out[2], req[2]);
}

// (ograd, data, gamma, mean, std) -> (grad data, grad gamma, grad beta)
void layer_norm_backward(const NodeAttrs& attrs, const OpContext&, const std::vector<TBlob>& in,
                         const std::vector<OpReqType>& req, const std::vector<TBlob>& out) {
  const auto& p = attrs.get<LayerNormParam>();
  const TBlob &g = in[0], &x = in[1];
  const int ax = normalize_axis(p.axis, x.ndim(), op_name(attrs).c_str());
  const DType st = stat_dtype(x.dtype);
  // The row kernel sums a row's terms in one chain per lane: rows up to 64K elements.
  if (layer_norm_by_rows(x, ax, {&g, &in[2], &in[3], &in[4]}) && x.shape[ax] <= 65536 &&
      (req[0] == kNullOp || (writes(req[0]) && out[0].is_contiguous()))) {
    const int64_t n = x.shape[ax], rows = x.size() / n;
    NDArray partials(Shape{kernel::norm_rows_partials(rows, n)}, x.dtype);
    NDArray dgamma(Shape{n}, x.dtype), dbeta(Shape{n}, x.dtype);
    kernel::NormRowsGradArgs a;
    a.g = g.dptr, a.x = x.dptr, a.gamma = in[2].dptr, a.mean = in[3].dptr, a.sd = in[4].dptr;
    a.dx = req[0] == kNullOp ? nullptr : out[0].dptr;
    a.dgamma = dgamma.raw_data(), a.dbeta = dbeta.raw_data(), a.partials = partials.raw_data();
    a.dtype = x.dtype, a.rows = rows, a.n = n;
    NDX_DISPATCH_FN(layer_norm_rows_grad)(a);
    kernel::copy(to_blob(dgamma), out[1], req[1]);
    kernel::copy(to_blob(dbeta), out[2], req[2]);
    return;
  }
  const std::vector<bool> mask = axis_mask(x.ndim(), ax, true);
  const std::vector<bool> others = axis_mask(x.ndim(), ax, false);
  const Shape kd = with_axis(x.shape, ax, 1);
  const TBlob gamma = along_axis(in[2], x.shape, ax);
  NDArray xhat(x.shape, st, x.device), dxhat(x.shape, st, x.device), prod(x.shape, st, x.device);
  NDArray sum_d(kd, st, x.device), sum_dx(kd, st, x.device), inv_sd(kd, st, x.device);
  kernel::apply(NDX_KERNEL(XHatDiv), {x, in[3], in[4]}, to_blob(xhat), kWriteTo, st);
  kernel::apply(NDX_KERNEL(Product), {g, gamma}, to_blob(dxhat), kWriteTo, st);
  kernel::apply(NDX_KERNEL(Product), {to_blob(dxhat), to_blob(xhat)}, to_blob(prod), kWriteTo, st);
  reduce_into(NDX_REDUCER(SumReducer), to_blob(dxhat), sum_d, mask);
  reduce_into(NDX_REDUCER(SumReducer), to_blob(prod), sum_dx, mask);
  kernel::apply(NDX_KERNEL(OneOver), {in[4]}, to_blob(inv_sd), kWriteTo, st);
  kernel::FunctorArgs inv_n;
  inv_n.a = x.shape[ax] ? 1.0 / static_cast<double>(x.shape[ax]) : 0.0;
  kernel::apply(NDX_KERNEL(NormGrad),
                {to_blob(dxhat), to_blob(xhat), to_blob(sum_d), to_blob(sum_dx), to_blob(inv_sd)},
                out[0], req[0], st, inv_n);
  // grad gamma = sum of g * xhat, grad beta = sum of g, over every axis but `axis`.
  kernel::apply(NDX_KERNEL(Product), {g, to_blob(xhat)}, to_blob(prod), kWriteTo, st);
  kernel::reduce(NDX_REDUCER(SumReducer), to_blob(prod),
                 kernel::keepdims_view(out[1], x.shape, others), req[1], st);
  kernel::reduce(NDX_REDUCER(SumReducer), g, kernel::keepdims_view(out[2], x.shape, others), req[2],
                 st);
}

// ============================== batch_norm ==============================
struct BatchNormParam {
  double eps = 1e-5;
  double momentum = 0.9;
  int64_t axis = 1;
  bool fix_gamma = false;
  bool use_global_stats = false;
  bool output_mean_var = false;
  static void declare(ParamDecl<BatchNormParam>& d) {
    d.field("eps", &BatchNormParam::eps)
        .set_default(1e-5)
        .set_lower_bound(0)
        .describe("Added to the variance for numerical stability.");
    d.field("momentum", &BatchNormParam::momentum)
        .set_default(0.9)
        .set_range(0, 1)
        .describe("running = running * momentum + batch * (1 - momentum) in training.");
    d.field("axis", &BatchNormParam::axis).set_default(int64_t{1}).describe("The channel axis.");
    d.field("fix_gamma", &BatchNormParam::fix_gamma)
        .set_default(false)
        .describe("Treat gamma as 1 (its gradient is then 0).");
    d.field("use_global_stats", &BatchNormParam::use_global_stats)
        .set_default(false)
        .describe("Normalize with the running statistics in training mode too.");
    d.field("output_mean_var", &BatchNormParam::output_mean_var)
        .set_default(false)
        .describe(
            "Also return the mean and the inverse standard deviation used (MXNet's: no "
            "gradient flows through them).");
  }
};

bool batch_norm_shape(const NodeAttrs& attrs, ShapeVector* in, ShapeVector* out) {
  const Shape& d = (*in)[0];
  if (!d.is_known()) return false;
  const int ax = normalize_axis(attrs.get<BatchNormParam>().axis, d.ndim(), op_name(attrs).c_str());
  const std::string why = " (the length of data's axis " + std::to_string(ax) + ")";
  const char* names[] = {"gamma", "beta", "running_mean", "running_var"};
  for (int i = 0; i < 4; ++i) expect_shape(attrs, in, i + 1, Shape{d[ax]}, names[i], why);
  assign_shape(attrs, &(*out)[0], d, "output", 0);
  assign_shape(attrs, &(*out)[1], Shape{d[ax]}, "output", 1);
  assign_shape(attrs, &(*out)[2], Shape{d[ax]}, "output", 2);
  return true;
}

// MXNet's mixed precision: float16 / bfloat16 data with float32 gamma, beta and running
// statistics (what AMP and Block.cast('float16') leave a BatchNorm); the statistics are
// computed in float32 either way, the output has the data's dtype. Types `in[first..]`
// (unknown ones become float32) and returns true when that pairing applies.
bool low_precision_with_float32(const NodeAttrs& attrs, DType data, DTypeVector* in, size_t first,
                                const std::vector<const char*>& names) {
  if (data != DType::kFloat16 && data != DType::kBFloat16) return false;
  // Parameters all of unknown dtype (graph inference from the data) are float32, as MXNet's.
  bool any_float32 = false, all_unknown = true;
  for (size_t i = first; i < in->size(); ++i) {
    any_float32 |= (*in)[i] == DType::kFloat32;
    all_unknown &= (*in)[i] == DType::kUnknown;
  }
  if (!any_float32 && !all_unknown) return false;
  for (size_t i = first; i < in->size(); ++i) {
    if ((*in)[i] == DType::kUnknown) (*in)[i] = DType::kFloat32;
    require_same_type(attrs, (*in)[i], DType::kFloat32, names[std::min(i, names.size() - 1)],
                      "the float32 parameters");
  }
  return true;
}

bool batch_norm_type(const NodeAttrs& attrs, DTypeVector* in, DTypeVector* out) {
  const DType d = (*in)[0];
  if (low_precision_with_float32(attrs, d, in, 1,
                                 {"data", "gamma", "beta", "running_mean", "running_var"})) {
    (*out)[0] = d;
    (*out)[1] = (*out)[2] = DType::kFloat32;
    return true;
  }
  return same_float_type(attrs, in, out, {"data", "gamma", "beta", "running_mean", "running_var"});
}

// (ograd, data, gamma, mean, inv_std): low-precision ograd and data with float32 rest.
bool batch_norm_backward_type(const NodeAttrs& attrs, DTypeVector* in, DTypeVector* out) {
  const DType d = (*in)[1];
  if (d != DType::kUnknown &&
      low_precision_with_float32(attrs, d, in, 2, {"ograd", "data", "gamma", "mean", "inv_std"})) {
    require_same_type(attrs, (*in)[0], d, "ograd", "data");
    (*out)[0] = d;
    for (size_t i = 1; i < out->size(); ++i) (*out)[i] = DType::kFloat32;
    return true;
  }
  return same_float_type(attrs, in, out, {"ograd", "data", "gamma", "mean", "inv_std"});
}

// batch_norm's row kernels (kernel/rowwise-inl.h) take contiguous float32 / float64 CPU data
// whose rows along the channel axis hold at least this many elements; shorter rows (a
// (batch, features) input) go through the reductions, which vectorize across channels.
constexpr int64_t kChannelRowMin = 16;

// x as [outer, channels, inner] for the row kernels, when they take it with `others` (all of
// x's dtype and contiguous).
bool channel_rows(const TBlob& x, int ax, std::initializer_list<const TBlob*> others,
                  kernel::ChannelNormArgs* a) {
  if (!x.device.is_cpu() || (x.dtype != DType::kFloat32 && x.dtype != DType::kFloat64) ||
      x.size() == 0 || !x.is_contiguous())
    return false;
  for (const TBlob* b : others)
    if (b->dtype != x.dtype || !b->is_contiguous()) return false;
  a->dtype = x.dtype;
  a->channels = x.shape[ax];
  a->outer = 1, a->inner = 1;
  for (int d = 0; d < ax; ++d) a->outer *= x.shape[d];
  for (int d = ax + 1; d < x.ndim(); ++d) a->inner *= x.shape[d];
  return a->inner >= kChannelRowMin;
}

// Outputs: (out, mean, inv_std) with mean / inv_std the statistics used (hidden). In training
// mode without use_global_stats the batch statistics are used and running_mean / running_var
// (inputs 3 and 4) are updated IN PLACE; in predict mode the running statistics are used.
void batch_norm_compute(const NodeAttrs& attrs, const OpContext& ctx, const std::vector<TBlob>& in,
                        const std::vector<OpReqType>& req, const std::vector<TBlob>& out) {
  const auto& p = attrs.get<BatchNormParam>();
  const TBlob& x = in[0];
  const int ax = normalize_axis(p.axis, x.ndim(), op_name(attrs).c_str());
  const bool batch_stats = ctx.is_train && !p.use_global_stats;
  const DType st = stat_dtype(x.dtype);
  const std::vector<bool> others = axis_mask(x.ndim(), ax, false);
  const Shape c{x.shape[ax]};
  NDArray mean(c, st, x.device), var(c, st, x.device), inv(c, st, x.device);
  if (batch_stats) {
    if (x.size() == 0) {  // no samples: statistics 0 (NumPy would give NaN with a warning)
      mean.fill(0);
      var.fill(0);
    } else if (kernel::ChannelNormArgs a; channel_rows(x, ax, {}, &a)) {
      NDArray scratch(Shape{2 * a.outer * a.channels}, x.dtype);
      a.x = x.dptr, a.mean = mean.raw_data(), a.var = var.raw_data();
      a.scratch = scratch.raw_data();
      NDX_DISPATCH_FN(channel_moments)(a);
    } else {
      NDArray sq(x.shape, st, x.device);
      reduce_into(NDX_REDUCER(MeanReducer), x, mean, others);
      kernel::apply(NDX_KERNEL(SquaredDiff), {x, along_axis(to_blob(mean), x.shape, ax)},
                    to_blob(sq), kWriteTo, st);
      reduce_into(NDX_REDUCER(MeanReducer), to_blob(sq), var, others);
    }
    kernel::FunctorArgs momentum;
    momentum.a = p.momentum;
    // running = running * momentum + batch * (1 - momentum), in place in inputs 3 and 4.
    kernel::apply(NDX_KERNEL(Momentum), {in[3], to_blob(mean)}, in[3], kWriteTo, in[3].dtype,
                  momentum);
    kernel::apply(NDX_KERNEL(Momentum), {in[4], to_blob(var)}, in[4], kWriteTo, in[4].dtype,
                  momentum);
  } else {
    kernel::copy(in[3], to_blob(mean));
    kernel::copy(in[4], to_blob(var));
  }
  kernel::FunctorArgs eps;
  eps.a = p.eps;
  kernel::apply(NDX_KERNEL(InvSqrtPlusEps), {to_blob(var)}, to_blob(inv), kWriteTo, st, eps);
  const bool write = req[0] == kWriteTo || req[0] == kWriteInplace;
  if (kernel::ChannelNormArgs a; write && st == x.dtype && out[0].dtype == x.dtype &&
                                 channel_rows(x, ax, {&in[1], &in[2], &out[0]}, &a)) {
    a.x = x.dptr, a.mean = mean.raw_data(), a.inv_std = inv.raw_data();
    a.gamma = p.fix_gamma ? nullptr : in[1].dptr, a.beta = in[2].dptr, a.y = out[0].dptr;
    NDX_DISPATCH_FN(channel_normalize)(a);
  } else {
    One one;
    const TBlob gamma = p.fix_gamma ? one.blob(x.device) : along_axis(in[1], x.shape, ax);
    kernel::apply(NDX_KERNEL(NormalizeMul),
                  {x, along_axis(to_blob(mean), x.shape, ax), along_axis(to_blob(inv), x.shape, ax),
                   gamma, along_axis(in[2], x.shape, ax)},
                  out[0], req[0], st);
  }
  kernel::copy(to_blob(mean), out[1], req[1]);
  kernel::copy(to_blob(inv), out[2], req[2]);
}

}  // namespace

bool batch_norm_as_affine(const NodeAttrs& bn, bool is_train, const Shape& x_shape,
                          const std::vector<TBlob>& in, std::vector<float>* scale_shift) {
  const auto& p = bn.get<BatchNormParam>();
  if (in.size() != 5 || (is_train && !p.use_global_stats) || x_shape.ndim() < 2) return false;
  if (normalize_axis(p.axis, x_shape.ndim(), op_name(bn).c_str()) != 1) return false;
  const int64_t c = x_shape[1];
  for (size_t i = 1; i < 5; ++i)
    if (in[i].dtype != DType::kFloat32 || in[i].device.is_gpu() || !in[i].is_contiguous() ||
        in[i].size() != c)
      return false;
  const float *gamma = in[1].ptr<float>(), *beta = in[2].ptr<float>();
  const float *mean = in[3].ptr<float>(), *var = in[4].ptr<float>();
  scale_shift->resize(static_cast<size_t>(2 * c));
  float* scale = scale_shift->data();
  for (int64_t j = 0; j < c; ++j) {
    const double s = (p.fix_gamma ? 1.0 : double{gamma[j]}) / std::sqrt(double{var[j]} + p.eps);
    scale[j] = static_cast<float>(s);
    scale[c + j] = static_cast<float>(double{beta[j]} - double{mean[j]} * s);
  }
  return true;
}

namespace {

// batch_norm's outputs 1 to 4: grad gamma (0 with fix_gamma), grad beta, and zeros for the
// running statistics.
void write_param_grads(const BatchNormParam& p, const TBlob& dgamma, const TBlob& dbeta,
                       const std::vector<OpReqType>& req, const std::vector<TBlob>& out) {
  if (p.fix_gamma)
    kernel::fill_output(out[1], req[1], 0);
  else
    kernel::copy(dgamma, out[1], req[1]);
  kernel::copy(dbeta, out[2], req[2]);
  for (int k = 3; k < 5; ++k) kernel::fill_output(out[k], req[k], 0);
}

// (ograd, data, gamma, mean, inv_std) -> (grad data, grad gamma, grad beta, 0, 0). With batch
// statistics (training mode, as MXNet: backward runs in training mode like the forward it
// differentiates) the mean and variance depend on data; with global statistics they are
// constants.
void batch_norm_backward(const NodeAttrs& attrs, const OpContext& ctx, const std::vector<TBlob>& in,
                         const std::vector<OpReqType>& req, const std::vector<TBlob>& out) {
  const auto& p = attrs.get<BatchNormParam>();
  const TBlob &g = in[0], &x = in[1];
  const int ax = normalize_axis(p.axis, x.ndim(), op_name(attrs).c_str());
  const bool batch_stats = ctx.is_train && !p.use_global_stats;  // as the forward decided
  const DType st = stat_dtype(x.dtype);
  const std::vector<bool> others = axis_mask(x.ndim(), ax, false);
  const int64_t count = x.shape[ax] ? x.size() / x.shape[ax] : 0;
  const Shape c{x.shape[ax]};
  kernel::ChannelNormArgs a;
  if (channel_rows(x, ax, {&g, &in[2], &in[3], &in[4]}, &a) &&
      (req[0] == kNullOp || (writes(req[0]) && out[0].is_contiguous()))) {
    NDArray scratch(Shape{2 * a.outer * a.channels}, x.dtype), dgamma(c, x.dtype),
        dbeta(c, x.dtype);
    a.g = g.dptr, a.x = x.dptr, a.gamma = p.fix_gamma ? nullptr : in[2].dptr;
    a.mean = in[3].dptr, a.inv_std = in[4].dptr, a.batch_stats = batch_stats;
    a.dx = req[0] == kNullOp ? nullptr : out[0].dptr;
    a.dgamma = dgamma.raw_data(), a.dbeta = dbeta.raw_data(), a.scratch = scratch.raw_data();
    NDX_DISPATCH_FN(channel_norm_grad)(a);
    write_param_grads(p, to_blob(dgamma), to_blob(dbeta), req, out);
    return;
  }
  const TBlob mean = along_axis(in[3], x.shape, ax), inv = along_axis(in[4], x.shape, ax);
  NDArray xhat(x.shape, st, x.device), prod(x.shape, st, x.device), sum_g(c, st, x.device),
      sum_gx(c, st, x.device), scale(c, st, x.device);
  kernel::apply(NDX_KERNEL(XHatMul), {x, mean, inv}, to_blob(xhat), kWriteTo, st);
  kernel::apply(NDX_KERNEL(Product), {g, to_blob(xhat)}, to_blob(prod), kWriteTo, st);
  reduce_into(NDX_REDUCER(SumReducer), g, sum_g, others);
  reduce_into(NDX_REDUCER(SumReducer), to_blob(prod), sum_gx, others);
  One one;
  const TBlob gamma = p.fix_gamma ? one.blob(x.device) : in[2];
  kernel::apply(NDX_KERNEL(Product), {gamma, in[4]}, to_blob(scale), kWriteTo, st);
  const TBlob scale_v = along_axis(to_blob(scale), x.shape, ax);
  if (batch_stats) {
    kernel::FunctorArgs inv_n;
    inv_n.a = count ? 1.0 / static_cast<double>(count) : 0.0;
    kernel::apply(NDX_KERNEL(NormGrad),
                  {g, to_blob(xhat), along_axis(to_blob(sum_g), x.shape, ax),
                   along_axis(to_blob(sum_gx), x.shape, ax), scale_v},
                  out[0], req[0], st, inv_n);
  } else {
    kernel::apply(NDX_KERNEL(Product), {g, scale_v}, out[0], req[0], st);
  }
  write_param_grads(p, to_blob(sum_gx), to_blob(sum_g), req, out);
}

[[maybe_unused]] const bool registered = [] {
  register_act("_npx_relu", "Rectified linear unit: max(x, 0), elementwise.", Act::kRelu);
  register_act_backward("_backward_relu", "Backward of relu: (ograd, x) -> ograd * (x > 0).", "x",
                        NDX_KERNEL(ReluGrad), relu_backward_dx);
  register_act_backward("_backward_sigmoid",
                        "Backward of sigmoid: (ograd, y) -> ograd * y * (1 - y), y its output.",
                        "y", NDX_KERNEL(SigmoidGrad), sigmoid_backward_dy);
  register_act_backward("_backward_tanh",
                        "Backward of tanh: (ograd, y) -> ograd * (1 - y^2), y its output.", "y",
                        NDX_KERNEL(TanhGrad), tanh_backward_dy);
  register_act("_npx_sigmoid", "Logistic sigmoid: 1 / (1 + exp(-x)), elementwise.", Act::kSigmoid);
  register_act("_npx_log_sigmoid", "log(sigmoid(x)) without overflow, elementwise.",
               Act::kLogSigmoid);

  OpRegistry::global()
      .register_op("_npx_activation")
      .describe(
          "An activation function applied elementwise: relu, sigmoid, tanh, softrelu "
          "(log(1 + exp(x))), log_sigmoid, softsign (x / (1 + |x|)) or mish "
          "(x * tanh(softrelu(x))).")
      .set_num_inputs(1)
      .add_argument("data", "NDArray", "Input array.")
      .set_params<ActivationParam>()
      .set_attr<TStridedInputs>("TStridedInputs", true)
      .set_attr<FInferShape>("FInferShape", ElemwiseShape<1, 1>)
      .set_attr<FInferType>("FInferType",
                            [](const NodeAttrs& attrs, DTypeVector* in, DTypeVector* out) {
                              return act_type_infer(attrs, in, out,
                                                    act_of(attrs.get<ActivationParam>().act_type));
                            })
      .set_attr<FInplaceOption>("FInplaceOption", InplaceIdentity())
      .set_attr<bool>("TElementwise", true)
      .set_attr<FCompute>("FCompute<cpu>", activation_compute)
      .set_attr<FCompute>("FCompute<gpu>", activation_compute)
      .set_attr<FGradient>("FGradient", [](const NodePtr& n, const std::vector<NodeEntry>& og) {
        Act a = act_of(n->attrs.get<ActivationParam>().act_type);
        return std::vector<NodeEntry>{act_grad(a, og[0], n->inputs[0], NodeEntry{n, 0, 0})};
      });

  OpRegistry::global()
      .register_op("_npx_leaky_relu")
      .describe(
          "MXNet's LeakyReLU family, elementwise: leaky (x > 0 ? x : slope * x), prelu (as "
          "leaky with the slopes of gamma, one or one per channel along axis 1), elu (x > 0 ? "
          "x : slope * (exp(x) - 1)), selu, gelu_erf (x * Phi(x)) and gelu_tanh (its tanh "
          "approximation).")
      .set_num_inputs(leaky_num_inputs)
      .add_argument("data", "NDArray", "Input array.")
      .add_argument("gamma", "NDArray", "prelu's slopes, (1,) or (channels,); prelu only.")
      .set_params<LeakyReluParam>()
      .set_attr<FListInputNames>("FListInputNames",
                                 [](const NodeAttrs& attrs) {
                                   std::vector<std::string> v{"data"};
                                   if (leaky_num_inputs(attrs) == 2) v.push_back("gamma");
                                   return v;
                                 })
      .set_attr<TStridedInputs>("TStridedInputs", true)
      .set_attr<FInferShape>("FInferShape", leaky_shape)
      .set_attr<TFillsInputs>("TFillsInputs", true)
      .set_attr<FInferType>("FInferType",
                            [](const NodeAttrs& attrs, DTypeVector* in, DTypeVector* out) {
                              return same_float_type(attrs, in, out, {"data", "gamma"});
                            })
      .set_attr<FCompute>("FCompute<cpu>", leaky_relu_compute)
      .set_attr<FCompute>("FCompute<gpu>", leaky_relu_compute)
      .set_attr<FGradient>("FGradient", [](const NodePtr& n, const std::vector<NodeEntry>& og) {
        if (autograd::creating_graph() && leaky_of(n->attrs) != Leaky::kPrelu)
          return std::vector<NodeEntry>{op2("_np_multiply", og[0], leaky_derivative(n))};
        std::vector<NodeEntry> in{og[0], n->inputs[0]};
        if (n->inputs.size() > 1) in.push_back(n->inputs[1]);
        return make_grad_node("_backward_leaky_relu", n, in, true);
      });
  register_backward("_backward_leaky_relu",
                    "Backward of leaky_relu: (ograd, data[, gamma]) -> (grad data[, grad "
                    "gamma]).")
      .set_num_inputs(
          [](const NodeAttrs& attrs) -> uint32_t { return leaky_num_inputs(attrs) + 1; })
      .set_num_outputs(leaky_num_inputs)
      .set_params<LeakyReluParam>()
      .set_attr<TStridedInputs>("TStridedInputs", true)
      .set_attr<FInferShape>(
          "FInferShape",
          [](const NodeAttrs& attrs, ShapeVector* in, ShapeVector* out) {
            const bool prelu = in->size() > 2;
            ForwardLayout fwd{prelu ? std::vector<int>{1, 2} : std::vector<int>{1}, {{0, 0}}};
            if (!check_with_forward(attrs, in, leaky_shape, fwd, {"ograd", "data", "gamma"}))
              return false;
            assign_shape(attrs, &(*out)[0], (*in)[1], "output", 0);
            if (prelu) assign_shape(attrs, &(*out)[1], (*in)[2], "output", 1);
            return true;
          })
      .set_attr<FInferType>("FInferType",
                            [](const NodeAttrs& attrs, DTypeVector* in, DTypeVector* out) {
                              return same_float_type(attrs, in, out, {"ograd", "data", "gamma"});
                            })
      .set_attr<FCompute>("FCompute<cpu>", leaky_relu_backward)
      .set_attr<FCompute>("FCompute<gpu>", leaky_relu_backward);

  register_softmax("_npx_softmax",
                   "Softmax along an axis: exp(x - max) / sum(exp(x - max)), numerically stable.",
                   softmax_compute<false>, softmax_grad);
  register_softmax("_npx_log_softmax",
                   "Log of the softmax along an axis: x - max - log(sum(exp(x - max))).",
                   softmax_compute<true>, log_softmax_grad);
  for (bool log : {false, true})
    register_backward(log ? "_backward_log_softmax" : "_backward_softmax",
                      log ? "Backward of log_softmax: (ograd, output) -> ograd - exp(output) * "
                            "sum(ograd) along the axis."
                          : "Backward of softmax: (ograd, output) -> output * (ograd - "
                            "sum(ograd * output)) along the axis.")
        .set_num_inputs(2)
        .add_argument("ograd", "NDArray", "Gradient of the output.")
        .add_argument("output", "NDArray", "The forward's output.")
        .set_params<SoftmaxParam>()
        .set_attr<FInferShape>(
            "FInferShape",
            [](const NodeAttrs& attrs, ShapeVector* in, ShapeVector* out) {
              // output stands in for the forward's input (same shape)
              if (!check_with_forward(attrs, in, softmax_shape, ForwardLayout{{1}, {{0, 0}}},
                                      {"ograd", "output"}))
                return false;
              return output_shape_of_input(1)(attrs, in, out);
            })
        .set_attr<FInferType>("FInferType",
                              [](const NodeAttrs& attrs, DTypeVector* in, DTypeVector* out) {
                                return same_float_type(attrs, in, out, {"ograd", "output"});
                              })
        .set_attr<FCompute>("FCompute<cpu>", log ? softmax_backward<true> : softmax_backward<false>)
        .set_attr<FCompute>("FCompute<gpu>", log ? softmax_backward<true> : softmax_backward<false>)
        .set_attr<FGradient>("FGradient", log ? log_softmax_backward_grad : softmax_backward_grad);

  OpRegistry::global()
      .register_op("_npx_fully_connected")
      .describe(
          "A fully connected layer: data @ weight.T + bias, with data flattened to "
          "(N, K) (flatten=True) or applied on its last axis.")
      .set_num_inputs(fc_num_inputs)
      .add_argument("data", "NDArray", "Input data, (N, ...) or (..., K).")
      .add_argument("weight", "NDArray", "Weight, (num_hidden, K).")
      .add_argument("bias", "NDArray", "Bias, (num_hidden,); left out when no_bias.")
      .set_params<FullyConnectedParam>()
      .set_attr<FListInputNames>("FListInputNames",
                                 [](const NodeAttrs& attrs) {
                                   std::vector<std::string> v{"data", "weight"};
                                   if (!attrs.get<FullyConnectedParam>().no_bias)
                                     v.push_back("bias");
                                   return v;
                                 })
      .set_attr<FInferShape>("FInferShape", fc_shape)
      .set_attr<TFillsInputs>("TFillsInputs", true)
      .set_attr<FInferType>("FInferType",
                            [](const NodeAttrs& attrs, DTypeVector* in, DTypeVector* out) {
                              return same_float_type(attrs, in, out, {"data", "weight", "bias"});
                            })
      .set_attr<FCompute>("FCompute<cpu>", fc_compute)
      .set_attr<FCompute>("FCompute<gpu>", fc_compute)
      .set_attr<FGradient>("FGradient", [](const NodePtr& n, const std::vector<NodeEntry>& og) {
        return make_grad_node("_backward_fully_connected", n, {og[0], n->inputs[0], n->inputs[1]},
                              true);
      });
  register_backward("_backward_fully_connected",
                    "Backward of fully_connected: (ograd, data, weight) -> (grad data, grad "
                    "weight[, grad bias]).")
      .set_attr<FGradient>("FGradient", fc_backward_gradient)
      .set_num_inputs(3)
      .set_num_outputs([](const NodeAttrs& attrs) -> uint32_t {
        return attrs.get<FullyConnectedParam>().no_bias ? 2 : 3;
      })
      .set_params<FullyConnectedParam>()
      .set_attr<FInferShape>(
          "FInferShape",
          [](const NodeAttrs& attrs, ShapeVector* in, ShapeVector* out) {
            const bool bias = !attrs.get<FullyConnectedParam>().no_bias;
            ForwardLayout fwd{bias ? std::vector<int>{1, 2, -1} : std::vector<int>{1, 2}, {{0, 0}}};
            if (!check_with_forward(attrs, in, fc_shape, fwd, {"ograd", "data", "weight"}))
              return false;
            assign_shape(attrs, &(*out)[0], (*in)[1], "output", 0);
            assign_shape(attrs, &(*out)[1], (*in)[2], "output", 1);
            if (out->size() > 2) assign_shape(attrs, &(*out)[2], Shape{(*in)[2][0]}, "output", 2);
            return true;
          })
      .set_attr<FInferType>("FInferType",
                            [](const NodeAttrs& attrs, DTypeVector* in, DTypeVector* out) {
                              return same_float_type(attrs, in, out, {"ograd", "data", "weight"});
                            })
      .set_attr<FCompute>("FCompute<cpu>", fc_backward)
      .set_attr<FCompute>("FCompute<gpu>", fc_backward);

  OpRegistry::global()
      .register_op("_npx_pick")
      .describe(
          "Picks one element per position along an axis: out[..., i, ...] = "
          "data[..., index[..., i, ...], ...]; out-of-range indices clip or wrap.")
      .set_num_inputs(2)
      .add_argument("data", "NDArray", "The array to pick from.")
      .add_argument("index", "NDArray", "Indices (any numeric dtype) of data's shape without axis.")
      .set_params<PickParam>()
      .set_attr<FInferShape>("FInferShape", pick_shape)
      .set_attr<FInferType>("FInferType", pick_type)
      .set_attr<FCompute>("FCompute<cpu>", pick_compute)
      .set_attr<FCompute>("FCompute<gpu>", pick_compute)
      .set_attr<FGradient>("FGradient", [](const NodePtr& n, const std::vector<NodeEntry>& og) {
        auto g = make_grad_node("_backward_pick", n, {og[0], n->inputs[0], n->inputs[1]}, true);
        return std::vector<NodeEntry>{g[0], zeros_like(n->inputs[1])};
      });
  register_backward("_backward_pick",
                    "Backward of pick: (ograd, data, index) -> ograd scattered into zeros of "
                    "data's shape.")
      .set_num_inputs(3)
      .set_params<PickParam>()
      .set_attr<FInferShape>("FInferShape",
                             [](const NodeAttrs& attrs, ShapeVector* in, ShapeVector* out) {
                               if (!check_with_forward(attrs, in, pick_shape, {{1, 2}, {{0, 0}}},
                                                       {"ograd", "data", "index"}))
                                 return false;
                               return output_shape_of_input(1)(attrs, in, out);
                             })
      .set_attr<FInferType>("FInferType", ograd_float_type)
      .set_attr<FCompute>("FCompute<cpu>", pick_backward)
      .set_attr<FCompute>("FCompute<gpu>", pick_backward)
      // Linear in ograd: its gradient is pick again, so pick differentiates twice.
      .set_attr<FGradient>("FGradient", [](const NodePtr& n, const std::vector<NodeEntry>& og) {
        return std::vector<NodeEntry>{
            make_node("_npx_pick", {og[0], n->inputs[2]}, params_dict(n->attrs)),
            zeros_like(n->inputs[1]), zeros_like(n->inputs[2])};
      });

  OpRegistry::global()
      .register_op("MakeLoss")
      .describe(
          "MXNet's MakeLoss: the data as a loss head; its gradient is grad_scale (normalized "
          "by 'batch' or 'valid') whatever the head gradient.")
      .set_num_inputs(1)
      .add_argument("data", "NDArray", "The loss.")
      .set_params<MakeLossParam>()
      .set_attr<FInferShape>("FInferShape", ElemwiseShape<1, 1>)
      .set_attr<FInferType>("FInferType",
                            [](const NodeAttrs& attrs, DTypeVector* in, DTypeVector* out) {
                              return same_float_type(attrs, in, out, {"data"});
                            })
      .set_attr<FCompute>("FCompute<cpu>", make_loss_compute)
      .set_attr<FGradient>("FGradient", [](const NodePtr& n, const std::vector<NodeEntry>& og) {
        return make_grad_node("_backward_MakeLoss", n, {og[0], n->inputs[0]}, true);
      });
  register_backward("_backward_MakeLoss", "Backward of MakeLoss: (ograd, data) -> grad data.")
      .set_num_inputs(2)
      .set_params<MakeLossParam>()
      .set_attr<FInferShape>("FInferShape", output_shape_of_input(1))
      .set_attr<FInferType>("FInferType", ograd_float_type)
      .set_attr<FCompute>("FCompute<cpu>", make_loss_backward)
      .set_attr<FGradient>("FGradient", [](const NodePtr& n, const std::vector<NodeEntry>&) {
        // a constant of the ograd and the data: no gradient to either
        return std::vector<NodeEntry>{zeros_like(n->inputs[0]), zeros_like(n->inputs[1])};
      });
  register_regression_output(
      "LinearRegressionOutput",
      "MXNet's squared-loss head: the data; its gradient is grad_scale / num_output * (data - "
      "label) whatever the head gradient.",
      regression_compute<Regression::kLinear>, regression_backward<Regression::kLinear>);
  register_regression_output(
      "LogisticRegressionOutput",
      "MXNet's logistic loss head: sigmoid(data); its gradient is grad_scale / num_output * "
      "(sigmoid(data) - label) whatever the head gradient.",
      regression_compute<Regression::kLogistic>, regression_backward<Regression::kLogistic>);
  register_regression_output(
      "MAERegressionOutput",
      "MXNet's absolute-loss head: the data; its gradient is grad_scale / num_output * "
      "sign(data - label) whatever the head gradient.",
      regression_compute<Regression::kMAE>, regression_backward<Regression::kMAE>);
  OpRegistry::global()
      .register_op("SoftmaxOutput")
      .describe(
          "MXNet's softmax loss head: the softmax of each example of data (along axis 1 with "
          "multi_output, the last axis with preserve_shape); its gradient is (softmax - "
          "one_hot(label)) * grad_scale whatever the head gradient (times it with out_grad), "
          "the cross-entropy loss's; a label of data's shape holds probabilities.")
      .set_num_inputs(2)
      .add_argument("data", "NDArray", "Scores, (N, C), (..., C) or (N, C, ...) with multi_output.")
      .add_argument("label", "NDArray",
                    "Class indices (data's shape without its class axis) or probabilities "
                    "(data's shape).")
      .set_params<SoftmaxOutputParam>()
      .set_attr<FInferShape>("FInferShape", softmax_output_shape)
      .set_attr<TFillsInputs>("TFillsInputs", true)
      .set_attr<FInferType>("FInferType", softmax_output_type)
      .set_attr<FCompute>("FCompute<cpu>", softmax_output_compute)
      .set_attr<FGradient>("FGradient", [](const NodePtr& n, const std::vector<NodeEntry>& og) {
        return make_grad_node("_backward_SoftmaxOutput", n,
                              {og[0], NodeEntry{n, 0, 0}, n->inputs[1]}, true);
      });
  register_backward("_backward_SoftmaxOutput",
                    "Backward of SoftmaxOutput: (ograd, output, label) -> (grad data, zeros "
                    "for label).")
      .set_num_inputs(3)
      .set_num_outputs(2)
      .set_params<SoftmaxOutputParam>()
      .set_attr<FInferShape>("FInferShape", loss_backward_shape(softmax_output_shape))
      .set_attr<FInferType>("FInferType",
                            [](const NodeAttrs& attrs, DTypeVector* in, DTypeVector* out) {
                              if ((*in)[1] == DType::kUnknown || (*in)[2] == DType::kUnknown)
                                return false;
                              require_float(attrs, (*in)[1], "output");
                              require_same_type(attrs, (*in)[0], (*in)[1], "ograd", "output");
                              (*out)[0] = (*in)[1];
                              (*out)[1] = (*in)[2];
                              return true;
                            })
      .set_attr<FCompute>("FCompute<cpu>", softmax_output_backward)
      .set_attr<FGradient>(
          "FGradient", nn_check::no_gradient_yet("_backward_SoftmaxOutput",
                                                 "SoftmaxOutput's gradient is a loss gradient; "
                                                 "differentiate a loss built of softmax instead"));

  OpRegistry::global()
      .register_op("_npx_one_hot")
      .describe(
          "One-hot encoding: out[..., d] = on_value where indices[...] == d, else "
          "off_value; indices outside [0, depth) give rows of off_value.")
      .set_num_inputs(1)
      .add_argument("indices", "NDArray", "Indices (any numeric dtype; floats truncate).")
      .set_params<OneHotParam>()
      .set_attr<FInferShape>("FInferShape",
                             [](const NodeAttrs& attrs, ShapeVector* in, ShapeVector* out) {
                               if (!(*in)[0].is_known()) return false;
                               std::vector<int64_t> dims((*in)[0].begin(), (*in)[0].end());
                               dims.push_back(attrs.get<OneHotParam>().depth);
                               assign_shape(attrs, &(*out)[0], Shape(dims.begin(), dims.end()),
                                            "output", 0);
                               return true;
                             })
      .set_attr<FInferType>("FInferType",
                            [](const NodeAttrs& attrs, DTypeVector* in, DTypeVector* out) {
                              if ((*in)[0] == DType::kUnknown) return false;
                              require_no_bool(attrs, (*in)[0], "indices");
                              (*out)[0] = attrs.get<OneHotParam>().dtype;
                              return true;
                            })
      .set_attr<FCompute>("FCompute<cpu>", one_hot_compute)
      .set_attr<FCompute>("FCompute<gpu>", one_hot_compute)
      .set_attr<FGradient>("FGradient", MakeZeroGradNodes);

  OpRegistry::global()
      .register_op("_npx_embedding")
      .describe(
          "Embedding lookup: out[..., :] = weight[data[...], :]; indices outside "
          "[0, input_dim) raise IndexError.")
      .set_num_inputs(2)
      .add_argument("data", "NDArray", "Indices (any numeric dtype; floats truncate).")
      .add_argument("weight", "NDArray", "The embedding matrix, (input_dim, output_dim).")
      .set_params<EmbeddingParam>()
      .set_attr<FInferShape>("FInferShape", embedding_shape)
      .set_attr<TFillsInputs>("TFillsInputs", true)
      .set_attr<FInferType>("FInferType",
                            [](const NodeAttrs& attrs, DTypeVector* in, DTypeVector* out) {
                              // A weight of unknown dtype is float32, MXNet's default.
                              if ((*in)[1] == DType::kUnknown) (*in)[1] = DType::kFloat32;
                              if ((*in)[0] == DType::kUnknown) return false;
                              require_no_bool(attrs, (*in)[0], "data");
                              require_no_bool(attrs, (*in)[1], "weight");
                              (*out)[0] = (*in)[1];
                              return true;
                            })
      .set_attr<FCompute>("FCompute<cpu>", embedding_compute)
      .set_attr<FCompute>("FCompute<gpu>", embedding_compute)
      .set_attr<FGradient>("FGradient", [](const NodePtr& n, const std::vector<NodeEntry>& og) {
        auto g =
            make_grad_node("_backward_embedding", n, {og[0], n->inputs[0], n->inputs[1]}, true);
        return std::vector<NodeEntry>{zeros_like(n->inputs[0]), g[0]};
      });
  register_backward("_backward_embedding",
                    "Backward of embedding: (ograd, data, weight) -> grad weight, the rows of "
                    "ograd added up per index.")
      .set_num_inputs(3)
      .set_params<EmbeddingParam>()
      .set_attr<FInferShape>(
          "FInferShape",
          [](const NodeAttrs& attrs, ShapeVector* in, ShapeVector* out) {
            if (!check_with_forward(attrs, in, embedding_shape, {{1, 2}, {{0, 0}}},
                                    {"ograd", "data", "weight"}))
              return false;
            return output_shape_of_input(2)(attrs, in, out);
          })
      .set_attr<FInferType>("FInferType", ograd_float_type)
      .set_attr<FCompute>("FCompute<cpu>", embedding_backward)
      .set_attr<FCompute>("FCompute<gpu>", embedding_backward)
      // Linear in ograd: its gradient is the embedding lookup again.
      .set_attr<FGradient>("FGradient", [](const NodePtr& n, const std::vector<NodeEntry>& og) {
        return std::vector<NodeEntry>{
            make_node("_npx_embedding", {n->inputs[1], og[0]}, params_dict(n->attrs)),
            zeros_like(n->inputs[1]), zeros_like(n->inputs[2])};
      });

  OpRegistry::global()
      .register_op("_npx_dropout")
      .describe(
          "Dropout: in training mode each element is zeroed with probability p and the "
          "rest scaled by 1 / (1 - p); the identity in predict mode.")
      .set_num_inputs(1)
      .set_num_outputs(2)
      .add_argument("data", "NDArray", "Input array.")
      .set_params<DropoutParam>()
      .set_attr<FNumVisibleOutputs>("FNumVisibleOutputs", [](const NodeAttrs&) { return 1u; })
      .set_attr<FListOutputNames>("FListOutputNames",
                                  [](const NodeAttrs&) {
                                    return std::vector<std::string>{"output", "mask"};
                                  })
      .set_attr<FResourceRequest>(
          "FResourceRequest",
          [](const NodeAttrs&) {
            return std::vector<ResourceRequest>{ResourceRequest{ResourceRequest::kRandom}};
          })
      .set_attr<FInferShape>("FInferShape", dropout_shape)
      .set_attr<FInferType>("FInferType",
                            [](const NodeAttrs& attrs, DTypeVector* in, DTypeVector* out) {
                              return same_float_type(attrs, in, out, {"data"});
                            })
      .set_attr<FInplaceOption>("FInplaceOption", InplaceIdentity())
      .set_attr<FCompute>("FCompute<cpu>", dropout_compute)
      .set_attr<FCompute>("FCompute<gpu>", dropout_compute)  // the mask: kernel/cuda/random.cu
      .set_attr<FGradient>("FGradient", [](const NodePtr& n, const std::vector<NodeEntry>& og) {
        // The hidden output 1 is the scaled mask (0 or 1 / (1 - p)).
        return std::vector<NodeEntry>{op2("_np_multiply", og[0], NodeEntry{n, 1, 0})};
      });

  OpRegistry::global()
      .register_op("_npx_layer_norm")
      .describe(
          "Layer normalization over one axis: (x - mean) / sqrt(var + eps) * gamma + "
          "beta; hidden outputs mean and std (axis kept with length 1).")
      .set_num_inputs(3)
      .set_num_outputs(3)
      .add_argument("data", "NDArray", "Input array.")
      .add_argument("gamma", "NDArray", "Scale, of the length of data's axis.")
      .add_argument("beta", "NDArray", "Offset, of the length of data's axis.")
      .set_params<LayerNormParam>()
      .set_attr<FNumVisibleOutputs>("FNumVisibleOutputs",
                                    [](const NodeAttrs& attrs) -> uint32_t {
                                      return attrs.get<LayerNormParam>().output_mean_var ? 3 : 1;
                                    })
      .set_attr<FListOutputNames>("FListOutputNames",
                                  [](const NodeAttrs&) {
                                    return std::vector<std::string>{"output", "mean", "std"};
                                  })
      .set_attr<FInferShape>("FInferShape", layer_norm_shape)
      .set_attr<TFillsInputs>("TFillsInputs", true)
      .set_attr<FInferType>("FInferType",
                            [](const NodeAttrs& attrs, DTypeVector* in, DTypeVector* out) {
                              return same_float_type(attrs, in, out, {"data", "gamma", "beta"});
                            })
      .set_attr<FCompute>("FCompute<cpu>", layer_norm_compute)
      .set_attr<FCompute>("FCompute<gpu>", layer_norm_compute)
      .set_attr<FGradient>("FGradient", [](const NodePtr& n, const std::vector<NodeEntry>& og) {
        if (autograd::creating_graph())
          if (auto composite = layer_norm_composite_gradient(n, og[0]); !composite.empty())
            return composite;
        return make_grad_node(
            "_backward_layer_norm", n,
            {og[0], n->inputs[0], n->inputs[1], NodeEntry{n, 1, 0}, NodeEntry{n, 2, 0}}, true);
      });
  register_backward("_backward_layer_norm",
                    "Backward of layer_norm: (ograd, data, gamma, mean, std) -> (grad data, grad "
                    "gamma, grad beta).")
      .set_num_inputs(5)
      .set_num_outputs(3)
      .set_params<LayerNormParam>()
      .set_attr<FInferShape>("FInferShape",
                             [](const NodeAttrs& attrs, ShapeVector* in, ShapeVector* out) {
                               if (!check_with_forward(attrs, in, layer_norm_shape,
                                                       {{1, 2, -1}, {{0, 0}, {1, 3}, {2, 4}}, 3},
                                                       {"ograd", "data", "gamma", "mean", "std"}))
                                 return false;
                               assign_shape(attrs, &(*out)[0], (*in)[1], "output", 0);
                               assign_shape(attrs, &(*out)[1], (*in)[2], "output", 1);
                               assign_shape(attrs, &(*out)[2], (*in)[2], "output", 2);
                               return true;
                             })
      .set_attr<FInferType>(
          "FInferType",
          [](const NodeAttrs& attrs, DTypeVector* in, DTypeVector* out) {
            return same_float_type(attrs, in, out, {"ograd", "data", "gamma", "mean", "std"});
          })
      .set_attr<FCompute>("FCompute<cpu>", layer_norm_backward)
      .set_attr<FCompute>("FCompute<gpu>", layer_norm_backward);

  OpRegistry::global()
      .register_op("_npx_batch_norm")
      .describe(
          "Batch normalization over every axis but `axis`. Training mode (without "
          "use_global_stats) normalizes with the batch statistics and updates "
          "running_mean and running_var IN PLACE (running = running * momentum + batch * "
          "(1 - momentum), biased batch variance); predict mode uses the running "
          "statistics.")
      .set_num_inputs(5)
      .set_num_outputs(3)
      .add_argument("data", "NDArray", "Input array.")
      .add_argument("gamma", "NDArray", "Scale, of the length of data's axis.")
      .add_argument("beta", "NDArray", "Offset, of the length of data's axis.")
      .add_argument("running_mean", "NDArray", "Running mean; updated in place in training.")
      .add_argument("running_var", "NDArray", "Running variance; updated in place in training.")
      .set_params<BatchNormParam>()
      .set_attr<FNumVisibleOutputs>("FNumVisibleOutputs",
                                    [](const NodeAttrs& attrs) {
                                      return attrs.get<BatchNormParam>().output_mean_var ? 3u : 1u;
                                    })
      .set_attr<FListOutputNames>("FListOutputNames",
                                  [](const NodeAttrs&) {
                                    return std::vector<std::string>{"output", "mean", "inv_std"};
                                  })
      .set_attr<FInferShape>("FInferShape", batch_norm_shape)
      .set_attr<TFillsInputs>("TFillsInputs", true)
      .set_attr<FInferType>("FInferType", batch_norm_type)
      .set_attr<bool>("TUpdatesInputs", true)  // the running statistics, in training
      // A call recorded in predict mode used the running statistics: its backward treats them
      // as constants, whatever mode backward runs in (FRecordMode, op/graph_infer.h).
      .set_attr<std::function<void(NodeAttrs*, bool)>>("FRecordMode",
                                                       [](NodeAttrs* a, bool is_train) {
                                                         if (is_train) return;
                                                         BatchNormParam p =
                                                             a->get<BatchNormParam>();
                                                         p.use_global_stats = true;
                                                         a->parsed = p;
                                                       })
      .set_attr<FCompute>("FCompute<cpu>", batch_norm_compute)
      .set_attr<FCompute>("FCompute<gpu>", batch_norm_compute)
      .set_attr<FGradient>("FGradient", [](const NodePtr& n, const std::vector<NodeEntry>& og) {
        auto g = make_grad_node(
            "_backward_batch_norm", n,
            {og[0], n->inputs[0], n->inputs[1], NodeEntry{n, 1, 0}, NodeEntry{n, 2, 0}}, true);
        return std::vector<NodeEntry>{g[0], g[1], g[2], zeros_like(n->inputs[3]),
                                      zeros_like(n->inputs[4])};
      });
  register_backward("_backward_batch_norm",
                    "Backward of batch_norm: (ograd, data, gamma, mean, inv_std) -> (grad data, "
                    "grad gamma, grad beta, 0, 0).")
      .set_num_inputs(5)
      .set_num_outputs(5)
      .set_params<BatchNormParam>()
      .set_attr<FInferShape>(
          "FInferShape",
          [](const NodeAttrs& attrs, ShapeVector* in, ShapeVector* out) {
            if (!check_with_forward(attrs, in, batch_norm_shape,
                                    {{1, 2, -1, -1, -1}, {{0, 0}, {1, 3}, {2, 4}}, 3},
                                    {"ograd", "data", "gamma", "mean", "inv_std"}))
              return false;
            assign_shape(attrs, &(*out)[0], (*in)[1], "output", 0);
            for (int i = 1; i < 5; ++i) assign_shape(attrs, &(*out)[i], (*in)[2], "output", i);
            return true;
          })
      .set_attr<FInferType>("FInferType", batch_norm_backward_type)
      .set_attr<FCompute>("FCompute<cpu>", batch_norm_backward)
      .set_attr<FCompute>("FCompute<gpu>", batch_norm_backward);
  return true;
}();

}  // namespace
}  // namespace ndx
#endif  // HWY_ONCE
