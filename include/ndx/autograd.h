// Autograd: a per-thread tape recorded by invoke while recording is on, and backward passes
// built from the ops' FGradient. Gradient graphs are made of registered ops, so with
// create_graph they are recorded too and higher-order gradients work.
#pragma once
#include <functional>
#include <memory>
#include <optional>
#include <vector>

#include "ndx/graph.h"
#include "ndx/ndarray.h"

namespace ndx::autograd {

// The autograd identity of an array: the graph entry that produced it; for leaves marked
// with attach_grad, the gradient buffer and how to write it.
struct Entry {
  NodeEntry entry;
  bool is_leaf = false;
  OpReqType grad_req = kNullOp;
  NDArray grad;
  // Set when backward writes this leaf's gradient; cleared through fresh_grads (MXNet's
  // Trainer refuses to step on a gradient no backward pass wrote since the last step).
  bool fresh_grad = false;
};

bool is_recording();
bool is_training();
// Whether the gradient graph being built is for grad(create_graph=True): an FGradient may
// then give a differentiable form where its usual one is not (a hybridized block's).
bool creating_graph();
bool set_recording(bool on);  // returns the previous state
bool set_training(bool on);   // returns the previous state

// RAII scopes, as autograd.record() / pause() / train_mode() / predict_mode().
class RecordScope {
 public:
  explicit RecordScope(bool record = true, bool train = true)
      : prev_record_(set_recording(record)), prev_train_(set_training(train)) {}
  ~RecordScope() {
    set_recording(prev_record_);
    set_training(prev_train_);
  }

 private:
  bool prev_record_, prev_train_;
};

// Marks `x` as a leaf that receives gradients: grad_req kWriteTo ('write'), kAddTo ('add') or
// kNullOp ('null'). The gradient buffer starts as zeros of x's shape and dtype.
// `grad`, when given, is the gradient buffer itself (MXNet's mark_variables): of x's shape,
// dtype and device; backward writes into it.
void attach_grad(NDArray& x, OpReqType grad_req = kWriteTo, const NDArray* grad = nullptr);
// The gradient buffer of a leaf (undefined when x has none).
NDArray grad_of(const NDArray& x);
// For each array: whether backward wrote its gradient since the flag was last cleared (false
// for arrays without a gradient buffer); `clear` clears the flags.
std::vector<bool> fresh_grads(const std::vector<NDArray>& xs, bool clear);
// x without its autograd history: same data, a new leaf that requires no gradient.
NDArray detach(const NDArray& x);
bool requires_grad(const NDArray& x);
// Whether recording an op on x links to x's history: false without one, and false once an
// earlier backward freed it (x is a constant from then on, as in MXNet).
bool has_live_history(const NDArray& x);

// Back-propagates from heads (head_grads default to ones) into the leaves' gradient buffers.
// Without retain_graph the recorded graph is freed and a second backward raises.
void backward(const std::vector<NDArray>& heads, const std::vector<NDArray>& head_grads = {},
              bool retain_graph = false);
// Gradient events, for overlapping communication with backward (ndx.distributed): while a
// hook is set, backward() calls hook(i, kBeforeWrite) before it writes the gradient buffer of
// watched[i], hook(i, kWritten) after, and hook(-1, kBackwardDone) once at its end if it wrote
// any watched gradient. Leaves are written in reverse order of their first use in the forward
// pass, so the last layer's gradients are final first. An empty `watched` removes the hook.
enum class GradEvent : int { kBeforeWrite = 0, kWritten = 1, kBackwardDone = 2 };
using GradHook = std::function<void(int64_t index, GradEvent event)>;
void set_grad_hook(const std::vector<NDArray>& watched, GradHook hook);

// Gradients of heads with respect to variables, returned rather than written to buffers.
// With create_graph the computation is recorded, so the results can be differentiated again.
std::vector<NDArray> grad(const std::vector<NDArray>& heads, const std::vector<NDArray>& variables,
                          const std::vector<NDArray>& head_grads = {}, bool create_graph = false,
                          bool retain_graph = false);

// The gradient pass over a graph: entries computing d(sum of heads * head_grads)/d(target) for
// each target, built from the ops' FGradient (an undefined entry where a target gets none).
// Autograd runs it on its tape; graphs use it for symbolic gradients.
std::vector<NodeEntry> gradient_entries(const std::vector<NodeEntry>& heads,
                                        const std::vector<NodeEntry>& head_grads,
                                        const std::vector<NodeEntry>& targets);

// Called by invoke after a kernel ran: records the op when recording and an input needs grad.
void record_op(const NodeAttrs& attrs, const std::vector<NDArray>& inputs,
               std::vector<NDArray>* outputs);

}  // namespace ndx::autograd
