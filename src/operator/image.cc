// Image ops (MXNet's _image_* under npx.image): to_tensor and resize of (H, W, C) images or
// (N, H, W, C) batches. The rest of npx.image (normalize, crop, flips, colour jitter, lighting)
// is made of elementwise and slicing ops in Python, so autograd and hybridize see through it.
#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "kernel/functor_traits.h"
#include "kernel/parallel.h"
#include "ndx/graph.h"
#include "operator/kernel_util.h"
#include "operator/nn_check.h"

namespace ndx {
namespace {

using kernel::as_array;
using kernel::to_blob;
using kernel::write_req;

// The image dims of an (H, W, C) or (N, H, W, C) array, checked.
struct ImageDims {
  int64_t n, h, w, c;
};

ImageDims image_dims(const Shape& s, const char* op) {
  if (s.ndim() != 3 && s.ndim() != 4)
    value_error("[", op, "] data must be (H, W, C) or (N, H, W, C), got shape ", s.str());
  const int b = s.ndim() - 3;
  return {b ? s[0] : 1, s[b], s[b + 1], s[b + 2]};
}

void check_real(DType t, const char* op) {
  if (is_complex(t) || t == DType::kBool)
    type_error("[", op, "] data must be an integer or float image, got dtype ", t);
}

// ============================== to_tensor ==============================
// (H, W, C) or (N, H, W, C) in [0, 255] -> float32 (C, H, W) or (N, C, H, W) in [0, 1].
bool ToTensorShape(const NodeAttrs&, ShapeVector* in, ShapeVector* out) {
  if (!(*in)[0].is_known()) return false;
  const Shape& s = (*in)[0];
  const ImageDims d = image_dims(s, "to_tensor");
  (*out)[0] = s.ndim() == 3 ? Shape{d.c, d.h, d.w} : Shape{d.n, d.c, d.h, d.w};
  return true;
}

bool ToTensorType(const NodeAttrs& attrs, DTypeVector* in, DTypeVector* out) {
  if ((*in)[0] == DType::kUnknown) return false;
  check_real((*in)[0], "to_tensor");
  assign_type(attrs, &(*out)[0], DType::kFloat32, "output", 0);
  return true;
}

template <class T>
void to_tensor_rows(const T* x, float* o, const ImageDims& d, int64_t r0, int64_t r1) {
  // Row r is image r / h's row r % h; its pixels scatter into c planes of the output.
  const int64_t plane = d.h * d.w;
  for (int64_t r = r0; r < r1; ++r) {
    const int64_t img = r / d.h, y = r % d.h;
    const T* row = x + r * d.w * d.c;
    float* base = o + img * d.c * plane + y * d.w;
    for (int64_t ch = 0; ch < d.c; ++ch) {
      float* dst = base + ch * plane;
      for (int64_t px = 0; px < d.w; ++px)
        dst[px] = static_cast<float>(row[px * d.c + ch]) / 255.0f;
    }
  }
}

void ToTensorCompute(const NodeAttrs&, const OpContext&, const std::vector<TBlob>& in,
                     const std::vector<OpReqType>& req, const std::vector<TBlob>& out) {
  if (req[0] == kNullOp || out[0].size() == 0) return;
  const ImageDims d = image_dims(in[0].shape, "to_tensor");
  const bool direct = req[0] != kAddTo && out[0].is_contiguous();
  NDArray scratch;
  float* o = static_cast<float*>(out[0].dptr);
  if (!direct) {
    scratch = NDArray(out[0].shape, DType::kFloat32, cpu());
    o = static_cast<float*>(scratch.raw_data());
  }
  std::vector<NDArray> keep;
  const TBlob x =
      in[0].dtype == DType::kUInt8 ? in[0] : kernel::cast_blob(in[0], DType::kFloat32, &keep);
  const int64_t rows = d.n * d.h;
  const int64_t grain = std::max<int64_t>(1, kernel::kGrain / std::max<int64_t>(d.w * d.c, 1));
  kernel::parallel_for(rows, grain, [&](int64_t r0, int64_t r1) {
    if (x.dtype == DType::kUInt8)
      to_tensor_rows(static_cast<const uint8_t*>(x.dptr), o, d, r0, r1);
    else
      to_tensor_rows(static_cast<const float*>(x.dptr), o, d, r0, r1);
  });
  if (!direct) write_req(scratch, as_array(out[0]), req[0]);
}

// ============================== resize ==============================
struct ResizeParam {
  Shape size;
  bool keep_ratio = false;
  int64_t interp = 1;
  static void declare(ParamDecl<ResizeParam>& d) {
    d.field("size", &ResizeParam::size)
        .describe(
            "(width, height) of the output, or one length: both sides, or with keep_ratio "
            "the shorter side.");
    d.field("keep_ratio", &ResizeParam::keep_ratio)
        .set_default(false)
        .describe("With one length: keep the aspect ratio, the shorter side becoming size.");
    d.field("interp", &ResizeParam::interp)
        .set_default(int64_t{1})
        .describe(
            "OpenCV's interpolation code: 0 nearest, 1 bilinear, 2 bicubic, 3 area, 4 "
            "Lanczos (8x8).");
  }
};

// (height, width) of the output for an input of h x w, as MXNet's resize computes them.
std::pair<int64_t, int64_t> resized_hw(const ResizeParam& p, int64_t h, int64_t w) {
  const Shape& s = p.size;
  if (s.ndim() != 1 && s.ndim() != 2)
    value_error("[resize] size must be one length or (width, height), got ", s.str());
  for (int i = 0; i < s.ndim(); ++i)
    if (s[i] <= 0 || s[i] > (int64_t{1} << 30))
      value_error("[resize] size must hold lengths in [1, 2**30], got ", s.str());
  if (p.interp < 0 || p.interp > 4)
    value_error("[resize] interp must be OpenCV's 0 (nearest), 1 (bilinear), 2 (bicubic), ",
                "3 (area) or 4 (Lanczos), got ", p.interp);
  std::pair<int64_t, int64_t> hw;
  if (s.ndim() == 2)
    hw = {s[1], s[0]};
  else if (!p.keep_ratio || h == 0 || w == 0)
    hw = {s[0], s[0]};
  else if (h > w)
    hw = {static_cast<int64_t>(static_cast<double>(h) * s[0] / w), s[0]};
  else
    hw = {s[0], static_cast<int64_t>(static_cast<double>(w) * s[0] / h)};
  return hw;
}

bool ResizeShape(const NodeAttrs& attrs, ShapeVector* in, ShapeVector* out) {
  if (!(*in)[0].is_known()) return false;
  Shape o = (*in)[0];
  const ImageDims d = image_dims(o, "resize");
  const auto [oh, ow] = resized_hw(attrs.get<ResizeParam>(), d.h, d.w);
  if (d.h == 0 || d.w == 0)
    value_error("[resize] can't resize an image of ", d.h, " x ", d.w, " pixels");
  o[o.ndim() - 3] = oh;
  o[o.ndim() - 2] = ow;
  checked_size(o, 8, "resize");
  assign_shape(attrs, &(*out)[0], o, "output", 0);
  return true;
}

// Output dtype = input dtype, for any integer or float image.
bool SameImageType(const NodeAttrs& attrs, DTypeVector* in, DTypeVector* out) {
  if ((*in)[0] == DType::kUnknown) return false;
  check_real((*in)[0], attrs.op ? attrs.op->name.c_str() : "image");
  assign_type(attrs, &(*out)[0], (*in)[0], "output", 0);
  return true;
}

// Where each output coordinate samples along an axis of n inputs, OpenCV's way: bilinear takes
// the pixel-centre position (i + 0.5) * n / m - 0.5, clamped to the first and last pixel, and
// blends its two neighbours; nearest takes floor(i * n / m); area, when the image grows along
// either axis, blends pixel s = floor(i * n / m) with the next by the part of output pixel i
// past input pixel s's end (so an integer enlargement repeats pixels), as OpenCV's INTER_AREA.
struct AxisTaps {
  std::vector<int64_t> lo, hi;
  std::vector<double> frac;
};

enum class Taps { kNearest, kBilinear, kAreaGrowing };

AxisTaps axis_taps(int64_t n, int64_t m, Taps kind) {
  AxisTaps t;
  const double scale = static_cast<double>(n) / static_cast<double>(m);
  for (int64_t i = 0; i < m; ++i) {
    if (kind == Taps::kAreaGrowing) {
      int64_t k = static_cast<int64_t>(std::floor(static_cast<double>(i) * scale));
      double a = static_cast<double>(i + 1) - static_cast<double>(k + 1) / scale;
      a = a <= 0 ? 0.0 : a - std::floor(a);
      if (k >= n - 1) k = n - 1, a = 0.0;
      t.lo.push_back(k), t.hi.push_back(std::min(k + 1, n - 1)), t.frac.push_back(a);
      continue;
    }
    if (kind == Taps::kNearest) {
      const int64_t k = std::min(static_cast<int64_t>(std::floor(i * scale)), n - 1);
      t.lo.push_back(k), t.hi.push_back(k), t.frac.push_back(0.0);
      continue;
    }
    const double f = (static_cast<double>(i) + 0.5) * scale - 0.5;
    int64_t k = static_cast<int64_t>(std::floor(f));
    double a = f - static_cast<double>(k);
    if (k < 0) k = 0, a = 0.0;
    if (k >= n - 1) k = n - 1, a = 0.0;
    t.lo.push_back(k), t.hi.push_back(std::min(k + 1, n - 1)), t.frac.push_back(a);
  }
  return t;
}

// The range an integer dtype saturates to ({0, 0} for floats, which are stored as computed).
std::pair<double, double> integer_range(DType t) {
  std::pair<double, double> r{0, 0};
  NDX_DTYPE_SWITCH(t, T, {
    if constexpr (std::is_integral_v<T>)
      r = {static_cast<double>(std::numeric_limits<T>::lowest()),
           static_cast<double>(std::numeric_limits<T>::max())};
  });
  return r;
}

// Output rows [r0, r1) (image r / oh, row r % oh) of x (float or double, contiguous N H W C).
// For integer outputs (range.first < range.second) each value is rounded to the nearest and
// saturated, as OpenCV stores integer images.
template <class F>
void resize_rows(const F* x, F* o, const ImageDims& d, int64_t oh, int64_t ow, const AxisTaps& ty,
                 const AxisTaps& tx, std::pair<double, double> range, int64_t r0, int64_t r1) {
  const int64_t c = d.c;
  const bool round = range.first < range.second;
  const F lo = static_cast<F>(range.first), hi = static_cast<F>(range.second);
  for (int64_t r = r0; r < r1; ++r) {
    const int64_t img = r / oh, y = r % oh;
    const F* row0 = x + ((img * d.h) + ty.lo[y]) * d.w * c;
    const F* row1 = x + ((img * d.h) + ty.hi[y]) * d.w * c;
    const F fy = static_cast<F>(ty.frac[y]);
    F* dst = o + r * ow * c;
    for (int64_t px = 0; px < ow; ++px) {
      const F fx = static_cast<F>(tx.frac[px]);
      const int64_t a = tx.lo[px] * c, b = tx.hi[px] * c;
      for (int64_t ch = 0; ch < c; ++ch) {
        const F top = row0[a + ch] * (F(1) - fx) + row0[b + ch] * fx;
        const F bottom = row1[a + ch] * (F(1) - fx) + row1[b + ch] * fx;
        const F v = top * (F(1) - fy) + bottom * fy;
        dst[px * c + ch] = round ? std::clamp(std::nearbyint(v), lo, hi) : v;
      }
    }
  }
}

// Per output index i, the taps [begin[i], begin[i + 1]) of (input index, weight): a resize
// along one axis as a sparse row of weights (the area and the kernel resizes).
struct WeightTaps {
  std::vector<size_t> begin{0};
  std::vector<int64_t> index;
  std::vector<double> weight;
  void add(int64_t i, double w) { index.push_back(i), weight.push_back(w); }
  void end_output() { begin.push_back(index.size()); }
};

// OpenCV's INTER_AREA when shrinking n pixels to m: output i averages the input over
// [i n / m, (i + 1) n / m), each pixel weighted by how much of it lies inside (fractions under
// 1e-3 dropped, and the last cell cut at the border, as OpenCV's area table).
WeightTaps area_taps(int64_t n, int64_t m) {
  WeightTaps t;
  const double scale = static_cast<double>(n) / static_cast<double>(m);
  for (int64_t i = 0; i < m; ++i) {
    const double f1 = static_cast<double>(i) * scale, f2 = f1 + scale;
    int64_t k2 = std::min(static_cast<int64_t>(std::floor(f2)), n - 1);
    int64_t k1 = std::min(static_cast<int64_t>(std::ceil(f1)), k2);
    const double cell = std::min(scale, static_cast<double>(n) - f1);
    if (static_cast<double>(k1) - f1 > 1e-3) t.add(k1 - 1, (static_cast<double>(k1) - f1) / cell);
    for (int64_t k = k1; k < k2; ++k) t.add(k, 1.0 / cell);
    if (f2 - static_cast<double>(k2) > 1e-3)
      t.add(k2, std::min(std::min(f2 - static_cast<double>(k2), 1.0), cell) / cell);
    t.end_output();
  }
  return t;
}

// Output rows [r0, r1) of a resize by weight taps, summed in double: each output row first
// blends its input rows, then each pixel its input columns.
template <class F>
void weighted_rows(const F* x, F* o, const ImageDims& d, int64_t oh, int64_t ow,
                   const WeightTaps& ty, const WeightTaps& tx, std::pair<double, double> range,
                   int64_t r0, int64_t r1) {
  const int64_t c = d.c, row_len = d.w * c;
  const bool round = range.first < range.second;
  std::vector<double> blended(static_cast<size_t>(row_len));
  for (int64_t r = r0; r < r1; ++r) {
    const int64_t img = r / oh, y = r % oh;
    std::fill(blended.begin(), blended.end(), 0.0);
    for (size_t k = ty.begin[y]; k < ty.begin[y + 1]; ++k) {
      const F* src = x + (img * d.h + ty.index[k]) * row_len;
      for (int64_t j = 0; j < row_len; ++j)
        blended[j] += ty.weight[k] * static_cast<double>(src[j]);
    }
    F* dst = o + r * ow * c;
    for (int64_t px = 0; px < ow; ++px) {
      for (int64_t ch = 0; ch < c; ++ch) {
        double v = 0;
        for (size_t k = tx.begin[px]; k < tx.begin[px + 1]; ++k)
          v += tx.weight[k] * blended[tx.index[k] * c + ch];
        dst[px * c + ch] =
            static_cast<F>(round ? std::clamp(std::nearbyint(v), range.first, range.second) : v);
      }
    }
  }
}

// OpenCV's bicubic (Keys' kernel with A = -0.75, 4 taps) and Lanczos-4 (8 taps) resizing: output
// i samples input position f = (i + 0.5) n / m - 0.5 through the taps floor(f) - K/2 + 1 ...
// floor(f) + K/2, clamped to the image (its border replicated); no antialiasing when shrinking,
// as OpenCV's.
void cubic_weights(double t, double* w) {
  constexpr double A = -0.75;
  w[0] = ((A * (t + 1) - 5 * A) * (t + 1) + 8 * A) * (t + 1) - 4 * A;
  w[1] = ((A + 2) * t - (A + 3)) * t * t + 1;
  w[2] = ((A + 2) * (1 - t) - (A + 3)) * (1 - t) * (1 - t) + 1;
  w[3] = 1 - w[0] - w[1] - w[2];
}

// sin(pi d) sin(pi d / 4) / (pi^2 d^2 / 4) at d = t + 3 - j, normalized to sum 1.
void lanczos4_weights(double t, double* w) {
  constexpr double kPi = 3.14159265358979323846;
  if (t < 1e-7) {  // on a pixel: that pixel alone (the formula is 0 / 0 there)
    for (int j = 0; j < 8; ++j) w[j] = j == 3 ? 1.0 : 0.0;
    return;
  }
  double sum = 0;
  for (int j = 0; j < 8; ++j) {
    const double d = t + 3 - j;
    w[j] = std::sin(kPi * d) * std::sin(kPi * d / 4) / (kPi * kPi * d * d / 4);
    sum += w[j];
  }
  for (int j = 0; j < 8; ++j) w[j] /= sum;
}

WeightTaps kernel_taps(int64_t n, int64_t m, int64_t interp) {
  WeightTaps t;
  const int k = interp == 2 ? 4 : 8;
  const double scale = static_cast<double>(n) / static_cast<double>(m);
  double w[8];
  for (int64_t i = 0; i < m; ++i) {
    const double f = (static_cast<double>(i) + 0.5) * scale - 0.5;
    const int64_t k0 = static_cast<int64_t>(std::floor(f));
    const double frac = f - static_cast<double>(k0);
    if (k == 4)
      cubic_weights(frac, w);
    else
      lanczos4_weights(frac, w);
    for (int j = 0; j < k; ++j) t.add(std::clamp<int64_t>(k0 - k / 2 + 1 + j, 0, n - 1), w[j]);
    t.end_output();
  }
  return t;
}

void ResizeCompute(const NodeAttrs& attrs, const OpContext&, const std::vector<TBlob>& in,
                   const std::vector<OpReqType>& req, const std::vector<TBlob>& out) {
  if (req[0] == kNullOp || out[0].size() == 0) return;
  const auto& p = attrs.get<ResizeParam>();
  const ImageDims d = image_dims(in[0].shape, "resize");
  const int nd = out[0].ndim();
  const int64_t oh = out[0].shape[nd - 3], ow = out[0].shape[nd - 2];
  const DType ct = in[0].dtype == DType::kFloat64 ? DType::kFloat64 : DType::kFloat32;
  std::vector<NDArray> keep;
  const TBlob x = kernel::cast_blob(in[0], ct, &keep);
  NDArray result(out[0].shape, ct, cpu());
  const int64_t grain = std::max<int64_t>(1, kernel::kGrain / std::max<int64_t>(ow * d.c, 1));
  const auto range = integer_range(out[0].dtype);
  const bool area_shrink = p.interp == 3 && oh <= d.h && ow <= d.w;  // (both axes)
  if (p.interp == 2 || p.interp == 4 || area_shrink) {
    const WeightTaps ty = area_shrink ? area_taps(d.h, oh) : kernel_taps(d.h, oh, p.interp);
    const WeightTaps tx = area_shrink ? area_taps(d.w, ow) : kernel_taps(d.w, ow, p.interp);
    kernel::parallel_for(d.n * oh, grain, [&](int64_t r0, int64_t r1) {
      if (ct == DType::kFloat64)
        weighted_rows(static_cast<const double*>(x.dptr), static_cast<double*>(result.raw_data()),
                      d, oh, ow, ty, tx, range, r0, r1);
      else
        weighted_rows(static_cast<const float*>(x.dptr), static_cast<float*>(result.raw_data()), d,
                      oh, ow, ty, tx, range, r0, r1);
    });
    write_req(result, as_array(out[0]), req[0]);
    return;
  }
  const Taps kind = p.interp == 0   ? Taps::kNearest
                    : p.interp == 1 ? Taps::kBilinear
                                    : Taps::kAreaGrowing;
  const AxisTaps ty = axis_taps(d.h, oh, kind), tx = axis_taps(d.w, ow, kind);
  kernel::parallel_for(d.n * oh, grain, [&](int64_t r0, int64_t r1) {
    if (ct == DType::kFloat64)
      resize_rows(static_cast<const double*>(x.dptr), static_cast<double*>(result.raw_data()), d,
                  oh, ow, ty, tx, range, r0, r1);
    else
      resize_rows(static_cast<const float*>(x.dptr), static_cast<float*>(result.raw_data()), d, oh,
                  ow, ty, tx, range, r0, r1);
  });
  write_req(result, as_array(out[0]), req[0]);
}

// ============================== adjust_hue ==============================
// Rotates each RGB pixel's hue by alpha turns through the HLS model, as MXNet's adjust_hue
// does: values in [0, 255], computed in float; integer images clamp and truncate (MXNet's
// saturate_cast); images of one channel are copied.
struct AdjustHueParam {
  double alpha = 0;
  static void declare(ParamDecl<AdjustHueParam>& d) {
    d.field("alpha", &AdjustHueParam::alpha).describe("The hue shift in turns (1: a full turn).");
  }
};

bool SameImageShape(const NodeAttrs& attrs, ShapeVector* in, ShapeVector* out) {
  if (!(*in)[0].is_known()) return false;
  const ImageDims d = image_dims((*in)[0], "adjust_hue");
  if (d.c != 1 && d.c != 3)
    value_error("[adjust_hue] images must have 1 or 3 channels, got shape ", (*in)[0].str());
  assign_shape(attrs, &(*out)[0], (*in)[0], "output", 0);
  return true;
}

struct Hls {
  float h, l, s;
};

// r, g, b in [0, 1] -> hue in degrees [0, 360), lightness, saturation.
Hls rgb_to_hls(float r, float g, float b) {
  const float hi = std::max({r, g, b}), lo = std::min({r, g, b}), span = hi - lo;
  const float l = (hi + lo) * 0.5f;
  if (span <= std::numeric_limits<float>::epsilon()) return {0.f, l, 0.f};
  const float s = l < 0.5f ? span / (hi + lo) : span / (2.f - hi - lo);
  float h = hi == r   ? (g - b) * 60.f / span
            : hi == g ? (b - r) * 60.f / span + 120.f
                      : (r - g) * 60.f / span + 240.f;
  if (h < 0.f) h += 360.f;
  return {h, l, s};
}

// The inverse: rgb[0..2] in [0, 1].
void hls_to_rgb(Hls c, float* rgb) {
  if (c.s == 0.f) {
    rgb[0] = rgb[1] = rgb[2] = c.l;
    return;
  }
  const float top = c.l <= 0.5f ? c.l * (1.f + c.s) : c.l + c.s - c.l * c.s;
  const float bottom = 2.f * c.l - top;
  float h = std::fmod(c.h / 60.f, 6.f);
  if (h < 0.f) h += 6.f;
  if (!(h >= 0.f && h < 6.f)) {  // a NaN or infinite input: no hue to rotate
    rgb[0] = rgb[1] = rgb[2] = std::numeric_limits<float>::quiet_NaN();
    return;
  }
  const int sector = std::min(static_cast<int>(h), 5);
  const float f = h - static_cast<float>(sector);
  const float rising = bottom + (top - bottom) * f, falling = bottom + (top - bottom) * (1.f - f);
  // Per 60-degree sector: which channel is at the top, which at the bottom, which moving.
  const float table[6][3] = {{top, rising, bottom}, {falling, top, bottom},
                             {bottom, top, rising}, {bottom, falling, top},
                             {rising, bottom, top}, {top, bottom, falling}};
  for (int k = 0; k < 3; ++k) rgb[k] = table[sector][k];
}

void AdjustHueCompute(const NodeAttrs& attrs, const OpContext&, const std::vector<TBlob>& in,
                      const std::vector<OpReqType>& req, const std::vector<TBlob>& out) {
  if (req[0] == kNullOp || out[0].size() == 0) return;
  const ImageDims d = image_dims(in[0].shape, "adjust_hue");
  if (d.c == 1) {
    write_req(as_array(in[0]), as_array(out[0]), req[0]);
    return;
  }
  const float turn = static_cast<float>(attrs.get<AdjustHueParam>().alpha) * 360.f;
  std::vector<NDArray> keep;
  const TBlob x = kernel::cast_blob(in[0], DType::kFloat32, &keep);
  NDArray result(out[0].shape, DType::kFloat32, cpu());
  const auto range = integer_range(out[0].dtype);
  const bool clamp = range.first < range.second;
  const auto* src = static_cast<const float*>(x.dptr);
  auto* dst = static_cast<float*>(result.raw_data());
  kernel::parallel_for(in[0].size() / 3, kernel::kGrain / 3, [&](int64_t p0, int64_t p1) {
    for (int64_t p = p0; p < p1; ++p) {
      Hls c = rgb_to_hls(src[3 * p] / 255.f, src[3 * p + 1] / 255.f, src[3 * p + 2] / 255.f);
      c.h += turn;
      float rgb[3];
      hls_to_rgb(c, rgb);
      for (int k = 0; k < 3; ++k) {
        const float v = rgb[k] * 255.f;
        if (!clamp)
          dst[3 * p + k] = v;
        else  // NaN stores as 0 in an integer image
          dst[3 * p + k] = v != v ? 0.f
                                  : std::trunc(std::clamp(v, static_cast<float>(range.first),
                                                          static_cast<float>(range.second)));
      }
    }
  });
  write_req(result, as_array(out[0]), req[0]);
}

// Data augmentation runs outside autograd: a backward pass that reaches one of these ops
// raises rather than get a gradient ndx does not compute.
constexpr const char* kNoImageGradient = "run image transforms outside autograd";

[[maybe_unused]] const bool registered = [] {
  OpRegistry::global()
      .register_op("_image_to_tensor")
      .describe(
          "An (H, W, C) image or (N, H, W, C) batch with values in [0, 255] as float32 "
          "(C, H, W) or (N, C, H, W) in [0, 1] (each value divided by 255).")
      .set_num_inputs(1)
      .add_argument("data", "NDArray", "The image(s), any integer or float dtype.")
      .set_attr<FInferShape>("FInferShape", ToTensorShape)
      .set_attr<FInferType>("FInferType", ToTensorType)
      .set_attr<FCompute>("FCompute<cpu>", ToTensorCompute)
      .set_attr<FGradient>("FGradient", nn_check::no_gradient_yet("to_tensor", kNoImageGradient));
  OpRegistry::global()
      .register_op("_image_resize")
      .describe(
          "Resizes an (H, W, C) image or (N, H, W, C) batch as OpenCV's cv2.resize does "
          "(bilinear or nearest); integer images round and saturate.")
      .set_num_inputs(1)
      .add_argument("data", "NDArray", "The image(s), any integer or float dtype.")
      .set_params<ResizeParam>()
      .set_attr<FInferShape>("FInferShape", ResizeShape)
      .set_attr<FInferType>("FInferType", SameImageType)
      .set_attr<FCompute>("FCompute<cpu>", ResizeCompute)
      .set_attr<FGradient>("FGradient", nn_check::no_gradient_yet("resize", kNoImageGradient));
  OpRegistry::global()
      .register_op("_image_adjust_hue")
      .describe(
          "Rotates the hue of (H, W, 3) / (N, H, W, 3) RGB images in [0, 255] by alpha turns "
          "(through HLS); integer images clamp and truncate, one-channel images are copied.")
      .set_num_inputs(1)
      .add_argument("data", "NDArray", "The image(s), any integer or float dtype.")
      .set_params<AdjustHueParam>()
      .set_attr<FInferShape>("FInferShape", SameImageShape)
      .set_attr<FInferType>("FInferType", SameImageType)
      .set_attr<FCompute>("FCompute<cpu>", AdjustHueCompute)
      .set_attr<FGradient>("FGradient", nn_check::no_gradient_yet("adjust_hue", kNoImageGradient));
  return true;
}();

}  // namespace
}  // namespace ndx
