// The CUDA runtime side of the GPU backend: device discovery, the caching allocator, streams
// and copies. Compiled by the host compiler against CUDA's runtime API (cudart is linked
// statically and loads the driver lazily, so libndx loads on machines without one).
#include "gpu/runtime.h"

#include <cuda_runtime_api.h>

#include <atomic>
#include <cstdlib>
#include <map>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "ndx/error.h"

namespace ndx::cuda {

namespace {

[[noreturn]] void cuda_failure(cudaError_t e, const char* where) {
  cudaGetLastError();  // clear a sticky-free error so the next call starts clean
  if (e == cudaErrorMemoryAllocation)
    memory_error("[", where, "] out of GPU memory: ", cudaGetErrorString(e));
  raise(ErrorKind::kRuntimeError, "[", where, "] CUDA error: ", cudaGetErrorString(e));
}
void check(cudaError_t e, const char* where) {
  if (e != cudaSuccess) cuda_failure(e, where);
}

struct Discovery {
  int count = 0;
  std::string reason;
};
const Discovery& discovery() {
  static const Discovery d = [] {
    Discovery r;
    int n = 0;
    cudaError_t e = cudaGetDeviceCount(&n);
    if (e != cudaSuccess) {
      r.reason = std::string("no usable CUDA device: ") + cudaGetErrorString(e);
      cudaGetLastError();
      return r;
    }
    r.count = n;
    if (n == 0) r.reason = "no CUDA device found";
    return r;
  }();
  return d;
}

// Order between threads' streams. Each device block remembers the stream that used it last;
// when another stream uses it, that stream first waits (on the device, through an event) for
// the work the last one has queued so far, and takes the block over. A freed block joins the
// pool of its last stream. While a device has had one stream only, nothing is looked up: a
// block that was never taken over belongs to its device's first stream.
class StreamOrder {
 public:
  static StreamOrder& get() {
    static auto* order = new StreamOrder();  // never destroyed, like the pools
    return *order;
  }
  void stream_made(int device, cudaStream_t s) {
    std::lock_guard<std::mutex> lock(mutex_);
    cudaStream_t& first = first_[device];
    if (!first)
      first = s;
    else
      active_.store(true, std::memory_order_release);
  }
  bool active() const { return active_.load(std::memory_order_acquire); }
  void use(const void* base, int device, cudaStream_t stream) {
    DeviceGuard guard(device);  // the event is made on the streams' device
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = owners_.try_emplace(base, first_[device]).first;
    if (it->second == stream) return;
    cudaEvent_t& ev = events_[it->second];
    if (!ev) check(cudaEventCreateWithFlags(&ev, cudaEventDisableTiming), "stream order");
    check(cudaEventRecord(ev, it->second), "stream order");
    check(cudaStreamWaitEvent(stream, ev, 0), "stream order");
    it->second = stream;
  }
  void allocated(const void* base, cudaStream_t stream) {
    if (!active()) return;
    std::lock_guard<std::mutex> lock(mutex_);
    owners_[base] = stream;
  }
  // The stream whose pool a freed block joins; `mine` is the freeing thread's.
  cudaStream_t released(const void* base, int device, cudaStream_t mine) {
    if (!active()) return mine;
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = owners_.find(base);
    if (it == owners_.end()) return first_[device] ? first_[device] : mine;
    const cudaStream_t s = it->second;
    owners_.erase(it);
    return s;
  }

 private:
  std::mutex mutex_;
  std::atomic<bool> active_{false};
  std::unordered_map<int, cudaStream_t> first_;
  std::unordered_map<const void*, cudaStream_t> owners_;
  std::unordered_map<cudaStream_t, cudaEvent_t> events_;
};

// One stream per device per thread, created on first use (non-blocking: it never waits for
// the legacy default stream, which ndx does not use).
cudaStream_t thread_stream(int device) {
  thread_local std::vector<cudaStream_t> streams;
  if (streams.empty()) streams.resize(std::max(discovery().count, 1), nullptr);
  if (!streams[device]) {
    DeviceGuard guard(device);
    check(cudaStreamCreateWithFlags(&streams[device], cudaStreamNonBlocking), "stream");
    StreamOrder::get().stream_made(device, streams[device]);
  }
  return streams[device];
}

int current_device() {
  int d = 0;
  check(cudaGetDevice(&d), "device");
  return d;
}

// Size classes: multiples of 512 bytes up to 1 MiB, then multiples of 2 MiB.
std::size_t size_class(std::size_t bytes) {
  constexpr std::size_t kSmall = 512, kLarge = std::size_t{2} << 20;
  if (bytes <= (std::size_t{1} << 20))
    return (std::max<std::size_t>(bytes, 1) + kSmall - 1) / kSmall * kSmall;
  if (bytes > (std::size_t{1} << 50)) return bytes;  // never pooled, and no rounding overflow
  return (bytes + kLarge - 1) / kLarge * kLarge;
}

bool caching_enabled() {
  static const bool on = [] {
    const char* v = std::getenv("NDX_CUDA_CACHING");
    return !(v && std::string(v) == "0");
  }();
  return on;
}

// Freed blocks wait, per (device, stream, size class), for the next allocation of their class
// on the same stream: stream order makes the reuse safe without events.
class Pool {
 public:
  static Pool& get() {
    static Pool* pool = new Pool();  // never destroyed: arrays may outlive static destructors
    return *pool;
  }
  void* allocate(std::size_t bytes, int device, std::size_t* capacity) {
    const std::size_t cap = size_class(bytes);
    cudaStream_t stream = thread_stream(device);
    {
      std::lock_guard<std::mutex> lock(mutex_);
      auto& list = free_[Key{device, stream, cap}];
      if (!list.empty()) {
        void* p = list.back();
        list.pop_back();
        stats_[device].cached -= cap;
        stats_[device].in_use += cap;
        *capacity = cap;
        StreamOrder::get().allocated(p, stream);
        return p;
      }
    }
    void* p = nullptr;
    DeviceGuard guard(device);
    cudaError_t e = cudaMalloc(&p, cap);
    if (e == cudaErrorMemoryAllocation) {  // give the cache back and try once more
      cudaGetLastError();
      release_cached(device);
      e = cudaMalloc(&p, cap);
    }
    if (e != cudaSuccess) {
      cudaGetLastError();
      memory_error("[allocate] unable to allocate ", bytes, " bytes on gpu(", device,
                   "): ", cudaGetErrorString(e));
    }
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stats_[device].in_use += cap;
    }
    *capacity = cap;
    StreamOrder::get().allocated(p, stream);
    return p;
  }
  void release(void* p, std::size_t cap, int device) {
    cudaStream_t stream = StreamOrder::get().released(p, device, thread_stream(device));
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stats_[device].in_use -= cap;
      if (caching_enabled()) {
        free_[Key{device, stream, cap}].push_back(p);
        stats_[device].cached += cap;
        return;
      }
    }
    DeviceGuard guard(device);
    cudaFree(p);  // synchronizes the device: no kernel still uses the block
  }
  void release_cached(int device) {
    std::vector<void*> blocks;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      for (auto it = free_.begin(); it != free_.end();) {
        if (it->first.device != device) {
          ++it;
          continue;
        }
        blocks.insert(blocks.end(), it->second.begin(), it->second.end());
        it = free_.erase(it);
      }
      stats_[device].cached = 0;
    }
    DeviceGuard guard(device);
    for (void* p : blocks) cudaFree(p);
  }
  MemoryInfo info(int device) {
    MemoryInfo m;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      m.in_use = stats_[device].in_use;
      m.cached = stats_[device].cached;
    }
    DeviceGuard guard(device);
    check(cudaMemGetInfo(&m.free, &m.total), "gpu_memory_info");
    return m;
  }

 private:
  struct Key {
    int device;
    cudaStream_t stream;
    std::size_t cap;
    bool operator==(const Key&) const = default;
  };
  struct KeyHash {
    std::size_t operator()(const Key& k) const {
      return std::hash<std::size_t>()(k.cap) ^ (std::hash<void*>()(k.stream) << 1) ^
             static_cast<std::size_t>(k.device);
    }
  };
  struct Stats {
    std::size_t in_use = 0, cached = 0;
  };
  std::mutex mutex_;
  std::unordered_map<Key, std::vector<void*>, KeyHash> free_;
  std::unordered_map<int, Stats> stats_;
};

// Page-locked host blocks (cudaHostAlloc), cached by power-of-two size class. Copies from
// them to a device run asynchronously; each such copy records an event, and a block is
// written by the host (wait) or handed out again (reuse) only after its events are done.
class PinnedPool {
 public:
  static PinnedPool& get() {
    static auto* pool = new PinnedPool();  // never destroyed: blocks may be freed at exit
    return *pool;
  }
  void* allocate(std::size_t bytes) {
    const std::size_t cap = size_class(bytes);
    {
      std::lock_guard<std::mutex> lock(mutex_);
      auto& list = free_[cap];
      for (auto it = list.begin(); it != list.end(); ++it) {
        Block& b = blocks_.at(*it);
        if (!events_done(b)) continue;
        void* p = *it;
        list.erase(it);
        b.live = true;
        return p;
      }
    }
    void* p = nullptr;
    const cudaError_t e = cudaHostAlloc(&p, cap, cudaHostAllocPortable);
    if (e != cudaSuccess) {
      cudaGetLastError();
      memory_error("[pin_memory] cannot page-lock ", bytes,
                   " bytes of host memory: ", cudaGetErrorString(e));
    }
    std::lock_guard<std::mutex> lock(mutex_);
    blocks_.emplace(p, Block{cap, true, {}});
    any_.store(true, std::memory_order_relaxed);
    return p;
  }
  void release(void* p) {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = blocks_.find(p);
    if (it == blocks_.end()) return;
    it->second.live = false;
    free_[it->second.cap].push_back(p);
  }
  // The live block holding p, or null.
  void* block_of(const void* p) {
    if (!any_.load(std::memory_order_relaxed)) return nullptr;  // the common case: no pinning
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = blocks_.upper_bound(const_cast<void*>(p));
    if (it == blocks_.begin()) return nullptr;
    --it;
    const auto* base = static_cast<const char*>(it->first);
    const auto* q = static_cast<const char*>(p);
    return q < base + it->second.cap && it->second.live ? it->first : nullptr;
  }
  // After an asynchronous copy out of `block` on `stream`.
  void record_use(void* block, cudaStream_t stream) {
    cudaEvent_t ev = nullptr;
    check(cudaEventCreateWithFlags(&ev, cudaEventDisableTiming), "pinned copy");
    check(cudaEventRecord(ev, stream), "pinned copy");
    std::lock_guard<std::mutex> lock(mutex_);
    blocks_.at(block).events.push_back(ev);
  }
  // Before the host writes into `block`: waits for the copies out of it.
  void wait(void* block) {
    std::vector<cudaEvent_t> events;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      events.swap(blocks_.at(block).events);
    }
    for (cudaEvent_t ev : events) {
      cudaEventSynchronize(ev);
      cudaEventDestroy(ev);
    }
  }

 private:
  struct Block {
    std::size_t cap;
    bool live;
    std::vector<cudaEvent_t> events;  // copies out of the block not yet known to be done
  };
  PinnedPool() = default;
  static std::size_t size_class(std::size_t bytes) {
    std::size_t cap = 4096;
    while (cap < bytes) cap <<= 1;
    return cap;
  }
  // Under mutex_: drops finished events; whether none is left.
  static bool events_done(Block& b) {
    while (!b.events.empty()) {
      const cudaError_t e = cudaEventQuery(b.events.back());
      if (e == cudaErrorNotReady) return false;
      cudaGetLastError();
      cudaEventDestroy(b.events.back());
      b.events.pop_back();
    }
    return true;
  }
  std::mutex mutex_;
  std::map<void*, Block> blocks_;  // every block, by address (for block_of)
  std::unordered_map<std::size_t, std::vector<void*>> free_;
  std::atomic<bool> any_{false};
};

}  // namespace

int device_count() { return discovery().count; }
std::string unavailable_reason() { return discovery().reason; }

void check_device(Device d, const char* where) {
  if (!d.is_gpu()) return;
  const int n = device_count();
  if (n == 0) value_error("[", where, "] ", d.str(), " is not available: ", unavailable_reason());
  if (d.id < 0 || d.id >= n)
    value_error("[", where, "] ", d.str(), " does not exist: this machine has ", n, " GPU",
                n == 1 ? "" : "s");
}

DeviceGuard::DeviceGuard(int device) {
  check(cudaGetDevice(&previous_), "device");
  if (previous_ != device) check(cudaSetDevice(device), "device");
}
DeviceGuard::~DeviceGuard() {
  int now = previous_;
  cudaGetDevice(&now);
  if (now != previous_) cudaSetDevice(previous_);
}

void* allocate(std::size_t bytes, int device, std::size_t* capacity) {
  check_device(gpu(device), "allocate");
  return Pool::get().allocate(bytes, device, capacity);
}
void release(void* p, std::size_t capacity, int device) {
  Pool::get().release(p, capacity, device);
}
MemoryInfo memory_info(int device) {
  check_device(gpu(device), "gpu_memory_info");
  return Pool::get().info(device);
}
void release_cached(int device) {
  check_device(gpu(device), "release_cached");
  Pool::get().release_cached(device);
}

void use_on_this_stream(const void* base, int device) {
  StreamOrder& order = StreamOrder::get();
  if (order.active()) order.use(base, device, thread_stream(device));
}

void* current_stream() { return thread_stream(current_device()); }
void* stream_of(int device) {
  check_device(gpu(device), "stream");
  return thread_stream(device);
}

void* allocate_pinned(std::size_t bytes) {
  if (device_count() == 0)
    value_error("[pin_memory] page-locked memory needs a GPU: ", unavailable_reason());
  return PinnedPool::get().allocate(bytes);
}
void release_pinned(void* p) { PinnedPool::get().release(p); }
bool is_pinned(const void* p) { return PinnedPool::get().block_of(p) != nullptr; }
void wait_for_host_write(const void* p) {
  if (void* block = PinnedPool::get().block_of(p)) PinnedPool::get().wait(block);
}

bool is_device_memory(const void* p, int device) {
  cudaPointerAttributes a{};
  if (cudaPointerGetAttributes(&a, p) != cudaSuccess) {
    cudaGetLastError();
    return false;
  }
  return (a.type == cudaMemoryTypeDevice || a.type == cudaMemoryTypeManaged) && a.device == device;
}

void copy_to_device(void* dst, const void* src, std::size_t bytes, int device) {
  if (bytes == 0) return;
  DeviceGuard guard(device);
  cudaStream_t s = thread_stream(device);
  check(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyHostToDevice, s), "copy to gpu");
  if (void* block = PinnedPool::get().block_of(src)) {
    // Page-locked: the copy runs on with the stream; the block is not written or reused
    // before it is done (PinnedPool).
    PinnedPool::get().record_use(block, s);
    return;
  }
  // Pageable host memory may be reused by the caller at once: wait for the copy.
  check(cudaStreamSynchronize(s), "copy to gpu");
}
void copy_to_host(void* dst, const void* src, std::size_t bytes, int device) {
  if (bytes == 0) return;
  DeviceGuard guard(device);
  cudaStream_t s = thread_stream(device);
  check(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToHost, s), "copy to cpu");
  check(cudaStreamSynchronize(s), "copy to cpu");
}
void copy_on_device(void* dst, const void* src, std::size_t bytes, int device) {
  if (bytes == 0) return;
  DeviceGuard guard(device);
  check(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, thread_stream(device)),
        "copy on gpu");
}
void synchronize(int device) {
  check_device(gpu(device), "synchronize");
  DeviceGuard guard(device);
  check(cudaStreamSynchronize(thread_stream(device)), "synchronize");
}
bool stream_done(void* stream) {
  const cudaError_t e = cudaStreamQuery(static_cast<cudaStream_t>(stream));
  if (e == cudaErrorNotReady) return false;
  check(e, "stream");
  return true;
}
void check_launch(const char* where) {
  cudaError_t e = cudaGetLastError();
  if (e != cudaSuccess) cuda_failure(e, where);
}

}  // namespace ndx::cuda
