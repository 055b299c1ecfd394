// Mask counting and compression for x[mask] (kernel/compress.h). The scalar branch-free copy
// this replaces wrote every element and advanced by the mask, about one element a cycle; a
// vector's worth of mask bytes widened to a lane mask and one compressing store per vector
// does 8 or 16 elements in a few instructions. Also bytes <-> bits for packbits / unpackbits.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernel/compress.cc"
#include <hwy/foreach_target.h>  // IWYU pragma: keep

#include <hwy/highway.h>

#include <cstdint>

#include "kernel/compress-inl.h"
#include "kernel/compress.h"

HWY_BEFORE_NAMESPACE();
namespace ndx::kernel::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

int64_t count_true_bytes(const uint8_t* HWY_RESTRICT keep, int64_t n) {
  const hn::ScalableTag<uint8_t> d8;
  const hn::Repartition<uint64_t, decltype(d8)> d64;
  const auto N = static_cast<int64_t>(hn::Lanes(d8));
  const auto one = hn::Set(d8, 1);
  auto sums = hn::Zero(d64);
  int64_t i = 0;
  for (; i + N <= n; i += N)
    sums = hn::Add(sums, hn::SumsOf8(hn::Min(hn::LoadU(d8, keep + i), one)));
  auto count = static_cast<int64_t>(hn::GetLane(hn::SumOfLanes(d64, sums)));
  for (; i < n; ++i) count += keep[i] != 0;
  return count;
}

// The mask of N lanes of `d` from N mask bytes.
template <class D>
HWY_INLINE auto lane_mask(D d, const uint8_t* HWY_RESTRICT keep) {
  const hn::Rebind<uint8_t, D> d8;
  const hn::Rebind<uint32_t, D> d32;
  const auto wide = hn::PromoteTo(d32, hn::LoadU(d8, keep));
  if constexpr (sizeof(hn::TFromD<D>) == 4) {
    return hn::Ne(wide, hn::Zero(d32));
  } else {
    return hn::Ne(hn::PromoteTo(d, wide), hn::Zero(d));
  }
}

template <class T>
int64_t compress_lanes(const uint8_t* HWY_RESTRICT keep, const T* HWY_RESTRICT src,
                       T* HWY_RESTRICT dst, int64_t n) {
  const hn::ScalableTag<T> d;
  const auto N = static_cast<int64_t>(hn::Lanes(d));
  int64_t k = 0, i = 0;
  for (; i + N <= n; i += N) {
    // Compress, then a store masked to the kept lanes: Highway 1.0's CompressBlendedStore
    // is the compressing store to memory on AVX-512, slow on Intel and far slower on Zen 4.
    const auto m = lane_mask(d, keep + i);
    const size_t kept = hn::CountTrue(d, m);
    hn::BlendedStore(compress_lanes(d, hn::LoadU(d, src + i), m), hn::FirstN(d, kept), d, dst + k);
    k += static_cast<int64_t>(kept);
  }
  for (; i < n; ++i) {
    dst[k] = src[i];
    k += keep[i] != 0;
  }
  return k;
}

int64_t compress_u32(const uint8_t* keep, const uint32_t* src, uint32_t* dst, int64_t n) {
  return compress_lanes(keep, src, dst, n);
}
int64_t compress_u64(const uint8_t* keep, const uint64_t* src, uint64_t* dst, int64_t n) {
  return compress_lanes(keep, src, dst, n);
}

// Lane i -> lane i ^ 7: each group of 8 byte lanes reversed (within the 128-bit blocks
// TableLookupBytes indexes), for the bit order that puts the first element in the high bit.
template <class D>
HWY_INLINE hn::Vec<D> reversed_groups_of_8(D d, hn::Vec<D> v) {
  const auto idx = hn::Xor(hn::And(hn::Iota(d, 0), hn::Set(d, 15)), hn::Set(d, 7));
  return hn::TableLookupBytes(v, idx);
}

// n (a multiple of 8) bytes -> n / 8 bytes of their truth, lane i in bit i % 8 of byte i / 8
// (little), or in bit 7 - i % 8 (big). Returns the bytes read; the caller packs the rest.
int64_t pack_truth_u8(const uint8_t* HWY_RESTRICT src, uint8_t* HWY_RESTRICT dst, int64_t n,
                      bool big) {
  const hn::ScalableTag<uint8_t> d;
  const auto N = static_cast<int64_t>(hn::Lanes(d));
  if (N < 8) return 0;  // a mask of fewer than 8 lanes stores less than a byte
  const auto zero = hn::Zero(d);
  int64_t i = 0;
  for (; i + N <= n; i += N) {
    auto v = hn::LoadU(d, src + i);
    if (big) v = reversed_groups_of_8(d, v);
    hn::StoreMaskBits(d, hn::Ne(v, zero), dst + i / 8);
  }
  return i;
}

// n bytes -> 8n bytes 0 / 1, bit k % 8 of byte k / 8 to byte k (little), or bit 7 - k % 8
// (big). Returns the bytes read; the caller unpacks the rest.
int64_t unpack_bits_u8(const uint8_t* HWY_RESTRICT src, uint8_t* HWY_RESTRICT dst, int64_t n,
                       bool big) {
  const hn::ScalableTag<uint8_t> d;
  const auto N = static_cast<int64_t>(hn::Lanes(d));
  if (N < 8) return 0;
  const auto one = hn::Set(d, 1);
  int64_t i = 0;
  for (; 8 * i + N <= 8 * n; i += N / 8) {
    auto v = hn::IfThenElseZero(hn::LoadMaskBits(d, src + i), one);
    if (big) v = reversed_groups_of_8(d, v);
    hn::StoreU(v, d, dst + 8 * i);
  }
  return i;
}

}  // namespace ndx::kernel::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
#include "kernel/dispatch.h"

namespace ndx::kernel {
namespace {
const uint8_t* bytes(const bool* keep) { return reinterpret_cast<const uint8_t*>(keep); }

// 1- and 2-byte elements: the branch-free scalar copy (dst's spare slot takes the last write).
template <class W>
int64_t compress_words(const uint8_t* keep, const W* src, W* dst, int64_t n) {
  int64_t k = 0;
  for (int64_t i = 0; i < n; ++i) {
    dst[k] = src[i];
    k += keep[i] != 0;
  }
  return k;
}
}  // namespace

int64_t count_true(const bool* keep, int64_t n) {
  static const auto count = NDX_DISPATCH_FN(count_true_bytes);
  return count(bytes(keep), n);
}

int64_t compress_by_mask(const bool* keep, const void* src, void* dst, int64_t n,
                         int64_t item_size) {
  static const auto c32 = NDX_DISPATCH_FN(compress_u32);
  static const auto c64 = NDX_DISPATCH_FN(compress_u64);
  switch (item_size) {
    case 1:
      return compress_words(bytes(keep), static_cast<const uint8_t*>(src),
                            static_cast<uint8_t*>(dst), n);
    case 2:
      return compress_words(bytes(keep), static_cast<const uint16_t*>(src),
                            static_cast<uint16_t*>(dst), n);
    case 4:
      return c32(bytes(keep), static_cast<const uint32_t*>(src), static_cast<uint32_t*>(dst), n);
    default:
      return c64(bytes(keep), static_cast<const uint64_t*>(src), static_cast<uint64_t*>(dst), n);
  }
}

int64_t pack_truth_bytes(const uint8_t* src, uint8_t* dst, int64_t n, bool big) {
  static const auto pack = NDX_DISPATCH_FN(pack_truth_u8);
  return pack(src, dst, n, big);
}

int64_t unpack_bit_bytes(const uint8_t* src, uint8_t* dst, int64_t n, bool big) {
  static const auto unpack = NDX_DISPATCH_FN(unpack_bits_u8);
  return unpack(src, dst, n, big);
}

}  // namespace ndx::kernel
#endif  // HWY_ONCE
