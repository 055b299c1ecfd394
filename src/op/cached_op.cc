// A planned graph run under autograd as one recorded node, as MXNet's CachedOp: the forward
// runs through the executor (memory planned, nothing recorded per op) and autograd's tape gets
// a single `_CachedOp` node whose gradient is a backward graph built once per graph, input
// signature (shapes and dtypes) and set of inputs that need gradients, then replayed through
// its own executor.
//
// The backward graph comes from the same gradient pass autograd uses (the ops' FGradient), so
// gradients equal the per-op path's. Where it reads forward values (an activation's output, a
// layer's input) those values become extra, hidden outputs of the forward run, kept on the tape
// node until backward frees them. For gradients of gradients (grad with create_graph) the node's
// gradient is built from the graph's ops instead (differentiable_gradient); a graph whose
// gradient cannot be built (an op without FGradient) falls back to recording op by op.
#include <cstdlib>
#include <string>
#include <unordered_map>
#include <unordered_set>

#include "kernel/blob.h"
#include "ndx/autograd.h"
#include "ndx/executor.h"
#include "ndx/imperative.h"
#include "op/graph_infer.h"
#include "operator/kernel_util.h"

namespace ndx {

struct CachedPlan {
  enum class Source : uint8_t { kOutputGrad, kSaved, kInput };
  std::vector<bool> mask;        // the inputs that get gradients
  std::vector<Shape> in_shapes;  // the input signature the backward graph is built for
  std::vector<DType> in_types;
  std::unique_ptr<Executor> forward;   // outputs: the graph's, then the saved values
  std::unique_ptr<Executor> backward;  // outputs: the gradients of the masked inputs
  uint32_t num_outputs = 0, num_saved = 0, num_inputs = 0;
  std::vector<std::pair<Source, uint32_t>> backward_inputs;  // where each backward input comes from
  std::vector<uint32_t> targets;  // the masked inputs, in the backward graph's output order
  bool training = false;          // the mode the graph's mode-dependent nodes were set to
};

namespace {

// The params of _CachedOp and _backward_CachedOp nodes: the plan, and the forward inputs'
// shapes and dtypes (the backward op's outputs have them).
struct CachedOpState {
  std::shared_ptr<const CachedPlan> plan;
  std::vector<Shape> in_shapes;
  std::vector<DType> in_types;
};

using EntryKey = std::pair<const Node*, uint32_t>;
struct EntryKeyHash {
  size_t operator()(const EntryKey& k) const noexcept {
    return std::hash<const void*>()(k.first) * 31 + k.second;
  }
};

// Replaces the backward graph's references to forward values by variables: those values are
// saved by the forward run. Returns the forward entries saved, in variable order.
std::vector<NodeEntry> cut_backward(const std::unordered_set<const Node*>& forward,
                                    std::vector<NodeEntry>* grads,
                                    std::unordered_map<const Node*, uint32_t>* saved_index) {
  std::vector<NodeEntry> saved;
  std::unordered_map<EntryKey, NodePtr, EntryKeyHash> variable_of;
  auto cut = [&](NodeEntry& e) {
    if (!forward.count(e.node.get()) || e.node->is_variable()) return;
    auto [it, fresh] = variable_of.try_emplace(EntryKey{e.node.get(), e.index});
    if (fresh) {
      it->second = make_variable("__saved" + std::to_string(saved.size()));
      (*saved_index)[it->second.get()] = static_cast<uint32_t>(saved.size());
      saved.push_back(e);
    }
    e = NodeEntry{it->second, 0, 0};
  };
  std::unordered_set<const Node*> seen;
  std::vector<Node*> stack;
  auto visit = [&](NodeEntry& e) {
    cut(e);
    if (!forward.count(e.node.get()) && seen.insert(e.node.get()).second)
      stack.push_back(e.node.get());
  };
  for (NodeEntry& e : *grads) visit(e);
  while (!stack.empty()) {
    Node* n = stack.back();
    stack.pop_back();
    for (NodeEntry& e : n->inputs) visit(e);
  }
  return saved;
}

// A gradient summed to its operand's shape (collapse_sum_like) is the gradient itself where
// the operand was not broadcast. With the input signature known, such sums are dropped: each
// would copy the gradient and, worse, make the forward run save its operand only for its
// shape, and a saved value splits the forward's elementwise chain out of a fused kernel.
// Shape inference errors leave the graph as it is (the forward run reports them).
void drop_identity_sums(const Graph& g, const std::vector<NodePtr>& inputs,
                        const std::vector<NodeEntry>& head_grads, const CachedPlan& plan,
                        const std::unordered_set<const Node*>& forward,
                        std::vector<NodeEntry>* grads) {
  static const Op* collapse = Op::get("_npi_collapse_sum_like");
  EntryTypes known;
  try {
    for (size_t i = 0; i < inputs.size(); ++i)
      known[inputs[i].get()] = {{plan.in_shapes[i]}, {plan.in_types[i]}};
    infer_entries(g, &known);
    for (size_t i = 0; i < head_grads.size(); ++i) {
      const auto& [s, t] = known.at(g.outputs[i].node.get());
      known[head_grads[i].node.get()] = {{s.at(g.outputs[i].index)}, {t.at(g.outputs[i].index)}};
    }
    infer_entries(Graph{*grads}, &known);
  } catch (const Error&) {
    return;
  }
  auto entry_of = [&](const NodeEntry& e) {
    const auto& [s, t] = known.at(e.node.get());
    return std::pair{s.at(e.index), t.at(e.index)};
  };
  auto resolve = [&](NodeEntry e) {
    while (!e.node->is_variable() && e.node->attrs.op == collapse) {
      const NodeEntry& x = e.node->inputs[0];
      const auto [xs, xt] = entry_of(x);
      const auto [os, ot] = entry_of(e);
      if (!xs.is_known() || xs != os || xt != ot) break;
      e = x;
    }
    return e;
  };
  for (const NodePtr& n : Graph{*grads}.topo_order())
    if (!forward.count(n.get()))
      for (NodeEntry& e : n->inputs) e = resolve(e);
  for (NodeEntry& e : *grads) e = resolve(e);
}

std::shared_ptr<CachedPlan> build_plan(const Graph& g, const std::vector<bool>& mask,
                                       const std::vector<NDArray>& args) {
  auto plan = std::make_shared<CachedPlan>();
  plan->mask = mask;
  for (const NDArray& a : args) {
    plan->in_shapes.push_back(a.shape());
    plan->in_types.push_back(a.dtype());
  }
  const std::vector<NodePtr> inputs = g.inputs();
  plan->num_inputs = static_cast<uint32_t>(inputs.size());
  plan->num_outputs = static_cast<uint32_t>(g.outputs.size());
  std::unordered_set<const Node*> forward;
  for (const NodePtr& n : g.topo_order()) forward.insert(n.get());

  std::vector<NodeEntry> head_grads, targets;
  std::unordered_map<const Node*, std::pair<CachedPlan::Source, uint32_t>> source;
  for (uint32_t i = 0; i < plan->num_outputs; ++i) {
    NodePtr v = make_variable("__ograd" + std::to_string(i));
    source[v.get()] = {CachedPlan::Source::kOutputGrad, i};
    head_grads.push_back(NodeEntry{v, 0, 0});
  }
  for (uint32_t i = 0; i < plan->num_inputs; ++i) {
    source.try_emplace(inputs[i].get(), CachedPlan::Source::kInput, i);
    if (mask[i]) {
      targets.push_back(NodeEntry{inputs[i], 0, 0});
      plan->targets.push_back(i);
    }
  }
  std::vector<NodeEntry> grads = autograd::gradient_entries(g.outputs, head_grads, targets);
  for (size_t k = 0; k < grads.size(); ++k)
    if (!grads[k].node) grads[k] = make_node("_np_zeros_like", {targets[k]});

  drop_identity_sums(g, inputs, head_grads, *plan, forward, &grads);

  std::unordered_map<const Node*, uint32_t> saved_index;
  std::vector<NodeEntry> saved = cut_backward(forward, &grads, &saved_index);
  for (const auto& [node, k] : saved_index) source[node] = {CachedPlan::Source::kSaved, k};
  plan->num_saved = static_cast<uint32_t>(saved.size());

  Graph backward{grads};
  for (const NodePtr& v : backward.inputs()) {
    auto it = source.find(v.get());
    if (it == source.end())
      raise(ErrorKind::kRuntimeError, "[hybridize] backward graph input '", v->attrs.name,
            "' is neither an output gradient, a saved value nor a graph input");
    plan->backward_inputs.push_back(it->second);
  }
  plan->backward = std::make_unique<Executor>(std::move(backward));

  Graph fwd{g.outputs};
  fwd.outputs.insert(fwd.outputs.end(), saved.begin(), saved.end());
  plan->forward = std::make_unique<Executor>(std::move(fwd));
  // Saved values are reachable from the outputs, so the inputs keep their order.
  if (plan->forward->input_names() != g.input_names())
    raise(ErrorKind::kRuntimeError, "[hybridize] the forward graph's inputs changed order");
  return plan;
}

NodePtr input_node(const NDArray& a) {
  if (autograd::has_live_history(a)) return nullptr;
  NodePtr c = make_variable("constant");
  NDArray plain = a;
  plain.set_autograd_entry(nullptr);
  c->values = {plain};
  return c;
}

const CachedOpState& state_of(const NodeAttrs& attrs) {
  const auto* s = std::any_cast<CachedOpState>(&attrs.parsed);
  if (!s || !s->plan)
    not_implemented("[", attrs.op ? attrs.op->name : std::string("_CachedOp"),
                    "] is made by a hybridized block under autograd; it cannot be called "
                    "directly");
  return *s;
}

void backward_compute(const NodeAttrs& attrs, const OpContext&, const std::vector<TBlob>& in,
                      const std::vector<OpReqType>& req, const std::vector<TBlob>& out) {
  const CachedPlan& plan = *state_of(attrs).plan;
  std::vector<NDArray> values;
  values.reserve(in.size());
  for (const TBlob& b : in) values.push_back(kernel::as_array(b));
  // Gradients written by the graph's last steps straight into the outputs (each would
  // otherwise be copied there: the size of every parameter, each step).
  std::vector<NDArray> into(out.size());
  for (size_t k = 0; k < out.size(); ++k)
    if (req[k] == kWriteTo) into[k] = kernel::as_array(out[k]);  // (in place: it may alias)
  std::vector<NDArray> grads = plan.backward->run_into(values, into);
  for (size_t k = 0; k < out.size(); ++k) {
    if (req[k] == kNullOp || (into[k].defined() && grads[k].raw_data() == out[k].dptr)) continue;
    kernel::write_req(grads[k], into[k].defined() ? into[k] : kernel::as_array(out[k]), req[k]);
  }
}

// For grad(create_graph=True): the gradient of the block's outputs as a graph of ordinary
// ops, differentiable to any order: the forward graph's nodes copied onto the node's inputs
// and their own gradient. The copies are evaluated again (the run kept no intermediates), so
// a graph with ops that would not repeat what the run did is refused: random draws (dropout),
// and inputs updated in place (batch_norm's running statistics in training).
std::vector<NodeEntry> differentiable_gradient(const NodePtr& n, const std::vector<NodeEntry>& og,
                                               const CachedPlan& plan) {
  static const auto& fresource = Op::attr<FResourceRequest>("FResourceRequest");
  static const auto& updates_inputs = Op::attr<bool>("TUpdatesInputs");
  const Graph& fwd = plan.forward->graph();
  const std::vector<NodePtr> ins = fwd.inputs();
  std::unordered_map<const Node*, NodeEntry> input_of;
  for (size_t i = 0; i < ins.size(); ++i) input_of[ins[i].get()] = n->inputs[i];
  std::unordered_map<const Node*, NodePtr> copy_of;
  auto entry = [&](const NodeEntry& e) {
    if (auto it = input_of.find(e.node.get()); it != input_of.end()) return it->second;
    if (auto it = copy_of.find(e.node.get()); it != copy_of.end())
      return NodeEntry{it->second, e.index, e.version};
    return e;  // a constant
  };
  for (const NodePtr& node : fwd.topo_order()) {
    if (node->is_variable()) continue;
    const Op* op = node->op();
    bool random = false;
    if (fresource.count(op))
      for (const ResourceRequest& r : fresource[op](node->attrs))
        random |= r.type == ResourceRequest::kRandom;
    if (random || (updates_inputs.get(op, false) && autograd::is_training()))
      not_implemented(
          "[hybridize] gradients of gradients (create_graph=True) through a "
          "hybridized block holding ",
          op->name, ", which ", random ? "draws random numbers" : "updates its inputs in training",
          ", are not supported: the block's forward would run again; call the "
          "block without hybridize()");
    auto c = std::make_shared<Node>();
    c->attrs = node->attrs;
    for (const NodeEntry& e : node->inputs) c->inputs.push_back(entry(e));
    copy_of[node.get()] = std::move(c);
  }
  // The visible outputs' gradients (the saved ones feed only the usual backward node, which
  // a graph being created does not have).
  std::vector<NodeEntry> heads, head_grads;
  for (uint32_t j = 0; j < plan.num_outputs; ++j) {
    heads.push_back(entry(fwd.outputs[j]));
    head_grads.push_back(og[j]);
  }
  std::vector<NodeEntry> grads = autograd::gradient_entries(heads, head_grads, n->inputs);
  for (size_t k = 0; k < grads.size(); ++k)
    if (!grads[k].node) grads[k] = make_node("_np_zeros_like", {n->inputs[k]});
  return grads;
}

std::vector<NodeEntry> cached_op_gradient(const NodePtr& n, const std::vector<NodeEntry>& og) {
  const CachedOpState& st = state_of(n->attrs);
  const CachedPlan& plan = *st.plan;
  if (autograd::creating_graph()) return differentiable_gradient(n, og, plan);
  auto b = std::make_shared<Node>();
  b->attrs.op = Op::get("_backward_CachedOp");
  b->attrs.name = n->attrs.name + "_backward";
  b->attrs.parsed = st;
  for (const auto& [src, i] : plan.backward_inputs)
    b->inputs.push_back(src == CachedPlan::Source::kOutputGrad ? og[i]
                        : src == CachedPlan::Source::kSaved ? NodeEntry{n, plan.num_outputs + i, 0}
                                                            : n->inputs[i]);
  std::vector<NodeEntry> grads(n->inputs.size());
  for (size_t k = 0; k < plan.targets.size(); ++k)
    grads[plan.targets[k]] = NodeEntry{b, static_cast<uint32_t>(k), 0};
  for (size_t j = 0; j < grads.size(); ++j)
    if (!grads[j].node) grads[j] = make_node("_np_zeros_like", {n->inputs[j]});
  return grads;
}

// Plans kept per executor: one per input signature and gradient mask (a training loop has
// one or two: the batch size and a last, smaller batch), two for graphs of stateful ops.
constexpr size_t kMaxPlans = 8;

bool same_signature(const CachedPlan& p, const std::vector<NDArray>& inputs) {
  if (p.in_shapes.size() != inputs.size()) return false;
  for (size_t i = 0; i < inputs.size(); ++i)
    if (p.in_shapes[i] != inputs[i].shape() || p.in_types[i] != inputs[i].dtype()) return false;
  return true;
}

bool refuse_parse(const NodeAttrs& attrs) {
  state_of(attrs);
  return true;
}

[[maybe_unused]] const bool registered = [] {
  OpRegistry::global()
      .register_op("_CachedOp")
      .describe(
          "A hybridized block's graph recorded by autograd as one node (made by the executor, "
          "not callable directly).")
      .set_num_inputs([](const NodeAttrs& a) { return state_of(a).plan->num_inputs; })
      .set_num_outputs([](const NodeAttrs& a) {
        const CachedPlan& p = *state_of(a).plan;
        return p.num_outputs + p.num_saved;
      })
      .set_attr_parser([](NodeAttrs* a) { state_of(*a); })
      .set_attr<FNumVisibleOutputs>(
          "FNumVisibleOutputs", [](const NodeAttrs& a) { return state_of(a).plan->num_outputs; })
      .set_attr<FInferShape>("FInferShape", [](const NodeAttrs& a, ShapeVector*,
                                               ShapeVector*) { return refuse_parse(a); })
      .set_attr<FInferType>("FInferType", [](const NodeAttrs& a, DTypeVector*,
                                             DTypeVector*) { return refuse_parse(a); })
      .set_attr<FCompute>(
          "FCompute<cpu>",
          [](const NodeAttrs&, const OpContext&, const std::vector<TBlob>&,
             const std::vector<OpReqType>&, const std::vector<TBlob>&) {
            not_implemented("[_CachedOp] runs through its executor, never as a kernel");
          })
      .set_attr<FGradient>("FGradient", cached_op_gradient);

  OpRegistry::global()
      .register_op("_backward_CachedOp")
      .describe("The gradient of a _CachedOp node: its backward graph run by an executor.")
      .set_num_inputs(
          [](const NodeAttrs& a) { return uint32_t(state_of(a).plan->backward_inputs.size()); })
      .set_num_outputs(
          [](const NodeAttrs& a) { return uint32_t(state_of(a).plan->targets.size()); })
      .set_attr_parser([](NodeAttrs* a) { state_of(*a); })
      .set_attr<FInferShape>("FInferShape",
                             [](const NodeAttrs& a, ShapeVector*, ShapeVector* out) {
                               const CachedOpState& st = state_of(a);
                               for (size_t k = 0; k < out->size(); ++k)
                                 (*out)[k] = st.in_shapes[st.plan->targets[k]];
                               return true;
                             })
      .set_attr<FInferType>("FInferType",
                            [](const NodeAttrs& a, DTypeVector*, DTypeVector* out) {
                              const CachedOpState& st = state_of(a);
                              for (size_t k = 0; k < out->size(); ++k)
                                (*out)[k] = st.in_types[st.plan->targets[k]];
                              return true;
                            })
      .set_attr<TIsBackward>("TIsBackward", true)
      .set_attr<FCompute>("FCompute<cpu>", backward_compute)
      .set_attr<FCompute>("FCompute<gpu>", backward_compute);
  return true;
}();

}  // namespace

// Runs the graph as one recorded node; an empty result when it cannot (the caller records
// op by op).
std::vector<NDArray> Executor::run_cached(const std::vector<NDArray>& inputs) const {
  std::vector<bool> mask(inputs.size());
  bool any = false;
  for (size_t i = 0; i < inputs.size(); ++i)
    any |= (mask[i] = autograd::has_live_history(inputs[i]));
  static const bool enabled = [] {
    const char* v = std::getenv("NDX_CACHED_OP");
    return !(v && std::string(v) == "0");
  }();
  if (!any || !enabled || no_cached_plan_) return {};
  std::shared_ptr<const CachedPlan> plan;
  const bool training = autograd::is_training();
  // A graph holding stateful ops runs on a plan no recorded call still holds (only plans_
  // refers to it): a plan in use would give this call's forward the state an earlier call's
  // backward has yet to read. A training loop, whose last step's outputs are alive while the
  // next step runs, cycles through two such plans.
  for (const auto& p : plans_)
    if (p->mask == mask && same_signature(*p, inputs) &&
        (!mode_dependent_ || p->training == training) && (!per_use_state_ || p.use_count() == 1))
      plan = p;
  if (!plan) {
    try {
      // A new plan for stateful ops runs over nodes parsed afresh (their own state).
      // Mode-dependent nodes are set to this run's mode.
      Graph g = per_use_state_ ? with_fresh_state(graph_) : graph_;
      if (mode_dependent_) g = with_recorded_mode(g, training);
      auto built = build_plan(g, mask, inputs);
      built->training = training;
      plan = std::move(built);
    } catch (const Error& e) {
      if (e.kind() != ErrorKind::kNotImplementedError) throw;
      no_cached_plan_ = true;  // an op without a gradient: record op by op, as before
      return {};
    }
    // The oldest plan goes first (a recorded call holding it keeps it alive).
    if (plans_.size() >= kMaxPlans) plans_.erase(plans_.begin());
    plans_.push_back(plan);
  }
  std::vector<NDArray> values;
  {
    autograd::RecordScope pause(false, autograd::is_training());
    values = plan->forward->run(inputs);
  }
  stats_ = plan->forward->last_plan();
  CachedOpState st;
  st.plan = plan;
  st.in_shapes.reserve(inputs.size());
  st.in_types.reserve(inputs.size());
  auto node = std::make_shared<Node>();
  for (const NDArray& a : inputs) {
    st.in_shapes.push_back(a.shape());
    st.in_types.push_back(a.dtype());
    NodePtr c = input_node(a);
    node->inputs.push_back(c ? NodeEntry{c, 0, 0} : a.autograd_entry()->entry);
  }
  node->attrs.op = Op::get("_CachedOp");
  node->attrs.name = "_CachedOp";
  node->attrs.parsed = std::move(st);
  node->values.reserve(values.size());
  for (const NDArray& v : values) {
    NDArray plain = v;
    plain.set_autograd_entry(nullptr);
    node->values.push_back(std::move(plain));
  }
  std::vector<NDArray> outputs;
  for (uint32_t j = 0; j < plan->num_outputs; ++j) {
    NDArray out = node->values[j];
    auto e = std::make_shared<autograd::Entry>();
    e->entry = NodeEntry{node, j, 0};
    out.set_autograd_entry(std::move(e));
    outputs.push_back(std::move(out));
  }
  return outputs;
}

}  // namespace ndx
