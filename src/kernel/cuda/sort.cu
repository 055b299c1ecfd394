// Sorting lanes on the GPU with CUB's radix sorts (stable): each value becomes the unsigned
// key the CPU sort uses (operator/sort_keys.h), the keys are sorted with the lane positions
// as payload where the order is wanted, and values come back from the keys.
#include <cub/block/block_load.cuh>
#include <cub/block/block_radix_sort.cuh>
#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_segmented_radix_sort.cuh>

#include <limits>

#include "kernel/cuda/common.cuh"
#include "kernel/gpu_fused.h"
#include "kernel/host_fallback.h"
#include "operator/sort_keys.h"

namespace ndx::kernel::gpu {
namespace {

template <class T, bool kZerosEqual>
__global__ void keys_kernel(const T* x, sort_keys::KeyOf<T>* keys, int64_t* pos, int64_t n,
                            int64_t total) {
  const int64_t stride = int64_t{gridDim.x} * blockDim.x;
  for (int64_t i = int64_t{blockIdx.x} * blockDim.x + threadIdx.x; i < total; i += stride) {
    keys[i] = sort_keys::to_key<T, kZerosEqual>(x[i]);
    if (pos) pos[i] = i % n;
  }
}

template <class T>
__global__ void values_kernel(const sort_keys::KeyOf<T>* keys, T* y, int64_t total) {
  const int64_t stride = int64_t{gridDim.x} * blockDim.x;
  for (int64_t i = int64_t{blockIdx.x} * blockDim.x + threadIdx.x; i < total; i += stride)
    y[i] = sort_keys::from_key<T>(keys[i]);
}

__global__ void offsets_kernel(int* offsets, int64_t segments, int64_t n) {
  const int64_t stride = int64_t{gridDim.x} * blockDim.x;
  for (int64_t s = int64_t{blockIdx.x} * blockDim.x + threadIdx.x; s <= segments; s += stride)
    offsets[s] = static_cast<int>(s * n);
}

// Many short lanes (n <= kThreads * kItems): a block sorts a lane in shared memory with CUB's
// block radix sort, keys with their positions, and writes values and / or positions straight
// out; no scratch arrays, no segment offsets. The lane is loaded coalesced and transposed to
// the blocked order the sort ranks ties by, so equal keys keep their order (stable).
template <class T, int kThreads, int kItems>
__global__ void __launch_bounds__(kThreads)
    block_sort_kernel(const T* x, T* y, int64_t* idx, int64_t segments, int n, bool zeros_equal) {
  using K = sort_keys::KeyOf<T>;
  using Load = cub::BlockLoad<T, kThreads, kItems, cub::BLOCK_LOAD_TRANSPOSE>;
  using Sort = cub::BlockRadixSort<K, kThreads, kItems, int>;
  __shared__ union {
    typename Load::TempStorage load;
    typename Sort::TempStorage sort;
  } temp;
  for (int64_t s = blockIdx.x; s < segments; s += gridDim.x) {
    T v[kItems];
    Load(temp.load).Load(x + s * n, v, n, T{});
    K keys[kItems];
    int pos[kItems];
#pragma unroll
    for (int i = 0; i < kItems; ++i) {
      pos[i] = static_cast<int>(threadIdx.x) * kItems + i;  // blocked: thread-major
      keys[i] = pos[i] >= n   ? std::numeric_limits<K>::max()
                : zeros_equal ? sort_keys::to_key<T, true>(v[i])
                              : sort_keys::to_key<T, false>(v[i]);
    }
    __syncthreads();  // the load's storage is the sort's
    Sort(temp.sort).SortBlockedToStriped(keys, pos);
#pragma unroll
    for (int i = 0; i < kItems; ++i) {
      const int r = i * kThreads + static_cast<int>(threadIdx.x);  // striped: coalesced stores
      if (r >= n) continue;
      if (y) y[s * n + r] = sort_keys::from_key<T>(keys[i]);
      if (idx) idx[s * n + r] = pos[i];
    }
    __syncthreads();
  }
}

// Whether block_sort_kernel takes the lanes (launched if so).
template <class T>
bool block_sort(const TBlob& x, int64_t segments, int64_t n, T* y, int64_t* idx) {
  if (n > 4096 || segments < sm_count()) return false;  // long or few lanes: the device sorts
  const auto* xp = static_cast<const T*>(x.dptr);
  const int64_t grid = std::min<int64_t>(segments, int64_t{sm_count()} * 16);
  const bool zeros_equal = idx != nullptr;  // as keys_kernel: positions wanted, -0 == +0
  if (n <= 1024)
    block_sort_kernel<T, 128, 8>
        <<<grid, 128, 0, stream()>>>(xp, y, idx, segments, static_cast<int>(n), zeros_equal);
  else
    block_sort_kernel<T, 512, 8>
        <<<grid, 512, 0, stream()>>>(xp, y, idx, segments, static_cast<int>(n), zeros_equal);
  check_launch("sort");
  return true;
}

// Device memory for the sort's scratch arrays, given back (stream-ordered) when it goes.
class Scratch {
 public:
  explicit Scratch(int device) : device_(device) {}
  Scratch(const Scratch&) = delete;
  Scratch& operator=(const Scratch&) = delete;
  ~Scratch() {
    for (auto& [p, cap] : blocks_) ::ndx::cuda::release(p, cap, device_);
  }
  template <class T>
  T* take(std::size_t count) {
    std::size_t cap = 0;
    void* p = ::ndx::cuda::allocate(count * sizeof(T) + 1, device_, &cap);
    blocks_.push_back({p, cap});
    return static_cast<T*>(p);
  }

 private:
  int device_;
  std::vector<std::pair<void*, std::size_t>> blocks_;
};

template <class T>
void sort_typed(const TBlob& x, int64_t segments, int64_t n, T* y, int64_t* idx) {
  if (block_sort<T>(x, segments, n, y, idx)) return;
  using K = sort_keys::KeyOf<T>;
  const int64_t total = segments * n;
  const int items = static_cast<int>(total), segs = static_cast<int>(segments);
  Scratch scratch(x.device.id);
  K* keys_in = scratch.take<K>(total);
  K* keys_out = scratch.take<K>(total);
  int64_t* pos = idx ? scratch.take<int64_t>(total) : nullptr;
  const auto grid = grid_for(total, 256);
  // Positions wanted: -0 and +0 share a key so the order is stable; values alone keep -0
  // just before +0, as the CPU sort does.
  if (idx)
    keys_kernel<T, true>
        <<<grid, 256, 0, stream()>>>(static_cast<const T*>(x.dptr), keys_in, pos, n, total);
  else
    keys_kernel<T, false>
        <<<grid, 256, 0, stream()>>>(static_cast<const T*>(x.dptr), keys_in, nullptr, n, total);
  int* offsets = nullptr;
  if (segments > 1) {
    offsets = scratch.take<int>(static_cast<std::size_t>(segments + 1));
    offsets_kernel<<<grid_for(segments + 1, 256), 256, 0, stream()>>>(offsets, segments, n);
  }
  auto run = [&](void* temp, std::size_t& bytes) {
    if (segments == 1 && idx)
      return cub::DeviceRadixSort::SortPairs(temp, bytes, keys_in, keys_out, pos, idx, items, 0,
                                             int(sizeof(K) * 8), stream());
    if (segments == 1)
      return cub::DeviceRadixSort::SortKeys(temp, bytes, keys_in, keys_out, items, 0,
                                            int(sizeof(K) * 8), stream());
    if (idx)
      return cub::DeviceSegmentedRadixSort::SortPairs(temp, bytes, keys_in, keys_out, pos, idx,
                                                      items, segs, offsets, offsets + 1, 0,
                                                      int(sizeof(K) * 8), stream());
    return cub::DeviceSegmentedRadixSort::SortKeys(temp, bytes, keys_in, keys_out, items, segs,
                                                   offsets, offsets + 1, 0, int(sizeof(K) * 8),
                                                   stream());
  };
  std::size_t bytes = 0;
  if (run(nullptr, bytes) != cudaSuccess) raise(ErrorKind::kRuntimeError, "[sort] CUB sizing");
  void* temp = scratch.take<char>(bytes);
  if (run(temp, bytes) != cudaSuccess) raise(ErrorKind::kRuntimeError, "[sort] CUB sort failed");
  if (y) values_kernel<T><<<grid, 256, 0, stream()>>>(keys_out, y, total);
  check_launch("sort");
}

}  // namespace

void sort_segments(const TBlob& x, int64_t segments, int64_t n, void* y, int64_t* idx) {
  const int64_t total = segments * n;
  if (total == 0 || (!y && !idx)) return;
  if (total > std::numeric_limits<int>::max())
    fall_back_to_host("[sort] more than 2^31 - 1 elements on gpu");
  ::ndx::cuda::DeviceGuard guard(x.device.id);
  switch (x.dtype) {
#define NDX_SORT_CASE_(D, T) \
  case DType::D:             \
    return sort_typed<T>(x, segments, n, static_cast<T*>(y), idx);
    NDX_SORT_CASE_(kBool, bool)
    NDX_SORT_CASE_(kInt8, int8_t)
    NDX_SORT_CASE_(kInt16, int16_t)
    NDX_SORT_CASE_(kInt32, int32_t)
    NDX_SORT_CASE_(kInt64, int64_t)
    NDX_SORT_CASE_(kUInt8, uint8_t)
    NDX_SORT_CASE_(kUInt16, uint16_t)
    NDX_SORT_CASE_(kUInt32, uint32_t)
    NDX_SORT_CASE_(kUInt64, uint64_t)
    NDX_SORT_CASE_(kFloat32, float)
    NDX_SORT_CASE_(kFloat64, double)
#undef NDX_SORT_CASE_
    default:
      fall_back_to_host("[sort] ", x.dtype, " on gpu");
  }
}

}  // namespace ndx::kernel::gpu
