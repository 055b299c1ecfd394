// my_accumulate(total, x): adds x into `total` in place (setMutateInputs) and returns the new
// total's sum, as ops that update running statistics do.
#include "ndx/lib_api.h"

using namespace ndx_lib;

static int two_in(const Attrs&, int* num_in, int* num_out) {
  *num_in = 2;
  *num_out = 1;
  return 0;
}

static int scalar_out(const Attrs&, const std::vector<std::vector<int64_t>>& in,
                      std::vector<std::vector<int64_t>>& out) {
  if (in[0] != in[1]) return fail("my_accumulate: total and x must have the same shape");
  out[0] = {};
  return 0;
}

static int float32_only(const Attrs&, const std::vector<int>& in, std::vector<int>& out) {
  if (in[0] != kNDXLibFloat32 || in[1] != kNDXLibFloat32)
    return fail("my_accumulate: float32 only");
  out[0] = kNDXLibFloat32;
  return 0;
}

static int mutates_total(const Attrs&, std::vector<int>& indices) {
  indices = {0};
  return 0;
}

static int forward(const Attrs&, const std::vector<Tensor>& in, std::vector<Tensor>& out,
                   const std::vector<int>&, const OpResource&) {
  float* total = in[0].data_as<float>();  // written in place: declared with setMutateInputs
  const float* x = in[1].data_as<float>();
  float sum = 0;
  for (int64_t i = 0; i < in[0].size(); ++i) sum += (total[i] += x[i]);
  *out[0].data_as<float>() = sum;
  return 0;
}

REGISTER_OP(my_accumulate)
    .setParseAttrs(two_in)
    .setInferShape(scalar_out)
    .setInferType(float32_only)
    .setMutateInputs(mutates_total)
    .setForward(forward, "cpu");
