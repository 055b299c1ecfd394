#include "kernel/elementwise.h"

#include "kernel/pointwise.h"

namespace ndx::kernel {

void ElementwiseFn::operator()(const ElementwiseArgs& a) const {
  if (!a.out->device.is_gpu()) return cpu_for(a.compute)(a);
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

DType pointwise_compute_type(ComputeTypeFn compute_of, const NodeAttrs& attrs,
                             const std::vector<TBlob>& in, const TBlob& out) {
  if (compute_of) return compute_of(attrs, in, out);
  if (!in.empty() &&
      (out.dtype == DType::kBool || (!is_complex(out.dtype) && is_complex(in[0].dtype))))
    return in[0].dtype;  // predicates, and real results of complex input (abs, real)
  return out.dtype;
}

FCompute elementwise_fn(ElementwiseFn fn, ComputeTypeFn compute_of) {
  return [fn, compute_of](const NodeAttrs& attrs, const OpContext&, const std::vector<TBlob>& in,
                          const std::vector<OpReqType>& req, const std::vector<TBlob>& out) {
    apply(fn, in, out[0], req[0], pointwise_compute_type(compute_of, attrs, in, out[0]));
  };
}

}  // namespace ndx::kernel
