// The unary and binary elementwise functors (operator/math/unary-inl.h, binary-inl.h) compiled
// for CUDA: one instance of the GPU elementwise engine per functor listed in kernel/gpu.h.
#include "kernel/cuda/elementwise.cuh"
#include "kernel/gpu.h"

namespace ndx::kernel::gpu {
#include "operator/math/unary-inl.h"

#define NDX_INSTANTIATE_(F) template void elementwise<F>(const ElementwiseArgs&);
NDX_UNARY_FUNCTORS(NDX_INSTANTIATE_)
#undef NDX_INSTANTIATE_
}  // namespace ndx::kernel::gpu
