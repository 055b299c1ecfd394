#include "ndx/executor.h"

#include <unordered_map>
#include <unordered_set>

#include "ndx/autograd.h"
#include "ndx/imperative.h"

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

GraphTypes infer_graph(const Graph& g, const std::vector<Shape>& input_shapes,
                       const std::vector<DType>& input_types) {
  auto ins = g.inputs();
  if (input_shapes.size() != ins.size() || input_types.size() != ins.size())
    value_error("[infer_shape] the graph has ", ins.size(), " inputs, got ", input_shapes.size(),
                " shapes and ", input_types.size(), " dtypes");
  std::unordered_map<const Node*, std::pair<ShapeVector, DTypeVector>> known;
  for (size_t i = 0; i < ins.size(); ++i)
    known[ins[i].get()] = {{input_shapes[i]}, {input_types[i]}};
  for (const auto& n : g.topo_order()) {
    if (known.count(n.get())) continue;
    if (n->is_variable()) {
      known[n.get()] = {{n->values.at(0).shape()}, {n->values.at(0).dtype()}};
      continue;
    }
    ShapeVector in_s;
    DTypeVector in_t;
    for (const auto& e : n->inputs) {
      in_s.push_back(known[e.node.get()].first.at(e.index));
      in_t.push_back(known[e.node.get()].second.at(e.index));
    }
    uint32_t nout = n->num_outputs();
    ShapeVector out_s(nout, Shape::unknown());
    DTypeVector out_t(nout, DType::kUnknown);
    infer_shapes(n->attrs, &in_s, &out_s);
    infer_types(n->attrs, &in_t, &out_t);
    known[n.get()] = {out_s, out_t};
  }
  GraphTypes r;
  for (const auto& o : g.outputs) {
    r.output_shapes.push_back(known[o.node.get()].first.at(o.index));
    r.output_types.push_back(known[o.node.get()].second.at(o.index));
  }
  return r;
}

Executor::Executor(Graph g) : graph_(std::move(g)) {
  std::unordered_map<const Node*, int> slot_of;
  auto ins = graph_.inputs();
  for (const auto& n : ins) {
    slot_of[n.get()] = num_slots_++;
    input_names_.push_back(n->attrs.name);
  }
  for (const auto& n : graph_.topo_order()) {
    if (slot_of.count(n.get())) continue;
    if (n->is_variable()) {
      if (n->values.empty()) value_error("[executor] variable '", n->attrs.name, "' has no value");
      slot_of[n.get()] = num_slots_;
      constants_.push_back({num_slots_++, n->values[0]});
      continue;
    }
    Step s{&n->attrs, {}, num_slots_};
    for (const auto& e : n->inputs)
      s.in_slots.push_back(slot_of.at(e.node.get()) + static_cast<int>(e.index));
    slot_of[n.get()] = num_slots_;
    num_slots_ += static_cast<int>(n->num_outputs());
    steps_.push_back(std::move(s));
  }
  for (const auto& o : graph_.outputs)
    output_slots_.push_back(slot_of.at(o.node.get()) + static_cast<int>(o.index));
}

std::vector<NDArray> Executor::run(const std::vector<NDArray>& inputs) const {
  if (inputs.size() != input_names_.size())
    value_error("[executor] the graph takes ", input_names_.size(), " inputs, got ", inputs.size());
  std::vector<NDArray> slots(static_cast<size_t>(num_slots_));
  for (size_t i = 0; i < inputs.size(); ++i) slots[i] = inputs[i];
  for (const auto& [slot, value] : constants_) slots[static_cast<size_t>(slot)] = value;
  InvokeOptions options;
  options.all_outputs = true;
  std::vector<NDArray> in;
  for (const Step& s : steps_) {
    in.clear();
    for (int k : s.in_slots) in.push_back(slots[static_cast<size_t>(k)]);
    std::vector<NDArray> out = invoke(*s.attrs, in, options);
    for (size_t j = 0; j < out.size(); ++j)
      slots[static_cast<size_t>(s.out_slot) + j] = std::move(out[j]);
  }
  std::vector<NDArray> result;
  for (int k : output_slots_) result.push_back(slots[static_cast<size_t>(k)]);
  return result;
}

}  // namespace ndx
