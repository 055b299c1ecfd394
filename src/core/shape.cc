#include "ndx/shape.h"

#include <sstream>

#include "ndx/device.h"
#include "ndx/error.h"

namespace ndx {

Shape Shape::filled(int ndim, int64_t value) {
  Shape s;
  s.resize(ndim, value);
  return s;
}

std::string Shape::str() const {
  if (!is_known()) return "<unknown>";
  std::ostringstream os;
  os << '(';
  for (int i = 0; i < ndim_; ++i) os << (i ? ", " : "") << (*this)[i];
  if (ndim_ == 1) os << ',';
  os << ')';
  return os.str();
}

std::ostream& operator<<(std::ostream& os, const Shape& s) { return os << s.str(); }

Shape contiguous_strides(const Shape& shape) {
  Shape strides = Shape::filled(shape.ndim(), 1);
  int64_t acc = 1;
  for (int i = shape.ndim() - 1; i >= 0; --i) {
    strides[i] = acc;
    acc *= std::max<int64_t>(shape[i], 1);
  }
  return strides;
}

Shape broadcast_shapes(const Shape& a, const Shape& b, const char* op) {
  int n = std::max(a.ndim(), b.ndim());
  Shape out = Shape::filled(n, 1);
  for (int i = 0; i < n; ++i) {
    int ia = a.ndim() - n + i, ib = b.ndim() - n + i;
    int64_t da = ia >= 0 ? a[ia] : 1, db = ib >= 0 ? b[ib] : 1;
    if (da != db && da != 1 && db != 1)
      value_error("[", op, "] operands could not be broadcast together with shapes ", a.str(), " ",
                  b.str());
    out[i] = da == 1 ? db : da;
  }
  return out;
}

int64_t checked_size(const Shape& shape, int64_t itemsize, const char* op) {
  constexpr int64_t kMax = int64_t{1} << 62;
  int64_t n = 1;
  bool zero = false, big = false;
  for (int64_t d : shape) {  // as NumPy: zero dims do not excuse huge other dims
    if (d < 0)
      value_error("[", op, "] negative dimensions are not allowed; got shape ", shape.str());
    zero |= d == 0;
    if (!big && d != 0 && (__builtin_mul_overflow(n, d, &n) || n > kMax)) big = true;
  }
  int64_t bytes = 0;
  if (big || __builtin_mul_overflow(n, std::max<int64_t>(itemsize, 1), &bytes) || bytes > kMax)
    value_error("[", op, "] array is too big; `arr.size * arr.dtype.itemsize` is larger than the ",
                "maximum possible size (shape ", shape.str(), ")");
  return zero ? 0 : n;
}

int normalize_axis(int64_t axis, int ndim, const char* op) {
  if (axis < -ndim || axis >= ndim)
    axis_error("[", op, "] axis ", axis, " is out of bounds for array of dimension ", ndim);
  return static_cast<int>(axis < 0 ? axis + ndim : axis);
}

std::string Device::str() const {
  return std::string(is_cpu() ? "cpu(" : "gpu(") + std::to_string(id) + ")";
}
std::ostream& operator<<(std::ostream& os, const Device& d) { return os << d.str(); }

const char* error_kind_name(ErrorKind kind) {
  switch (kind) {
    case ErrorKind::kValueError:
      return "ValueError";
    case ErrorKind::kTypeError:
      return "TypeError";
    case ErrorKind::kIndexError:
      return "IndexError";
    case ErrorKind::kNotImplementedError:
      return "NotImplementedError";
    case ErrorKind::kAxisError:
      return "AxisError";
    case ErrorKind::kOverflowError:
      return "OverflowError";
    case ErrorKind::kZeroDivisionError:
      return "ZeroDivisionError";
    case ErrorKind::kMemoryError:
      return "MemoryError";
    case ErrorKind::kLinAlgError:
      return "LinAlgError";
    case ErrorKind::kRuntimeError:
      break;
  }
  return "RuntimeError";
}

}  // namespace ndx
