#include "operator/kernel_util.h"

#include "kernel/cast.h"

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
  // Adding a view of dst into dst must read it first.
  const NDArray s = src.shares_storage_with(dst) ? src.copy() : src;
  copy(to_blob(s.broadcast_to(dst.shape())), to_blob(dst), kAddTo);
}

}  // namespace ndx::kernel
