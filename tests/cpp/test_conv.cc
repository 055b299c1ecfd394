// The npx convolution and pooling ops (src/operator/conv.cc) against direct-loop references
// written here: 1-d and 2-d data, strides, pads, dilations, groups, no_bias, zero-size batches
// and channels, every float dtype, request types, bad inputs with their error kinds, and
// gradients against central differences (float64).
#include <algorithm>
#include <limits>
#include <numeric>

#include "ndx/autograd.h"
#include "test_util.h"

namespace ndx {
namespace {
using test::expect_close;
using test::expect_error;
using test::run;
using test::values;
namespace ag = autograd;

using Dict = std::map<std::string, std::string>;
using test::autograd_grads;
constexpr DType kF64 = DType::kFloat64;
const DType kFloats[] = {DType::kFloat16, DType::kBFloat16, DType::kFloat32, DType::kFloat64};

NDArray arr(const std::vector<double>& v, Shape s, DType t = kF64) {
  return NDArray::from_vector(v, std::move(s)).astype(t);
}
NDArray rand_arr(Shape s, double lo = -2, double hi = 2, uint64_t seed = 1, DType t = kF64) {
  return arr(values(static_cast<size_t>(s.size()), lo, hi, seed), s, t);
}
double tol_for(DType t) {
  return t == DType::kFloat64 ? 1e-12 : t == DType::kFloat32 ? 1e-5 : 5e-2;
}

// "(a, b)" / "(a,)" for a param dict.
std::string tuple_str(const std::vector<int64_t>& v) {
  std::string s = "(";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
  return s + (v.size() == 1 ? ",)" : ")");
}

// FGradient of `op` against central differences for every input.
void check_grads(const std::string& op, const std::vector<NDArray>& in, const Dict& dict,
                 double tol = 1e-6) {
  NDArray y = run(op, in, dict);
  NDArray w = rand_arr(y.shape(), -1, 1, 77);
  auto grads = autograd_grads(op, in, w, dict);
  ASSERT_EQ(grads.size(), in.size()) << op;
  for (size_t i = 0; i < in.size(); ++i) {
    EXPECT_EQ(grads[i].shape(), in[i].shape()) << op << " input " << i;
    auto num = test::numeric_grad(
        [&](const NDArray& v) {
          auto c = in;
          c[i] = v;
          return run(op, c, dict);
        },
        in[i], w);
    SCOPED_TRACE(op + " input " + std::to_string(i));
    expect_close(grads[i].to_vector<double>(), num, tol, tol);
  }
}

// ============================== convolution ==============================
// A convolution problem: 1-d when kernel has one value (then stride/pad/dilate too).
struct ConvCase {
  Shape data;
  std::vector<int64_t> kernel, stride, pad, dilate;
  int64_t num_filter = 1, num_group = 1;
  bool no_bias = false;

  int nsp() const { return static_cast<int>(kernel.size()); }
  // Spatial param i with H = 1 for 1-d: index 0 is H, 1 is W.
  int64_t at(const std::vector<int64_t>& v, int a, int64_t def) const {
    if (nsp() == 1) return a == 0 || v.empty() ? def : v[0];
    return v.empty() ? def : v[a];
  }
  Shape weight() const {
    const int64_t cg = data[1] / num_group;
    return nsp() == 1 ? Shape{num_filter, cg, kernel[0]}
                      : Shape{num_filter, cg, kernel[0], kernel[1]};
  }
  Dict dict() const {
    Dict d{{"kernel", tuple_str(kernel)}, {"num_filter", std::to_string(num_filter)}};
    if (!stride.empty()) d["stride"] = tuple_str(stride);
    if (!pad.empty()) d["pad"] = tuple_str(pad);
    if (!dilate.empty()) d["dilate"] = tuple_str(dilate);
    if (num_group != 1) d["num_group"] = std::to_string(num_group);
    if (no_bias) d["no_bias"] = "True";
    return d;
  }
};

// Direct loops: out[n, f, oy, ox] = b[f] + sum_{c, i, j} x[n, g*Cg + c, y, x] w[f, c, i, j].
std::vector<double> conv_ref(const ConvCase& cc, const std::vector<double>& x,
                             const std::vector<double>& w, const std::vector<double>* b,
                             Shape* out_shape) {
  const Shape& d = cc.data;
  const int64_t N = d[0], C = d[1], H = cc.nsp() == 2 ? d[2] : 1, W = d[d.ndim() - 1];
  const int64_t KH = cc.at(cc.kernel, 0, 1), KW = cc.at(cc.kernel, 1, 1);
  const int64_t SH = cc.at(cc.stride, 0, 1), SW = cc.at(cc.stride, 1, 1);
  const int64_t PH = cc.at(cc.pad, 0, 0), PW = cc.at(cc.pad, 1, 0);
  const int64_t DH = cc.at(cc.dilate, 0, 1), DW = cc.at(cc.dilate, 1, 1);
  const int64_t OH = (H + 2 * PH - DH * (KH - 1) - 1) / SH + 1;
  const int64_t OW = (W + 2 * PW - DW * (KW - 1) - 1) / SW + 1;
  const int64_t F = cc.num_filter, G = cc.num_group, Cg = C / G, Fg = F / G;
  *out_shape = cc.nsp() == 1 ? Shape{N, F, OW} : Shape{N, F, OH, OW};
  std::vector<double> out(static_cast<size_t>(N * F * OH * OW));
  for (int64_t n = 0; n < N; ++n)
    for (int64_t f = 0; f < F; ++f)
      for (int64_t oy = 0; oy < OH; ++oy)
        for (int64_t ox = 0; ox < OW; ++ox) {
          double s = b ? (*b)[f] : 0.0;
          const int64_t g = f / Fg;
          for (int64_t c = 0; c < Cg; ++c)
            for (int64_t i = 0; i < KH; ++i)
              for (int64_t j = 0; j < KW; ++j) {
                const int64_t y = oy * SH - PH + i * DH, xx = ox * SW - PW + j * DW;
                if (y < 0 || y >= H || xx < 0 || xx >= W) continue;
                s += x[((n * C + g * Cg + c) * H + y) * W + xx] *
                     w[((f * Cg + c) * KH + i) * KW + j];
              }
          out[((n * F + f) * OH + oy) * OW + ox] = s;
        }
  return out;
}

const std::vector<ConvCase> kConvCases = {
    // 2-d
    {{2, 3, 5, 5}, {3, 3}, {}, {}, {}, 4},
    {{1, 2, 6, 7}, {3, 2}, {2, 1}, {1, 0}, {}, 3},
    {{2, 4, 7, 6}, {3, 3}, {1, 2}, {2, 1}, {2, 1}, 6, 2},
    {{1, 6, 5, 5}, {2, 2}, {2, 2}, {1, 1}, {1, 2}, 6, 3, true},
    {{2, 4, 4, 4}, {1, 1}, {}, {}, {}, 4, 4},  // depthwise 1x1
    {{1, 1, 3, 3}, {3, 3}, {}, {1, 1}, {}, 2},
    {{1, 2, 4, 5}, {2, 3}, {3, 3}, {}, {}, 2, 1, true},
    // 1-d
    {{2, 3, 8}, {3}, {}, {}, {}, 4},
    {{1, 4, 9}, {3}, {2}, {1}, {2}, 2, 2},
    {{3, 2, 5}, {2}, {3}, {2}, {}, 3, 1, true},
    {{1, 6, 7}, {1}, {}, {}, {}, 3, 3},
};

NDArray conv_run(const ConvCase& cc, const NDArray& x, const NDArray& w, const NDArray& b) {
  if (cc.no_bias) return run("_npx_convolution", {x, w}, cc.dict());
  return run("_npx_convolution", {x, w, b}, cc.dict());
}

TEST(Convolution, ForwardMatchesDirectLoopsOverGeometries) {
  for (size_t k = 0; k < kConvCases.size(); ++k) {
    const ConvCase& cc = kConvCases[k];
    SCOPED_TRACE("case " + std::to_string(k));
    NDArray x = rand_arr(cc.data, -1, 1, 10 + k), w = rand_arr(cc.weight(), -1, 1, 20 + k),
            b = rand_arr({cc.num_filter}, -1, 1, 30 + k);
    auto bv = b.to_vector<double>();
    Shape want_shape;
    auto want = conv_ref(cc, x.to_vector<double>(), w.to_vector<double>(),
                         cc.no_bias ? nullptr : &bv, &want_shape);
    NDArray y = conv_run(cc, x, w, b);
    EXPECT_EQ(y.shape(), want_shape);
    EXPECT_EQ(y.dtype(), kF64);
    expect_close(y.to_vector<double>(), want, 1e-12, 1e-12);
  }
}

TEST(Convolution, EveryFloatDtypeComputesAndKeepsItsDtype) {
  for (DType t : kFloats)
    for (size_t k : {size_t{2}, size_t{8}}) {
      const ConvCase& cc = kConvCases[k];
      NDArray x = rand_arr(cc.data, -1, 1, 3, t), w = rand_arr(cc.weight(), -1, 1, 4, t),
              b = rand_arr({cc.num_filter}, -1, 1, 5, t);
      auto bv = b.to_vector<double>();
      Shape s;
      auto want = conv_ref(cc, x.to_vector<double>(), w.to_vector<double>(), &bv, &s);
      NDArray y = conv_run(cc, x, w, b);
      EXPECT_EQ(y.dtype(), t);
      EXPECT_EQ(y.shape(), s);
      // 16-bit: the inputs are exact in float, only the final rounding differs.
      expect_close(y.to_vector<double>(), want, tol_for(t), tol_for(t));
    }
}

TEST(Convolution, ZeroSizeBatchChannelsAndSpatial) {
  // Zero batch.
  NDArray y =
      run("_npx_convolution", {rand_arr({0, 3, 5, 5}), rand_arr({4, 3, 3, 3}), rand_arr({4})},
          {{"kernel", "(3, 3)"}, {"num_filter", "4"}});
  EXPECT_EQ(y.shape(), (Shape{0, 4, 3, 3}));
  y = run("_npx_convolution", {rand_arr({0, 2, 6}), rand_arr({3, 2, 2})},
          {{"kernel", "(2,)"}, {"num_filter", "3"}, {"no_bias", "True"}});
  EXPECT_EQ(y.shape(), (Shape{0, 3, 5}));
  // Zero channels: the output is the bias.
  y = run("_npx_convolution", {rand_arr({2, 0, 3, 3}), rand_arr({2, 0, 2, 2}), arr({1, -2}, {2})},
          {{"kernel", "(2, 2)"}, {"num_filter", "2"}});
  EXPECT_EQ(y.shape(), (Shape{2, 2, 2, 2}));
  std::vector<double> want;
  for (int n = 0; n < 2; ++n)
    for (double v : {1.0, -2.0})
      for (int i = 0; i < 4; ++i) want.push_back(v);
  EXPECT_EQ(y.to_vector<double>(), want);
  // Zero-length spatial input, padded to the kernel: zeros plus the bias.
  y = run("_npx_convolution", {rand_arr({1, 1, 0}), rand_arr({1, 1, 1}), arr({0.5}, {1})},
          {{"kernel", "(1,)"}, {"num_filter", "1"}, {"pad", "(1,)"}});
  EXPECT_EQ(y.shape(), (Shape{1, 1, 2}));
  EXPECT_EQ(y.to_vector<double>(), (std::vector<double>{0.5, 0.5}));
  // Gradients of a zero batch have the inputs' shapes (weight and bias gradients are 0).
  auto g =
      autograd_grads("_npx_convolution", {rand_arr({0, 2, 4}), rand_arr({3, 2, 2}), rand_arr({3})},
                     rand_arr({0, 3, 3}), {{"kernel", "(2,)"}, {"num_filter", "3"}});
  EXPECT_EQ(g[0].shape(), (Shape{0, 2, 4}));
  EXPECT_EQ(g[1].to_vector<double>(), std::vector<double>(12, 0.0));
  EXPECT_EQ(g[2].to_vector<double>(), std::vector<double>(3, 0.0));
}

TEST(Convolution, LayoutAndRequestTypes) {
  NDArray x = rand_arr({1, 2, 4, 4}), w = rand_arr({3, 2, 2, 2}, -1, 1, 2), b = rand_arr({3});
  Dict d{{"kernel", "(2, 2)"}, {"num_filter", "3"}};
  NDArray y = run("_npx_convolution", {x, w, b}, d);
  Dict dl = d;
  dl["layout"] = "NCHW";
  expect_close(run("_npx_convolution", {x, w, b}, dl).to_vector<double>(), y.to_vector<double>());
  dl["layout"] = "None";
  expect_close(run("_npx_convolution", {x, w, b}, dl).to_vector<double>(), y.to_vector<double>());
  // kAddTo adds to what is there.
  NDArray out = arr(std::vector<double>(27, 1.0), {1, 3, 3, 3});
  std::vector<NDArray> outs{out};
  std::vector<OpReqType> add{kAddTo};
  InvokeOptions o;
  o.outputs = &outs;
  o.req = &add;
  invoke("_npx_convolution", {x, w, b}, d, o);
  auto yv = y.to_vector<double>();
  for (double& v : yv) v += 1;
  expect_close(out.to_vector<double>(), yv);
}

TEST(Convolution, BadInputs) {
  NDArray x = rand_arr({2, 4, 5, 5}), w = rand_arr({6, 4, 3, 3}), b = rand_arr({6});
  Dict d{{"kernel", "(3, 3)"}, {"num_filter", "6"}};
  auto conv = [](std::vector<NDArray> in, Dict dict) { run("_npx_convolution", in, dict); };
  // Kernel larger than the padded input (dilated too), naming the op and the sizes.
  expect_error(
      ErrorKind::kValueError,
      [&] {
        conv({rand_arr({1, 4, 2, 5}), w, b}, d);
      },
      "[convolution] the kernel size 3 exceeds the padded input size 2");
  expect_error(
      ErrorKind::kValueError,
      [&] {
        conv({x, w, b}, {{"kernel", "(3, 3)"}, {"num_filter", "6"}, {"dilate", "(3, 1)"}});
      },
      "kernel size 7 (dilated) exceeds the padded input size 5");
  expect_error(
      ErrorKind::kValueError,
      [&] {
        conv({rand_arr({1, 1, 2}), rand_arr({1, 1, 5}), rand_arr({1})},
             {{"kernel", "(5,)"}, {"num_filter", "1"}, {"pad", "(1,)"}});
      },
      "padded input size 4 (input 2 + 2 * pad 1)");
  // Channels / filters not divisible by num_group.
  expect_error(
      ErrorKind::kValueError,
      [&] {
        conv({rand_arr({1, 5, 5, 5}), w, b},
             {{"kernel", "(3, 3)"}, {"num_filter", "6"}, {"num_group", "2"}});
      },
      "not divisible by num_group 2");
  expect_error(
      ErrorKind::kValueError,
      [&] {
        conv({x, rand_arr({5, 2, 3, 3}), rand_arr({5})},
             {{"kernel", "(3, 3)"}, {"num_filter", "5"}, {"num_group", "2"}});
      },
      "num_filter 5 is not divisible");
  // Data rank.
  for (Shape s : {Shape{4, 5}, Shape{1, 4, 5, 5, 5}, Shape{}})
    expect_error(
        ErrorKind::kValueError,
        [&] {
          conv({rand_arr(s), w, b}, d);
        },
        "'data'");
  expect_error(
      ErrorKind::kValueError,
      [&] {
        conv({rand_arr({2, 4, 5}), w, b}, d);
      },
      "spatial");
  // Weight and bias shapes.
  expect_error(
      ErrorKind::kValueError,
      [&] {
        conv({x, rand_arr({6, 4, 3, 2}), b}, d);
      },
      "'weight'");
  expect_error(
      ErrorKind::kValueError,
      [&] {
        conv({x, rand_arr({6, 2, 3, 3}), b}, d);
      },
      "'weight'");
  expect_error(
      ErrorKind::kValueError,
      [&] {
        conv({x, w, rand_arr({5})}, d);
      },
      "'bias'");
  // Dtypes.
  expect_error(
      ErrorKind::kTypeError,
      [&] {
        conv({x.astype(DType::kInt32), w, b}, d);
      },
      "'data'");
  expect_error(
      ErrorKind::kTypeError,
      [&] {
        conv({x, w.astype(DType::kFloat32), b}, d);
      },
      "'weight'");
  expect_error(
      ErrorKind::kTypeError,
      [&] {
        conv({x, w, b.astype(DType::kFloat32)}, d);
      },
      "'bias'");
  // Params.
  expect_error(
      ErrorKind::kValueError,
      [&] {
        conv({x, w, b}, {{"kernel", "(3, 3, 3, 3)"}, {"num_filter", "6"}});
      },
      "'kernel'");
  expect_error(
      ErrorKind::kValueError,
      [&] {
        conv({x, w, b}, {{"kernel", "(3, 3)"}, {"num_filter", "6"}, {"stride", "(1,)"}});
      },
      "'stride'");
  expect_error(
      ErrorKind::kValueError,
      [&] {
        conv({x, w, b}, {{"kernel", "(3, 3)"}, {"num_filter", "6"}, {"stride", "(1, 0)"}});
      },
      "'stride'");
  expect_error(
      ErrorKind::kValueError,
      [&] {
        conv({x, w, b}, {{"kernel", "(3, 3)"}, {"num_filter", "6"}, {"pad", "(-1, 0)"}});
      },
      "'pad'");
  expect_error(
      ErrorKind::kValueError,
      [&] {
        conv({x, w, b}, {{"kernel", "(3, 0)"}, {"num_filter", "6"}});
      },
      "'kernel'");
  expect_error(
      ErrorKind::kValueError,
      [&] {
        conv({x, w, b}, {{"kernel", "(3, 3)"}, {"num_filter", "6"}, {"layout", "NCW"}});
      },
      "layout");
  expect_error(
      ErrorKind::kValueError,
      [&] {
        conv({x, w, b}, {{"kernel", "(3, 3)"}, {"num_filter", "6"}, {"layout", "NHWC"}});
      },
      "layout");
  expect_error(
      ErrorKind::kValueError,
      [&] {
        conv({x, w, b}, {{"kernel", "(3, 3)"}});
      },
      "num_filter");
  expect_error(
      ErrorKind::kValueError,
      [&] {
        conv({x, w, b}, {{"num_filter", "6"}});
      },
      "kernel");
  expect_error(ErrorKind::kValueError, [&] { conv({x, w}, d); });
  expect_error(ErrorKind::kValueError, [&] {
    conv({x, w, b}, {{"kernel", "(3, 3)"}, {"num_filter", "6"}, {"no_bias", "True"}});
  });
}

TEST(Convolution, GradientsMatchNumeric) {
  for (size_t k = 0; k < kConvCases.size(); ++k) {
    const ConvCase& cc = kConvCases[k];
    if (cc.data.size() > 150) continue;  // keep the central differences cheap
    SCOPED_TRACE("case " + std::to_string(k));
    std::vector<NDArray> in{rand_arr(cc.data, -1, 1, 40 + k), rand_arr(cc.weight(), -1, 1, 50 + k)};
    if (!cc.no_bias) in.push_back(rand_arr({cc.num_filter}, -1, 1, 60 + k));
    check_grads("_npx_convolution", in, cc.dict());
  }
  // float32 gradients keep their dtype; the FGradient is the backward op.
  auto g = test::symbolic_grads(
      "_npx_convolution",
      {rand_arr({1, 2, 4, 4}, -1, 1, 1, DType::kFloat32),
       rand_arr({3, 2, 2, 2}, -1, 1, 2, DType::kFloat32), rand_arr({3}, -1, 1, 3, DType::kFloat32)},
      rand_arr({1, 3, 3, 3}, -1, 1, 4, DType::kFloat32),
      {{"kernel", "(2, 2)"}, {"num_filter", "3"}});
  ASSERT_EQ(g.size(), 3u);
  for (const auto& a : g) EXPECT_EQ(a.dtype(), DType::kFloat32);
}

TEST(Convolution, BackwardHonoursAddTo) {
  NDArray x = rand_arr({1, 2, 4}), w = rand_arr({2, 2, 2}, -1, 1, 2), b = rand_arr({2});
  NDArray og = rand_arr({1, 2, 3}, -1, 1, 3);
  Dict d{{"kernel", "(2,)"}, {"num_filter", "2"}};
  auto plain = invoke("_backward_convolution", {og, x, w, b}, d);
  ASSERT_EQ(plain.size(), 3u);
  std::vector<NDArray> outs{arr(std::vector<double>(8, 1.0), {1, 2, 4}),
                            arr(std::vector<double>(8, 2.0), {2, 2, 2}), arr({3, 3}, {2})};
  std::vector<OpReqType> req{kAddTo, kAddTo, kAddTo};
  InvokeOptions o;
  o.outputs = &outs;
  o.req = &req;
  invoke("_backward_convolution", {og, x, w, b}, d, o);
  const double base[] = {1, 2, 3};
  for (int i = 0; i < 3; ++i) {
    auto want = plain[i].to_vector<double>();
    for (double& v : want) v += base[i];
    expect_close(outs[i].to_vector<double>(), want);
  }
}

// ============================== pooling ==============================
struct PoolCase {
  Shape data;
  std::vector<int64_t> kernel, stride, pad;
  std::string pool_type = "max";
  std::string convention = "valid";
  bool count_include_pad = true;
  bool global = false;

  Dict dict() const {
    Dict d{{"pool_type", pool_type}};
    if (!kernel.empty()) d["kernel"] = tuple_str(kernel);
    if (!stride.empty()) d["stride"] = tuple_str(stride);
    if (!pad.empty()) d["pad"] = tuple_str(pad);
    if (convention != "valid") d["pooling_convention"] = convention;
    if (!count_include_pad) d["count_include_pad"] = "False";
    if (global) d["global_pool"] = "True";
    return d;
  }
};

// MXNet's pooling by direct loops: windows start at o * stride - pad; a max ignores padding;
// avg divides by the window clipped to the padded input (count_include_pad) or to the input.
std::vector<double> pool_ref(const PoolCase& pc, const std::vector<double>& x, Shape* out_shape) {
  const Shape& d = pc.data;
  const bool two = d.ndim() == 4;
  const int64_t N = d[0], C = d[1], H = two ? d[2] : 1, W = d[d.ndim() - 1];
  int64_t KH = 1, KW, SH = 1, SW = 1, PH = 0, PW = 0, OH, OW;
  if (pc.global) {
    KH = H, KW = W, OH = 1, OW = 1;
  } else {
    KW = pc.kernel.back();
    if (two) KH = pc.kernel[0];
    if (!pc.stride.empty()) SW = pc.stride.back(), SH = two ? pc.stride[0] : 1;
    if (!pc.pad.empty()) PW = pc.pad.back(), PH = two ? pc.pad[0] : 0;
    auto osize = [&](int64_t in, int64_t k, int64_t s, int64_t p) {
      const double r = static_cast<double>(in + 2 * p - k) / static_cast<double>(s);
      return 1 + static_cast<int64_t>(pc.convention == "full" ? std::ceil(r) : std::floor(r));
    };
    OH = osize(H, KH, SH, PH), OW = osize(W, KW, SW, PW);
  }
  *out_shape = two ? Shape{N, C, OH, OW} : Shape{N, C, OW};
  std::vector<double> out;
  for (int64_t nc = 0; nc < N * C; ++nc)
    for (int64_t oy = 0; oy < OH; ++oy)
      for (int64_t ox = 0; ox < OW; ++ox) {
        const int64_t ys = oy * SH - PH, xs = ox * SW - PW;
        const int64_t ye = std::min(ys + KH, H + PH), xe = std::min(xs + KW, W + PW);
        double count = static_cast<double>((ye - ys) * (xe - xs));
        double m = -std::numeric_limits<double>::infinity(), s = 0, inside = 0;
        for (int64_t y = ys; y < ye; ++y)
          for (int64_t xx = xs; xx < xe; ++xx) {
            if (y < 0 || y >= H || xx < 0 || xx >= W) continue;
            const double v = x[(nc * H + y) * W + xx];
            m = std::max(m, v);
            s += v;
            inside += 1;
          }
        if (!pc.count_include_pad) count = inside;
        out.push_back(pc.pool_type == "max" ? m : pc.pool_type == "sum" ? s : s / count);
      }
  return out;
}

std::vector<PoolCase> pool_cases() {
  std::vector<PoolCase> base = {
      {{2, 3, 6, 6}, {2, 2}, {2, 2}, {}},
      {{1, 2, 5, 7}, {3, 3}, {}, {}},
      {{1, 2, 5, 7}, {3, 2}, {2, 3}, {1, 1}},
      {{2, 1, 7, 5}, {3, 3}, {2, 2}, {1, 0}, "max", "full"},
      {{1, 2, 6, 5}, {2, 3}, {3, 2}, {1, 1}, "max", "full"},
      {{2, 3, 9}, {3}, {2}, {}},
      {{1, 2, 8}, {3}, {2}, {1}, "max", "full"},
      {{2, 2, 7}, {4}, {1}, {2}},
      {{2, 3, 4, 5}, {}, {}, {}, "max", "valid", true, true},
      {{2, 3, 6}, {}, {}, {}, "max", "valid", true, true},
  };
  std::vector<PoolCase> out;
  for (const auto& pc : base)
    for (const char* t : {"max", "avg", "sum"})
      for (bool include : {true, false}) {
        if (std::string(t) != "avg" && !include) continue;
        PoolCase c = pc;
        c.pool_type = t;
        c.count_include_pad = include;
        out.push_back(c);
      }
  return out;
}

TEST(Pooling, ForwardMatchesDirectLoops) {
  const auto cases = pool_cases();
  for (size_t k = 0; k < cases.size(); ++k) {
    const PoolCase& pc = cases[k];
    SCOPED_TRACE("case " + std::to_string(k) + " " + pc.pool_type);
    NDArray x = rand_arr(pc.data, -3, 3, 100 + k);
    Shape s;
    auto want = pool_ref(pc, x.to_vector<double>(), &s);
    NDArray y = run("_npx_pooling", {x}, pc.dict());
    EXPECT_EQ(y.shape(), s);
    expect_close(y.to_vector<double>(), want, 1e-12, 1e-12);
  }
}

TEST(Pooling, DtypesDefaultsAndZeroBatch) {
  for (DType t : kFloats)
    for (const char* type : {"max", "avg", "sum"}) {
      PoolCase pc{{2, 2, 5, 5}, {3, 3}, {2, 2}, {1, 1}, type};
      NDArray x = rand_arr(pc.data, -1, 1, 3, t);
      Shape s;
      auto want = pool_ref(pc, x.to_vector<double>(), &s);
      NDArray y = run("_npx_pooling", {x}, pc.dict());
      EXPECT_EQ(y.dtype(), t);
      EXPECT_EQ(y.shape(), s);
      expect_close(y.to_vector<double>(), want, tol_for(t), tol_for(t));
    }
  // Defaults: max pooling, stride 1, no padding.
  NDArray x = arr({1, 5, 2, 4, 3, 0}, {1, 1, 6});
  EXPECT_EQ(run("_npx_pooling", {x}, {{"kernel", "(2,)"}}).to_vector<double>(),
            (std::vector<double>{5, 5, 4, 4, 3}));
  // Padding never wins a max; avg counts the padding unless told not to.
  NDArray neg = arr({-1, -2}, {1, 1, 2});
  EXPECT_EQ(run("_npx_pooling", {neg}, {{"kernel", "(2,)"}, {"pad", "(1,)"}}).to_vector<double>(),
            (std::vector<double>{-1, -1, -2}));
  EXPECT_EQ(run("_npx_pooling", {neg}, {{"kernel", "(2,)"}, {"pad", "(1,)"}, {"pool_type", "avg"}})
                .to_vector<double>(),
            (std::vector<double>{-0.5, -1.5, -1}));
  EXPECT_EQ(run("_npx_pooling", {neg},
                {{"kernel", "(2,)"},
                 {"pad", "(1,)"},
                 {"pool_type", "avg"},
                 {"count_include_pad", "False"}})
                .to_vector<double>(),
            (std::vector<double>{-1, -1.5, -2}));
  // A pad as wide as the kernel would put whole windows in the padding (max -inf, avg
  // without the pad 0 / 0): refused, as Caffe2 and ONNX Runtime refuse it.
  NDArray edge = arr({1, 2, 3, 4}, {1, 1, 4});
  for (const char* type : {"max", "avg", "sum"})
    expect_error(
        ErrorKind::kValueError,
        [&] {
          run("_npx_pooling", {edge},
              {{"kernel", "(2,)"}, {"stride", "(3,)"}, {"pad", "(2,)"}, {"pool_type", type}});
        },
        "must be smaller than the kernel size");
  // 'full' adds a last window that runs past the padded input.
  Dict full{{"kernel", "(2,)"}, {"stride", "(2,)"}, {"pooling_convention", "full"}};
  NDArray five = arr({1, 2, 3, 4, 5}, {1, 1, 5});
  EXPECT_EQ(run("_npx_pooling", {five}, full).to_vector<double>(), (std::vector<double>{2, 4, 5}));
  full["pool_type"] = "avg";
  EXPECT_EQ(run("_npx_pooling", {five}, full).to_vector<double>(),
            (std::vector<double>{1.5, 3.5, 5}));
  // Zero batch and zero channels.
  EXPECT_EQ(run("_npx_pooling", {rand_arr({0, 3, 4, 4})}, {{"kernel", "(2, 2)"}}).shape(),
            (Shape{0, 3, 3, 3}));
  EXPECT_EQ(
      run("_npx_pooling", {rand_arr({2, 0, 5})}, {{"kernel", "(2,)"}, {"stride", "(2,)"}}).shape(),
      (Shape{2, 0, 2}));
  EXPECT_EQ(run("_npx_pooling", {rand_arr({0, 2, 3, 3})}, {{"global_pool", "True"}}).shape(),
            (Shape{0, 2, 1, 1}));
  // Layout checks the rank.
  EXPECT_EQ(
      run("_npx_pooling", {rand_arr({1, 1, 4})}, {{"kernel", "(2,)"}, {"layout", "NCW"}}).shape(),
      (Shape{1, 1, 3}));
}

TEST(Pooling, BadInputs) {
  NDArray x = rand_arr({1, 2, 4, 4});
  auto pool = [](const NDArray& a, Dict dict) { run("_npx_pooling", {a}, dict); };
  expect_error(
      ErrorKind::kValueError,
      [&] {
        pool(x, {{"kernel", "(5, 2)"}});
      },
      "[pooling] the kernel size 5 exceeds the padded input size 4");
  expect_error(
      ErrorKind::kValueError,
      [&] {
        pool(rand_arr({1, 1, 3}), {{"kernel", "(6,)"}, {"pad", "(1,)"}});
      },
      "padded input size 5 (input 3 + 2 * pad 1)");
  for (Shape s : {Shape{4, 4}, Shape{1, 1, 2, 2, 2, 2}, Shape{}}) {
    expect_error(
        ErrorKind::kValueError,
        [&] {
          pool(rand_arr(s), {{"kernel", "(2, 2)"}});
        },
        "'data'");
    expect_error(
        ErrorKind::kValueError,
        [&] {
          pool(rand_arr(s), {{"global_pool", "True"}});
        },
        "'data'");
  }
  expect_error(
      ErrorKind::kValueError,
      [&] {
        pool(x, {{"kernel", "(2,)"}});
      },
      "spatial");
  expect_error(
      ErrorKind::kValueError, [&] { pool(x, {}); }, "'kernel'");
  expect_error(
      ErrorKind::kValueError,
      [&] {
        pool(x, {{"kernel", "(2, 2)"}, {"stride", "(1, 1, 1)"}});
      },
      "'stride'");
  expect_error(
      ErrorKind::kValueError,
      [&] {
        pool(x, {{"kernel", "(2, 2)"}, {"stride", "(0, 1)"}});
      },
      "'stride'");
  expect_error(
      ErrorKind::kValueError,
      [&] {
        pool(x, {{"kernel", "(2, 2)"}, {"pool_type", "lp"}});
      },
      "pool_type");
  expect_error(
      ErrorKind::kValueError,
      [&] {
        pool(x, {{"kernel", "(2, 2)"}, {"pooling_convention", "same"}});
      },
      "pooling_convention");
  expect_error(
      ErrorKind::kValueError,
      [&] {
        pool(x, {{"kernel", "(2, 2)"}, {"layout", "NCW"}});
      },
      "layout");
  expect_error(
      ErrorKind::kTypeError,
      [&] {
        pool(x.astype(DType::kInt32), {{"kernel", "(2, 2)"}});
      },
      "'data'");
  expect_error(ErrorKind::kTypeError, [&] {
    pool(NDArray::from_vector<bool>({true, false}, {1, 1, 2}), {{"kernel", "(1,)"}});
  });
}

TEST(Pooling, GradientsMatchNumeric) {
  const auto cases = pool_cases();
  for (size_t k = 0; k < cases.size(); ++k) {
    const PoolCase& pc = cases[k];
    SCOPED_TRACE("case " + std::to_string(k) + " " + pc.pool_type);
    // Distinct values (a permutation, spaced 0.1): every max is unique and stays so under
    // the central differences.
    const int64_t n = pc.data.size();
    std::vector<double> v(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) v[i] = 0.1 * static_cast<double>((i * 37 + 11) % n) - 1.0;
    ASSERT_TRUE(std::gcd(int64_t{37}, n) == 1) << "case " << k << ": not a permutation";
    check_grads("_npx_pooling", {arr(v, pc.data)}, pc.dict());
  }
}

TEST(Pooling, MaxGradientGoesToTheFirstMaximumOnTies) {
  NDArray x = arr({1, 3, 3, 0, 3, 2}, {1, 1, 6});
  NDArray og = arr({1, 10}, {1, 1, 2});
  // Windows [1, 3, 3] and [0, 3, 2] (stride 3).
  auto g = invoke("_backward_pooling",
                  {og, x, run("_npx_pooling", {x}, {{"kernel", "(3,)"}, {"stride", "(3,)"}})},
                  {{"kernel", "(3,)"}, {"stride", "(3,)"}});
  EXPECT_EQ(g[0].to_vector<double>(), (std::vector<double>{0, 1, 0, 0, 10, 0}));
  // Overlapping windows route to the same first maximum and add up.
  NDArray x2 = arr({0, 5, 5, 1}, {1, 1, 4});
  auto g2 = autograd_grads("_npx_pooling", {x2}, arr({1, 1, 1}, {1, 1, 3}), {{"kernel", "(2,)"}});
  EXPECT_EQ(g2[0].to_vector<double>(), (std::vector<double>{0, 2, 1, 0}));
  // avg / sum spread the gradient; the backward honours kAddTo.
  NDArray y = arr({1, 2, 3, 4}, {1, 1, 4});
  std::vector<NDArray> outs{arr({1, 1, 1, 1}, {1, 1, 4})};
  std::vector<OpReqType> req{kAddTo};
  InvokeOptions o;
  o.outputs = &outs;
  o.req = &req;
  Dict avg{{"kernel", "(2,)"}, {"stride", "(2,)"}, {"pool_type", "avg"}};
  invoke("_backward_pooling", {arr({2, 4}, {1, 1, 2}), y, run("_npx_pooling", {y}, avg)}, avg, o);
  EXPECT_EQ(outs[0].to_vector<double>(), (std::vector<double>{2, 2, 3, 3}));
}

TEST(Pooling, OpsAreRegisteredWithBackwards) {
  for (const char* name :
       {"_npx_convolution", "_backward_convolution", "_npx_pooling", "_backward_pooling"})
    EXPECT_NE(Op::find(name), nullptr) << name;
  const auto& backward = Op::attr<TIsBackward>("TIsBackward");
  EXPECT_TRUE(backward.get(Op::get("_backward_convolution"), false));
  EXPECT_TRUE(backward.get(Op::get("_backward_pooling"), false));
}

}  // namespace
}  // namespace ndx
