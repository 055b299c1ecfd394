#include <algorithm>
#include <mutex>

#include "ndx/ffi.h"

namespace ndx::ffi {

const char* Arg::kind_name() const {
  switch (kind) {
    case Kind::kArray:
      return "ndarray";
    case Kind::kArrayList:
      return "list of ndarrays";
    case Kind::kValue:
      return value.kind_name();
  }
  return "?";
}

const Arg& Args::operator[](int i) const {
  if (i < 0 || i >= n_)
    index_error("[", func_, "] argument ", i, " is missing; got ", n_, " arguments");
  return args_[i];
}

NDArray ArgConvert<NDArray>::from(const Arg& a, std::string_view func, int index) {
  if (a.kind != Arg::Kind::kArray)
    type_error("[", func, "] argument ", index, " expected an ndarray, got ", a.kind_name());
  return a.array;
}

std::vector<NDArray> ArgConvert<std::vector<NDArray>>::from(const Arg& a, std::string_view func,
                                                            int index) {
  if (a.kind == Arg::Kind::kArrayList) return a.arrays;
  if (a.kind == Arg::Kind::kArray) return {a.array};
  type_error("[", func, "] argument ", index, " expected a list of ndarrays, got ", a.kind_name());
}

namespace {
std::mutex& registry_mutex() {
  static std::mutex m;
  return m;
}
}  // namespace

FuncRegistry& FuncRegistry::global() {
  static FuncRegistry* r = new FuncRegistry();
  return *r;
}

FuncEntry& FuncRegistry::register_func(const std::string& name) {
  std::lock_guard<std::mutex> lock(registry_mutex());
  for (auto& e : entries_)
    if (e->name == name) value_error("[register_api] function ", name, " is already registered");
  entries_.push_back(std::make_unique<FuncEntry>());
  entries_.back()->name = name;
  return *entries_.back();
}

const FuncEntry* FuncRegistry::find(std::string_view name) const {
  std::lock_guard<std::mutex> lock(registry_mutex());
  for (auto& e : entries_)
    if (e->name == name) return e.get();
  return nullptr;
}

std::vector<std::string> FuncRegistry::list_names() const {
  std::lock_guard<std::mutex> lock(registry_mutex());
  std::vector<std::string> names;
  for (auto& e : entries_) names.push_back(e->name);
  std::sort(names.begin(), names.end());
  return names;
}

Ret call(std::string_view name, const std::vector<Arg>& args) {
  const FuncEntry* f = FuncRegistry::global().find(name);
  if (!f) value_error("[ffi] no function named '", name, "' is registered");
  Ret ret;
  f->body(Args(args.data(), static_cast<int>(args.size()), f->name), &ret);
  return ret;
}

}  // namespace ndx::ffi
