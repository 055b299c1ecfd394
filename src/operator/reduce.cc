// Reductions (_np_sum, _np_prod, _np_mean, _np_max, _np_min, _np_argmax, _np_argmin) and their
// backward ops. One generic kernel walks the input with the accumulator's strides set to 0 on the
// reduced axes (as sum_to_shape does), then stores the accumulators honouring the request type.
#include <algorithm>
#include <limits>
#include <memory>
#include <optional>

#include "ndx/graph.h"
#include "operator/kernel_util.h"

namespace ndx {
namespace {

using kernel::acc_t;

// ---- params ----
struct ReduceParam {  // sum, prod, mean
  std::optional<Shape> axis;
  bool keepdims = false;
  std::optional<DType> dtype;
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
  }
};

struct MinMaxParam {  // max, min
  std::optional<Shape> axis;
  bool keepdims = false;
  static void declare(ParamDecl<MinMaxParam>& d) {
    d.field("axis", &MinMaxParam::axis)
        .set_default(std::nullopt)
        .describe("Axis or axes to reduce over; None reduces over all axes.");
    d.field("keepdims", &MinMaxParam::keepdims)
        .set_default(false)
        .describe("Keep the reduced axes as dimensions of size one.");
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
    if (mask[i]) n *= in[i];
  return n;
}

// A view of `g` (shaped like the forward output) with the input's ndim: the reduced dims get size 1
// and stride 0, so it broadcasts back against the input.
TBlob expand_to_keepdims(const TBlob& g, const Shape& in, const std::vector<bool>& mask,
                         bool keepdims) {
  TBlob v = g;
  v.shape = keepdims_shape(in, mask);
  v.strides = Shape::filled(in.ndim(), 0);
  int j = 0;
  for (int i = 0; i < in.ndim(); ++i) {
    if (mask[i]) {
      if (keepdims) ++j;
      continue;
    }
    v.strides[i] = g.strides[j++];
  }
  return v;
}

// ---- the generic reduction kernel ----
// acc[k] = comb(acc[k], x) over the input; out[k] (req) fin(acc[k]).
template <typename TI, typename TO, typename A, typename Comb, typename Fin>
void reduce_run(const TBlob& in, const TBlob& out, OpReqType req, const Shape& kd, A init,
                Comb comb, Fin fin) {
  if (req == kNullOp) return;
  // Not std::vector: A may be bool.
  const size_t n = static_cast<size_t>(kd.size());
  std::unique_ptr<A[]> acc(new A[n]);
  std::fill(acc.get(), acc.get() + n, init);
  Shape acc_strides = broadcast_strides(kd, contiguous_strides(kd), in.shape);
  const TI* ip = in.ptr<TI>();
  for_each_run<2>(in.shape, {&acc_strides, &in.strides}, [&](const StridedRun<2>& r) {
    A* a = acc.get() + r.offset[0];
    const TI* x = ip + r.offset[1];
    if (r.stride[0] == 0) {
      A v = *a;
      for (int64_t i = 0; i < r.length; ++i)
        v = comb(v, static_cast<compute_t<TI>>(x[i * r.stride[1]]));
      *a = v;
    } else {
      for (int64_t i = 0; i < r.length; ++i)
        a[i * r.stride[0]] =
            comb(a[i * r.stride[0]], static_cast<compute_t<TI>>(x[i * r.stride[1]]));
    }
  });
  TO* op = out.ptr<TO>();
  size_t k = 0;
  for_each_run<1>(out.shape, {&out.strides}, [&](const StridedRun<1>& r) {
    for (int64_t i = 0; i < r.length; ++i)
      kernel::store(op + r.offset[0] + i * r.stride[0], req,
                    static_cast<compute_t<TO>>(fin(acc[k++])));
  });
}

enum class SumKind { kSum, kProd, kMean };

template <SumKind kind, typename TI, typename TO>
void sum_like(const TBlob& in, const TBlob& out, OpReqType req, const Shape& kd, int64_t count) {
  using A = acc_t<TI>;
  auto add = [](A a, compute_t<TI> v) { return kernel::wrap_add(a, static_cast<A>(v)); };
  auto mul = [](A a, compute_t<TI> v) { return kernel::wrap_mul(a, static_cast<A>(v)); };
  if constexpr (kind == SumKind::kSum) {
    reduce_run<TI, TO>(in, out, req, kd, A(0), add, [](A a) { return a; });
  } else if constexpr (kind == SumKind::kProd) {
    reduce_run<TI, TO>(in, out, req, kd, A(1), mul, [](A a) { return a; });
  } else {
    reduce_run<TI, TO>(in, out, req, kd, A(0), add, [count](A a) -> double {
      if constexpr (std::is_floating_point_v<A>) {
        return a / static_cast<double>(count);  // 0/0: nan, as NumPy's mean of nothing
      } else {
        return count ? static_cast<double>(a) / static_cast<double>(count) : 0.0;
      }
    });
  }
}

template <SumKind kind>
void sum_compute(const NodeAttrs& attrs, const OpContext&, const std::vector<TBlob>& in,
                 const std::vector<OpReqType>& req, const std::vector<TBlob>& out) {
  if (req[0] == kNullOp) return;
  const auto& p = attrs.get<ReduceParam>();
  auto mask = reduce_mask(op_name(attrs), p.axis, in[0].ndim(), kind != SumKind::kMean);
  Shape kd = keepdims_shape(in[0].shape, mask);
  int64_t count = reduced_count(in[0].shape, mask);
  std::vector<NDArray> keep;
  if (kind == SumKind::kMean && is_float(out[0].dtype) && !is_float(in[0].dtype)) {
    // Integer means accumulate from float64 values, then round once into the output dtype.
    TBlob x = kernel::cast_blob(in[0], DType::kFloat64, &keep);
    NDX_FLOAT_SWITCH(out[0].dtype, T, { sum_like<kind, double, T>(x, out[0], req[0], kd, count); });
    return;
  }
  // NumPy casts the input to the result dtype and reduces in it (accumulating floats in double).
  TBlob x = kernel::cast_blob(in[0], out[0].dtype, &keep);
  NDX_DTYPE_SWITCH(out[0].dtype, T, { sum_like<kind, T, T>(x, out[0], req[0], kd, count); });
}

template <bool kMax>
struct Extremum {
  template <typename C>
  static C init() {
    if constexpr (std::is_floating_point_v<C>)
      return kMax ? -std::numeric_limits<C>::infinity() : std::numeric_limits<C>::infinity();
    else
      return kMax ? std::numeric_limits<C>::lowest() : std::numeric_limits<C>::max();
  }
  template <typename C>
  static C comb(C a, C v) {
    if constexpr (std::is_floating_point_v<C>) {
      if (std::isnan(a)) return a;
      if (std::isnan(v)) return v;
    }
    if constexpr (kMax)
      return v > a ? v : a;
    else
      return v < a ? v : a;
  }
};

template <bool kMax>
void minmax_compute(const NodeAttrs& attrs, const OpContext&, const std::vector<TBlob>& in,
                    const std::vector<OpReqType>& req, const std::vector<TBlob>& out) {
  if (req[0] == kNullOp) return;
  const auto& p = attrs.get<MinMaxParam>();
  auto mask = reduce_mask(op_name(attrs), p.axis, in[0].ndim(), true);
  Shape kd = keepdims_shape(in[0].shape, mask);
  NDX_DTYPE_SWITCH(in[0].dtype, T, {
    using C = compute_t<T>;
    reduce_run<T, T>(
        in[0], out[0], req[0], kd, Extremum<kMax>::template init<C>(),
        [](C a, C v) { return Extremum<kMax>::comb(a, v); }, [](C a) { return a; });
  });
}

// Index of the first max (min) of n elements at stride s; a NaN counts as the extremum.
template <bool kMax, typename T>
int64_t arg_scan(const T* x, int64_t n, int64_t s) {
  using C = compute_t<T>;
  C best = static_cast<C>(x[0]);
  int64_t idx = 0;
  if constexpr (std::is_floating_point_v<C>) {
    if (std::isnan(best)) return 0;
  }
  for (int64_t i = 1; i < n; ++i) {
    C v = static_cast<C>(x[i * s]);
    if constexpr (std::is_floating_point_v<C>) {
      if (std::isnan(v)) return i;
    }
    if (kMax ? v > best : v < best) best = v, idx = i;
  }
  return idx;
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

template <bool kMax>
void arg_compute(const NodeAttrs& attrs, const OpContext&, const std::vector<TBlob>& in,
                 const std::vector<OpReqType>& req, const std::vector<TBlob>& out) {
  if (req[0] == kNullOp) return;
  const auto& p = attrs.get<ArgReduceParam>();
  const TBlob& x = in[0];
  std::optional<int> ax = arg_axis(op_name(attrs), p.axis, x.ndim());
  int64_t* op = out[0].ptr<int64_t>();
  NDX_DTYPE_SWITCH(x.dtype, T, {
    const T* xp = x.ptr<T>();
    if (!ax) {
      // Contiguous input (this op does not take strides): scan the flat array.
      kernel::store(op, req[0], arg_scan<kMax>(xp, x.size(), 1));
    } else {
      const int a = *ax;
      Shape outer = x.shape;
      outer[a] = 1;
      Shape os = Shape::filled(x.ndim(), 0);
      for (int i = 0, j = 0; i < x.ndim(); ++i) {
        if (i == a) {
          if (p.keepdims) ++j;
          continue;
        }
        os[i] = out[0].strides[j++];
      }
      const int64_t n = x.shape[a], s = x.strides[a];
      for_each_run<2>(outer, {&os, &x.strides}, [&](const StridedRun<2>& r) {
        for (int64_t i = 0; i < r.length; ++i)
          kernel::store(op + r.offset[0] + i * r.stride[0], req[0],
                        arg_scan<kMax>(xp + r.offset[1] + i * r.stride[1], n, s));
      });
    }
  });
}

// ---- shape and dtype inference ----
template <bool kScalarAxisOk>
bool sum_shape(const NodeAttrs& attrs, ShapeVector* in, ShapeVector* out) {
  if (!(*in)[0].is_known()) return false;
  const auto& p = attrs.get<ReduceParam>();
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
    if (mask[i] && s[i] == 0)
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
  assign_type(attrs, &(*out)[0], t, "output", 0);
  return true;
}

bool same_type(const NodeAttrs& attrs, DTypeVector* in, DTypeVector* out) {
  if ((*in)[0] == DType::kUnknown) return false;
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
  assign_type(attrs, &(*out)[0], (*in)[0], "output", 0);
  return true;
}

template <bool kMean>
void backward_sum_compute(const NodeAttrs& attrs, const OpContext&, const std::vector<TBlob>& in,
                          const std::vector<OpReqType>& req, const std::vector<TBlob>& out) {
  if (req[0] == kNullOp) return;
  ReduceSpec r = backward_spec<ReduceParam>(attrs, in[1].shape);
  TBlob g = expand_to_keepdims(in[0], in[1].shape, r.mask, r.keepdims);
  const int64_t count = reduced_count(in[1].shape, r.mask);
  NDX_DTYPE_SWITCH(out[0].dtype, T, {
    if constexpr (std::is_same_v<T, bool>) {
      type_error("[", op_name(attrs), "] gradients of boolean arrays are not defined");
    } else {
      using C = compute_t<T>;
      kernel::map1<T, T>(g, out[0], req[0], [count](C v) -> C {
        if constexpr (kMean)
          return static_cast<C>(v / static_cast<C>(count));  // count > 0 whenever data is nonempty
        else
          return v;
      });
    }
  });
}

template <typename T>
void backward_prod_typed(const TBlob& g, const TBlob& x, const TBlob& out, OpReqType req,
                         const Shape& kd) {
  using C = compute_t<T>;
  using A = acc_t<T>;
  // Per output slot: product of the nonzero inputs and count of zeros, so zeros get exact grads.
  std::vector<A> nzp(static_cast<size_t>(kd.size()), A(1));
  std::vector<int64_t> zeros(static_cast<size_t>(kd.size()), 0);
  Shape acc_strides = broadcast_strides(kd, contiguous_strides(kd), x.shape);
  const T* xp = x.ptr<T>();
  for_each_run<2>(x.shape, {&acc_strides, &x.strides}, [&](const StridedRun<2>& r) {
    for (int64_t i = 0; i < r.length; ++i) {
      int64_t k = r.offset[0] + i * r.stride[0];
      C v = static_cast<C>(xp[r.offset[1] + i * r.stride[1]]);
      if (v == C(0))
        ++zeros[k];
      else
        nzp[k] = kernel::wrap_mul(nzp[k], static_cast<A>(v));
    }
  });
  Shape gs = broadcast_strides(g.shape, g.strides, x.shape);
  const T* gp = g.ptr<T>();
  T* op = out.ptr<T>();
  for_each_run<4>(x.shape, {&out.strides, &acc_strides, &gs, &x.strides},
                  [&](const StridedRun<4>& r) {
                    for (int64_t i = 0; i < r.length; ++i) {
                      int64_t k = r.offset[1] + i * r.stride[1];
                      C v = static_cast<C>(xp[r.offset[3] + i * r.stride[3]]);
                      A others = A(0);
                      if (zeros[k] == 0) {
                        if constexpr (std::is_integral_v<A>) {
                          // -1 divides exactly; avoids INT64_MIN / -1.
                          others = std::is_signed_v<A> && v == C(-1) ? kernel::wrap_neg(nzp[k])
                                                                     : nzp[k] / static_cast<A>(v);
                        } else {
                          others = nzp[k] / static_cast<A>(v);
                        }
                      } else if (zeros[k] == 1 && v == C(0)) {
                        others = nzp[k];
                      }
                      C gv = static_cast<C>(gp[r.offset[2] + i * r.stride[2]]);
                      kernel::store(op + r.offset[0] + i * r.stride[0], req,
                                    kernel::wrap_mul(gv, static_cast<C>(others)));
                    }
                  });
}

void backward_prod_compute(const NodeAttrs& attrs, const OpContext&, const std::vector<TBlob>& in,
                           const std::vector<OpReqType>& req, const std::vector<TBlob>& out) {
  if (req[0] == kNullOp) return;
  ReduceSpec r = backward_spec<ReduceParam>(attrs, in[1].shape);
  TBlob g = expand_to_keepdims(in[0], in[1].shape, r.mask, r.keepdims);
  Shape kd = keepdims_shape(in[1].shape, r.mask);
  std::vector<NDArray> keep;
  TBlob x = kernel::cast_blob(in[1], out[0].dtype, &keep);
  NDX_DTYPE_SWITCH(out[0].dtype, T, {
    if constexpr (std::is_same_v<T, bool>) {
      type_error("[", op_name(attrs), "] gradients of boolean arrays are not defined");
    } else {
      backward_prod_typed<T>(g, x, out[0], req[0], kd);
    }
  });
}

// grad = ograd where data equals the (broadcast) result, else 0.
void backward_minmax_compute(const NodeAttrs& attrs, const OpContext&, const std::vector<TBlob>& in,
                             const std::vector<OpReqType>& req, const std::vector<TBlob>& out) {
  if (req[0] == kNullOp) return;
  ReduceSpec r = backward_spec<MinMaxParam>(attrs, in[1].shape);
  const Shape& shape = in[1].shape;
  std::vector<NDArray> keep;
  TBlob x = kernel::cast_blob(in[1], out[0].dtype, &keep);
  TBlob y = kernel::cast_blob(in[2], out[0].dtype, &keep);
  TBlob g = expand_to_keepdims(in[0], shape, r.mask, r.keepdims);
  y = expand_to_keepdims(y, shape, r.mask, r.keepdims);
  Shape gs = broadcast_strides(g.shape, g.strides, shape);
  Shape ys = broadcast_strides(y.shape, y.strides, shape);
  NDX_DTYPE_SWITCH(out[0].dtype, T, {
    if constexpr (std::is_same_v<T, bool>) {
      type_error("[", op_name(attrs), "] gradients of boolean arrays are not defined");
    } else {
      using C = compute_t<T>;
      const T* gp = g.ptr<T>();
      const T* xp = x.ptr<T>();
      const T* yp = y.ptr<T>();
      T* op = out[0].ptr<T>();
      for_each_run<4>(shape, {&out[0].strides, &gs, &x.strides, &ys},
                      [&](const StridedRun<4>& run) {
                        for (int64_t i = 0; i < run.length; ++i) {
                          bool hit = static_cast<C>(xp[run.offset[2] + i * run.stride[2]]) ==
                                     static_cast<C>(yp[run.offset[3] + i * run.stride[3]]);
                          C gv = hit ? static_cast<C>(gp[run.offset[1] + i * run.stride[1]]) : C(0);
                          kernel::store(op + run.offset[0] + i * run.stride[0], req[0], gv);
                        }
                      });
    }
  });
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
      .set_attr<FCompute>("FCompute<cpu>", compute);
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
      .set_attr<FCompute>("FCompute<cpu>", compute);
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
        .set_attr<FInferType>("FInferType", same_type)
        .set_attr<TStridedInputs>("TStridedInputs", true)
        .set_attr<FCompute>("FCompute<cpu>", is_max ? FCompute(minmax_compute<true>)
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
  return true;
}();

}  // namespace
}  // namespace ndx
