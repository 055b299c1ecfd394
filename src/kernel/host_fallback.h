// How a GPU kernel hands a case it does not cover (a dtype such as complex, 3-d convolution,
// a degenerate shape cuDNN refuses) back to the host: it throws HostFallback before it has
// launched or written anything. invoke() and fused programs catch it and run the op's CPU
// kernel on host copies, counted in npx.gpu_host_fallbacks(), so the op still works on GPU
// arrays. Anywhere else (a cast outside an op, say) it is the NotImplementedError it names.
#pragma once
#include <string>
#include <utility>

#include "ndx/error.h"

namespace ndx::kernel {

class HostFallback : public Error {
 public:
  explicit HostFallback(std::string message)
      : Error(ErrorKind::kNotImplementedError, std::move(message)) {}
};

template <typename... Parts>
[[noreturn]] void fall_back_to_host(Parts&&... parts) {
  throw HostFallback(detail::concat(std::forward<Parts>(parts)...));
}

}  // namespace ndx::kernel
