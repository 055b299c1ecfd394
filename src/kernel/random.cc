#include "kernel/random.h"

#include <algorithm>

#include "kernel/cast.h"
#include "kernel/parallel.h"

namespace ndx::kernel {

namespace {

// Two words per element: element i reads words 2 (i % 2) and 2 (i % 2) + 1 of block i / 2.
inline double uniform_of(const std::array<uint32_t, 4>& w, int half) {
  const uint64_t hi = w[2 * half] >> 5, lo = w[2 * half + 1] >> 6;  // 27 + 26 bits
  return static_cast<double>((hi << 26) | lo) * 0x1.0p-53;
}

// fn(i, u_i) for i in [begin, end) of the stream.
template <class Fn>
void for_each_uniform(uint64_t seed, int64_t begin, int64_t end, Fn fn) {
  const Philox4x32 gen(seed);
  for (int64_t i = begin; i < end;) {
    const uint64_t block = static_cast<uint64_t>(i) / 2;
    const auto w = gen({static_cast<uint32_t>(block), static_cast<uint32_t>(block >> 32), 0, 0});
    for (int half = static_cast<int>(i % 2); half < 2 && i < end; ++half, ++i)
      fn(i, uniform_of(w, half));
  }
}

template <class Fn>
void fill_doubles(const TBlob& out, uint64_t seed, Fn value) {
  if (out.size() == 0) return;
  if (!out.is_contiguous())
    raise(ErrorKind::kRuntimeError, "[random] the output must be contiguous");
  const int64_t size = dtype_size(out.dtype);
  parallel_for(out.size(), kGrain, [&](int64_t b, int64_t e) {
    double buf[1024];
    for (int64_t j = b; j < e; j += 1024) {
      const int64_t n = std::min<int64_t>(1024, e - j);
      for_each_uniform(seed, j, j + n, [&](int64_t i, double u) { buf[i - j] = value(u); });
      convert(static_cast<char*>(out.dptr) + j * size, out.dtype, 1, buf, DType::kFloat64, 1, n);
    }
  });
}

}  // namespace

void bernoulli_scaled(const TBlob& out, double p, double scale, uint64_t seed) {
  fill_doubles(out, seed, [p, scale](double u) { return u >= p ? scale : 0.0; });
}

void uniform(const TBlob& out, uint64_t seed) {
  fill_doubles(out, seed, [](double u) { return u; });
}

}  // namespace ndx::kernel
