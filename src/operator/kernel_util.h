// Small helpers of the op families that are not engine kernels: stores honouring OpReqType
// for index kernels (gather / scatter, im2col), whole-array casts for BLAS operands, and
// integer arithmetic that wraps instead of invoking undefined behaviour (integer GEMM).
#pragma once
#include <cmath>
#include <limits>
#include <type_traits>
#include <vector>

#include "kernel/blob.h"
#include "kernel/math/wrap.h"
#include "kernel/reduce.h"
#include "ndx/ndarray.h"
#include "ndx/op.h"
#include "ndx/op_util.h"

namespace ndx::kernel {

// dst (req) src: src broadcast to dst's shape and cast to dst's dtype; both may be strided.
void write_req(const NDArray& src, const NDArray& dst, OpReqType req);
// The blob itself when it already has dtype t, else a contiguous cast copy kept alive in `keep`.
TBlob cast_blob(const TBlob& b, DType t, std::vector<NDArray>* keep);
// Zeros (kWriteTo / kWriteInplace) or leaves (kAddTo, kNullOp) an output.
void fill_output(const TBlob& out, OpReqType req, double value);

// Writes v to *dst as req says: kAddTo adds (wrapping for integers), anything else writes.
template <typename T>
inline void store(T* dst, OpReqType req, compute_t<T> v) {
  if (req == kAddTo)
    *dst = static_cast<T>(wrap_add(static_cast<compute_t<T>>(*dst), v));
  else
    *dst = static_cast<T>(v);
}
template <>
inline void store<bool>(bool* dst, OpReqType req, bool v) {
  *dst = req == kAddTo ? (*dst || v) : v;
}

// A double converted to T's compute type; integers saturate and nan becomes 0, so the
// conversion is always defined (C++ leaves out-of-range float-to-int undefined).
template <typename T>
inline compute_t<T> from_double(double v) {
  using C = compute_t<T>;
  if constexpr (std::is_integral_v<C>) {
    if (std::isnan(v)) return C(0);
    if (v <= static_cast<double>(std::numeric_limits<C>::lowest()))
      return std::numeric_limits<C>::lowest();
    if (v >= static_cast<double>(std::numeric_limits<C>::max()))
      return std::numeric_limits<C>::max();
  }
  return static_cast<C>(v);
}

}  // namespace ndx::kernel
