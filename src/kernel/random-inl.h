// The sampling loop of the random ops: out[i] = dist(draws of element i, a[i], b[i]) in
// blocks of doubles cast to out's dtype, threaded; element i's value depends on (seed, i)
// only. Included by operator/random.cc, which instantiates it once per distribution.
#pragma once
#include <algorithm>
#include <type_traits>

#include "kernel/cast.h"
#include "kernel/parallel.h"
#include "kernel/random.h"

namespace ndx::kernel {

// A distribution parameter: one value, or one per output element (contiguous doubles).
struct ParamArg {
  const double* values = nullptr;
  double scalar = 0;
  double at(int64_t i) const { return values ? values[i] : scalar; }
};

// out[i] = dist(draws of element i, a_i, b_i) (and c_i for three-parameter distributions).
template <class Dist>
void sample(const TBlob& out, uint64_t seed, const Dist& dist, ParamArg a, ParamArg b,
            ParamArg c = {}) {
  if (out.size() == 0) return;
  if (!out.is_contiguous())
    raise(ErrorKind::kRuntimeError, "[random] the output must be contiguous");
  const Philox4x32 gen(seed);
  const int64_t itemsize = dtype_size(out.dtype);
  parallel_for(out.size(), 4096, [&](int64_t begin, int64_t end) {
    double buf[512];
    for (int64_t j = begin; j < end; j += 512) {
      const int64_t n = std::min<int64_t>(512, end - j);
      for (int64_t k = 0; k < n; ++k) {
        ElementDraws draws(gen, static_cast<uint64_t>(j + k));
        if constexpr (std::is_invocable_v<const Dist&, ElementDraws&, double, double, double>)
          buf[k] = dist(draws, a.at(j + k), b.at(j + k), c.at(j + k));
        else
          buf[k] = dist(draws, a.at(j + k), b.at(j + k));
      }
      convert(static_cast<char*>(out.dptr) + j * itemsize, out.dtype, 1, buf, DType::kFloat64, 1,
              n);
    }
  });
}

}  // namespace ndx::kernel
