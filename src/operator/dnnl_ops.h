// oneDNN paths for the neural-network ops on the CPU. This header is plain C++ (no oneDNN
// types), so only dnnl_ops.cc pays for <oneapi/dnnl/dnnl.hpp>. The ops call these for float32
// problems when `dnnl::enabled()` and keep their own kernels as the reference (NDX_DNNL=0
// turns oneDNN off, and builds without libdnnl have only the reference).
//
// Every function takes plain row-major (NC + spatial) buffers; oneDNN's blocked layouts are
// used inside, with the reorders and the primitive cached per thread and per problem.
#pragma once
#include <cstdint>

namespace ndx::dnnl {

// Whether oneDNN is compiled in and not turned off by NDX_DNNL=0.
bool enabled();

// One convolution (or its transpose) over 1 to 3 spatial dims: data (n, c, *in), weight
// (f, c / groups, *k) for a convolution, (c, f / groups, *k) for a deconvolution, output (n,
// f, *out). dilate is MXNet's (1 = dense). pad_r may exceed pad_l (a deconvolution's adj).
struct ConvSpec {
  int nsp = 2;
  bool transposed = false;
  int64_t n = 0, c = 0, f = 0, groups = 1;
  int64_t in[3] = {1, 1, 1}, out[3] = {1, 1, 1}, k[3] = {1, 1, 1};
  int64_t stride[3] = {1, 1, 1}, dilate[3] = {1, 1, 1}, pad_l[3] = {0, 0, 0}, pad_r[3] = {0, 0, 0};
};

// Each call returns false, having written nothing, when oneDNN does not take the problem
// (zero-size arrays, a configuration it has no primitive for): the caller runs its own kernel.

// What a fused inference convolution applies to its output, in this order: a per-channel
// affine map (an inference batch_norm: y * scale[f] + shift[f]; both or neither), folded into
// the weights and the bias, then as oneDNN's sum post-op the sum with `sum` (a residual of y's
// shape, read before y is written, so it may be y's own buffer). (No relu: oneDNN's turns NaN
// into 0.)
struct ConvEpilogue {
  const float* scale = nullptr;
  const float* shift = nullptr;
  const float* sum = nullptr;
};

// y = conv(x, w) (+ b when b is not null), then the epilogue when there is one. With
// weights_repeat (inference: the same weights call after call), the weights' reorder into
// oneDNN's layout is kept while they compare equal to a copy (memcmp), saving the reorder (14%
// of a float resnet18_v1 forward).
bool conv_forward(const ConvSpec& s, const float* x, const float* w, const float* b, float* y,
                  bool weights_repeat = false, const ConvEpilogue* epilogue = nullptr);
// dx = the gradient of conv(x, w) with respect to x, given dy.
bool conv_backward_data(const ConvSpec& s, const float* dy, const float* w, float* dx);
// dw (and db when not null) = the gradients with respect to w and b, given x and dy.
bool conv_backward_weights(const ConvSpec& s, const float* x, const float* dy, float* dw,
                           float* db);
// Both backward passes (db may be null), diff_dst reordered to oneDNN's layout once for the two
// (each pass alone reorders it again). False, with nothing written, when either has no
// primitive.
bool conv_backward_both(const ConvSpec& s, const float* x, const float* dy, const float* w,
                        float* dx, float* dw, float* db);

// Pooling over 1 to 3 spatial dims of x (n, c, *in) into y (n, c, *out).
struct PoolSpec {
  int nsp = 2;
  bool max = true;
  bool include_pad = true;  // avg: divide by the whole window (padding included)
  int64_t n = 0, c = 0;
  int64_t in[3] = {1, 1, 1}, out[3] = {1, 1, 1}, k[3] = {1, 1, 1};
  int64_t stride[3] = {1, 1, 1}, pad_l[3] = {0, 0, 0}, pad_r[3] = {0, 0, 0};
};

bool pool_forward(const PoolSpec& s, const float* x, float* y);
// dx of pooling; max pooling recomputes the window maxima from x.
bool pool_backward(const PoolSpec& s, const float* x, const float* dy, float* dx);

// INT8 inference (the quantized convolution and fully connected ops of quantization.cc):
// y = saturate(round(scale[f] * (acc + bias[f]))), relu'd when asked, where acc is the exact
// int32 sum of x * w (x int8 or uint8, w int8), bias is in accumulator units (null: none) and
// scale holds one float per output channel. Rounding is to nearest, ties to even.
enum class Int8Dst { kS32, kS8, kU8 };
struct Int8Spec {
  bool src_unsigned = false;
  Int8Dst dst = Int8Dst::kS32;
  bool relu = false;
};

// A convolution (not transposed) in INT8: x (n, c, *in), w (f, c / groups, *k), y (n, f, *out).
bool conv_int8_forward(const ConvSpec& s, const Int8Spec& q, const void* x, const int8_t* w,
                       const float* bias, const float* scale, void* y);
// Pooling of int8 (or uint8) data into the same dtype. Averages round to nearest, but oneDNN
// multiplies by the window's reciprocal, so an exact half (118.5 over 56 elements) may round
// either way.
bool pool_int8_forward(const PoolSpec& s, bool src_unsigned, const void* x, void* y);
// A fully connected layer in INT8: x (n, k), w (f, k), y (n, f).
bool inner_product_int8(int64_t n, int64_t k, int64_t f, const Int8Spec& q, const void* x,
                        const int8_t* w, const float* bias, const float* scale, void* y);

}  // namespace ndx::dnnl
