// Intra-op parallelism for the kernel engine: one small thread pool, a grain size so small
// arrays never start a thread, and the hooks through which long kernels release the caller's
// interpreter lock (the Python module installs them; libndx knows nothing of Python).
#pragma once
#include <cstdint>
#include <type_traits>
#include <utility>

#include "ndx/runtime.h"

namespace ndx::kernel {

// Elements below which an op runs on the calling thread alone (and keeps the GIL).
inline constexpr int64_t kGrain = 32768;

using ndx::BlockingHooks;
using ndx::default_num_threads;
using ndx::num_threads;
using ndx::set_num_threads;
using ndx::threads_started;

// A non-owning reference to a callable `void(int64_t begin, int64_t end)`.
class RangeFn {
 public:
  template <class F, class = std::enable_if_t<!std::is_same_v<std::decay_t<F>, RangeFn>>>
  RangeFn(F&& f)  // NOLINT: implicit, like std::function_ref
      : obj_(const_cast<void*>(static_cast<const void*>(&f))),
        call_([](void* o, int64_t b, int64_t e) { (*static_cast<std::decay_t<F>*>(o))(b, e); }) {}
  void operator()(int64_t b, int64_t e) const { call_(obj_, b, e); }

 private:
  void* obj_;
  void (*call_)(void*, int64_t, int64_t);
};

// Runs fn over [0, n) split into contiguous chunks of at least `grain` elements, on up to
// num_threads() threads (the caller is one of them), a few chunks per thread. Chunk bounds
// depend on n, grain and the thread count only, never on timing: chunk k covers
// [k * n / chunks, (k + 1) * n / chunks). When the pool is already busy (another
// caller, or a nested call) the work runs on the calling thread. The first exception thrown
// by fn is rethrown here after every chunk has finished. The GIL is released around the
// whole call when n >= kReleaseGil.
void parallel_for(int64_t n, int64_t grain, RangeFn fn);

// OpenBLAS's own thread count, set only when it changes. ndx splits GEMMs over its pool and
// calls OpenBLAS single-threaded inside (blas_single_thread, gemm.h): one team of threads for
// the engine, because OpenBLAS's workers spin after each call and, on a small machine, take
// the cores ndx's next kernel needs. LAPACK, which ndx does not split, runs with ndx's thread
// count (sync_blas_threads); call one of the two before every BLAS or LAPACK call.
void set_blas_threads(int n);
void sync_blas_threads();
inline void blas_single_thread() { set_blas_threads(1); }
// The pool's workers that still spin after their last job go to sleep now: called before
// another thread team (oneDNN's OpenMP one) starts, which they would slow down on a small
// machine (a reorder after a pooled kernel took 0.52 ms instead of 0.06 on 2 cores).
void park_workers();

// Work (elements) from which the caller's interpreter lock is released.
inline constexpr int64_t kReleaseGil = 32768;

// Releases the interpreter lock (if hooks are installed and the caller holds it) for its
// lifetime. Kernels running under it must not touch Python objects.
class AllowThreads {
 public:
  explicit AllowThreads(bool enable = true);
  ~AllowThreads();
  AllowThreads(const AllowThreads&) = delete;
  AllowThreads& operator=(const AllowThreads&) = delete;

 private:
  void* token_ = nullptr;
};

}  // namespace ndx::kernel
