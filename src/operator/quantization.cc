// INT8 inference ops (MXNet's contrib quantization ops, the graph mx.contrib.quantization
// builds): quantize_v2, dequantize, requantize, quantized_fully_connected,
// quantized_elemwise_add, quantized_act and quantized_flatten, registered under MXNet's
// _contrib_* names. Quantization is symmetric and zero-point free, as MXNet's oneDNN backend
// does it (quantization.h); values round to nearest, ties to even, and saturate. quantize_v2
// and requantize give int8 in [-127, 127]; a quantized convolution or fully connected layer
// may give -128 (oneDNN saturates to the type), one step past its range, which dequantizes
// as well. The fully connected layer runs on oneDNN's INT8 inner product (VNNI where the
// processor has it), with the requantization and relu fused; without oneDNN the exact sums
// come from a double GEMM over the small integers (oneDNN scales its int32 results through
// float: within 6e-8 relative of the exact ones).
#include "operator/quantization.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif
#include <limits>
#include <mutex>
#include <type_traits>
#include <utility>

#include "kernel/blob.h"
#include "kernel/parallel.h"
#include "ndx/graph.h"
#include "operator/gemm.h"
#include "operator/kernel_util.h"
#include "operator/nn_check.h"

namespace ndx::quant {

constexpr double kInt32Levels = 2147483647.0;

double levels(DType t) {
  return t == DType::kUInt8 ? 255.0 : t == DType::kInt8 ? 127.0 : kInt32Levels;
}

double real_range(double lo, double hi) {
  const double r = std::max(std::fabs(lo), std::fabs(hi));
  return r > 0 && std::isfinite(r) ? r : 1.0;
}

std::vector<std::string> linear_input_names(bool bias) {
  if (bias)
    return {"data",       "weight",     "bias",     "min_data", "max_data",
            "min_weight", "max_weight", "min_bias", "max_bias"};
  return {"data", "weight", "min_data", "max_data", "min_weight", "max_weight"};
}

bool writes_directly(const TBlob& out, OpReqType req) {
  return (req == kWriteTo || req == kWriteInplace) && out.strides == contiguous_strides(out.shape);
}

double range_value(const NodeAttrs& attrs, const TBlob& b, const char* arg) {
  if (b.size() != 1)
    value_error("[", op_name(attrs), "] argument '", arg, "' must hold one value, got shape ",
                b.shape.str());
  std::vector<NDArray> keep;
  return *kernel::cast_blob(b, DType::kFloat64, &keep).ptr<double>();
}

void write_range(const std::vector<TBlob>& out, double lo, double hi) {
  *static_cast<float*>(out[1].dptr) = static_cast<float>(lo);
  *static_cast<float*>(out[2].dptr) = static_cast<float>(hi);
}

NDArray float_values(const TBlob& b, DType t) {
  std::vector<NDArray> keep;
  return kernel::as_array(kernel::cast_blob(b, t, &keep)).copy();
}

FGradient no_gradient() {
  return [](const NodePtr& n, const std::vector<NodeEntry>&) -> std::vector<NodeEntry> {
    not_implemented("[", n->attrs.op ? n->attrs.op->name : n->attrs.name,
                    "] is an INT8 inference op and has no gradient; train the float model");
  };
}

namespace {

void require_range_type(const NodeAttrs& attrs, DType t, const char* arg) {
  if (t != DType::kFloat32)
    type_error("[", op_name(attrs), "] argument '", arg, "' must be float32, got ", t);
}

void require_quantized(const NodeAttrs& attrs, DType t, const char* arg, bool int32_too = false) {
  if (t != DType::kInt8 && t != DType::kUInt8 && !(int32_too && t == DType::kInt32))
    type_error("[", op_name(attrs), "] argument '", arg, "' must be int8 or uint8",
               int32_too ? " or int32" : "", ", got ", t);
}

}  // namespace

void range_output_shapes(const NodeAttrs& attrs, ShapeVector* out) {
  assign_shape(attrs, &(*out)[1], Shape{1}, "min_output", 1);
  assign_shape(attrs, &(*out)[2], Shape{1}, "max_output", 2);
}

void expect_range_shape(const NodeAttrs& attrs, ShapeVector* in, int i, const char* arg,
                        int64_t channels) {
  Shape& s = (*in)[i];
  if (!s.is_known()) {
    s = Shape{1};
    return;
  }
  if (s != Shape{1} && s != Shape{channels})
    value_error("[", op_name(attrs), "] argument '", arg, "' must have shape (1,)",
                channels > 1 ? " or (" + std::to_string(channels) + ",)" : std::string(), ", got ",
                s.str());
}

void check_calib_range(const NodeAttrs& attrs, const std::optional<double>& lo,
                       const std::optional<double>& hi) {
  if (lo.has_value() != hi.has_value())
    value_error("[", op_name(attrs),
                "] min_calib_range and max_calib_range go together, got "
                "only one of them");
  if (lo && !(std::isfinite(*lo) && std::isfinite(*hi)))
    value_error("[", op_name(attrs), "] min_calib_range and max_calib_range must be finite, got ",
                *lo, " and ", *hi);
  if (lo && *lo > *hi)
    value_error("[", op_name(attrs), "] min_calib_range ", *lo, " exceeds max_calib_range ", *hi);
}

void linear_range_shapes(const NodeAttrs& attrs, const LinearInputs& at, int64_t channels,
                         ShapeVector* in, ShapeVector* out) {
  if (at.bias) nn_check::expect_shape(attrs, in, 2, Shape{channels}, "bias", " (channels,)");
  expect_range_shape(attrs, in, at.min_data(), "min_data");
  expect_range_shape(attrs, in, at.min_data() + 1, "max_data");
  expect_range_shape(attrs, in, at.min_weight(), "min_weight", channels);
  expect_range_shape(attrs, in, at.min_weight() + 1, "max_weight", channels);
  if ((*in)[at.min_weight()] != (*in)[at.min_weight() + 1])
    value_error("[", op_name(attrs), "] min_weight and max_weight must have the same shape, got ",
                (*in)[at.min_weight()].str(), " and ", (*in)[at.min_weight() + 1].str());
  if (at.bias) {
    expect_range_shape(attrs, in, at.min_bias(), "min_bias");
    expect_range_shape(attrs, in, at.min_bias() + 1, "max_bias");
  }
  range_output_shapes(attrs, out);
}

DType calibrated_type(const Requantize& p) {
  if (!p.min_calib_range || !p.max_calib_range) return DType::kInt32;
  return p.with_relu || *p.min_calib_range >= 0 ? DType::kUInt8 : DType::kInt8;
}

bool linear_types(const NodeAttrs& attrs, const Requantize& p, const LinearInputs& at,
                  DTypeVector* in, DTypeVector* out) {
  const DType data = (*in)[0];
  if (data == DType::kUnknown) return false;
  require_quantized(attrs, data, "data");
  if ((*in)[1] == DType::kUnknown) (*in)[1] = DType::kInt8;
  if ((*in)[1] != DType::kInt8)
    type_error("[", op_name(attrs), "] argument 'weight' must be int8, got ", (*in)[1]);
  if (at.bias) {
    DType& b = (*in)[2];
    if (b == DType::kUnknown) b = DType::kFloat32;
    if (b != DType::kInt8 && b != DType::kInt32 && b != DType::kFloat32)
      type_error("[", op_name(attrs), "] argument 'bias' must be int8, int32 or float32, got ", b);
  }
  const auto names = linear_input_names(at.bias);
  for (int i = at.min_data(); i < at.count(); ++i) {
    if ((*in)[i] == DType::kUnknown) (*in)[i] = DType::kFloat32;
    require_range_type(attrs, (*in)[i], names[i].c_str());
  }
  check_calib_range(attrs, p.min_calib_range, p.max_calib_range);
  (*out)[0] = calibrated_type(p);
  (*out)[1] = (*out)[2] = DType::kFloat32;
  return true;
}

void require_zero_based(const NodeAttrs& attrs, DType t, double lo, const char* arg) {
  if (t == DType::kUInt8 && lo < 0)
    value_error("[", op_name(attrs), "] uint8 ", arg, " has a range starting at ", lo,
                "; the INT8 ops take uint8 ranges from 0 (quantize_v2's), while quantize's "
                "affine uint8 (a zero point at its minimum) is for dequantize only");
}

LinearEpilogue linear_epilogue(const NodeAttrs& attrs, const Requantize& p, const LinearInputs& at,
                               int64_t channels, const std::vector<TBlob>& in) {
  LinearEpilogue e;
  const DType data = in[0].dtype;
  const double dlo = range_value(attrs, in[at.min_data()], "min_data");
  require_zero_based(attrs, data, dlo, "data");
  const double sd =
      real_range(dlo, range_value(attrs, in[at.min_data() + 1], "max_data")) / levels(data);
  // Weight scales, one per channel (a single range applies to all).
  std::vector<NDArray> keep;
  const TBlob wlo = kernel::cast_blob(in[at.min_weight()], DType::kFloat64, &keep);
  const TBlob whi = kernel::cast_blob(in[at.min_weight() + 1], DType::kFloat64, &keep);
  const bool per_channel = wlo.size() != 1;
  // A channel of zero weights (range 0) takes the largest live scale: any scale multiplies
  // its zeros alike, and the largest keeps the int32 output's unit (sd * max sw) that of the
  // live channels.
  std::vector<double> sw(static_cast<size_t>(channels));
  double live = 0;
  for (int64_t c = 0; c < channels; ++c) {
    const int64_t i = per_channel ? c : 0;
    const double r = std::max(std::fabs(wlo.ptr<double>()[i]), std::fabs(whi.ptr<double>()[i]));
    sw[c] = r > 0 && std::isfinite(r) ? r / 127.0 : 0.0;
    live = std::max(live, sw[c]);
  }
  for (double& v : sw) v = v > 0 ? v : live > 0 ? live : 1 / 127.0;
  // Real bias per channel, then in accumulator units (real / (sd * sw)).
  if (at.bias) {
    const TBlob b = kernel::cast_blob(in[2], DType::kFloat64, &keep);
    double unit = 1.0;
    if (in[2].dtype == DType::kInt8)
      unit = real_range(range_value(attrs, in[at.min_bias()], "min_bias"),
                        range_value(attrs, in[at.min_bias() + 1], "max_bias")) /
             127.0;
    e.bias.resize(static_cast<size_t>(channels));
    for (int64_t c = 0; c < channels; ++c) {
      const double v = b.ptr<double>()[c];
      if (!std::isfinite(v))
        value_error("[", op_name(attrs), "] argument 'bias' must be finite, got ", v,
                    " at channel ", c);
      e.bias[c] = static_cast<float>(in[2].dtype == DType::kInt32 ? v : v * unit / (sd * sw[c]));
    }
  }
  e.out_type = calibrated_type(p);
  double out_unit;  // the real value of one output step
  if (e.out_type == DType::kInt32) {
    out_unit = sd * *std::max_element(sw.begin(), sw.end());
    e.out_lo = static_cast<float>(-out_unit * kInt32Levels);
    e.out_hi = static_cast<float>(out_unit * kInt32Levels);
  } else {
    const double r = real_range(*p.min_calib_range, *p.max_calib_range);
    out_unit = r / levels(e.out_type);
    e.out_lo = e.out_type == DType::kUInt8 ? 0.f : static_cast<float>(-r);
    e.out_hi = static_cast<float>(r);
  }
  e.scale.resize(static_cast<size_t>(channels));
  for (int64_t c = 0; c < channels; ++c) e.scale[c] = static_cast<float>(sd * sw[c] / out_unit);
  e.spec.src_unsigned = data == DType::kUInt8;
  e.spec.dst = e.out_type == DType::kInt32  ? dnnl::Int8Dst::kS32
               : e.out_type == DType::kInt8 ? dnnl::Int8Dst::kS8
                                            : dnnl::Int8Dst::kU8;
  e.spec.relu = p.with_relu;
  return e;
}

namespace {

// x * s quantized to int8 ([-127, 127], symmetric) or uint8; nan gives 0. SSE2 (every
// x86-64) sixteen at a time: the scalar loop does not vectorize (GCC keeps its selects as
// branches, which mispredict on real data: 1.6 ns an element).
template <class T>
void quantize_block(const float* __restrict x, T* __restrict y, int64_t n, float s) {
  static_assert(sizeof(T) == 1);
  constexpr bool is_signed = std::is_same_v<T, int8_t>;
  constexpr float lo = is_signed ? -127.f : 0.f, hi = is_signed ? 127.f : 255.f;
  int64_t i = 0;
#if defined(__SSE2__)
  const __m128 vs = _mm_set1_ps(s), vlo = _mm_set1_ps(lo), vhi = _mm_set1_ps(hi);
  const auto to_int = [&](const float* p) {  // cvtps rounds to nearest even (MXCSR default)
    __m128 v = _mm_mul_ps(_mm_loadu_ps(p), vs);
    v = _mm_and_ps(v, _mm_cmpord_ps(v, v));  // nan -> 0
    return _mm_cvtps_epi32(_mm_min_ps(_mm_max_ps(v, vlo), vhi));
  };
  for (; i + 16 <= n; i += 16) {
    const __m128i a = _mm_packs_epi32(to_int(x + i), to_int(x + i + 4));
    const __m128i b = _mm_packs_epi32(to_int(x + i + 8), to_int(x + i + 12));
    const __m128i packed = is_signed ? _mm_packs_epi16(a, b) : _mm_packus_epi16(a, b);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(y + i), packed);
  }
#endif
  for (; i < n; ++i) {
    float v = x[i] * s;
    v = v == v ? std::min(std::max(v, lo), hi) : 0.f;
    y[i] = static_cast<T>(std::nearbyint(v));
  }
}

// Calls f with a value of the C++ type of an int8, uint8 or int32 dtype.
template <class F>
void with_quantized(DType t, F&& f) {
  switch (t) {
    case DType::kInt8:
      return f(int8_t{});
    case DType::kUInt8:
      return f(uint8_t{});
    case DType::kInt32:
      return f(int32_t{});
    default:
      type_error("quantized arrays are int8, uint8 or int32, got ", t);
  }
}

}  // namespace

void finish_from_sums(const LinearEpilogue& e, const double* acc, int64_t n, int64_t channels,
                      int64_t plane, const TBlob& out) {
  kernel::AllowThreads unlocked(n * channels * plane >= kernel::kReleaseGil);
  with_quantized(out.dtype, [&](auto tag) {
    using T = decltype(tag);
    T* y = static_cast<T*>(out.dptr);
    kernel::parallel_for(n * channels,
                         std::max<int64_t>(1, kernel::kGrain / std::max<int64_t>(plane, 1)),
                         [&](int64_t b, int64_t end) {
                           for (int64_t row = b; row < end; ++row) {
                             const int64_t c = row % channels;
                             const double bias = e.bias.empty() ? 0.0 : e.bias[c];
                             for (int64_t i = 0; i < plane; ++i) {
                               double v = e.scale[c] * (acc[row * plane + i] + bias);
                               if (e.spec.relu) v = std::max(v, 0.0);
                               y[row * plane + i] = saturate<T>(v);
                             }
                           }
                         });
  });
}

}  // namespace ndx::quant

namespace ndx {
namespace {

using kernel::as_array;
using kernel::write_req;
using quant::levels;
using quant::LinearInputs;
using quant::real_range;
using quant::write_range;

// ============================== quantize_v2 / requantize ==============================
struct QuantizeParam {
  std::string out_type = "int8";
  std::optional<double> min_calib_range, max_calib_range;
  static void declare(ParamDecl<QuantizeParam>& d) {
    d.field("out_type", &QuantizeParam::out_type)
        .set_default(std::string("int8"))
        .set_enum({"auto", "int8", "uint8"})
        .describe(
            "The quantized dtype; 'auto' is uint8 when min_calib_range >= 0, else int8 "
            "(uint8 saturates negative values to 0).");
    d.field("min_calib_range", &QuantizeParam::min_calib_range)
        .set_default(std::nullopt)
        .describe("The calibrated minimum; without it the data's own minimum at run time.");
    d.field("max_calib_range", &QuantizeParam::max_calib_range)
        .set_default(std::nullopt)
        .describe("The calibrated maximum; without it the data's own maximum at run time.");
  }
};

void check_calib_pair(const NodeAttrs& attrs, const QuantizeParam& p) {
  quant::check_calib_range(attrs, p.min_calib_range, p.max_calib_range);
}

DType quantized_type(const QuantizeParam& p) {
  if (p.out_type == "int8") return DType::kInt8;
  if (p.out_type == "uint8") return DType::kUInt8;
  return p.min_calib_range && *p.min_calib_range >= 0 ? DType::kUInt8 : DType::kInt8;
}

// The range outputs of an int8 / uint8 array standing for values within +-r.
void write_quantized_range(const std::vector<TBlob>& out, DType t, double r) {
  write_range(out, t == DType::kUInt8 ? 0.0 : -r, r);
}

bool quantize_shape(const NodeAttrs& attrs, ShapeVector* in, ShapeVector* out) {
  if (!(*in)[0].is_known()) return false;
  assign_shape(attrs, &(*out)[0], (*in)[0], "output", 0);
  quant::range_output_shapes(attrs, out);
  return true;
}

bool quantize_type(const NodeAttrs& attrs, DTypeVector* in, DTypeVector* out) {
  const DType t = (*in)[0];
  if (t == DType::kUnknown) return false;
  const auto& p = attrs.get<QuantizeParam>();
  check_calib_pair(attrs, p);
  if (t == DType::kInt8 || t == DType::kUInt8) {
    if (!p.min_calib_range)
      value_error("[", op_name(attrs), "] data that is already ", t,
                  " needs min_calib_range and max_calib_range (its range)");
    (*out)[0] = t;
  } else {
    nn_check::require_float(attrs, t, "data");
    (*out)[0] = quantized_type(p);
  }
  (*out)[1] = (*out)[2] = DType::kFloat32;
  return true;
}

// (min, max) of n floats; nan is skipped (it quantizes to 0).
std::pair<double, double> min_max(const float* x, int64_t n) {
  std::mutex m;
  float lo = std::numeric_limits<float>::infinity(), hi = -lo;
  kernel::parallel_for(n, kernel::kGrain, [&](int64_t b, int64_t e) {
    float l = std::numeric_limits<float>::infinity(), h = -l;
    for (int64_t i = b; i < e; ++i) {  // finite values only: nan quantizes to 0, inf saturates
      const bool finite = std::fabs(x[i]) <= std::numeric_limits<float>::max();
      l = finite && x[i] < l ? x[i] : l;
      h = finite && x[i] > h ? x[i] : h;
    }
    std::lock_guard<std::mutex> lock(m);
    lo = std::min(lo, l), hi = std::max(hi, h);
  });
  if (n == 0 || lo > hi) return {0.0, 0.0};
  return {lo, hi};
}

// y[i] = saturate(round(x[i] * scale)) into the output (directly when it may be written).
template <class S>
void scale_into(const S* x, double scale, const TBlob& out, OpReqType req) {
  NDArray tmp = quant::writes_directly(out, req) ? NDArray() : NDArray(out.shape, out.dtype);
  void* dst = tmp.defined() ? tmp.raw_data() : out.dptr;
  const int64_t n = out.size();
  quant::with_quantized(out.dtype, [&](auto tag) {
    using T = decltype(tag);
    T* y = static_cast<T*>(dst);
    kernel::parallel_for(n, kernel::kGrain, [&](int64_t b, int64_t e) {
      // int8 is symmetric here, [-127, 127], as MXNet's quantize (oneDNN's kernels may give
      // -128, one step past the range, which dequantizes just as well).
      if constexpr (std::is_same_v<S, float> && sizeof(T) == 1) {
        quant::quantize_block(x + b, y + b, e - b, static_cast<float>(scale));
      } else {
        for (int64_t i = b; i < e; ++i) {
          const T v = quant::saturate<T>(x[i] * scale);
          y[i] = std::is_same_v<T, int8_t> && v < -127 ? T(-127) : v;
        }
      }
    });
  });
  if (tmp.defined()) write_req(tmp, as_array(out), req);
}

void quantize_compute(const NodeAttrs& attrs, const OpContext&, const std::vector<TBlob>& in,
                      const std::vector<OpReqType>& req, const std::vector<TBlob>& out) {
  const auto& p = attrs.get<QuantizeParam>();
  if (in[0].dtype == DType::kInt8 || in[0].dtype == DType::kUInt8) {  // already quantized
    if (req[0] != kNullOp) write_req(as_array(in[0]), as_array(out[0]), req[0]);
    write_range(out, *p.min_calib_range, *p.max_calib_range);
    return;
  }
  std::vector<NDArray> keep;
  const float* x = kernel::cast_blob(in[0], DType::kFloat32, &keep).ptr<float>();
  const auto [lo, hi] = p.min_calib_range ? std::pair{*p.min_calib_range, *p.max_calib_range}
                                          : min_max(x, in[0].size());
  const DType t = out[0].dtype;
  const double r = real_range(lo, hi);
  if (req[0] != kNullOp) scale_into(x, levels(t) / r, out[0], req[0]);
  write_quantized_range(out, t, r);
}

// ---- quantize (MXNet's first version): the range comes as two arrays; uint8 is affine.
struct QuantizeV1Param {
  std::string out_type = "uint8";
  static void declare(ParamDecl<QuantizeV1Param>& d) {
    d.field("out_type", &QuantizeV1Param::out_type)
        .set_default(std::string("uint8"))
        .set_enum({"int8", "uint8"})
        .describe(
            "int8: symmetric, q = round(x * 127 / max(|min|, |max|)); uint8: affine, q = "
            "round((x - min) * 255 / (max - min)), the range's minimum at 0.");
  }
};

bool quantize_v1_shape(const NodeAttrs& attrs, ShapeVector* in, ShapeVector* out) {
  quant::expect_range_shape(attrs, in, 1, "min_range");
  quant::expect_range_shape(attrs, in, 2, "max_range");
  return quantize_shape(attrs, in, out);
}

bool quantize_v1_type(const NodeAttrs& attrs, DTypeVector* in, DTypeVector* out) {
  if ((*in)[0] == DType::kUnknown) return false;
  nn_check::require_float(attrs, (*in)[0], "data");
  for (int i : {1, 2}) {
    if ((*in)[i] == DType::kUnknown) (*in)[i] = DType::kFloat32;
    quant::require_range_type(attrs, (*in)[i], i == 1 ? "min_range" : "max_range");
  }
  (*out)[0] = attrs.get<QuantizeV1Param>().out_type == "int8" ? DType::kInt8 : DType::kUInt8;
  (*out)[1] = (*out)[2] = DType::kFloat32;
  return true;
}

void quantize_v1_compute(const NodeAttrs& attrs, const OpContext&, const std::vector<TBlob>& in,
                         const std::vector<OpReqType>& req, const std::vector<TBlob>& out) {
  const double lo = quant::range_value(attrs, in[1], "min_range");
  const double hi = quant::range_value(attrs, in[2], "max_range");
  if (!(std::isfinite(lo) && std::isfinite(hi) && lo <= hi))
    value_error("[", op_name(attrs),
                "] the range must be finite with min_range <= max_range, "
                "got (",
                lo, ", ", hi, ")");
  std::vector<NDArray> keep;
  const float* x = kernel::cast_blob(in[0], DType::kFloat32, &keep).ptr<float>();
  if (out[0].dtype == DType::kInt8) {
    const double r = real_range(lo, hi);
    if (req[0] != kNullOp) scale_into(x, 127 / r, out[0], req[0]);
    write_range(out, -r, r);
    return;
  }
  if (req[0] != kNullOp) {
    NDArray y(out[0].shape, DType::kUInt8);
    uint8_t* o = y.data<uint8_t>();
    const double scale = hi > lo ? 255 / (hi - lo) : 1.0;
    kernel::parallel_for(y.size(), kernel::kGrain, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) o[i] = quant::saturate<uint8_t>((x[i] - lo) * scale);
    });
    write_req(y, as_array(out[0]), req[0]);
  }
  write_range(out, lo, hi);
}

bool requantize_type(const NodeAttrs& attrs, DTypeVector* in, DTypeVector* out) {
  if ((*in)[0] == DType::kUnknown) return false;
  if ((*in)[0] != DType::kInt32)
    type_error("[", op_name(attrs), "] argument 'data' must be int32, got ", (*in)[0]);
  for (int i : {1, 2}) {
    if ((*in)[i] == DType::kUnknown) (*in)[i] = DType::kFloat32;
    if ((*in)[i] != DType::kFloat32)
      type_error("[", op_name(attrs), "] argument '", i == 1 ? "min_range" : "max_range",
                 "' must be float32, got ", (*in)[i]);
  }
  const auto& p = attrs.get<QuantizeParam>();
  check_calib_pair(attrs, p);
  (*out)[0] = quantized_type(p);
  (*out)[1] = (*out)[2] = DType::kFloat32;
  return true;
}

// Shape inference of an op of (data, two range inputs named lo and hi) whose output has
// data's shape, with (1,) range outputs.
template <const char* lo, const char* hi>
bool range_inputs_shape(const NodeAttrs& attrs, ShapeVector* in, ShapeVector* out) {
  quant::expect_range_shape(attrs, in, 1, lo);
  quant::expect_range_shape(attrs, in, 2, hi);
  return quantize_shape(attrs, in, out);
}
constexpr char kMinRange[] = "min_range", kMaxRange[] = "max_range";
constexpr char kMinData[] = "min_data", kMaxData[] = "max_data";

void requantize_compute(const NodeAttrs& attrs, const OpContext&, const std::vector<TBlob>& in,
                        const std::vector<OpReqType>& req, const std::vector<TBlob>& out) {
  const auto& p = attrs.get<QuantizeParam>();
  const double unit = real_range(quant::range_value(attrs, in[1], "min_range"),
                                 quant::range_value(attrs, in[2], "max_range")) /
                      quant::kInt32Levels;
  const auto* q = static_cast<const int32_t*>(in[0].dptr);
  const int64_t n = in[0].size();
  double r;
  if (p.min_calib_range) {
    r = real_range(*p.min_calib_range, *p.max_calib_range);
  } else {  // the data's own largest magnitude
    kernel::AllowThreads unlocked(n >= kernel::kReleaseGil);
    int64_t top = 0;
    for (int64_t i = 0; i < n; ++i) top = std::max<int64_t>(top, std::abs(int64_t{q[i]}));
    r = real_range(0.0, static_cast<double>(top) * unit);
  }
  const DType t = out[0].dtype;
  if (req[0] != kNullOp) scale_into(q, unit * levels(t) / r, out[0], req[0]);
  write_quantized_range(out, t, r);
}

// ============================== dequantize ==============================
struct DequantizeParam {
  std::string out_type = "float32";
  static void declare(ParamDecl<DequantizeParam>& d) {
    d.field("out_type", &DequantizeParam::out_type)
        .set_default(std::string("float32"))
        .set_enum({"float32"})
        .describe("The output dtype.");
  }
};

bool dequantize_shape(const NodeAttrs& attrs, ShapeVector* in, ShapeVector* out) {
  if (!(*in)[0].is_known()) return false;
  quant::expect_range_shape(attrs, in, 1, "min_range");
  quant::expect_range_shape(attrs, in, 2, "max_range");
  assign_shape(attrs, &(*out)[0], (*in)[0], "output", 0);
  return true;
}

bool dequantize_type(const NodeAttrs& attrs, DTypeVector* in, DTypeVector* out) {
  if ((*in)[0] == DType::kUnknown) return false;
  quant::require_quantized(attrs, (*in)[0], "data", true);
  for (int i : {1, 2}) {
    if ((*in)[i] == DType::kUnknown) (*in)[i] = DType::kFloat32;
    quant::require_range_type(attrs, (*in)[i], i == 1 ? "min_range" : "max_range");
  }
  (*out)[0] = DType::kFloat32;
  return true;
}

void dequantize_compute(const NodeAttrs& attrs, const OpContext&, const std::vector<TBlob>& in,
                        const std::vector<OpReqType>& req, const std::vector<TBlob>& out) {
  if (req[0] == kNullOp) return;
  const double lo = quant::range_value(attrs, in[1], "min_range");
  const double hi = quant::range_value(attrs, in[2], "max_range");
  // uint8 is affine, lo + q (hi - lo) / 255 (MXNet's: quantize's uint8 has a zero point at
  // lo; quantize_v2's and the quantized ops' uint8 ranges start at 0, where both agree);
  // int8 and int32 are symmetric.
  const bool affine = in[0].dtype == DType::kUInt8;
  const double unit =
      affine ? (hi > lo ? (hi - lo) / 255 : 1 / 255.0) : real_range(lo, hi) / levels(in[0].dtype);
  const double offset = affine && std::isfinite(lo) ? lo : 0.0;
  NDArray tmp = quant::writes_directly(out[0], req[0]) ? NDArray() : NDArray(out[0].shape);
  float* y = tmp.defined() ? tmp.data<float>() : static_cast<float*>(out[0].dptr);
  quant::with_quantized(in[0].dtype, [&](auto tag) {
    using T = decltype(tag);
    const T* q = static_cast<const T*>(in[0].dptr);
    kernel::parallel_for(in[0].size(), kernel::kGrain, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) y[i] = static_cast<float>(offset + q[i] * unit);
    });
  });
  if (tmp.defined()) write_req(tmp, as_array(out[0]), req[0]);
}

// ============================== quantized_fully_connected ==============================
struct QuantizedFCParam : quant::Requantize {
  int64_t num_hidden = 0;
  bool no_bias = false;
  bool flatten = true;
  static void declare(ParamDecl<QuantizedFCParam>& d) {
    d.field("num_hidden", &QuantizedFCParam::num_hidden)
        .set_lower_bound(1)
        .describe("The number of output units.");
    d.field("no_bias", &QuantizedFCParam::no_bias)
        .set_default(false)
        .describe("Whether to leave out the bias (and its range arguments).");
    d.field("flatten", &QuantizedFCParam::flatten)
        .set_default(true)
        .describe("Whether data is flattened to (N, -1); else the last axis is the input one.");
    quant::declare_requantize(d);
  }
};

LinearInputs fc_inputs(const NodeAttrs& attrs) { return {!attrs.get<QuantizedFCParam>().no_bias}; }

bool fc_shape(const NodeAttrs& attrs, ShapeVector* in, ShapeVector* out) {
  const Shape& d = (*in)[0];
  if (!d.is_known()) return false;
  const auto& p = attrs.get<QuantizedFCParam>();
  if (d.ndim() < 1)
    value_error("[", op_name(attrs),
                "] argument 'data' must have at least one dimension, got "
                "shape ()");
  int64_t k = 1;
  if (p.flatten) {
    for (int i = 1; i < d.ndim(); ++i) k *= d[i];
  } else {
    k = d[d.ndim() - 1];
  }
  nn_check::expect_shape(attrs, in, 1, Shape{p.num_hidden, k}, "weight", " (num_hidden, inputs)");
  quant::linear_range_shapes(attrs, fc_inputs(attrs), p.num_hidden, in, out);
  Shape o;
  if (p.flatten) {
    o = Shape{d[0], p.num_hidden};
  } else {
    o = d;
    o[o.ndim() - 1] = p.num_hidden;
  }
  assign_shape(attrs, &(*out)[0], o, "output", 0);
  return true;
}

void fc_compute(const NodeAttrs& attrs, const OpContext&, const std::vector<TBlob>& in,
                const std::vector<OpReqType>& req, const std::vector<TBlob>& out) {
  const auto& p = attrs.get<QuantizedFCParam>();
  const LinearInputs at = fc_inputs(attrs);
  const quant::LinearEpilogue e = quant::linear_epilogue(attrs, p, at, p.num_hidden, in);
  const int64_t f = p.num_hidden, k = in[1].shape[1], n = f > 0 ? out[0].size() / f : 0;
  if (req[0] != kNullOp && n > 0) {
    NDArray tmp =
        quant::writes_directly(out[0], req[0]) ? NDArray() : NDArray(out[0].shape, out[0].dtype);
    const TBlob y = tmp.defined() ? kernel::to_blob(tmp) : out[0];
    const float* bias = e.bias.empty() ? nullptr : e.bias.data();
    if (!dnnl::enabled() ||
        !dnnl::inner_product_int8(n, k, f, e.spec, in[0].dptr, in[1].ptr<int8_t>(), bias,
                                  e.scale.data(), y.dptr)) {
      // The reference path: exact sums of the small integers in double (a float sum rounds
      // past 2^24, which K = 519 uint8 products reach).
      const NDArray x = quant::float_values(in[0], DType::kFloat64);
      const NDArray w = quant::float_values(in[1], DType::kFloat64);
      NDArray acc(Shape{n, f}, DType::kFloat64);
      kernel::gemm<double>(false, true, n, f, k, x.data<double>(), w.data<double>(), 0.0,
                           acc.data<double>());
      quant::finish_from_sums(e, acc.data<double>(), n, f, 1, y);
    }
    if (tmp.defined()) write_req(tmp, as_array(out[0]), req[0]);
  }
  write_range(out, e.out_lo, e.out_hi);
}

// ============================== quantized_elemwise_add ==============================
struct QuantizedAddParam {
  std::optional<double> min_calib_range, max_calib_range;
  static void declare(ParamDecl<QuantizedAddParam>& d) {
    d.field("min_calib_range", &QuantizedAddParam::min_calib_range)
        .set_default(std::nullopt)
        .describe("The calibrated minimum of the sum; with max_calib_range, the output is int8.");
    d.field("max_calib_range", &QuantizedAddParam::max_calib_range)
        .set_default(std::nullopt)
        .describe("The calibrated maximum of the sum.");
  }
};

bool add_shape(const NodeAttrs& attrs, ShapeVector* in, ShapeVector* out) {
  const Shape &a = (*in)[0], &b = (*in)[1];
  if (!a.is_known() || !b.is_known()) return false;
  if (a != b)
    value_error("[", op_name(attrs), "] lhs and rhs must have the same shape, got ", a.str(),
                " and ", b.str());
  const char* names[] = {"lhs_min", "lhs_max", "rhs_min", "rhs_max"};
  for (int i = 2; i < 6; ++i) quant::expect_range_shape(attrs, in, i, names[i - 2]);
  assign_shape(attrs, &(*out)[0], a, "output", 0);
  quant::range_output_shapes(attrs, out);
  return true;
}

bool add_type(const NodeAttrs& attrs, DTypeVector* in, DTypeVector* out) {
  if ((*in)[0] == DType::kUnknown || (*in)[1] == DType::kUnknown) return false;
  quant::require_quantized(attrs, (*in)[0], "lhs");
  quant::require_quantized(attrs, (*in)[1], "rhs");
  const char* names[] = {"lhs_min", "lhs_max", "rhs_min", "rhs_max"};
  for (int i = 2; i < 6; ++i) {
    if ((*in)[i] == DType::kUnknown) (*in)[i] = DType::kFloat32;
    quant::require_range_type(attrs, (*in)[i], names[i - 2]);
  }
  const auto& p = attrs.get<QuantizedAddParam>();
  quant::check_calib_range(attrs, p.min_calib_range, p.max_calib_range);
  (*out)[0] = !p.min_calib_range        ? DType::kInt32
              : *p.min_calib_range >= 0 ? DType::kUInt8
                                        : DType::kInt8;
  (*out)[1] = (*out)[2] = DType::kFloat32;
  return true;
}

// The real value of one step of a quantized input.
double step_of(const NodeAttrs& attrs, const TBlob& q, const TBlob& lo, const TBlob& hi,
               const char* lo_name, const char* hi_name) {
  quant::require_zero_based(attrs, q.dtype, quant::range_value(attrs, lo, lo_name), lo_name);
  return real_range(quant::range_value(attrs, lo, lo_name),
                    quant::range_value(attrs, hi, hi_name)) /
         levels(q.dtype);
}

// out = a * sa + b * sb rounded into an 8-bit out, in float: the sums in blocks of a stack
// buffer (int8 / uint8 to float vectorizes), then quantize_block's rounding.
// y[i] = x[i] * s + t rounded into y's type: 8-bit through float blocks of a stack buffer
// and quantize_block (vectorized; the symmetric int8 range), int32 in double.
template <class S, class T>
void affine_into(const S* x, T* y, int64_t n, double s, double t) {
  if constexpr (sizeof(T) == 1) {
    constexpr int64_t kBlock = 2048;
    float buf[kBlock];
    const float fs = static_cast<float>(s), ft = static_cast<float>(t);
    for (int64_t i = 0; i < n; i += kBlock) {
      const int64_t len = std::min(kBlock, n - i);
      for (int64_t j = 0; j < len; ++j) buf[j] = static_cast<float>(x[i + j]) * fs + ft;
      quant::quantize_block(buf, y + i, len, 1.f);
    }
  } else {
    for (int64_t i = 0; i < n; ++i) y[i] = quant::saturate<T>(x[i] * s + t);
  }
}

template <class A, class B>
void scaled_sum(const A* __restrict a, const B* __restrict b, float sa, float sb,
                float* __restrict sum, int64_t n) {
  for (int64_t i = 0; i < n; ++i)
    sum[i] = static_cast<float>(a[i]) * sa + static_cast<float>(b[i]) * sb;
}

void add_8bit(const TBlob& a, const TBlob& b, float sa, float sb, const NDArray& y) {
  const auto sum_into = [&](auto ta, auto tb) {
    using A = decltype(ta);
    using B = decltype(tb);
    const A* pa = a.ptr<A>();
    const B* pb = b.ptr<B>();
    kernel::parallel_for(y.size(), kernel::kGrain, [&](int64_t lo, int64_t hi) {
      constexpr int64_t kBlock = 2048;
      float sum[kBlock];
      for (int64_t i = lo; i < hi; i += kBlock) {
        const int64_t len = std::min(kBlock, hi - i);
        scaled_sum(pa + i, pb + i, sa, sb, sum, len);
        if (y.dtype() == DType::kInt8)
          quant::quantize_block(sum, y.data<int8_t>() + i, len, 1.f);
        else
          quant::quantize_block(sum, y.data<uint8_t>() + i, len, 1.f);
      }
    });
  };
  const bool ua = a.dtype == DType::kUInt8, ub = b.dtype == DType::kUInt8;
  if (ua && ub) return sum_into(uint8_t{}, uint8_t{});
  if (ua) return sum_into(uint8_t{}, int8_t{});
  if (ub) return sum_into(int8_t{}, uint8_t{});
  sum_into(int8_t{}, int8_t{});
}

void add_compute(const NodeAttrs& attrs, const OpContext&, const std::vector<TBlob>& in,
                 const std::vector<OpReqType>& req, const std::vector<TBlob>& out) {
  const auto& p = attrs.get<QuantizedAddParam>();
  const double ua = step_of(attrs, in[0], in[2], in[3], "lhs_min", "lhs_max");
  const double ub = step_of(attrs, in[1], in[4], in[5], "rhs_min", "rhs_max");
  const DType t = out[0].dtype;
  // Without a calibrated range the int32 output spans the largest possible sum.
  const double r = p.min_calib_range
                       ? real_range(*p.min_calib_range, *p.max_calib_range)
                       : 127 * ua * (in[0].dtype == DType::kUInt8 ? 255.0 / 127 : 1) +
                             127 * ub * (in[1].dtype == DType::kUInt8 ? 255.0 / 127 : 1);
  const double to_out = levels(t) / r;
  if (req[0] != kNullOp) {
    NDArray y(out[0].shape, t);
    if (t == DType::kInt32) {  // (uncalibrated: double sums, int32 keeps more than a float)
      const NDArray a = quant::float_values(in[0]), b = quant::float_values(in[1]);
      const float *pa = a.data<float>(), *pb = b.data<float>();
      auto* o = y.data<int32_t>();
      kernel::parallel_for(y.size(), kernel::kGrain, [&](int64_t lo, int64_t hi) {
        for (int64_t i = lo; i < hi; ++i)
          o[i] = quant::saturate<int32_t>(pa[i] * ua * to_out + pb[i] * ub * to_out);
      });
    } else {
      add_8bit(in[0], in[1], static_cast<float>(ua * to_out), static_cast<float>(ub * to_out), y);
    }
    write_req(y, as_array(out[0]), req[0]);
  }
  write_range(out, t == DType::kUInt8 ? 0.0 : -r, r);
}

// ============================== quantized_batch_norm ==============================
// Inference batch normalization of int8 / uint8 data (MXNet's quantized_batch_norm, for the
// BatchNorms no convolution precedes: pre-activation and densely connected networks). Per
// channel, y = q * a[c] + b[c] with a = step * gamma * inv_std and b = beta - mean * gamma *
// inv_std, then y in the output's unit: the calibrated range (int8, or uint8 when it is
// non-negative), else int32 over the largest |y| the data's range allows.
struct QuantizedBatchNormParam {
  double eps = 1e-3;
  double momentum = 0.9;
  bool fix_gamma = true;
  bool use_global_stats = false;
  bool output_mean_var = false;
  int64_t axis = 1;
  bool cudnn_off = false;
  std::optional<double> min_calib_range, max_calib_range;
  static void declare(ParamDecl<QuantizedBatchNormParam>& d) {
    d.field("eps", &QuantizedBatchNormParam::eps)
        .set_default(1e-3)
        .set_lower_bound(0.0)
        .describe("Added to the variance (MXNet's default, 1e-3).");
    d.field("momentum", &QuantizedBatchNormParam::momentum)
        .set_default(0.9)
        .describe("Unused (inference: the moving statistics are read, not updated).");
    d.field("fix_gamma", &QuantizedBatchNormParam::fix_gamma)
        .set_default(true)
        .describe("Whether gamma is taken as 1 (MXNet's default, True).");
    d.field("use_global_stats", &QuantizedBatchNormParam::use_global_stats)
        .set_default(false)
        .describe("Unused: the moving statistics are always used.");
    d.field("output_mean_var", &QuantizedBatchNormParam::output_mean_var)
        .set_default(false)
        .describe("Unused (MXNet's signature).");
    d.field("axis", &QuantizedBatchNormParam::axis)
        .set_default(int64_t{1})
        .describe("The channel axis.");
    d.field("cudnn_off", &QuantizedBatchNormParam::cudnn_off)
        .set_default(false)
        .describe("Unused (MXNet's signature).");
    d.field("min_calib_range", &QuantizedBatchNormParam::min_calib_range)
        .set_default(std::nullopt)
        .describe(
            "The calibrated minimum of the output; with max_calib_range, the output is int8.");
    d.field("max_calib_range", &QuantizedBatchNormParam::max_calib_range)
        .set_default(std::nullopt)
        .describe("The calibrated maximum of the output.");
  }
};

const char* const kBatchNormInputs[] = {"data",       "gamma",    "beta",    "moving_mean",
                                        "moving_var", "min_data", "max_data"};

bool qbn_shape(const NodeAttrs& attrs, ShapeVector* in, ShapeVector* out) {
  const Shape& d = (*in)[0];
  if (!d.is_known()) return false;
  const auto& p = attrs.get<QuantizedBatchNormParam>();
  const int axis = normalize_axis(p.axis, d.ndim(), op_name(attrs).c_str());
  for (int i = 1; i < 5; ++i)
    nn_check::expect_shape(attrs, in, i, Shape{d[axis]}, kBatchNormInputs[i], " (channels,)");
  quant::expect_range_shape(attrs, in, 5, "min_data");
  quant::expect_range_shape(attrs, in, 6, "max_data");
  assign_shape(attrs, &(*out)[0], d, "output", 0);
  quant::range_output_shapes(attrs, out);
  return true;
}

bool qbn_type(const NodeAttrs& attrs, DTypeVector* in, DTypeVector* out) {
  if ((*in)[0] == DType::kUnknown) return false;
  quant::require_quantized(attrs, (*in)[0], "data");
  for (int i = 1; i < 7; ++i) {
    if ((*in)[i] == DType::kUnknown) (*in)[i] = DType::kFloat32;
    quant::require_range_type(attrs, (*in)[i], kBatchNormInputs[i]);
  }
  const auto& p = attrs.get<QuantizedBatchNormParam>();
  quant::check_calib_range(attrs, p.min_calib_range, p.max_calib_range);
  (*out)[0] = !p.min_calib_range        ? DType::kInt32
              : *p.min_calib_range >= 0 ? DType::kUInt8
                                        : DType::kInt8;
  (*out)[1] = (*out)[2] = DType::kFloat32;
  return true;
}

void qbn_compute(const NodeAttrs& attrs, const OpContext&, const std::vector<TBlob>& in,
                 const std::vector<OpReqType>& req, const std::vector<TBlob>& out) {
  const auto& p = attrs.get<QuantizedBatchNormParam>();
  const TBlob& x = in[0];
  const double lo = quant::range_value(attrs, in[5], "min_data");
  quant::require_zero_based(attrs, x.dtype, lo, "data");
  const double step =
      real_range(lo, quant::range_value(attrs, in[6], "max_data")) / levels(x.dtype);
  const int axis = normalize_axis(p.axis, x.ndim(), op_name(attrs).c_str());
  const int64_t channels = x.shape[axis];
  std::vector<NDArray> keep;
  const double* gamma = kernel::cast_blob(in[1], DType::kFloat64, &keep).ptr<double>();
  const double* beta = kernel::cast_blob(in[2], DType::kFloat64, &keep).ptr<double>();
  const double* mean = kernel::cast_blob(in[3], DType::kFloat64, &keep).ptr<double>();
  const double* var = kernel::cast_blob(in[4], DType::kFloat64, &keep).ptr<double>();
  // y = q * a[c] + b[c]; bound: the largest |y| over the data's range (the int32 unit)
  std::vector<double> a(static_cast<size_t>(channels)), b(a.size());
  double bound = 0;
  for (int64_t c = 0; c < channels; ++c) {
    const double g = (p.fix_gamma ? 1.0 : gamma[c]) / std::sqrt(var[c] + p.eps);
    if (!std::isfinite(g) || !std::isfinite(beta[c]) || !std::isfinite(mean[c]))
      value_error("[", op_name(attrs), "] channel ", c,
                  " has a non-finite scale or shift "
                  "(gamma / sqrt(moving_var + eps), beta, moving_mean)");
    a[c] = step * g, b[c] = beta[c] - mean[c] * g;
    bound = std::max(bound, std::fabs(a[c]) * levels(x.dtype) + std::fabs(b[c]));
  }
  const DType t = out[0].dtype;
  const double r = p.min_calib_range ? real_range(*p.min_calib_range, *p.max_calib_range)
                                     : real_range(0.0, bound);
  const double to_out = levels(t) / r;
  if (req[0] != kNullOp) {
    NDArray y(out[0].shape, t);
    int64_t outer = 1, inner = 1;
    for (int d = 0; d < axis; ++d) outer *= x.shape[d];
    for (int d = axis + 1; d < x.ndim(); ++d) inner *= x.shape[d];
    quant::with_quantized(x.dtype, [&](auto tin) {
      using S = decltype(tin);
      const S* q = static_cast<const S*>(x.dptr);
      quant::with_quantized(t, [&](auto tout) {
        using T = decltype(tout);
        T* o = y.data<T>();
        kernel::parallel_for(
            outer * channels, std::max<int64_t>(1, kernel::kGrain / std::max<int64_t>(inner, 1)),
            [&](int64_t first, int64_t last) {
              for (int64_t row = first; row < last; ++row) {
                const int64_t c = row % channels;
                affine_into(q + row * inner, o + row * inner, inner, a[c] * to_out, b[c] * to_out);
              }
            });
      });
    });
    write_req(y, as_array(out[0]), req[0]);
  }
  write_range(out, t == DType::kUInt8 ? 0.0 : -r, r);
}

// ============================== quantized_concat ==============================
// Inputs: the num_args arrays, then each one's (min, max). Each array is requantized onto
// the output's range: the calibrated one, else the largest of the inputs' (so no value
// saturates). The output is uint8 when every input is, else int8.
struct QuantizedConcatParam {
  int64_t num_args = 1;
  int64_t dim = 1;
  std::optional<double> min_calib_range, max_calib_range;
  static void declare(ParamDecl<QuantizedConcatParam>& d) {
    d.field("num_args", &QuantizedConcatParam::num_args)
        .set_lower_bound(1)
        .describe("The number of arrays joined.");
    d.field("dim", &QuantizedConcatParam::dim)
        .set_default(int64_t{1})
        .describe("The axis they are joined along.");
    d.field("min_calib_range", &QuantizedConcatParam::min_calib_range)
        .set_default(std::nullopt)
        .describe("The calibrated minimum of the output; without it, the inputs' widest range.");
    d.field("max_calib_range", &QuantizedConcatParam::max_calib_range)
        .set_default(std::nullopt)
        .describe("The calibrated maximum of the output.");
  }
};

uint32_t concat_inputs(const NodeAttrs& attrs) {
  return static_cast<uint32_t>(3 * attrs.get<QuantizedConcatParam>().num_args);
}

std::vector<std::string> concat_input_names(const NodeAttrs& attrs) {
  const int64_t n = attrs.get<QuantizedConcatParam>().num_args;
  std::vector<std::string> names;
  for (int64_t k = 0; k < n; ++k) names.push_back("arg" + std::to_string(k));
  for (int64_t k = 0; k < n; ++k) {
    names.push_back("arg" + std::to_string(k) + "_min");
    names.push_back("arg" + std::to_string(k) + "_max");
  }
  return names;
}

bool concat_shape(const NodeAttrs& attrs, ShapeVector* in, ShapeVector* out) {
  const auto& p = attrs.get<QuantizedConcatParam>();
  const auto names = concat_input_names(attrs);
  for (int64_t k = 0; k < p.num_args; ++k)
    if (!(*in)[k].is_known()) return false;
  const Shape& first = (*in)[0];
  const int axis = normalize_axis(p.dim, first.ndim(), op_name(attrs).c_str());
  Shape o = first;
  for (int64_t k = 1; k < p.num_args; ++k) {
    const Shape& s = (*in)[k];
    bool same = s.ndim() == first.ndim();
    for (int d = 0; same && d < s.ndim(); ++d) same = d == axis || s[d] == first[d];
    if (!same)
      value_error("[", op_name(attrs), "] argument '", names[k], "' of shape ", s.str(),
                  " does not match '", names[0], "' of shape ", first.str(), " except along dim ",
                  axis);
    o[axis] += s[axis];
  }
  for (int64_t k = 0; k < 2 * p.num_args; ++k)
    quant::expect_range_shape(attrs, in, static_cast<int>(p.num_args + k),
                              names[p.num_args + k].c_str());
  assign_shape(attrs, &(*out)[0], o, "output", 0);
  quant::range_output_shapes(attrs, out);
  return true;
}

bool concat_type(const NodeAttrs& attrs, DTypeVector* in, DTypeVector* out) {
  const auto& p = attrs.get<QuantizedConcatParam>();
  const auto names = concat_input_names(attrs);
  bool all_unsigned = true;
  for (int64_t k = 0; k < p.num_args; ++k) {
    if ((*in)[k] == DType::kUnknown) return false;
    quant::require_quantized(attrs, (*in)[k], names[k].c_str());
    all_unsigned = all_unsigned && (*in)[k] == DType::kUInt8;
  }
  for (int64_t k = p.num_args; k < 3 * p.num_args; ++k) {
    if ((*in)[k] == DType::kUnknown) (*in)[k] = DType::kFloat32;
    quant::require_range_type(attrs, (*in)[k], names[k].c_str());
  }
  quant::check_calib_range(attrs, p.min_calib_range, p.max_calib_range);
  (*out)[0] = all_unsigned ? DType::kUInt8 : DType::kInt8;
  (*out)[1] = (*out)[2] = DType::kFloat32;
  return true;
}

void concat_compute(const NodeAttrs& attrs, const OpContext&, const std::vector<TBlob>& in,
                    const std::vector<OpReqType>& req, const std::vector<TBlob>& out) {
  const auto& p = attrs.get<QuantizedConcatParam>();
  const auto names = concat_input_names(attrs);
  const int64_t n = p.num_args;
  std::vector<double> step(static_cast<size_t>(n));  // the real value of each input's unit
  double r = 0;
  for (int64_t k = 0; k < n; ++k) {
    const double lo = quant::range_value(attrs, in[n + 2 * k], names[n + 2 * k].c_str());
    const double hi = quant::range_value(attrs, in[n + 2 * k + 1], names[n + 2 * k + 1].c_str());
    quant::require_zero_based(attrs, in[k].dtype, lo, names[k].c_str());
    step[k] = real_range(lo, hi) / levels(in[k].dtype);
    r = std::max(r, real_range(lo, hi));
  }
  if (p.min_calib_range) r = real_range(*p.min_calib_range, *p.max_calib_range);
  const DType t = out[0].dtype;
  if (req[0] != kNullOp) {
    NDArray y(out[0].shape, t);
    const int axis = normalize_axis(p.dim, y.ndim(), op_name(attrs).c_str());
    int64_t outer = 1, inner = 1;
    for (int d = 0; d < axis; ++d) outer *= y.shape()[d];
    for (int d = axis + 1; d < y.ndim(); ++d) inner *= y.shape()[d];
    const int64_t row = y.shape()[axis] * inner;  // one outer index's span of the output
    int64_t offset = 0;
    kernel::AllowThreads unlocked(y.size() >= kernel::kReleaseGil);
    for (int64_t k = 0; k < n; ++k) {
      const int64_t span = in[k].shape[axis] * inner;
      const double scale = step[k] * levels(t) / r;
      quant::with_quantized(in[k].dtype, [&](auto tin) {
        using S = decltype(tin);
        const S* x = static_cast<const S*>(in[k].dptr);
        quant::with_quantized(t, [&](auto tout) {
          using T = decltype(tout);
          T* o = y.data<T>();
          kernel::parallel_for(
              outer, std::max<int64_t>(1, kernel::kGrain / std::max<int64_t>(span, 1)),
              [&](int64_t first, int64_t last) {
                for (int64_t i = first; i < last; ++i)
                  affine_into(x + i * span, o + i * row + offset, span, scale, 0.0);
              });
        });
      });
      offset += span;
    }
    write_req(y, as_array(out[0]), req[0]);
  }
  write_range(out, t == DType::kUInt8 ? 0.0 : -r, r);
}

// ============================== quantized_act / quantized_flatten ==============================
struct QuantizedActParam {
  std::string act_type = "relu";
  static void declare(ParamDecl<QuantizedActParam>& d) {
    d.field("act_type", &QuantizedActParam::act_type)
        .set_default(std::string("relu"))
        .set_enum({"relu"})
        .describe("The activation; relu only.");
  }
};

bool passthrough_type(const NodeAttrs& attrs, DTypeVector* in, DTypeVector* out) {
  if ((*in)[0] == DType::kUnknown) return false;
  quant::require_quantized(attrs, (*in)[0], "data");
  for (int i : {1, 2}) {
    if ((*in)[i] == DType::kUnknown) (*in)[i] = DType::kFloat32;
    quant::require_range_type(attrs, (*in)[i], i == 1 ? "min_data" : "max_data");
  }
  (*out)[0] = (*in)[0];
  (*out)[1] = (*out)[2] = DType::kFloat32;
  return true;
}

void copy_range(const NodeAttrs& attrs, const std::vector<TBlob>& in,
                const std::vector<TBlob>& out) {
  write_range(out, quant::range_value(attrs, in[1], "min_data"),
              quant::range_value(attrs, in[2], "max_data"));
}

void act_compute(const NodeAttrs& attrs, const OpContext&, const std::vector<TBlob>& in,
                 const std::vector<OpReqType>& req, const std::vector<TBlob>& out) {
  quant::require_zero_based(attrs, in[0].dtype, quant::range_value(attrs, in[1], "min_data"),
                            "data");
  if (req[0] != kNullOp) {
    NDArray y(out[0].shape, out[0].dtype);
    const int64_t n = in[0].size();
    kernel::AllowThreads unlocked(n >= kernel::kReleaseGil);
    if (in[0].dtype == DType::kInt8) {
      const auto* x = static_cast<const int8_t*>(in[0].dptr);
      auto* o = y.data<int8_t>();
      for (int64_t i = 0; i < n; ++i) o[i] = std::max<int8_t>(x[i], 0);
    } else {  // uint8 holds no negative values
      std::copy_n(static_cast<const uint8_t*>(in[0].dptr), n, y.data<uint8_t>());
    }
    write_req(y, as_array(out[0]), req[0]);
  }
  copy_range(attrs, in, out);
}

bool flatten_shape(const NodeAttrs& attrs, ShapeVector* in, ShapeVector* out) {
  const Shape& d = (*in)[0];
  if (!d.is_known()) return false;
  if (d.ndim() < 1)
    value_error("[", op_name(attrs),
                "] argument 'data' must have at least one dimension, got "
                "shape ()");
  int64_t rest = 1;
  for (int i = 1; i < d.ndim(); ++i) rest *= d[i];
  quant::expect_range_shape(attrs, in, 1, "min_data");
  quant::expect_range_shape(attrs, in, 2, "max_data");
  assign_shape(attrs, &(*out)[0], Shape{d[0], rest}, "output", 0);
  quant::range_output_shapes(attrs, out);
  return true;
}

void flatten_compute(const NodeAttrs& attrs, const OpContext&, const std::vector<TBlob>& in,
                     const std::vector<OpReqType>& req, const std::vector<TBlob>& out) {
  if (req[0] != kNullOp) write_req(as_array(in[0]).reshape(out[0].shape), as_array(out[0]), req[0]);
  copy_range(attrs, in, out);
}

std::vector<std::string> range_output_names() { return {"output", "min_output", "max_output"}; }

Op& quantized_op(const char* name, const char* doc) {
  return OpRegistry::global()
      .register_op(name)
      .describe(doc)
      .set_num_outputs(3)
      .set_attr<FListOutputNames>("FListOutputNames",
                                  [](const NodeAttrs&) { return range_output_names(); })
      .set_attr<TFillsInputs>("TFillsInputs", true)
      .set_attr<FGradient>("FGradient", quant::no_gradient());
}

[[maybe_unused]] const bool registered = [] {
  quantized_op("_contrib_quantize_v2",
               "Quantizes float data to int8 / uint8 (MXNet's quantize_v2, symmetric): q = "
               "round(x * levels / R), R = max(|min|, |max|) of the calibrated range or of the "
               "data; returns q and its range (-R, R) (uint8: (0, R)).")
      .add_alias("_npx_contrib_quantize_v2")
      .set_num_inputs(1)
      .add_argument("data", "NDArray", "Float data (or int8 / uint8 data with its range).")
      .set_params<QuantizeParam>()
      .set_attr<FInferShape>("FInferShape", quantize_shape)
      .set_attr<FInferType>("FInferType", quantize_type)
      .set_attr<FCompute>("FCompute<cpu>", quantize_compute);
  quantized_op("_contrib_quantize",
               "Quantizes float data over the range given as arrays (MXNet's first quantize): "
               "int8 symmetric over max(|min|, |max|), or uint8 affine with the minimum at 0; "
               "returns q and its range.")
      .add_alias("_npx_contrib_quantize")
      .set_num_inputs(3)
      .add_argument("data", "NDArray", "Float data.")
      .add_argument("min_range", "NDArray", "The range's minimum, float32 (1,).")
      .add_argument("max_range", "NDArray", "The range's maximum, float32 (1,).")
      .set_params<QuantizeV1Param>()
      .set_attr<FInferShape>("FInferShape", quantize_v1_shape)
      .set_attr<FInferType>("FInferType", quantize_v1_type)
      .set_attr<FCompute>("FCompute<cpu>", quantize_v1_compute);
  quantized_op("_contrib_requantize",
               "Requantizes int32 data with range (min_range, max_range) to int8 / uint8 over "
               "the calibrated range, or over the data's own largest magnitude (MXNet's "
               "requantize).")
      .add_alias("_npx_requantize")
      .set_num_inputs(3)
      .add_argument("data", "NDArray", "int32 data.")
      .add_argument("min_range", "NDArray", "The minimum its int32 range stands for.")
      .add_argument("max_range", "NDArray", "The maximum its int32 range stands for.")
      .set_params<QuantizeParam>()
      .set_attr<FInferShape>("FInferShape", range_inputs_shape<kMinRange, kMaxRange>)
      .set_attr<FInferType>("FInferType", requantize_type)
      .set_attr<FCompute>("FCompute<cpu>", requantize_compute);
  OpRegistry::global()
      .register_op("_contrib_dequantize")
      .describe(
          "Float32 values of int8 / uint8 / int32 data with range (min_range, max_range): q * "
          "max(|min|, |max|) / levels (127, 255, 2^31 - 1) (MXNet's dequantize).")
      .set_num_inputs(3)
      .add_argument("data", "NDArray", "Quantized data.")
      .add_argument("min_range", "NDArray", "Its range's minimum, float32 (1,).")
      .add_argument("max_range", "NDArray", "Its range's maximum, float32 (1,).")
      .set_params<DequantizeParam>()
      .set_attr<FInferShape>("FInferShape", dequantize_shape)
      .set_attr<TFillsInputs>("TFillsInputs", true)
      .set_attr<FInferType>("FInferType", dequantize_type)
      .set_attr<FCompute>("FCompute<cpu>", dequantize_compute)
      .set_attr<FGradient>("FGradient", quant::no_gradient());
  quantized_op("_contrib_quantized_fully_connected",
               "A fully connected layer on int8 / uint8 data and int8 weights (MXNet's "
               "quantized_fully_connected, with oneDNN's fusions): the int32 result with its "
               "range, or with min_calib_range / max_calib_range the result requantized to "
               "int8 (uint8 when non-negative or with_relu). The weight range may be one per "
               "output unit; the bias may be int8 (with its range), int32 (in the "
               "accumulator's scale) or float32.")
      .add_alias("_npx_quantized_fully_connected")
      .set_num_inputs([](const NodeAttrs& attrs) -> uint32_t { return fc_inputs(attrs).count(); })
      .add_argument("data", "NDArray", "int8 / uint8 data.")
      .add_argument("weight", "NDArray", "int8 weight (num_hidden, inputs).")
      .add_argument("bias", "NDArray", "Bias (num_hidden,); left out when no_bias.")
      .add_argument("min_data", "NDArray", "Range of data.")
      .add_argument("max_data", "NDArray", "Range of data.")
      .add_argument("min_weight", "NDArray", "Range of weight, (1,) or (num_hidden,).")
      .add_argument("max_weight", "NDArray", "Range of weight, (1,) or (num_hidden,).")
      .add_argument("min_bias", "NDArray", "Range of an int8 bias.")
      .add_argument("max_bias", "NDArray", "Range of an int8 bias.")
      .set_params<QuantizedFCParam>()
      .set_attr<FListInputNames>(
          "FListInputNames",
          [](const NodeAttrs& attrs) { return quant::linear_input_names(fc_inputs(attrs).bias); })
      .set_attr<FInferShape>("FInferShape", fc_shape)
      .set_attr<FInferType>("FInferType",
                            [](const NodeAttrs& attrs, DTypeVector* in, DTypeVector* out) {
                              return quant::linear_types(attrs, attrs.get<QuantizedFCParam>(),
                                                         fc_inputs(attrs), in, out);
                            })
      .set_attr<FCompute>("FCompute<cpu>", fc_compute);
  quantized_op("_contrib_quantized_elemwise_add",
               "The sum of two int8 / uint8 arrays of one shape with their ranges: int8 over "
               "the calibrated range (uint8 when it is non-negative), or without one int32 over "
               "the largest possible sum (MXNet's quantized_elemwise_add).")
      .add_alias("_npx_quantized_elemwise_add")
      .set_num_inputs(6)
      .add_argument("lhs", "NDArray", "int8 / uint8 data.")
      .add_argument("rhs", "NDArray", "int8 / uint8 data of the same shape.")
      .add_argument("lhs_min", "NDArray", "Range of lhs.")
      .add_argument("lhs_max", "NDArray", "Range of lhs.")
      .add_argument("rhs_min", "NDArray", "Range of rhs.")
      .add_argument("rhs_max", "NDArray", "Range of rhs.")
      .set_params<QuantizedAddParam>()
      .set_attr<FInferShape>("FInferShape", add_shape)
      .set_attr<FInferType>("FInferType", add_type)
      .set_attr<FCompute>("FCompute<cpu>", add_compute);
  quantized_op("_contrib_quantized_batch_norm",
               "Inference batch normalization of int8 / uint8 data with the moving statistics "
               "(MXNet's quantized_batch_norm; its defaults eps 1e-3, fix_gamma True): int8 "
               "over the calibrated range (uint8 when it is non-negative), or int32 without "
               "one.")
      .set_num_inputs(7)
      .add_argument("data", "NDArray", "int8 / uint8 data.")
      .add_argument("gamma", "NDArray", "(channels,) float32.")
      .add_argument("beta", "NDArray", "(channels,) float32.")
      .add_argument("moving_mean", "NDArray", "(channels,) float32.")
      .add_argument("moving_var", "NDArray", "(channels,) float32.")
      .add_argument("min_data", "NDArray", "Range of data.")
      .add_argument("max_data", "NDArray", "Range of data.")
      .set_params<QuantizedBatchNormParam>()
      .set_attr<FInferShape>("FInferShape", qbn_shape)
      .set_attr<FInferType>("FInferType", qbn_type)
      .set_attr<FCompute>("FCompute<cpu>", qbn_compute);
  quantized_op("_contrib_quantized_concat",
               "Joins int8 / uint8 arrays along dim (MXNet's quantized_concat), each "
               "requantized onto the output's range: the calibrated one, else the widest of "
               "the inputs'; uint8 when every input is, else int8.")
      .set_num_inputs(concat_inputs)
      .add_argument("data", "NDArray[]", "num_args arrays, then each one's min and max.")
      .set_params<QuantizedConcatParam>()
      .set_attr<FListInputNames>("FListInputNames", concat_input_names)
      .set_attr<FInferShape>("FInferShape", concat_shape)
      .set_attr<FInferType>("FInferType", concat_type)
      .set_attr<FCompute>("FCompute<cpu>", concat_compute);
  quantized_op("_contrib_quantized_act",
               "relu of int8 / uint8 data; the range passes through (MXNet's quantized_act).")
      .set_num_inputs(3)
      .add_argument("data", "NDArray", "int8 / uint8 data.")
      .add_argument("min_data", "NDArray", "Its range's minimum.")
      .add_argument("max_data", "NDArray", "Its range's maximum.")
      .set_params<QuantizedActParam>()
      .set_attr<FInferShape>("FInferShape", range_inputs_shape<kMinData, kMaxData>)
      .set_attr<FInferType>("FInferType", passthrough_type)
      .set_attr<FCompute>("FCompute<cpu>", act_compute);
  quantized_op("_contrib_quantized_flatten",
               "Flattens int8 / uint8 data to (N, -1); the range passes through (MXNet's "
               "quantized_flatten).")
      .set_num_inputs(3)
      .add_argument("data", "NDArray", "int8 / uint8 data.")
      .add_argument("min_data", "NDArray", "Its range's minimum.")
      .add_argument("max_data", "NDArray", "Its range's maximum.")
      .set_attr<FInferShape>("FInferShape", flatten_shape)
      .set_attr<FInferType>("FInferType", passthrough_type)
      .set_attr<FCompute>("FCompute<cpu>", flatten_compute);
  return true;
}();

}  // namespace
}  // namespace ndx
