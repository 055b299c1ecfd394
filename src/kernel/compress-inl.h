// Compressing 32- and 64-bit lanes without Highway 1.0's per-call table copy, compiled once per
// Highway target by the kernels that include it (key_sort.cc, compress.cc).
#if defined(NDX_KERNEL_COMPRESS_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef NDX_KERNEL_COMPRESS_INL_H_
#undef NDX_KERNEL_COMPRESS_INL_H_
#else
#define NDX_KERNEL_COMPRESS_INL_H_
#endif

#include <cstdint>

#include <hwy/highway.h>

HWY_BEFORE_NAMESPACE();
namespace ndx::kernel::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

#if HWY_TARGET == HWY_AVX2
// For each mask of the lanes of a 256-bit vector of kLanes lanes (4 of 64 bits or 8 of 32),
// the 32-bit lane indices that put the chosen lanes first, in order.
template <int kLanes>
struct CompressIndices {
  alignas(32) int32_t idx[1 << kLanes][8] = {};
  constexpr CompressIndices() {
    constexpr int kWords = 8 / kLanes;  // 32-bit words a lane
    for (int m = 0; m < (1 << kLanes); ++m) {
      int out = 0;
      for (int chosen = 1; chosen >= 0; --chosen)
        for (int i = 0; i < kLanes; ++i)
          if (((m >> i) & 1) == chosen) {
            for (int w = 0; w < kWords; ++w) idx[m][kWords * out + w] = kWords * i + w;
            ++out;
          }
    }
  }
};
#endif

// hn::Compress(v, m). Highway 1.0 compresses 64-bit lanes through a lookup table, and GCC
// copies that table onto the stack on every call (the quicksort of lanes of 1024 64-bit keys
// ran 3x slower than vqsort on AVX-512, 9x on AVX2; float64 x[mask] at a fifth of float32's
// speed): AVX-512 has an instruction for it, and AVX2 gets static tables of permutations
// (its 32-bit lanes had the same copy: float32 x[mask] ran 6x slower than on AVX-512).
template <class D, class V, class M>
HWY_INLINE V compress_lanes(D, V v, M m) {
#if HWY_TARGET == HWY_AVX3 || HWY_TARGET == HWY_AVX3_DL
  if constexpr (sizeof(hn::TFromD<D>) == 8) return V{_mm512_maskz_compress_epi64(m.raw, v.raw)};
#elif HWY_TARGET == HWY_AVX2
  if constexpr (sizeof(hn::TFromD<D>) == 8 || sizeof(hn::TFromD<D>) == 4) {
    constexpr int kLanes = 32 / sizeof(hn::TFromD<D>);
    static constexpr CompressIndices<kLanes> kIndices;
    const int bits = kLanes == 4 ? _mm256_movemask_pd(_mm256_castsi256_pd(m.raw))
                                 : _mm256_movemask_ps(_mm256_castsi256_ps(m.raw));
    const __m256i idx = _mm256_load_si256(reinterpret_cast<const __m256i*>(kIndices.idx[bits]));
    return V{_mm256_permutevar8x32_epi32(v.raw, idx)};
  }
#endif
  return hn::Compress(v, m);
}

}  // namespace ndx::kernel::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif  // NDX_KERNEL_COMPRESS_INL_H_
