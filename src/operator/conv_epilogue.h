// What the executor's fusion pass (op/fusion.cc) needs to run a convolution with an epilogue
// fused in: an inference batch_norm folded into the weights and a residual sum applied by
// oneDNN as it stores the output.
#pragma once
#include <vector>

#include "ndx/op.h"
#include "operator/dnnl_ops.h"

namespace ndx {

// out = epilogue(conv(in[0], in[1]) (+ in[2] unless no_bias)) for the params of an
// `_npx_convolution` node, through oneDNN, on float32 contiguous CPU arrays. False, having
// written nothing, where that path does not apply: the caller runs the ops one by one.
bool conv_forward_with_epilogue(const NodeAttrs& conv, bool is_train, const std::vector<TBlob>& in,
                                const dnnl::ConvEpilogue& epilogue, const TBlob& out);

// The per-channel map y = x * scale + shift that an `_npx_batch_norm` node applies to x of
// shape x_shape when it normalizes with its running statistics (in[1..4]: gamma, beta,
// running_mean, running_var), as [scale..., shift...] computed in double. False where it would
// not: batch statistics (training mode without use_global_stats), an axis other than 1, or
// arrays that are not float32 contiguous CPU ones.
bool batch_norm_as_affine(const NodeAttrs& bn, bool is_train, const Shape& x_shape,
                          const std::vector<TBlob>& in, std::vector<float>* scale_shift);

}  // namespace ndx
