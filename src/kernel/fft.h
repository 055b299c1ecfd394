// Power-of-two FFTs run on a batch of lines at once: a Stockham radix-4 transform (with one
// radix-2 stage when log2 n is odd) whose every "point" is a SIMD vector holding that point of
// kFftLanes<T> different lines. Batching across lines keeps every stage vectorized, the first
// ones included, where a single-line transform has only a stride of 1 to vectorize over.
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
  // n: a power of two >= 1 (checked by the caller; see is_pow2).
  explicit FftPlan(int64_t n);
  int64_t size() const { return n_; }
  // Transforms the batch (re, im) of n points per lane, forward (exp(-2 pi i jk / n)) or
  // inverse (exp(+...), unscaled), using (work_re, work_im) as the other buffer. Returns true
  // when the result ended in the work buffers, false when it is back in (re, im).
  bool transform(T* re, T* im, T* work_re, T* work_im, bool inverse) const;

 private:
  int64_t n_;
  // Per radix-4 stage of length n_cur, for p < n_cur / 4: w^p, w^2p, w^3p (w = exp(-2 pi i /
  // n_cur)) as 6 reals, computed in double.
  std::vector<T> twiddles_;
};

constexpr bool is_pow2(int64_t n) { return n >= 1 && (n & (n - 1)) == 0; }

extern template class FftPlan<float>;
extern template class FftPlan<double>;

}  // namespace ndx::kernel
