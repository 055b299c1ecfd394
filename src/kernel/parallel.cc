#include "kernel/parallel.h"

#include <pthread.h>
#include <sched.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdlib>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define NDX_CPU_RELAX() _mm_pause()
#else
#define NDX_CPU_RELAX() std::this_thread::yield()
#endif

extern "C" void openblas_set_num_threads(int);

namespace ndx::kernel {

namespace {

BlockingHooks g_hooks;

int cores_available() {
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof(set), &set) == 0) return std::max(1, CPU_COUNT(&set));
  return std::max(1u, std::thread::hardware_concurrency());
}

int env_threads() {
  const char* s = std::getenv("NDX_NUM_THREADS");
  if (!s || !*s) return 0;
  char* end = nullptr;
  long v = std::strtol(s, &end, 10);
  return (end && *end == 0 && v > 0 && v <= 1024) ? static_cast<int>(v) : 0;
}

// Workers spin this many relax cycles (tens of microseconds) after a job before sleeping, so
// the back-to-back ops of a training step find them awake.
constexpr int kSpinIters = 20000;
constexpr int kChunksPerThread = 4;

class Pool {
 public:
  static Pool& get() {
    static const bool registered = [] {
      // never destroyed: workers may outlive static destructors
      instance().store(new Pool(), std::memory_order_release);
      pthread_atfork(nullptr, nullptr, &Pool::start_afresh_in_child);
      return true;
    }();
    (void)registered;
    return *instance().load(std::memory_order_acquire);
  }

  int threads() const { return threads_.load(std::memory_order_relaxed); }

  // Workers beyond the count stay asleep, so switching counts costs nothing. OpenBLAS hears
  // of it at its next GEMM (sync_blas_threads): telling it at once would start its threads,
  // which spin for a while and slow everything else down.
  void set_threads(int n) {
    std::lock_guard<std::mutex> use(use_);  // not while a job runs
    threads_.store(n, std::memory_order_relaxed);
  }

  int64_t started() const { return started_.load(); }

  // Spinning workers go to sleep at once (another thread team, oneDNN's OpenMP one, is about
  // to take the cores).
  void park() { park_.fetch_add(1, std::memory_order_relaxed); }

  void run(int64_t n, int chunks, RangeFn fn) {
    std::unique_lock<std::mutex> use(use_, std::try_to_lock);
    if (!use.owns_lock()) {  // busy: another caller or a nested call
      fn(0, n);
      return;
    }
    ensure_workers(chunks - 1);
    {
      std::unique_lock<std::mutex> lk(m_);
      // No worker may still hold a copy of the previous job when its counters are reset.
      while (active_.load() != 0) {
        lk.unlock();
        NDX_CPU_RELAX();
        lk.lock();
      }
      job_ = Job{&fn, n, chunks};
      next_.store(0);
      done_.store(0);
      error_ = nullptr;
      gen_.store(gen_.load() + 1, std::memory_order_release);
    }
    cv_.notify_all();
    work(job_);
    for (int spins = 0; done_.load(std::memory_order_acquire) < chunks;) {
      if (++spins < kSpinIters) {
        NDX_CPU_RELAX();
      } else {
        int d = done_.load();
        if (d < chunks) done_.wait(d);
      }
    }
    if (error_) std::rethrow_exception(error_);
  }

 private:
  struct Job {
    const RangeFn* fn = nullptr;
    int64_t n = 0;
    int chunks = 0;
  };

  Pool() : threads_(env_threads() ? env_threads() : cores_available()) {}

  static std::atomic<Pool*>& instance() {
    static std::atomic<Pool*> pool{nullptr};
    return pool;
  }

  // A forked child (DataLoader's workers) has only the thread that forked: the parent's
  // workers do not exist there, and a lock or job count a busy parent thread held at the fork
  // stays held, so the old pool would hang the child's first kernel. The child gets a fresh
  // pool with the same thread count; the old one is leaked (destroying a held mutex is
  // undefined).
  static void start_afresh_in_child() {
    Pool* old = instance().load(std::memory_order_relaxed);
    Pool* fresh = new Pool();
    fresh->threads_.store(old->threads(), std::memory_order_relaxed);
    instance().store(fresh, std::memory_order_release);
  }

  void work(const Job& job) {
    for (int k; (k = next_.fetch_add(1)) < job.chunks;) {
      const int64_t b = job.n * k / job.chunks, e = job.n * (k + 1) / job.chunks;
      try {
        (*job.fn)(b, e);
      } catch (...) {
        std::lock_guard<std::mutex> lk(error_mu_);
        if (!error_) error_ = std::current_exception();
      }
      done_.fetch_add(1, std::memory_order_release);
      done_.notify_all();
    }
  }

  // `seen` is the generation before the job the worker is started for, so it takes part.
  void worker_loop(uint64_t seen) {
    while (true) {
      const uint64_t parked = park_.load(std::memory_order_relaxed);
      for (int spins = 0; gen_.load(std::memory_order_acquire) == seen && spins < kSpinIters &&
                          park_.load(std::memory_order_relaxed) == parked;
           ++spins)
        NDX_CPU_RELAX();
      Job job;
      {
        std::unique_lock<std::mutex> lk(m_);
        cv_.wait(lk, [&] { return gen_.load() != seen; });
        seen = gen_.load();
        job = job_;
        active_.fetch_add(1);
      }
      work(job);
      active_.fetch_sub(1);
    }
  }

  void ensure_workers(int wanted) {
    wanted = std::min(wanted, threads() - 1);
    while (static_cast<int>(workers_.size()) < wanted) {
      const uint64_t seen = gen_.load();
      workers_.emplace_back([this, seen] { worker_loop(seen); });
      workers_.back().detach();  // the pool lives as long as the process
      started_.fetch_add(1);
    }
  }

  std::atomic<int> threads_;
  std::atomic<int64_t> started_{0};
  std::mutex use_;  // one job at a time
  std::mutex m_;    // guards job_
  std::condition_variable cv_;
  std::atomic<uint64_t> gen_{0};
  std::atomic<uint64_t> park_{0};
  Job job_;
  std::atomic<int> next_{0}, done_{0}, active_{0};
  std::mutex error_mu_;
  std::exception_ptr error_;
  std::vector<std::thread> workers_;
};

}  // namespace

}  // namespace ndx::kernel

namespace ndx {
int num_threads() { return kernel::Pool::get().threads(); }
int default_num_threads() {
  return kernel::env_threads() ? kernel::env_threads() : kernel::cores_available();
}
void set_num_threads(int n) { kernel::Pool::get().set_threads(n > 0 ? n : default_num_threads()); }
int64_t threads_started() { return kernel::Pool::get().started(); }
void set_blocking_hooks(BlockingHooks hooks) { kernel::g_hooks = hooks; }
}  // namespace ndx

namespace ndx::kernel {
void set_blas_threads(int n) {
  static std::atomic<int> applied{0};
  if (applied.load(std::memory_order_relaxed) != n) {
    openblas_set_num_threads(n);
    applied.store(n, std::memory_order_relaxed);
  }
}
void sync_blas_threads() { set_blas_threads(num_threads()); }
void park_workers() { Pool::get().park(); }
}  // namespace ndx::kernel

namespace ndx::kernel {

AllowThreads::AllowThreads(bool enable) {
  if (enable && g_hooks.release) token_ = g_hooks.release();
}
AllowThreads::~AllowThreads() {
  if (token_) g_hooks.reacquire(token_);
}

void parallel_for(int64_t n, int64_t grain, RangeFn fn) {
  if (n <= 0) return;
  AllowThreads allow(n >= kReleaseGil);
  const int threads = num_threads();
  grain = std::max<int64_t>(grain, 1);
  if (threads <= 1 || n / grain <= 1) {
    fn(0, n);
    return;
  }
  // A few chunks per thread: a worker that wakes late (an idle vCPU can take tens of
  // microseconds) joins for what is left instead of making the caller wait for its share.
  const int64_t chunks = std::min<int64_t>(int64_t{threads} * kChunksPerThread, n / grain);
  Pool::get().run(n, static_cast<int>(chunks), fn);
}

}  // namespace ndx::kernel
