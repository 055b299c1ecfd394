#include "kernel/dispatch.h"

#include <hwy/targets.h>

namespace ndx::kernel {

int64_t supported_targets() {
  static const int64_t targets = static_cast<int64_t>(hwy::SupportedTargets());
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
