// The operator registry with NNVM's attribute system: any attribute under any key, registered
// once in the op's family file, looked up by the system through typed OpMaps.
//
//   NDX_REGISTER_OP(_np_abs)
//       .describe("Absolute value, elementwise.")
//       .set_num_inputs(1)
//       .add_argument("x", "NDArray", "Input array.")
//       .set_attr<FInferShape>("FInferShape", ElemwiseShape<1, 1>)
//       .set_attr<FInferType>("FInferType", ElemwiseType<1, 1>)
//       .set_attr<FCompute>("FCompute<cpu>", AbsCompute)
//       .set_attr<FGradient>("FGradient", ElemwiseGradUseIn{"_backward_abs"});
#pragma once
#include <any>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <typeindex>
#include <unordered_map>
#include <utility>
#include <vector>

#include "ndx/device.h"
#include "ndx/dtype.h"
#include "ndx/error.h"
#include "ndx/param.h"
#include "ndx/shape.h"

namespace ndx {

class Op;
struct Node;
std::string public_op_name(std::string_view registered);
struct NodeEntry;
using NodePtr = std::shared_ptr<Node>;

// The attributes of one use of an op: string dict (as in graph JSON) and parsed params.
struct NodeAttrs {
  const Op* op = nullptr;
  std::string name;
  std::map<std::string, std::string> dict;
  std::any parsed;

  template <typename P>
  const P& get() const {
    const P* p = std::any_cast<P>(&parsed);
    if (!p) raise(ErrorKind::kRuntimeError, "[", name, "] params were not parsed");
    return *p;
  }
};

// How a kernel writes an output.
enum OpReqType : uint8_t { kNullOp = 0, kWriteTo = 1, kWriteInplace = 2, kAddTo = 3 };

// What a kernel sees of an array: pointer, shape, strides (elements), dtype, device.
struct TBlob {
  void* dptr = nullptr;
  Shape shape;
  Shape strides;
  DType dtype = DType::kFloat32;
  Device device;

  int ndim() const { return shape.ndim(); }
  int64_t size() const { return shape.size(); }
  // Row-major without gaps (strides of size-1 dims do not matter, as in NDArray).
  bool is_contiguous() const {
    int64_t expect = 1;
    for (int i = ndim() - 1; i >= 0; --i) {
      if (shape[i] == 1) continue;
      if (shape[i] == 0) return true;
      if (strides[i] != expect) return false;
      expect *= shape[i];
    }
    return true;
  }
  template <typename T>
  T* ptr() const {
    return static_cast<T*>(dptr);
  }
};

struct ResourceRequest {
  enum Type { kTempSpace, kRandom };
  Type type;
};

class Storage;
// A resource handed to a kernel. Temp space lives until the kernel call returns.
class Resource {
 public:
  ResourceRequest::Type type = ResourceRequest::kTempSpace;
  // kTempSpace: `bytes` of 64-byte-aligned scratch memory on the op's device.
  void* get_space(std::size_t bytes) const;
  // kRandom: the per-device generator (seed with ndx::random_seed).
  uint64_t next_random() const;

  std::vector<std::shared_ptr<Storage>>* holder = nullptr;
  Device device;
};
void random_seed(uint64_t seed);

struct OpContext {
  bool is_train = false;
  Device device;
  std::vector<Resource> requested;  // in the order of FResourceRequest
};

// ---- attribute function types (the seeds' prototypes) ----
using ShapeVector = std::vector<Shape>;
using DTypeVector = std::vector<DType>;
using FNumArgs = std::function<uint32_t(const NodeAttrs&)>;
using FInferShape = std::function<bool(const NodeAttrs&, ShapeVector* in, ShapeVector* out)>;
using FInferType = std::function<bool(const NodeAttrs&, DTypeVector* in, DTypeVector* out)>;
using FInplaceOption = std::function<std::vector<std::pair<int, int>>(const NodeAttrs&)>;
using FGradient = std::function<std::vector<NodeEntry>(const NodePtr& node,
                                                       const std::vector<NodeEntry>& ograds)>;
using FCompute =
    std::function<void(const NodeAttrs&, const OpContext&, const std::vector<TBlob>& in,
                       const std::vector<OpReqType>& req, const std::vector<TBlob>& out)>;
using FResourceRequest = std::function<std::vector<ResourceRequest>(const NodeAttrs&)>;
using FNumVisibleOutputs = std::function<uint32_t(const NodeAttrs&)>;
using FListInputNames = std::function<std::vector<std::string>(const NodeAttrs&)>;
using FListOutputNames = std::function<std::vector<std::string>(const NodeAttrs&)>;
using TIsBackward = bool;
// True when the op's kernels take strided (non-contiguous) inputs.
using TStridedInputs = bool;
// True when the op's FInferShape and FInferType take inputs of unknown shape or dtype other
// than the data (they fill what they can work out, as NNVM's inference does, or return
// false): graph inference from some inputs only (Symbol.infer_shape) may then call them.
using TFillsInputs = bool;

// Attribute values per op, indexed by the op's registration index.
class OpMapBase {
 public:
  virtual ~OpMapBase() = default;
  virtual bool has(const Op* op) const = 0;
  std::type_index type = typeid(void);
};

template <typename T>
class OpMap : public OpMapBase {
 public:
  bool count(const Op* op) const;
  bool has(const Op* op) const override { return count(op); }
  const T& operator[](const Op* op) const;  // throws if the op lacks the attribute
  const T& get(const Op* op, const T& fallback) const { return count(op) ? (*this)[op] : fallback; }
  std::string key;
  // value, priority level (0 = unset). A deque: growing it (ops registered later, by operator
  // libraries loaded at run time) keeps references to existing values valid, and kernels
  // cache `static const FCompute& f = Op::attr<FCompute>(...)[op]`.
  std::deque<std::pair<T, int>> values;
};

struct ArgumentInfo {
  std::string name;
  std::string type;  // "NDArray", "NDArray[]", or a param type
  std::string doc;
};

class Op {
 public:
  std::string name;
  std::string public_name;  // the name users see: "_np_add" -> "add"
  std::string description;
  uint32_t index = 0;
  uint32_t num_inputs = 1;
  uint32_t num_outputs = 1;
  FNumArgs get_num_inputs;  // set when the count depends on params
  FNumArgs get_num_outputs;
  std::vector<std::string> aliases;
  std::vector<ArgumentInfo> arguments;
  const ParamSchema* params = nullptr;
  std::function<void(NodeAttrs*)> attr_parser;  // dict -> parsed

  Op& describe(std::string text);
  Op& add_alias(std::string alias);
  Op& set_num_inputs(uint32_t n);
  Op& set_num_inputs(FNumArgs fn);
  Op& set_num_outputs(uint32_t n);
  Op& set_num_outputs(FNumArgs fn);
  Op& add_argument(std::string name, std::string type, std::string doc);
  Op& set_attr_parser(std::function<void(NodeAttrs*)> parser);
  // Declares P (see param.h) as this op's params: parser, introspection, docs.
  template <typename P>
  Op& set_params();
  template <typename T>
  Op& set_attr(const std::string& key, const T& value, int plevel = 10);

  // An op's inputs or outputs number at most this: counts that params compute (split's
  // sections, concatenate's num_args) are checked against it before anything is sized by them.
  static constexpr uint32_t kMaxArity = 1u << 20;
  uint32_t inputs_for(const NodeAttrs& a) const {
    return get_num_inputs ? checked_arity(get_num_inputs(a), "inputs") : num_inputs;
  }
  uint32_t outputs_for(const NodeAttrs& a) const {
    return get_num_outputs ? checked_arity(get_num_outputs(a), "outputs") : num_outputs;
  }
  uint32_t visible_outputs_for(const NodeAttrs& a) const;
  uint32_t checked_arity(uint32_t n, const char* what) const;  // ValueError past kMaxArity
  std::vector<std::string> input_names(const NodeAttrs& a) const;
  std::vector<std::string> output_names(const NodeAttrs& a) const;

  // The op registered under `name` or an alias; ValueError when there is none.
  static const Op* get(std::string_view name);
  static const Op* find(std::string_view name);  // nullptr when there is none
  static std::vector<std::string> list_names();  // registered names (not aliases), sorted
  static std::vector<std::string> list_attr_keys();
  template <typename T>
  static const OpMap<T>& attr(const std::string& key);
  // The attribute keys an op sets.
  std::vector<std::string> attr_keys() const;

  // Parses a string dict into attrs (params parsed by the op's parser).
  NodeAttrs make_attrs(std::map<std::string, std::string> dict = {}) const;
  // make_attrs({{"axis", "1"}}): a braced list of string pairs picks the string-dict form.
  NodeAttrs make_attrs(
      std::initializer_list<std::pair<std::string_view, std::string_view>> dict) const {
    std::map<std::string, std::string> m;
    for (const auto& [k, v] : dict) m.emplace(k, v);
    return make_attrs(std::move(m));
  }
  // Typed kwargs straight into the Param struct.
  NodeAttrs make_attrs(const std::vector<std::pair<std::string_view, Value>>& kwargs) const;

 private:
  friend class OpRegistry;
};

class OpRegistry {
 public:
  static OpRegistry& global();
  Op& register_op(const std::string& name);
  Op* find(std::string_view name);
  void add_alias(Op* op, const std::string& alias);
  std::vector<Op*> ops() const;
  OpMapBase* attr_map(const std::string& key, std::type_index type,
                      const std::function<std::unique_ptr<OpMapBase>()>& make);
  std::vector<std::string> attr_keys() const;
  std::vector<std::string> attr_keys_of(const Op* op) const;
  std::recursive_mutex mutex;

 private:
  std::vector<std::unique_ptr<Op>> ops_;
  std::unordered_map<std::string, Op*> by_name_;
  std::map<std::string, std::unique_ptr<OpMapBase>> attrs_;
};

// ---- templates ----
template <typename T>
bool OpMap<T>::count(const Op* op) const {
  return op && op->index < values.size() && values[op->index].second != 0;
}

template <typename T>
const T& OpMap<T>::operator[](const Op* op) const {
  if (!count(op))
    raise(ErrorKind::kRuntimeError, "[", op ? op->name : "?", "] has no attribute ", key);
  return values[op->index].first;
}

template <typename T>
const OpMap<T>& Op::attr(const std::string& key) {
  OpMapBase* base = OpRegistry::global().attr_map(key, typeid(T), [&key] {
    auto m = std::make_unique<OpMap<T>>();
    m->key = key;
    return m;
  });
  return *static_cast<OpMap<T>*>(base);
}

template <typename T>
Op& Op::set_attr(const std::string& key, const T& value, int plevel) {
  auto& map = const_cast<OpMap<T>&>(attr<T>(key));
  std::lock_guard<std::recursive_mutex> lock(OpRegistry::global().mutex);
  if (map.values.size() <= index) map.values.resize(index + 1, {T(), 0});
  if (map.values[index].second < plevel) map.values[index] = {value, plevel};
  return *this;
}

template <typename P>
Op& Op::set_params() {
  params = &param_schema<P>();
  const ParamSchema* schema = params;
  attr_parser = [schema](NodeAttrs* attrs) {
    attrs->parsed = schema->parse(attrs->dict, public_op_name(attrs->op->name));
  };
  for (const ParamField& f : schema->fields) arguments.push_back({f.name, f.type_name, f.doc});
  return *this;
}

#define NDX_STR_CONCAT_(a, b) a##b
#define NDX_STR_CONCAT(a, b) NDX_STR_CONCAT_(a, b)
// Registers an op at static-initialization time; chain attribute setters after it.
#define NDX_REGISTER_OP(OpName)                                                          \
  static ::ndx::Op& NDX_STR_CONCAT(__ndx_op_##OpName##_, __COUNTER__) [[maybe_unused]] = \
      ::ndx::OpRegistry::global().register_op(#OpName)

}  // namespace ndx
