// The kernel engine's run-time settings: how many threads kernels use, which SIMD target runs,
// and the hooks through which long kernels release a host interpreter's lock.
#pragma once
#include <cstdint>

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

// Hooks around blocking work: release() returns a token for reacquire(), or null when the
// calling thread held nothing to release. The Python module installs hooks that release the
// GIL, so two Python threads running large ops run them at the same time.
struct BlockingHooks {
  void* (*release)() = nullptr;
  void (*reacquire)(void*) = nullptr;
};
void set_blocking_hooks(BlockingHooks hooks);

}  // namespace ndx
