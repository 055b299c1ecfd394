// x[mask] on the CPU: counting a bool mask's true elements and copying the elements it keeps,
// a vector at a time (core/indexing.cc's full-shape mask select).
#pragma once
#include <cstdint>

namespace ndx::kernel {

// How many of keep[0, n) are true.
int64_t count_true(const bool* keep, int64_t n);

// Copies src[i] to dst, in order, for every i < n with keep[i]; elements are item_size bytes
// (1, 2, 4 or 8). dst holds the count of true elements plus one. Returns the count.
int64_t compress_by_mask(const bool* keep, const void* src, void* dst, int64_t n,
                         int64_t item_size);

}  // namespace ndx::kernel
