// Sorting along an axis: sort, argsort and sort's backward, on kernel/key_sort.h (Highway's
// vqsort; a radix sort for long lanes of 32-bit keys). Each lane's
// values become unsigned keys that order as NumPy orders the values (floats: -0 with +0, NaN
// last); sort sorts the keys alone, argsort the keys with the lane position in the low bits.
// Those keys are all distinct, so argsort is stable (NumPy's kind='stable') whatever the
// algorithm underneath. Complex values, which have no such key, take a comparison sort.
#include <algorithm>
#include <bit>
#include <complex>
#include <cstdint>
#include <cstring>
#include <limits>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "kernel/blob.h"
#include "kernel/cast.h"
#include "kernel/functor_traits.h"
#include "kernel/gpu_fused.h"
#include "kernel/host_fallback.h"
#include "kernel/key_sort.h"
#include "kernel/parallel.h"
#include "ndx/graph.h"
#include "ndx/op_util.h"
#include "operator/sort_keys.h"

namespace ndx {
namespace {

struct SortParam {
  std::optional<int64_t> axis = -1;
  std::optional<std::string> kind;
  std::optional<bool> stable;
  static void declare(ParamDecl<SortParam>& d) {
    d.field("axis", &SortParam::axis)
        .set_default(int64_t{-1})
        .describe("Axis to sort along; None sorts the flattened array.");
    d.field("kind", &SortParam::kind)
        .set_default(std::nullopt)
        .describe("'quicksort', 'mergesort', 'heapsort' or 'stable': every kind is stable here.");
    d.field("stable", &SortParam::stable)
        .set_default(std::nullopt)
        .describe("Keep equal elements in their order (always true here).");
  }
};

void check_kind(const NodeAttrs& attrs, const SortParam& p) {
  if (!p.kind) return;
  for (const char* k : {"quicksort", "mergesort", "heapsort", "stable"})
    if (*p.kind == k) return;
  value_error("[", op_name(attrs), "] kind must be one of 'quicksort', 'mergesort', 'heapsort', ",
              "'stable', got '", *p.kind, "'");
}

// The lanes of an array seen as (outer, n, inner), contiguous: element j of lane l is at
// (l / inner) * n * inner + l % inner + j * inner.
struct Lanes {
  int64_t outer = 1, n = 1, inner = 1;
  int64_t count() const { return outer * inner; }
  int64_t base(int64_t l) const { return (l / inner) * n * inner + l % inner; }
};

Lanes lanes_of(const NodeAttrs& attrs, const Shape& s, const std::optional<int64_t>& axis) {
  Lanes L;
  if (!axis) {
    L.n = s.size();
    return L;
  }
  const int ax = normalize_axis(*axis, s.ndim() == 0 ? 1 : s.ndim(), op_name(attrs).c_str());
  if (s.ndim() == 0) return L;
  for (int i = 0; i < s.ndim(); ++i) {
    if (i < ax) L.outer *= s[i];
    if (i > ax) L.inner *= s[i];
  }
  L.n = s[ax];
  return L;
}

// Orderable unsigned keys.
using sort_keys::from_key;
using sort_keys::KeyOf;
using sort_keys::to_key;

// Sorts a lane's keys; returns where they ended (32-bit keys of long lanes are radix sorted
// through `scratch`).
uint32_t* sort_value_keys(uint32_t* keys, size_t n, std::vector<uint32_t>& scratch) {
  return kernel::sort_keys(keys, n, &scratch);
}

uint64_t* sort_value_keys(uint64_t* keys, size_t n, std::vector<uint64_t>&) {
  kernel::sort_keys(keys, n);
  return keys;
}

// Lanes [begin, end) of n keys (2 <= n <= kNetworkMaxKeys) sorted kColumnLanes at a time as
// the columns of n x kColumnLanes matrices: fill(c, base) writes column c from the lane
// starting at `base`, sort() sorts the columns, drain(c, base) stores column c back.
template <class Fill, class Sort, class Drain>
void by_column_blocks(const Lanes& L, int64_t begin, int64_t end, Fill fill, Sort sort,
                      Drain drain) {
  constexpr auto C = static_cast<int64_t>(kernel::kColumnLanes);
  for (int64_t first = begin; first < end; first += C) {
    const int64_t lanes = std::min(C, end - first);
    for (int64_t c = 0; c < lanes; ++c) fill(c, L.base(first + c));
    sort();
    for (int64_t c = 0; c < lanes; ++c) drain(c, L.base(first + c));
  }
}

// The column sort of lanes of one key type: pack(at, j) makes the key of element j (at
// x[at]), unpack(base, j, key) stores sorted key j of the lane starting at `base`.
template <class K, class Pack, class Unpack>
void sort_lane_columns(const Lanes& L, int64_t begin, int64_t end, std::vector<K>& cols, Pack pack,
                       Unpack unpack) {
  constexpr auto C = static_cast<int64_t>(kernel::kColumnLanes);
  const int64_t n = L.n, s = L.inner;
  cols.assign(static_cast<size_t>(n * C), K(0));
  by_column_blocks(
      L, begin, end,
      [&](int64_t c, int64_t b) {
        for (int64_t j = 0; j < n; ++j) cols[j * C + c] = pack(b + j * s, j);
      },
      [&] { kernel::sort_key_columns(cols.data(), static_cast<size_t>(n)); },
      [&](int64_t c, int64_t b) {
        for (int64_t j = 0; j < n; ++j) unpack(b, j, cols[j * C + c]);
      });
}

// argsort of lanes of 64-bit keys by columns: the keys and their positions in two matrices,
// ordered by key, then position. (vqsort's 128-bit keys took 0.45-0.9x NumPy's time on such
// lanes.)
template <class T>
void argsort_wide_lane_columns(const Lanes& L, int64_t begin, int64_t end, const T* x, T* y,
                               int64_t* idx) {
  constexpr auto C = static_cast<int64_t>(kernel::kColumnLanes);
  const int64_t n = L.n, s = L.inner;
  std::vector<uint64_t> keys(static_cast<size_t>(n * C), 0), pos(static_cast<size_t>(n * C), 0);
  by_column_blocks(
      L, begin, end,
      [&](int64_t c, int64_t b) {
        for (int64_t j = 0; j < n; ++j) {
          keys[j * C + c] = to_key(x[b + j * s]);
          pos[j * C + c] = static_cast<uint64_t>(j);
        }
      },
      [&] { kernel::sort_key_columns(keys.data(), pos.data(), static_cast<size_t>(n)); },
      [&](int64_t c, int64_t b) {
        for (int64_t j = 0; j < n; ++j) {
          const auto k = static_cast<int64_t>(pos[j * C + c]);
          idx[b + j * s] = k;
          if (y) y[b + j * s] = x[b + k * s];
        }
      });
}

// A key that may share its memory with the values it came from (the output lane).
template <class K>
using AliasedKey __attribute__((may_alias)) = K;

// One lane of n values at stride s sorted into y through their keys.
template <class T, class K>
void sort_value_lane(const T* x, T* y, int64_t n, int64_t s, std::vector<K>& keys,
                     std::vector<K>& scratch) {
  if constexpr (sizeof(T) == sizeof(K)) {
    if (s == 1) {
      // Keys as wide as the values are made in the output lane itself: no buffer to allocate
      // and fault in (a lane of 4M float32: 16 MB). Both loops see the lane as keys only, so
      // they vectorize (the conversion back is in place).
      auto* yk = reinterpret_cast<AliasedKey<K>*>(y);
      const auto* xk = reinterpret_cast<const AliasedKey<K>*>(x);
      if constexpr (std::is_same_v<T, float>) {  // (this file is built for the baseline ISA)
        kernel::float32_keys(reinterpret_cast<const uint32_t*>(xk), reinterpret_cast<uint32_t*>(yk),
                             static_cast<size_t>(n));
      } else if constexpr (std::is_same_v<T, double>) {
        kernel::float64_keys(reinterpret_cast<const uint64_t*>(xk), reinterpret_cast<uint64_t*>(yk),
                             static_cast<size_t>(n));
      } else {
        for (int64_t j = 0; j < n; ++j) yk[j] = to_key<T, false>(std::bit_cast<T>(K(xk[j])));
      }
      const K* sorted = sort_value_keys(yk, static_cast<size_t>(n), scratch);
      if (sorted != yk) std::memcpy(yk, sorted, static_cast<size_t>(n) * sizeof(K));
      if constexpr (std::is_same_v<T, float>) {
        kernel::float32_from_keys(reinterpret_cast<uint32_t*>(yk), static_cast<size_t>(n));
      } else if constexpr (std::is_same_v<T, double>) {
        kernel::float64_from_keys(reinterpret_cast<uint64_t*>(yk), static_cast<size_t>(n));
      } else {
        for (int64_t j = 0; j < n; ++j) yk[j] = std::bit_cast<K>(from_key<T>(K(yk[j])));
      }
      return;
    }
  }
  keys.resize(static_cast<size_t>(n));
  K* k = keys.data();
  for (int64_t j = 0; j < n; ++j) k[j] = to_key<T, false>(x[j * s]);
  const K* sorted = sort_value_keys(k, keys.size(), scratch);
  for (int64_t j = 0; j < n; ++j) y[j * s] = from_key<T>(sorted[j]);
}

// The stable order of a lane's n <= 2^32 keys: order[j]'s low 32 bits are the position of the
// j-th smallest. 32-bit keys are counted where few values repeat, else packed above their
// positions and sorted once; 64-bit keys take kernel::stable_order.
template <class K>
void stable_order_of(const K* keys, size_t n, uint64_t* order) {
  if constexpr (sizeof(K) == 8) {
    kernel::stable_order(reinterpret_cast<const uint64_t*>(keys), n, order);
  } else {
    if (kernel::counted_order(reinterpret_cast<const uint32_t*>(keys), n, order)) return;
    for (size_t j = 0; j < n; ++j) order[j] = (uint64_t{keys[j]} << 32) | j;
    kernel::sort_keys(order, n);
  }
}

// Lane by lane over x (contiguous, C type T): values sorted into y, and / or the stable
// order into idx (int64), either may be null.
template <class T>
void sort_lanes(const Lanes& L, const T* x, T* y, int64_t* idx) {
  using K = KeyOf<T>;
  const bool pack32 = sizeof(K) == 4 && L.n <= (int64_t{1} << 32);
  const auto n_keys = static_cast<size_t>(L.n), lanes = static_cast<size_t>(L.count());
  // Values of 8 and 16 bits have at most 16 significant key bits: from kRadixMinKeys on, the
  // radix sort's one or two passes beat the network (the ranges were measured on float32).
  const bool value_columns = !idx && (sizeof(T) >= 4 || n_keys < kernel::kRadixMinKeys) &&
                             kernel::sort_as_columns(sizeof(K), n_keys, lanes);
  const bool packed_columns = idx && pack32 && kernel::sort_as_columns(8, n_keys, lanes);
  const bool wide_columns = idx && sizeof(K) == 8 && kernel::sort_as_columns(16, n_keys, lanes);
  // A column block sorts kColumnLanes lanes however many are filled: chunks of whole blocks.
  const int64_t grain =
      std::max<int64_t>(value_columns || packed_columns || wide_columns ? kernel::kColumnLanes : 1,
                        kernel::kGrain / std::max<int64_t>(L.n, 1));
  kernel::parallel_for(L.count(), grain, [&](int64_t begin, int64_t end) {
    std::vector<K> keys, scratch;
    std::vector<uint64_t> packed;
    std::vector<kernel::Key128> wide;
    const int64_t n = L.n, s = L.inner;
    if (value_columns) {
      return sort_lane_columns(
          L, begin, end, keys, [&](int64_t at, int64_t) { return to_key<T, false>(x[at]); },
          [&](int64_t b, int64_t j, K k) { y[b + j * s] = from_key<T>(k); });
    }
    if (packed_columns) {
      return sort_lane_columns(
          L, begin, end, packed,
          [&](int64_t at, int64_t j) {
            return (uint64_t{to_key(x[at])} << 32) | static_cast<uint64_t>(j);
          },
          [&](int64_t b, int64_t j, uint64_t key) {
            const auto k = static_cast<int64_t>(key & 0xFFFFFFFFu);
            idx[b + j * s] = k;
            if (y) y[b + j * s] = x[b + k * s];
          });
    }
    if constexpr (sizeof(K) == 8) {
      if (wide_columns) return argsort_wide_lane_columns(L, begin, end, x, y, idx);
    }
    for (int64_t l = begin; l < end; ++l) {
      const int64_t b = L.base(l);
      if (!idx) {
        sort_value_lane(x + b, y + b, n, s, keys, scratch);
      } else if (n <= (int64_t{1} << 32)) {  // positions fit the order's low 32 bits
        keys.resize(static_cast<size_t>(n));
        packed.resize(static_cast<size_t>(n));
        for (int64_t j = 0; j < n; ++j) keys[j] = to_key(x[b + j * s]);
        stable_order_of(keys.data(), keys.size(), packed.data());
        for (int64_t j = 0; j < n; ++j) {
          const auto k = static_cast<int64_t>(packed[j] & 0xFFFFFFFFu);
          idx[b + j * s] = k;
          if (y) y[b + j * s] = x[b + k * s];
        }
      } else {
        wide.resize(static_cast<size_t>(n));
        for (int64_t j = 0; j < n; ++j) {
          wide[j].hi = to_key(x[b + j * s]);
          wide[j].lo = static_cast<uint64_t>(j);
        }
        kernel::sort_keys(wide.data(), wide.size());
        for (int64_t j = 0; j < n; ++j) {
          const auto k = static_cast<int64_t>(wide[j].lo);
          idx[b + j * s] = k;
          if (y) y[b + j * s] = x[b + k * s];
        }
      }
    }
  });
}

// ---- complex values: no orderable key of 64 bits, so a comparison sort (as NumPy's) ----

// NumPy's sort order for complex numbers: those without NaN first, lexicographically; then
// R + nanj by real part, nan + Rj by imaginary part, and nan + nanj last.
template <class T>
struct ComplexSortLess {
  static int nan_class(const std::complex<T>& v) {
    return 2 * (v.real() != v.real()) + (v.imag() != v.imag());
  }
  bool operator()(const std::complex<T>& a, const std::complex<T>& b) const {
    const int ca = nan_class(a), cb = nan_class(b);
    if (ca != cb) return ca < cb;
    if (ca < 2 && a.real() != b.real()) return a.real() < b.real();
    return ca % 2 == 0 && a.imag() < b.imag();
  }
};

// sort_lanes for complex numbers: a stable sort of each lane's positions by value.
template <class T>
void sort_complex_lanes(const Lanes& L, const std::complex<T>* x, std::complex<T>* y,
                        int64_t* idx) {
  const ComplexSortLess<T> less;
  const int64_t grain = std::max<int64_t>(1, kernel::kGrain / std::max<int64_t>(L.n, 1));
  kernel::parallel_for(L.count(), grain, [&](int64_t begin, int64_t end) {
    std::vector<int64_t> order(static_cast<size_t>(L.n));
    std::vector<std::complex<T>> lane(static_cast<size_t>(L.n));
    const int64_t n = L.n, s = L.inner;
    for (int64_t l = begin; l < end; ++l) {
      const int64_t b = L.base(l);
      for (int64_t j = 0; j < n; ++j) lane[j] = x[b + j * s];
      for (int64_t j = 0; j < n; ++j) order[j] = j;
      std::stable_sort(order.begin(), order.end(),
                       [&](int64_t i, int64_t j) { return less(lane[i], lane[j]); });
      for (int64_t j = 0; j < n; ++j) {
        if (idx) idx[b + j * s] = order[j];
        if (y) y[b + j * s] = lane[order[j]];
      }
    }
  });
}

// A contiguous view of `in` in dtype `t` (a copy where it is strided or of another dtype).
TBlob contiguous_as(const TBlob& in, DType t, NDArray* keep) {
  if (in.is_contiguous() && in.dtype == t) return in;
  *keep = NDArray(in.shape, t, in.device);
  kernel::copy(in, kernel::to_blob(*keep), kWriteTo);
  return kernel::to_blob(*keep);
}

// On a GPU, CUB sorts the lanes as contiguous segments (kernel/cuda/sort.cu); a lane axis
// that is not the last goes through transposed copies.
void gpu_sort(const Lanes& L, const TBlob& x, const TBlob& y, const TBlob& idx) {
  if (is_complex(x.dtype)) kernel::fall_back_to_host("[sort] complex input on gpu");
  int64_t* order = idx.dptr ? static_cast<int64_t*>(idx.dptr) : nullptr;
  if (L.inner == 1) return kernel::gpu::sort_segments(x, L.outer, L.n, y.dptr, order);
  const std::vector<int64_t> swap{0, 2, 1};
  const Shape lanes{L.outer, L.n, L.inner};
  const NDArray xt = kernel::as_array(x).reshape(lanes).transpose(swap).contiguous();
  NDArray ys, is;
  if (y.dptr) ys = NDArray(xt.shape(), x.dtype, x.device);
  if (order) is = NDArray(xt.shape(), DType::kInt64, x.device);
  kernel::gpu::sort_segments(kernel::to_blob(xt), L.outer * L.inner, L.n,
                             y.dptr ? ys.raw_data() : nullptr,
                             order ? is.data<int64_t>() : nullptr);
  if (y.dptr)
    kernel::copy(kernel::to_blob(ys.transpose(swap)),
                 kernel::to_blob(kernel::as_array(y).reshape(lanes)), kWriteTo);
  if (order)
    kernel::copy(kernel::to_blob(is.transpose(swap)),
                 kernel::to_blob(kernel::as_array(idx).reshape(lanes)), kWriteTo);
}

// Sorted values into `values` and / or the stable order into `order` (each as it wants it).
void run_sort(const NodeAttrs& attrs, const TBlob& in, const std::optional<int64_t>& axis,
              const TBlob* values, OpReqType values_req, const TBlob* order, OpReqType order_req) {
  const Lanes L = lanes_of(attrs, in.shape, axis);
  if (in.size() == 0) return;
  const DType t = compute_dtype(in.dtype);
  NDArray x_copy, y_buf, idx_buf;
  const TBlob x = contiguous_as(in, t, &x_copy);
  TBlob y, idx;
  if (values && values_req != kNullOp) {
    const bool direct = values->is_contiguous() && values->dtype == t && values_req != kAddTo;
    if (!direct) y_buf = NDArray(in.shape, t, in.device);
    y = direct ? *values : kernel::to_blob(y_buf);
  }
  if (order && order_req != kNullOp) {
    const bool direct =
        order->is_contiguous() && order->dtype == DType::kInt64 && order_req != kAddTo;
    if (!direct) idx_buf = NDArray(in.shape, DType::kInt64, in.device);
    idx = direct ? *order : kernel::to_blob(idx_buf);
  }
  if (in.device.is_gpu()) {
    gpu_sort(L, x, y, idx);
  } else {
    kernel::with_any_compute_type(t, "sort", [&](auto c) {
      using T = decltype(c);
      int64_t* order = idx.dptr ? idx.ptr<int64_t>() : nullptr;
      if constexpr (is_complex_v<T>)
        sort_complex_lanes(L, x.ptr<T>(), y.dptr ? y.ptr<T>() : nullptr, order);
      else
        sort_lanes<T>(L, x.ptr<T>(), y.dptr ? y.ptr<T>() : nullptr, order);
    });
  }
  if (y_buf.defined()) kernel::copy(kernel::to_blob(y_buf), *values, values_req);
  if (idx_buf.defined()) kernel::copy(kernel::to_blob(idx_buf), *order, order_req);
}

// The axis a call sorts along: none (the flattened array) for a 0-d input, which sort
// refuses for an explicit axis and argsort treats as one element, as NumPy does.
std::optional<int64_t> effective_axis(const Shape& s, const std::optional<int64_t>& axis) {
  return s.ndim() == 0 ? std::nullopt : axis;
}

Shape sorted_shape(const Shape& s, const std::optional<int64_t>& axis) {
  return effective_axis(s, axis) ? s : Shape{s.size()};
}

bool sort_shape(const NodeAttrs& attrs, ShapeVector* in, ShapeVector* out) {
  if (!(*in)[0].is_known()) return false;
  const auto& p = attrs.get<SortParam>();
  check_kind(attrs, p);
  if (p.stable && p.kind)  // NumPy takes one of them
    value_error("[", op_name(attrs), "] `kind` and keyword parameters can't be provided at the ",
                "same time. Use only one of them.");
  if ((*in)[0].ndim() == 0 && p.axis && attrs.op->name == "_np_sort")
    normalize_axis(*p.axis, 0, op_name(attrs).c_str());  // AxisError, as NumPy's sort
  lanes_of(attrs, (*in)[0], p.axis);                     // validates the axis
  assign_shape(attrs, &(*out)[0], sorted_shape((*in)[0], p.axis), "output", 0);
  return true;
}

// The input as the sort sees it: for axis None flattened (through a contiguous copy where
// it is strided).
TBlob sort_input(const TBlob& in, const std::optional<int64_t>& axis, NDArray* keep) {
  if (axis) return in;
  TBlob x = contiguous_as(in, in.dtype, keep);
  x.shape = Shape{x.size()};
  x.strides = Shape{1};
  return x;
}

void sort_compute(const NodeAttrs& attrs, const OpContext&, const std::vector<TBlob>& in,
                  const std::vector<OpReqType>& req, const std::vector<TBlob>& out) {
  const auto axis = effective_axis(in[0].shape, attrs.get<SortParam>().axis);
  NDArray keep;
  run_sort(attrs, sort_input(in[0], axis, &keep), axis, &out[0], req[0], nullptr, kNullOp);
}

void argsort_compute(const NodeAttrs& attrs, const OpContext&, const std::vector<TBlob>& in,
                     const std::vector<OpReqType>& req, const std::vector<TBlob>& out) {
  const auto axis = effective_axis(in[0].shape, attrs.get<SortParam>().axis);
  NDArray keep;
  run_sort(attrs, sort_input(in[0], axis, &keep), axis, nullptr, kNullOp, &out[0], req[0]);
}

// sort's backward: (ograd, data) -> grad, ograd[j] going back to where sorted element j came
// from (the stable order, so equal elements each get their own gradient).
void backward_sort_compute(const NodeAttrs& attrs, const OpContext&, const std::vector<TBlob>& in,
                           const std::vector<OpReqType>& req, const std::vector<TBlob>& out) {
  if (req[0] == kNullOp || in[1].size() == 0) return;
  const auto axis = effective_axis(in[1].shape, attrs.get<SortParam>().axis);
  if (!is_float(in[0].dtype))
    type_error("[", op_name(attrs), "] gradients need a float dtype, got ", in[0].dtype);
  NDArray data_copy;
  const TBlob data =
      axis ? contiguous_as(in[1], in[1].dtype, &data_copy) : sort_input(in[1], axis, &data_copy);
  NDArray order(data.shape, DType::kInt64, in[1].device);
  TBlob order_blob = kernel::to_blob(order);
  run_sort(attrs, data, axis, nullptr, kNullOp, &order_blob, kWriteTo);
  NDArray g_copy;
  TBlob g = contiguous_as(in[0], DType::kFloat64, &g_copy);
  NDArray dx(data.shape, DType::kFloat64, in[1].device);
  const Lanes L = lanes_of(attrs, data.shape, axis);
  const double* gp = g.ptr<double>();
  double* dp = dx.data<double>();
  const int64_t* op = order.data<int64_t>();
  for (int64_t l = 0; l < L.count(); ++l) {
    const int64_t b = L.base(l);
    for (int64_t j = 0; j < L.n; ++j) dp[b + op[b + j * L.inner] * L.inner] = gp[b + j * L.inner];
  }
  TBlob d = kernel::to_blob(dx);
  d.shape = out[0].shape;
  d.strides = contiguous_strides(out[0].shape);
  kernel::copy(d, out[0], req[0]);
}

// ---- searchsorted: binary search of v's elements in the sorted 1-d a, on the same keys ----
struct SearchsortedParam {
  std::string side = "left";
  static void declare(ParamDecl<SearchsortedParam>& d) {
    d.field("side", &SearchsortedParam::side)
        .set_default(std::string("left"))
        .set_enum({"left", "right"})
        .describe("'left': the first position where v fits; 'right': the last.");
  }
};

// Complex numbers by comparisons, in sort's order.
template <class T>
void search_complex(const std::complex<T>* a, int64_t n, const std::complex<T>* v, int64_t m,
                    bool right, int64_t* out) {
  const ComplexSortLess<T> less;
  kernel::parallel_for(m, 4096, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i)
      out[i] = (right ? std::upper_bound(a, a + n, v[i], less)
                      : std::lower_bound(a, a + n, v[i], less)) -
               a;
  });
}

template <class T>
void search_keys(const T* a, int64_t n, const T* v, int64_t m, bool right, int64_t* out) {
  using K = KeyOf<T>;
  std::vector<K> keys(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) keys[i] = to_key(a[i]);
  kernel::parallel_for(m, 4096, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      const K k = to_key(v[i]);
      const auto it = right ? std::upper_bound(keys.begin(), keys.end(), k)
                            : std::lower_bound(keys.begin(), keys.end(), k);
      out[i] = it - keys.begin();
    }
  });
}

void searchsorted_compute(const NodeAttrs& attrs, const OpContext&, const std::vector<TBlob>& in,
                          const std::vector<OpReqType>& req, const std::vector<TBlob>& out) {
  if (req[0] == kNullOp || out[0].size() == 0) return;
  const bool right = attrs.get<SearchsortedParam>().side == "right";
  const DType t = compute_dtype(promote_types(in[0].dtype, in[1].dtype));
  NDArray a_keep, v_keep, idx_keep;
  const TBlob a = contiguous_as(in[0], t, &a_keep), v = contiguous_as(in[1], t, &v_keep);
  const bool direct = out[0].is_contiguous() && out[0].dtype == DType::kInt64 && req[0] != kAddTo;
  if (!direct) idx_keep = NDArray(out[0].shape, DType::kInt64, out[0].device);
  const TBlob idx = direct ? out[0] : kernel::to_blob(idx_keep);
  kernel::with_any_compute_type(t, "searchsorted", [&](auto c) {
    using T = decltype(c);
    if constexpr (is_complex_v<T>)
      search_complex(a.ptr<T>(), a.size(), v.ptr<T>(), v.size(), right, idx.ptr<int64_t>());
    else
      search_keys<T>(a.ptr<T>(), a.size(), v.ptr<T>(), v.size(), right, idx.ptr<int64_t>());
  });
  if (!direct) kernel::copy(idx, out[0], req[0]);
}

Op& register_sort_op(const char* name, const char* doc, FCompute compute) {
  return OpRegistry::global()
      .register_op(name)
      .describe(doc)
      .set_num_inputs(1)
      .add_argument("a", "NDArray", "Array to sort.")
      .set_params<SortParam>()
      .set_attr<FInferShape>("FInferShape", sort_shape)
      .set_attr<TStridedInputs>("TStridedInputs", true)
      .set_attr<FCompute>("FCompute<cpu>", compute)
      .set_attr<FCompute>("FCompute<gpu>", compute);  // CUB's radix sorts
}

[[maybe_unused]] const bool registered = [] {
  register_sort_op("_np_sort", "A sorted copy along an axis (NaN last; stable).", sort_compute)
      .set_attr<FInferType>("FInferType", FirstInputType)
      .set_attr<FGradient>("FGradient", ElemwiseGradUseIn{"_backward_sort"});
  register_sort_op("_np_argsort", "The indices that sort an array along an axis (stable).",
                   argsort_compute)
      .set_attr<FInferType>("FInferType",
                            [](const NodeAttrs&, DTypeVector* in, DTypeVector* out) {
                              (*out)[0] = DType::kInt64;
                              return (*in)[0] != DType::kUnknown;
                            })
      .set_attr<FGradient>("FGradient", MakeZeroGradNodes);
  OpRegistry::global()
      .register_op("_np_searchsorted")
      .describe("Where v's elements would go in the sorted 1-d a to keep it sorted (NaN last).")
      .set_num_inputs(2)
      .add_argument("a", "NDArray", "Sorted 1-d array.")
      .add_argument("v", "NDArray", "Values to place.")
      .set_params<SearchsortedParam>()
      .set_attr<FInferShape>("FInferShape",
                             [](const NodeAttrs& attrs, ShapeVector* in, ShapeVector* out) {
                               if (!(*in)[0].is_known() || !(*in)[1].is_known()) return false;
                               if ((*in)[0].ndim() != 1)
                                 value_error("[", op_name(attrs), "] a must be 1-d, got shape ",
                                             (*in)[0].str());
                               assign_shape(attrs, &(*out)[0], (*in)[1], "output", 0);
                               return true;
                             })
      .set_attr<FInferType>("FInferType",
                            [](const NodeAttrs&, DTypeVector* in, DTypeVector* out) {
                              (*out)[0] = DType::kInt64;
                              return (*in)[0] != DType::kUnknown && (*in)[1] != DType::kUnknown;
                            })
      .set_attr<TStridedInputs>("TStridedInputs", true)
      .set_attr<FCompute>("FCompute<cpu>", searchsorted_compute)
      // A Python int out of a's range still has a place (NumPy: int8 [1, 5] puts 300 at 2).
      .set_attr<bool>("TWidensPythonInts", true)
      .set_attr<FGradient>("FGradient", MakeZeroGradNodes);
  OpRegistry::global()
      .register_op("_backward_sort")
      .describe("Backward of sort: (ograd, data) -> grad.")
      .set_num_inputs(2)
      .add_argument("ograd", "NDArray", "Gradient of the sorted output.")
      .add_argument("data", "NDArray", "Forward input.")
      .set_params<SortParam>()
      .set_attr<FInferShape>("FInferShape",
                             [](const NodeAttrs& attrs, ShapeVector* in, ShapeVector* out) {
                               if (!(*in)[1].is_known()) return false;
                               const auto& p = attrs.get<SortParam>();
                               assign_shape(attrs, &(*in)[0], sorted_shape((*in)[1], p.axis),
                                            "input (ograd)", 0);
                               assign_shape(attrs, &(*out)[0], (*in)[1], "output", 0);
                               return true;
                             })
      .set_attr<FInferType>("FInferType", FirstInputType)
      .set_attr<TIsBackward>("TIsBackward", true)
      .set_attr<TStridedInputs>("TStridedInputs", true)
      .set_attr<FCompute>("FCompute<cpu>", backward_sort_compute);
  return true;
}();

}  // namespace
}  // namespace ndx
