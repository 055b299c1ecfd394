// Batched power-of-two FFTs (kernel/fft.h), compiled once per Highway target.
//
// Stockham's autosort formulation (decimation in frequency): a stage of length n_cur and
// stride s reads the points q + s (p + k m), k < 4, m = n_cur / 4, and writes their radix-4
// butterfly, twiddled by w^(kp), to q + s (4p + k); the next stage runs on n_cur / 4 points at
// stride 4s. No bit reversal is needed, and for a fixed p the q < s points of every lane form
// one contiguous run of s * L values, so each stage is a plain loop over whole vectors.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernel/fft.cc"
#include <hwy/foreach_target.h>  // IWYU pragma: keep

#include <hwy/highway.h>

#include <cmath>
#include <type_traits>
#include <utility>

#include "kernel/dispatch.h"
#include "kernel/fft.h"

HWY_BEFORE_NAMESPACE();
namespace ndx::kernel::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// One radix-4 stage; kTwiddled false for p == 0, where every twiddle is 1.
template <class T, bool kInverse, bool kTwiddled>
HWY_INLINE void radix4_block(int64_t block, const T* w, const T* xr, const T* xi, int64_t m, T* yr,
                             T* yi) {
  const hn::ScalableTag<T> d;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
  // The inverse transform's twiddles are the conjugates: the imaginary parts negated here.
  const T sign = kInverse ? T(-1) : T(1);
  const auto w1r = hn::Set(d, w[0]), w1i = hn::Set(d, sign * w[1]);
  const auto w2r = hn::Set(d, w[2]), w2i = hn::Set(d, sign * w[3]);
  const auto w3r = hn::Set(d, w[4]), w3i = hn::Set(d, sign * w[5]);
  const int64_t step = m * block;
  for (int64_t i = 0; i < block; i += lanes) {
    const auto ar = hn::LoadU(d, xr + i), ai = hn::LoadU(d, xi + i);
    const auto br = hn::LoadU(d, xr + step + i), bi = hn::LoadU(d, xi + step + i);
    const auto cr = hn::LoadU(d, xr + 2 * step + i), ci = hn::LoadU(d, xi + 2 * step + i);
    const auto dr = hn::LoadU(d, xr + 3 * step + i), di = hn::LoadU(d, xi + 3 * step + i);
    const auto apc_r = hn::Add(ar, cr), apc_i = hn::Add(ai, ci);
    const auto amc_r = hn::Sub(ar, cr), amc_i = hn::Sub(ai, ci);
    const auto bpd_r = hn::Add(br, dr), bpd_i = hn::Add(bi, di);
    const auto bmd_r = hn::Sub(br, dr), bmd_i = hn::Sub(bi, di);
    // t1 = (a - c) -+ i (b - d), t3 = (a - c) +- i (b - d): the forward transform's w_4 is -i.
    auto t1r = kInverse ? hn::Sub(amc_r, bmd_i) : hn::Add(amc_r, bmd_i);
    auto t1i = kInverse ? hn::Add(amc_i, bmd_r) : hn::Sub(amc_i, bmd_r);
    auto t3r = kInverse ? hn::Add(amc_r, bmd_i) : hn::Sub(amc_r, bmd_i);
    auto t3i = kInverse ? hn::Sub(amc_i, bmd_r) : hn::Add(amc_i, bmd_r);
    auto t2r = hn::Sub(apc_r, bpd_r), t2i = hn::Sub(apc_i, bpd_i);
    if constexpr (kTwiddled) {
      auto twiddle = [](auto& re, auto& im, auto wr, auto wi) {
        const auto r = hn::MulSub(re, wr, hn::Mul(im, wi));
        im = hn::MulAdd(re, wi, hn::Mul(im, wr));
        re = r;
      };
      twiddle(t1r, t1i, w1r, w1i);
      twiddle(t2r, t2i, w2r, w2i);
      twiddle(t3r, t3i, w3r, w3i);
    }
    hn::StoreU(hn::Add(apc_r, bpd_r), d, yr + i);
    hn::StoreU(hn::Add(apc_i, bpd_i), d, yi + i);
    hn::StoreU(t1r, d, yr + block + i);
    hn::StoreU(t1i, d, yi + block + i);
    hn::StoreU(t2r, d, yr + 2 * block + i);
    hn::StoreU(t2i, d, yi + 2 * block + i);
    hn::StoreU(t3r, d, yr + 3 * block + i);
    hn::StoreU(t3i, d, yi + 3 * block + i);
  }
}

template <class T, bool kInverse>
void radix4_stage(int64_t n_cur, int64_t s, const T* twiddles, const T* xr, const T* xi, T* yr,
                  T* yi) {
  const int64_t m = n_cur / 4, block = s * kFftLanes<T>;
  radix4_block<T, kInverse, false>(block, twiddles, xr, xi, m, yr, yi);
  for (int64_t p = 1; p < m; ++p)
    radix4_block<T, kInverse, true>(block, twiddles + 6 * p, xr + p * block, xi + p * block, m,
                                    yr + 4 * p * block, yi + 4 * p * block);
}

// The last stage when log2 n is odd: n_cur = 2, no twiddles.
template <class T>
void radix2_stage(int64_t s, const T* xr, const T* xi, T* yr, T* yi) {
  const hn::ScalableTag<T> d;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
  const int64_t block = s * kFftLanes<T>;
  for (int64_t i = 0; i < block; i += lanes) {
    const auto ar = hn::LoadU(d, xr + i), ai = hn::LoadU(d, xi + i);
    const auto br = hn::LoadU(d, xr + block + i), bi = hn::LoadU(d, xi + block + i);
    hn::StoreU(hn::Add(ar, br), d, yr + i);
    hn::StoreU(hn::Add(ai, bi), d, yi + i);
    hn::StoreU(hn::Sub(ar, br), d, yr + block + i);
    hn::StoreU(hn::Sub(ai, bi), d, yi + block + i);
  }
}

template <class T>
bool fft_batch(int64_t n, const T* twiddles, T* re, T* im, T* work_re, T* work_im, bool inverse) {
  static_assert(HWY_MAX_BYTES <= 64, "a batch must hold whole vectors");
  T *xr = re, *xi = im, *yr = work_re, *yi = work_im;
  bool in_work = false;
  int64_t n_cur = n, s = 1;
  for (; n_cur >= 4; n_cur /= 4, s *= 4) {
    if (inverse)
      radix4_stage<T, true>(n_cur, s, twiddles, xr, xi, yr, yi);
    else
      radix4_stage<T, false>(n_cur, s, twiddles, xr, xi, yr, yi);
    twiddles += 6 * (n_cur / 4);
    std::swap(xr, yr);
    std::swap(xi, yi);
    in_work = !in_work;
  }
  if (n_cur == 2) {
    radix2_stage<T>(s, xr, xi, yr, yi);
    in_work = !in_work;
  }
  return in_work;
}

bool fft_batch_f32(int64_t n, const float* twiddles, float* re, float* im, float* work_re,
                   float* work_im, bool inverse) {
  return fft_batch<float>(n, twiddles, re, im, work_re, work_im, inverse);
}
bool fft_batch_f64(int64_t n, const double* twiddles, double* re, double* im, double* work_re,
                   double* work_im, bool inverse) {
  return fft_batch<double>(n, twiddles, re, im, work_re, work_im, inverse);
}

}  // namespace ndx::kernel::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace ndx::kernel {

template <class T>
FftPlan<T>::FftPlan(int64_t n) : n_(n) {
  constexpr double kTwoPi = 6.28318530717958647692;
  for (int64_t n_cur = n; n_cur >= 4; n_cur /= 4)
    for (int64_t p = 0; p < n_cur / 4; ++p)
      for (int64_t k = 1; k <= 3; ++k) {
        // (k p) mod n_cur keeps the angle's argument exact before the one rounding of 2 pi.
        const double angle = -kTwoPi * static_cast<double>((k * p) % n_cur) / n_cur;
        twiddles_.push_back(static_cast<T>(std::cos(angle)));
        twiddles_.push_back(static_cast<T>(std::sin(angle)));
      }
}

template <class T>
bool FftPlan<T>::transform(T* re, T* im, T* work_re, T* work_im, bool inverse) const {
  if constexpr (std::is_same_v<T, float>) {
    static const auto fn = NDX_DISPATCH_FN(fft_batch_f32);
    return fn(n_, twiddles_.data(), re, im, work_re, work_im, inverse);
  } else {
    static const auto fn = NDX_DISPATCH_FN(fft_batch_f64);
    return fn(n_, twiddles_.data(), re, im, work_re, work_im, inverse);
  }
}

template class FftPlan<float>;
template class FftPlan<double>;

}  // namespace ndx::kernel
#endif  // HWY_ONCE
