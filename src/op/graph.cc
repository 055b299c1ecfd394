#include "ndx/graph.h"

#include "ndx/executor.h"
#include "ndx/imperative.h"

namespace ndx {

NodePtr make_variable(std::string name) {
  auto n = std::make_shared<Node>();
  n->attrs.name = std::move(name);
  return n;
}

NodeEntry make_node(const std::string& op_name, std::vector<NodeEntry> inputs,
                    std::map<std::string, std::string> dict, const std::string& name) {
  auto n = std::make_shared<Node>();
  n->attrs = Op::get(op_name)->make_attrs(std::move(dict));
  if (!name.empty()) n->attrs.name = name;
  n->inputs = std::move(inputs);
  return NodeEntry{n, 0, 0};
}

std::vector<NodeEntry> make_grad_node(const std::string& op_name, const NodePtr& fwd,
                                      std::vector<NodeEntry> inputs, bool share_params) {
  auto n = std::make_shared<Node>();
  const Op* op = Op::get(op_name);
  if (share_params) {
    n->attrs = fwd->attrs;
    n->attrs.op = op;
  } else {
    n->attrs = op->make_attrs();
  }
  n->attrs.name = fwd->attrs.name + "_backward";
  n->inputs = std::move(inputs);
  n->control_deps.push_back(fwd);
  std::vector<NodeEntry> out;
  for (uint32_t i = 0; i < n->num_outputs(); ++i) out.push_back(NodeEntry{n, i, 0});
  return out;
}

Node::~Node() {
  // A chain of a million nodes must not destroy itself recursively (one stack frame per
  // node). Each node whose last owner is this destructor hands its edges to a work list
  // before it dies, so every destructor below finds nothing left to recurse into.
  if (inputs.empty() && control_deps.empty()) return;
  std::vector<NodePtr> pending;
  auto take_edges = [&pending](Node& n) {
    for (auto& e : n.inputs) pending.push_back(std::move(e.node));
    for (auto& d : n.control_deps) pending.push_back(std::move(d));
    n.inputs.clear();
    n.control_deps.clear();
  };
  take_edges(*this);
  while (!pending.empty()) {
    NodePtr n = std::move(pending.back());
    pending.pop_back();
    // use_count() == 1: this list holds the only reference, so no one else can see the edges
    // taken (nodes are shared by strong pointers only).
    if (n && n.use_count() == 1) take_edges(*n);
  }
}

std::vector<NDArray> evaluate(const std::vector<NodeEntry>& outputs,
                              const std::unordered_map<const Node*, NDArray>& variables) {
  std::unordered_map<const Node*, std::vector<NDArray>> done;
  for (const NodePtr& n : Graph{outputs}.topo_order()) {  // inputs first: no recursion
    if (n->is_variable()) {
      auto v = variables.find(n.get());
      if (v == variables.end())
        value_error("[evaluate] no value for variable '", n->attrs.name, "'");
      done[n.get()] = {v->second};
      continue;
    }
    std::vector<NDArray> in;
    for (const auto& e : n->inputs) in.push_back(done.at(e.node.get()).at(e.index));
    // All outputs, visible or not, so backward nodes can read hidden ones.
    InvokeOptions options;
    options.all_outputs = true;
    done[n.get()] = invoke(n->attrs, in, options);
  }
  std::vector<NDArray> result;
  for (const auto& e : outputs) result.push_back(done.at(e.node.get()).at(e.index));
  return result;
}

namespace {
std::vector<NodeEntry> with_inputs(const NodePtr& n, const std::vector<NodeEntry>& ograds,
                                   bool use_in, bool use_out) {
  std::vector<NodeEntry> heads(ograds.begin(), ograds.end());
  if (use_in) heads.insert(heads.end(), n->inputs.begin(), n->inputs.end());
  if (use_out)
    for (uint32_t i = 0; i < n->num_outputs(); ++i) heads.push_back(NodeEntry{n, i, 0});
  return heads;
}
}  // namespace

std::vector<NodeEntry> ElemwiseGradUseIn::operator()(const NodePtr& n,
                                                     const std::vector<NodeEntry>& og) const {
  return make_grad_node(op_name, n, with_inputs(n, og, true, false), true);
}
std::vector<NodeEntry> ElemwiseGradUseOut::operator()(const NodePtr& n,
                                                      const std::vector<NodeEntry>& og) const {
  return make_grad_node(op_name, n, with_inputs(n, og, false, true), true);
}
std::vector<NodeEntry> ElemwiseGradUseNone::operator()(const NodePtr& n,
                                                       const std::vector<NodeEntry>& og) const {
  return make_grad_node(op_name, n, with_inputs(n, og, false, false), true);
}
std::vector<NodeEntry> ElemwiseGradUseInOut::operator()(const NodePtr& n,
                                                        const std::vector<NodeEntry>& og) const {
  return make_grad_node(op_name, n, with_inputs(n, og, true, true), true);
}

std::vector<NodeEntry> MakeZeroGradNodes(const NodePtr& n, const std::vector<NodeEntry>&) {
  std::vector<NodeEntry> out;
  for (const auto& in : n->inputs) out.push_back(make_node("_np_zeros_like", {in}));
  return out;
}

}  // namespace ndx
