// Running one op on GPU arrays, shared by invoke() and fused programs: the op's GPU kernel,
// or, where it has none or hands the case back (kernel/host_fallback.h), its CPU kernel on
// host copies of the inputs, counted in npx.gpu_host_fallbacks().
#pragma once
#include <vector>

#include "ndx/op.h"

namespace ndx {

void compute_on_gpu(const NodeAttrs& attrs, const OpContext& ctx, const std::vector<TBlob>& in,
                    const std::vector<OpReqType>& req, const std::vector<TBlob>& out);

// One kernel call on checked blobs, shared by invoke() and the executor's planned steps: the
// context (train mode, device, the op's requested resources), the operator's profiler span
// (with the bytes of its outputs), and `compute` on the CPU or compute_on_gpu on a GPU.
void run_kernel(const NodeAttrs& attrs, const FCompute& compute, Device device, bool is_train,
                const std::vector<TBlob>& in, const std::vector<OpReqType>& req,
                const std::vector<TBlob>& out);

}  // namespace ndx
