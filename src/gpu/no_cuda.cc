// The GPU backend of a build without CUDA (NDX_CUDA=OFF or no nvcc): no devices, and every
// entry that needs one raises NotImplementedError.
#include "gpu/runtime.h"
#include "kernel/gpu.h"
#include "kernel/gpu_fused.h"
#include "ndx/error.h"

namespace ndx::cuda {
namespace {
[[noreturn]] void unavailable(const char* where) {
  not_implemented("[", where,
                  "] this build of ndx has no CUDA backend (built with NDX_CUDA=OFF "
                  "or without nvcc)");
}
}  // namespace

int device_count() { return 0; }
std::string unavailable_reason() { return "ndx was built without CUDA"; }
void check_device(Device d, const char* where) {
  if (d.is_gpu())
    not_implemented("[", where, "] ", d.str(), " is not available: this build of ndx has no CUDA ",
                    "backend (built with NDX_CUDA=OFF or without nvcc)");
}
DeviceGuard::DeviceGuard(int) : previous_(0) { unavailable("device"); }
DeviceGuard::~DeviceGuard() = default;
void* allocate(std::size_t, int device, std::size_t*) {
  check_device(gpu(device), "allocate");
  return nullptr;
}
void release(void*, std::size_t, int) {}
MemoryInfo memory_info(int) { unavailable("gpu_memory_info"); }
void release_cached(int) { unavailable("release_cached"); }
void* current_stream() { unavailable("stream"); }
void use_on_this_stream(const void*, int) {}
void* stream_of(int device) {
  check_device(gpu(device), "stream");
  return nullptr;
}
void* allocate_pinned(std::size_t) { unavailable("pin_memory"); }
void release_pinned(void*) {}
bool is_pinned(const void*) { return false; }
bool is_device_memory(const void*, int) { return false; }
void wait_for_host_write(const void*) {}
void copy_to_device(void*, const void*, std::size_t, int) { unavailable("copy"); }
void copy_to_host(void*, const void*, std::size_t, int) { unavailable("copy"); }
void copy_on_device(void*, const void*, std::size_t, int) { unavailable("copy"); }
void synchronize(int) { unavailable("synchronize"); }
bool stream_done(void*) { return true; }
void check_launch(const char*) {}
void gemm(const GemmArgs&, int) { unavailable("matmul"); }
bool dnn_available() { return false; }
void conv_forward(const ConvArgs&, const void*, const void*, void*, int) {
  unavailable("convolution");
}
void conv_backward_data(const ConvArgs&, const void*, const void*, void*, int) {
  unavailable("convolution");
}
void conv_backward_filter(const ConvArgs&, const void*, const void*, void*, int) {
  unavailable("convolution");
}

}  // namespace ndx::cuda

// The kernel engine's GPU entries (kernel/gpu.h): unreachable without GPU arrays.
namespace ndx::kernel::gpu {
void copy(const TBlob&, const TBlob&, OpReqType) { cuda::check_device(ndx::gpu(0), "copy"); }
void fill(const TBlob&, double) { cuda::check_device(ndx::gpu(0), "fill"); }
void softmax_rows(bool, const TBlob&, const TBlob&, int64_t, int64_t) {
  cuda::check_device(ndx::gpu(0), "softmax");
}
void im2col(const ConvGeom&, DType, const void*, void*, int) {
  cuda::check_device(ndx::gpu(0), "convolution");
}
void col2im(const ConvGeom&, DType, const void*, void*, int) {
  cuda::check_device(ndx::gpu(0), "convolution");
}
void pool(const ConvGeom&, int, bool, DType, const void*, void*, int) {
  cuda::check_device(ndx::gpu(0), "pooling");
}
void pool_backward(const ConvGeom&, int, bool, DType, const void*, const void*, void*, int) {
  cuda::check_device(ndx::gpu(0), "pooling");
}
void pick(const TBlob&, const int64_t*, const TBlob&, int64_t, int64_t, bool, bool) {
  cuda::check_device(ndx::gpu(0), "pick");
}
void gather(const TBlob&, const int64_t*, const TBlob&, int64_t, int64_t, int64_t, int64_t, bool) {
  cuda::check_device(ndx::gpu(0), "gather");
}
void scatter_sum(const TBlob&, const int64_t*, const int64_t*, const int64_t*, const TBlob&,
                 int64_t, int64_t, int64_t, int64_t, int64_t) {
  cuda::check_device(ndx::gpu(0), "scatter");
}
void one_hot(const int64_t*, int64_t, int64_t, double, double, const TBlob&, bool) {
  cuda::check_device(ndx::gpu(0), "one_hot");
}
void arg_reduce(const TBlob&, bool, int64_t, int64_t, int64_t, int64_t*) {
  cuda::check_device(ndx::gpu(0), "argmax");
}
void index_blocks(char*, const int64_t*, const int64_t*, int64_t, const Shape&, const Shape&,
                  int64_t, char*, bool, int) {
  cuda::check_device(ndx::gpu(0), "index");
}
void index_fill(const TBlob&, const IndexFillArgs&, bool) {
  cuda::check_device(ndx::gpu(0), "index_fill");
}
void bernoulli_scaled(const TBlob&, double, double, uint64_t) {
  cuda::check_device(ndx::gpu(0), "random");
}
int64_t row_offsets(const TBlob&, int64_t, int64_t, int64_t, int64_t*) {
  cuda::check_device(ndx::gpu(0), "index");
  return -1;
}
int64_t put_rows(const TBlob&, int64_t, char*, int64_t, const Shape&, const Shape&, int64_t,
                 const char*) {
  cuda::check_device(ndx::gpu(0), "index");
  return -1;
}
void dropout(const TBlob&, const TBlob&, const TBlob&, double, double, uint64_t) {
  cuda::check_device(ndx::gpu(0), "dropout");
}
void sort_segments(const TBlob&, int64_t, int64_t, void*, int64_t*) {
  cuda::check_device(ndx::gpu(0), "sort");
}
void normal(const TBlob&, double, double, uint64_t) { cuda::check_device(ndx::gpu(0), "random"); }
void uniform(const TBlob&, double, double, uint64_t) { cuda::check_device(ndx::gpu(0), "random"); }
}  // namespace ndx::kernel::gpu
