// Counter-based random numbers for kernels: Philox4x32-10 (Salmon et al., "Parallel random
// numbers: as easy as 1, 2, 3", SC 2011). Element i of a stream depends only on (seed, i), so
// threads fill any range in any order and the result never depends on the thread count.
#pragma once
#include <array>
#include <cmath>
#include <cstdint>

#include "kernel/config.h"
#include "ndx/op.h"

namespace ndx::kernel {

struct Philox4x32 {
  std::array<uint32_t, 2> key;

  explicit Philox4x32(uint64_t seed)
      : key{static_cast<uint32_t>(seed), static_cast<uint32_t>(seed >> 32)} {}

  // The four 32-bit words of counter block `ctr`.
  NDX_HD std::array<uint32_t, 4> operator()(std::array<uint32_t, 4> ctr) const {
    uint32_t k0 = key[0], k1 = key[1];
    for (int round = 0; round < 10; ++round) {
      if (round > 0) k0 += 0x9E3779B9u, k1 += 0xBB67AE85u;
      const uint64_t p0 = uint64_t{0xD2511F53u} * ctr[0];
      const uint64_t p1 = uint64_t{0xCD9E8D57u} * ctr[2];
      ctr = {static_cast<uint32_t>(p1 >> 32) ^ ctr[1] ^ k0, static_cast<uint32_t>(p1),
             static_cast<uint32_t>(p0 >> 32) ^ ctr[3] ^ k1, static_cast<uint32_t>(p0)};
    }
    return ctr;
  }
};

// The draws of element i of stream `seed`: counter blocks (i, k) for k = 0, 1, ..., so an
// element's values depend on (seed, i) alone, however many it needs (rejection samplers
// take as many as they like) and whichever thread asks.
class ElementDraws {
 public:
  NDX_HD ElementDraws(const Philox4x32& gen, uint64_t i)
      : gen_(&gen), lo_(static_cast<uint32_t>(i)), hi_(static_cast<uint32_t>(i >> 32)) {}

  // A double in [0, 1) with 53 random bits.
  NDX_HD double uniform() {
    if (next_ == 4) {
      words_ = (*gen_)({lo_, hi_, block_++, 0x6e6478u});
      next_ = 0;
    }
    const uint64_t hi = words_[next_] >> 5, lo = words_[next_ + 1] >> 6;  // 27 + 26 bits
    next_ += 2;
    return static_cast<double>((hi << 26) | lo) * 0x1.0p-53;
  }
  // A double in (0, 1): logarithms of it are finite.
  NDX_HD double open_uniform() {
    for (;;) {
      const double u = uniform();
      if (u > 0) return u;
    }
  }
  // A standard normal (Box-Muller; the second value of each pair is kept for the next call).
  NDX_HD double normal() {
    if (has_spare_) {
      has_spare_ = false;
      return spare_;
    }
    const double r = std::sqrt(-2 * std::log(open_uniform()));
    const double t = 6.283185307179586476925 * uniform();
    spare_ = r * std::sin(t);
    has_spare_ = true;
    return r * std::cos(t);
  }

 private:
  const Philox4x32* gen_;
  uint32_t lo_, hi_, block_ = 0;
  std::array<uint32_t, 4> words_{};
  int next_ = 4;
  bool has_spare_ = false;
  double spare_ = 0;
};

// out[i] = scale where the uniform u_i of element i of stream `seed` is >= p, else 0 (out is
// contiguous, of a float dtype): a dropout mask.
void bernoulli_scaled(const TBlob& out, double p, double scale, uint64_t seed);

// out[i] = loc + scale * z_i for standard normals z_i of stream `seed` (out contiguous, of a
// float dtype; float64 is computed in double, the others in float32).
void normal(const TBlob& out, double loc, double scale, uint64_t seed);

// out[i] = low + (high - low) * u_i for uniforms u_i in [0, 1) of stream `seed` (out
// contiguous, of a float dtype).
void uniform(const TBlob& out, double low, double high, uint64_t seed);

}  // namespace ndx::kernel
