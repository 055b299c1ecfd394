// GPU kernels that are not engine entries and whose declarations are kept out of kernel/gpu.h
// (included by most of the library, so an addition there rebuilds it): each is included by
// the one operator file that calls it and by its .cu file.
#pragma once
#include <cstdint>

#include "ndx/op.h"

namespace ndx::kernel::gpu {

// x[idx] along axis 0, indices read on the device: offsets[b] = base_offset + i_b * step_bytes
// for idx's values i_b (any integer dtype, contiguous) normalized into [0, n). Returns -1 when
// all are in range; otherwise the position of the first one out of range (nothing else is
// meaningful then). Synchronizes with the device to read that verdict.
int64_t row_offsets(const TBlob& idx, int64_t n, int64_t base_offset, int64_t step_bytes,
                    int64_t* offsets);

// x[idx] = values along axis 0 with idx on the device: idx's values checked and normalized as
// row_offsets does, then block b of `values` (idx.size() blocks of shape `rest`, contiguous, of
// x's itemsize) written to row idx[b] of x (`base` points at x's first element; rows are
// step_bytes apart, a block's elements rest_strides elements apart). Where two positions name
// one row the later one wins, as in NumPy. A table of n int64 finds the winners on the device.
// Returns -1, or the first position out of range (then nothing is written).
int64_t put_rows(const TBlob& idx, int64_t n, char* base, int64_t step_bytes, const Shape& rest,
                 const Shape& rest_strides, int64_t itemsize, const char* values);

// Dropout in one pass: mask[i] = scale where the Philox uniform of element i of stream `seed`
// is >= p, else 0 (bit for bit kernel::bernoulli_scaled's), and y[i] = x[i] * mask[i] (the
// Product functor's arithmetic). x, mask and y contiguous, of one float dtype.
void dropout(const TBlob& x, const TBlob& mask, const TBlob& y, double p, double scale,
             uint64_t seed);

// Stable sort of `segments` contiguous lanes of n elements each of x (bool, an integer dtype,
// float32 or float64), in NumPy's order (sort_keys.h): the sorted values into y (x's dtype)
// and / or each lane's source positions into idx (int64); either may be null. More than
// 2^31 - 1 elements hand the case back to the host (CUB counts in int).
void sort_segments(const TBlob& x, int64_t segments, int64_t n, void* y, int64_t* idx);

}  // namespace ndx::kernel::gpu
