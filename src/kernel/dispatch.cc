#include "kernel/dispatch.h"

#include <cstdlib>
#include <cstring>

#include <hwy/targets.h>

namespace ndx::kernel {

// NDX_SIMD=baseline runs every kernel's static (baseline) instance, as on a CPU without AVX2,
// and NDX_SIMD=avx2 the AVX2 ones on an AVX-512 CPU: for tests of those paths and for telling
// a SIMD bug from another.
int64_t supported_targets() {
  static const int64_t targets = [] {
    const char* env = std::getenv("NDX_SIMD");
    if (env && std::strcmp(env, "baseline") == 0) return static_cast<int64_t>(HWY_STATIC_TARGET);
    if (env && std::strcmp(env, "avx2") == 0)
      return static_cast<int64_t>(hwy::SupportedTargets() & ~(HWY_AVX3 | HWY_AVX3_DL));
    return static_cast<int64_t>(hwy::SupportedTargets());
  }();
  return targets;
}

const char* best_target_name() {
  const int64_t compiled = HWY_TARGETS | HWY_STATIC_TARGET;
  const int64_t usable = compiled & supported_targets();
  return hwy::TargetName(usable & -usable);  // the lowest bit is the best target
}

}  // namespace ndx::kernel

namespace ndx {
const char* simd_target() { return kernel::best_target_name(); }
}  // namespace ndx
