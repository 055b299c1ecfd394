// Shape and dtype inference over every entry of a graph (the executor's infer_graph and the
// cached op's plan use it).
#pragma once
#include <functional>
#include <unordered_map>
#include <utility>

#include "ndx/executor.h"
#include "ndx/op.h"

namespace ndx {

// Each node's output shapes and dtypes.
using EntryTypes = std::unordered_map<const Node*, std::pair<ShapeVector, DTypeVector>>;

// Fills `known` for every node of g not in it yet, in graph order: variables from their
// values, ops through their FInferShape / FInferType. Seed it with the graph's inputs. An
// entry left unknown stays Shape::unknown() / DType::kUnknown.
void infer_entries(const Graph& g, EntryTypes* known);

// Ops whose parsed attributes hold the state of one use set the bool attribute
// "TPerUseState" (Custom, stateful library ops): a recorded call must run on attributes parsed
// afresh, so that its backward reads the state its own forward left, as MXNet creates an op
// state per call. These say whether attrs are such, give a fresh parse of them, and copy a
// graph with every such node parsed afresh (variables and constants are shared).
bool has_per_use_state(const NodeAttrs& attrs);
NodeAttrs fresh_state(const NodeAttrs& attrs);
Graph with_fresh_state(const Graph& g);

// Ops whose backward depends on the mode their forward ran in (batch_norm: the batch's or the
// running statistics) set "FRecordMode", a std::function<void(NodeAttrs*, bool is_train)>
// that writes the mode into the attributes of a recorded call, so that a backward run in
// another mode (MXNet's backward(train_mode=True) after record(train_mode=False)) still
// differentiates what the forward computed. A graph's copy with every such node set so:
using FRecordMode = std::function<void(NodeAttrs*, bool)>;
bool has_recorded_mode(const NodeAttrs& attrs);
Graph with_recorded_mode(const Graph& g, bool is_train);

}  // namespace ndx
