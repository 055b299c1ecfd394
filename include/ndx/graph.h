// Graph nodes: what FGradient builds its backward from (autograd and hybridize come later and
// reuse these). A node is (op, attrs, inputs); a variable is a node without an op.
#pragma once
#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "ndx/ndarray.h"
#include "ndx/op.h"

namespace ndx {

struct NodeEntry {
  NodePtr node;
  uint32_t index = 0;
  uint32_t version = 0;
};

struct Node {
  NodeAttrs attrs;
  std::vector<NodeEntry> inputs;
  std::vector<NodePtr> control_deps;
  // Forward values recorded by autograd (outputs of an op node, the value of a variable),
  // stored without their autograd entries so the graph holds no reference cycles.
  std::vector<NDArray> values;
  bool freed = false;  // backward without retain_graph released the values
  // For the variable node of a leaf marked with attach_grad: that leaf's autograd entry.
  std::weak_ptr<autograd::Entry> leaf;

  Node() = default;
  Node(const Node&) = delete;
  Node& operator=(const Node&) = delete;
  ~Node();  // iterative: deep graphs are freed without deep recursion

  const Op* op() const { return attrs.op; }
  bool is_variable() const { return attrs.op == nullptr; }
  uint32_t num_outputs() const { return is_variable() ? 1 : attrs.op->outputs_for(attrs); }
};

NodePtr make_variable(std::string name);
// A node applying `op_name` to `inputs` with params parsed from `dict`.
NodeEntry make_node(const std::string& op_name, std::vector<NodeEntry> inputs,
                    std::map<std::string, std::string> dict = {}, const std::string& name = "");
// A backward node for `fwd`: op `op_name` on `inputs`, sharing fwd's params when
// `share_params` (the backward op then declares the same Param struct). Returns its outputs.
std::vector<NodeEntry> make_grad_node(const std::string& op_name, const NodePtr& fwd,
                                      std::vector<NodeEntry> inputs, bool share_params = false);

// Evaluates `outputs` imperatively given values for the variables.
std::vector<NDArray> evaluate(const std::vector<NodeEntry>& outputs,
                              const std::unordered_map<const Node*, NDArray>& variables);

// ---- FGradient helpers (the seeds' ElemwiseGradUse*) ----
// Backward op takes (ograd..., inputs...).
struct ElemwiseGradUseIn {
  std::string op_name;
  std::vector<NodeEntry> operator()(const NodePtr& n, const std::vector<NodeEntry>& ograds) const;
};
// Backward op takes (ograd..., outputs...).
struct ElemwiseGradUseOut {
  std::string op_name;
  std::vector<NodeEntry> operator()(const NodePtr& n, const std::vector<NodeEntry>& ograds) const;
};
// Backward op takes (ograd...).
struct ElemwiseGradUseNone {
  std::string op_name;
  std::vector<NodeEntry> operator()(const NodePtr& n, const std::vector<NodeEntry>& ograds) const;
};
// Backward op takes (ograd..., inputs..., outputs...).
struct ElemwiseGradUseInOut {
  std::string op_name;
  std::vector<NodeEntry> operator()(const NodePtr& n, const std::vector<NodeEntry>& ograds) const;
};
// For ops that are not differentiable (comparisons, sign, argmax): zero gradients.
std::vector<NodeEntry> MakeZeroGradNodes(const NodePtr& n, const std::vector<NodeEntry>& ograds);

}  // namespace ndx
