// Convolution and pooling ops of the numpy extension (ndx.npx, registered as _npx_*), MXNet
// semantics, 1-d (N, C, W) and 2-d (N, C, H, W) layouts:
//
//   _npx_convolution(data, weight[, bias])  im2col + GEMM per group (OpenBLAS), with the
//                                           first-order backward _backward_convolution
//                                           (ograd, data, weight[, bias]) -> (grad data, grad
//                                           weight[, grad bias]) via col2im.
//   _npx_pooling(data)                      max / avg / sum pooling, 'valid' or 'full'
//                                           convention, global pooling; backward
//                                           _backward_pooling(ograd, data, out) -> grad data.
//
// A 1-d problem runs as a 2-d one with H = 1 (kernel 1, stride 1, pad 0, dilate 1 along H).
// Kernels take contiguous inputs (the ops do not declare TStridedInputs); the 16-bit floats
// compute in float, pooling sums accumulate in double.
#include <cblas.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <optional>
#include <string>

#include "kernel/blob.h"
#include "kernel/conv_geom.h"
#include "kernel/gpu.h"
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

// Checks data's rank against the spatial rank nsp and the layout, and fills n, c, h, w.
void data_dims(const NodeAttrs& attrs, const Shape& d, int nsp,
               const std::optional<std::string>& layout, Geom* g) {
  if (d.ndim() != 3 && d.ndim() != 4)
    value_error("[", op_name(attrs),
                "] argument 'data' must have 3 dimensions (N, C, W) or 4 dimensions "
                "(N, C, H, W), got shape ",
                d.str());
  if (layout) {
    const int want = *layout == "NCW" ? 1 : 2;
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
  g->h = nsp == 2 ? d[2] : 1;
  g->w = d[d.ndim() - 1];
}

const char* kAxisNames[2] = {"H", "W"};

// ============================== convolution ==============================
struct ConvolutionParam {
  Shape kernel;
  Shape stride;
  Shape dilate;
  Shape pad;
  int64_t num_filter = 0;
  int64_t num_group = 1;
  bool no_bias = false;
  std::optional<std::string> layout;
  static void declare(ParamDecl<ConvolutionParam>& d) {
    d.field("kernel", &ConvolutionParam::kernel)
        .describe("The kernel's spatial size: (k,) for 1-d or (kh, kw) for 2-d data.");
    d.field("stride", &ConvolutionParam::stride)
        .set_default(Shape{})
        .describe("The stride per spatial dimension; () means 1 in each.");
    d.field("dilate", &ConvolutionParam::dilate)
        .set_default(Shape{})
        .describe("The dilation per spatial dimension; () means 1 in each.");
    d.field("pad", &ConvolutionParam::pad)
        .set_default(Shape{})
        .describe("Zero padding on both sides per spatial dimension; () means 0 in each.");
    d.field("num_filter", &ConvolutionParam::num_filter)
        .set_lower_bound(1)
        .describe("The number of output channels.");
    d.field("num_group", &ConvolutionParam::num_group)
        .set_default(int64_t{1})
        .set_lower_bound(1)
        .describe(
            "The number of groups: input and output channels split into num_group "
            "independent convolutions.");
    d.field("no_bias", &ConvolutionParam::no_bias)
        .set_default(false)
        .describe("Whether to leave out the bias (then the op takes data and weight only).");
    d.field("layout", &ConvolutionParam::layout)
        .set_default(std::nullopt)
        .set_enum({"NCW", "NCHW"})
        .describe("The data layout: NCW (1-d) or NCHW (2-d); None takes it from data's rank.");
  }
};

uint32_t conv_num_inputs(const NodeAttrs& attrs) {
  return attrs.get<ConvolutionParam>().no_bias ? 2 : 3;
}

// The geometry of a convolution of data of shape d; validates params against d.
Geom conv_geom(const NodeAttrs& attrs, const Shape& d) {
  const auto& p = attrs.get<ConvolutionParam>();
  const int nsp = p.kernel.ndim();
  if (nsp != 1 && nsp != 2)
    value_error("[", op_name(attrs), "] parameter 'kernel' must have 1 or 2 values, got ",
                p.kernel.str());
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
  const int off = 2 - nsp;  // 1-d: only W
  int64_t* kk[2] = {&g.kh, &g.kw};
  int64_t* ss[2] = {&g.sh, &g.sw};
  int64_t* pp[2] = {&g.ph, &g.pw};
  int64_t* dd[2] = {&g.dh, &g.dw};
  int64_t* oo[2] = {&g.oh, &g.ow};
  const int64_t in[2] = {g.h, g.w};
  for (int i = 0; i < nsp; ++i) {
    const int a = i + off;
    *kk[a] = k[i], *ss[a] = s[i], *pp[a] = pd[i], *dd[a] = dl[i];
    const int64_t eff = dl[i] * (k[i] - 1) + 1, padded = in[a] + 2 * pd[i];
    if (eff > padded)
      value_error("[", op_name(attrs), "] the kernel size ", eff, dl[i] > 1 ? " (dilated)" : "",
                  " exceeds the padded input size ", padded, " (input ", in[a], " + 2 * pad ",
                  pd[i], ") along spatial dimension ", kAxisNames[a], " of data shape ", d.str());
    *oo[a] = (padded - eff) / s[i] + 1;
  }
  return g;
}

Shape conv_weight_shape(const NodeAttrs& attrs, const Geom& g) {
  const auto& p = attrs.get<ConvolutionParam>();
  const int64_t cg = g.c / p.num_group;
  return g.nsp == 1 ? Shape{p.num_filter, cg, g.kw} : Shape{p.num_filter, cg, g.kh, g.kw};
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

// col (c * kh * kw, oh * ow) <- the patches of the c channels at x (c, h, w), zero padded.
template <typename T>
void im2col(const Geom& g, int64_t c, const T* x, T* col) {
  const int64_t ohw = g.out_plane();
  for (int64_t ch = 0; ch < c; ++ch)
    for (int64_t i = 0; i < g.kh; ++i)
      for (int64_t j = 0; j < g.kw; ++j) {
        T* row = col + ((ch * g.kh + i) * g.kw + j) * ohw;
        const T* plane = x + ch * g.in_plane();
        for (int64_t oy = 0; oy < g.oh; ++oy) {
          const int64_t y = oy * g.sh - g.ph + i * g.dh;
          T* r = row + oy * g.ow;
          if (y < 0 || y >= g.h) {
            std::fill(r, r + g.ow, T(0));
            continue;
          }
          for (int64_t ox = 0; ox < g.ow; ++ox) {
            const int64_t xx = ox * g.sw - g.pw + j * g.dw;
            r[ox] = xx >= 0 && xx < g.w ? plane[y * g.w + xx] : T(0);
          }
        }
      }
}

// x (c, h, w) += the patches in col (the adjoint of im2col).
template <typename T>
void col2im(const Geom& g, int64_t c, const T* col, T* x) {
  const int64_t ohw = g.out_plane();
  for (int64_t ch = 0; ch < c; ++ch)
    for (int64_t i = 0; i < g.kh; ++i)
      for (int64_t j = 0; j < g.kw; ++j) {
        const T* row = col + ((ch * g.kh + i) * g.kw + j) * ohw;
        T* plane = x + ch * g.in_plane();
        for (int64_t oy = 0; oy < g.oh; ++oy) {
          const int64_t y = oy * g.sh - g.ph + i * g.dh;
          if (y < 0 || y >= g.h) continue;
          const T* r = row + oy * g.ow;
          for (int64_t ox = 0; ox < g.ow; ++ox) {
            const int64_t xx = ox * g.sw - g.pw + j * g.dw;
            if (xx >= 0 && xx < g.w) plane[y * g.w + xx] += r[ox];
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
  a.n = g.n, a.c = g.c, a.h = g.h, a.w = g.w, a.f = f, a.groups = groups;
  a.kh = g.kh, a.kw = g.kw, a.sh = g.sh, a.sw = g.sw, a.ph = g.ph, a.pw = g.pw;
  a.dh = g.dh, a.dw = g.dw, a.oh = g.oh, a.ow = g.ow;
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

void conv_compute(const NodeAttrs& attrs, const OpContext&, const std::vector<TBlob>& in,
                  const std::vector<OpReqType>& req, const std::vector<TBlob>& out) {
  if (req[0] == kNullOp) return;
  const auto& p = attrs.get<ConvolutionParam>();
  const Geom g = conv_geom(attrs, in[0].shape);
  const int64_t groups = p.num_group, f = p.num_filter, fg = f / groups, cg = g.c / groups;
  const int64_t ck = cg * g.kh * g.kw, ohw = g.out_plane();
  const DType ct = gemm_dtype(in[0].dtype);
  std::vector<NDArray> keep;
  TBlob x = kernel::cast_blob(in[0], ct, &keep), w = kernel::cast_blob(in[1], ct, &keep);
  if (out[0].device.is_gpu()) {
    NDArray y = use_cudnn() ? cudnn_forward(g, groups, f, ct, x, w)
                            : conv_forward_gpu(g, groups, f, ct, x, w);
    if (!p.no_bias) add_bias_gpu(y, kernel::cast_blob(in[2], ct, &keep));
    write_req(y.reshape(out[0].shape), as_array(out[0]), req[0]);
    return;
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

// (ograd, data, weight[, bias]) -> (grad data, grad weight[, grad bias])
void conv_backward(const NodeAttrs& attrs, const OpContext&, const std::vector<TBlob>& in,
                   const std::vector<OpReqType>& req, const std::vector<TBlob>& out) {
  const auto& p = attrs.get<ConvolutionParam>();
  const Geom g = conv_geom(attrs, in[1].shape);
  const int64_t groups = p.num_group, f = p.num_filter, fg = f / groups, cg = g.c / groups;
  const int64_t ck = cg * g.kh * g.kw, ohw = g.out_plane();
  const bool want_dx = req[0] != kNullOp, want_dw = req[1] != kNullOp;
  const bool want_db = !p.no_bias && req[2] != kNullOp;
  const DType ct = gemm_dtype(in[0].dtype);
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
    if (want_db) {  // the sums of ograd over images and positions
      TBlob gv = og;
      gv.shape = Shape{g.n, f, ohw};
      gv.strides = contiguous_strides(gv.shape);
      TBlob dbv = kernel::to_blob(db);
      dbv.shape = Shape{f, 1};
      dbv.strides = Shape{1, 0};
      kernel::sum_to_shape(gv, dbv, kWriteTo);
    }
    if (want_dx) write_req(dx.reshape(out[0].shape), as_array(out[0]), req[0]);
    if (want_dw) write_req(dw.reshape(out[1].shape), as_array(out[1]), req[1]);
    if (want_db) write_req(db, as_array(out[2]), req[2]);
    return;
  }
  NDArray dx(Shape{g.n, g.c, g.in_plane()}, ct), dw(Shape{f, ck}, ct), db(Shape{f}, ct);
  with_gemm_type(ct, [&](auto tag) {
    using T = decltype(tag);
    std::vector<T> col(static_cast<size_t>(ck * ohw));
    const T *gp = og.ptr<T>(), *xp = x.ptr<T>(), *wp = w.ptr<T>();
    T *dxp = dx.data<T>(), *dwp = dw.data<T>();
    std::fill(dxp, dxp + dx.size(), T(0));
    std::fill(dwp, dwp + dw.size(), T(0));
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
      T* bp = db.data<T>();
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
            "The window's spatial size: (k,) for 1-d or (kh, kw) for 2-d data "
            "(ignored with global_pool).");
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
        .set_enum({"NCW", "NCHW"})
        .describe("The data layout: NCW (1-d) or NCHW (2-d); None takes it from data's rank.");
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
    g.kh = g.h, g.kw = g.w;
    g.oh = g.ow = 1;
    return g;
  }
  const int nsp = p.kernel.ndim();
  if (nsp != 1 && nsp != 2)
    value_error("[", op_name(attrs), "] parameter 'kernel' must have 1 or 2 values ",
                "(or set global_pool=True), got ", p.kernel.str());
  const auto k = spatial_values(attrs, p.kernel, nsp, 1, 1, "kernel");
  const auto s = spatial_values(attrs, p.stride, nsp, 1, 1, "stride");
  const auto pd = spatial_values(attrs, p.pad, nsp, 0, 0, "pad");
  data_dims(attrs, d, nsp, p.layout, &g);
  const bool full = p.pooling_convention == "full";
  const int off = 2 - nsp;
  int64_t* kk[2] = {&g.kh, &g.kw};
  int64_t* ss[2] = {&g.sh, &g.sw};
  int64_t* pp[2] = {&g.ph, &g.pw};
  int64_t* oo[2] = {&g.oh, &g.ow};
  const int64_t in[2] = {g.h, g.w};
  for (int i = 0; i < nsp; ++i) {
    const int a = i + off;
    *kk[a] = k[i], *ss[a] = s[i], *pp[a] = pd[i];
    const int64_t padded = in[a] + 2 * pd[i];
    if (k[i] > padded)
      value_error("[", op_name(attrs), "] the kernel size ", k[i],
                  " exceeds the padded input size ", padded, " (input ", in[a], " + 2 * pad ",
                  pd[i], ") along spatial dimension ", kAxisNames[a], " of data shape ", d.str());
    *oo[a] = (padded - k[i] + (full ? s[i] - 1 : 0)) / s[i] + 1;
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

// One pooling window of output (oy, ox): the input rows [y0, y1) and columns [x0, x1), and
// the avg divisor.
struct Window {
  int64_t y0, y1, x0, x1;
  double count;
};
Window window_at(const Geom& g, int64_t oy, int64_t ox, bool include_pad) {
  int64_t y0 = oy * g.sh - g.ph, x0 = ox * g.sw - g.pw;
  int64_t y1 = std::min(y0 + g.kh, g.h + g.ph), x1 = std::min(x0 + g.kw, g.w + g.pw);
  const int64_t padded = (y1 - y0) * (x1 - x0);
  y0 = std::max<int64_t>(y0, 0), x0 = std::max<int64_t>(x0, 0);
  y1 = std::min(y1, g.h), x1 = std::min(x1, g.w);
  const int64_t inside = std::max<int64_t>(y1 - y0, 0) * std::max<int64_t>(x1 - x0, 0);
  return {y0, y1, x0, x1, static_cast<double>(include_pad ? padded : inside)};
}

// The flat in-plane index of the window's maximum: the first maximum, or the first nan; -1
// for an empty window.
template <typename T>
int64_t window_argmax(const Geom& g, const Window& win, const T* plane) {
  int64_t best = -1;
  double m = 0;
  for (int64_t y = win.y0; y < win.y1; ++y)
    for (int64_t x = win.x0; x < win.x1; ++x) {
      const double v = static_cast<double>(plane[y * g.w + x]);
      if (best < 0 || (!std::isnan(m) && (v > m || std::isnan(v)))) {
        best = y * g.w + x;
        m = v;
      }
    }
  return best;
}

void pool_compute(const NodeAttrs& attrs, const OpContext&, const std::vector<TBlob>& in,
                  const std::vector<OpReqType>& req, const std::vector<TBlob>& out) {
  if (req[0] == kNullOp) return;
  const auto& p = attrs.get<PoolingParam>();
  const Geom g = pool_geom(attrs, in[0].shape);
  const Pool kind = pool_of(p.pool_type);
  if (out[0].device.is_gpu()) {
    std::vector<NDArray> keep;
    const DType ct = gemm_dtype(in[0].dtype);
    const TBlob x = kernel::cast_blob(in[0], ct, &keep);
    NDArray y(out[0].shape, ct, out[0].device);
    kernel::gpu::pool(g, static_cast<int>(kind), p.count_include_pad, ct, x.dptr, y.raw_data(),
                      out[0].device.id);
    write_req(y, as_array(out[0]), req[0]);
    return;
  }
  NDX_FLOAT_SWITCH(in[0].dtype, T, {
    using C = compute_t<T>;
    const T* xp = in[0].ptr<T>();
    T* yp = out[0].ptr<T>();
    for (int64_t pl = 0; pl < g.n * g.c; ++pl) {
      const T* plane = xp + pl * g.in_plane();
      T* o = yp + pl * g.out_plane();
      for (int64_t oy = 0; oy < g.oh; ++oy)
        for (int64_t ox = 0; ox < g.ow; ++ox) {
          const Window win = window_at(g, oy, ox, p.count_include_pad);
          double v;
          if (kind == Pool::kMax) {
            const int64_t i = window_argmax(g, win, plane);
            v = i < 0 ? -std::numeric_limits<double>::infinity() : static_cast<double>(plane[i]);
          } else {
            double acc = 0;
            for (int64_t y = win.y0; y < win.y1; ++y)
              for (int64_t x = win.x0; x < win.x1; ++x)
                acc += static_cast<double>(plane[y * g.w + x]);
            v = kind == Pool::kSum ? acc
                : win.count > 0    ? acc / win.count
                                   : std::numeric_limits<double>::quiet_NaN();
          }
          store(o + oy * g.ow + ox, req[0], static_cast<C>(v));
        }
    }
  });
}

// (ograd, data, out) -> grad data: max routes each ograd to its window's first maximum,
// avg / sum spread it over the window's input elements (avg divided by the window count).
void pool_backward(const NodeAttrs& attrs, const OpContext&, const std::vector<TBlob>& in,
                   const std::vector<OpReqType>& req, const std::vector<TBlob>& out) {
  if (req[0] == kNullOp) return;
  const auto& p = attrs.get<PoolingParam>();
  const Geom g = pool_geom(attrs, in[1].shape);
  const Pool kind = pool_of(p.pool_type);
  if (out[0].device.is_gpu()) {
    std::vector<NDArray> keep;
    const DType ct = gemm_dtype(in[1].dtype);
    const TBlob dy = kernel::cast_blob(in[0], ct, &keep), x = kernel::cast_blob(in[1], ct, &keep);
    NDArray dx(out[0].shape, ct, out[0].device);
    kernel::gpu::pool_backward(g, static_cast<int>(kind), p.count_include_pad, ct, dy.dptr, x.dptr,
                               dx.raw_data(), out[0].device.id);
    write_req(dx, as_array(out[0]), req[0]);
    return;
  }
  std::vector<double> acc(static_cast<size_t>(g.in_plane()));
  NDX_FLOAT_SWITCH(in[1].dtype, T, {
    using C = compute_t<T>;
    const T *gp = in[0].ptr<T>(), *xp = in[1].ptr<T>();
    T* dp = out[0].ptr<T>();
    for (int64_t pl = 0; pl < g.n * g.c; ++pl) {
      const T* plane = xp + pl * g.in_plane();
      const T* go = gp + pl * g.out_plane();
      std::fill(acc.begin(), acc.end(), 0.0);
      for (int64_t oy = 0; oy < g.oh; ++oy)
        for (int64_t ox = 0; ox < g.ow; ++ox) {
          const Window win = window_at(g, oy, ox, p.count_include_pad);
          const double gv = static_cast<double>(go[oy * g.ow + ox]);
          if (kind == Pool::kMax) {
            const int64_t i = window_argmax(g, win, plane);
            if (i >= 0) acc[i] += gv;
            continue;
          }
          if (kind == Pool::kAvg && win.count <= 0) continue;
          const double share = kind == Pool::kAvg ? gv / win.count : gv;
          for (int64_t y = win.y0; y < win.y1; ++y)
            for (int64_t x = win.x0; x < win.x1; ++x) acc[y * g.w + x] += share;
        }
      T* d = dp + pl * g.in_plane();
      for (int64_t i = 0; i < g.in_plane(); ++i) store(d + i, req[0], static_cast<C>(acc[i]));
    }
  });
}

[[maybe_unused]] const bool registered = [] {
  OpRegistry::global()
      .register_op("_npx_convolution")
      .describe(
          "Convolution (cross-correlation, as MXNet's Convolution) of (N, C, W) or (N, C, H, "
          "W) data with a (num_filter, C / num_group, *kernel) weight, plus a bias per filter; "
          "with stride, dilation, zero padding and groups. Output spatial size: floor((in + 2 "
          "* pad - dilate * (kernel - 1) - 1) / stride) + 1.")
      .set_num_inputs(conv_num_inputs)
      .add_argument("data", "NDArray", "Input data, (N, C, W) or (N, C, H, W).")
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
      .set_attr<FCompute>("FCompute<gpu>", conv_backward);

  OpRegistry::global()
      .register_op("_npx_pooling")
      .describe(
          "Pooling (as MXNet's Pooling) of (N, C, W) or (N, C, H, W) data: the maximum, "
          "average or sum of each kernel window, with stride and padding (padding never wins "
          "a max), the 'valid' or 'full' output convention, or over the whole spatial extent "
          "(global_pool). An empty window gives -inf (max) or nan (avg).")
      .set_num_inputs(1)
      .add_argument("data", "NDArray", "Input data, (N, C, W) or (N, C, H, W).")
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
      .set_attr<FCompute>("FCompute<gpu>", pool_backward);
  return true;
}();

}  // namespace
}  // namespace ndx
