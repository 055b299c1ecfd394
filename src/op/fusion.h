// Elementwise fusion for planned graphs (the executor's pass; see fusion.cc).
#pragma once
#include "ndx/executor.h"

namespace ndx {

// A copy of `g` in which every group of two or more connected pointwise ops (TElementwise)
// whose inner results have no reader outside the group becomes one `_FusedElementwise` node.
// Variable nodes are shared with `g`; op nodes are new. `fused_ops` counts the ops replaced.
Graph fuse_elementwise(const Graph& g, int* fused_nodes, int* fused_ops);

// A copy of `g` in which each convolution followed by a batch_norm, an add and a relu (in that
// order, each optional, at least one) becomes one `_FusedConvolution` node, when every link
// but the last is read by the next one only (batch_norm's statistics unread).
Graph fuse_convolutions(const Graph& g, int* fused_nodes, int* fused_ops);

}  // namespace ndx
