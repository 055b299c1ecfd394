// Launch geometry, and the copy / cast / fill kernels behind kernel::copy and kernel::fill on
// a GPU (every dtype to every dtype through the loads and stores of common.cuh).
#include "kernel/cuda/elementwise.cuh"
#include "kernel/gpu.h"

namespace ndx::kernel::gpu {

cudaStream_t stream() { return static_cast<cudaStream_t>(::ndx::cuda::current_stream()); }

int sm_count() {
  thread_local int device = -1, count = 0;
  int now = 0;
  cudaGetDevice(&now);
  if (now != device) {
    cudaDeviceGetAttribute(&count, cudaDevAttrMultiProcessorCount, now);
    device = now;
  }
  return count > 0 ? count : 1;
}

int64_t grid_for(int64_t n, int threads) {
  const int64_t blocks = (n + threads - 1) / threads;
  const int64_t cap = int64_t{sm_count()} * 32;  // grid-stride loops do the rest
  return blocks < 1 ? 1 : (blocks < cap ? blocks : cap);
}

// The functor of a copy: the engine's loads and stores do the casting.
struct Identity {
  template <class T>
  NDX_HD T operator()(T x) const {
    return x;
  }
};

template <int S>
struct Bytes {
  alignas(S) unsigned char b[S];
};

// Same-dtype strided copy: elements moved as S-byte words.
template <int S>
__global__ void move_kernel(char* dst, const char* src, Geometry<2> g, int64_t n) {
  const int64_t stride = int64_t{gridDim.x} * blockDim.x;
  for (int64_t i = int64_t{blockIdx.x} * blockDim.x + threadIdx.x; i < n; i += stride) {
    int64_t off[2];
    g.offsets(i, off);
    reinterpret_cast<Bytes<S>*>(dst)[off[0]] = reinterpret_cast<const Bytes<S>*>(src)[off[1]];
  }
}

void copy(const TBlob& src, const TBlob& dst, OpReqType req) {
  if (req == kNullOp || dst.size() == 0) return;
  ::ndx::cuda::DeviceGuard guard(dst.device.id);
  if (req != kAddTo && src.dtype == dst.dtype && src.shape == dst.shape && src.is_contiguous() &&
      dst.is_contiguous()) {
    ::ndx::cuda::copy_on_device(dst.dptr, src.dptr,
                                static_cast<std::size_t>(dst.size() * dtype_size(dst.dtype)),
                                dst.device.id);
    return;
  }
  if (req != kAddTo && src.dtype == dst.dtype) {
    int64_t bst[Shape::kMaxDims];
    broadcast_strides_into(src.shape, src.strides, dst.shape, bst);
    const NdIter<2> it(dst.shape, {dst.strides.data(), bst});
    if (it.ndim() <= kMaxDims) {
      Geometry<2> g;
      g.nd = it.ndim();
      for (int d = 0; d < g.nd; ++d) {
        g.dims[d] = it.dim(d);
        g.strides[0][d] = it.stride(0, d);
        g.strides[1][d] = it.stride(1, d);
      }
      const int64_t n = it.size();
      auto* d = static_cast<char*>(dst.dptr);
      const auto* s = static_cast<const char*>(src.dptr);
      const auto grid = grid_for(n, 256);
      switch (dtype_size(dst.dtype)) {
        case 1:
          move_kernel<1><<<grid, 256, 0, stream()>>>(d, s, g, n);
          break;
        case 2:
          move_kernel<2><<<grid, 256, 0, stream()>>>(d, s, g, n);
          break;
        case 4:
          move_kernel<4><<<grid, 256, 0, stream()>>>(d, s, g, n);
          break;
        default:
          move_kernel<8><<<grid, 256, 0, stream()>>>(d, s, g, n);
          break;
      }
      check_launch("copy");
      return;
    }
  }
  // Casts and add-to: the elementwise engine with the identity, computing in dst's dtype
  // (float16 / bfloat16 as float).
  ElementwiseArgs a;
  a.in = &src;
  a.nin = 1;
  a.out = &dst;
  a.req = req;
  a.compute = dst.dtype;
  elementwise<Identity>(a);
}

__global__ void fill_strided_kernel(char* dst, DType t, double v, Geometry<1> g, int64_t n) {
  const int64_t stride = int64_t{gridDim.x} * blockDim.x;
  const int64_t size = dtype_size_device(t);
  for (int64_t i = int64_t{blockIdx.x} * blockDim.x + threadIdx.x; i < n; i += stride) {
    int64_t off[1];
    g.offsets(i, off);
    store_as(dst + off[0] * size, t, v, false);
  }
}

Geometry<1> geometry_of(const Shape& shape, const Shape& strides, const char* what) {
  const NdIter<1> it(shape, {strides.data()});
  if (it.ndim() > kMaxDims)
    not_implemented(what, " with more than ", kMaxDims, " unmergeable dims on gpu");
  Geometry<1> g;
  g.nd = it.ndim();
  for (int d = 0; d < g.nd; ++d) {
    g.dims[d] = it.dim(d);
    g.strides[0][d] = it.stride(0, d);
  }
  return g;
}

void fill(const TBlob& dst, double value) {
  if (dst.size() == 0) return;
  ::ndx::cuda::DeviceGuard guard(dst.device.id);
  const Geometry<1> g = geometry_of(dst.shape, dst.strides, "[fill] arrays");
  const int64_t n = dst.size();
  fill_strided_kernel<<<grid_for(n, 256), 256, 0, stream()>>>(static_cast<char*>(dst.dptr),
                                                              dst.dtype, value, g, n);
  check_launch("fill");
}

}  // namespace ndx::kernel::gpu
