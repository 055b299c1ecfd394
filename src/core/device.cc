// The public face of the GPU backend (ndx/runtime.h) over gpu/runtime.h.
#include "gpu/runtime.h"
#include "ndx/runtime.h"

namespace ndx {

int num_gpus() { return cuda::device_count(); }
std::string gpu_unavailable_reason() { return cuda::unavailable_reason(); }

GpuMemoryInfo gpu_memory_info(int device_id) {
  const cuda::MemoryInfo m = cuda::memory_info(device_id);
  return {m.free, m.total, m.in_use, m.cached};
}

void gpu_empty_cache(int device_id) { cuda::release_cached(device_id); }

void synchronize(Device device) {
  if (device.is_gpu()) cuda::synchronize(device.id);
}

}  // namespace ndx
