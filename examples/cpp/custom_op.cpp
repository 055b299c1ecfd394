// Writing an operator in C++ (README: "Writing an operator"): a clip op and its gradient,
// registered once with params, shape and dtype inference, an in-place option, a kernel and a
// gradient, then run imperatively and differentiated with autograd.
#include <algorithm>
#include <iostream>

#include "ndx/autograd.h"
#include "ndx/imperative.h"
#include "ndx/np.h"
#include "ndx/op_util.h"

using namespace ndx;

struct ClipParam {
  double a_min = 0, a_max = 1;
  static void declare(ParamDecl<ClipParam>& d) {
    d.field("a_min", &ClipParam::a_min).set_default(0.0).describe("Lower bound.");
    d.field("a_max", &ClipParam::a_max).set_default(1.0).describe("Upper bound.");
  }
};

// float32 only, so the dtype check happens at inference, before anything is allocated.
bool Float32Only(const NodeAttrs& attrs, DTypeVector* in, DTypeVector* out) {
  for (DType t : *in)
    if (t != DType::kFloat32) type_error("[", attrs.op->name, "] expects float32 inputs");
  return ElemwiseType<-1, 1>(attrs, in, out);
}

// out (req) f(in...), elementwise over float32 data.
template <class F>
void ForEach(const std::vector<TBlob>& in, OpReqType req, const TBlob& out, F f) {
  if (req == kNullOp) return;
  float* y = out.ptr<float>();
  for (int64_t i = 0; i < out.size(); ++i) {
    const float v = f(i);
    y[i] = req == kAddTo ? y[i] + v : v;
  }
}

void ClipCompute(const NodeAttrs& attrs, const OpContext&, const std::vector<TBlob>& in,
                 const std::vector<OpReqType>& req, const std::vector<TBlob>& out) {
  const auto& p = attrs.get<ClipParam>();
  const float* x = in[0].ptr<float>();
  const float lo = static_cast<float>(p.a_min), hi = static_cast<float>(p.a_max);
  ForEach(in, req[0], out[0], [&](int64_t i) { return std::clamp(x[i], lo, hi); });
}

// d clip / dx passes the gradient where a_min < x < a_max. Inputs: (ograd, x).
void ClipBackward(const NodeAttrs& attrs, const OpContext&, const std::vector<TBlob>& in,
                  const std::vector<OpReqType>& req, const std::vector<TBlob>& out) {
  const auto& p = attrs.get<ClipParam>();
  const float *g = in[0].ptr<float>(), *x = in[1].ptr<float>();
  ForEach(in, req[0], out[0],
          [&](int64_t i) { return x[i] > p.a_min && x[i] < p.a_max ? g[i] : 0.0f; });
}

NDX_REGISTER_OP(my_clip)
    .describe("Clip values to [a_min, a_max].")
    .set_num_inputs(1)
    .add_argument("a", "NDArray", "Input array.")
    .set_params<ClipParam>()  // typed parsing, string dicts, docs, introspection
    .set_attr<FInferShape>("FInferShape", ElemwiseShape<1, 1>)
    .set_attr<FInferType>("FInferType", Float32Only)
    .set_attr<FInplaceOption>("FInplaceOption", InplaceIdentity())
    .set_attr<FCompute>("FCompute<cpu>", ClipCompute)  // honours kWriteTo / kAddTo / kNullOp
    .set_attr<FGradient>("FGradient", ElemwiseGradUseIn{"_backward_my_clip"});

NDX_REGISTER_OP(_backward_my_clip)
    .set_num_inputs(2)
    .set_params<ClipParam>()
    .set_attr<bool>("TIsBackward", true)
    .set_attr<FInferShape>("FInferShape", ElemwiseShape<2, 1>)
    .set_attr<FInferType>("FInferType", Float32Only)
    .set_attr<FCompute>("FCompute<cpu>", ClipBackward);

int main() {
  namespace np = ndx::np;
  NDArray x = np::linspace(-1, 2, 7);  // [-1, -0.5, 0, 0.5, 1, 1.5, 2]
  autograd::attach_grad(x);
  autograd::set_recording(true);
  NDArray y = invoke("my_clip", {x}, {{"a_min", "0"}, {"a_max", "1.2"}})[0];
  NDArray loss = np::sum(y * y);
  autograd::set_recording(false);
  autograd::backward({loss});
  std::cout << "my_clip(x) = " << y << "\nd sum(y^2) / dx = " << autograd::grad_of(x) << "\n";
  // By hand: y = [0, 0, 0, 0.5, 1, 1.2, 1.2]; the gradient is 2y inside (0, 1.2), else 0.
  const std::vector<float> want_y{0, 0, 0, 0.5f, 1, 1.2f, 1.2f}, want_g{0, 0, 0, 1, 2, 0, 0};
  if (y.to_vector<float>() != want_y || autograd::grad_of(x).to_vector<float>() != want_g) {
    std::cerr << "my_clip: wrong result\n";
    return 1;
  }
  try {
    invoke("my_clip", {np::arange(3)});  // int64 in: a typed error before any allocation
  } catch (const Error& e) {
    std::cout << error_kind_name(e.kind()) << ": " << e.what() << "\n";
    return e.kind() == ErrorKind::kTypeError ? 0 : 1;
  }
  return 1;
}
