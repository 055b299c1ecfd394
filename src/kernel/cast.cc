// Casts and copies (kernel/cast.h), compiled once per Highway target. One table of typed
// conversion loops serves every pair of dtypes (NumPy's cast table has the same shape);
// float32 <-> float16 runs on the F16C instructions where the target has them, with NaN
// lanes redone by the scalar conversion so results stay bit-identical to it.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernel/cast.cc"
#include <hwy/foreach_target.h>  // IWYU pragma: keep

#include <hwy/highway.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>

#include "kernel/cast.h"
#include "kernel/dispatch.h"
#include "kernel/gpu.h"
#include "kernel/iterator.h"
#include "kernel/parallel.h"
#include "ndx/dtype.h"

#ifndef NDX_KERNEL_CAST_TYPES_
#define NDX_KERNEL_CAST_TYPES_
namespace ndx::kernel::cast_detail {
using ConvertFn = void (*)(void*, int64_t, const void*, int64_t, int64_t);
using AccumulateFn = void (*)(void*, int64_t, const void*, int64_t);
struct CastTables {
  ConvertFn convert[kNumDTypes][kNumDTypes];
  AccumulateFn accumulate[kNumDTypes];
};
}  // namespace ndx::kernel::cast_detail
#endif

HWY_BEFORE_NAMESPACE();
namespace ndx::kernel::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

template <typename To, typename From>
inline To cast_value(From v) {
  using CF = compute_t<From>;
  if constexpr (is_complex_v<From> && is_complex_v<To>) {
    return static_cast<To>(v);
  } else if constexpr (is_complex_v<From>) {  // to a real type: NumPy keeps the real part
    if constexpr (std::is_same_v<To, bool>)
      return v.real() != 0 || v.imag() != 0;
    else
      return cast_value<To>(v.real());
  } else if constexpr (is_complex_v<To>) {
    return To(static_cast<typename To::value_type>(static_cast<CF>(v)));
  } else if constexpr (std::is_same_v<To, bool>) {
    return static_cast<CF>(v) != CF(0);
  } else if constexpr (std::is_floating_point_v<CF> && std::is_integral_v<To>) {
    // C++ leaves float -> int of NaN, inf and out-of-range values undefined; NumPy gives an
    // unspecified value. Saturate so the result is defined.
    const double d = static_cast<double>(static_cast<CF>(v));
    if (std::isnan(d)) return To(0);
    if (d <= static_cast<double>(std::numeric_limits<To>::lowest()))
      return std::numeric_limits<To>::lowest();
    if (d >= static_cast<double>(std::numeric_limits<To>::max()))
      return std::numeric_limits<To>::max();
    return static_cast<To>(d);
  } else {
    return static_cast<To>(static_cast<CF>(v));
  }
}

// float32 -> float16 and back on whole vectors; false when the target has no such path.
HWY_INLINE bool f32_to_f16(float16* dst, const float* src, int64_t n) {
#if HWY_TARGET == HWY_SCALAR || HWY_TARGET == HWY_EMU128
  return false;
#else
  const hn::ScalableTag<float> df;
  const hn::Rebind<hwy::float16_t, decltype(df)> dh;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(df));
  int64_t i = 0;
  for (; i + lanes <= n; i += lanes) {
    const auto v = hn::LoadU(df, src + i);
    if (HWY_LIKELY(hn::AllFalse(df, hn::IsNaN(v)))) {
      hn::StoreU(hn::DemoteTo(dh, v), dh, reinterpret_cast<hwy::float16_t*>(dst + i));
    } else {
      for (int64_t j = i; j < i + lanes; ++j) dst[j] = float16(src[j]);
    }
  }
  for (; i < n; ++i) dst[i] = float16(src[i]);
  return true;
#endif
}

HWY_INLINE bool f16_to_f32(float* dst, const float16* src, int64_t n) {
#if HWY_TARGET == HWY_SCALAR || HWY_TARGET == HWY_EMU128
  return false;
#else
  const hn::ScalableTag<float> df;
  const hn::Rebind<hwy::float16_t, decltype(df)> dh;
  const hn::Rebind<uint16_t, decltype(df)> du;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(df));
  int64_t i = 0;
  for (; i + lanes <= n; i += lanes) {
    const auto bits = hn::LoadU(du, reinterpret_cast<const uint16_t*>(src + i));
    // NaN payloads are copied bit for bit by the scalar conversion; keep that exactly.
    if (HWY_LIKELY(
            hn::AllFalse(du, hn::Gt(hn::And(bits, hn::Set(du, 0x7fff)), hn::Set(du, 0x7c00))))) {
      const auto h = hn::LoadU(dh, reinterpret_cast<const hwy::float16_t*>(src + i));
      hn::StoreU(hn::PromoteTo(df, h), df, dst + i);
    } else {
      for (int64_t j = i; j < i + lanes; ++j) dst[j] = static_cast<float>(src[j]);
    }
  }
  for (; i < n; ++i) dst[i] = static_cast<float>(src[i]);
  return true;
#endif
}

template <typename To, typename From>
void convert_typed(void* dst_v, int64_t ds, const void* src_v, int64_t ss, int64_t n) {
  To* dst = static_cast<To*>(dst_v);
  const From* src = static_cast<const From*>(src_v);
  if (ds == 1 && ss == 1) {
    if constexpr (std::is_same_v<To, From>) {
      std::memcpy(dst, src, static_cast<size_t>(n) * sizeof(To));
      return;
    } else if constexpr (std::is_same_v<To, float16> && std::is_same_v<From, float>) {
      if (f32_to_f16(dst, src, n)) return;
    } else if constexpr (std::is_same_v<To, float> && std::is_same_v<From, float16>) {
      if (f16_to_f32(dst, src, n)) return;
    } else if constexpr (std::is_same_v<From, bool> && !is_complex_v<To>) {
      // bool's bytes (0 or 1: all ndx and NumPy write) read as uint8_t: a loop the compiler
      // vectorizes, where it left bool loads scalar (0.75 ns an element to int64; any
      // normalizing of the byte kept the float conversions scalar too).
      const uint8_t* bytes = reinterpret_cast<const uint8_t*>(src);
      for (int64_t i = 0; i < n; ++i) dst[i] = cast_value<To>(bytes[i]);
      return;
    }
    for (int64_t i = 0; i < n; ++i) dst[i] = cast_value<To>(src[i]);
  } else if (ds == 1) {
    for (int64_t i = 0; i < n; ++i) dst[i] = cast_value<To>(src[i * ss]);
  } else {
    for (int64_t i = 0; i < n; ++i) dst[i * ds] = cast_value<To>(src[i * ss]);
  }
}

template <typename T>
void accumulate_typed(void* dst_v, int64_t ds, const void* src_v, int64_t n) {
  T* dst = static_cast<T*>(dst_v);
  const T* src = static_cast<const T*>(src_v);
  using C = compute_t<T>;
  for (int64_t i = 0; i < n; ++i) {
    C a = static_cast<C>(dst[i * ds]), b = static_cast<C>(src[i]);
    if constexpr (std::is_same_v<C, bool>) {
      dst[i * ds] = a || b;
    } else if constexpr (std::is_integral_v<C>) {
      using U = std::make_unsigned_t<C>;
      dst[i * ds] = static_cast<T>(static_cast<C>(static_cast<U>(a) + static_cast<U>(b)));
    } else {
      dst[i * ds] = static_cast<T>(a + b);
    }
  }
}

using cast_detail::CastTables;
using cast_detail::ConvertFn;

template <typename... Ts>
struct TypeList {};
using AllTypes = TypeList<bool, int8_t, int16_t, int32_t, int64_t, uint8_t, uint16_t, uint32_t,
                          uint64_t, float16, bfloat16, float, double, complex64, complex128>;

template <typename To, typename... From>
void fill_row(ConvertFn* row, TypeList<From...>) {
  ((row[static_cast<int>(dtype_of<From>)] = &convert_typed<To, From>), ...);
}
template <typename... To>
void fill_tables(CastTables* t, TypeList<To...> all) {
  ((fill_row<To>(t->convert[static_cast<int>(dtype_of<To>)], all)), ...);
  ((t->accumulate[static_cast<int>(dtype_of<To>)] = &accumulate_typed<To>), ...);
}

const CastTables* cast_tables() {
  static const CastTables tables = [] {
    CastTables t{};
    fill_tables(&t, AllTypes{});
    return t;
  }();
  return &tables;
}

}  // namespace ndx::kernel::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace ndx::kernel {

namespace {
const cast_detail::CastTables& tables() {
  static const cast_detail::CastTables* t = NDX_DISPATCH_FN(cast_tables)();
  return *t;
}

int index_of(DType t) {
  const int i = static_cast<int>(t);
  if (i < 0 || i >= kNumDTypes) unsupported_dtype("cast", t);
  return i;
}

// A transposing copy walks tiles of kTile destination rows by kTileCols columns: a tile reads
// kTileCols source columns, each contiguous, and touches few pages at a time, which keeps the
// TLB from thrashing (measured on 4096 x 4096 float32: 64 x 64 tiles 39 ms, 512 x 8 11 ms).
constexpr int64_t kTile = 512, kTileCols = 8;

// A 2-d block of a copy where the destination runs along the inner dim and the source along
// the outer one (a transpose): walking tiles keeps both sides in cache.
bool tiled_transpose(const NdIter<2>& it, char* dst, const char* src, int64_t size) {
  if (it.ndim() < 2) return false;
  const int d0 = it.ndim() - 2, d1 = it.ndim() - 1;
  if (it.stride(0, d1) != 1 || it.stride(1, d0) != 1 || it.stride(1, d1) == 1) return false;
  const int64_t rows = it.dim(d0), cols = it.dim(d1);
  if (rows < 64 || cols < 64) return false;  // small copies: the plain loop is as good
  int64_t outer = 1;
  for (int d = 0; d < d0; ++d) outer *= it.dim(d);
  if (outer != 1) return false;  // keep the tiled path to plain 2-d transposes
  const int64_t dst_row = it.stride(0, d0), src_col = it.stride(1, d1);
  const int64_t tile_rows = (rows + kTile - 1) / kTile;
  auto copy_tiles = [&](auto elem) {
    using E = decltype(elem);
    E* d = reinterpret_cast<E*>(dst);
    const E* s = reinterpret_cast<const E*>(src);
    parallel_for(tile_rows, std::max<int64_t>(1, kGrain / (kTile * cols)),
                 [&](int64_t tb, int64_t te) {
                   for (int64_t t = tb; t < te; ++t)
                     for (int64_t c0 = 0; c0 < cols; c0 += kTileCols)
                       for (int64_t r = t * kTile; r < std::min(rows, (t + 1) * kTile); ++r) {
                         E* drow = d + r * dst_row;
                         const E* scol = s + r;
                         const int64_t c1 = std::min(cols, c0 + kTileCols);
                         for (int64_t c = c0; c < c1; ++c) drow[c] = scol[c * src_col];
                       }
                 });
  };
  switch (size) {
    case 1:
      copy_tiles(uint8_t{});
      return true;
    case 2:
      copy_tiles(uint16_t{});
      return true;
    case 4:
      copy_tiles(uint32_t{});
      return true;
    case 8:
      copy_tiles(uint64_t{});
      return true;
  }
  return false;
}
}  // namespace

void convert(void* dst, DType to, int64_t dst_stride, const void* src, DType from,
             int64_t src_stride, int64_t n) {
  tables().convert[index_of(to)][index_of(from)](dst, dst_stride, src, src_stride, n);
}

void accumulate(void* dst, DType t, int64_t dst_stride, const void* src, int64_t n) {
  tables().accumulate[index_of(t)](dst, dst_stride, src, n);
}

void copy(const TBlob& src, const TBlob& dst, OpReqType req) {
  if (req == kNullOp || dst.size() == 0) return;
  if (src.device.is_gpu() || dst.device.is_gpu()) {
    if (src.device != dst.device)
      raise(ErrorKind::kRuntimeError, "[copy] kernel copies stay on one device; got ",
            src.device.str(), " to ", dst.device.str());
    return gpu::copy(src, dst, req);
  }
  const Shape bst = broadcast_strides(src.shape, src.strides, dst.shape);
  const NdIter<2> it(dst.shape, {dst.strides.data(), bst.data()});
  const int64_t dsize = dtype_size(dst.dtype), ssize = dtype_size(src.dtype);
  char* d = static_cast<char*>(dst.dptr);
  const char* s = static_cast<const char*>(src.dptr);
  if (req != kAddTo && src.dtype == dst.dtype && tiled_transpose(it, d, s, dsize)) return;
  const auto& conv = tables().convert[index_of(dst.dtype)][index_of(src.dtype)];
  const auto& acc = tables().accumulate[index_of(dst.dtype)];
  parallel_for(it.size(), kGrain, [&](int64_t begin, int64_t end) {
    alignas(64) char buf[16 * 1024];  // 1024 of the widest dtype (complex128)
    it.for_each_run(begin, end, [&](const Run<2>& r) {
      char* dp = d + r.offset[0] * dsize;
      const char* sp = s + r.offset[1] * ssize;
      if (req != kAddTo) {
        conv(dp, r.stride[0], sp, r.stride[1], r.length);
        return;
      }
      for (int64_t j = 0; j < r.length; j += 1024) {
        const int64_t n = std::min<int64_t>(1024, r.length - j);
        conv(buf, 1, sp + j * r.stride[1] * ssize, r.stride[1], n);
        acc(dp + j * r.stride[0] * dsize, r.stride[0], buf, n);
      }
    });
  });
}

void fill(const TBlob& dst, double value) {
  if (dst.device.is_gpu()) return gpu::fill(dst, value);
  const double v = value;
  TBlob src{const_cast<double*>(&v), Shape{}, Shape{}, DType::kFloat64, dst.device};
  copy(src, dst, kWriteTo);
}

}  // namespace ndx::kernel
#endif  // HWY_ONCE
