// Random kernels (kernel/random.h), compiled once per Highway target. Normal and uniform
// samples are made 512 at a time: a chunk's Philox blocks give its uniforms (scalar), then
// Box-Muller or the affine map runs in SIMD (Highway's Log / Sin / Cos). Chunk c always covers
// elements [512 c, 512 c + 512) and reads blocks of its own counter range, so the values are
// the same for any thread count.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernel/random.cc"
#include <hwy/foreach_target.h>  // IWYU pragma: keep

#include <hwy/contrib/math/math-inl.h>
#include <hwy/highway.h>

#include <algorithm>
#include <bit>
#include <cstring>

#include "kernel/cast.h"
#include "kernel/dispatch.h"
#include "kernel/gpu.h"
#include "kernel/parallel.h"
#include "kernel/random.h"

#ifndef NDX_KERNEL_RANDOM_CHUNK_
#define NDX_KERNEL_RANDOM_CHUNK_
namespace ndx::kernel::random_detail {
constexpr int64_t kChunk = 512;
constexpr uint32_t kNormalTag = 0x4e4f524du, kUniformTag = 0x554e4946u;
using ChunkFn = void (*)(const Philox4x32& gen, uint64_t chunk, void* dst, double a, double b);
// The 53-bit draws of the elements of counter blocks [first, first + count) of the untagged
// stream (dropout's): bits[2 j + h] from words 2 h and 2 h + 1 of block first + j.
using BitsFn = void (*)(const Philox4x32& gen, uint64_t first, int64_t count, uint64_t* bits);
// The float32 mask of the first m elements of those blocks: kept where bits >= keep_from.
using MaskFn = void (*)(const Philox4x32& gen, uint64_t first, int64_t count, uint64_t keep_from,
                        float kept, float* out, int64_t m);
constexpr int64_t kMaskBlocks = 512;  // (blocks a MaskFn call takes at most)
struct ChunkTables {
  ChunkFn normal_f32, normal_f64, uniform_f32, uniform_f64;
  BitsFn bernoulli_bits;
  MaskFn bernoulli_f32;
};

// The 32-bit words of blocks [first, first + count) of a stream (words 2 and 3 of the counter
// hold the tag that keeps the normal and uniform streams of one seed apart).
inline void philox_words(const Philox4x32& gen, uint64_t first, int64_t count, uint32_t tag,
                         uint32_t* words) {
  for (int64_t b = 0; b < count; ++b) {
    const uint64_t c = first + static_cast<uint64_t>(b);
    const auto w = gen({static_cast<uint32_t>(c), static_cast<uint32_t>(c >> 32), 0, tag});
    std::memcpy(words + 4 * b, w.data(), sizeof(w));
  }
}

// Uniforms in (0, 1) (never 0, so logarithms are finite): 24 bits for float, 53 for double.
inline void open_uniforms(const uint32_t* w, int64_t n, float* u) {
  for (int64_t i = 0; i < n; ++i) u[i] = static_cast<float>(w[i] >> 8) * 0x1.0p-24f + 0x1.0p-25f;
}
inline void open_uniforms(const uint32_t* w, int64_t n, double* u) {
  for (int64_t i = 0; i < n; ++i) {
    const uint64_t hi = w[2 * i] >> 5, lo = w[2 * i + 1] >> 6;
    u[i] = (static_cast<double>((hi << 26) | lo) + 0.5) * 0x1.0p-53;
  }
}
}  // namespace ndx::kernel::random_detail
#endif

HWY_BEFORE_NAMESPACE();
namespace ndx::kernel::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;
using random_detail::kChunk;

// 512 normals loc + scale * z: z = r cos t for the first 256 and r sin t for the rest, with
// r = sqrt(-2 log u1) and t = 2 pi u2 - pi (in [-pi, pi], where Sin / Cos are most accurate).
template <class T>
void normal_chunk(const Philox4x32& gen, uint64_t chunk, void* dst, double loc, double scale) {
  constexpr int64_t kHalf = kChunk / 2, kWordsPerValue = sizeof(T) / 4;
  constexpr int64_t kBlocks = kChunk * kWordsPerValue / 4;
  alignas(64) uint32_t words[kBlocks * 4];
  alignas(64) T u[kChunk];
  random_detail::philox_words(gen, chunk * kBlocks, kBlocks, random_detail::kNormalTag, words);
  random_detail::open_uniforms(words, kChunk, u);
  const hn::ScalableTag<T> d;
  const auto minus_two = hn::Set(d, T(-2)), two_pi = hn::Set(d, T(6.283185307179586)),
             pi = hn::Set(d, T(3.141592653589793)), vloc = hn::Set(d, static_cast<T>(loc)),
             vscale = hn::Set(d, static_cast<T>(scale));
  T* out = static_cast<T*>(dst);
  for (int64_t k = 0; k < kHalf; k += static_cast<int64_t>(hn::Lanes(d))) {
    const auto r = hn::Sqrt(hn::Mul(minus_two, hn::Log(d, hn::Load(d, u + k))));
    const auto t = hn::MulSub(hn::Load(d, u + kHalf + k), two_pi, pi);
    hn::Store(hn::MulAdd(hn::Mul(r, hn::Cos(d, t)), vscale, vloc), d, out + k);
    hn::Store(hn::MulAdd(hn::Mul(r, hn::Sin(d, t)), vscale, vloc), d, out + kHalf + k);
  }
}

// 512 uniforms low + (high - low) * u with u in [0, 1).
template <class T>
void uniform_chunk(const Philox4x32& gen, uint64_t chunk, void* dst, double low, double high) {
  constexpr int64_t kWordsPerValue = sizeof(T) / 4, kBlocks = kChunk * kWordsPerValue / 4;
  alignas(64) uint32_t words[kBlocks * 4];
  random_detail::philox_words(gen, chunk * kBlocks, kBlocks, random_detail::kUniformTag, words);
  T* out = static_cast<T*>(dst);
  const T lo = static_cast<T>(low), width = static_cast<T>(high - low);
  for (int64_t i = 0; i < kChunk; ++i) {
    T v;
    if constexpr (sizeof(T) == 4) {
      v = static_cast<T>(words[i] >> 8) * T(0x1.0p-24);
    } else {
      const uint64_t hi = words[2 * i] >> 5, l = words[2 * i + 1] >> 6;
      v = static_cast<T>((hi << 26) | l) * T(0x1.0p-53);
    }
    out[i] = lo + width * v;
  }
}

// Philox4x32-10 on Lanes(d) blocks at once, a block's words in lane j of four vectors (as
// u64 lanes holding 32-bit values, so MulEven gives each round's full 64-bit products): the
// scalar generator's words, about eight times fewer instructions a block on AVX-512.
void bernoulli_bits(const Philox4x32& gen, uint64_t first, int64_t count, uint64_t* bits) {
  int64_t j = 0;
#if HWY_TARGET != HWY_SCALAR  // (its one u64 lane cannot be split into u32 lanes)
  const hn::ScalableTag<uint64_t> d;
  const hn::Repartition<uint32_t, decltype(d)> d32;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
  const auto low32 = hn::Set(d, 0xFFFFFFFFull), m0 = hn::Set(d, 0xD2511F53ull),
             m1 = hn::Set(d, 0xCD9E8D57ull), iota = hn::Iota(d, 0);
  for (; j + lanes <= count; j += lanes) {
    const auto ctr = hn::Add(hn::Set(d, first + static_cast<uint64_t>(j)), iota);
    auto c0 = hn::And(ctr, low32), c1 = hn::ShiftRight<32>(ctr), c2 = hn::Zero(d), c3 = c2;
    uint32_t k0 = gen.key[0], k1 = gen.key[1];
    for (int round = 0; round < 10; ++round) {
      if (round > 0) k0 += 0x9E3779B9u, k1 += 0xBB67AE85u;
      const auto p0 = hn::MulEven(hn::BitCast(d32, c0), hn::BitCast(d32, m0));
      const auto p1 = hn::MulEven(hn::BitCast(d32, c2), hn::BitCast(d32, m1));
      c0 = hn::Xor(hn::Xor(hn::ShiftRight<32>(p1), c1), hn::Set(d, uint64_t{k0}));
      c1 = hn::And(p1, low32);
      c2 = hn::Xor(hn::Xor(hn::ShiftRight<32>(p0), c3), hn::Set(d, uint64_t{k1}));
      c3 = hn::And(p0, low32);
    }
    // 27 + 26 bits of words (0, 1) and (2, 3): the two elements' draws
    const auto even = hn::Or(hn::ShiftLeft<26>(hn::ShiftRight<5>(c0)), hn::ShiftRight<6>(c1));
    const auto odd = hn::Or(hn::ShiftLeft<26>(hn::ShiftRight<5>(c2)), hn::ShiftRight<6>(c3));
    hn::StoreInterleaved2(even, odd, d, bits + 2 * j);
  }
#endif
  for (; j < count; ++j) {  // (the rest, one block at a time)
    const uint64_t c = first + static_cast<uint64_t>(j);
    const auto words = gen({static_cast<uint32_t>(c), static_cast<uint32_t>(c >> 32), 0, 0});
    for (int h = 0; h < 2; ++h)
      bits[2 * j + h] = (uint64_t{words[2 * h] >> 5} << 26) | (words[2 * h + 1] >> 6);
  }
}

// The compare written without a branch (half the draws go each way, so a branch mispredicts
// half the time; compilers turn a ?: here into one).
void bernoulli_f32(const Philox4x32& gen, uint64_t first, int64_t count, uint64_t keep_from,
                   float kept, float* out, int64_t m) {
  alignas(64) uint64_t bits[2 * random_detail::kMaskBlocks];
  bernoulli_bits(gen, first, count, bits);
  const uint32_t kept_bits = std::bit_cast<uint32_t>(kept);
  for (int64_t i = 0; i < m; ++i)
    out[i] = std::bit_cast<float>((0u - static_cast<uint32_t>(bits[i] >= keep_from)) & kept_bits);
}

const random_detail::ChunkTables* chunk_tables() {
  static const random_detail::ChunkTables t{normal_chunk<float>,  normal_chunk<double>,
                                            uniform_chunk<float>, uniform_chunk<double>,
                                            bernoulli_bits,       bernoulli_f32};
  return &t;
}

}  // namespace ndx::kernel::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace ndx::kernel {

namespace {

using random_detail::kChunk;

const random_detail::ChunkTables& tables() {
  static const random_detail::ChunkTables* t = NDX_DISPATCH_FN(chunk_tables)();
  return *t;
}

// Chunks of `fn` written to out: straight into it where a whole chunk of the compute type
// fits, else through a buffer and a cast (float16 / bfloat16 outputs compute in float32).
void fill_chunks(const TBlob& out, uint64_t seed, random_detail::ChunkFn fn, DType compute,
                 double a, double b) {
  if (out.size() == 0) return;
  if (!out.is_contiguous())
    raise(ErrorKind::kRuntimeError, "[random] the output must be contiguous");
  const Philox4x32 gen(seed);
  const int64_t n = out.size(), chunks = (n + kChunk - 1) / kChunk;
  const int64_t itemsize = dtype_size(out.dtype);
  const bool direct = out.dtype == compute;
  parallel_for(chunks, kGrain / kChunk, [&](int64_t first, int64_t last) {
    alignas(64) double buf[kChunk];
    for (int64_t c = first; c < last; ++c) {
      const int64_t begin = c * kChunk, count = std::min(kChunk, n - begin);
      char* dst = static_cast<char*>(out.dptr) + begin * itemsize;
      if (direct && count == kChunk) {
        fn(gen, static_cast<uint64_t>(c), dst, a, b);
        continue;
      }
      fn(gen, static_cast<uint64_t>(c), buf, a, b);
      convert(dst, out.dtype, 1, buf, compute, 1, count);
    }
  });
}

DType chunk_type(DType t) { return t == DType::kFloat64 ? DType::kFloat64 : DType::kFloat32; }

}  // namespace

void bernoulli_scaled(const TBlob& out, double p, double scale, uint64_t seed) {
  if (out.device.is_gpu()) return gpu::bernoulli_scaled(out, p, scale, seed);
  const int64_t n = out.size();
  if (n == 0) return;
  if (!out.is_contiguous())
    raise(ErrorKind::kRuntimeError, "[random] the output must be contiguous");
  // u >= p decided on the 53 bits themselves, as the GPU kernel does: bits >= ceil(p 2^53)
  const double from = std::ceil(p * 0x1.0p53);
  const uint64_t keep_from = from <= 0          ? 0
                             : from >= 0x1.0p53 ? uint64_t{1} << 53
                                                : static_cast<uint64_t>(from);
  const Philox4x32 gen(seed);
  const auto bits_of = tables().bernoulli_bits;
  const int64_t size = dtype_size(out.dtype), blocks = (n + 1) / 2;
  constexpr int64_t kBlocks = random_detail::kMaskBlocks;
  parallel_for(blocks, kGrain / 2, [&](int64_t first, int64_t last) {
    alignas(64) uint64_t bits[2 * kBlocks];
    alignas(64) double values[2 * kBlocks];
    for (int64_t b = first; b < last; b += kBlocks) {
      const int64_t count = std::min(kBlocks, last - b);
      const int64_t begin = 2 * b, m = std::min(2 * count, n - begin);
      char* dst = static_cast<char*>(out.dptr) + begin * size;
      if (out.dtype == DType::kFloat32) {
        tables().bernoulli_f32(gen, static_cast<uint64_t>(b), count, keep_from,
                               static_cast<float>(scale), reinterpret_cast<float*>(dst), m);
        continue;
      }
      bits_of(gen, static_cast<uint64_t>(b), count, bits);
      for (int64_t i = 0; i < m; ++i) values[i] = static_cast<double>(bits[i] >= keep_from) * scale;
      convert(dst, out.dtype, 1, values, DType::kFloat64, 1, m);
    }
  });
}

void normal(const TBlob& out, double loc, double scale, uint64_t seed) {
  if (out.device.is_gpu()) return gpu::normal(out, loc, scale, seed);
  const DType t = chunk_type(out.dtype);
  fill_chunks(out, seed, t == DType::kFloat64 ? tables().normal_f64 : tables().normal_f32, t, loc,
              scale);
}

void uniform(const TBlob& out, double low, double high, uint64_t seed) {
  if (out.device.is_gpu()) return gpu::uniform(out, low, high, seed);
  const DType t = chunk_type(out.dtype);
  fill_chunks(out, seed, t == DType::kFloat64 ? tables().uniform_f64 : tables().uniform_f32, t, low,
              high);
}

}  // namespace ndx::kernel
#endif  // HWY_ONCE
