// Ops that make the ndarray's view and conversion methods differentiable under autograd:
// _npx_slice (basic slicing with Python's semantics per axis; a begin or end equal to kNone
// means "omitted") and _npi_astype / _npi_cast_like (dtype conversion, each other's gradient).
#include <cstdlib>
#include <limits>

#include "ndx/graph.h"
#include "operator/kernel_util.h"

namespace ndx {
namespace {

constexpr int64_t kNone = std::numeric_limits<int64_t>::min();

struct SliceParam {
  Shape begin, end, step;
  static void declare(ParamDecl<SliceParam>& d) {
    d.field("begin", &SliceParam::begin)
        .describe("Start per axis (omitted axes from the front are whole).");
    d.field("end", &SliceParam::end).describe("Stop per axis, exclusive; INT64_MIN means omitted.");
    d.field("step", &SliceParam::step)
        .set_default(Shape{})
        .describe("Step per axis; () means all 1.");
  }
};

std::optional<int64_t> bound(int64_t v) {
  return v == kNone ? std::nullopt : std::optional<int64_t>(v);
}

// The view of `a` the params select.
NDArray sliced(const NodeAttrs& attrs, const NDArray& a) {
  const auto& p = attrs.get<SliceParam>();
  NDArray v = a;
  for (int i = 0; i < p.begin.ndim(); ++i) {
    int64_t step = p.step.ndim() ? p.step[i] : 1;
    v = v.slice(i, bound(p.begin[i]), bound(p.end[i]), step);
  }
  return v;
}

void check(const NodeAttrs& attrs, const Shape& data) {
  const auto& p = attrs.get<SliceParam>();
  if (p.begin.ndim() != p.end.ndim() || (p.step.ndim() && p.step.ndim() != p.begin.ndim()))
    value_error("[slice] begin, end and step must have the same length; got ", p.begin.ndim(), ", ",
                p.end.ndim(), " and ", p.step.ndim());
  if (p.begin.ndim() > data.ndim())
    index_error("[slice] ", p.begin.ndim(), " axes sliced in an array of dimension ", data.ndim());
  for (int i = 0; i < p.step.ndim(); ++i)
    if (p.step[i] == 0) value_error("[slice] slice step cannot be zero (axis ", i, ")");
}

bool slice_shape(const NodeAttrs& attrs, ShapeVector* in, ShapeVector* out) {
  if (!(*in)[0].is_known()) return false;
  check(attrs, (*in)[0]);
  NDArray probe(std::shared_ptr<Storage>(), 0, (*in)[0], contiguous_strides((*in)[0]),
                DType::kUInt8);
  assign_shape(attrs, &(*out)[0], sliced(attrs, probe).shape(), "output", 0);
  return true;
}

void slice_compute(const NodeAttrs& attrs, const OpContext&, const std::vector<TBlob>& in,
                   const std::vector<OpReqType>& req, const std::vector<TBlob>& out) {
  kernel::write_req(sliced(attrs, kernel::as_array(in[0])), kernel::as_array(out[0]), req[0]);
}

// (ograd, data) -> grad: zeros with ograd written into the sliced region.
void backward_compute(const NodeAttrs& attrs, const OpContext&, const std::vector<TBlob>& in,
                      const std::vector<OpReqType>& req, const std::vector<TBlob>& out) {
  if (req[0] == kNullOp) return;
  NDArray grad = kernel::as_array(out[0]);
  if (req[0] != kAddTo) grad.fill(0);
  kernel::write_req(kernel::as_array(in[0]), sliced(attrs, grad), kAddTo);
}

struct AstypeParam {
  DType dtype = DType::kFloat32;
  static void declare(ParamDecl<AstypeParam>& d) {
    d.field("dtype", &AstypeParam::dtype).describe("Target dtype.");
  }
};

// A Python scalar in a symbol's arithmetic (sym * 2): a 0-d array whose dtype NEP 50's weak-scalar
// rule gives against the other operand's, as the imperative path types it (float16 data * 2.5
// stays float16; with int32 data the scalar 2.5 is float32, and the product float64, NumPy's).
// The value travels as its Python text, so that integers keep every digit (int64 data + 2**53 + 1
// is exact; a double would round it).
struct WeakScalarParam {
  std::string value = "0";
  int64_t kind = 2;
  static void declare(ParamDecl<WeakScalarParam>& d) {
    d.field("value", &WeakScalarParam::value).describe("The scalar, as Python writes it.");
    d.field("kind", &WeakScalarParam::kind)
        .set_default(2)
        .describe("The scalar's kind: 0 bool, 1 int, 2 float.");
  }
};

// An integer's text as a 128-bit integer; false for text that is no integer or too long for
// one (a Python int of more than 38 digits is out of every dtype's range anyway).
bool parse_integer(std::string_view s, __int128* out) {
  const bool negative = !s.empty() && s[0] == '-';
  if (negative || (!s.empty() && s[0] == '+')) s.remove_prefix(1);
  if (s.empty() || s.size() > 38) return false;
  __int128 v = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return false;
    v = v * 10 + (c - '0');
  }
  *out = negative ? -v : v;
  return true;
}

bool is_exact_integer(DType t) { return is_integer(t) && t != DType::kBool; }

// The value's text as a double (Python's repr of a float: digits, 'inf', 'nan'); a ValueError
// for anything else.
double scalar_value(const WeakScalarParam& p) {
  const char* begin = p.value.c_str();
  char* end = nullptr;
  const double v = std::strtod(begin, &end);
  if (p.value.empty() || end != begin + p.value.size())
    value_error("[weak_scalar_like] value must be a number's text, got '", p.value, "'");
  return v;
}

// (templates, so that the other dtypes' branches are discarded)
template <class T>
void integer_limits(__int128* lo, __int128* hi) {
  if constexpr (std::is_integral_v<T>) {
    *lo = std::numeric_limits<T>::lowest();
    *hi = std::numeric_limits<T>::max();
  }
}

template <class T>
void store_integer(void* dst, __int128 v) {
  if constexpr (std::is_integral_v<T>) *static_cast<T*>(dst) = static_cast<T>(v);
}

// The integer scalar of an integer result dtype, checked against the dtype's range (uint8 data +
// 300: NumPy 2 raises OverflowError, as ndx does imperatively).
__int128 integer_scalar(const WeakScalarParam& p, DType t) {
  __int128 v = 0;
  __int128 lo = 0, hi = 0;
  NDX_DTYPE_SWITCH(t, T, integer_limits<T>(&lo, &hi));
  if (!parse_integer(p.value, &v) || v < lo || v > hi)
    overflow_error("[sym] Python integer ", p.value, " out of bounds for ", t);
  return v;
}

bool weak_scalar_type(const NodeAttrs& attrs, DTypeVector* in, DTypeVector* out) {
  const auto& p = attrs.get<WeakScalarParam>();
  if (p.kind < 0 || p.kind > 2)
    value_error("[weak_scalar_like] kind must be 0 (bool), 1 (int) or 2 (float); got ", p.kind);
  if ((*in)[0] == DType::kUnknown) return false;
  const DType t = promote_with_scalar((*in)[0], static_cast<ScalarKind>(p.kind));
  scalar_value(p);
  if (is_exact_integer(t)) integer_scalar(p, t);
  (*out)[0] = t;
  return true;
}

void weak_scalar_compute(const NodeAttrs& attrs, const OpContext&, const std::vector<TBlob>&,
                         const std::vector<OpReqType>& req, const std::vector<TBlob>& out) {
  if (req[0] == kNullOp) return;
  const auto& p = attrs.get<WeakScalarParam>();
  NDArray result = kernel::as_array(out[0]);
  if (!is_exact_integer(result.dtype())) {
    result.fill(scalar_value(p));
    return;
  }
  NDArray value(Shape{}, result.dtype(), cpu());  // (written exactly, then to the device)
  const __int128 v = integer_scalar(p, result.dtype());
  NDX_DTYPE_SWITCH(result.dtype(), T, store_integer<T>(value.raw_data(), v));
  kernel::write_req(value, result, kWriteTo);
}

void cast_compute(const NodeAttrs&, const OpContext&, const std::vector<TBlob>& in,
                  const std::vector<OpReqType>& req, const std::vector<TBlob>& out) {
  kernel::write_req(kernel::as_array(in[0]), kernel::as_array(out[0]), req[0]);  // casts
}

[[maybe_unused]] const bool registered = [] {
  OpRegistry::global()
      .register_op("_npi_astype")
      .describe("The array converted to dtype (a copy).")
      .set_num_inputs(1)
      .add_argument("a", "NDArray", "Input array.")
      .set_params<AstypeParam>()
      .set_attr<FInferShape>("FInferShape", ElemwiseShape<1, 1>)
      .set_attr<FInferType>("FInferType",
                            [](const NodeAttrs& attrs, DTypeVector*, DTypeVector* out) {
                              (*out)[0] = attrs.get<AstypeParam>().dtype;
                              return true;
                            })
      .set_attr<TStridedInputs>("TStridedInputs", true)
      .set_attr<bool>("TElementwise", true)  // fused into elementwise chains (op/fusion.cc)
      .set_attr<FCompute>("FCompute<cpu>", cast_compute)
      .set_attr<FCompute>("FCompute<gpu>", cast_compute)  // the GPU cast engine
      .set_attr<FGradient>("FGradient", [](const NodePtr& n, const std::vector<NodeEntry>& og) {
        return std::vector<NodeEntry>{make_node("_npi_cast_like", {og[0], n->inputs[0]})};
      });
  OpRegistry::global()
      .register_op("_npi_cast_like")
      .describe("x converted to the dtype of `like` (shapes are x's).")
      .set_num_inputs(2)
      .add_argument("x", "NDArray", "Input array.")
      .add_argument("like", "NDArray", "The array whose dtype the result takes.")
      .set_attr<FInferShape>("FInferShape",
                             [](const NodeAttrs& attrs, ShapeVector* in, ShapeVector* out) {
                               assign_shape(attrs, &(*out)[0], (*in)[0], "output", 0);
                               return (*in)[0].is_known();
                             })
      .set_attr<FInferType>("FInferType",
                            [](const NodeAttrs&, DTypeVector* in, DTypeVector* out) {
                              (*out)[0] = (*in)[1];
                              return (*in)[1] != DType::kUnknown;
                            })
      .set_attr<TStridedInputs>("TStridedInputs", true)
      .set_attr<FCompute>("FCompute<cpu>", cast_compute)
      .set_attr<FCompute>("FCompute<gpu>", cast_compute)
      .set_attr<FGradient>("FGradient", [](const NodePtr& n, const std::vector<NodeEntry>& og) {
        return std::vector<NodeEntry>{make_node("_npi_cast_like", {og[0], n->inputs[0]}),
                                      make_node("_np_zeros_like", {n->inputs[1]})};
      });
  OpRegistry::global()
      .register_op("_npi_weak_scalar_like")
      .describe("A Python scalar as a 0-d array typed by NEP 50's rule against `like`'s dtype.")
      .set_num_inputs(1)
      .add_argument("like", "NDArray", "The array the scalar meets.")
      .set_params<WeakScalarParam>()
      .set_attr<FInferShape>("FInferShape",
                             [](const NodeAttrs& attrs, ShapeVector*, ShapeVector* out) {
                               assign_shape(attrs, &(*out)[0], Shape{}, "output", 0);
                               return true;
                             })
      .set_attr<FInferType>("FInferType", weak_scalar_type)
      .set_attr<FCompute>("FCompute<cpu>", weak_scalar_compute)
      .set_attr<FCompute>("FCompute<gpu>", weak_scalar_compute)
      .set_attr<FGradient>("FGradient", [](const NodePtr& n, const std::vector<NodeEntry>&) {
        return std::vector<NodeEntry>{make_node("_np_zeros_like", {n->inputs[0]})};
      });
  OpRegistry::global()
      .register_op("_npx_slice")
      .describe("Basic slicing with Python's semantics per axis: data[begin:end:step, ...].")
      .set_num_inputs(1)
      .add_argument("data", "NDArray", "Input array.")
      .set_params<SliceParam>()
      .set_attr<FInferShape>("FInferShape", slice_shape)
      .set_attr<FInferType>("FInferType", FirstInputType)
      .set_attr<TStridedInputs>("TStridedInputs", true)
      .set_attr<FCompute>("FCompute<cpu>", slice_compute)
      .set_attr<FCompute>("FCompute<gpu>", slice_compute)  // views and the device's copy
      .set_attr<FGradient>("FGradient", ElemwiseGradUseIn{"_backward_npx_slice"});
  OpRegistry::global()
      .register_op("_backward_npx_slice")
      .describe(
          "Backward of slice: (ograd, data) -> zeros of data's shape holding ograd in the slice.")
      .set_num_inputs(2)
      .set_params<SliceParam>()
      .set_attr<FInferShape>("FInferShape",
                             [](const NodeAttrs& attrs, ShapeVector* in, ShapeVector* out) {
                               assign_shape(attrs, &(*out)[0], (*in)[1], "output", 0);
                               return (*in)[1].is_known();
                             })
      .set_attr<FInferType>("FInferType", FirstInputType)
      .set_attr<TStridedInputs>("TStridedInputs", true)
      .set_attr<TIsBackward>("TIsBackward", true)
      .set_attr<FCompute>("FCompute<cpu>", backward_compute)
      .set_attr<FCompute>("FCompute<gpu>", backward_compute)
      // Linear in ograd: its own gradient slices the incoming gradient again.
      .set_attr<FGradient>("FGradient", [](const NodePtr& n, const std::vector<NodeEntry>& og) {
        auto s = std::make_shared<Node>();
        s->attrs = n->attrs;
        s->attrs.op = Op::get("_npx_slice");
        s->inputs = {og[0]};
        return std::vector<NodeEntry>{NodeEntry{s, 0, 0},
                                      make_node("_np_zeros_like", {n->inputs[1]})};
      });
  return true;
}();

}  // namespace
}  // namespace ndx
