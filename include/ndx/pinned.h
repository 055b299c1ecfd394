// Page-locked (pinned) host memory for fast, asynchronous copies to a GPU; this thread's CUDA
// stream as a handle and a check of device pointers (for DLPack). Without a GPU, pin_memory raises
// ValueError (NotImplementedError in a build without CUDA) and nothing is pinned.
#pragma once
#include "ndx/ndarray.h"

namespace ndx {

// A copy of the CPU array `a` in page-locked memory (a itself if it is contiguous and already
// there). Its copies to a GPU return before they finish; the memory is not reused and, through
// ndx's ops, not written before they do.
NDArray pin_memory(const NDArray& a);
bool is_pinned(const NDArray& a);
// This thread's stream on gpu(device_id), as an opaque handle.
void* cuda_stream(int device_id);
// Whether p points into memory that gpu(device_id) can use as its own (device or managed
// memory of that GPU): a check on pointers that come from outside, as through DLPack.
bool is_gpu_memory(const void* p, int device_id);

}  // namespace ndx
