#include "ndx/storage.h"

#include <sys/mman.h>
#include <sys/sysinfo.h>

#include <cstdlib>
#include <limits>
#include <mutex>
#include <new>
#include <unordered_map>
#include <vector>

#include "gpu/runtime.h"
#include "ndx/error.h"

namespace ndx {

namespace {

// Size classes: multiples of 64 bytes up to 4 KiB, then powers of two. A freed block waits in
// its class's free list for the next allocation of that class; the cache is capped so a burst
// of large temporaries does not pin memory forever.
// Blocks above this never come from the pool (nor can a size class be rounded up to them).
constexpr std::size_t kMaxPooledBytes = std::size_t{1} << 40;

std::size_t size_class(std::size_t bytes) {
  if (bytes <= 4096) return (bytes + kAlignment - 1) / kAlignment * kAlignment;
  if (bytes > kMaxPooledBytes) return (bytes + kAlignment - 1) / kAlignment * kAlignment;
  std::size_t c = 8192;
  while (c < bytes) c <<= 1;
  return c;
}

// Blocks of at least this size start on a 2 MiB boundary and ask the kernel for transparent
// huge pages (as NumPy does for its large arrays): with 4 KiB pages, streaming a few MiB
// through the TLB costs a page walk every 4 KiB, which made np.add of 4M float32 about 0.75x
// NumPy's speed on an AVX2 host where THP is in `madvise` mode.
constexpr std::size_t kHugePage = std::size_t{2} << 20;
constexpr std::size_t kHugePageFrom = std::size_t{4} << 20;

void* allocate_block(std::size_t capacity) {
  if (capacity < kHugePageFrom)
    return std::aligned_alloc(kAlignment, capacity == 0 ? kAlignment : capacity);
  const std::size_t rounded = (capacity + kHugePage - 1) / kHugePage * kHugePage;
  void* p = std::aligned_alloc(kHugePage, rounded);
#ifdef MADV_HUGEPAGE
  if (p) madvise(p, rounded, MADV_HUGEPAGE);  // advice only: failure leaves ordinary pages
#endif
  return p;
}

// Physical memory plus swap: an upper bound on what one allocation can ever get.
std::size_t machine_bytes() {
  static const std::size_t bytes = [] {
    struct sysinfo info {};
    if (sysinfo(&info) != 0) return std::numeric_limits<std::size_t>::max();
    const auto unit = static_cast<std::size_t>(info.mem_unit ? info.mem_unit : 1);
    return (static_cast<std::size_t>(info.totalram) + info.totalswap) * unit;
  }();
  return bytes;
}

class CpuPool {
 public:
  static CpuPool& get() {
    static CpuPool* pool = new CpuPool();  // never destroyed: arrays may outlive static dtors
    return *pool;
  }
  void* allocate(std::size_t capacity) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      auto it = free_.find(capacity);
      if (it != free_.end() && !it->second.empty()) {
        void* p = it->second.back();
        it->second.pop_back();
        cached_ -= capacity;
        in_use_ += capacity;
        return p;
      }
      in_use_ += capacity;
    }
    // Beyond the machine's memory no allocation can be served; refusing it up front matters
    // where the kernel overcommits (vm.overcommit_memory=1): there the allocation "succeeds"
    // and the first fill gets the process killed.
    void* p = capacity > (std::size_t{1} << 62) || capacity > machine_bytes()
                  ? nullptr
                  : allocate_block(capacity);
    if (!p) {
      std::lock_guard<std::mutex> lock(mutex_);
      in_use_ -= capacity;
      memory_error("[allocate] unable to allocate ", capacity, " bytes");
    }
    return p;
  }
  void release(void* p, std::size_t capacity) {
    std::lock_guard<std::mutex> lock(mutex_);
    in_use_ -= capacity;
    if (cached_ + capacity > kMaxCached) {
      std::free(p);
      return;
    }
    free_[capacity].push_back(p);
    cached_ += capacity;
  }
  PoolStats stats() {
    std::lock_guard<std::mutex> lock(mutex_);
    return {in_use_, cached_};
  }
  void release_cached() {
    std::lock_guard<std::mutex> lock(mutex_);
    for (auto& [cap, list] : free_)
      for (void* p : list) std::free(p);
    free_.clear();
    cached_ = 0;
  }

 private:
  static constexpr std::size_t kMaxCached = std::size_t(1) << 30;
  std::mutex mutex_;
  std::unordered_map<std::size_t, std::vector<void*>> free_;
  std::size_t in_use_ = 0, cached_ = 0;
};

// Every array made or dropped allocates or frees one block: a Storage with its shared_ptr
// control block (make_shared's single allocation). A small per-thread cache of these
// blocks (one size: the allocator below has one instantiation) keeps malloc and free, about
// 130 instructions a pair, off that path. A block freed on another thread joins that
// thread's cache; a thread's cache is freed when the thread ends.
// The cache is trivially destructible so that each access is one TLS lookup (a thread_local
// with a destructor goes through an init wrapper, and a second flag took a third lookup);
// the blocks are freed at thread exit by a Reaper, armed on the thread's first cached block.
struct BlockCache {
  static constexpr int kMax = 64;
  void* blocks[kMax];
  int count;
  bool armed;        // the Reaper below is registered for this thread
  bool gone;         // the thread is exiting: cache nothing more
  std::size_t size;  // the one block size, learnt from the first request
};
constinit thread_local BlockCache t_blocks{};

struct Reaper {
  ~Reaper() {
    BlockCache& c = t_blocks;
    for (int i = 0; i < c.count; ++i) ::operator delete(c.blocks[i]);
    c.count = 0;
    c.gone = true;
  }
};

[[gnu::noinline]] void arm_reaper(BlockCache& c) {
  static thread_local Reaper reaper;
  (void)&reaper;  // odr-use: constructs it and registers its destructor for this thread
  c.armed = true;
}

void* take_block(std::size_t bytes) {
  BlockCache& c = t_blocks;
  if (c.count > 0 && c.size == bytes) return c.blocks[--c.count];
  if (c.size == 0) c.size = bytes;
  return ::operator new(bytes);
}

void give_block(void* p, std::size_t bytes) {
  BlockCache& c = t_blocks;
  if (c.size == bytes && c.count < BlockCache::kMax && !c.gone) {
    if (!c.armed) arm_reaper(c);
    c.blocks[c.count++] = p;
    return;
  }
  ::operator delete(p);
}

template <class T>
struct CachedBlocks {
  using value_type = T;
  CachedBlocks() = default;
  template <class U>
  CachedBlocks(const CachedBlocks<U>&) {}  // NOLINT: allocators rebind implicitly
  T* allocate(std::size_t n) { return static_cast<T*>(take_block(n * sizeof(T))); }
  void deallocate(T* p, std::size_t n) { give_block(p, n * sizeof(T)); }
  template <class U>
  bool operator==(const CachedBlocks<U>&) const {
    return true;
  }
};

}  // namespace

std::shared_ptr<Storage> Storage::allocate(std::size_t bytes, Device device) {
  if (device.is_gpu()) {
    std::size_t capacity = 0;
    void* p = cuda::allocate(bytes, device.id, &capacity);
    return std::allocate_shared<Storage>(CachedBlocks<Storage>{}, Key{}, p, bytes, capacity,
                                         device);
  }
  std::size_t capacity = size_class(bytes);
  void* p = CpuPool::get().allocate(capacity);
  return std::allocate_shared<Storage>(CachedBlocks<Storage>{}, Key{}, p, bytes, capacity, device);
}

std::shared_ptr<Storage> Storage::wrap(void* data, std::size_t bytes, Device device,
                                       std::function<void()> release) {
  auto s = std::allocate_shared<Storage>(CachedBlocks<Storage>{}, Key{}, data, bytes, 0,
                                         device);  // one allocation
  s->release_ = release ? std::move(release) : [] {};
  return s;
}

std::shared_ptr<Storage> Storage::wrap(void* data, std::size_t bytes, Device device,
                                       void (*release)(void*), void* context) {
  auto s = std::allocate_shared<Storage>(CachedBlocks<Storage>{}, Key{}, data, bytes, 0, device);
  s->release_fn_ = release;
  s->release_context_ = context;
  return s;
}

Storage::~Storage() {
  if (release_fn_) {
    release_fn_(release_context_);
  } else if (release_) {
    release_();
  } else if (device_.is_gpu()) {
    if (capacity_ != 0) cuda::release(data_, capacity_, device_.id);
  } else if (capacity_ != 0 || data_) {
    CpuPool::get().release(data_, capacity_);
  }
}

PoolStats cpu_pool_stats() { return CpuPool::get().stats(); }
void cpu_pool_release_cached() { CpuPool::get().release_cached(); }

}  // namespace ndx
