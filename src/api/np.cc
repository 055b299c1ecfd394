#include "ndx/np.h"

#include <unordered_map>

#include "ndx/imperative.h"

namespace ndx::np {

namespace {
using Kwargs = std::vector<std::pair<std::string_view, Value>>;

// Ops by name, resolved once per name: the names here are string literals, so their addresses
// are stable keys and the lookup costs a pointer hash instead of a string map under a lock.
const Op* op_named(const char* name) {
  thread_local std::unordered_map<const char*, const Op*> cache;
  auto it = cache.find(name);
  if (it == cache.end()) it = cache.emplace(name, Op::get(name)).first;
  return it->second;
}

std::vector<NDArray> call(const char* op, const std::vector<NDArray>& in, const Kwargs& kw = {},
                          InvokeOptions options = {}) {
  const Op* o = op_named(op);
  if (kw.empty()) {  // ops without params (or all defaults): attributes parsed once
    thread_local std::unordered_map<const Op*, NodeAttrs> defaults;
    auto it = defaults.find(o);
    if (it == defaults.end()) it = defaults.emplace(o, o->make_attrs()).first;
    return invoke(it->second, in, options);
  }
  return invoke(o->make_attrs(kw), in, options);
}
NDArray call1(const char* op, const std::vector<NDArray>& in, const Kwargs& kw = {},
              InvokeOptions options = {}) {
  return call(op, in, kw, options)[0];
}
Value opt(const OptDType& t) { return t ? Value(*t) : Value(); }
Value opt(const std::optional<Shape>& s) { return s ? Value(*s) : Value(); }
Value opt(const std::optional<int64_t>& v) { return v ? Value(*v) : Value(); }

NDArray create(const char* op, const Shape& shape, OptDType dtype, Device device,
               Kwargs extra = {}) {
  Kwargs kw{{"shape", Value(shape)}, {"dtype", opt(dtype)}};
  kw.insert(kw.end(), extra.begin(), extra.end());
  InvokeOptions o;
  o.device = device;
  return call1(op, {}, kw, o);
}
}  // namespace

NDArray zeros(const Shape& s, OptDType t, Device d) { return create("_npi_zeros", s, t, d); }
NDArray ones(const Shape& s, OptDType t, Device d) { return create("_npi_ones", s, t, d); }
NDArray empty(const Shape& s, OptDType t, Device d) { return create("_npi_empty", s, t, d); }
NDArray full(const Shape& s, double v, OptDType t, Device d) {
  return create("_npi_full", s, t, d, {{"fill_value", Value(v)}});
}
NDArray zeros_like(const NDArray& a) { return call1("_np_zeros_like", {a}); }
NDArray ones_like(const NDArray& a) { return call1("_np_ones_like", {a}); }

NDArray arange_int64(int64_t start, int64_t stop, int64_t step) {
  return arange(static_cast<double>(start), static_cast<double>(stop), static_cast<double>(step),
                DType::kInt64);
}
NDArray arange(double start, double stop, double step, OptDType dtype) {
  return call1("_npi_arange", {},
               {{"start", Value(start)},
                {"stop", Value(stop)},
                {"step", Value(step)},
                {"dtype", opt(dtype)}});
}
NDArray linspace(double start, double stop, int64_t num, bool endpoint, OptDType dtype) {
  return call1("_npi_linspace", {},
               {{"start", Value(start)},
                {"stop", Value(stop)},
                {"num", Value(num)},
                {"endpoint", Value(endpoint)},
                {"dtype", opt(dtype)}});
}
NDArray eye(int64_t n, std::optional<int64_t> m, int64_t k, OptDType dtype) {
  return call1("_npi_eye", {},
               {{"N", Value(n)}, {"M", opt(m)}, {"k", Value(k)}, {"dtype", opt(dtype)}});
}

#define NDX_NP_UNARY(name, op) \
  NDArray name(const NDArray& x) { return call1(op, {x}); }
NDX_NP_UNARY(negative, "_np_negative")
NDX_NP_UNARY(abs, "_np_absolute")
NDX_NP_UNARY(absolute, "_np_absolute")
NDX_NP_UNARY(sign, "_np_sign")
NDX_NP_UNARY(sqrt, "_np_sqrt")
NDX_NP_UNARY(square, "_np_square")
NDX_NP_UNARY(exp, "_np_exp")
NDX_NP_UNARY(log, "_np_log")
NDX_NP_UNARY(sin, "_np_sin")
NDX_NP_UNARY(cos, "_np_cos")
NDX_NP_UNARY(tanh, "_np_tanh")
NDX_NP_UNARY(floor, "_np_floor")
NDX_NP_UNARY(ceil, "_np_ceil")
NDX_NP_UNARY(logical_not, "_np_logical_not")
#undef NDX_NP_UNARY

#define NDX_NP_BINARY(name, op) \
  NDArray name(const NDArray& x1, const NDArray& x2) { return call1(op, {x1, x2}); }
NDX_NP_BINARY(add, "_np_add")
NDX_NP_BINARY(subtract, "_np_subtract")
NDX_NP_BINARY(multiply, "_np_multiply")
NDX_NP_BINARY(true_divide, "_np_true_divide")
NDX_NP_BINARY(divide, "_np_true_divide")
NDX_NP_BINARY(floor_divide, "_np_floor_divide")
NDX_NP_BINARY(mod, "_np_mod")
NDX_NP_BINARY(remainder, "_np_mod")
NDX_NP_BINARY(power, "_np_power")
NDX_NP_BINARY(maximum, "_np_maximum")
NDX_NP_BINARY(minimum, "_np_minimum")
NDX_NP_BINARY(equal, "_np_equal")
NDX_NP_BINARY(not_equal, "_np_not_equal")
NDX_NP_BINARY(less, "_np_less")
NDX_NP_BINARY(less_equal, "_np_less_equal")
NDX_NP_BINARY(greater, "_np_greater")
NDX_NP_BINARY(greater_equal, "_np_greater_equal")
NDX_NP_BINARY(matmul, "_np_matmul")
NDX_NP_BINARY(dot, "_np_dot")
#undef NDX_NP_BINARY

namespace {
NDArray reduce(const char* op, const NDArray& a, const std::optional<Shape>& axis, bool keepdims,
               std::optional<OptDType> dtype = std::nullopt) {
  Kwargs kw{{"axis", opt(axis)}, {"keepdims", Value(keepdims)}};
  if (dtype) kw.push_back({"dtype", opt(*dtype)});
  return call1(op, {a}, kw);
}
}  // namespace

NDArray sum(const NDArray& a, std::optional<Shape> axis, bool keepdims, OptDType dtype) {
  return reduce("_np_sum", a, axis, keepdims, dtype);
}
NDArray sum(const NDArray& a, int64_t axis, bool keepdims) { return sum(a, Shape{axis}, keepdims); }
NDArray mean(const NDArray& a, std::optional<Shape> axis, bool keepdims, OptDType dtype) {
  return reduce("_np_mean", a, axis, keepdims, dtype);
}
NDArray mean(const NDArray& a, int64_t axis, bool keepdims) {
  return mean(a, Shape{axis}, keepdims);
}
NDArray prod(const NDArray& a, std::optional<Shape> axis, bool keepdims, OptDType dtype) {
  return reduce("_np_prod", a, axis, keepdims, dtype);
}
NDArray max(const NDArray& a, std::optional<Shape> axis, bool keepdims) {
  return reduce("_np_max", a, axis, keepdims);
}
NDArray max(const NDArray& a, int64_t axis, bool keepdims) { return max(a, Shape{axis}, keepdims); }
NDArray min(const NDArray& a, std::optional<Shape> axis, bool keepdims) {
  return reduce("_np_min", a, axis, keepdims);
}
NDArray min(const NDArray& a, int64_t axis, bool keepdims) { return min(a, Shape{axis}, keepdims); }
NDArray argmax(const NDArray& a, std::optional<int64_t> axis, bool keepdims) {
  return call1("_np_argmax", {a}, {{"axis", opt(axis)}, {"keepdims", Value(keepdims)}});
}
NDArray argmin(const NDArray& a, std::optional<int64_t> axis, bool keepdims) {
  return call1("_np_argmin", {a}, {{"axis", opt(axis)}, {"keepdims", Value(keepdims)}});
}

NDArray reshape(const NDArray& a, const Shape& s) {
  return call1("_np_reshape", {a}, {{"newshape", Value(s)}});
}
NDArray transpose(const NDArray& a, std::optional<Shape> axes) {
  return call1("_np_transpose", {a}, {{"axes", opt(axes)}});
}
NDArray expand_dims(const NDArray& a, int64_t axis) {
  return call1("_np_expand_dims", {a}, {{"axis", Value(axis)}});
}
NDArray squeeze(const NDArray& a, std::optional<Shape> axis) {
  return call1("_np_squeeze", {a}, {{"axis", opt(axis)}});
}
NDArray broadcast_to(const NDArray& a, const Shape& s) {
  return call1("_np_broadcast_to", {a}, {{"shape", Value(s)}});
}
NDArray swapaxes(const NDArray& a, int64_t a1, int64_t a2) {
  return call1("_np_swapaxes", {a}, {{"axis1", Value(a1)}, {"axis2", Value(a2)}});
}
NDArray concatenate(const std::vector<NDArray>& arrays, std::optional<int64_t> axis) {
  return call1("_npi_concatenate", arrays,
               {{"num_args", Value(static_cast<int64_t>(arrays.size()))}, {"axis", opt(axis)}});
}
NDArray stack(const std::vector<NDArray>& arrays, int64_t axis) {
  return call1("_npi_stack", arrays,
               {{"num_args", Value(static_cast<int64_t>(arrays.size()))}, {"axis", Value(axis)}});
}
std::vector<NDArray> split(const NDArray& a, int64_t sections, int64_t axis) {
  return call("_npi_split", {a}, {{"sections", Value(sections)}, {"axis", Value(axis)}});
}
std::vector<NDArray> split(const NDArray& a, const std::vector<int64_t>& indices, int64_t axis) {
  return call("_npi_split", {a}, {{"indices", Value(Shape(indices))}, {"axis", Value(axis)}});
}

}  // namespace ndx::np

namespace ndx {

NDArray operator-(const NDArray& x) { return np::negative(x); }

namespace {
// NumPy's casting='same_kind' for in-place results: bool < int < float, within a kind any size.
bool same_kind_castable(DType from, DType to) {
  auto rank = [](DType t) { return t == DType::kBool ? 0 : is_float(t) ? 2 : 1; };
  return rank(from) <= rank(to);
}

NDArray& inplace(const char* op, NDArray& a, const NDArray& b) {
  const Op* o = Op::get(op);
  NodeAttrs attrs = o->make_attrs();
  DTypeVector in{a.dtype(), b.dtype()}, out{DType::kUnknown};
  infer_types(attrs, &in, &out);
  if (!same_kind_castable(out[0], a.dtype()))
    type_error("[", op + 4, "] cannot cast the result from ", out[0], " to ", a.dtype(),
               " with casting rule 'same_kind'");
  ShapeVector ins{a.shape(), b.shape()}, outs{Shape::unknown()};
  infer_shapes(attrs, &ins, &outs);
  if (outs[0] != a.shape())
    value_error("[", op + 4, "] non-broadcastable output operand with shape ", a.shape().str(),
                " doesn't match the broadcast shape ", outs[0].str());
  if (out[0] == a.dtype()) {
    std::vector<NDArray> target{a};
    InvokeOptions options;
    options.outputs = &target;
    invoke(attrs, {a, b}, options);
  } else {
    a.assign(invoke(attrs, {a, b})[0]);
  }
  return a;
}
}  // namespace

NDArray& operator+=(NDArray& a, const NDArray& b) { return inplace("_np_add", a, b); }
NDArray& operator-=(NDArray& a, const NDArray& b) { return inplace("_np_subtract", a, b); }
NDArray& operator*=(NDArray& a, const NDArray& b) { return inplace("_np_multiply", a, b); }
NDArray& operator/=(NDArray& a, const NDArray& b) { return inplace("_np_true_divide", a, b); }

}  // namespace ndx
