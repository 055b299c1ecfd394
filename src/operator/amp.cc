// The ops of automatic mixed precision (MXNet's amp_cast, amp_multicast, all_finite and
// multi_all_finite, with their _npi_ names). amp_cast converts only floating-point arrays, so
// the casts AMP puts in front of an op leave integer inputs (labels, indices) alone; the
// all_finite pair tells the dynamic loss scaler whether a step's gradients overflowed.
#include <cmath>
#include <vector>

#include "kernel/reduce.h"
#include "ndx/graph.h"
#include "operator/kernel_util.h"

namespace ndx {
namespace {

struct AmpCastParam {
  DType dtype = DType::kFloat32;
  static void declare(ParamDecl<AmpCastParam>& d) {
    d.field("dtype", &AmpCastParam::dtype)
        .describe("The float dtype a floating-point input is converted to.");
  }
};

void check_float_target(DType t, const char* op) {
  if (!is_float(t))
    type_error("[", op, "] dtype must be a floating-point dtype, got ", dtype_name(t));
}

bool amp_cast_type(const NodeAttrs& attrs, DTypeVector* in, DTypeVector* out) {
  const DType target = attrs.get<AmpCastParam>().dtype;
  check_float_target(target, "amp_cast");
  if ((*in)[0] == DType::kUnknown) return false;
  assign_type(attrs, &(*out)[0], is_float((*in)[0]) ? target : (*in)[0], "output", 0);
  return true;
}

void cast_compute(const NodeAttrs&, const OpContext&, const std::vector<TBlob>& in,
                  const std::vector<OpReqType>& req, const std::vector<TBlob>& out) {
  for (size_t i = 0; i < in.size(); ++i)
    kernel::write_req(kernel::as_array(in[i]), kernel::as_array(out[i]), req[i]);
}

// Each output's gradient goes back to its input's dtype.
std::vector<NodeEntry> cast_back(const NodePtr& n, const std::vector<NodeEntry>& og) {
  std::vector<NodeEntry> grads;
  for (size_t i = 0; i < n->inputs.size(); ++i)
    grads.push_back(make_node("_npi_cast_like", {og[i], n->inputs[i]}));
  return grads;
}

struct AmpMulticastParam {
  int64_t num_outputs = 1;
  bool cast_narrow = false;
  static void declare(ParamDecl<AmpMulticastParam>& d) {
    d.field("num_outputs", &AmpMulticastParam::num_outputs)
        .set_range(1, Op::kMaxArity)
        .describe("Number of arrays cast (inputs and outputs).");
    d.field("cast_narrow", &AmpMulticastParam::cast_narrow)
        .set_default(false)
        .describe("Cast to the narrowest float dtype of the inputs instead of the widest.");
  }
};

uint32_t multicast_arity(const NodeAttrs& attrs) {
  return static_cast<uint32_t>(attrs.get<AmpMulticastParam>().num_outputs);
}

// The widest float dtype of the float inputs (float16 with bfloat16 widens to float32, which
// holds both), or with cast_narrow the narrowest, which must be unique.
DType multicast_target(const DTypeVector& in, bool narrow) {
  DType t = DType::kUnknown;
  for (DType d : in) {
    if (!is_float(d)) continue;
    if (t == DType::kUnknown || t == d) {
      t = d;
    } else if (!narrow) {
      t = promote_types(t, d);
    } else if (dtype_size(d) != dtype_size(t)) {
      t = dtype_size(d) < dtype_size(t) ? d : t;
    } else {
      type_error("[amp_multicast] cast_narrow has no single narrowest dtype among ", dtype_name(t),
                 " and ", dtype_name(d));
    }
  }
  return t;
}

bool multicast_type(const NodeAttrs& attrs, DTypeVector* in, DTypeVector* out) {
  for (DType d : *in)
    if (d == DType::kUnknown) return false;
  const DType t = multicast_target(*in, attrs.get<AmpMulticastParam>().cast_narrow);
  for (size_t i = 0; i < in->size(); ++i)
    assign_type(attrs, &(*out)[i], is_float((*in)[i]) ? t : (*in)[i], "output",
                static_cast<int>(i));
  return true;
}

bool multicast_shape(const NodeAttrs& attrs, ShapeVector* in, ShapeVector* out) {
  bool known = true;
  for (size_t i = 0; i < in->size(); ++i) {
    if (!(*in)[i].is_known()) {
      known = false;
      continue;
    }
    assign_shape(attrs, &(*out)[i], (*in)[i], "output", static_cast<int>(i));
  }
  return known;
}

struct AllFiniteParam {
  bool init_output = true;
  static void declare(ParamDecl<AllFiniteParam>& d) {
    d.field("init_output", &AllFiniteParam::init_output)
        .set_default(true)
        .describe(
            "Start the output at 1; False keeps the given out= value unless a non-finite "
            "element is found (to AND several calls together).");
  }
};

struct MultiAllFiniteParam {
  int64_t num_arrays = 1;
  bool init_output = true;
  static void declare(ParamDecl<MultiAllFiniteParam>& d) {
    d.field("num_arrays", &MultiAllFiniteParam::num_arrays)
        .set_default(int64_t{1})
        .set_range(1, Op::kMaxArity)
        .describe("Number of arrays checked.");
    d.field("init_output", &MultiAllFiniteParam::init_output)
        .set_default(true)
        .describe(
            "Start the output at 1; False keeps the given out= value unless a "
            "non-finite element is found.");
  }
};

uint32_t multi_all_finite_inputs(const NodeAttrs& attrs) {
  return static_cast<uint32_t>(attrs.get<MultiAllFiniteParam>().num_arrays);
}

bool flag_shape(const NodeAttrs& attrs, ShapeVector* in, ShapeVector* out) {
  assign_shape(attrs, &(*out)[0], Shape{1}, "output", 0);
  for (const Shape& s : *in)
    if (!s.is_known()) return false;
  return true;
}

bool flag_type(const NodeAttrs& attrs, DTypeVector* in, DTypeVector* out) {
  assign_type(attrs, &(*out)[0], DType::kFloat32, "output", 0);
  for (DType d : *in)
    if (d == DType::kUnknown) return false;
  return true;
}

// Whether every element is finite: the largest is below +inf and not NaN, the smallest above
// -inf (two engine reductions, no temporary array). Integers and bools always are.
bool all_finite(const TBlob& x) {
  if (x.size() == 0 || !is_inexact(x.dtype)) return true;
  if (is_complex(x.dtype)) {  // the real and imaginary parts, as one real array
    NDArray parts =
        kernel::as_array(x).is_contiguous() ? kernel::as_array(x) : kernel::as_array(x).copy();
    const DType real = real_dtype(x.dtype);
    TBlob flat{parts.raw_data(), Shape{2 * x.size()}, Shape{1}, real, x.device};
    return all_finite(flat);
  }
  return std::isfinite(kernel::max_value(x)) && std::isfinite(kernel::min_value(x));
}

void write_flag(const TBlob& out, OpReqType req, bool init, bool finite) {
  if (req == kNullOp) return;
  if (req == kAddTo) not_implemented("[all_finite] req add-to is not supported");
  if (!finite)
    kernel::fill_output(out, kWriteTo, 0.0);
  else if (init)
    kernel::fill_output(out, kWriteTo, 1.0);
}

void all_finite_compute(const NodeAttrs& attrs, const OpContext&, const std::vector<TBlob>& in,
                        const std::vector<OpReqType>& req, const std::vector<TBlob>& out) {
  write_flag(out[0], req[0], attrs.get<AllFiniteParam>().init_output, all_finite(in[0]));
}

void multi_all_finite_compute(const NodeAttrs& attrs, const OpContext&,
                              const std::vector<TBlob>& in, const std::vector<OpReqType>& req,
                              const std::vector<TBlob>& out) {
  bool finite = true;
  for (size_t i = 0; i < in.size() && finite; ++i) finite = all_finite(in[i]);
  write_flag(out[0], req[0], attrs.get<MultiAllFiniteParam>().init_output, finite);
}

[[maybe_unused]] const bool registered = [] {
  OpRegistry::global()
      .register_op("_npi_amp_cast")
      .add_alias("amp_cast")
      .describe(
          "A floating-point array converted to dtype; other arrays (integers, bools, complex) "
          "unchanged. The cast automatic mixed precision puts in front of an op.")
      .set_num_inputs(1)
      .add_argument("data", "NDArray", "Input array.")
      .set_params<AmpCastParam>()
      .set_attr<FInferShape>("FInferShape", ElemwiseShape<1, 1>)
      .set_attr<FInferType>("FInferType", amp_cast_type)
      .set_attr<TStridedInputs>("TStridedInputs", true)
      .set_attr<FCompute>("FCompute<cpu>", cast_compute)
      .set_attr<FCompute>("FCompute<gpu>", cast_compute)
      .set_attr<FGradient>("FGradient", cast_back);
  OpRegistry::global()
      .register_op("_npi_amp_multicast")
      .add_alias("amp_multicast")
      .describe(
          "Several arrays cast to one float dtype: the widest of their float dtypes, or with "
          "cast_narrow the narrowest; non-float arrays pass unchanged.")
      .set_num_inputs(multicast_arity)
      .set_num_outputs(multicast_arity)
      .add_argument("data", "NDArray[]", "The arrays.")
      .set_params<AmpMulticastParam>()
      .set_attr<FInferShape>("FInferShape", multicast_shape)
      .set_attr<FInferType>("FInferType", multicast_type)
      .set_attr<TStridedInputs>("TStridedInputs", true)
      .set_attr<FCompute>("FCompute<cpu>", cast_compute)
      .set_attr<FCompute>("FCompute<gpu>", cast_compute)
      .set_attr<FGradient>("FGradient", cast_back);
  OpRegistry::global()
      .register_op("_npi_all_finite")
      .add_alias("all_finite")
      .describe("[1.] (float32) when every element of data is finite, else [0.].")
      .set_num_inputs(1)
      .add_argument("data", "NDArray", "The array checked.")
      .set_params<AllFiniteParam>()
      .set_attr<FInferShape>("FInferShape", flag_shape)
      .set_attr<FInferType>("FInferType", flag_type)
      .set_attr<TStridedInputs>("TStridedInputs", true)
      .set_attr<FCompute>("FCompute<cpu>", all_finite_compute)
      .set_attr<FCompute>("FCompute<gpu>", all_finite_compute)
      .set_attr<FGradient>("FGradient", MakeZeroGradNodes);
  OpRegistry::global()
      .register_op("_npi_multi_all_finite")
      .add_alias("multi_all_finite")
      .describe("[1.] (float32) when every element of every array is finite, else [0.].")
      .set_num_inputs(multi_all_finite_inputs)
      .add_argument("data", "NDArray[]", "The arrays checked.")
      .set_params<MultiAllFiniteParam>()
      .set_attr<FInferShape>("FInferShape", flag_shape)
      .set_attr<FInferType>("FInferType", flag_type)
      .set_attr<TStridedInputs>("TStridedInputs", true)
      .set_attr<FCompute>("FCompute<cpu>", multi_all_finite_compute)
      .set_attr<FCompute>("FCompute<gpu>", multi_all_finite_compute)
      .set_attr<FGradient>("FGradient", MakeZeroGradNodes);
  return true;
}();

}  // namespace
}  // namespace ndx
