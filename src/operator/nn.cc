// Neural-network ops of the numpy extension (ndx.npx, registered as _npx_*): activations,
// softmax / log_softmax, fully_connected, pick, one_hot, embedding, dropout, layer_norm and
// batch_norm, with their backward ops.
//
// Gradients of the elementwise activations and of softmax / log_softmax are composed of
// registered forward ops (differentiable again). fully_connected, layer_norm and batch_norm
// have first-order backward ops; pick and embedding have scatter backward ops whose own
// FGradient is the forward gather, so they differentiate twice as well.
//
// Kernels take contiguous inputs (the ops do not declare TStridedInputs); the 16-bit floats
// compute in float, reductions accumulate in double.
#include <cblas.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "ndx/graph.h"
#include "operator/gemm.h"
#include "operator/kernel_util.h"
#include "operator/nn_check.h"

namespace ndx {
namespace {

using kernel::gemm;
using kernel::gemm_dtype;
using kernel::with_gemm_type;

using kernel::as_array;
using kernel::store;
using kernel::write_req;
using nn_check::expect_shape;
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

std::map<std::string, std::string> params_dict(const NodeAttrs& attrs) {
  return attrs.op->params->to_dict(attrs.parsed);
}

NodeEntry op1(const char* op, NodeEntry a) { return make_node(op, {std::move(a)}); }
NodeEntry op2(const char* op, NodeEntry a, NodeEntry b) {
  return make_node(op, {std::move(a), std::move(b)});
}
NodeEntry zeros_like(NodeEntry a) { return op1("_np_zeros_like", std::move(a)); }

// ============================== activations ==============================
enum class Act { kRelu, kSigmoid, kTanh, kSoftrelu, kLogSigmoid };

template <Act A, typename C>
inline C activate(C x) {
  if constexpr (A == Act::kRelu) {
    if constexpr (std::is_floating_point_v<C>) {
      if (std::isnan(x)) return x;
    }
    return x > C(0) ? x : C(0);
  } else if constexpr (A == Act::kSigmoid) {
    if (x >= C(0)) return C(1) / (C(1) + std::exp(-x));
    C e = std::exp(x);
    return e / (C(1) + e);
  } else if constexpr (A == Act::kTanh) {
    return std::tanh(x);
  } else if constexpr (A == Act::kSoftrelu) {  // log(1 + exp(x)), stable
    return std::max(x, C(0)) + std::log1p(std::exp(-std::fabs(x)));
  } else {  // log(sigmoid(x)) = -softrelu(-x)
    return std::min(x, C(0)) - std::log1p(std::exp(-std::fabs(x)));
  }
}

template <Act A>
void act_kernel(const TBlob& x, OpReqType req, const TBlob& out) {
  if (req == kNullOp) return;
  const int64_t n = x.size();
  NDX_DTYPE_SWITCH(x.dtype, T, {
    using C = compute_t<T>;
    if constexpr (std::is_same_v<T, bool> || (A != Act::kRelu && !std::is_floating_point_v<C>)) {
      unsupported_dtype("activation", x.dtype);
    } else {
      const T* xp = x.ptr<T>();
      T* op = out.ptr<T>();
      for (int64_t i = 0; i < n; ++i) store(op + i, req, activate<A, C>(static_cast<C>(xp[i])));
    }
  });
}

struct ActivationParam {
  std::string act_type;
  static void declare(ParamDecl<ActivationParam>& d) {
    d.field("act_type", &ActivationParam::act_type)
        .set_enum({"relu", "sigmoid", "tanh", "softrelu", "log_sigmoid"})
        .describe("The activation function.");
  }
};

Act act_of(const std::string& s) {
  if (s == "relu") return Act::kRelu;
  if (s == "sigmoid") return Act::kSigmoid;
  if (s == "tanh") return Act::kTanh;
  if (s == "softrelu") return Act::kSoftrelu;
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

// The gradient of activation `a` given ograd g, input x and output y (composed).
NodeEntry act_grad(Act a, NodeEntry g, NodeEntry x, NodeEntry y) {
  switch (a) {
    case Act::kRelu:  // g * (x > 0); bool promotes to g's dtype
      return op2("_np_multiply", g, op2("_np_greater", x, zeros_like(x)));
    case Act::kSigmoid:  // g * y * (1 - y)
      return op2("_np_multiply", g,
                 op2("_np_multiply", y, op2("_np_subtract", op1("_np_ones_like", y), y)));
    case Act::kTanh:  // g * (1 - y^2)
      return op2("_np_multiply", g,
                 op2("_np_subtract", op1("_np_ones_like", y), op1("_np_square", y)));
    case Act::kSoftrelu:  // g * sigmoid(x)
      return op2("_np_multiply", g, op1("_npx_sigmoid", x));
    case Act::kLogSigmoid:  // g * sigmoid(-x)
      return op2("_np_multiply", g, op1("_npx_sigmoid", op1("_np_negative", x)));
  }
  return g;
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
      .set_attr<FCompute>("FCompute<cpu>",
                          [a](const NodeAttrs&, const OpContext&, const std::vector<TBlob>& in,
                              const std::vector<OpReqType>& req, const std::vector<TBlob>& out) {
                            if (a == Act::kRelu) act_kernel<Act::kRelu>(in[0], req[0], out[0]);
                            if (a == Act::kSigmoid)
                              act_kernel<Act::kSigmoid>(in[0], req[0], out[0]);
                          })
      .set_attr<FGradient>("FGradient", [a](const NodePtr& n, const std::vector<NodeEntry>& og) {
        return std::vector<NodeEntry>{act_grad(a, og[0], n->inputs[0], NodeEntry{n, 0, 0})};
      });
}

void activation_compute(const NodeAttrs& attrs, const OpContext&, const std::vector<TBlob>& in,
                        const std::vector<OpReqType>& req, const std::vector<TBlob>& out) {
  switch (act_of(attrs.get<ActivationParam>().act_type)) {
    case Act::kRelu:
      return act_kernel<Act::kRelu>(in[0], req[0], out[0]);
    case Act::kSigmoid:
      return act_kernel<Act::kSigmoid>(in[0], req[0], out[0]);
    case Act::kTanh:
      return act_kernel<Act::kTanh>(in[0], req[0], out[0]);
    case Act::kSoftrelu:
      return act_kernel<Act::kSoftrelu>(in[0], req[0], out[0]);
    case Act::kLogSigmoid:
      return act_kernel<Act::kLogSigmoid>(in[0], req[0], out[0]);
  }
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

template <bool kLog>
void softmax_compute(const NodeAttrs& attrs, const OpContext&, const std::vector<TBlob>& in,
                     const std::vector<OpReqType>& req, const std::vector<TBlob>& out) {
  if (req[0] == kNullOp) return;
  const TBlob& x = in[0];
  const int ax = normalize_axis(attrs.get<SoftmaxParam>().axis, x.ndim(), op_name(attrs).c_str());
  const AxisSplit s = split_at(x.shape, ax);
  std::vector<double> e(static_cast<size_t>(s.n));
  NDX_FLOAT_SWITCH(x.dtype, T, {
    using C = compute_t<T>;
    const T* xp = x.ptr<T>();
    T* yp = out[0].ptr<T>();
    for (int64_t o = 0; o < s.outer; ++o)
      for (int64_t i = 0; i < s.inner; ++i) {
        const int64_t base = o * s.n * s.inner + i;
        double mx = -std::numeric_limits<double>::infinity();
        for (int64_t k = 0; k < s.n; ++k) {
          double v = static_cast<double>(xp[base + k * s.inner]);
          if (v > mx || std::isnan(v)) mx = v;
        }
        if (std::isinf(mx)) mx = 0;  // all -inf (or +inf present): let the math give nan/0
        // exp in the compute type (float for the 32- and 16-bit floats: several times faster
        // than double), the sum in double.
        double sum = 0;
        const C cmx = static_cast<C>(mx);
        for (int64_t k = 0; k < s.n; ++k) {
          e[k] = static_cast<double>(std::exp(static_cast<C>(xp[base + k * s.inner]) - cmx));
          sum += e[k];
        }
        const double log_sum = std::log(sum);
        for (int64_t k = 0; k < s.n; ++k) {
          const int64_t j = base + k * s.inner;
          double v = kLog ? static_cast<double>(xp[j]) - mx - log_sum : e[k] / sum;
          store(yp + j, req[0], static_cast<C>(v));
        }
      }
  });
}

std::map<std::string, std::string> sum_axis_dict(const NodePtr& n) {
  std::string axis = "(";
  axis += std::to_string(n->attrs.get<SoftmaxParam>().axis);
  axis += ",)";
  return {{"axis", axis}, {"keepdims", "True"}};
}

std::vector<NodeEntry> softmax_grad(const NodePtr& n, const std::vector<NodeEntry>& og) {
  // y * (g - sum(g * y, axis, keepdims))
  NodeEntry y{n, 0, 0};
  NodeEntry s = make_node("_np_sum", {op2("_np_multiply", og[0], y)}, sum_axis_dict(n));
  return {op2("_np_multiply", y, op2("_np_subtract", og[0], s))};
}

std::vector<NodeEntry> log_softmax_grad(const NodePtr& n, const std::vector<NodeEntry>& og) {
  // g - exp(y) * sum(g, axis, keepdims)
  NodeEntry y{n, 0, 0};
  NodeEntry s = make_node("_np_sum", {og[0]}, sum_axis_dict(n));
  return {op2("_np_subtract", og[0], op2("_np_multiply", op1("_np_exp", y), s))};
}

Op& register_softmax(const char* name, const char* doc, FCompute compute, FGradient grad) {
  return OpRegistry::global()
      .register_op(name)
      .describe(doc)
      .set_num_inputs(1)
      .add_argument("data", "NDArray", "Input array.")
      .set_params<SoftmaxParam>()
      .set_attr<FInferShape>("FInferShape", softmax_shape)
      .set_attr<FInferType>("FInferType",
                            [](const NodeAttrs& attrs, DTypeVector* in, DTypeVector* out) {
                              return same_float_type(attrs, in, out, {"data"});
                            })
      .set_attr<FInplaceOption>("FInplaceOption", InplaceIdentity())
      .set_attr<FCompute>("FCompute<cpu>", compute)
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

void fc_compute(const NodeAttrs& attrs, const OpContext&, const std::vector<TBlob>& in,
                const std::vector<OpReqType>& req, const std::vector<TBlob>& out) {
  if (req[0] == kNullOp) return;
  const auto& p = attrs.get<FullyConnectedParam>();
  const auto [m, k] = fc_dims(attrs, in[0].shape);
  const int64_t h = p.num_hidden;
  const DType ct = gemm_dtype(in[0].dtype);
  std::vector<NDArray> keep;
  TBlob x = kernel::cast_blob(in[0], ct, &keep), w = kernel::cast_blob(in[1], ct, &keep);
  NDArray c(Shape{m, h}, ct);
  with_gemm_type(ct, [&](auto tag) {
    using T = decltype(tag);
    T* cp = c.data<T>();
    gemm<T>(false, true, m, h, k, x.ptr<T>(), w.ptr<T>(), T(0), cp);
    if (!p.no_bias) {
      TBlob b = kernel::cast_blob(in[2], ct, &keep);
      const T* bp = b.ptr<T>();
      for (int64_t i = 0; i < m; ++i)
        for (int64_t j = 0; j < h; ++j) cp[i * h + j] += bp[j];
    }
  });
  write_req(c.reshape(out[0].shape), as_array(out[0]), req[0]);
}

// (ograd, data, weight) -> (grad data, grad weight[, grad bias])
void fc_backward(const NodeAttrs& attrs, const OpContext&, const std::vector<TBlob>& in,
                 const std::vector<OpReqType>& req, const std::vector<TBlob>& out) {
  const auto& p = attrs.get<FullyConnectedParam>();
  const auto [m, k] = fc_dims(attrs, in[1].shape);
  const int64_t h = p.num_hidden;
  const DType ct = gemm_dtype(in[0].dtype);
  std::vector<NDArray> keep;
  TBlob g = kernel::cast_blob(in[0], ct, &keep), x = kernel::cast_blob(in[1], ct, &keep),
        w = kernel::cast_blob(in[2], ct, &keep);
  NDArray dx(Shape{m, k}, ct), dw(Shape{h, k}, ct), db(Shape{h}, ct);
  with_gemm_type(ct, [&](auto tag) {
    using T = decltype(tag);
    gemm<T>(false, false, m, k, h, g.ptr<T>(), w.ptr<T>(), T(0), dx.data<T>());  // G W
    gemm<T>(true, false, h, k, m, g.ptr<T>(), x.ptr<T>(), T(0), dw.data<T>());   // G^T X
    const T* gp = g.ptr<T>();
    T* bp = db.data<T>();
    for (int64_t j = 0; j < h; ++j) {
      double acc = 0;
      for (int64_t i = 0; i < m; ++i) acc += gp[i * h + j];
      bp[j] = static_cast<T>(acc);
    }
  });
  write_req(dx.reshape(out[0].shape), as_array(out[0]), req[0]);
  write_req(dw, as_array(out[1]), req[1]);
  if (!p.no_bias) write_req(db, as_array(out[2]), req[2]);
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

// ============================== embedding ==============================
struct EmbeddingParam {
  int64_t input_dim = 0;
  int64_t output_dim = 0;
  static void declare(ParamDecl<EmbeddingParam>& d) {
    d.field("input_dim", &EmbeddingParam::input_dim)
        .set_lower_bound(1)
        .describe("The vocabulary size: indices must lie in [0, input_dim).");
    d.field("output_dim", &EmbeddingParam::output_dim)
        .set_lower_bound(1)
        .describe("The embedding size.");
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
  std::vector<int64_t> idx = read_indices(data);
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
void embedding_backward(const NodeAttrs& attrs, const OpContext&, const std::vector<TBlob>& in,
                        const std::vector<OpReqType>& req, const std::vector<TBlob>& out) {
  if (req[0] == kNullOp) return;
  const int64_t d = attrs.get<EmbeddingParam>().output_dim;
  const std::vector<int64_t> idx = embedding_indices(attrs, in[1]);
  std::vector<double> acc(static_cast<size_t>(out[0].size()), 0.0);
  NDX_FLOAT_SWITCH(out[0].dtype, T, {
    const T* gp = in[0].ptr<T>();
    for (size_t r = 0; r < idx.size(); ++r)
      for (int64_t c = 0; c < d; ++c)
        acc[idx[r] * d + c] += static_cast<double>(gp[static_cast<int64_t>(r) * d + c]);
    T* dp = out[0].ptr<T>();
    for (size_t i = 0; i < acc.size(); ++i)
      store(dp + i, req[0], static_cast<compute_t<T>>(acc[i]));
  });
}

// ============================== dropout ==============================
struct DropoutParam {
  double p = 0.5;
  std::string mode = "training";
  static void declare(ParamDecl<DropoutParam>& d) {
    d.field("p", &DropoutParam::p)
        .set_default(0.5)
        .set_range(0, 1)
        .describe("The fraction of the input that gets dropped out during training.");
    d.field("mode", &DropoutParam::mode)
        .set_default(std::string("training"))
        .set_enum({"training", "always"})
        .describe("'training': drop only in training mode; 'always': in predict mode too.");
  }
};

void dropout_compute(const NodeAttrs& attrs, const OpContext& ctx, const std::vector<TBlob>& in,
                     const std::vector<OpReqType>& req, const std::vector<TBlob>& out) {
  const auto& p = attrs.get<DropoutParam>();
  const bool active = (ctx.is_train || p.mode == "always") && p.p > 0;
  const double scale = p.p >= 1 ? 0.0 : 1.0 / (1.0 - p.p);
  const int64_t n = in[0].size();
  NDX_FLOAT_SWITCH(in[0].dtype, T, {
    using C = compute_t<T>;
    const T* xp = in[0].ptr<T>();
    T* yp = out[0].ptr<T>();
    T* mp = out[1].ptr<T>();
    for (int64_t i = 0; i < n; ++i) {
      double m = 1.0;
      if (active) {
        const double u = static_cast<double>(ctx.requested[0].next_random() >> 11) * 0x1.0p-53;
        m = u >= p.p ? scale : 0.0;
      }
      const C x = static_cast<C>(xp[i]);
      if (req[0] != kNullOp) store(yp + i, req[0], m == 1.0 ? x : static_cast<C>(x * m));
      if (req[1] != kNullOp) store(mp + i, req[1], static_cast<C>(m));
    }
  });
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

void layer_norm_compute(const NodeAttrs& attrs, const OpContext&, const std::vector<TBlob>& in,
                        const std::vector<OpReqType>& req, const std::vector<TBlob>& out) {
  const auto& p = attrs.get<LayerNormParam>();
  const int ax = normalize_axis(p.axis, in[0].ndim(), op_name(attrs).c_str());
  const AxisSplit s = split_at(in[0].shape, ax);
  NDX_FLOAT_SWITCH(in[0].dtype, T, {
    using C = compute_t<T>;
    const T *xp = in[0].ptr<T>(), *gp = in[1].ptr<T>(), *bp = in[2].ptr<T>();
    T *yp = out[0].ptr<T>(), *mp = out[1].ptr<T>(), *sp = out[2].ptr<T>();
    for (int64_t o = 0; o < s.outer; ++o)
      for (int64_t i = 0; i < s.inner; ++i) {
        const int64_t base = o * s.n * s.inner + i;
        double mean = 0, var = 0;
        for (int64_t k = 0; k < s.n; ++k) mean += static_cast<double>(xp[base + k * s.inner]);
        mean = s.n ? mean / static_cast<double>(s.n) : 0.0;
        for (int64_t k = 0; k < s.n; ++k) {
          const double c = static_cast<double>(xp[base + k * s.inner]) - mean;
          var += c * c;
        }
        var = s.n ? var / static_cast<double>(s.n) : 0.0;
        const double sd = std::sqrt(var + p.eps);
        for (int64_t k = 0; k < s.n; ++k) {
          const int64_t j = base + k * s.inner;
          const double v = (static_cast<double>(xp[j]) - mean) / sd * static_cast<double>(gp[k]) +
                           static_cast<double>(bp[k]);
          if (req[0] != kNullOp) store(yp + j, req[0], static_cast<C>(v));
        }
        const int64_t m = o * s.inner + i;
        if (req[1] != kNullOp) store(mp + m, req[1], static_cast<C>(mean));
        if (req[2] != kNullOp) store(sp + m, req[2], static_cast<C>(sd));
      }
  });
}

// (ograd, data, gamma, mean, std) -> (grad data, grad gamma, grad beta)
void layer_norm_backward(const NodeAttrs& attrs, const OpContext&, const std::vector<TBlob>& in,
                         const std::vector<OpReqType>& req, const std::vector<TBlob>& out) {
  const auto& p = attrs.get<LayerNormParam>();
  const int ax = normalize_axis(p.axis, in[1].ndim(), op_name(attrs).c_str());
  const AxisSplit s = split_at(in[1].shape, ax);
  std::vector<double> dgamma(static_cast<size_t>(s.n), 0.0), dbeta(static_cast<size_t>(s.n), 0.0);
  std::vector<double> xhat(static_cast<size_t>(s.n)), dxhat(static_cast<size_t>(s.n));
  NDX_FLOAT_SWITCH(in[1].dtype, T, {
    using C = compute_t<T>;
    const T *g = in[0].ptr<T>(), *xp = in[1].ptr<T>(), *gam = in[2].ptr<T>(), *mp = in[3].ptr<T>(),
            *sp = in[4].ptr<T>();
    T* dx = out[0].ptr<T>();
    const double inv_n = s.n ? 1.0 / static_cast<double>(s.n) : 0.0;
    for (int64_t o = 0; o < s.outer; ++o)
      for (int64_t i = 0; i < s.inner; ++i) {
        const int64_t base = o * s.n * s.inner + i, m = o * s.inner + i;
        const double mean = static_cast<double>(mp[m]), sd = static_cast<double>(sp[m]);
        double sum1 = 0, sum2 = 0;
        for (int64_t k = 0; k < s.n; ++k) {
          const int64_t j = base + k * s.inner;
          const double gv = static_cast<double>(g[j]);
          xhat[k] = (static_cast<double>(xp[j]) - mean) / sd;
          dxhat[k] = gv * static_cast<double>(gam[k]);
          sum1 += dxhat[k];
          sum2 += dxhat[k] * xhat[k];
          dgamma[k] += gv * xhat[k];
          dbeta[k] += gv;
        }
        if (req[0] == kNullOp) continue;
        for (int64_t k = 0; k < s.n; ++k)
          store(dx + base + k * s.inner, req[0],
                static_cast<C>((dxhat[k] - sum1 * inv_n - xhat[k] * sum2 * inv_n) / sd));
      }
    T *dg = out[1].ptr<T>(), *db = out[2].ptr<T>();
    for (int64_t k = 0; k < s.n; ++k) {
      if (req[1] != kNullOp) store(dg + k, req[1], static_cast<C>(dgamma[k]));
      if (req[2] != kNullOp) store(db + k, req[2], static_cast<C>(dbeta[k]));
    }
  });
}

// ============================== batch_norm ==============================
struct BatchNormParam {
  double eps = 1e-5;
  double momentum = 0.9;
  int64_t axis = 1;
  bool fix_gamma = false;
  bool use_global_stats = false;
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

// Outputs: (out, mean, inv_std) with mean / inv_std the statistics used (hidden). In training
// mode without use_global_stats the batch statistics are used and running_mean / running_var
// (inputs 3 and 4) are updated IN PLACE; in predict mode the running statistics are used.
void batch_norm_compute(const NodeAttrs& attrs, const OpContext& ctx, const std::vector<TBlob>& in,
                        const std::vector<OpReqType>& req, const std::vector<TBlob>& out) {
  const auto& p = attrs.get<BatchNormParam>();
  const int ax = normalize_axis(p.axis, in[0].ndim(), op_name(attrs).c_str());
  const AxisSplit s = split_at(in[0].shape, ax);
  const bool batch_stats = ctx.is_train && !p.use_global_stats;
  const int64_t count = s.outer * s.inner;
  NDX_FLOAT_SWITCH(in[0].dtype, T, {
    using C = compute_t<T>;
    const T *xp = in[0].ptr<T>(), *gp = in[1].ptr<T>(), *bp = in[2].ptr<T>();
    T *rm = in[3].ptr<T>(), *rv = in[4].ptr<T>();
    T *yp = out[0].ptr<T>(), *mp = out[1].ptr<T>(), *ip = out[2].ptr<T>();
    for (int64_t c = 0; c < s.n; ++c) {
      double mean, var;
      if (batch_stats) {
        mean = 0, var = 0;
        for (int64_t o = 0; o < s.outer; ++o)
          for (int64_t i = 0; i < s.inner; ++i)
            mean += static_cast<double>(xp[(o * s.n + c) * s.inner + i]);
        mean = count ? mean / static_cast<double>(count) : 0.0;
        for (int64_t o = 0; o < s.outer; ++o)
          for (int64_t i = 0; i < s.inner; ++i) {
            const double v = static_cast<double>(xp[(o * s.n + c) * s.inner + i]) - mean;
            var += v * v;
          }
        var = count ? var / static_cast<double>(count) : 0.0;
        rm[c] = static_cast<T>(static_cast<double>(rm[c]) * p.momentum + mean * (1 - p.momentum));
        rv[c] = static_cast<T>(static_cast<double>(rv[c]) * p.momentum + var * (1 - p.momentum));
      } else {
        mean = static_cast<double>(rm[c]);
        var = static_cast<double>(rv[c]);
      }
      const double inv = 1.0 / std::sqrt(var + p.eps);
      const double gamma = p.fix_gamma ? 1.0 : static_cast<double>(gp[c]);
      const double beta = static_cast<double>(bp[c]);
      if (req[0] != kNullOp)
        for (int64_t o = 0; o < s.outer; ++o)
          for (int64_t i = 0; i < s.inner; ++i) {
            const int64_t j = (o * s.n + c) * s.inner + i;
            store(yp + j, req[0],
                  static_cast<C>((static_cast<double>(xp[j]) - mean) * inv * gamma + beta));
          }
      if (req[1] != kNullOp) store(mp + c, req[1], static_cast<C>(mean));
      if (req[2] != kNullOp) store(ip + c, req[2], static_cast<C>(inv));
    }
  });
}

// (ograd, data, gamma, mean, inv_std) -> (grad data, grad gamma, grad beta, 0, 0). With batch
// statistics (training mode, as MXNet: backward runs in training mode like the forward it
// differentiates) the mean and variance depend on data; with global statistics they are
// constants.
void batch_norm_backward(const NodeAttrs& attrs, const OpContext& ctx, const std::vector<TBlob>& in,
                         const std::vector<OpReqType>& req, const std::vector<TBlob>& out) {
  const auto& p = attrs.get<BatchNormParam>();
  const int ax = normalize_axis(p.axis, in[1].ndim(), op_name(attrs).c_str());
  const AxisSplit s = split_at(in[1].shape, ax);
  const bool batch_stats = ctx.is_train && !p.use_global_stats;  // as the forward decided
  const int64_t count = s.outer * s.inner;
  NDX_FLOAT_SWITCH(in[1].dtype, T, {
    using C = compute_t<T>;
    const T *g = in[0].ptr<T>(), *xp = in[1].ptr<T>(), *gam = in[2].ptr<T>(), *mp = in[3].ptr<T>(),
            *ip = in[4].ptr<T>();
    T *dx = out[0].ptr<T>(), *dg = out[1].ptr<T>(), *db = out[2].ptr<T>();
    for (int64_t c = 0; c < s.n; ++c) {
      const double mean = static_cast<double>(mp[c]), inv = static_cast<double>(ip[c]);
      const double gamma = p.fix_gamma ? 1.0 : static_cast<double>(gam[c]);
      double sum_g = 0, sum_gx = 0;
      for (int64_t o = 0; o < s.outer; ++o)
        for (int64_t i = 0; i < s.inner; ++i) {
          const int64_t j = (o * s.n + c) * s.inner + i;
          const double gv = static_cast<double>(g[j]);
          sum_g += gv;
          sum_gx += gv * (static_cast<double>(xp[j]) - mean) * inv;
        }
      const double n = count ? static_cast<double>(count) : 1.0;
      if (req[0] != kNullOp)
        for (int64_t o = 0; o < s.outer; ++o)
          for (int64_t i = 0; i < s.inner; ++i) {
            const int64_t j = (o * s.n + c) * s.inner + i;
            const double gv = static_cast<double>(g[j]);
            const double xhat = (static_cast<double>(xp[j]) - mean) * inv;
            const double v =
                batch_stats ? gamma * inv * (gv - sum_g / n - xhat * sum_gx / n) : gamma * inv * gv;
            store(dx + j, req[0], static_cast<C>(v));
          }
      if (req[1] != kNullOp) store(dg + c, req[1], static_cast<C>(p.fix_gamma ? 0.0 : sum_gx));
      if (req[2] != kNullOp) store(db + c, req[2], static_cast<C>(sum_g));
    }
    for (int k = 3; k < 5; ++k) kernel::fill_output(out[k], req[k], 0);
  });
}

[[maybe_unused]] const bool registered = [] {
  register_act("_npx_relu", "Rectified linear unit: max(x, 0), elementwise.", Act::kRelu);
  register_act("_npx_sigmoid", "Logistic sigmoid: 1 / (1 + exp(-x)), elementwise.", Act::kSigmoid);

  OpRegistry::global()
      .register_op("_npx_activation")
      .describe(
          "An activation function applied elementwise: relu, sigmoid, tanh, softrelu "
          "(log(1 + exp(x))) or log_sigmoid.")
      .set_num_inputs(1)
      .add_argument("data", "NDArray", "Input array.")
      .set_params<ActivationParam>()
      .set_attr<FInferShape>("FInferShape", ElemwiseShape<1, 1>)
      .set_attr<FInferType>("FInferType",
                            [](const NodeAttrs& attrs, DTypeVector* in, DTypeVector* out) {
                              return act_type_infer(attrs, in, out,
                                                    act_of(attrs.get<ActivationParam>().act_type));
                            })
      .set_attr<FInplaceOption>("FInplaceOption", InplaceIdentity())
      .set_attr<FCompute>("FCompute<cpu>", activation_compute)
      .set_attr<FGradient>("FGradient", [](const NodePtr& n, const std::vector<NodeEntry>& og) {
        Act a = act_of(n->attrs.get<ActivationParam>().act_type);
        return std::vector<NodeEntry>{act_grad(a, og[0], n->inputs[0], NodeEntry{n, 0, 0})};
      });

  register_softmax("_npx_softmax",
                   "Softmax along an axis: exp(x - max) / sum(exp(x - max)), numerically stable.",
                   softmax_compute<false>, softmax_grad);
  register_softmax("_npx_log_softmax",
                   "Log of the softmax along an axis: x - max - log(sum(exp(x - max))).",
                   softmax_compute<true>, log_softmax_grad);

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
      .set_attr<FInferType>("FInferType",
                            [](const NodeAttrs& attrs, DTypeVector* in, DTypeVector* out) {
                              return same_float_type(attrs, in, out, {"data", "weight", "bias"});
                            })
      .set_attr<FCompute>("FCompute<cpu>", fc_compute)
      .set_attr<FGradient>("FGradient", [](const NodePtr& n, const std::vector<NodeEntry>& og) {
        return make_grad_node("_backward_fully_connected", n, {og[0], n->inputs[0], n->inputs[1]},
                              true);
      });
  register_backward("_backward_fully_connected",
                    "Backward of fully_connected: (ograd, data, weight) -> (grad data, grad "
                    "weight[, grad bias]).")
      .set_num_inputs(3)
      .set_num_outputs([](const NodeAttrs& attrs) -> uint32_t {
        return attrs.get<FullyConnectedParam>().no_bias ? 2 : 3;
      })
      .set_params<FullyConnectedParam>()
      .set_attr<FInferShape>("FInferShape",
                             [](const NodeAttrs& attrs, ShapeVector* in, ShapeVector* out) {
                               if (!(*in)[1].is_known() || !(*in)[2].is_known()) return false;
                               assign_shape(attrs, &(*out)[0], (*in)[1], "output", 0);
                               assign_shape(attrs, &(*out)[1], (*in)[2], "output", 1);
                               if (out->size() > 2)
                                 assign_shape(attrs, &(*out)[2], Shape{(*in)[2][0]}, "output", 2);
                               return true;
                             })
      .set_attr<FInferType>("FInferType",
                            [](const NodeAttrs& attrs, DTypeVector* in, DTypeVector* out) {
                              return same_float_type(attrs, in, out, {"ograd", "data", "weight"});
                            })
      .set_attr<FCompute>("FCompute<cpu>", fc_backward);

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
      .set_attr<FGradient>("FGradient", [](const NodePtr& n, const std::vector<NodeEntry>& og) {
        auto g = make_grad_node("_backward_pick", n, {og[0], n->inputs[0], n->inputs[1]}, true);
        return std::vector<NodeEntry>{g[0], zeros_like(n->inputs[1])};
      });
  register_backward("_backward_pick",
                    "Backward of pick: (ograd, data, index) -> ograd scattered into zeros of "
                    "data's shape.")
      .set_num_inputs(3)
      .set_params<PickParam>()
      .set_attr<FInferShape>("FInferShape", output_shape_of_input(1))
      .set_attr<FInferType>("FInferType", ograd_float_type)
      .set_attr<FCompute>("FCompute<cpu>", pick_backward)
      // Linear in ograd: its gradient is pick again, so pick differentiates twice.
      .set_attr<FGradient>("FGradient", [](const NodePtr& n, const std::vector<NodeEntry>& og) {
        return std::vector<NodeEntry>{
            make_node("_npx_pick", {og[0], n->inputs[2]}, params_dict(n->attrs)),
            zeros_like(n->inputs[1]), zeros_like(n->inputs[2])};
      });

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
      .set_attr<FCompute>("FCompute<cpu>",
                          [](const NodeAttrs& attrs, const OpContext&, const std::vector<TBlob>& in,
                             const std::vector<OpReqType>& req, const std::vector<TBlob>& out) {
                            if (req[0] == kNullOp) return;
                            const auto& p = attrs.get<OneHotParam>();
                            const std::vector<int64_t> idx = read_indices(in[0]);
                            NDX_DTYPE_SWITCH(out[0].dtype, T, {
                              using C = compute_t<T>;
                              const C on = kernel::from_double<T>(p.on_value),
                                      off = kernel::from_double<T>(p.off_value);
                              T* yp = out[0].ptr<T>();
                              for (size_t r = 0; r < idx.size(); ++r)
                                for (int64_t d = 0; d < p.depth; ++d)
                                  store(yp + static_cast<int64_t>(r) * p.depth + d, req[0],
                                        d == idx[r] ? on : off);
                            });
                          })
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
      .set_attr<FInferType>("FInferType",
                            [](const NodeAttrs& attrs, DTypeVector* in, DTypeVector* out) {
                              if ((*in)[0] == DType::kUnknown || (*in)[1] == DType::kUnknown)
                                return false;
                              require_no_bool(attrs, (*in)[0], "data");
                              require_no_bool(attrs, (*in)[1], "weight");
                              (*out)[0] = (*in)[1];
                              return true;
                            })
      .set_attr<FCompute>("FCompute<cpu>", embedding_compute)
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
      .set_attr<FInferShape>("FInferShape", output_shape_of_input(2))
      .set_attr<FInferType>("FInferType", ograd_float_type)
      .set_attr<FCompute>("FCompute<cpu>", embedding_backward)
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
      .set_attr<FInferShape>("FInferShape", ElemwiseShape<1, 2>)
      .set_attr<FInferType>("FInferType",
                            [](const NodeAttrs& attrs, DTypeVector* in, DTypeVector* out) {
                              return same_float_type(attrs, in, out, {"data"});
                            })
      .set_attr<FInplaceOption>("FInplaceOption", InplaceIdentity())
      .set_attr<FCompute>("FCompute<cpu>", dropout_compute)
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
      .set_attr<FInferType>("FInferType",
                            [](const NodeAttrs& attrs, DTypeVector* in, DTypeVector* out) {
                              return same_float_type(attrs, in, out, {"data", "gamma", "beta"});
                            })
      .set_attr<FCompute>("FCompute<cpu>", layer_norm_compute)
      .set_attr<FGradient>("FGradient", [](const NodePtr& n, const std::vector<NodeEntry>& og) {
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
                               if (!(*in)[1].is_known() || !(*in)[2].is_known()) return false;
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
      .set_attr<FCompute>("FCompute<cpu>", layer_norm_backward);

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
      .set_attr<FNumVisibleOutputs>("FNumVisibleOutputs", [](const NodeAttrs&) { return 1u; })
      .set_attr<FListOutputNames>("FListOutputNames",
                                  [](const NodeAttrs&) {
                                    return std::vector<std::string>{"output", "mean", "inv_std"};
                                  })
      .set_attr<FInferShape>("FInferShape", batch_norm_shape)
      .set_attr<FInferType>("FInferType",
                            [](const NodeAttrs& attrs, DTypeVector* in, DTypeVector* out) {
                              return same_float_type(
                                  attrs, in, out,
                                  {"data", "gamma", "beta", "running_mean", "running_var"});
                            })
      .set_attr<FCompute>("FCompute<cpu>", batch_norm_compute)
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
      .set_attr<FInferShape>("FInferShape",
                             [](const NodeAttrs& attrs, ShapeVector* in, ShapeVector* out) {
                               if (!(*in)[1].is_known() || !(*in)[2].is_known()) return false;
                               assign_shape(attrs, &(*out)[0], (*in)[1], "output", 0);
                               for (int i = 1; i < 5; ++i)
                                 assign_shape(attrs, &(*out)[i], (*in)[2], "output", i);
                               return true;
                             })
      .set_attr<FInferType>(
          "FInferType",
          [](const NodeAttrs& attrs, DTypeVector* in, DTypeVector* out) {
            return same_float_type(attrs, in, out, {"ograd", "data", "gamma", "mean", "inv_std"});
          })
      .set_attr<FCompute>("FCompute<cpu>", batch_norm_backward);
  return true;
}();

}  // namespace
}  // namespace ndx
