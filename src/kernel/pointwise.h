// How a pointwise op's FCompute calls its elementwise kernel, registered as the op attribute
// "FPointwiseKernel" so graph fusion (src/op/fusion.cc) can call the kernel on blocks of the
// output directly, without the FCompute wrapper. Ops whose FCompute does more than run one
// kernel (a value check, params turned into functor arguments) leave it unset, or set an
// empty one, and are fused through their FCompute.
#pragma once
#include <vector>

#include "kernel/elementwise.h"

namespace ndx::kernel {

struct PointwiseKernel {
  ElementwiseFn fn;                    // empty: call the op's FCompute
  ComputeTypeFn compute_of = nullptr;  // as elementwise_fn's argument
};

// The dtype elementwise_fn(fn, compute_of) computes in for these operands.
DType pointwise_compute_type(ComputeTypeFn compute_of, const NodeAttrs& attrs,
                             const std::vector<TBlob>& in, const TBlob& out);

}  // namespace ndx::kernel
