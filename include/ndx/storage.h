// Storage: one block of device memory shared by NDArrays (views share it). CPU blocks come
// from a pooled, 64-byte-aligned allocator; freed blocks go back to the pool's size class.
#pragma once
#include <cstddef>
#include <functional>
#include <memory>

#include "ndx/device.h"

namespace ndx {

inline constexpr std::size_t kAlignment = 64;

class Storage {
 public:
  // Uninitialized memory of at least `bytes` on `device` (zero bytes is valid).
  static std::shared_ptr<Storage> allocate(std::size_t bytes, Device device);
  // Memory owned elsewhere; `release` runs when the last view goes away.
  static std::shared_ptr<Storage> wrap(void* data, std::size_t bytes, Device device,
                                       std::function<void()> release);
  // The same with a plain callback, release(context): no std::function on a hot path.
  static std::shared_ptr<Storage> wrap(void* data, std::size_t bytes, Device device,
                                       void (*release)(void*), void* context);
  ~Storage();
  struct Key {  // lets allocate() use make_shared while the constructor stays private in spirit
   private:
    Key() = default;
    friend class Storage;
  };
  Storage(Key, void* data, std::size_t size, std::size_t capacity, Device device)
      : Storage(data, size, capacity, device) {}
  Storage(const Storage&) = delete;
  Storage& operator=(const Storage&) = delete;

  void* data() const { return data_; }
  std::size_t size() const { return size_; }
  Device device() const { return device_; }

 private:
  Storage(void* data, std::size_t size, std::size_t capacity, Device device)
      : data_(data), size_(size), capacity_(capacity), device_(device) {}
  void* data_;
  std::size_t size_;
  std::size_t capacity_;  // the pool size class; 0 for wrapped memory
  Device device_;
  std::function<void()> release_;
  void (*release_fn_)(void*) = nullptr;
  void* release_context_ = nullptr;
};

// Pool statistics, for tests and the profiler.
struct PoolStats {
  std::size_t bytes_in_use = 0;
  std::size_t bytes_cached = 0;
};
PoolStats cpu_pool_stats();
void cpu_pool_release_cached();

}  // namespace ndx
