// Convolution, transposed convolution and pooling ops of the numpy extension (ndx.npx,
// registered as _npx_*), MXNet semantics, 1-d (N, C, W), 2-d (N, C, H, W) and 3-d
// (N, C, D, H, W) layouts:
//
//   _npx_convolution(data, weight[, bias])    im2col + GEMM per group (OpenBLAS), with the
//                                             first-order backward _backward_convolution
//                                             (ograd, data, weight[, bias]) -> (grad data, grad
//                                             weight[, grad bias]) via col2im.
//   _npx_deconvolution(data, weight[, bias])  the adjoint of convolution: GEMM with the weight
//                                             transposed, then col2im into the output; its
//                                             backward is a convolution of the ograd (im2col +
//                                             GEMM) for data and weight.
//   _npx_pooling(data)                        max / avg / sum pooling, 'valid' or 'full'
//                                             convention, global pooling; backward
//                                             _backward_pooling(ograd, data, out) -> grad data.
//
// Every problem runs as a 3-d one (kernel/conv_geom.h): a 2-d problem has D = 1 (kernel 1,
// stride 1, pad 0, dilate 1 along D), a 1-d one also H = 1. The CPU kernels here are the
// reference ones (clarity first). GPU arrays run 1-d and 2-d convolution and pooling (cuDNN or
// im2col + cuBLAS, kernel/cuda/conv.cu); 3-d problems and transposed convolution raise
// NotImplementedError there. Kernels take contiguous inputs (the ops do not declare
// TStridedInputs); the 16-bit floats compute in float, pooling sums accumulate in double.
#include <cblas.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <optional>
#include <string>

#include "kernel/blob.h"
#include "kernel/conv_geom.h"
#include "kernel/gpu.h"
#include "kernel/host_fallback.h"
#include "kernel/parallel.h"
#include "kernel/pool.h"
#include "ndx/graph.h"
#include "operator/conv_epilogue.h"
#include "operator/dnnl_ops.h"
#include "operator/gemm.h"
#include "operator/kernel_util.h"
#include "operator/nn_check.h"
#include "operator/quantization.h"

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
using nn_check::output_shape_of_input;
using nn_check::register_backward;
using nn_check::require_float;
using nn_check::same_float_type;

using Geom = kernel::ConvGeom;

// A per-spatial-dim tuple param: () gives `def` in every dim, else one value per dim, each
// at least `lower`.
std::vector<int64_t> spatial_values(const NodeAttrs& attrs, const Shape& v, int nsp, int64_t def,
                                    int64_t lower, const char* name) {
  if (v.ndim() == 0) return std::vector<int64_t>(static_cast<size_t>(nsp), def);
  if (v.ndim() != nsp)
    value_error("[", op_name(attrs), "] parameter '", name, "' has ", v.ndim(),
                " values, expected ", nsp, " (one per spatial dimension of the ", nsp,
                "-d kernel), got ", v.str());
  for (int i = 0; i < nsp; ++i)
    if (v[i] < lower)
      value_error("[", op_name(attrs), "] parameter '", name, "' must have values >= ", lower,
                  ", got ", v.str());
  return std::vector<int64_t>(v.begin(), v.end());
}

// Checks data's rank against the spatial rank nsp and the layout, and fills n, c, d, h, w.
void data_dims(const NodeAttrs& attrs, const Shape& d, int nsp,
               const std::optional<std::string>& layout, Geom* g) {
  if (d.ndim() < 3 || d.ndim() > 5)
    value_error("[", op_name(attrs),
                "] argument 'data' must have 3 dimensions (N, C, W), 4 dimensions (N, C, H, W) "
                "or 5 dimensions (N, C, D, H, W), got shape ",
                d.str());
  if (layout) {
    const int want = *layout == "NCW" ? 1 : *layout == "NCHW" ? 2 : 3;
    if (want != d.ndim() - 2)
      value_error("[", op_name(attrs), "] layout '", *layout, "' expects ", want + 2,
                  "-d data, got shape ", d.str());
  }
  if (d.ndim() - 2 != nsp)
    value_error("[", op_name(attrs), "] the kernel has ", nsp, " spatial dimension",
                nsp == 1 ? "" : "s", " but argument 'data' of shape ", d.str(), " has ",
                d.ndim() - 2);
  g->nsp = nsp;
  g->n = d[0];
  g->c = d[1];
  g->d = nsp == 3 ? d[2] : 1;
  g->h = nsp >= 2 ? d[d.ndim() - 2] : 1;
  g->w = d[d.ndim() - 1];
}

const char* kAxisNames[3] = {"D", "H", "W"};

// The geom axis (0 = D, 1 = H, 2 = W) of spatial dim i of an nsp-d problem.
int axis_of(int nsp, int i) { return 3 - nsp + i; }

// (lead..., the nsp spatial sizes of g's kernel): a weight shape.
Shape with_kernel(Shape lead, const Geom& g) {
  if (g.nsp == 3) lead.push_back(g.kd);
  if (g.nsp >= 2) lead.push_back(g.kh);
  lead.push_back(g.kw);
  return lead;
}

void check_kernel_rank(const NodeAttrs& attrs, const Shape& kernel, const char* extra = "") {
  if (kernel.ndim() < 1 || kernel.ndim() > 3)
    value_error("[", op_name(attrs), "] parameter 'kernel' must have 1, 2 or 3 values", extra,
                ", got ", kernel.str());
}

bool use_cudnn();

enum class GpuOp { kPooling, kConvolution, kTransposed };

// GPU arrays run pooling and convolution of non-empty arrays in 1-d and 2-d, and 3-d
// convolution and every transposed convolution through cuDNN. 3-d pooling, those without
// cuDNN, and empty batches, channels, filters or planes (which cuDNN refuses) run the CPU
// kernel on host copies (kernel/host_fallback.h).
void fall_back_unless_gpu_covers(const NodeAttrs& attrs, const Geom& g,
                                 const std::vector<TBlob>& in, const std::vector<TBlob>& out,
                                 GpuOp op = GpuOp::kPooling) {
  if (!out[0].device.is_gpu()) return;
  if (op == GpuOp::kTransposed && !use_cudnn())
    kernel::fall_back_to_host("[", op_name(attrs), "] transposed convolution needs cuDNN");
  if (g.nsp == 3 && (op == GpuOp::kPooling || !use_cudnn()))
    kernel::fall_back_to_host("[", op_name(attrs), "] 3-d (NCDHW) data has no GPU kernel",
                              op == GpuOp::kPooling ? "" : " without cuDNN");
  for (const auto* blobs : {&in, &out})
    for (const TBlob& b : *blobs)
      if (b.size() == 0)
        kernel::fall_back_to_host("[", op_name(attrs), "] empty arrays have no GPU kernel");
}

// ============================== convolution ==============================
struct ConvolutionFields {
  Shape kernel;
  Shape stride;
  Shape dilate;
  Shape pad;
  int64_t num_filter = 0;
  int64_t num_group = 1;
  bool no_bias = false;
  std::optional<std::string> layout;
};

// Convolution's params, declared for P (ConvolutionParam, or a struct that adds to them).
template <class P>
void declare_convolution(ParamDecl<P>& d) {
  using F = ConvolutionFields;
  d.field("kernel", static_cast<Shape P::*>(&F::kernel))
      .describe("The kernel's spatial size: (kw,), (kh, kw) or (kd, kh, kw).");
  d.field("stride", static_cast<Shape P::*>(&F::stride))
      .set_default(Shape{})
      .describe("The stride per spatial dimension; () means 1 in each.");
  d.field("dilate", static_cast<Shape P::*>(&F::dilate))
      .set_default(Shape{})
      .describe("The dilation per spatial dimension; () means 1 in each.");
  d.field("pad", static_cast<Shape P::*>(&F::pad))
      .set_default(Shape{})
      .describe("Zero padding on both sides per spatial dimension; () means 0 in each.");
  d.field("num_filter", static_cast<int64_t P::*>(&F::num_filter))
      .set_lower_bound(1)
      .describe("The number of output channels.");
  d.field("num_group", static_cast<int64_t P::*>(&F::num_group))
      .set_default(int64_t{1})
      .set_lower_bound(1)
      .describe(
          "The number of groups: input and output channels split into num_group "
          "independent convolutions.");
  d.field("no_bias", static_cast<bool P::*>(&F::no_bias))
      .set_default(false)
      .describe("Whether to leave out the bias (then the op takes data and weight only).");
  d.field("layout", static_cast<std::optional<std::string> P::*>(&F::layout))
      .set_default(std::nullopt)
      .set_enum({"NCW", "NCHW", "NCDHW"})
      .describe(
          "The data layout: NCW (1-d), NCHW (2-d) or NCDHW (3-d); None takes it from data's "
          "rank.");
}

struct ConvolutionParam : ConvolutionFields {
  static void declare(ParamDecl<ConvolutionParam>& d) { declare_convolution(d); }
};

uint32_t conv_num_inputs(const NodeAttrs& attrs) {
  return attrs.get<ConvolutionParam>().no_bias ? 2 : 3;
}

// The geometry of a convolution of data of shape d; validates params against d.
Geom conv_geom(const NodeAttrs& attrs, const ConvolutionFields& p, const Shape& d) {
  check_kernel_rank(attrs, p.kernel);
  const int nsp = p.kernel.ndim();
  const auto k = spatial_values(attrs, p.kernel, nsp, 1, 1, "kernel");
  const auto s = spatial_values(attrs, p.stride, nsp, 1, 1, "stride");
  const auto dl = spatial_values(attrs, p.dilate, nsp, 1, 1, "dilate");
  const auto pd = spatial_values(attrs, p.pad, nsp, 0, 0, "pad");
  Geom g;
  data_dims(attrs, d, nsp, p.layout, &g);
  if (p.num_filter % p.num_group != 0)
    value_error("[", op_name(attrs), "] num_filter ", p.num_filter,
                " is not divisible by num_group ", p.num_group);
  if (g.c % p.num_group != 0)
    value_error("[", op_name(attrs), "] the ", g.c, " input channels of data (shape ", d.str(),
                ") are not divisible by num_group ", p.num_group);
  for (int i = 0; i < nsp; ++i) {
    const int a = axis_of(nsp, i);
    const auto ax = g.axis(a);
    *ax.k = k[i], *ax.s = s[i], *ax.p = pd[i], *ax.dl = dl[i];
    const int64_t eff = dl[i] * (k[i] - 1) + 1, padded = *ax.in + 2 * pd[i];
    if (eff > padded)
      value_error("[", op_name(attrs), "] the kernel size ", eff, dl[i] > 1 ? " (dilated)" : "",
                  " exceeds the padded input size ", padded, " (input ", *ax.in, " + 2 * pad ",
                  pd[i], ") along spatial dimension ", kAxisNames[a], " of data shape ", d.str());
    *ax.out = (padded - eff) / s[i] + 1;
  }
  return g;
}
Geom conv_geom(const NodeAttrs& attrs, const Shape& d) {
  return conv_geom(attrs, attrs.get<ConvolutionParam>(), d);
}

Shape conv_weight_shape(const ConvolutionFields& p, const Geom& g) {
  return with_kernel(Shape{p.num_filter, g.c / p.num_group}, g);
}
Shape conv_weight_shape(const NodeAttrs& attrs, const Geom& g) {
  return conv_weight_shape(attrs.get<ConvolutionParam>(), g);
}

bool conv_shape(const NodeAttrs& attrs, ShapeVector* in, ShapeVector* out) {
  const Shape& d = (*in)[0];
  if (!d.is_known()) return false;
  const auto& p = attrs.get<ConvolutionParam>();
  const Geom g = conv_geom(attrs, d);
  expect_shape(attrs, in, 1, conv_weight_shape(attrs, g), "weight",
               " (num_filter, channels / num_group, *kernel)");
  if (!p.no_bias) expect_shape(attrs, in, 2, Shape{p.num_filter}, "bias", " (num_filter,)");
  assign_shape(attrs, &(*out)[0], g.out_shape(p.num_filter), "output", 0);
  return true;
}

// col (c * kd * kh * kw, od * oh * ow) <- the patches of the c channels at x (c, d, h, w),
// zero padded: row (ch, kz, ky, kx) holds, for each output position, the input element that
// kernel tap meets there.
// ceil(a / b) for b > 0 and any a.
constexpr int64_t ceil_div(int64_t a, int64_t b) { return a >= 0 ? (a + b - 1) / b : -(-a / b); }

// One row of patches: r[ox] = line[ox * sw + kx * dw - pw], zero where that is outside the
// line. The outputs whose element is inside are found first, so the copy has no branch.
template <typename T>
void patch_row(const Geom& g, int64_t kx, const T* line, T* r) {
  const int64_t off = kx * g.dw - g.pw;  // the element under output ox is ox * sw + off
  const int64_t lo = std::clamp<int64_t>(ceil_div(-off, g.sw), 0, g.ow);
  const int64_t hi = std::clamp<int64_t>(ceil_div(g.w - off, g.sw), lo, g.ow);
  std::fill(r, r + lo, T(0));
  if (g.sw == 1)
    std::copy(line + lo + off, line + hi + off, r + lo);
  else
    for (int64_t ox = lo; ox < hi; ++ox) r[ox] = line[ox * g.sw + off];
  std::fill(r + hi, r + g.ow, T(0));
}

template <typename T>
void im2col(const Geom& g, int64_t c, const T* x, T* col) {
  const int64_t opl = g.out_plane(), ohw = g.oh * g.ow;
  T* row = col;
  for (int64_t ch = 0; ch < c; ++ch)
    for (int64_t kz = 0; kz < g.kd; ++kz)
      for (int64_t ky = 0; ky < g.kh; ++ky)
        for (int64_t kx = 0; kx < g.kw; ++kx, row += opl) {
          const T* vol = x + ch * g.in_plane();
          for (int64_t oz = 0; oz < g.od; ++oz) {
            const int64_t z = oz * g.sd - g.pd + kz * g.dd;
            T* slab = row + oz * ohw;
            if (z < 0 || z >= g.d) {
              std::fill(slab, slab + ohw, T(0));
              continue;
            }
            for (int64_t oy = 0; oy < g.oh; ++oy) {
              const int64_t y = oy * g.sh - g.ph + ky * g.dh;
              T* r = slab + oy * g.ow;
              if (y < 0 || y >= g.h) {
                std::fill(r, r + g.ow, T(0));
                continue;
              }
              patch_row(g, kx, vol + (z * g.h + y) * g.w, r);
            }
          }
        }
}

// x (c, d, h, w) += the patches in col (the adjoint of im2col).
template <typename T>
void col2im(const Geom& g, int64_t c, const T* col, T* x) {
  const int64_t opl = g.out_plane(), ohw = g.oh * g.ow;
  const T* row = col;
  for (int64_t ch = 0; ch < c; ++ch)
    for (int64_t kz = 0; kz < g.kd; ++kz)
      for (int64_t ky = 0; ky < g.kh; ++ky)
        for (int64_t kx = 0; kx < g.kw; ++kx, row += opl) {
          T* vol = x + ch * g.in_plane();
          for (int64_t oz = 0; oz < g.od; ++oz) {
            const int64_t z = oz * g.sd - g.pd + kz * g.dd;
            if (z < 0 || z >= g.d) continue;
            for (int64_t oy = 0; oy < g.oh; ++oy) {
              const int64_t y = oy * g.sh - g.ph + ky * g.dh;
              if (y < 0 || y >= g.h) continue;
              const T* r = row + oz * ohw + oy * g.ow;
              T* line = vol + (z * g.h + y) * g.w;
              for (int64_t ox = 0; ox < g.ow; ++ox) {
                const int64_t xx = ox * g.sw - g.pw + kx * g.dw;
                if (xx >= 0 && xx < g.w) line[xx] += r[ox];
              }
            }
          }
        }
}

// ---- the GPU path: im2col for a chunk of images at once, one strided-batched cuBLAS product
// per group over the chunk (operator/gemm.h's GemmArgs), col2im for the data gradient ----
// Images per chunk, so the patch matrix stays under 256 MiB.
int64_t chunk_images(const Geom& g, DType t) {
  const int64_t per_image = g.c * g.kh * g.kw * g.out_plane() * dtype_size(t);
  return std::max<int64_t>(
      1, std::min<int64_t>(g.n, (int64_t{256} << 20) / std::max<int64_t>(per_image, 1)));
}

Geom images(const Geom& g, int64_t count) {
  Geom c = g;
  c.n = count;
  return c;
}

// y (n, f, oh * ow) = conv(x, w) without bias.
NDArray conv_forward_gpu(const Geom& g, int64_t groups, int64_t f, DType ct, const TBlob& x,
                         const TBlob& w) {
  const Device dev = x.device;
  const int64_t cg = g.c / groups, fg = f / groups, ck = cg * g.kh * g.kw, ohw = g.out_plane();
  const int64_t size = dtype_size(ct);
  NDArray y(Shape{g.n, f, ohw}, ct, dev);
  const int64_t chunk = chunk_images(g, ct);
  NDArray col(Shape{chunk, g.c * g.kh * g.kw, ohw}, ct, dev);
  for (int64_t n0 = 0; n0 < g.n; n0 += chunk) {
    const int64_t nb = std::min(chunk, g.n - n0);
    kernel::gpu::im2col(images(g, nb), ct,
                        static_cast<const char*>(x.dptr) + n0 * g.c * g.in_plane() * size,
                        col.raw_data(), dev.id);
    for (int64_t gi = 0; gi < groups; ++gi) {  // y[n]_g (fg x ohw) = W_g (fg x ck) @ col[n]_g
      cuda::GemmArgs a;
      a.dtype = ct;
      a.rows = fg, a.cols = ohw, a.inner = ck, a.batch = nb;
      a.a = static_cast<const char*>(w.dptr) + gi * fg * ck * size;
      a.lda = ck, a.stride_a = 0;
      a.b = static_cast<const char*>(col.raw_data()) + gi * ck * ohw * size;
      a.ldb = ohw, a.stride_b = g.c * g.kh * g.kw * ohw;
      a.c = static_cast<char*>(y.raw_data()) + ((n0 * f) + gi * fg) * ohw * size;
      a.ldc = ohw, a.stride_c = f * ohw;
      cuda::gemm(a, dev.id);
    }
  }
  return y;
}

// cuDNN when it loads (NDX_CUDA_CUDNN=0 keeps the im2col + cuBLAS path, for comparison).
bool use_cudnn() {
  static const bool on = [] {
    const char* v = std::getenv("NDX_CUDA_CUDNN");
    return !(v && std::string(v) == "0") && cuda::dnn_available();
  }();
  return on;
}

cuda::ConvArgs cudnn_args(const Geom& g, int64_t groups, int64_t f, DType ct) {
  cuda::ConvArgs a;
  a.dtype = ct;
  a.volumetric = g.nsp == 3;
  a.n = g.n, a.c = g.c, a.d = g.d, a.h = g.h, a.w = g.w, a.f = f, a.groups = groups;
  a.kd = g.kd, a.kh = g.kh, a.kw = g.kw, a.sd = g.sd, a.sh = g.sh, a.sw = g.sw;
  a.pd = g.pd, a.ph = g.ph, a.pw = g.pw, a.dd = g.dd, a.dh = g.dh, a.dw = g.dw;
  a.od = g.od, a.oh = g.oh, a.ow = g.ow;
  return a;
}

// A transposed convolution is the data gradient of the convolution whose input is its output
// (num_filter channels) and whose output is its data (g.c channels); deconv_geom's g already
// reads that way (in / out swapped), so only the channel counts are exchanged.
cuda::ConvArgs deconv_cudnn_args(const Geom& g, int64_t groups, int64_t f, DType ct) {
  cuda::ConvArgs a = cudnn_args(g, groups, g.c, ct);
  a.c = f;
  return a;
}

NDArray cudnn_forward(const Geom& g, int64_t groups, int64_t f, DType ct, const TBlob& x,
                      const TBlob& w) {
  NDArray y(Shape{g.n, f, g.out_plane()}, ct, x.device);
  cuda::conv_forward(cudnn_args(g, groups, f, ct), x.dptr, w.dptr, y.raw_data(), x.device.id);
  return y;
}

void add_bias_gpu(const NDArray& y, const TBlob& bias) {  // y (n, f, ohw) += bias (f,)
  static const Op* add = Op::get("_np_add");
  static const NodeAttrs attrs = add->make_attrs();
  static const FCompute& f = Op::attr<FCompute>("FCompute<gpu>")[add];
  TBlob b = bias;
  b.shape = Shape{1, y.shape()[1], 1};
  b.strides = Shape{0, bias.strides[0], 0};
  const TBlob yb = kernel::to_blob(y);
  f(attrs, OpContext{}, {yb, b}, {kWriteInplace}, {yb});
}

// ---- the oneDNN path: float32 on the CPU (NDX_DNNL=0 keeps the im2col kernels, which the
// tests use as the reference)
bool use_dnnl(DType ct, const Device& dev) {
  return ct == DType::kFloat32 && !dev.is_gpu() && dnnl::enabled();
}

dnnl::ConvSpec dnnl_spec(const Geom& geom, int64_t groups, int64_t f) {
  dnnl::ConvSpec s;
  s.nsp = geom.nsp, s.n = geom.n, s.c = geom.c, s.f = f, s.groups = groups;
  Geom g = geom;  // axis() hands out pointers into a mutable Geom
  for (int i = 0; i < g.nsp; ++i) {
    const Geom::Axis a = g.axis(3 - g.nsp + i);
    s.in[i] = *a.in, s.out[i] = *a.out, s.k[i] = *a.k, s.stride[i] = *a.s;
    s.dilate[i] = *a.dl, s.pad_l[i] = *a.p, s.pad_r[i] = *a.p;
  }
  return s;
}

// The output's own buffer when oneDNN may write it directly, else null.
float* direct_output(const TBlob& out, OpReqType req) {
  const bool write = req == kWriteTo || req == kWriteInplace;
  return write && out.dtype == DType::kFloat32 && out.strides == contiguous_strides(out.shape)
             ? static_cast<float*>(out.dptr)
             : nullptr;
}

void conv_compute(const NodeAttrs& attrs, const OpContext& ctx, const std::vector<TBlob>& in,
                  const std::vector<OpReqType>& req, const std::vector<TBlob>& out) {
  if (req[0] == kNullOp) return;
  const auto& p = attrs.get<ConvolutionParam>();
  const Geom g = conv_geom(attrs, in[0].shape);
  fall_back_unless_gpu_covers(attrs, g, in, out, GpuOp::kConvolution);
  const int64_t groups = p.num_group, f = p.num_filter, fg = f / groups, cg = g.c / groups;
  const int64_t ck = cg * g.kernel_size(), ohw = g.out_plane();
  const DType ct = compute_dtype(in[0].dtype);
  std::vector<NDArray> keep;
  TBlob x = kernel::cast_blob(in[0], ct, &keep), w = kernel::cast_blob(in[1], ct, &keep);
  if (out[0].device.is_gpu()) {
    NDArray y = use_cudnn() ? cudnn_forward(g, groups, f, ct, x, w)
                            : conv_forward_gpu(g, groups, f, ct, x, w);
    if (!p.no_bias) add_bias_gpu(y, kernel::cast_blob(in[2], ct, &keep));
    write_req(y.reshape(out[0].shape), as_array(out[0]), req[0]);
    return;
  }
  if (use_dnnl(ct, out[0].device)) {
    float* direct = direct_output(out[0], req[0]);
    NDArray y = direct ? NDArray() : NDArray(Shape{g.n, f, ohw}, ct);
    const float* b = p.no_bias ? nullptr : kernel::cast_blob(in[2], ct, &keep).ptr<float>();
    // Inference passes the same weights call after call: oneDNN keeps their reorder.
    if (dnnl::conv_forward(dnnl_spec(g, groups, f), x.ptr<float>(), w.ptr<float>(), b,
                           direct ? direct : y.data<float>(), !ctx.is_train)) {
      if (!direct) write_req(y.reshape(out[0].shape), as_array(out[0]), req[0]);
      return;
    }
  }
  NDArray y(Shape{g.n, f, ohw}, ct);
  with_gemm_type(ct, [&](auto tag) {
    using T = decltype(tag);
    std::vector<T> col(static_cast<size_t>(ck * ohw));
    const T *xp = x.ptr<T>(), *wp = w.ptr<T>();
    T* yp = y.data<T>();
    for (int64_t n = 0; n < g.n; ++n)
      for (int64_t gi = 0; gi < groups; ++gi) {
        im2col(g, cg, xp + (n * g.c + gi * cg) * g.in_plane(), col.data());
        gemm<T>(false, false, fg, ohw, ck, wp + gi * fg * ck, col.data(), T(0),
                yp + (n * f + gi * fg) * ohw);
      }
    if (!p.no_bias) {
      TBlob b = kernel::cast_blob(in[2], ct, &keep);
      const T* bp = b.ptr<T>();
      for (int64_t n = 0; n < g.n; ++n)
        for (int64_t j = 0; j < f; ++j) {
          T* row = yp + (n * f + j) * ohw;
          for (int64_t i = 0; i < ohw; ++i) row[i] += bp[j];
        }
    }
  });
  write_req(y.reshape(out[0].shape), as_array(out[0]), req[0]);
}

// dx (n, c, h * w) and dw (f, ck) of a GPU convolution; either may be null.
void conv_backward_gpu(const Geom& g, int64_t groups, int64_t f, DType ct, const TBlob& og,
                       const TBlob& x, const TBlob& w, NDArray* dx, NDArray* dw) {
  const Device dev = og.device;
  const int64_t cg = g.c / groups, fg = f / groups, ck = cg * g.kh * g.kw, ohw = g.out_plane();
  const int64_t size = dtype_size(ct), rows = g.c * g.kh * g.kw;
  const int64_t chunk = chunk_images(g, ct);
  NDArray col(Shape{chunk, rows, ohw}, ct, dev);
  NDArray dw_parts = dw ? NDArray(Shape{chunk, f, ck}, ct, dev) : NDArray();
  const auto* gp = static_cast<const char*>(og.dptr);
  for (int64_t n0 = 0; n0 < g.n; n0 += chunk) {
    const int64_t nb = std::min(chunk, g.n - n0);
    const Geom gc = images(g, nb);
    if (dw) {  // dW_g += sum over n of G[n]_g (fg x ohw) @ col[n]_g^T (ohw x ck)
      kernel::gpu::im2col(gc, ct, static_cast<const char*>(x.dptr) + n0 * g.c * g.in_plane() * size,
                          col.raw_data(), dev.id);
      for (int64_t gi = 0; gi < groups; ++gi) {
        cuda::GemmArgs a;
        a.dtype = ct;
        a.trans_b = true;
        a.rows = fg, a.cols = ck, a.inner = ohw, a.batch = nb;
        a.a = gp + (n0 * f + gi * fg) * ohw * size;
        a.lda = ohw, a.stride_a = f * ohw;
        a.b = static_cast<const char*>(col.raw_data()) + gi * ck * ohw * size;
        a.ldb = ohw, a.stride_b = rows * ohw;
        a.c = static_cast<char*>(dw_parts.raw_data()) + gi * fg * ck * size;
        a.ldc = ck, a.stride_c = f * ck;
        cuda::gemm(a, dev.id);
      }
      TBlob parts = kernel::to_blob(dw_parts);
      parts.shape = Shape{nb, f, ck};
      kernel::sum_to_shape(parts, kernel::to_blob(*dw), n0 == 0 ? kWriteTo : kAddTo);
    }
    if (dx) {  // dcol[n]_g (ck x ohw) = W_g^T (ck x fg) @ G[n]_g (fg x ohw), then col2im
      for (int64_t gi = 0; gi < groups; ++gi) {
        cuda::GemmArgs a;
        a.dtype = ct;
        a.trans_a = true;
        a.rows = ck, a.cols = ohw, a.inner = fg, a.batch = nb;
        a.a = static_cast<const char*>(w.dptr) + gi * fg * ck * size;
        a.lda = ck, a.stride_a = 0;
        a.b = gp + (n0 * f + gi * fg) * ohw * size;
        a.ldb = ohw, a.stride_b = f * ohw;
        a.c = static_cast<char*>(col.raw_data()) + gi * ck * ohw * size;
        a.ldc = ohw, a.stride_c = rows * ohw;
        cuda::gemm(a, dev.id);
      }
      kernel::gpu::col2im(gc, ct, col.raw_data(),
                          static_cast<char*>(dx->raw_data()) + n0 * g.c * g.in_plane() * size,
                          dev.id);
    }
  }
}

// The weight and bias gradients of a convolution of one-channel data when nobody asks for the
// data gradient (a network's first layer): every image's patches in one matrix, and one GEMM
// dW (f, K) = G (f, n ohw) col (K, n ohw)^T. oneDNN pads the channel to 8 and computes per
// image: 32x1x8x8 -> 16 (3x3) took it 95 us on the AVX2 dev VM, and the per-image im2col loop
// 76 us.
constexpr int64_t kOneGemmMaxPatches = int64_t{1} << 22;  // elements of col: 16 MiB of float

bool weight_grad_in_one_gemm(const Geom& g, int64_t groups, bool want_dx, const TBlob& x) {
  const int64_t patches = g.kernel_size() * g.n * g.out_plane();
  return !want_dx && groups == 1 && g.c == 1 && x.device.is_cpu() && patches <= kOneGemmMaxPatches;
}

template <typename T>
void weight_grad_one_channel(const Geom& g, int64_t f, const T* gp, const T* xp, T* dwp) {
  const int64_t taps = g.kernel_size(), ohw = g.out_plane(), cols = g.n * ohw;
  std::vector<T> col(static_cast<size_t>(taps * cols)), gt(static_cast<size_t>(f * cols)),
      patch(static_cast<size_t>(taps * ohw));
  for (int64_t n = 0; n < g.n; ++n) {
    im2col(g, 1, xp + n * g.in_plane(), patch.data());
    for (int64_t k = 0; k < taps; ++k)
      std::copy_n(patch.data() + k * ohw, ohw, col.data() + k * cols + n * ohw);
    for (int64_t j = 0; j < f; ++j)
      std::copy_n(gp + (n * f + j) * ohw, ohw, gt.data() + j * cols + n * ohw);
  }
  gemm<T>(false, true, f, taps, cols, gt.data(), col.data(), T(0), dwp);
}

// db (f) = the sums of the ograd (n, f, ohw) over images and positions, on the reduction
// engine (pairwise float sums, vectorized).
// db (f,) = the sums of og (n, f, plane) over images and positions.
void bias_grad_of(int64_t n, int64_t f, int64_t plane, const TBlob& og, NDArray& db) {
  TBlob gv = og;
  gv.shape = Shape{n, f, plane};
  gv.strides = contiguous_strides(gv.shape);
  TBlob dbv = kernel::to_blob(db);
  dbv.shape = Shape{f, 1};
  dbv.strides = Shape{1, 0};
  kernel::sum_to_shape(gv, dbv, kWriteTo);
}
void conv_bias_grad(const Geom& g, int64_t f, const TBlob& og, NDArray& db) {
  bias_grad_of(g.n, f, g.out_plane(), og, db);
}

// One gradient of a CPU backward pass: its output's own memory when that is a float32
// write of the compute layout, else a buffer of the compute type written out by finish().
// Unwanted, it still has a buffer (the reference loops clear every gradient).
struct Grad {
  Grad(bool wanted, const TBlob& out, OpReqType req, const Shape& shape, DType ct)
      : want(wanted), out(out), req(req) {
    float* direct = wanted && ct == DType::kFloat32 ? direct_output(out, req) : nullptr;
    if (!direct) buf = NDArray(shape, ct);
    data = direct ? static_cast<void*>(direct) : buf.raw_data();
  }
  void finish() const {
    if (want && buf.defined()) write_req(buf.reshape(out.shape), as_array(out), req);
  }
  bool want;
  const TBlob& out;
  OpReqType req;
  NDArray buf;
  void* data = nullptr;
};

// (ograd, data, weight[, bias]) -> (grad data, grad weight[, grad bias])
void conv_backward(const NodeAttrs& attrs, const OpContext&, const std::vector<TBlob>& in,
                   const std::vector<OpReqType>& req, const std::vector<TBlob>& out) {
  const auto& p = attrs.get<ConvolutionParam>();
  const Geom g = conv_geom(attrs, in[1].shape);
  fall_back_unless_gpu_covers(attrs, g, in, out, GpuOp::kConvolution);
  const int64_t groups = p.num_group, f = p.num_filter, fg = f / groups, cg = g.c / groups;
  const int64_t ck = cg * g.kernel_size(), ohw = g.out_plane();
  const bool want_dx = req[0] != kNullOp, want_dw = req[1] != kNullOp;
  const bool want_db = !p.no_bias && req[2] != kNullOp;
  const DType ct = compute_dtype(in[0].dtype);
  std::vector<NDArray> keep;
  TBlob og = kernel::cast_blob(in[0], ct, &keep), x = kernel::cast_blob(in[1], ct, &keep),
        w = kernel::cast_blob(in[2], ct, &keep);
  if (out[0].device.is_gpu()) {
    const Device dev = out[0].device;
    NDArray dx(Shape{g.n, g.c, g.in_plane()}, ct, dev), dw(Shape{f, ck}, ct, dev),
        db(Shape{f}, ct, dev);
    if (use_cudnn()) {
      const cuda::ConvArgs a = cudnn_args(g, groups, f, ct);
      if (want_dx) cuda::conv_backward_data(a, w.dptr, og.dptr, dx.raw_data(), dev.id);
      if (want_dw) cuda::conv_backward_filter(a, x.dptr, og.dptr, dw.raw_data(), dev.id);
    } else {
      conv_backward_gpu(g, groups, f, ct, og, x, w, want_dx ? &dx : nullptr,
                        want_dw ? &dw : nullptr);
    }
    if (want_db) conv_bias_grad(g, f, og, db);
    if (want_dx) write_req(dx.reshape(out[0].shape), as_array(out[0]), req[0]);
    if (want_dw) write_req(dw.reshape(out[1].shape), as_array(out[1]), req[1]);
    if (want_db) write_req(db, as_array(out[2]), req[2]);
    return;
  }
  if (weight_grad_in_one_gemm(g, groups, want_dx, x)) {
    NDArray dw(Shape{f, ck}, ct), db(Shape{f}, ct);
    if (want_dw)
      with_gemm_type(ct, [&](auto tag) {
        using T = decltype(tag);
        weight_grad_one_channel<T>(g, f, og.ptr<T>(), x.ptr<T>(), dw.data<T>());
      });
    if (want_db) conv_bias_grad(g, f, og, db);
    if (want_dw) write_req(dw.reshape(out[1].shape), as_array(out[1]), req[1]);
    if (want_db) write_req(db, as_array(out[2]), req[2]);
    return;
  }
  // Each gradient straight into its output where that is a float32 write of the same layout
  // (oneDNN's or the reference loops'), else into a buffer written out after.
  Grad gx(want_dx, out[0], req[0], Shape{g.n, g.c, g.in_plane()}, ct);
  Grad gw(want_dw, out[1], req[1], Shape{f, ck}, ct);
  Grad gb(want_db, out[2 % out.size()], req[2 % req.size()], Shape{f}, ct);
  const dnnl::ConvSpec spec = dnnl_spec(g, groups, f);
  // oneDNN runs both passes or neither: together (diff_dst reordered once for the two), or the
  // weight pass tried only after the data pass ran (a refused problem is refused by both,
  // before anything is written).
  const bool dnnl_on = use_dnnl(ct, out[0].device);
  auto* dxp = static_cast<float*>(gx.data);
  auto* dwp = static_cast<float*>(gw.data);
  auto* dbp = want_db ? static_cast<float*>(gb.data) : nullptr;
  const bool by_dnnl =
      dnnl_on &&
      (want_dx && (want_dw || want_db)
           ? dnnl::conv_backward_both(spec, x.ptr<float>(), og.ptr<float>(), w.ptr<float>(), dxp,
                                      dwp, dbp)
           : (!want_dx || dnnl::conv_backward_data(spec, og.ptr<float>(), w.ptr<float>(), dxp)) &&
                 (!(want_dw || want_db) ||
                  dnnl::conv_backward_weights(spec, x.ptr<float>(), og.ptr<float>(), dwp, dbp)));
  if (!by_dnnl) {
    with_gemm_type(ct, [&](auto tag) {
      using T = decltype(tag);
      std::vector<T> col(static_cast<size_t>(ck * ohw));
      const T *gp = og.ptr<T>(), *xp = x.ptr<T>(), *wp = w.ptr<T>();
      T *dxp = static_cast<T*>(gx.data), *dwp = static_cast<T*>(gw.data);
      std::fill(dxp, dxp + g.n * g.c * g.in_plane(), T(0));
      std::fill(dwp, dwp + f * ck, T(0));
      for (int64_t n = 0; n < g.n; ++n)
        for (int64_t gi = 0; gi < groups; ++gi) {
          const T* gng = gp + (n * f + gi * fg) * ohw;
          if (want_dw) {  // dW_g += G_ng col^T
            im2col(g, cg, xp + (n * g.c + gi * cg) * g.in_plane(), col.data());
            gemm<T>(false, true, fg, ck, ohw, gng, col.data(), T(1), dwp + gi * fg * ck);
          }
          if (want_dx) {  // dcol = W_g^T G_ng, scattered back
            gemm<T>(true, false, ck, ohw, fg, wp + gi * fg * ck, gng, T(0), col.data());
            col2im(g, cg, col.data(), dxp + (n * g.c + gi * cg) * g.in_plane());
          }
        }
      if (want_db) {
        T* bp = static_cast<T*>(gb.data);
        for (int64_t j = 0; j < f; ++j) {
          double acc = 0;
          for (int64_t n = 0; n < g.n; ++n) {
            const T* row = gp + (n * f + j) * ohw;
            for (int64_t i = 0; i < ohw; ++i) acc += static_cast<double>(row[i]);
          }
          bp[j] = static_cast<T>(acc);
        }
      }
    });
  }
  gx.finish();
  gw.finish();
  gb.finish();
}

// ============================== transposed convolution ==============================
struct DeconvolutionParam {
  Shape kernel;
  Shape stride;
  Shape dilate;
  Shape pad;
  Shape adj;
  Shape target_shape;
  int64_t num_filter = 1;
  int64_t num_group = 1;
  bool no_bias = false;
  std::optional<std::string> layout;
  static void declare(ParamDecl<DeconvolutionParam>& d) {
    d.field("kernel", &DeconvolutionParam::kernel)
        .describe(
            "The kernel's spatial size: (kw,), (kh, kw) or (kd, kh, kw), as in the "
            "corresponding convolution.");
    d.field("stride", &DeconvolutionParam::stride)
        .set_default(Shape{})
        .describe("The stride of the corresponding convolution; () means 1 in each dimension.");
    d.field("dilate", &DeconvolutionParam::dilate)
        .set_default(Shape{})
        .describe("The dilation per spatial dimension; () means 1 in each.");
    d.field("pad", &DeconvolutionParam::pad)
        .set_default(Shape{})
        .describe(
            "The zero padding of the corresponding convolution (trimmed from both sides of "
            "the output); () means 0 in each. Ignored along dimensions target_shape sets.");
    d.field("adj", &DeconvolutionParam::adj)
        .set_default(Shape{})
        .describe(
            "Extra output size at the high end per dimension, each smaller than its stride; () "
            "means 0 in each. Ignored along dimensions target_shape sets.");
    d.field("target_shape", &DeconvolutionParam::target_shape)
        .set_default(Shape{})
        .describe(
            "The output's spatial size; pad and adj are then worked out (as MXNet: total = "
            "stride * (in - 1) + dilated kernel - target, pad = ceil(total / 2), adj = total "
            "% 2). () or 0 in a dimension: use pad and adj there.");
    d.field("num_filter", &DeconvolutionParam::num_filter)
        .set_default(int64_t{1})
        .set_lower_bound(1)
        .describe("The number of output channels.");
    d.field("num_group", &DeconvolutionParam::num_group)
        .set_default(int64_t{1})
        .set_lower_bound(1)
        .describe(
            "The number of groups: input and output channels split into num_group "
            "independent transposed convolutions.");
    d.field("no_bias", &DeconvolutionParam::no_bias)
        .set_default(false)
        .describe("Whether to leave out the bias (then the op takes data and weight only).");
    d.field("layout", &DeconvolutionParam::layout)
        .set_default(std::nullopt)
        .set_enum({"NCW", "NCHW", "NCDHW"})
        .describe(
            "The data layout: NCW (1-d), NCHW (2-d) or NCDHW (3-d); None takes it from data's "
            "rank.");
  }
};

uint32_t deconv_num_inputs(const NodeAttrs& attrs) {
  return attrs.get<DeconvolutionParam>().no_bias ? 2 : 3;
}

// A transposed convolution of data x is the adjoint of the convolution that maps its output y
// to x. The returned geometry is that convolution's: n, c (= x's channels), the input volume
// (d, h, w) = y's spatial size, the output volume (od, oh, ow) = x's. Validates params.
Geom deconv_geom(const NodeAttrs& attrs, const Shape& d) {
  const auto& p = attrs.get<DeconvolutionParam>();
  check_kernel_rank(attrs, p.kernel);
  const int nsp = p.kernel.ndim();
  const auto k = spatial_values(attrs, p.kernel, nsp, 1, 1, "kernel");
  const auto s = spatial_values(attrs, p.stride, nsp, 1, 1, "stride");
  const auto dl = spatial_values(attrs, p.dilate, nsp, 1, 1, "dilate");
  auto pd = spatial_values(attrs, p.pad, nsp, 0, 0, "pad");
  auto adj = spatial_values(attrs, p.adj, nsp, 0, 0, "adj");
  const auto target = spatial_values(attrs, p.target_shape, nsp, 0, 0, "target_shape");
  Geom g;
  data_dims(attrs, d, nsp, p.layout, &g);
  if (p.num_filter % p.num_group != 0)
    value_error("[", op_name(attrs), "] num_filter ", p.num_filter,
                " is not divisible by num_group ", p.num_group);
  if (g.c % p.num_group != 0)
    value_error("[", op_name(attrs), "] the ", g.c, " input channels of data (shape ", d.str(),
                ") are not divisible by num_group ", p.num_group);
  for (int i = 0; i < nsp; ++i) {
    const int a = axis_of(nsp, i);
    const auto ax = g.axis(a);
    const int64_t in = *ax.in, eff = dl[i] * (k[i] - 1) + 1, full = s[i] * (in - 1) + eff;
    if (target[i] > 0) {
      if (target[i] > full)
        value_error("[", op_name(attrs), "] target_shape ", p.target_shape.str(),
                    " is too big along spatial dimension ", kAxisNames[a], ": at most ", full,
                    " (stride * (input - 1) + dilated kernel) for data shape ", d.str());
      adj[i] = (full - target[i]) % 2;
      pd[i] = (full - target[i] + 1) / 2;
    }
    if (adj[i] >= s[i])
      value_error("[", op_name(attrs), "] ", target[i] > 0 ? "the adj worked out from " : "",
                  target[i] > 0 ? "target_shape" : "adj", " along spatial dimension ",
                  kAxisNames[a], " is ", adj[i], ", it must be smaller than the stride ", s[i]);
    const int64_t out = full - 2 * pd[i] + adj[i];
    if (out < 1)
      value_error("[", op_name(attrs), "] the output size along spatial dimension ", kAxisNames[a],
                  " is ", out, " (stride ", s[i], " * (input ", in, " - 1) + dilated kernel ", eff,
                  " - 2 * pad ", pd[i], " + adj ", adj[i], "), it must be positive; data shape ",
                  d.str());
    *ax.k = k[i], *ax.s = s[i], *ax.p = pd[i], *ax.dl = dl[i];
    *ax.out = in;
    *ax.in = out;
  }
  return g;
}

bool deconv_shape(const NodeAttrs& attrs, ShapeVector* in, ShapeVector* out) {
  const Shape& d = (*in)[0];
  if (!d.is_known()) return false;
  const auto& p = attrs.get<DeconvolutionParam>();
  const Geom g = deconv_geom(attrs, d);
  expect_shape(attrs, in, 1, with_kernel(Shape{g.c, p.num_filter / p.num_group}, g), "weight",
               " (channels, num_filter / num_group, *kernel)");
  if (!p.no_bias) expect_shape(attrs, in, 2, Shape{p.num_filter}, "bias", " (num_filter,)");
  assign_shape(attrs, &(*out)[0], g.shape_of(p.num_filter, g.d, g.h, g.w), "output", 0);
  return true;
}

// y (n, f, plane) += bias (f,)
template <typename T>
void add_bias(T* y, const T* bias, int64_t n, int64_t f, int64_t plane) {
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < f; ++j) {
      T* row = y + (i * f + j) * plane;
      for (int64_t q = 0; q < plane; ++q) row[q] += bias[j];
    }
}

// db (f,) = the sums of g (n, f, plane) over images and positions, in double.
template <typename T>
void bias_grad(const T* g, int64_t n, int64_t f, int64_t plane, T* db) {
  for (int64_t j = 0; j < f; ++j) {
    double acc = 0;
    for (int64_t i = 0; i < n; ++i) {
      const T* row = g + (i * f + j) * plane;
      for (int64_t q = 0; q < plane; ++q) acc += static_cast<double>(row[q]);
    }
    db[j] = static_cast<T>(acc);
  }
}

// Per image and group: col (fg * K, x plane) = W_g^T (fg * K x cg) @ x_ng (cg x x plane), then
// col2im scatters col into y_ng (the convolution's data gradient, with x as the ograd).
void deconv_compute(const NodeAttrs& attrs, const OpContext&, const std::vector<TBlob>& in,
                    const std::vector<OpReqType>& req, const std::vector<TBlob>& out) {
  if (req[0] == kNullOp) return;
  const auto& p = attrs.get<DeconvolutionParam>();
  const Geom g = deconv_geom(attrs, in[0].shape);
  fall_back_unless_gpu_covers(attrs, g, in, out, GpuOp::kTransposed);
  const int64_t groups = p.num_group, f = p.num_filter, fg = f / groups, cg = g.c / groups;
  const int64_t fk = fg * g.kernel_size(), xpl = g.out_plane(), ypl = g.in_plane();
  const DType ct = compute_dtype(in[0].dtype);
  std::vector<NDArray> keep;
  const TBlob x = kernel::cast_blob(in[0], ct, &keep), w = kernel::cast_blob(in[1], ct, &keep);
  if (out[0].device.is_gpu()) {  // cuDNN: the data gradient of a convolution
    NDArray y(Shape{g.n, f, ypl}, ct, x.device);
    cuda::conv_backward_data(deconv_cudnn_args(g, groups, f, ct), w.dptr, x.dptr, y.raw_data(),
                             x.device.id);
    if (!p.no_bias) add_bias_gpu(y, kernel::cast_blob(in[2], ct, &keep));
    write_req(y.reshape(out[0].shape), as_array(out[0]), req[0]);
    return;
  }
  NDArray y(Shape{g.n, f, ypl}, ct);
  with_gemm_type(ct, [&](auto tag) {
    using T = decltype(tag);
    std::vector<T> col(static_cast<size_t>(fk * xpl));
    const T *xp = x.ptr<T>(), *wp = w.ptr<T>();
    T* yp = y.data<T>();
    std::fill(yp, yp + y.size(), T(0));
    for (int64_t n = 0; n < g.n; ++n)
      for (int64_t gi = 0; gi < groups; ++gi) {
        gemm<T>(true, false, fk, xpl, cg, wp + gi * cg * fk, xp + (n * g.c + gi * cg) * xpl, T(0),
                col.data());
        col2im(g, fg, col.data(), yp + (n * f + gi * fg) * ypl);
      }
    if (!p.no_bias) add_bias(yp, kernel::cast_blob(in[2], ct, &keep).ptr<T>(), g.n, f, ypl);
  });
  write_req(y.reshape(out[0].shape), as_array(out[0]), req[0]);
}

// (ograd, data, weight[, bias]) -> (grad data, grad weight[, grad bias]). Per image and
// group, col = im2col(ograd_ng) (fg * K x x plane); grad x_ng = W_g @ col (a convolution of the
// ograd) and grad W_g += x_ng @ col^T.
void deconv_backward(const NodeAttrs& attrs, const OpContext&, const std::vector<TBlob>& in,
                     const std::vector<OpReqType>& req, const std::vector<TBlob>& out) {
  const auto& p = attrs.get<DeconvolutionParam>();
  const Geom g = deconv_geom(attrs, in[1].shape);
  fall_back_unless_gpu_covers(attrs, g, in, out, GpuOp::kTransposed);
  const int64_t groups = p.num_group, f = p.num_filter, fg = f / groups, cg = g.c / groups;
  const int64_t fk = fg * g.kernel_size(), xpl = g.out_plane(), ypl = g.in_plane();
  const bool want_dx = req[0] != kNullOp, want_dw = req[1] != kNullOp;
  const bool want_db = !p.no_bias && req[2] != kNullOp;
  const DType ct = compute_dtype(in[0].dtype);
  std::vector<NDArray> keep;
  const TBlob og = kernel::cast_blob(in[0], ct, &keep), x = kernel::cast_blob(in[1], ct, &keep),
              w = kernel::cast_blob(in[2], ct, &keep);
  if (out[0].device.is_gpu()) {
    // The deconvolution is conv^T: its data gradient is the convolution of og, its weight
    // gradient the convolution's filter gradient with og as input and x as output gradient.
    const Device dev = out[0].device;
    const cuda::ConvArgs a = deconv_cudnn_args(g, groups, f, ct);
    NDArray dx(Shape{g.n, g.c, xpl}, ct, dev), dw(Shape{g.c, fk}, ct, dev), db(Shape{f}, ct, dev);
    if (want_dx) cuda::conv_forward(a, og.dptr, w.dptr, dx.raw_data(), dev.id);
    if (want_dw) cuda::conv_backward_filter(a, og.dptr, x.dptr, dw.raw_data(), dev.id);
    if (want_db) bias_grad_of(g.n, f, ypl, og, db);
    if (want_dx) write_req(dx.reshape(out[0].shape), as_array(out[0]), req[0]);
    if (want_dw) write_req(dw.reshape(out[1].shape), as_array(out[1]), req[1]);
    if (want_db) write_req(db, as_array(out[2]), req[2]);
    return;
  }
  NDArray dx(Shape{g.n, g.c, xpl}, ct), dw(Shape{g.c, fk}, ct), db(Shape{f}, ct);
  with_gemm_type(ct, [&](auto tag) {
    using T = decltype(tag);
    std::vector<T> col(static_cast<size_t>(fk * xpl));
    const T *gp = og.ptr<T>(), *xp = x.ptr<T>(), *wp = w.ptr<T>();
    T *dxp = dx.data<T>(), *dwp = dw.data<T>();
    std::fill(dxp, dxp + dx.size(), T(0));
    std::fill(dwp, dwp + dw.size(), T(0));
    if (want_dx || want_dw)
      for (int64_t n = 0; n < g.n; ++n)
        for (int64_t gi = 0; gi < groups; ++gi) {
          im2col(g, fg, gp + (n * f + gi * fg) * ypl, col.data());
          const int64_t xo = (n * g.c + gi * cg) * xpl;
          if (want_dx)
            gemm<T>(false, false, cg, xpl, fk, wp + gi * cg * fk, col.data(), T(0), dxp + xo);
          if (want_dw)
            gemm<T>(false, true, cg, fk, xpl, xp + xo, col.data(), T(1), dwp + gi * cg * fk);
        }
    if (want_db) bias_grad(gp, g.n, f, ypl, db.data<T>());
  });
  if (want_dx) write_req(dx.reshape(out[0].shape), as_array(out[0]), req[0]);
  if (want_dw) write_req(dw.reshape(out[1].shape), as_array(out[1]), req[1]);
  if (want_db) write_req(db, as_array(out[2]), req[2]);
}

// ============================== pooling ==============================
struct PoolingParam {
  Shape kernel;
  std::string pool_type = "max";
  bool global_pool = false;
  std::string pooling_convention = "valid";
  Shape stride;
  Shape pad;
  bool count_include_pad = true;
  std::optional<std::string> layout;
  static void declare(ParamDecl<PoolingParam>& d) {
    d.field("kernel", &PoolingParam::kernel)
        .set_default(Shape{})
        .describe(
            "The window's spatial size: (kw,), (kh, kw) or (kd, kh, kw) (ignored with "
            "global_pool).");
    d.field("pool_type", &PoolingParam::pool_type)
        .set_default(std::string("max"))
        .set_enum({"max", "avg", "sum"})
        .describe("The pooling: the window's maximum, average or sum.");
    d.field("global_pool", &PoolingParam::global_pool)
        .set_default(false)
        .describe("Pool over the whole spatial extent (kernel, stride and pad are ignored).");
    d.field("pooling_convention", &PoolingParam::pooling_convention)
        .set_default(std::string("valid"))
        .set_enum({"valid", "full"})
        .describe(
            "'valid': floor((in + 2 * pad - kernel) / stride) + 1 outputs; 'full': "
            "ceil(...) + 1, the last window may run past the padded input.");
    d.field("stride", &PoolingParam::stride)
        .set_default(Shape{})
        .describe("The stride per spatial dimension; () means 1 in each.");
    d.field("pad", &PoolingParam::pad)
        .set_default(Shape{})
        .describe("Padding on both sides per spatial dimension; () means 0 in each.");
    d.field("count_include_pad", &PoolingParam::count_include_pad)
        .set_default(true)
        .describe(
            "avg: divide by the window size including padding (True) or by the number "
            "of input elements in the window (False).");
    d.field("layout", &PoolingParam::layout)
        .set_default(std::nullopt)
        .set_enum({"NCW", "NCHW", "NCDHW"})
        .describe(
            "The data layout: NCW (1-d), NCHW (2-d) or NCDHW (3-d); None takes it from data's "
            "rank.");
  }
};

enum class Pool { kMax, kAvg, kSum };
Pool pool_of(const std::string& s) {
  return s == "max" ? Pool::kMax : s == "avg" ? Pool::kAvg : Pool::kSum;
}

Geom pool_geom(const NodeAttrs& attrs, const Shape& d) {
  const auto& p = attrs.get<PoolingParam>();
  Geom g;
  if (p.global_pool) {
    data_dims(attrs, d, d.ndim() - 2, p.layout, &g);  // checks the rank first
    g.kd = g.d, g.kh = g.h, g.kw = g.w;
    g.od = g.oh = g.ow = 1;
    return g;
  }
  check_kernel_rank(attrs, p.kernel, " (or set global_pool=True)");
  const int nsp = p.kernel.ndim();
  const auto k = spatial_values(attrs, p.kernel, nsp, 1, 1, "kernel");
  const auto s = spatial_values(attrs, p.stride, nsp, 1, 1, "stride");
  const auto pd = spatial_values(attrs, p.pad, nsp, 0, 0, "pad");
  data_dims(attrs, d, nsp, p.layout, &g);
  const bool full = p.pooling_convention == "full";
  for (int i = 0; i < nsp; ++i) {
    const int a = axis_of(nsp, i);
    const auto ax = g.axis(a);
    *ax.k = k[i], *ax.s = s[i], *ax.p = pd[i];
    // A pad as wide as the kernel puts whole windows in the padding, where max pooling has
    // no element and avg without the padding divides by 0 (Caffe2 and ONNX Runtime refuse it).
    if (pd[i] >= k[i])
      value_error("[", op_name(attrs), "] pad ", pd[i], " must be smaller than the kernel size ",
                  k[i], " along spatial dimension ", kAxisNames[a], " (kernel ", p.kernel.str(),
                  ", pad ", p.pad.str(), ")");
    const int64_t padded = *ax.in + 2 * pd[i];
    if (k[i] > padded)
      value_error("[", op_name(attrs), "] the kernel size ", k[i],
                  " exceeds the padded input size ", padded, " (input ", *ax.in, " + 2 * pad ",
                  pd[i], ") along spatial dimension ", kAxisNames[a], " of data shape ", d.str());
    *ax.out = (padded - k[i] + (full ? s[i] - 1 : 0)) / s[i] + 1;
  }
  return g;
}

bool pool_shape(const NodeAttrs& attrs, ShapeVector* in, ShapeVector* out) {
  const Shape& d = (*in)[0];
  if (!d.is_known()) return false;
  const Geom g = pool_geom(attrs, d);
  assign_shape(attrs, &(*out)[0], g.out_shape(g.c), "output", 0);
  return true;
}

// The input range [lo, hi) of output o's window along one axis, and the window's length with
// padding counted (clipped at in + pad: a 'full' window may run past the padded input).
struct Span {
  int64_t lo, hi, padded;
};
Span span_at(int64_t o, int64_t k, int64_t s, int64_t p, int64_t in) {
  const int64_t start = o * s - p, end = std::min(start + k, in + p);
  return {std::max<int64_t>(start, 0), std::min(end, in), end - start};
}

// One pooling window of output (oz, oy, ox): the input ranges along D, H, W, and the avg
// divisor.
struct Window {
  Span z, y, x;
  double count;
};
Window window_at(const Geom& g, int64_t oz, int64_t oy, int64_t ox, bool include_pad) {
  const Span z = span_at(oz, g.kd, g.sd, g.pd, g.d), y = span_at(oy, g.kh, g.sh, g.ph, g.h),
             x = span_at(ox, g.kw, g.sw, g.pw, g.w);
  auto len = [](const Span& sp) { return std::max<int64_t>(sp.hi - sp.lo, 0); };
  const int64_t n = include_pad ? z.padded * y.padded * x.padded : len(z) * len(y) * len(x);
  return {z, y, x, static_cast<double>(n)};
}

// Calls f(flat in-volume index) for each input element of the window, in row-major order.
template <typename F>
void for_window(const Geom& g, const Window& win, F f) {
  for (int64_t z = win.z.lo; z < win.z.hi; ++z)
    for (int64_t y = win.y.lo; y < win.y.hi; ++y)
      for (int64_t x = win.x.lo; x < win.x.hi; ++x) f((z * g.h + y) * g.w + x);
}

// The flat in-volume index of the window's maximum: the first maximum, or the first nan; -1
// for an empty window.
template <typename T>
int64_t window_argmax(const Geom& g, const Window& win, const T* vol) {
  int64_t best = -1;
  double m = 0;
  for_window(g, win, [&](int64_t i) {
    const double v = static_cast<double>(vol[i]);
    if (best < 0 || (!std::isnan(m) && (v > m || std::isnan(v)))) {
      best = i;
      m = v;
    }
  });
  return best;
}

// Calls f(flat output index, window) for each output position of one volume.
template <typename F>
void for_outputs(const Geom& g, bool include_pad, F f) {
  for (int64_t oz = 0; oz < g.od; ++oz)
    for (int64_t oy = 0; oy < g.oh; ++oy)
      for (int64_t ox = 0; ox < g.ow; ++ox)
        f((oz * g.oh + oy) * g.ow + ox, window_at(g, oz, oy, ox, include_pad));
}

// oneDNN pools float32 max / avg with the 'valid' convention (or global), where its windows
// and divisors are MXNet's: windows never reach past the padding. Its max pooling skips nan
// (a window [nan, 1, 2] gives 2), so an input holding a nan (one more read of it, at memory
// speed) takes the reference kernel, where nan wins its window. Max pooling's gradient goes
// to a window's first maximum, as in the reference kernel.
bool dnnl_pools(const PoolingParam& p, Pool kind, const TBlob& x, const Device& dev) {
  if (x.dtype != DType::kFloat32 || !use_dnnl(DType::kFloat32, dev) ||
      !(kind == Pool::kMax || kind == Pool::kAvg) ||
      !(p.global_pool || p.pooling_convention == "valid"))
    return false;
  return kind != Pool::kMax || x.size() == 0 || !std::isnan(kernel::max_value(x));
}

dnnl::PoolSpec dnnl_pool_spec(const Geom& geom, Pool kind, bool include_pad) {
  dnnl::PoolSpec s;
  s.nsp = geom.nsp, s.n = geom.n, s.c = geom.c, s.max = kind == Pool::kMax;
  s.include_pad = include_pad;
  Geom g = geom;
  for (int i = 0; i < g.nsp; ++i) {
    const Geom::Axis a = g.axis(3 - g.nsp + i);
    s.in[i] = *a.in, s.out[i] = *a.out, s.k[i] = *a.k, s.stride[i] = *a.s;
    s.pad_l[i] = s.pad_r[i] = *a.p;
  }
  return s;
}

bool tiled_windows(const Geom& g);

// MaxPool2D(2)'s forward on the CPU: 2x2 windows of stride 2 inside the input, float32 /
// float64, contiguous, written (kernel/pool.cc; several times faster than oneDNN's kernel for
// plain NCHW, and nan wins its window without a search of the input first).
bool max_pool2x2_takes(const Geom& g, Pool kind, const TBlob& x, const TBlob& y, OpReqType req) {
  const DType t = y.dtype;
  return kind == Pool::kMax && y.device.is_cpu() && g.d == 1 && g.kh == 2 && g.kw == 2 &&
         g.sh == 2 && g.sw == 2 && tiled_windows(g) &&
         (t == DType::kFloat32 || t == DType::kFloat64) && x.dtype == t && x.is_contiguous() &&
         y.is_contiguous() && (req == kWriteTo || req == kWriteInplace);
}

// float16 / bfloat16 on the CPU pool in float32, the type of oneDNN's and the 2x2 kernels (the
// reference loops are 30x slower), and are rounded once at the end: a maximum is one of the
// inputs, so max pooling and its gradient's routing are unchanged by the round trip.
bool pool_in_float32(const FCompute& f, const NodeAttrs& attrs, const OpContext& ctx,
                     const std::vector<TBlob>& in, const std::vector<OpReqType>& req,
                     const std::vector<TBlob>& out) {
  if (out[0].device.is_gpu() || compute_dtype(out[0].dtype) == out[0].dtype) return false;
  std::vector<NDArray> keep;
  std::vector<TBlob> in32;
  for (const TBlob& b : in) in32.push_back(kernel::cast_blob(b, DType::kFloat32, &keep));
  NDArray y(out[0].shape, DType::kFloat32);
  f(attrs, ctx, in32, {kWriteTo}, {kernel::to_blob(y)});
  write_req(y, as_array(out[0]), req[0]);
  return true;
}

void pool_compute(const NodeAttrs& attrs, const OpContext& ctx, const std::vector<TBlob>& in,
                  const std::vector<OpReqType>& req, const std::vector<TBlob>& out) {
  if (req[0] == kNullOp) return;
  if (pool_in_float32(pool_compute, attrs, ctx, in, req, out)) return;
  const auto& p = attrs.get<PoolingParam>();
  const Geom g = pool_geom(attrs, in[0].shape);
  fall_back_unless_gpu_covers(attrs, g, in, out);
  const Pool kind = pool_of(p.pool_type);
  if (out[0].device.is_gpu()) {
    std::vector<NDArray> keep;
    const DType ct = compute_dtype(in[0].dtype);
    const TBlob x = kernel::cast_blob(in[0], ct, &keep);
    NDArray y(out[0].shape, ct, out[0].device);
    kernel::gpu::pool(g, static_cast<int>(kind), p.count_include_pad, ct, x.dptr, y.raw_data(),
                      out[0].device.id);
    write_req(y, as_array(out[0]), req[0]);
    return;
  }
  if (max_pool2x2_takes(g, kind, in[0], out[0], req[0])) {
    const kernel::MaxPool2x2Forward a{in[0].dptr, out[0].dptr, g.n * g.c, g.h,
                                      g.w,        g.oh,        g.ow,      out[0].dtype};
    return kernel::max_pool2x2_forward(a);
  }
  if (dnnl_pools(p, kind, in[0], out[0].device)) {
    float* direct = direct_output(out[0], req[0]);
    NDArray y = direct ? NDArray() : NDArray(out[0].shape, DType::kFloat32);
    if (dnnl::pool_forward(dnnl_pool_spec(g, kind, p.count_include_pad), in[0].ptr<float>(),
                           direct ? direct : y.data<float>())) {
      if (!direct) write_req(y, as_array(out[0]), req[0]);
      return;
    }
  }
  NDX_FLOAT_SWITCH(in[0].dtype, T, {
    using C = compute_t<T>;
    const T* xp = in[0].ptr<T>();
    T* yp = out[0].ptr<T>();
    for (int64_t pl = 0; pl < g.n * g.c; ++pl) {
      const T* vol = xp + pl * g.in_plane();
      T* o = yp + pl * g.out_plane();
      for_outputs(g, p.count_include_pad, [&](int64_t oi, const Window& win) {
        double v;
        if (kind == Pool::kMax) {
          const int64_t i = window_argmax(g, win, vol);
          v = i < 0 ? -std::numeric_limits<double>::infinity() : static_cast<double>(vol[i]);
        } else {
          double acc = 0;
          for_window(g, win, [&](int64_t i) { acc += static_cast<double>(vol[i]); });
          v = kind == Pool::kSum ? acc
              : win.count > 0    ? acc / win.count
                                 : std::numeric_limits<double>::quiet_NaN();
        }
        store(o + oi, req[0], static_cast<C>(v));
      });
    }
  });
}

// Max pooling's gradient on the CPU (float32 / float64, contiguous) when no two windows
// share an input element and none reaches into padding: kernel <= stride along each axis (or
// one window per axis, as global pooling), no padding. Each output's gradient goes to its
// window's first maximum (nan first, as window_argmax), selected without branches, a plane of
// the data at a time, planes over the threads. For 32x16x8x8 2x2 windows on the AVX2 dev VM,
// oneDNN's gradient (a forward pass for the window maxima, then its backward, with layout
// reorders) took 130 us and the reference loops 360 us.
bool tiled_windows(const Geom& g) {
  // Every window whole inside the input (a 'full' convention's last window may run past it)
  // and not empty.
  auto axis_ok = [](int64_t in, int64_t k, int64_t s, int64_t p, int64_t out) {
    return p == 0 && k > 0 && out > 0 && (k <= s || out == 1) && (out - 1) * s + k <= in;
  };
  return axis_ok(g.d, g.kd, g.sd, g.pd, g.od) && axis_ok(g.h, g.kh, g.sh, g.ph, g.oh) &&
         axis_ok(g.w, g.kw, g.sw, g.pw, g.ow);
}

// The offset in the volume of the window's first maximum (or first nan), compared in T.
template <typename T>
int64_t first_max_offset(const Geom& g, const T* w0) {
  int64_t best = 0;
  T m = w0[0];
  for (int64_t z = 0; z < g.kd; ++z)
    for (int64_t y = 0; y < g.kh; ++y)
      for (int64_t x = 0; x < g.kw; ++x) {
        const int64_t at = (z * g.h + y) * g.w + x;
        const T v = w0[at];
        if (v > m || (v != v && m == m)) best = at, m = v;
      }
  return best;
}

// One plane's gradient. The forward's output ym holds each window's maximum (nan where the
// window has one), so the element to credit is the first equal to it (or the first nan):
// a bit per window element, the lowest set bit picked, no branch on the data. A window where
// no element matches (an output not of this data) is searched for its maximum.
template <typename T>
void max_pool_grad_plane(const Geom& g, const int64_t* offsets, const T* vol, const T* ym,
                         const T* go, T* d) {
  const int64_t kernel = g.kernel_size();
  int64_t oi = 0;
  for (int64_t oz = 0; oz < g.od; ++oz)
    for (int64_t oy = 0; oy < g.oh; ++oy)
      for (int64_t ox = 0; ox < g.ow; ++ox, ++oi) {
        const int64_t base = (oz * g.sd * g.h + oy * g.sh) * g.w + ox * g.sw;
        const T* w0 = vol + base;
        const T m = ym[oi];
        uint64_t hit = 0;
        if (offsets && m == m) {
          for (int64_t b = 0; b < kernel; ++b) hit |= uint64_t{w0[offsets[b]] == m} << b;
        } else if (offsets) {
          for (int64_t b = 0; b < kernel; ++b)
            hit |= uint64_t{w0[offsets[b]] != w0[offsets[b]]} << b;
        }
        const int64_t at = hit ? offsets[std::countr_zero(hit)] : first_max_offset(g, w0);
        d[base + at] += go[oi];
      }
}

template <typename T>
void max_pool_grad(const Geom& g, const T* dy, const T* x, const T* y, T* dx, OpReqType req) {
  if (g.d == 1 && g.kh == 2 && g.kw == 2 && g.sh == 2 && g.sw == 2) {  // MaxPool2D(2): SIMD
    kernel::MaxPool2x2Grad a{dy,         x, y, dx, g.n * g.c, g.h, g.w, g.oh, g.ow, req == kAddTo,
                             dtype_of<T>};
    return kernel::max_pool2x2_grad(a);
  }
  const int64_t in_plane = g.in_plane(), out_plane = g.out_plane();
  int64_t table[64];  // each window element's offset from the window's first, when it fits
  const int64_t* offsets = g.kernel_size() <= 64 ? table : nullptr;
  if (offsets) {
    int64_t b = 0;
    for (int64_t z = 0; z < g.kd; ++z)
      for (int64_t yy = 0; yy < g.kh; ++yy)
        for (int64_t xx = 0; xx < g.kw; ++xx) table[b++] = (z * g.h + yy) * g.w + xx;
  }
  // On the calling thread: the oneDNN ops around it (pooling forward, convolution) run on
  // OpenMP's team, and waking ndx's pool here left its workers spinning against that team
  // (the next oneDNN pooling forward took 130 us instead of 20 on 2 cores).
  for (int64_t pl = 0; pl < g.n * g.c; ++pl) {
    T* d = dx + pl * in_plane;
    if (req != kAddTo) std::fill(d, d + in_plane, T(0));
    max_pool_grad_plane(g, offsets, x + pl * in_plane, y + pl * out_plane, dy + pl * out_plane, d);
  }
}

// Whether max_pool_grad takes this call: tiled windows, float32 / float64 of one dtype,
// contiguous, on the CPU.
bool max_pool_grad_takes(const Geom& g, Pool kind, const std::vector<TBlob>& in, const TBlob& out) {
  const DType t = out.dtype;
  return kind == Pool::kMax && out.device.is_cpu() && tiled_windows(g) &&
         (t == DType::kFloat32 || t == DType::kFloat64) && in[0].dtype == t && in[1].dtype == t &&
         in[2].dtype == t && in[0].is_contiguous() && in[1].is_contiguous() &&
         in[2].is_contiguous() && out.is_contiguous();
}

// (ograd, data, out) -> grad data: max routes each ograd to its window's first maximum,
// avg / sum spread it over the window's input elements (avg divided by the window count).
void pool_backward(const NodeAttrs& attrs, const OpContext& ctx, const std::vector<TBlob>& in,
                   const std::vector<OpReqType>& req, const std::vector<TBlob>& out) {
  if (req[0] == kNullOp) return;
  if (pool_in_float32(pool_backward, attrs, ctx, in, req, out)) return;
  const auto& p = attrs.get<PoolingParam>();
  const Geom g = pool_geom(attrs, in[1].shape);
  fall_back_unless_gpu_covers(attrs, g, in, out);
  const Pool kind = pool_of(p.pool_type);
  if (out[0].device.is_gpu()) {
    std::vector<NDArray> keep;
    const DType ct = compute_dtype(in[1].dtype);
    const TBlob dy = kernel::cast_blob(in[0], ct, &keep), x = kernel::cast_blob(in[1], ct, &keep);
    NDArray dx(out[0].shape, ct, out[0].device);
    kernel::gpu::pool_backward(g, static_cast<int>(kind), p.count_include_pad, ct, dy.dptr, x.dptr,
                               dx.raw_data(), out[0].device.id);
    write_req(dx, as_array(out[0]), req[0]);
    return;
  }
  if (max_pool_grad_takes(g, kind, in, out[0])) {
    if (out[0].dtype == DType::kFloat32)
      max_pool_grad(g, in[0].ptr<float>(), in[1].ptr<float>(), in[2].ptr<float>(),
                    out[0].ptr<float>(), req[0]);
    else
      max_pool_grad(g, in[0].ptr<double>(), in[1].ptr<double>(), in[2].ptr<double>(),
                    out[0].ptr<double>(), req[0]);
    return;
  }
  if (dnnl_pools(p, kind, in[1], out[0].device) && in[0].dtype == DType::kFloat32) {
    float* direct = direct_output(out[0], req[0]);
    NDArray dx = direct ? NDArray() : NDArray(out[0].shape, DType::kFloat32);
    if (dnnl::pool_backward(dnnl_pool_spec(g, kind, p.count_include_pad), in[1].ptr<float>(),
                            in[0].ptr<float>(), direct ? direct : dx.data<float>())) {
      if (!direct) write_req(dx, as_array(out[0]), req[0]);
      return;
    }
  }
  std::vector<double> acc(static_cast<size_t>(g.in_plane()));
  NDX_FLOAT_SWITCH(in[1].dtype, T, {
    using C = compute_t<T>;
    const T *gp = in[0].ptr<T>(), *xp = in[1].ptr<T>();
    T* dp = out[0].ptr<T>();
    for (int64_t pl = 0; pl < g.n * g.c; ++pl) {
      const T* vol = xp + pl * g.in_plane();
      const T* go = gp + pl * g.out_plane();
      std::fill(acc.begin(), acc.end(), 0.0);
      for_outputs(g, p.count_include_pad, [&](int64_t oi, const Window& win) {
        const double gv = static_cast<double>(go[oi]);
        if (kind == Pool::kMax) {
          const int64_t i = window_argmax(g, win, vol);
          if (i >= 0) acc[i] += gv;
          return;
        }
        if (kind == Pool::kAvg && win.count <= 0) return;
        const double share = kind == Pool::kAvg ? gv / win.count : gv;
        for_window(g, win, [&](int64_t i) { acc[i] += share; });
      });
      T* d = dp + pl * g.in_plane();
      for (int64_t i = 0; i < g.in_plane(); ++i) store(d + i, req[0], static_cast<C>(acc[i]));
    }
  });
}

// The gradient of _backward_convolution (og, x, w[, b]) -> (dx, dw[, db]), for gradients of
// gradients (a WGAN-GP critic's penalty): dx = B_x(og, w) and dw = B_w(x, og) are bilinear,
// the adjoints of w -> conv(x, w) and x -> conv(x, w), and db sums og. For heads (hx, hw[,
// hb]): og gets conv(hx, w, hb) + conv(x, hw), x gets B_x(og, hw) and w gets B_w(hx, og),
// all made of convolution and its backward, so every order differentiates; b gets none.
std::vector<NodeEntry> conv_backward_gradient(const NodePtr& n, const std::vector<NodeEntry>& h) {
  auto params = n->attrs.op->params->to_dict(n->attrs.parsed);
  const bool bias = !n->attrs.get<ConvolutionParam>().no_bias;
  const NodeEntry &og = n->inputs[0], &x = n->inputs[1], &w = n->inputs[2];
  auto with_bias = [&](bool b) {
    auto p = params;
    p["no_bias"] = b ? "0" : "1";
    return p;
  };
  std::vector<NodeEntry> first{h[0], w};
  if (bias) first.push_back(h[2]);
  const NodeEntry g_og =
      make_node("_np_add", {make_node("_npx_convolution", first, with_bias(bias)),
                            make_node("_npx_convolution", {x, h[1]}, with_bias(false))});
  auto backward = [&](NodeEntry data, NodeEntry weight, uint32_t output) {
    NodeEntry e = make_node("_backward_convolution", {og, std::move(data), std::move(weight)},
                            with_bias(false));
    e.index = output;
    return e;
  };
  std::vector<NodeEntry> grads{g_og, backward(x, h[1], 0), backward(h[0], w, 1)};
  if (bias) grads.push_back(make_node("_np_zeros_like", {n->inputs[3]}));
  return grads;
}

// Whether no input element lies in two pooling windows: one window (global pooling), or a
// kernel no wider than the stride along every axis, without padding.
bool windows_disjoint(const NodeAttrs& attrs) {
  const auto& p = attrs.get<PoolingParam>();
  if (p.global_pool) return true;
  const int nsp = p.kernel.ndim();
  const auto k = spatial_values(attrs, p.kernel, nsp, 1, 1, "kernel");
  const auto st = spatial_values(attrs, p.stride, nsp, 1, 1, "stride");
  const auto pd = spatial_values(attrs, p.pad, nsp, 0, 0, "pad");
  for (int i = 0; i < nsp; ++i)
    if (k[i] > st[i] || pd[i] != 0) return false;
  return true;
}

// The gradient of _backward_pooling (og, data, out) -> grad data, linear in og. avg / sum: the
// pooling itself is its adjoint. max routes og to each window's argmax; with disjoint windows
// the adjoint takes h at those places: sum-pooling of M * h, M the backward op's own result
// for a unit og (1 at each window's argmax). Overlapping max windows are refused. None of it
// reaches data or out (M is piecewise constant in them).
std::vector<NodeEntry> pool_backward_gradient(const NodePtr& n, const std::vector<NodeEntry>& og) {
  auto params = n->attrs.op->params->to_dict(n->attrs.parsed);
  NodeEntry pooled_input = og[0];
  if (pool_of(n->attrs.get<PoolingParam>().pool_type) == Pool::kMax) {
    if (!windows_disjoint(n->attrs))
      not_implemented(
          "[backward] max pooling with overlapping windows (a kernel wider than "
          "the stride, or padding) has no second derivative yet; avg and sum "
          "pooling, and max pooling with disjoint windows, have");
    auto mask = std::make_shared<Node>();
    mask->attrs = n->attrs;
    mask->inputs = {make_node("_np_ones_like", {n->inputs[0]}), n->inputs[1], n->inputs[2]};
    pooled_input = make_node("_np_multiply", {NodeEntry{mask, 0, 0}, og[0]});
    params["pool_type"] = "sum";
  }
  return {make_node("_npx_pooling", {pooled_input}, params),
          make_node("_np_zeros_like", {n->inputs[1]}), make_node("_np_zeros_like", {n->inputs[2]})};
}

// ============================== INT8 convolution and pooling ==============================
// (quantization.h: the ranges, the requantization, the reference epilogue.)
struct QuantizedConvParam : ConvolutionFields, quant::Requantize {
  static void declare(ParamDecl<QuantizedConvParam>& d) {
    declare_convolution(d);
    quant::declare_requantize(d);
  }
};

quant::LinearInputs qconv_inputs(const NodeAttrs& attrs) {
  return {!attrs.get<QuantizedConvParam>().no_bias};
}

bool qconv_shape(const NodeAttrs& attrs, ShapeVector* in, ShapeVector* out) {
  const Shape& d = (*in)[0];
  if (!d.is_known()) return false;
  const auto& p = attrs.get<QuantizedConvParam>();
  const Geom g = conv_geom(attrs, p, d);
  expect_shape(attrs, in, 1, conv_weight_shape(p, g), "weight",
               " (num_filter, channels / num_group, *kernel)");
  quant::linear_range_shapes(attrs, qconv_inputs(attrs), p.num_filter, in, out);
  assign_shape(attrs, &(*out)[0], g.out_shape(p.num_filter), "output", 0);
  return true;
}

// The float convolution (without bias) of the same geometry: the reference path's kernel.
NodeAttrs float_conv_attrs(const ConvolutionFields& p) {
  std::map<std::string, std::string> dict{{"kernel", p.kernel.str()},
                                          {"stride", p.stride.str()},
                                          {"dilate", p.dilate.str()},
                                          {"pad", p.pad.str()},
                                          {"num_filter", std::to_string(p.num_filter)},
                                          {"num_group", std::to_string(p.num_group)},
                                          {"no_bias", "True"}};
  if (p.layout) dict["layout"] = *p.layout;
  return OpRegistry::global().find("_npx_convolution")->make_attrs(dict);
}

void qconv_compute(const NodeAttrs& attrs, const OpContext& ctx, const std::vector<TBlob>& in,
                   const std::vector<OpReqType>& req, const std::vector<TBlob>& out) {
  const auto& p = attrs.get<QuantizedConvParam>();
  const Geom g = conv_geom(attrs, p, in[0].shape);
  const quant::LinearEpilogue e =
      quant::linear_epilogue(attrs, p, qconv_inputs(attrs), p.num_filter, in);
  if (req[0] != kNullOp && out[0].size() > 0) {
    NDArray tmp =
        quant::writes_directly(out[0], req[0]) ? NDArray() : NDArray(out[0].shape, out[0].dtype);
    const TBlob y = tmp.defined() ? kernel::to_blob(tmp) : out[0];
    const float* bias = e.bias.empty() ? nullptr : e.bias.data();
    if (!dnnl::enabled() ||
        !dnnl::conv_int8_forward(dnnl_spec(g, p.num_group, p.num_filter), e.spec, in[0].dptr,
                                 in[1].ptr<int8_t>(), bias, e.scale.data(), y.dptr)) {
      // The reference path: the float64 convolution of the small integers (exact sums).
      const NDArray x = quant::float_values(in[0], DType::kFloat64);
      const NDArray w = quant::float_values(in[1], DType::kFloat64);
      NDArray acc(out[0].shape, DType::kFloat64);
      conv_compute(float_conv_attrs(p), ctx, {kernel::to_blob(x), kernel::to_blob(w)}, {kWriteTo},
                   {kernel::to_blob(acc)});
      quant::finish_from_sums(e, acc.data<double>(), g.n, p.num_filter, g.out_plane(), y);
    }
    if (tmp.defined()) write_req(tmp, as_array(out[0]), req[0]);
  }
  quant::write_range(out, e.out_lo, e.out_hi);
}

bool qpool_shape(const NodeAttrs& attrs, ShapeVector* in, ShapeVector* out) {
  if (!(*in)[0].is_known()) return false;
  ShapeVector data{(*in)[0]}, result{(*out)[0]};
  pool_shape(attrs, &data, &result);
  quant::expect_range_shape(attrs, in, 1, "min_data");
  quant::expect_range_shape(attrs, in, 2, "max_data");
  assign_shape(attrs, &(*out)[0], result[0], "output", 0);
  quant::range_output_shapes(attrs, out);
  return true;
}

bool qpool_type(const NodeAttrs& attrs, DTypeVector* in, DTypeVector* out) {
  const DType t = (*in)[0];
  if (t == DType::kUnknown) return false;
  if (t != DType::kInt8 && t != DType::kUInt8)
    type_error("[", op_name(attrs), "] argument 'data' must be int8 or uint8, got ", t);
  const std::string& kind = attrs.get<PoolingParam>().pool_type;
  if (kind != "max" && kind != "avg")  // (a sum leaves the data's range)
    value_error("[", op_name(attrs), "] pool_type must be 'max' or 'avg', got '", kind, "'");
  for (int i : {1, 2}) {
    if ((*in)[i] == DType::kUnknown) (*in)[i] = DType::kFloat32;
    if ((*in)[i] != DType::kFloat32)
      type_error("[", op_name(attrs), "] argument '", i == 1 ? "min_data" : "max_data",
                 "' must be float32, got ", (*in)[i]);
  }
  (*out)[0] = t;
  (*out)[1] = (*out)[2] = DType::kFloat32;
  return true;
}

// 8-bit pooling on the 2x2 kernel (MaxPool2D(2)) or oneDNN's: max and average windows of the
// 'valid' convention (as its float path), written straight into the output.
bool qpool_on_dnnl(const NodeAttrs& attrs, const TBlob& x, const TBlob& y, OpReqType req) {
  const auto& p = attrs.get<PoolingParam>();
  const Pool kind = pool_of(p.pool_type);
  const Geom g = pool_geom(attrs, x.shape);
  // MaxPool2D(2): the 2x2 kernel on the plain layout, without oneDNN's reorders to and from
  // channels-last (which take three quarters of its time).
  if (kind == Pool::kMax && g.d == 1 && g.kh == 2 && g.kw == 2 && g.sh == 2 && g.sw == 2 &&
      tiled_windows(g) && quant::writes_directly(y, req)) {
    kernel::max_pool2x2_forward({x.dptr, y.dptr, g.n * g.c, g.h, g.w, g.oh, g.ow, x.dtype});
    return true;
  }
  if (!dnnl::enabled() || !(kind == Pool::kMax || kind == Pool::kAvg) ||
      !(p.global_pool || p.pooling_convention == "valid") || !quant::writes_directly(y, req))
    return false;
  return dnnl::pool_int8_forward(dnnl_pool_spec(g, kind, p.count_include_pad),
                                 x.dtype == DType::kUInt8, x.dptr, y.dptr);
}

// Quantized pooling: the fast paths above, else the pooling of the small integers in float
// (exact maxima; averages to the nearest integer), back in the input's dtype. The range
// passes through.
void qpool_compute(const NodeAttrs& attrs, const OpContext& ctx, const std::vector<TBlob>& in,
                   const std::vector<OpReqType>& req, const std::vector<TBlob>& out) {
  if (req[0] != kNullOp && !qpool_on_dnnl(attrs, in[0], out[0], req[0])) {
    NDArray x = quant::float_values(in[0]), pooled(out[0].shape);
    pool_compute(attrs, ctx, {kernel::to_blob(x)}, {kWriteTo}, {kernel::to_blob(pooled)});
    const float* v = pooled.data<float>();
    NDArray y(out[0].shape, out[0].dtype);
    const int64_t n = y.size();
    // (saturated: an empty window of the 'full' convention pools to -inf or nan)
    if (y.dtype() == DType::kInt8) {
      auto* o = y.data<int8_t>();
      for (int64_t i = 0; i < n; ++i) o[i] = quant::saturate<int8_t>(v[i]);
    } else {
      auto* o = y.data<uint8_t>();
      for (int64_t i = 0; i < n; ++i) o[i] = quant::saturate<uint8_t>(v[i]);
    }
    write_req(y, as_array(out[0]), req[0]);
  }
  quant::write_range(out, quant::range_value(attrs, in[1], "min_data"),
                     quant::range_value(attrs, in[2], "max_data"));
}

[[maybe_unused]] const bool registered = [] {
  OpRegistry::global()
      .register_op("_npx_convolution")
      .describe(
          "Convolution (cross-correlation, as MXNet's Convolution) of (N, C, W), (N, C, H, W) "
          "or (N, C, D, H, W) data with a (num_filter, C / num_group, *kernel) weight, plus a "
          "bias per filter; with stride, dilation, zero padding and groups. Output spatial "
          "size: floor((in + 2 * pad - dilate * (kernel - 1) - 1) / stride) + 1.")
      .set_num_inputs(conv_num_inputs)
      .add_argument("data", "NDArray", "Input data, (N, C, W), (N, C, H, W) or (N, C, D, H, W).")
      .add_argument("weight", "NDArray", "Weight, (num_filter, C / num_group, *kernel).")
      .add_argument("bias", "NDArray", "Bias, (num_filter,); left out when no_bias.")
      .set_params<ConvolutionParam>()
      .set_attr<FListInputNames>("FListInputNames",
                                 [](const NodeAttrs& attrs) {
                                   std::vector<std::string> v{"data", "weight"};
                                   if (!attrs.get<ConvolutionParam>().no_bias) v.push_back("bias");
                                   return v;
                                 })
      .set_attr<FInferShape>("FInferShape", conv_shape)
      .set_attr<TFillsInputs>("TFillsInputs", true)
      .set_attr<FInferType>("FInferType",
                            [](const NodeAttrs& attrs, DTypeVector* in, DTypeVector* out) {
                              return same_float_type(attrs, in, out, {"data", "weight", "bias"});
                            })
      .set_attr<FCompute>("FCompute<cpu>", conv_compute)
      .set_attr<FCompute>("FCompute<gpu>", conv_compute)
      .set_attr<FGradient>("FGradient", ElemwiseGradUseIn{"_backward_convolution"});
  register_backward("_backward_convolution",
                    "Backward of convolution: (ograd, data, weight[, bias]) -> (grad data, grad "
                    "weight[, grad bias]).")
      .set_num_inputs([](const NodeAttrs& attrs) -> uint32_t {
        return attrs.get<ConvolutionParam>().no_bias ? 3 : 4;
      })
      .set_num_outputs([](const NodeAttrs& attrs) -> uint32_t {
        return attrs.get<ConvolutionParam>().no_bias ? 2 : 3;
      })
      .set_params<ConvolutionParam>()
      .set_attr<FInferShape>(
          "FInferShape",
          [](const NodeAttrs& attrs, ShapeVector* in, ShapeVector* out) {
            const bool bias = !attrs.get<ConvolutionParam>().no_bias;
            ForwardLayout fwd{bias ? std::vector<int>{1, 2, 3} : std::vector<int>{1, 2}, {{0, 0}}};
            if (!check_with_forward(attrs, in, conv_shape, fwd,
                                    {"ograd", "data", "weight", "bias"}))
              return false;
            assign_shape(attrs, &(*out)[0], (*in)[1], "output", 0);
            assign_shape(attrs, &(*out)[1], (*in)[2], "output", 1);
            if (out->size() > 2) assign_shape(attrs, &(*out)[2], Shape{(*in)[2][0]}, "output", 2);
            return true;
          })
      .set_attr<FInferType>(
          "FInferType",
          [](const NodeAttrs& attrs, DTypeVector* in, DTypeVector* out) {
            return same_float_type(attrs, in, out, {"ograd", "data", "weight", "bias"});
          })
      .set_attr<FCompute>("FCompute<cpu>", conv_backward)
      .set_attr<FCompute>("FCompute<gpu>", conv_backward)
      .set_attr<FGradient>("FGradient", conv_backward_gradient);

  OpRegistry::global()
      .register_op("_npx_deconvolution")
      .describe(
          "Transposed convolution (as MXNet's Deconvolution): the adjoint of the convolution "
          "with the same kernel, stride, dilate, pad and num_group, mapping (N, C, *in) data "
          "with a (C, num_filter / num_group, *kernel) weight to (N, num_filter, *out), plus a "
          "bias per filter. Output spatial size: stride * (in - 1) + dilate * (kernel - 1) + 1 "
          "- 2 * pad + adj (adj < stride), or target_shape.")
      .set_num_inputs(deconv_num_inputs)
      .add_argument("data", "NDArray", "Input data, (N, C, W), (N, C, H, W) or (N, C, D, H, W).")
      .add_argument("weight", "NDArray", "Weight, (C, num_filter / num_group, *kernel).")
      .add_argument("bias", "NDArray", "Bias, (num_filter,); left out when no_bias.")
      .set_params<DeconvolutionParam>()
      .set_attr<FListInputNames>("FListInputNames",
                                 [](const NodeAttrs& attrs) {
                                   std::vector<std::string> v{"data", "weight"};
                                   if (!attrs.get<DeconvolutionParam>().no_bias)
                                     v.push_back("bias");
                                   return v;
                                 })
      .set_attr<FInferShape>("FInferShape", deconv_shape)
      .set_attr<TFillsInputs>("TFillsInputs", true)
      .set_attr<FInferType>("FInferType",
                            [](const NodeAttrs& attrs, DTypeVector* in, DTypeVector* out) {
                              return same_float_type(attrs, in, out, {"data", "weight", "bias"});
                            })
      .set_attr<FCompute>("FCompute<cpu>", deconv_compute)
      .set_attr<FCompute>("FCompute<gpu>", deconv_compute)
      .set_attr<FGradient>("FGradient", ElemwiseGradUseIn{"_backward_deconvolution"});
  register_backward("_backward_deconvolution",
                    "Backward of transposed convolution: (ograd, data, weight[, bias]) -> (grad "
                    "data, grad weight[, grad bias]).")
      .set_num_inputs([](const NodeAttrs& attrs) -> uint32_t {
        return attrs.get<DeconvolutionParam>().no_bias ? 3 : 4;
      })
      .set_num_outputs([](const NodeAttrs& attrs) -> uint32_t {
        return attrs.get<DeconvolutionParam>().no_bias ? 2 : 3;
      })
      .set_params<DeconvolutionParam>()
      .set_attr<FInferShape>(
          "FInferShape",
          [](const NodeAttrs& attrs, ShapeVector* in, ShapeVector* out) {
            const bool bias = !attrs.get<DeconvolutionParam>().no_bias;
            ForwardLayout fwd{bias ? std::vector<int>{1, 2, 3} : std::vector<int>{1, 2}, {{0, 0}}};
            if (!check_with_forward(attrs, in, deconv_shape, fwd,
                                    {"ograd", "data", "weight", "bias"}))
              return false;
            assign_shape(attrs, &(*out)[0], (*in)[1], "output", 0);
            assign_shape(attrs, &(*out)[1], (*in)[2], "output", 1);
            if (out->size() > 2)
              assign_shape(attrs, &(*out)[2], Shape{attrs.get<DeconvolutionParam>().num_filter},
                           "output", 2);
            return true;
          })
      .set_attr<FInferType>(
          "FInferType",
          [](const NodeAttrs& attrs, DTypeVector* in, DTypeVector* out) {
            return same_float_type(attrs, in, out, {"ograd", "data", "weight", "bias"});
          })
      .set_attr<FCompute>("FCompute<cpu>", deconv_backward)
      .set_attr<FCompute>("FCompute<gpu>", deconv_backward);

  OpRegistry::global()
      .register_op("_npx_pooling")
      .describe(
          "Pooling (as MXNet's Pooling) of (N, C, W), (N, C, H, W) or (N, C, D, H, W) data: "
          "the maximum, "
          "average or sum of each kernel window, with stride and padding (padding never wins "
          "a max), the 'valid' or 'full' output convention, or over the whole spatial extent "
          "(global_pool). An empty window gives -inf (max) or nan (avg).")
      .set_num_inputs(1)
      .add_argument("data", "NDArray", "Input data, (N, C, W), (N, C, H, W) or (N, C, D, H, W).")
      .set_params<PoolingParam>()
      .set_attr<FInferShape>("FInferShape", pool_shape)
      .set_attr<FInferType>("FInferType",
                            [](const NodeAttrs& attrs, DTypeVector* in, DTypeVector* out) {
                              return same_float_type(attrs, in, out, {"data"});
                            })
      .set_attr<FCompute>("FCompute<cpu>", pool_compute)
      .set_attr<FCompute>("FCompute<gpu>", pool_compute)
      .set_attr<FGradient>("FGradient", ElemwiseGradUseInOut{"_backward_pooling"});
  register_backward("_backward_pooling",
                    "Backward of pooling: (ograd, data, out) -> grad data (max: to the window's "
                    "first maximum; avg / sum: spread over the window).")
      .set_num_inputs(3)
      .set_params<PoolingParam>()
      .set_attr<FInferShape>(
          "FInferShape",
          [](const NodeAttrs& attrs, ShapeVector* in, ShapeVector* out) {
            if (!check_with_forward(attrs, in, pool_shape, {{1}, {{0, 0}, {0, 2}}},
                                    {"ograd", "data", "out"}))
              return false;
            return output_shape_of_input(1)(attrs, in, out);
          })
      .set_attr<FInferType>("FInferType",
                            [](const NodeAttrs& attrs, DTypeVector* in, DTypeVector* out) {
                              return same_float_type(attrs, in, out, {"ograd", "data", "out"});
                            })
      .set_attr<FCompute>("FCompute<cpu>", pool_backward)
      .set_attr<FCompute>("FCompute<gpu>", pool_backward)
      // avg / sum pooling's backward spreads ograd over the windows, linearly and whatever the
      // data: its gradient is the pooling itself (its adjoint), none to data or out.
      .set_attr<FGradient>("FGradient", pool_backward_gradient);
  OpRegistry::global()
      .register_op("_contrib_quantized_conv")
      .describe(
          "Convolution of int8 / uint8 data with int8 weights (MXNet's quantized_conv, with "
          "oneDNN's fusions): the int32 result with its range, or with min_calib_range / "
          "max_calib_range the result requantized to int8 (uint8 when non-negative or "
          "with_relu). The weight range may be one per filter; the bias may be int8 (with "
          "its range), int32 (in the accumulator's scale) or float32.")
      .add_alias("_npx_quantized_conv")
      .set_num_inputs(
          [](const NodeAttrs& attrs) -> uint32_t { return qconv_inputs(attrs).count(); })
      .set_num_outputs(3)
      .add_argument("data", "NDArray", "int8 / uint8 data (N, C, *spatial).")
      .add_argument("weight", "NDArray", "int8 weight (num_filter, C / num_group, *kernel).")
      .add_argument("bias", "NDArray", "Bias (num_filter,); left out when no_bias.")
      .add_argument("min_data", "NDArray", "Range of data.")
      .add_argument("max_data", "NDArray", "Range of data.")
      .add_argument("min_weight", "NDArray", "Range of weight, (1,) or (num_filter,).")
      .add_argument("max_weight", "NDArray", "Range of weight, (1,) or (num_filter,).")
      .add_argument("min_bias", "NDArray", "Range of an int8 bias.")
      .add_argument("max_bias", "NDArray", "Range of an int8 bias.")
      .set_params<QuantizedConvParam>()
      .set_attr<FListInputNames>("FListInputNames",
                                 [](const NodeAttrs& attrs) {
                                   return quant::linear_input_names(qconv_inputs(attrs).bias);
                                 })
      .set_attr<FListOutputNames>(
          "FListOutputNames",
          [](const NodeAttrs&) {
            return std::vector<std::string>{"output", "min_output", "max_output"};
          })
      .set_attr<FInferShape>("FInferShape", qconv_shape)
      .set_attr<TFillsInputs>("TFillsInputs", true)
      .set_attr<FInferType>("FInferType",
                            [](const NodeAttrs& attrs, DTypeVector* in, DTypeVector* out) {
                              return quant::linear_types(attrs, attrs.get<QuantizedConvParam>(),
                                                         qconv_inputs(attrs), in, out);
                            })
      .set_attr<FCompute>("FCompute<cpu>", qconv_compute)
      .set_attr<FGradient>("FGradient", quant::no_gradient());
  OpRegistry::global()
      .register_op("_contrib_quantized_pooling")
      .describe(
          "Pooling (Pooling's params, max or avg) of int8 / uint8 data; averages round to the "
          "nearest integer (an exact half either way: oneDNN divides by multiplying); the "
          "range passes through (MXNet's quantized_pooling).")
      .add_alias("_npx_quantized_pooling")
      .set_num_inputs(3)
      .set_num_outputs(3)
      .add_argument("data", "NDArray", "int8 / uint8 data (N, C, *spatial).")
      .add_argument("min_data", "NDArray", "Its range's minimum.")
      .add_argument("max_data", "NDArray", "Its range's maximum.")
      .set_params<PoolingParam>()
      .set_attr<FListOutputNames>(
          "FListOutputNames",
          [](const NodeAttrs&) {
            return std::vector<std::string>{"output", "min_output", "max_output"};
          })
      .set_attr<FInferShape>("FInferShape", qpool_shape)
      .set_attr<TFillsInputs>("TFillsInputs", true)
      .set_attr<FInferType>("FInferType", qpool_type)
      .set_attr<FCompute>("FCompute<cpu>", qpool_compute)
      .set_attr<FGradient>("FGradient", quant::no_gradient());
  return true;
}();

}  // namespace

bool conv_forward_with_epilogue(const NodeAttrs& conv, bool is_train, const std::vector<TBlob>& in,
                                const dnnl::ConvEpilogue& epilogue, const TBlob& out) {
  const auto& p = conv.get<ConvolutionParam>();
  if (in.size() != conv_num_inputs(conv) || !use_dnnl(out.dtype, out.device)) return false;
  for (const TBlob& b : in)
    if (b.dtype != DType::kFloat32 || b.device.is_gpu() || !b.is_contiguous()) return false;
  if (!out.is_contiguous()) return false;
  const Geom g = conv_geom(conv, in[0].shape);
  if (out.shape != g.out_shape(p.num_filter)) return false;
  const float* bias = p.no_bias ? nullptr : in[2].ptr<float>();
  return dnnl::conv_forward(dnnl_spec(g, p.num_group, p.num_filter), in[0].ptr<float>(),
                            in[1].ptr<float>(), bias, static_cast<float*>(out.dptr), !is_train,
                            &epilogue);
}

}  // namespace ndx
