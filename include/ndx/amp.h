// Automatic mixed precision: a per-op dtype policy applied where ops are invoked. With a
// policy set, invoke() puts an amp_cast in front of the ops the policy names (the cast is an
// op like any other, so autograd records it and hybridized graphs trace it): the
// low-precision ops get their float inputs in the target dtype (float16 or bfloat16), the
// float32 ops get low-precision inputs widened. Other ops run on what they are given, and
// NumPy's promotion makes the mixed ones (float16 + float32) float32. Backward passes and
// replays of planned graphs run with the policy paused: their casts were recorded already.
#pragma once
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "ndx/ndarray.h"
#include "ndx/op.h"

namespace ndx::amp {

struct OpRule {
  enum Kind : uint8_t { kTarget, kFloat32 } kind = kTarget;
  // Conditional rules (MXNet's conditional_fp32_ops): the rule applies only when the op's
  // param `param` is one of `values`; empty param: always.
  std::string param;
  std::vector<std::string> values;
};

struct Policy {
  DType target = DType::kFloat16;  // float16 or bfloat16
  std::map<const Op*, OpRule> rules;
};

// Replaces the process-wide policy (nullptr turns AMP off). Policies are immutable once set.
void set_policy(std::unique_ptr<Policy> policy);
// The policy in force on this thread: null when none is set or a PauseScope is active.
const Policy* active_policy();

// The inputs the policy gives the op (casts invoked, so recorded), or nullopt when the op has
// no rule or every input already has its dtype.
std::optional<std::vector<NDArray>> cast_inputs(const Policy& policy, const NodeAttrs& attrs,
                                                const std::vector<NDArray>& inputs);

// Pauses the policy on this thread (nested scopes allowed).
class PauseScope {
 public:
  PauseScope();
  ~PauseScope();
  PauseScope(const PauseScope&) = delete;
  PauseScope& operator=(const PauseScope&) = delete;
};

}  // namespace ndx::amp
