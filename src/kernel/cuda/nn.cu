// The elementwise pieces of the neural-network and reduction ops (operator/math/nn-inl.h,
// operator/math/reduce-inl.h) for CUDA.
#include "kernel/cuda/elementwise.cuh"
#include "kernel/gpu.h"

namespace ndx::kernel::gpu {
#include "kernel/math/reducers-inl.h"
#include "operator/math/nn-inl.h"
#include "operator/math/reduce-inl.h"

#define NDX_INSTANTIATE_(F) template void elementwise<F>(const ElementwiseArgs&);
NDX_NN_FUNCTORS(NDX_INSTANTIATE_)
#undef NDX_INSTANTIATE_
}  // namespace ndx::kernel::gpu
