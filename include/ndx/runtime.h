// The kernel engine's run-time settings: how many threads kernels use, which SIMD target runs,
// and the hooks through which long kernels release a host interpreter's lock.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>

#include "ndx/device.h"

namespace ndx {

// Threads kernels use (the caller counts as one): NDX_NUM_THREADS when set, else the cores
// this process may run on. set_num_threads(n <= 0) restores that default. OpenBLAS is given
// the same count, so a GEMM and an elementwise kernel never oversubscribe the cores.
int num_threads();
void set_num_threads(int n);
int default_num_threads();

// Worker threads the pool has started so far (small arrays start none).
int64_t threads_started();

// The SIMD instruction set the kernels run with on this CPU ("AVX3", "AVX2", "SCALAR", ...).
const char* simd_target();
// Whether convolution and pooling run on oneDNN on the CPU (built with libdnnl and not
// turned off by NDX_DNNL=0).
bool onednn_enabled();

// Hooks around blocking work: release() returns a token for reacquire(), or null when the
// calling thread held nothing to release. The Python module installs hooks that release the
// GIL, so two Python threads running large ops run them at the same time.
struct BlockingHooks {
  void* (*release)() = nullptr;
  void (*reacquire)(void*) = nullptr;
};
void set_blocking_hooks(BlockingHooks hooks);

// GPUs this process can use: 0 without a CUDA build, a driver or a device (never raises),
// and why (for messages and skipped tests).
int num_gpus();
std::string gpu_unavailable_reason();
// Free and total bytes of a GPU (the driver's view), and what ndx's allocator holds.
struct GpuMemoryInfo {
  std::size_t free = 0, total = 0, in_use = 0, cached = 0;
};
GpuMemoryInfo gpu_memory_info(int device_id);
// Frees the blocks the GPU allocator keeps for reuse.
void gpu_empty_cache(int device_id);
// Waits until the work this thread queued on `device` has finished (a no-op on the CPU).
void synchronize(Device device);

}  // namespace ndx
