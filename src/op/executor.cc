#include "ndx/executor.h"

#include <algorithm>
#include <unordered_map>
#include <unordered_set>

#include "gpu/runtime.h"
#include "kernel/blob.h"
#include "ndx/amp.h"
#include "ndx/autograd.h"
#include "ndx/imperative.h"
#include "ndx/op_util.h"
#include "ndx/profiler.h"
#include "ndx/runtime.h"
#include "op/fusion.h"
#include "op/gpu_dispatch.h"
#include "op/graph_infer.h"

namespace ndx {

namespace {
thread_local bool g_tracing = false;
}

bool is_tracing() { return g_tracing; }
bool set_tracing(bool on) { return std::exchange(g_tracing, on); }
TraceScope::TraceScope() : prev_(g_tracing) { g_tracing = true; }
TraceScope::~TraceScope() { g_tracing = prev_; }

NDArray trace_input(const NDArray& value, const std::string& name) {
  NDArray v = value;
  auto e = std::make_shared<autograd::Entry>();
  e->entry = NodeEntry{make_variable(name), 0, 0};
  v.set_autograd_entry(std::move(e));
  return v;
}

Graph traced_graph(const std::vector<NDArray>& outputs) {
  Graph g;
  for (const NDArray& o : outputs) {
    if (o.autograd_entry()) {
      g.outputs.push_back(o.autograd_entry()->entry);
    } else {  // an output that does not depend on any input: a constant
      NodePtr c = make_variable("constant");
      NDArray plain = o;
      plain.set_autograd_entry(nullptr);
      c->values = {plain};
      g.outputs.push_back(NodeEntry{c, 0, 0});
    }
  }
  return g;
}

std::vector<NodePtr> Graph::topo_order() const {
  std::vector<NodePtr> order;
  std::unordered_set<const Node*> seen;
  std::vector<std::pair<NodePtr, size_t>> stack;
  for (const auto& out : outputs) {
    if (!seen.insert(out.node.get()).second) continue;
    stack.push_back({out.node, 0});
    while (!stack.empty()) {
      auto& [n, next] = stack.back();
      if (next < n->inputs.size()) {
        NodePtr child = n->inputs[next++].node;
        if (seen.insert(child.get()).second) stack.push_back({child, 0});
      } else {
        order.push_back(n);
        stack.pop_back();
      }
    }
  }
  return order;
}

std::vector<NodePtr> Graph::inputs() const {
  std::vector<NodePtr> in;
  for (const auto& n : topo_order())
    if (n->is_variable() && n->values.empty()) in.push_back(n);
  return in;
}

std::vector<std::string> Graph::input_names() const {
  std::vector<std::string> names;
  for (const auto& n : inputs()) names.push_back(n->attrs.name);
  return names;
}

namespace {

// The shapes and dtypes of a node's inputs, from the entries known so far.
std::pair<ShapeVector, DTypeVector> input_types(const Node& n, const EntryTypes& known) {
  std::pair<ShapeVector, DTypeVector> r;
  for (const auto& e : n.inputs) {
    const auto& [s, t] = known.at(e.node.get());
    r.first.push_back(s.at(e.index));
    r.second.push_back(t.at(e.index));
  }
  return r;
}

}  // namespace

void infer_entries(const Graph& g, EntryTypes* known) {
  for (const auto& n : g.topo_order()) {
    if (known->count(n.get())) continue;
    if (n->is_variable()) {
      if (n->values.empty())  // an input nobody seeded
        (*known)[n.get()] = {{Shape::unknown()}, {DType::kUnknown}};
      else
        (*known)[n.get()] = {{n->values.at(0).shape()}, {n->values.at(0).dtype()}};
      continue;
    }
    auto [in_s, in_t] = input_types(*n, *known);
    uint32_t nout = n->num_outputs();
    ShapeVector out_s(nout, Shape::unknown());
    DTypeVector out_t(nout, DType::kUnknown);
    infer_shapes(n->attrs, &in_s, &out_s);
    infer_types(n->attrs, &in_t, &out_t);
    (*known)[n.get()] = {std::move(out_s), std::move(out_t)};
  }
}

GraphTypes infer_graph(const Graph& g, const std::vector<Shape>& input_shapes,
                       const std::vector<DType>& input_types) {
  auto ins = g.inputs();
  if (input_shapes.size() != ins.size() || input_types.size() != ins.size())
    value_error("[infer_shape] the graph has ", ins.size(), " inputs, got ", input_shapes.size(),
                " shapes and ", input_types.size(), " dtypes");
  EntryTypes known;
  for (size_t i = 0; i < ins.size(); ++i)
    known[ins[i].get()] = {{input_shapes[i]}, {input_types[i]}};
  infer_entries(g, &known);
  GraphTypes r;
  for (const auto& o : g.outputs) {
    r.output_shapes.push_back(known[o.node.get()].first.at(o.index));
    r.output_types.push_back(known[o.node.get()].second.at(o.index));
  }
  return r;
}

namespace {

bool all_known(const ShapeVector& v) {
  return std::all_of(v.begin(), v.end(), [](const Shape& s) { return s.is_known(); });
}
bool all_known(const DTypeVector& v) {
  return std::all_of(v.begin(), v.end(), [](DType t) { return t != DType::kUnknown; });
}

// Copies what `from` knows into the unknown places of `to`; returns whether any was unknown.
template <typename V, typename Known>
bool fill_unknown(V* to, const V& from, Known is_known) {
  bool changed = false;
  for (size_t i = 0; i < to->size(); ++i)
    if (!is_known((*to)[i]) && is_known(from[i])) {
      (*to)[i] = from[i];
      changed = true;
    }
  return changed;
}

// One pass of infer_graph_partial over the op nodes, in graph order. An op's inference runs
// once all its inputs are known, or at any time for an op that fills unknown inputs; what it
// works out is written back into the entries of its inputs and outputs. Returns whether an
// entry changed.
bool partial_pass(const std::vector<NodePtr>& order, EntryTypes* known) {
  static const auto& fshape = Op::attr<FInferShape>("FInferShape");
  static const auto& ftype = Op::attr<FInferType>("FInferType");
  static const auto& ffills = Op::attr<TFillsInputs>("TFillsInputs");
  const auto shape_known = [](const Shape& s) { return s.is_known(); };
  const auto type_known = [](DType t) { return t != DType::kUnknown; };
  bool changed = false;
  for (const auto& n : order) {
    if (n->is_variable()) continue;
    const Op* op = n->attrs.op;
    const bool fills = ffills.count(op) && ffills[op];
    auto [in_s, in_t] = input_types(*n, *known);
    auto& [out_s, out_t] = known->at(n.get());
    ShapeVector s_in = in_s, s_out = out_s;
    if (!(all_known(in_s) && all_known(out_s)) && (all_known(in_s) || fills) && fshape.count(op))
      fshape[op](n->attrs, &s_in, &s_out);
    DTypeVector t_in = in_t, t_out = out_t;
    if (!(all_known(in_t) && all_known(out_t)) && (all_known(in_t) || fills) && ftype.count(op))
      ftype[op](n->attrs, &t_in, &t_out);
    changed |= fill_unknown(&out_s, s_out, shape_known);
    changed |= fill_unknown(&out_t, t_out, type_known);
    for (size_t i = 0; i < n->inputs.size(); ++i) {
      auto& [s, t] = known->at(n->inputs[i].node.get());
      const uint32_t k = n->inputs[i].index;
      // (An entry read twice by the op, fully_connected(x, p, p), must get one shape.)
      if (s[k].is_known() && s_in[i].is_known() && s[k] != s_in[i])
        value_error("[", op_name(n->attrs), "] input ", i, " has shape ", s[k].str(),
                    ", the op infers ", s_in[i].str());
      if (t[k] != DType::kUnknown && t_in[i] != DType::kUnknown && t[k] != t_in[i])
        type_error("[", op_name(n->attrs), "] input ", i, " has dtype ", t[k], ", the op infers ",
                   t_in[i]);
      if (!s[k].is_known() && s_in[i].is_known()) {
        s[k] = s_in[i];
        changed = true;
      }
      if (t[k] == DType::kUnknown && t_in[i] != DType::kUnknown) {
        t[k] = t_in[i];
        changed = true;
      }
    }
  }
  return changed;
}

}  // namespace

PartialGraphTypes infer_graph_partial(const Graph& g, const std::vector<Shape>& input_shapes,
                                      const std::vector<DType>& input_types) {
  auto ins = g.inputs();
  if (input_shapes.size() != ins.size() || input_types.size() != ins.size())
    value_error("[infer_shape] the graph has ", ins.size(), " inputs, got ", input_shapes.size(),
                " shapes and ", input_types.size(), " dtypes");
  const auto order = g.topo_order();
  EntryTypes known;
  for (const auto& n : order) {
    if (!n->is_variable())
      known[n.get()] = {ShapeVector(n->num_outputs(), Shape::unknown()),
                        DTypeVector(n->num_outputs(), DType::kUnknown)};
    else if (!n->values.empty())
      known[n.get()] = {{n->values.at(0).shape()}, {n->values.at(0).dtype()}};
  }
  for (size_t i = 0; i < ins.size(); ++i)
    known[ins[i].get()] = {{input_shapes[i]}, {input_types[i]}};
  // Each pass that changes something makes at least one more entry known, so this ends; the
  // bound is a guard.
  for (size_t pass = 0; pass <= order.size() && partial_pass(order, &known); ++pass) {
  }
  PartialGraphTypes r;
  for (const auto& n : ins) {
    r.input_shapes.push_back(known[n.get()].first[0]);
    r.input_types.push_back(known[n.get()].second[0]);
  }
  for (const auto& o : g.outputs) {
    r.output_shapes.push_back(known[o.node.get()].first.at(o.index));
    r.output_types.push_back(known[o.node.get()].second.at(o.index));
  }
  return r;
}

std::unique_ptr<Executor::Program> Executor::make_program(Graph g,
                                                          const std::vector<NodePtr>& inputs) {
  auto p = std::make_unique<Program>();
  p->graph = std::move(g);
  std::unordered_map<const Node*, int> slot_of;
  for (const auto& n : inputs) slot_of[n.get()] = p->num_slots++;
  for (const auto& n : p->graph.topo_order()) {
    if (slot_of.count(n.get())) continue;
    if (n->is_variable()) {
      if (n->values.empty()) value_error("[executor] variable '", n->attrs.name, "' has no value");
      slot_of[n.get()] = p->num_slots;
      p->constants.push_back({p->num_slots++, n->values[0]});
      continue;
    }
    Step s{&n->attrs, {}, p->num_slots, {}, {}};
    for (const auto& e : n->inputs)
      s.in_slots.push_back(slot_of.at(e.node.get()) + static_cast<int>(e.index));
    slot_of[n.get()] = p->num_slots;
    p->num_slots += static_cast<int>(n->num_outputs());
    p->steps.push_back(std::move(s));
  }
  for (const auto& o : p->graph.outputs)
    p->output_slots.push_back(slot_of.at(o.node.get()) + static_cast<int>(o.index));
  // Liveness: the last step reading each slot. Inputs, constants and graph outputs never die.
  const auto n_slots = static_cast<size_t>(p->num_slots);
  std::vector<int> last_use(n_slots, -1);
  for (size_t i = 0; i < p->steps.size(); ++i)
    for (int k : p->steps[i].in_slots) last_use[static_cast<size_t>(k)] = static_cast<int>(i);
  std::vector<bool> pinned(n_slots, false);
  for (size_t i = 0; i < inputs.size(); ++i) pinned[i] = true;
  for (const auto& c : p->constants) pinned[static_cast<size_t>(c.first)] = true;
  for (int k : p->output_slots) pinned[static_cast<size_t>(k)] = true;
  for (size_t k = 0; k < n_slots; ++k)
    if (!pinned[k] && last_use[k] >= 0)
      p->steps[static_cast<size_t>(last_use[k])].dying.push_back(static_cast<int>(k));
  // Outputs nothing reads (the data gradient of a first layer in a backward graph): kNullOp.
  for (Step& s : p->steps) {
    const uint32_t nout = s.attrs->op->outputs_for(*s.attrs);
    for (uint32_t j = 0; nout > 1 && j < nout; ++j) {
      const auto k = static_cast<size_t>(s.out_slot) + j;
      if (pinned[k] || last_use[k] >= 0) continue;
      if (s.unread_req.empty()) s.unread_req.assign(nout, kWriteTo);
      s.unread_req[j] = kNullOp;
    }
  }
  return p;
}

Executor::Executor(Graph g) : graph_(std::move(g)) {
  const auto ins = graph_.inputs();
  for (const auto& n : ins) input_names_.push_back(n->attrs.name);
  plain_ = make_program(graph_, ins);
  for (const Step& s : plain_->steps) {
    per_use_state_ |= has_per_use_state(*s.attrs);
    mode_dependent_ |= has_recorded_mode(*s.attrs);
  }
}

bool has_per_use_state(const NodeAttrs& attrs) {
  static const auto& per_use = Op::attr<bool>("TPerUseState");
  return attrs.op && per_use.get(attrs.op, false);
}

NodeAttrs fresh_state(const NodeAttrs& attrs) {
  NodeAttrs fresh = attrs;
  fresh.parsed.reset();
  if (attrs.op->attr_parser) attrs.op->attr_parser(&fresh);
  return fresh;
}

namespace {

// A copy of g's op nodes with attributes `attrs_of` gives (variables and constants shared).
Graph copy_with_attrs(const Graph& g, const std::function<NodeAttrs(const NodeAttrs&)>& attrs_of) {
  std::unordered_map<const Node*, NodePtr> copy_of;
  auto entry = [&](const NodeEntry& e) {
    auto it = copy_of.find(e.node.get());
    return it == copy_of.end() ? e : NodeEntry{it->second, e.index, e.version};
  };
  for (const NodePtr& n : g.topo_order()) {
    if (n->is_variable()) continue;  // inputs and constants: the same nodes
    auto c = std::make_shared<Node>();
    c->attrs = attrs_of(n->attrs);
    for (const NodeEntry& e : n->inputs) c->inputs.push_back(entry(e));
    for (const NodePtr& d : n->control_deps) {
      auto it = copy_of.find(d.get());
      c->control_deps.push_back(it == copy_of.end() ? d : it->second);
    }
    copy_of[n.get()] = std::move(c);
  }
  Graph out;
  for (const NodeEntry& e : g.outputs) out.outputs.push_back(entry(e));
  return out;
}

const OpMap<FRecordMode>& record_mode() {
  static const auto& m = Op::attr<FRecordMode>("FRecordMode");
  return m;
}

}  // namespace

Graph with_fresh_state(const Graph& g) {
  return copy_with_attrs(
      g, [](const NodeAttrs& a) { return has_per_use_state(a) ? fresh_state(a) : a; });
}

bool has_recorded_mode(const NodeAttrs& attrs) { return attrs.op && record_mode().count(attrs.op); }

Graph with_recorded_mode(const Graph& g, bool is_train) {
  return copy_with_attrs(g, [is_train](const NodeAttrs& a) {
    NodeAttrs c = a;
    if (has_recorded_mode(a)) record_mode()[a.op](&c, is_train);
    return c;
  });
}

Executor::~Executor() = default;

const Executor::Program& Executor::planned_program() const {
  if (!fusion_enabled()) return *plain_;
  if (!fusion_tried_) {
    fusion_tried_ = true;
    // Convolutions take their epilogues first (an add or relu after a batch_norm would
    // otherwise join an elementwise group), then the elementwise ops group.
    int conv_nodes = 0, conv_ops = 0, nodes = 0, ops = 0;
    Graph convs = fuse_convolutions(graph_, &conv_nodes, &conv_ops);
    Graph fused = fuse_elementwise(convs, &nodes, &ops);
    nodes += conv_nodes;
    ops += conv_ops;
    if (nodes > 0) {
      fused_ = make_program(std::move(fused), graph_.inputs());
      fused_->fused_nodes = nodes;
      fused_->fused_ops = ops;
    }
  }
  return fused_ ? *fused_ : *plain_;
}

// Chooses buffers for a step's outputs: the caller's destination of a graph output (run_into),
// a dying input the op may overwrite (FInplaceOption), a freed buffer of the same shape and
// dtype, or else a fresh one. The step's output shapes and dtypes are inferred on the first
// run of an input signature and kept.
void Executor::plan_outputs(const Program& p, size_t step, std::vector<NDArray>& slots,
                            std::vector<NDArray>& free, std::vector<NDArray>* bufs,
                            const NDArray* const* dest) const {
  static const auto& finplace = Op::attr<FInplaceOption>("FInplaceOption");
  const Step& s = p.steps[step];
  const Op* op = s.attrs->op;
  auto& [out_s, out_t] = p.step_outs[step];
  if (out_s.empty() && op->outputs_for(*s.attrs) > 0) {
    ShapeVector in_s;
    DTypeVector in_t;
    for (int k : s.in_slots) {
      in_s.push_back(slots[static_cast<size_t>(k)].shape());
      in_t.push_back(slots[static_cast<size_t>(k)].dtype());
    }
    uint32_t n = op->outputs_for(*s.attrs);
    out_s.assign(n, Shape::unknown());
    out_t.assign(n, DType::kUnknown);
    infer_shapes(*s.attrs, &in_s, &out_s);
    infer_types(*s.attrs, &in_t, &out_t);
  }
  const uint32_t nout = static_cast<uint32_t>(out_s.size());
  bufs->assign(nout, NDArray());
  for (uint32_t j = 0; dest && j < nout; ++j) {
    const NDArray* d = dest[j];
    if (d && d->shape() == out_s[j] && d->dtype() == out_t[j] && d->is_contiguous())
      (*bufs)[j] = *d;
  }
  std::vector<bool> taken(s.in_slots.size(), false);
  int in_place = 0, reused = 0;
  if (finplace.count(op))
    for (auto [i, j] : finplace[op](*s.attrs)) {
      if (i < 0 || j < 0 || i >= static_cast<int>(s.in_slots.size()) || j >= static_cast<int>(nout))
        continue;
      int slot = s.in_slots[static_cast<size_t>(i)];
      const NDArray& cand = slots[static_cast<size_t>(slot)];
      bool dies_here = std::find(s.dying.begin(), s.dying.end(), slot) != s.dying.end();
      // Only the slot table may hold the buffer (views or user references would see the write).
      if (dies_here && !taken[static_cast<size_t>(i)] && !(*bufs)[j].defined() &&
          cand.storage().use_count() == 1 && cand.is_contiguous() && cand.shape() == out_s[j] &&
          cand.dtype() == out_t[j]) {
        (*bufs)[j] = cand;
        taken[static_cast<size_t>(i)] = true;
        ++in_place;
      }
    }
  for (uint32_t j = 0; j < nout; ++j) {
    if ((*bufs)[j].defined()) continue;
    for (size_t f = 0; f < free.size(); ++f)
      if (free[f].shape() == out_s[j] && free[f].dtype() == out_t[j]) {
        (*bufs)[j] = std::move(free[f]);
        free.erase(free.begin() + static_cast<std::ptrdiff_t>(f));
        ++reused;
        break;
      }
  }
  const Device device =
      s.in_slots.empty() ? cpu() : slots[static_cast<size_t>(s.in_slots[0])].device();
  for (uint32_t j = 0; j < nout; ++j)
    if (!(*bufs)[j].defined()) {  // (checked first, so a huge size is a typed error)
      checked_size(out_s[j], dtype_size(out_t[j]), op->name.c_str());
      (*bufs)[j] = NDArray(out_s[j], out_t[j], device);
      ++stats_.outputs_allocated;
    }
  stats_.outputs_in_place += in_place;
  stats_.outputs_reused += reused;
}

// Runs a planned step's CPU kernel on buffers chosen by plan_outputs, without invoke: the
// step's shapes and dtypes were inferred once for this input signature, its inputs and
// outputs are the executor's own arrays (checked when the program was planned), so only the
// blobs and requests are made here; run_kernel adds the resources and the profiler span.
// False, having run nothing, where invoke's general path is needed: a GPU array, or a
// strided input the kernel cannot read.
bool Executor::run_direct(const Step& s, const std::vector<NDArray>& slots,
                          const std::vector<NDArray>& bufs, DirectScratch& scratch) const {
  static const auto& fcompute_cpu = Op::attr<FCompute>("FCompute<cpu>");
  static const auto& fstrided = Op::attr<TStridedInputs>("TStridedInputs");
  const Op* op = s.attrs->op;
  if (!fcompute_cpu.count(op)) return false;
  const bool strided_ok = fstrided.get(op, false);
  auto& in = scratch.in;
  auto& out = scratch.out;
  auto& req = scratch.req;
  in.clear();
  out.clear();
  for (int k : s.in_slots) {
    const NDArray& a = slots[static_cast<size_t>(k)];
    if (!a.defined() || !a.device().is_cpu() || !(strided_ok || a.is_contiguous())) return false;
    in.push_back(kernel::to_blob(a));
  }
  for (const NDArray& b : bufs) {
    if (!b.device().is_cpu()) return false;
    out.push_back(kernel::to_blob(b));
  }
  req.assign(bufs.size(), kWriteTo);
  if (!s.unread_req.empty()) req = s.unread_req;
  for (size_t j = 0; j < out.size(); ++j) {
    cuda::wait_for_host_write(out[j].dptr);  // pinned memory a copy may still read
    for (const TBlob& b : in)                // a dying input's buffer, given by FInplaceOption
      if (b.dptr == out[j].dptr && req[j] == kWriteTo) req[j] = kWriteInplace;
  }
  run_kernel(*s.attrs, fcompute_cpu[op], cpu(), autograd::is_training(), in, req, out);
  return true;
}

std::vector<NDArray> Executor::run(const std::vector<NDArray>& inputs) const {
  static const std::string kSpanName = "graph run";
  profiler::Span span(kSpanName, "executor");
  if (inputs.size() != input_names_.size())
    value_error("[executor] the graph takes ", input_names_.size(), " inputs, got ", inputs.size());
  if (autograd::is_recording() && !is_tracing()) {
    std::vector<NDArray> recorded = run_cached(inputs);
    if (!recorded.empty()) return recorded;
  }
  return run_planned(inputs, nullptr);
}

std::vector<NDArray> Executor::run_into(const std::vector<NDArray>& inputs,
                                        const std::vector<NDArray>& into) const {
  if (into.size() != graph_.outputs.size())
    value_error("[executor] the graph has ", graph_.outputs.size(), " outputs, got ", into.size(),
                " arrays to write them into");
  if (autograd::is_recording() || is_tracing()) return run(inputs);
  static const std::string kSpanName = "graph run";
  profiler::Span span(kSpanName, "executor");
  if (inputs.size() != input_names_.size())
    value_error("[executor] the graph takes ", input_names_.size(), " inputs, got ", inputs.size());
  return run_planned(inputs, &into);
}

std::vector<NDArray> Executor::run_planned(const std::vector<NDArray>& inputs,
                                           const std::vector<NDArray>* into) const {
  // Recorded values must outlive the run for backward, and recorded or traced nodes must be the
  // graph's own ops: only unrecorded runs are planned (and fused).
  const bool plan = !autograd::is_recording() && !is_tracing();
  amp::PauseScope no_amp;  // the graph holds the casts AMP made when it was traced
  const Program& p = plan ? planned_program() : *plain_;
  std::vector<NDArray> slots(static_cast<size_t>(p.num_slots));
  for (size_t i = 0; i < inputs.size(); ++i) slots[i] = inputs[i];
  for (const auto& [slot, value] : p.constants) slots[static_cast<size_t>(slot)] = value;
  InvokeOptions options;
  options.all_outputs = true;
  stats_ = PlanStats{};
  stats_.fused_nodes = p.fused_nodes;
  stats_.fused_ops = p.fused_ops;
  stats_.kernels = static_cast<int>(p.steps.size());
  if (plan) {  // a new input signature: forget the cached output shapes
    bool same = sig_shapes_.size() == inputs.size();
    for (size_t i = 0; same && i < inputs.size(); ++i)
      same = sig_shapes_[i] == inputs[i].shape() && sig_types_[i] == inputs[i].dtype();
    if (!same) {
      sig_shapes_.clear();
      sig_types_.clear();
      for (const NDArray& a : inputs)
        sig_shapes_.push_back(a.shape()), sig_types_.push_back(a.dtype());
      plain_->step_outs.clear();
      if (fused_) fused_->step_outs.clear();
    }
    if (p.step_outs.size() != p.steps.size()) p.step_outs.assign(p.steps.size(), {});
  }
  // Where a graph output made by a step is to be written (run_into): by slot. An output
  // listed twice, or one that is an input or a constant, keeps the run's own buffer.
  std::vector<const NDArray*> dest_of;
  if (plan && into) {
    dest_of.assign(static_cast<size_t>(p.num_slots), nullptr);
    std::vector<int> uses(static_cast<size_t>(p.num_slots), 0);
    for (int k : p.output_slots) ++uses[static_cast<size_t>(k)];
    for (size_t o = 0; o < p.output_slots.size(); ++o) {
      const auto k = static_cast<size_t>(p.output_slots[o]);
      if ((*into)[o].defined() && uses[k] == 1 && k >= inputs.size()) dest_of[k] = &(*into)[o];
    }
    for (const auto& [slot, value] : p.constants) dest_of[static_cast<size_t>(slot)] = nullptr;
  }
  std::vector<NDArray> in, free, bufs;
  DirectScratch scratch;
  for (size_t si = 0; si < p.steps.size(); ++si) {
    const Step& s = p.steps[si];
    const NDArray* const* dest =
        dest_of.empty() ? nullptr : dest_of.data() + static_cast<size_t>(s.out_slot);
    if (plan) {
      plan_outputs(p, si, slots, free, &bufs, dest);
      if (run_direct(s, slots, bufs, scratch)) {
        ++stats_.direct;
      } else {  // invoke writes the planned buffers
        in.clear();
        for (int k : s.in_slots) in.push_back(slots[static_cast<size_t>(k)]);
        InvokeOptions step_options = options;
        step_options.outputs = &bufs;
        if (!s.unread_req.empty()) step_options.req = &s.unread_req;
        bufs = invoke(*s.attrs, in, step_options);
        in.clear();
      }
      for (size_t j = 0; j < bufs.size(); ++j)
        slots[static_cast<size_t>(s.out_slot) + j] = std::move(bufs[j]);
      bufs.clear();
    } else {  // recorded or traced: a stateful op's call gets a state of its own
      in.clear();
      for (int k : s.in_slots) in.push_back(slots[static_cast<size_t>(k)]);
      std::vector<NDArray> out = per_use_state_ && has_per_use_state(*s.attrs)
                                     ? invoke(fresh_state(*s.attrs), in, options)
                                     : invoke(*s.attrs, in, options);
      in.clear();
      stats_.outputs_allocated += static_cast<int>(out.size());
      for (size_t j = 0; j < out.size(); ++j)
        slots[static_cast<size_t>(s.out_slot) + j] = std::move(out[j]);
      continue;
    }
    for (int k : s.dying) {  // free dead intermediates that nothing else holds
      NDArray dead = std::move(slots[static_cast<size_t>(k)]);
      slots[static_cast<size_t>(k)] = NDArray();
      if (dead.defined() && dead.storage().use_count() == 1) free.push_back(std::move(dead));
    }
  }
  std::vector<NDArray> result;
  for (int k : p.output_slots) result.push_back(slots[static_cast<size_t>(k)]);
  return result;
}

}  // namespace ndx
