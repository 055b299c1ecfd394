// A GEMM op with backward: C = alpha * A @ B for float32 matrices, alpha a string param.
#include <string>

#include "ndx/lib_api.h"

using namespace ndx_lib;

static int parse(const Attrs& attrs, int* num_in, int* num_out) {
  auto it = attrs.find("alpha");
  if (it != attrs.end()) {
    try {
      std::stod(it->second);
    } catch (...) {
      return fail("my_gemm: alpha must be a number, got '" + it->second + "'");
    }
  }
  *num_in = 2;
  *num_out = 1;
  return 0;
}

static double alpha_of(const Attrs& attrs) {
  auto it = attrs.find("alpha");
  return it == attrs.end() ? 1.0 : std::stod(it->second);
}

static int infer_shape(const Attrs&, const std::vector<std::vector<int64_t>>& in,
                       std::vector<std::vector<int64_t>>& out) {
  if (in[0].size() != 2 || in[1].size() != 2) return fail("my_gemm: inputs must be 2-d");
  if (in[0][1] != in[1][0])
    return fail("my_gemm: inner dimensions differ: " + std::to_string(in[0][1]) + " vs " +
                std::to_string(in[1][0]));
  out[0] = {in[0][0], in[1][1]};
  return 0;
}

static int infer_type(const Attrs&, const std::vector<int>& in, std::vector<int>& out) {
  if (in[0] != kNDXLibFloat32 || in[1] != kNDXLibFloat32) return fail("my_gemm: float32 only");
  out[0] = kNDXLibFloat32;
  return 0;
}

// c (req) alpha * op(a) @ op(b), with op a transpose when the flag is set.
static void gemm(const float* a, const float* b, float* c, int64_t m, int64_t k, int64_t n, bool ta,
                 bool tb, double alpha, int req) {
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      double s = 0;
      for (int64_t p = 0; p < k; ++p)
        s += double(ta ? a[p * m + i] : a[i * k + p]) * (tb ? b[j * k + p] : b[p * n + j]);
      float v = static_cast<float>(alpha * s);
      c[i * n + j] = req == kAddTo ? c[i * n + j] + v : v;
    }
}

static int forward(const Attrs& attrs, const std::vector<Tensor>& in, std::vector<Tensor>& out,
                   const std::vector<int>& req, const OpResource&) {
  if (req[0] == kNullOp) return 0;
  int64_t m = in[0].shape[0], k = in[0].shape[1], n = in[1].shape[1];
  gemm(in[0].data_as<float>(), in[1].data_as<float>(), out[0].data_as<float>(), m, k, n, false,
       false, alpha_of(attrs), req[0]);
  return 0;
}

// inputs: dC, A, B, C -> dA = alpha dC B^T, dB = alpha A^T dC
static int backward(const Attrs& attrs, const std::vector<Tensor>& in, std::vector<Tensor>& out,
                    const std::vector<int>& req, const OpResource&) {
  const Tensor &dc = in[0], &a = in[1], &b = in[2];
  int64_t m = a.shape[0], k = a.shape[1], n = b.shape[1];
  double alpha = alpha_of(attrs);
  if (req[0] != kNullOp)
    gemm(dc.data_as<float>(), b.data_as<float>(), out[0].data_as<float>(), m, n, k, false, true,
         alpha, req[0]);
  if (req[1] != kNullOp)
    gemm(a.data_as<float>(), dc.data_as<float>(), out[1].data_as<float>(), k, m, n, true, false,
         alpha, req[1]);
  return 0;
}

REGISTER_OP(my_gemm)
    .setParseAttrs(parse)
    .setInferShape(infer_shape)
    .setInferType(infer_type)
    .setForward(forward, "cpu")
    .setBackward(backward, "cpu");
