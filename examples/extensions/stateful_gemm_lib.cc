// Stateful ops: my_state_gemm parses alpha once into its state and reuses it in forward and
// backward; my_call_count returns how often this use of the op has run (state persists).
#include <string>

#include "ndx/lib_api.h"

using namespace ndx_lib;

static int gemm_shape(const Attrs&, const std::vector<std::vector<int64_t>>& in,
                      std::vector<std::vector<int64_t>>& out) {
  if (in[0].size() != 2 || in[1].size() != 2 || in[0][1] != in[1][0])
    return fail("my_state_gemm: bad shapes");
  out[0] = {in[0][0], in[1][1]};
  return 0;
}

static int gemm_type(const Attrs&, const std::vector<int>& in, std::vector<int>& out) {
  if (in[0] != kNDXLibFloat32 || in[1] != kNDXLibFloat32)
    return fail("my_state_gemm: float32 only");
  out[0] = kNDXLibFloat32;
  return 0;
}

static int two_inputs(const Attrs&, int* num_in, int* num_out) {
  *num_in = 2;
  *num_out = 1;
  return 0;
}

static void gemm(const float* a, const float* b, float* c, int64_t m, int64_t k, int64_t n, bool ta,
                 bool tb, float alpha, int req) {
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      float s = 0;
      for (int64_t p = 0; p < k; ++p)
        s += (ta ? a[p * m + i] : a[i * k + p]) * (tb ? b[j * k + p] : b[p * n + j]);
      c[i * n + j] = req == kAddTo ? c[i * n + j] + alpha * s : alpha * s;
    }
}

class StateGemm : public CustomStatefulOp {
 public:
  explicit StateGemm(float alpha) : alpha_(alpha) {}
  int Forward(const std::vector<Tensor>& in, std::vector<Tensor>& out, const std::vector<int>& req,
              const OpResource&) override {
    if (req[0] == kNullOp) return 0;
    gemm(in[0].data_as<float>(), in[1].data_as<float>(), out[0].data_as<float>(), in[0].shape[0],
         in[0].shape[1], in[1].shape[1], false, false, alpha_, req[0]);
    return 0;
  }
  // (dC, A, B, C) -> (dA, dB)
  int Backward(const std::vector<Tensor>& in, std::vector<Tensor>& out, const std::vector<int>& req,
               const OpResource&) override {
    const Tensor &dc = in[0], &a = in[1], &b = in[2];
    int64_t m = a.shape[0], k = a.shape[1], n = b.shape[1];
    if (req[0] != kNullOp)
      gemm(dc.data_as<float>(), b.data_as<float>(), out[0].data_as<float>(), m, n, k, false, true,
           alpha_, req[0]);
    if (req[1] != kNullOp)
      gemm(a.data_as<float>(), dc.data_as<float>(), out[1].data_as<float>(), k, m, n, true, false,
           alpha_, req[1]);
    return 0;
  }

 private:
  float alpha_;
};

static int create_gemm(const Attrs& attrs, CustomStatefulOp** state) {
  auto it = attrs.find("alpha");
  float alpha = 1.0f;
  if (it != attrs.end()) {
    try {
      alpha = std::stof(it->second);
    } catch (...) {
      return fail("my_state_gemm: alpha must be a number, got '" + it->second + "'");
    }
  }
  *state = new StateGemm(alpha);
  return 0;
}

class CallCount : public CustomStatefulOp {
 public:
  int Forward(const std::vector<Tensor>&, std::vector<Tensor>& out, const std::vector<int>&,
              const OpResource&) override {
    *out[0].data_as<float>() = static_cast<float>(++calls_);
    return 0;
  }

 private:
  int calls_ = 0;
};

static int scalar_shape(const Attrs&, const std::vector<std::vector<int64_t>>&,
                        std::vector<std::vector<int64_t>>& out) {
  out[0] = {};
  return 0;
}

static int float_out(const Attrs&, const std::vector<int>&, std::vector<int>& out) {
  out[0] = kNDXLibFloat32;
  return 0;
}

static int create_count(const Attrs&, CustomStatefulOp** state) {
  *state = new CallCount();
  return 0;
}

REGISTER_OP(my_state_gemm)
    .setParseAttrs(two_inputs)
    .setInferShape(gemm_shape)
    .setInferType(gemm_type)
    .setCreateOpState(create_gemm, "cpu");
REGISTER_OP(my_call_count)
    .setInferShape(scalar_shape)
    .setInferType(float_out)
    .setCreateOpState(create_count, "cpu", /*with_backward=*/false);
