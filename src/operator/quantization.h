// Shared pieces of the INT8 inference ops (quantization.cc; the quantized convolution and
// pooling live in conv.cc beside their float versions): the symmetric, zero-point-free
// quantization MXNet's oneDNN backend uses, the range arguments, and the epilogue that turns
// an int32 accumulator into the int32 / int8 / uint8 output of a quantized convolution or
// fully connected layer.
//
// A quantized array q of dtype t with range (lo, hi) stands for q * R / levels(t), where
// R = max(|lo|, |hi|) and levels is 127 (int8), 255 (uint8) or 2^31 - 1 (int32).
#pragma once
#include <cmath>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "ndx/ndarray.h"
#include "ndx/op.h"
#include "operator/dnnl_ops.h"

namespace ndx::quant {

// The params a quantized convolution or fully connected layer adds to its float version:
// the calibrated range of its output (then the output is int8, or uint8 when the range is
// non-negative or relu is fused; without it the output is int32) and a fused relu.
struct Requantize {
  std::optional<double> min_calib_range, max_calib_range;
  bool with_relu = false;
};
template <class P>
void declare_requantize(ParamDecl<P>& d) {
  d.field("min_calib_range", static_cast<std::optional<double> P::*>(&P::min_calib_range))
      .set_default(std::nullopt)
      .describe("The calibrated minimum of the output; with max_calib_range, the output is int8.");
  d.field("max_calib_range", static_cast<std::optional<double> P::*>(&P::max_calib_range))
      .set_default(std::nullopt)
      .describe("The calibrated maximum of the output.");
  d.field("with_relu", static_cast<bool P::*>(&P::with_relu))
      .set_default(false)
      .describe("Whether a relu follows (fused into the op).");
}

double levels(DType t);

// v rounded to nearest (ties to even) and saturated into T's range; nan gives 0. Branch-free
// so the loops vectorize: clamp first, then round by adding and subtracting 1.5 * 2^52 (exact
// for |v| < 2^51, and rounding to even as the FPU does).
template <class T>
inline T saturate(double v) {
  constexpr double lo = static_cast<double>(std::numeric_limits<T>::lowest());
  constexpr double hi = static_cast<double>(std::numeric_limits<T>::max());
  constexpr double magic = 6755399441055744.0;  // 1.5 * 2^52
  v = v == v ? v : 0.0;
  v = v < lo ? lo : v;
  v = v > hi ? hi : v;
  return static_cast<T>((v + magic) - magic);
}

// The range outputs 1 and 2 of an INT8 op: float32 scalars of shape (1,).
void range_output_shapes(const NodeAttrs& attrs, ShapeVector* out);
// A range argument's shape: (1,) (unknown: set), or (channels,) when channels > 1.
void expect_range_shape(const NodeAttrs& attrs, ShapeVector* in, int i, const char* arg,
                        int64_t channels = 1);
// min_calib_range / max_calib_range: both or neither, finite, min <= max.
void check_calib_range(const NodeAttrs& attrs, const std::optional<double>& lo,
                       const std::optional<double>& hi);
// max(|lo|, |hi|), or 1 when that is 0 or not finite (an all-zero array: any scale works).
double real_range(double lo, double hi);

// Input positions of a quantized convolution / fully connected op:
// data, weight, [bias], min_data, max_data, min_weight, max_weight, [min_bias, max_bias].
struct LinearInputs {
  bool bias;
  int min_data() const { return bias ? 3 : 2; }
  int min_weight() const { return min_data() + 2; }
  int min_bias() const { return min_data() + 4; }
  int count() const { return bias ? 9 : 6; }
};
std::vector<std::string> linear_input_names(bool bias);

// Shape inference of everything but data, weight and the output itself: ranges (1,) (the
// weight's also (channels,)), bias (channels,), the range outputs (1,).
void linear_range_shapes(const NodeAttrs& attrs, const LinearInputs& at, int64_t channels,
                         ShapeVector* in, ShapeVector* out);
bool linear_types(const NodeAttrs& attrs, const Requantize& p, const LinearInputs& at,
                  DTypeVector* in, DTypeVector* out);

// What a quantized convolution or fully connected layer computes besides the int32 sum:
// per-channel output scales, the bias in accumulator units, the output dtype and range.
struct LinearEpilogue {
  dnnl::Int8Spec spec;
  std::vector<float> scale, bias;  // bias empty when there is none
  DType out_type = DType::kInt32;
  float out_lo = 0, out_hi = 0;
};
LinearEpilogue linear_epilogue(const NodeAttrs& attrs, const Requantize& p, const LinearInputs& at,
                               int64_t channels, const std::vector<TBlob>& in);

// The reference path (no oneDNN): out = the epilogue applied to the exact sums acc (n,
// channels, plane), computed from the small integers in double.
void finish_from_sums(const LinearEpilogue& e, const double* acc, int64_t n, int64_t channels,
                      int64_t plane, const TBlob& out);
// Writes (lo, hi) into the range outputs out[1], out[2].
void write_range(const std::vector<TBlob>& out, double lo, double hi);
// A contiguous copy of an integer array's values in float dtype t (exact for int8 / uint8).
NDArray float_values(const TBlob& b, DType t = DType::kFloat32);
// uint8 data must have a range from 0 (no zero point): ValueError for lo < 0.
void require_zero_based(const NodeAttrs& attrs, DType t, double lo, const char* arg);
// A range argument's single value; names the argument in the error.
double range_value(const NodeAttrs& attrs, const TBlob& b, const char* arg);
// Whether out is a contiguous array the kernel may write directly.
bool writes_directly(const TBlob& out, OpReqType req);

// The gradient of an INT8 op: none (they are inference ops).
FGradient no_gradient();

}  // namespace ndx::quant
