// Key sorting (kernel/key_sort.h) on Highway's vqsort. Its public Sorter seeds the pivot
// sampling with a getrandom() system call on every call: most of the 0.45 us each lane of
// 16-64 keys took (65536 lanes of 64 float32: 39 ms against NumPy's 6). So short lanes go to
// vqsort compiled here once per SIMD target and entered below the Sorter, seeded from a
// per-thread counter; vqsort's depth limit (heapsort past 2 log n + 4 levels) still bounds
// the worst case. Long lanes of 32-bit keys are radix sorted (see kRadixMinKeys).
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernel/key_sort.cc"
#include <hwy/foreach_target.h>  // IWYU pragma: keep

#include <hwy/highway.h>

// The entry below the Sorter (detail::Recurse) is Highway 1.0's; other versions go through
// the Sorter.
#if HWY_MAJOR == 1 && HWY_MINOR == 0
#define NDX_VQSORT_INTERNALS 1
#include <hwy/contrib/sort/traits-inl.h>
#include <hwy/contrib/sort/traits128-inl.h>
#include <hwy/contrib/sort/vqsort-inl.h>
#else
#define NDX_VQSORT_INTERNALS 0
#include <hwy/contrib/sort/vqsort.h>
#endif

#include <algorithm>
#include <array>
#include <atomic>
#include <bit>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <vector>

#include "kernel/compress-inl.h"
#include "kernel/key_sort.h"

namespace ndx::kernel::key_sort_detail {
uint64_t next_seed();
}

HWY_BEFORE_NAMESPACE();
namespace ndx::kernel::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

#if NDX_VQSORT_INTERNALS && VQSORT_ENABLED
// `lanes` lanes of T (two u64 lanes per 128-bit key) sorted with traits St.
template <class T, class St>
void vqsort_lanes(T* keys, size_t lanes) {
  const hn::SortTag<T> d;
  const St st;
  // vqsort's own entry zeroes this 8 KB buffer on every call; it only reads what it wrote.
  HWY_ALIGN T buf[hwy::SortConstants::BufNum<T>(HWY_LANES(T))];
  if (hn::detail::HandleSpecialCases(d, st, keys, lanes)) return;
  hn::detail::Generator rng(key_sort_detail::next_seed());
  const size_t max_levels = 2 * hwy::CeilLog2(lanes) + 4;
  hn::detail::Recurse(d, st, keys, keys + lanes, lanes, buf, rng, max_levels);
}

void sort_u32(uint32_t* keys, size_t n) {
  using St = hn::detail::SharedTraits<hn::detail::TraitsLane<hn::detail::OrderAscending<uint32_t>>>;
  vqsort_lanes<uint32_t, St>(keys, n);
}

void sort_u64(uint64_t* keys, size_t n) {
  using St = hn::detail::SharedTraits<hn::detail::TraitsLane<hn::detail::OrderAscending<uint64_t>>>;
  vqsort_lanes<uint64_t, St>(keys, n);
}

void sort_u128(Key128* keys, size_t n) {
  using St = hn::detail::SharedTraits<hn::detail::Traits128<hn::detail::OrderAscending128>>;
  vqsort_lanes<uint64_t, St>(reinterpret_cast<uint64_t*>(keys), 2 * n);
}
#elif NDX_VQSORT_INTERNALS  // a target vqsort leaves out (the scalar one)
void sort_u32(uint32_t* keys, size_t n) { std::sort(keys, keys + n); }
void sort_u64(uint64_t* keys, size_t n) { std::sort(keys, keys + n); }
void sort_u128(Key128* keys, size_t n) {
  std::sort(keys, keys + n, [](const Key128& a, const Key128& b) {
    return a.hi != b.hi ? a.hi < b.hi : a.lo < b.lo;
  });
}
#else
void sort_u32(uint32_t* keys, size_t n) { hwy::VQSort(keys, n, hwy::SortAscending()); }
void sort_u64(uint64_t* keys, size_t n) { hwy::VQSort(keys, n, hwy::SortAscending()); }
void sort_u128(Key128* keys, size_t n) {
  hwy::VQSort(reinterpret_cast<hwy::uint128_t*>(keys), n, hwy::SortAscending());
}
#endif

// ---- Quicksort down to a sorting network, for lanes of up to a few thousand keys ----
// vqsort's own partitioning is costly on such lanes: on the Emerald Rapids host, 8192 lanes of
// 512 float32 took 15.6 ms (NumPy 5.7) where 16384 lanes of 256, which its base case sorts
// outright, took 6.2. Here a lane is split around a ninther pivot until its parts fit the
// network below (its base case): the keys below the pivot are compressed in place to the front, the
// others into `rest` and copied after them (a lane this short stays in L1).

// Keys of keys[0, n) that go first (below the pivot, or kOrEqual not above it) moved to the
// front in their order and the others after them; returns how many go first. `rest` holds
// n + one vector of keys.
template <bool kOrEqual, class K>
size_t partition_keys(K* HWY_RESTRICT keys, size_t n, K pivot, K* HWY_RESTRICT rest) {
  const hn::ScalableTag<K> d;
  const size_t N = hn::Lanes(d);
  const auto vp = hn::Set(d, pivot);
  size_t front = 0, back = 0, i = 0;
  for (; i + N <= n; i += N) {
    const auto v = hn::LoadU(d, keys + i);
    const auto later = kOrEqual ? hn::Gt(v, vp) : hn::Not(hn::Lt(v, vp));
    // Compress, then a whole-vector store: the compressing store to memory is slow on Intel.
    hn::StoreU(compress_lanes(d, v, later), d, rest + back);
    const size_t later_count = hn::CountTrue(d, later);
    back += later_count;
    // Writes at most up to keys + i + N, all of it read already.
    hn::StoreU(compress_lanes(d, v, hn::Not(later)), d, keys + front);
    front += N - later_count;
  }
  for (; i < n; ++i) {
    const K k = keys[i];
    if (kOrEqual ? k <= pivot : k < pivot) {
      keys[front++] = k;
    } else {
      rest[back++] = k;
    }
  }
  std::memcpy(keys + front, rest, back * sizeof(K));
  return front;
}

// ---- A sorting network held in registers, the quicksort's base case ----
// vqsort's base case always sorts 16 vectors (256 float32 keys on AVX-512), however few keys
// a part holds, and copies them through a buffer. This network is sized to the next power
// of two of vectors, up to 32 on AVX-512 (512 keys, in its 32 registers): a lane of 512 keys
// is sorted with no partition at all. The keys form a matrix of kV rows (vectors) by N
// columns (lanes):
// 1. Batcher's odd-even merge sort runs down the columns, between whole rows: one Min and one
//    Max sort a comparator's pair in all N columns at once.
// 2. Runs are then merged in blocks of 2, 4, ..., N columns. The run of a block of S columns
//    is read row by row (its row r holds its keys r S to r S + S - 1). Two runs of S / 2
//    columns merge as a bitonic sequence: first between rows (reverse the blocks of the later
//    half of the rows, compare row i with row kV - 1 - i, recurse on both halves of the
//    rows), then inside each row (lane j against lane S - 1 - j, then lanes S / 4, ..., 1
//    apart).
// NumPy's x86-simd-sort sorts its base case the same way. Against a bitonic sort of each
// vector followed by whole-row merges, it takes a third of the steps inside vectors (each a
// shuffle, a Min and a masked Max): in a C++ loop over 4M keys, lanes of 512 keys took
// 4.7-4.9 ms against 6.9 (vqsort: 11.4), lanes of 64 2.9 ms (vqsort: 10.6).

template <class K>
constexpr size_t kLanesOf = HWY_LANES(K);
// Vectors the network sorts at most: what the registers hold (AVX-512 has 32, AVX2 16).
constexpr size_t kNetworkVectors = HWY_LANES(uint8_t) >= 64 ? 32 : 16;

// Lane i of the result is lane i ^ kXor of v.
template <size_t kXor, class D, class V>
HWY_INLINE V lanes_xor(D d, V v) {
  using K = hn::TFromD<D>;
  if constexpr (kXor == kLanesOf<K> - 1) {
    return hn::Reverse(d, v);
#if HWY_TARGET != HWY_SCALAR  // (one lane: never called)
  } else if constexpr (kXor == 1 && sizeof(K) == 8) {
    return hn::Shuffle01(v);
  } else if constexpr (kXor == 1 && sizeof(K) == 4) {
    return hn::Shuffle2301(v);
  } else if constexpr (kXor == 2 && sizeof(K) == 4) {
    return hn::Shuffle1032(v);
  } else if constexpr (kXor == 3 && sizeof(K) == 4) {
    return hn::Shuffle0123(v);
  } else {
    const hn::RebindToSigned<D> di;
    using I = hn::TFromD<decltype(di)>;
    return hn::TableLookupLanes(
        v, hn::IndicesFromVec(d, hn::Xor(hn::Iota(di, 0), hn::Set(di, I{kXor}))));
#endif
  }
}

// One comparator step inside a vector: lane i against lane i ^ kXor, the lanes with bit kHigh
// taking the maximum.
template <size_t kXor, size_t kHigh, class D, class V>
HWY_INLINE V step_in_vector(D d, V v) {
  const V other = lanes_xor<kXor>(d, v);
  const auto high = hn::TestBit(hn::Iota(d, 0), hn::Set(d, hn::TFromD<D>{kHigh}));
  return hn::IfThenElse(high, hn::Max(v, other), hn::Min(v, other));
}

template <class V>
HWY_INLINE void compare_exchange(V& a, V& b) {
  const V low = hn::Min(a, b);
  b = hn::Max(a, b);
  a = low;
}

// Batcher's odd-even merge sort network for kRows (a power of two) wires, at compile time.
template <size_t kRows>
struct ColumnNetwork {
  static constexpr size_t kMaxPairs = 256;  // 191 for 32 rows
  uint8_t i[kMaxPairs] = {}, j[kMaxPairs] = {};
  size_t count = 0;
  constexpr ColumnNetwork() {
    for (size_t p = 1; p < kRows; p <<= 1)
      for (size_t k = p; k >= 1; k >>= 1)
        for (size_t s = k % p; s + k < kRows; s += 2 * k)
          for (size_t r = 0; r < std::min(k, kRows - s - k); ++r)
            if ((r + s) / (2 * p) == (r + s + k) / (2 * p)) {
              i[count] = static_cast<uint8_t>(r + s);
              j[count] = static_cast<uint8_t>(r + s + k);
              ++count;
            }
  }
};

// The between-rows part of merging blocks of kScale columns (see above).
template <size_t kRows, size_t kScale, class D, class V>
HWY_INLINE void merge_rows(D d, V* v) {
  if constexpr (kRows > 1) {
    HWY_UNROLL(16)
    for (size_t r = kRows / 2; r < kRows; ++r) v[r] = lanes_xor<kScale - 1>(d, v[r]);
    HWY_UNROLL(16)
    for (size_t r = 0; r < kRows / 2; ++r) compare_exchange(v[r], v[kRows - 1 - r]);
    merge_rows<kRows / 2, kScale>(d, v);
    merge_rows<kRows / 2, kScale>(d, v + kRows / 2);
  }
}

// The inside-a-row part: lane j against lane kScale - 1 - j, then kScale / 4, ..., 1 apart.
template <size_t kScale, size_t kApart = kScale / 4, class D, class V>
HWY_INLINE V merge_in_row(D d, V v) {
  if constexpr (kApart == kScale / 4) v = step_in_vector<kScale - 1, kScale / 2>(d, v);
  if constexpr (kApart >= 1)
    v = merge_in_row<kScale, kApart / 2>(d, step_in_vector<kApart, kApart>(d, v));
  return v;
}

// Merges runs of kScale / 2 columns into runs of kScale, then up to N.
template <size_t kRows, size_t kScale, class D, class V>
HWY_INLINE void merge_columns(D d, V* v) {
  if constexpr (kScale <= kLanesOf<hn::TFromD<D>>) {
    merge_rows<kRows, kScale>(d, v);
    HWY_UNROLL(32)
    for (size_t r = 0; r < kRows; ++r) v[r] = merge_in_row<kScale>(d, v[r]);
    merge_columns<kRows, 2 * kScale>(d, v);
  }
}

// Sorts keys[0, n), n <= kV vectors, padded with the largest key (which sorts last).
template <size_t kV, class K>
HWY_NOINLINE void network_sort(K* HWY_RESTRICT keys, size_t n) {
  const hn::ScalableTag<K> d;
  using V = hn::Vec<decltype(d)>;
  constexpr size_t N = kLanesOf<K>;
  const V largest = hn::Set(d, std::numeric_limits<K>::max());
  V v[kV];
  const size_t full = n / N, tail = n % N;
#if HWY_MEM_OPS_MIGHT_FAULT
  HWY_ALIGN K last[N];
#else
  const auto in_tail = hn::FirstN(d, tail);
#endif
  HWY_UNROLL(32)
  for (size_t i = 0; i < kV; ++i) {
    if (i < full) {
      v[i] = hn::LoadU(d, keys + i * N);
    } else if (i == full && tail) {  // no read past the keys
#if HWY_MEM_OPS_MIGHT_FAULT
      hn::Store(largest, d, last);
      std::memcpy(last, keys + i * N, tail * sizeof(K));
      v[i] = hn::Load(d, last);
#else  // a masked load: a copy through memory stalls the load (a 15-key lane took 2.5x a 16)
      v[i] = hn::IfThenElse(in_tail, hn::MaskedLoad(in_tail, d, keys + i * N), largest);
#endif
    } else {
      v[i] = largest;
    }
  }
  static constexpr ColumnNetwork<kV> kNetwork;
  HWY_UNROLL(256)
  for (size_t p = 0; p < kNetwork.count; ++p) compare_exchange(v[kNetwork.i[p]], v[kNetwork.j[p]]);
  merge_columns<kV, 2>(d, v);
  HWY_UNROLL(32)
  for (size_t i = 0; i < full; ++i) hn::StoreU(v[i], d, keys + i * N);
  if (tail) {
#if HWY_MEM_OPS_MIGHT_FAULT
    hn::Store(v[full], d, last);
    std::memcpy(keys + full * N, last, tail * sizeof(K));
#else
    hn::BlendedStore(v[full], in_tail, d, keys + full * N);
#endif
  }
}

// Sorts n <= kNetworkVectors vectors of keys on the smallest network that holds them.
template <class K>
void network_sort_keys(K* keys, size_t n) {
  constexpr size_t N = kLanesOf<K>;
  if (n <= N) return network_sort<1>(keys, n);
  if (n <= 2 * N) return network_sort<2>(keys, n);
  if (n <= 4 * N) return network_sort<4>(keys, n);
  if (n <= 8 * N) return network_sort<8>(keys, n);
  if (kNetworkVectors == 16 || n <= 16 * N) return network_sort<16>(keys, n);
  network_sort<kNetworkVectors>(keys, n);
}

template <class K>
inline K median3(K a, K b, K c) {
  return std::max(std::min(a, b), std::min(std::max(a, b), c));
}

// Tukey's ninther: the median of three medians of three keys spread over the lane. Parts
// that come out nearer halves need fewer and smaller networks.
template <class K>
inline K pivot_of(const K* keys, size_t n) {
  const size_t e = n / 9;
  auto m = [&](size_t i) { return median3(keys[i], keys[i + e], keys[i + 2 * e]); };
  return median3(m(e / 2), m(3 * e + e / 2), m(6 * e + e / 2));
}

// The quicksort; `fallback` (vqsort) bounds the worst case past `depth` levels.
template <class K>
void partition_sort(K* keys, size_t n, K* rest, size_t depth, void (*fallback)(K*, size_t)) {
  constexpr size_t base = kNetworkVectors * kLanesOf<K>;
  while (n > base) {
    if (depth-- == 0) return fallback(keys, n);
    const K pivot = pivot_of(keys, n);
    size_t front = partition_keys<false>(keys, n, pivot, rest);
    if (front == 0) {  // the pivot is the least key: its equals go first, already sorted
      front = partition_keys<true>(keys, n, pivot, rest);
      keys += front;
      n -= front;
      continue;
    }
    // The shorter part by recursion, the longer by the loop: the stack stays O(log n).
    if (front <= n - front) {
      partition_sort(keys, front, rest, depth, fallback);
      keys += front;
      n -= front;
    } else {
      partition_sort(keys + front, n - front, rest, depth, fallback);
      n = front;
    }
  }
  if (n > 1) network_sort_keys(keys, n);
}

void partition_sort_u32(uint32_t* keys, size_t n, uint32_t* rest, size_t depth) {
  partition_sort<uint32_t>(keys, n, rest, depth, sort_u32);
}

void partition_sort_u64(uint64_t* keys, size_t n, uint64_t* rest, size_t depth) {
  partition_sort<uint64_t>(keys, n, rest, depth, sort_u64);
}

// Applies the comparators to every column of a rows x kColumnLanes matrix: row i of every
// column gets the min and row j the max, a vector of columns at a time.
template <class K>
void network_columns(K* HWY_RESTRICT cols, const ComparatorPair* pairs, size_t count) {
  const hn::ScalableTag<K> d;
  const size_t N = hn::Lanes(d);
  for (size_t c = 0; c < kColumnLanes; c += N) {
    for (size_t p = 0; p < count; ++p) {
      K* a = cols + pairs[p].i * kColumnLanes + c;
      K* b = cols + pairs[p].j * kColumnLanes + c;
      const auto va = hn::LoadU(d, a), vb = hn::LoadU(d, b);
      hn::StoreU(hn::Min(va, vb), d, a);
      hn::StoreU(hn::Max(va, vb), d, b);
    }
  }
}

void network_u32(uint32_t* cols, const ComparatorPair* pairs, size_t count) {
  network_columns(cols, pairs, count);
}

void network_u64(uint64_t* cols, const ComparatorPair* pairs, size_t count) {
  network_columns(cols, pairs, count);
}

// The same over (key, position) pairs held in two matrices: a pair moves where its key is
// larger, or equal with a larger position (so the order is stable).
void network_u64_pairs(uint64_t* HWY_RESTRICT keys, uint64_t* HWY_RESTRICT pos,
                       const ComparatorPair* pairs, size_t count) {
  const hn::ScalableTag<uint64_t> d;
  const size_t N = hn::Lanes(d);
  for (size_t c = 0; c < kColumnLanes; c += N) {
    for (size_t p = 0; p < count; ++p) {
      const size_t a = pairs[p].i * kColumnLanes + c, b = pairs[p].j * kColumnLanes + c;
      const auto ka = hn::LoadU(d, keys + a), kb = hn::LoadU(d, keys + b);
      const auto pa = hn::LoadU(d, pos + a), pb = hn::LoadU(d, pos + b);
      const auto swap = hn::Or(hn::Gt(ka, kb), hn::And(hn::Eq(ka, kb), hn::Gt(pa, pb)));
      hn::StoreU(hn::IfThenElse(swap, kb, ka), d, keys + a);
      hn::StoreU(hn::IfThenElse(swap, ka, kb), d, keys + b);
      hn::StoreU(hn::IfThenElse(swap, pb, pa), d, pos + a);
      hn::StoreU(hn::IfThenElse(swap, pa, pb), d, pos + b);
    }
  }
}

// float bit patterns (K: uint32_t for float32, uint64_t for float64) as unsigned sort keys
// (operator/sort_keys.h's to_key<T, false>): a negative value flips all its bits, another its
// sign bit, and NaN becomes the largest key. x and y may be the same lane.
template <class K>
void float_keys(const K* x, K* y, size_t n) {
  const hn::ScalableTag<K> d;
  const hn::RebindToSigned<decltype(d)> di;
  using I = hn::TFromD<decltype(di)>;
  constexpr int kTop = 8 * sizeof(K) - 1;
  const size_t N = hn::Lanes(d);
  const auto sign = hn::Set(d, K{1} << kTop);
  const auto inf =
      hn::Set(di, static_cast<I>(sizeof(K) == 4 ? 0x7F800000ull : 0x7FF0000000000000ull));
  auto key_of = [&](auto b) {
    const auto negative = hn::BitCast(d, hn::ShiftRight<kTop>(hn::BitCast(di, b)));
    const auto nan = hn::Gt(hn::BitCast(di, hn::AndNot(sign, b)), inf);
    return hn::IfThenElse(hn::RebindMask(d, nan), hn::Set(d, std::numeric_limits<K>::max()),
                          hn::Xor(b, hn::Or(negative, sign)));
  };
  size_t i = 0;
  for (; i + N <= n; i += N) hn::StoreU(key_of(hn::LoadU(d, x + i)), d, y + i);
  if (i < n) {
    HWY_ALIGN K last[hn::MaxLanes(d)] = {};
    std::memcpy(last, x + i, (n - i) * sizeof(K));
    hn::Store(key_of(hn::Load(d, last)), d, last);
    std::memcpy(y + i, last, (n - i) * sizeof(K));
  }
}

// The float bit patterns of keys made by float_keys, in place (NaN comes back NaN).
template <class K>
void float_from_keys(K* y, size_t n) {
  const hn::ScalableTag<K> d;
  const hn::RebindToSigned<decltype(d)> di;
  constexpr int kTop = 8 * sizeof(K) - 1;
  const size_t N = hn::Lanes(d);
  const auto sign = hn::Set(d, K{1} << kTop);
  auto value_of = [&](auto k) {  // sign bit set: flip it back; clear: flip all
    const auto was_negative = hn::BitCast(d, hn::ShiftRight<kTop>(hn::BitCast(di, hn::Not(k))));
    return hn::Xor(k, hn::Or(was_negative, sign));
  };
  size_t i = 0;
  for (; i + N <= n; i += N) hn::StoreU(value_of(hn::LoadU(d, y + i)), d, y + i);
  if (i < n) {
    HWY_ALIGN K last[hn::MaxLanes(d)] = {};
    std::memcpy(last, y + i, (n - i) * sizeof(K));
    hn::Store(value_of(hn::Load(d, last)), d, last);
    std::memcpy(y + i, last, (n - i) * sizeof(K));
  }
}

void float32_keys_u32(const uint32_t* x, uint32_t* y, size_t n) { float_keys(x, y, n); }
void float32_from_keys_u32(uint32_t* y, size_t n) { float_from_keys(y, n); }
void float64_keys_u64(const uint64_t* x, uint64_t* y, size_t n) { float_keys(x, y, n); }
void float64_from_keys_u64(uint64_t* y, size_t n) { float_from_keys(y, n); }

// Bytes of one vector of the target: vqsort sorts 16 vectors of keys by its base case.
size_t vector_bytes() { return hn::Lanes(hn::ScalableTag<uint8_t>()); }

// The AND and the OR of n keys: the bits every key shares are those where they agree.
void and_or_u32(const uint32_t* HWY_RESTRICT keys, size_t n, uint32_t* all_and, uint32_t* all_or) {
  const hn::ScalableTag<uint32_t> d;
  const size_t N = hn::Lanes(d);
  auto va = hn::Set(d, ~0u);
  auto vo = hn::Zero(d);
  size_t i = 0;
  for (; i + N <= n; i += N) {
    const auto k = hn::LoadU(d, keys + i);
    va = hn::And(va, k);
    vo = hn::Or(vo, k);
  }
  HWY_ALIGN uint32_t a[hn::MaxLanes(d)], o[hn::MaxLanes(d)];
  hn::Store(va, d, a);
  hn::Store(vo, d, o);
  uint32_t ra = ~0u, ro = 0;
  for (size_t j = 0; j < N; ++j) {
    ra &= a[j];
    ro |= o[j];
  }
  for (; i < n; ++i) {
    ra &= keys[i];
    ro |= keys[i];
  }
  *all_and = ra;
  *all_or = ro;
}

// The smallest and the largest of n >= 1 keys.
template <class K>
HWY_INLINE void key_range(const K* HWY_RESTRICT keys, size_t n, K* lo, K* hi) {
  const hn::ScalableTag<K> d;
  const size_t N = hn::Lanes(d);
  K l = keys[0], h = keys[0];
  size_t i = 0;
  if (n >= N) {
    auto vl = hn::LoadU(d, keys), vh = vl;
    for (; i + N <= n; i += N) {
      const auto k = hn::LoadU(d, keys + i);
      vl = hn::Min(vl, k);
      vh = hn::Max(vh, k);
    }
    l = hn::GetLane(hn::MinOfLanes(d, vl));
    h = hn::GetLane(hn::MaxOfLanes(d, vh));
  }
  for (; i < n; ++i) {
    l = std::min(l, keys[i]);
    h = std::max(h, keys[i]);
  }
  *lo = l;
  *hi = h;
}
void key_range_u32(const uint32_t* keys, size_t n, uint32_t* lo, uint32_t* hi) {
  key_range(keys, n, lo, hi);
}
void key_range_u64(const uint64_t* keys, size_t n, uint64_t* lo, uint64_t* hi) {
  key_range(keys, n, lo, hi);
}

}  // namespace ndx::kernel::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
#include <hwy/contrib/sort/vqsort.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <bit>
#include <mutex>
#include <vector>

#include "kernel/dispatch.h"

namespace ndx::kernel {

namespace key_sort_detail {
// splitmix64 of a per-thread counter: distinct seeds without a system call.
uint64_t next_seed() {
  thread_local uint64_t counter = reinterpret_cast<uintptr_t>(&counter);
  uint64_t z = (counter += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}
}  // namespace key_sort_detail

namespace {

// The digits of an LSD radix sort: only the bits where keys differ (from the AND and the OR
// of all keys) are sorted, in as few passes of at most 11 bits as cover them, split evenly.
// Floats of one sign lose their sign bit and often exponent bits, float16 values widened to
// float32 their 13 low bits, small integers their high bits.
struct Digits {
  int passes = 0;
  int shift[3] = {0, 0, 0};
  uint32_t mask[3] = {0, 0, 0};
  uint32_t first[3] = {0, 0, 0}, last[3] = {0, 0, 0};  // the bucket range of each digit
};

Digits digits_of(uint32_t all_and, uint32_t all_or) {
  Digits g;
  const uint32_t differ = all_and ^ all_or;
  if (differ == 0) return g;  // every key is equal
  const int lo = std::countr_zero(differ), hi = 32 - std::countl_zero(differ);
  g.passes = (hi - lo + 10) / 11;
  const int width = (hi - lo + g.passes - 1) / g.passes;
  for (int p = 0; p < g.passes; ++p) {
    // Three passes keep the digits at bits 0, 11 and 22: for floats the top one then holds
    // the sign and exponent, whose few values fill few buckets (4096 lanes of 1024 float32
    // in [0, 1): 25 ms against 28-32 with three even 10-bit digits).
    g.shift[p] = g.passes == 3 ? 11 * p : lo + p * width;
    g.mask[p] = g.passes == 3 ? (p == 2 ? 1023u : 2047u) : (uint32_t{1} << width) - 1;
    g.first[p] = (all_and >> g.shift[p]) & g.mask[p];
    g.last[p] = g.first[p] | ((differ >> g.shift[p]) & g.mask[p]);
  }
  return g;
}

// One counting pass for every digit.
template <int kPasses>
void count_digits(const uint32_t* keys, size_t n, const Digits& g, uint32_t (*counts)[2048]) {
  for (size_t i = 0; i < n; ++i) {
    const uint32_t k = keys[i];
    for (int p = 0; p < kPasses; ++p) ++counts[p][(k >> g.shift[p]) & g.mask[p]];
  }
}

// LSD radix sort over the four bytes of the keys, skipping a byte every key shares. Its
// shifts and masks are constants and its 256-bucket tables (4 KB) stay in L1, so four passes
// beat the three 11-bit passes below when keys differ in more than 22 bits (float32 of mixed
// sign or a full mantissa), whose 2048-bucket tables cost more to clear and sum than a lane of
// 1024 keys costs to move. 4096 lanes of 1024 float32 in [-3, 3): 27-28 ms -> 20-21 ms; one
// lane of 4M keys: 50 -> 34 ms; lanes of 16384: 20 ms both ways. (Keys that differ in 22 bits
// or fewer take 1 or 2 passes of the digits above: float16 widened, 10 bits of small integers,
// up to 1.5x faster that way than by bytes.)
uint32_t* radix_sort_bytes(uint32_t* keys, uint32_t* scratch, size_t n, uint32_t differ) {
  uint32_t counts[4][256] = {};
  for (size_t i = 0; i < n; ++i) {
    const uint32_t k = keys[i];
    ++counts[0][k & 255];
    ++counts[1][(k >> 8) & 255];
    ++counts[2][(k >> 16) & 255];
    ++counts[3][k >> 24];
  }
  uint32_t* src = keys;
  uint32_t* dst = scratch;
  for (int p = 0; p < 4; ++p) {
    const int shift = 8 * p;
    if (((differ >> shift) & 255) == 0) continue;  // every key has this byte
    uint32_t* c = counts[p];
    uint32_t sum = 0;
    for (int b = 0; b < 256; ++b) {
      const uint32_t here = c[b];
      c[b] = sum;
      sum += here;
    }
    for (size_t i = 0; i < n; ++i) {
      const uint32_t k = src[i];
      dst[c[(k >> shift) & 255]++] = k;
    }
    std::swap(src, dst);
  }
  return src;
}

// LSD radix sort of 32-bit keys over the digits above; lanes of 1024 float32 keys went from
// 26-28 ms to 22-23 ms per 4M keys when the bucket ranges were bounded. Returns where the
// keys ended.
uint32_t* radix_sort(uint32_t* keys, uint32_t* scratch, size_t n) {
  static const auto and_or = NDX_DISPATCH_FN(and_or_u32);
  uint32_t all_and = ~0u, all_or = 0;
  and_or(keys, n, &all_and, &all_or);
  const Digits g = digits_of(all_and, all_or);
  if (g.passes == 3) return radix_sort_bytes(keys, scratch, n, all_and ^ all_or);
  uint32_t counts[3][2048];
  for (int p = 0; p < g.passes; ++p)
    std::fill(counts[p] + g.first[p], counts[p] + g.last[p] + 1, 0u);
  if (g.passes == 1) count_digits<1>(keys, n, g, counts);
  if (g.passes == 2) count_digits<2>(keys, n, g, counts);
  if (g.passes == 3) count_digits<3>(keys, n, g, counts);
  uint32_t* src = keys;
  uint32_t* dst = scratch;
  for (int p = 0; p < g.passes; ++p) {
    uint32_t* c = counts[p];
    uint32_t sum = 0;
    for (uint32_t b = g.first[p]; b <= g.last[p]; ++b) {
      const uint32_t here = c[b];
      c[b] = sum;
      sum += here;
    }
    if (g.first[p] == g.last[p]) continue;  // every key has this digit
    const int shift = g.shift[p];
    const uint32_t mask = g.mask[p];
    for (size_t i = 0; i < n; ++i) {
      const uint32_t k = src[i];
      dst[c[(k >> shift) & mask]++] = k;
    }
    std::swap(src, dst);
  }
  return src;
}

// Short lanes go below the Sorter (no system call per lane), long ones through it: its
// library instance (for AVX3_DL, which this build leaves out) sorted 64-bit keys up to 3x
// faster than this file's AVX3 instance from 256 keys on and 128-bit keys from 128 on (lanes
// of 64 64-bit keys: 35 ms for 4M keys through the Sorter, 9 ms below it; of 1024: 26 ms and
// 59 ms). Measured on the 2-core AMD EPYC (AVX-512) host. (The sort ops send here the lanes
// sort_as_columns leaves out: fewer than kColumnLanes of them, or lengths the network loses.)
// Batcher's odd-even merge sort network for `size` (a power of two) keys.
std::vector<ComparatorPair> odd_even_merge_network(size_t size) {
  std::vector<ComparatorPair> pairs;
  for (size_t p = 1; p < size; p <<= 1)
    for (size_t k = p; k >= 1; k >>= 1)
      for (size_t j = k % p; j + k < size; j += 2 * k)
        for (size_t i = 0; i < std::min(k, size - j - k); ++i)
          if ((i + j) / (2 * p) == (i + j + k) / (2 * p))
            pairs.push_back({static_cast<uint16_t>(i + j), static_cast<uint16_t>(i + j + k)});
  return pairs;
}

// The network of a lane length. Power-of-two sizes are built on first use and kept (all of
// them up to 4096 keys: about 1.1 MB); another length n takes its size's network pruned to
// the comparators below row n, kept per thread for the last length asked (pruned networks of
// every length up to 4096 would hold about 1 GB). Rows past n, padded with the largest key,
// would never change, so every comparator that touches one is a no-op.
const std::vector<ComparatorPair>& network_for(size_t n) {
  constexpr size_t kSizes = std::bit_width(kNetworkMaxKeys);
  static std::mutex mu;
  static std::array<std::atomic<const std::vector<ComparatorPair>*>, kSizes> built{};
  const size_t size = std::bit_ceil(n);
  auto& slot = built[std::bit_width(size) - 1];
  const auto* full = slot.load(std::memory_order_acquire);
  if (!full) {
    std::lock_guard<std::mutex> lock(mu);
    full = slot.load(std::memory_order_relaxed);
    if (!full) {  // kept for the life of the process
      full = new std::vector<ComparatorPair>(odd_even_merge_network(size));
      slot.store(full, std::memory_order_release);
    }
  }
  if (size == n) return *full;
  thread_local size_t pruned_for = 0;
  thread_local std::vector<ComparatorPair> pruned;
  if (pruned_for != n) {
    pruned.clear();
    for (const ComparatorPair& p : *full)
      if (p.j < n) pruned.push_back(p);  // (i < j)
    pruned_for = n;
  }
  return pruned;
}

template <class K, class Fn>
void sort_columns(K* cols, size_t n, Fn network) {
  const auto& pairs = network_for(n);
  network(cols, pairs.data(), pairs.size());
}

hwy::Sorter& thread_sorter() {
  thread_local hwy::Sorter sorter;
  return sorter;
}

// ---- Choosing the 32-bit sort by measurement ----
// Which way sorts 32-bit keys fastest depends on the host more than on the keys. On the 2-core
// AMD EPYC (Zen 4) host the radix sort beat Debian's vqsort (4096 lanes of 1024 keys: 20 ms
// against 38; one lane of 4M: 34 against 190) and the column network beat both from 257 to
// 4096 keys. On a 2-core Emerald Rapids Xeon it was the other way round (4M keys: radix
// 93-116 ms, vqsort 20-30; lanes of 1024: 28.5 and 15.0 ms). So unless NDX_SORT names a
// fixed way, the first sort of a lane length (per power of two) times the candidates on the
// same pseudo-random keys (best of three, about 1-10 ms once) and keeps the fastest. Every
// way sorts, so only the time depends on the choice. The candidates: vqsort (below the Sorter
// under kRadixMinKeys keys, the Sorter from there), the radix sort (from kRadixMinKeys), the
// quicksort down to the register network (up to kPartitionMaxKeys keys) and the
// column network (up to kNetworkMaxKeys). NDX_SORT=quicksort takes the quicksort wherever it
// applies (for tests), as vqsort otherwise.
enum class SortMode { kMeasure, kFixed, kVqsort, kQuicksort };

SortMode sort_mode() {
  static const SortMode mode = [] {
    const char* v = std::getenv("NDX_SORT");
    if (!v || !*v || std::strcmp(v, "measure") == 0) return SortMode::kMeasure;
    if (std::strcmp(v, "fixed") == 0) return SortMode::kFixed;  // the Zen 4 host's rules
    if (std::strcmp(v, "vqsort") == 0) return SortMode::kVqsort;
    if (std::strcmp(v, "quicksort") == 0) return SortMode::kQuicksort;  // where it applies
    std::fprintf(stderr, "ndx: NDX_SORT=%s is not measure, fixed, vqsort or quicksort; measuring\n",
                 v);
    return SortMode::kMeasure;
  }();
  return mode;
}

enum Way : uint8_t { kUnknown = 0, kRadix, kSorter, kColumns, kPartition };

// The longest lanes the quicksort is tried on (its buffer: 256 KB a thread).
constexpr size_t kPartitionMaxKeys = size_t{1} << 16;

void partition_sort(uint32_t* keys, size_t n) {
  static const auto sort = NDX_DISPATCH_FN(partition_sort_u32);
  thread_local std::vector<uint32_t> rest;
  if (rest.size() < n + 64) rest.resize(n + 64);  // a vector's slack past the keys
  sort(keys, n, rest.data(), 2 * static_cast<size_t>(std::bit_width(n)) + 4);
}

void partition_sort(uint64_t* keys, size_t n) {
  static const auto sort = NDX_DISPATCH_FN(partition_sort_u64);
  thread_local std::vector<uint64_t> rest;
  if (rest.size() < n + 64) rest.resize(n + 64);
  sort(keys, n, rest.data(), 2 * static_cast<size_t>(std::bit_width(n)) + 4);
}

// Milliseconds of the fastest of three runs of `sort` on copies of `keys`.
template <class K, class Fn>
double best_ms(const std::vector<K>& keys, std::vector<K>& work, Fn sort) {
  double best = 1e30;
  for (int rep = 0; rep < 3; ++rep) {
    std::copy(keys.begin(), keys.end(), work.begin());
    const auto t0 = std::chrono::steady_clock::now();
    sort(work.data());
    best = std::min(
        best,
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  }
  return best;
}

// `total` splitmix64 keys: every bit of them varies, as floats of mixed sign.
template <class K>
std::vector<K> measurement_keys(size_t total) {
  std::vector<K> keys(total);
  uint64_t z = 0;
  for (auto& k : keys) {
    uint64_t x = (z += 0x9E3779B97F4A7C15ull);
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    k = static_cast<K>(x ^ (x >> 31));
  }
  return keys;
}

// Milliseconds of sorting `keys` in lanes of n (whole blocks of kColumnLanes lanes) as
// columns of `network`.
template <class K, class Fn>
double columns_ms(const std::vector<K>& keys, std::vector<K>& work, size_t n, Fn network) {
  return best_ms(keys, work, [&](K* w) {
    for (size_t o = 0; o + n * kColumnLanes <= keys.size(); o += n * kColumnLanes)
      sort_columns(w + o, n, network);
  });
}

// The fastest way for lanes of n (a power of two) 32-bit keys: lane by lane (below
// kRadixMinKeys keys vqsort below the Sorter, from there the radix sort or the Sorter), or
// kColumnLanes lanes at a time as columns (n <= kNetworkMaxKeys). Measured on enough lanes to
// hold about 64K keys (at most 256K keys in one lane).
Way measure_u32(size_t n, bool with_columns) {
  static const auto below_sorter = NDX_DISPATCH_FN(sort_u32);
  const size_t total =
      std::min(n * std::max<size_t>(kColumnLanes, (size_t{1} << 16) / n), size_t{1} << 18);
  const size_t len = std::min(n, total);
  const std::vector<uint32_t> keys = measurement_keys<uint32_t>(total);
  std::vector<uint32_t> work(total), scratch(len);
  auto lane_by_lane = [&](auto sort_one) {
    return best_ms(keys, work, [&](uint32_t* w) {
      for (size_t o = 0; o + len <= total; o += len) sort_one(w + o);
    });
  };
  double best;
  Way way;
  if (len < kRadixMinKeys) {
    best = lane_by_lane([&](uint32_t* w) { below_sorter(w, len); });
    way = kSorter;
  } else {
    const double radix = lane_by_lane([&](uint32_t* w) { radix_sort(w, scratch.data(), len); });
    const double sorter =
        lane_by_lane([&](uint32_t* w) { thread_sorter()(w, len, hwy::SortAscending()); });
    best = std::min(radix, sorter);
    way = radix <= sorter ? kRadix : kSorter;
  }
  if (len <= kPartitionMaxKeys) {
    const double partition = lane_by_lane([&](uint32_t* w) { partition_sort(w, len); });
    if (partition < best) {
      best = partition;
      way = kPartition;
    }
  }
  if (with_columns && len == n && n <= kNetworkMaxKeys && total >= n * kColumnLanes) {
    static const auto network = NDX_DISPATCH_FN(network_u32);
    if (columns_ms(keys, work, n, network) < best) way = kColumns;
  }
  return way;
}

// vqsort's way for a lane of 64-bit keys: below the Sorter for short lanes, the Sorter's own
// (AVX3_DL) instance for long ones (see above).
void vqsort_u64(uint64_t* keys, size_t n) {
  static const auto sort = NDX_DISPATCH_FN(sort_u64);
  if (n < 256) {
    sort(keys, n);
  } else {
    thread_sorter()(keys, n, hwy::SortAscending());
  }
}

// The fastest way for lanes of n (a power of two) 64-bit keys, measured as for 32-bit keys
// on about 64K pseudo-random keys: vqsort (kSorter) or the quicksort lane by lane, or, with
// `with_columns` and n <= kNetworkMaxKeys, the column network (kColumns).
Way measure_u64(size_t n, bool with_columns) {
  static const auto network = NDX_DISPATCH_FN(network_u64);
  const size_t total = std::max(n * kColumnLanes, size_t{1} << 16);
  const std::vector<uint64_t> keys = measurement_keys<uint64_t>(total);
  std::vector<uint64_t> work(total);
  auto lane_by_lane = [&](auto sort_one) {
    return best_ms(keys, work, [&](uint64_t* w) {
      for (size_t o = 0; o + n <= total; o += n) sort_one(w + o);
    });
  };
  double best = lane_by_lane([&](uint64_t* w) { vqsort_u64(w, n); });
  Way way = kSorter;
  if (n <= kPartitionMaxKeys) {
    const double quick = lane_by_lane([&](uint64_t* w) { partition_sort(w, n); });
    if (quick < best) {
      best = quick;
      way = kPartition;
    }
  }
  if (with_columns && n <= kNetworkMaxKeys && columns_ms(keys, work, n, network) < best)
    way = kColumns;
  return way;
}

// The measured way for lanes of n keys of type K, measured once per power of two.
template <class K>
Way measured_way(size_t n, bool with_columns) {
  static std::array<std::atomic<uint8_t>, 2 * 64> ways{};
  auto& slot = ways[2 * std::bit_width(n) + (with_columns ? 1 : 0)];
  uint8_t way = slot.load(std::memory_order_relaxed);
  if (way == kUnknown) {
    way = sizeof(K) == 4 ? measure_u32(std::bit_ceil(n), with_columns)
                         : measure_u64(std::bit_ceil(n), with_columns);
    slot.store(way, std::memory_order_relaxed);
  }
  return static_cast<Way>(way);
}

bool quicksort_u64(size_t n) {
  if (n > kPartitionMaxKeys) return false;
  switch (sort_mode()) {
    case SortMode::kQuicksort:
      return true;
    case SortMode::kMeasure:
      return measured_way<uint64_t>(n, false) == kPartition;
    default:
      return false;
  }
}

}  // namespace

void float32_keys(const uint32_t* x, uint32_t* y, size_t n) {
  static const auto convert = NDX_DISPATCH_FN(float32_keys_u32);
  convert(x, y, n);
}

void float32_from_keys(uint32_t* y, size_t n) {
  static const auto convert = NDX_DISPATCH_FN(float32_from_keys_u32);
  convert(y, n);
}

void float64_keys(const uint64_t* x, uint64_t* y, size_t n) {
  static const auto convert = NDX_DISPATCH_FN(float64_keys_u64);
  convert(x, y, n);
}

void float64_from_keys(uint64_t* y, size_t n) {
  static const auto convert = NDX_DISPATCH_FN(float64_from_keys_u64);
  convert(y, n);
}

uint32_t* sort_keys(uint32_t* keys, size_t n, std::vector<uint32_t>* scratch) {
  static const auto sort = NDX_DISPATCH_FN(sort_u32);
  if (n < 2) return keys;
  const SortMode mode = sort_mode();
  Way way = kUnknown;
  if (mode == SortMode::kMeasure) way = measured_way<uint32_t>(n, false);
  if (mode == SortMode::kQuicksort && n <= kPartitionMaxKeys) way = kPartition;
  if (way == kPartition && n <= kPartitionMaxKeys) {  // (a bucket spans up to 2n - 1 keys)
    partition_sort(keys, n);
    return keys;
  }
  if (n < kRadixMinKeys) {
    sort(keys, n);
    return keys;
  }
  const bool radix = scratch && n <= UINT32_MAX &&  // 32-bit counts
                     (mode == SortMode::kFixed || way == kRadix);
  if (radix) {
    scratch->resize(n);  // only now: a lane of 4M keys would clear 16 MB for nothing
    return radix_sort(keys, scratch->data(), n);
  }
  thread_sorter()(keys, n, hwy::SortAscending());
  return keys;
}

void sort_keys(uint64_t* keys, size_t n) {
  if (n < 2) return;
  if (quicksort_u64(n)) return partition_sort(keys, n);
  vqsort_u64(keys, n);
}

namespace {

// Orders a run of positions whose keys share their high halves by the low halves, keeping
// the order of equal keys (the run's positions ascend).
void order_run(const uint64_t* keys, uint64_t* run, size_t m, std::vector<uint64_t>& aux) {
  auto low = [&](uint64_t entry) { return static_cast<uint32_t>(keys[entry & 0xFFFFFFFFu]); };
  if (m <= 16) {  // insertion sort: stable, and most runs hold two or three keys
    for (size_t i = 1; i < m; ++i) {
      const uint64_t entry = run[i];
      const uint32_t k = low(entry);
      size_t j = i;
      for (; j > 0 && low(run[j - 1]) > k; --j) run[j] = run[j - 1];
      run[j] = entry;
    }
    return;
  }
  aux.resize(2 * m);
  uint64_t* by_low = aux.data();
  uint64_t* old = aux.data() + m;
  std::copy(run, run + m, old);
  for (size_t i = 0; i < m; ++i) by_low[i] = (uint64_t{low(run[i])} << 32) | i;
  sort_keys(by_low, m);
  for (size_t i = 0; i < m; ++i) run[i] = old[by_low[i] & 0xFFFFFFFFu];
}

constexpr uint64_t kMaxCountedValues = uint64_t{1} << 20;  // counts of 4 MiB at most

// Keys of fewer than n / 4 distinct values (lo + 0 .. lo + span) in their stable order by
// counting (two passes); false, with nothing written, for others. A full sort of distinct
// (offset, position) keys took lanes of 65536 int64 values in [-3, 3) to 0.54x NumPy's
// unstable argsort (its partitions leave ties in any order), int32 ones to 0.42x.
template <class K>
bool order_by_counts(const K* keys, size_t n, K lo, K span, uint64_t* order) {
  if (span >= n / 4 || span >= kMaxCountedValues) return false;
  thread_local std::vector<uint32_t> first;
  first.assign(static_cast<size_t>(span) + 2, 0);
  for (size_t j = 0; j < n; ++j) ++first[keys[j] - lo + 1];
  for (size_t v = 1; v < first.size(); ++v) first[v] += first[v - 1];
  for (size_t j = 0; j < n; ++j) order[first[keys[j] - lo]++] = j;
  return true;
}

// Keys of few values are counted. Keys whose span (largest - smallest) leaves room below 64
// bits for the positions: each key's offset from the smallest goes above its position, and
// one sort orders them (ties by position). Most int64 data is of this kind (labels, indices,
// counts, values of a bounded range), where the high halves, shared by whole runs, took a
// second sort per run: lanes of int64 values in [-3, 3) sorted at 0.38-1.0x NumPy's speed.
// False, with nothing written, for wider spans.
bool order_by_offsets(const uint64_t* keys, size_t n, uint64_t* order) {
  static const auto range = NDX_DISPATCH_FN(key_range_u64);
  uint64_t lo, hi;
  range(keys, n, &lo, &hi);
  const uint64_t span = hi - lo;
  if (order_by_counts(keys, n, lo, span, order)) return true;
  const int position_bits = std::bit_width(n - 1);
  if ((span >> (64 - position_bits)) != 0) return false;
  for (size_t j = 0; j < n; ++j) order[j] = ((keys[j] - lo) << position_bits) | j;
  sort_keys(order, n);
  const uint64_t position_mask = (uint64_t{1} << position_bits) - 1;
  for (size_t j = 0; j < n; ++j) order[j] &= position_mask;
  return true;
}

}  // namespace

bool counted_order(const uint32_t* keys, size_t n, uint64_t* order) {
  if (n < 8) return false;
  static const auto range = NDX_DISPATCH_FN(key_range_u32);
  uint32_t lo, hi;
  range(keys, n, &lo, &hi);
  return order_by_counts(keys, n, lo, hi - lo, order);
}

void stable_order(const uint64_t* keys, size_t n, uint64_t* order) {
  if (n < 2) {
    if (n == 1) order[0] = 0;
    return;
  }
  if (order_by_offsets(keys, n, order)) return;
  for (size_t j = 0; j < n; ++j) order[j] = (keys[j] & ~uint64_t{0xFFFFFFFFu}) | j;
  sort_keys(order, n);
  thread_local std::vector<uint64_t> aux;
  for (size_t i = 0; i < n;) {
    const uint64_t high = order[i] >> 32;
    size_t end = i + 1;
    while (end < n && (order[end] >> 32) == high) ++end;
    if (end - i > 1) order_run(keys, order + i, end - i, aux);
    i = end;
  }
}

bool sort_as_columns(size_t key_bytes, size_t n, size_t lanes) {
  static const auto bytes = NDX_DISPATCH_FN(vector_bytes);
  static const size_t base_case_bytes = 16 * bytes();  // vqsort's base case, in bytes
  if (n < 2 || n > kNetworkMaxKeys) return false;
  if (n <= 32) return true;
  if (lanes < kColumnLanes) return false;
  switch (key_bytes) {
    case 4:  // (fixed: vqsort's base case won from about 100 keys to its end on Zen 4)
      if (sort_mode() == SortMode::kMeasure) return measured_way<uint32_t>(n, true) == kColumns;
      if (sort_mode() == SortMode::kQuicksort) return n <= 96;
      return n <= 96 || n > base_case_bytes / 4;
    case 8:  // the Sorter wins past twice the base case (float64 n = 384: 1.16 against 0.9)
      if (sort_mode() == SortMode::kMeasure) return measured_way<uint64_t>(n, true) == kColumns;
      if (sort_mode() == SortMode::kQuicksort) return false;
      return n > base_case_bytes / 8 && n <= base_case_bytes / 4;
    case 16:  // (key, position) pairs of 64-bit keys: past 32 keys, stable_order wins (float64
              // argsort of lanes of 48 keys: 1.11x NumPy against 0.98x; of 1024: 1.58x against
              // 0.38x); the network beat vqsort's 128-bit keys up to 1024
      return n <= 32;
    default:
      return false;
  }
}

void sort_key_columns(uint32_t* cols, size_t n) {
  static const auto network = NDX_DISPATCH_FN(network_u32);
  if (n > 1) sort_columns(cols, n, network);
}

void sort_key_columns(uint64_t* cols, size_t n) {
  static const auto network = NDX_DISPATCH_FN(network_u64);
  if (n > 1) sort_columns(cols, n, network);
}

void sort_key_columns(uint64_t* keys, uint64_t* positions, size_t n) {
  static const auto network = NDX_DISPATCH_FN(network_u64_pairs);
  if (n < 2) return;
  const auto& pairs = network_for(n);
  network(keys, positions, pairs.data(), pairs.size());
}

void sort_keys(Key128* keys, size_t n) {
  static const auto sort = NDX_DISPATCH_FN(sort_u128);
  if (n < 2) return;
  if (n < 128) {
    sort(keys, n);
  } else {
    thread_sorter()(reinterpret_cast<hwy::uint128_t*>(keys), n, hwy::SortAscending());
  }
}

}  // namespace ndx::kernel
#endif  // HWY_ONCE
