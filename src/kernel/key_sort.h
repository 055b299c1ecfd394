// Sorting arrays of unsigned keys ascending on the CPU: the engine under the sort ops
// (operator/sort.cc), which turn values into keys that order as NumPy orders the values.
#pragma once
#include <cstddef>
#include <cstdint>

namespace ndx::kernel {

// Keys of 128 bits, ordered by `hi` then `lo` (the layout of Highway's uint128_t).
struct Key128 {
  uint64_t lo, hi;
};

// Lanes of 32-bit keys at least this long are radix sorted when the caller gives scratch
// space: on the AVX-512 host, vqsort of 32-bit keys took 38 ms for 4096 lanes of 1024 and
// 190 ms for one lane of 4M, three 11-bit LSD passes 27 ms and 49 ms (NumPy: 25 and 170).
inline constexpr size_t kRadixMinKeys = 1024;

// Sorts keys[0, n) ascending and returns where the sorted keys are: `keys`, or `scratch`
// (n keys, may be null) when the radix sort ended there. Radix sorting is stable.
uint32_t* sort_keys(uint32_t* keys, size_t n, uint32_t* scratch);
void sort_keys(uint64_t* keys, size_t n);
void sort_keys(Key128* keys, size_t n);

// Many short lanes are sorted kColumnLanes at a time as the columns of a matrix: one sorting
// network (Batcher's odd-even merge sort) runs down all columns in vector steps. For lanes
// of 2 to kNetworkMaxKeys keys: 131072 lanes of 16 float32 took 4.6 ms against vqsort's 9.4
// (NumPy: 6.3); from 48 keys on vqsort was as fast or faster.
inline constexpr size_t kColumnLanes = 16;
inline constexpr size_t kNetworkMaxKeys = 32;

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
