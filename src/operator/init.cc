// Creation ops: zeros, ones, full, empty, arange, linspace, eye, zeros_like, ones_like.
// Without a dtype they give the default float dtype (float32), as ndx does wherever NumPy
// would pick float64.
#include <cmath>

#include "kernel/blob.h"
#include "kernel/cast.h"
#include "kernel/gpu.h"
#include "kernel/parallel.h"
#include "ndx/graph.h"
#include "operator/kernel_util.h"

namespace ndx {
namespace {

struct InitParam {
  Shape shape;
  std::optional<DType> dtype;
  static void declare(ParamDecl<InitParam>& d) {
    d.field("shape", &InitParam::shape).set_default(Shape{}).describe("Shape of the new array.");
    d.field("dtype", &InitParam::dtype)
        .set_default(std::nullopt)
        .describe("Element type; None means the default float dtype (float32).");
  }
};

struct FullParam {
  Shape shape;
  std::optional<DType> dtype;
  double fill_value = 0;
  static void declare(ParamDecl<FullParam>& d) {
    d.field("shape", &FullParam::shape).set_default(Shape{}).describe("Shape of the new array.");
    d.field("dtype", &FullParam::dtype)
        .set_default(std::nullopt)
        .describe("Element type; None means the default float dtype (float32).");
    d.field("fill_value", &FullParam::fill_value).describe("Value of every element.");
  }
};

struct FullLikeParam {
  double fill_value = 0;
  static void declare(ParamDecl<FullLikeParam>& d) {
    d.field("fill_value", &FullLikeParam::fill_value).describe("Value of every element.");
  }
};

struct ArangeParam {
  double start = 0;
  std::optional<double> stop;
  double step = 1;
  std::optional<DType> dtype;
  static void declare(ParamDecl<ArangeParam>& d) {
    d.field("start", &ArangeParam::start)
        .describe("Start of the interval (or its end when stop is None).");
    d.field("stop", &ArangeParam::stop)
        .set_default(std::nullopt)
        .describe("End of the interval, excluded.");
    d.field("step", &ArangeParam::step).set_default(1.0).describe("Spacing between values.");
    d.field("dtype", &ArangeParam::dtype)
        .set_default(std::nullopt)
        .describe("Element type; None means the default float dtype (float32).");
  }
};

struct LinspaceParam {
  double start = 0, stop = 0;
  int64_t num = 50;
  bool endpoint = true;
  std::optional<DType> dtype;
  static void declare(ParamDecl<LinspaceParam>& d) {
    d.field("start", &LinspaceParam::start).describe("First value.");
    d.field("stop", &LinspaceParam::stop).describe("Last value (included when endpoint).");
    d.field("num", &LinspaceParam::num)
        .set_default(50)
        .set_lower_bound(0)
        .describe("Number of samples.");
    d.field("endpoint", &LinspaceParam::endpoint)
        .set_default(true)
        .describe("Whether stop is included.");
    d.field("dtype", &LinspaceParam::dtype)
        .set_default(std::nullopt)
        .describe("Element type; None means the default float dtype (float32).");
  }
};

struct EyeParam {
  int64_t N = 0;
  std::optional<int64_t> M;
  int64_t k = 0;
  std::optional<DType> dtype;
  static void declare(ParamDecl<EyeParam>& d) {
    d.field("N", &EyeParam::N).set_lower_bound(0).describe("Number of rows.");
    d.field("M", &EyeParam::M)
        .set_default(std::nullopt)
        .describe("Number of columns; None means N.");
    d.field("k", &EyeParam::k).set_default(0).describe("Diagonal: 0 main, >0 above, <0 below.");
    d.field("dtype", &EyeParam::dtype)
        .set_default(std::nullopt)
        .describe("Element type; None means the default float dtype (float32).");
  }
};

DType or_default(const std::optional<DType>& t) { return t ? *t : default_float_dtype(); }

void check_dims(const NodeAttrs& attrs, const Shape& shape) {
  for (int64_t d : shape)
    if (d < 0)
      value_error("[", op_name(attrs), "] negative dimensions are not allowed; got shape ",
                  shape.str());
}

template <typename P>
bool param_shape(const NodeAttrs& attrs, ShapeVector*, ShapeVector* out) {
  const P& p = attrs.get<P>();
  check_dims(attrs, p.shape);
  (*out)[0] = p.shape;
  return true;
}

// An integral fill value must fit an integer dtype (NumPy raises OverflowError).
bool full_type(const NodeAttrs& attrs, DTypeVector*, DTypeVector* out) {
  const auto& p = attrs.get<FullParam>();
  DType t = p.dtype ? *p.dtype : default_float_dtype();
  double v = p.fill_value;
  if (is_integer(t) && v == std::floor(v)) {
    double lo = 0, hi = 0;
    NDX_DTYPE_SWITCH(t, T, {
      lo = static_cast<double>(std::numeric_limits<T>::lowest());
      hi = static_cast<double>(std::numeric_limits<T>::max());
    });
    if (v < lo || v > hi)
      overflow_error("[full] Python integer ", static_cast<long long>(v), " out of bounds for ", t);
  }
  (*out)[0] = t;
  return true;
}

template <typename P>
bool param_type(const NodeAttrs& attrs, DTypeVector*, DTypeVector* out) {
  (*out)[0] = or_default(attrs.get<P>().dtype);
  return true;
}

int64_t arange_length(const NodeAttrs& attrs, const ArangeParam& p) {
  double start = p.stop ? p.start : 0, stop = p.stop ? *p.stop : p.start;
  if (p.step == 0)
    raise(ErrorKind::kZeroDivisionError, "[", op_name(attrs),
          "] division by zero: parameter 'step' is 0");
  if (!std::isfinite(start) || !std::isfinite(stop) || !std::isfinite(p.step))
    value_error("[", op_name(attrs), "] start, stop and step must be finite");
  double n = std::ceil((stop - start) / p.step);
  if (n > 1e15) value_error("[", op_name(attrs), "] Maximum allowed size exceeded");
  return n > 0 ? static_cast<int64_t>(n) : 0;
}

// out[i] (req) value_of(i), for a contiguous output: threads over blocks, and the request
// tested once per block rather than per element (a 4G-element int8 linspace took 34 s).
template <typename F>
void fill_indexed(const TBlob& out, OpReqType req, F value_of) {
  if (req == kNullOp) return;
  if (is_complex(out.dtype)) {  // the real parts filled, then cast in: imaginary parts 0
    NDArray real(out.shape, real_dtype(out.dtype), out.device);
    fill_indexed(kernel::to_blob(real), kWriteTo, value_of);
    return kernel::copy(kernel::to_blob(real), out, req);
  }
  NDX_DTYPE_SWITCH(out.dtype, T, {
    T* p = out.ptr<T>();
    auto value = [&](int64_t i) {
      if constexpr (std::is_same_v<T, bool>) {
        return value_of(i) != 0;
      } else if constexpr (!std::is_same_v<T, compute_t<T>>) {
        return T(value_of(i));  // a 16-bit float: rounded once from the double, as NumPy's
      } else {
        return kernel::from_double<T>(value_of(i));
      }
    };
    kernel::parallel_for(out.size(), kernel::kGrain, [&](int64_t begin, int64_t end) {
      if (req == kAddTo) {
        for (int64_t i = begin; i < end; ++i) kernel::store(p + i, kAddTo, value(i));
      } else {
        for (int64_t i = begin; i < end; ++i) p[i] = static_cast<T>(value(i));
      }
    });
  });
}

// NumPy's integer arange (PyArray_ArangeObj): its first two values are int(start) and
// int(start + step), each checked against the dtype's range (OverflowError); the others
// repeat their difference in the dtype's own arithmetic, so they wrap. arange(0, 5, 0.5,
// dtype=int32) is ten zeros, as NumPy documents.
struct IntegerArange {
  double first = 0, second = 0;
};

IntegerArange integer_arange(const ArangeParam& p) {
  const double start = p.stop ? p.start : 0;
  return {std::trunc(start), std::trunc(start + p.step)};
}

// The dtype's range, and the span its values wrap around (2^bits).
void integer_range(DType t, double* lo, double* hi, double* span) {
  NDX_DTYPE_SWITCH(t, T, {
    *lo = static_cast<double>(std::numeric_limits<T>::lowest());
    *hi = static_cast<double>(std::numeric_limits<T>::max());
    *span = std::ldexp(1.0, 8 * static_cast<int>(sizeof(T)));
  });
}

// arange's dtype, and NumPy's errors for integer and bool results it cannot hold.
bool arange_type(const NodeAttrs& attrs, DTypeVector*, DTypeVector* out) {
  const auto& p = attrs.get<ArangeParam>();
  const DType t = or_default(p.dtype);
  const int64_t n = arange_length(attrs, p);
  if (t == DType::kBool && n > 2)
    type_error("[", op_name(attrs),
               "] arange() is only supported for booleans when the result has at most length 2; "
               "its length is ",
               n);
  if (is_integer(t) && n > 0) {
    double lo, hi, span;
    integer_range(t, &lo, &hi, &span);
    const IntegerArange v = integer_arange(p);
    for (double x : {v.first, v.second}) {
      if (x < lo || x > hi)
        overflow_error("[", op_name(attrs), "] Python integer ", static_cast<long long>(x),
                       " out of bounds for ", t);
      if (n == 1) break;  // (NumPy sets the second value only when there is one)
    }
  }
  (*out)[0] = t;
  return true;
}

// v rounded to the dtype t (a float dtype), as a double.
double rounded_to(DType t, double v) {
  double r = v;
  NDX_DTYPE_SWITCH(t, T, {
    if constexpr (std::is_floating_point_v<compute_t<T>>)
      r = static_cast<double>(static_cast<compute_t<T>>(T(v)));
  });
  return r;
}

// arange, linspace and eye: their values as index_fill's arguments, filled on either device
// (the host's loop computes what kernel/cuda/index.cu's kernel does).
kernel::gpu::IndexFillArgs arange_args(const NodeAttrs& attrs, const TBlob& out) {
  const auto& p = attrs.get<ArangeParam>();
  kernel::gpu::IndexFillArgs a;
  a.start = p.stop ? p.start : 0;
  a.step = p.step;
  if (is_integer(out.dtype)) {
    const IntegerArange v = integer_arange(p);
    a.start = v.first;
    a.step = v.second - v.first;
    double hi;
    integer_range(out.dtype, &a.wrap_low, &hi, &a.wrap_span);
  } else if (is_float(out.dtype)) {
    // NumPy's float fill: values 0 and 1 are start and start + step in the dtype, the others
    // start + i * delta with delta their difference, in float32 arithmetic for the 16- and
    // 32-bit floats. Computing start + i * step in double gave other last bits: 11 of the 17
    // values of arange(-5.5, 7, 0.77) in float64, 3784 of 3847 in float32 for (1000, 1050,
    // 0.013).
    const double first = rounded_to(out.dtype, a.start);
    a.second = rounded_to(out.dtype, a.start + p.step);
    a.pin_second = true;
    a.single = out.dtype != DType::kFloat64;
    a.start = first;
    a.step = a.single
                 ? static_cast<double>(static_cast<float>(a.second) - static_cast<float>(first))
                 : a.second - first;
  }
  return a;
}

kernel::gpu::IndexFillArgs linspace_args(const NodeAttrs& attrs, const TBlob& out) {
  const auto& p = attrs.get<LinspaceParam>();
  const int64_t div = p.endpoint ? p.num - 1 : p.num;
  kernel::gpu::IndexFillArgs a;
  a.kind = kernel::gpu::IndexFill::kLinspace;
  a.start = p.start;
  a.stop = p.stop;
  a.step = div > 0 ? (p.stop - p.start) / div : 0;
  a.pin_last = p.endpoint;          // NumPy pins the endpoint exactly
  a.floor = is_integer(out.dtype);  // NumPy 2 rounds toward -inf
  return a;
}

kernel::gpu::IndexFillArgs eye_args(const NodeAttrs& attrs, const TBlob& out) {
  kernel::gpu::IndexFillArgs a;
  a.kind = kernel::gpu::IndexFill::kEye;
  a.cols = out.shape[1];
  a.k = attrs.get<EyeParam>().k;
  return a;
}

double index_value(const kernel::gpu::IndexFillArgs& a, int64_t i, int64_t total) {
  using kernel::gpu::IndexFill;
  if (a.kind == IndexFill::kEye) return (i % a.cols) - (i / a.cols) == a.k ? 1.0 : 0.0;
  double v;
  if (a.pin_second && i <= 1)  // (value 0 too: an infinite start makes step NaN)
    v = i == 0 ? a.start : a.second;
  else if (a.single)  // float32 arithmetic (no contraction: ISO C++ builds)
    v = static_cast<float>(a.start) + static_cast<float>(i) * static_cast<float>(a.step);
  else
    v = (a.pin_last && i == total - 1 && i > 0) ? a.stop : a.start + i * a.step;
  if (a.floor) v = std::floor(v);
  if (a.wrap_span > 0) v -= a.wrap_span * std::floor((v - a.wrap_low) / a.wrap_span);
  return v;
}

template <kernel::gpu::IndexFillArgs (*kArgs)(const NodeAttrs&, const TBlob&)>
void index_fill_compute(const NodeAttrs& attrs, const OpContext&, const std::vector<TBlob>&,
                        const std::vector<OpReqType>& req, const std::vector<TBlob>& out) {
  if (req[0] == kNullOp) return;
  const kernel::gpu::IndexFillArgs a = kArgs(attrs, out[0]);
  if (out[0].device.is_gpu()) return kernel::gpu::index_fill(out[0], a, req[0] == kAddTo);
  const int64_t total = out[0].size();
  fill_indexed(out[0], req[0], [&](int64_t i) { return index_value(a, i, total); });
}

void fill_constant(const TBlob& out, OpReqType req, double v) {
  if (req == kNullOp) return;
  if (req != kAddTo) return kernel::fill(out, v);
  const NDArray value = NDArray::scalar(v, DType::kFloat64).to(out.device);
  kernel::copy(kernel::to_blob(value), out, req);
}

// The same kernel for both devices: these only fill, and kernel::fill runs on either.
Op& on_both(Op& op, const FCompute& f, int plevel = 10) {
  return op.set_attr<FCompute>("FCompute<cpu>", f, plevel)
      .set_attr<FCompute>("FCompute<gpu>", f, plevel);
}

Op& register_init(const char* name, const char* doc) {
  return OpRegistry::global().register_op(name).describe(doc).set_num_inputs(0);
}

Op& register_like(const char* name, const char* doc, double value) {
  Op& op = OpRegistry::global()
               .register_op(name)
               .describe(doc)
               .set_num_inputs(1)
               .add_argument("a", "NDArray", "The array whose shape and dtype the result takes.")
               .set_attr<FInferShape>("FInferShape", ElemwiseShape<1, 1>)
               .set_attr<FInferType>("FInferType", ElemwiseType<1, 1>)
               .set_attr<TStridedInputs>("TStridedInputs", true)
               .set_attr<bool>("TElementwise", true)  // a fill of any block
               .set_attr<FGradient>("FGradient", MakeZeroGradNodes);
  return on_both(op, [value](const NodeAttrs&, const OpContext&, const std::vector<TBlob>&,
                             const std::vector<OpReqType>& req, const std::vector<TBlob>& out) {
    fill_constant(out[0], req[0], value);
  });
}

[[maybe_unused]] const bool registered = [] {
  auto constant = [](double v) -> FCompute {
    return [v](const NodeAttrs&, const OpContext&, const std::vector<TBlob>&,
               const std::vector<OpReqType>& req,
               const std::vector<TBlob>& out) { fill_constant(out[0], req[0], v); };
  };
  on_both(register_init("_npi_zeros", "A new array of zeros.")
              .set_params<InitParam>()
              .set_attr<FInferShape>("FInferShape", param_shape<InitParam>)
              .set_attr<FInferType>("FInferType", param_type<InitParam>),
          constant(0));
  on_both(register_init("_npi_ones", "A new array of ones.")
              .set_params<InitParam>()
              .set_attr<FInferShape>("FInferShape", param_shape<InitParam>)
              .set_attr<FInferType>("FInferType", param_type<InitParam>),
          constant(1));
  on_both(register_init("_npi_empty", "A new array whose contents are not initialized.")
              .set_params<InitParam>()
              .set_attr<FInferShape>("FInferShape", param_shape<InitParam>)
              .set_attr<FInferType>("FInferType", param_type<InitParam>),
          [](const NodeAttrs&, const OpContext&, const std::vector<TBlob>&,
             const std::vector<OpReqType>&, const std::vector<TBlob>&) {});
  on_both(register_init("_npi_full", "A new array filled with fill_value.")
              .set_params<FullParam>()
              .set_attr<FInferShape>("FInferShape", param_shape<FullParam>)
              .set_attr<FInferType>("FInferType", full_type),
          [](const NodeAttrs& attrs, const OpContext&, const std::vector<TBlob>&,
             const std::vector<OpReqType>& req, const std::vector<TBlob>& out) {
            fill_constant(out[0], req[0], attrs.get<FullParam>().fill_value);
          });
  Op& op_arange =
      register_init("_npi_arange", "Evenly spaced values in [start, stop) with the given step.")
          .set_params<ArangeParam>()
          .set_attr<FInferShape>("FInferShape",
                                 [](const NodeAttrs& attrs, ShapeVector*, ShapeVector* out) {
                                   (*out)[0] =
                                       Shape{arange_length(attrs, attrs.get<ArangeParam>())};
                                   return true;
                                 })
          .set_attr<FInferType>("FInferType", arange_type);
  on_both(op_arange, index_fill_compute<arange_args>);
  Op& op_linspace =
      register_init("_npi_linspace", "num evenly spaced samples from start to stop.")
          .set_params<LinspaceParam>()
          .set_attr<FInferShape>("FInferShape",
                                 [](const NodeAttrs& attrs, ShapeVector*, ShapeVector* out) {
                                   (*out)[0] = Shape{attrs.get<LinspaceParam>().num};
                                   return true;
                                 })
          .set_attr<FInferType>("FInferType", param_type<LinspaceParam>);
  on_both(op_linspace, index_fill_compute<linspace_args>);
  Op& op_eye =
      register_init("_npi_eye", "A 2-d array with ones on the k-th diagonal and zeros elsewhere.")
          .set_params<EyeParam>()
          .set_attr<FInferShape>("FInferShape",
                                 [](const NodeAttrs& attrs, ShapeVector*, ShapeVector* out) {
                                   const auto& p = attrs.get<EyeParam>();
                                   int64_t m = p.M ? *p.M : p.N;
                                   if (m < 0)
                                     value_error("[eye] parameter 'M' must be >= 0, got ", m);
                                   (*out)[0] = Shape{p.N, m};
                                   return true;
                                 })
          .set_attr<FInferType>("FInferType", param_type<EyeParam>);
  on_both(op_eye, index_fill_compute<eye_args>);
  register_like("_np_zeros_like", "An array of zeros with the shape and dtype of a.", 0)
      .add_alias("zeros_like");
  register_like("_np_ones_like", "An array of ones with the shape and dtype of a.", 1)
      .add_alias("ones_like");
  on_both(
      register_like("_np_full_like", "An array of fill_value with the shape and dtype of a.", 0)
          .set_params<FullLikeParam>(),
      [](const NodeAttrs& attrs, const OpContext&, const std::vector<TBlob>&,
         const std::vector<OpReqType>& req, const std::vector<TBlob>& out) {
        fill_constant(out[0], req[0], attrs.get<FullLikeParam>().fill_value);
      },
      11);
  return true;
}();

}  // namespace
}  // namespace ndx
