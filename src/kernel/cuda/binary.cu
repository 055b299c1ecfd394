// The binary elementwise functors and their gradients (operator/math/binary-inl.h) for CUDA.
#include "kernel/cuda/elementwise.cuh"
#include "kernel/gpu.h"

namespace ndx::kernel::gpu {
#include "operator/math/binary-inl.h"

#define NDX_INSTANTIATE_(F) template void elementwise<F>(const ElementwiseArgs&);
NDX_BINARY_FUNCTORS(NDX_INSTANTIATE_)
#undef NDX_INSTANTIATE_
}  // namespace ndx::kernel::gpu
