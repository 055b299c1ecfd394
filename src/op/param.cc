#include "ndx/param.h"

#include <charconv>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <sstream>

namespace ndx {

namespace {
[[noreturn]] void bad_value(const FieldContext& ctx, std::string_view expected,
                            std::string_view got) {
  type_error("[", ctx.op, "] parameter '", ctx.field, "' expected ", expected, ", got ", got);
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

int64_t parse_int(std::string_view s, const FieldContext& ctx) {
  s = trim(s);
  int64_t v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || p != s.data() + s.size())
    value_error("[", ctx.op, "] parameter '", ctx.field, "' expected an int, got '", s, "'");
  return v;
}
}  // namespace

const char* Value::kind_name() const {
  switch (kind) {
    case Kind::kNone:
      return "None";
    case Kind::kBool:
      return "bool";
    case Kind::kInt:
      return "int";
    case Kind::kFloat:
      return "float";
    case Kind::kStr:
      return "str";
    case Kind::kDType:
      return "dtype";
    case Kind::kDevice:
      return "device";
    case Kind::kTuple:
      return "tuple";
  }
  return "?";
}

// ---- bool ----
std::string FieldTraits<bool>::type_name() { return "boolean"; }
bool FieldTraits<bool>::from_value(const Value& v, const FieldContext& ctx) {
  if (v.kind == Value::Kind::kBool) return v.b;
  if (v.kind == Value::Kind::kInt) return v.i != 0;
  bad_value(ctx, "a boolean", v.kind_name());
}
bool FieldTraits<bool>::from_string(std::string_view s, const FieldContext& ctx) {
  s = trim(s);
  if (s == "True" || s == "true" || s == "1") return true;
  if (s == "False" || s == "false" || s == "0") return false;
  value_error("[", ctx.op, "] parameter '", ctx.field, "' expected a boolean, got '", s, "'");
}
std::string FieldTraits<bool>::to_string(const bool& v) { return v ? "True" : "False"; }

// ---- int64 ----
std::string FieldTraits<int64_t>::type_name() { return "int"; }
int64_t FieldTraits<int64_t>::from_value(const Value& v, const FieldContext& ctx) {
  if (v.kind == Value::Kind::kInt) return v.i;
  if (v.kind == Value::Kind::kBool) return v.b;
  bad_value(ctx, "an int", v.kind_name());
}
int64_t FieldTraits<int64_t>::from_string(std::string_view s, const FieldContext& ctx) {
  return parse_int(s, ctx);
}
std::string FieldTraits<int64_t>::to_string(const int64_t& v) { return std::to_string(v); }

// ---- double ----
std::string FieldTraits<double>::type_name() { return "float"; }
double FieldTraits<double>::from_value(const Value& v, const FieldContext& ctx) {
  if (v.kind == Value::Kind::kFloat) return v.f;
  if (v.kind == Value::Kind::kInt) return static_cast<double>(v.i);
  if (v.kind == Value::Kind::kBool) return v.b;
  bad_value(ctx, "a float", v.kind_name());
}
double FieldTraits<double>::from_string(std::string_view s, const FieldContext& ctx) {
  std::string str(trim(s));
  if (str == "inf") return INFINITY;
  if (str == "-inf") return -INFINITY;
  if (str == "nan") return NAN;
  char* end = nullptr;
  double v = std::strtod(str.c_str(), &end);
  if (str.empty() || end != str.c_str() + str.size())
    value_error("[", ctx.op, "] parameter '", ctx.field, "' expected a float, got '", s, "'");
  return v;
}
// The shortest text that reads back as v (to_chars): a range-checked param is printed on every
// call, and ostringstream's 17 digits cost about 3,000 instructions of an op call (a given eps
// made batch_norm 40% slower).
std::string FieldTraits<double>::to_string(const double& v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v < 0 ? "-inf" : "inf";
  char buf[32];
  const auto r = std::to_chars(buf, buf + sizeof(buf), v);
  return std::string(buf, r.ptr);
}

// ---- string ----
std::string FieldTraits<std::string>::type_name() { return "string"; }
std::string FieldTraits<std::string>::from_value(const Value& v, const FieldContext& ctx) {
  if (v.kind == Value::Kind::kStr) return std::string(v.str);
  bad_value(ctx, "a string", v.kind_name());
}
std::string FieldTraits<std::string>::from_string(std::string_view s, const FieldContext&) {
  return std::string(s);
}
std::string FieldTraits<std::string>::to_string(const std::string& v) { return v; }

// ---- DType ----
std::string FieldTraits<DType>::type_name() { return "dtype"; }
DType FieldTraits<DType>::from_value(const Value& v, const FieldContext& ctx) {
  if (v.kind == Value::Kind::kDType) {
    dtype_info(v.dtype);
    return v.dtype;
  }
  if (v.kind == Value::Kind::kStr) return from_string(v.str, ctx);
  bad_value(ctx, "a dtype", v.kind_name());
}
DType FieldTraits<DType>::from_string(std::string_view s, const FieldContext& ctx) {
  s = trim(s);
  try {
    return dtype_from_name(s);  // NumPy's spellings too ('f4', '<i8', 'double')
  } catch (const Error&) {
  }
  type_error("[", ctx.op, "] parameter '", ctx.field, "' expected a dtype name, got '", s, "'");
}
std::string FieldTraits<DType>::to_string(const DType& v) { return std::string(dtype_name(v)); }

// ---- Shape (tuple of ints) ----
std::string FieldTraits<Shape>::type_name() { return "Shape(tuple)"; }
Shape FieldTraits<Shape>::from_value(const Value& v, const FieldContext& ctx) {
  if (v.kind == Value::Kind::kTuple) return v.tuple;
  if (v.kind == Value::Kind::kInt) return Shape{v.i};
  bad_value(ctx, "a tuple of ints", v.kind_name());
}
Shape FieldTraits<Shape>::from_string(std::string_view s, const FieldContext& ctx) {
  s = trim(s);
  if (!s.empty() && (s.front() == '(' || s.front() == '[')) {
    char close = s.front() == '(' ? ')' : ']';
    if (s.back() != close)
      value_error("[", ctx.op, "] parameter '", ctx.field, "' expected a tuple, got '", s, "'");
    s = s.substr(1, s.size() - 2);
  }
  Shape out;
  while (!trim(s).empty()) {
    auto comma = s.find(',');
    std::string_view item = s.substr(0, comma);
    if (!trim(item).empty()) out.push_back(parse_int(item, ctx));
    if (comma == std::string_view::npos) break;
    s.remove_prefix(comma + 1);
  }
  return out;
}
std::string FieldTraits<Shape>::to_string(const Shape& v) { return v.str(); }

// ---- tuple of floats ----
std::string FieldTraits<std::vector<double>>::type_name() { return "tuple of floats"; }
std::vector<double> FieldTraits<std::vector<double>>::from_value(const Value& v,
                                                                 const FieldContext& ctx) {
  if (v.kind == Value::Kind::kStr) return from_string(v.str, ctx);
  if (v.kind == Value::Kind::kFloat) return {v.f};
  if (v.kind == Value::Kind::kInt) return {static_cast<double>(v.i)};
  if (v.kind == Value::Kind::kTuple) {
    std::vector<double> out;
    for (int i = 0; i < v.tuple.ndim(); ++i) out.push_back(static_cast<double>(v.tuple[i]));
    return out;
  }
  bad_value(ctx, "a tuple of floats", v.kind_name());
}
std::vector<double> FieldTraits<std::vector<double>>::from_string(std::string_view s,
                                                                  const FieldContext& ctx) {
  s = trim(s);
  if (!s.empty() && (s.front() == '(' || s.front() == '[')) {
    const char close = s.front() == '(' ? ')' : ']';
    if (s.back() != close)
      value_error("[", ctx.op, "] parameter '", ctx.field, "' expected a tuple, got '", s, "'");
    s = s.substr(1, s.size() - 2);
  }
  std::vector<double> out;
  while (!trim(s).empty()) {
    const auto comma = s.find(',');
    const std::string_view item = trim(s.substr(0, comma));
    if (!item.empty()) out.push_back(FieldTraits<double>::from_string(item, ctx));
    if (comma == std::string_view::npos) break;
    s.remove_prefix(comma + 1);
  }
  return out;
}
std::string FieldTraits<std::vector<double>>::to_string(const std::vector<double>& v) {
  std::string out = "(";
  for (size_t i = 0; i < v.size(); ++i)
    out += (i ? ", " : "") + FieldTraits<double>::to_string(v[i]);
  return out + (v.size() == 1 ? ",)" : ")");
}

// ---- Device ----
std::string FieldTraits<Device>::type_name() { return "Device"; }
Device FieldTraits<Device>::from_value(const Value& v, const FieldContext& ctx) {
  if (v.kind == Value::Kind::kDevice) return v.device;
  if (v.kind == Value::Kind::kStr) return from_string(v.str, ctx);
  bad_value(ctx, "a device", v.kind_name());
}
Device FieldTraits<Device>::from_string(std::string_view s, const FieldContext& ctx) {
  s = trim(s);
  auto open = s.find('(');
  std::string_view kind = s.substr(0, open);
  int id = 0;
  if (open != std::string_view::npos) {
    if (s.back() != ')')
      value_error("[", ctx.op, "] parameter '", ctx.field, "' expected a device, got '", s, "'");
    const int64_t parsed = parse_int(s.substr(open + 1, s.size() - open - 2), ctx);
    if (parsed < 0 || parsed > std::numeric_limits<int32_t>::max())
      value_error("[", ctx.op, "] parameter '", ctx.field, "' has a device id out of range: '", s,
                  "'");
    id = static_cast<int>(parsed);
  }
  if (kind == "cpu") return cpu(id);
  if (kind == "gpu" || kind == "cuda") return gpu(id);
  value_error("[", ctx.op, "] parameter '", ctx.field, "' expected 'cpu(i)' or 'gpu(i)', got '", s,
              "'");
}
std::string FieldTraits<Device>::to_string(const Device& v) { return v.str(); }

// ---- schema ----
const ParamField* ParamSchema::find(std::string_view name) const {
  for (const auto& f : fields)
    if (f.name == name) return &f;
  return nullptr;
}

namespace {
[[noreturn]] void unknown_param(const ParamSchema& s, std::string_view key, std::string_view op) {
  std::string names;
  for (const auto& f : s.fields) names += (names.empty() ? "" : ", ") + f.name;
  value_error("[", op, "] unknown parameter '", key,
              "'; expected one of: ", names.empty() ? "(none)" : names);
}

void check_constraints(const ParamField& f, const void* obj, std::string_view op) {
  if (f.enum_names.empty() && !f.lower && !f.upper) return;
  std::string printed = f.to_string(obj);
  if (printed == "None") return;
  if (!f.enum_names.empty()) {
    for (const auto& e : f.enum_names)
      if (e == printed) return;
    value_error("[", op, "] parameter '", f.name, "' must be one of ", f.type_name, ", got '",
                printed, "'");
  }
  double v = 0;
  std::from_chars(printed.data(), printed.data() + printed.size(), v);
  if (f.lower && v < *f.lower)
    value_error("[", op, "] parameter '", f.name, "' must be >= ", *f.lower, ", got ", printed);
  if (f.upper && v > *f.upper)
    value_error("[", op, "] parameter '", f.name, "' must be <= ", *f.upper, ", got ", printed);
}

template <typename Setter>
std::any parse_fields(const ParamSchema& s, std::string_view op, Setter&& set_given) {
  std::any parsed = s.make_any();
  void* obj = s.mutable_from_any(parsed);
  for (const auto& f : s.fields)
    if (f.set_default) f.set_default(obj);
  uint64_t given = set_given(obj);  // bit i: field i was given
  for (size_t i = 0; i < s.fields.size(); ++i) {
    bool was_given = (given >> i) & 1;
    if (!was_given && !s.fields[i].default_str)
      value_error("[", op, "] required parameter '", s.fields[i].name, "' is missing");
    if (was_given) check_constraints(s.fields[i], obj, op);
  }
  return parsed;
}
}  // namespace

std::any ParamSchema::parse(const std::map<std::string, std::string>& dict,
                            std::string_view op) const {
  return parse_fields(*this, op, [&](void* obj) {
    uint64_t given = 0;
    for (const auto& [key, value] : dict) {
      const ParamField* f = find(key);
      if (!f) unknown_param(*this, key, op);
      f->set_from_string(obj, value, op);
      given |= uint64_t{1} << (f - fields.data());
    }
    return given;
  });
}

std::any ParamSchema::parse(const std::vector<std::pair<std::string_view, Value>>& kwargs,
                            std::string_view op) const {
  return parse_fields(*this, op, [&](void* obj) {
    uint64_t given = 0;
    for (const auto& [key, value] : kwargs) {
      const ParamField* f = find(key);
      if (!f) unknown_param(*this, key, op);
      f->set_from_value(obj, value, op);
      given |= uint64_t{1} << (f - fields.data());
    }
    return given;
  });
}

std::map<std::string, std::string> ParamSchema::to_dict(const std::any& parsed) const {
  const void* obj = from_any(parsed);
  if (!obj) raise(ErrorKind::kRuntimeError, "[params] parsed value has another Param type");
  std::map<std::string, std::string> out;
  for (const auto& f : fields) out[f.name] = f.to_string(obj);
  return out;
}

std::string ParamSchema::doc() const {
  std::ostringstream os;
  for (const auto& f : fields) {
    os << f.name << " : " << f.type_name;
    if (f.default_str)
      os << ", optional, default=" << *f.default_str;
    else
      os << ", required";
    os << "\n    " << f.doc << "\n";
  }
  return os.str();
}

}  // namespace ndx
