// The random ops behind np.random / npx.random (registered as _npi_<distribution>, plus
// _npi_permutation): every distribution is a functor of operator/math/random-inl.h drawn by
// kernel::sample from the counter-based Philox stream, so the same seed gives the same numbers
// on any number of threads (and, with the same functors, on the GPU).
//
// A distribution's parameters are either scalars (params) or arrays (inputs, num_args of them,
// broadcast to the output shape). The stream's seed is the param `seed` when given (a
// Generator's own stream) or the next value of the global generator (np.random.seed).
#include <array>
#include <cmath>
#include <limits>
#include <optional>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>

#include "kernel/blob.h"
#include "kernel/cast.h"
#include "kernel/host_fallback.h"
#include "kernel/random-inl.h"
#include "ndx/graph.h"
#include "ndx/op_util.h"
#include "operator/math/random-inl.h"

namespace ndx {
namespace {

// kInteger: randint's integers in [low, high); kCount: counts (int64 by default, any integer
// dtype) whose parameters are not bounds.
enum class OutKind { kFloat, kInteger, kCount, kAny };

struct DistSpec {
  const char* name;
  const char* doc;
  int arity;
  std::array<const char*, 2> args;
  std::array<std::optional<double>, 2> defaults;
  std::array<const char*, 2> arg_docs;
  OutKind kind;
};

using std::nullopt;

// Index D of this table is the template argument of RandomParam<D>.
const DistSpec kDists[] = {
    {"uniform",
     "Samples from the uniform distribution on [low, high).",
     2,
     {"low", "high"},
     {0.0, 1.0},
     {"Lower bound.", "Upper bound (excluded)."},
     OutKind::kFloat},
    {"normal",
     "Samples from the normal distribution.",
     2,
     {"loc", "scale"},
     {0.0, 1.0},
     {"Mean.", "Standard deviation (>= 0)."},
     OutKind::kFloat},
    {"lognormal",
     "Samples exp(N(mean, sigma)).",
     2,
     {"mean", "sigma"},
     {0.0, 1.0},
     {"Mean of the underlying normal.", "Standard deviation of the underlying normal."},
     OutKind::kFloat},
    {"gamma",
     "Samples from the gamma distribution.",
     2,
     {"shape", "scale"},
     {nullopt, 1.0},
     {"Shape k (>= 0).", "Scale theta (>= 0)."},
     OutKind::kFloat},
    {"beta",
     "Samples from the beta distribution.",
     2,
     {"a", "b"},
     {nullopt, nullopt},
     {"Alpha (> 0).", "Beta (> 0)."},
     OutKind::kFloat},
    {"chisquare",
     "Samples from the chi-square distribution.",
     1,
     {"df", nullptr},
     {nullopt, nullopt},
     {"Degrees of freedom (> 0).", nullptr},
     OutKind::kFloat},
    {"f",
     "Samples from the F distribution.",
     2,
     {"dfnum", "dfden"},
     {nullopt, nullopt},
     {"Numerator degrees of freedom (> 0).", "Denominator degrees of freedom (> 0)."},
     OutKind::kFloat},
    {"exponential",
     "Samples from the exponential distribution.",
     1,
     {"scale", nullptr},
     {1.0, nullopt},
     {"Scale 1 / lambda (>= 0).", nullptr},
     OutKind::kFloat},
    {"gumbel",
     "Samples from the Gumbel distribution.",
     2,
     {"loc", "scale"},
     {0.0, 1.0},
     {"Location of the mode.", "Scale (>= 0)."},
     OutKind::kFloat},
    {"laplace",
     "Samples from the Laplace distribution.",
     2,
     {"loc", "scale"},
     {0.0, 1.0},
     {"Location of the peak.", "Scale (>= 0)."},
     OutKind::kFloat},
    {"logistic",
     "Samples from the logistic distribution.",
     2,
     {"loc", "scale"},
     {0.0, 1.0},
     {"Mean.", "Scale (>= 0)."},
     OutKind::kFloat},
    {"pareto",
     "Samples from the Pareto II (Lomax) distribution, as numpy.random.pareto.",
     1,
     {"a", nullptr},
     {nullopt, nullopt},
     {"Shape (> 0).", nullptr},
     OutKind::kFloat},
    {"powerd",
     "Samples from the power distribution with exponent a - 1 on [0, 1].",
     1,
     {"a", nullptr},
     {nullopt, nullopt},
     {"Exponent parameter (> 0).", nullptr},
     OutKind::kFloat},
    {"rayleigh",
     "Samples from the Rayleigh distribution.",
     1,
     {"scale", nullptr},
     {1.0, nullopt},
     {"Scale (>= 0).", nullptr},
     OutKind::kFloat},
    {"weibull",
     "Samples from the Weibull distribution with scale 1.",
     1,
     {"a", nullptr},
     {nullopt, nullopt},
     {"Shape (>= 0).", nullptr},
     OutKind::kFloat},
    {"bernoulli",
     "Samples 1 with probability prob, else 0.",
     1,
     {"prob", nullptr},
     {nullopt, nullopt},
     {"Probability of 1, in [0, 1].", nullptr},
     OutKind::kAny},
    {"randint",
     "Samples integers uniformly from [low, high).",
     2,
     {"low", "high"},
     {nullopt, nullopt},
     {"Lowest value.", "One above the highest value."},
     OutKind::kInteger},
    {"poisson",
     "Samples from the Poisson distribution.",
     1,
     {"lam", nullptr},
     {1.0, nullopt},
     {"Expected count (>= 0).", nullptr},
     OutKind::kCount},
    {"binomial",
     "Samples successes of n trials of probability p (n truncated to an integer).",
     2,
     {"n", "p"},
     {nullopt, nullopt},
     {"Trials (>= 0).", "Success probability, in [0, 1]."},
     OutKind::kCount},
    {"geometric",
     "Samples the trial of the first success (1, 2, ...).",
     1,
     {"p", nullptr},
     {nullopt, nullopt},
     {"Success probability, in (0, 1].", nullptr},
     OutKind::kCount},
    {"negative_binomial",
     "Samples the failures before the n-th success.",
     2,
     {"n", "p"},
     {nullopt, nullopt},
     {"Successes (> 0).", "Success probability, in (0, 1]."},
     OutKind::kCount},
    {"wald",
     "Samples from the Wald (inverse Gaussian) distribution.",
     2,
     {"mean", "scale"},
     {nullopt, nullopt},
     {"Mean (> 0).", "Scale (> 0)."},
     OutKind::kFloat},
    {"vonmises",
     "Samples angles in [-pi, pi) from the von Mises distribution.",
     2,
     {"mu", "kappa"},
     {nullopt, nullopt},
     {"Mode.", "Concentration (>= 0)."},
     OutKind::kFloat},
    {"zipf",
     "Samples from the Zipf distribution.",
     1,
     {"a", nullptr},
     {nullopt, nullopt},
     {"Exponent (> 1).", nullptr},
     OutKind::kCount},
    {"logseries",
     "Samples from the logarithmic series distribution.",
     1,
     {"p", nullptr},
     {nullopt, nullopt},
     {"Shape, in [0, 1).", nullptr},
     OutKind::kCount},
    {"noncentral_chisquare",
     "Samples from the non-central chi-square distribution.",
     2,
     {"df", "nonc"},
     {nullopt, nullopt},
     {"Degrees of freedom (> 0).", "Non-centrality (>= 0)."},
     OutKind::kFloat},
};

template <size_t D>
struct RandomParam {
  std::optional<double> a0, a1;
  int64_t num_args = 0;
  std::optional<Shape> size;
  std::optional<DType> dtype;
  std::optional<int64_t> seed;

  static void declare(ParamDecl<RandomParam>& d) {
    const DistSpec& s = kDists[D];
    d.field(s.args[0], &RandomParam::a0).set_default(s.defaults[0]).describe(s.arg_docs[0]);
    if (s.arity > 1)
      d.field(s.args[1], &RandomParam::a1).set_default(s.defaults[1]).describe(s.arg_docs[1]);
    d.field("num_args", &RandomParam::num_args)
        .set_default(0)
        .set_range(0, 2)
        .describe("0: the parameters are the scalars above; else the arrays given as inputs.");
    d.field("size", &RandomParam::size)
        .set_default(nullopt)
        .describe("Output shape; None: the parameters' broadcast shape.");
    d.field("dtype", &RandomParam::dtype)
        .set_default(nullopt)
        .describe("Output dtype; None: the default float dtype (int64 for randint).");
    d.field("seed", &RandomParam::seed)
        .set_default(nullopt)
        .describe("Seed of the stream; None: the next seed of the global generator.");
  }
  std::optional<double> scalar(int k) const { return k == 0 ? a0 : a1; }
};

template <size_t D>
const RandomParam<D>& param_of(const NodeAttrs& attrs) {
  const auto& p = attrs.get<RandomParam<D>>();
  const int arity = kDists[D].arity;
  if (p.num_args != 0 && p.num_args != arity)
    value_error("[", op_name(attrs), "] num_args must be 0 or ", arity, "; got ", p.num_args);
  if (p.num_args == 0)
    for (int k = 0; k < arity; ++k)
      if (!p.scalar(k))
        type_error("[", op_name(attrs), "] missing required argument '", kDists[D].args[k], "'");
  return p;
}

template <class Dist>
constexpr bool takes_nan() {
  if constexpr (requires { Dist::kTakesNan; })
    return Dist::kTakesNan;
  else
    return false;
}

template <size_t D, class Dist>
void check_values(const NodeAttrs& attrs, double a, double b) {
  if (!takes_nan<Dist>() && (std::isnan(a) || (kDists[D].arity > 1 && std::isnan(b))))
    value_error("[", op_name(attrs), "] parameters must not be NaN");
  if (const char* why = Dist::check(a, b)) {
    if (kDists[D].arity == 1)
      value_error("[", op_name(attrs), "] ", why, " (", kDists[D].args[0], "=", a, ")");
    value_error("[", op_name(attrs), "] ", why, " (", kDists[D].args[0], "=", a, ", ",
                kDists[D].args[1], "=", b, ")");
  }
}

template <size_t D, class Dist>
bool infer_shape(const NodeAttrs& attrs, ShapeVector* in, ShapeVector* out) {
  const auto& p = param_of<D>(attrs);
  const std::string& name = op_name(attrs);
  if (p.num_args == 0) check_values<D, Dist>(attrs, *p.scalar(0), p.a1.value_or(0.0));
  if (p.size) {
    for (int64_t d : *p.size)
      if (d < 0)
        value_error("[", name, "] negative dimensions are not allowed; got size ", p.size->str());
    for (const Shape& s : *in)
      if (broadcast_shapes(s, *p.size, name.c_str()) != *p.size)
        value_error("[", name, "] a parameter of shape ", s.str(), " does not broadcast to size ",
                    p.size->str());
    (*out)[0] = *p.size;
    return true;
  }
  Shape shape{};
  for (const Shape& s : *in) shape = broadcast_shapes(shape, s, name.c_str());
  (*out)[0] = shape;
  return true;
}

template <size_t D>
bool infer_type(const NodeAttrs& attrs, DTypeVector* in, DTypeVector* out) {
  const auto& p = param_of<D>(attrs);
  const DistSpec& s = kDists[D];
  const bool integer = s.kind == OutKind::kInteger || s.kind == OutKind::kCount;
  const DType t = p.dtype ? *p.dtype : (integer ? DType::kInt64 : default_float_dtype());
  if (s.kind == OutKind::kFloat && !is_float(t))
    type_error("[", op_name(attrs), "] dtype must be a float dtype; got ", t);
  if (s.kind == OutKind::kCount && !is_integer(t))
    type_error("[", op_name(attrs), "] dtype must be an integer dtype; got ", t);
  if (s.kind == OutKind::kInteger && !is_integer(t) && t != DType::kBool)
    type_error("[", op_name(attrs), "] dtype must be an integer dtype; got ", t);
  if (s.kind == OutKind::kInteger && p.num_args == 0) {
    double lo = 0, hi = 2;  // bool: [0, 2), as NumPy's randint(2, dtype=bool)
    if (t != DType::kBool)
      NDX_DTYPE_SWITCH(t, T, {
        lo = static_cast<double>(std::numeric_limits<T>::lowest());
        hi = static_cast<double>(std::numeric_limits<T>::max()) + 1;
      });
    if (*p.a0 < lo) value_error("[", op_name(attrs), "] low is out of bounds for ", t);
    if (*p.a1 > hi) value_error("[", op_name(attrs), "] high is out of bounds for ", t);
  }
  for (DType in_t : *in)
    if (in_t == DType::kBool && s.kind != OutKind::kAny)
      type_error("[", op_name(attrs), "] parameters must be numbers, not bool arrays");
  (*out)[0] = t;
  return true;
}

// Normal and uniform samples with scalar parameters take the SIMD chunk kernels.
template <class Dist>
void draw(const TBlob& out, uint64_t seed, const std::array<kernel::ParamArg, 2>& args,
          bool scalars) {
  if constexpr (std::is_same_v<Dist, kernel::dist::Normal>) {
    if (scalars) return kernel::normal(out, args[0].scalar, args[1].scalar, seed);
  }
  if constexpr (std::is_same_v<Dist, kernel::dist::Uniform>) {
    if (scalars) return kernel::uniform(out, args[0].scalar, args[1].scalar, seed);
  }
  kernel::sample(out, seed, Dist{}, args[0], args[1]);
}

// The stream's seed: the param when given (a Generator's), else the global generator's next.
uint64_t stream_seed(const std::optional<int64_t>& seed, const OpContext& ctx) {
  return seed ? static_cast<uint64_t>(*seed) : ctx.requested[0].next_random();
}

// Array parameter k as doubles broadcast to the output's shape (held in values[k]).
void load_array_param(const TBlob& in, const Shape& shape, NDArray* value, kernel::ParamArg* arg) {
  *value = NDArray(shape, DType::kFloat64);
  kernel::copy(in, kernel::to_blob(*value));
  arg->values = value->template data<double>();
}

// Runs draw(dst) into out, through a temporary added to out when req is kAddTo.
template <class Draw>
void write_draws(const TBlob& out, OpReqType req, Draw draw) {
  NDArray tmp;
  const TBlob dst =
      req == kAddTo ? kernel::to_blob(tmp = NDArray(out.shape, out.dtype, out.device)) : out;
  draw(dst);
  if (req == kAddTo) kernel::copy(dst, out, kAddTo);
}

template <size_t D, class Dist>
void compute(const NodeAttrs& attrs, const OpContext& ctx, const std::vector<TBlob>& in,
             const std::vector<OpReqType>& req, const std::vector<TBlob>& out) {
  if (req[0] == kNullOp) return;
  const auto& p = param_of<D>(attrs);
  const int arity = kDists[D].arity;
  std::array<kernel::ParamArg, 2> args;
  std::array<NDArray, 2> values;
  for (int k = 0; k < arity; ++k) {
    if (p.num_args == 0) {
      args[k].scalar = *p.scalar(k);
      continue;
    }
    load_array_param(in[k], out[0].shape, &values[k], &args[k]);
  }
  if (p.num_args != 0)
    for (int64_t i = 0; i < out[0].size(); ++i)
      check_values<D, Dist>(attrs, args[0].at(i), args[1].at(i));
  const uint64_t seed = stream_seed(p.seed, ctx);
  write_draws(out[0], req[0],
              [&](const TBlob& dst) { draw<Dist>(dst, seed, args, p.num_args == 0); });
}

template <class Dist>
constexpr bool kDrawsOnGpu =
    std::is_same_v<Dist, kernel::dist::Normal> || std::is_same_v<Dist, kernel::dist::Uniform>;

// On a GPU, normal and uniform with scalar parameters draw there (kernel/cuda/random.cu, the
// CPU's stream element for element). Array parameters go back to the host before a seed is
// taken, so both devices advance the global generator alike.
template <size_t D, class Dist>
void gpu_compute(const NodeAttrs& attrs, const OpContext& ctx, const std::vector<TBlob>& in,
                 const std::vector<OpReqType>& req, const std::vector<TBlob>& out) {
  if (param_of<D>(attrs).num_args != 0)
    kernel::fall_back_to_host("[", op_name(attrs), "] array parameters are drawn on the host");
  compute<D, Dist>(attrs, ctx, in, req, out);
}

std::vector<ResourceRequest> random_resource(const NodeAttrs&) {
  return {ResourceRequest{ResourceRequest::kRandom}};
}

NodeEntry collapse_like(NodeEntry g, NodeEntry like) {
  return make_node("_npi_collapse_sum_like", {std::move(g), std::move(like)});
}
NodeEntry binary(const char* op, NodeEntry a, NodeEntry b) {
  return make_node(op, {std::move(a), std::move(b)});
}

template <class Dist, class... Ds>
constexpr bool kIsOneOf = (std::is_same_v<Dist, Ds> || ...);

// Reparameterized gradients of array parameters: the location-scale families (normal, Gumbel,
// Laplace, logistic) out = loc + scale * z give d/dloc = 1 and d/dscale = z = (out - loc) /
// scale; out = low + (high - low) u gives d/dlow = 1 - u and d/dhigh = u; the scale families
// (exponential, Rayleigh) out = scale * z give d/dscale = out / scale; the lognormal out =
// exp(mean + sigma z) gives d/dmean = out and d/dsigma = out z. Other distributions have no
// reparameterization here: zero gradients (as sampling is treated by MXNet and, without rsample,
// by PyTorch).
template <class Dist>
std::vector<NodeEntry> random_grad(const NodePtr& n, const std::vector<NodeEntry>& og) {
  namespace dist = kernel::dist;
  if (n->inputs.empty()) return {};
  const NodeEntry out{n, 0, 0};
  if constexpr (kIsOneOf<Dist, dist::Exponential, dist::Rayleigh>) {
    const NodeEntry z = binary("_np_true_divide", out, n->inputs[0]);
    return {collapse_like(binary("_np_multiply", og[0], z), n->inputs[0])};
  } else if constexpr (std::is_same_v<Dist, dist::LogNormal>) {
    const NodeEntry z =
        binary("_np_true_divide", binary("_np_subtract", make_node("_np_log", {out}), n->inputs[0]),
               n->inputs[1]);
    const NodeEntry g_mean = binary("_np_multiply", og[0], out);
    return {collapse_like(g_mean, n->inputs[0]),
            collapse_like(binary("_np_multiply", g_mean, z), n->inputs[1])};
  } else if constexpr (kIsOneOf<Dist, dist::Normal, dist::Gumbel, dist::Laplace, dist::Logistic>) {
    const NodeEntry z =
        binary("_np_true_divide", binary("_np_subtract", out, n->inputs[0]), n->inputs[1]);
    return {collapse_like(og[0], n->inputs[0]),
            collapse_like(binary("_np_multiply", og[0], z), n->inputs[1])};
  } else if constexpr (std::is_same_v<Dist, dist::Uniform>) {
    const NodeEntry u = binary("_np_true_divide", binary("_np_subtract", out, n->inputs[0]),
                               binary("_np_subtract", n->inputs[1], n->inputs[0]));
    const NodeEntry gu = binary("_np_multiply", og[0], u);
    return {collapse_like(binary("_np_subtract", og[0], gu), n->inputs[0]),
            collapse_like(gu, n->inputs[1])};
  } else {
    return MakeZeroGradNodes(n, og);
  }
}

template <size_t D, class Dist>
void register_distribution() {
  const DistSpec& s = kDists[D];
  Op& op = OpRegistry::global().register_op(std::string("_npi_") + s.name);
  op.describe(s.doc);
  op.set_num_inputs([](const NodeAttrs& attrs) -> uint32_t {
    return static_cast<uint32_t>(attrs.get<RandomParam<D>>().num_args);
  });
  op.set_params<RandomParam<D>>();
  op.set_attr<FResourceRequest>("FResourceRequest", random_resource);
  op.set_attr<FInferShape>("FInferShape", infer_shape<D, Dist>);
  op.set_attr<FInferType>("FInferType", infer_type<D>);
  op.set_attr<FCompute>("FCompute<cpu>", compute<D, Dist>);
  if constexpr (kDrawsOnGpu<Dist>) op.set_attr<FCompute>("FCompute<gpu>", gpu_compute<D, Dist>);
  op.set_attr<FGradient>("FGradient", random_grad<Dist>);
  for (int k = 0; k < s.arity; ++k)
    op.add_argument(std::string(s.args[k]) + "_array", "NDArray",
                    std::string(s.args[k]) + " as an array (when num_args > 0).");
}

// ---- permutation: Fisher-Yates with the i-th swap drawn from element i of the stream ----
struct PermutationParam {
  int64_t n = 0;
  std::optional<int64_t> seed;
  static void declare(ParamDecl<PermutationParam>& d) {
    d.field("n", &PermutationParam::n).set_lower_bound(0).describe("Length of the permutation.");
    d.field("seed", &PermutationParam::seed)
        .set_default(nullopt)
        .describe("Seed of the stream; None: the next seed of the global generator.");
  }
};

void permutation_compute(const NodeAttrs& attrs, const OpContext& ctx, const std::vector<TBlob>&,
                         const std::vector<OpReqType>& req, const std::vector<TBlob>& out) {
  const auto& p = attrs.get<PermutationParam>();
  const uint64_t seed = stream_seed(p.seed, ctx);
  if (req[0] == kNullOp) return;
  std::vector<int64_t> perm(static_cast<size_t>(p.n));
  for (int64_t i = 0; i < p.n; ++i) perm[i] = i;
  const kernel::Philox4x32 gen(seed);
  for (int64_t i = p.n - 1; i > 0; --i) {
    kernel::ElementDraws draws(gen, static_cast<uint64_t>(i));
    auto j = static_cast<int64_t>(draws.uniform() * static_cast<double>(i + 1));
    std::swap(perm[i], perm[j < i ? j : i]);
  }
  const NDArray result = NDArray::from_vector(perm, Shape{p.n});
  kernel::copy(kernel::to_blob(result), out[0], req[0]);
}

// ---- hypergeometric: three parameters (scalars, or three arrays broadcast to the output) ----
struct HypergeometricParam {
  std::optional<double> ngood, nbad, nsample;
  int64_t num_args = 0;
  std::optional<Shape> size;
  std::optional<DType> dtype;
  std::optional<int64_t> seed;
  static void declare(ParamDecl<HypergeometricParam>& d) {
    d.field("ngood", &HypergeometricParam::ngood).set_default(nullopt).describe("Good items.");
    d.field("nbad", &HypergeometricParam::nbad).set_default(nullopt).describe("Bad items.");
    d.field("nsample", &HypergeometricParam::nsample)
        .set_default(nullopt)
        .describe("Items drawn, at most ngood + nbad.");
    d.field("num_args", &HypergeometricParam::num_args)
        .set_default(0)
        .set_range(0, 3)
        .describe("0: the scalars above; 3: the three arrays given as inputs.");
    d.field("size", &HypergeometricParam::size)
        .set_default(nullopt)
        .describe("Output shape; None: the parameters' broadcast shape.");
    d.field("dtype", &HypergeometricParam::dtype)
        .set_default(nullopt)
        .describe("An integer output dtype (int64 by default).");
    d.field("seed", &HypergeometricParam::seed)
        .set_default(nullopt)
        .describe("Seed of the stream; None: the next seed of the global generator.");
  }
};

const HypergeometricParam& hypergeometric_param(const NodeAttrs& attrs) {
  const auto& p = attrs.get<HypergeometricParam>();
  if (p.num_args != 0 && p.num_args != 3)
    value_error("[", op_name(attrs), "] num_args must be 0 or 3; got ", p.num_args);
  if (p.num_args == 0 && (!p.ngood || !p.nbad || !p.nsample))
    type_error("[", op_name(attrs), "] missing required argument ngood, nbad or nsample");
  return p;
}

void check_hypergeometric(const NodeAttrs& attrs, double good, double bad, double sample) {
  if (std::isnan(good) || std::isnan(bad) || std::isnan(sample))
    value_error("[", op_name(attrs), "] parameters must not be NaN");
  if (const char* why = kernel::dist::Hypergeometric::check(good, bad, sample))
    value_error("[", op_name(attrs), "] ", why, " (ngood=", good, ", nbad=", bad,
                ", nsample=", sample, ")");
}

bool hypergeometric_shape(const NodeAttrs& attrs, ShapeVector* in, ShapeVector* out) {
  const auto& p = hypergeometric_param(attrs);
  if (p.num_args == 0) check_hypergeometric(attrs, *p.ngood, *p.nbad, *p.nsample);
  const std::string& name = op_name(attrs);
  Shape shape{};
  for (const Shape& s : *in) shape = broadcast_shapes(shape, s, name.c_str());
  if (p.size) {
    for (int64_t d : *p.size)
      if (d < 0)
        value_error("[", name, "] negative dimensions are not allowed; got size ", p.size->str());
    if (broadcast_shapes(shape, *p.size, name.c_str()) != *p.size)
      value_error("[", name, "] parameters of shape ", shape.str(), " do not broadcast to size ",
                  p.size->str());
    shape = *p.size;
  }
  (*out)[0] = shape;
  return true;
}

bool hypergeometric_type(const NodeAttrs& attrs, DTypeVector*, DTypeVector* out) {
  const auto& p = hypergeometric_param(attrs);
  const DType t = p.dtype ? *p.dtype : DType::kInt64;
  if (!is_integer(t)) type_error("[", op_name(attrs), "] dtype must be an integer dtype; got ", t);
  (*out)[0] = t;
  return true;
}

void hypergeometric_compute(const NodeAttrs& attrs, const OpContext& ctx,
                            const std::vector<TBlob>& in, const std::vector<OpReqType>& req,
                            const std::vector<TBlob>& out) {
  if (req[0] == kNullOp) return;
  const auto& p = hypergeometric_param(attrs);
  std::array<kernel::ParamArg, 3> args;
  std::array<NDArray, 3> values;
  if (p.num_args == 0) {
    args[0].scalar = *p.ngood, args[1].scalar = *p.nbad, args[2].scalar = *p.nsample;
  } else {
    for (int k = 0; k < 3; ++k) load_array_param(in[k], out[0].shape, &values[k], &args[k]);
    for (int64_t i = 0; i < out[0].size(); ++i)
      check_hypergeometric(attrs, args[0].at(i), args[1].at(i), args[2].at(i));
  }
  const uint64_t seed = stream_seed(p.seed, ctx);
  write_draws(out[0], req[0], [&](const TBlob& dst) {
    kernel::sample(dst, seed, kernel::dist::Hypergeometric{}, args[0], args[1], args[2]);
  });
}

template <size_t... D>
void register_all(std::index_sequence<D...>) {
  using namespace kernel::dist;
  using Functors = std::tuple<Uniform, Normal, LogNormal, Gamma, Beta, ChiSquare, F, Exponential,
                              Gumbel, Laplace, Logistic, Pareto, Power, Rayleigh, Weibull,
                              Bernoulli, RandInt, Poisson, Binomial, Geometric, NegativeBinomial,
                              Wald, VonMises, Zipf, LogSeries, NoncentralChiSquare>;
  static_assert(std::tuple_size_v<Functors> == std::size(kDists));
  (register_distribution<D, std::tuple_element_t<D, Functors>>(), ...);
}

[[maybe_unused]] const bool registered = [] {
  register_all(std::make_index_sequence<std::size(kDists)>());
  OpRegistry::global()
      .register_op("_npi_hypergeometric")
      .describe("Samples the good items among nsample drawn from ngood + nbad (int64).")
      .set_num_inputs([](const NodeAttrs& attrs) -> uint32_t {
        return static_cast<uint32_t>(attrs.get<HypergeometricParam>().num_args);
      })
      .set_params<HypergeometricParam>()
      .add_argument("ngood_array", "NDArray", "ngood as an array (when num_args is 3).")
      .add_argument("nbad_array", "NDArray", "nbad as an array (when num_args is 3).")
      .add_argument("nsample_array", "NDArray", "nsample as an array (when num_args is 3).")
      .set_attr<FResourceRequest>("FResourceRequest", random_resource)
      .set_attr<FInferShape>("FInferShape", hypergeometric_shape)
      .set_attr<FInferType>("FInferType", hypergeometric_type)
      .set_attr<FCompute>("FCompute<cpu>", hypergeometric_compute)
      .set_attr<FGradient>("FGradient", MakeZeroGradNodes);
  OpRegistry::global()
      .register_op("_npi_permutation")
      .describe("A random permutation of 0 .. n - 1 (int64).")
      .set_num_inputs(0)
      .set_params<PermutationParam>()
      .set_attr<FResourceRequest>("FResourceRequest", random_resource)
      .set_attr<FInferShape>("FInferShape",
                             [](const NodeAttrs& attrs, ShapeVector*, ShapeVector* out) {
                               (*out)[0] = Shape{attrs.get<PermutationParam>().n};
                               return true;
                             })
      .set_attr<FInferType>("FInferType",
                            [](const NodeAttrs&, DTypeVector*, DTypeVector* out) {
                              (*out)[0] = DType::kInt64;
                              return true;
                            })
      .set_attr<FCompute>("FCompute<cpu>", permutation_compute);
  return true;
}();

}  // namespace
}  // namespace ndx
