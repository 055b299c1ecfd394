// NumPy's print options (numpy.set_printoptions) and its array2string / array_str /
// array_repr over them. NDArray::str() and repr() print with the current options.
#pragma once
#include <cstdint>
#include <string>

#include "ndx/ndarray.h"

namespace ndx {

struct PrintOptions {
  int64_t precision = 8;              // fractional digits at most (significant-1 in scientific)
  int64_t threshold = 1000;           // arrays of more elements are summarized with "..."
  int64_t edgeitems = 3;              // items kept at each end of a summarized axis
  int64_t linewidth = 75;             // characters a line before wrapping
  bool suppress = false;              // no scientific notation for small values
  std::string floatmode = "maxprec";  // fixed, unique, maxprec or maxprec_equal
  char sign = '-';                    // '-', '+' (always) or ' ' (a space for positives)
  std::string nanstr = "nan";
  std::string infstr = "inf";
};

// The process-wide options and their replacement (ValueError naming a bad field: a negative
// precision / threshold / edgeitems, a linewidth below 1, an unknown floatmode or sign).
PrintOptions print_options();
void set_print_options(const PrintOptions& options);
void check_print_options(const PrintOptions& options);

// numpy.array2string: the bracketed body, elements joined by `separator`, lines wrapped for
// a `prefix_len`-character prefix before the first line and a `suffix_len`-character suffix.
std::string array_to_string(const NDArray& a, const PrintOptions& o, const std::string& separator,
                            int64_t prefix_len, int64_t suffix_len);
std::string array_str(const NDArray& a, const PrintOptions& o);   // numpy.array_str
std::string array_repr(const NDArray& a, const PrintOptions& o);  // numpy.array_repr

}  // namespace ndx
