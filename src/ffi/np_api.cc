// Functions of the np front end reached through the FFI (ndx._api_internal.<name>): the
// creation ops, whose NumPy signatures need dtype logic and a device.
#include "ndx/default_device.h"
#include "ndx/ffi.h"
#include "ndx/np.h"

namespace ndx {
namespace {

using OptDType = std::optional<DType>;
using OptDevice = std::optional<Device>;

NDX_REGISTER_API("_npi.zeros")
    .describe("zeros(shape, dtype, device)")
    .set_body_typed([](Shape shape, OptDType dtype, OptDevice device) {
      return np::zeros(shape, dtype, device.value_or(default_device()));
    });

NDX_REGISTER_API("_npi.ones")
    .describe("ones(shape, dtype, device)")
    .set_body_typed([](Shape shape, OptDType dtype, OptDevice device) {
      return np::ones(shape, dtype, device.value_or(default_device()));
    });

NDX_REGISTER_API("_npi.empty")
    .describe("empty(shape, dtype, device)")
    .set_body_typed([](Shape shape, OptDType dtype, OptDevice device) {
      return np::empty(shape, dtype, device.value_or(default_device()));
    });

NDX_REGISTER_API("_npi.full")
    .describe("full(shape, fill_value, dtype, device)")
    .set_body_typed([](Shape shape, double value, OptDType dtype, OptDevice device) {
      return np::full(shape, value, dtype, device.value_or(default_device()));
    });

NDX_REGISTER_API("_npi.arange")
    .describe("arange(start, stop, step, dtype, device)")
    .set_body_typed([](double start, std::optional<double> stop, double step, OptDType dtype,
                       OptDevice device) {
      const Device target = device.value_or(default_device());
      if (!target.is_cpu()) np::zeros({0}, dtype, target);  // raises for missing devices
      NDArray r =
          stop ? np::arange(start, *stop, step, dtype) : np::arange(0.0, start, step, dtype);
      return r.to(target);
    });

NDX_REGISTER_API("_npi.shape_broadcast")
    .describe("broadcast_shapes(a, b): NumPy's broadcast of two shapes")
    .set_body_typed([](Shape a, Shape b) {
      return Value(broadcast_shapes(a, b, "broadcast_shapes"));
    });

}  // namespace
}  // namespace ndx
