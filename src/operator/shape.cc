// Shape ops: reshape, transpose, expand_dims, squeeze, broadcast_to, swapaxes, concatenate,
// stack, split, pad, take_along_axis, packbits / unpackbits, and their backward ops. The kernels
// build the source as an NDArray view of the input (reshape, transpose, slice, broadcast_to) and
// copy it into the output honouring req.
#include <algorithm>
#include <atomic>
#include <bit>
#include <cstring>
#include <numeric>
#include <optional>
#include <string>
#include <type_traits>

#include "kernel/cast.h"
#include "kernel/compress.h"
#include "kernel/element_size.h"
#include "kernel/functor_traits.h"
#include "kernel/parallel.h"
#include "ndx/graph.h"
#include "ndx/promote_sequence.h"
#include "operator/kernel_util.h"

namespace ndx {
namespace {

using kernel::as_array;
using kernel::to_blob;
using kernel::write_req;

// Copies src into out (same size, any shapes): through a reshaped view of whichever side
// allows one without copying.
void reshape_copy(const TBlob& in, const TBlob& out, OpReqType req) {
  if (req == kNullOp) return;
  NDArray src = as_array(in), dst = as_array(out);
  if (dst.is_contiguous())
    write_req(src, dst.reshape(in.shape), req);
  else
    write_req(src.reshape(out.shape), dst, req);
}

bool SameType(const NodeAttrs& attrs, DTypeVector* in, DTypeVector* out) {
  if ((*in)[0] == DType::kUnknown) return false;
  for (size_t j = 0; j < out->size(); ++j)
    assign_type(attrs, &(*out)[j], (*in)[0], "output", static_cast<int>(j));
  return true;
}

// Gradient op taking (ograd..., inputs...) without the forward's params.
struct GradUseInNoParams {
  std::string op_name;
  std::vector<NodeEntry> operator()(const NodePtr& n, const std::vector<NodeEntry>& ograds) const {
    std::vector<NodeEntry> heads(ograds.begin(), ograds.end());
    heads.insert(heads.end(), n->inputs.begin(), n->inputs.end());
    return make_grad_node(op_name, n, std::move(heads), false);
  }
};

std::map<std::string, std::string> params_dict(const NodeAttrs& attrs) {
  return attrs.op->params->to_dict(attrs.parsed);
}

// ============================== reshape ==============================
struct ReshapeParam {
  Shape newshape;
  static void declare(ParamDecl<ReshapeParam>& d) {
    d.field("newshape", &ReshapeParam::newshape)
        .describe("The new shape; one dimension may be -1 and is then inferred.");
  }
};

Shape infer_reshape(const Shape& src, const Shape& newshape) {
  if (newshape.ndim() > Shape::kMaxDims)
    value_error("[reshape] at most ", Shape::kMaxDims, " dimensions are supported, got ",
                newshape.ndim());
  Shape target = newshape;
  int unknown = -1;
  int64_t known = 1;
  for (int i = 0; i < target.ndim(); ++i) {
    if (target[i] < 0) {  // NumPy takes any negative value as the unknown dimension
      if (unknown >= 0)
        value_error("[reshape] argument 'newshape' can only specify one unknown dimension; got ",
                    newshape.str());
      unknown = i;
    } else if (__builtin_mul_overflow(known, target[i], &known)) {
      // A product past int64 cannot be any array's size (wrapped, it could have matched one).
      value_error("[reshape] cannot reshape array of size ", src.size(), " into shape ",
                  newshape.str());
    }
  }
  if (unknown >= 0) {
    if (known == 0 || src.size() % known != 0)
      value_error("[reshape] cannot reshape array of size ", src.size(), " into shape ",
                  newshape.str());
    target[unknown] = src.size() / known;
  }
  if (target.size() != src.size())
    value_error("[reshape] cannot reshape array of size ", src.size(), " into shape ",
                newshape.str());
  return target;
}

// _npx_reshape: MXNet 2's codes, read left to right against the input's dims (right to left
// with reverse): -1 infers a size, -2 copies a dim, -3 drops a dim of size 1, -4 copies the
// remaining dims, -5 merges two dims, -6 splits one into the two sizes after it. Kept in the
// graph as codes, so a traced Flatten (-2, -1) serves every batch size.
struct NpxReshapeParam {
  Shape newshape;
  bool reverse = false;
  static void declare(ParamDecl<NpxReshapeParam>& d) {
    d.field("newshape", &NpxReshapeParam::newshape)
        .describe("Sizes >= 0 and the codes -1 .. -6 (see npx.reshape).");
    d.field("reverse", &NpxReshapeParam::reverse)
        .set_default(false)
        .describe("Read the codes and dims right to left.");
  }
};

Shape expand_reshape_codes(const Shape& src, const Shape& codes) {
  Shape out;
  int i = 0;
  auto take = [&](int count) {
    if (i + count > src.ndim())
      value_error("[reshape] newshape ", codes.str(), " reads past the input's ", src.ndim(),
                  " dimensions ", src.str());
    i += count;
    return i - count;
  };
  auto push = [&](int64_t v) {
    if (out.ndim() >= Shape::kMaxDims)
      value_error("[reshape] at most ", Shape::kMaxDims, " dimensions are supported");
    out.push_back(v);
  };
  for (int k = 0; k < codes.ndim(); ++k) {
    const int64_t c = codes[k];
    if (c >= 0 || c == -1) {
      push(c);
      ++i;
    } else if (c == -2) {
      push(src[take(1)]);
    } else if (c == -3) {
      const int at = take(1);
      if (src[at] != 1)
        value_error("[reshape] -3 skips only a dimension of size 1; dimension ", at, " has size ",
                    src[at]);
    } else if (c == -4) {
      while (i < src.ndim()) push(src[i++]);
    } else if (c == -5) {
      const int at = take(2);
      int64_t merged = 0;
      if (__builtin_mul_overflow(src[at], src[at + 1], &merged))
        value_error("[reshape] -5 merges dimensions whose product overflows");
      push(merged);
    } else if (c == -6) {
      const int64_t d = src[take(1)];
      if (k + 2 >= codes.ndim())
        value_error("[reshape] -6 must be followed by the two sizes to split into");
      int64_t p = codes[k + 1], q = codes[k + 2];
      k += 2;
      if (p < -1 || q < -1 || (p == -1 && q == -1))
        value_error("[reshape] -6 splits into two sizes, at most one of them -1; got (", p, ", ", q,
                    ")");
      if (p == -1) p = q ? d / q : 0;
      if (q == -1) q = p ? d / p : 0;
      int64_t product = 0;
      if (__builtin_mul_overflow(p, q, &product) || product != d)
        value_error("[reshape] -6 cannot split dimension ", d, " into (", p, ", ", q, ")");
      push(p);
      push(q);
    } else {
      value_error("[reshape] invalid newshape code ", c,
                  ": expected a size >= 0 or one of -1 .. -6");
    }
  }
  return out;
}

Shape npx_reshape_target(const Shape& src, const NpxReshapeParam& p) {
  if (!p.reverse) return infer_reshape(src, expand_reshape_codes(src, p.newshape));
  Shape rsrc, rcodes;
  for (int i = src.ndim() - 1; i >= 0; --i) rsrc.push_back(src[i]);
  for (int i = p.newshape.ndim() - 1; i >= 0; --i) rcodes.push_back(p.newshape[i]);
  const Shape r = infer_reshape(rsrc, expand_reshape_codes(rsrc, rcodes));
  Shape out;
  for (int i = r.ndim() - 1; i >= 0; --i) out.push_back(r[i]);
  return out;
}

bool NpxReshapeShape(const NodeAttrs& attrs, ShapeVector* in, ShapeVector* out) {
  if (!(*in)[0].is_known()) return false;
  assign_shape(attrs, &(*out)[0], npx_reshape_target((*in)[0], attrs.get<NpxReshapeParam>()),
               "output", 0);
  return true;
}

bool ReshapeShape(const NodeAttrs& attrs, ShapeVector* in, ShapeVector* out) {
  if (!(*in)[0].is_known()) return false;
  assign_shape(attrs, &(*out)[0], infer_reshape((*in)[0], attrs.get<ReshapeParam>().newshape),
               "output", 0);
  return true;
}

void ReshapeCompute(const NodeAttrs&, const OpContext&, const std::vector<TBlob>& in,
                    const std::vector<OpReqType>& req, const std::vector<TBlob>& out) {
  reshape_copy(in[0], out[0], req[0]);
}

// _backward_reshape: (ograd, data) -> ograd in data's shape and dtype.
bool BackwardReshapeShape(const NodeAttrs& attrs, ShapeVector* in, ShapeVector* out) {
  const Shape &g = (*in)[0], &x = (*in)[1];
  if (!g.is_known() || !x.is_known()) return false;
  if (g.size() != x.size())
    value_error("[backward_reshape] ograd of shape ", g.str(), " has ", g.size(),
                " elements, expected ", x.size(), " like data of shape ", x.str());
  assign_shape(attrs, &(*out)[0], x, "output", 0);
  return true;
}

bool BackwardDataType(const NodeAttrs& attrs, DTypeVector* in, DTypeVector* out) {
  if ((*in)[1] == DType::kUnknown) return false;
  assign_type(attrs, &(*out)[0], (*in)[1], "output", 0);
  return true;
}

// ============================== transpose ==============================
struct TransposeParam {
  std::optional<Shape> axes;
  static void declare(ParamDecl<TransposeParam>& d) {
    d.field("axes", &TransposeParam::axes)
        .set_default(std::nullopt)
        .describe("A permutation of the axes; None reverses them.");
  }
};

std::vector<int64_t> transpose_perm(const std::optional<Shape>& axes, int ndim) {
  std::vector<int64_t> perm(ndim);
  if (!axes) {
    for (int i = 0; i < ndim; ++i) perm[i] = ndim - 1 - i;
    return perm;
  }
  if (axes->ndim() != ndim)
    value_error("[transpose] axes don't match array: argument 'axes' has ", axes->ndim(),
                " entries ", axes->str(), ", expected ", ndim);
  std::vector<bool> seen(ndim, false);
  for (int i = 0; i < ndim; ++i) {
    perm[i] = normalize_axis((*axes)[i], ndim, "transpose");
    if (seen[perm[i]]) value_error("[transpose] repeated axis in argument 'axes' ", axes->str());
    seen[perm[i]] = true;
  }
  return perm;
}

bool TransposeShape(const NodeAttrs& attrs, ShapeVector* in, ShapeVector* out) {
  const Shape& x = (*in)[0];
  if (!x.is_known()) return false;
  auto perm = transpose_perm(attrs.get<TransposeParam>().axes, x.ndim());
  Shape o = Shape::filled(x.ndim(), 0);
  for (int i = 0; i < x.ndim(); ++i) o[i] = x[static_cast<int>(perm[i])];
  assign_shape(attrs, &(*out)[0], o, "output", 0);
  return true;
}

void TransposeCompute(const NodeAttrs& attrs, const OpContext&, const std::vector<TBlob>& in,
                      const std::vector<OpReqType>& req, const std::vector<TBlob>& out) {
  auto perm = transpose_perm(attrs.get<TransposeParam>().axes, in[0].ndim());
  write_req(as_array(in[0]).transpose(perm), as_array(out[0]), req[0]);
}

std::vector<NodeEntry> TransposeGrad(const NodePtr& n, const std::vector<NodeEntry>& ograds) {
  const auto& axes = n->attrs.get<TransposeParam>().axes;
  std::string dict = "None";
  if (axes) {
    const int nd = axes->ndim();
    Shape inv = *axes;  // invalid axes are left for the forward's validation to report
    bool valid = true;
    std::vector<int64_t> norm(nd);
    for (int i = 0; i < nd && valid; ++i) {
      int64_t a = (*axes)[i] < 0 ? (*axes)[i] + nd : (*axes)[i];
      valid = a >= 0 && a < nd;
      norm[i] = a;
    }
    if (valid)
      for (int i = 0; i < nd; ++i) inv[static_cast<int>(norm[i])] = i;
    dict = inv.str();
  }
  return {make_node("_np_transpose", {ograds[0]}, {{"axes", dict}}, n->attrs.name + "_backward")};
}

// ============================== expand_dims ==============================
struct ExpandDimsParam {
  int64_t axis = 0;
  static void declare(ParamDecl<ExpandDimsParam>& d) {
    d.field("axis", &ExpandDimsParam::axis)
        .describe("Position of the new axis in the expanded shape.");
  }
};

bool ExpandDimsShape(const NodeAttrs& attrs, ShapeVector* in, ShapeVector* out) {
  const Shape& x = (*in)[0];
  if (!x.is_known()) return false;
  if (x.ndim() + 1 > Shape::kMaxDims)
    value_error("[expand_dims] at most ", Shape::kMaxDims, " dimensions are supported");
  int ax = normalize_axis(attrs.get<ExpandDimsParam>().axis, x.ndim() + 1, "expand_dims");
  Shape o;
  for (int i = 0, j = 0; i <= x.ndim(); ++i) o.push_back(i == ax ? 1 : x[j++]);
  assign_shape(attrs, &(*out)[0], o, "output", 0);
  return true;
}

// ============================== squeeze ==============================
struct SqueezeParam {
  std::optional<Shape> axis;
  static void declare(ParamDecl<SqueezeParam>& d) {
    d.field("axis", &SqueezeParam::axis)
        .set_default(std::nullopt)
        .describe("Axes of length one to remove; None removes every length-one axis.");
  }
};

bool SqueezeShape(const NodeAttrs& attrs, ShapeVector* in, ShapeVector* out) {
  const Shape& x = (*in)[0];
  if (!x.is_known()) return false;
  const auto& axis = attrs.get<SqueezeParam>().axis;
  std::vector<bool> drop(x.ndim(), false);
  if (!axis) {
    for (int i = 0; i < x.ndim(); ++i) drop[i] = x[i] == 1;
  } else if (x.ndim() == 0) {
    // NumPy accepts axis 0 and -1 on a 0-d array and returns it unchanged.
    for (int64_t a : *axis)
      if (a != 0 && a != -1)
        axis_error("[squeeze] axis ", a, " is out of bounds for array of dimension 0");
  } else {
    for (int64_t a : *axis) {
      int ax = normalize_axis(a, x.ndim(), "squeeze");
      if (drop[ax]) value_error("[squeeze] duplicate value in argument 'axis' ", axis->str());
      if (x[ax] != 1)
        value_error(
            "[squeeze] cannot select an axis to squeeze out which has size not equal to one; axis ",
            a, " has length ", x[ax], " in shape ", x.str());
      drop[ax] = true;
    }
  }
  Shape o;
  for (int i = 0; i < x.ndim(); ++i)
    if (!drop[i]) o.push_back(x[i]);
  assign_shape(attrs, &(*out)[0], o, "output", 0);
  return true;
}

// ============================== broadcast_to ==============================
struct BroadcastToParam {
  Shape shape;
  static void declare(ParamDecl<BroadcastToParam>& d) {
    d.field("shape", &BroadcastToParam::shape).describe("The shape to broadcast to.");
  }
};

bool BroadcastToShape(const NodeAttrs& attrs, ShapeVector* in, ShapeVector* out) {
  const Shape& x = (*in)[0];
  if (!x.is_known()) return false;
  const Shape& target = attrs.get<BroadcastToParam>().shape;
  for (int64_t d : target)
    if (d < 0)
      value_error("[broadcast_to] all elements of argument 'shape' must be non-negative; got ",
                  target.str());
  if (target.ndim() > Shape::kMaxDims)
    value_error("[broadcast_to] at most ", Shape::kMaxDims, " dimensions are supported, got ",
                target.ndim());
  if (target.ndim() < x.ndim())
    value_error(
        "[broadcast_to] input operand has more dimensions than allowed by the axis remapping: "
        "cannot ",
        "broadcast an array of shape ", x.str(), " to shape ", target.str());
  const int lead = target.ndim() - x.ndim();
  for (int i = 0; i < x.ndim(); ++i)
    if (x[i] != 1 && x[i] != target[lead + i])
      value_error(
          "[broadcast_to] operands could not be broadcast together with remapped shapes: cannot ",
          "broadcast an array of shape ", x.str(), " to shape ", target.str());
  assign_shape(attrs, &(*out)[0], target, "output", 0);
  return true;
}

void BroadcastToCompute(const NodeAttrs&, const OpContext&, const std::vector<TBlob>& in,
                        const std::vector<OpReqType>& req, const std::vector<TBlob>& out) {
  write_req(as_array(in[0]), as_array(out[0]), req[0]);
}

// _backward_broadcast_to: (ograd, data) -> ograd summed down to data's shape.
bool BackwardBroadcastToShape(const NodeAttrs& attrs, ShapeVector* in, ShapeVector* out) {
  const Shape &g = (*in)[0], &x = (*in)[1];
  if (!g.is_known() || !x.is_known()) return false;
  if (broadcast_shapes(g, x, "backward_broadcast_to") != g)
    value_error("[backward_broadcast_to] data of shape ", x.str(),
                " does not broadcast to ograd of shape ", g.str());
  assign_shape(attrs, &(*out)[0], x, "output", 0);
  return true;
}

void BackwardBroadcastToCompute(const NodeAttrs&, const OpContext&, const std::vector<TBlob>& in,
                                const std::vector<OpReqType>& req, const std::vector<TBlob>& out) {
  if (req[0] == kNullOp) return;
  if (in[0].dtype == out[0].dtype) {
    kernel::sum_to_shape(in[0], out[0], req[0]);
    return;
  }
  NDArray tmp(out[0].shape, in[0].dtype, out[0].device);
  kernel::sum_to_shape(in[0], to_blob(tmp), kWriteTo);
  write_req(tmp, as_array(out[0]), req[0]);
}

// ============================== swapaxes ==============================
struct SwapAxesParam {
  int64_t axis1 = 0, axis2 = 0;
  static void declare(ParamDecl<SwapAxesParam>& d) {
    d.field("axis1", &SwapAxesParam::axis1).describe("First axis.");
    d.field("axis2", &SwapAxesParam::axis2).describe("Second axis.");
  }
};

std::vector<int64_t> swap_perm(const SwapAxesParam& p, int ndim) {
  int a = normalize_axis(p.axis1, ndim, "swapaxes"), b = normalize_axis(p.axis2, ndim, "swapaxes");
  std::vector<int64_t> perm(ndim);
  std::iota(perm.begin(), perm.end(), 0);
  std::swap(perm[a], perm[b]);
  return perm;
}

bool SwapAxesShape(const NodeAttrs& attrs, ShapeVector* in, ShapeVector* out) {
  const Shape& x = (*in)[0];
  if (!x.is_known()) return false;
  auto perm = swap_perm(attrs.get<SwapAxesParam>(), x.ndim());
  Shape o = x;
  for (int i = 0; i < x.ndim(); ++i) o[i] = x[static_cast<int>(perm[i])];
  assign_shape(attrs, &(*out)[0], o, "output", 0);
  return true;
}

void SwapAxesCompute(const NodeAttrs& attrs, const OpContext&, const std::vector<TBlob>& in,
                     const std::vector<OpReqType>& req, const std::vector<TBlob>& out) {
  auto perm = swap_perm(attrs.get<SwapAxesParam>(), in[0].ndim());
  write_req(as_array(in[0]).transpose(perm), as_array(out[0]), req[0]);
}

std::vector<NodeEntry> SwapAxesGrad(const NodePtr& n, const std::vector<NodeEntry>& ograds) {
  return {
      make_node("_np_swapaxes", {ograds[0]}, params_dict(n->attrs), n->attrs.name + "_backward")};
}

// ============================== concatenate ==============================
struct ConcatParam {
  int64_t num_args = 1;
  std::optional<int64_t> axis = 0;
  static void declare(ParamDecl<ConcatParam>& d) {
    d.field("num_args", &ConcatParam::num_args)
        .set_range(1, Op::kMaxArity)
        .describe("Number of input arrays.");
    d.field("axis", &ConcatParam::axis)
        .set_default(int64_t{0})
        .describe("The axis to join along; None flattens the inputs first.");
  }
};

uint32_t ConcatNumArgs(const NodeAttrs& attrs) {
  return static_cast<uint32_t>(attrs.get<ConcatParam>().num_args);
}
uint32_t ConcatNumArgsPlusOne(const NodeAttrs& attrs) { return ConcatNumArgs(attrs) + 1; }

// The output shape of concatenating `shapes`; the axis (normalized) in *axis_out (-1 for None).
Shape concat_shape(const char* op, const std::vector<Shape>& shapes,
                   const std::optional<int64_t>& axis, int* axis_out) {
  if (!axis) {
    int64_t total = 0;
    for (const Shape& s : shapes) total += s.size();
    *axis_out = -1;
    return Shape{total};
  }
  const Shape& first = shapes[0];
  if (first.ndim() == 0)
    value_error("[", op, "] zero-dimensional arrays cannot be concatenated; input 0 has shape ()");
  for (size_t i = 1; i < shapes.size(); ++i)
    if (shapes[i].ndim() != first.ndim())
      value_error("[", op, "] all inputs must have the same ndim; input ", i, " has ndim ",
                  shapes[i].ndim(), ", expected ", first.ndim());
  int ax = normalize_axis(*axis, first.ndim(), op);
  Shape o = first;
  for (size_t i = 1; i < shapes.size(); ++i) {
    for (int d = 0; d < first.ndim(); ++d)
      if (d != ax && shapes[i][d] != first[d])
        value_error("[", op,
                    "] all input dimensions except for the concatenation axis must match; input ",
                    i, " has shape ", shapes[i].str(), ", which differs from input 0's ",
                    first.str(), " in dimension ", d);
    o[ax] += shapes[i][ax];
  }
  *axis_out = ax;
  return o;
}

bool ConcatShape(const NodeAttrs& attrs, ShapeVector* in, ShapeVector* out) {
  for (const Shape& s : *in)
    if (!s.is_known()) return false;
  int ax;
  assign_shape(attrs, &(*out)[0],
               concat_shape("concatenate", *in, attrs.get<ConcatParam>().axis, &ax), "output", 0);
  return true;
}

bool PromoteAllType(const NodeAttrs& attrs, DTypeVector* in, DTypeVector* out) {
  for (DType d : *in)
    if (d == DType::kUnknown) return false;
  assign_type(attrs, &(*out)[0], promote_sequence(in->data(), in->size()), "output", 0);
  return true;
}

// The part of `out` that input b lands in: b's shape at offset `off` along `axis`.
TBlob part_of(const TBlob& out, const TBlob& b, int axis, int64_t off) {
  TBlob part = out;
  part.shape = b.shape;
  part.dptr = static_cast<char*>(out.dptr) + off * out.strides[axis] * dtype_size(out.dtype);
  return part;
}

void ConcatCompute(const NodeAttrs& attrs, const OpContext&, const std::vector<TBlob>& in,
                   const std::vector<OpReqType>& req, const std::vector<TBlob>& out) {
  if (req[0] == kNullOp) return;
  const auto& p = attrs.get<ConcatParam>();
  int64_t off = 0;
  if (!p.axis) {  // flattened: each input's elements in C order, one run of out after another
    for (const TBlob& b : in) {
      TBlob part = out[0];
      part.shape = b.shape;
      part.strides = contiguous_strides(b.shape);
      for (int d = 0; d < part.strides.ndim(); ++d) part.strides[d] *= out[0].strides[0];
      part.dptr =
          static_cast<char*>(out[0].dptr) + off * out[0].strides[0] * dtype_size(out[0].dtype);
      kernel::copy(b, part, req[0]);
      off += b.size();
    }
    return;
  }
  const int ax = normalize_axis(*p.axis, out[0].ndim(), "concatenate");
  for (const TBlob& b : in) {
    kernel::copy(b, part_of(out[0], b, ax, off), req[0]);
    off += b.shape[ax];
  }
}

// _backward_concatenate: (ograd, inputs...) -> one gradient per input, in its shape and dtype.
bool BackwardConcatShape(const NodeAttrs& attrs, ShapeVector* in, ShapeVector* out) {
  for (const Shape& s : *in)
    if (!s.is_known()) return false;
  int ax;
  std::vector<Shape> data(in->begin() + 1, in->end());
  Shape expect = concat_shape("backward_concatenate", data, attrs.get<ConcatParam>().axis, &ax);
  if ((*in)[0] != expect)
    value_error("[backward_concatenate] ograd has shape ", (*in)[0].str(), ", expected ",
                expect.str());
  for (size_t i = 0; i < out->size(); ++i)
    assign_shape(attrs, &(*out)[i], data[i], "output", static_cast<int>(i));
  return true;
}

bool BackwardInputsType(const NodeAttrs& attrs, DTypeVector* in, DTypeVector* out) {
  for (size_t i = 0; i < out->size(); ++i) {
    if ((*in)[i + 1] == DType::kUnknown) return false;
    assign_type(attrs, &(*out)[i], (*in)[i + 1], "output", static_cast<int>(i));
  }
  return true;
}

void BackwardConcatCompute(const NodeAttrs& attrs, const OpContext&, const std::vector<TBlob>& in,
                           const std::vector<OpReqType>& req, const std::vector<TBlob>& out) {
  const auto& p = attrs.get<ConcatParam>();
  NDArray g = as_array(in[0]);
  int ax = p.axis ? normalize_axis(*p.axis, g.ndim(), "backward_concatenate") : 0;
  int64_t off = 0;
  for (size_t i = 0; i < out.size(); ++i) {
    const int64_t len = p.axis ? out[i].shape[ax] : out[i].size();
    NDArray part = g.slice(ax, off, off + len);
    off += len;
    if (p.axis)
      write_req(part, as_array(out[i]), req[i]);
    else
      reshape_copy(to_blob(part), out[i], req[i]);
  }
}

// ============================== stack ==============================
struct StackParam {
  int64_t num_args = 1;
  int64_t axis = 0;
  static void declare(ParamDecl<StackParam>& d) {
    d.field("num_args", &StackParam::num_args)
        .set_range(1, Op::kMaxArity)
        .describe("Number of input arrays.");
    d.field("axis", &StackParam::axis)
        .set_default(int64_t{0})
        .describe("The axis of the result the inputs are stacked along.");
  }
};

uint32_t StackNumArgs(const NodeAttrs& attrs) {
  return static_cast<uint32_t>(attrs.get<StackParam>().num_args);
}
uint32_t StackNumArgsPlusOne(const NodeAttrs& attrs) { return StackNumArgs(attrs) + 1; }

Shape stack_shape(const char* op, const std::vector<Shape>& shapes, int64_t axis, int* axis_out) {
  const Shape& first = shapes[0];
  for (size_t i = 1; i < shapes.size(); ++i)
    if (shapes[i] != first)
      value_error("[", op, "] all input arrays must have the same shape; input ", i, " has shape ",
                  shapes[i].str(), ", expected ", first.str());
  if (first.ndim() + 1 > Shape::kMaxDims)
    value_error("[", op, "] at most ", Shape::kMaxDims, " dimensions are supported");
  int ax = normalize_axis(axis, first.ndim() + 1, op);
  Shape o;
  for (int i = 0, j = 0; i <= first.ndim(); ++i)
    o.push_back(i == ax ? static_cast<int64_t>(shapes.size()) : first[j++]);
  *axis_out = ax;
  return o;
}

bool StackShape(const NodeAttrs& attrs, ShapeVector* in, ShapeVector* out) {
  for (const Shape& s : *in)
    if (!s.is_known()) return false;
  int ax;
  assign_shape(attrs, &(*out)[0], stack_shape("stack", *in, attrs.get<StackParam>().axis, &ax),
               "output", 0);
  return true;
}

void StackCompute(const NodeAttrs& attrs, const OpContext&, const std::vector<TBlob>& in,
                  const std::vector<OpReqType>& req, const std::vector<TBlob>& out) {
  if (req[0] == kNullOp) return;
  const int ax = normalize_axis(attrs.get<StackParam>().axis, out[0].ndim(), "stack");
  for (size_t j = 0; j < in.size(); ++j) {  // input j is out[..., j, ...] along the new axis
    TBlob part = out[0];
    part.shape = in[j].shape;
    part.strides = Shape();
    for (int d = 0; d < out[0].ndim(); ++d)
      if (d != ax) part.strides.push_back(out[0].strides[d]);
    part.dptr = static_cast<char*>(out[0].dptr) +
                static_cast<int64_t>(j) * out[0].strides[ax] * dtype_size(out[0].dtype);
    kernel::copy(in[j], part, req[0]);
  }
}

// _backward_stack: (ograd, inputs...) -> one gradient per input.
bool BackwardStackShape(const NodeAttrs& attrs, ShapeVector* in, ShapeVector* out) {
  for (const Shape& s : *in)
    if (!s.is_known()) return false;
  int ax;
  std::vector<Shape> data(in->begin() + 1, in->end());
  Shape expect = stack_shape("backward_stack", data, attrs.get<StackParam>().axis, &ax);
  if ((*in)[0] != expect)
    value_error("[backward_stack] ograd has shape ", (*in)[0].str(), ", expected ", expect.str());
  for (size_t i = 0; i < out->size(); ++i)
    assign_shape(attrs, &(*out)[i], data[i], "output", static_cast<int>(i));
  return true;
}

void BackwardStackCompute(const NodeAttrs& attrs, const OpContext&, const std::vector<TBlob>& in,
                          const std::vector<OpReqType>& req, const std::vector<TBlob>& out) {
  NDArray g = as_array(in[0]);
  const int ax = normalize_axis(attrs.get<StackParam>().axis, g.ndim(), "backward_stack");
  for (size_t j = 0; j < out.size(); ++j)
    write_req(g.slice(ax, static_cast<int64_t>(j), static_cast<int64_t>(j) + 1),
              as_array(out[j]).expand_dims(ax), req[j]);
}

// ============================== split ==============================
struct SplitParam {
  Shape indices;
  int64_t sections = 0;
  int64_t axis = 0;
  static void declare(ParamDecl<SplitParam>& d) {
    d.field("indices", &SplitParam::indices)
        .set_default(Shape{})
        .describe("Split points along the axis (as numpy.split); used when sections is 0.");
    d.field("sections", &SplitParam::sections)
        .set_default(int64_t{0})
        .describe("Number of equal parts; 0 means split at `indices` instead.");
    d.field("axis", &SplitParam::axis).set_default(int64_t{0}).describe("The axis to split along.");
  }
};

uint32_t SplitNumOutputs(const NodeAttrs& attrs) {
  const auto& p = attrs.get<SplitParam>();
  if (p.sections > Op::kMaxArity)  // before the cast: 2**32 sections must not become 0
    value_error("[split] ", p.sections, " sections is more than ndx supports (", Op::kMaxArity,
                ")");
  return static_cast<uint32_t>(p.sections > 0 ? p.sections : p.indices.ndim() + 1);
}

// [begin, end) of every part along an axis of length n, as numpy.split's slices.
std::vector<std::pair<int64_t, int64_t>> split_ranges(const SplitParam& p, int64_t n) {
  if (p.sections < 0)
    value_error("[split] argument 'sections' must be larger than 0, got ", p.sections);
  if (p.sections > 0 && p.indices.ndim() > 0)
    value_error("[split] give either argument 'sections' or 'indices', not both; got sections=",
                p.sections, " and indices=", p.indices.str());
  std::vector<std::pair<int64_t, int64_t>> r;
  if (p.sections > 0) {
    if (n % p.sections != 0)
      value_error("[split] array split does not result in an equal division: axis of length ", n,
                  " into ", p.sections, " sections");
    const int64_t step = n / p.sections;
    for (int64_t i = 0; i < p.sections; ++i) r.emplace_back(i * step, (i + 1) * step);
    return r;
  }
  auto clamp = [n](int64_t v) { return std::clamp<int64_t>(v < 0 ? v + n : v, 0, n); };
  int64_t prev = 0;
  for (int64_t idx : p.indices) {
    int64_t e = clamp(idx);
    r.emplace_back(prev, std::max(prev, e));
    prev = e;
  }
  r.emplace_back(prev, std::max(prev, n));
  return r;
}

bool SplitShape(const NodeAttrs& attrs, ShapeVector* in, ShapeVector* out) {
  const Shape& x = (*in)[0];
  if (!x.is_known()) return false;
  const auto& p = attrs.get<SplitParam>();
  const int ax = normalize_axis(p.axis, x.ndim(), "split");
  auto ranges = split_ranges(p, x[ax]);
  for (size_t j = 0; j < out->size(); ++j) {
    Shape o = x;
    o[ax] = ranges[j].second - ranges[j].first;
    assign_shape(attrs, &(*out)[j], o, "output", static_cast<int>(j));
  }
  return true;
}

void SplitCompute(const NodeAttrs& attrs, const OpContext&, const std::vector<TBlob>& in,
                  const std::vector<OpReqType>& req, const std::vector<TBlob>& out) {
  const auto& p = attrs.get<SplitParam>();
  NDArray x = as_array(in[0]);
  const int ax = normalize_axis(p.axis, x.ndim(), "split");
  auto ranges = split_ranges(p, x.shape()[ax]);
  for (size_t j = 0; j < out.size(); ++j)
    write_req(x.slice(ax, ranges[j].first, ranges[j].second), as_array(out[j]), req[j]);
}

std::vector<NodeEntry> SplitGrad(const NodePtr& n, const std::vector<NodeEntry>& ograds) {
  const auto& p = n->attrs.get<SplitParam>();
  return {make_node("_npi_concatenate", ograds,
                    {{"num_args", std::to_string(ograds.size())}, {"axis", std::to_string(p.axis)}},
                    n->attrs.name + "_backward")};
}

// The backward of concatenate / stack is linear in the output gradient and reads the inputs
// for their shapes only: its own gradient joins the incoming gradients again (so a gradient
// penalty through concatenate differentiates twice), and none reaches the inputs.
FGradient rejoin_gradient(const char* join) {
  return [join](const NodePtr& n, const std::vector<NodeEntry>& ograds) {
    std::vector<NodeEntry> grads{
        make_node(join, ograds, params_dict(n->attrs), n->attrs.name + "_backward")};
    for (size_t i = 1; i < n->inputs.size(); ++i)
      grads.push_back(make_node("_np_zeros_like", {n->inputs[i]}));
    return grads;
  };
}

// ============================== pad ==============================
// NumPy's pad for the modes that copy elements (edge, reflect, symmetric, wrap) or put one
// value around the array (constant), in one pass: each output row (the last axis) is its
// source row's border elements, the row itself and the far border, so every output byte is
// written once and the input read once. (numpy.pad, and ndx's Python composition before,
// copy the array into the middle and then mirror each axis's borders out of the output.)
// Along each axis an output index maps to a source index (NumPy's axis-by-axis padding of
// the padded array composes to exactly that), or, in constant mode, to the fill.
struct PadParam {
  Shape pad_width;
  std::string mode = "constant";
  double constant_value = 0;
  static void declare(ParamDecl<PadParam>& d) {
    d.field("pad_width", &PadParam::pad_width)
        .describe("(before, after) of each axis in turn: 2 * ndim widths, each >= 0.");
    d.field("mode", &PadParam::mode)
        .set_default(std::string("constant"))
        .set_enum({"constant", "edge", "reflect", "symmetric", "wrap"})
        .describe(
            "constant: the value; edge: the end element; reflect: mirrored without the end "
            "element; symmetric: mirrored with it; wrap: the other end's elements.");
    d.field("constant_value", &PadParam::constant_value)
        .set_default(0.0)
        .describe("The fill of constant mode, cast to the array's dtype.");
  }
};

// The source index along an axis of length n for padded index i (counted from the array's
// start, so negative in the leading border); -1 for constant mode's fill.
int64_t pad_source(int64_t i, int64_t n, const std::string& mode) {
  if (i >= 0 && i < n) return i;
  auto mod = [](int64_t a, int64_t m) { return ((a % m) + m) % m; };
  if (mode == "constant") return -1;
  if (mode == "edge") return i < 0 ? 0 : n - 1;
  if (mode == "wrap") return mod(i, n);
  if (mode == "symmetric") {
    const int64_t r = mod(i, 2 * n);
    return r < n ? r : 2 * n - 1 - r;
  }
  if (n == 1) return 0;  // reflect
  const int64_t r = mod(i, 2 * (n - 1));
  return r < n ? r : 2 * (n - 1) - r;
}

// The padded shape of s, the params checked against it.
Shape padded_shape(const PadParam& p, const Shape& s) {
  if (p.pad_width.ndim() != 2 * s.ndim())
    value_error("[pad] pad_width must hold 2 widths per axis (", 2 * s.ndim(), " for shape ",
                s.str(), "), got ", p.pad_width.str());
  Shape o = s;
  for (int d = 0; d < s.ndim(); ++d) {
    const int64_t before = p.pad_width[2 * d], after = p.pad_width[2 * d + 1];
    if (before < 0 || after < 0) value_error("[pad] widths must be >= 0, got ", p.pad_width.str());
    if (s[d] == 0 && before + after > 0 && p.mode != "constant")
      value_error("[pad] can't extend empty axis ", d, " using modes other than 'constant'");
    if (before > (int64_t{1} << 40) || after > (int64_t{1} << 40))
      value_error("[pad] width ", std::max(before, after), " is too large");
    o[d] = s[d] + before + after;
  }
  checked_size(o, dtype_size(DType::kFloat64), "pad");
  return o;
}

bool PadShape(const NodeAttrs& attrs, ShapeVector* in, ShapeVector* out) {
  if (!(*in)[0].is_known()) return false;
  assign_shape(attrs, &(*out)[0], padded_shape(attrs.get<PadParam>(), (*in)[0]), "output", 0);
  return true;
}

// Where the padded output's elements come from: per outer axis, the source index of each
// output index (-1: constant fill); along the last axis the same, with -2 where the source
// row itself starts (copied whole).
struct PadTables {
  std::vector<std::vector<int64_t>> source;
  std::vector<int64_t> edge;

  // The input row (its number) that the output row at `idx` (its index over the outer axes)
  // copies, or -1 for a row of fill.
  int64_t source_row(const std::vector<int64_t>& idx, const Shape& in_shape) const {
    int64_t off = 0;
    for (size_t d = 0; d < idx.size() && off >= 0; ++d) {
      const int64_t k = source[d][static_cast<size_t>(idx[d])];
      off = k < 0 ? -1 : off * in_shape[static_cast<int>(d)] + k;
    }
    return off;
  }
};

// The index over out_shape's outer axes (all but the last) of output row r.
std::vector<int64_t> row_index(int64_t r, const Shape& out_shape) {
  std::vector<int64_t> idx(static_cast<size_t>(out_shape.ndim() - 1));
  for (int d = out_shape.ndim() - 2; d >= 0; --d) {
    idx[static_cast<size_t>(d)] = r % out_shape[d];
    r /= out_shape[d];
  }
  return idx;
}

// idx moved on to the next row's index.
void next_row(std::vector<int64_t>& idx, const Shape& out_shape) {
  for (int d = static_cast<int>(idx.size()) - 1; d >= 0; --d) {
    if (++idx[static_cast<size_t>(d)] < out_shape[d]) return;
    idx[static_cast<size_t>(d)] = 0;
  }
}

PadTables pad_tables(const PadParam& p, const Shape& in_shape, const Shape& out_shape) {
  const int nd = in_shape.ndim();
  PadTables t;
  t.source.resize(static_cast<size_t>(nd - 1));
  for (int d = 0; d < nd - 1; ++d)
    for (int64_t i = 0; i < out_shape[d]; ++i)
      t.source[static_cast<size_t>(d)].push_back(
          pad_source(i - p.pad_width[2 * d], in_shape[d], p.mode));
  const int64_t n = in_shape[nd - 1], before = p.pad_width[2 * nd - 2];
  for (int64_t j = 0; j < out_shape[nd - 1]; ++j)
    t.edge.push_back(j == before && n > 0 ? -2 : pad_source(j - before, n, p.mode));
  return t;
}

// Rows [r0, r1) of the padded output (all axes but the last flattened), element size E.
template <size_t E>
void pad_rows(const char* src, char* dst, const Shape& in_shape, const Shape& out_shape,
              const PadTables& t, const char* fill, int64_t r0, int64_t r1) {
  struct Elem {
    unsigned char b[E];
  };
  const int nd = in_shape.ndim();
  const int64_t n = in_shape[nd - 1], w = out_shape[nd - 1];
  const Elem f = *reinterpret_cast<const Elem*>(fill);
  std::vector<int64_t> idx = row_index(r0, out_shape);
  for (int64_t r = r0; r < r1; ++r, next_row(idx, out_shape)) {
    Elem* o = reinterpret_cast<Elem*>(dst) + r * w;
    const int64_t off = t.source_row(idx, in_shape);
    if (off < 0) {
      std::fill(o, o + w, f);
      continue;
    }
    const Elem* row = reinterpret_cast<const Elem*>(src) + off * n;
    for (int64_t j = 0; j < w; ++j) {
      const int64_t k = t.edge[static_cast<size_t>(j)];
      if (k == -2) {  // the row itself: one copy, then on past it
        std::memcpy(o + j, row, static_cast<size_t>(n) * E);
        j += n - 1;
      } else {
        o[j] = k < 0 ? f : row[k];
      }
    }
  }
}

void PadCompute(const NodeAttrs& attrs, const OpContext&, const std::vector<TBlob>& in,
                const std::vector<OpReqType>& req, const std::vector<TBlob>& out) {
  if (req[0] == kNullOp || out[0].size() == 0) return;
  if (req[0] == kAddTo) {  // padded into a scratch array, then added
    NDArray tmp(out[0].shape, out[0].dtype, cpu());
    PadCompute(attrs, {}, in, {kWriteTo}, {to_blob(tmp)});
    write_req(tmp, as_array(out[0]), kAddTo);
    return;
  }
  const auto& p = attrs.get<PadParam>();
  const TBlob& x = in[0];
  const int nd = x.ndim();
  const NDArray fill_value = NDArray::scalar(p.constant_value, x.dtype);
  const char* fill = static_cast<const char*>(fill_value.raw_data());
  const size_t esize = static_cast<size_t>(dtype_size(x.dtype));
  if (nd == 0) {
    std::memcpy(out[0].dptr, x.dptr, esize);
    return;
  }
  const PadTables t = pad_tables(p, x.shape, out[0].shape);
  const int64_t rows = out[0].size() / out[0].shape[nd - 1];
  const int64_t grain =
      std::max<int64_t>(1, kernel::kGrain / std::max<int64_t>(out[0].shape[nd - 1], 1));
  const auto* src = static_cast<const char*>(x.dptr);
  auto* dst = static_cast<char*>(out[0].dptr);
  auto run = [&](auto elem) {
    constexpr size_t E = decltype(elem)::value;
    kernel::parallel_for(rows, grain, [&](int64_t r0, int64_t r1) {
      pad_rows<E>(src, dst, x.shape, out[0].shape, t, fill, r0, r1);
    });
  };
  kernel::with_element_size(static_cast<int64_t>(esize), "pad", run);
}

// _backward_pad: (ograd, data) -> each output element's gradient added into the element it
// was copied from (fill adds nothing). Rows that share a source row add into it in turn, so
// this runs on one thread.
bool BackwardPadShape(const NodeAttrs& attrs, ShapeVector* in, ShapeVector* out) {
  if (!(*in)[0].is_known() || !(*in)[1].is_known()) return false;
  const Shape expect = padded_shape(attrs.get<PadParam>(), (*in)[1]);
  if ((*in)[0] != expect)
    value_error("[backward_pad] ograd has shape ", (*in)[0].str(), ", expected the padded shape ",
                expect.str());
  assign_shape(attrs, &(*out)[0], (*in)[1], "output", 0);
  return true;
}

// Whether two blobs' bytes overlap (an in-place gradient may write over its ograd).
bool overlaps(const TBlob& a, const TBlob& b) {
  const auto* a0 = static_cast<const char*>(a.dptr);
  const auto* b0 = static_cast<const char*>(b.dptr);
  return a0 < b0 + b.size() * dtype_size(b.dtype) && b0 < a0 + a.size() * dtype_size(a.dtype);
}

// A gradient that adds ograd's elements back where they came from: body(a, og) adds into a
// zeroed accumulator a of out's shape, og being ograd, both in the accumulation type; then
// out (req) a. A written contiguous output of the accumulation type is the accumulator
// itself (zeroed by a threaded fill): no second array of out's size to fill and copy, which
// for a large table taken from (an embedding's weight) cost more than the gradient itself.
template <class Body>
void add_back_into(const TBlob& ograd, const TBlob& out, OpReqType req, const char* who,
                   Body body) {
  const DType ct = compute_dtype(out.dtype);
  if (req == kWriteTo && out.dtype == ct && out.device.is_cpu() && out.is_contiguous() &&
      !overlaps(out, ograd)) {
    std::vector<NDArray> keep;
    const TBlob g = kernel::cast_blob(ograd, ct, &keep);
    kernel::fill_output(out, kWriteTo, 0);
    kernel::with_any_compute_type(ct, who, [&](auto c) {
      using C = decltype(c);
      body(static_cast<C*>(out.dptr), g.ptr<C>());
    });
    return;
  }
  NDArray acc(out.shape, ct, cpu());
  std::vector<NDArray> keep;
  const TBlob g = kernel::cast_blob(ograd, ct, &keep);
  kernel::with_any_compute_type(ct, who, [&](auto c) {
    using C = decltype(c);
    C* a = static_cast<C*>(acc.raw_data());
    std::fill(a, a + acc.size(), C(0));
    body(a, g.ptr<C>());
  });
  write_req(acc, as_array(out), req);
}

void BackwardPadCompute(const NodeAttrs& attrs, const OpContext&, const std::vector<TBlob>& in,
                        const std::vector<OpReqType>& req, const std::vector<TBlob>& out) {
  if (req[0] == kNullOp || out[0].size() == 0) return;
  const auto& p = attrs.get<PadParam>();
  const Shape &xs = in[1].shape, &os = in[0].shape;
  const int nd = xs.ndim();
  add_back_into(in[0], out[0], req[0], "backward_pad", [&](auto* a, const auto* og) {
    if (nd == 0) {
      a[0] = og[0];
      return;
    }
    const PadTables t = pad_tables(p, xs, os);
    const int64_t n = xs[nd - 1], w = os[nd - 1], rows = in[0].size() / w;
    std::vector<int64_t> idx = row_index(0, os);
    for (int64_t r = 0; r < rows; ++r, next_row(idx, os)) {
      const int64_t off = t.source_row(idx, xs);
      if (off < 0) continue;
      auto* row = a + off * n;
      const auto* o = og + r * w;
      for (int64_t j = 0; j < w; ++j) {
        const int64_t k = t.edge[static_cast<size_t>(j)];
        if (k == -2) {
          for (int64_t q = 0; q < n; ++q) row[q] = kernel::wrap_add(row[q], o[j + q]);
          j += n - 1;
        } else if (k >= 0) {
          row[k] = kernel::wrap_add(row[k], o[j]);
        }
      }
    }
  });
}

// ============================== take_along_axis ==============================
// out[..., j, ...] = arr[..., indices[..., j, ...], ...] along `axis`, indices matching arr in
// every other axis (np.take_along_axis broadcasts other shapes in Python first), negative
// indices counting from the end: one pass over the indices, checked as they are read.
struct TakeAlongAxisParam {
  int64_t axis = -1;
  static void declare(ParamDecl<TakeAlongAxisParam>& d) {
    d.field("axis", &TakeAlongAxisParam::axis).describe("The axis the indices select along.");
  }
};

// The sizes of the axes before and after `axis` (each product 1 when there are none).
std::pair<int64_t, int64_t> around_axis(const Shape& s, int axis) {
  int64_t outer = 1, inner = 1;
  for (int d = 0; d < s.ndim(); ++d) {
    if (d < axis) outer *= s[d];
    if (d > axis) inner *= s[d];
  }
  return {outer, inner};
}

// The axis, arr's and the indices' shapes checked against each other.
int take_along_axis_checked(const NodeAttrs& attrs, const Shape& a, const Shape& idx) {
  if (a.ndim() == 0 || a.ndim() != idx.ndim())
    value_error("[take_along_axis] indices must have arr's number of dimensions (>= 1), got ",
                idx.str(), " for arr ", a.str());
  const int ax = normalize_axis(attrs.get<TakeAlongAxisParam>().axis, a.ndim(), "take_along_axis");
  for (int d = 0; d < a.ndim(); ++d)
    if (d != ax && a[d] != idx[d])
      value_error("[take_along_axis] indices of shape ", idx.str(), " must match arr's shape ",
                  a.str(), " outside axis ", ax);
  if (a[ax] == 0 && idx[ax] > 0)
    index_error("[take_along_axis] cannot take from an empty axis ", ax);
  return ax;
}

bool TakeAlongAxisShape(const NodeAttrs& attrs, ShapeVector* in, ShapeVector* out) {
  const Shape &a = (*in)[0], &idx = (*in)[1];
  if (!a.is_known() || !idx.is_known()) return false;
  take_along_axis_checked(attrs, a, idx);
  assign_shape(attrs, &(*out)[0], idx, "output", 0);
  return true;
}

bool TakeAlongAxisType(const NodeAttrs& attrs, DTypeVector* in, DTypeVector* out) {
  if ((*in)[0] == DType::kUnknown || (*in)[1] == DType::kUnknown) return false;
  if ((*in)[1] != DType::kInt64 && (*in)[1] != DType::kInt32)
    type_error("[take_along_axis] indices must be int32 or int64, got ", (*in)[1]);
  assign_type(attrs, &(*out)[0], (*in)[0], "output", 0);
  return true;
}

// Rows [o0, o1) of the (outer, m, inner) output; false (the index in *bad) at an index out of
// range.
template <size_t E, class I>
bool take_rows(const char* arr, const I* idx, char* out, int64_t n, int64_t m, int64_t inner,
               int64_t o0, int64_t o1, int64_t* bad) {
  struct Elem {
    unsigned char b[E];
  };
  const auto* a = reinterpret_cast<const Elem*>(arr);
  auto* y = reinterpret_cast<Elem*>(out);
  for (int64_t o = o0; o < o1; ++o)
    for (int64_t j = 0; j < m; ++j) {
      const I* ij = idx + (o * m + j) * inner;
      Elem* yj = y + (o * m + j) * inner;
      for (int64_t i = 0; i < inner; ++i) {
        const int64_t k = static_cast<int64_t>(ij[i]), kk = k < 0 ? k + n : k;
        if (static_cast<uint64_t>(kk) >= static_cast<uint64_t>(n)) {
          *bad = k;
          return false;
        }
        yj[i] = a[(o * n + kk) * inner + i];
      }
    }
  return true;
}

void TakeAlongAxisCompute(const NodeAttrs& attrs, const OpContext&, const std::vector<TBlob>& in,
                          const std::vector<OpReqType>& req, const std::vector<TBlob>& out) {
  if (req[0] == kNullOp || out[0].size() == 0) return;
  if (req[0] == kAddTo) {
    NDArray tmp(out[0].shape, out[0].dtype, cpu());
    TakeAlongAxisCompute(attrs, {}, in, {kWriteTo}, {to_blob(tmp)});
    write_req(tmp, as_array(out[0]), kAddTo);
    return;
  }
  const TBlob &a = in[0], &idx = in[1];
  const int ax = normalize_axis(attrs.get<TakeAlongAxisParam>().axis, a.ndim(), "take_along_axis");
  const auto [outer, inner] = around_axis(a.shape, ax);
  const int64_t n = a.shape[ax], m = idx.shape[ax];
  const int64_t grain = std::max<int64_t>(1, kernel::kGrain / std::max<int64_t>(m * inner, 1));
  std::atomic<bool> failed{false};
  std::atomic<int64_t> bad{0};  // an out-of-range index seen
  auto run = [&](auto elem, auto index) {
    constexpr size_t E = decltype(elem)::value;
    using I = decltype(index);
    kernel::parallel_for(outer, grain, [&](int64_t o0, int64_t o1) {
      int64_t k = 0;
      if (!take_rows<E, I>(static_cast<const char*>(a.dptr), idx.ptr<I>(),
                           static_cast<char*>(out[0].dptr), n, m, inner, o0, o1, &k)) {
        bad = k;
        failed = true;
      }
    });
  };
  auto with_index = [&](auto elem) {
    if (idx.dtype == DType::kInt64)
      run(elem, int64_t{});
    else
      run(elem, int32_t{});
  };
  kernel::with_element_size(dtype_size(a.dtype), "take_along_axis", with_index);
  if (failed)
    index_error("[take_along_axis] index ", bad.load(), " is out of bounds for axis ", ax,
                " with size ", n);
}

bool BackwardTakeAlongAxisType(const NodeAttrs& attrs, DTypeVector* in, DTypeVector* out) {
  if ((*in)[2] != DType::kUnknown && (*in)[2] != DType::kInt64 && (*in)[2] != DType::kInt32)
    type_error("[backward_take_along_axis] indices must be int32 or int64, got ", (*in)[2]);
  return BackwardInputsType(attrs, in, out);
}

// _backward_take_along_axis: (ograd, arr, indices) -> (each output element's gradient added
// into the element it was taken from, zeros for the indices); one thread, as picks repeat.
bool BackwardTakeAlongAxisShape(const NodeAttrs& attrs, ShapeVector* in, ShapeVector* out) {
  for (const Shape& sh : *in)
    if (!sh.is_known()) return false;
  take_along_axis_checked(attrs, (*in)[1], (*in)[2]);
  if ((*in)[0] != (*in)[2])
    value_error("[backward_take_along_axis] ograd has shape ", (*in)[0].str(),
                ", expected the indices' ", (*in)[2].str());
  assign_shape(attrs, &(*out)[0], (*in)[1], "output", 0);
  assign_shape(attrs, &(*out)[1], (*in)[2], "output", 1);
  return true;
}

void BackwardTakeAlongAxisCompute(const NodeAttrs& attrs, const OpContext&,
                                  const std::vector<TBlob>& in, const std::vector<OpReqType>& req,
                                  const std::vector<TBlob>& out) {
  kernel::fill_output(out[1], req[1], 0);
  if (req[0] == kNullOp || out[0].size() == 0) return;
  const TBlob& idx = in[2];
  const Shape& xs = in[1].shape;
  const int ax = normalize_axis(attrs.get<TakeAlongAxisParam>().axis, xs.ndim(), "take_along_axis");
  const auto [outer, inner] = around_axis(xs, ax);
  const int64_t n = xs[ax], m = idx.shape[ax];
  add_back_into(in[0], out[0], req[0], "backward_take_along_axis", [&](auto* a, const auto* og) {
    auto add = [&](auto index) {
      using I = decltype(index);
      const I* ix = idx.ptr<I>();
      for (int64_t o = 0; o < outer; ++o)
        for (int64_t j = 0; j < m; ++j)
          for (int64_t i = 0; i < inner; ++i) {
            const int64_t e = (o * m + j) * inner + i, k = static_cast<int64_t>(ix[e]);
            const int64_t kk = k < 0 ? k + n : k;
            if (static_cast<uint64_t>(kk) >= static_cast<uint64_t>(n))
              index_error("[backward_take_along_axis] index ", k, " is out of bounds for axis ", ax,
                          " with size ", n);
            auto& dst = a[(o * n + kk) * inner + i];
            dst = kernel::wrap_add(dst, og[e]);
          }
    };
    if (idx.dtype == DType::kInt64)
      add(int64_t{});
    else
      add(int32_t{});
  });
}

// ============================== take ==============================
// numpy.take / MXNet's take along one axis: out = a[:, ..., indices, ...] (the indices' shape
// in place of the axis), each index wrapped, clipped or (mode 'raise') checked, negative ones
// counting from the end. MXNet graphs use it for embedding-like lookups.
struct TakeParam {
  int64_t axis = 0;
  std::string mode = "clip";
  static void declare(ParamDecl<TakeParam>& d) {
    d.field("axis", &TakeParam::axis).set_default(int64_t{0}).describe("The axis taken along.");
    d.field("mode", &TakeParam::mode)
        .set_default(std::string("clip"))
        .set_enum({"raise", "wrap", "clip"})
        .describe("Out-of-range indices: raise (IndexError), wrap (modulo) or clip (to the ends).");
  }
};

int take_axis(const NodeAttrs& attrs, const Shape& a) {
  if (a.ndim() == 0) value_error("[take] a must have at least one dimension");
  return normalize_axis(attrs.get<TakeParam>().axis, a.ndim(), "take");
}

// Index k of an axis of n, by the mode; -1 when out of range under 'raise'.
int64_t take_index(int64_t k, int64_t n, char mode) {
  if (mode == 'w') return ((k % n) + n) % n;
  if (mode == 'c') return k < 0 ? 0 : (k >= n ? n - 1 : k);
  const int64_t kk = k < 0 ? k + n : k;
  return kk >= 0 && kk < n ? kk : -1;
}

// a's shape with the indices' shape in place of the axis.
Shape take_shape(const NodeAttrs& attrs, const Shape& a, const Shape& idx) {
  const int ax = take_axis(attrs, a);
  if (a[ax] == 0 && idx.size() > 0)
    index_error("[take] cannot do a non-empty take from an empty axis ", ax);
  std::vector<int64_t> dims;
  for (int d = 0; d < ax; ++d) dims.push_back(a[d]);
  for (int d = 0; d < idx.ndim(); ++d) dims.push_back(idx[d]);
  for (int d = ax + 1; d < a.ndim(); ++d) dims.push_back(a[d]);
  return Shape(dims);
}

bool TakeShape(const NodeAttrs& attrs, ShapeVector* in, ShapeVector* out) {
  const Shape &a = (*in)[0], &idx = (*in)[1];
  if (!a.is_known() || !idx.is_known()) return false;
  assign_shape(attrs, &(*out)[0], take_shape(attrs, a, idx), "output", 0);
  return true;
}

bool TakeType(const NodeAttrs& attrs, DTypeVector* in, DTypeVector* out) {
  if ((*in)[0] == DType::kUnknown || (*in)[1] == DType::kUnknown) return false;
  if (!is_integer((*in)[1]) && !is_float((*in)[1]))
    type_error("[take] indices must be integers (or floats, truncated as MXNet's), got ", (*in)[1]);
  assign_type(attrs, &(*out)[0], (*in)[0], "output", 0);
  return true;
}

// The source row (along the axis) of each index, by the mode, computed where it is used: the
// indices are read as int64 (floats truncate, as MXNet's) and, under 'raise', checked in one
// threaded pass first, so an index out of range is an IndexError before anything is written.
// (A vector of the rows cost a second array as large as the indices: 16M indices took 1.3x
// the gather of an indexing call.)
class TakeRows {
 public:
  TakeRows(const NodeAttrs& attrs, const TBlob& idx, int64_t n, int ax)
      : mode_(attrs.get<TakeParam>().mode[0]), n_(n) {
    const TBlob ix = kernel::cast_blob(idx, DType::kInt64, &keep_);
    k_ = ix.ptr<int64_t>();
    size_ = ix.size();
    if (mode_ != 'w' && mode_ != 'c') check(ax);
  }
  int64_t size() const { return size_; }

  // f(row), row(j) the source row of index j: one instance per mode, so the loops that call
  // it have no branch on the mode (a checked 'raise' index only needs its sign fixed).
  template <class F>
  void with_rows(F f) const {
    const int64_t *k = k_, n = n_;
    if (mode_ == 'w') return f([k, n](int64_t j) { return ((k[j] % n) + n) % n; });
    if (mode_ == 'c') return f([k, n](int64_t j) { return std::clamp<int64_t>(k[j], 0, n - 1); });
    f([k, n](int64_t j) { return k[j] + (n & (k[j] >> 63)); });
  }

 private:
  void check(int ax) const {
    std::atomic<bool> bad{false};
    kernel::parallel_for(size_, kernel::kGrain, [&](int64_t j0, int64_t j1) {
      const auto span = static_cast<uint64_t>(2 * n_);  // k in [-n, n): k + n in [0, 2n)
      bool out = false;                                 // (no early exit: the loop vectorizes)
      for (int64_t j = j0; j < j1; ++j)
        out |= static_cast<uint64_t>(k_[j]) + static_cast<uint64_t>(n_) >= span;  // (wraps)
      if (out) bad.store(true, std::memory_order_relaxed);
    });
    if (!bad.load()) return;
    int64_t j = 0;
    while (take_index(k_[j], n_, mode_) >= 0) ++j;
    index_error("[take] index ", k_[j], " is out of bounds for axis ", ax, " with size ", n_);
  }

  std::vector<NDArray> keep_;
  const int64_t* k_ = nullptr;
  int64_t size_ = 0;
  char mode_;
  int64_t n_;
};

// Taking along the last axis: one element a row, moved as a word of the element's size (a
// memcpy call per element took 2.5x the whole gather), threads splitting the elements. The
// source of the element kAhead places on is prefetched: a 16M-element random gather from 64 MB
// went from 0.77 to 1.08 times NumPy's speed (bench/kernels.py "take 16M", one thread).
template <size_t E, class Row>
void gather_elements(const char* src, char* dst, int64_t outer, int64_t n, int64_t m, Row row) {
  using W = kernel::Word<E>;
  constexpr int64_t kAhead = 32;
  const auto* from = reinterpret_cast<const W*>(src);
  auto* to = reinterpret_cast<W*>(dst);
  kernel::parallel_for(outer * m, kernel::kGrain, [&](int64_t r0, int64_t r1) {
    int64_t o = r0 / m, j = r0 % m;
    for (int64_t r = r0; r < r1; ++r) {
      if (j + kAhead < m) __builtin_prefetch(from + o * n + row(j + kAhead));
      to[r] = from[o * n + row(j)];
      if (++j == m) j = 0, ++o;
    }
  });
}

void TakeCompute(const NodeAttrs& attrs, const OpContext&, const std::vector<TBlob>& in,
                 const std::vector<OpReqType>& req, const std::vector<TBlob>& out) {
  if (req[0] == kNullOp || out[0].size() == 0) return;
  if (req[0] == kAddTo) {
    NDArray tmp(out[0].shape, out[0].dtype, cpu());
    TakeCompute(attrs, {}, in, {kWriteTo}, {to_blob(tmp)});
    write_req(tmp, as_array(out[0]), kAddTo);
    return;
  }
  const TBlob& a = in[0];
  const int ax = take_axis(attrs, a.shape);
  const auto [outer, inner] = around_axis(a.shape, ax);
  const int64_t n = a.shape[ax];
  const TakeRows rows(attrs, in[1], n, ax);
  const int64_t m = rows.size();
  const size_t block = static_cast<size_t>(inner) * dtype_size(a.dtype);  // bytes a row
  const char* src = static_cast<const char*>(a.dptr);
  char* dst = static_cast<char*>(out[0].dptr);
  if (inner == 1) {
    kernel::with_element_size(dtype_size(a.dtype), "take", [&](auto elem) {
      rows.with_rows(
          [&](auto row) { gather_elements<decltype(elem)::value>(src, dst, outer, n, m, row); });
    });
    return;
  }
  const int64_t grain = std::max<int64_t>(1, kernel::kGrain / std::max<int64_t>(inner, 1));
  rows.with_rows([&](auto row) {
    kernel::parallel_for(outer * m, grain, [&](int64_t r0, int64_t r1) {
      for (int64_t r = r0; r < r1; ++r) {
        const int64_t o = r / m, j = r % m;
        std::memcpy(dst + static_cast<size_t>(r) * block,
                    src + static_cast<size_t>(o * n + row(j)) * block, block);
      }
    });
  });
}

// Each taken row's gradient (og: outer x rows x inner) added back into its row of a (outer x n
// x inner). Tasks of one outer index and a span of columns write disjoint elements, so threads
// take them; each element still sums its rows in index order (one result for any count).
template <typename T, class Row>
void add_rows_back(T* a, const T* og, int64_t outer, int64_t n, int64_t m, int64_t inner, Row row) {
  constexpr int64_t kSpan = 4096;
  const int64_t spans = (inner + kSpan - 1) / kSpan;
  const int64_t work = std::max<int64_t>(1, m * std::min(inner, kSpan));
  kernel::parallel_for(
      outer * spans, std::max<int64_t>(1, kernel::kGrain / work), [&](int64_t t0, int64_t t1) {
        for (int64_t t = t0; t < t1; ++t) {
          const int64_t o = t / spans, i0 = t % spans * kSpan, i1 = std::min(inner, i0 + kSpan);
          for (int64_t j = 0; j < m; ++j) {
            T* dst = a + (o * n + row(j)) * inner;
            const T* g = og + (o * m + j) * inner;
            for (int64_t i = i0; i < i1; ++i) dst[i] = kernel::wrap_add(dst[i], g[i]);
          }
        }
      });
}

// _backward_take: (ograd, a, indices) -> (each taken row's gradient added back into the row it
// came from, zeros for the indices).
bool BackwardTakeShape(const NodeAttrs& attrs, ShapeVector* in, ShapeVector* out) {
  for (const Shape& sh : *in)
    if (!sh.is_known()) return false;
  const Shape expected = take_shape(attrs, (*in)[1], (*in)[2]);
  if ((*in)[0] != expected)
    value_error("[backward_take] ograd has shape ", (*in)[0].str(), ", expected ", expected.str());
  assign_shape(attrs, &(*out)[0], (*in)[1], "output", 0);
  assign_shape(attrs, &(*out)[1], (*in)[2], "output", 1);
  return true;
}

void BackwardTakeCompute(const NodeAttrs& attrs, const OpContext&, const std::vector<TBlob>& in,
                         const std::vector<OpReqType>& req, const std::vector<TBlob>& out) {
  kernel::fill_output(out[1], req[1], 0);
  if (req[0] == kNullOp || out[0].size() == 0) return;
  const Shape& xs = in[1].shape;
  const int ax = take_axis(attrs, xs);
  const auto [outer, inner] = around_axis(xs, ax);
  const int64_t n = xs[ax];
  const TakeRows rows(attrs, in[2], n, ax);
  add_back_into(in[0], out[0], req[0], "backward_take", [&](auto* a, const auto* og) {
    rows.with_rows([&](auto row) { add_rows_back(a, og, outer, n, rows.size(), inner, row); });
  });
}

// ============================== packbits / unpackbits ==============================
// numpy.packbits: the truth of each element along `axis` as bits of uint8 bytes, eight
// elements a byte (the last byte zero-padded), the first element in the high bit ("big") or
// the low bit ("little"). unpackbits is its inverse on uint8 input, `count` bits kept along
// the axis (zero-padded past the input's bits). Python flattens for axis=None.
struct PackBitsParam {
  int64_t axis = -1;
  std::string bitorder = "big";
  static void declare(ParamDecl<PackBitsParam>& d) {
    d.field("axis", &PackBitsParam::axis).describe("The axis packed along.");
    d.field("bitorder", &PackBitsParam::bitorder)
        .set_default(std::string("big"))
        .set_enum({"big", "little"})
        .describe("big: the first element of each eight is the byte's high bit; little: low.");
  }
};

struct UnpackBitsParam {
  int64_t axis = -1;
  std::optional<int64_t> count;
  std::string bitorder = "big";
  static void declare(ParamDecl<UnpackBitsParam>& d) {
    d.field("axis", &UnpackBitsParam::axis).describe("The axis unpacked along.");
    d.field("count", &UnpackBitsParam::count)
        .set_default(std::nullopt)
        .describe(
            "Bits kept along the axis: all 8n (None), count (>= 0, zero-padded past 8n) "
            "or 8n + count (< 0).");
    d.field("bitorder", &UnpackBitsParam::bitorder)
        .set_default(std::string("big"))
        .set_enum({"big", "little"})
        .describe("big: a byte's high bit comes first; little: its low bit.");
  }
};

// The axis of a packbits / unpackbits input (>= 1 dimension: Python flattens 0-d input).
int bits_axis(int64_t axis, const Shape& s, const char* op) {
  if (s.ndim() == 0) value_error("[", op, "] the input must have at least one dimension");
  return normalize_axis(axis, s.ndim(), op);
}

// The length of unpackbits' output along an axis of n bytes.
int64_t unpacked_length(const std::optional<int64_t>& count, int64_t n) {
  if (!count) return 8 * n;
  if (*count >= 0) return *count;
  if (8 * n + *count < 0)
    value_error("[unpackbits] -count larger than number of elements: count ", *count, " for ",
                8 * n, " bits");
  return 8 * n + *count;
}

bool PackBitsShape(const NodeAttrs& attrs, ShapeVector* in, ShapeVector* out) {
  const Shape& s = (*in)[0];
  if (!s.is_known()) return false;
  const int ax = bits_axis(attrs.get<PackBitsParam>().axis, s, "packbits");
  Shape o = s;
  o[ax] = (s[ax] + 7) / 8;
  assign_shape(attrs, &(*out)[0], o, "output", 0);
  return true;
}

bool UnpackBitsShape(const NodeAttrs& attrs, ShapeVector* in, ShapeVector* out) {
  const Shape& s = (*in)[0];
  if (!s.is_known()) return false;
  const auto& p = attrs.get<UnpackBitsParam>();
  const int ax = bits_axis(p.axis, s, "unpackbits");
  Shape o = s;
  o[ax] = unpacked_length(p.count, s[ax]);
  assign_shape(attrs, &(*out)[0], o, "output", 0);
  return true;
}

bool PackBitsType(const NodeAttrs& attrs, DTypeVector* in, DTypeVector* out) {
  const DType t = (*in)[0];
  if (t == DType::kUnknown) return false;
  if (!is_integer(t) && t != DType::kBool)
    type_error("[packbits] expected an input array of integer or boolean data type, got ", t);
  assign_type(attrs, &(*out)[0], DType::kUInt8, "output", 0);
  return true;
}

bool UnpackBitsType(const NodeAttrs& attrs, DTypeVector* in, DTypeVector* out) {
  const DType t = (*in)[0];
  if (t == DType::kUnknown) return false;
  if (t != DType::kUInt8)
    type_error("[unpackbits] expected an input array of unsigned byte data type, got ", t);
  assign_type(attrs, &(*out)[0], DType::kUInt8, "output", 0);
  return true;
}

// Eight bytes in memory order -> one bit each (set where the byte is nonzero), the first byte
// in bit 0. No carries: each (byte, multiplier byte) pair of the product has its own bit.
static_assert(std::endian::native == std::endian::little, "the bit packers read words LSB first");
inline uint8_t truth_bits_of_8(uint64_t w) {
  constexpr uint64_t kLow7 = 0x7f7f7f7f7f7f7f7fULL;
  const uint64_t high = (((w & kLow7) + kLow7) | w) & ~kLow7;  // 0x80 in each nonzero byte
  return static_cast<uint8_t>(((high >> 7) * 0x0102040810204080ULL) >> 56);
}

// Bytes of bool / uint8 elements packed 8 to a byte: a vector at a time, the last few
// bytes eight at a time.
void pack_byte_run(const uint8_t* src, uint8_t* dst, int64_t bytes_out, bool big) {
  for (int64_t b = kernel::pack_truth_bytes(src, dst, 8 * bytes_out, big) / 8; b < bytes_out; ++b) {
    uint64_t w;
    std::memcpy(&w, src + 8 * b, 8);
    dst[b] = truth_bits_of_8(big ? __builtin_bswap64(w) : w);
  }
}

// Rows [r0, r1) of the packed output, a row being the `inner` bytes at (o, j): byte j of each
// of the (outer, n, inner) input's columns. An element is true when any of its bytes is set.
template <size_t E>
void pack_rows(const char* in, uint8_t* out, int64_t n, int64_t m, int64_t inner, bool big,
               int64_t r0, int64_t r1) {
  using Word = std::conditional_t<
      E == 1, uint8_t,
      std::conditional_t<E == 2, uint16_t, std::conditional_t<E == 4, uint32_t, uint64_t>>>;
  const auto* x = reinterpret_cast<const Word*>(in);
  int64_t o = r0 / m, j = r0 % m;
  for (int64_t r = r0; r < r1;) {
    const int64_t first = 8 * j, bits = std::min<int64_t>(8, n - first);
    const Word* src = x + (o * n + first) * inner;
    uint8_t* row = out + r * inner;
    int64_t rows = 1;
    if (inner == 1 && bits == 8) {  // the whole bytes left in this lane and range
      rows = std::min(n / 8 - j, r1 - r);
      if constexpr (E == 1) {
        pack_byte_run(src, row, rows, big);
      } else {
        for (int64_t b = 0; b < rows; ++b, src += 8) {
          unsigned byte = 0;
          for (int k = 0; k < 8; ++k)
            byte |= static_cast<unsigned>(src[k] != 0) << (big ? 7 - k : k);
          row[b] = static_cast<uint8_t>(byte);
        }
      }
    } else {
      std::memset(row, 0, static_cast<size_t>(inner));
      for (int64_t k = 0; k < bits; ++k, src += inner) {
        const int shift = big ? 7 - static_cast<int>(k) : static_cast<int>(k);
        for (int64_t i = 0; i < inner; ++i) row[i] |= static_cast<uint8_t>((src[i] != 0) << shift);
      }
    }
    r += rows, j += rows;
    if (j == m) j = 0, ++o;
  }
}

void PackBitsCompute(const NodeAttrs& attrs, const OpContext&, const std::vector<TBlob>& in,
                     const std::vector<OpReqType>& req, const std::vector<TBlob>& out) {
  if (req[0] == kNullOp || out[0].size() == 0) return;
  if (req[0] == kAddTo) {
    NDArray tmp(out[0].shape, out[0].dtype, cpu());
    PackBitsCompute(attrs, {}, in, {kWriteTo}, {to_blob(tmp)});
    write_req(tmp, as_array(out[0]), kAddTo);
    return;
  }
  const auto& p = attrs.get<PackBitsParam>();
  const int ax = bits_axis(p.axis, in[0].shape, "packbits");
  const auto [outer, inner] = around_axis(in[0].shape, ax);
  const int64_t n = in[0].shape[ax], m = out[0].shape[ax];
  const bool big = p.bitorder == "big";
  const auto* src = static_cast<const char*>(in[0].dptr);
  auto* dst = static_cast<uint8_t*>(out[0].dptr);
  const int64_t grain = std::max<int64_t>(1, kernel::kGrain / (8 * inner));  // input elements
  kernel::with_element_size(dtype_size(in[0].dtype), "packbits", [&](auto elem) {
    constexpr size_t E = decltype(elem)::value;
    if constexpr (E <= 8)  // (integers and bool: the type check keeps 16-byte elements out)
      kernel::parallel_for(outer * m, grain, [&](int64_t r0, int64_t r1) {
        pack_rows<E>(src, dst, n, m, inner, big, r0, r1);
      });
  });
}

// One byte -> its eight bits as bytes 0 / 1 in memory order, the high bit first when big.
inline uint64_t bytes_of_bits(uint8_t byte, bool big) {
  const uint64_t spread =
      (byte * 0x0101010101010101ULL) & (big ? 0x0102040810204080ULL : 0x8040201008040201ULL);
  return ((spread + 0x7f7f7f7f7f7f7f7fULL) >> 7) & 0x0101010101010101ULL;
}

// Rows [r0, r1) of the unpacked (outer, m, inner) output: row (o, k) is bit k of the byte
// columns (o, k / 8, :), zeros from k = bits on.
void unpack_rows(const uint8_t* x, uint8_t* y, int64_t n, int64_t m, int64_t bits, int64_t inner,
                 bool big, int64_t r0, int64_t r1) {
  int64_t o = r0 / m, k = r0 % m;
  for (int64_t r = r0; r < r1;) {
    uint8_t* row = y + r * inner;
    const uint8_t* col = x + (o * n + k / 8) * inner;
    int64_t rows = 1;
    if (inner == 1 && k % 8 == 0 && k + 8 <= bits && r + 8 <= r1) {  // whole bytes at once
      const int64_t bytes = std::min(bits - k, r1 - r) / 8;
      for (int64_t b = kernel::unpack_bit_bytes(col, row, bytes, big); b < bytes; ++b) {
        const uint64_t w = bytes_of_bits(col[b], big);
        std::memcpy(row + 8 * b, &w, 8);
      }
      rows = 8 * bytes;
    } else if (k >= bits) {
      std::memset(row, 0, static_cast<size_t>(inner));
    } else {
      const int shift = big ? 7 - static_cast<int>(k % 8) : static_cast<int>(k % 8);
      for (int64_t i = 0; i < inner; ++i) row[i] = (col[i] >> shift) & 1u;
    }
    r += rows, k += rows;
    if (k == m) k = 0, ++o;
  }
}

void UnpackBitsCompute(const NodeAttrs& attrs, const OpContext&, const std::vector<TBlob>& in,
                       const std::vector<OpReqType>& req, const std::vector<TBlob>& out) {
  if (req[0] == kNullOp || out[0].size() == 0) return;
  if (req[0] == kAddTo) {
    NDArray tmp(out[0].shape, out[0].dtype, cpu());
    UnpackBitsCompute(attrs, {}, in, {kWriteTo}, {to_blob(tmp)});
    write_req(tmp, as_array(out[0]), kAddTo);
    return;
  }
  const auto& p = attrs.get<UnpackBitsParam>();
  const int ax = bits_axis(p.axis, in[0].shape, "unpackbits");
  const auto [outer, inner] = around_axis(in[0].shape, ax);
  const int64_t n = in[0].shape[ax], m = out[0].shape[ax], bits = std::min(m, 8 * n);
  const bool big = p.bitorder == "big";
  const auto* x = static_cast<const uint8_t*>(in[0].dptr);
  auto* y = static_cast<uint8_t*>(out[0].dptr);
  kernel::parallel_for(
      outer * m, std::max<int64_t>(1, kernel::kGrain / inner),
      [&](int64_t r0, int64_t r1) { unpack_rows(x, y, n, m, bits, inner, big, r0, r1); });
}

// ============================== registration ==============================
// Every kernel here moves elements through write_req / kernel::copy / sum_to_shape, which run
// on the array's device: the same functions serve as the ops' GPU kernels.
Op& register_shape_op(const char* name, const char* doc) {
  return OpRegistry::global()
      .register_op(name)
      .describe(doc)
      .set_attr<TStridedInputs>("TStridedInputs", true)
      .set_attr<FInferType>("FInferType", SameType);
}

[[maybe_unused]] const bool registered = [] {
  register_shape_op("_np_reshape",
                    "Gives a new shape to an array without changing its data (a copy).")
      .set_num_inputs(1)
      .add_argument("a", "NDArray", "Input array.")
      .set_params<ReshapeParam>()
      .set_attr<FInferShape>("FInferShape", ReshapeShape)
      .set_attr<FCompute>("FCompute<cpu>", ReshapeCompute)
      .set_attr<FCompute>("FCompute<gpu>", ReshapeCompute)
      .set_attr<FGradient>("FGradient", GradUseInNoParams{"_backward_reshape"});
  register_shape_op("_npx_reshape",
                    "Reshape with MXNet's codes (-1 .. -6; see npx.reshape), kept as codes in "
                    "traced graphs.")
      .set_num_inputs(1)
      .add_argument("a", "NDArray", "Input array.")
      .set_params<NpxReshapeParam>()
      .set_attr<FInferShape>("FInferShape", NpxReshapeShape)
      .set_attr<FCompute>("FCompute<cpu>", ReshapeCompute)
      .set_attr<FCompute>("FCompute<gpu>", ReshapeCompute)
      .set_attr<FGradient>("FGradient", GradUseInNoParams{"_backward_reshape"});
  register_shape_op("_np_transpose", "Permutes the axes of an array.")
      .set_num_inputs(1)
      .add_argument("a", "NDArray", "Input array.")
      .set_params<TransposeParam>()
      .set_attr<FInferShape>("FInferShape", TransposeShape)
      .set_attr<FCompute>("FCompute<cpu>", TransposeCompute)
      .set_attr<FCompute>("FCompute<gpu>", TransposeCompute)
      .set_attr<FGradient>("FGradient", TransposeGrad);
  register_shape_op("_np_expand_dims", "Inserts a new axis of length one.")
      .set_num_inputs(1)
      .add_argument("a", "NDArray", "Input array.")
      .set_params<ExpandDimsParam>()
      .set_attr<FInferShape>("FInferShape", ExpandDimsShape)
      .set_attr<FCompute>("FCompute<cpu>", ReshapeCompute)
      .set_attr<FCompute>("FCompute<gpu>", ReshapeCompute)
      .set_attr<FGradient>("FGradient", GradUseInNoParams{"_backward_reshape"});
  register_shape_op("_np_squeeze", "Removes axes of length one.")
      .set_num_inputs(1)
      .add_argument("a", "NDArray", "Input array.")
      .set_params<SqueezeParam>()
      .set_attr<FInferShape>("FInferShape", SqueezeShape)
      .set_attr<FCompute>("FCompute<cpu>", ReshapeCompute)
      .set_attr<FCompute>("FCompute<gpu>", ReshapeCompute)
      .set_attr<FGradient>("FGradient", GradUseInNoParams{"_backward_reshape"});
  register_shape_op("_np_broadcast_to", "Broadcasts an array to a new shape.")
      .set_num_inputs(1)
      .add_argument("array", "NDArray", "Input array.")
      .set_params<BroadcastToParam>()
      .set_attr<FInferShape>("FInferShape", BroadcastToShape)
      .set_attr<FCompute>("FCompute<cpu>", BroadcastToCompute)
      .set_attr<FCompute>("FCompute<gpu>", BroadcastToCompute)
      .set_attr<FGradient>("FGradient", GradUseInNoParams{"_backward_broadcast_to"});
  register_shape_op("_np_swapaxes", "Interchanges two axes of an array.")
      .set_num_inputs(1)
      .add_argument("a", "NDArray", "Input array.")
      .set_params<SwapAxesParam>()
      .set_attr<FInferShape>("FInferShape", SwapAxesShape)
      .set_attr<FCompute>("FCompute<cpu>", SwapAxesCompute)
      .set_attr<FCompute>("FCompute<gpu>", SwapAxesCompute)
      .set_attr<FGradient>("FGradient", SwapAxesGrad);
  register_shape_op("_npi_concatenate", "Joins arrays along an existing axis (None: flattened).")
      .set_num_inputs(FNumArgs(ConcatNumArgs))
      .add_argument("data", "NDArray[]", "The arrays to join.")
      .set_params<ConcatParam>()
      .set_attr<FInferShape>("FInferShape", ConcatShape)
      .set_attr<FInferType>("FInferType", PromoteAllType, 11)
      .set_attr<FCompute>("FCompute<cpu>", ConcatCompute)
      .set_attr<FCompute>("FCompute<gpu>", ConcatCompute)
      .set_attr<FGradient>("FGradient", ElemwiseGradUseIn{"_backward_concatenate"});
  register_shape_op("_npi_stack", "Joins arrays along a new axis.")
      .set_num_inputs(FNumArgs(StackNumArgs))
      .add_argument("data", "NDArray[]", "The arrays to stack (all of one shape).")
      .set_params<StackParam>()
      .set_attr<FInferShape>("FInferShape", StackShape)
      .set_attr<FInferType>("FInferType", PromoteAllType, 11)
      .set_attr<FCompute>("FCompute<cpu>", StackCompute)
      .set_attr<FCompute>("FCompute<gpu>", StackCompute)
      .set_attr<FGradient>("FGradient", ElemwiseGradUseIn{"_backward_stack"});
  register_shape_op("_npi_split", "Splits an array into sub-arrays (as numpy.split).")
      .set_num_inputs(1)
      .set_num_outputs(FNumArgs(SplitNumOutputs))
      .add_argument("ary", "NDArray", "Input array.")
      .set_params<SplitParam>()
      .set_attr<FInferShape>("FInferShape", SplitShape)
      .set_attr<FCompute>("FCompute<cpu>", SplitCompute)
      .set_attr<FCompute>("FCompute<gpu>", SplitCompute)
      .set_attr<FGradient>("FGradient", SplitGrad);

  // (Contiguous input: invoke copies a strided one first.)
  OpRegistry::global()
      .register_op("_npi_pad")
      .describe(
          "numpy.pad for the modes constant (one value), edge, reflect, symmetric and wrap, in "
          "one pass over the output.")
      .set_attr<FInferType>("FInferType", SameType)
      .set_num_inputs(1)
      .add_argument("array", "NDArray", "Input array.")
      .set_params<PadParam>()
      .set_attr<FInferShape>("FInferShape", PadShape)
      .set_attr<FCompute>("FCompute<cpu>", PadCompute)
      .set_attr<FGradient>("FGradient", ElemwiseGradUseIn{"_backward_pad"});

  OpRegistry::global()
      .register_op("_npi_take_along_axis")
      .describe("numpy.take_along_axis with indices matching arr outside the axis, in one pass.")
      .set_num_inputs(2)
      .add_argument("arr", "NDArray", "Source array.")
      .add_argument("indices", "NDArray", "int32 or int64 indices, arr's shape outside axis.")
      .set_params<TakeAlongAxisParam>()
      .set_attr<FInferShape>("FInferShape", TakeAlongAxisShape)
      .set_attr<FInferType>("FInferType", TakeAlongAxisType)
      .set_attr<FCompute>("FCompute<cpu>", TakeAlongAxisCompute)
      .set_attr<FGradient>("FGradient", ElemwiseGradUseIn{"_backward_take_along_axis"});

  OpRegistry::global()
      .register_op("_npi_take")
      .describe("numpy.take / MXNet's take along one axis, with mode raise, wrap or clip.")
      .set_num_inputs(2)
      .add_argument("a", "NDArray", "Source array, at least 1-d.")
      .add_argument("indices", "NDArray", "Indices (integers; floats truncate, as MXNet's).")
      .set_params<TakeParam>()
      .set_attr<FInferShape>("FInferShape", TakeShape)
      .set_attr<FInferType>("FInferType", TakeType)
      .set_attr<FCompute>("FCompute<cpu>", TakeCompute)
      .set_attr<FGradient>("FGradient", ElemwiseGradUseIn{"_backward_take"});

  // uint8 results of integer inputs: zero gradients.
  OpRegistry::global()
      .register_op("_npi_packbits")
      .describe("numpy.packbits along an axis: the truth of each element as bits of uint8 bytes.")
      .set_num_inputs(1)
      .add_argument("a", "NDArray", "Integer or bool input, at least 1-d.")
      .set_params<PackBitsParam>()
      .set_attr<FInferShape>("FInferShape", PackBitsShape)
      .set_attr<FInferType>("FInferType", PackBitsType)
      .set_attr<FCompute>("FCompute<cpu>", PackBitsCompute)
      .set_attr<FGradient>("FGradient", MakeZeroGradNodes);
  OpRegistry::global()
      .register_op("_npi_unpackbits")
      .describe("numpy.unpackbits along an axis: each uint8 byte as eight 0 / 1 bytes.")
      .set_num_inputs(1)
      .add_argument("a", "NDArray", "uint8 input, at least 1-d.")
      .set_params<UnpackBitsParam>()
      .set_attr<FInferShape>("FInferShape", UnpackBitsShape)
      .set_attr<FInferType>("FInferType", UnpackBitsType)
      .set_attr<FCompute>("FCompute<cpu>", UnpackBitsCompute)
      .set_attr<FGradient>("FGradient", MakeZeroGradNodes);

  // ---- backward ops ----
  register_shape_op("_backward_reshape",
                    "Backward of reshape: (ograd, data) -> ograd in data's shape.")
      .set_num_inputs(2)
      .add_argument("ograd", "NDArray", "Gradient of the output.")
      .add_argument("data", "NDArray", "Forward input.")
      .set_attr<FInferShape>("FInferShape", BackwardReshapeShape)
      .set_attr<FInferType>("FInferType", BackwardDataType, 11)
      .set_attr<TIsBackward>("TIsBackward", true)
      .set_attr<FCompute>("FCompute<cpu>", ReshapeCompute)
      .set_attr<FCompute>("FCompute<gpu>", ReshapeCompute)
      // Linear in ograd, so its own gradient reshapes back to ograd's shape (second order).
      .set_attr<FGradient>("FGradient", [](const NodePtr& n, const std::vector<NodeEntry>& og) {
        return std::vector<NodeEntry>{make_node("_backward_reshape", {og[0], n->inputs[0]}),
                                      make_node("_np_zeros_like", {n->inputs[1]})};
      });
  register_shape_op("_backward_broadcast_to",
                    "Backward of broadcast_to: (ograd, data) -> ograd summed to data's shape.")
      .set_num_inputs(2)
      .add_argument("ograd", "NDArray", "Gradient of the output.")
      .add_argument("data", "NDArray", "Forward input.")
      .set_attr<FInferShape>("FInferShape", BackwardBroadcastToShape)
      .set_attr<FInferType>("FInferType", BackwardDataType, 11)
      .set_attr<TIsBackward>("TIsBackward", true)
      .set_attr<FCompute>("FCompute<cpu>", BackwardBroadcastToCompute)
      .set_attr<FCompute>("FCompute<gpu>", BackwardBroadcastToCompute)
      .set_attr<FGradient>("FGradient", [](const NodePtr& n, const std::vector<NodeEntry>& og) {
        return std::vector<NodeEntry>{make_node("_npi_broadcast_like", {og[0], n->inputs[0]}),
                                      make_node("_np_zeros_like", {n->inputs[1]})};
      });
  register_shape_op("_backward_concatenate",
                    "Backward of concatenate: (ograd, inputs...) -> the slice of ograd per input.")
      .set_num_inputs(FNumArgs(ConcatNumArgsPlusOne))
      .set_num_outputs(FNumArgs(ConcatNumArgs))
      .add_argument("ograd", "NDArray", "Gradient of the output.")
      .add_argument("data", "NDArray[]", "Forward inputs.")
      .set_params<ConcatParam>()
      .set_attr<FInferShape>("FInferShape", BackwardConcatShape)
      .set_attr<FInferType>("FInferType", BackwardInputsType, 11)
      .set_attr<TIsBackward>("TIsBackward", true)
      .set_attr<FCompute>("FCompute<cpu>", BackwardConcatCompute)
      .set_attr<FCompute>("FCompute<gpu>", BackwardConcatCompute)
      .set_attr<FGradient>("FGradient", rejoin_gradient("_npi_concatenate"));
  register_shape_op("_backward_stack",
                    "Backward of stack: (ograd, inputs...) -> the slice of ograd per input.")
      .set_num_inputs(FNumArgs(StackNumArgsPlusOne))
      .set_num_outputs(FNumArgs(StackNumArgs))
      .add_argument("ograd", "NDArray", "Gradient of the output.")
      .add_argument("data", "NDArray[]", "Forward inputs.")
      .set_params<StackParam>()
      .set_attr<FInferShape>("FInferShape", BackwardStackShape)
      .set_attr<FInferType>("FInferType", BackwardInputsType, 11)
      .set_attr<TIsBackward>("TIsBackward", true)
      .set_attr<FCompute>("FCompute<cpu>", BackwardStackCompute)
      .set_attr<FCompute>("FCompute<gpu>", BackwardStackCompute)
      .set_attr<FGradient>("FGradient", rejoin_gradient("_npi_stack"));
  OpRegistry::global()
      .register_op("_backward_pad")
      .describe("Backward of _npi_pad: (ograd, data) -> ograd added back where it was copied from.")
      .set_num_inputs(2)
      .add_argument("ograd", "NDArray", "Gradient of the output.")
      .add_argument("data", "NDArray", "Forward input.")
      .set_params<PadParam>()
      .set_attr<FInferShape>("FInferShape", BackwardPadShape)
      .set_attr<FInferType>("FInferType", BackwardDataType, 11)
      .set_attr<TIsBackward>("TIsBackward", true)
      .set_attr<FCompute>("FCompute<cpu>", BackwardPadCompute)
      // Linear in ograd (pad is, but for constant mode's fill): its gradient is the pad again,
      // with a 0 fill, and none reaches the data (read for its shape).
      .set_attr<FGradient>("FGradient", [](const NodePtr& n, const std::vector<NodeEntry>& og) {
        auto params = params_dict(n->attrs);
        params["constant_value"] = "0";
        return std::vector<NodeEntry>{
            make_node("_npi_pad", {og[0]}, params, n->attrs.name + "_backward"),
            make_node("_np_zeros_like", {n->inputs[1]})};
      });
  OpRegistry::global()
      .register_op("_backward_take")
      .describe(
          "Backward of _npi_take: (ograd, a, indices) -> (ograd added back into the rows it was "
          "taken from, zeros for the indices).")
      .set_num_inputs(3)
      .set_num_outputs(2)
      .add_argument("ograd", "NDArray", "Gradient of the output.")
      .add_argument("a", "NDArray", "Forward source array.")
      .add_argument("indices", "NDArray", "Forward indices.")
      .set_params<TakeParam>()
      .set_attr<FInferShape>("FInferShape", BackwardTakeShape)
      .set_attr<FInferType>("FInferType", BackwardInputsType, 11)
      .set_attr<TIsBackward>("TIsBackward", true)
      .set_attr<FCompute>("FCompute<cpu>", BackwardTakeCompute)
      // Linear in ograd: its own gradient takes the incoming gradient's slices again.
      .set_attr<FGradient>("FGradient", [](const NodePtr& n, const std::vector<NodeEntry>& og) {
        auto take = std::make_shared<Node>();
        take->attrs = n->attrs;
        take->attrs.op = Op::get("_npi_take");
        take->inputs = {og[0], n->inputs[2]};
        return std::vector<NodeEntry>{NodeEntry{take, 0, 0},
                                      make_node("_np_zeros_like", {n->inputs[1]}),
                                      make_node("_np_zeros_like", {n->inputs[2]})};
      });
  OpRegistry::global()
      .register_op("_backward_take_along_axis")
      .describe(
          "Backward of _npi_take_along_axis: (ograd, arr, indices) -> (ograd added back where it "
          "was taken from, zeros for the indices).")
      .set_num_inputs(3)
      .set_num_outputs(2)
      .add_argument("ograd", "NDArray", "Gradient of the output.")
      .add_argument("arr", "NDArray", "Forward source array.")
      .add_argument("indices", "NDArray", "Forward indices.")
      .set_params<TakeAlongAxisParam>()
      .set_attr<FInferShape>("FInferShape", BackwardTakeAlongAxisShape)
      .set_attr<FInferType>("FInferType", BackwardTakeAlongAxisType, 11)
      .set_attr<TIsBackward>("TIsBackward", true)
      .set_attr<FCompute>("FCompute<cpu>", BackwardTakeAlongAxisCompute);
  return true;
}();

}  // namespace
}  // namespace ndx
