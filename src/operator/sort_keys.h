// The unsigned keys sorting orders values by, shared by the CPU sort (operator/sort.cc) and
// the GPU's (kernel/cuda/sort.cu): keys order as NumPy orders the values (floats: NaN last,
// -0 with +0 when kZerosEqual, else just before it), so sorting keys sorts values.
#pragma once
#include <bit>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "kernel/config.h"

namespace ndx::sort_keys {

template <class T>
using KeyOf = std::conditional_t<(sizeof(T) <= 4), uint32_t, uint64_t>;

// kZerosEqual: -0 and +0 get one key (stable orders need it); values-only sorts keep -0 just
// before +0 so the sign of zero survives the round trip.
template <class T, bool kZerosEqual = true>
NDX_HD KeyOf<T> to_key(T v) {
  using K = KeyOf<T>;
  if constexpr (std::is_floating_point_v<T>) {
    // Integer selects only, so the loops over a lane vectorize: negatives flip all bits,
    // non-negatives flip the sign bit; NaN last.
    using S = std::make_signed_t<K>;
    constexpr int kBits = sizeof(K) * 8;
    constexpr K sign = K(1) << (kBits - 1);
    constexpr K inf = std::bit_cast<K>(std::numeric_limits<T>::infinity());
    const K b = std::bit_cast<K>(v), magnitude = b & ~sign;
    K key = b ^ (static_cast<K>(static_cast<S>(b) >> (kBits - 1)) | sign);
    if constexpr (kZerosEqual) key = magnitude == 0 ? sign : key;
    return magnitude > inf ? ~K(0) : key;
  } else if constexpr (std::is_same_v<T, bool>) {
    return v ? 1 : 0;
  } else if constexpr (std::is_signed_v<T>) {
    constexpr K sign = K(1) << (sizeof(T) * 8 - 1);
    return static_cast<K>(static_cast<std::make_unsigned_t<T>>(v)) ^ sign;
  } else {
    return static_cast<K>(v);
  }
}

template <class T>
NDX_HD T from_key(KeyOf<T> k) {
  using K = KeyOf<T>;
  if constexpr (std::is_floating_point_v<T>) {
    using S = std::make_signed_t<K>;
    constexpr int kBits = sizeof(K) * 8;
    constexpr K sign = K(1) << (kBits - 1);
    // Sign bit set: a non-negative value (flip it back); clear: flip all. ~0 comes back NaN.
    const K flip = static_cast<K>(static_cast<S>(~k) >> (kBits - 1)) | sign;
    return std::bit_cast<T>(k ^ flip);
  } else if constexpr (std::is_same_v<T, bool>) {
    return k != 0;
  } else if constexpr (std::is_signed_v<T>) {
    constexpr K sign = K(1) << (sizeof(T) * 8 - 1);
    return static_cast<T>(static_cast<std::make_unsigned_t<T>>(k ^ sign));
  } else {
    return static_cast<T>(k);
  }
}

// vqsort sorts these key types (bool's keys are uint32 too).
}  // namespace ndx::sort_keys
