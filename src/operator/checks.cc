// npx.constraint_check (MXNet's _npx_constraint_check): a 0-d true when every element of a bool
// array is true, else a ValueError carrying the caller's message. MXNet's probability
// distributions validate their arguments with it, inside hybridized graphs too.
#include <string>
#include <vector>

#include "kernel/reduce.h"
#include "ndx/graph.h"
#include "operator/kernel_util.h"

namespace ndx {
namespace {

struct ConstraintCheckParam {
  std::string msg = "Constraint violated.";
  static void declare(ParamDecl<ConstraintCheckParam>& d) {
    d.field("msg", &ConstraintCheckParam::msg)
        .set_default(std::string("Constraint violated."))
        .describe("The ValueError's message when an element is false.");
  }
};

bool ConstraintCheckShape(const NodeAttrs& attrs, ShapeVector* in, ShapeVector* out) {
  if (!(*in)[0].is_known()) return false;
  assign_shape(attrs, &(*out)[0], Shape{}, "output", 0);
  return true;
}

bool ConstraintCheckType(const NodeAttrs& attrs, DTypeVector* in, DTypeVector* out) {
  if ((*in)[0] == DType::kUnknown) return false;
  if ((*in)[0] != DType::kBool)
    type_error("[constraint_check] input must be a bool array (a condition), got ",
               dtype_name((*in)[0]));
  assign_type(attrs, &(*out)[0], DType::kBool, "output", 0);
  return true;
}

void ConstraintCheckCompute(const NodeAttrs& attrs, const OpContext&, const std::vector<TBlob>& in,
                            const std::vector<OpReqType>& req, const std::vector<TBlob>& out) {
  // all() of an empty array is true, as NumPy's; the engine's min reduction reads the rest.
  if (in[0].size() > 0 && kernel::min_value(in[0]) == 0)
    value_error(attrs.get<ConstraintCheckParam>().msg);
  if (req[0] == kNullOp) return;
  NDArray result(Shape{}, DType::kBool, cpu());
  *static_cast<bool*>(result.raw_data()) = true;
  kernel::write_req(result, kernel::as_array(out[0]), req[0]);
}

[[maybe_unused]] const bool registered = [] {
  OpRegistry::global()
      .register_op("_npx_constraint_check")
      .describe(
          "A 0-d true when every element of a bool array is true; otherwise a ValueError "
          "with `msg` (MXNet's constraint_check).")
      .set_num_inputs(1)
      .add_argument("input", "NDArray", "The condition, a bool array.")
      .set_params<ConstraintCheckParam>()
      .set_attr<FInferShape>("FInferShape", ConstraintCheckShape)
      .set_attr<FInferType>("FInferType", ConstraintCheckType)
      .set_attr<FCompute>("FCompute<cpu>", ConstraintCheckCompute)
      .set_attr<FGradient>("FGradient", MakeZeroGradNodes);
  return true;
}();

}  // namespace
}  // namespace ndx
