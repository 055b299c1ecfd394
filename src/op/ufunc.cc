// NumPy's ufunc keywords (dtype=, casting=, where=, out= of another dtype) over any elementwise
// op: the op computes in its own dtypes; this layer checks and applies the casts around it.
#include "ndx/imperative.h"

#include "ndx/autograd.h"
#include "ndx/executor.h"

namespace ndx {

namespace {

bool is_weak(const UfuncOptions& options, size_t i) {
  return i < options.weak.size() && options.weak[i];
}

// The dtype the inputs meet in: dtype= when given, else the common dtype of the typed inputs.
DType loop_dtype(const std::vector<NDArray>& inputs, const UfuncOptions& options) {
  if (options.dtype) return *options.dtype;
  DType loop = DType::kUnknown;
  for (size_t i = 0; i < inputs.size(); ++i)
    if (!is_weak(options, i))
      loop = loop == DType::kUnknown ? inputs[i].dtype() : promote_types(loop, inputs[i].dtype());
  return loop;
}

// A cast autograd and hybridize tracing see (NDArray::astype is not recorded): the gradient of
// exp(x, dtype=float64) reaches a float32 x, and a traced graph keeps the cast.
NDArray recorded_cast(const NDArray& x, DType t) {
  static const Op* astype = Op::get("_npi_astype");
  return invoke(astype->make_attrs({{"dtype", std::string(dtype_name(t))}}), {x})[0];
}

void check_input_casts(const std::string& op, std::vector<NDArray>& inputs,
                       const UfuncOptions& options) {
  const DType loop = loop_dtype(inputs, options);
  if (loop == DType::kUnknown) return;
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (!is_weak(options, i) && !can_cast(inputs[i].dtype(), loop, options.casting))
      type_error("[", op, "] cannot cast input ", i, " from ", inputs[i].dtype(), " to ", loop,
                 " with casting rule '", casting_name(options.casting), "'");
    if (options.dtype && inputs[i].dtype() != loop) inputs[i] = recorded_cast(inputs[i], loop);
  }
}

DTypeVector result_dtypes(const NodeAttrs& attrs, const std::vector<NDArray>& inputs) {
  DTypeVector in, out(attrs.op->outputs_for(attrs), DType::kUnknown);
  for (const auto& x : inputs) in.push_back(x.dtype());
  infer_types(attrs, &in, &out);
  out.resize(attrs.op->visible_outputs_for(attrs));
  return out;
}

void check_where(const std::string& op, const NDArray& where, const Shape& result) {
  if (where.dtype() != DType::kBool)
    type_error("[", op, "] where must be a bool array; got ", where.dtype());
  if (broadcast_shapes(where.shape(), result, op.c_str()) != result)
    value_error("[", op, "] where of shape ", where.shape().str(),
                " does not broadcast to the result's shape ", result.str());
}

// NumPy's dtype= names the output dtype, and the loop is then found for the inputs: the
// comparisons and logical ops give bool from inputs of any dtype, so dtype=bool casts nothing
// (logical_not(float, dtype=bool)). Other ops compute in their output dtype: inputs cast.
bool gives_dtype_uncast(const NodeAttrs& attrs, const std::vector<NDArray>& inputs, DType t) {
  if (t != DType::kBool) return false;
  try {
    for (DType r : result_dtypes(attrs, inputs))
      if (r != t) return false;
    return true;
  } catch (const Error&) {  // no loop for the inputs as they are: cast them to dtype=
    return false;
  }
}

}  // namespace

bool ufunc_gives_dtype_uncast(const NodeAttrs& attrs, const std::vector<NDArray>& inputs, DType t) {
  return gives_dtype_uncast(attrs, inputs, t);
}

std::vector<NDArray> invoke_ufunc(const NodeAttrs& attrs, std::vector<NDArray> inputs,
                                  const std::vector<NDArray>* outputs,
                                  const UfuncOptions& options) {
  const std::string& op = attrs.op->public_name;
  if (!options.dtype || !gives_dtype_uncast(attrs, inputs, *options.dtype))
    check_input_casts(op, inputs, options);
  const DTypeVector results = result_dtypes(attrs, inputs);
  if (options.dtype)
    for (DType t : results)
      if (t != *options.dtype)
        type_error("[", op, "] has no loop giving dtype=", *options.dtype, ": from ",
                   *options.dtype, " inputs it gives ", t);
  if (!outputs) {
    std::vector<NDArray> r = invoke(attrs, inputs);
    if (options.where) check_where(op, *options.where, r[0].shape());
    return r;
  }
  if (outputs->size() != results.size())
    value_error("[", op, "] expects ", results.size(), " output array(s); got ", outputs->size());
  bool direct = options.where == nullptr;
  for (size_t k = 0; k < results.size(); ++k) {
    const DType target = (*outputs)[k].dtype();
    if (!can_cast(results[k], target, options.casting))
      type_error("[", op, "] cannot cast output ", k, " from ", results[k], " to ", target,
                 " with casting rule '", casting_name(options.casting), "'");
    direct = direct && results[k] == target;
  }
  if (direct) {
    InvokeOptions invoke_options;
    invoke_options.outputs = outputs;
    return invoke(attrs, inputs, invoke_options);
  }
  // Results cast into out= (or merged by where=) are writes autograd cannot see: refused while
  // it records an input with history, as invoke refuses out= then (not silently ungraded).
  if (autograd::is_recording() || is_tracing())
    for (const NDArray& in : inputs)
      if (autograd::has_live_history(in))
        not_implemented("[", op, "] writing into existing arrays (out=, where=) is not supported ",
                        "while autograd records an array that requires grad");
  std::vector<NDArray> r = invoke(attrs, inputs);
  if (options.where) check_where(op, *options.where, (*outputs)[0].shape());
  static const Op* where_op = Op::get("_np_where");
  for (size_t k = 0; k < r.size(); ++k) {
    const NDArray& out = (*outputs)[k];
    if (broadcast_shapes(r[k].shape(), out.shape(), op.c_str()) != out.shape())
      value_error("[", op, "] non-broadcastable output operand with shape ", out.shape().str(),
                  " doesn't match the broadcast shape ", r[k].shape().str());
    NDArray value = r[k].dtype() == out.dtype() ? r[k] : r[k].astype(out.dtype());
    if (!options.where) {
      out.assign(value);
      continue;
    }
    std::vector<NDArray> target{out};
    InvokeOptions invoke_options;
    invoke_options.outputs = &target;
    invoke(where_op->make_attrs(), {*options.where, value, out}, invoke_options);
  }
  return *outputs;
}

}  // namespace ndx
