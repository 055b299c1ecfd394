// FFTs of lengths 2^a 3^b 5^c run on a batch of lines at once: a mixed-radix Stockham transform
// (radix-4 stages, at most one radix-2, then radix-3 and radix-5) whose every "point" is a SIMD
// vector holding that point of kFftLanes<T> different lines. Batching across lines keeps every
// stage vectorized, the first ones included, where a single-line transform has only a stride of 1
// to vectorize over.
//
// A batch is held split-complex and lane-interleaved: point j of line l is (re[j * L + l],
// im[j * L + l]) with L = kFftLanes<T>. Stockham's autosort needs a second buffer of the same
// size and leaves the result in one of the two.
#pragma once
#include <cstdint>
#include <vector>

namespace ndx::kernel {

// 64 bytes of lines per batch: 16 float32 lines or 8 float64 lines (one AVX-512 vector, two
// AVX2 vectors per point).
template <class T>
inline constexpr int64_t kFftLanes = 64 / static_cast<int64_t>(sizeof(T));

template <class T>
class FftPlan {
 public:
  // n >= 1 with no prime factor but 2, 3 and 5 (checked by the caller: fft_supported).
  explicit FftPlan(int64_t n);
  int64_t size() const { return n_; }
  // Transforms the batch (re, im) of n points per lane, forward (exp(-2 pi i jk / n)) or
  // inverse (exp(+...), unscaled), using (work_re, work_im) as the other buffer. Returns true
  // when the result ended in the work buffers, false when it is back in (re, im).
  bool transform(T* re, T* im, T* work_re, T* work_im, bool inverse) const;

 private:
  int64_t n_;
  std::vector<int8_t> radices_;  // one per stage
  // Per stage of radix r and length n_cur, for p < n_cur / r: w^p, ..., w^((r-1) p) (w =
  // exp(-2 pi i / n_cur)) as 2 (r - 1) reals, computed in double.
  std::vector<T> twiddles_;
};

// Whether FftPlan takes length n: n >= 1 whose prime factors are all 2, 3 or 5.
bool fft_supported(int64_t n);

extern template class FftPlan<float>;
extern template class FftPlan<double>;

}  // namespace ndx::kernel
