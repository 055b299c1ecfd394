"""Which ops AMP runs in bfloat16, which in float32, and which it leaves alone (MXNet's
amp.lists.symbol_bf16, written with ndx's registered op names). bfloat16 keeps float32's
range, so fewer ops need float32 than with float16; as in MXNet 2.0, the convolutions
(Convolution, Deconvolution) and the dense layer run in bfloat16 by default."""
from .symbol_fp16 import (  # noqa: F401
                          CONDITIONAL_FP32_FUNCS,
                          FP16_FP32_FUNCS,
                          FP32_FUNCS,
                          LOSS_OUTPUT_FUNCTIONS,
                          WIDEST_TYPE_CASTS,
)

BF16_FUNCS = [
    "_npx_fully_connected",
    "_npx_convolution",
    "_npx_deconvolution",
]

BF16_FP32_FUNCS = list(FP16_FP32_FUNCS)

# Inputs of a bfloat16 op that stay float32, by position (MXNet lists BatchNorm's, which
# runs on either dtype here).
BF16_USE_FP32_PARAMS = {
    "_npx_batch_norm": ["", "gamma", "beta", "moving_mean", "moving_var"],
}

FP32_FUNCS = FP32_FUNCS + [f for f in ("_npx_rnn", "_npx_embedding", "_npx_dropout")
                           if f not in FP32_FUNCS]
BF16_FP32_FUNCS = [f for f in BF16_FP32_FUNCS if f not in FP32_FUNCS]
