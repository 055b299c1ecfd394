// NumPy-style printing: str(a) and repr(a) with NumPy's float rules (shortest unique digits,
// at most 8 fractional digits, scientific when the range demands it), alignment, line wrapping
// at 75 columns and summarization of arrays over 1000 elements.
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "ndx/ndarray.h"

namespace ndx {

namespace {

constexpr int kPrecision = 8;
constexpr int kThreshold = 1000;
constexpr int kEdgeItems = 3;
constexpr int kLineWidth = 75;

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

// Shortest significant digits and decimal exponent that identify v in dtype t.
void unique_digits(double v, DType t, std::string* digits, int* exp10) {
  std::string s;
  for (int d = 1; d <= 17; ++d)
    if (round_trips(v, d, t, &s)) break;
  auto e = s.find('e');
  *exp10 = std::atoi(s.c_str() + e + 1);
  digits->clear();
  for (size_t i = 0; i < e; ++i)
    if (std::isdigit(static_cast<unsigned char>(s[i]))) digits->push_back(s[i]);
  while (digits->size() > 1 && digits->back() == '0') digits->pop_back();
}

std::string nonfinite(double v) { return std::isnan(v) ? "nan" : (v > 0 ? "inf" : "-inf"); }

// Formats every float so they align: positional or scientific, as NumPy decides.
std::vector<std::string> format_floats(const std::vector<double>& vals, DType t) {
  double max_abs = 0, min_abs = INFINITY;
  bool any_finite = false;
  for (double v : vals)
    if (std::isfinite(v)) {
      any_finite = true;
      max_abs = std::max(max_abs, std::fabs(v));
      if (v != 0) min_abs = std::min(min_abs, std::fabs(v));
    }
  bool sci = any_finite && (max_abs >= 1e8 || (min_abs < 1e-4) ||
                            (min_abs != INFINITY && max_abs / min_abs > 1e3));
  if (min_abs == INFINITY) sci = sci && max_abs >= 1e8;
  std::vector<std::string> out(vals.size());
  std::string digits;
  int e10;
  if (sci) {
    int prec = 0;
    for (double v : vals)
      if (std::isfinite(v)) {
        unique_digits(v, t, &digits, &e10);
        prec = std::max(prec, std::min<int>(kPrecision, static_cast<int>(digits.size()) - 1));
      }
    size_t width = 0;
    for (size_t i = 0; i < vals.size(); ++i) {
      if (!std::isfinite(vals[i])) {
        out[i] = nonfinite(vals[i]);
      } else {
        char buf[64];
        std::snprintf(buf, sizeof buf, "%.*e", prec, vals[i]);
        out[i] = buf;
        if (prec == 0) out[i].insert(out[i].find('e'), ".");
      }
      width = std::max(width, out[i].size());
    }
    for (auto& s : out) s.insert(0, width - s.size(), ' ');
    return out;
  }
  std::vector<std::string> ints(vals.size()), fracs(vals.size());
  size_t int_w = 0, frac_w = 0;
  for (size_t i = 0; i < vals.size(); ++i) {
    double v = vals[i];
    if (!std::isfinite(v)) {
      ints[i] = nonfinite(v);
    } else {
      unique_digits(v, t, &digits, &e10);
      int frac_len = std::max(0, static_cast<int>(digits.size()) - 1 - e10);
      char buf[512];
      std::snprintf(buf, sizeof buf, "%.*f", std::min(frac_len, kPrecision), v);
      std::string s = buf;
      auto dot = s.find('.');
      if (dot == std::string::npos) {
        ints[i] = s;
      } else {
        ints[i] = s.substr(0, dot);
        fracs[i] = s.substr(dot + 1);
        while (!fracs[i].empty() && fracs[i].back() == '0') fracs[i].pop_back();
      }
      if (v == 0 && std::signbit(v)) ints[i] = "-0";
    }
    if (std::isfinite(v)) int_w = std::max(int_w, ints[i].size());
    frac_w = std::max(frac_w, fracs[i].size());
  }
  // Like NumPy, widen the integer part so nan and -inf fit the common width.
  for (size_t i = 0; i < vals.size(); ++i)
    if (!std::isfinite(vals[i]) && ints[i].size() > frac_w + 1)
      int_w = std::max(int_w, ints[i].size() - frac_w - 1);
  for (size_t i = 0; i < vals.size(); ++i) {
    std::string s;
    if (!std::isfinite(vals[i])) {
      s = ints[i];
      s.insert(0, int_w + 1 + frac_w > s.size() ? int_w + 1 + frac_w - s.size() : 0, ' ');
    } else {
      s = std::string(int_w - ints[i].size(), ' ') + ints[i] + "." + fracs[i] +
          std::string(frac_w - fracs[i].size(), ' ');
    }
    out[i] = s;
  }
  return out;
}

// NumPy's complex layout: the real parts aligned as one float column, the imaginary parts
// as another with their sign always shown, then "j"; padding of the imaginary fractions
// goes after the "j" (array([1. +2.j , 3.5-4.25j])).
std::vector<std::string> format_complex(const std::vector<complex128>& vals, DType t) {
  std::vector<double> re, im;
  for (const complex128& v : vals) {
    re.push_back(v.real());
    im.push_back(v.imag());
  }
  const DType part = real_dtype(t);
  std::vector<std::string> rs = format_floats(re, part), is = format_floats(im, part);
  // The sign always shown; then right-aligned (so the points line up) and the fraction's
  // padding moved after the "j".
  size_t width = 0;
  for (std::string& s : is) {
    const size_t b = s.find_first_not_of(' ');
    if (s[b] != '-') s.insert(b, "+");
    s = s.substr(s.find_first_not_of(' '));
    width = std::max(width, s.size());
  }
  std::vector<std::string> out(vals.size());
  for (size_t i = 0; i < vals.size(); ++i) {
    std::string s = std::string(width - is[i].size(), ' ') + is[i];
    const size_t e = s.find_last_not_of(' ') + 1;
    out[i] = rs[i] + s.substr(0, e) + "j" + s.substr(e);
  }
  return out;
}

// Python's repr of a complex, which NumPy's str of a 0-d complex array prints: (1+2j).
std::string python_complex(complex128 v, DType t) {
  auto part = [t](double x) {
    if (!std::isfinite(x)) return nonfinite(x);
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

std::vector<std::string> format_elements(const NDArray& a) {
  std::vector<std::string> out;
  if (is_complex(a.dtype())) {
    out = format_complex(a.to_vector<complex128>(), a.dtype());
  } else if (a.dtype() == DType::kBool) {
    auto v = a.to_vector<bool>();
    bool any_false = false;
    for (bool b : v) any_false |= !b;
    for (bool b : v) out.push_back(b ? (any_false ? " True" : "True") : "False");
  } else if (is_float(a.dtype())) {
    out = format_floats(a.to_vector<double>(), a.dtype());
  } else {
    std::vector<std::string> s;
    if (is_unsigned(a.dtype())) {
      for (uint64_t x : a.to_vector<uint64_t>()) s.push_back(std::to_string(x));
    } else {
      for (int64_t x : a.to_vector<int64_t>()) s.push_back(std::to_string(x));
    }
    size_t w = 0;
    for (auto& x : s) w = std::max(w, x.size());
    for (auto& x : s) out.push_back(std::string(w - x.size(), ' ') + x);
  }
  return out;
}

// Keeps the first and last kEdgeItems along every long axis.
NDArray summarize(const NDArray& a) {
  NDArray cur = a;
  for (int ax = 0; ax < a.ndim(); ++ax) {
    if (cur.shape()[ax] <= 2 * kEdgeItems) continue;
    NDArray head = cur.slice(ax, 0, kEdgeItems), tail = cur.slice(ax, -kEdgeItems, std::nullopt);
    Shape s = cur.shape();
    s[ax] = 2 * kEdgeItems;
    NDArray joined(s, cur.dtype(), cur.device());
    joined.slice(ax, 0, kEdgeItems).assign(head);
    joined.slice(ax, kEdgeItems, std::nullopt).assign(tail);
    cur = joined;
  }
  return cur;
}

struct Printer {
  const std::vector<std::string>& elems;
  const Shape& shape;
  const std::vector<bool>& summarized;  // per axis
  std::string sep;                      // " " or ", "
  size_t pos = 0;

  void print(std::string& out, int axis, int indent) {
    int n = shape.ndim();
    if (axis == n) {
      out += elems[pos++];
      return;
    }
    out += '[';
    int64_t len = shape[axis];
    if (axis == n - 1) {
      size_t line_start = out.rfind('\n') == std::string::npos ? 0 : out.rfind('\n') + 1;
      for (int64_t i = 0; i < len; ++i) {
        std::string word;
        if (summarized[axis] && i == kEdgeItems) word = "...";
        if (!word.empty()) {
          append_word(out, word, indent, line_start, i == 0);
          out += sep;
        }
        std::string e = elems[pos++];
        append_word(out, e, indent, line_start, i == 0 && word.empty());
        if (i + 1 < len) out += sep;
      }
    } else {
      std::string trimmed = sep.substr(0, sep.find_last_not_of(' ') + 1);
      std::string between =
          trimmed + std::string(n - axis - 1, '\n') + std::string(indent + 1, ' ');
      for (int64_t i = 0; i < len; ++i) {
        if (summarized[axis] && i == kEdgeItems) out += "..." + between;
        print(out, axis + 1, indent + 1);
        if (i + 1 < len) out += between;
      }
    }
    out += ']';
  }

  void append_word(std::string& out, const std::string& word, int indent, size_t& line_start,
                   bool first) {
    // Leave room for the closing brackets, as NumPy does.
    size_t closing = static_cast<size_t>(shape.ndim());
    if (!first &&
        out.size() - line_start + word.size() + closing > static_cast<size_t>(kLineWidth)) {
      while (!out.empty() && out.back() == ' ') out.pop_back();
      out += '\n';
      line_start = out.size();
      out += std::string(indent + 1, ' ');
    }
    out += word;
  }
};

std::string format_array(const NDArray& a, const std::string& sep, int indent) {
  if (a.ndim() == 0) return format_elements(a)[0];
  if (a.size() == 0) return "[]";
  bool summarize_it = a.size() > kThreshold;
  NDArray shown = summarize_it ? summarize(a) : a;
  std::vector<bool> summarized(a.ndim(), false);
  if (summarize_it)
    for (int i = 0; i < a.ndim(); ++i) summarized[i] = a.shape()[i] > 2 * kEdgeItems;
  auto elems = format_elements(shown);
  std::string out;
  Printer p{elems, shown.shape(), summarized, sep};
  p.print(out, 0, indent);
  return out;
}

bool dtype_is_implied(DType t) {
  return t == DType::kFloat64 || t == DType::kInt64 || t == DType::kBool || t == DType::kComplex128;
}

}  // namespace

std::string NDArray::str() const {
  if (device().is_gpu()) return to(cpu()).str();
  if (ndim() == 0 && is_complex(dtype_)) return python_complex(item<complex128>(), dtype_);
  if (ndim() == 0) {
    std::string s = format_elements(*this)[0];
    auto b = s.find_first_not_of(' ');
    s = s.substr(b);
    if (is_float(dtype_) && std::isfinite(item<double>()) && s.back() == '.') s += '0';
    return s;
  }
  return format_array(*this, " ", 0);
}

std::string NDArray::repr() const {
  if (device().is_gpu()) {  // the host copy's repr, naming the device as MXNet does
    std::string host = to(cpu()).repr();
    return host.substr(0, host.size() - 1) + ", device=" + device().str() + ")";
  }
  std::string body;
  if (ndim() == 0) {
    body = format_elements(*this)[0];
    body = body.substr(body.find_first_not_of(' '));
  } else {
    body = format_array(*this, ", ", 6);
  }
  std::string out = "array(" + body;
  if (size() == 0 && ndim() > 1) out += ", shape=" + shape_.str();
  if (!dtype_is_implied(dtype_) || (size() == 0 && dtype_ != DType::kFloat64))
    out += ", dtype=" + std::string(dtype_name(dtype_));
  return out + ")";
}

}  // namespace ndx
