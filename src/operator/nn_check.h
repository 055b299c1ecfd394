// Checks shared by the neural-network op families (nn.cc, conv.cc): typed errors that name the
// op and the argument, the float-dtype rule of their inputs, and backward-op registration.
#pragma once
#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "ndx/op.h"
#include "ndx/op_util.h"

namespace ndx::nn_check {

inline void require_float(const NodeAttrs& attrs, DType t, const char* arg) {
  if (!is_float(t))
    type_error("[", op_name(attrs), "] argument '", arg,
               "' must have a float dtype (float16, bfloat16, float32 or float64), got ", t);
}

// The FGradient of an op whose gradient ndx does not compute yet: a backward pass reaching it
// raises NotImplementedError, `why` saying what to do instead.
inline FGradient no_gradient_yet(const char* op, const char* why) {
  return [op, why](const NodePtr&, const std::vector<NodeEntry>&) -> std::vector<NodeEntry> {
    not_implemented("[", op, "] has no gradient yet (", why, ")");
  };
}

inline void require_no_bool(const NodeAttrs& attrs, DType t, const char* arg) {
  if (t == DType::kBool)
    type_error("[", op_name(attrs), "] argument '", arg, "' must be numeric, got bool");
}

inline void require_same_type(const NodeAttrs& attrs, DType t, DType want, const char* arg,
                              const char* like) {
  if (t != want)
    type_error("[", op_name(attrs), "] argument '", arg, "' has dtype ", t, ", expected ", want,
               " (the dtype of '", like, "')");
}

// Type inference: input 0 must be a float dtype; the other inputs (named by `names`, the last
// name standing for any further ones) must have it too, and every output gets it.
inline bool same_float_type(const NodeAttrs& attrs, DTypeVector* in, DTypeVector* out,
                            const std::vector<const char*>& names) {
  DType t = (*in)[0];
  if (t == DType::kUnknown) return false;
  require_float(attrs, t, names[0]);
  for (size_t i = 1; i < in->size(); ++i) {
    if ((*in)[i] == DType::kUnknown) (*in)[i] = t;
    require_same_type(attrs, (*in)[i], t, names[std::min(i, names.size() - 1)], names[0]);
  }
  for (DType& o : *out) o = t;
  return true;
}

inline void expect_shape(const NodeAttrs& attrs, ShapeVector* in, int i, const Shape& want,
                         const char* arg, const std::string& why = "") {
  Shape& s = (*in)[i];
  if (!s.is_known()) {
    s = want;
    return;
  }
  if (s != want)
    value_error("[", op_name(attrs), "] argument '", arg, "' has shape ", s.str(), ", expected ",
                want.str(), why);
}

// Where a backward op finds its forward op's arrays: `inputs[j]` is the backward input that
// holds forward input j (-1: not passed), and each (k, i) of `outputs` says backward input i is
// forward output k (the ograd, or a saved output such as a mean).
struct ForwardLayout {
  std::vector<int> inputs;
  std::vector<std::pair<int, int>> outputs;
  int num_outputs = 1;
};

// Validates a backward op's inputs with its forward op's shape inference: the forward inputs
// must be valid forward inputs, and the ograd and saved outputs must have the forward's output
// shapes. Backward kernels index every input by the forward's geometry, so without this a
// direct call or a graph node with mismatched shapes reads and writes out of bounds. Returns
// false while a forward input's shape is unknown; fills unknown inputs it can work out.
inline bool check_with_forward(const NodeAttrs& attrs, ShapeVector* in, const FInferShape& forward,
                               const ForwardLayout& layout, const std::vector<const char*>& names) {
  ShapeVector fin(layout.inputs.size(), Shape::unknown());
  ShapeVector fout(static_cast<size_t>(layout.num_outputs), Shape::unknown());
  for (size_t j = 0; j < layout.inputs.size(); ++j)
    if (layout.inputs[j] >= 0) fin[j] = (*in)[layout.inputs[j]];
  if (!forward(attrs, &fin, &fout)) return false;
  for (size_t j = 0; j < layout.inputs.size(); ++j)
    if (layout.inputs[j] >= 0 && !(*in)[layout.inputs[j]].is_known())
      (*in)[layout.inputs[j]] = fin[j];
  for (const auto& [k, i] : layout.outputs)
    expect_shape(attrs, in, i, fout[k], names[i],
                 " (the shape of the forward op's output " + std::to_string(k) + ")");
  return true;
}

// FInferShape of a backward op whose single output has the shape of input k.
inline FInferShape output_shape_of_input(int k) {
  return [k](const NodeAttrs& attrs, ShapeVector* in, ShapeVector* out) {
    if (!(*in)[k].is_known()) return false;
    assign_shape(attrs, &(*out)[0], (*in)[k], "output", 0);
    return true;
  };
}

// FInferType of a backward op whose single output takes the (float) dtype of the ograd, input 0.
inline bool ograd_float_type(const NodeAttrs& attrs, DTypeVector* in, DTypeVector* out) {
  if ((*in)[0] == DType::kUnknown) return false;
  require_float(attrs, (*in)[0], "ograd");
  (*out)[0] = (*in)[0];
  return true;
}

inline Op& register_backward(const char* name, const char* doc) {
  return OpRegistry::global().register_op(name).describe(doc).set_attr<TIsBackward>("TIsBackward",
                                                                                    true);
}

}  // namespace ndx::nn_check
