// The PackedFunc FFI: C++ functions registered by name and called with typed arguments (no
// string round trips). Python reaches them as ndx._api_internal.<name>; C reaches them
// through c_api.h.
//
//   NDX_REGISTER_API("_npi.zeros")
//       .set_body_typed([](Shape shape, std::optional<DType> dtype, std::optional<Device> device) {
//         return np::zeros(shape, dtype, device.value_or(cpu()));
//       });
#pragma once
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "ndx/ndarray.h"
#include "ndx/op.h"
#include "ndx/param.h"

namespace ndx::ffi {

// One argument: a typed scalar/tuple value, an array, or a list of arrays.
struct Arg {
  enum class Kind : uint8_t { kValue, kArray, kArrayList };
  Kind kind = Kind::kValue;
  Value value;
  NDArray array;
  std::vector<NDArray> arrays;
  const char* kind_name() const;
};

class Args {
 public:
  Args(const Arg* args, int n, std::string_view func) : args_(args), n_(n), func_(func) {}
  int size() const { return n_; }
  const Arg& operator[](int i) const;
  std::string_view func() const { return func_; }

 private:
  const Arg* args_;
  int n_;
  std::string_view func_;
};

// What a function returns: nothing, a value, an array or a list of arrays.
struct Ret {
  enum class Kind : uint8_t { kNone, kValue, kArray, kArrayList };
  Kind kind = Kind::kNone;
  Value value;
  NDArray array;
  std::vector<NDArray> arrays;
  void set(NDArray a) { kind = Kind::kArray, array = std::move(a); }
  void set(std::vector<NDArray> a) { kind = Kind::kArrayList, arrays = std::move(a); }
  void set(Value v) { kind = Kind::kValue, value = std::move(v); }
};

using PackedFunc = std::function<void(const Args& args, Ret* ret)>;

// ---- typed unpacking ----
template <typename T>
struct ArgConvert {
  static T from(const Arg& a, std::string_view func, int index) {
    if (a.kind != Arg::Kind::kValue)
      type_error("[", func, "] argument ", index, " expected a ", FieldTraits<T>::type_name(),
                 ", got ", a.kind_name());
    std::string field = "arg" + std::to_string(index);
    return FieldTraits<T>::from_value(a.value, {func, field});
  }
};
template <>
struct ArgConvert<NDArray> {
  static NDArray from(const Arg& a, std::string_view func, int index);
};
template <>
struct ArgConvert<std::vector<NDArray>> {
  static std::vector<NDArray> from(const Arg& a, std::string_view func, int index);
};
template <typename T>
struct ArgConvert<const T&> : ArgConvert<T> {};
template <>
struct ArgConvert<int> {
  static int from(const Arg& a, std::string_view func, int index) {
    return static_cast<int>(ArgConvert<int64_t>::from(a, func, index));
  }
};

template <typename R>
void set_ret(Ret* ret, R&& r) {
  using D = std::decay_t<R>;
  if constexpr (std::is_same_v<D, NDArray> || std::is_same_v<D, std::vector<NDArray>>)
    ret->set(std::forward<R>(r));
  else
    ret->set(Value(std::forward<R>(r)));
}

template <typename F>
struct FunctionTraits : FunctionTraits<decltype(&F::operator())> {};
template <typename C, typename R, typename... A>
struct FunctionTraits<R (C::*)(A...) const> {
  using ret = R;
  using args = std::tuple<A...>;
  static constexpr int arity = sizeof...(A);
};
template <typename R, typename... A>
struct FunctionTraits<R (*)(A...)> {
  using ret = R;
  using args = std::tuple<A...>;
  static constexpr int arity = sizeof...(A);
};

class FuncEntry {
 public:
  std::string name;
  std::string doc;
  PackedFunc body;
  FuncEntry& describe(std::string d) {
    doc = std::move(d);
    return *this;
  }
  FuncEntry& set_body(PackedFunc f) {
    body = std::move(f);
    return *this;
  }
  // Arguments unpacked into f's parameter types; its result becomes the return value.
  template <typename F>
  FuncEntry& set_body_typed(F f) {
    using Traits = FunctionTraits<F>;
    body = [f, n = name](const Args& args, Ret* ret) {
      if (args.size() != Traits::arity)
        type_error("[", n, "] expected ", Traits::arity, " arguments, got ", args.size());
      call_unpacked<Traits>(f, args, ret, std::make_index_sequence<Traits::arity>());
    };
    return *this;
  }

 private:
  template <typename Traits, typename F, size_t... I>
  static void call_unpacked(const F& f, const Args& args, Ret* ret, std::index_sequence<I...>) {
    using Tuple = typename Traits::args;
    if constexpr (std::is_void_v<typename Traits::ret>) {
      f(ArgConvert<std::tuple_element_t<I, Tuple>>::from(args[static_cast<int>(I)], args.func(),
                                                         I)...);
    } else {
      set_ret(ret, f(ArgConvert<std::tuple_element_t<I, Tuple>>::from(args[static_cast<int>(I)],
                                                                      args.func(), I)...));
    }
  }
};

class FuncRegistry {
 public:
  static FuncRegistry& global();
  FuncEntry& register_func(const std::string& name);
  const FuncEntry* find(std::string_view name) const;
  std::vector<std::string> list_names() const;

 private:
  std::vector<std::unique_ptr<FuncEntry>> entries_;
};

// Calls a registered function by name (ValueError when there is none).
Ret call(std::string_view name, const std::vector<Arg>& args);

#define NDX_REGISTER_API(Name)                                                             \
  static ::ndx::ffi::FuncEntry& NDX_STR_CONCAT(__ndx_api_, __COUNTER__) [[maybe_unused]] = \
      ::ndx::ffi::FuncRegistry::global().register_func(Name)

}  // namespace ndx::ffi
