// What functor headers need from the build: NDX_HD marks a function host and device code
// under nvcc and always-inline elsewhere.
#pragma once

#if defined(__CUDACC__)
#define NDX_HD __host__ __device__ __forceinline__
#elif defined(__GNUC__)
#define NDX_HD inline __attribute__((always_inline))
#else
#define NDX_HD inline
#endif

#include <complex>

namespace ndx::kernel {
// Whether T is std::complex<...>, which functors' complex paths branch on (ndx/dtype.h has
// the same trait for the core; this one keeps functor headers free of it, for nvcc).
template <typename T>
inline constexpr bool is_complex_v = false;
template <typename T>
inline constexpr bool is_complex_v<std::complex<T>> = true;

// The dtypes a functor takes (its optional `static constexpr unsigned kTypes`). Complex
// dtypes are opt-in (kAllTypes leaves them out): a functor that takes them has a complex
// scalar path, and runs on the CPU only (the CUDA backend has no complex kernels yet).
inline constexpr unsigned kBoolTypes = 1, kIntTypes = 2, kFloatTypes = 4, kNumericTypes = 6,
                          kAllTypes = 7, kComplexTypes = 8, kInexactTypes = 12,
                          kAllWithComplex = 15;
}  // namespace ndx::kernel
