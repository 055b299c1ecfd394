#include "ndx/amp.h"

#include <atomic>
#include <mutex>

#include "ndx/imperative.h"
#include "ndx/param.h"

namespace ndx::amp {
namespace {

std::atomic<const Policy*> g_policy{nullptr};
thread_local int g_paused = 0;

// Every policy ever set stays alive: another thread may still be reading the one replaced.
// There are a handful per process (amp.init, tests).
std::mutex& policies_mutex() {
  static std::mutex m;
  return m;
}
std::vector<std::unique_ptr<Policy>>& policies() {
  static std::vector<std::unique_ptr<Policy>> all;
  return all;
}

const NodeAttrs& cast_attrs(DType t) {
  static const Op* op = Op::get("_npi_amp_cast");
  static const NodeAttrs f16 = op->make_attrs({{"dtype", "float16"}});
  static const NodeAttrs bf16 = op->make_attrs({{"dtype", "bfloat16"}});
  static const NodeAttrs f32 = op->make_attrs({{"dtype", "float32"}});
  return t == DType::kFloat16 ? f16 : t == DType::kBFloat16 ? bf16 : f32;
}

bool is_low_precision(DType t) { return t == DType::kFloat16 || t == DType::kBFloat16; }

// The dtype an input of dtype `t` is cast to under the rule, or t itself.
DType wanted(const OpRule& rule, DType target, DType t) {
  if (rule.kind == OpRule::kFloat32) return is_low_precision(t) ? DType::kFloat32 : t;
  // Low precision: float32 and the other 16-bit type narrow; non-float inputs stay, as
  // MXNet's casts leave them (an op with a float64 input is left alone: see cast_inputs).
  return (t == DType::kFloat32 || is_low_precision(t)) ? target : t;
}

bool applies(const OpRule& rule, const NodeAttrs& attrs) {
  if (rule.param.empty()) return true;
  std::string value;
  if (auto it = attrs.dict.find(rule.param); it != attrs.dict.end()) {
    value = it->second;
  } else if (attrs.op->params && attrs.parsed.has_value()) {  // params given as values
    auto dict = attrs.op->params->to_dict(attrs.parsed);
    auto jt = dict.find(rule.param);
    if (jt == dict.end()) return false;
    value = jt->second;
  } else {
    return false;
  }
  for (const std::string& v : rule.values)
    if (value == v) return true;
  return false;
}

}  // namespace

void set_policy(std::unique_ptr<Policy> policy) {
  if (policy && !is_low_precision(policy->target))
    type_error("[amp] the target dtype must be float16 or bfloat16, got ",
               dtype_name(policy->target));
  std::lock_guard<std::mutex> lock(policies_mutex());
  const Policy* p = policy.get();
  if (policy) policies().push_back(std::move(policy));
  g_policy.store(p, std::memory_order_release);
}

const Policy* active_policy() {
  const Policy* p = g_policy.load(std::memory_order_acquire);
  return p && g_paused == 0 ? p : nullptr;
}

std::optional<std::vector<NDArray>> cast_inputs(const Policy& policy, const NodeAttrs& attrs,
                                                const std::vector<NDArray>& inputs) {
  auto it = policy.rules.find(attrs.op);
  if (it == policy.rules.end() || !applies(it->second, attrs)) return std::nullopt;
  if (it->second.kind == OpRule::kTarget)  // float64 asked for on purpose: the op keeps it
    for (const NDArray& a : inputs)
      if (a.defined() && a.dtype() == DType::kFloat64) return std::nullopt;
  std::optional<std::vector<NDArray>> casted;
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (!inputs[i].defined()) continue;  // invoke names the undefined input
    const DType t = wanted(it->second, policy.target, inputs[i].dtype());
    if (t == inputs[i].dtype()) continue;
    if (!casted) casted = inputs;
    (*casted)[i] = invoke(cast_attrs(t), {inputs[i]})[0];
  }
  return casted;
}

PauseScope::PauseScope() { ++g_paused; }
PauseScope::~PauseScope() { --g_paused; }

}  // namespace ndx::amp
