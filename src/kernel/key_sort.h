// Sorting arrays of unsigned keys ascending on the CPU: the engine under the sort ops
// (operator/sort.cc), which turn values into keys that order as NumPy orders the values.
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

namespace ndx::kernel {

// Keys of 128 bits, ordered by `hi` then `lo` (the layout of Highway's uint128_t).
struct Key128 {
  uint64_t lo, hi;
};

// Lanes of 32-bit keys at least this long may be radix sorted when the caller gives scratch
// space: on the Zen 4 host, vqsort of 32-bit keys took 38 ms for 4096 lanes of 1024 and
// 190 ms for one lane of 4M, three 11-bit LSD passes 27 ms and 49 ms (NumPy: 25 and 170),
// four 8-bit passes (session 53, for keys that differ in over 22 bits) 20 ms and 34 ms. On an
// Emerald Rapids host vqsort won instead, so the choice is measured per host (key_sort.cc,
// NDX_SORT).
inline constexpr size_t kRadixMinKeys = 1024;

// Sorts keys[0, n) ascending and returns where the sorted keys are: `keys`, or `scratch`'s
// data when the radix sort ended there (scratch is resized only when the radix sort is
// chosen; null rules it out). Radix sorting is stable.
uint32_t* sort_keys(uint32_t* keys, size_t n, std::vector<uint32_t>* scratch);
void sort_keys(uint64_t* keys, size_t n);

// float32 bit patterns as the keys of a values-only sort (operator/sort_keys.h's
// to_key<float, false>: NaN last), SIMD; x and y may be the same. And back, in place.
void float32_keys(const uint32_t* x, uint32_t* y, size_t n);
void float32_from_keys(uint32_t* y, size_t n);
void float64_keys(const uint64_t* x, uint64_t* y, size_t n);  // the same for float64
void float64_from_keys(uint64_t* y, size_t n);
void sort_keys(Key128* keys, size_t n);

// The stable order of n <= 2^32 64-bit keys: order[j]'s low 32 bits are the position of the
// j-th smallest key (equal keys in their order). Keys whose span leaves room for the
// positions' bits are sorted once as (key - smallest, position); others as (high half,
// position), runs that share a high half then ordered by the low halves. Two 64-bit sorts at
// worst, where vqsort's 128-bit (key, position) pairs took 2-3x NumPy's time.
void stable_order(const uint64_t* keys, size_t n, uint64_t* order);
// The stable order of n 32-bit keys (as stable_order's) where they take fewer than n / 4
// distinct values, by counting; false, with nothing written, otherwise.
bool counted_order(const uint32_t* keys, size_t n, uint64_t* order);

// Many lanes are sorted kColumnLanes at a time as the columns of a matrix: one sorting
// network (Batcher's odd-even merge sort) runs down all columns in vector steps, with no
// branch on the keys. First for lanes of 2 to 32 keys (131072 lanes of 16 float32: 4.6 ms
// against vqsort's 9.4; NumPy 6.3); session 53 measured it against vqsort and the radix sort
// for every lane length up to 4096 (see sort_as_columns).
inline constexpr size_t kColumnLanes = 16;
inline constexpr size_t kNetworkMaxKeys = 4096;

// Whether `lanes` lanes of n keys of key_bytes bytes (4 or 8; 16 for a 64-bit key with its
// position) sort faster as columns than one lane at a time. Columns win where vqsort must
// partition, past its base case of 16 vectors (the ranges scale with the SIMD width): on the
// AVX-512 host (4M values in lanes of n, NumPy's time over ndx's): float32 sort n = 512 0.24
// -> 0.48, n = 1024 1.17 (radix) -> 1.6, n = 2048 1.7 -> 2.1; float64 sort n = 256 0.43 ->
// 0.59; float64 argsort n = 128 0.37 -> 0.8, n = 1024 1.2 -> 1.8. Inside vqsort's base case
// (float32 lanes of 97-256) and past the limits in key_sort.cc, the network's n log^2 n
// comparators lose. A network sorts 16 columns whatever number of them are filled, so fewer
// than 16 lanes of more than 32 keys are sorted one at a time.
bool sort_as_columns(size_t key_bytes, size_t n, size_t lanes);

// One comparator of a sorting network: row i gets the smaller key, row j (> i) the larger.
struct ComparatorPair {
  uint16_t i, j;
};

// Sorts each column of the row-major n x kColumnLanes matrix `cols` ascending,
// 2 <= n <= kNetworkMaxKeys.
void sort_key_columns(uint32_t* cols, size_t n);
void sort_key_columns(uint64_t* cols, size_t n);
// The same for (key, position) pairs in two such matrices, ordered by key, then position.
void sort_key_columns(uint64_t* keys, uint64_t* positions, size_t n);

}  // namespace ndx::kernel
