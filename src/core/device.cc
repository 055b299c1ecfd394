// The public face of the GPU backend (ndx/runtime.h) over gpu/runtime.h.
#include "gpu/runtime.h"
#include "ndx/pinned.h"
#include "ndx/runtime.h"
#include "ndx/storage.h"

namespace ndx {

int num_gpus() { return cuda::device_count(); }
std::string gpu_unavailable_reason() { return cuda::unavailable_reason(); }

GpuMemoryInfo gpu_memory_info(int device_id) {
  const cuda::MemoryInfo m = cuda::memory_info(device_id);
  return {m.free, m.total, m.in_use, m.cached};
}

void gpu_empty_cache(int device_id) { cuda::release_cached(device_id); }

NDArray pin_memory(const NDArray& a) {
  if (!a.defined()) value_error("[pin_memory] undefined array");
  if (!a.device().is_cpu())
    value_error("[pin_memory] only CPU arrays can be page-locked, got one on ", a.device().str());
  if (a.is_contiguous() && is_pinned(a)) return a;
  const auto bytes = static_cast<std::size_t>(a.nbytes());
  void* p = cuda::allocate_pinned(bytes);
  NDArray out(Storage::wrap(p, bytes, cpu(), cuda::release_pinned, p), 0, a.shape(),
              contiguous_strides(a.shape()), a.dtype());
  out.assign(a);
  return out;
}

bool is_pinned(const NDArray& a) {
  return a.defined() && a.device().is_cpu() && a.size() > 0 && cuda::is_pinned(a.raw_data());
}

void* cuda_stream(int device_id) { return cuda::stream_of(device_id); }
bool is_gpu_memory(const void* p, int device_id) { return cuda::is_device_memory(p, device_id); }

void synchronize(Device device) {
  if (device.is_gpu()) cuda::synchronize(device.id);
}

}  // namespace ndx
