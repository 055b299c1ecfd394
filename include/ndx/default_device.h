// The device of arrays created with no device given (np.zeros(3), np.random.uniform(...)):
// the innermost `with mx.gpu(0):` block's in this thread, else the process default
// (test_utils.set_default_device), else cpu(0) — MXNet's current_context() for creation.
#pragma once
#include <optional>

#include "ndx/device.h"

namespace ndx {

Device default_device();
// Whether default_device() is cpu(0): the only case the creation fast paths serve.
bool default_device_is_cpu0();
// This thread's `with device:` scope (nullopt when it leaves the outermost one).
void set_scope_device(std::optional<Device> device);
// The process-wide default (nullopt: cpu(0)).
void set_process_default_device(std::optional<Device> device);

}  // namespace ndx
