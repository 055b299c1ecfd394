// relu for cpu as an operator library: forward, backward, shape and dtype inference.
#include <algorithm>

#include "ndx/lib_api.h"

using namespace ndx_lib;

static int same_shape(const Attrs&, const std::vector<std::vector<int64_t>>& in,
                      std::vector<std::vector<int64_t>>& out) {
  out[0] = in[0];
  return 0;
}

static int float_only(const Attrs&, const std::vector<int>& in, std::vector<int>& out) {
  if (in[0] != kNDXLibFloat32 && in[0] != kNDXLibFloat64)
    return fail("my_relu supports float32 and float64");
  out[0] = in[0];
  return 0;
}

// The loop bounds and the request type are fixed before the loops so the compiler vectorizes.
template <typename T>
static void relu(const Tensor& x, Tensor& y, int req) {
  const T* __restrict a = x.data_as<T>();
  T* __restrict b = y.data_as<T>();
  const int64_t n = x.size();
  if (req == kAddTo) {
    for (int64_t i = 0; i < n; ++i) b[i] += std::max(a[i], T(0));
  } else {
    for (int64_t i = 0; i < n; ++i) b[i] = std::max(a[i], T(0));
  }
}

static int forward(const Attrs&, const std::vector<Tensor>& in, std::vector<Tensor>& out,
                   const std::vector<int>& req, const OpResource&) {
  if (req[0] == kNullOp) return 0;
  if (in[0].dtype == kNDXLibFloat32)
    relu<float>(in[0], out[0], req[0]);
  else
    relu<double>(in[0], out[0], req[0]);
  return 0;
}

// inputs: ograd, x, y -> grad_x = ograd * (x > 0)
template <typename T>
static void relu_grad(const Tensor& g, const Tensor& x, Tensor& dx, int req) {
  const T* __restrict gp = g.data_as<T>();
  const T* __restrict xp = x.data_as<T>();
  T* __restrict d = dx.data_as<T>();
  const int64_t n = x.size();
  if (req == kAddTo) {
    for (int64_t i = 0; i < n; ++i) d[i] += xp[i] > T(0) ? gp[i] : T(0);
  } else {
    for (int64_t i = 0; i < n; ++i) d[i] = xp[i] > T(0) ? gp[i] : T(0);
  }
}

static int backward(const Attrs&, const std::vector<Tensor>& in, std::vector<Tensor>& out,
                    const std::vector<int>& req, const OpResource&) {
  if (req[0] == kNullOp) return 0;
  if (in[1].dtype == kNDXLibFloat32)
    relu_grad<float>(in[0], in[1], out[0], req[0]);
  else
    relu_grad<double>(in[0], in[1], out[0], req[0]);
  return 0;
}

REGISTER_OP(my_relu)
    .setForward(forward, "cpu")
    .setBackward(backward, "cpu")
    .setInferShape(same_shape)
    .setInferType(float_only);
