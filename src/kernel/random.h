// Counter-based random numbers for kernels: Philox4x32-10 (Salmon et al., "Parallel random
// numbers: as easy as 1, 2, 3", SC 2011). Element i of a stream depends only on (seed, i), so
// threads fill any range in any order and the result never depends on the thread count.
#pragma once
#include <array>
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

// out[i] = scale where the uniform u_i of element i of stream `seed` is >= p, else 0 (out is
// contiguous, of a float dtype): a dropout mask.
void bernoulli_scaled(const TBlob& out, double p, double scale, uint64_t seed);

// out[i] = a uniform double in [0, 1) from element i of stream `seed`, cast to out's dtype.
void uniform(const TBlob& out, uint64_t seed);

}  // namespace ndx::kernel
