// np.fft's transforms along one axis, registered as _npi_fft (complex to complex, forward or
// inverse), _npi_rfft (real to the n // 2 + 1 non-negative frequencies) and _npi_irfft (their
// inverse, real output), on KISS FFT (Debian's libkissfft-dev, BSD-3-Clause: its header-only
// C++ template kissfft<T>, so float32 transforms run in float and float64 in double). The other
// np.fft names (fft2, fftn, rfftn, hfft, ...) compose these in python/ndx/numpy/fft.py.
//
// `n` crops or zero-pads the input along the axis before the transform; `norm` scales as
// NumPy's: "backward" (default) 1/n on the inverse, "ortho" 1/sqrt(n) both ways, "forward" 1/n
// on the forward transform. Lines along the axis run in parallel, each thread with its own
// plans (KISS FFT's generic radix keeps scratch space in the plan); lengths with a large prime
// factor run Bluestein's algorithm and long lines the four-step decomposition (see below).
//
// Gradients follow the conjugate Wirtinger convention (PyTorch's): every transform is linear,
// so the gradient is the adjoint map applied to the output gradient, run by the backward ops
// below with the same line engine (a real input takes the real part).
#include <kissfft/kissfft.hh>

#include <algorithm>
#include <cmath>
#include <complex>
#include <map>
#include <memory>
#include <new>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "kernel/blob.h"
#include "kernel/cast.h"
#include "kernel/fft.h"
#include "kernel/parallel.h"
#include "ndx/graph.h"
#include "ndx/op_util.h"

namespace ndx {
namespace {

struct FFTParam {
  std::optional<int64_t> n;
  int64_t axis = -1;
  std::optional<std::string> norm;
  bool inverse = false;
  static void declare(ParamDecl<FFTParam>& d) {
    d.field("n", &FFTParam::n)
        .set_default(std::nullopt)
        .describe("Length of the transform along the axis: the input is cropped or zero-padded.");
    d.field("axis", &FFTParam::axis).set_default(int64_t{-1}).describe("The axis to transform.");
    d.field("norm", &FFTParam::norm)
        .set_default(std::nullopt)
        .describe("'backward' (None), 'ortho' or 'forward': which direction is scaled.");
    d.field("inverse", &FFTParam::inverse)
        .set_default(false)
        .describe("The inverse transform (ifft) instead of the forward one (_npi_fft only).");
  }
};

enum class Kind { kComplex, kReal, kInverseReal };  // fft / ifft, rfft, irfft

const char* kind_name(Kind k, bool inverse) {
  return k == Kind::kReal ? "rfft" : k == Kind::kInverseReal ? "irfft" : inverse ? "ifft" : "fft";
}

// The scale of a transform of length n: NumPy's norm modes.
double norm_scale(const std::optional<std::string>& norm, int64_t n, bool inverse, const char* op) {
  const std::string mode = norm.value_or("backward");
  const double dn = static_cast<double>(n);
  if (mode == "backward") return inverse ? 1.0 / dn : 1.0;
  if (mode == "ortho") return 1.0 / std::sqrt(dn);
  if (mode == "forward") return inverse ? 1.0 : 1.0 / dn;
  value_error("[", op, "] Invalid norm value ", mode,
              "; should be \"backward\", \"ortho\" or \"forward\".");
}

// The axis (normalized), its input length and the transform length n.
struct Geometry {
  int axis = 0;
  int64_t len = 0, n = 0;
};

Geometry geometry(const FFTParam& p, const Shape& in, Kind kind, const char* op) {
  if (in.ndim() == 0) value_error("[", op, "] the input must have at least one dimension");
  Geometry g;
  g.axis = normalize_axis(p.axis, in.ndim(), op);
  g.len = in[g.axis];
  g.n = p.n ? *p.n : kind == Kind::kInverseReal ? 2 * (g.len - 1) : g.len;
  if (g.n < 1) value_error("[", op, "] Invalid number of FFT data points (", g.n, ") specified.");
  // Gradients allocate n points along the axis whatever their output's size: a length no
  // machine holds is a MemoryError here, before any buffer is sized by it.
  if (g.n > (int64_t{1} << 40))
    raise(ErrorKind::kMemoryError, "[", op, "] ", g.n,
          " FFT data points do not fit in memory (n is at most 2**40)");
  return g;
}

// The complex dtype a transform computes in: complex64 for float32, the 16-bit floats,
// integers and bool (ndx's default float), complex128 for float64.
DType complex_of_input(DType t) { return complex_dtype(float_result_type(real_dtype(t))); }

// ---- plans ----
// KISS FFT's butterfly for a prime factor p costs O(p) per point, so a length with a large
// prime factor (a prime length above all) would be quadratic. Those lengths run Bluestein's
// algorithm instead: with the chirp c_t = exp(-+ i pi t^2 / n), X_k = c_k sum_j (x_j c_j)
// conj(c_(k-j)), a convolution done by power-of-two transforms of m >= 2n - 1 points.
constexpr int64_t kBluesteinPrime = 128;

int64_t largest_prime_factor(int64_t n) {
  int64_t largest = 1;
  for (int64_t p = 2; p * p <= n; ++p)
    while (n % p == 0) largest = p, n /= p;
  return std::max(largest, n);
}

template <class T>
class Plan {
 public:
  using C = std::complex<T>;
  Plan(size_t n, bool inverse) : n_(n) {
    if (largest_prime_factor(static_cast<int64_t>(n)) <= kBluesteinPrime) {
      direct_ = std::make_unique<kissfft<T>>(n, inverse);
      return;
    }
    while (m_ < 2 * n - 1) m_ <<= 1;
    forward_ = std::make_unique<kissfft<T>>(m_, false);
    backward_ = std::make_unique<kissfft<T>>(m_, true);
    const double turn = (inverse ? 1.0 : -1.0) * 3.14159265358979323846 / static_cast<double>(n);
    chirp_.resize(n);
    for (size_t t = 0; t < n; ++t) {  // t^2 mod 2n keeps the angle exact in double
      const auto phase = std::polar(1.0, turn * static_cast<double>((t * t) % (2 * n)));
      chirp_[t] = C(static_cast<T>(phase.real()), static_cast<T>(phase.imag()));
    }
    std::vector<C> b(m_, C(0));
    b[0] = std::conj(chirp_[0]);
    for (size_t t = 1; t < n; ++t) b[t] = b[m_ - t] = std::conj(chirp_[t]);
    kernel_.resize(m_);
    forward_->transform(b.data(), kernel_.data());
    for (C& v : kernel_) v /= static_cast<T>(m_);  // the inverse transform's 1 / m, folded in
  }
  bool direct() const { return direct_ != nullptr; }
  void transform(const C* in, C* out) const {
    if (direct_) return direct_->transform(in, out);
    std::vector<C> a(m_, C(0)), spectrum(m_);
    for (size_t j = 0; j < n_; ++j) a[j] = in[j] * chirp_[j];
    forward_->transform(a.data(), spectrum.data());
    for (size_t i = 0; i < m_; ++i) spectrum[i] *= kernel_[i];
    backward_->transform(spectrum.data(), a.data());
    for (size_t k = 0; k < n_; ++k) out[k] = a[k] * chirp_[k];
  }
  // KISS FFT's real transform of 2 n points; direct plans only.
  void transform_real(const T* in, C* out) const { direct_->transform_real(in, out); }

 private:
  size_t n_, m_ = 1;
  std::unique_ptr<kissfft<T>> direct_, forward_, backward_;
  std::vector<C> chirp_, kernel_;
};

// Per thread, a few lengths kept.
template <class T>
const Plan<T>& plan(size_t n, bool inverse) {
  thread_local std::map<std::pair<size_t, bool>, std::unique_ptr<Plan<T>>> plans;
  auto key = std::make_pair(n, inverse);
  auto it = plans.find(key);
  if (it != plans.end()) return *it->second;
  if (plans.size() >= 16) plans.clear();  // keep memory bounded for programs of many lengths
  return *plans.emplace(key, std::make_unique<Plan<T>>(n, inverse)).first->second;
}

// Lines along `axis` of a contiguous array of `shape`: line l = (o, i) holds the elements
// (o * len + j) * inner + i.
struct Lines {
  int64_t outer = 1, inner = 1;
  Lines(const Shape& shape, int axis) {
    for (int d = 0; d < axis; ++d) outer *= shape[d];
    for (int d = axis + 1; d < shape.ndim(); ++d) inner *= shape[d];
  }
  int64_t count() const { return outer * inner; }
  // Where line l starts in an array whose axis has length len.
  int64_t start(int64_t l, int64_t len) const { return (l / inner) * len * inner + l % inner; }
  // buf[0:n) = the line at src (len values, stride inner), cropped or zero-padded to n.
  template <class S>
  void gather(const S* src, int64_t len, S* buf, int64_t n) const {
    const int64_t copy = std::min(len, n);
    for (int64_t j = 0; j < copy; ++j) buf[j] = src[j * inner];
    std::fill(buf + copy, buf + n, S(0));
  }
};

// Lines at a time so each task does about kGrain elements of work.
int64_t line_grain(int64_t n) {
  return std::max<int64_t>(1, kernel::kGrain / std::max<int64_t>(n, 1));
}

// ---- lengths 2^a 3^b 5^c: batches of lines on the SIMD engine (kernel/fft.h) ----
// Such a length runs kernel::FftPlan on kLanes lines at once, held split-complex with
// point j of lane l at j * kLanes + l. Real transforms of n points run one complex transform
// of n / 2 points: z_j = x_2j + i x_2j+1, split afterwards (rfft) or merged before (irfft)
// with the twiddles exp(-+ 2 pi i k / n).
template <class T>
struct BatchPlan {
  kernel::FftPlan<T> fft;
  std::vector<std::complex<T>> half_turn;  // exp(-2 pi i k / (2 size)), k <= size
  explicit BatchPlan(int64_t size) : fft(size), half_turn(static_cast<size_t>(size + 1)) {
    for (int64_t k = 0; k <= size; ++k) {
      const auto w = std::polar(
          1.0, -3.14159265358979323846 * static_cast<double>(k) / static_cast<double>(size));
      half_turn[k] = {static_cast<T>(w.real()), static_cast<T>(w.imag())};
    }
  }
};

// Per thread, a few lengths kept (as plan()).
template <class T>
const BatchPlan<T>& batch_plan(int64_t n) {
  thread_local std::map<int64_t, std::unique_ptr<BatchPlan<T>>> plans;
  auto it = plans.find(n);
  if (it != plans.end()) return *it->second;
  if (plans.size() >= 16) plans.clear();
  return *plans.emplace(n, std::make_unique<BatchPlan<T>>(n)).first->second;
}

// Fewer lines than this leave most lanes of a batch empty: they run one at a time instead.
constexpr int64_t kMinBatchLines = 4;

// Whether lines of length n run in batches: a length FftPlan takes, enough lines, and along an
// inner axis enough neighbours to fill a batch's lanes.
bool batched(const Lines& lines, int64_t n) {
  return kernel::fft_supported(n) && lines.count() >= kMinBatchLines &&
         (lines.inner == 1 || lines.inner >= kMinBatchLines);
}

// Cache-line-aligned split-complex buffers of `points` points per lane.
template <class T>
class LaneBuffer {
 public:
  static constexpr int64_t kLanes = kernel::kFftLanes<T>;
  explicit LaneBuffer(int64_t points)
      : size_(static_cast<size_t>(2 * points * kLanes)),
        data_(static_cast<T*>(::operator new[](size_ * sizeof(T), std::align_val_t{64}))) {}
  ~LaneBuffer() { ::operator delete[](data_, std::align_val_t{64}); }
  LaneBuffer(const LaneBuffer&) = delete;
  LaneBuffer& operator=(const LaneBuffer&) = delete;
  T* re() { return data_; }
  T* im() { return data_ + size_ / 2; }
  void clear() { std::fill(data_, data_ + size_, T(0)); }

 private:
  size_t size_;
  T* data_;
};

// Transforms `data` (n points per lane) with `work` as Stockham's other buffer; returns the
// buffer holding the result.
template <class T>
LaneBuffer<T>& run_batch(const kernel::FftPlan<T>& f, LaneBuffer<T>& data, LaneBuffer<T>& work,
                         bool inverse) {
  return f.transform(data.re(), data.im(), work.re(), work.im(), inverse) ? work : data;
}

// Where a batch's lines lie: the first line's offset, how many lines (<= kLanes), and the
// strides (in elements) from one line to the next and from one point to the next.
struct BatchLayout {
  int64_t offset, count, line_stride, point_stride;
};

// Lines grouped into batches: along the last axis, kLanes consecutive lines; along an inner
// axis, kLanes neighbours of one outer index (their points are contiguous across the batch).
template <int64_t kLanes>
struct Batches {
  const Lines& lines;
  int64_t per_outer, count;
  explicit Batches(const Lines& l)
      : lines(l),
        per_outer(l.inner == 1 ? 1 : (l.inner + kLanes - 1) / kLanes),
        count(l.inner == 1 ? (l.outer + kLanes - 1) / kLanes : l.outer * per_outer) {}
  // Batch b in an array whose axis has length len.
  BatchLayout at(int64_t b, int64_t len) const {
    if (lines.inner == 1)
      return {b * kLanes * len, std::min(kLanes, lines.outer - b * kLanes), len, 1};
    const int64_t o = b / per_outer, i0 = (b % per_outer) * kLanes;
    return {o * len * lines.inner + i0, std::min(kLanes, lines.inner - i0), 1, lines.inner};
  }
};

// Calls f(j, l) for every point j < points of every line l of a batch, in an order that keeps
// the strided side in cache. Along the last axis, lines often lie a power-of-two stride apart and
// would fight over the same L1 sets if read point by point across lines: there each line gives
// a block of kPointBlock points (a cache line or two) at a time. Along an inner axis, a point's
// values across the batch are contiguous: point by point.
template <class F>
void for_each_point(const BatchLayout& at, int64_t points, F&& f) {
  constexpr int64_t kPointBlock = 16;
  if (at.point_stride == 1) {
    for (int64_t j0 = 0; j0 < points; j0 += kPointBlock) {
      const int64_t j1 = std::min(points, j0 + kPointBlock);
      for (int64_t l = 0; l < at.count; ++l)
        for (int64_t j = j0; j < j1; ++j) f(j, l);
    }
  } else {
    for (int64_t j = 0; j < points; ++j)
      for (int64_t l = 0; l < at.count; ++l) f(j, l);
  }
}

// The batch's lines (each `copy` points read, zero-padded to `points`) into buf.
template <class T>
void gather(const std::complex<T>* src, const BatchLayout& at, int64_t copy, int64_t points,
            LaneBuffer<T>& buf) {
  constexpr int64_t L = LaneBuffer<T>::kLanes;
  T *re = buf.re(), *im = buf.im();
  if (at.count < L || copy < points) buf.clear();
  for_each_point(at, copy, [&](int64_t j, int64_t l) {
    const std::complex<T> v = src[j * at.point_stride + l * at.line_stride];
    re[j * L + l] = v.real(), im[j * L + l] = v.imag();
  });
}

// Real lines (`copy` points read, zero-padded to 2 * points) packed as z_j = x_2j + i x_2j+1.
template <class T>
void gather_real(const T* src, const BatchLayout& at, int64_t copy, int64_t points,
                 LaneBuffer<T>& buf) {
  constexpr int64_t L = LaneBuffer<T>::kLanes;
  T *re = buf.re(), *im = buf.im();
  if (at.count < L || copy < 2 * points) buf.clear();
  for_each_point(at, copy / 2, [&](int64_t j, int64_t l) {
    const T* pair = src + 2 * j * at.point_stride + l * at.line_stride;
    re[j * L + l] = pair[0], im[j * L + l] = pair[at.point_stride];
  });
  if (copy % 2 == 1)  // the last real value pairs with a padding zero
    for (int64_t l = 0; l < at.count; ++l)
      re[copy / 2 * L + l] = src[(copy - 1) * at.point_stride + l * at.line_stride];
}

// The batch's lines out: scale times the first `keep` points of buf, zeros up to len.
template <class T>
void scatter(LaneBuffer<T>& buf, std::complex<T>* dst, const BatchLayout& at, int64_t keep,
             int64_t len, T scale) {
  constexpr int64_t L = LaneBuffer<T>::kLanes;
  const T *re = buf.re(), *im = buf.im();
  for_each_point(at, len, [&](int64_t j, int64_t l) {
    dst[j * at.point_stride + l * at.line_stride] =
        j < keep ? std::complex<T>(re[j * L + l] * scale, im[j * L + l] * scale)
                 : std::complex<T>(0);
  });
}

// out = scale * the first `keep` values of each line's n-point DFT (transform_lines's contract).
template <class T>
void transform_lines_batched(const std::complex<T>* in, int64_t in_len, std::complex<T>* out,
                             int64_t out_len, const Lines& lines, int64_t n, bool inverse, T scale,
                             int64_t keep) {
  constexpr int64_t L = LaneBuffer<T>::kLanes;
  const Batches<L> batches(lines);
  kernel::parallel_for(batches.count, line_grain(n * L), [&](int64_t begin, int64_t end) {
    const kernel::FftPlan<T>& f = batch_plan<T>(n).fft;
    LaneBuffer<T> data(n), work(n);
    for (int64_t b = begin; b < end; ++b) {
      const BatchLayout from = batches.at(b, in_len), to = batches.at(b, out_len);
      gather(in + from.offset, from, std::min(in_len, n), n, data);
      scatter(run_batch(f, data, work, inverse), out + to.offset, to, keep, out_len, scale);
    }
  });
}

// rfft of real lines of even n (n / 2 a length FftPlan takes): Z = the n / 2-point DFT of z, then
// for k <= n / 2 X_k = E_k + w^k O_k with E_k = (Z_k + conj Z_(h-k)) / 2, O_k = (Z_k - conj
// Z_(h-k)) / 2i.
template <class T>
void split_real(LaneBuffer<T>& z, const std::vector<std::complex<T>>& turn, int64_t h,
                LaneBuffer<T>& x) {
  constexpr int64_t L = LaneBuffer<T>::kLanes;
  const T *zr = z.re(), *zi = z.im();
  T *xr = x.re(), *xi = x.im();
  for (int64_t k = 0; k <= h; ++k) {
    const int64_t a = (k == h ? 0 : k) * L, c = (k == 0 ? 0 : h - k) * L;
    const T wr = turn[k].real(), wi = turn[k].imag();
    for (int64_t l = 0; l < L; ++l) {
      const T er = (zr[a + l] + zr[c + l]) / 2, ei = (zi[a + l] - zi[c + l]) / 2;
      const T or_ = (zi[a + l] + zi[c + l]) / 2, oi = (zr[c + l] - zr[a + l]) / 2;
      xr[k * L + l] = er + wr * or_ - wi * oi;
      xi[k * L + l] = ei + wr * oi + wi * or_;
    }
  }
}

template <class T>
void rfft_lines_batched(const T* in, int64_t in_len, std::complex<T>* out, const Lines& lines,
                        int64_t n, T scale) {
  constexpr int64_t L = LaneBuffer<T>::kLanes;
  const int64_t h = n / 2, m = h + 1;
  const Batches<L> batches(lines);
  kernel::parallel_for(batches.count, line_grain(n * L), [&](int64_t begin, int64_t end) {
    const BatchPlan<T>& f = batch_plan<T>(h);
    LaneBuffer<T> data(m), work(m);  // m points: room for the split spectrum
    for (int64_t b = begin; b < end; ++b) {
      const BatchLayout from = batches.at(b, in_len), to = batches.at(b, m);
      gather_real(in + from.offset, from, std::min(in_len, n), h, data);
      LaneBuffer<T>& z = run_batch(f.fft, data, work, false);
      LaneBuffer<T>& x = &z == &data ? work : data;
      split_real(z, f.half_turn, h, x);
      scatter(x, out + to.offset, to, m, m, scale);
    }
  });
}

// irfft's merge, the inverse of split_real: Z_k = E_k + i O_k for k < h with E_k = (X_k +
// conj X_(h-k)) / 2 and O_k = (X_k - conj X_(h-k)) conj(w^k) / 2; the imaginary parts of X_0 and
// X_h are ignored (as NumPy's).
template <class T>
void merge_real(LaneBuffer<T>& x, const std::vector<std::complex<T>>& turn, int64_t h,
                LaneBuffer<T>& z) {
  constexpr int64_t L = LaneBuffer<T>::kLanes;
  T *xr = x.re(), *xi = x.im(), *zr = z.re(), *zi = z.im();
  std::fill(xi, xi + L, T(0));
  std::fill(xi + h * L, xi + (h + 1) * L, T(0));
  for (int64_t k = 0; k < h; ++k) {
    const int64_t a = k * L, c = (h - k) * L;
    const T wr = turn[k].real(), wi = -turn[k].imag();
    for (int64_t l = 0; l < L; ++l) {
      const T er = (xr[a + l] + xr[c + l]) / 2, ei = (xi[a + l] - xi[c + l]) / 2;
      const T dr = (xr[a + l] - xr[c + l]) / 2, di = (xi[a + l] + xi[c + l]) / 2;
      const T or_ = dr * wr - di * wi, oi = dr * wi + di * wr;
      zr[a + l] = er - oi;
      zi[a + l] = ei + or_;
    }
  }
}

template <class T>
void irfft_lines_batched(const std::complex<T>* in, int64_t in_len, T* out, const Lines& lines,
                         int64_t n, T scale) {
  constexpr int64_t L = LaneBuffer<T>::kLanes;
  const int64_t h = n / 2, m = h + 1;
  const Batches<L> batches(lines);
  const T twice = 2 * scale;  // the h-point inverse gives h z_j where x needs n z_j
  kernel::parallel_for(batches.count, line_grain(n * L), [&](int64_t begin, int64_t end) {
    const BatchPlan<T>& f = batch_plan<T>(h);
    LaneBuffer<T> spectrum(m), data(h), work(h);
    for (int64_t b = begin; b < end; ++b) {
      const BatchLayout from = batches.at(b, in_len), to = batches.at(b, n);
      gather(in + from.offset, from, std::min(in_len, m), m, spectrum);
      merge_real(spectrum, f.half_turn, h, data);
      LaneBuffer<T>& z = run_batch(f.fft, data, work, true);
      const T *zr = z.re(), *zi = z.im();
      T* dst = out + to.offset;
      for_each_point(to, h, [&](int64_t j, int64_t l) {
        T* pair = dst + 2 * j * to.point_stride + l * to.line_stride;
        pair[0] = zr[j * L + l] * twice, pair[to.point_stride] = zi[j * L + l] * twice;
      });
    }
  });
}

// ---- long lines: the four-step decomposition ----
// KISS FFT recurses over the whole line, so a line much larger than the cache misses it at
// every stage (and one line is one thread). Lines of at least kFourStepMin points that split
// as n = n1 * n2 with both factors >= 64 run as short transforms instead.
constexpr int64_t kFourStepMin = int64_t{1} << 16;

// n1: the divisor of n nearest sqrt(n) from below, or 0 when there is none >= 64.
int64_t four_step_split(int64_t n) {
  if (n < kFourStepMin) return 0;
  for (auto d = static_cast<int64_t>(std::sqrt(static_cast<double>(n))); d >= 64; --d)
    if (n % d == 0) return d;
  return 0;
}

// The DFT of x (n = n1 * n2 points) by Bailey's four-step method: with j = j1 + n1 j2 and
// k = k2 + n2 k1, X[k] = sum_j1 w1^(j1 k1) w^(j1 k2) sum_j2 w2^(j2 k2) x[j]. Pass one runs the
// n1 inner transforms (columns of x seen as an (n2, n1) matrix) and multiplies by the
// twiddles w^(j1 k2), leaving row k2 of `work` to pass two's transform over j1, which gives
// X[k2 + n2 k1] for every k1; emit(k, value) receives each. Both passes move kTile columns
// or rows at a time, so the strided side of each copy reads or writes whole cache lines (a
// column at a time, power-of-two strides would also fight over the same cache sets).
constexpr int64_t kTile = 16;

// put(k, exp(i unit ((mult k) mod period))) for k < count: exact every 64 steps, a running
// product in double between (the twiddles of the four-step passes and of long real lines).
template <class T, class Put>
void turns(double unit, int64_t mult, int64_t period, int64_t count, Put&& put) {
  const std::complex<double> step = std::polar(1.0, unit * static_cast<double>(mult % period));
  std::complex<double> w;
  for (int64_t k = 0; k < count; ++k, w *= step) {
    if (k % 64 == 0) w = std::polar(1.0, unit * static_cast<double>((mult * k) % period));
    put(k, std::complex<T>(static_cast<T>(w.real()), static_cast<T>(w.imag())));
  }
}

// four_step (below) for lengths FftPlan takes: both passes run kLanes lines per batch.
template <class T, class Emit>
void four_step_batched(const std::complex<T>* x, std::complex<T>* work, int64_t n1, int64_t n2,
                       bool inverse, Emit&& emit) {
  constexpr int64_t L = LaneBuffer<T>::kLanes;
  const int64_t n = n1 * n2;
  const double angle = (inverse ? 2.0 : -2.0) * 3.14159265358979323846 / static_cast<double>(n);
  kernel::parallel_for((n1 + L - 1) / L, line_grain(n2 * L), [&](int64_t begin, int64_t end) {
    const kernel::FftPlan<T>& f = batch_plan<T>(n2).fft;
    LaneBuffer<T> data(n2), spare(n2);
    for (int64_t t = begin; t < end; ++t) {
      const int64_t j0 = t * L;
      const BatchLayout columns{0, std::min(L, n1 - j0), 1, n1};
      gather(x + j0, columns, n2, n2, data);
      LaneBuffer<T>& y = run_batch(f, data, spare, inverse);
      T *re = y.re(), *im = y.im();
      for (int64_t c = 0; c < columns.count; ++c)  // times w^(j1 k2)
        turns<T>(angle, j0 + c, n, n2, [&](int64_t k2, std::complex<T> w) {
          const std::complex<T> v = std::complex<T>(re[k2 * L + c], im[k2 * L + c]) * w;
          re[k2 * L + c] = v.real(), im[k2 * L + c] = v.imag();
        });
      scatter(y, work + j0, columns, n2, n2, T(1));
    }
  });
  kernel::parallel_for((n2 + L - 1) / L, line_grain(n1 * L), [&](int64_t begin, int64_t end) {
    const kernel::FftPlan<T>& f = batch_plan<T>(n1).fft;
    LaneBuffer<T> data(n1), spare(n1);
    for (int64_t t = begin; t < end; ++t) {
      const int64_t k0 = t * L;
      const BatchLayout rows{0, std::min(L, n2 - k0), n1, 1};
      gather(work + k0 * n1, rows, n1, n1, data);
      LaneBuffer<T>& y = run_batch(f, data, spare, inverse);
      for (int64_t k1 = 0; k1 < n1; ++k1)
        for (int64_t r = 0; r < rows.count; ++r)
          emit(k0 + r + n2 * k1, std::complex<T>(y.re()[k1 * L + r], y.im()[k1 * L + r]));
    }
  });
}

template <class T, class Emit>
void four_step(const std::complex<T>* x, std::complex<T>* work, int64_t n1, int64_t n2,
               bool inverse, Emit&& emit) {
  using C = std::complex<T>;
  if (kernel::fft_supported(n1 * n2)) return four_step_batched<T>(x, work, n1, n2, inverse, emit);
  const int64_t n = n1 * n2;
  const double angle = (inverse ? 2.0 : -2.0) * 3.14159265358979323846 / static_cast<double>(n);
  const int64_t tiles1 = (n1 + kTile - 1) / kTile, tiles2 = (n2 + kTile - 1) / kTile;
  kernel::parallel_for(tiles1, line_grain(n2 * kTile), [&](int64_t begin, int64_t end) {
    const Plan<T>& f = plan<T>(static_cast<size_t>(n2), inverse);
    std::vector<C> a(static_cast<size_t>(n2 * kTile)), b(static_cast<size_t>(n2 * kTile));
    for (int64_t t = begin; t < end; ++t) {
      const int64_t j0 = t * kTile, cols = std::min(kTile, n1 - j0);
      for (int64_t j2 = 0; j2 < n2; ++j2)
        for (int64_t c = 0; c < cols; ++c) a[c * n2 + j2] = x[j0 + c + n1 * j2];
      for (int64_t c = 0; c < cols; ++c) {
        f.transform(a.data() + c * n2, b.data() + c * n2);
        C* col = b.data() + c * n2;  // times w^(j1 k2)
        turns<T>(angle, j0 + c, n, n2, [&](int64_t k2, C w) { col[k2] *= w; });
      }
      for (int64_t k2 = 0; k2 < n2; ++k2)
        for (int64_t c = 0; c < cols; ++c) work[k2 * n1 + j0 + c] = b[c * n2 + k2];
    }
  });
  kernel::parallel_for(tiles2, line_grain(n1 * kTile), [&](int64_t begin, int64_t end) {
    const Plan<T>& f = plan<T>(static_cast<size_t>(n1), inverse);
    std::vector<C> d(static_cast<size_t>(n1 * kTile));
    for (int64_t t = begin; t < end; ++t) {
      const int64_t k0 = t * kTile, rows = std::min(kTile, n2 - k0);
      for (int64_t r = 0; r < rows; ++r) f.transform(work + (k0 + r) * n1, d.data() + r * n1);
      for (int64_t k1 = 0; k1 < n1; ++k1)
        for (int64_t r = 0; r < rows; ++r) emit(k0 + r + n2 * k1, d[r * n1 + k1]);
    }
  });
}

// transform_lines for long lines: one line at a time, each four-step pass in parallel.
template <class T>
void transform_long_lines(const std::complex<T>* in, int64_t in_len, std::complex<T>* out,
                          int64_t out_len, const Lines& lines, int64_t n, int64_t n1, bool inverse,
                          T scale, int64_t keep) {
  using C = std::complex<T>;
  kernel::AllowThreads allow;
  std::vector<C> x(static_cast<size_t>(n)), work(static_cast<size_t>(n));
  for (int64_t l = 0; l < lines.count(); ++l) {
    lines.gather(in + lines.start(l, in_len), in_len, x.data(), n);
    C* dst = out + lines.start(l, out_len);
    four_step<T>(x.data(), work.data(), n1, n / n1, inverse, [&](int64_t k, C v) {
      if (k < out_len) dst[k * lines.inner] = k < keep ? v * scale : C(0);
    });
    for (int64_t k = n; k < out_len; ++k) dst[k * lines.inner] = C(0);
  }
}

// out (out_len along the axis) = scale * the first `keep` values of the length-n DFT of each
// input line (in_len values, cropped or zero-padded to n); zeros beyond `keep`.
template <class T>
void transform_lines(const std::complex<T>* in, int64_t in_len, std::complex<T>* out,
                     int64_t out_len, const Lines& lines, int64_t n, bool inverse, T scale,
                     int64_t keep) {
  using C = std::complex<T>;
  if (const int64_t n1 = four_step_split(n))
    return transform_long_lines<T>(in, in_len, out, out_len, lines, n, n1, inverse, scale, keep);
  if (batched(lines, n))
    return transform_lines_batched<T>(in, in_len, out, out_len, lines, n, inverse, scale, keep);
  // Lines along an inner axis go kTile neighbours at a time (see four_step); lines along the
  // last axis one at a time, straight from the input and into the output where they can.
  const int64_t width = std::min(lines.inner, kTile);
  const int64_t per_outer = (lines.inner + width - 1) / width;
  const bool direct_in = lines.inner == 1 && in_len >= n;
  const bool direct_out = lines.inner == 1 && out_len == n && keep == n && scale == T(1);
  kernel::parallel_for(
      lines.outer * per_outer, line_grain(n * width), [&](int64_t begin, int64_t end) {
        const Plan<T>& f = plan<T>(static_cast<size_t>(n), inverse);
        std::vector<C> a(static_cast<size_t>(n * width)), b(static_cast<size_t>(n * width));
        for (int64_t t = begin; t < end; ++t) {
          const int64_t o = t / per_outer, i0 = (t % per_outer) * width;
          const int64_t cols = std::min(width, lines.inner - i0);
          const C* src = in + o * in_len * lines.inner + i0;
          C* dst = out + o * out_len * lines.inner + i0;
          if (direct_in && direct_out) {
            f.transform(src, dst);
            continue;
          }
          if (!direct_in) {
            const int64_t copy = std::min(in_len, n);
            for (int64_t j = 0; j < copy; ++j)
              for (int64_t c = 0; c < cols; ++c) a[c * n + j] = src[j * lines.inner + c];
            for (int64_t c = 0; c < cols; ++c)
              std::fill(a.data() + c * n + copy, a.data() + (c + 1) * n, C(0));
          }
          for (int64_t c = 0; c < cols; ++c) f.transform(direct_in ? src : &a[c * n], &b[c * n]);
          for (int64_t j = 0; j < out_len; ++j)
            for (int64_t c = 0; c < cols; ++c)
              dst[j * lines.inner + c] = j < keep ? b[c * n + j] * scale : C(0);
        }
      });
}

// rfft of long lines (as rfft_lines_batched's), one at a time: z packed as in rfft_lines_batched,
// its n / 2-point DFT by the four-step passes, split with turns computed on the way.
template <class T>
void rfft_long_lines(const T* in, int64_t in_len, std::complex<T>* out, const Lines& lines,
                     int64_t n, int64_t h1, T scale) {
  using C = std::complex<T>;
  kernel::AllowThreads allow;
  const int64_t h = n / 2;
  std::vector<T> x(static_cast<size_t>(n));
  std::vector<C> work(static_cast<size_t>(h)), z(static_cast<size_t>(h));
  for (int64_t l = 0; l < lines.count(); ++l) {
    lines.gather(in + lines.start(l, in_len), in_len, x.data(), n);
    four_step<T>(reinterpret_cast<const C*>(x.data()), work.data(), h1, h / h1, false,
                 [&](int64_t k, C v) { z[k] = v; });
    C* dst = out + lines.start(l, h + 1);
    turns<T>(-3.14159265358979323846 / static_cast<double>(h), 1, 2 * h, h + 1,
             [&](int64_t k, C w) {
               const C zk = z[k == h ? 0 : k], zc = std::conj(z[k == 0 ? 0 : h - k]);
               const C even = (zk + zc) / T(2), odd = (zk - zc) * C(0, T(-0.5));
               dst[k * lines.inner] = (even + w * odd) * scale;
             });
  }
}

// The n // 2 + 1 non-negative frequencies of real lines; even n through KISS FFT's real
// transform (one complex FFT of n / 2 points).
template <class T>
void rfft_lines(const T* in, int64_t in_len, std::complex<T>* out, const Lines& lines, int64_t n,
                T scale) {
  using C = std::complex<T>;
  if (n % 2 == 0 && kernel::fft_supported(n / 2)) {
    if (const int64_t h1 = four_step_split(n / 2))
      return rfft_long_lines<T>(in, in_len, out, lines, n, h1, scale);
    if (batched(lines, n)) return rfft_lines_batched<T>(in, in_len, out, lines, n, scale);
  }
  const int64_t m = n / 2 + 1;
  kernel::parallel_for(lines.count(), line_grain(n), [&](int64_t begin, int64_t end) {
    // Even n: KISS FFT's real transform of n / 2 complex points (when that plan is direct).
    const bool half = n % 2 == 0 && n >= 2 && plan<T>(static_cast<size_t>(n / 2), false).direct();
    const Plan<T>& f = plan<T>(static_cast<size_t>(half ? n / 2 : n), false);
    std::vector<T> a(static_cast<size_t>(n));
    std::vector<C> ca(half ? 0 : static_cast<size_t>(n)), b(static_cast<size_t>(n + 1));
    for (int64_t l = begin; l < end; ++l) {
      lines.gather(in + lines.start(l, in_len), in_len, a.data(), n);
      if (half) {
        f.transform_real(a.data(), b.data());
        const T nyquist = b[0].imag();  // packed beside the zero frequency
        b[0] = C(b[0].real(), 0);
        b[n / 2] = C(nyquist, 0);
      } else {
        for (int64_t j = 0; j < n; ++j) ca[j] = C(a[j], 0);
        f.transform(ca.data(), b.data());
      }
      C* dst = out + lines.start(l, m);
      for (int64_t j = 0; j < m; ++j) dst[j * lines.inner] = b[j] * scale;
    }
  });
}

// Real lines of length n from their n // 2 + 1 non-negative frequencies (in_len given, cropped
// or zero-padded): the Hermitian spectrum completed, inverse-transformed, its real part kept.
// The imaginary parts of the zero and (even n) Nyquist frequencies are ignored, as NumPy's.
template <class T>
void irfft_lines(const std::complex<T>* in, int64_t in_len, T* out, const Lines& lines, int64_t n,
                 T scale) {
  using C = std::complex<T>;
  if (n % 2 == 0 && kernel::fft_supported(n / 2) && batched(lines, n))
    return irfft_lines_batched<T>(in, in_len, out, lines, n, scale);
  const int64_t m = n / 2 + 1;
  kernel::parallel_for(lines.count(), line_grain(n), [&](int64_t begin, int64_t end) {
    const Plan<T>& f = plan<T>(static_cast<size_t>(n), true);
    std::vector<C> a(static_cast<size_t>(n)), b(static_cast<size_t>(n));
    for (int64_t l = begin; l < end; ++l) {
      lines.gather(in + lines.start(l, in_len), in_len, a.data(), m);
      a[0] = C(a[0].real(), 0);
      if (n % 2 == 0) a[n / 2] = C(a[n / 2].real(), 0);
      for (int64_t k = m; k < n; ++k) a[k] = std::conj(a[n - k]);
      f.transform(a.data(), b.data());
      T* dst = out + lines.start(l, n);
      for (int64_t j = 0; j < n; ++j) dst[j * lines.inner] = b[j].real() * scale;
    }
  });
}

// Runs f(T{}) for the real type of complex dtype t.
template <class F>
void with_part_type(DType t, F f) {
  if (t == DType::kComplex64 || t == DType::kFloat32)
    f(float{});
  else
    f(double{});
}

// The blob as a contiguous array of dtype t: itself when it is one, else a cast copy.
NDArray contiguous_as(const TBlob& b, DType t) {
  NDArray a = kernel::as_array(b);
  return b.dtype == t && b.is_contiguous() ? a : a.astype(t);
}

Shape with_length(Shape s, int axis, int64_t len) {
  s[axis] = len;
  return s;
}

// ---- forward ops ----
template <Kind kind>
bool fft_shape(const NodeAttrs& attrs, ShapeVector* in, ShapeVector* out) {
  if (!(*in)[0].is_known()) return false;
  const auto& p = attrs.get<FFTParam>();
  const char* op = kind_name(kind, p.inverse);
  const Geometry g = geometry(p, (*in)[0], kind, op);
  norm_scale(p.norm, g.n, false, op);  // a bad norm is a ValueError before anything runs
  const int64_t len = kind == Kind::kReal ? g.n / 2 + 1 : g.n;
  assign_shape(attrs, &(*out)[0], with_length((*in)[0], g.axis, len), "output", 0);
  return true;
}

template <Kind kind>
bool fft_type(const NodeAttrs& attrs, DTypeVector* in, DTypeVector* out) {
  const DType t = (*in)[0];
  if (t == DType::kUnknown) return false;
  if (kind == Kind::kReal && is_complex(t))
    type_error("[rfft] the input must be real; got ", t, " (use fft for complex input)");
  const DType c = complex_of_input(t);
  assign_type(attrs, &(*out)[0], kind == Kind::kInverseReal ? real_dtype(c) : c, "output", 0);
  return true;
}

template <Kind kind>
void fft_compute(const NodeAttrs& attrs, const OpContext&, const std::vector<TBlob>& in,
                 const std::vector<OpReqType>& req, const std::vector<TBlob>& out) {
  if (req[0] == kNullOp || out[0].size() == 0) return;
  const auto& p = attrs.get<FFTParam>();
  const char* op = kind_name(kind, p.inverse);
  const Geometry g = geometry(p, in[0].shape, kind, op);
  const Lines lines(in[0].shape, g.axis);
  const DType c = complex_of_input(in[0].dtype);
  const bool inverse = kind == Kind::kInverseReal || (kind == Kind::kComplex && p.inverse);
  // Written straight into the output when it is a plain write to contiguous memory.
  const bool direct = req[0] == kWriteTo && out[0].is_contiguous();
  NDArray result = direct ? kernel::as_array(out[0]) : NDArray(out[0].shape, out[0].dtype);
  if (in[0].size() > 0) {
    with_part_type(c, [&](auto zero) {
      using T = decltype(zero);
      using Cx = std::complex<T>;
      const T scale = static_cast<T>(norm_scale(p.norm, g.n, inverse, op));
      if constexpr (kind == Kind::kReal) {
        NDArray x = contiguous_as(in[0], real_dtype(c));
        rfft_lines<T>(x.data<T>(), g.len, result.data<Cx>(), lines, g.n, scale);
      } else {
        NDArray x = contiguous_as(in[0], c);
        if constexpr (kind == Kind::kComplex)
          transform_lines<T>(x.data<Cx>(), g.len, result.data<Cx>(), g.n, lines, g.n, inverse,
                             scale, g.n);
        else
          irfft_lines<T>(x.data<Cx>(), g.len, result.data<T>(), lines, g.n, scale);
      }
    });
  } else {
    kernel::fill(kernel::to_blob(result), 0);  // NumPy: an empty batch transforms to zeros
  }
  if (!direct) kernel::copy(kernel::to_blob(result), out[0], req[0]);
}

// ---- backward ops: (ograd, x) -> grad of x, the adjoint of the forward map ----
template <Kind kind>
void fft_backward_compute(const NodeAttrs& attrs, const OpContext&, const std::vector<TBlob>& in,
                          const std::vector<OpReqType>& req, const std::vector<TBlob>& out) {
  if (req[0] == kNullOp || out[0].size() == 0) return;
  const auto& p = attrs.get<FFTParam>();
  const char* op = kind_name(kind, p.inverse);
  const TBlob& x = in[1];
  const Geometry g = geometry(p, x.shape, kind, op);
  const DType c = complex_of_input(x.dtype);
  const bool inverse = kind == Kind::kInverseReal || (kind == Kind::kComplex && p.inverse);
  const int64_t m = g.n / 2 + 1;
  // The forward output's length along the axis, where the output gradient's lines live.
  const int64_t g_len = kind == Kind::kReal ? m : g.n;
  NDArray grad(x.shape, c);
  if (x.size() == 0 || in[0].size() == 0) {
    kernel::fill(kernel::to_blob(grad), 0);
  } else {
    const Lines lines(x.shape, g.axis);
    with_part_type(c, [&](auto zero) {
      using T = decltype(zero);
      using Cx = std::complex<T>;
      const T scale = static_cast<T>(norm_scale(p.norm, g.n, inverse, op));
      NDArray og = contiguous_as(in[0], c);
      Cx* dst = grad.data<Cx>();
      if constexpr (kind == Kind::kInverseReal) {
        // irfft: grad_k = scale * w_k * DFT(g)_k for k < n // 2 + 1, w_k = 2 except at the
        // zero and (even n) Nyquist frequencies, whose imaginary parts the forward ignores.
        const int64_t keep = std::min(m, g.len);
        transform_lines<T>(og.data<Cx>(), g.n, dst, g.len, lines, g.n, false, scale, keep);
        for (int64_t l = 0; l < lines.count(); ++l) {
          Cx* line = dst + lines.start(l, g.len);
          line[0] = Cx(line[0].real(), 0);
          for (int64_t k = 1; k < keep; ++k) {
            Cx& v = line[k * lines.inner];
            v = (g.n % 2 == 0 && k == g.n / 2) ? Cx(v.real(), 0) : v * T(2);
          }
        }
      } else {
        // fft / ifft / rfft: the conjugate-transposed DFT (the transform the other way,
        // unnormalized), the forward's scale, cropped or zero-padded back to the input length.
        transform_lines<T>(og.data<Cx>(), g_len, dst, g.len, lines, g.n, !inverse, scale,
                           std::min(g.n, g.len));
      }
    });
  }
  kernel::copy(kernel::to_blob(grad), out[0], req[0]);  // real x: the real part
}

Op& register_fft(const char* name, const char* doc, FInferShape shape, FInferType type,
                 FCompute forward, FCompute backward_compute) {
  const std::string backward = std::string("_backward") + (name + 4);  // _backward_fft
  OpRegistry::global()
      .register_op(backward)
      .describe("Backward of the transform of the same stem: (ograd, x) -> grad of x.")
      .set_num_inputs(2)
      .set_params<FFTParam>()
      .set_attr<FInferShape>("FInferShape",
                             [](const NodeAttrs& attrs, ShapeVector* in, ShapeVector* out) {
                               if (!(*in)[1].is_known()) return false;
                               assign_shape(attrs, &(*out)[0], (*in)[1], "output", 0);
                               return true;
                             })
      .set_attr<FInferType>("FInferType",
                            [](const NodeAttrs& attrs, DTypeVector* in, DTypeVector* out) {
                              if ((*in)[1] == DType::kUnknown) return false;
                              const DType t = (*in)[1];
                              assign_type(attrs, &(*out)[0],
                                          is_inexact(t) ? t : complex_of_input(t), "output", 0);
                              return true;
                            })
      .set_attr<TIsBackward>("TIsBackward", true)
      .set_attr<FCompute>("FCompute<cpu>", std::move(backward_compute));
  return OpRegistry::global()
      .register_op(name)
      .describe(doc)
      .set_num_inputs(1)
      .add_argument("x", "NDArray", "Input array.")
      .set_params<FFTParam>()
      .set_attr<FInferShape>("FInferShape", std::move(shape))
      .set_attr<FInferType>("FInferType", std::move(type))
      .set_attr<FCompute>("FCompute<cpu>", std::move(forward))
      .set_attr<FGradient>("FGradient", ElemwiseGradUseIn{backward.c_str()});
}

template <Kind kind>
Op& register_kind(const char* name, const char* doc) {
  return register_fft(name, doc, fft_shape<kind>, fft_type<kind>, fft_compute<kind>,
                      fft_backward_compute<kind>);
}

[[maybe_unused]] const bool registered = [] {
  register_kind<Kind::kComplex>(
      "_npi_fft",
      "The discrete Fourier transform (or its inverse) along one axis, complex output.");
  register_kind<Kind::kReal>("_npi_rfft",
                             "The DFT of real input along one axis: the n // 2 + 1 non-negative "
                             "frequencies.");
  register_kind<Kind::kInverseReal>(
      "_npi_irfft",
      "The inverse of rfft: n real values from n // 2 + 1 frequencies along one axis.");
  return true;
}();

}  // namespace
}  // namespace ndx
