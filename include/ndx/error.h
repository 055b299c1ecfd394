// Errors: one exception type carrying a Python-facing kind. Messages name the op, the
// argument, what was expected and what came, e.g.
//   [concatenate] all inputs must have the same ndim; input 1 has ndim 3, expected 2
#pragma once
#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>

namespace ndx {

enum class ErrorKind : int {
  kValueError = 1,
  kTypeError = 2,
  kIndexError = 3,
  kNotImplementedError = 4,
  kRuntimeError = 5,
  kAxisError = 6,  // NumPy's AxisError: both a ValueError and an IndexError.
  kOverflowError = 7,
  kZeroDivisionError = 8,
  kMemoryError = 9,   // an allocation the system cannot serve
  kLinAlgError = 10,  // NumPy's numpy.linalg.LinAlgError (a ValueError): singular, no convergence
};

const char* error_kind_name(ErrorKind kind);

class Error : public std::runtime_error {
 public:
  Error(ErrorKind kind, std::string message)
      : std::runtime_error(std::move(message)), kind_(kind) {}
  ErrorKind kind() const { return kind_; }

 private:
  ErrorKind kind_;
};

namespace detail {
template <typename... Parts>
std::string concat(Parts&&... parts) {
  std::ostringstream os;
  (os << ... << std::forward<Parts>(parts));
  return os.str();
}
}  // namespace detail

// raise(ErrorKind::kValueError, "[op] argument 'axis' ...", value)
template <typename... Parts>
[[noreturn]] void raise(ErrorKind kind, Parts&&... parts) {
  throw Error(kind, detail::concat(std::forward<Parts>(parts)...));
}

template <typename... Parts>
[[noreturn]] void value_error(Parts&&... parts) {
  raise(ErrorKind::kValueError, std::forward<Parts>(parts)...);
}
template <typename... Parts>
[[noreturn]] void type_error(Parts&&... parts) {
  raise(ErrorKind::kTypeError, std::forward<Parts>(parts)...);
}
template <typename... Parts>
[[noreturn]] void index_error(Parts&&... parts) {
  raise(ErrorKind::kIndexError, std::forward<Parts>(parts)...);
}
template <typename... Parts>
[[noreturn]] void not_implemented(Parts&&... parts) {
  raise(ErrorKind::kNotImplementedError, std::forward<Parts>(parts)...);
}
template <typename... Parts>
[[noreturn]] void overflow_error(Parts&&... parts) {
  raise(ErrorKind::kOverflowError, std::forward<Parts>(parts)...);
}
template <typename... Parts>
[[noreturn]] void memory_error(Parts&&... parts) {
  raise(ErrorKind::kMemoryError, std::forward<Parts>(parts)...);
}
template <typename... Parts>
[[noreturn]] void axis_error(Parts&&... parts) {
  raise(ErrorKind::kAxisError, std::forward<Parts>(parts)...);
}

}  // namespace ndx
