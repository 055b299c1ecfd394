// Stateful ops and engine resources through Apache MXNet 2.0's lib_api.h (as MXNet documents
// it), built unchanged against ndx's include/mxnet/lib_api.h:
//   mx_counter     y = x + n, n = how many forwards this use of the op has run (its state);
//                  the state is made by MXNet 2.0's createOpState (device, input shapes and
//                  dtypes) and checks that later inputs keep that shape; backward dx = dy and
//                  counts its calls too (attribute report="backward": y = x + backward count)
//   mx_counter_v1  the same count, its state made by MXNet 1.x's two-argument createOpState
//   mx_noise       y = x + u, u uniform in [0, scale) from OpResource::get_cpu_rand_states(),
//                  staged in OpResource::alloc_cpu memory; dx = dy
//   mx_fail_fwd    a stateful op whose Forward fails with MX_ERROR_MSG; no Backward of its own
#include <random>
#include <string>

#include "mxnet/lib_api.h"

using namespace mxnet::ext;

namespace {

typedef std::unordered_map<std::string, std::string> Attrs;

MXReturnValue one_in_one_out(const Attrs& attrs, int* num_in, int* num_out) {
  *num_in = 1;
  *num_out = 1;
  return MX_SUCCESS;
}

MXReturnValue float32_only(const Attrs& attrs, std::vector<int>* in_types,
                           std::vector<int>* out_types) {
  if (in_types->at(0) != kFloat32) {
    MX_ERROR_MSG << "float32 inputs only, got MXNet dtype " << in_types->at(0);
    return MX_FAIL;
  }
  out_types->at(0) = kFloat32;
  return MX_SUCCESS;
}

MXReturnValue same_shape(const Attrs& attrs, std::vector<std::vector<unsigned int> >* in_shapes,
                         std::vector<std::vector<unsigned int> >* out_shapes) {
  out_shapes->at(0) = in_shapes->at(0);
  return MX_SUCCESS;
}

void add_scalar(const MXTensor& in, MXTensor* out, float v) {
  const float* x = in.data<float>();
  float* y = out->data<float>();
  for (int64_t i = 0; i < in.size(); ++i) y[i] = x[i] + v;
}

class Counter : public CustomStatefulOp {
 public:
  Counter(std::vector<unsigned int> shape, bool report_backward)
      : shape_(shape), report_backward_(report_backward) {}

  MXReturnValue Forward(std::vector<MXTensor>* inputs, std::vector<MXTensor>* outputs,
                        const OpResource& res) override {
    const MXTensor& x = inputs->at(0);
    if (x.ctx.dev_type != "cpu") {
      MX_ERROR_MSG << "mx_counter runs on cpu only";
      return MX_FAIL;
    }
    std::vector<unsigned int> shape(x.shape.begin(), x.shape.end());
    if (shape != shape_) {
      MX_ERROR_MSG << "mx_counter: this state was made for inputs of " << shape_.size()
                   << " dims and sees " << shape.size();
      return MX_FAIL;
    }
    ++forwards_;
    add_scalar(x, &outputs->at(0), static_cast<float>(report_backward_ ? backwards_ : forwards_));
    return MX_SUCCESS;
  }

  // inputs: dy, x, y; outputs: dx
  MXReturnValue Backward(std::vector<MXTensor>* inputs, std::vector<MXTensor>* outputs,
                         const OpResource& res) override {
    ++backwards_;
    add_scalar(inputs->at(0), &outputs->at(0), 0.f);
    return MX_SUCCESS;
  }

 private:
  std::vector<unsigned int> shape_;
  bool report_backward_;
  int forwards_ = 0, backwards_ = 0;
};

MXReturnValue create_counter(const Attrs& attrs, const MXContext& ctx,
                             const std::vector<std::vector<unsigned int> >& in_shapes,
                             const std::vector<int> in_types, CustomStatefulOp** op_inst) {
  if (ctx.dev_type != "cpu" || in_types.at(0) != kFloat32) {
    MX_ERROR_MSG << "mx_counter: cpu float32 only";
    return MX_FAIL;
  }
  auto it = attrs.find("report");
  bool report_backward = it != attrs.end() && it->second == "backward";
  if (it != attrs.end() && it->second != "backward" && it->second != "forward") {
    MX_ERROR_MSG << "mx_counter: report must be 'forward' or 'backward', got '" << it->second
                 << "'";
    return MX_FAIL;
  }
  *op_inst = CustomStatefulOp::create<Counter>(in_shapes.at(0), report_backward);
  return MX_SUCCESS;
}

// MXNet 1.x's signature: no device, shapes or dtypes.
MXReturnValue create_counter_v1(const Attrs& attrs, CustomStatefulOp** op_inst) {
  *op_inst = new Counter(std::vector<unsigned int>(), false);
  return MX_SUCCESS;
}

MXReturnValue scalar_shape(const Attrs& attrs, std::vector<std::vector<unsigned int> >* in_shapes,
                           std::vector<std::vector<unsigned int> >* out_shapes) {
  if (!in_shapes->at(0).empty()) {
    MX_ERROR_MSG << "mx_counter_v1 takes a 0-d input";
    return MX_FAIL;
  }
  out_shapes->at(0) = in_shapes->at(0);
  return MX_SUCCESS;
}

MXReturnValue noise_parse(const Attrs& attrs, int* num_in, int* num_out) {
  auto it = attrs.find("scale");
  if (it != attrs.end()) {
    try {
      std::stof(it->second);
    } catch (...) {
      MX_ERROR_MSG << "mx_noise: scale must be a number, got '" << it->second << "'";
      return MX_FAIL;
    }
  }
  *num_in = 1;
  *num_out = 1;
  return MX_SUCCESS;
}

MXReturnValue noise_forward(const Attrs& attrs, std::vector<MXTensor>* inputs,
                            std::vector<MXTensor>* outputs, const OpResource& res) {
  float scale = attrs.count("scale") ? std::stof(attrs.at("scale")) : 1.f;
  const MXTensor& x = inputs->at(0);
  mx_cpu_rand_t* states = res.get_cpu_rand_states();
  std::uniform_real_distribution<float> uniform(0.f, scale);
  // Noise staged in the engine's temporary memory, then added.
  float* noise = static_cast<float*>(res.alloc_cpu(static_cast<int>(x.size() * sizeof(float))));
  for (int64_t i = 0; i < x.size(); ++i) noise[i] = uniform(states[i % MX_NUM_CPU_RANDOM_STATES]);
  const float* in = x.data<float>();
  float* out = outputs->at(0).data<float>();
  for (int64_t i = 0; i < x.size(); ++i) out[i] = in[i] + noise[i];
  return MX_SUCCESS;
}

MXReturnValue pass_grad(const Attrs& attrs, std::vector<MXTensor>* inputs,
                        std::vector<MXTensor>* outputs, const OpResource& res) {
  add_scalar(inputs->at(0), &outputs->at(0), 0.f);
  return MX_SUCCESS;
}

class Failing : public CustomStatefulOp {
 public:
  MXReturnValue Forward(std::vector<MXTensor>* inputs, std::vector<MXTensor>* outputs,
                        const OpResource& res) override {
    MX_ERROR_MSG << "mx_fail_fwd: this forward always fails (" << inputs->size() << " input)";
    return MX_FAIL;
  }
};

MXReturnValue create_failing(const Attrs& attrs, const MXContext& ctx,
                             const std::vector<std::vector<unsigned int> >& in_shapes,
                             const std::vector<int> in_types, CustomStatefulOp** op_inst) {
  *op_inst = new Failing();
  return MX_SUCCESS;
}

}  // namespace

REGISTER_OP(mx_counter)
    .setParseAttrs(one_in_one_out)
    .setInferType(float32_only)
    .setInferShape(same_shape)
    .setCreateOpState(create_counter, "cpu");

REGISTER_OP(mx_counter_v1)
    .setParseAttrs(one_in_one_out)
    .setInferType(float32_only)
    .setInferShape(scalar_shape)
    .setCreateOpState(create_counter_v1, "cpu");

REGISTER_OP(mx_noise)
    .setParseAttrs(noise_parse)
    .setInferType(float32_only)
    .setInferShape(same_shape)
    .setForward(noise_forward, "cpu")
    .setBackward(pass_grad, "cpu");

REGISTER_OP(mx_fail_fwd)
    .setParseAttrs(one_in_one_out)
    .setInferShape(same_shape)
    .setCreateOpState(create_failing, "cpu");

MXReturnValue initialize(int version) {
  if (version >= 10700) return MX_SUCCESS;
  MX_ERROR_MSG << "MXNet version " << version << " not supported";
  return MX_FAIL;
}
