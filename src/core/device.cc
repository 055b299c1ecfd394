// The public face of the GPU backend (ndx/runtime.h) over gpu/runtime.h, and the default
// device of creation calls (ndx/default_device.h).
#include <atomic>

#include "gpu/runtime.h"
#include "ndx/default_device.h"
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

namespace ndx {
namespace {
thread_local std::optional<Device> scope_device;
// Threads with a scope set: while none has, creation calls skip the thread-local lookup (a
// call through __tls_get_addr in a shared library), so the default costs one atomic load.
std::atomic<int> threads_with_scope{0};
// Written rarely (test setup), read on every creation call: an atomic pair of fields.
std::atomic<bool> process_default_set{false};
std::atomic<int64_t> process_default_packed{0};

Device process_default() {
  if (!process_default_set.load(std::memory_order_acquire)) return cpu();
  const int64_t packed = process_default_packed.load(std::memory_order_relaxed);
  return Device{static_cast<DeviceType>(packed >> 32), static_cast<int32_t>(packed)};
}
}  // namespace

Device default_device() {
  if (threads_with_scope.load(std::memory_order_relaxed) != 0 && scope_device) return *scope_device;
  return process_default();
}

bool default_device_is_cpu0() {
  if (threads_with_scope.load(std::memory_order_relaxed) == 0 &&
      !process_default_set.load(std::memory_order_relaxed))
    return true;
  return default_device() == cpu();
}

void set_scope_device(std::optional<Device> device) {
  if (device && !scope_device) threads_with_scope.fetch_add(1, std::memory_order_relaxed);
  if (!device && scope_device) threads_with_scope.fetch_sub(1, std::memory_order_relaxed);
  scope_device = device;
}

void set_process_default_device(std::optional<Device> device) {
  if (device) {
    const int64_t packed =
        (int64_t{static_cast<int8_t>(device->type)} << 32) | static_cast<uint32_t>(device->id);
    process_default_packed.store(packed, std::memory_order_relaxed);
  }
  process_default_set.store(device.has_value(), std::memory_order_release);
}

}  // namespace ndx
