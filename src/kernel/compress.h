// x[mask] on the CPU: counting a bool mask's true elements and copying the elements it keeps,
// a vector at a time (core/indexing.cc's full-shape mask select); packing bytes' truth into
// bits and unpacking bits into bytes (packbits / unpackbits).
#pragma once
#include <cstdint>

namespace ndx::kernel {

// How many of keep[0, n) are true.
int64_t count_true(const bool* keep, int64_t n);

// Copies src[i] to dst, in order, for every i < n with keep[i]; elements are item_size bytes
// (1, 2, 4 or 8). dst holds the count of true elements plus one. Returns the count.
int64_t compress_by_mask(const bool* keep, const void* src, void* dst, int64_t n,
                         int64_t item_size);

// The truth of src[0, n) as bits, eight bytes to a byte of dst: the first of each eight in bit
// 7 (big) or bit 0. Packs a whole number of vectors and returns how many bytes of src it
// packed (0 where vectors hold fewer than 8 bytes); the caller packs the rest.
int64_t pack_truth_bytes(const uint8_t* src, uint8_t* dst, int64_t n, bool big);

// The bits of src[0, n) as bytes 0 / 1, eight to a byte of src, bit 7 first (big) or bit 0.
// Unpacks whole vectors and returns how many bytes of src it unpacked; the caller does the rest.
int64_t unpack_bit_bytes(const uint8_t* src, uint8_t* dst, int64_t n, bool big);

}  // namespace ndx::kernel
