// The reduction engine's interface, free of SIMD headers. Op families register
//   kernel::reduce(NDX_DISPATCH(reduce, Sum), in, out_keepdims, req, compute)
// where the reducer is a functor (see kernel/reduce-inl.h). `out` is the result seen with the
// input's rank: every reduced dim has size 1, so reducing over any set of axes, keepdims or
// not, and NumPy's collapse-to-a-broadcastable-shape are one call.
#pragma once
#include <optional>
#include <vector>

#include "kernel/elementwise.h"
#include "ndx/op.h"

namespace ndx::kernel {

struct ReduceArgs {
  const TBlob* in = nullptr;
  const TBlob* out = nullptr;  // in's rank; size 1 along the reduced dims
  OpReqType req = kWriteTo;
  DType compute = DType::kUnknown;  // accumulation dtype; the input is cast to it in blocks
  std::optional<double> initial;    // starts every accumulator (NumPy's initial=)
  FunctorArgs args;                 // for the reducer
};
using ReduceEntry = void (*)(const ReduceArgs&);
// A reducer's CPU instance and, where compiled, its GPU instance (kernel/gpu.h).
// `cpu` is the best target's instance, which may compute float types only; `cpu_nonfloat` the
// best of the targets that compile every type (kernel/vec-inl.h, compiled_for_target).
struct ReduceFn {
  ReduceEntry cpu = nullptr, gpu = nullptr, cpu_nonfloat = nullptr;
  ReduceFn(ReduceEntry cpu_entry = nullptr, ReduceEntry gpu_entry = nullptr,
           ReduceEntry cpu_nonfloat_entry = nullptr)
      : cpu(cpu_entry),
        gpu(gpu_entry),
        cpu_nonfloat(cpu_nonfloat_entry ? cpu_nonfloat_entry : cpu_entry) {}
  void operator()(const ReduceArgs& a) const;
};

void reduce(ReduceFn fn, const TBlob& in, const TBlob& out, OpReqType req, DType compute,
            std::optional<double> initial = std::nullopt, FunctorArgs args = {});

// out (shaped like in, but 1 along `axis`... as keepdims) gets the index of the first max
// (kMax) or min of each lane along `axis` of a contiguous input; NaN counts as the extremum.
// axis < 0: over the flattened array into a single element.
struct ArgReduceArgs {
  const TBlob* in = nullptr;
  int axis = -1;
  int64_t* out = nullptr;  // contiguous, one index per lane
};
using ArgReduceFn = void (*)(const ArgReduceArgs&);  // every target compiles every dtype

// A view of `out` (the reduced shape, keepdims or not) with in's rank: reduced dims get size
// 1 and stride 0.
TBlob keepdims_view(const TBlob& out, const Shape& in, const std::vector<bool>& reduced);

// dst (req) sum of src over the dims along which dst (broadcastable to src) is broadcast:
// NumPy's collapse to a shape, the backward of broadcasting. Same dtype in and out.
void sum_to_shape(const TBlob& src, const TBlob& dst, OpReqType req);

// The smallest / largest element of a non-empty array, as a double (NaN if one is NaN).
double min_value(const TBlob& x);
double max_value(const TBlob& x);

// The number of nonzero elements (NaN counts) of a contiguous host array, or -1 where its
// dtype has no fast path here (complex, float16, bfloat16: the caller reduces instead).
int64_t count_nonzero_contig(const TBlob& x);

}  // namespace ndx::kernel
