#include "ndx/dtype.h"

#include "ndx/promote_sequence.h"

#include <array>
#include <atomic>
#include <bit>
#include <cmath>
#include <optional>
#include <string_view>

namespace ndx {

namespace {
constexpr std::array<DTypeInfo, kNumDTypes> kInfo = {{
    {"bool", 1, DTypeKind::kBool},
    {"int8", 1, DTypeKind::kSigned},
    {"int16", 2, DTypeKind::kSigned},
    {"int32", 4, DTypeKind::kSigned},
    {"int64", 8, DTypeKind::kSigned},
    {"uint8", 1, DTypeKind::kUnsigned},
    {"uint16", 2, DTypeKind::kUnsigned},
    {"uint32", 4, DTypeKind::kUnsigned},
    {"uint64", 8, DTypeKind::kUnsigned},
    {"float16", 2, DTypeKind::kFloat},
    {"bfloat16", 2, DTypeKind::kFloat},
    {"float32", 4, DTypeKind::kFloat},
    {"float64", 8, DTypeKind::kFloat},
    {"complex64", 8, DTypeKind::kComplex},
    {"complex128", 16, DTypeKind::kComplex},
}};

std::atomic<DType> g_default_float{DType::kFloat32};

DType signed_of_size(int size) {
  switch (size) {
    case 1:
      return DType::kInt8;
    case 2:
      return DType::kInt16;
    case 4:
      return DType::kInt32;
    default:
      return DType::kInt64;
  }
}

// The smallest float that holds every value of an integer of `size` bytes exactly.
DType float_holding_int(int size) {
  if (size == 1) return DType::kFloat16;
  if (size == 2) return DType::kFloat32;
  return DType::kFloat64;
}

DType promote_floats(DType a, DType b) {
  if (a == b) return a;
  // bfloat16 and float16 have no common 16-bit type; float32 holds both.
  bool a16 = dtype_size(a) == 2, b16 = dtype_size(b) == 2;
  if (a16 && b16) return DType::kFloat32;
  return dtype_size(a) >= dtype_size(b) ? a : b;
}

DType promote_int_float(DType i, DType f) {
  DType need = float_holding_int(dtype_size(i));
  // bfloat16 with 8-bit ints stays bfloat16 (the float category wins, as in PyTorch and JAX).
  if (f == DType::kBFloat16 && dtype_size(i) == 1) return f;
  return promote_floats(f, need);
}

DType promote_ints(DType a, DType b) {
  bool ua = is_unsigned(a), ub = is_unsigned(b);
  int sa = dtype_size(a), sb = dtype_size(b);
  if (ua == ub) return sa >= sb ? a : b;
  DType s = ua ? b : a, u = ua ? a : b;
  int ss = dtype_size(s), us = dtype_size(u);
  if (ss > us) return s;
  if (us == 8) return DType::kFloat64;  // NumPy: int64 + uint64 -> float64
  return signed_of_size(us * 2);
}
}  // namespace

const DTypeInfo& dtype_info(DType t) {
  int i = static_cast<int>(t);
  if (i < 0 || i >= kNumDTypes) unsupported_dtype("dtype_info", t);
  return kInfo[i];
}

namespace {
// NumPy's other spellings: Python / C names and the array-protocol codes ('f4', 'i8', '?').
struct DTypeAlias {
  std::string_view name;
  DType type;
};
constexpr DTypeAlias kAliases[] = {
    {"float", DType::kFloat64},
    {"int", DType::kInt64},
    {"bool_", DType::kBool},
    {"half", DType::kFloat16},
    {"single", DType::kFloat32},
    {"double", DType::kFloat64},
    {"float_", DType::kFloat64},
    {"int_", DType::kInt64},
    {"intp", DType::kInt64},
    {"uint", DType::kUInt64},
    {"uintp", DType::kUInt64},
    {"byte", DType::kInt8},
    {"ubyte", DType::kUInt8},
    {"short", DType::kInt16},
    {"ushort", DType::kUInt16},
    {"intc", DType::kInt32},
    {"uintc", DType::kUInt32},
    {"long", DType::kInt64},
    {"ulong", DType::kUInt64},
    {"longlong", DType::kInt64},
    {"ulonglong", DType::kUInt64},
    {"?", DType::kBool},
    {"b1", DType::kBool},
    {"b", DType::kInt8},
    {"i1", DType::kInt8},
    {"B", DType::kUInt8},
    {"u1", DType::kUInt8},
    {"h", DType::kInt16},
    {"i2", DType::kInt16},
    {"H", DType::kUInt16},
    {"u2", DType::kUInt16},
    {"i", DType::kInt32},
    {"i4", DType::kInt32},
    {"I", DType::kUInt32},
    {"u4", DType::kUInt32},
    {"l", DType::kInt64},
    {"q", DType::kInt64},
    {"i8", DType::kInt64},
    {"p", DType::kInt64},
    {"L", DType::kUInt64},
    {"Q", DType::kUInt64},
    {"u8", DType::kUInt64},
    {"P", DType::kUInt64},
    {"e", DType::kFloat16},
    {"f2", DType::kFloat16},
    {"f", DType::kFloat32},
    {"f4", DType::kFloat32},
    {"d", DType::kFloat64},
    {"f8", DType::kFloat64},
    {"complex", DType::kComplex128},
    {"complex_", DType::kComplex128},
    {"cfloat", DType::kComplex128},
    {"cdouble", DType::kComplex128},
    {"csingle", DType::kComplex64},
    {"F", DType::kComplex64},
    {"c8", DType::kComplex64},
    {"D", DType::kComplex128},
    {"c16", DType::kComplex128},
};

std::optional<DType> find_dtype(std::string_view name) {
  for (int i = 0; i < kNumDTypes; ++i)
    if (kInfo[i].name == name) return static_cast<DType>(i);
  // A byte-order mark: native ('=', '<' on this little-endian build) or not applicable ('|').
  if (name.size() > 1 && (name[0] == '=' || name[0] == '<' || name[0] == '|'))
    name.remove_prefix(1);
  for (const DTypeAlias& a : kAliases)
    if (a.name == name) return a.type;
  return std::nullopt;
}
}  // namespace

DType dtype_from_name(std::string_view name) {
  if (std::optional<DType> t = find_dtype(name)) return *t;
  if (!name.empty() && name[0] == '>')
    type_error("[dtype] data type '", name,
               "' is big-endian; ndx arrays are native (little-endian)");
  type_error("[dtype] data type '", name, "' not understood; expected a NumPy name such as ",
             "'float32', 'int64' or 'bool'");
}

std::ostream& operator<<(std::ostream& os, DType t) {
  if (t == DType::kUnknown) return os << "unknown";
  return os << dtype_name(t);
}

void unsupported_dtype(const char* where, DType t) {
  int i = static_cast<int>(t);
  if (i < 0 || i >= kNumDTypes) type_error("[", where, "] unknown dtype code ", i);
  type_error("[", where, "] dtype ", kInfo[i].name, " is not supported here");
}

DType promote_types(DType a, DType b) {
  if (a == DType::kUnknown || b == DType::kUnknown)
    type_error("[promote_types] cannot promote an unknown dtype");
  if (a == b) return a;
  if (a == DType::kBool) return b;
  if (b == DType::kBool) return a;
  if (is_complex(a) || is_complex(b))  // the complex type of the promoted components
    return complex_dtype(promote_types(real_dtype(a), real_dtype(b)));
  bool fa = is_float(a), fb = is_float(b);
  if (fa && fb) return promote_floats(a, b);
  if (fa) return promote_int_float(b, a);
  if (fb) return promote_int_float(a, b);
  return promote_ints(a, b);
}

DType promote_sequence(const DType* types, size_t n) {
  if (n == 0) value_error("[result_type] at least one array or dtype is required");
  const DType* lead = nullptr;  // the first of the highest inexact kind
  for (size_t i = 0; i < n; ++i)
    if (is_inexact(types[i]) && (!lead || (is_complex(types[i]) && !is_complex(*lead))))
      lead = &types[i];
  DType r = lead ? *lead : types[0];
  for (size_t i = 0; i < n; ++i)
    r = promote_types(r, lead ? promote_types(*lead, types[i]) : types[i]);
  return r;
}

DType promote_with_scalar(DType t, ScalarKind scalar) {
  switch (scalar) {
    case ScalarKind::kBool:
      return t;
    case ScalarKind::kInt:
      return t == DType::kBool ? DType::kInt64 : t;
    case ScalarKind::kFloat:
      return is_inexact(t) ? t : default_float_dtype();
    case ScalarKind::kComplex:
      return complex_dtype(is_inexact(t) ? t : default_float_dtype());
  }
  return t;
}

namespace {
int kind_rank(DType t) {
  switch (dtype_info(t).kind) {
    case DTypeKind::kBool:
      return 0;
    case DTypeKind::kUnsigned:
      return 1;
    case DTypeKind::kSigned:
      return 2;
    case DTypeKind::kFloat:
      return 3;
    default:
      return 4;
  }
}
constexpr std::string_view kCastingNames[] = {"no", "equiv", "safe", "same_kind", "unsafe"};
}  // namespace

bool can_cast(DType from, DType to, Casting casting) {
  if (from == to || casting == Casting::kUnsafe) return true;
  if (casting == Casting::kNo || casting == Casting::kEquiv) return false;
  if (promote_types(from, to) == to) return true;
  return casting == Casting::kSameKind && kind_rank(from) <= kind_rank(to);
}

Casting casting_from_name(std::string_view name, std::string_view op) {
  for (size_t i = 0; i < std::size(kCastingNames); ++i)
    if (kCastingNames[i] == name) return static_cast<Casting>(i);
  value_error("[", op,
              "] casting must be one of 'no', 'equiv', 'safe', 'same_kind', 'unsafe'; got '", name,
              "'");
}

std::string_view casting_name(Casting casting) {
  return kCastingNames[static_cast<size_t>(casting)];
}

DType default_float_dtype() { return g_default_float.load(std::memory_order_relaxed); }
void set_default_float_dtype(DType t) {
  if (!is_float(t)) type_error("[set_default_float_dtype] expected a float dtype, got ", t);
  g_default_float.store(t);
}

namespace detail {
uint16_t float_to_half_bits(float f) {
  uint32_t x = std::bit_cast<uint32_t>(f);
  uint32_t sign = (x >> 16) & 0x8000u;
  uint32_t mag = x & 0x7fffffffu;
  if (mag >= 0x7f800000u)  // inf or nan (keep nan quiet)
    return static_cast<uint16_t>(sign | 0x7c00u | (mag > 0x7f800000u ? 0x200u : 0u));
  if (mag >= 0x477ff000u) return static_cast<uint16_t>(sign | 0x7c00u);  // rounds to inf
  if (mag < 0x38800000u) {  // below float16's smallest normal: a multiple of 2^-24
    float scaled = std::bit_cast<float>(mag) * 16777216.0f;  // exact: power-of-two scale
    return static_cast<uint16_t>(sign | static_cast<uint32_t>(std::nearbyint(scaled)));
  }
  uint32_t odd = (mag >> 13) & 1u;
  mag += 0xc8000fffu + odd;  // rebias exponent 127 -> 15 and round to nearest even
  return static_cast<uint16_t>(sign | (mag >> 13));
}

float half_bits_to_float(uint16_t h) {
  uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  uint32_t exp = (h >> 10) & 0x1fu;
  uint32_t mant = h & 0x3ffu;
  if (exp == 0) {
    float v = static_cast<float>(mant) * 5.9604644775390625e-08f;  // 2^-24
    return sign ? -v : v;
  }
  if (exp == 31) return std::bit_cast<float>(sign | 0x7f800000u | (mant << 13));
  return std::bit_cast<float>(sign | ((exp + 112) << 23) | (mant << 13));
}
}  // namespace detail

}  // namespace ndx
