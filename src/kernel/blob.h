// TBlob <-> NDArray: what kernels see of an array, and arrays over kernel memory.
#pragma once
#include "ndx/ndarray.h"
#include "ndx/op.h"

namespace ndx::kernel {

inline TBlob to_blob(const NDArray& a) {
  return TBlob{a.raw_data(), a.shape(), a.strides(), a.dtype(), a.device()};
}
// A non-owning NDArray over a blob (the blob's memory outlives the call).
NDArray as_array(const TBlob& b);

}  // namespace ndx::kernel
