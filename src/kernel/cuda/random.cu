// The random kernels of kernel/random.h on a GPU: each element reads the same Philox counter
// blocks and words as the CPU's kernel/random.cc, so a seed gives the same draws on both
// devices. Dropout masks and uniforms come out bit for bit the same; normals agree to the
// rounding of the log / sin / cos libraries (CUDA's here, Highway's on the CPU).
#include "kernel/cuda/common.cuh"
#include "kernel/gpu.h"
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

// Word w of the stream (four per counter block).
__device__ __forceinline__ uint32_t word(const Philox4x32& gen, uint64_t w, uint32_t tag) {
  return block_words(gen, w / 4, tag)[w % 4];
}

// 53 random bits from words 2v and 2v + 1 of the stream.
__device__ __forceinline__ uint64_t bits53(const Philox4x32& gen, uint64_t v, uint32_t tag) {
  const auto w = block_words(gen, v / 2, tag);
  const int h = static_cast<int>(v % 2);
  return (uint64_t{w[2 * h]} >> 5) << 26 | (w[2 * h + 1] >> 6);
}

__global__ void bernoulli_kernel(Philox4x32 gen, double p, double scale, char* out, DType t,
                                 int64_t size, int64_t n) {
  const int64_t stride = int64_t{gridDim.x} * blockDim.x;
  for (int64_t i = int64_t{blockIdx.x} * blockDim.x + threadIdx.x; i < n; i += stride) {
    const double u = static_cast<double>(bits53(gen, static_cast<uint64_t>(i), 0)) * 0x1.0p-53;
    store_as(out + i * size, t, u >= p ? scale : 0.0, false);
  }
}

// low + (high - low) * u, in float32 (24-bit u) or float64 (53-bit u) as the CPU computes it.
template <class T>
__global__ void uniform_kernel(Philox4x32 gen, double low, double high, char* out, DType t,
                               int64_t size, int64_t n) {
  const int64_t stride = int64_t{gridDim.x} * blockDim.x;
  const T lo = static_cast<T>(low), width = static_cast<T>(high - low);
  for (int64_t i = int64_t{blockIdx.x} * blockDim.x + threadIdx.x; i < n; i += stride) {
    T v;
    if constexpr (sizeof(T) == 4) {
      v = __fadd_rn(
          lo, __fmul_rn(width,
                        static_cast<float>(word(gen, static_cast<uint64_t>(i), kUniformTag) >> 8) *
                            0x1.0p-24f));
    } else {
      const double u =
          static_cast<double>(bits53(gen, static_cast<uint64_t>(i), kUniformTag)) * 0x1.0p-53;
      v = __dadd_rn(lo, __dmul_rn(width, u));
    }
    store_as(out + i * size, t, v, false);
  }
}

// An open uniform (0, 1) of value v of the normal stream.
template <class T>
__device__ __forceinline__ T open_uniform(const Philox4x32& gen, uint64_t v) {
  if constexpr (sizeof(T) == 4) {
    return static_cast<float>(word(gen, v, kNormalTag) >> 8) * 0x1.0p-24f + 0x1.0p-25f;
  } else {
    return (static_cast<double>(bits53(gen, v, kNormalTag)) + 0.5) * 0x1.0p-53;
  }
}

// Chunks of 512: element j < 256 of a chunk is r cos t, element j >= 256 is r sin t, with r
// from uniform j % 256 and t from uniform j % 256 + 256 of the chunk.
template <class T>
__global__ void normal_kernel(Philox4x32 gen, double loc, double scale, char* out, DType t,
                              int64_t size, int64_t n) {
  const int64_t stride = int64_t{gridDim.x} * blockDim.x;
  const T vloc = static_cast<T>(loc), vscale = static_cast<T>(scale);
  constexpr int64_t kHalf = kChunk / 2;
  for (int64_t i = int64_t{blockIdx.x} * blockDim.x + threadIdx.x; i < n; i += stride) {
    const int64_t first = i / kChunk * kChunk, j = i % kChunk % kHalf;
    const T u1 = open_uniform<T>(gen, static_cast<uint64_t>(first + j));
    const T u2 = open_uniform<T>(gen, static_cast<uint64_t>(first + j + kHalf));
    const T r = sqrt(T(-2) * log(u1));
    const T angle = u2 * T(6.283185307179586) - T(3.141592653589793);
    const T z = r * (i % kChunk < kHalf ? cos(angle) : sin(angle));
    store_as(out + i * size, t, z * vscale + vloc, false);
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

void uniform(const TBlob& out, double low, double high, uint64_t seed) {
  const int64_t n = out.size();
  if (n == 0) return;
  check_out(out);
  ::ndx::cuda::DeviceGuard guard(out.device.id);
  auto* p = static_cast<char*>(out.dptr);
  const auto grid = grid_for(n, 256);
  if (out.dtype == DType::kFloat64)
    uniform_kernel<double>
        <<<grid, 256, 0, stream()>>>(Philox4x32(seed), low, high, p, out.dtype, 8, n);
  else
    uniform_kernel<float><<<grid, 256, 0, stream()>>>(Philox4x32(seed), low, high, p, out.dtype,
                                                      dtype_size(out.dtype), n);
  check_launch("uniform");
}

void normal(const TBlob& out, double loc, double scale, uint64_t seed) {
  const int64_t n = out.size();
  if (n == 0) return;
  check_out(out);
  ::ndx::cuda::DeviceGuard guard(out.device.id);
  auto* p = static_cast<char*>(out.dptr);
  const auto grid = grid_for(n, 256);
  if (out.dtype == DType::kFloat64)
    normal_kernel<double>
        <<<grid, 256, 0, stream()>>>(Philox4x32(seed), loc, scale, p, out.dtype, 8, n);
  else
    normal_kernel<float><<<grid, 256, 0, stream()>>>(Philox4x32(seed), loc, scale, p, out.dtype,
                                                     dtype_size(out.dtype), n);
  check_launch("normal");
}

}  // namespace ndx::kernel::gpu
