// relu plus uniform noise in [0, scale) from the engine's random resource, and a failing op
// that shows how errors travel back to the caller.
#include <stdexcept>
#include <string>

#include "ndx/lib_api.h"

using namespace ndx_lib;

static int same_shape(const Attrs&, const std::vector<std::vector<int64_t>>& in,
                      std::vector<std::vector<int64_t>>& out) {
  out[0] = in[0];
  return 0;
}

static int forward(const Attrs& attrs, const std::vector<Tensor>& in, std::vector<Tensor>& out,
                   const std::vector<int>& req, const OpResource& res) {
  auto it = attrs.find("scale");
  double scale = it == attrs.end() ? 0.1 : std::stod(it->second);
  const float* x = in[0].data_as<float>();
  float* y = out[0].data_as<float>();
  float* scratch =
      static_cast<float*>(res.alloc_temp(sizeof(float) * static_cast<size_t>(in[0].size() + 1)));
  for (int64_t i = 0; i < in[0].size(); ++i) {
    double u = static_cast<double>(res.next_random() >> 11) / static_cast<double>(1ULL << 53);
    scratch[i] = static_cast<float>(u * scale);
    y[i] = (x[i] > 0 ? x[i] : 0.0f) + scratch[i];
  }
  return 0;
}

static int explode(const Attrs&, const std::vector<Tensor>&, std::vector<Tensor>&,
                   const std::vector<int>&, const OpResource&) {
  throw std::runtime_error("my_explode always throws");
}

REGISTER_OP(my_noisy_relu).setForward(forward, "cpu").setInferShape(same_shape);
REGISTER_OP(my_explode).setForward(explode, "cpu").setInferShape(same_shape);
