"""Optimizers with MXNet 2.0's names, signatures, defaults and update rules: SGD, NAG, Adam,
AdamW, RMSProp (plain and centered), AdaGrad, AdaDelta, Adamax, Nadam, LAMB, LARS, Signum,
Ftrl, SGLD, DCASGD, FTML, LANS, AdaBelief and RAdam.

Every update is written with ndx array ops (no per-element Python) into the weight and the
state arrays in place. As in MXNet, ``update`` takes lists (``indices, weights, grads,
states``); a single index / weight / grad / state is accepted too. The learning rate of a step
comes from ``lr_scheduler(num_update)`` when a scheduler is set (``num_update`` being the
largest number of updates any weight has had, counted before the step), times the weight's
``lr_mult``; its weight decay is ``wd`` times ``wd_mult``.

Gradient preprocessing is MXNet's: ``g = clip(rescale_grad * grad, -clip_gradient,
clip_gradient)``; a ``clip_gradient`` of None, 0 or below turns clipping off (as MXNet's
kernels read it). The incoming gradient is never modified."""
import math
import numbers
import pickle
import warnings

import numpy as _onp

from . import _core
from . import numpy as np
from ._registry import internal_function

__all__ = ["Optimizer", "SGD", "NAG", "Adam", "AdamW", "RMSProp", "AdaGrad", "AdaDelta",
           "Adamax", "Nadam", "LAMB", "LARS", "Signum", "Ftrl", "SGLD", "DCASGD", "FTML", "LANS",
           "AdaBelief", "RAdam", "Test", "Updater", "create", "register", "get_updater"]


def _check_number(owner, name, value, allow_none=False, low=None):
    """`value` as a float, or a typed error naming the optimizer and the argument."""
    if value is None and allow_none:
        return None
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"[optimizer] {owner}: {name} must be a real number, got "
                        f"{type(value).__name__} {value!r}")
    if low is not None and not value >= low:
        raise ValueError(f"[optimizer] {owner}: {name} must be >= {low}, got {value!r}")
    return value


def _set_reals(optimizer, **values):
    """Sets the hyperparameters `values` (betas, epsilon, rho, ...) on `optimizer`, each
    checked to be a real number: a bad one fails here, named, not inside the first update."""
    for name, value in values.items():
        setattr(optimizer, name, _check_number(type(optimizer).__name__, name, value))


def _fusable(weight, grad, state):
    """Whether one fused op can update weight: float arrays of one dtype (and a rate the op
    accepts); anything else takes the rule's elementwise ops."""
    t = weight.dtype
    return (getattr(t, "kind", "f") == "f" and grad.dtype == t  # bfloat16 is a string
            and (state is None or state.dtype == t))


def _multi_fusable(weights, grads, states):
    """Whether one multi-weight op can update all of `weights`: each on the CPU (the op reads
    the per-weight rates on the host; DLPack's device type 1) and _fusable, every state array
    (a state may be a tuple of them) of the weight's dtype."""
    for weight, grad, state in zip(weights, grads, states):
        t = weight.dtype
        if (weight.__dlpack_device__()[0] != 1 or getattr(t, "kind", "f") != "f"
                or grad.dtype != t):
            return False
        parts = state if isinstance(state, tuple) else () if state is None else (state,)
        for part in parts:
            if part is None or part.dtype != t:
                return False
    return True


# Weights per multi-weight op call (the op's own limit is far above it).
_MULTI_CHUNK = 4096


def _multi_update(op_name, weights, arrays_per_weight, lrs, wds, **params):
    """Runs the multi-weight op `op_name` (inputs: each weight's arrays, then lrs and wds) on
    the weights in chunks, writing each new weight in place."""
    for at in range(0, len(weights), _MULTI_CHUNK):
        end = min(at + _MULTI_CHUNK, len(weights))
        flat = [a for arrays in arrays_per_weight[at:end] for a in arrays]
        device = weights[at].device  # (the rates go with the weights: cpu(1)'s on cpu(1))
        flat += [np.array(lrs[at:end], dtype="float64", device=device),
                 np.array(wds[at:end], dtype="float64", device=device)]
        params["num_weights"] = end - at
        _core._invoke(op_name, tuple(flat), params, tuple(weights[at:end]))


def _zeros_like(weight, dtype=None):
    return np.zeros(weight.shape, dtype=dtype or weight.dtype, device=weight.device)


def _as_list(x):
    return list(x) if isinstance(x, (list, tuple)) else [x]


def _is_row_sparse(x):
    return getattr(x, "stype", None) == "row_sparse"


def _state_rows(state, rows):
    """The given rows of every array of an optimizer state (None, an array, or tuples /
    lists of them; the arrays are shaped as the weight)."""
    if state is None:
        return None
    if isinstance(state, (tuple, list)):
        return type(state)(_state_rows(s, rows) for s in state)
    return state[rows]


def _set_state_rows(state, rows, sub):
    if isinstance(state, (tuple, list)):
        for s, part in zip(state, sub):
            _set_state_rows(s, rows, part)
    elif state is not None:
        state[rows] = sub


class Optimizer:
    """The base class: learning rate and weight decay bookkeeping, gradient preprocessing,
    the registry behind ``create(name)`` and multi-precision (float32 master copies of
    float16 weights)."""

    opt_registry = {}
    # Whether a row's update reads that row alone (its weight, gradient and state), so that
    # lazy_update may update only the rows a row_sparse gradient stores.
    _row_wise = False

    def __init__(self, rescale_grad=1.0, param_idx2name=None, wd=0.0, clip_gradient=None,
                 learning_rate=None, lr_scheduler=None, sym=None, begin_num_update=0,
                 multi_precision=False, param_dict=None, aggregate_num=None,
                 use_fused_step=None, **kwargs):
        owner = type(self).__name__
        if kwargs:
            raise TypeError(f"[optimizer] {owner} got unexpected keyword argument(s) "
                            f"{sorted(kwargs)}")
        self.rescale_grad = _check_number(owner, "rescale_grad", rescale_grad)
        self.wd = _check_number(owner, "wd", wd)
        self.clip_gradient = _check_number(owner, "clip_gradient", clip_gradient,
                                           allow_none=True)
        learning_rate = _check_number(owner, "learning_rate", learning_rate, allow_none=True,
                                      low=0)
        if lr_scheduler is not None and not callable(lr_scheduler):
            raise TypeError(f"[optimizer] {owner}: lr_scheduler must be an LRScheduler (a "
                            f"callable of num_update), got {type(lr_scheduler).__name__}")
        self.lr_scheduler = lr_scheduler
        if lr_scheduler is None and learning_rate is None:
            learning_rate = 0.01
        self.lr = learning_rate
        # MXNet: an explicit learning_rate overwrites the scheduler's base_lr.
        if (lr_scheduler is not None and learning_rate is not None
                and getattr(lr_scheduler, "base_lr", learning_rate) != learning_rate):
            warnings.warn("learning rate from ``lr_scheduler`` has been overwritten by "
                          "``learning_rate`` in optimizer.", UserWarning, stacklevel=3)
            lr_scheduler.base_lr = learning_rate
        if isinstance(begin_num_update, bool) or not isinstance(begin_num_update, int):
            raise TypeError(f"[optimizer] {owner}: begin_num_update must be an int, got "
                            f"{begin_num_update!r}")
        self.begin_num_update = begin_num_update
        self.num_update = begin_num_update
        self._all_index_update_counts = {0: {}}
        self._index_update_count = self._all_index_update_counts[0]
        self.multi_precision = bool(multi_precision)
        self.aggregate_num = 1 if aggregate_num is None else aggregate_num
        # ndx has one implementation of each rule; fused or not, the math is the same.
        self.use_fused_step = bool(use_fused_step)
        if param_idx2name is None:
            param_idx2name = {}
        if not isinstance(param_idx2name, dict):
            raise TypeError(f"[optimizer] {owner}: param_idx2name must be a dict of parameter "
                            f"indices to names, got {type(param_idx2name).__name__}")
        self.idx2name = param_idx2name.copy()
        self.sym_info = (sym.attr_dict(), sym.list_arguments()) if sym is not None else ()
        self.param_dict = param_dict if param_dict else {}
        self.set_lr_mult({})
        self.set_wd_mult({})

    # -- registry -------------------------------------------------------------------------
    @staticmethod
    def register(klass):
        """Registers an optimizer class under its lower-cased class name."""
        if not isinstance(klass, type):
            raise TypeError(f"[optimizer] register expects a class, got {type(klass).__name__}")
        name = klass.__name__.lower()
        if name in Optimizer.opt_registry:
            old = Optimizer.opt_registry[name]
            warnings.warn(f"WARNING: New optimizer {klass.__module__}.{klass.__name__} is "
                          f"overriding existing optimizer {old.__module__}.{old.__name__}",
                          stacklevel=2)
        Optimizer.opt_registry[name] = klass
        return klass

    @staticmethod
    def create_optimizer(name, **kwargs):
        """An optimizer by (case-insensitive) name, or `name` itself if it is one already."""
        if isinstance(name, Optimizer):
            if kwargs:
                raise ValueError("[optimizer] create: optimizer_params must be empty when an "
                                 "Optimizer instance is given")
            return name
        if not isinstance(name, str):
            raise TypeError(f"[optimizer] create: expected an optimizer name or instance, got "
                            f"{type(name).__name__}")
        klass = Optimizer.opt_registry.get(name.lower())
        if klass is None:
            raise ValueError(f"[optimizer] Cannot find optimizer {name!r} (unknown optimizer); "
                             f"expected one of {sorted(Optimizer.opt_registry)}")
        return klass(**kwargs)

    # -- learning rate --------------------------------------------------------------------
    @property
    def learning_rate(self):
        if self.lr_scheduler is not None:
            return self.lr_scheduler(self.num_update)
        return self.lr

    @learning_rate.setter
    def learning_rate(self, lr):
        self.set_learning_rate(lr)

    def set_learning_rate(self, lr):
        """Sets the learning rate; not allowed while an lr_scheduler drives it (MXNet raises
        UserWarning there)."""
        if self.lr_scheduler is not None:
            raise UserWarning("LRScheduler of the optimizer has already been defined. Note that "
                              "set_learning_rate can mutate the value of the learning rate of "
                              "the optimizer only when the LRScheduler of the optimizer is "
                              "undefined.")
        self.lr = _check_number(type(self).__name__, "learning_rate", lr, low=0)

    def _sym_mults(self, key):
        """{argument name: multiplier} from the symbol's '__lr_mult__' / '__wd_mult__'
        attributes (Variable(lr_mult=...), or a layer symbol's lr_mult=...)."""
        if not self.sym_info:
            return {}
        attrs, arg_names = self.sym_info
        return {n: float(attrs[n][key]) for n in arg_names if key in attrs.get(n, {})}

    def set_lr_mult(self, args_lr_mult):
        """Per-parameter learning-rate multipliers, keyed by index or name; as in MXNet they
        replace the earlier ones, over the symbol's '__lr_mult__' attributes (when the
        optimizer was made with sym=)."""
        self.lr_mult = self._sym_mults("__lr_mult__")
        self.lr_mult.update(args_lr_mult)

    def set_wd_mult(self, args_wd_mult):
        """Per-parameter weight-decay multipliers, keyed by index or name. As MXNet documents,
        the parameters named in param_idx2name whose names end in neither '_weight' nor
        '_gamma' (biases, betas) get 0 unless told otherwise; the symbol's '__wd_mult__'
        attributes and then args_wd_mult override that."""
        self.wd_mult = {n: 0.0 for n in self.idx2name.values()
                        if not (str(n).endswith("_weight") or str(n).endswith("_gamma"))}
        self.wd_mult.update(self._sym_mults("__wd_mult__"))
        self.wd_mult.update(args_wd_mult)

    def _set_current_device(self, device_id):
        self._index_update_count = self._all_index_update_counts.setdefault(device_id, {})

    _set_current_context = _set_current_device

    def _update_count(self, index):
        for idx in _as_list(index):
            count = self._index_update_count.get(idx, self.begin_num_update) + 1
            self._index_update_count[idx] = count
            self.num_update = max(count, self.num_update)

    def _mult(self, index, table, attr):
        if index in self.param_dict:
            return getattr(self.param_dict[index], attr, 1.0)
        if index in table:
            return table[index]
        if index in self.idx2name:
            return table.get(self.idx2name[index], 1.0)
        return 1.0

    def _get_lrs(self, indices):
        lr = self.lr_scheduler(self.num_update) if self.lr_scheduler is not None else self.lr
        return [lr * self._mult(i, self.lr_mult, "lr_mult") for i in indices]

    def _get_lr(self, index):
        return self._get_lrs([index])[0]

    def _get_wds(self, indices):
        return [self.wd * self._mult(i, self.wd_mult, "wd_mult") for i in indices]

    def _get_wd(self, index):
        return self._get_wds([index])[0]

    # -- states and updates ---------------------------------------------------------------
    def create_state(self, index, weight):
        """The optimizer state of one weight (None when the rule keeps none)."""
        return None

    def create_state_multi_precision(self, index, weight):
        """With multi_precision, a float16 weight's state is (float32 master copy, state)."""
        if self.multi_precision and weight.dtype == _onp.float16:
            master = weight.astype("float32")
            return (master, self.create_state(index, master))
        if weight.dtype == _onp.float16:
            warnings.warn("Accumulating with float16 in optimizer can lead to poor accuracy or "
                          "slow convergence. Consider using multi_precision=True option of the "
                          "optimizer", stacklevel=2)
        return self.create_state(index, weight)

    def _prepared_grad(self, grad, weight=None, wd=0.0):
        """clip(rescale_grad * grad) (+ wd * weight): a new array, the gradient is untouched."""
        g = grad * self.rescale_grad
        if self.clip_gradient is not None and self.clip_gradient > 0:
            c = float(self.clip_gradient)
            g = np.clip(g, -c, c)
        if wd and weight is not None:
            g = g + weight * wd
        return g

    def _op_clip(self):
        """clip_gradient as the update ops take it (-1: no clipping)."""
        return self.clip_gradient if self.clip_gradient is not None else -1.0

    def _rates_for_multi_op(self, indices, weights, grads, states):
        """Counts the step and returns (lrs, wds) for a multi-weight op; or None, after
        running the rule weight by weight, when a rate is negative (the ops take none)."""
        self._update_count(indices)
        lrs, wds = self._get_lrs(indices), self._get_wds(indices)
        if min(lrs) < 0:
            for args in zip(indices, weights, grads, states, lrs, wds):
                self._step_one(*args)
            return None
        return lrs, wds

    def _check_pair(self, weight, grad):
        owner = type(self).__name__
        for what, a in (("weight", weight), ("grad", grad)):
            if not isinstance(a, np.ndarray) and not _is_row_sparse(a):
                raise TypeError(f"[optimizer] {owner}.update: {what} must be an ndx array, got "
                                f"{type(a).__name__}")
        if weight.shape != grad.shape:
            raise ValueError(f"[optimizer] {owner}.update: grad shape {grad.shape} does not "
                             f"match weight shape {weight.shape}")

    def step(self, indices, weights, grads, states):
        """One update of each weight from its gradient and state (lists)."""
        for index, weight, grad, state in zip(indices, weights, grads, states):
            self._update_count(index)
            self._step_one(index, weight, grad, state, self._get_lr(index),
                           self._get_wd(index))

    def fused_step(self, indices, weights, grads, states):
        self.step(indices, weights, grads, states)

    def _step_one(self, index, weight, grad, state, lr, wd):
        raise NotImplementedError(f"[optimizer] {type(self).__name__} does not implement an "
                                  "update rule")

    def _lists(self, indices, weights, grads, states):
        if isinstance(indices, (list, tuple)):
            lists = [list(indices), _as_list(weights), _as_list(grads), list(states)]
        else:
            lists = [[indices], [weights], [grads], [states]]
        if len({len(x) for x in lists}) != 1:
            raise ValueError(f"[optimizer] {type(self).__name__}.update: indices, weights, "
                             f"grads and states differ in length: {[len(x) for x in lists]}")
        for weight, grad in zip(lists[1], lists[2]):
            self._check_pair(weight, grad)
        return lists

    def update(self, indices, weights, grads, states):
        """Updates the weights in place (lists, or one index / weight / grad / state). A
        gradient may be a RowSparseNDArray (see _row_sparse_updates)."""
        lists = self._row_sparse_updates(*self._lists(indices, weights, grads, states))
        if lists[0]:
            self._apply(*lists)

    def _row_sparse_updates(self, indices, weights, grads, states, multi_precision=False):
        """Runs the updates whose gradient or weight is a RowSparseNDArray and returns the
        lists of the others. A row_sparse weight is updated as its dense value, which goes
        back into its storage. With lazy_update (SGD, Adam), only the rows the gradient stores are
        updated: those rows of the weight and of its state go through the rule, and the other
        rows and their state stay as they are (MXNet's lazy update: no weight decay or
        momentum for rows absent from the batch). Otherwise the gradient's dense value
        updates every row (MXNet's standard update)."""
        if all(isinstance(g, np.ndarray) for g in grads) and all(
                isinstance(w, np.ndarray) for w in weights):  # (nothing sparse: the usual)
            return indices, weights, grads, states
        rest = ([], [], [], [])
        update = self.update_multi_precision if multi_precision else self.update
        for item in zip(indices, weights, grads, states):
            index, weight, grad, state = item
            if _is_row_sparse(weight):  # a row_sparse weight: updated densely, stored back
                dense = weight.tostype("default").as_np_ndarray()
                update([index], [dense], [grad], [state])
                weight[:] = dense
            elif not _is_row_sparse(grad):
                for kept, x in zip(rest, item):
                    kept.append(x)
            elif not (self._row_wise and getattr(self, "lazy_update", False)):
                update([index], [weight], [grad.tostype("default").as_np_ndarray()], [state])
            else:
                rows = grad._indices
                sub_weight, sub_state = weight[rows], _state_rows(state, rows)
                update([index], [sub_weight], [grad._data.astype(weight.dtype)], [sub_state])
                weight[rows] = sub_weight
                _set_state_rows(state, rows, sub_state)
        return rest

    def _apply(self, indices, weights, grads, states):
        """update() on checked lists."""
        if self.use_fused_step:
            self.fused_step(indices, weights, grads, states)
        else:
            self.step(indices, weights, grads, states)

    def update_multi_precision(self, indices, weights, grads, states):
        """update(), through float32 master copies for float16 weights with multi_precision."""
        indices, weights, grads, states = self._row_sparse_updates(
            *self._lists(indices, weights, grads, states), multi_precision=True)
        if not indices:
            return
        direct = type(self).update is Optimizer.update  # (else a subclass's update is called)
        if direct and not (self.multi_precision
                           and any(w.dtype == _onp.float16 for w in weights)):
            self._apply(indices, weights, grads, states)  # (the lists are checked already)
            return
        masters, inner, grads32 = [], [], []
        for weight, grad, state in zip(weights, grads, states):
            if self.multi_precision and weight.dtype == _onp.float16:
                masters.append(state[0])
                inner.append(state[1])
                grads32.append(grad.astype("float32"))
            else:
                masters.append(weight)
                inner.append(state)
                grads32.append(grad)
        self.update(indices, masters, grads32, inner)
        for master, weight in zip(masters, weights):
            if master is not weight:
                weight[...] = master.astype(weight.dtype)

    def __getstate__(self):
        state = self.__dict__.copy()
        state.pop("param_dict", None)  # parameters are the trainer's; it sets them again
        return state

    def __setstate__(self, state):
        self.__dict__ = state
        self.param_dict = {}


register = Optimizer.register
create = Optimizer.create_optimizer


def _momentum_state(optimizer, weight):
    return _zeros_like(weight) if optimizer.momentum != 0.0 else None


@register
class Test(Optimizer):
    """w -= lr * (rescale_grad * grad + wd * w); keeps a zero state (MXNet's Test)."""

    def create_state(self, index, weight):
        return _zeros_like(weight)

    def _step_one(self, index, weight, grad, state, lr, wd):
        weight -= (grad * self.rescale_grad + weight * wd) * lr


@register
class SGD(Optimizer):
    """SGD with momentum and weight decay::

        g = clip(rescale_grad * grad, clip_gradient) + wd * weight
        state = momentum * state - lr * g;  weight += state       (momentum > 0)
        weight -= lr * g                                           (momentum == 0)
    """

    _row_wise = True

    def __init__(self, learning_rate=0.1, momentum=0.0, lazy_update=False,
                 multi_precision=False, use_fused_step=True, aggregate_num=1, **kwargs):
        super().__init__(learning_rate=learning_rate, multi_precision=multi_precision,
                         use_fused_step=use_fused_step, aggregate_num=aggregate_num, **kwargs)
        self.momentum = _check_number("SGD", "momentum", momentum, low=0)
        self.lazy_update = bool(lazy_update)  # (for row_sparse gradients)

    def create_state(self, index, weight):
        return _momentum_state(self, weight)

    def fused_step(self, indices, weights, grads, states):
        """All the weights in one call of MXNet's preloaded_multi_sgd_[mom_]update where they
        allow it (each weight's result is sgd_[mom_]update's); else one by one."""
        if not (type(self)._step_one is SGD._step_one  # (a subclass's rule is its own)
                and _multi_fusable(weights, grads, states)
                and len({s is None for s in states}) == 1):
            self.step(indices, weights, grads, states)
            return
        rates = self._rates_for_multi_op(indices, weights, grads, states)
        if rates is None:
            return
        lrs, wds = rates
        clip = self._op_clip()
        if states[0] is None:
            _multi_update("preloaded_multi_sgd_update", weights, list(zip(weights, grads)),
                          lrs, wds, rescale_grad=self.rescale_grad, clip_gradient=clip)
        else:
            _multi_update("preloaded_multi_sgd_mom_update", weights,
                          list(zip(weights, grads, states)), lrs, wds, momentum=self.momentum,
                          rescale_grad=self.rescale_grad, clip_gradient=clip)

    def _step_one(self, index, weight, grad, state, lr, wd):
        if lr >= 0 and _fusable(weight, grad, state):  # one op (MXNet's) instead of six
            clip = self._op_clip()
            if state is None:
                internal_function("sgd_update")(
                    weight, grad, out=weight, lr=lr, wd=wd, rescale_grad=self.rescale_grad,
                    clip_gradient=clip)
            else:
                internal_function("sgd_mom_update")(
                    weight, grad, state, out=weight, lr=lr, momentum=self.momentum, wd=wd,
                    rescale_grad=self.rescale_grad, clip_gradient=clip)
            return
        _momentum_step(weight, self._prepared_grad(grad, weight, wd), state, self.momentum, lr)


def _momentum_step(weight, step, mom, momentum, lr):
    """weight -= lr * step, through the momentum buffer mom when there is one (in place)."""
    if mom is None:
        weight -= step * lr
    else:
        mom *= momentum
        mom -= step * lr
        weight += mom


@register
class NAG(Optimizer):
    """Nesterov accelerated gradient::

        g = clip(rescale_grad * grad, clip_gradient) + wd * weight
        state = momentum * state - lr * g
        weight += momentum * state - lr * g
    """

    def __init__(self, learning_rate=0.1, momentum=0.9, multi_precision=False,
                 use_fused_step=True, **kwargs):
        super().__init__(learning_rate=learning_rate, multi_precision=multi_precision,
                         use_fused_step=use_fused_step, **kwargs)
        self.momentum = _check_number("NAG", "momentum", momentum, low=0)

    def create_state(self, index, weight):
        return _momentum_state(self, weight)

    def _step_one(self, index, weight, grad, state, lr, wd):
        g = self._prepared_grad(grad, weight, wd)
        if state is None:
            weight -= g * lr
            return
        state *= self.momentum
        state -= g * lr
        weight += state * self.momentum - g * lr


class _AdamMoments:
    """m = beta1 m + (1 - beta1) g and v = beta2 v + (1 - beta2) g^2, in place."""

    def _moments(self, state, g):
        mean, var = state
        mean *= self.beta1
        mean += g * (1.0 - self.beta1)
        var *= self.beta2
        var += np.square(g) * (1.0 - self.beta2)
        return mean, var

    def _bias_corrected(self, lr, t):
        return lr * math.sqrt(1.0 - self.beta2**t) / (1.0 - self.beta1**t)

    def _op_params_valid(self):
        """Whether the fused ops take these hyperparameters (betas in [0, 1], epsilon >= 0);
        others run the elementwise rule, as before the ops existed."""
        return 0 <= self.beta1 <= 1 and 0 <= self.beta2 <= 1 and self.epsilon >= 0

    def _fused_moments(self, owner, op_name, correct_bias, indices, weights, grads, states):
        """The rule of `owner` for all weights in one call of the multi-weight op `op_name`
        (inputs weight, grad, mean, var per weight; rates bias-corrected here when
        `correct_bias`), or weight by weight where the op does not apply (or a subclass has a
        rule of its own)."""
        pairs = all(isinstance(s, tuple) and len(s) == 2 for s in states)
        own = type(self)._step_one is owner._step_one  # (a subclass's rule is its own)
        if not (weights and pairs and own and self._op_params_valid()
                and _multi_fusable(weights, grads, states)):
            self.step(indices, weights, grads, states)
            return
        rates = self._rates_for_multi_op(indices, weights, grads, states)
        if rates is None:
            return
        raw, wds = rates
        counts = self._index_update_count
        lrs = [self._bias_corrected(lr, counts[i]) for i, lr in zip(indices, raw)
               ] if correct_bias else raw
        clip = self._op_clip()
        _multi_update(op_name, weights, [(w, g) + s for w, g, s in zip(weights, grads, states)],
                      lrs, wds, beta1=self.beta1, beta2=self.beta2, epsilon=self.epsilon,
                      rescale_grad=self.rescale_grad, clip_gradient=clip)


@register
class Adam(_AdamMoments, Optimizer):
    """Adam::

        g = clip(rescale_grad * grad + wd * weight, clip_gradient)
        m = beta1 m + (1 - beta1) g;  v = beta2 v + (1 - beta2) g^2
        weight -= lr * sqrt(1 - beta2^t) / (1 - beta1^t) * m / (sqrt(v) + epsilon)

    As in MXNet, the fused step (update() with use_fused_step=True, the default: MXNet's
    adam_update op) adds the weight decay before clipping, and step() (use_fused_step=False:
    MXNet's Python rule) after: g = clip(rescale_grad * grad, clip_gradient) + wd * weight.
    """

    _in_fused_step = False

    _row_wise = True

    def __init__(self, learning_rate=0.001, beta1=0.9, beta2=0.999, epsilon=1e-8,
                 lazy_update=False, use_fused_step=True, **kwargs):
        super().__init__(learning_rate=learning_rate, use_fused_step=use_fused_step, **kwargs)
        _set_reals(self, beta1=beta1, beta2=beta2, epsilon=epsilon)
        self.lazy_update = bool(lazy_update)  # (for row_sparse gradients)

    def create_state(self, index, weight):
        return (_zeros_like(weight), _zeros_like(weight))

    def fused_step(self, indices, weights, grads, states):
        """All the weights in one call of _multi_adam_update (each weight's result is MXNet's
        adam_update's, with the bias-corrected rate) where they allow it; else one by one."""
        self._in_fused_step = True  # (weights the multi-weight op leaves go through step())
        try:
            self._fused_moments(Adam, "_multi_adam_update", True, indices, weights, grads,
                                states)
        finally:
            self._in_fused_step = False

    def _step_one(self, index, weight, grad, state, lr, wd):
        lr = self._bias_corrected(lr, self._index_update_count[index])
        if (self._in_fused_step and lr >= 0 and self._op_params_valid()
                and isinstance(state, tuple) and len(state) == 2
                and _fusable(weight, grad, state[0]) and state[1].dtype == weight.dtype):
            clip = self._op_clip()
            internal_function("adam_update")(  # one op (MXNet's) on any device
                weight, grad, state[0], state[1], out=weight, lr=lr, beta1=self.beta1,
                beta2=self.beta2, epsilon=self.epsilon, wd=wd, rescale_grad=self.rescale_grad,
                clip_gradient=clip)
            return
        if self._in_fused_step:  # (the op's rule: the decay before clipping)
            g = grad * self.rescale_grad + weight * wd if wd else grad * self.rescale_grad
            if self.clip_gradient is not None and self.clip_gradient > 0:
                g = np.clip(g, -float(self.clip_gradient), float(self.clip_gradient))
        else:
            g = self._prepared_grad(grad, weight, wd)
        mean, var = self._moments(state, g)
        weight -= mean / (np.sqrt(var) + self.epsilon) * lr


@register
class AdamW(_AdamMoments, Optimizer):
    """Adam with decoupled weight decay (Loshchilov and Hutter)::

        g = clip(rescale_grad * grad, clip_gradient)
        m = beta1 m + (1 - beta1) g;  v = beta2 v + (1 - beta2) g^2
        eta = lr * sqrt(1 - beta2^t) / (1 - beta1^t)     (lr when correct_bias=False)
        weight -= eta * (m / (sqrt(v) + epsilon) + wd * weight)
    """

    def __init__(self, learning_rate=0.001, beta1=0.9, beta2=0.999, epsilon=1e-6,
                 correct_bias=True, use_fused_step=True, **kwargs):
        super().__init__(learning_rate=learning_rate, use_fused_step=use_fused_step, **kwargs)
        _set_reals(self, beta1=beta1, beta2=beta2, epsilon=epsilon)
        self.correct_bias = correct_bias

    def create_state(self, index, weight):
        return (_zeros_like(weight), _zeros_like(weight))

    def fused_step(self, indices, weights, grads, states):
        """All the weights in one call of _multi_adamw_update where they allow it; else one
        by one."""
        self._fused_moments(AdamW, "_multi_adamw_update", self.correct_bias, indices, weights,
                            grads, states)

    def _step_one(self, index, weight, grad, state, lr, wd):
        g = self._prepared_grad(grad)
        if self.correct_bias:
            lr = self._bias_corrected(lr, self._index_update_count[index])
        mean, var = self._moments(state, g)
        d = mean / (np.sqrt(var) + self.epsilon)
        if wd:
            d = d + weight * wd
        weight -= d * lr


@register
class RMSProp(Optimizer):
    """RMSProp. Tieleman and Hinton (centered=False)::

        g = clip(rescale_grad * grad, clip_gradient) + wd * weight
        var = rho var + (1 - rho) g^2;  weight -= lr * g / (sqrt(var) + epsilon)

    Graves (centered=True)::

        mean = rho mean + (1 - rho) g;  var = rho var + (1 - rho) g^2
        mom = momentum * mom - lr * g / sqrt(var - mean^2 + epsilon);  weight += mom

    then weight is clipped to [-clip_weights, clip_weights] when clip_weights is set.
    """

    def __init__(self, learning_rate=0.001, rho=0.9, momentum=0.9, epsilon=1e-8,
                 centered=False, clip_weights=None, use_fused_step=True, gamma1=None,
                 gamma2=None, **kwargs):
        super().__init__(learning_rate=learning_rate, use_fused_step=use_fused_step, **kwargs)
        if gamma1 is not None:
            raise DeprecationWarning("parameter 'gamma1' is deprecated. Please use 'rho' "
                                     "instead...")
        if gamma2 is not None:
            raise DeprecationWarning("parameter 'gamma2' is deprecated. Please use 'momentum' "
                                     "instead...")
        _set_reals(self, rho=rho, momentum=momentum, epsilon=epsilon)
        self.centered = centered
        self.clip_weights = _check_number("RMSProp", "clip_weights", clip_weights,
                                          allow_none=True)

    def create_state(self, index, weight):
        if self.centered:
            return (_zeros_like(weight), _zeros_like(weight), _zeros_like(weight))
        return _zeros_like(weight)

    def _step_one(self, index, weight, grad, state, lr, wd):
        g = self._prepared_grad(grad, weight, wd)
        if not self.centered:
            var = state
            var *= self.rho
            var += np.square(g) * (1.0 - self.rho)
            weight -= g / (np.sqrt(var) + self.epsilon) * lr
        else:
            mean, var, mom = state
            mean *= self.rho
            mean += g * (1.0 - self.rho)
            var *= self.rho
            var += np.square(g) * (1.0 - self.rho)
            mom *= self.momentum
            mom -= g / np.sqrt(var - np.square(mean) + self.epsilon) * lr
            weight += mom
        if self.clip_weights:
            c = float(self.clip_weights)
            weight[...] = np.clip(weight, -c, c)


@register
class AdaGrad(Optimizer):
    """AdaGrad (Duchi et al.)::

        g = clip(rescale_grad * grad, clip_gradient) + wd * weight
        history += g^2;  weight -= lr * g / (sqrt(history) + epsilon)
    """

    def __init__(self, learning_rate=0.01, epsilon=1e-6, use_fused_step=True, eps=None,
                 **kwargs):
        super().__init__(learning_rate=learning_rate, use_fused_step=use_fused_step, **kwargs)
        if eps is not None:
            raise DeprecationWarning("parameter 'eps' is deprecated. Please use 'epsilon' "
                                     "instead...")
        _set_reals(self, epsilon=epsilon)

    def create_state(self, index, weight):
        return _zeros_like(weight)

    def _step_one(self, index, weight, grad, state, lr, wd):
        g = self._prepared_grad(grad, weight, wd)
        state += np.square(g)
        weight -= g / (np.sqrt(state) + self.epsilon) * lr


@register
class AdaDelta(Optimizer):
    """AdaDelta (Zeiler)::

        g = clip(rescale_grad * grad, clip_gradient) + wd * weight
        acc_g = rho acc_g + (1 - rho) g^2
        delta = sqrt(acc_delta + epsilon) / sqrt(acc_g + epsilon) * g
        acc_delta = rho acc_delta + (1 - rho) delta^2
        weight -= lr * delta
    """

    def __init__(self, learning_rate=1.0, rho=0.9, epsilon=1e-6, use_fused_step=False,
                 **kwargs):
        super().__init__(learning_rate=learning_rate, use_fused_step=use_fused_step, **kwargs)
        _set_reals(self, rho=rho, epsilon=epsilon)

    def create_state(self, index, weight):
        return (_zeros_like(weight), _zeros_like(weight))

    def _step_one(self, index, weight, grad, state, lr, wd):
        g = self._prepared_grad(grad, weight, wd)
        acc_g, acc_delta = state
        acc_g *= self.rho
        acc_g += np.square(g) * (1.0 - self.rho)
        delta = np.sqrt(acc_delta + self.epsilon) / np.sqrt(acc_g + self.epsilon) * g
        acc_delta *= self.rho
        acc_delta += np.square(delta) * (1.0 - self.rho)
        weight -= delta * lr


@register
class Adamax(Optimizer):
    """AdaMax (Kingma and Ba, section 7)::

        g = clip(rescale_grad * grad, clip_gradient) + wd * weight
        m = beta1 m + (1 - beta1) g;  u = maximum(beta2 u, |g|)
        weight -= lr / (1 - beta1^t) * m / u
    """

    def __init__(self, learning_rate=0.002, beta1=0.9, beta2=0.999, use_fused_step=False,
                 **kwargs):
        super().__init__(learning_rate=learning_rate, use_fused_step=use_fused_step, **kwargs)
        _set_reals(self, beta1=beta1, beta2=beta2)

    def create_state(self, index, weight):
        return (_zeros_like(weight), _zeros_like(weight))

    def _step_one(self, index, weight, grad, state, lr, wd):
        t = self._index_update_count[index]
        lr /= 1.0 - self.beta1**t
        g = self._prepared_grad(grad, weight, wd)
        mean, u = state
        mean *= self.beta1
        mean += g * (1.0 - self.beta1)
        u[...] = np.maximum(u * self.beta2, np.abs(g))
        weight -= mean / u * lr


@register
class Nadam(_AdamMoments, Optimizer):
    """Adam with Nesterov momentum (Dozat) and MXNet's momentum schedule::

        g = clip(rescale_grad * grad, clip_gradient) + wd * weight
        mu_t = beta1 (1 - 0.5 * 0.96^(t schedule_decay)), mu_t1 the same at t + 1
        m_schedule *= mu_t
        m = beta1 m + (1 - beta1) g;  v = beta2 v + (1 - beta2) g^2
        m_bar = mu_t1 m / (1 - m_schedule mu_t1) + (1 - mu_t) g / (1 - m_schedule)
        weight -= lr * m_bar / (sqrt(v / (1 - beta2^t)) + epsilon)

    m_schedule is kept per weight (MXNet keeps one for the whole optimizer, so there it also
    advances with every other weight's update; with one weight the two agree)."""

    def __init__(self, learning_rate=0.001, beta1=0.9, beta2=0.999, epsilon=1e-8,
                 schedule_decay=0.004, use_fused_step=False, **kwargs):
        super().__init__(learning_rate=learning_rate, use_fused_step=use_fused_step, **kwargs)
        _set_reals(self, beta1=beta1, beta2=beta2, epsilon=epsilon)
        _set_reals(self, schedule_decay=schedule_decay)
        self.m_schedule = 1.0
        self._m_schedules = {}

    def create_state(self, index, weight):
        return (_zeros_like(weight), _zeros_like(weight))

    def _step_one(self, index, weight, grad, state, lr, wd):
        t = self._index_update_count[index]
        g = self._prepared_grad(grad, weight, wd)
        mu_t = self.beta1 * (1.0 - 0.5 * 0.96 ** (t * self.schedule_decay))
        mu_t1 = self.beta1 * (1.0 - 0.5 * 0.96 ** ((t + 1) * self.schedule_decay))
        m_schedule = self._m_schedules.get(index, 1.0) * mu_t
        self._m_schedules[index] = self.m_schedule = m_schedule
        mean, var = self._moments(state, g)
        mean_bar = (mean * (mu_t1 / (1.0 - m_schedule * mu_t1))
                    + g * ((1.0 - mu_t) / (1.0 - m_schedule)))
        var_hat = var / (1.0 - self.beta2**t)
        weight -= mean_bar / (np.sqrt(var_hat) + self.epsilon) * lr


def _trust_ratio(numer, denom, value):
    """`value` where numer / denom is finite and non-zero, else 1 (MXNet's LAMB / LARS rule:
    a zero weight or a zero gradient leaves the learning rate alone)."""
    ratio = numer / denom
    ok = np.isfinite(ratio) & (ratio != 0)
    return np.where(ok, value, np.ones_like(value))


@register
class LAMB(_AdamMoments, Optimizer):
    """LAMB (You et al.)::

        g = clip(rescale_grad * grad, clip_gradient)
        m = beta1 m + (1 - beta1) g;  v = beta2 v + (1 - beta2) g^2
        r = m_hat / (sqrt(v_hat) + epsilon) + wd * weight   (hats: / (1 - beta^t) when
                                                              bias_correction)
        r1 = ||weight|| clipped to [lower_bound, upper_bound];  r2 = ||r||
        weight -= lr * (r1 / r2 if that is finite and non-zero else 1) * r
    """

    def __init__(self, learning_rate=0.001, beta1=0.9, beta2=0.999, epsilon=1e-6,
                 lower_bound=None, upper_bound=None, bias_correction=True, aggregate_num=4,
                 use_fused_step=True, **kwargs):
        super().__init__(learning_rate=learning_rate, aggregate_num=aggregate_num,
                         use_fused_step=use_fused_step, **kwargs)
        _set_reals(self, beta1=beta1, beta2=beta2, epsilon=epsilon)
        self.lower_bound = _check_number("LAMB", "lower_bound", lower_bound, allow_none=True)
        self.upper_bound = _check_number("LAMB", "upper_bound", upper_bound, allow_none=True)
        self.bias_correction = bias_correction

    def create_state(self, index, weight):
        return (_zeros_like(weight), _zeros_like(weight))

    def _step_one(self, index, weight, grad, state, lr, wd):
        t = self._index_update_count[index]
        g = self._prepared_grad(grad)
        mean, var = self._moments(state, g)
        if self.bias_correction:
            mean_hat = mean / (1.0 - self.beta1**t)
            var_hat = var / (1.0 - self.beta2**t)
        else:
            mean_hat, var_hat = mean, var
        r = mean_hat / (np.sqrt(var_hat) + self.epsilon)
        if wd:
            r = r + weight * wd
        r1 = np.linalg.norm(weight)
        if self.lower_bound is not None:
            r1 = np.maximum(r1, self.lower_bound)
        if self.upper_bound is not None:
            r1 = np.minimum(r1, self.upper_bound)
        r2 = np.linalg.norm(r)
        weight -= r * (_trust_ratio(r1, r2, r1 / r2) * lr)


@register
class LARS(Optimizer):
    """LARS (You et al.): SGD with momentum whose learning rate is scaled per layer::

        w_norm = ||weight||;  g_norm = ||rescale_grad * grad||
        lr *= eta * w_norm / (g_norm + wd * w_norm + epsilon)   (if w_norm / g_norm is finite
                                                                  and non-zero)
        then SGD's update with that learning rate.

    Parameters whose name (param_idx2name) ends in gamma, beta or bias keep the plain lr."""

    def __init__(self, learning_rate=0.1, momentum=0.0, eta=0.001, epsilon=1e-8,
                 lazy_update=False, use_fused_step=True, aggregate_num=1, **kwargs):
        super().__init__(learning_rate=learning_rate, use_fused_step=use_fused_step,
                         aggregate_num=aggregate_num, **kwargs)
        self.momentum = _check_number("LARS", "momentum", momentum, low=0)
        _set_reals(self, eta=eta, epsilon=epsilon)
        self.lazy_update = lazy_update

    def create_state(self, index, weight):
        return _momentum_state(self, weight)

    def _lars(self, index, weight, grad, wd):
        name = self.idx2name.get(index, str(index))
        if name.endswith(("gamma", "beta", "bias")):
            return 1.0
        w_norm = np.linalg.norm(weight.astype("float32"))
        g_norm = np.linalg.norm(grad.astype("float32") * self.rescale_grad)
        lars = w_norm * self.eta / (g_norm + w_norm * wd + self.epsilon)
        return _trust_ratio(w_norm, g_norm, lars).item()

    def _step_one(self, index, weight, grad, state, lr, wd):
        lr *= self._lars(index, weight, grad, wd)
        _momentum_step(weight, self._prepared_grad(grad, weight, wd), state, self.momentum, lr)


@register
class Signum(Optimizer):
    """signSGD / Signum (Bernstein et al.): the step is lr times the sign of the gradient,
    or of its momentum. Signum (momentum > 0)::

        g = clip(rescale_grad * grad, clip_gradient) + wd * weight
        state = momentum * state + (1 - momentum) * g
        weight = (1 - lr * wd_lh) * weight - lr * sign(state)

    signSGD (momentum == 0) decays the weight outside the sign, as MXNet's step and its
    signsgd_update kernel do::

        weight = (1 - lr * (wd + wd_lh)) * weight - lr * sign(grad)
    """

    def __init__(self, learning_rate=0.01, momentum=0.9, wd_lh=0.0, use_fused_step=False,
                 **kwargs):
        super().__init__(learning_rate=learning_rate, use_fused_step=use_fused_step, **kwargs)
        self.momentum = _check_number("Signum", "momentum", momentum, low=0)
        self.wd_lh = _check_number("Signum", "wd_lh", wd_lh)

    def create_state(self, index, weight):
        return _momentum_state(self, weight)

    def _step_one(self, index, weight, grad, state, lr, wd):
        if state is None:
            # signSGD: wd would change the sign inside it; MXNet decays outside (signsgd_update)
            decay = wd + self.wd_lh
            if decay:
                weight *= 1.0 - lr * decay
            weight -= np.sign(grad) * lr
            return
        state *= self.momentum
        state += self._prepared_grad(grad, weight, wd) * (1.0 - self.momentum)
        if self.wd_lh:
            weight *= 1.0 - lr * self.wd_lh
        weight -= np.sign(state) * lr


@register
class Ftrl(Optimizer):
    """FTRL-Proximal (McMahan et al., "Ad Click Prediction: a View from the Trenches")::

        g = clip(rescale_grad * grad, clip_gradient)
        z += g - (sqrt(n + g^2) - sqrt(n)) * weight / lr;  n += g^2
        weight = (sign(z) * lamda1 - z) / ((beta + sqrt(n)) / lr + wd) * (|z| > lamda1)
    """

    def __init__(self, learning_rate=0.1, lamda1=0.01, beta=1.0, use_fused_step=False,
                 **kwargs):
        super().__init__(learning_rate=learning_rate, use_fused_step=use_fused_step, **kwargs)
        self.lamda1 = _check_number("Ftrl", "lamda1", lamda1, low=0)
        self.beta = _check_number("Ftrl", "beta", beta)

    def create_state(self, index, weight):
        return (_zeros_like(weight), _zeros_like(weight))  # z, n

    def _step_one(self, index, weight, grad, state, lr, wd):
        if lr <= 0:
            raise ValueError(f"[optimizer] Ftrl needs a learning rate > 0, got {lr}")
        g = self._prepared_grad(grad)
        z, n = state
        sqrt_old = np.sqrt(n)
        n += np.square(g)
        sqrt_new = np.sqrt(n)
        z += g - (sqrt_new - sqrt_old) * weight / lr
        shrunk = np.sign(z) * np.maximum(np.abs(z) - self.lamda1, 0.0)
        weight[...] = -shrunk / ((sqrt_new + self.beta) / lr + wd)


@register
class SGLD(Optimizer):
    """Stochastic gradient Langevin dynamics (Welling and Teh): half a gradient step plus
    Gaussian noise of variance lr::

        g = clip(rescale_grad * grad, clip_gradient) + wd * weight
        weight += -lr / 2 * g + N(0, lr)

    The noise comes from ndx's global generator (np.random, seeded by mx.random.seed)."""

    def __init__(self, learning_rate=0.1, use_fused_step=False, **kwargs):
        super().__init__(learning_rate=learning_rate, use_fused_step=use_fused_step, **kwargs)

    def _step_one(self, index, weight, grad, state, lr, wd):
        g = self._prepared_grad(grad, weight, wd)
        noise = np.random.normal(0.0, math.sqrt(max(lr, 0.0)), size=weight.shape,
                                 dtype=weight.dtype, device=weight.device)
        weight -= g * (lr / 2.0)
        weight += noise


@register
class DCASGD(Optimizer):
    """Delay-compensated asynchronous SGD (Zheng et al.)::

        g = clip(rescale_grad * grad, clip_gradient) + wd * weight
        d = g + lamda * g^2 * (weight - previous_weight)
        mom = momentum * mom - lr * d           (mom = -lr * d when momentum is 0)
        previous_weight = weight;  weight += mom

    The state is (mom or None, previous_weight), previous_weight starting as a copy of the
    weight."""

    def __init__(self, learning_rate=0.1, momentum=0.0, lamda=0.04, use_fused_step=False,
                 **kwargs):
        super().__init__(learning_rate=learning_rate, use_fused_step=use_fused_step, **kwargs)
        self.momentum = _check_number("DCASGD", "momentum", momentum, low=0)
        self.lamda = _check_number("DCASGD", "lamda", lamda)
        self.weight_previous = {}

    def create_state(self, index, weight):
        return (_momentum_state(self, weight), weight.copy())

    def _step_one(self, index, weight, grad, state, lr, wd):
        g = self._prepared_grad(grad, weight, wd)
        mom, previous = state
        d = g + np.square(g) * (weight - previous) * self.lamda
        previous[...] = weight
        _momentum_step(weight, d, mom, self.momentum, lr)


@register
class FTML(Optimizer):
    """Follow the Moving Leader (Zheng and Kwok)::

        g = clip(rescale_grad * grad, clip_gradient) + wd * weight
        v = beta2 v + (1 - beta2) g^2
        d_t = (1 - beta1^t) / lr * (sqrt(v / (1 - beta2^t)) + epsilon)
        z = beta1 z + (1 - beta1) g - (d_t - beta1 d_(t-1)) * weight
        weight = -z / d_t

    The state is (d, v, z), all starting at 0."""

    def __init__(self, learning_rate=0.0025, beta1=0.6, beta2=0.999, epsilon=1e-8,
                 use_fused_step=True, **kwargs):
        super().__init__(learning_rate=learning_rate, use_fused_step=use_fused_step, **kwargs)
        _set_reals(self, beta1=beta1, beta2=beta2, epsilon=epsilon)

    def create_state(self, index, weight):
        return (_zeros_like(weight), _zeros_like(weight), _zeros_like(weight))

    def _step_one(self, index, weight, grad, state, lr, wd):
        if lr <= 0:
            raise ValueError(f"[optimizer] FTML needs a learning rate > 0, got {lr}")
        t = self._index_update_count[index]
        g = self._prepared_grad(grad, weight, wd)
        d, v, z = state
        v *= self.beta2
        v += np.square(g) * (1.0 - self.beta2)
        d_new = (np.sqrt(v / (1.0 - self.beta2**t)) + self.epsilon) * (
            (1.0 - self.beta1**t) / lr)
        sigma = d_new - d * self.beta1
        d[...] = d_new
        z *= self.beta1
        z += g * (1.0 - self.beta1)
        z -= sigma * weight
        weight[...] = -z / d


@register
class LANS(_AdamMoments, Optimizer):
    """LANS (Zheng et al., "Accelerated Large Batch Optimization of BERT Pretraining in 54
    minutes"): LAMB on the normalized gradient, with a Nesterov-style second term::

        g = clip(rescale_grad * grad / ||rescale_grad * grad||, clip_gradient)
        m = beta1 m + (1 - beta1) g;  v = beta2 v + (1 - beta2) g^2
        denom = sqrt(v / (1 - beta2^t)) + epsilon
        r = m / (1 - beta1^t) / denom + wd * weight;  c = g / denom + wd * weight
        phi = ||weight|| clipped to [lower_bound, upper_bound]
        weight -= lr * (beta1 * ratio(phi, ||r||) * r + (1 - beta1) * ratio(phi, ||c||) * c)

    ratio(a, b) is a / b when that is finite and non-zero, else 1 (LAMB's rule); both terms
    use the weight before the step, as in the paper's algorithm. A zero gradient is left
    as it is rather than normalized."""

    def __init__(self, learning_rate=0.001, beta1=0.9, beta2=0.999, epsilon=1e-6,
                 lower_bound=None, upper_bound=None, aggregate_num=4, use_fused_step=True,
                 **kwargs):
        super().__init__(learning_rate=learning_rate, aggregate_num=aggregate_num,
                         use_fused_step=use_fused_step, **kwargs)
        _set_reals(self, beta1=beta1, beta2=beta2, epsilon=epsilon)
        self.lower_bound = _check_number("LANS", "lower_bound", lower_bound, allow_none=True)
        self.upper_bound = _check_number("LANS", "upper_bound", upper_bound, allow_none=True)

    def create_state(self, index, weight):
        return (_zeros_like(weight), _zeros_like(weight))

    def _step_one(self, index, weight, grad, state, lr, wd):
        t = self._index_update_count[index]
        g = grad * self.rescale_grad
        g_norm = np.linalg.norm(g)
        g = g / np.where(g_norm > 0, g_norm, np.ones_like(g_norm))
        if self.clip_gradient is not None and self.clip_gradient > 0:
            c = float(self.clip_gradient)
            g = np.clip(g, -c, c)
        mean, var = self._moments(state, g)
        denom = np.sqrt(var / (1.0 - self.beta2**t)) + self.epsilon
        r = mean / (1.0 - self.beta1**t) / denom
        c = g / denom
        if wd:
            r = r + weight * wd
            c = c + weight * wd
        phi = np.linalg.norm(weight)
        if self.lower_bound is not None:
            phi = np.maximum(phi, self.lower_bound)
        if self.upper_bound is not None:
            phi = np.minimum(phi, self.upper_bound)
        r_norm, c_norm = np.linalg.norm(r), np.linalg.norm(c)
        ratio_r = _trust_ratio(phi, r_norm, phi / r_norm)
        ratio_c = _trust_ratio(phi, c_norm, phi / c_norm)
        weight -= (r * (ratio_r * (lr * self.beta1))
                   + c * (ratio_c * (lr * (1.0 - self.beta1))))


@register
class AdaBelief(_AdamMoments, Optimizer):
    """AdaBelief (Zhuang et al.): Adam whose second moment tracks (g - m)^2::

        g = clip(rescale_grad * grad + wd * weight, clip_gradient)
        m = beta1 m + (1 - beta1) g
        s = beta2 s + (1 - beta2) (g - m)^2 + epsilon
        eta = lr * sqrt(1 - beta2^t) / (1 - beta1^t)     (lr when correct_bias=False)
        weight -= eta * m / (sqrt(s) + epsilon)

    As in MXNet, the weight decay is added before the gradient is clipped."""

    def __init__(self, learning_rate=0.001, beta1=0.9, beta2=0.999, epsilon=1e-6,
                 correct_bias=True, use_fused_step=True, **kwargs):
        super().__init__(learning_rate=learning_rate, use_fused_step=use_fused_step, **kwargs)
        _set_reals(self, beta1=beta1, beta2=beta2, epsilon=epsilon)
        self.correct_bias = correct_bias

    def create_state(self, index, weight):
        return (_zeros_like(weight), _zeros_like(weight))

    def _step_one(self, index, weight, grad, state, lr, wd):
        g = grad * self.rescale_grad
        if wd:
            g = g + weight * wd
        if self.clip_gradient is not None and self.clip_gradient > 0:
            c = float(self.clip_gradient)
            g = np.clip(g, -c, c)
        if self.correct_bias:
            lr = self._bias_corrected(lr, self._index_update_count[index])
        mean, var = state
        mean *= self.beta1
        mean += g * (1.0 - self.beta1)
        var *= self.beta2
        var += np.square(g - mean) * (1.0 - self.beta2) + self.epsilon
        weight -= mean / (np.sqrt(var) + self.epsilon) * lr


@register
class RAdam(_AdamMoments, Optimizer):
    """Rectified Adam (Liu et al.)::

        g = clip(rescale_grad * grad, clip_gradient) + wd * weight
        m = beta1 m + (1 - beta1) g;  v = beta2 v + (1 - beta2) g^2
        m_hat = m / (1 - beta1^t)
        rho_inf = 2 / (1 - beta2) - 1;  rho_t = rho_inf - 2 t beta2^t / (1 - beta2^t)
        rho_t >= 5:  r = sqrt((rho_t - 4) (rho_t - 2) rho_inf / ((rho_inf - 4) (rho_inf - 2)
                                                                  rho_t))
                     weight -= lr * r * m_hat * sqrt(1 - beta2^t) / (sqrt(v) + epsilon)
        rho_t < 5:   weight -= lr * m_hat
    """

    def __init__(self, learning_rate=0.001, beta1=0.9, beta2=0.999, epsilon=1e-8,
                 use_fused_step=False, **kwargs):
        super().__init__(learning_rate=learning_rate, use_fused_step=use_fused_step, **kwargs)
        _set_reals(self, beta1=beta1, beta2=beta2, epsilon=epsilon)

    def create_state(self, index, weight):
        return (_zeros_like(weight), _zeros_like(weight))

    def _step_one(self, index, weight, grad, state, lr, wd):
        t = self._index_update_count[index]
        g = self._prepared_grad(grad, weight, wd)
        mean, var = self._moments(state, g)
        coef1, coef2 = 1.0 - self.beta1**t, 1.0 - self.beta2**t
        rho_inf = 2.0 / (1.0 - self.beta2) - 1.0
        rho_t = rho_inf - 2.0 * t * self.beta2**t / coef2
        if rho_t >= 5.0:
            rect = math.sqrt((rho_t - 4.0) * (rho_t - 2.0) * rho_inf
                             / ((rho_inf - 4.0) * (rho_inf - 2.0) * rho_t))
            weight -= mean / (np.sqrt(var) + self.epsilon) * (
                lr * rect * math.sqrt(coef2) / coef1)
        else:
            weight -= mean * (lr / coef1)


class Updater:
    """Applies an optimizer to (index, grad, weight) triples, keeping each index's state
    (MXNet's get_updater, as KVStore and Module use it). get_states / set_states save and
    restore the states (and, with dump_optimizer, the optimizer with its update counts and
    scheduler) as bytes, so that training resumes with the same numbers."""

    def __init__(self, optimizer):
        self.optimizer = optimizer
        self.states = {}
        self.states_synced = {}

    def __call__(self, index, grad, weight):
        indices, grads, weights = _as_list(index), _as_list(grad), _as_list(weight)
        for i, w in zip(indices, weights):
            if i not in self.states:
                self.states[i] = self.optimizer.create_state_multi_precision(i, w)
                self.states_synced[i] = True
            elif not self.states_synced.get(i, True):
                # a state read by set_states goes to its weight's device at first use (MXNet)
                self.states[i] = _state_to_device(self.states[i], w.device)
                self.states_synced[i] = True
        self.optimizer.update_multi_precision(indices, weights, grads,
                                              [self.states[i] for i in indices])

    def get_states(self, dump_optimizer=False):
        """The states as bytes (pickled); with dump_optimizer, (states, optimizer)."""
        return pickle.dumps((self.states, self.optimizer) if dump_optimizer else self.states)

    def set_states(self, states):
        """Restores what get_states returned (the optimizer too, if it was dumped)."""
        if not isinstance(states, (bytes, bytearray)):
            raise TypeError(f"[optimizer] Updater.set_states: states must be the bytes "
                            f"get_states returned, got {type(states).__name__}")
        try:
            states = pickle.loads(states)
        except Exception as e:  # (damaged bytes fail in any of pickle's ways)
            raise ValueError(f"[optimizer] Updater.set_states: states are not bytes written by "
                             f"get_states ({type(e).__name__}: {e})") from e
        if (isinstance(states, tuple) and len(states) == 2
                and isinstance(states[1], Optimizer)):
            states, self.optimizer = states
        if not isinstance(states, dict):
            raise ValueError(f"[optimizer] Updater.set_states: states are not bytes written by "
                             f"get_states (they hold a {type(states).__name__})")
        self.states = states
        self.states_synced = dict.fromkeys(states, False)


def _state_to_device(state, device):
    """An optimizer state (None, an array or nested tuples / lists of them) on `device`."""
    if isinstance(state, (tuple, list)):
        return type(state)(_state_to_device(s, device) for s in state)
    if isinstance(state, np.ndarray) and state.device != device:
        return state.to_device(device)
    return state


def get_updater(optimizer):
    """An Updater for `optimizer`."""
    return Updater(optimizer)
