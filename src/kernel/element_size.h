// Element-size dispatch for kernels that only move elements (gathers, pads, copies): they
// treat every dtype as words of its size, so one instance per size serves all 15 dtypes.
// Plain C++ (no Highway, no CUDA headers): the host ops and kernel/cuda/*.cu share it.
#pragma once
#include <cstdint>
#include <type_traits>

#include "ndx/error.h"

namespace ndx::kernel {

// An element of E bytes as a word: an unsigned integer (two for 16 bytes), not a char array,
// whose stores the compiler must assume alias everything (a gather's index loads then waited
// for each store: 2.4x the time of a 16M-element random gather).
struct Word16 {
  uint64_t lo, hi;
};
template <size_t E>
using Word = std::conditional_t<
    E == 1, uint8_t,
    std::conditional_t<
        E == 2, uint16_t,
        std::conditional_t<E == 4, uint32_t, std::conditional_t<E == 8, uint64_t, Word16>>>>;

// f(std::integral_constant<size_t, E>{}) for an element of `bytes` bytes, E one of 1, 2, 4,
// 8, 16 (every dtype's size); NotImplementedError naming `op` for any other size.
template <class F>
void with_element_size(int64_t bytes, const char* op, F f) {
  switch (bytes) {
    case 1:
      return f(std::integral_constant<size_t, 1>{});
    case 2:
      return f(std::integral_constant<size_t, 2>{});
    case 4:
      return f(std::integral_constant<size_t, 4>{});
    case 8:
      return f(std::integral_constant<size_t, 8>{});
    case 16:
      return f(std::integral_constant<size_t, 16>{});
    default:
      not_implemented("[", op, "] elements of ", bytes, " bytes");
  }
}

}  // namespace ndx::kernel
