// Ops that misbehave in every way a library function can, for tests/python/test_library.py:
// throwing something that is not a std::exception from each function, a shape whose size
// overflows, scratch memory the engine cannot give, and an op without infer_type.
#include <cstdint>
#include <cstring>

#include "ndx/lib_api.h"

using namespace ndx_lib;

static int same_shape(const Attrs&, const std::vector<std::vector<int64_t>>& in,
                      std::vector<std::vector<int64_t>>& out) {
  out[0] = in[0];
  return 0;
}

static int copy_forward(const Attrs&, const std::vector<Tensor>& in, std::vector<Tensor>& out,
                        const std::vector<int>&, const OpResource&) {
  const int64_t bytes = in[0].dtype == kNDXLibFloat64 ? 8 : 4;
  std::memcpy(out[0].data, in[0].data, static_cast<size_t>(in[0].size() * bytes));
  return 0;
}

static int throw_compute(const Attrs&, const std::vector<Tensor>&, std::vector<Tensor>&,
                         const std::vector<int>&, const OpResource&) {
  throw 42;
}
static int throw_shape(const Attrs&, const std::vector<std::vector<int64_t>>&,
                       std::vector<std::vector<int64_t>>&) {
  throw 42;
}
static int throw_type(const Attrs&, const std::vector<int>&, std::vector<int>&) { throw 42; }
static int throw_parse(const Attrs&, int*, int*) { throw 42; }
static int throw_mutate(const Attrs&, std::vector<int>&) { throw 42; }
static int throw_state(const Attrs&, CustomStatefulOp**) { throw 42; }

class ThrowingState : public CustomStatefulOp {
 public:
  int Forward(const std::vector<Tensor>&, std::vector<Tensor>&, const std::vector<int>&,
              const OpResource&) override {
    throw 42;
  }
};
static int make_throwing_state(const Attrs&, CustomStatefulOp** state) {
  *state = new ThrowingState();
  return 0;
}

// (2**40, 2**40): 2**80 elements, far past what any size fits in.
static int huge_shape(const Attrs&, const std::vector<std::vector<int64_t>>&,
                      std::vector<std::vector<int64_t>>& out) {
  out[0] = {int64_t{1} << 40, int64_t{1} << 40};
  return 0;
}

static int huge_temp(const Attrs&, const std::vector<Tensor>&, std::vector<Tensor>&,
                     const std::vector<int>&, const OpResource& res) {
  res.alloc_temp(size_t{1} << 61);  // throws std::bad_alloc: the engine cannot give 2 EiB
  return 0;
}

REGISTER_OP(bad_throw_forward).setForward(throw_compute, "cpu").setInferShape(same_shape);
REGISTER_OP(bad_throw_backward)
    .setForward(copy_forward, "cpu")
    .setBackward(throw_compute, "cpu")
    .setInferShape(same_shape);
REGISTER_OP(bad_throw_shape).setForward(copy_forward, "cpu").setInferShape(throw_shape);
REGISTER_OP(bad_throw_type)
    .setForward(copy_forward, "cpu")
    .setInferShape(same_shape)
    .setInferType(throw_type);
REGISTER_OP(bad_throw_parse)
    .setForward(copy_forward, "cpu")
    .setInferShape(same_shape)
    .setParseAttrs(throw_parse);
REGISTER_OP(bad_throw_mutate)
    .setForward(copy_forward, "cpu")
    .setInferShape(same_shape)
    .setMutateInputs(throw_mutate);
REGISTER_OP(bad_throw_create_state).setCreateOpState(throw_state, "cpu").setInferShape(same_shape);
REGISTER_OP(bad_throw_state_forward)
    .setCreateOpState(make_throwing_state, "cpu", false)
    .setInferShape(same_shape);
REGISTER_OP(bad_huge_shape).setForward(copy_forward, "cpu").setInferShape(huge_shape);
REGISTER_OP(bad_huge_temp).setForward(huge_temp, "cpu").setInferShape(same_shape);
// No setInferType: the output takes the input's dtype.
REGISTER_OP(bad_no_infer_type).setForward(copy_forward, "cpu").setInferShape(same_shape);
