// What every CUDA kernel file shares: the functor vocabulary compiled for the device, loads
// and stores of any dtype, the launch geometry and the coalesced index arithmetic.
#pragma once
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "gpu/runtime.h"
#include "kernel/config.h"
#include "kernel/functor_args.h"
#include "kernel/math/wrap.h"
#include "ndx/dtype.h"
#include "ndx/error.h"
#include "ndx/op.h"

namespace ndx::kernel::gpu {

#include "kernel/math/scalar-inl.h"

// Conversions as the CPU engine does them (kernel/cast.h): float to integer saturates and
// maps NaN to 0, anything to bool is != 0.
template <class To, class From>
__host__ __device__ __forceinline__ To cast_to(From v) {
  if constexpr (std::is_same_v<To, From>) {
    return v;
  } else if constexpr (std::is_same_v<To, bool>) {
    return v != From(0);
  } else if constexpr (std::is_integral_v<To> && std::is_floating_point_v<From>) {
    if (v != v) return To(0);
    if (v <= From(std::numeric_limits<To>::lowest())) return std::numeric_limits<To>::lowest();
    if (v >= From(std::numeric_limits<To>::max())) return std::numeric_limits<To>::max();
    return static_cast<To>(v);
  } else {
    return static_cast<To>(v);
  }
}

// One element of dtype t at p, as C.
template <class C>
__device__ __forceinline__ C load_as(const char* p, DType t) {
  switch (t) {
    case DType::kBool:
      return cast_to<C>(*reinterpret_cast<const bool*>(p));
    case DType::kInt8:
      return cast_to<C>(*reinterpret_cast<const int8_t*>(p));
    case DType::kInt16:
      return cast_to<C>(*reinterpret_cast<const int16_t*>(p));
    case DType::kInt32:
      return cast_to<C>(*reinterpret_cast<const int32_t*>(p));
    case DType::kInt64:
      return cast_to<C>(*reinterpret_cast<const int64_t*>(p));
    case DType::kUInt8:
      return cast_to<C>(*reinterpret_cast<const uint8_t*>(p));
    case DType::kUInt16:
      return cast_to<C>(*reinterpret_cast<const uint16_t*>(p));
    case DType::kUInt32:
      return cast_to<C>(*reinterpret_cast<const uint32_t*>(p));
    case DType::kUInt64:
      return cast_to<C>(*reinterpret_cast<const uint64_t*>(p));
    case DType::kFloat16:
      return cast_to<C>(__half2float(__ushort_as_half(*reinterpret_cast<const uint16_t*>(p))));
    case DType::kBFloat16:
      return cast_to<C>(
          __bfloat162float(__ushort_as_bfloat16(*reinterpret_cast<const uint16_t*>(p))));
    case DType::kFloat32:
      return cast_to<C>(*reinterpret_cast<const float*>(p));
    case DType::kFloat64:
      return cast_to<C>(*reinterpret_cast<const double*>(p));
    default:
      return C(0);
  }
}

template <class T, class V>
__device__ __forceinline__ void put(char* p, V v, bool add) {
  T x = cast_to<T>(v);
  if (add) x = wrap_add(*reinterpret_cast<T*>(p), x);
  *reinterpret_cast<T*>(p) = x;
}

// p (dtype t) = v, or += v with add (in t's arithmetic, as the CPU's accumulate).
template <class V>
__device__ __forceinline__ void store_as(char* p, DType t, V v, bool add) {
  switch (t) {
    case DType::kBool:
      return put<bool>(p, v, add);
    case DType::kInt8:
      return put<int8_t>(p, v, add);
    case DType::kInt16:
      return put<int16_t>(p, v, add);
    case DType::kInt32:
      return put<int32_t>(p, v, add);
    case DType::kInt64:
      return put<int64_t>(p, v, add);
    case DType::kUInt8:
      return put<uint8_t>(p, v, add);
    case DType::kUInt16:
      return put<uint16_t>(p, v, add);
    case DType::kUInt32:
      return put<uint32_t>(p, v, add);
    case DType::kUInt64:
      return put<uint64_t>(p, v, add);
    case DType::kFloat16: {
      auto* q = reinterpret_cast<uint16_t*>(p);
      if constexpr (std::is_same_v<V, double>) {
        if (!add) {  // rounded once, as the host's and NumPy's casts
          *q = __half_as_ushort(__double2half(v));
          return;
        }
      }
      float f = cast_to<float>(v);
      if (add) f += __half2float(__ushort_as_half(*q));
      *q = __half_as_ushort(__float2half_rn(f));
      return;
    }
    case DType::kBFloat16: {
      auto* q = reinterpret_cast<uint16_t*>(p);
      if constexpr (std::is_same_v<V, double>) {
        if (!add) {
          *q = __bfloat16_as_ushort(__double2bfloat16(v));
          return;
        }
      }
      float f = cast_to<float>(v);
      if (add) f += __bfloat162float(__ushort_as_bfloat16(*q));
      *q = __bfloat16_as_ushort(__float2bfloat16_rn(f));
      return;
    }
    case DType::kFloat32:
      return put<float>(p, v, add);
    case DType::kFloat64:
      return put<double>(p, v, add);
    default:
      return;
  }
}

__host__ __device__ __forceinline__ int64_t dtype_size_device(DType t) {
  switch (t) {
    case DType::kBool:
    case DType::kInt8:
    case DType::kUInt8:
      return 1;
    case DType::kInt16:
    case DType::kUInt16:
    case DType::kFloat16:
    case DType::kBFloat16:
      return 2;
    case DType::kInt32:
    case DType::kUInt32:
    case DType::kFloat32:
      return 4;
    default:
      return 8;
  }
}

using ::ndx::cuda::check_launch;

// Dims the general (strided) kernels take after coalescing; more raise NotImplementedError.
inline constexpr int kMaxDims = 12;

// A coalesced iteration space for K operands: flat index -> each operand's element offset.
template <int K>
struct Geometry {
  int nd = 0;
  int64_t dims[kMaxDims];
  int64_t strides[K][kMaxDims];
  __device__ __forceinline__ void offsets(int64_t i, int64_t* off) const {
    for (int k = 0; k < K; ++k) off[k] = 0;
    for (int d = nd - 1; d >= 0; --d) {
      const int64_t c = i % dims[d];
      i /= dims[d];
      for (int k = 0; k < K; ++k) off[k] += c * strides[k][d];
    }
  }
};

// The coalesced layout of an array of `shape` with element `strides` (copy.cu); more than
// kMaxDims unmergeable dims raise NotImplementedError naming `what` (e.g. "[fill] arrays").
Geometry<1> geometry_of(const Shape& shape, const Shape& strides, const char* what);

// Blocks for n work items of `threads` each, capped for a grid-stride loop.
int64_t grid_for(int64_t n, int threads);
cudaStream_t stream();
int sm_count();

}  // namespace ndx::kernel::gpu
