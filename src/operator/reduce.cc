// Reductions (_np_sum, _np_prod, _np_mean, _np_max, _np_min, _np_argmax, _np_argmin) and their
// backward ops, on the reduction engine (kernel/reduce-inl.h): each op picks a reducer and the
// dtype it accumulates in; backward ops are elementwise functors over keepdims views.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "operator/reduce.cc"
#include <hwy/foreach_target.h>  // IWYU pragma: keep

#include "kernel/reduce-inl.h"

HWY_BEFORE_NAMESPACE();
namespace ndx::kernel::HWY_NAMESPACE {
#include "operator/math/reduce-inl.h"
}  // namespace ndx::kernel::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <optional>

#include "kernel/blob.h"
#include "kernel/cast.h"
#include "kernel/dispatch.h"
#include "kernel/elementwise.h"
#include "kernel/gpu.h"
#include "kernel/host_fallback.h"
#include "kernel/reduce.h"
#include "ndx/graph.h"
#include "ndx/op_util.h"

namespace ndx {
namespace {

// ---- params ----
struct ReduceParam {  // sum, prod, mean
  std::optional<Shape> axis;
  bool keepdims = false;
  std::optional<DType> dtype;
  std::optional<double> initial;
  static void declare(ParamDecl<ReduceParam>& d) {
    d.field("axis", &ReduceParam::axis)
        .set_default(std::nullopt)
        .describe("Axis or axes to reduce over; None reduces over all axes.");
    d.field("keepdims", &ReduceParam::keepdims)
        .set_default(false)
        .describe("Keep the reduced axes as dimensions of size one.");
    d.field("dtype", &ReduceParam::dtype)
        .set_default(std::nullopt)
        .describe("The dtype of the result and of the accumulation.");
    d.field("initial", &ReduceParam::initial)
        .set_default(std::nullopt)
        .describe("The starting value of the reduction (sum and prod; not mean).");
  }
};

struct MinMaxParam {  // max, min
  std::optional<Shape> axis;
  bool keepdims = false;
  std::optional<double> initial;
  static void declare(ParamDecl<MinMaxParam>& d) {
    d.field("axis", &MinMaxParam::axis)
        .set_default(std::nullopt)
        .describe("Axis or axes to reduce over; None reduces over all axes.");
    d.field("keepdims", &MinMaxParam::keepdims)
        .set_default(false)
        .describe("Keep the reduced axes as dimensions of size one.");
    d.field("initial", &MinMaxParam::initial)
        .set_default(std::nullopt)
        .describe("A value the result is compared with too; allows empty reductions.");
  }
};

struct ArgReduceParam {  // argmax, argmin
  std::optional<int64_t> axis;
  bool keepdims = false;
  static void declare(ParamDecl<ArgReduceParam>& d) {
    d.field("axis", &ArgReduceParam::axis)
        .set_default(std::nullopt)
        .describe("Axis to search along; None searches the flattened array.");
    d.field("keepdims", &ArgReduceParam::keepdims)
        .set_default(false)
        .describe("Keep the reduced axis (axes) as dimensions of size one.");
  }
};

// The reduced axes as a mask over the input's dims. NumPy lets a single axis 0 or -1 through on a
// 0-d array for ufunc reductions (sum, prod, max, min), but not for mean.
std::vector<bool> reduce_mask(const std::string& name, const std::optional<Shape>& axis, int ndim,
                              bool scalar_axis_ok) {
  std::vector<bool> mask(ndim, !axis.has_value());
  if (!axis) return mask;
  if (ndim == 0 && scalar_axis_ok && axis->ndim() == 1 && ((*axis)[0] == 0 || (*axis)[0] == -1))
    return mask;
  for (int64_t a : *axis) {
    int k = normalize_axis(a, ndim, name.c_str());
    if (mask[k]) value_error("[", name, "] duplicate value in 'axis': got ", axis->str());
    mask[k] = true;
  }
  return mask;
}

// The input shape with reduced dims set to 1 (the accumulators' shape).
Shape keepdims_shape(const Shape& in, const std::vector<bool>& mask) {
  Shape s = in;
  for (int i = 0; i < in.ndim(); ++i)
    if (mask[i]) s[i] = 1;
  return s;
}

Shape reduced_shape(const Shape& in, const std::vector<bool>& mask, bool keepdims) {
  if (keepdims) return keepdims_shape(in, mask);
  Shape s;
  for (int i = 0; i < in.ndim(); ++i)
    if (!mask[i]) s.push_back(in[i]);
  return s;
}

int64_t reduced_count(const Shape& in, const std::vector<bool>& mask) {
  int64_t n = 1;
  for (int i = 0; i < in.ndim(); ++i)
    if (mask[i] && __builtin_mul_overflow(n, in[i], &n))  // zero-size arrays may have huge dims
      value_error("[reduce] the reduced dimensions of shape ", in.str(), " are too big");
  return n;
}

enum class SumKind { kSum, kProd, kMean };

// ---- forward kernels ----
#define NDX_REDUCER(R) NDX_REDUCE(R)

// out (as a keepdims view over `in`) (req) reduction R of in over the masked axes.
void run_reduce(kernel::ReduceFn fn, const TBlob& in, const TBlob& out, OpReqType req,
                const std::vector<bool>& mask, DType compute, std::optional<double> initial) {
  kernel::reduce(fn, in, kernel::keepdims_view(out, in.shape, mask), req, compute, initial);
}

template <SumKind kind>
void sum_compute(const NodeAttrs& attrs, const OpContext&, const std::vector<TBlob>& in,
                 const std::vector<OpReqType>& req, const std::vector<TBlob>& out) {
  const auto& p = attrs.get<ReduceParam>();
  auto mask = reduce_mask(op_name(attrs), p.axis, in[0].ndim(), kind != SumKind::kMean);
  // NumPy reduces in the result dtype (the input cast to it); integer means accumulate in
  // float64 and round once into the result.
  DType compute = out[0].dtype;
  if (kind == SumKind::kMean && is_complex(compute))
    compute = DType::kComplex128;  // as float64 below: one rounding into complex64
  else if (kind == SumKind::kMean && (!is_float(compute) || !is_float(in[0].dtype)))
    compute = DType::kFloat64;
  kernel::ReduceFn fn = kind == SumKind::kSum    ? NDX_REDUCER(SumReducer)
                        : kind == SumKind::kProd ? NDX_REDUCER(ProdReducer)
                                                 : NDX_REDUCER(MeanReducer);
  run_reduce(fn, in[0], out[0], req[0], mask, compute,
             kind == SumKind::kMean ? std::nullopt : p.initial);
}

template <bool kMax>
void minmax_compute(const NodeAttrs& attrs, const OpContext&, const std::vector<TBlob>& in,
                    const std::vector<OpReqType>& req, const std::vector<TBlob>& out) {
  const auto& p = attrs.get<MinMaxParam>();
  auto mask = reduce_mask(op_name(attrs), p.axis, in[0].ndim(), true);
  run_reduce(kMax ? NDX_REDUCER(MaxReducer) : NDX_REDUCER(MinReducer), in[0], out[0], req[0], mask,
             in[0].dtype, p.initial);
}

// argmax/argmin with a 0-d input and axis 0 or -1 behave as axis None (as in NumPy).
std::optional<int> arg_axis(const std::string& name, const std::optional<int64_t>& axis, int ndim) {
  if (!axis) return std::nullopt;
  if (ndim == 0) {
    normalize_axis(*axis, 1, name.c_str());
    return std::nullopt;
  }
  return normalize_axis(*axis, ndim, name.c_str());
}

// On a GPU: the input made contiguous (on the device) and seen as (outer, n, inner).
template <bool kMax>
void gpu_arg_compute(const TBlob& in, std::optional<int> axis, OpReqType req, const TBlob& out) {
  if (is_complex(in.dtype))
    kernel::fall_back_to_host("[", kMax ? "argmax" : "argmin", "] complex input on gpu");
  NDArray x = kernel::as_array(in);
  if (!x.is_contiguous()) x = x.contiguous();
  int64_t outer = 1, n = x.size(), inner = 1;
  if (axis) {
    n = x.shape()[*axis];
    for (int d = 0; d < x.ndim(); ++d) {
      if (d < *axis) outer *= x.shape()[d];
      if (d > *axis) inner *= x.shape()[d];
    }
  }
  const bool direct = req != kAddTo && out.is_contiguous();
  NDArray scratch;
  if (!direct) scratch = NDArray(out.shape, DType::kInt64, out.device);
  int64_t* dst = direct ? out.ptr<int64_t>() : scratch.data<int64_t>();
  kernel::gpu::arg_reduce(kernel::to_blob(x), kMax, outer, n, inner, dst);
  if (!direct) kernel::copy(kernel::to_blob(scratch), out, req);
}

template <bool kMax>
void arg_compute(const NodeAttrs& attrs, const OpContext&, const std::vector<TBlob>& in,
                 const std::vector<OpReqType>& req, const std::vector<TBlob>& out) {
  if (req[0] == kNullOp) return;
  const auto& p = attrs.get<ArgReduceParam>();
  std::optional<int> ax = arg_axis(op_name(attrs), p.axis, in[0].ndim());
  if (in[0].device.is_gpu()) return gpu_arg_compute<kMax>(in[0], ax, req[0], out[0]);
  kernel::ArgReduceArgs a;
  a.in = &in[0];
  a.axis = ax ? *ax : -1;
  // The engine writes contiguous int64 indices; anything else goes through a scratch array.
  const bool direct = req[0] != kAddTo && out[0].is_contiguous();
  NDArray scratch;
  if (!direct) scratch = NDArray(out[0].shape, DType::kInt64);
  a.out = direct ? out[0].ptr<int64_t>() : scratch.data<int64_t>();
  (kMax ? NDX_DISPATCH(arg_reduce, ArgMaxTag) : NDX_DISPATCH(arg_reduce, ArgMinTag))(a);
  if (!direct) kernel::copy(kernel::to_blob(scratch), out[0], req[0]);
}

// ---- shape and dtype inference ----
template <bool kScalarAxisOk>
bool sum_shape(const NodeAttrs& attrs, ShapeVector* in, ShapeVector* out) {
  if (!(*in)[0].is_known()) return false;
  const auto& p = attrs.get<ReduceParam>();
  if (!kScalarAxisOk && p.initial)  // mean
    type_error("[", op_name(attrs), "] got an unexpected keyword argument 'initial'");
  auto mask = reduce_mask(op_name(attrs), p.axis, (*in)[0].ndim(), kScalarAxisOk);
  assign_shape(attrs, &(*out)[0], reduced_shape((*in)[0], mask, p.keepdims), "output", 0);
  return true;
}

bool minmax_shape(const NodeAttrs& attrs, ShapeVector* in, ShapeVector* out) {
  if (!(*in)[0].is_known()) return false;
  const Shape& s = (*in)[0];
  const auto& p = attrs.get<MinMaxParam>();
  const std::string name = op_name(attrs);
  auto mask = reduce_mask(name, p.axis, s.ndim(), true);
  for (int i = 0; i < s.ndim(); ++i)
    if (mask[i] && s[i] == 0 && !p.initial)
      value_error("[", name, "] zero-size array to reduction operation ",
                  name == "max" ? "maximum" : "minimum", " which has no identity; got shape ",
                  s.str(), " with axis ", p.axis ? p.axis->str() : std::string("None"));
  assign_shape(attrs, &(*out)[0], reduced_shape(s, mask, p.keepdims), "output", 0);
  return true;
}

bool arg_shape(const NodeAttrs& attrs, ShapeVector* in, ShapeVector* out) {
  if (!(*in)[0].is_known()) return false;
  const Shape& s = (*in)[0];
  const auto& p = attrs.get<ArgReduceParam>();
  const std::string name = op_name(attrs);
  std::optional<int> ax = arg_axis(name, p.axis, s.ndim());
  Shape o;
  if (!ax) {
    if (s.size() == 0)
      value_error("[", name, "] attempt to get ", name, " of an empty sequence; got shape ",
                  s.str());
    if (p.keepdims) o = Shape::filled(s.ndim(), 1);
  } else {
    if (s[*ax] == 0)
      value_error("[", name, "] attempt to get ", name, " of an empty sequence; got shape ",
                  s.str(), " with axis ", *p.axis);
    for (int i = 0; i < s.ndim(); ++i) {
      if (i != *ax)
        o.push_back(s[i]);
      else if (p.keepdims)
        o.push_back(1);
    }
  }
  assign_shape(attrs, &(*out)[0], o, "output", 0);
  return true;
}

// Result dtype of sum and prod without dtype=: small ints and bool widen to 64 bits.
DType sum_out_type(DType in) {
  if (in == DType::kBool) return DType::kInt64;
  if (is_integer(in) && dtype_size(in) < 8) return is_unsigned(in) ? DType::kUInt64 : DType::kInt64;
  return in;
}

// An integer result takes initial= only within its range, as NumPy converts the Python value:
// max(uint8s, initial=-1) is OverflowError there, where a wrapped or clamped value would
// compare wrong.
void check_initial_fits(const NodeAttrs& attrs, std::optional<double> initial, DType t) {
  if (!initial || !is_integer(t)) return;
  const int bits = 8 * dtype_size(t);
  const double lo = is_unsigned(t) ? 0.0 : -std::ldexp(1.0, bits - 1);
  const double hi_excl = std::ldexp(1.0, is_unsigned(t) ? bits : bits - 1);
  if (std::isnan(*initial))
    value_error("[", op_name(attrs), "] initial=nan cannot be converted to ", t);
  const double v = std::trunc(*initial);
  // (a 64-bit type's largest value comes as 2**64 or 2**63, the double it rounds to)
  if (!(v >= lo && (v < hi_excl || (bits == 64 && v == hi_excl))))
    overflow_error("[", op_name(attrs), "] initial=", *initial, " is out of bounds for ", t);
}

template <SumKind kind>
bool sum_type(const NodeAttrs& attrs, DTypeVector* in, DTypeVector* out) {
  if ((*in)[0] == DType::kUnknown) return false;
  const auto& p = attrs.get<ReduceParam>();
  DType t;
  if (p.dtype)
    t = *p.dtype;
  else if (kind == SumKind::kMean)
    t = float_result_type((*in)[0]);
  else
    t = sum_out_type((*in)[0]);
  if (kind != SumKind::kMean) check_initial_fits(attrs, p.initial, t);
  assign_type(attrs, &(*out)[0], t, "output", 0);
  return true;
}

bool minmax_type(const NodeAttrs& attrs, DTypeVector* in, DTypeVector* out) {
  if ((*in)[0] == DType::kUnknown) return false;
  check_initial_fits(attrs, attrs.get<MinMaxParam>().initial, (*in)[0]);
  assign_type(attrs, &(*out)[0], (*in)[0], "output", 0);
  return true;
}

bool int64_type(const NodeAttrs& attrs, DTypeVector* in, DTypeVector* out) {
  if ((*in)[0] == DType::kUnknown) return false;
  assign_type(attrs, &(*out)[0], DType::kInt64, "output", 0);
  return true;
}

// ---- backward ops: inputs (ograd, data[, out]); output grad shaped like data ----
// The forward's reduction, recomputed from the shared params.
struct ReduceSpec {
  std::vector<bool> mask;
  bool keepdims;
};

template <typename P>
ReduceSpec backward_spec(const NodeAttrs& attrs, const Shape& data) {
  const auto& p = attrs.get<P>();
  // Backward ops of mean are strict like mean; others accept axis 0 / -1 on 0-d data.
  bool scalar_ok = op_name(attrs) != "_backward_mean";
  return {reduce_mask(op_name(attrs), p.axis, data.ndim(), scalar_ok), p.keepdims};
}

template <typename P>
bool backward_shape(const NodeAttrs& attrs, ShapeVector* in, ShapeVector* out) {
  if (!(*in)[1].is_known()) return false;
  const Shape& data = (*in)[1];
  ReduceSpec r = backward_spec<P>(attrs, data);
  Shape reduced = reduced_shape(data, r.mask, r.keepdims);
  assign_shape(attrs, &(*in)[0], reduced, "input (ograd)", 0);
  if (in->size() > 2) assign_shape(attrs, &(*in)[2], reduced, "input (out)", 2);
  assign_shape(attrs, &(*out)[0], data, "output", 0);
  return true;
}

bool backward_type(const NodeAttrs& attrs, DTypeVector* in, DTypeVector* out) {
  if ((*in)[0] == DType::kUnknown) return false;
  if ((*in)[0] == DType::kBool)
    type_error("[", op_name(attrs),
               "] gradients of boolean arrays are not defined; ograd has dtype ", (*in)[0]);
  // The gradient has the data's dtype (sum(x, dtype=float32) of float16 data gives float16
  // gradients); integer data, which gets no gradient, keeps the ograd's.
  const DType data = in->size() > 1 ? (*in)[1] : DType::kUnknown;
  assign_type(attrs, &(*out)[0], is_inexact(data) ? data : (*in)[0], "output", 0);
  return true;
}

// ---- backward kernels: (ograd, data[, out]) -> grad shaped like data ----
template <bool kMean>
void backward_sum_compute(const NodeAttrs& attrs, const OpContext&, const std::vector<TBlob>& in,
                          const std::vector<OpReqType>& req, const std::vector<TBlob>& out) {
  if (req[0] == kNullOp) return;
  if (out[0].dtype == DType::kBool)
    type_error("[", op_name(attrs), "] gradients of boolean arrays are not defined");
  ReduceSpec r = backward_spec<ReduceParam>(attrs, in[1].shape);
  TBlob g = kernel::keepdims_view(in[0], in[1].shape, r.mask);
  if (!kMean) {
    kernel::copy(g, out[0], req[0]);
    return;
  }
  kernel::FunctorArgs n;
  n.a = static_cast<double>(reduced_count(in[1].shape, r.mask));
  kernel::apply(NDX_ELEMENTWISE(DivideBy), {g}, out[0], req[0], out[0].dtype, n);
}

void backward_prod_compute(const NodeAttrs& attrs, const OpContext&, const std::vector<TBlob>& in,
                           const std::vector<OpReqType>& req, const std::vector<TBlob>& out) {
  if (req[0] == kNullOp) return;
  const DType t = out[0].dtype;
  if (t == DType::kBool)
    type_error("[", op_name(attrs), "] gradients of boolean arrays are not defined");
  ReduceSpec r = backward_spec<ReduceParam>(attrs, in[1].shape);
  const Shape& shape = in[1].shape;
  // Per result: the product of the nonzero inputs and the number of zeros, so gradients stay
  // exact where inputs are zero.
  const Shape kd = keepdims_shape(shape, r.mask);
  const Device dev = out[0].device;
  NDArray mapped(shape, t, dev), nonzero_product(kd, t, dev), zeros(kd, t, dev);
  kernel::apply(NDX_ELEMENTWISE(OneIfZero), {in[1]}, kernel::to_blob(mapped), kWriteTo, t);
  kernel::reduce(NDX_REDUCER(ProdReducer), kernel::to_blob(mapped),
                 kernel::to_blob(nonzero_product), kWriteTo, t);
  kernel::apply(NDX_ELEMENTWISE(IsZeroCount), {in[1]}, kernel::to_blob(mapped), kWriteTo, t);
  kernel::reduce(NDX_REDUCER(SumReducer), kernel::to_blob(mapped), kernel::to_blob(zeros), kWriteTo,
                 t);
  const TBlob g = kernel::keepdims_view(in[0], shape, r.mask);
  kernel::apply(NDX_ELEMENTWISE(ProdGrad),
                {g, in[1], kernel::to_blob(nonzero_product), kernel::to_blob(zeros)}, out[0],
                req[0], t);
}

// grad = ograd where data equals the (broadcast) result, else 0.
void backward_minmax_compute(const NodeAttrs& attrs, const OpContext&, const std::vector<TBlob>& in,
                             const std::vector<OpReqType>& req, const std::vector<TBlob>& out) {
  if (req[0] == kNullOp) return;
  if (out[0].dtype == DType::kBool)
    type_error("[", op_name(attrs), "] gradients of boolean arrays are not defined");
  ReduceSpec r = backward_spec<MinMaxParam>(attrs, in[1].shape);
  const Shape& shape = in[1].shape;
  const TBlob g = kernel::keepdims_view(in[0], shape, r.mask);
  const TBlob y = kernel::keepdims_view(in[2], shape, r.mask);
  kernel::apply(NDX_ELEMENTWISE(PassWhereEqual), {g, in[1], y}, out[0], req[0], out[0].dtype);
}

struct LogicalReduceParam {  // all, any, count_nonzero
  std::optional<Shape> axis;
  bool keepdims = false;
  static void declare(ParamDecl<LogicalReduceParam>& d) {
    d.field("axis", &LogicalReduceParam::axis)
        .set_default(std::nullopt)
        .describe("Axis or axes to reduce over; None reduces over all axes.");
    d.field("keepdims", &LogicalReduceParam::keepdims)
        .set_default(false)
        .describe("Keep the reduced axes as dimensions of size one.");
  }
};

enum class Logical { kAll, kAny, kCountNonzero };

// all is the min over the input read as bool (and), any the max (or), whose integer loops
// vectorize and stop at the first false / true; count_nonzero sums the input read as bool in
// int64. The engine casts the input a block at a time, and a cast
// to bool is NumPy's truth value (NaN is true).
template <Logical kind>
void logical_compute(const NodeAttrs& attrs, const OpContext&, const std::vector<TBlob>& in,
                     const std::vector<OpReqType>& req, const std::vector<TBlob>& out) {
  const auto& p = attrs.get<LogicalReduceParam>();
  auto mask = reduce_mask(op_name(attrs), p.axis, in[0].ndim(), true);
  if (kind == Logical::kCountNonzero) {
    const bool all_axes = std::find(mask.begin(), mask.end(), false) == mask.end();
    if (all_axes && out[0].dtype == DType::kInt64 &&
        (req[0] == kWriteTo || req[0] == kWriteInplace)) {
      const int64_t count = kernel::count_nonzero_contig(in[0]);  // -1: no fast path
      if (count >= 0) {
        *out[0].ptr<int64_t>() = count;
        return;
      }
    }
    NDArray truth(in[0].shape, DType::kBool, out[0].device);
    kernel::copy(in[0], kernel::to_blob(truth), kWriteTo);
    run_reduce(NDX_REDUCER(SumReducer), kernel::to_blob(truth), out[0], req[0], mask, DType::kInt64,
               std::nullopt);
    return;
  }
  run_reduce(kind == Logical::kAll ? NDX_REDUCER(MinReducer) : NDX_REDUCER(MaxReducer), in[0],
             out[0], req[0], mask, DType::kBool, std::nullopt);
}

bool logical_shape(const NodeAttrs& attrs, ShapeVector* in, ShapeVector* out) {
  if (!(*in)[0].is_known()) return false;
  const auto& p = attrs.get<LogicalReduceParam>();
  auto mask = reduce_mask(op_name(attrs), p.axis, (*in)[0].ndim(), true);
  assign_shape(attrs, &(*out)[0], reduced_shape((*in)[0], mask, p.keepdims), "output", 0);
  return true;
}

template <DType kOut>
bool fixed_type(const NodeAttrs& attrs, DTypeVector* in, DTypeVector* out) {
  if ((*in)[0] == DType::kUnknown) return false;
  assign_type(attrs, &(*out)[0], kOut, "output", 0);
  return true;
}

void register_logical_reductions() {
  struct Row {
    const char* name;
    const char* doc;
    FCompute compute;
    FInferType type;
  };
  for (const Row& r : {
           Row{"_np_all", "Whether every element (along the axes) is true.",
               logical_compute<Logical::kAll>, fixed_type<DType::kBool>},
           Row{"_np_any", "Whether any element (along the axes) is true.",
               logical_compute<Logical::kAny>, fixed_type<DType::kBool>},
           Row{"_np_count_nonzero", "The number of nonzero elements (along the axes), as int64.",
               logical_compute<Logical::kCountNonzero>, fixed_type<DType::kInt64>},
       })
    OpRegistry::global()
        .register_op(r.name)
        .describe(r.doc)
        .set_num_inputs(1)
        .add_argument("a", "NDArray", "Input array.")
        .set_params<LogicalReduceParam>()
        .set_attr<FInferShape>("FInferShape", logical_shape)
        .set_attr<FInferType>("FInferType", r.type)
        .set_attr<TStridedInputs>("TStridedInputs", true)
        .set_attr<FCompute>("FCompute<cpu>", r.compute)
        .set_attr<FCompute>("FCompute<gpu>", r.compute)
        .set_attr<FGradient>("FGradient", MakeZeroGradNodes);
}

// ---- registration ----
Op& register_sum_like(const char* name, const char* doc, FInferShape shape, FInferType type,
                      FCompute compute) {
  return OpRegistry::global()
      .register_op(name)
      .describe(doc)
      .set_num_inputs(1)
      .add_argument("a", "NDArray", "Input array.")
      .set_params<ReduceParam>()
      .set_attr<FInferShape>("FInferShape", shape)
      .set_attr<FInferType>("FInferType", type)
      .set_attr<TStridedInputs>("TStridedInputs", true)
      .set_attr<FCompute>("FCompute<cpu>", compute)
      .set_attr<FCompute>("FCompute<gpu>", compute);  // the engine's reductions run on either
}

template <typename P>
void register_backward(const char* name, const char* doc, uint32_t num_inputs, FCompute compute) {
  Op& op = OpRegistry::global()
               .register_op(name)
               .describe(doc)
               .set_num_inputs(num_inputs)
               .add_argument("ograd", "NDArray", "Gradient of the output.")
               .add_argument("data", "NDArray", "Forward input.");
  if (num_inputs > 2) op.add_argument("out", "NDArray", "Forward output.");
  op.template set_params<P>();
  const FInferShape infer_shape = backward_shape<P>;
  op.set_attr<FInferShape>("FInferShape", infer_shape)
      .set_attr<FInferType>("FInferType", backward_type)
      .set_attr<TIsBackward>("TIsBackward", true)
      .set_attr<TStridedInputs>("TStridedInputs", true)
      .set_attr<FCompute>("FCompute<cpu>", compute)
      .set_attr<FCompute>("FCompute<gpu>", compute);
}

[[maybe_unused]] const bool registered = [] {
  register_sum_like("_np_sum", "Sum of array elements over the given axes.", sum_shape<true>,
                    sum_type<SumKind::kSum>, sum_compute<SumKind::kSum>)
      .set_attr<FGradient>("FGradient", ElemwiseGradUseIn{"_backward_sum"});
  register_sum_like("_np_prod", "Product of array elements over the given axes.", sum_shape<true>,
                    sum_type<SumKind::kProd>, sum_compute<SumKind::kProd>)
      .set_attr<FGradient>("FGradient", ElemwiseGradUseInOut{"_backward_prod"});
  register_sum_like("_np_mean", "Arithmetic mean over the given axes.", sum_shape<false>,
                    sum_type<SumKind::kMean>, sum_compute<SumKind::kMean>)
      .set_attr<FGradient>("FGradient", ElemwiseGradUseIn{"_backward_mean"});

  for (bool is_max : {true, false}) {
    OpRegistry::global()
        .register_op(is_max ? "_np_max" : "_np_min")
        .describe(is_max ? "Maximum over the given axes; NaN propagates."
                         : "Minimum over the given axes; NaN propagates.")
        .add_alias(is_max ? "_np_amax" : "_np_amin")
        .set_num_inputs(1)
        .add_argument("a", "NDArray", "Input array.")
        .set_params<MinMaxParam>()
        .set_attr<FInferShape>("FInferShape", minmax_shape)
        .set_attr<FInferType>("FInferType", minmax_type)
        .set_attr<TStridedInputs>("TStridedInputs", true)
        .set_attr<FCompute>("FCompute<cpu>", is_max ? FCompute(minmax_compute<true>)
                                                    : FCompute(minmax_compute<false>))
        .set_attr<FCompute>("FCompute<gpu>", is_max ? FCompute(minmax_compute<true>)
                                                    : FCompute(minmax_compute<false>))
        .set_attr<FGradient>("FGradient",
                             ElemwiseGradUseInOut{is_max ? "_backward_max" : "_backward_min"});
    OpRegistry::global()
        .register_op(is_max ? "_np_argmax" : "_np_argmin")
        .describe(is_max ? "Index of the (first) maximum along an axis, or of the flattened array."
                         : "Index of the (first) minimum along an axis, or of the flattened array.")
        .set_num_inputs(1)
        .add_argument("a", "NDArray", "Input array.")
        .set_params<ArgReduceParam>()
        .set_attr<FInferShape>("FInferShape", arg_shape)
        .set_attr<FInferType>("FInferType", int64_type)
        .set_attr<FCompute>("FCompute<cpu>",
                            is_max ? FCompute(arg_compute<true>) : FCompute(arg_compute<false>))
        .set_attr<FCompute>("FCompute<gpu>",
                            is_max ? FCompute(arg_compute<true>) : FCompute(arg_compute<false>))
        .set_attr<FGradient>("FGradient", MakeZeroGradNodes);
  }

  register_backward<ReduceParam>("_backward_sum", "Backward of sum: (ograd, data) -> grad.", 2,
                                 backward_sum_compute<false>);
  register_backward<ReduceParam>("_backward_mean", "Backward of mean: (ograd, data) -> grad.", 2,
                                 backward_sum_compute<true>);
  // Both are linear in ograd and read only data's shape, so their own gradient is the forward
  // reduction of the incoming gradient (its adjoint): that makes sum and mean differentiable
  // to any order.
  for (auto [bwd, fwd] :
       {std::pair{"_backward_sum", "_np_sum"}, std::pair{"_backward_mean", "_np_mean"}}) {
    const Op* fwd_op = Op::get(fwd);
    const_cast<Op*>(Op::get(bwd))
        ->set_attr<FGradient>(
            "FGradient", [fwd_op](const NodePtr& n, const std::vector<NodeEntry>& og) {
              auto reduce = std::make_shared<Node>();
              reduce->attrs = n->attrs;
              reduce->attrs.op = fwd_op;
              reduce->inputs = {og[0]};
              return std::vector<NodeEntry>{NodeEntry{reduce, 0, 0},
                                            make_node("_np_zeros_like", {n->inputs[1]})};
            });
  }
  register_backward<ReduceParam>("_backward_prod", "Backward of prod: (ograd, data, out) -> grad.",
                                 3, backward_prod_compute);
  register_backward<MinMaxParam>("_backward_max", "Backward of max: (ograd, data, out) -> grad.", 3,
                                 backward_minmax_compute);
  register_backward<MinMaxParam>("_backward_min", "Backward of min: (ograd, data, out) -> grad.", 3,
                                 backward_minmax_compute);
  // The backward of max / min is linear in ograd: M * ograd broadcast back, M the mask of the
  // extremes (ties share, as the backward op decides). Its gradient is the reduction sum(M *
  // h), with M the backward op's own result for a unit ograd; none reaches data or out (M is
  // piecewise constant in them). max / min then differentiate to any order.
  for (const char* bwd : {"_backward_max", "_backward_min"})
    const_cast<Op*>(Op::get(bwd))
        ->set_attr<FGradient>("FGradient", [](const NodePtr& n, const std::vector<NodeEntry>& og) {
          auto mask = std::make_shared<Node>();
          mask->attrs = n->attrs;
          mask->inputs = {make_node("_np_ones_like", {n->inputs[0]}), n->inputs[1], n->inputs[2]};
          const auto& p = n->attrs.get<MinMaxParam>();
          const std::map<std::string, std::string> sum_params{
              {"axis", p.axis ? p.axis->str() : "None"}, {"keepdims", p.keepdims ? "1" : "0"}};
          return std::vector<NodeEntry>{
              make_node("_np_sum", {make_node("_np_multiply", {NodeEntry{mask, 0, 0}, og[0]})},
                        sum_params),
              make_node("_np_zeros_like", {n->inputs[1]}),
              make_node("_np_zeros_like", {n->inputs[2]})};
        });
  register_logical_reductions();
  return true;
}();

}  // namespace
}  // namespace ndx
#endif  // HWY_ONCE
