// The elementwise engine's interface, free of SIMD headers: op families register
//   kernel::elementwise_fn(NDX_DISPATCH(elementwise, Exp))
// (see kernel/elementwise-inl.h for how a functor runs) and backward ops or composite kernels
// call kernel::apply(fn, inputs, out, req, compute_dtype).
#pragma once
#include <vector>

#include "kernel/functor_args.h"
#include "ndx/op.h"

namespace ndx::kernel {

// One elementwise call: out (req) f(in...), the inputs broadcast to out's shape and cast, a
// block at a time, to `compute` (float16 / bfloat16 compute as float). Inputs and output may
// have any strides; the output may alias an input exactly (in place).
struct ElementwiseArgs {
  const TBlob* in = nullptr;
  int nin = 0;
  const TBlob* out = nullptr;
  OpReqType req = kWriteTo;
  DType compute = DType::kUnknown;
  FunctorArgs args;
  // Write a small call's output with non-temporal stores: a block of a large output that a
  // caller (graph fusion) writes piece by piece and that would not stay in the cache anyway.
  bool stream = false;
};

// Outputs from this size on are written with non-temporal stores: they would not stay in the
// cache anyway, and skipping the read-for-ownership saves a third of the memory traffic.
inline constexpr int64_t kStreamBytes = int64_t{32} << 20;
// Smaller outputs (from 4 MiB) are streamed too when the call's whole working set, its
// inputs read in full and its output, passes 40 MiB: more than a 32 MiB L3 holds, so the
// output would be written back to memory anyway and its read for ownership is the waste
// (np.add(a, b, out=o) of 4M float32: 48 MB).
inline constexpr int64_t kStreamMinBytes = int64_t{4} << 20;
inline constexpr int64_t kStreamWorkingSetBytes = int64_t{40} << 20;
using ElementwiseEntry = void (*)(const ElementwiseArgs&);

// One contiguous block of a fused chain (src/op/fusion.cc): out[0:n] = f(in...), every operand
// n contiguous values of the compute type or, where `scalar`, the one value at p; out n
// contiguous values of the compute type. The same vector code as the general entry, so results
// are bit-identical to it.
struct BlockOperand {
  const void* p = nullptr;
  bool scalar = false;
};
using BlockFn = void (*)(const FunctorArgs& args, const BlockOperand* in, void* out, int64_t n,
                         bool stream);
// A functor's block instance for a compute dtype: null unless the dtype is float32 or float64,
// the functor takes it and its result is of that type (no comparisons, no casts).
using BlockResolver = BlockFn (*)(DType compute);
// An elementwise kernel: its instance for this CPU and, where the functor is compiled for
// CUDA, its GPU instance (kernel/gpu.h); calls run the one of the output's device.
// `types` is the functor's kTypes (kernel/config.h): ops read it to refuse complex input
// at type inference, before anything is allocated.
// `cpu` is the best target's instance, which may compute float types only; `cpu_nonfloat` the
// best of the targets that compile every type (kernel/vec-inl.h, compiled_for_target).
struct ElementwiseFn {
  ElementwiseEntry cpu = nullptr, gpu = nullptr;
  unsigned types = 7;             // kAllTypes: bool, integers, floats
  BlockResolver block = nullptr;  // null: fusion runs the general entry on its blocks
  ElementwiseEntry cpu_nonfloat = nullptr;
  ElementwiseFn(ElementwiseEntry cpu_entry = nullptr, ElementwiseEntry gpu_entry = nullptr,
                unsigned functor_types = 7, BlockResolver block_entry = nullptr,
                ElementwiseEntry cpu_nonfloat_entry = nullptr)
      : cpu(cpu_entry),
        gpu(gpu_entry),
        types(functor_types),
        block(block_entry),
        cpu_nonfloat(cpu_nonfloat_entry ? cpu_nonfloat_entry : cpu_entry) {}
  explicit operator bool() const { return cpu != nullptr; }
  // The CPU instance that computes in `compute`.
  ElementwiseEntry cpu_for(DType compute) const { return is_float(compute) ? cpu : cpu_nonfloat; }
  void operator()(const ElementwiseArgs& a) const;
};

void apply(ElementwiseFn fn, const std::vector<TBlob>& in, const TBlob& out, OpReqType req,
           DType compute, FunctorArgs args = {});

// An FCompute running fn on all inputs and output 0, computing in `compute_of(in, out)`;
// by default the output's dtype, or the inputs' for bool outputs (comparisons).
using ComputeTypeFn = DType (*)(const NodeAttrs&, const std::vector<TBlob>& in, const TBlob& out);
FCompute elementwise_fn(ElementwiseFn fn, ComputeTypeFn compute_of = nullptr);

}  // namespace ndx::kernel
