#include "kernel/elementwise.h"

namespace ndx::kernel {

void ElementwiseFn::operator()(const ElementwiseArgs& a) const {
  if (!a.out->device.is_gpu()) return cpu(a);
  if (!gpu) not_implemented("[elementwise] this kernel has no gpu version in this build");
  gpu(a);
}

void apply(ElementwiseFn fn, const std::vector<TBlob>& in, const TBlob& out, OpReqType req,
           DType compute, FunctorArgs args) {
  ElementwiseArgs a;
  a.in = in.data();
  a.nin = static_cast<int>(in.size());
  a.out = &out;
  a.req = req;
  a.compute = compute;
  a.args = args;
  fn(a);
}

FCompute elementwise_fn(ElementwiseFn fn, ComputeTypeFn compute_of) {
  return [fn, compute_of](const NodeAttrs& attrs, const OpContext&, const std::vector<TBlob>& in,
                          const std::vector<OpReqType>& req, const std::vector<TBlob>& out) {
    DType compute = out[0].dtype;
    if (compute_of)
      compute = compute_of(attrs, in, out[0]);
    else if (!in.empty() &&
             (compute == DType::kBool || (!is_complex(compute) && is_complex(in[0].dtype))))
      compute = in[0].dtype;  // predicates, and real results of complex input (abs, real)
    apply(fn, in, out[0], req[0], compute);
  };
}

}  // namespace ndx::kernel
