// relu with a cpu and a gpu (CUDA) forward, as one operator library. The gpu kernel runs on the
// stream ndx hands over through the resource.
#include <algorithm>

#include "ndx/lib_api.h"

using namespace ndx_lib;

static int same_shape(const Attrs&, const std::vector<std::vector<int64_t>>& in,
                      std::vector<std::vector<int64_t>>& out) {
  out[0] = in[0];
  return 0;
}

static int float32_only(const Attrs&, const std::vector<int>& in, std::vector<int>& out) {
  if (in[0] != kNDXLibFloat32) return fail("relu_cuda supports float32");
  out[0] = in[0];
  return 0;
}

static int forward_cpu(const Attrs&, const std::vector<Tensor>& in, std::vector<Tensor>& out,
                       const std::vector<int>& req, const OpResource&) {
  const float* a = in[0].data_as<float>();
  float* b = out[0].data_as<float>();
  const int64_t n = in[0].size();
  if (req[0] == kAddTo) {
    for (int64_t i = 0; i < n; ++i) b[i] += std::max(a[i], 0.0f);
  } else if (req[0] != kNullOp) {
    for (int64_t i = 0; i < n; ++i) b[i] = std::max(a[i], 0.0f);
  }
  return 0;
}

__global__ void relu_kernel(const float* a, float* b, int64_t n, bool add) {
  int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  if (i < n) b[i] = (add ? b[i] : 0.0f) + fmaxf(a[i], 0.0f);
}

static int forward_gpu(const Attrs&, const std::vector<Tensor>& in, std::vector<Tensor>& out,
                       const std::vector<int>& req, const OpResource& res) {
  if (req[0] == kNullOp) return 0;
  const int64_t n = in[0].size();
  if (n == 0) return 0;  // a zero-size launch is not valid on gpus
  const int threads = 256;
  const int64_t blocks = (n + threads - 1) / threads;
  relu_kernel<<<static_cast<unsigned>(blocks), threads, 0,
                static_cast<cudaStream_t>(res.cuda_stream())>>>(
      in[0].data_as<float>(), out[0].data_as<float>(), n, req[0] == kAddTo);
  cudaError_t err = cudaGetLastError();
  return err == cudaSuccess ? 0 : fail(std::string("relu_cuda: ") + cudaGetErrorString(err));
}

REGISTER_OP(relu_cuda)
    .setForward(forward_cpu, "cpu")
    .setForward(forward_gpu, "gpu")
    .setInferShape(same_shape)
    .setInferType(float32_only);
