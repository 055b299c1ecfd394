// Casts and copies on the kernel engine: block conversions between any two dtypes (what the
// elementwise and reduction engines use to read inputs into their compute type), strided and
// broadcasting copies with casting, and fills.
#pragma once
#include <cstdint>

#include "ndx/op.h"

namespace ndx::kernel {

// dst[i * dst_stride] = src[i * src_stride] cast from `from` to `to`, for i < n (strides in
// elements). Float-to-integer conversions saturate and map NaN to 0, so every value is defined.
void convert(void* dst, DType to, int64_t dst_stride, const void* src, DType from,
             int64_t src_stride, int64_t n);

// dst[i * dst_stride] += src[i], both of dtype t (integers wrap, bools or).
void accumulate(void* dst, DType t, int64_t dst_stride, const void* src, int64_t n);

// dst (req) src: src broadcast to dst's shape and cast to dst's dtype; both may be strided but
// must not overlap unless they are the same view. Threads and releases the GIL on large copies.
void copy(const TBlob& src, const TBlob& dst, OpReqType req = kWriteTo);

// Every element of dst set to value (cast to dst's dtype).
void fill(const TBlob& dst, double value);

}  // namespace ndx::kernel
