// Shape and dtype inference over every entry of a graph (the executor's infer_graph and the
// cached op's plan use it).
#pragma once
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

}  // namespace ndx
