#include "ndx/autograd.h"

#include "ndx/executor.h"

#include <algorithm>
#include <map>
#include <mutex>
#include <set>
#include <unordered_map>
#include <unordered_set>

#include "ndx/amp.h"
#include "ndx/imperative.h"
#include "ndx/op_util.h"
#include "ndx/profiler.h"
#include "op/graph_infer.h"

namespace ndx::autograd {

namespace {
thread_local bool g_recording = false;
thread_local bool g_training = false;
thread_local bool g_creating_graph = false;

NDArray without_entry(NDArray a) {
  a.set_autograd_entry(nullptr);
  return a;
}

NodePtr constant_node(const NDArray& value) {
  NodePtr v = make_variable("constant");
  v->values = {without_entry(value)};
  return v;
}
}  // namespace

// The gradient hook (set_grad_hook): watched leaves by their entry, and the callback.
struct GradHookState {
  std::mutex mu;
  std::vector<std::shared_ptr<Entry>> entries;  // kept alive while watched
  std::unordered_map<const Entry*, int64_t> index;
  GradHook hook;
};
GradHookState& grad_hook_state() {
  static GradHookState s;
  return s;
}

bool is_recording() { return g_recording; }
bool is_training() { return g_training; }
bool creating_graph() { return g_creating_graph; }
bool set_recording(bool on) { return std::exchange(g_recording, on); }
bool set_training(bool on) { return std::exchange(g_training, on); }

void attach_grad(NDArray& x, OpReqType grad_req, const NDArray* grad) {
  if (!x.defined()) value_error("[attach_grad] undefined array");
  if (grad_req == kWriteInplace)
    value_error("[attach_grad] grad_req must be 'write', 'add' or 'null'");
  if (grad) {
    if (!grad->defined()) value_error("[mark_variables] undefined gradient array");
    if (grad->shape() != x.shape())
      value_error("[mark_variables] the gradient has shape ", grad->shape().str(),
                  ", the variable ", x.shape().str());
    if (grad->dtype() != x.dtype())
      type_error("[mark_variables] the gradient has dtype ", grad->dtype(), ", the variable ",
                 x.dtype());
    if (grad->device() != x.device())
      value_error("[mark_variables] the gradient is on ", grad->device().str(),
                  ", the variable on ", x.device().str());
    grad->check_writeable("mark_variables", "gradient");
  }
  auto e = std::make_shared<Entry>();
  NodePtr var = make_variable("variable");
  var->values = {without_entry(x)};
  var->leaf = e;
  e->entry = NodeEntry{var, 0, 0};
  e->is_leaf = true;
  e->grad_req = grad_req;
  if (grad) {
    e->grad = *grad;
  } else {
    e->grad = NDArray(x.shape(), x.dtype(), x.device());
    e->grad.fill(0);
  }
  x.set_autograd_entry(std::move(e));
}

void set_grad_hook(const std::vector<NDArray>& watched, GradHook hook) {
  std::vector<std::shared_ptr<Entry>> entries;
  std::unordered_map<const Entry*, int64_t> index;
  for (size_t i = 0; i < watched.size(); ++i) {
    const auto& e = watched[i].autograd_entry();
    if (!e || !e->is_leaf)
      value_error("[set_grad_hook] array ", i, " has no gradient buffer (call attach_grad)");
    entries.push_back(e);
    index.emplace(e.get(), static_cast<int64_t>(i));
  }
  GradHookState& s = grad_hook_state();
  std::lock_guard<std::mutex> lock(s.mu);
  s.entries = std::move(entries);
  s.index = std::move(index);
  s.hook = watched.empty() ? GradHook() : std::move(hook);
}

std::vector<bool> fresh_grads(const std::vector<NDArray>& xs, bool clear) {
  std::vector<bool> fresh(xs.size(), false);
  for (size_t i = 0; i < xs.size(); ++i) {
    const auto& e = xs[i].autograd_entry();
    if (!e || !e->is_leaf) continue;
    fresh[i] = e->fresh_grad;
    if (clear) e->fresh_grad = false;
  }
  return fresh;
}

NDArray grad_of(const NDArray& x) {
  const auto& e = x.autograd_entry();
  return e && e->is_leaf ? e->grad : NDArray();
}

NDArray detach(const NDArray& x) { return without_entry(x); }

bool requires_grad(const NDArray& x) { return x.autograd_entry() != nullptr; }

// An array whose graph an earlier backward freed is a constant from then on (MXNet's rule:
// backward clears the history it used, so d2l's RNN training reuses the previous batch's state
// without detaching it).
bool has_live_history(const NDArray& a) {
  const auto& e = a.autograd_entry();
  return e && !(e->entry.node && e->entry.node->freed);
}

namespace {
// A random draw traced into a graph is a node, drawn afresh on each run, also when none of its
// inputs comes from the graph's inputs (np.random.uniform(size=...), or
// np.random.normal(np.zeros_like(x)), whose parameter is a constant of the trace); other ops of
// constants only are constants of the trace.
bool traced_random_draw(const NodeAttrs& attrs) {
  if (!is_tracing()) return false;
  static const auto& fresource = Op::attr<FResourceRequest>("FResourceRequest");
  if (!fresource.count(attrs.op)) return false;
  for (const ResourceRequest& r : fresource[attrs.op](attrs))
    if (r.type == ResourceRequest::kRandom) return true;
  return false;
}
}  // namespace

void record_op(const NodeAttrs& attrs, const std::vector<NDArray>& inputs,
               std::vector<NDArray>* outputs) {
  bool any = std::any_of(inputs.begin(), inputs.end(),
                         [](const NDArray& a) { return has_live_history(a); });
  if (!any && !traced_random_draw(attrs)) return;
  auto node = std::make_shared<Node>();
  node->attrs = attrs;
  // A call whose backward depends on the mode it ran in keeps that mode (not in a trace: the
  // graph runs in either mode).
  if (has_recorded_mode(attrs) && !is_tracing())
    Op::attr<FRecordMode>("FRecordMode")[attrs.op](&node->attrs, is_training());
  for (const NDArray& in : inputs)
    node->inputs.push_back(has_live_history(in) ? in.autograd_entry()->entry
                                                : NodeEntry{constant_node(in), 0, 0});
  for (const NDArray& out : *outputs) node->values.push_back(without_entry(out));
  for (uint32_t j = 0; j < outputs->size(); ++j) {
    auto e = std::make_shared<Entry>();
    e->entry = NodeEntry{node, j, 0};
    (*outputs)[j].set_autograd_entry(std::move(e));
  }
}

namespace {

using EntryKey = std::pair<const Node*, uint32_t>;

// Nodes reachable from the heads, inputs before the nodes that use them.
std::vector<NodePtr> topo_order(const std::vector<NodeEntry>& heads) {
  return Graph{heads}.topo_order();
}

NodeEntry sum_entries(const std::vector<NodeEntry>& parts) {
  NodeEntry acc = parts[0];
  for (size_t i = 1; i < parts.size(); ++i) acc = make_node("_np_add", {acc, parts[i]});
  return acc;
}

// Evaluates gradient entries. Recorded nodes give their stored values; with `link`, those values
// carry autograd entries pointing back at their nodes, so recording (create_graph) connects the
// new computation to the forward graph and to the leaves.
class Evaluator {
 public:
  explicit Evaluator(bool link) : link_(link) {}

  // Declares every entry that will be asked for (value or write_into): the outputs no node on
  // the way to them reads are then computed with req kNullOp (MXNet's way: the gradient of an
  // input that needs none, such as the first layer's data, is never computed). Without this
  // call every output is computed.
  void will_ask_for(const std::vector<NodeEntry>& wanted) {
    std::unordered_set<const Node*> seen;
    std::vector<const Node*> stack;
    for (const NodeEntry& e : wanted) {
      if (!e.node) continue;
      used_.insert({e.node.get(), e.index});
      if (seen.insert(e.node.get()).second) stack.push_back(e.node.get());
    }
    while (!stack.empty()) {
      const Node* n = stack.back();
      stack.pop_back();
      if (!n->values.empty()) continue;  // recorded values: its inputs are not evaluated
      for (const NodeEntry& in : n->inputs) {
        used_.insert({in.node.get(), in.index});
        if (seen.insert(in.node.get()).second) stack.push_back(in.node.get());
      }
    }
    prune_ = true;
  }

  NDArray value(const NodeEntry& e) { return eval(e.node).at(e.index); }

  // Computes entry e into `dst` when the op's output there fits it (shape, dtype, device), so
  // a leaf's gradient needs no copy into its .grad.
  void write_into(const NodeEntry& e, const NDArray& dst) {
    destinations_[e.node.get()].emplace_back(e.index, dst);
  }

 private:
  // Post-order walk with an explicit stack: the gradient graph of a million-node chain is a
  // million nodes deep, too deep for one stack frame per node.
  const std::vector<NDArray>& eval(const NodePtr& root) {
    // Pointers to the NodePtrs held by the graph's edges, which outlive the walk.
    std::vector<std::pair<const NodePtr*, size_t>> stack{{&root, 0}};
    while (!stack.empty()) {
      auto& [ptr, next] = stack.back();
      const NodePtr& n = *ptr;
      if (done_.count(n.get()) || settle(n)) {
        stack.pop_back();
      } else if (next < n->inputs.size()) {
        const NodePtr* child = &n->inputs[next++].node;
        stack.push_back({child, 0});
      } else {
        compute(n);
        stack.pop_back();
      }
    }
    return done_.at(root.get());
  }

  // Records the values of a node that needs no inputs evaluated (recorded values); false when
  // its inputs must be evaluated first.
  bool settle(const NodePtr& n) {
    if (n->freed)
      value_error(
          "[backward] the graph was freed by an earlier backward; pass retain_graph=True to the "
          "first backward to run another one");
    if (n->values.empty()) {
      if (n->is_variable()) value_error("[backward] a graph variable has no value");
      return false;
    }
    std::vector<NDArray> vals = n->values;
    if (link_) {
      auto leaf = n->leaf.lock();
      for (uint32_t j = 0; j < vals.size(); ++j) {
        if (leaf) {
          vals[j].set_autograd_entry(leaf);
        } else {
          auto e = std::make_shared<Entry>();
          e->entry = NodeEntry{n, j, 0};
          vals[j].set_autograd_entry(std::move(e));
        }
      }
    }
    done_[n.get()] = std::move(vals);
    return true;
  }

  void compute(const NodePtr& n) {
    amp::PauseScope no_amp;  // gradient ops run on the dtypes the forward recorded
    std::vector<NDArray> in;
    for (const auto& e : n->inputs) in.push_back(done_.at(e.node.get()).at(e.index));
    InvokeOptions options;
    options.all_outputs = true;
    std::vector<OpReqType> req;
    if (prune_ && n->num_outputs() > 1) {
      req.assign(n->num_outputs(), kWriteTo);
      bool skip = false;
      for (uint32_t j = 0; j < req.size(); ++j)
        if (!used_.count({n.get(), j})) req[j] = kNullOp, skip = true;
      if (skip) options.req = &req;
    }
    std::vector<NDArray> preferred;
    if (auto d = destinations_.find(n.get()); d != destinations_.end()) {
      preferred.resize(n->num_outputs());
      for (const auto& [index, dst] : d->second) preferred.at(index) = dst;
      options.preferred = &preferred;
    }
    done_[n.get()] = invoke(n->attrs, in, options);
  }

  bool link_;
  bool prune_ = false;
  std::set<EntryKey> used_;  // outputs read (will_ask_for)
  std::unordered_map<const Node*, std::vector<NDArray>> done_;
  std::unordered_map<const Node*, std::vector<std::pair<uint32_t, NDArray>>> destinations_;
};

struct GradResult {
  std::vector<NodeEntry> grads;  // per target; node null when the target gets no gradient
  std::vector<NodePtr> order;
};

GradResult build_gradient(const std::vector<NDArray>& heads, const std::vector<NDArray>& head_grads,
                          const std::vector<NodeEntry>& targets) {
  if (!head_grads.empty() && head_grads.size() != heads.size())
    value_error("[backward] got ", head_grads.size(), " head gradients for ", heads.size(),
                " heads");
  std::vector<NodeEntry> head_entries, head_grad_entries;
  for (size_t i = 0; i < heads.size(); ++i) {
    const auto& e = heads[i].autograd_entry();
    if (!e)
      value_error("[backward] head ", i,
                  " is not part of a recorded computation: compute it inside "
                  "autograd.record() from arrays marked with attach_grad()");
    NDArray hg;
    if (head_grads.empty() || !head_grads[i].defined()) {
      hg = NDArray(heads[i].shape(), heads[i].dtype(), heads[i].device());
      hg.fill(1);
    } else {
      if (head_grads[i].shape() != heads[i].shape())
        value_error("[backward] head gradient ", i, " has shape ", head_grads[i].shape().str(),
                    ", expected ", heads[i].shape().str());
      hg = head_grads[i];
    }
    head_entries.push_back(e->entry);
    head_grad_entries.push_back(NodeEntry{constant_node(hg), 0, 0});
  }
  GradResult r;
  r.order = topo_order(head_entries);
  r.grads = gradient_entries(head_entries, head_grad_entries, targets);
  return r;
}

void free_graph(const std::vector<NodePtr>& order) {
  for (const auto& n : order)
    if (!n->is_variable()) {
      n->values.clear();
      n->freed = true;
    }
}

bool same_buffer(const NDArray& a, const NDArray& b) {
  return a.shares_storage_with(b) && a.raw_data() == b.raw_data() && a.shape() == b.shape() &&
         a.strides() == b.strides();
}

// Lets the evaluator compute write-mode gradients straight into the leaves' .grad arrays
// (MXNet's backward writes its gradient arrays the same way): those produced by an op of the
// backward graph, each produced for one leaf only, of no leaf a gradient hook watches (the hook
// must see the write happen after its kBeforeWrite), and of .grad arrays nothing in the
// computation reads (a forward value or a head gradient sharing the storage: writing early
// would change what a later op reads).
void direct_gradient_writes(const GradResult& r, const std::vector<NDArray>& heads,
                            const std::vector<NDArray>& head_grads,
                            const std::vector<std::shared_ptr<Entry>>& leaves,
                            const std::vector<int64_t>& watched, Evaluator* ev) {
  std::unordered_set<const Storage*> read;
  for (const NodePtr& n : r.order)
    for (const NDArray& v : n->values) read.insert(v.storage().get());
  for (const NDArray& v : heads) read.insert(v.storage().get());
  for (const NDArray& v : head_grads)
    if (v.defined()) read.insert(v.storage().get());
  std::map<EntryKey, int> producers;  // gradient entry -> how many leaves it serves
  for (const NodeEntry& e : r.grads)
    if (e.node) ++producers[{e.node.get(), e.index}];
  std::unordered_set<const Storage*> taken;
  for (size_t i = 0; i < leaves.size(); ++i) {
    const NodeEntry& e = r.grads[i];
    const NDArray& grad = leaves[i]->grad;
    if (!e.node || e.node->is_variable() || !e.node->values.empty() ||
        leaves[i]->grad_req != kWriteTo || watched[i] >= 0 || !grad.defined() ||
        producers[{e.node.get(), e.index}] != 1 || read.count(grad.storage().get()) ||
        !taken.insert(grad.storage().get()).second)
      continue;
    ev->write_into(e, grad);
  }
}

NDArray zeros_like(const NDArray& x) {
  NDArray z(x.shape(), x.dtype(), x.device());
  z.fill(0);
  return z;
}

}  // namespace

std::vector<NodeEntry> gradient_entries(const std::vector<NodeEntry>& heads,
                                        const std::vector<NodeEntry>& head_grads,
                                        const std::vector<NodeEntry>& targets) {
  static const auto& fgrad = Op::attr<FGradient>("FGradient");
  std::map<EntryKey, std::vector<NodeEntry>> contributions;
  for (size_t i = 0; i < heads.size(); ++i)
    contributions[{heads[i].node.get(), heads[i].index}].push_back(head_grads.at(i));
  std::vector<NodePtr> order = topo_order(heads);
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    const NodePtr& n = *it;
    if (n->is_variable()) continue;
    uint32_t nout = n->num_outputs();
    bool any = false;
    for (uint32_t j = 0; j < nout; ++j) any |= contributions.count({n.get(), j}) > 0;
    if (!any) continue;
    if (n->freed)
      value_error(
          "[backward] the graph was freed by an earlier backward; pass retain_graph=True to the "
          "first backward to run another one");
    if (!fgrad.count(n->op()))
      not_implemented("[backward] operator ", op_name(n->attrs), " has no gradient (FGradient)");
    std::vector<NodeEntry> ograds;
    for (uint32_t j = 0; j < nout; ++j) {
      auto c = contributions.find({n.get(), j});
      ograds.push_back(c != contributions.end()
                           ? sum_entries(c->second)
                           : make_node("_np_zeros_like", {NodeEntry{n, j, 0}}));
    }
    std::vector<NodeEntry> in_grads = fgrad[n->op()](n, ograds);
    if (in_grads.size() != n->inputs.size())
      raise(ErrorKind::kRuntimeError, "[backward] FGradient of ", n->op()->name, " returned ",
            in_grads.size(), " gradients for ", n->inputs.size(), " inputs");
    for (size_t i = 0; i < in_grads.size(); ++i)
      contributions[{n->inputs[i].node.get(), n->inputs[i].index}].push_back(in_grads[i]);
  }
  std::vector<NodeEntry> grads;
  for (const auto& t : targets) {
    auto c = contributions.find({t.node.get(), t.index});
    grads.push_back(c != contributions.end() ? sum_entries(c->second) : NodeEntry{});
  }
  return grads;
}

void backward(const std::vector<NDArray>& heads, const std::vector<NDArray>& head_grads,
              bool retain_graph) {
  static const std::string kSpanName = "backward";
  profiler::Span span(kSpanName, "autograd");
  // The leaves reachable from the heads, found once the order is known.
  std::vector<NodeEntry> head_entries;
  for (const auto& h : heads)
    if (h.autograd_entry()) head_entries.push_back(h.autograd_entry()->entry);
  std::vector<std::shared_ptr<Entry>> leaves;
  std::vector<NodeEntry> targets;
  for (const auto& n : topo_order(head_entries)) {
    auto leaf = n->leaf.lock();
    if (leaf && leaf->grad_req != kNullOp) {
      leaves.push_back(leaf);
      targets.push_back(leaf->entry);
    }
  }
  GradResult r = build_gradient(heads, head_grads, targets);
  // Which leaves a gradient hook watches (a copy, so the hook may be replaced meanwhile).
  GradHook hook;
  std::vector<int64_t> watched(leaves.size(), -1);
  {
    GradHookState& s = grad_hook_state();
    std::lock_guard<std::mutex> lock(s.mu);
    if (s.hook) {
      hook = s.hook;
      for (size_t i = 0; i < leaves.size(); ++i) {
        auto it = s.index.find(leaves[i].get());
        if (it != s.index.end()) watched[i] = it->second;
      }
    }
  }
  bool wrote_watched = false;
  {
    RecordScope no_record(false, is_training());
    Evaluator ev(false);
    ev.will_ask_for(r.grads);
    direct_gradient_writes(r, heads, head_grads, leaves, watched, &ev);
    // Last-used leaves first: their gradients need the least of the backward pass, so a hook
    // can send them while the rest is computed.
    for (size_t i = leaves.size(); i-- > 0;) {
      NDArray g = r.grads[i].node ? ev.value(r.grads[i]) : zeros_like(leaves[i]->grad);
      if (hook && watched[i] >= 0) hook(watched[i], GradEvent::kBeforeWrite);
      if (leaves[i]->grad_req == kAddTo) {
        NDArray sum = invoke("_np_add", {leaves[i]->grad, g})[0];
        leaves[i]->grad.assign(sum);
      } else if (!same_buffer(g, leaves[i]->grad)) {
        leaves[i]->grad.assign(g);
      }
      leaves[i]->fresh_grad = true;
      if (hook && watched[i] >= 0) {
        hook(watched[i], GradEvent::kWritten);
        wrote_watched = true;
      }
    }
  }
  if (wrote_watched) hook(-1, GradEvent::kBackwardDone);
  if (!retain_graph) free_graph(r.order);
}

std::vector<NDArray> grad(const std::vector<NDArray>& heads, const std::vector<NDArray>& variables,
                          const std::vector<NDArray>& head_grads, bool create_graph,
                          bool retain_graph) {
  std::vector<NodeEntry> targets;
  struct CreatingGraph {  // (for the FGradients build_gradient calls)
    bool prev;
    ~CreatingGraph() { g_creating_graph = prev; }
  } creating{std::exchange(g_creating_graph, create_graph)};
  for (size_t i = 0; i < variables.size(); ++i) {
    const auto& e = variables[i].autograd_entry();
    if (!e)
      value_error("[grad] variable ", i,
                  " is not recorded: call attach_grad() on it before recording");
    targets.push_back(e->entry);
  }
  GradResult r = build_gradient(heads, head_grads, targets);
  std::vector<NDArray> out;
  {
    RecordScope scope(create_graph, is_training());
    Evaluator ev(create_graph);
    if (!create_graph) ev.will_ask_for(r.grads);  // (a recorded graph keeps every output)
    for (size_t i = 0; i < variables.size(); ++i)
      out.push_back(r.grads[i].node ? ev.value(r.grads[i]) : zeros_like(variables[i]));
  }
  if (!retain_graph && !create_graph) free_graph(r.order);
  return out;
}

}  // namespace ndx::autograd
