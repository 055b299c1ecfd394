#include "operator/kernel_util.h"

namespace ndx::kernel {

NDArray as_array(const TBlob& b) {
  // Spans the blob's elements from its lowest to its highest address.
  auto storage = Storage::wrap(b.dptr, 0, b.device, [] {});
  return NDArray(storage, 0, b.shape, b.strides, b.dtype);
}

TBlob cast_blob(const TBlob& b, DType t, std::vector<NDArray>* keep) {
  if (b.dtype == t) return b;
  keep->push_back(as_array(b).astype(t));
  const NDArray& c = keep->back();
  return TBlob{c.raw_data(), c.shape(), c.strides(), c.dtype(), c.device()};
}

void fill_output(const TBlob& out, OpReqType req, double value) {
  if (req == kNullOp || req == kAddTo) return;
  as_array(out).fill(value);
}

void write_req(const NDArray& src, const NDArray& dst, OpReqType req) {
  if (req == kNullOp) return;
  if (req != kAddTo) {
    copy_cast(src, dst);
    return;
  }
  NDArray b =
      (src.dtype() == dst.dtype() ? src : src.astype(dst.dtype())).broadcast_to(dst.shape());
  NDX_DTYPE_SWITCH(dst.dtype(), T, {
    T* d = static_cast<T*>(dst.raw_data());
    const T* p = static_cast<const T*>(b.raw_data());
    for_each_run<2>(dst.shape(), {&dst.strides(), &b.strides()}, [&](const StridedRun<2>& r) {
      for (int64_t i = 0; i < r.length; ++i)
        store(d + r.offset[0] + i * r.stride[0], kAddTo,
              static_cast<compute_t<T>>(p[r.offset[1] + i * r.stride[1]]));
    });
  });
}

namespace {
template <typename T>
void sum_to_shape_typed(const TBlob& src, const TBlob& dst, OpReqType req) {
  using A = acc_t<T>;
  std::vector<A> acc(static_cast<size_t>(dst.size()), A(0));
  Shape acc_strides = broadcast_strides(dst.shape, contiguous_strides(dst.shape), src.shape);
  const T* sp = src.ptr<T>();
  for_each_run<2>(src.shape, {&acc_strides, &src.strides}, [&](const StridedRun<2>& r) {
    for (int64_t i = 0; i < r.length; ++i) {
      A& a = acc[r.offset[0] + i * r.stride[0]];
      a = wrap_add(a, static_cast<A>(static_cast<compute_t<T>>(sp[r.offset[1] + i * r.stride[1]])));
    }
  });
  T* dp = dst.ptr<T>();
  int64_t k = 0;
  for_each_run<1>(dst.shape, {&dst.strides}, [&](const StridedRun<1>& r) {
    for (int64_t i = 0; i < r.length; ++i)
      store(dp + r.offset[0] + i * r.stride[0], req, static_cast<compute_t<T>>(acc[k++]));
  });
}
}  // namespace

void sum_to_shape(const TBlob& src, const TBlob& dst, OpReqType req) {
  if (req == kNullOp) return;
  if (src.dtype != dst.dtype)
    raise(ErrorKind::kRuntimeError, "[sum_to_shape] dtypes differ: ", src.dtype, " vs ", dst.dtype);
  NDX_DTYPE_SWITCH(dst.dtype, T, {
    if constexpr (std::is_same_v<T, bool>) {
      raise(ErrorKind::kTypeError, "[sum_to_shape] bool is not supported");
    } else {
      sum_to_shape_typed<T>(src, dst, req);
    }
  });
}

}  // namespace ndx::kernel
