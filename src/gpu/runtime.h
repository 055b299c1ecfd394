// The CUDA backend's host-side interface, free of CUDA headers: what the core (storage,
// copies, invoke) and the Python module call. A build without CUDA (NDX_CUDA off) links
// gpu/no_cuda.cc instead, where device_count() is 0 and everything else raises
// NotImplementedError; a CUDA build on a machine without a driver also reports 0 devices.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>

#include "ndx/device.h"
#include "ndx/dtype.h"

namespace ndx::cuda {

// Devices CUDA sees (0 without a build, a driver or a GPU). Never raises.
int device_count();
// Why device_count() is 0, for skip messages ("built without CUDA", the driver's error).
std::string unavailable_reason();
// Raises ValueError naming `where` unless `d` is a GPU this process can use.
void check_device(Device d, const char* where);

// Memory from the caching allocator: blocks are rounded up to size classes and kept, per
// device, for the next allocation of their class (NDX_CUDA_CACHING=0 frees them at once).
// Blocks are used on the calling thread's stream; release() is stream-ordered.
void* allocate(std::size_t bytes, int device, std::size_t* capacity);
void release(void* p, std::size_t capacity, int device);
struct MemoryInfo {
  std::size_t free = 0, total = 0;     // the device's, as cudaMemGetInfo reports
  std::size_t in_use = 0, cached = 0;  // the allocator's
};
MemoryInfo memory_info(int device);
void release_cached(int device);

// The stream kernels on this thread launch into (one non-blocking stream per device per
// thread, created by ndx), as an opaque handle: for the current device, or for `device`.
void* current_stream();
void* stream_of(int device);
// Before this thread's stream reads or writes the device block at `base` (a Storage's data()):
// if another thread's stream used the block last, this stream waits for the work that stream
// has queued so far (an event, no host wait) and the block becomes this stream's. Costs one
// atomic load while each device has had a single stream.
void use_on_this_stream(const void* base, int device);

// Page-locked host memory from a cache of cudaHostAlloc blocks (MemoryError when the system
// refuses; ValueError without a GPU). Copies from it to a device do not wait for the copy.
void* allocate_pinned(std::size_t bytes);
void release_pinned(void* p);   // the block is reused once the copies out of it are done
bool is_pinned(const void* p);  // p lies in a live page-locked block
// Whether p is device (or managed) memory of `device`.
bool is_device_memory(const void* p, int device);
// Before the host writes at p: waits for queued copies out of its page-locked block, if any.
void wait_for_host_write(const void* p);
// Makes `device` current for this thread until the guard ends.
class DeviceGuard {
 public:
  explicit DeviceGuard(int device);
  ~DeviceGuard();
  DeviceGuard(const DeviceGuard&) = delete;
  DeviceGuard& operator=(const DeviceGuard&) = delete;

 private:
  int previous_;
};

// Byte copies. Copies to the host wait for the stream; copies to a device wait for the copy
// unless the source is page-locked (allocate_pinned).
void copy_to_device(void* dst, const void* src, std::size_t bytes, int device);
void copy_to_host(void* dst, const void* src, std::size_t bytes, int device);
void copy_on_device(void* dst, const void* src, std::size_t bytes, int device);
// Waits for the device's work queued by this thread.
void synchronize(int device);
// Whether the work queued on `stream` (a current_stream() handle) has finished, without
// waiting; raises RuntimeError if it failed. (A caller with a deadline polls this.)
bool stream_done(void* stream);
// Raises RuntimeError naming `where` if the last launch failed.
void check_launch(const char* where);

// C = op(A) @ op(B) + beta * C for `batch` row-major matrices through cuBLAS: C is rows x
// cols (row stride ldc), op(A) rows x inner, op(B) inner x cols, op transposing the stored
// matrix when trans_*; lda / ldb are the stored matrices' row strides; strides between the
// batch's matrices in elements (0 repeats one). K == 0 gives beta * C.
struct GemmArgs {
  DType dtype = DType::kFloat32;  // float16 / bfloat16 / float32 / float64
  bool trans_a = false, trans_b = false;
  int64_t rows = 0, cols = 0, inner = 0, batch = 1;
  const void* a = nullptr;
  const void* b = nullptr;
  void* c = nullptr;
  int64_t lda = 0, ldb = 0, ldc = 0;
  int64_t stride_a = 0, stride_b = 0, stride_c = 0;
  double beta = 0;
};
void gemm(const GemmArgs& g, int device);

// An NCHW (volumetric: NCDHW) convolution (cross-correlation) for cuDNN; 1-d problems have
// h = kh = oh = 1, and the depth fields are read only when volumetric.
struct ConvArgs {
  DType dtype = DType::kFloat32;  // float32 / float64
  bool volumetric = false;
  int64_t n = 0, c = 0, d = 1, h = 1, w = 0, f = 0, groups = 1;
  int64_t kd = 1, kh = 1, kw = 1, sd = 1, sh = 1, sw = 1, pd = 0, ph = 0, pw = 0;
  int64_t dd = 1, dh = 1, dw = 1, od = 1, oh = 1, ow = 1;
};
// Whether cuDNN could be opened (libcudnn.so.9); without it convolutions use im2col + cuBLAS.
bool dnn_available();
// y = conv(x, w); dx = the data gradient from dy; dw = the filter gradient. All written.
void conv_forward(const ConvArgs& a, const void* x, const void* w, void* y, int device);
void conv_backward_data(const ConvArgs& a, const void* w, const void* dy, void* dx, int device);
void conv_backward_filter(const ConvArgs& a, const void* x, const void* dy, void* dw, int device);

}  // namespace ndx::cuda
