// Connectionist Temporal Classification loss (ndx.npx.ctc_loss, registered as _npx_ctc_loss),
// MXNet's semantics: data (T, N, C) holds activations (a softmax over C is applied inside),
// label (N, L) holds padded label sequences, and the optional data_lengths / label_lengths
// (N,) give each sample's lengths. The blank symbol is channel 0 (blank_label='first', label
// values 1..C-1, padding 0) or channel C-1 ('last', values 0..C-2, padding -1); without
// label_lengths a sequence ends at its first padding value.
//
// The loss is -log p(label | data), computed with the forward (alpha) recursion of Graves et
// al. (2006) in log space. Its gradient (softmax(data) - posterior of each symbol at each time
// step, times the output gradient) comes from a backward op that runs the alpha and beta
// recursions again, so the forward op keeps no hidden state. Everything is computed in double.
// Samples run in parallel on the kernel layer's thread pool. There is no GPU kernel: GPU arrays
// run this CPU kernel on host copies (counted in npx.gpu_host_fallbacks()).
#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "kernel/blob.h"
#include "kernel/parallel.h"
#include "ndx/graph.h"
#include "ndx/op_util.h"
#include "operator/kernel_util.h"
#include "operator/nn_check.h"

namespace ndx {
namespace {

using nn_check::check_with_forward;
using nn_check::ForwardLayout;
using nn_check::register_backward;
using nn_check::require_float;
using nn_check::require_no_bool;
using nn_check::require_same_type;

constexpr double kNegInf = -std::numeric_limits<double>::infinity();

struct CTCLossParam {
  bool use_data_lengths = false;
  bool use_label_lengths = false;
  std::string blank_label = "first";
  static void declare(ParamDecl<CTCLossParam>& d) {
    d.field("use_data_lengths", &CTCLossParam::use_data_lengths)
        .set_default(false)
        .describe(
            "Whether data_lengths gives each sample's length; else every sample has the "
            "full sequence length.");
    d.field("use_label_lengths", &CTCLossParam::use_label_lengths)
        .set_default(false)
        .describe(
            "Whether label_lengths gives each label sequence's length; else a sequence "
            "ends at its first padding value (0 for blank_label 'first', -1 for 'last').");
    d.field("blank_label", &CTCLossParam::blank_label)
        .set_enum({"first", "last"})
        .set_default(std::string("first"))
        .describe(
            "The channel reserved for the blank: 'first' (0; labels 1..C-1) or 'last' "
            "(C-1; labels 0..C-2).");
  }
};

const CTCLossParam& param(const NodeAttrs& attrs) { return attrs.get<CTCLossParam>(); }

uint32_t ctc_num_inputs(const NodeAttrs& attrs) {
  const CTCLossParam& p = param(attrs);
  return 2u + p.use_data_lengths + p.use_label_lengths;
}

std::vector<std::string> ctc_input_names(const NodeAttrs& attrs) {
  std::vector<std::string> v{"data", "label"};
  if (param(attrs).use_data_lengths) v.emplace_back("data_lengths");
  if (param(attrs).use_label_lengths) v.emplace_back("label_lengths");
  return v;
}

// Positions of the optional inputs among the forward op's inputs (-1: not passed).
int data_lengths_index(const NodeAttrs& attrs) { return param(attrs).use_data_lengths ? 2 : -1; }
int label_lengths_index(const NodeAttrs& attrs) {
  const CTCLossParam& p = param(attrs);
  return p.use_label_lengths ? 2 + p.use_data_lengths : -1;
}

void expect_ndim(const NodeAttrs& attrs, const Shape& s, int ndim, const char* arg,
                 const char* what) {
  if (s.ndim() != ndim)
    value_error("[", op_name(attrs), "] argument '", arg, "' must be ", what, " (rank ", ndim,
                "), got shape ", s.str());
}

bool ctc_shape(const NodeAttrs& attrs, ShapeVector* in, ShapeVector* out) {
  const Shape& d = (*in)[0];
  const Shape& l = (*in)[1];
  if (!d.is_known() || !l.is_known()) return false;
  expect_ndim(attrs, d, 3, "data", "(sequence_length, batch_size, alphabet_size)");
  expect_ndim(attrs, l, 2, "label", "(batch_size, label_sequence_length)");
  if (l[0] != d[1])
    value_error("[", op_name(attrs), "] argument 'label' has batch size ", l[0], " (shape ",
                l.str(), "), expected ", d[1], ", the batch size of 'data' (shape ", d.str(), ")");
  if (l[1] > d[0])
    value_error("[", op_name(attrs), "] the label sequences (length ", l[1],
                ") cannot be longer than the data sequences (length ", d[0], ")");
  if (d[2] < 1)
    value_error("[", op_name(attrs),
                "] argument 'data' needs at least one channel (the blank), "
                "got shape ",
                d.str());
  const int dl = data_lengths_index(attrs), ll = label_lengths_index(attrs);
  if (dl >= 0)
    nn_check::expect_shape(attrs, in, dl, Shape{d[1]}, "data_lengths", " (one per sample)");
  if (ll >= 0)
    nn_check::expect_shape(attrs, in, ll, Shape{d[1]}, "label_lengths", " (one per sample)");
  assign_shape(attrs, &(*out)[0], Shape{d[1]}, "output", 0);
  return true;
}

// The dtypes of the forward op's inputs from `first` on: data float, the rest numeric.
bool check_input_types(const NodeAttrs& attrs, const DTypeVector& in, size_t first) {
  for (size_t i = first; i < in.size(); ++i)
    if (in[i] == DType::kUnknown) return false;
  require_float(attrs, in[first], "data");
  const std::vector<std::string> names = ctc_input_names(attrs);
  for (size_t i = first + 1; i < in.size(); ++i)
    require_no_bool(attrs, in[i], names[i - first].c_str());
  return true;
}

bool ctc_type(const NodeAttrs& attrs, DTypeVector* in, DTypeVector* out) {
  if (!check_input_types(attrs, *in, 0)) return false;
  (*out)[0] = (*in)[0];
  return true;
}

// ---- the problem as the kernel sees it: lengths and labels read and validated ----
struct CtcProblem {
  int64_t T = 0, N = 0, C = 0, L = 0;
  int64_t blank = 0;
  std::vector<int64_t> data_len, label_len;
  std::vector<int64_t> labels;  // (N, L), only the first label_len[b] of row b are used
};

// An index array of any numeric dtype as int64 (floats truncate; nan reads as 0).
std::vector<int64_t> read_ints(const TBlob& b) {
  std::vector<int64_t> v(static_cast<size_t>(b.size()));
  NDX_DTYPE_SWITCH(b.dtype, T, {
    const T* p = b.ptr<T>();
    for (size_t i = 0; i < v.size(); ++i) {
      if constexpr (std::is_floating_point_v<compute_t<T>>)
        v[i] = kernel::from_double<int64_t>(std::trunc(static_cast<double>(p[i])));
      else
        v[i] = static_cast<int64_t>(p[i]);
    }
  });
  return v;
}

// Labels plus the blanks between and around them need this many time steps at least: a
// symbol repeated next to itself must be separated by a blank.
int64_t min_steps(const int64_t* lab, int64_t len) {
  int64_t repeats = 0;
  for (int64_t i = 1; i < len; ++i) repeats += lab[i] == lab[i - 1];
  return len + repeats;
}

void check_sample(const NodeAttrs& attrs, const CtcProblem& p, int64_t b) {
  const int64_t* lab = p.labels.data() + b * p.L;
  const int64_t lo = p.blank == 0 ? 1 : 0, hi = p.blank == 0 ? p.C - 1 : p.C - 2;
  for (int64_t i = 0; i < p.label_len[b]; ++i)
    if (lab[i] < lo || lab[i] > hi)
      index_error("[", op_name(attrs), "] label[", b, ", ", i, "] = ", lab[i],
                  " is outside the alphabet: with blank_label='", param(attrs).blank_label,
                  "' and ", p.C, " channels, labels must lie in [", lo, ", ", hi, "]");
  const int64_t need = min_steps(lab, p.label_len[b]);
  if (need > p.data_len[b])
    value_error("[", op_name(attrs), "] sample ", b, ": its label sequence (length ",
                p.label_len[b], ", needing ", need,
                " time steps with blanks between repeated labels) is longer than its data "
                "sequence (length ",
                p.data_len[b], ")");
}

// Reads the inputs of the forward op (starting at in[first]) and checks every sample before
// any arithmetic runs.
CtcProblem prepare(const NodeAttrs& attrs, const std::vector<TBlob>& in, size_t first) {
  const TBlob& data = in[first];
  CtcProblem p;
  p.T = data.shape[0];
  p.N = data.shape[1];
  p.C = data.shape[2];
  p.L = in[first + 1].shape[1];
  p.blank = param(attrs).blank_label == "first" ? 0 : p.C - 1;
  p.labels = read_ints(in[first + 1]);
  const int dl = data_lengths_index(attrs), ll = label_lengths_index(attrs);
  if (dl >= 0) {
    p.data_len = read_ints(in[first + dl]);
    for (int64_t b = 0; b < p.N; ++b)
      if (p.data_len[b] < 0 || p.data_len[b] > p.T)
        value_error("[", op_name(attrs), "] data_lengths[", b, "] = ", p.data_len[b],
                    " is outside [0, ", p.T, "] (the data's sequence length)");
  } else {
    p.data_len.assign(p.N, p.T);
  }
  if (ll >= 0) {
    p.label_len = read_ints(in[first + ll]);
    for (int64_t b = 0; b < p.N; ++b)
      if (p.label_len[b] < 0 || p.label_len[b] > p.L)
        value_error("[", op_name(attrs), "] label_lengths[", b, "] = ", p.label_len[b],
                    " is outside [0, ", p.L, "] (the label's sequence length)");
  } else {
    const int64_t pad = p.blank == 0 ? 0 : -1;
    p.label_len.assign(p.N, p.L);
    for (int64_t b = 0; b < p.N; ++b) {
      const int64_t* row = p.labels.data() + b * p.L;
      p.label_len[b] = std::find(row, row + p.L, pad) - row;
    }
  }
  for (int64_t b = 0; b < p.N; ++b) check_sample(attrs, p, b);
  return p;
}

// ---- one sample ----
double log_add(double a, double b) {
  if (a == kNegInf) return b;
  if (b == kNegInf) return a;
  const double m = std::max(a, b);
  return m + std::log1p(std::exp(-std::abs(a - b)));
}

// Scratch of one thread: log-softmax of the sample's activations and the alphas.
struct Scratch {
  std::vector<double> lp, alpha, beta, next, post;
  std::vector<int64_t> ext;
};

// lp[t, c] = log softmax(data[t, b, :])[c] for t < Tb.
template <typename T>
void log_softmax_sample(const CtcProblem& p, const T* x, int64_t b, int64_t Tb, Scratch& s) {
  s.lp.resize(static_cast<size_t>(Tb * p.C));
  for (int64_t t = 0; t < Tb; ++t) {
    const T* row = x + (t * p.N + b) * p.C;
    double* out = s.lp.data() + t * p.C;
    double m = kNegInf;
    for (int64_t c = 0; c < p.C; ++c) m = std::max(m, static_cast<double>(row[c]));
    double sum = 0;
    for (int64_t c = 0; c < p.C; ++c) sum += std::exp(static_cast<double>(row[c]) - m);
    const double lse = m + std::log(sum);
    for (int64_t c = 0; c < p.C; ++c) out[c] = static_cast<double>(row[c]) - lse;
  }
}

// The label with blanks around and between its symbols: S = 2 * len + 1 states.
void extend_label(const CtcProblem& p, int64_t b, Scratch& s) {
  const int64_t len = p.label_len[b];
  s.ext.assign(static_cast<size_t>(2 * len + 1), p.blank);
  for (int64_t i = 0; i < len; ++i) s.ext[2 * i + 1] = p.labels[b * p.L + i];
}

// A path may skip the blank before state j when state j's symbol differs from state j - 2's.
bool can_skip(const std::vector<int64_t>& ext, int64_t j, int64_t blank) {
  return j >= 2 && ext[j] != blank && ext[j] != ext[j - 2];
}

// Fills alpha (Tb x S, log space) and returns log p(label | data).
double forward_alphas(const CtcProblem& p, int64_t Tb, Scratch& s) {
  const int64_t S = static_cast<int64_t>(s.ext.size());
  if (Tb == 0) return S == 1 ? 0.0 : kNegInf;  // only the empty label fits no time step
  s.alpha.assign(static_cast<size_t>(Tb * S), kNegInf);
  s.alpha[0] = s.lp[s.ext[0]];
  if (S > 1) s.alpha[1] = s.lp[s.ext[1]];
  for (int64_t t = 1; t < Tb; ++t) {
    const double* prev = s.alpha.data() + (t - 1) * S;
    double* cur = s.alpha.data() + t * S;
    const double* lp = s.lp.data() + t * p.C;
    // States the start cannot reach yet stay -inf: every state is swept, without bounds.
    for (int64_t j = 0; j < S; ++j) {
      double a = prev[j];
      if (j >= 1) a = log_add(a, prev[j - 1]);
      if (can_skip(s.ext, j, p.blank)) a = log_add(a, prev[j - 2]);
      cur[j] = a == kNegInf ? kNegInf : a + lp[s.ext[j]];
    }
  }
  const double* last = s.alpha.data() + (Tb - 1) * S;
  return S > 1 ? log_add(last[S - 1], last[S - 2]) : last[0];
}

// d loss / d data[t, b, :] * scale for t < Tb, written through `store(t, c, value)`: the
// softmax minus the posterior of symbol c at time t, from the beta recursion run backwards.
template <typename Store>
void gradient(const CtcProblem& p, int64_t Tb, double loglik, double scale, Scratch& s,
              Store&& store) {
  const int64_t S = static_cast<int64_t>(s.ext.size());
  s.beta.assign(static_cast<size_t>(S), kNegInf);
  s.next.assign(static_cast<size_t>(S), kNegInf);
  s.post.resize(static_cast<size_t>(p.C));
  for (int64_t t = Tb - 1; t >= 0; --t) {
    const double* lp = s.lp.data() + t * p.C;
    // beta[j]: log probability of the rest of the label from state j at time t (lp included).
    for (int64_t j = 0; j < S; ++j) {
      double v;
      if (t == Tb - 1) {
        v = j >= S - 2 ? 0.0 : kNegInf;
      } else {
        v = s.next[j];
        if (j + 1 < S) v = log_add(v, s.next[j + 1]);
        if (j + 2 < S && can_skip(s.ext, j + 2, p.blank)) v = log_add(v, s.next[j + 2]);
      }
      s.beta[j] = v == kNegInf ? kNegInf : v + lp[s.ext[j]];
    }
    std::fill(s.post.begin(), s.post.end(), kNegInf);
    const double* alpha = s.alpha.data() + t * S;
    for (int64_t j = 0; j < S; ++j) {
      if (alpha[j] == kNegInf || s.beta[j] == kNegInf) continue;
      const int64_t c = s.ext[j];
      s.post[c] = log_add(s.post[c], alpha[j] + s.beta[j] - lp[c]);
    }
    for (int64_t c = 0; c < p.C; ++c)
      store(t, c, scale * (std::exp(lp[c]) - std::exp(s.post[c] - loglik)));
    std::swap(s.beta, s.next);
  }
}

// Samples per task: about kGrain elements of work each.
int64_t sample_grain(const CtcProblem& p) {
  const int64_t work = std::max<int64_t>(1, p.T * (p.C + 2 * p.L + 1));
  return std::max<int64_t>(1, kernel::kGrain / work);
}

void ctc_forward(const NodeAttrs& attrs, const OpContext&, const std::vector<TBlob>& in,
                 const std::vector<OpReqType>& req, const std::vector<TBlob>& out) {
  if (req[0] == kNullOp) return;
  const CtcProblem p = prepare(attrs, in, 0);
  NDX_FLOAT_SWITCH(in[0].dtype, T, {
    const T* x = in[0].ptr<T>();
    T* y = out[0].ptr<T>();
    kernel::parallel_for(p.N, sample_grain(p), [&](int64_t begin, int64_t end) {
      Scratch s;
      for (int64_t b = begin; b < end; ++b) {
        const int64_t Tb = p.data_len[b];
        log_softmax_sample(p, x, b, Tb, s);
        extend_label(p, b, s);
        kernel::store(y + b, req[0], static_cast<compute_t<T>>(-forward_alphas(p, Tb, s)));
      }
    });
  });
}

// (ograd, data, label[, data_lengths][, label_lengths]) -> grad data.
void ctc_backward(const NodeAttrs& attrs, const OpContext&, const std::vector<TBlob>& in,
                  const std::vector<OpReqType>& req, const std::vector<TBlob>& out) {
  if (req[0] == kNullOp) return;
  const CtcProblem p = prepare(attrs, in, 1);
  NDX_FLOAT_SWITCH(in[1].dtype, T, {
    using C = compute_t<T>;
    const T* g = in[0].ptr<T>();
    const T* x = in[1].ptr<T>();
    T* dx = out[0].ptr<T>();
    const OpReqType r = req[0];
    kernel::parallel_for(p.N, sample_grain(p), [&](int64_t begin, int64_t end) {
      Scratch s;
      for (int64_t b = begin; b < end; ++b) {
        const int64_t Tb = p.data_len[b];
        // Time steps past the sample's length do not touch the loss: their gradient is 0.
        if (r != kAddTo)
          for (int64_t t = Tb; t < p.T; ++t)
            std::fill_n(dx + (t * p.N + b) * p.C, p.C, static_cast<T>(C(0)));
        if (Tb == 0) continue;
        log_softmax_sample(p, x, b, Tb, s);
        extend_label(p, b, s);
        const double loglik = forward_alphas(p, Tb, s);
        const double scale = static_cast<double>(g[b]);
        gradient(p, Tb, loglik, scale, s, [&](int64_t t, int64_t c, double v) {
          kernel::store(dx + (t * p.N + b) * p.C + c, r, static_cast<C>(v));
        });
      }
    });
  });
}

// ---- backward op's inference: the forward's checks on its inputs, ograd of shape (N,) ----
ForwardLayout backward_layout(const NodeAttrs& attrs) {
  ForwardLayout f;
  const uint32_t n = ctc_num_inputs(attrs);
  for (uint32_t j = 0; j < n; ++j) f.inputs.push_back(static_cast<int>(j) + 1);
  f.outputs = {{0, 0}};
  return f;
}

std::vector<std::string> backward_input_names(const NodeAttrs& attrs) {
  std::vector<std::string> v{"ograd"};
  for (std::string& n : ctc_input_names(attrs)) v.push_back(std::move(n));
  return v;
}

bool ctc_backward_shape(const NodeAttrs& attrs, ShapeVector* in, ShapeVector* out) {
  const std::vector<std::string> names = backward_input_names(attrs);
  std::vector<const char*> cnames;
  for (const std::string& n : names) cnames.push_back(n.c_str());
  if (!check_with_forward(attrs, in, ctc_shape, backward_layout(attrs), cnames)) return false;
  assign_shape(attrs, &(*out)[0], (*in)[1], "output", 0);
  return true;
}

bool ctc_backward_type(const NodeAttrs& attrs, DTypeVector* in, DTypeVector* out) {
  if ((*in)[0] == DType::kUnknown || !check_input_types(attrs, *in, 1)) return false;
  require_same_type(attrs, (*in)[0], (*in)[1], "ograd", "data");
  (*out)[0] = (*in)[1];
  return true;
}

[[maybe_unused]] const bool registered = [] {
  OpRegistry::global()
      .register_op("_npx_ctc_loss")
      .describe(
          "Connectionist Temporal Classification loss, -log p(label | data) per sample: data "
          "(sequence_length, batch_size, alphabet_size) holds activations (softmax is applied "
          "inside), label (batch_size, label_sequence_length) padded label sequences; the "
          "output has shape (batch_size,).")
      .set_num_inputs(ctc_num_inputs)
      .add_argument("data", "NDArray", "Activations, (sequence_length, batch_size, alphabet_size).")
      .add_argument("label", "NDArray", "Padded labels, (batch_size, label_sequence_length).")
      .add_argument("data_lengths", "NDArray",
                    "Each sample's data length, (batch_size,); only with use_data_lengths.")
      .add_argument("label_lengths", "NDArray",
                    "Each sample's label length, (batch_size,); only with use_label_lengths.")
      .set_params<CTCLossParam>()
      .set_attr<FListInputNames>("FListInputNames", ctc_input_names)
      .set_attr<FInferShape>("FInferShape", ctc_shape)
      .set_attr<FInferType>("FInferType", ctc_type)
      .set_attr<FCompute>("FCompute<cpu>", ctc_forward)
      .set_attr<FGradient>("FGradient", [](const NodePtr& n, const std::vector<NodeEntry>& og) {
        std::vector<NodeEntry> ins{og[0]};
        ins.insert(ins.end(), n->inputs.begin(), n->inputs.end());
        std::vector<NodeEntry> grads{make_grad_node("_backward_ctc_loss", n, ins, true)[0]};
        // Labels and lengths are indices: no gradient flows to them.
        for (size_t i = 1; i < n->inputs.size(); ++i)
          grads.push_back(make_node("_np_zeros_like", {n->inputs[i]}));
        return grads;
      });
  register_backward("_backward_ctc_loss",
                    "Backward of ctc_loss: (ograd, data, label[, data_lengths][, "
                    "label_lengths]) -> grad data, (softmax(data) - symbol posteriors) * ograd.")
      .set_num_inputs([](const NodeAttrs& attrs) { return ctc_num_inputs(attrs) + 1; })
      .set_params<CTCLossParam>()
      .set_attr<FListInputNames>("FListInputNames", backward_input_names)
      .set_attr<FInferShape>("FInferShape", ctc_backward_shape)
      .set_attr<FInferType>("FInferType", ctc_backward_type)
      .set_attr<FCompute>("FCompute<cpu>", ctc_backward);
  return true;
}();

}  // namespace
}  // namespace ndx
