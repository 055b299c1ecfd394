// Declarative operator parameters. A Param struct declares each field once (type, default,
// range or enum values, doc line); from that declaration ndx parses typed values (the FFI's
// hot path, no strings), parses and prints string dicts (graph JSON, operator libraries), and
// builds the signature and docs.
//
//   struct SumParam {
//     std::optional<Shape> axis;
//     bool keepdims = false;
//     static void declare(ParamDecl<SumParam>& d) {
//       d.field("axis", &SumParam::axis).set_default(std::nullopt).describe("Axes to sum over.");
//       d.field("keepdims", &SumParam::keepdims).set_default(false).describe("Keep reduced axes.");
//     }
//   };
#pragma once
#include <any>
#include <charconv>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "ndx/device.h"
#include "ndx/dtype.h"
#include "ndx/error.h"
#include "ndx/shape.h"

namespace ndx {

class NDArray;

// A typed argument value as it crosses the FFI: no strings for numbers, tuples or dtypes.
struct Value {
  enum class Kind : uint8_t { kNone, kBool, kInt, kFloat, kStr, kDType, kDevice, kTuple };
  Kind kind = Kind::kNone;
  union {
    bool b;
    int64_t i;
    double f;
    DType dtype;
    Device device;
  };
  std::string_view str;  // kStr: valid for the duration of the call
  Shape tuple;           // kTuple

  Value() : i(0) {}
  Value(std::nullopt_t) : i(0) {}
  // Exactly bool: pointers (a C string, an array) must not turn into a bool Value.
  template <typename B, std::enable_if_t<std::is_same_v<B, bool>, int> = 0>
  Value(B v) : kind(Kind::kBool), b(v) {}
  // String literals would be ambiguous with a string dict; say Value(std::string_view("...")).
  Value(const char*) = delete;
  Value(int v) : kind(Kind::kInt), i(v) {}
  Value(int64_t v) : kind(Kind::kInt), i(v) {}
  Value(double v) : kind(Kind::kFloat), f(v) {}
  Value(std::string_view v) : kind(Kind::kStr), i(0), str(v) {}
  Value(DType v) : kind(Kind::kDType), dtype(v) {}
  Value(Device v) : kind(Kind::kDevice), device(v) {}
  Value(Shape v) : kind(Kind::kTuple), i(0), tuple(std::move(v)) {}
  Value(std::initializer_list<int64_t> v) : kind(Kind::kTuple), i(0), tuple(v) {}
  Value(const Value& o) : kind(o.kind), i(o.i), str(o.str), tuple(o.tuple) {
    if (kind == Kind::kDevice) device = o.device;
    if (kind == Kind::kFloat) f = o.f;
  }
  Value& operator=(const Value& o) {
    kind = o.kind, i = o.i, str = o.str, tuple = o.tuple;
    if (kind == Kind::kDevice) device = o.device;
    if (kind == Kind::kFloat) f = o.f;
    return *this;
  }
  const char* kind_name() const;
};

// Where a value is being parsed, for error messages: "[sum] parameter 'axis'".
struct FieldContext {
  std::string_view op;
  std::string_view field;
};

// How one C++ field type converts: name for docs, typed value, string, and back to string.
template <typename T>
struct FieldTraits;

#define NDX_DECLARE_FIELD_TRAITS(T)                                    \
  template <>                                                          \
  struct FieldTraits<T> {                                              \
    static std::string type_name();                                    \
    static T from_value(const Value& v, const FieldContext& ctx);      \
    static T from_string(std::string_view s, const FieldContext& ctx); \
    static std::string to_string(const T& v);                          \
  };
NDX_DECLARE_FIELD_TRAITS(bool)
NDX_DECLARE_FIELD_TRAITS(int64_t)
NDX_DECLARE_FIELD_TRAITS(double)
NDX_DECLARE_FIELD_TRAITS(std::string)
NDX_DECLARE_FIELD_TRAITS(DType)
NDX_DECLARE_FIELD_TRAITS(Shape)
NDX_DECLARE_FIELD_TRAITS(Device)
// A tuple of floats (MXNet's Tuple<float>: box variances, anchor sizes). The FFI carries tuples
// of ints only, so Python passes one holding floats as its text, "(0.1, 0.2)".
NDX_DECLARE_FIELD_TRAITS(std::vector<double>)
#undef NDX_DECLARE_FIELD_TRAITS

template <typename T>
struct FieldTraits<std::optional<T>> {
  static std::string type_name() { return FieldTraits<T>::type_name() + " or None"; }
  static std::optional<T> from_value(const Value& v, const FieldContext& ctx) {
    if (v.kind == Value::Kind::kNone) return std::nullopt;
    return FieldTraits<T>::from_value(v, ctx);
  }
  static std::optional<T> from_string(std::string_view s, const FieldContext& ctx) {
    if (s == "None" || s.empty()) return std::nullopt;
    return FieldTraits<T>::from_string(s, ctx);
  }
  static std::string to_string(const std::optional<T>& v) {
    return v ? FieldTraits<T>::to_string(*v) : "None";
  }
};

// One declared field, type-erased so the registry can list, parse and print it.
struct ParamField {
  std::string name;
  std::string type_name;  // "int", "float or None", "{'sum', 'mean'}"
  std::string doc;
  std::optional<std::string> default_str;  // nullopt: required
  std::vector<std::string> enum_names;
  std::optional<double> lower, upper;
  std::function<void(void* obj, const Value& v, std::string_view op)> set_from_value;
  std::function<void(void* obj, std::string_view s, std::string_view op)> set_from_string;
  std::function<std::string(const void* obj)> to_string;
  std::function<void(void* obj)> set_default;
};

// The declaration of one Param struct: its fields and how to make one.
struct ParamSchema {
  std::vector<ParamField> fields;
  std::function<std::any(const void* obj)> to_any;
  std::function<const void*(const std::any& a)> from_any;
  std::function<std::any()> make_any;                  // a P with its C++ initializers
  std::function<void*(std::any& a)> mutable_from_any;  // the P inside

  const ParamField* find(std::string_view name) const;
  // Parses a dict of strings; unknown keys, missing required fields and bad values raise.
  std::any parse(const std::map<std::string, std::string>& dict, std::string_view op) const;
  // Parses typed values given by name (the FFI path).
  std::any parse(const std::vector<std::pair<std::string_view, Value>>& kwargs,
                 std::string_view op) const;
  // Every field back to its string form.
  std::map<std::string, std::string> to_dict(const std::any& parsed) const;
  // "axis : Shape(tuple) or None, optional, default=None\n    Axes to sum over.\n..."
  std::string doc() const;
};

template <typename P, typename F>
class FieldBuilder {
 public:
  FieldBuilder(ParamField* f, F P::*member) : f_(f), member_(member) {}
  FieldBuilder& set_default(const F& value) {
    f_->default_str = FieldTraits<F>::to_string(value);
    f_->set_default = [m = member_, value](void* obj) { static_cast<P*>(obj)->*m = value; };
    return *this;
  }
  FieldBuilder& describe(std::string doc) {
    f_->doc = std::move(doc);
    return *this;
  }
  FieldBuilder& set_range(double lower, double upper) {
    f_->lower = lower, f_->upper = upper;
    return *this;
  }
  FieldBuilder& set_lower_bound(double lower) {
    f_->lower = lower;
    return *this;
  }
  // An enumerated string field: values must be one of `names`.
  FieldBuilder& set_enum(std::vector<std::string> names) {
    f_->enum_names = std::move(names);
    std::string t = "{";
    for (size_t i = 0; i < f_->enum_names.size(); ++i)
      t += (i ? ", '" : "'") + f_->enum_names[i] + "'";
    f_->type_name = t + "}";
    return *this;
  }

 private:
  ParamField* f_;
  F P::*member_;
};

template <typename P>
class ParamDecl {
 public:
  explicit ParamDecl(ParamSchema* schema) : schema_(schema) {}
  template <typename F>
  FieldBuilder<P, F> field(std::string name, F P::*member) {
    schema_->fields.emplace_back();
    ParamField* f = &schema_->fields.back();
    f->name = std::move(name);
    f->type_name = FieldTraits<F>::type_name();
    f->set_from_value = [member, fname = f->name](void* obj, const Value& v, std::string_view op) {
      static_cast<P*>(obj)->*member = FieldTraits<F>::from_value(v, {op, fname});
    };
    f->set_from_string = [member, fname = f->name](void* obj, std::string_view s,
                                                   std::string_view op) {
      static_cast<P*>(obj)->*member = FieldTraits<F>::from_string(s, {op, fname});
    };
    f->to_string = [member](const void* obj) {
      return FieldTraits<F>::to_string(static_cast<const P*>(obj)->*member);
    };
    return FieldBuilder<P, F>(f, member);
  }

 private:
  ParamSchema* schema_;
};

// The schema of P, built once from P::declare.
template <typename P>
const ParamSchema& param_schema() {
  static const ParamSchema schema = [] {
    ParamSchema s;
    s.fields.reserve(32);  // FieldBuilder keeps pointers into the vector while declaring
    ParamDecl<P> decl(&s);
    P::declare(decl);
    s.to_any = [](const void* obj) { return std::any(*static_cast<const P*>(obj)); };
    s.from_any = [](const std::any& a) -> const void* { return std::any_cast<P>(&a); };
    s.make_any = [] { return std::any(P{}); };
    s.mutable_from_any = [](std::any& a) -> void* { return std::any_cast<P>(&a); };
    if (s.fields.size() > 64)
      throw Error(ErrorKind::kRuntimeError, "a Param struct has over 64 fields");
    return s;
  }();
  return schema;
}

}  // namespace ndx
