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

namespace ndx::kernel {
// The dtypes a functor takes (its optional `static constexpr unsigned kTypes`). Complex
// dtypes are opt-in (kAllTypes leaves them out): a functor that takes them has a complex
// scalar path, and runs on the CPU only (the CUDA backend has no complex kernels yet).
inline constexpr unsigned kBoolTypes = 1, kIntTypes = 2, kFloatTypes = 4, kNumericTypes = 6,
                          kAllTypes = 7, kComplexTypes = 8, kInexactTypes = 12,
                          kAllWithComplex = 15;
}  // namespace ndx::kernel
