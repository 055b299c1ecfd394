// The random kernels of kernel/random.h on a GPU: each element reads the same Philox counter
// blocks and words as the CPU's kernel/random.cc, so a seed gives the same draws on both
// devices. Dropout masks and uniforms come out bit for bit the same; normals agree to the
// rounding of the log / sin / cos libraries (CUDA's here, Highway's on the CPU).
#include "kernel/cuda/common.cuh"
#include "kernel/gpu.h"
#include "kernel/gpu_fused.h"
#include "kernel/random.h"

namespace ndx::kernel::gpu {
namespace {

// Must match kernel/random.cc.
constexpr int64_t kChunk = 512;
constexpr uint32_t kNormalTag = 0x4e4f524du, kUniformTag = 0x554e4946u;

__device__ __forceinline__ std::array<uint32_t, 4> block_words(const Philox4x32& gen, uint64_t c,
                                                               uint32_t tag) {
  return gen({static_cast<uint32_t>(c), static_cast<uint32_t>(c >> 32), 0, tag});
}

// 53 random bits from words 2h and 2h + 1 of a block.
__device__ __forceinline__ uint64_t bits53(const std::array<uint32_t, 4>& w, int h) {
  return (uint64_t{w[2 * h]} >> 5) << 26 | (w[2 * h + 1] >> 6);
}

// Each thread takes one counter block: two elements (a double's uniform takes two words).
__global__ void bernoulli_kernel(Philox4x32 gen, double p, double scale, char* out, DType t,
                                 int64_t size, int64_t n) {
  const int64_t stride = int64_t{gridDim.x} * blockDim.x, blocks = (n + 1) / 2;
  for (int64_t b = int64_t{blockIdx.x} * blockDim.x + threadIdx.x; b < blocks; b += stride) {
    const auto w = block_words(gen, static_cast<uint64_t>(b), 0);
    for (int h = 0; h < 2 && 2 * b + h < n; ++h) {
      const double u = static_cast<double>(bits53(w, h)) * 0x1.0p-53;
      store_as(out + (2 * b + h) * size, t, u >= p ? scale : 0.0, false);
    }
  }
}

// A thread's K consecutive values, stored as one 16-byte write (packed: the output is T,
// 16-byte aligned) when all K are in range, else element by element in the output's dtype.
template <class T, int K>
struct alignas(sizeof(T) * K) Values {
  T v[K];
};
template <class T, int K>
__device__ __forceinline__ void store_values(const Values<T, K>& x, char* out, DType t,
                                             int64_t size, int64_t i, int64_t n, bool packed) {
  if (packed && i + K <= n) {
    reinterpret_cast<Values<T, K>*>(out)[i / K] = x;
    return;
  }
  for (int v = 0; v < K && i + v < n; ++v) store_as(out + (i + v) * size, t, x.v[v], false);
}

// Values per counter block: four float32 uniforms (a word each) or two float64 ones.
template <class T>
inline constexpr int kPerBlock = sizeof(T) == 4 ? 4 : 2;

// The v-th uniform of block w (in [0, 1), or in (0, 1) with kOpen, as kernel/random.cc).
template <class T, bool kOpen>
__device__ __forceinline__ T uniform_of(const std::array<uint32_t, 4>& w, int v) {
  if constexpr (sizeof(T) == 4) {
    const float u = static_cast<float>(w[v] >> 8) * 0x1.0p-24f;
    return kOpen ? u + 0x1.0p-25f : u;
  } else {
    const double bits = static_cast<double>(bits53(w, v));
    return kOpen ? (bits + 0.5) * 0x1.0p-53 : bits * 0x1.0p-53;
  }
}

// low + (high - low) * u, in float32 or float64 as the CPU computes it; a block per thread.
template <class T>
__global__ void uniform_kernel(Philox4x32 gen, double low, double high, char* out, DType t,
                               int64_t size, int64_t n, bool packed) {
  constexpr int kPer = kPerBlock<T>;
  const int64_t stride = int64_t{gridDim.x} * blockDim.x, blocks = (n + kPer - 1) / kPer;
  const T lo = static_cast<T>(low), width = static_cast<T>(high - low);
  for (int64_t b = int64_t{blockIdx.x} * blockDim.x + threadIdx.x; b < blocks; b += stride) {
    const auto w = block_words(gen, static_cast<uint64_t>(b), kUniformTag);
    Values<T, kPer> y;
    for (int v = 0; v < kPer; ++v) {
      const T u = uniform_of<T, false>(w, v);
      if constexpr (sizeof(T) == 4)
        y.v[v] = __fadd_rn(lo, __fmul_rn(width, u));  // no fused multiply-add, as the host
      else
        y.v[v] = __dadd_rn(lo, __dmul_rn(width, u));
    }
    store_values(y, out, t, size, b * kPer, n, packed);
  }
}

// Chunks of 512: element j < 256 of a chunk is r cos t, element j + 256 is r sin t, with r
// from the chunk's uniform j and t from its uniform j + 256. A thread takes one counter
// block of the first half (kPer values of j) and its twin block of the second half.
template <class T>
__global__ void normal_kernel(Philox4x32 gen, double loc, double scale, char* out, DType t,
                              int64_t size, int64_t n, bool packed) {
  constexpr int kPer = kPerBlock<T>;
  constexpr int64_t kHalf = kChunk / 2, kBlocksPerHalf = kHalf / kPer;
  const int64_t stride = int64_t{gridDim.x} * blockDim.x;
  const int64_t chunks = (n + kChunk - 1) / kChunk, work = chunks * kBlocksPerHalf;
  const T vloc = static_cast<T>(loc), vscale = static_cast<T>(scale);
  for (int64_t q = int64_t{blockIdx.x} * blockDim.x + threadIdx.x; q < work; q += stride) {
    const int64_t c = q / kBlocksPerHalf, j0 = q % kBlocksPerHalf * kPer;
    const int64_t first = c * kChunk;  // values of the stream: first + j
    const auto w1 = block_words(gen, static_cast<uint64_t>((first + j0) / kPer), kNormalTag);
    const auto w2 =
        block_words(gen, static_cast<uint64_t>((first + kHalf + j0) / kPer), kNormalTag);
    Values<T, kPer> lo, hi;  // elements first + j0 + v and first + kHalf + j0 + v
    for (int v = 0; v < kPer; ++v) {
      const T r = sqrt(T(-2) * log(uniform_of<T, true>(w1, v)));
      const T angle = uniform_of<T, true>(w2, v) * T(6.283185307179586) - T(3.141592653589793);
      T sn, cs;
      if constexpr (sizeof(T) == 4)
        sincosf(angle, &sn, &cs);
      else
        sincos(angle, &sn, &cs);
      lo.v[v] = r * cs * vscale + vloc;
      hi.v[v] = r * sn * vscale + vloc;
    }
    store_values(lo, out, t, size, first + j0, n, packed);
    store_values(hi, out, t, size, first + kHalf + j0, n, packed);
  }
}

void check_out(const TBlob& out) {
  if (!out.is_contiguous())
    raise(ErrorKind::kRuntimeError, "[random] the output must be contiguous");
}

}  // namespace

void bernoulli_scaled(const TBlob& out, double p, double scale, uint64_t seed) {
  const int64_t n = out.size();
  if (n == 0) return;
  check_out(out);
  ::ndx::cuda::DeviceGuard guard(out.device.id);
  bernoulli_kernel<<<grid_for(n, 256), 256, 0, stream()>>>(Philox4x32(seed), p, scale,
                                                           static_cast<char*>(out.dptr), out.dtype,
                                                           dtype_size(out.dtype), n);
  check_launch("bernoulli");
}

namespace {
// Runs launch(T{}, grid, itemsize, packed) for a contiguous output: T is double for float64 outputs
// and float for the others, as kernel/random.cc computes them.
template <class Launch>
void launch_draws(const TBlob& out, const char* what, Launch launch) {
  if (out.size() == 0) return;
  check_out(out);
  ::ndx::cuda::DeviceGuard guard(out.device.id);
  const auto grid = grid_for(out.size(), 256);
  const bool aligned = reinterpret_cast<uintptr_t>(out.dptr) % 16 == 0;
  if (out.dtype == DType::kFloat64)
    launch(double{}, grid, int64_t{8}, aligned);
  else
    launch(float{}, grid, dtype_size(out.dtype), aligned && out.dtype == DType::kFloat32);
  check_launch(what);
}
}  // namespace

void uniform(const TBlob& out, double low, double high, uint64_t seed) {
  launch_draws(out, "uniform", [&](auto type, auto grid, int64_t size, bool packed) {
    uniform_kernel<decltype(type)><<<grid, 256, 0, stream()>>>(Philox4x32(seed), low, high,
                                                               static_cast<char*>(out.dptr),
                                                               out.dtype, size, out.size(), packed);
  });
}

void normal(const TBlob& out, double loc, double scale, uint64_t seed) {
  launch_draws(out, "normal", [&](auto type, auto grid, int64_t size, bool packed) {
    normal_kernel<decltype(type)><<<grid, 256, 0, stream()>>>(Philox4x32(seed), loc, scale,
                                                              static_cast<char*>(out.dptr),
                                                              out.dtype, size, out.size(), packed);
  });
}

}  // namespace ndx::kernel::gpu

namespace ndx::kernel::gpu {
namespace {
// A thread per counter block (two elements), as bernoulli_kernel. u >= p is decided on the
// 53 bits themselves (bits >= keep_from, keep_from = ceil(p * 2^53): the same verdict, no
// double arithmetic); the product uses the mask's value rounded to the output dtype, as the
// host's two passes do. kPacked: T is the output dtype and the three arrays are aligned for
// one two-element load or store each.
template <class C, bool kPacked>
__global__ void dropout_kernel(Philox4x32 gen, uint64_t keep_from, double scale, const char* x,
                               char* mask, char* y, DType t, int64_t size, int64_t n) {
  const int64_t stride = int64_t{gridDim.x} * blockDim.x, blocks = (n + 1) / 2;
  const C kept = static_cast<C>(scale);
  for (int64_t b = int64_t{blockIdx.x} * blockDim.x + threadIdx.x; b < blocks; b += stride) {
    const auto w = gen({static_cast<uint32_t>(b), static_cast<uint32_t>(b >> 32), 0, 0});
    Values<C, 2> m;
    m.v[0] = bits53(w, 0) >= keep_from ? kept : C(0);
    m.v[1] = bits53(w, 1) >= keep_from ? kept : C(0);
    if (kPacked && 2 * b + 2 <= n) {
      const Values<C, 2> xv = reinterpret_cast<const Values<C, 2>*>(x)[b];
      reinterpret_cast<Values<C, 2>*>(mask)[b] = m;
      reinterpret_cast<Values<C, 2>*>(y)[b] = {{xv.v[0] * m.v[0], xv.v[1] * m.v[1]}};
      continue;
    }
    for (int h = 0; h < 2 && 2 * b + h < n; ++h) {
      const int64_t at = (2 * b + h) * size;
      store_as(mask + at, t, static_cast<double>(m.v[h]), false);
      store_as(y + at, t, load_as<C>(x + at, t) * load_as<C>(mask + at, t), false);
    }
  }
}
}  // namespace

void dropout(const TBlob& x, const TBlob& mask, const TBlob& y, double p, double scale,
             uint64_t seed) {
  const int64_t n = y.size();
  if (n == 0) return;
  ::ndx::cuda::DeviceGuard guard(y.device.id);
  const auto grid = grid_for((n + 1) / 2, 256);
  const auto* xp = static_cast<const char*>(x.dptr);
  auto* mp = static_cast<char*>(mask.dptr);
  auto* yp = static_cast<char*>(y.dptr);
  const double from = std::ceil(p * 0x1.0p53);
  const uint64_t keep_from = from <= 0          ? 0
                             : from >= 0x1.0p53 ? uint64_t{1} << 53
                                                : static_cast<uint64_t>(from);
  const int64_t size = dtype_size(y.dtype);
  const auto aligned = [&](const void* q) {
    return reinterpret_cast<uintptr_t>(q) % (2 * size) == 0;
  };
  const bool packed = aligned(xp) && aligned(mp) && aligned(yp);
  const Philox4x32 gen(seed);
  if (y.dtype == DType::kFloat64 && packed)
    dropout_kernel<double, true>
        <<<grid, 256, 0, stream()>>>(gen, keep_from, scale, xp, mp, yp, y.dtype, 8, n);
  else if (y.dtype == DType::kFloat64)
    dropout_kernel<double, false>
        <<<grid, 256, 0, stream()>>>(gen, keep_from, scale, xp, mp, yp, y.dtype, 8, n);
  else if (y.dtype == DType::kFloat32 && packed)
    dropout_kernel<float, true>
        <<<grid, 256, 0, stream()>>>(gen, keep_from, scale, xp, mp, yp, y.dtype, 4, n);
  else
    dropout_kernel<float, false>
        <<<grid, 256, 0, stream()>>>(gen, keep_from, scale, xp, mp, yp, y.dtype, size, n);
  check_launch("dropout");
}

}  // namespace ndx::kernel::gpu
