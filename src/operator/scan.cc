// Cumulative sums and products along an axis (cumsum, cumprod; NumPy's cumulative_sum and
// cumulative_prod in Python) and their backward ops. The input is read as (outer, n, inner):
// each outer block is scanned over n with the inner elements side by side, so the inner loop
// is contiguous and the compiler vectorizes it; blocks run on the thread pool. Integers
// accumulate in 64 bits as sum does; float16 / bfloat16 accumulate in float; complex numbers
// in their own type (cumprod's gradient takes real input only).
#include <algorithm>
#include <cstdint>
#include <optional>
#include <type_traits>
#include <vector>

#include "kernel/blob.h"
#include "kernel/cast.h"
#include "kernel/functor_traits.h"
#include "kernel/math/wrap.h"
#include "kernel/parallel.h"
#include "ndx/graph.h"
#include "ndx/op_util.h"
#include "operator/kernel_util.h"

namespace ndx {
namespace {

struct ScanParam {
  std::optional<int64_t> axis;
  std::optional<DType> dtype;
  static void declare(ParamDecl<ScanParam>& d) {
    d.field("axis", &ScanParam::axis)
        .set_default(std::nullopt)
        .describe("Axis to accumulate along; None accumulates the flattened array.");
    d.field("dtype", &ScanParam::dtype)
        .set_default(std::nullopt)
        .describe("Dtype of the result and the accumulator; by default as sum's.");
  }
};

struct Blocks {
  int64_t outer = 1, n = 1, inner = 1;
};

Blocks blocks_of(const NodeAttrs& attrs, const Shape& s, const std::optional<int64_t>& axis) {
  Blocks b;
  if (!axis || s.ndim() == 0) {  // a 0-d array takes axis 0 or -1 as one element, as NumPy
    if (axis && s.ndim() == 0) normalize_axis(*axis, 1, op_name(attrs).c_str());
    b.n = s.size();
    return b;
  }
  const int ax = normalize_axis(*axis, s.ndim(), op_name(attrs).c_str());
  for (int i = 0; i < s.ndim(); ++i) {
    if (i < ax) b.outer *= s[i];
    if (i > ax) b.inner *= s[i];
  }
  b.n = s[ax];
  return b;
}

// sum's result dtype: small ints and bool widen to 64 bits.
DType scan_out_type(DType in, const std::optional<DType>& dtype) {
  if (dtype) return *dtype;
  if (in == DType::kBool) return DType::kInt64;
  if (is_integer(in) && dtype_size(in) < 8) return is_unsigned(in) ? DType::kUInt64 : DType::kInt64;
  return in;
}

template <class C, bool kProd>
inline C scan_op(C acc, C v) {
  return kProd ? kernel::wrap_mul(acc, v) : kernel::wrap_add(acc, v);
}

// Positions [k0, k1) of row r (position k is element first + k * step) continuing from acc.
template <class C, bool kProd>
C scan_positions(const C* x, C* y, int64_t first, int64_t step, int64_t k0, int64_t k1, C acc) {
  for (int64_t k = k0, j = first + k0 * step; k < k1; ++k, j += step)
    y[j] = acc = scan_op<C, kProd>(acc, x[j]);
  return acc;
}

// R rows of n (contiguous, one after the other) scanned side by side: each row's running
// value is a chain of dependent adds, so R chains in flight keep the adder busy where one row
// at a time waits on each add's latency. Every row still adds in NumPy's order. Row r runs
// r * kSkew elements ahead of row 0: rows a multiple of 4 KiB long would otherwise put all the
// loads and stores of a step at one address modulo 4 KiB, which the CPU's store-to-load
// check takes for a dependency (4K aliasing; 8x slower at 1024 float32 a row).
template <class C, bool kProd, int R>
void scan_rows(const C* x, C* y, int64_t n, bool reverse) {
  constexpr int64_t kSkew = 16;
  const int64_t first = reverse ? n - 1 : 0, step = reverse ? -1 : 1;
  if (R == 1 || n < (R - 1) * kSkew + 2) {
    for (int r = 0; r < R; ++r) {
      const C* xr = x + r * n;
      C* yr = y + r * n;
      yr[first] = xr[first];
      scan_positions<C, kProd>(xr, yr, first, step, 1, n, xr[first]);
    }
    return;
  }
  C acc[R];
  for (int r = 0; r < R; ++r) {  // row r's head: positions 0 .. r * kSkew
    y[r * n + first] = x[r * n + first];
    acc[r] = scan_positions<C, kProd>(x + r * n, y + r * n, first, step, 1, r * kSkew + 1,
                                      x[r * n + first]);
  }
  const int64_t end = n - (R - 1) * kSkew;  // the rows in step: row r at position k + r * kSkew
  for (int64_t k = 1; k < end; ++k)
    for (int r = 0; r < R; ++r) {
      const int64_t j = r * n + first + (k + r * kSkew) * step;
      y[j] = acc[r] = scan_op<C, kProd>(acc[r], x[j]);
    }
  for (int r = 0; r < R - 1; ++r)  // the tails
    scan_positions<C, kProd>(x + r * n, y + r * n, first, step, end + r * kSkew, n, acc[r]);
}

// y[j] = x[0] op ... op x[j] per lane (reverse: x[j] op ... op x[n-1]), contiguous (outer, n,
// inner) arrays of C.
template <class C, bool kProd>
void scan_blocks(const Blocks& b, const C* x, C* y, bool reverse) {
  const int64_t grain = std::max<int64_t>(1, kernel::kGrain / std::max<int64_t>(b.n * b.inner, 1));
  if (b.inner == 1 && b.n > 0) {  // along the last axis: rows side by side
    constexpr int kRows = 8;
    kernel::parallel_for(b.outer, grain, [&](int64_t begin, int64_t end) {
      int64_t o = begin;
      for (; o + kRows <= end; o += kRows)
        scan_rows<C, kProd, kRows>(x + o * b.n, y + o * b.n, b.n, reverse);
      for (; o < end; ++o) scan_rows<C, kProd, 1>(x + o * b.n, y + o * b.n, b.n, reverse);
    });
    return;
  }
  kernel::parallel_for(b.outer, grain, [&](int64_t begin, int64_t end) {
    for (int64_t o = begin; o < end; ++o) {
      const C* xo = x + o * b.n * b.inner;
      C* yo = y + o * b.n * b.inner;
      for (int64_t step = 0; step < b.n; ++step) {
        const int64_t j = reverse ? b.n - 1 - step : step;
        const C* xj = xo + j * b.inner;
        C* yj = yo + j * b.inner;
        if (step == 0) {
          std::copy(xj, xj + b.inner, yj);
          continue;
        }
        const C* prev = yo + (reverse ? j + 1 : j - 1) * b.inner;
        for (int64_t i = 0; i < b.inner; ++i) yj[i] = scan_op<C, kProd>(prev[i], xj[i]);
      }
    }
  });
}

// A contiguous copy (or view) of x in dtype t.
TBlob contiguous_in(const TBlob& x, DType t, NDArray* keep) {
  if (x.is_contiguous() && x.dtype == t) return x;
  *keep = NDArray(x.shape, t, x.device);
  kernel::copy(x, kernel::to_blob(*keep), kWriteTo);
  return kernel::to_blob(*keep);
}

// out (req) scan of x along the blocks, accumulating in out's dtype.
template <bool kProd>
void run_scan(const Blocks& b, const TBlob& x, const TBlob& out, OpReqType req, bool reverse) {
  if (req == kNullOp || out.size() == 0) return;
  const DType acc = compute_dtype(out.dtype);
  NDArray x_keep, y_keep;
  const TBlob xc = contiguous_in(x, acc, &x_keep);
  const bool direct = out.is_contiguous() && out.dtype == acc && req != kAddTo;
  if (!direct) y_keep = NDArray(out.shape, acc, out.device);
  const TBlob y = direct ? out : kernel::to_blob(y_keep);
  kernel::with_any_compute_type(acc, "cumulative", [&](auto c) {
    using C = decltype(c);
    scan_blocks<C, kProd>(b, xc.ptr<C>(), y.ptr<C>(), reverse);
  });
  if (!direct) {
    TBlob yv = y;
    yv.shape = out.shape;
    yv.strides = contiguous_strides(out.shape);
    kernel::copy(yv, out, req);
  }
}

template <bool kProd>
void scan_compute(const NodeAttrs& attrs, const OpContext&, const std::vector<TBlob>& in,
                  const std::vector<OpReqType>& req, const std::vector<TBlob>& out) {
  const auto& p = attrs.get<ScanParam>();
  run_scan<kProd>(blocks_of(attrs, in[0].shape, p.axis), in[0], out[0], req[0], false);
}

bool scan_shape(const NodeAttrs& attrs, ShapeVector* in, ShapeVector* out) {
  if (!(*in)[0].is_known()) return false;
  const auto& p = attrs.get<ScanParam>();
  blocks_of(attrs, (*in)[0], p.axis);  // validates the axis
  const bool flat = !p.axis || (*in)[0].ndim() == 0;
  assign_shape(attrs, &(*out)[0], flat ? Shape{(*in)[0].size()} : (*in)[0], "output", 0);
  return true;
}

bool scan_type(const NodeAttrs& attrs, DTypeVector* in, DTypeVector* out) {
  if ((*in)[0] == DType::kUnknown) return false;
  assign_type(attrs, &(*out)[0], scan_out_type((*in)[0], attrs.get<ScanParam>().dtype), "output",
              0);
  return true;
}

// Backward ops: (ograd, x) -> grad shaped like x. cumsum's is the reverse cumsum of ograd.
// cumprod's, exact with zeros in x: grad[i] = P[i] * S[i] with P the exclusive prefix product
// and S[i] = g[i] + x[i+1] S[i+1] (the suffix sums of g times the products after i).
// ograd as a contiguous array of `t` in x's shape (for axis None it comes flat).
TBlob ograd_like_data(const TBlob& g, const TBlob& x, DType t, NDArray* keep) {
  TBlob c = contiguous_in(g, t, keep);
  c.shape = x.shape;
  c.strides = contiguous_strides(x.shape);
  return c;
}

void cumsum_backward(const NodeAttrs& attrs, const OpContext&, const std::vector<TBlob>& in,
                     const std::vector<OpReqType>& req, const std::vector<TBlob>& out) {
  NDArray keep;
  const TBlob g = ograd_like_data(in[0], in[1], in[0].dtype, &keep);
  run_scan<false>(blocks_of(attrs, in[1].shape, attrs.get<ScanParam>().axis), g, out[0], req[0],
                  true);
}

template <class C>
void cumprod_grad_blocks(const Blocks& b, const C* g, const C* x, C* dx) {
  kernel::parallel_for(b.outer, 1, [&](int64_t begin, int64_t end) {
    std::vector<C> s(static_cast<size_t>(b.inner));
    for (int64_t o = begin; o < end; ++o) {
      const int64_t base = o * b.n * b.inner;
      for (int64_t step = 0; step < b.n; ++step) {  // S, from the end
        const int64_t j = b.n - 1 - step;
        for (int64_t i = 0; i < b.inner; ++i) {
          const int64_t k = base + j * b.inner + i;
          s[i] = step == 0 ? g[k] : g[k] + x[k + b.inner] * s[i];
          dx[k] = s[i];
        }
      }
      std::vector<C> prefix(static_cast<size_t>(b.inner), C(1));
      for (int64_t j = 0; j < b.n; ++j)  // times P
        for (int64_t i = 0; i < b.inner; ++i) {
          const int64_t k = base + j * b.inner + i;
          dx[k] *= prefix[i];
          prefix[i] *= x[k];
        }
    }
  });
}

void cumprod_backward(const NodeAttrs& attrs, const OpContext&, const std::vector<TBlob>& in,
                      const std::vector<OpReqType>& req, const std::vector<TBlob>& out) {
  if (req[0] == kNullOp || out[0].size() == 0) return;
  const auto& p = attrs.get<ScanParam>();
  const DType t = out[0].dtype;
  if (!is_float(t)) type_error("[", op_name(attrs), "] gradients need a float dtype, got ", t);
  const DType acc = compute_dtype(t);
  NDArray g_keep, x_keep;
  const TBlob g = ograd_like_data(in[0], in[1], acc, &g_keep);
  const TBlob x = contiguous_in(in[1], acc, &x_keep);
  NDArray dx(in[1].shape, acc, out[0].device);
  const Blocks b = blocks_of(attrs, in[1].shape, p.axis);
  kernel::with_compute_type(acc, "cumprod", [&](auto c) {
    using C = decltype(c);
    if constexpr (std::is_floating_point_v<C>)
      cumprod_grad_blocks<C>(b, g.ptr<C>(), x.ptr<C>(), dx.data<C>());
  });
  kernel::copy(kernel::to_blob(dx), out[0], req[0]);
}

Op& register_scan(const char* name, const char* doc, FCompute compute) {
  return OpRegistry::global()
      .register_op(name)
      .describe(doc)
      .set_num_inputs(1)
      .add_argument("a", "NDArray", "Input array.")
      .set_params<ScanParam>()
      .set_attr<FInferShape>("FInferShape", scan_shape)
      .set_attr<FInferType>("FInferType", scan_type)
      .set_attr<TStridedInputs>("TStridedInputs", true)
      .set_attr<FCompute>("FCompute<cpu>", compute);
}

Op& register_scan_backward(const char* name, FCompute compute) {
  return OpRegistry::global()
      .register_op(name)
      .describe("Backward of the scan of the same stem: (ograd, data) -> grad.")
      .set_num_inputs(2)
      .add_argument("ograd", "NDArray", "Gradient of the output.")
      .add_argument("data", "NDArray", "Forward input.")
      .set_params<ScanParam>()
      .set_attr<FInferShape>("FInferShape",
                             [](const NodeAttrs& attrs, ShapeVector* in, ShapeVector* out) {
                               if (!(*in)[1].is_known()) return false;
                               assign_shape(attrs, &(*out)[0], (*in)[1], "output", 0);
                               return true;
                             })
      .set_attr<FInferType>("FInferType", FirstInputType)
      .set_attr<TIsBackward>("TIsBackward", true)
      .set_attr<TStridedInputs>("TStridedInputs", true)
      .set_attr<FCompute>("FCompute<cpu>", compute);
}

[[maybe_unused]] const bool registered = [] {
  register_scan("_np_cumsum", "Cumulative sum along an axis (of the flattened array for None).",
                scan_compute<false>)
      .set_attr<FGradient>("FGradient", ElemwiseGradUseIn{"_backward_cumsum"});
  register_scan("_np_cumprod",
                "Cumulative product along an axis (of the flattened array for None).",
                scan_compute<true>)
      .set_attr<FGradient>("FGradient", ElemwiseGradUseIn{"_backward_cumprod"});
  // cumsum's backward (a reversed cumsum of ograd) is linear in ograd: its own gradient is
  // cumsum again, along the same axis (flattened for None, ograd's shape then), and none
  // reaches the data, read for its shape.
  register_scan_backward("_backward_cumsum", cumsum_backward)
      .set_attr<FGradient>("FGradient", [](const NodePtr& n, const std::vector<NodeEntry>& og) {
        const auto& axis = n->attrs.get<ScanParam>().axis;
        return std::vector<NodeEntry>{
            make_node("_np_cumsum", {og[0]}, {{"axis", axis ? std::to_string(*axis) : "None"}}),
            make_node("_np_zeros_like", {n->inputs[1]})};
      });
  register_scan_backward("_backward_cumprod", cumprod_backward);
  return true;
}();

}  // namespace
}  // namespace ndx
