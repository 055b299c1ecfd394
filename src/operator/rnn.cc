// Recurrent layers (npx.rnn, MXNet's RNN op): vanilla RNN (relu / tanh), LSTM and GRU, stacked
// and optionally bidirectional, with their backward op (backpropagation through time).
//
// The parameters come as one flat vector in MXNet's cuDNN-compatible packing: every weight,
// layer by layer and direction by direction (i2h then h2h), then every bias in the same order.
// Gates are stacked along the rows: LSTM i, f, g, o; GRU r, z, n, with cuDNN's GRU
// n = tanh(W_in x + b_in + r * (W_hn h + b_hn)).
//
// Each layer and direction projects its whole input sequence with one GEMM and then runs one
// recurrent GEMM per step; the gate nonlinearities of a step are one fused loop (the engine's
// elementwise iterator would take a pass per operation, and the steps are sequential anyway).
// The forward leaves everything the backward needs in a hidden "reserve" output: each layer's
// output, the dropout masks between layers and the gate activations (plus the LSTM cell state
// and GRU's W_hn h + b_hn) of every step. CPU kernels only: on a GPU the op runs on host copies
// (counted by npx.gpu_host_fallbacks()).
#include <algorithm>
#include <cmath>
#include <cstring>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "kernel/blob.h"
#include "kernel/random.h"
#include "ndx/graph.h"
#include "ndx/op_util.h"
#include "operator/gemm.h"
#include "operator/kernel_util.h"
#include "operator/nn_check.h"

namespace ndx {
namespace {

using kernel::gemm;
using nn_check::check_with_forward;
using nn_check::expect_shape;
using nn_check::ForwardLayout;
using nn_check::register_backward;

struct RNNParam {
  int64_t state_size = 0;
  int64_t num_layers = 0;
  bool bidirectional = false;
  std::string mode;
  double p = 0;
  bool state_outputs = false;
  bool use_sequence_length = false;
  std::optional<int64_t> projection_size;
  std::optional<double> lstm_state_clip_min, lstm_state_clip_max;
  bool lstm_state_clip_nan = false;
  static void declare(ParamDecl<RNNParam>& d) {
    d.field("state_size", &RNNParam::state_size)
        .set_lower_bound(1)
        .describe("The size of the hidden state of each layer.");
    d.field("num_layers", &RNNParam::num_layers)
        .set_lower_bound(1)
        .describe("The number of stacked layers.");
    d.field("bidirectional", &RNNParam::bidirectional)
        .set_default(false)
        .describe("Whether each layer also runs backward in time (outputs concatenated).");
    d.field("mode", &RNNParam::mode)
        .set_enum({"rnn_relu", "rnn_tanh", "lstm", "gru"})
        .describe("The recurrent cell: 'rnn_relu', 'rnn_tanh', 'lstm' or 'gru'.");
    d.field("p", &RNNParam::p)
        .set_default(0.0)
        .set_range(0, 1)
        .describe("Dropout rate on the outputs of every layer but the last (training only).");
    d.field("state_outputs", &RNNParam::state_outputs)
        .set_default(false)
        .describe("Whether to return the final states (hy, and cy for LSTM) too.");
    d.field("use_sequence_length", &RNNParam::use_sequence_length)
        .set_default(false)
        .describe("Take a sequence_length input of valid lengths (not supported yet).");
    d.field("projection_size", &RNNParam::projection_size)
        .set_default(std::nullopt)
        .describe("LSTM projection size (not supported yet).");
    d.field("lstm_state_clip_min", &RNNParam::lstm_state_clip_min)
        .set_default(std::nullopt)
        .describe("Minimum of the LSTM cell state (not supported yet).");
    d.field("lstm_state_clip_max", &RNNParam::lstm_state_clip_max)
        .set_default(std::nullopt)
        .describe("Maximum of the LSTM cell state (not supported yet).");
    d.field("lstm_state_clip_nan", &RNNParam::lstm_state_clip_nan)
        .set_default(false)
        .describe("Whether clipping also replaces nan (ignored without a clipping range).");
  }
};

enum class Mode { kRelu, kTanh, kLSTM, kGRU };

Mode mode_of(const std::string& m) {
  if (m == "rnn_relu") return Mode::kRelu;
  if (m == "rnn_tanh") return Mode::kTanh;
  if (m == "lstm") return Mode::kLSTM;
  return Mode::kGRU;
}

bool is_lstm(const NodeAttrs& attrs) { return attrs.get<RNNParam>().mode == "lstm"; }

// The options ndx does not implement yet raise before anything is computed.
void check_supported(const NodeAttrs& attrs) {
  const auto& p = attrs.get<RNNParam>();
  const std::string& op = op_name(attrs);
  if (p.use_sequence_length)
    not_implemented("[", op,
                    "] use_sequence_length=True (variable-length sequences) is not "
                    "supported yet; pad the sequences and mask the outputs instead");
  if (p.projection_size)
    not_implemented("[", op, "] projection_size (LSTM with projection) is not supported yet");
  if (p.lstm_state_clip_min || p.lstm_state_clip_max)
    not_implemented("[", op, "] lstm_state_clip_min / lstm_state_clip_max are not supported yet");
}

// The sizes of one call and where each array lives in the flat parameter and reserve vectors.
struct Geom {
  int64_t T = 0, N = 0, I = 0, H = 0, L = 0, D = 1, G = 1;
  Mode mode = Mode::kTanh;
  bool masks = false;  // the reserve holds dropout masks (p > 0)

  Geom(const RNNParam& p, int64_t t, int64_t n, int64_t i)
      : T(t), N(n), I(i), H(p.state_size), L(p.num_layers), D(p.bidirectional ? 2 : 1) {
    mode = mode_of(p.mode);
    G = mode == Mode::kLSTM ? 4 : mode == Mode::kGRU ? 3 : 1;
    masks = p.p > 0 && L > 1;
  }
  int64_t GH() const { return G * H; }
  int64_t TN() const { return T * N; }
  int64_t layer_input(int64_t l) const { return l == 0 ? I : D * H; }
  // Weights of (l, d): i2h (GH, layer_input(l)) then h2h (GH, H).
  int64_t w_i2h(int64_t l, int64_t d) const {
    int64_t off = 0;
    for (int64_t k = 0; k < l; ++k) off += D * GH() * (layer_input(k) + H);
    return off + d * GH() * (layer_input(l) + H);
  }
  int64_t w_h2h(int64_t l, int64_t d) const { return w_i2h(l, d) + GH() * layer_input(l); }
  int64_t weights() const { return w_i2h(L, 0); }
  int64_t b_i2h(int64_t l, int64_t d) const { return weights() + (l * D + d) * 2 * GH(); }
  int64_t b_h2h(int64_t l, int64_t d) const { return b_i2h(l, d) + GH(); }
  int64_t param_size() const { return weights() + L * D * 2 * GH(); }

  // Per-step values beyond the gates: LSTM's cell state, GRU's W_hn h + b_hn.
  int64_t extra() const { return mode == Mode::kLSTM || mode == Mode::kGRU ? 1 : 0; }
  int64_t y_size() const { return TN() * D * H; }
  int64_t y_off(int64_t l) const { return l * y_size(); }
  int64_t mask_off(int64_t l) const { return L * y_size() + l * y_size(); }
  int64_t gates_off(int64_t l, int64_t d) const {
    return L * y_size() + (masks ? (L - 1) * y_size() : 0) + (l * D + d) * TN() * H * (G + extra());
  }
  int64_t extra_off(int64_t l, int64_t d) const { return gates_off(l, d) + TN() * GH(); }
  int64_t reserve_size() const { return gates_off(L, 0); }
};

Geom geom_of(const NodeAttrs& attrs, const Shape& data) {
  return Geom(attrs.get<RNNParam>(), data[0], data[1], data[2]);
}

bool rnn_shape(const NodeAttrs& attrs, ShapeVector* in, ShapeVector* out) {
  check_supported(attrs);
  const Shape& d = (*in)[0];
  if (!d.is_known()) return false;
  if (d.ndim() != 3)
    value_error("[", op_name(attrs),
                "] argument 'data' must be 3-d (T, N, C) in 'TNC' layout, got "
                "shape ",
                d.str());
  const Geom g = geom_of(attrs, d);
  // The sizes below are int64 products: reject what would overflow them (no array that large
  // could exist anyway).
  const double h = static_cast<double>(g.H), lw = static_cast<double>(g.L * g.D);
  const double params = lw * g.G * h * (std::max<double>(g.I, g.D * h) + h + 2);
  const double reserve = static_cast<double>(g.T) * g.N * lw * h * (2 + g.G + 1);
  if (params > 0x1p62 || reserve > 0x1p62)
    value_error("[", op_name(attrs), "] state_size ", g.H, " and num_layers ", g.L,
                " with data of shape ", d.str(), " make arrays too large to index");
  expect_shape(attrs, in, 1, Shape{g.param_size()}, "parameters",
               " (the flat vector of all weights and biases for these sizes)");
  const Shape st{g.L * g.D, g.N, g.H};
  expect_shape(attrs, in, 2, st, "state", " (num_layers * directions, batch, state_size)");
  if (g.mode == Mode::kLSTM)
    expect_shape(attrs, in, 3, st, "state_cell", " (num_layers * directions, batch, state_size)");
  std::vector<Shape> want{Shape{g.T, g.N, g.D * g.H}, st};
  if (g.mode == Mode::kLSTM) want.push_back(st);
  want.push_back(Shape{g.reserve_size()});
  for (size_t k = 0; k < want.size(); ++k)
    assign_shape(attrs, &(*out)[k], want[k], "output", static_cast<int>(k));
  return true;
}

bool rnn_type(const NodeAttrs& attrs, DTypeVector* in, DTypeVector* out,
              const std::vector<const char*>& names) {
  check_supported(attrs);
  const DType t = (*in)[0];
  if (t == DType::kUnknown) return false;
  if (t != DType::kFloat32 && t != DType::kFloat64)
    type_error("[", op_name(attrs), "] argument '", names[0], "' must be float32 or float64, got ",
               t);
  return nn_check::same_float_type(attrs, in, out, names);
}

// ---- the cells: one step of one layer and direction ----
template <typename T>
T sigmoid(T x) {
  return T(1) / (T(1) + std::exp(-x));
}

// tanh of a float through expf: glibc's tanhf goes through expm1f, which took a fifth of an
// LSTM's forward. Near 0, where 1 - e would cancel, the odd series is exact to float precision.
template <typename T>
T tanh_(T x) {
  if constexpr (std::is_same_v<T, float>) {
    const float ax = std::fabs(x);
    if (ax < 0.0625f) {
      const float x2 = x * x;
      return x * (1.f + x2 * (-1.f / 3 + x2 * (2.f / 15 + x2 * (-17.f / 315))));
    }
    const float e = std::exp(-2.f * ax);
    return std::copysign((1.f - e) / (1.f + e), x);
  } else {
    return std::tanh(x);
  }
}

// Pointers into the parameter vector for one (layer, direction).
template <typename T>
struct Weights {
  const T *wi, *wh, *bi, *bh;
  Weights(const Geom& g, const T* params, int64_t l, int64_t d)
      : wi(params + g.w_i2h(l, d)),
        wh(params + g.w_h2h(l, d)),
        bi(params + g.b_i2h(l, d)),
        bh(params + g.b_h2h(l, d)) {}
};

// The step of the recurrence that time index s of the loop visits (direction 1 runs backward).
int64_t time_of(const Geom& g, int64_t d, int64_t s) { return d == 0 ? s : g.T - 1 - s; }

// Gate pre-activations of step t: `gates` holds x W_i^T + biases (from the sequence-wide GEMM);
// adds h W_h^T (`hp`) and turns them into activations in place, writing h (and c) of the step.
template <typename T>
void cell_forward(const Geom& g, const Weights<T>& w, T* gates, const T* hp, T* extra,
                  const T* c_prev, T* h, T* c) {
  const int64_t H = g.H, GH = g.GH();
  for (int64_t n = 0; n < g.N; ++n) {
    T* gt = gates + n * GH;
    const T* ht = hp + n * GH;
    for (int64_t j = 0; j < H; ++j) {
      const int64_t k = n * H + j;
      switch (g.mode) {
        case Mode::kRelu:
          gt[j] = std::max(gt[j] + ht[j], T(0));
          h[k] = gt[j];
          break;
        case Mode::kTanh:
          gt[j] = tanh_(gt[j] + ht[j]);
          h[k] = gt[j];
          break;
        case Mode::kLSTM: {
          const T i = sigmoid(gt[j] + ht[j]), f = sigmoid(gt[H + j] + ht[H + j]),
                  gg = tanh_(gt[2 * H + j] + ht[2 * H + j]),
                  o = sigmoid(gt[3 * H + j] + ht[3 * H + j]);
          gt[j] = i, gt[H + j] = f, gt[2 * H + j] = gg, gt[3 * H + j] = o;
          c[k] = f * c_prev[k] + i * gg;
          extra[k] = c[k];
          h[k] = o * tanh_(c[k]);
          break;
        }
        case Mode::kGRU: {
          const T hn = ht[2 * H + j] + w.bh[2 * H + j];
          const T r = sigmoid(gt[j] + ht[j]), z = sigmoid(gt[H + j] + ht[H + j]);
          const T nn = tanh_(gt[2 * H + j] + r * hn);
          gt[j] = r, gt[H + j] = z, gt[2 * H + j] = nn;
          extra[k] = hn;
          h[k] = (T(1) - z) * nn + z * c_prev[k];  // c_prev is h_prev for GRU
          break;
        }
      }
    }
  }
}

// Gradients of step t's gate pre-activations from dh (and dc) at its output: dgx for the input
// side (x W_i^T + b_i), dgh for the recurrent side (h W_h^T + b_h); they differ only for GRU,
// whose r multiplies the recurrent part of n. Updates dc to the previous step's and returns
// in dh_direct the part of dh_prev that bypasses W_h (GRU's z * dh).
template <typename T>
void cell_backward(const Geom& g, const T* gates, const T* extra, const T* c_prev, const T* dh,
                   T* dc, T* dgx, T* dgh, T* dh_direct) {
  const int64_t H = g.H, GH = g.GH();
  for (int64_t n = 0; n < g.N; ++n) {
    const T* gt = gates + n * GH;
    T* gx = dgx + n * GH;
    T* gh = dgh + n * GH;
    for (int64_t j = 0; j < H; ++j) {
      const int64_t k = n * H + j;
      switch (g.mode) {
        case Mode::kRelu:
          gx[j] = gt[j] > T(0) ? dh[k] : T(0);  // the gate holds h itself
          break;
        case Mode::kTanh:
          gx[j] = dh[k] * (T(1) - gt[j] * gt[j]);
          break;
        case Mode::kLSTM: {
          const T i = gt[j], f = gt[H + j], gg = gt[2 * H + j], o = gt[3 * H + j];
          const T tc = tanh_(extra[k]);
          const T dct = dc[k] + dh[k] * o * (T(1) - tc * tc);
          gx[j] = dct * gg * i * (T(1) - i);
          gx[H + j] = dct * c_prev[k] * f * (T(1) - f);
          gx[2 * H + j] = dct * i * (T(1) - gg * gg);
          gx[3 * H + j] = dh[k] * tc * o * (T(1) - o);
          dc[k] = dct * f;
          break;
        }
        case Mode::kGRU: {
          const T r = gt[j], z = gt[H + j], nn = gt[2 * H + j], hn = extra[k];
          const T dn = dh[k] * (T(1) - z) * (T(1) - nn * nn);
          const T dr = dn * hn * r * (T(1) - r);
          const T dz = dh[k] * (c_prev[k] - nn) * z * (T(1) - z);
          gx[j] = gh[j] = dr;
          gx[H + j] = gh[H + j] = dz;
          gx[2 * H + j] = dn;
          gh[2 * H + j] = dn * r;
          dh_direct[k] = dh[k] * z;
          break;
        }
      }
    }
  }
}

// ---- whole layers ----
template <typename T>
struct Forward {
  const Geom& g;
  const T* params;
  T* reserve;
  std::vector<T> hproj, h, c;

  Forward(const Geom& geom, const T* p, T* r)
      : g(geom),
        params(p),
        reserve(r),
        hproj(static_cast<size_t>(g.N * g.GH())),
        h(static_cast<size_t>(g.N * g.H)),
        c(static_cast<size_t>(g.N * g.H)) {}

  // Layer l, direction d over input x (T, N, layer_input(l)) from states h0 / c0 (N, H);
  // writes its half of y (T, N, D*H) and the final states.
  void run(int64_t l, int64_t d, const T* x, const T* h0, const T* c0, T* hy, T* cy) {
    const Weights<T> w(g, params, l, d);
    const int64_t GH = g.GH(), NH = g.N * g.H, DH = g.D * g.H;
    T* gates = reserve + g.gates_off(l, d);
    T* extra = reserve + g.extra_off(l, d);
    T* y = reserve + g.y_off(l);
    // Input projection of every step at once, with the biases that add to it.
    gemm<T>(false, true, g.TN(), GH, g.layer_input(l), x, w.wi, T(0), gates);
    for (int64_t r = 0; r < g.TN(); ++r)
      for (int64_t k = 0; k < GH; ++k)
        gates[r * GH + k] += w.bi[k] + (g.mode == Mode::kGRU && k >= 2 * g.H ? T(0) : w.bh[k]);
    std::copy(h0, h0 + NH, h.begin());
    // GRU's update mixes in h_prev: it takes c's place (c is unused for GRU).
    if (g.mode == Mode::kLSTM) std::copy(c0, c0 + NH, c.begin());
    std::vector<T> h_next(static_cast<size_t>(NH)), c_next(static_cast<size_t>(NH));
    for (int64_t s = 0; s < g.T; ++s) {
      const int64_t t = time_of(g, d, s);
      gemm<T>(false, true, g.N, GH, g.H, h.data(), w.wh, T(0), hproj.data());
      const T* prev = g.mode == Mode::kGRU ? h.data() : c.data();
      cell_forward<T>(g, w, gates + t * g.N * GH, hproj.data(), extra + t * NH, prev, h_next.data(),
                      c_next.data());
      h.swap(h_next);
      if (g.mode == Mode::kLSTM) c.swap(c_next);
      for (int64_t n = 0; n < g.N; ++n)
        std::copy_n(h.data() + n * g.H, g.H, y + (t * g.N + n) * DH + d * g.H);
    }
    std::copy(h.begin(), h.end(), hy);
    if (g.mode == Mode::kLSTM) std::copy(c.begin(), c.end(), cy);
  }
};

// The input of layer l > 0: the previous layer's output, times its dropout mask when there is
// one (in `buf`).
template <typename T>
const T* layer_input(const Geom& g, const T* reserve, int64_t l, std::vector<T>* buf) {
  const T* y = reserve + g.y_off(l - 1);
  if (!g.masks) return y;
  const T* m = reserve + g.mask_off(l - 1);
  buf->resize(static_cast<size_t>(g.y_size()));
  for (int64_t i = 0; i < g.y_size(); ++i) (*buf)[i] = y[i] * m[i];
  return buf->data();
}

template <typename T>
struct Backward {
  const Geom& g;
  const T* params;
  const T* reserve;
  T* dparams;
  std::vector<T> dgx, dgh, hprev, dh, dc, dh_tmp, dh_direct;

  Backward(const Geom& geom, const T* p, const T* r, T* dp)
      : g(geom), params(p), reserve(r), dparams(dp) {
    const auto tngh = static_cast<size_t>(g.TN() * g.GH()), nh = static_cast<size_t>(g.N * g.H);
    dgx.resize(tngh);
    if (g.mode == Mode::kGRU) dgh.resize(tngh);
    hprev.resize(static_cast<size_t>(g.TN() * g.H));
    dh.resize(nh), dc.resize(nh), dh_tmp.resize(nh), dh_direct.resize(nh);
  }

  // The hidden state that step s of (l, d) started from (h0, or the previous step's output).
  const T* prev_h(int64_t l, int64_t d, int64_t s, const T* h0, std::vector<T>* buf) const {
    if (s == 0) return h0;
    const int64_t tp = time_of(g, d, s - 1), DH = g.D * g.H;
    const T* y = reserve + g.y_off(l);
    for (int64_t n = 0; n < g.N; ++n)
      std::copy_n(y + (tp * g.N + n) * DH + d * g.H, g.H, buf->data() + n * g.H);
    return buf->data();
  }

  // BPTT through layer l, direction d: dy (T, N, D*H) is the gradient at the layer's output,
  // dhy / dcy at its final states; accumulates into dx (beta 0 for the first direction) and
  // writes this (l, d)'s parameter gradients and dh0 / dc0.
  void run(int64_t l, int64_t d, const T* x, const T* dy, const T* h0, const T* c0, const T* dhy,
           const T* dcy, T* dx, T* dh0, T* dc0) {
    const Weights<T> w(g, params, l, d);
    const int64_t GH = g.GH(), NH = g.N * g.H, DH = g.D * g.H, In = g.layer_input(l);
    const T* gates = reserve + g.gates_off(l, d);
    const T* extra = reserve + g.extra_off(l, d);
    T* gh_all = g.mode == Mode::kGRU ? dgh.data() : dgx.data();
    std::copy(dhy, dhy + NH, dh.begin());
    if (g.mode == Mode::kLSTM) std::copy(dcy, dcy + NH, dc.begin());
    std::vector<T> hbuf(static_cast<size_t>(NH));
    for (int64_t s = g.T - 1; s >= 0; --s) {
      const int64_t t = time_of(g, d, s);
      for (int64_t n = 0; n < g.N; ++n)
        for (int64_t j = 0; j < g.H; ++j) dh[n * g.H + j] += dy[(t * g.N + n) * DH + d * g.H + j];
      const T* hp = prev_h(l, d, s, h0, &hbuf);
      std::copy(hp, hp + NH, hprev.begin() + t * NH);
      // LSTM's cell needs c_prev (the previous step's, or c0); GRU's needs h_prev.
      const T* prev = hp;
      if (g.mode == Mode::kLSTM) prev = s == 0 ? c0 : extra + time_of(g, d, s - 1) * NH;
      cell_backward<T>(g, gates + t * g.N * GH, extra + t * NH, prev, dh.data(), dc.data(),
                       dgx.data() + t * g.N * GH, gh_all + t * g.N * GH, dh_direct.data());
      gemm<T>(false, false, g.N, g.H, GH, gh_all + t * g.N * GH, w.wh, T(0), dh_tmp.data());
      if (g.mode == Mode::kGRU)
        for (int64_t k = 0; k < NH; ++k) dh_tmp[k] += dh_direct[k];
      dh.swap(dh_tmp);
    }
    std::copy(dh.begin(), dh.end(), dh0);
    if (g.mode == Mode::kLSTM) std::copy(dc.begin(), dc.end(), dc0);
    // Parameter gradients: sums over every step at once.
    gemm<T>(true, false, GH, In, g.TN(), dgx.data(), x, T(0), dparams + g.w_i2h(l, d));
    gemm<T>(true, false, GH, g.H, g.TN(), gh_all, hprev.data(), T(0), dparams + g.w_h2h(l, d));
    T* dbi = dparams + g.b_i2h(l, d);
    T* dbh = dparams + g.b_h2h(l, d);
    std::fill(dbi, dbi + GH, T(0));
    std::fill(dbh, dbh + GH, T(0));
    for (int64_t r = 0; r < g.TN(); ++r)
      for (int64_t k = 0; k < GH; ++k) {
        dbi[k] += dgx[r * GH + k];
        dbh[k] += gh_all[r * GH + k];
      }
    gemm<T>(false, false, g.TN(), In, GH, dgx.data(), w.wi, d == 0 ? T(0) : T(1), dx);
  }
};

// An output the kernel writes as T: the output's own memory when it is written whole, else a
// temporary that finish() adds or copies in as req says.
template <typename T>
struct OutBuf {
  TBlob blob;
  OpReqType req;
  NDArray tmp;
  T* ptr = nullptr;
  OutBuf(const TBlob& b, OpReqType r) : blob(b), req(r) {
    if ((r == kWriteTo || r == kWriteInplace) && b.is_contiguous()) {
      ptr = b.ptr<T>();
    } else {
      tmp = NDArray(b.shape, b.dtype);
      ptr = tmp.data<T>();
    }
  }
  void finish() const {
    if (tmp.defined() && req != kNullOp) kernel::write_req(tmp, kernel::as_array(blob), req);
  }
};

template <typename T>
void forward_typed(const NodeAttrs& attrs, const OpContext& ctx, const std::vector<TBlob>& in,
                   const std::vector<OpReqType>& req, const std::vector<TBlob>& out) {
  const auto& p = attrs.get<RNNParam>();
  const Geom g = geom_of(attrs, in[0].shape);
  const bool lstm = g.mode == Mode::kLSTM;
  const size_t kr = lstm ? 3 : 2;  // the reserve output
  OutBuf<T> y(out[0], req[0]), hy(out[1], req[1]), res(out[kr], req[kr]);
  std::optional<OutBuf<T>> cy;
  if (lstm) cy.emplace(out[2], req[2]);
  T* reserve = res.ptr;
  const T* data = in[0].ptr<T>();
  const T* params = in[1].ptr<T>();
  const T* h0 = in[2].ptr<T>();
  const T* c0 = lstm ? in[3].ptr<T>() : nullptr;
  const int64_t NH = g.N * g.H;
  kernel::AllowThreads unlocked(g.L * g.TN() * g.GH() >= kernel::kReleaseGil);
  if (g.masks) {
    const bool active = ctx.is_train;
    for (int64_t l = 0; l + 1 < g.L; ++l) {
      T* m = reserve + g.mask_off(l);
      if (active) {
        TBlob mb{m, Shape{g.y_size()}, Shape{1}, in[0].dtype, cpu()};
        kernel::bernoulli_scaled(mb, p.p, p.p >= 1 ? 0.0 : 1.0 / (1.0 - p.p),
                                 ctx.requested[0].next_random());
      } else {
        std::fill(m, m + g.y_size(), T(1));
      }
    }
  }
  Forward<T> f(g, params, reserve);
  std::vector<T> xbuf;
  for (int64_t l = 0; l < g.L; ++l) {
    const T* x = l == 0 ? data : layer_input(g, reserve, l, &xbuf);
    for (int64_t d = 0; d < g.D; ++d) {
      const int64_t s = (l * g.D + d) * NH;
      f.run(l, d, x, h0 + s, lstm ? c0 + s : nullptr, hy.ptr + s, lstm ? cy->ptr + s : nullptr);
    }
  }
  const T* last = reserve + g.y_off(g.L - 1);
  std::copy(last, last + g.y_size(), y.ptr);
  y.finish(), hy.finish(), res.finish();
  if (cy) cy->finish();
}

void rnn_compute(const NodeAttrs& attrs, const OpContext& ctx, const std::vector<TBlob>& in,
                 const std::vector<OpReqType>& req, const std::vector<TBlob>& out) {
  kernel::with_gemm_type(
      in[0].dtype, [&](auto tag) { forward_typed<decltype(tag)>(attrs, ctx, in, req, out); },
      op_name(attrs).c_str());
}

// (dy, dhy, [dcy], data, parameters, state, [state_cell], reserve)
//   -> (d data, d parameters, d state, [d state_cell])
template <typename T>
void backward_typed(const NodeAttrs& attrs, const std::vector<TBlob>& in,
                    const std::vector<OpReqType>& req, const std::vector<TBlob>& out) {
  const bool lstm = is_lstm(attrs);
  const size_t a = lstm ? 3 : 2;  // where the forward inputs start
  const Geom g = geom_of(attrs, in[a].shape);
  const T* dy_out = in[0].ptr<T>();
  const T* dhy = in[1].ptr<T>();
  const T* dcy = lstm ? in[2].ptr<T>() : nullptr;
  const T* data = in[a].ptr<T>();
  const T* params = in[a + 1].ptr<T>();
  const T* h0 = in[a + 2].ptr<T>();
  const T* c0 = lstm ? in[a + 3].ptr<T>() : nullptr;
  const T* reserve = in[lstm ? a + 4 : a + 3].ptr<T>();
  OutBuf<T> ddata(out[0], req[0]), dparams(out[1], req[1]), dh0(out[2], req[2]);
  std::optional<OutBuf<T>> dc0;
  if (lstm) dc0.emplace(out[3], req[3]);
  const int64_t NH = g.N * g.H;
  kernel::AllowThreads unlocked(g.L * g.TN() * g.GH() >= kernel::kReleaseGil);
  Backward<T> b(g, params, reserve, dparams.ptr);
  // dy of the layer being processed; dx of it becomes the next one's dy (through the mask).
  std::vector<T> dy(dy_out, dy_out + g.y_size()), dx, xbuf;
  for (int64_t l = g.L - 1; l >= 0; --l) {
    const T* x = l == 0 ? data : layer_input(g, reserve, l, &xbuf);
    T* dxp = ddata.ptr;
    if (l > 0) {
      dx.resize(static_cast<size_t>(g.y_size()));
      dxp = dx.data();
    }
    for (int64_t d = 0; d < g.D; ++d) {
      const int64_t s = (l * g.D + d) * NH;
      b.run(l, d, x, dy.data(), h0 + s, lstm ? c0 + s : nullptr, dhy + s, lstm ? dcy + s : nullptr,
            dxp, dh0.ptr + s, lstm ? dc0->ptr + s : nullptr);
    }
    if (l > 0) {
      const T* m = g.masks ? reserve + g.mask_off(l - 1) : nullptr;
      for (int64_t i = 0; i < g.y_size(); ++i) dy[i] = m ? dx[i] * m[i] : dx[i];
    }
  }
  ddata.finish(), dparams.finish(), dh0.finish();
  if (dc0) dc0->finish();
}

void rnn_backward(const NodeAttrs& attrs, const OpContext&, const std::vector<TBlob>& in,
                  const std::vector<OpReqType>& req, const std::vector<TBlob>& out) {
  kernel::with_gemm_type(
      in[0].dtype, [&](auto tag) { backward_typed<decltype(tag)>(attrs, in, req, out); },
      op_name(attrs).c_str());
}

uint32_t rnn_num_inputs(const NodeAttrs& attrs) {
  const auto& p = attrs.get<RNNParam>();
  return (p.mode == "lstm" ? 4 : 3) + (p.use_sequence_length ? 1 : 0);
}

// Forward outputs: out, hy, [cy], reserve (hy and cy visible with state_outputs).
uint32_t rnn_num_outputs(const NodeAttrs& attrs) { return is_lstm(attrs) ? 4 : 3; }

[[maybe_unused]] const bool registered = [] {
  OpRegistry::global()
      .register_op("_npx_rnn")
      .describe(
          "Recurrent layers over a (T, N, C) sequence: vanilla RNN (relu or tanh), LSTM or "
          "GRU, num_layers stacked, optionally bidirectional, with dropout p between layers "
          "in training. parameters is the flat vector of every weight (layer by layer, "
          "direction by direction, i2h then h2h) followed by every bias in the same order. "
          "Returns out (T, N, D * state_size) and, with state_outputs, the final state(s).")
      .set_num_inputs(rnn_num_inputs)
      .set_num_outputs(rnn_num_outputs)
      .add_argument("data", "NDArray", "Input sequence, (T, N, C).")
      .add_argument("parameters", "NDArray", "All weights and biases, flat.")
      .add_argument("state", "NDArray", "Initial hidden state, (num_layers * D, N, state_size).")
      .add_argument("state_cell", "NDArray", "Initial LSTM cell state (LSTM only), like state.")
      .set_params<RNNParam>()
      .set_attr<FListInputNames>("FListInputNames",
                                 [](const NodeAttrs& attrs) {
                                   std::vector<std::string> v{"data", "parameters", "state"};
                                   if (is_lstm(attrs)) v.push_back("state_cell");
                                   return v;
                                 })
      .set_attr<FListOutputNames>(
          "FListOutputNames",
          [](const NodeAttrs& attrs) {
            // (MXNet's names: rnn0_state_output, rnn0_statecell_output)
            if (is_lstm(attrs))
              return std::vector<std::string>{"output", "state_output", "statecell_output",
                                              "reserve"};
            return std::vector<std::string>{"output", "state_output", "reserve"};
          })
      .set_attr<FNumVisibleOutputs>("FNumVisibleOutputs",
                                    [](const NodeAttrs& attrs) -> uint32_t {
                                      if (!attrs.get<RNNParam>().state_outputs) return 1;
                                      return is_lstm(attrs) ? 3 : 2;
                                    })
      .set_attr<FResourceRequest>(
          "FResourceRequest",
          [](const NodeAttrs& attrs) {
            if (attrs.get<RNNParam>().p <= 0) return std::vector<ResourceRequest>{};
            return std::vector<ResourceRequest>{ResourceRequest{ResourceRequest::kRandom}};
          })
      .set_attr<FInferShape>("FInferShape", rnn_shape)
      .set_attr<TFillsInputs>("TFillsInputs", true)
      .set_attr<FInferType>(
          "FInferType",
          [](const NodeAttrs& attrs, DTypeVector* in, DTypeVector* out) {
            return rnn_type(attrs, in, out, {"data", "parameters", "state", "state_cell"});
          })
      .set_attr<FCompute>("FCompute<cpu>", rnn_compute)
      .set_attr<FGradient>("FGradient", [](const NodePtr& n, const std::vector<NodeEntry>& og) {
        const bool lstm = is_lstm(n->attrs);
        std::vector<NodeEntry> in{og[0], og[1]};
        if (lstm) in.push_back(og[2]);
        for (const NodeEntry& e : n->inputs) in.push_back(e);
        in.push_back(NodeEntry{n, lstm ? 3u : 2u, 0});
        return make_grad_node("_backward_rnn", n, std::move(in), true);
      });

  register_backward("_backward_rnn",
                    "Backward of rnn (backpropagation through time): (d out, d hy, [d cy], data, "
                    "parameters, state, [state_cell], reserve) -> (d data, d parameters, d "
                    "state, [d state_cell]).")
      .set_num_inputs([](const NodeAttrs& attrs) -> uint32_t { return is_lstm(attrs) ? 8 : 6; })
      .set_num_outputs([](const NodeAttrs& attrs) -> uint32_t { return is_lstm(attrs) ? 4 : 3; })
      .set_params<RNNParam>()
      .set_attr<FInferShape>(
          "FInferShape",
          [](const NodeAttrs& attrs, ShapeVector* in, ShapeVector* out) {
            const bool lstm = is_lstm(attrs);
            const ForwardLayout fwd =
                lstm ? ForwardLayout{{3, 4, 5, 6}, {{0, 0}, {1, 1}, {2, 2}, {3, 7}}, 4}
                     : ForwardLayout{{2, 3, 4}, {{0, 0}, {1, 1}, {2, 5}}, 3};
            const std::vector<const char*> names =
                lstm ? std::vector<const char*>{"ograd",      "ograd_state", "ograd_state_cell",
                                                "data",       "parameters",  "state",
                                                "state_cell", "reserve"}
                     : std::vector<const char*>{"ograd",      "ograd_state", "data",
                                                "parameters", "state",       "reserve"};
            if (!check_with_forward(attrs, in, rnn_shape, fwd, names)) return false;
            const size_t a = lstm ? 3 : 2;
            for (size_t k = 0; k < out->size(); ++k)
              assign_shape(attrs, &(*out)[k], (*in)[a + k], "output", static_cast<int>(k));
            return true;
          })
      .set_attr<FInferType>("FInferType",
                            [](const NodeAttrs& attrs, DTypeVector* in, DTypeVector* out) {
                              return rnn_type(attrs, in, out, {"ograd", "ograd_state", "data"});
                            })
      .set_attr<FCompute>("FCompute<cpu>", rnn_backward);
  return true;
}();

}  // namespace
}  // namespace ndx
