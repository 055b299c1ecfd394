// NumPy's printing: str(a) and repr(a) as NumPy 2 writes them, under numpy.set_printoptions'
// options (ndx/print_options.h). Elements are formatted as NumPy's FloatingFormat /
// IntegerFormat / BoolFormat / ComplexFloatingFormat do (Dragon4's shortest digits, a common
// width, scientific when the values' range demands it), laid out by NumPy's _formatArray
// (hanging indents, lines wrapped at linewidth counting the prefix, "..." summaries), and
// repr adds shape= / dtype= on the last line or a new one, as NumPy's array_repr.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <string>
#include <vector>

#include "ndx/print_options.h"

namespace ndx {

namespace {

std::mutex options_mutex;
PrintOptions current_options;

// ------------------------------------------------------------------ digits of one value
// Whether `v` printed with `digits` significant digits reads back as the same value of dtype t.
bool round_trips(double v, int digits, DType t, std::string* out) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*e", digits - 1, v);
  double back = std::strtod(buf, nullptr);
  bool same;
  switch (t) {
    case DType::kFloat16:
      same = float(float16(back)) == float(float16(v));
      break;
    case DType::kBFloat16:
      same = float(bfloat16(back)) == float(bfloat16(v));
      break;
    case DType::kFloat32:
      same = static_cast<float>(back) == static_cast<float>(v);
      break;
    default:
      same = back == v;
  }
  if (same) *out = buf;
  return same;
}

// Digits of a "%.*e" text ("1.2345e+07" -> "12345", 7).
void split_exponential(const std::string& s, std::string* digits, int* exp10) {
  const auto e = s.find('e');
  *exp10 = std::atoi(s.c_str() + e + 1);
  digits->clear();
  for (size_t i = 0; i < e; ++i)
    if (std::isdigit(static_cast<unsigned char>(s[i]))) digits->push_back(s[i]);
}

// Shortest significant digits (no trailing zeros) and decimal exponent of |v| in dtype t.
void unique_digits(double v, DType t, std::string* digits, int* exp10) {
  std::string s;
  for (int d = 1; d <= 17; ++d)
    if (round_trips(std::fabs(v), d, t, &s)) break;
  split_exponential(s, digits, exp10);
  while (digits->size() > 1 && digits->back() == '0') digits->pop_back();
}

// Dragon4's trim modes: 'k' keeps trailing zeros, '.' trims them to the point ("1."), '0'
// leaves one ("1.0"), '-' drops the point too ("1").
void trim_fraction(std::string* frac, char trim, bool* keep_point) {
  *keep_point = true;
  if (trim == 'k') return;
  while (!frac->empty() && frac->back() == '0') frac->pop_back();
  if (trim == '0' && frac->empty()) *frac = "0";
  if (trim == '-' && frac->empty()) *keep_point = false;
}

struct FloatText {
  std::string int_part;  // with its sign
  std::string frac;      // after the point
  bool point = true;
  std::string exp;  // "e+05", empty in positional form
  std::string str() const { return int_part + (point ? "." : "") + frac + exp; }
};

std::string sign_of(double v, char sign) {
  if (std::signbit(v)) return "-";
  return sign == '+' ? "+" : "";
}

// How many fractional digits of the exact value Dragon4 prints (-1: the shortest unique
// digits, frac_len of them, as they are): all `precision` when not unique; the shortest cut
// at `precision`; or continued to `min_digits` past the shortest ones.
int exact_digits(bool unique, int precision, int min_digits, int frac_len) {
  if (!unique) return std::max(precision, 0);
  if (precision >= 0 && frac_len > precision) return precision;
  return min_digits > frac_len ? min_digits : -1;
}

// numpy.format_float_positional(v, precision, unique, fractional=True, trim, min_digits):
// precision < 0 is none (all of the shortest digits); digits past the shortest ones, up to
// min_digits, are the exact value's, as Dragon4 prints them.
FloatText positional(double v, DType t, int precision, bool unique, char trim, char sign,
                     int min_digits = 0) {
  FloatText out;
  std::string text;
  std::string digits;
  int e10 = 0;
  if (unique) unique_digits(v, t, &digits, &e10);
  const int frac_len = unique ? std::max(0, static_cast<int>(digits.size()) - 1 - e10) : 0;
  const int exact_at = exact_digits(unique, precision, min_digits, frac_len);
  if (exact_at >= 0) {
    char buf[512];  // the exact value rounded there (|v| < 1e8 here, or a fixed mode)
    std::snprintf(buf, sizeof buf, "%.*f", exact_at, std::fabs(v));
    text = buf;
  } else if (e10 >= 0) {  // the digits laid out: 65504 in float16 is 655e2 -> "65500"
    const auto n_int = static_cast<size_t>(e10) + 1;
    text = digits.substr(0, std::min(n_int, digits.size()));
    text.append(n_int > digits.size() ? n_int - digits.size() : 0, '0');
    text += "." + (digits.size() > n_int ? digits.substr(n_int) : "");
  } else {
    text = "0." + std::string(static_cast<size_t>(-e10 - 1), '0') + digits;
  }
  const auto dot = text.find('.');
  out.int_part = sign_of(v, sign) + text.substr(0, dot);
  out.frac = dot == std::string::npos ? "" : text.substr(dot + 1);
  trim_fraction(&out.frac, trim, &out.point);
  return out;
}

// numpy.format_float_scientific(v, precision, unique, trim, exp_digits).
FloatText scientific(double v, DType t, int precision, bool unique, char trim, char sign,
                     int exp_digits, int min_digits = 0) {
  std::string digits;
  int e10 = 0;
  if (unique) unique_digits(v, t, &digits, &e10);
  const int frac_len = static_cast<int>(digits.size()) - 1;
  const int exact_at = exact_digits(unique, precision, min_digits, frac_len);
  if (exact_at >= 0) {
    char buf[64];  // the exact value rounded to exact_at + 1 digits (the exponent may move)
    std::snprintf(buf, sizeof buf, "%.*e", exact_at, std::fabs(v));
    split_exponential(buf, &digits, &e10);
  }
  FloatText out;
  out.int_part = sign_of(v, sign) + digits.substr(0, 1);
  out.frac = digits.substr(1);
  trim_fraction(&out.frac, trim, &out.point);
  std::string e = std::to_string(std::abs(e10));
  e.insert(0,
           static_cast<size_t>(std::max(0, std::max(exp_digits, 2) - static_cast<int>(e.size()))),
           '0');
  out.exp = std::string("e") + (e10 < 0 ? "-" : "+") + e;
  return out;
}

// finfo(t).precision: the decimal digits the float type holds.
int decimal_precision(DType t) {
  switch (t) {
    case DType::kFloat16:
      return 3;
    case DType::kBFloat16:
      return 2;
    case DType::kFloat32:
      return 6;
    default:
      return 15;
  }
}

// ------------------------------------------------------------------ element formats
// NumPy's FloatingFormat: one layout for all the values of an array (or of its summary).
class FloatFormat {
 public:
  FloatFormat(const std::vector<double>& data, DType t, const PrintOptions& o, char sign)
      : t_(t), o_(o), sign_(sign) {
    precision_ = o.floatmode == "unique" ? -1 : static_cast<int>(o.precision);
    std::vector<double> finite;
    for (double v : data)
      if (std::isfinite(v)) finite.push_back(v);
    double max_val = 0, min_val = INFINITY;
    for (double v : finite)
      if (v != 0) {
        max_val = std::max(max_val, std::fabs(v));
        min_val = std::min(min_val, std::fabs(v));
      }
    if (min_val != INFINITY)  // NumPy 2.3's cutoff: 1e3 for float16, 1e6 float32, 1e8 float64
      exp_format_ = max_val >= std::pow(10.0, std::min(8, decimal_precision(t))) ||
                    (!o.suppress && (min_val < 1e-4 || max_val / min_val > 1e3));
    if (finite.empty()) {
      trim_ = '.';
    } else if (exp_format_) {
      fill_scientific(finite);
    } else {
      fill_positional(finite);
    }
    bool any_negative = false;
    for (double v : finite) any_negative |= std::signbit(v);
    if (sign_ == ' ' && !any_negative) ++pad_left_;
    if (finite.size() != data.size()) {  // room for nan / inf
      bool neg_inf = sign_ != '-';
      for (double v : data) neg_inf |= std::isinf(v) && v < 0;
      const int offset = pad_right_ + 1;
      pad_left_ = std::max({pad_left_, static_cast<int>(o.nanstr.size()) - offset,
                            static_cast<int>(o.infstr.size()) + neg_inf - offset});
    }
  }

  std::string operator()(double v) const {
    if (!std::isfinite(v)) {
      std::string s;
      if (std::isnan(v))
        s = (sign_ == '+' ? "+" : "") + o_.nanstr;
      else
        s = (v < 0 ? "-" : sign_ == '+' ? "+" : "") + o_.infstr;
      const auto width = static_cast<size_t>(pad_left_ + pad_right_ + 1);
      return std::string(width > s.size() ? width - s.size() : 0, ' ') + s;
    }
    const FloatText f =
        exp_format_ ? scientific(v, t_, precision_, unique_, trim_, sign_, exp_size_, min_digits_)
                    : positional(v, t_, precision_, unique_, trim_, sign_, min_digits_);
    std::string s = std::string(std::max(0, pad_left_ - static_cast<int>(f.int_part.size())), ' ') +
                    f.int_part + (f.point ? "." : "") + f.frac;
    if (!exp_format_ && static_cast<int>(f.frac.size()) < pad_right_)
      s.append(pad_right_ - f.frac.size(), ' ');
    return s + f.exp;
  }

 private:
  void fill_scientific(const std::vector<double>& finite) {
    const bool fixed = o_.floatmode == "fixed";
    unique_ = !fixed;
    int frac = 0, exp_len = 0;
    for (double v : finite) {
      FloatText f = scientific(v, t_, precision_, unique_, fixed ? 'k' : '.', sign_, -1);
      frac = std::max(frac, static_cast<int>(f.frac.size()));
      exp_len = std::max(exp_len, static_cast<int>(f.exp.size()) - 2);  // "e+05" -> 2
      pad_left_ = std::max(pad_left_, static_cast<int>(f.int_part.size()));
    }
    exp_size_ = exp_len;
    trim_ = 'k';
    precision_ = min_digits_ = frac;
    pad_right_ = exp_size_ + 2 + precision_;
  }

  void fill_positional(const std::vector<double>& finite) {
    const bool fixed = o_.floatmode == "fixed";
    unique_ = !fixed;
    for (double v : finite) {
      FloatText f = positional(v, t_, precision_, unique_, fixed ? 'k' : '.', sign_);
      pad_left_ = std::max(pad_left_, static_cast<int>(f.int_part.size()));
      pad_right_ = std::max(pad_right_, static_cast<int>(f.frac.size()));
    }
    if (fixed || o_.floatmode == "maxprec_equal") {
      precision_ = min_digits_ = pad_right_;
      trim_ = 'k';
    } else {
      trim_ = '.';
    }
  }

  DType t_;
  const PrintOptions& o_;
  char sign_;
  int precision_;
  bool exp_format_ = false, unique_ = true;
  char trim_ = '.';
  int pad_left_ = 0, pad_right_ = 0, exp_size_ = -1, min_digits_ = 0;
};

std::string nonfinite_word(double v) { return std::isnan(v) ? "nan" : (v > 0 ? "inf" : "-inf"); }

// NumPy's str of a float scalar (and of a 0-d float array): the shortest digits, positional
// for 1e-4 <= |v| < 1e16 (float64; 1e6 float32, 1e3 float16): "0.1", "999.0"; else
// scientific: "1e-05", "6.55e+04".
std::string scalar_float_str(double v, DType t) {
  if (!std::isfinite(v)) return nonfinite_word(v);
  const double a = std::fabs(v);
  const double cutoff = t == DType::kFloat64 ? 1e16 : std::pow(10.0, decimal_precision(t));
  if (a == 0 || (a >= 1e-4 && a < cutoff)) return positional(v, t, -1, true, '0', '-').str();
  return scientific(v, t, -1, true, '-', '-', -1).str();
}

// Python's repr of a complex, which NumPy's str of a 0-d complex array prints: (1+2j). A
// complex64's parts print as float32 scalars do (1e+06 and 1e-04 are scientific).
std::string python_complex(complex128 v, DType t) {
  auto part = [t](double x) {
    if (!std::isfinite(x)) return nonfinite_word(x);
    if (t == DType::kComplex64) {  // float32's cutoffs, no trailing ".0" (1+2j)
      const double a = std::fabs(x);
      if (a == 0 || (a >= 1e-4 && a < 1e6))
        return positional(x, DType::kFloat32, -1, true, '-', '-').str();
      return scientific(x, DType::kFloat32, -1, true, '-', '-', -1).str();
    }
    std::string digits;
    int e10;
    unique_digits(x, real_dtype(t), &digits, &e10);
    // Python's float repr: positional up to 16 integer digits, so 100 stays "100".
    int prec = static_cast<int>(digits.size());
    if (e10 >= 0 && e10 < 16) prec = std::max(prec, e10 + 1);
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.*g", prec, x);
    return std::string(buf);
  };
  std::string im = part(v.imag());
  if (im[0] != '-') im.insert(0, "+");
  if (v.real() == 0 && !std::signbit(v.real())) return im.substr(im[0] == '+') + "j";
  return "(" + part(v.real()) + im + "j)";
}

// NumPy's ComplexFloatingFormat: the real parts as one float column, the imaginary parts as
// another with their sign always shown, then "j" before the imaginary padding.
std::vector<std::string> format_complex(const std::vector<complex128>& vals, DType t,
                                        const PrintOptions& o) {
  std::vector<double> re, im;
  for (const complex128& v : vals) {
    re.push_back(v.real());
    im.push_back(v.imag());
  }
  const DType part = real_dtype(t);
  const FloatFormat real_format(re, part, o, o.sign), imag_format(im, part, o, '+');
  std::vector<std::string> out;
  for (size_t k = 0; k < vals.size(); ++k) {
    std::string i = imag_format(im[k]);
    const size_t end = i.find_last_not_of(' ') + 1;
    out.push_back(real_format(re[k]) + i.substr(0, end) + "j" + i.substr(end));
  }
  return out;
}

// NumPy's IntegerFormat: a common width, the sign option applied.
template <class I>
std::vector<std::string> format_integers(const std::vector<I>& vals, char sign) {
  std::vector<std::string> out;
  if (vals.empty()) return out;
  const auto [lo, hi] = std::minmax_element(vals.begin(), vals.end());
  if (sign == ' ' && *lo < 0) sign = '-';
  size_t width = std::to_string(*hi).size() + (*hi >= 0 && sign != '-');
  width = std::max(width, std::to_string(*lo).size());
  for (I x : vals) {
    std::string s = std::to_string(x);
    if (x >= 0 && sign != '-') s.insert(0, 1, sign);
    out.push_back(std::string(width - s.size(), ' ') + s);
  }
  return out;
}

// The formatted elements of `a` (row-major): one format fitted to all of them.
std::vector<std::string> format_elements(const NDArray& a, const PrintOptions& o) {
  if (is_complex(a.dtype())) return format_complex(a.to_vector<complex128>(), a.dtype(), o);
  if (a.dtype() == DType::kBool) {
    std::vector<std::string> out;
    const char* true_word = a.ndim() == 0 ? "True" : " True";  // NumPy 2 pads every True
    for (bool b : a.to_vector<bool>()) out.push_back(b ? true_word : "False");
    return out;
  }
  if (is_float(a.dtype())) {
    const std::vector<double> vals = a.to_vector<double>();
    const FloatFormat format(vals, a.dtype(), o, o.sign);
    std::vector<std::string> out;
    for (double v : vals) out.push_back(format(v));
    return out;
  }
  if (is_unsigned(a.dtype())) return format_integers(a.to_vector<uint64_t>(), o.sign);
  return format_integers(a.to_vector<int64_t>(), o.sign);
}

// ------------------------------------------------------------------ layout
// Keeps the first and last `edge` items along every axis longer than 2 * edge. With edge 0
// NumPy joins a[:0] and a[-0:], the whole axis: the format is fitted over every element, and
// the layout prints the last item of each axis after "...".
NDArray summarize(const NDArray& a, int64_t edge) {
  if (edge == 0) return a;
  NDArray cur = a;
  for (int ax = 0; ax < a.ndim(); ++ax) {
    if (cur.shape()[ax] <= 2 * edge) continue;
    Shape s = cur.shape();
    s[ax] = 2 * edge;
    NDArray joined(s, cur.dtype(), cur.device());
    if (edge > 0) {
      joined.slice(ax, 0, edge).assign(cur.slice(ax, 0, edge));
      joined.slice(ax, edge, std::nullopt).assign(cur.slice(ax, -edge, std::nullopt));
    }
    cur = joined;
  }
  return cur;
}

std::string rstripped(const std::string& s) {
  const auto end = s.find_last_not_of(' ');
  return end == std::string::npos ? "" : s.substr(0, end + 1);
}

// NumPy's _formatArray over the formatted elements of the shown (summarized) array.
struct Layout {
  const std::vector<std::string>& words;
  const Shape& shown;
  const std::vector<bool>& summarized;  // per axis: "..." after the first edge items
  int64_t edge;
  std::string separator;
  size_t next = 0;

  // Appends `word` to `line`, first moving the line into `s` when it would pass `width`
  // (unless the line holds only its indent: wrapping would not help).
  static void extend(std::string& s, std::string& line, const std::string& word, int64_t width,
                     const std::string& hanging) {
    const bool wrap =
        static_cast<int64_t>(line.size() + word.size()) > width && line.size() > hanging.size();
    if (wrap) {
      s += rstripped(line) + "\n";
      line = hanging;
    }
    line += word;
  }

  std::string recurse(int axis, const std::string& hanging, int64_t width) {
    const int ndim = shown.ndim();
    if (axis == ndim) return words[next++];
    const std::string next_hanging = hanging + " ";
    const int64_t next_width = width - 1;  // the closing "]"
    const int64_t len = shown[axis];
    // edge 0 (the whole axis shown): skip to the last item, "..." before it
    const int64_t first = summarized[axis] && edge == 0 && len > 0 ? len - 1 : 0;
    if (first > 0) {
      int64_t block = 1;
      for (int k = axis + 1; k < ndim; ++k) block *= shown[k];
      next += static_cast<size_t>(first * block);
    }
    const int64_t summary_at = summarized[axis] ? (edge == 0 ? first : edge) : -1;
    std::string s;
    if (axis == ndim - 1) {
      const int64_t elem_width =
          width - std::max<int64_t>(static_cast<int64_t>(rstripped(separator).size()), 1);
      std::string line = hanging;
      for (int64_t i = first; i <= len; ++i) {
        if (i == summary_at) {
          extend(s, line, "...", elem_width, hanging);
          if (i < len) line += separator;
        }
        if (i == len) break;
        extend(s, line, recurse(axis + 1, next_hanging, next_width), elem_width, hanging);
        if (i + 1 < len) line += separator;
      }
      s += line;
    } else {
      const std::string line_sep = rstripped(separator) + std::string(ndim - axis - 1, '\n');
      for (int64_t i = first; i <= len; ++i) {
        if (i == summary_at) s += hanging + "..." + (i < len ? line_sep : "");
        if (i == len) break;
        s += hanging + recurse(axis + 1, next_hanging, next_width) + (i + 1 < len ? line_sep : "");
      }
    }
    return "[" + s.substr(std::min(s.size(), hanging.size())) + "]";
  }
};

bool dtype_is_implied(DType t) {
  return t == DType::kFloat64 || t == DType::kInt64 || t == DType::kBool || t == DType::kComplex128;
}

}  // namespace

// ------------------------------------------------------------------ options
void check_print_options(const PrintOptions& o) {
  if (o.precision < 0) value_error("[set_printoptions] precision must be >= 0, got ", o.precision);
  if (o.threshold < 0) value_error("[set_printoptions] threshold must be >= 0, got ", o.threshold);
  if (o.edgeitems < 0) value_error("[set_printoptions] edgeitems must be >= 0, got ", o.edgeitems);
  if (o.linewidth < 1) value_error("[set_printoptions] linewidth must be >= 1, got ", o.linewidth);
  if (o.floatmode != "fixed" && o.floatmode != "unique" && o.floatmode != "maxprec" &&
      o.floatmode != "maxprec_equal")
    value_error(
        "[set_printoptions] floatmode option must be one of \"fixed\", \"unique\", "
        "\"maxprec\", \"maxprec_equal\", got \"",
        o.floatmode, "\"");
  if (o.sign != '-' && o.sign != '+' && o.sign != ' ')
    value_error("[set_printoptions] sign option must be one of ' ', '+', or '-', got '", o.sign,
                "'");
}

PrintOptions print_options() {
  std::lock_guard<std::mutex> lock(options_mutex);
  return current_options;
}

void set_print_options(const PrintOptions& options) {
  check_print_options(options);
  std::lock_guard<std::mutex> lock(options_mutex);
  current_options = options;
}

// ------------------------------------------------------------------ array2string / str / repr
std::string array_to_string(const NDArray& a, const PrintOptions& o, const std::string& separator,
                            int64_t prefix_len, int64_t suffix_len) {
  check_print_options(o);
  if (a.device().is_gpu())
    return array_to_string(a.to(cpu()), o, separator, prefix_len, suffix_len);
  if (a.size() == 0) return "[]";
  const bool summarize_it = a.size() > o.threshold;
  const NDArray shown = summarize_it ? summarize(a, o.edgeitems) : a;
  std::vector<bool> summarized(a.ndim(), false);
  if (summarize_it)
    for (int i = 0; i < a.ndim(); ++i) summarized[i] = a.shape()[i] > 2 * o.edgeitems;
  const std::vector<std::string> words = format_elements(shown, o);
  if (a.ndim() == 0) return words[0];
  Layout layout{words, shown.shape(), summarized, o.edgeitems, separator};
  const std::string hanging(static_cast<size_t>(std::max<int64_t>(prefix_len, 0)) + 1, ' ');
  return layout.recurse(0, hanging, o.linewidth - suffix_len);
}

std::string array_str(const NDArray& a, const PrintOptions& o) {
  if (a.ndim() == 0) {  // a 0-d array prints as its scalar: all digits, no options
    const NDArray host = a.device().is_gpu() ? a.to(cpu()) : a;
    if (is_complex(a.dtype())) return python_complex(host.item<complex128>(), a.dtype());
    if (is_float(a.dtype())) return scalar_float_str(host.item<double>(), a.dtype());
    if (a.dtype() == DType::kBool) return host.item<bool>() ? "True" : "False";
    if (is_unsigned(a.dtype())) return std::to_string(host.item<uint64_t>());
    return std::to_string(host.item<int64_t>());
  }
  return array_to_string(a, o, " ", 0, 0);
}

std::string array_repr(const NDArray& a, const PrintOptions& o) {
  const std::string prefix = "array(";
  const std::string body = array_to_string(a, o, ", ", static_cast<int64_t>(prefix.size()), 1);
  std::vector<std::string> extras;
  if ((a.size() == 0 && !(a.ndim() == 1 && a.shape()[0] == 0)) || a.size() > o.threshold)
    extras.push_back("shape=" + a.shape().str());
  if (!dtype_is_implied(a.dtype()) || a.size() == 0)
    extras.push_back("dtype=" + std::string(dtype_name(a.dtype())));
  if (a.device().is_gpu()) extras.push_back("device=" + a.device().str());
  if (extras.empty()) return prefix + body + ")";
  const std::string text = prefix + body + ",";
  std::string extra;
  for (const std::string& e : extras) extra += (extra.empty() ? "" : ", ") + e;
  extra += ")";
  const auto nl = text.rfind('\n');
  const size_t last_line = text.size() - (nl == std::string::npos ? 0 : nl + 1);
  const bool new_line = static_cast<int64_t>(last_line + extra.size() + 1) > o.linewidth;
  return text + (new_line ? "\n" + std::string(prefix.size(), ' ') : " ") + extra;
}

std::string NDArray::str() const { return array_str(*this, print_options()); }

std::string NDArray::repr() const { return array_repr(*this, print_options()); }

}  // namespace ndx
