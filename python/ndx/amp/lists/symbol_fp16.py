"""Which ops AMP runs in float16, which in float32, and which it leaves alone (MXNet's
amp.lists.symbol_fp16, written with ndx's registered op names)."""

# Run in float16: the matrix products, where float16 pays off and loses little.
# (MXNet's list also has RNN, which cuDNN runs in float16; ndx's rnn kernel computes in
# float32 / float64 only and refuses float16 data, so it is in FP32_FUNCS below: Gluon's
# LSTM / GRU / RNN layers then run under amp.init() with their inputs cast to float32.)
FP16_FUNCS = [
    "_npx_fully_connected",
    "_npx_convolution",
    "_npx_deconvolution",
    "_np_matmul",
]

# Run on whatever dtype they get (cheap, exact or dtype-neutral ops).
FP16_FP32_FUNCS = [
    "_npx_batch_norm",
    "_npx_pooling",
    "_npx_dropout",
    "_npx_embedding",
    "_npx_relu",
    "_npx_sigmoid",
    "_npx_reshape",
    "_np_reshape",
    "_np_transpose",
    "_np_add",
    "_np_subtract",
    "_np_multiply",
    "_np_negative",
    "_np_absolute",
    "_np_maximum",
    "_np_minimum",
    "_np_tanh",
    "_np_sqrt",
    "_npi_clip",
    "_npi_concatenate",
    "_npi_stack",
    "_npx_slice",
    "_npi_astype",
    "_npi_amp_cast",
    "_npi_amp_multicast",
    "_npi_all_finite",
    "_npi_multi_all_finite",
]

# Run in float32: ranges float16 overflows (exponentials, powers), long sums, normalizations
# and losses. (np.std / var / linalg.norm, einsum, GroupNorm, InstanceNorm and topk are
# composed from registered ops, whose rules apply.)
FP32_FUNCS = [
    "_np_exp",
    "_np_expm1",
    "_np_log",
    "_np_log10",
    "_np_log1p",
    "_np_log2",
    "_np_power",
    "_np_square",
    "_np_reciprocal",
    "_np_cosh",
    "_np_sinh",
    "_np_tan",
    "_np_arcsin",
    "_np_arccos",
    "_np_arctanh",
    "_np_sum",
    "_np_mean",
    "_np_prod",
    "_np_cumsum",
    "_npx_softmax",
    "_npx_log_softmax",
    "_npx_layer_norm",
    "_npx_ctc_loss",
    "_np_argsort",
    "_npx_rnn",
]

# Run in float32 only for some values of a param: (op, param, values).
CONDITIONAL_FP32_FUNCS = [
    ("_npx_activation", "act_type", ["softrelu"]),
    ("_npx_leaky_relu", "act_type", ["elu", "selu"]),
]

# Ops whose inputs must share a dtype. ndx follows NumPy's promotion (float16 with float32
# gives float32), so these need no casts; the list is kept for MXNet's list_widest_type_cast.
WIDEST_TYPE_CASTS = [
    "_np_add",
    "_np_subtract",
    "_np_multiply",
    "_np_true_divide",
    "_np_dot",
    "_npi_concatenate",
    "_npi_stack",
    "_np_where",
]

# MXNet rescales the gradients of its legacy output ops (SoftmaxOutput, ...) by the loss
# scale; ndx has none of them.
LOSS_OUTPUT_FUNCTIONS = []
