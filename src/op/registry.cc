#include <algorithm>

#include "ndx/op.h"
#include "ndx/op_util.h"

namespace ndx {

OpRegistry& OpRegistry::global() {
  static OpRegistry* registry = new OpRegistry();  // outlives static destructors
  return *registry;
}

Op& OpRegistry::register_op(const std::string& name) {
  std::lock_guard<std::recursive_mutex> lock(mutex);
  if (by_name_.count(name))
    raise(ErrorKind::kValueError, "[register] operator ", name, " is already registered");
  auto op = std::make_unique<Op>();
  op->name = name;
  op->public_name = public_op_name(name);
  op->index = static_cast<uint32_t>(ops_.size());
  Op* raw = op.get();
  ops_.push_back(std::move(op));
  by_name_[name] = raw;
  return *raw;
}

Op* OpRegistry::find(std::string_view name) {
  std::lock_guard<std::recursive_mutex> lock(mutex);
  auto it = by_name_.find(std::string(name));
  return it == by_name_.end() ? nullptr : it->second;
}

void OpRegistry::add_alias(Op* op, const std::string& alias) {
  std::lock_guard<std::recursive_mutex> lock(mutex);
  auto it = by_name_.find(alias);
  if (it != by_name_.end() && it->second != op)
    raise(ErrorKind::kValueError, "[register] alias ", alias, " of ", op->name,
          " is already taken by ", it->second->name);
  by_name_[alias] = op;
}

std::vector<Op*> OpRegistry::ops() const {
  std::vector<Op*> out;
  for (auto& op : ops_) out.push_back(op.get());
  return out;
}

OpMapBase* OpRegistry::attr_map(const std::string& key, std::type_index type,
                                const std::function<std::unique_ptr<OpMapBase>()>& make) {
  std::lock_guard<std::recursive_mutex> lock(mutex);
  auto it = attrs_.find(key);
  if (it == attrs_.end()) {
    auto m = make();
    m->type = type;
    it = attrs_.emplace(key, std::move(m)).first;
  } else if (it->second->type != type) {
    raise(ErrorKind::kTypeError, "[register] attribute ", key,
          " was registered with another type; every op must use one type per key");
  }
  return it->second.get();
}

std::vector<std::string> OpRegistry::attr_keys() const {
  std::vector<std::string> keys;
  for (auto& [k, v] : attrs_) keys.push_back(k);
  return keys;
}

std::vector<std::string> OpRegistry::attr_keys_of(const Op* op) const {
  std::vector<std::string> keys;
  for (auto& [k, v] : attrs_)
    if (v->has(op)) keys.push_back(k);
  return keys;
}

std::vector<std::string> Op::attr_keys() const { return OpRegistry::global().attr_keys_of(this); }

Op& Op::describe(std::string text) {
  description = std::move(text);
  return *this;
}
Op& Op::add_alias(std::string alias) {
  OpRegistry::global().add_alias(this, alias);
  aliases.push_back(std::move(alias));
  return *this;
}
Op& Op::set_num_inputs(uint32_t n) {
  num_inputs = n;
  return *this;
}
Op& Op::set_num_inputs(FNumArgs fn) {
  get_num_inputs = std::move(fn);
  return *this;
}
Op& Op::set_num_outputs(uint32_t n) {
  num_outputs = n;
  return *this;
}
Op& Op::set_num_outputs(FNumArgs fn) {
  get_num_outputs = std::move(fn);
  return *this;
}
Op& Op::add_argument(std::string arg, std::string type, std::string doc) {
  arguments.push_back({std::move(arg), std::move(type), std::move(doc)});
  return *this;
}
Op& Op::set_attr_parser(std::function<void(NodeAttrs*)> parser) {
  attr_parser = std::move(parser);
  return *this;
}

uint32_t Op::checked_arity(uint32_t n, const char* what) const {
  if (n > kMaxArity)
    value_error("[", name, "] ", n, " ", what, " is more than an op may have (", kMaxArity, ")");
  return n;
}

uint32_t Op::visible_outputs_for(const NodeAttrs& a) const {
  static const auto& fvis = Op::attr<FNumVisibleOutputs>("FNumVisibleOutputs");
  return fvis.count(this) ? fvis[this](a) : outputs_for(a);
}

std::vector<std::string> Op::input_names(const NodeAttrs& a) const {
  static const auto& fnames = Op::attr<FListInputNames>("FListInputNames");
  if (fnames.count(this)) return fnames[this](a);
  std::vector<std::string> names;
  for (const auto& arg : arguments)
    if (arg.type.rfind("NDArray", 0) == 0) names.push_back(arg.name);
  uint32_t n = inputs_for(a);
  if (names.size() == n) return names;
  names.clear();
  for (uint32_t i = 0; i < n; ++i) names.push_back(n == 1 ? "data" : "arg" + std::to_string(i));
  return names;
}

std::vector<std::string> Op::output_names(const NodeAttrs& a) const {
  static const auto& fnames = Op::attr<FListOutputNames>("FListOutputNames");
  if (fnames.count(this)) return fnames[this](a);
  uint32_t n = outputs_for(a);
  std::vector<std::string> names;
  for (uint32_t i = 0; i < n; ++i)
    names.push_back(n == 1 ? "output" : "output" + std::to_string(i));
  return names;
}

const Op* Op::find(std::string_view name) { return OpRegistry::global().find(name); }

const Op* Op::get(std::string_view name) {
  const Op* op = find(name);
  if (!op) value_error("[op] no operator named '", name, "' is registered");
  return op;
}

std::vector<std::string> Op::list_names() {
  std::vector<std::string> names;
  for (Op* op : OpRegistry::global().ops()) names.push_back(op->name);
  std::sort(names.begin(), names.end());
  return names;
}

std::vector<std::string> Op::list_attr_keys() { return OpRegistry::global().attr_keys(); }

NodeAttrs Op::make_attrs(std::map<std::string, std::string> dict) const {
  NodeAttrs attrs;
  attrs.op = this;
  attrs.name = name;
  attrs.dict = std::move(dict);
  if (attr_parser) {
    attr_parser(&attrs);
  } else if (!attrs.dict.empty()) {
    value_error("[", public_op_name(name), "] takes no parameters; got '",
                attrs.dict.begin()->first, "'");
  }
  return attrs;
}

namespace {
// A typed value as the string an attr parser reads (ops that parse a string dict themselves,
// such as Custom, are called through the typed path too).
std::string value_as_string(const Value& v) {
  switch (v.kind) {
    case Value::Kind::kNone:
      return "None";
    case Value::Kind::kBool:
      return FieldTraits<bool>::to_string(v.b);
    case Value::Kind::kInt:
      return FieldTraits<int64_t>::to_string(v.i);
    case Value::Kind::kFloat:
      return FieldTraits<double>::to_string(v.f);
    case Value::Kind::kStr:
      return std::string(v.str);
    case Value::Kind::kDType:
      return FieldTraits<DType>::to_string(v.dtype);
    case Value::Kind::kDevice:
      return FieldTraits<Device>::to_string(v.device);
    case Value::Kind::kTuple:
      return FieldTraits<Shape>::to_string(v.tuple);
  }
  return "";
}
}  // namespace

NodeAttrs Op::make_attrs(const std::vector<std::pair<std::string_view, Value>>& kwargs) const {
  NodeAttrs attrs;
  attrs.op = this;
  attrs.name = name;
  if (params) {
    attrs.parsed = params->parse(kwargs, public_op_name(name));
  } else if (attr_parser) {
    for (const auto& [key, value] : kwargs) attrs.dict[std::string(key)] = value_as_string(value);
    attr_parser(&attrs);
  } else if (!kwargs.empty()) {
    value_error("[", public_op_name(name), "] takes no parameters; got '", kwargs.front().first,
                "'");
  }
  return attrs;
}

std::string public_op_name(std::string_view n) {
  for (std::string_view prefix : {"_npi_", "_npx_", "_np_"})
    if (n.substr(0, prefix.size()) == prefix) return std::string(n.substr(prefix.size()));
  return std::string(n);
}

const std::string& op_name(const NodeAttrs& attrs) {
  static const std::string unknown = "op";
  return attrs.op ? attrs.op->public_name : unknown;
}

void assign_shape(const NodeAttrs& attrs, Shape* dst, const Shape& src, const char* what,
                  int index) {
  if (!src.is_known()) return;
  if (!dst->is_known()) {
    *dst = src;
    return;
  }
  if (*dst != src)
    value_error("[", op_name(attrs), "] shape of ", what, " ", index, " is ", dst->str(),
                ", expected ", src.str());
}

void assign_type(const NodeAttrs& attrs, DType* dst, DType src, const char* what, int index) {
  if (src == DType::kUnknown) return;
  if (*dst == DType::kUnknown) {
    *dst = src;
    return;
  }
  if (*dst != src)
    type_error("[", op_name(attrs), "] dtype of ", what, " ", index, " is ", *dst, ", expected ",
               src);
}

}  // namespace ndx
