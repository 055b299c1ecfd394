// Max pooling's forward and gradient for 2x2 windows of stride 2 (see kernel/pool.h), a row
// pair of the data at a time: the even and odd columns of both rows are split into vectors with
// LoadInterleaved2, so one vector step settles a vector's worth of windows with masks and no
// branch on the data. This file is compiled once per SIMD target.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernel/pool.cc"
#include <hwy/foreach_target.h>  // IWYU pragma: keep

#include <hwy/highway.h>

#include "kernel/pool.h"

HWY_BEFORE_NAMESPACE();
namespace ndx::kernel::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// One window, scalar: its four elements v (row-major), the forward's output m, the gradient
// g; writes the four gradients into d0[0..1] (first row) and d1[0..1].
template <class T>
void window_grad(const T* r0, const T* r1, T m, T g, T* d0, T* d1, bool add) {
  const T v[4] = {r0[0], r0[1], r1[0], r1[1]};
  int at = -1;
  for (int k = 0; k < 4 && at < 0; ++k)
    if (m == m ? v[k] == m : v[k] != v[k]) at = k;
  if (at < 0) {  // no element is the output: the first maximum (nan first)
    at = 0;
    T best = v[0];
    for (int k = 1; k < 4; ++k)
      if (v[k] > best || (v[k] != v[k] && best == best)) at = k, best = v[k];
  }
  T* dst[4] = {d0, d0 + 1, d1, d1 + 1};
  // 0 + g as the accumulating loop wrote it (a -0 gradient lands as +0).
  for (int k = 0; k < 4; ++k) *dst[k] = (add ? *dst[k] : T(0)) + (k == at ? g : T(0));
}

template <class D, class T = hn::TFromD<D>>
void row_pair(D d, const T* r0, const T* r1, const T* ym, const T* go, T* d0, T* d1, int64_t w,
              int64_t ow, bool add) {
  using V = hn::Vec<D>;
  const auto lanes = static_cast<int64_t>(hn::Lanes(d));
  int64_t ox = 0;
  for (; ox + lanes <= ow; ox += lanes) {
    V a, b, c, e;
    hn::LoadInterleaved2(d, r0 + 2 * ox, a, b);
    hn::LoadInterleaved2(d, r1 + 2 * ox, c, e);
    const V m = hn::LoadU(d, ym + ox), g = hn::LoadU(d, go + ox);
    const auto nan_out = hn::IsNaN(m);
    auto matches = [&](V v) { return hn::Or(hn::Eq(v, m), hn::And(hn::IsNaN(v), nan_out)); };
    const auto fa = matches(a);
    const auto fb = hn::AndNot(fa, matches(b));
    const auto ab = hn::Or(fa, fb);
    const auto fc = hn::AndNot(ab, matches(c));
    const auto abc = hn::Or(ab, fc);
    const auto fe = hn::AndNot(abc, matches(e));
    if (!hn::AllTrue(d, hn::Or(abc, fe))) {  // some window without its output: scalar
      for (int64_t k = 0; k < lanes; ++k) {
        const int64_t o = ox + k;
        window_grad(r0 + 2 * o, r1 + 2 * o, ym[o], go[o], d0 + 2 * o, d1 + 2 * o, add);
      }
      continue;
    }
    V base0 = hn::Zero(d), base1 = hn::Zero(d), base2 = hn::Zero(d), base3 = hn::Zero(d);
    if (add) {
      hn::LoadInterleaved2(d, d0 + 2 * ox, base0, base1);
      hn::LoadInterleaved2(d, d1 + 2 * ox, base2, base3);
    }
    hn::StoreInterleaved2(hn::Add(base0, hn::IfThenElseZero(fa, g)),
                          hn::Add(base1, hn::IfThenElseZero(fb, g)), d, d0 + 2 * ox);
    hn::StoreInterleaved2(hn::Add(base2, hn::IfThenElseZero(fc, g)),
                          hn::Add(base3, hn::IfThenElseZero(fe, g)), d, d1 + 2 * ox);
  }
  for (; ox < ow; ++ox)
    window_grad(r0 + 2 * ox, r1 + 2 * ox, ym[ox], go[ox], d0 + 2 * ox, d1 + 2 * ox, add);
  if (!add)  // columns past the last window
    for (int64_t x = 2 * ow; x < w; ++x) d0[x] = d1[x] = T(0);
}

template <class T>
void planes_typed(const MaxPool2x2Grad& a, int64_t begin, int64_t end) {
  const int64_t in_plane = a.h * a.w, out_plane = a.oh * a.ow;
  for (int64_t p = begin; p < end; ++p) {
    const T* x = static_cast<const T*>(a.x) + p * in_plane;
    const T* y = static_cast<const T*>(a.y) + p * out_plane;
    const T* dy = static_cast<const T*>(a.dy) + p * out_plane;
    T* dx = static_cast<T*>(a.dx) + p * in_plane;
    // Rows narrower than a vector (a small image's outputs) take vectors of 4 lanes.
    const bool narrow = a.ow < static_cast<int64_t>(hn::Lanes(hn::ScalableTag<T>()));
    for (int64_t oy = 0; oy < a.oh; ++oy) {
      const int64_t r = 2 * oy * a.w;
      const T *r0 = x + r, *ym = y + oy * a.ow, *go = dy + oy * a.ow;
      T* d0 = dx + r;
      if (narrow)
        row_pair(hn::CappedTag<T, 4>(), r0, r0 + a.w, ym, go, d0, d0 + a.w, a.w, a.ow, a.add);
      else
        row_pair(hn::ScalableTag<T>(), r0, r0 + a.w, ym, go, d0, d0 + a.w, a.w, a.ow, a.add);
    }
    if (!a.add)  // rows past the last window
      for (int64_t i = 2 * a.oh * a.w; i < in_plane; ++i) dx[i] = T(0);
  }
}

// The forward of one row pair: the first maximum of each window, a nan winning.
template <class D, class T = hn::TFromD<D>>
void forward_row_pair(D d, const T* r0, const T* r1, T* y, int64_t ow) {
  using V = hn::Vec<D>;
  const auto lanes = static_cast<int64_t>(hn::Lanes(d));
  int64_t ox = 0;
  for (; ox + lanes <= ow; ox += lanes) {
    V a, b, c, e;
    hn::LoadInterleaved2(d, r0 + 2 * ox, a, b);
    hn::LoadInterleaved2(d, r1 + 2 * ox, c, e);
    // Row-major order: a later element replaces the best only when strictly greater.
    V m = hn::IfThenElse(hn::Gt(b, a), b, a);
    m = hn::IfThenElse(hn::Gt(c, m), c, m);
    m = hn::IfThenElse(hn::Gt(e, m), e, m);
    if constexpr (hwy::IsFloat<T>()) {
      // The first nan, if any (comparisons with a nan are false, so m skipped them).
      m = hn::IfThenElse(hn::IsNaN(e), e, m);
      m = hn::IfThenElse(hn::IsNaN(c), c, m);
      m = hn::IfThenElse(hn::IsNaN(b), b, m);
      m = hn::IfThenElse(hn::IsNaN(a), a, m);
    }
    hn::StoreU(m, d, y + ox);
  }
  for (; ox < ow; ++ox) {
    const T v[4] = {r0[2 * ox], r0[2 * ox + 1], r1[2 * ox], r1[2 * ox + 1]};
    T best = v[0];
    for (int k = 1; k < 4; ++k)
      if (v[k] > best || (v[k] != v[k] && best == best)) best = v[k];
    y[ox] = best;
  }
}

template <class T>
void forward_planes_typed(const MaxPool2x2Forward& a, int64_t begin, int64_t end) {
  // Rows narrower than a vector take a capped one: 16 lanes when they fill it (8-bit data has
  // 32 or 64 lanes a vector), else 4.
  const bool narrow = a.ow < static_cast<int64_t>(hn::Lanes(hn::ScalableTag<T>()));
  const bool sixteen = narrow && a.ow >= 16;
  for (int64_t p = begin; p < end; ++p) {
    const T* x = static_cast<const T*>(a.x) + p * a.h * a.w;
    T* y = static_cast<T*>(a.y) + p * a.oh * a.ow;
    for (int64_t oy = 0; oy < a.oh; ++oy) {
      const T* r0 = x + 2 * oy * a.w;
      if (sixteen)
        forward_row_pair(hn::CappedTag<T, 16>(), r0, r0 + a.w, y + oy * a.ow, a.ow);
      else if (narrow)
        forward_row_pair(hn::CappedTag<T, 4>(), r0, r0 + a.w, y + oy * a.ow, a.ow);
      else
        forward_row_pair(hn::ScalableTag<T>(), r0, r0 + a.w, y + oy * a.ow, a.ow);
    }
  }
}

void max_pool2x2_forward_planes(const MaxPool2x2Forward& a, int64_t begin, int64_t end) {
  switch (a.dtype) {
    case DType::kFloat64:
      return forward_planes_typed<double>(a, begin, end);
    case DType::kInt8:
      return forward_planes_typed<int8_t>(a, begin, end);
    case DType::kUInt8:
      return forward_planes_typed<uint8_t>(a, begin, end);
    default:
      return forward_planes_typed<float>(a, begin, end);
  }
}

void max_pool2x2_grad_planes(const MaxPool2x2Grad& a, int64_t begin, int64_t end) {
  if (a.dtype == DType::kFloat64)
    planes_typed<double>(a, begin, end);
  else
    planes_typed<float>(a, begin, end);
}

}  // namespace ndx::kernel::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
#include <algorithm>

#include "kernel/dispatch.h"
#include "kernel/parallel.h"

namespace ndx::kernel {

void max_pool2x2_grad(const MaxPool2x2Grad& a) {
  static const auto planes = NDX_DISPATCH_FN(max_pool2x2_grad_planes);
  // Threads only for large data (a plane range of at least 256K elements each): the oneDNN
  // ops around a pooling run on OpenMP's team, and waking ndx's pool for a small call left its
  // workers spinning against that team (the next oneDNN pooling forward took 130 us instead
  // of 20 on 2 cores).
  const int64_t in_plane = std::max<int64_t>(1, a.h * a.w);
  const int64_t grain = std::max<int64_t>(1, (int64_t{1} << 18) / in_plane);
  AllowThreads unlocked(a.planes * in_plane >= kReleaseGil);  // (parallel_for counts planes)
  parallel_for(a.planes, grain, [&](int64_t begin, int64_t end) { planes(a, begin, end); });
}

void max_pool2x2_forward(const MaxPool2x2Forward& a) {
  static const auto planes = NDX_DISPATCH_FN(max_pool2x2_forward_planes);
  const int64_t grain = std::max<int64_t>(1, (int64_t{1} << 18) / std::max<int64_t>(1, a.h * a.w));
  AllowThreads unlocked(a.planes * a.h * a.w >= kReleaseGil);  // (parallel_for counts planes)
  parallel_for(a.planes, grain, [&](int64_t begin, int64_t end) { planes(a, begin, end); });
}

}  // namespace ndx::kernel
#endif  // HWY_ONCE
