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

// v times -i (kMinusI) or +i: (re, im) -> (im, -re) or (-im, re).
template <bool kMinusI, class V>
HWY_INLINE void times_i(V re, V im, V& out_re, V& out_im) {
  out_re = kMinusI ? im : hn::Neg(im);
  out_im = kMinusI ? hn::Neg(re) : re;
}

// (re, im) *= (wr, wi)
template <class V>
HWY_INLINE void twiddle(V& re, V& im, V wr, V wi) {
  const V r = hn::MulSub(re, wr, hn::Mul(im, wi));
  im = hn::MulAdd(re, wi, hn::Mul(im, wr));
  re = r;
}

// One group p of a radix-kRadix stage: the kRadix points x + j * step (j < kRadix) of every
// lane, for the `block` values of a group, to y + k * block, the outputs k >= 1 twiddled by
// w[2 (k - 1)] + i w[2 (k - 1) + 1] unless kTwiddled is false (p == 0, where they are 1).
// The forward transform's roots of unity are exp(-2 pi i / r): the inverse conjugates them,
// which swaps the -i and +i rotations below and negates the twiddles' imaginary parts.
template <class T, int kRadix, bool kInverse, bool kTwiddled>
HWY_INLINE void butterflies(int64_t block, const T* w, const T* xr, const T* xi, int64_t step,
                            T* yr, T* yi) {
  const hn::ScalableTag<T> d;
  using V = hn::Vec<decltype(d)>;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
  const T sign = kInverse ? T(-1) : T(1);
  V wr[kRadix - 1], wi[kRadix - 1];
  for (int k = 0; k + 1 < kRadix; ++k)
    wr[k] = hn::Set(d, kTwiddled ? w[2 * k] : T(1)),
    wi[k] = hn::Set(d, kTwiddled ? sign * w[2 * k + 1] : T(0));
  constexpr bool kMinusI = !kInverse;  // the forward transform's rotation by a quarter turn
  for (int64_t i = 0; i < block; i += lanes) {
    V ar[kRadix], ai[kRadix], br[kRadix], bi[kRadix];
    for (int j = 0; j < kRadix; ++j)
      ar[j] = hn::LoadU(d, xr + j * step + i), ai[j] = hn::LoadU(d, xi + j * step + i);
    if constexpr (kRadix == 2) {
      br[0] = hn::Add(ar[0], ar[1]), bi[0] = hn::Add(ai[0], ai[1]);
      br[1] = hn::Sub(ar[0], ar[1]), bi[1] = hn::Sub(ai[0], ai[1]);
    } else if constexpr (kRadix == 3) {
      // y1,2 = a - (b + c) / 2 -+ i sin(2 pi / 3) (b - c)
      const V half = hn::Set(d, T(0.5)), s3 = hn::Set(d, T(0.86602540378443864676));
      const V sr = hn::Add(ar[1], ar[2]), si = hn::Add(ai[1], ai[2]);
      br[0] = hn::Add(ar[0], sr), bi[0] = hn::Add(ai[0], si);
      const V mr = hn::NegMulAdd(sr, half, ar[0]), mi = hn::NegMulAdd(si, half, ai[0]);
      V tr, ti;
      times_i<kMinusI>(hn::Mul(hn::Sub(ar[1], ar[2]), s3), hn::Mul(hn::Sub(ai[1], ai[2]), s3), tr,
                       ti);
      br[1] = hn::Add(mr, tr), bi[1] = hn::Add(mi, ti);
      br[2] = hn::Sub(mr, tr), bi[2] = hn::Sub(mi, ti);
    } else if constexpr (kRadix == 4) {
      const V apc_r = hn::Add(ar[0], ar[2]), apc_i = hn::Add(ai[0], ai[2]);
      const V amc_r = hn::Sub(ar[0], ar[2]), amc_i = hn::Sub(ai[0], ai[2]);
      const V bpd_r = hn::Add(ar[1], ar[3]), bpd_i = hn::Add(ai[1], ai[3]);
      V jr, ji;  // -+ i (b - d)
      times_i<kMinusI>(hn::Sub(ar[1], ar[3]), hn::Sub(ai[1], ai[3]), jr, ji);
      br[0] = hn::Add(apc_r, bpd_r), bi[0] = hn::Add(apc_i, bpd_i);
      br[1] = hn::Add(amc_r, jr), bi[1] = hn::Add(amc_i, ji);
      br[2] = hn::Sub(apc_r, bpd_r), bi[2] = hn::Sub(apc_i, bpd_i);
      br[3] = hn::Sub(amc_r, jr), bi[3] = hn::Sub(amc_i, ji);
    } else {
      static_assert(kRadix == 5);
      // y1,4 = u1 -+ i v1, y2,3 = u2 -+ i v2 with u = a + cos terms of (b + e), (c + d) and
      // v = sin terms of (b - e), (c - d)
      const V c1 = hn::Set(d, T(0.30901699437494742410)),
              c2 = hn::Set(d, T(-0.80901699437494742410));
      const V s1 = hn::Set(d, T(0.95105651629515357212)),
              s2 = hn::Set(d, T(0.58778525229247312917));
      const V t1r = hn::Add(ar[1], ar[4]), t1i = hn::Add(ai[1], ai[4]);
      const V t2r = hn::Add(ar[2], ar[3]), t2i = hn::Add(ai[2], ai[3]);
      const V t3r = hn::Sub(ar[1], ar[4]), t3i = hn::Sub(ai[1], ai[4]);
      const V t4r = hn::Sub(ar[2], ar[3]), t4i = hn::Sub(ai[2], ai[3]);
      br[0] = hn::Add(ar[0], hn::Add(t1r, t2r)), bi[0] = hn::Add(ai[0], hn::Add(t1i, t2i));
      const V u1r = hn::MulAdd(c2, t2r, hn::MulAdd(c1, t1r, ar[0]));
      const V u1i = hn::MulAdd(c2, t2i, hn::MulAdd(c1, t1i, ai[0]));
      const V u2r = hn::MulAdd(c1, t2r, hn::MulAdd(c2, t1r, ar[0]));
      const V u2i = hn::MulAdd(c1, t2i, hn::MulAdd(c2, t1i, ai[0]));
      V v1r, v1i, v2r, v2i;
      times_i<kMinusI>(hn::MulAdd(s2, t4r, hn::Mul(s1, t3r)), hn::MulAdd(s2, t4i, hn::Mul(s1, t3i)),
                       v1r, v1i);
      times_i<kMinusI>(hn::NegMulAdd(s1, t4r, hn::Mul(s2, t3r)),
                       hn::NegMulAdd(s1, t4i, hn::Mul(s2, t3i)), v2r, v2i);
      br[1] = hn::Add(u1r, v1r), bi[1] = hn::Add(u1i, v1i);
      br[4] = hn::Sub(u1r, v1r), bi[4] = hn::Sub(u1i, v1i);
      br[2] = hn::Add(u2r, v2r), bi[2] = hn::Add(u2i, v2i);
      br[3] = hn::Sub(u2r, v2r), bi[3] = hn::Sub(u2i, v2i);
    }
    for (int k = 0; k < kRadix; ++k) {
      if (kTwiddled && k > 0) twiddle(br[k], bi[k], wr[k - 1], wi[k - 1]);
      hn::StoreU(br[k], d, yr + k * block + i);
      hn::StoreU(bi[k], d, yi + k * block + i);
    }
  }
}

// One stage: n_cur points at stride s, m = n_cur / kRadix groups.
template <class T, int kRadix, bool kInverse>
void stage(int64_t n_cur, int64_t s, const T* twiddles, const T* xr, const T* xi, T* yr, T* yi) {
  const int64_t m = n_cur / kRadix, block = s * kFftLanes<T>, step = m * block;
  butterflies<T, kRadix, kInverse, false>(block, twiddles, xr, xi, step, yr, yi);
  for (int64_t p = 1; p < m; ++p)
    butterflies<T, kRadix, kInverse, true>(block, twiddles + 2 * (kRadix - 1) * p, xr + p * block,
                                           xi + p * block, step, yr + kRadix * p * block,
                                           yi + kRadix * p * block);
}

template <class T, bool kInverse>
void any_stage(int radix, int64_t n_cur, int64_t s, const T* twiddles, const T* xr, const T* xi,
               T* yr, T* yi) {
  switch (radix) {
    case 2:
      return stage<T, 2, kInverse>(n_cur, s, twiddles, xr, xi, yr, yi);
    case 3:
      return stage<T, 3, kInverse>(n_cur, s, twiddles, xr, xi, yr, yi);
    case 4:
      return stage<T, 4, kInverse>(n_cur, s, twiddles, xr, xi, yr, yi);
    default:
      return stage<T, 5, kInverse>(n_cur, s, twiddles, xr, xi, yr, yi);
  }
}

template <class T>
bool fft_batch(int64_t n, const int8_t* radices, int64_t stages, const T* twiddles, T* re, T* im,
               T* work_re, T* work_im, bool inverse) {
  static_assert(HWY_MAX_BYTES <= 64, "a batch must hold whole vectors");
  T *xr = re, *xi = im, *yr = work_re, *yi = work_im;
  int64_t n_cur = n, s = 1;
  for (int64_t i = 0; i < stages; ++i) {
    const int r = radices[i];
    if (inverse)
      any_stage<T, true>(r, n_cur, s, twiddles, xr, xi, yr, yi);
    else
      any_stage<T, false>(r, n_cur, s, twiddles, xr, xi, yr, yi);
    twiddles += 2 * (r - 1) * (n_cur / r);
    n_cur /= r;
    s *= r;
    std::swap(xr, yr);
    std::swap(xi, yi);
  }
  return stages % 2 == 1;
}

bool fft_batch_f32(int64_t n, const int8_t* radices, int64_t stages, const float* twiddles,
                   float* re, float* im, float* work_re, float* work_im, bool inverse) {
  return fft_batch<float>(n, radices, stages, twiddles, re, im, work_re, work_im, inverse);
}
bool fft_batch_f64(int64_t n, const int8_t* radices, int64_t stages, const double* twiddles,
                   double* re, double* im, double* work_re, double* work_im, bool inverse) {
  return fft_batch<double>(n, radices, stages, twiddles, re, im, work_re, work_im, inverse);
}

}  // namespace ndx::kernel::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace ndx::kernel {

std::vector<int8_t> fft_radices(int64_t n) {
  std::vector<int8_t> radices;
  for (const int r : {4, 2, 3, 5})
    while (n % r == 0 && (r != 2 || radices.empty() || radices.back() != 2)) {
      radices.push_back(static_cast<int8_t>(r));
      n /= r;
    }
  return n == 1 ? radices : std::vector<int8_t>{};
}

bool fft_supported(int64_t n) { return n == 1 || (n > 1 && !fft_radices(n).empty()); }

template <class T>
FftPlan<T>::FftPlan(int64_t n) : n_(n), radices_(fft_radices(n)) {
  constexpr double kTwoPi = 6.28318530717958647692;
  int64_t n_cur = n;
  for (const int r : radices_) {
    for (int64_t p = 0; p < n_cur / r; ++p)
      for (int64_t k = 1; k < r; ++k) {
        // (k p) mod n_cur keeps the angle's argument exact before the one rounding of 2 pi.
        const double angle = -kTwoPi * static_cast<double>((k * p) % n_cur) / n_cur;
        twiddles_.push_back(static_cast<T>(std::cos(angle)));
        twiddles_.push_back(static_cast<T>(std::sin(angle)));
      }
    n_cur /= r;
  }
}

template <class T>
bool FftPlan<T>::transform(T* re, T* im, T* work_re, T* work_im, bool inverse) const {
  const auto stages = static_cast<int64_t>(radices_.size());
  if constexpr (std::is_same_v<T, float>) {
    static const auto fn = NDX_DISPATCH_FN(fft_batch_f32);
    return fn(n_, radices_.data(), stages, twiddles_.data(), re, im, work_re, work_im, inverse);
  } else {
    static const auto fn = NDX_DISPATCH_FN(fft_batch_f64);
    return fn(n_, radices_.data(), stages, twiddles_.data(), re, im, work_re, work_im, inverse);
  }
}

template class FftPlan<float>;
template class FftPlan<double>;

}  // namespace ndx::kernel
#endif  // HWY_ONCE
