"""Automatic mixed precision, MXNet's mx.amp: amp.init() makes the matrix-product ops run in
float16 (or bfloat16) and the overflow-prone ones in float32; init_trainer / scale_loss add
dynamic loss scaling to a Trainer; convert_hybrid_block / convert_model / convert_symbol
rewrite a graph for low-precision inference.

Unlike MXNet, which wraps the Python functions of every op module, ndx applies the op lists
where ops are invoked (C++, include/ndx/amp.h): np, npx, mx.nd, Gluon layers, the C++ API and
graphs traced by hybridize() all see the casts. Parameters stay float32 (the master weights);
gradients arrive in float32 through the casts' own gradients."""
import contextlib
import logging

from .. import _core
from . import lists
from .loss_scaler import LossScaler

__all__ = ["init", "init_trainer", "scale_loss", "unscale", "convert_model",
           "convert_hybrid_block", "convert_symbol", "list_lp16_ops", "list_fp32_ops",
           "list_lp16_fp32_ops", "list_conditional_fp32_ops", "list_widest_type_cast",
           "list_loss_output_functions", "list_lp16_use_fp32_params", "LossScaler"]

_state = {"target": None, "scaler": None, "scaler_used": False}

# MXNet's legacy op names for the ops its default lists name, so that lists written for MXNet
# (target_precision_ops=['FullyConnected'], ...) keep working.
_LEGACY_NAMES = {
    "FullyConnected": "_npx_fully_connected",
    "Convolution": "_npx_convolution",
    "Deconvolution": "_npx_deconvolution",
    "RNN": "_npx_rnn",
    "Activation": "_npx_activation",
    "LeakyReLU": "_npx_leaky_relu",
    "BatchNorm": "_npx_batch_norm",
    "LayerNorm": "_npx_layer_norm",
    "Pooling": "_npx_pooling",
    "Dropout": "_npx_dropout",
    "Embedding": "_npx_embedding",
    "CTCLoss": "_npx_ctc_loss",
    "softmax": "_npx_softmax",
    "log_softmax": "_npx_log_softmax",
    "argsort": "_np_argsort",
    "dot": "_np_dot",
    "exp": "_np_exp",
    "log": "_np_log",
    "sum": "_np_sum",
    "mean": "_np_mean",
}


def _dtype_name(target_dtype):
    import numpy as onp
    if isinstance(target_dtype, str):
        name = target_dtype
    else:
        try:
            name = onp.dtype(target_dtype).name
        except TypeError:
            name = getattr(target_dtype, "__name__", repr(target_dtype))
    if name not in ("float16", "bfloat16"):
        raise ValueError(f"[amp] target_dtype must be 'float16' or 'bfloat16', got "
                         f"{target_dtype!r}")
    return name


def _registered():
    from .._registry import ops
    return set(ops())


def _resolve(name, registered, what):
    """The registered op an op-list entry names: itself, MXNet's legacy name for it, or the
    _np_ / _npi_ twin of an MXNet 2 name."""
    if not isinstance(name, str):
        raise TypeError(f"[amp] {what} entries must be op names (str), got "
                        f"{type(name).__name__}")
    if name in registered:
        return name
    if name in _LEGACY_NAMES:
        return _LEGACY_NAMES[name]
    for a, b in (("_npi_", "_np_"), ("_np_", "_npi_")):
        if name.startswith(a) and b + name[len(a):] in registered:
            return b + name[len(a):]
    raise ValueError(f"[amp] {what} names '{name}', which is not a registered op")


def _rules(target, target_ops, fp32_ops, conditional_fp32_ops):
    """The (op, kind, param, values) rules the C++ policy takes, from the op lists."""
    registered = _registered()
    if target_ops is None:
        target_ops = list_lp16_ops(target)
    if fp32_ops is None:
        fp32_ops = list_fp32_ops(target)
    if conditional_fp32_ops is None:
        conditional_fp32_ops = list_conditional_fp32_ops(target)
    rules = {}
    for name in target_ops:
        rules[_resolve(name, registered, "target_precision_ops")] = ("target", None, ())
    for name in fp32_ops:
        op = _resolve(name, registered, "fp32_ops")
        if op in rules:
            raise ValueError(f"[amp] '{name}' is in both target_precision_ops and fp32_ops")
        rules[op] = ("float32", None, ())
    for entry in conditional_fp32_ops:
        if not (isinstance(entry, (tuple, list)) and len(entry) == 3
                and isinstance(entry[1], str) and isinstance(entry[2], (list, tuple))):
            raise ValueError(f"[amp] conditional_fp32_ops entries are (op name, param name, "
                             f"[values]), got {entry!r}")
        op = _resolve(entry[0], registered, "conditional_fp32_ops")
        if op in rules:
            raise ValueError(f"[amp] '{entry[0]}' is in conditional_fp32_ops and another list")
        rules[op] = ("float32", entry[1], tuple(str(v) for v in entry[2]))
        if op == "_npx_activation" and entry[1] == "act_type":
            # Gluon's Activation / Dense(activation=...) run relu, sigmoid and tanh as their
            # own ops (MXNet's run the Activation op): the rule reaches them too (and so
            # direct npx.relu / npx.sigmoid / np.tanh calls, which MXNet would leave alone)
            for value in entry[2]:
                twin = _ACTIVATION_OPS.get(str(value))
                if twin is not None and twin not in rules:
                    rules[twin] = ("float32", None, ())
    return [(op, kind, param, values) for op, (kind, param, values) in rules.items()]


# The ops Gluon runs for Activation(act_type) where MXNet runs its Activation op.
_ACTIVATION_OPS = {"relu": "_npx_relu", "sigmoid": "_npx_sigmoid", "tanh": "_np_tanh"}


def init(target_dtype="float16", target_precision_ops=None, conditional_fp32_ops=None,
         fp32_ops=None, layout_optimization=False):
    """Turns AMP on for this process (MXNet's amp.init): ops of the target list get their
    float32 inputs cast to target_dtype ('float16' or 'bfloat16'), ops of the float32 lists
    get low-precision inputs cast to float32 (conditional ones only for the listed param
    values). The lists default to list_lp16_ops(target_dtype) and list_fp32_ops /
    list_conditional_fp32_ops; entries are ndx op names or MXNet's. A second call does
    nothing, as in MXNet. Blocks already hybridized and run keep the graphs they traced:
    call init() before running the model. layout_optimization (a oneDNN graph pass of MXNet)
    is accepted and ignored."""
    del layout_optimization
    if _state["target"] is not None:
        return
    target = _dtype_name(target_dtype)
    _core._amp_set_policy(target, _rules(target, target_precision_ops, fp32_ops,
                                         conditional_fp32_ops))
    _state["target"] = target
    _state["scaler"] = LossScaler()
    logging.info("Using AMP (%s)", target)


def _reset():
    """Turns AMP off again (for tests: MXNet has no way back)."""
    _core._amp_set_policy(None, [])
    _state.update(target=None, scaler=None, scaler_used=False)


def _trainer_type():
    from ..gluon.trainer import Trainer
    return Trainer


def init_trainer(optimizer_or_trainer):
    """Gives a Gluon Trainer dynamic loss scaling (MXNet's amp.init_trainer): use
    scale_loss() around backward, and step() skips any update whose gradients hold inf or
    NaN, halving the loss scale; after LossScaler's scale_seq_len clean steps in a row the
    scale doubles (up to 2**24)."""
    from ..optimizer import Optimizer
    if _state["target"] is None:
        raise RuntimeError("[amp.init_trainer] AMP is not initialized: call amp.init() first")
    if isinstance(optimizer_or_trainer, _trainer_type()):
        trainer = optimizer_or_trainer
        if trainer._update_on_kvstore:
            raise NotImplementedError(
                "[amp.init_trainer] dynamic loss scaling needs the update in the Trainer: "
                "create it with update_on_kvstore=False")
        # The first trainer gets the scaler init() made, later ones their own (MXNet's rule).
        scaler = _state["scaler"] if not _state["scaler_used"] else LossScaler()
        _state["scaler_used"] = True
        trainer._amp_loss_scaler = scaler
        trainer._amp_original_scale = trainer._scale
    elif isinstance(optimizer_or_trainer, Optimizer):
        raise TypeError("[amp.init_trainer] AMP works with a Gluon Trainer, not an Optimizer")
    else:
        raise TypeError(f"[amp.init_trainer] expected a Gluon Trainer, got "
                        f"{type(optimizer_or_trainer).__name__}")


def _scaler_of(trainer, what):
    scaler = getattr(trainer, "_amp_loss_scaler", None)
    if scaler is None:
        raise RuntimeError(f"[amp.{what}] the trainer has no loss scaler: call "
                           "amp.init_trainer(trainer) first")
    return scaler


@contextlib.contextmanager
def scale_loss(loss, optimizer_or_trainer):
    """Yields the loss (or list of losses) times the current loss scale, and makes the
    trainer's next step divide the gradients by it again (MXNet's amp.scale_loss):
        with amp.scale_loss(loss, trainer) as scaled:
            autograd.backward(scaled)"""
    trainer = optimizer_or_trainer
    scaler = _scaler_of(trainer, "scale_loss")
    trainer._scale = trainer._amp_original_scale / scaler.loss_scale
    if isinstance(loss, (list, tuple)):
        yield [x * scaler.loss_scale for x in loss]
    else:
        yield loss * scaler.loss_scale


def unscale(optimizer_or_trainer):
    """Divides the gradients by the loss scale now (for code that reads them, e.g. to clip
    their norm) and makes the next step use them as they are (MXNet's amp.unscale)."""
    from ..optimizer import Optimizer
    trainer = optimizer_or_trainer
    if isinstance(trainer, Optimizer):
        raise TypeError("[amp.unscale] AMP works with a Gluon Trainer, not an Optimizer")
    if not isinstance(trainer, _trainer_type()):
        raise TypeError(f"[amp.unscale] expected a Gluon Trainer, got {type(trainer).__name__}")
    from .. import autograd
    with autograd.pause():
        for p in trainer._params:
            for d in p.list_data():  # every device's copy
                g = d.grad
                if g is not None:
                    g *= trainer._scale
    trainer._scale = 1.0  # (the factor the gradients now carry included rescale_grad)


def _lists(target_dtype):
    return lists.symbol_fp16 if _dtype_name(target_dtype) == "float16" else lists.symbol_bf16


def list_lp16_ops(target_dtype):
    """The ops AMP runs in target_dtype by default."""
    m = _lists(target_dtype)
    return list(m.FP16_FUNCS if m is lists.symbol_fp16 else m.BF16_FUNCS)


def list_fp32_ops(target_dtype):
    """The ops AMP runs in float32 by default."""
    return list(_lists(target_dtype).FP32_FUNCS)


def list_lp16_fp32_ops(target_dtype):
    """The ops AMP leaves on the dtype they get."""
    m = _lists(target_dtype)
    return list(m.FP16_FP32_FUNCS if m is lists.symbol_fp16 else m.BF16_FP32_FUNCS)


def list_conditional_fp32_ops(target_dtype):
    """(op, param, values): ops run in float32 when param is one of values."""
    return [tuple(e) for e in _lists(target_dtype).CONDITIONAL_FP32_FUNCS]


def list_widest_type_cast(target_dtype):
    """Ops whose inputs MXNet casts to their widest dtype; NumPy's promotion does it in ndx."""
    return list(_lists(target_dtype).WIDEST_TYPE_CASTS)


def list_loss_output_functions(target_dtype):
    """MXNet's loss-output ops whose gradients AMP rescales; ndx has none."""
    return list(_lists(target_dtype).LOSS_OUTPUT_FUNCTIONS)


def list_lp16_use_fp32_params(target_dtype):
    """{op: input names kept in float32} for bfloat16; None for float16 (MXNet's)."""
    m = _lists(target_dtype)
    return dict(m.BF16_USE_FP32_PARAMS) if m is lists.symbol_bf16 else None


from ._graph import convert_hybrid_block, convert_model, convert_symbol  # noqa: E402
