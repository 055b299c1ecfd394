// Choosing a kernel's compiled instance for this CPU. A kernel file is compiled once per
// Highway target (see kernel/per_target.h); its registrations (in the file's `#if HWY_ONCE`
// part) take the instance for the best target the CPU supports:
//
//   FCompute f = kernel::elementwise_fn(NDX_DISPATCH(elementwise, Exp));
//
// NDX_DISPATCH(entry, F) names `entry<F>` of every compiled target, F being the functor of
// that target's namespace (functors are defined per target so their SIMD path is compiled
// with the target's instructions).
#pragma once
#include <cstdint>
#include <initializer_list>
#include <utility>

#include <hwy/highway.h>

namespace ndx::kernel {

// The targets this CPU runs (hwy::SupportedTargets(), cached by Highway).
int64_t supported_targets();
// The name of the best compiled target this CPU supports ("AVX3", "AVX2", "SCALAR", ...).
const char* best_target_name();

template <class Fn>
Fn choose(std::initializer_list<std::pair<int64_t, Fn>> entries) {
  const int64_t supported = supported_targets();
  Fn last = nullptr;
  for (const auto& [target, fn] : entries) {
    if (supported & target) return fn;
    last = fn;
  }
  return last;  // the static (baseline) target always comes last
}

}  // namespace ndx::kernel

#define NDX_TARGET_ENTRY_(NS, BIT, ENTRY, F) \
  std::pair{int64_t{BIT}, &::ndx::kernel::NS::ENTRY<::ndx::kernel::NS::F>},

#if HWY_ARCH_X86 && (HWY_TARGETS & HWY_AVX3)
#define NDX_IF_AVX3_(M, ...) M(N_AVX3, HWY_AVX3, __VA_ARGS__)
#else
#define NDX_IF_AVX3_(M, ...)
#endif
#if HWY_ARCH_X86 && (HWY_TARGETS & HWY_AVX2)
#define NDX_IF_AVX2_(M, ...) M(N_AVX2, HWY_AVX2, __VA_ARGS__)
#else
#define NDX_IF_AVX2_(M, ...)
#endif
#if HWY_ARCH_X86 && (HWY_TARGETS & HWY_SSE4)
#define NDX_IF_SSE4_(M, ...) M(N_SSE4, HWY_SSE4, __VA_ARGS__)
#else
#define NDX_IF_SSE4_(M, ...)
#endif

#define NDX_TARGET_FN_(NS, BIT, FN) std::pair{int64_t{BIT}, &::ndx::kernel::NS::FN},

// The instance of function FN (not a template) for this CPU.
#define NDX_DISPATCH_FN(FN)                                                                \
  ::ndx::kernel::choose({NDX_IF_AVX3_(NDX_TARGET_FN_, FN) NDX_IF_AVX2_(NDX_TARGET_FN_, FN) \
                             NDX_IF_SSE4_(NDX_TARGET_FN_, FN)                              \
                                 NDX_TARGET_FN_(HWY_NAMESPACE, HWY_STATIC_TARGET, FN)})

// The instance of ENTRY<F> for this CPU. Only in a kernel file's HWY_ONCE part, where
// HWY_NAMESPACE names the static (baseline) target.
#define NDX_DISPATCH(ENTRY, F)                                                   \
  ::ndx::kernel::choose({NDX_IF_AVX3_(NDX_TARGET_ENTRY_, ENTRY, F) NDX_IF_AVX2_( \
      NDX_TARGET_ENTRY_, ENTRY, F) NDX_IF_SSE4_(NDX_TARGET_ENTRY_, ENTRY, F)     \
                             NDX_TARGET_ENTRY_(HWY_NAMESPACE, HWY_STATIC_TARGET, ENTRY, F)})

// The instance of ENTRY<F> for this CPU among the targets that compile non-float compute
// types (AVX2 and the static one; kernel/vec-inl.h, compiled_for_target). Only in a HWY_ONCE
// part.
#define NDX_DISPATCH_NONFLOAT(ENTRY, F)                            \
  ::ndx::kernel::choose({NDX_IF_AVX2_(NDX_TARGET_ENTRY_, ENTRY, F) \
                             NDX_TARGET_ENTRY_(HWY_NAMESPACE, HWY_STATIC_TARGET, ENTRY, F)})
