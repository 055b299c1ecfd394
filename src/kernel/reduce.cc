// The reduction engine's entry points that need no op: the wrapper every family calls,
// keepdims views, and sum_to_shape (the sum reducer compiled per target).
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernel/reduce.cc"
#include <hwy/foreach_target.h>  // IWYU pragma: keep

#include "kernel/reduce-inl.h"

HWY_BEFORE_NAMESPACE();
namespace ndx::kernel::HWY_NAMESPACE {

// Lanes not equal to zero, a vector at a time (a float NaN is not: True; Highway's Ne is the
// ordered compare, false for NaN, so this counts the lanes Eq finds and subtracts).
template <class T>
int64_t count_nonzero_typed(const void* xv, int64_t n) {
  using L = IntLane<T>;
  const L* x = static_cast<const L*>(xv);
  const hn::ScalableTag<L> d;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
  const auto zero = hn::Zero(d);
  int64_t count = 0, i = 0;
  for (; i + lanes <= n; i += lanes)
    count += lanes - static_cast<int64_t>(hn::CountTrue(d, hn::Eq(hn::LoadU(d, x + i), zero)));
  for (; i < n; ++i) count += x[i] != L(0);
  return count;
}

int64_t count_nonzero_range(const void* x, DType t, int64_t n) {
  switch (t) {
    case DType::kBool:
    case DType::kInt8:
    case DType::kUInt8:
      return count_nonzero_typed<uint8_t>(x, n);
    case DType::kInt16:
    case DType::kUInt16:
      return count_nonzero_typed<uint16_t>(x, n);
    case DType::kInt32:
    case DType::kUInt32:
      return count_nonzero_typed<uint32_t>(x, n);
    case DType::kInt64:
    case DType::kUInt64:
      return count_nonzero_typed<uint64_t>(x, n);
    case DType::kFloat32:
      return count_nonzero_typed<float>(x, n);
    case DType::kFloat64:
      return count_nonzero_typed<double>(x, n);
    default:
      return -1;
  }
}

}  // namespace ndx::kernel::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
#include <atomic>

#include "kernel/blob.h"
#include "kernel/dispatch.h"
#include "kernel/gpu.h"
#include "kernel/parallel.h"

namespace ndx::kernel {

void ReduceFn::operator()(const ReduceArgs& a) const {
  if (!a.out->device.is_gpu()) return (is_float(a.compute) ? cpu : cpu_nonfloat)(a);
  if (!gpu) not_implemented("[reduce] this reduction has no gpu version in this build");
  gpu(a);
}

void reduce(ReduceFn fn, const TBlob& in, const TBlob& out, OpReqType req, DType compute,
            std::optional<double> initial, FunctorArgs args) {
  if (out.ndim() != in.ndim())
    raise(ErrorKind::kRuntimeError, "[reduce] the output view must have the input's rank");
  ReduceArgs a;
  a.in = &in;
  a.out = &out;
  a.req = req;
  a.compute = compute;
  a.initial = initial;
  a.args = args;
  fn(a);
}

TBlob keepdims_view(const TBlob& out, const Shape& in, const std::vector<bool>& reduced) {
  TBlob v = out;
  v.shape = in;
  v.strides = Shape::filled(in.ndim(), 0);
  const bool keepdims = out.ndim() == in.ndim();
  for (int i = 0, j = 0; i < in.ndim(); ++i) {
    if (reduced[i]) {
      v.shape[i] = 1;
      if (keepdims) ++j;
      continue;
    }
    v.strides[i] = out.strides[j++];
  }
  return v;
}

void sum_to_shape(const TBlob& src, const TBlob& dst, OpReqType req) {
  if (req == kNullOp) return;
  if (src.dtype != dst.dtype)
    raise(ErrorKind::kRuntimeError, "[sum_to_shape] dtypes differ: ", src.dtype, " vs ", dst.dtype);
  if (src.dtype == DType::kBool) type_error("[sum_to_shape] bool is not supported");
  // dst seen with src's rank: missing leading dims and broadcast dims have size 1.
  TBlob view = dst;
  view.shape = Shape::filled(src.ndim(), 1);
  view.strides = Shape::filled(src.ndim(), 0);
  const int lead = src.ndim() - dst.ndim();
  for (int i = 0; i < dst.ndim(); ++i) {
    view.shape[lead + i] = dst.shape[i];
    view.strides[lead + i] = dst.shape[i] == 1 ? 0 : dst.strides[i];
  }
  reduce(NDX_REDUCE(SumReducer), src, view, req, src.dtype);
}

namespace {
double extremum(ReduceFn fn, const TBlob& x) {
  if (x.size() == 0) value_error("[reduce] zero-size array has no minimum or maximum");
  double result = 0;
  if (x.device.is_gpu()) {  // reduce on the device, read the one element back
    NDArray r(Shape::filled(x.ndim(), 1), x.dtype, x.device);
    reduce(fn, x, to_blob(r), kWriteTo, x.dtype);
    NDArray host = r.to(cpu()).astype(DType::kFloat64);
    return *static_cast<const double*>(host.raw_data());
  }
  NDX_DTYPE_SWITCH(x.dtype, T, {
    T value{};
    TBlob out{&value, Shape::filled(x.ndim(), 1), Shape::filled(x.ndim(), 0), x.dtype, x.device};
    reduce(fn, x, out, kWriteTo, x.dtype);
    result = static_cast<double>(static_cast<compute_t<T>>(value));
  });
  return result;
}
}  // namespace

int64_t count_nonzero_contig(const TBlob& x) {
  static const auto range = NDX_DISPATCH_FN(count_nonzero_range);
  if (x.device.is_gpu() || !x.is_contiguous()) return -1;
  if (range(nullptr, x.dtype, 0) < 0) return -1;
  const char* base = static_cast<const char*>(x.dptr);
  const int64_t item = static_cast<int64_t>(dtype_size(x.dtype));
  std::atomic<int64_t> total{0};
  parallel_for(x.size(), int64_t{1} << 16, [&](int64_t begin, int64_t end) {
    total += range(base + begin * item, x.dtype, end - begin);
  });
  return total;
}

double min_value(const TBlob& x) { return extremum(NDX_REDUCE(MinReducer), x); }
double max_value(const TBlob& x) { return extremum(NDX_REDUCE(MaxReducer), x); }

}  // namespace ndx::kernel
#endif  // HWY_ONCE
