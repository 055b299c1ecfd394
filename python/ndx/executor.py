"""MXNet's Executor: a symbol bound to argument values, gradient buffers and auxiliary states
(``Symbol._bind`` / ``Symbol._simple_bind``). As in MXNet 2.0, forward runs the graph (ndx's
cached graph executor) under autograd recording, and backward back-propagates through the
recorded graph, whose gradients are the ops' registered ones (the same as Symbol.gradient's).

    exe = (2 * a + b)._bind(ndx.cpu(), {"a": ..., "b": ...}, args_grad={"a": ga, "b": gb})
    exe.forward(is_train=True)          # exe.outputs
    exe.backward(out_grads)             # ga, gb (and exe.grad_dict) now hold the gradients

MXNet 1.x's rules hold: forward(data=...) takes inputs of the bound shapes by name (an
unknown name is a TypeError, another shape a ValueError), exe.outputs are the executor's own
arrays updated by each forward, and exe.reshape(data=(n, ...), ...) makes an executor for
other input shapes that shares the parameters and their gradient buffers.
"""
import contextlib

from . import _core, autograd
from . import numpy as _np
from .device import Device as _Device

__all__ = ["Executor"]

_REQS = ("write", "add", "null")


def _as_array(value, what, device=None, dtype=None):
    """A copy of `value` (an ndx or NumPy array, or a nested list) as an ndx array."""
    import numpy as onp
    if dtype is None and isinstance(value, (_np.ndarray, onp.ndarray)):
        dtype = value.dtype
    try:
        if device is None:
            return _np.array(value, dtype=dtype)
        return _np.array(value, dtype=dtype, device=device)
    except (TypeError, ValueError) as e:
        raise TypeError(f"[Executor] {what} must be an array, got {type(value).__name__}: "
                        f"{e}") from e


def _prod(shape):
    n = 1
    for d in shape:
        n *= int(d)
    return n


def _resized(arr, shape, size):
    """`shape` over arr's first `size` elements (a view of its memory, as MXNet's reshape of
    a bound array) when arr holds that many, else a new zero array."""
    if size > arr.size:
        return _np.zeros(shape, dtype=arr.dtype, device=arr.device)
    return arr.reshape(-1)[:size].reshape(shape)


def _by_name(values, names, what):
    """{name: value} from a dict, or a list in the order of `names`."""
    if values is None:
        return {}
    if isinstance(values, dict):
        return dict(values)
    if isinstance(values, (list, tuple)):
        if len(values) != len(names):
            raise ValueError(f"[bind] {what} has {len(values)} entries; the symbol has "
                             f"{len(names)}: {names}")
        return dict(zip(names, values))
    raise TypeError(f"[bind] {what} must be a list or a dict, got {type(values).__name__}")


class Executor:
    """A bound symbol: forward(is_train, **inputs), backward(out_grads), and the arrays
    (arg_dict, grad_dict, aux_dict, outputs, ...). Create one with Symbol._bind."""

    def __init__(self, sym, device, args, args_grad, grad_req, aux_states):
        self._init_names(sym, device)

        # Argument and auxiliary values are copied, as MXNet copies them onto the device.
        self._values = dict.fromkeys(self._input_names)
        for name, value in _by_name(args, self._arg_names, "args").items():
            if name in self._arg_names and value is not None:
                self._values[name] = _as_array(value, f"argument '{name}'", device)
        for name, value in _by_name(aux_states, self._aux_names, "aux_states").items():
            if name in self._aux_names and value is not None:
                self._values[name] = _as_array(value, f"auxiliary state '{name}'", device)

        if isinstance(grad_req, str):
            reqs = dict.fromkeys(self._arg_names, grad_req)
        elif isinstance(grad_req, (list, tuple)):
            reqs = _by_name(list(grad_req), self._arg_names, "grad_req")
        elif isinstance(grad_req, dict):
            # (names left out get 'null', as in MXNet; a name the symbol lacks is a typo that
            # would silently leave a parameter untrained)
            unknown = sorted(set(grad_req) - set(self._input_names))
            if unknown:
                raise ValueError(f"[bind] grad_req names {unknown} are not arguments of the "
                                 f"symbol; its arguments are {self._arg_names}")
            reqs = {n: grad_req.get(n, "null") for n in self._arg_names}
        else:
            raise TypeError(f"[bind] grad_req must be a str, list or dict, got "
                            f"{type(grad_req).__name__}")
        for name, req in reqs.items():
            if req not in _REQS:
                raise ValueError(f"[bind] grad_req for '{name}' must be one of {_REQS}, got "
                                 f"{req!r}")
        self._grad_req = reqs

        # The caller's gradient buffers are written in place (not copied), as in MXNet.
        self._grads = {}
        for name, g in _by_name(args_grad, self._arg_names, "args_grad").items():
            if name not in self._arg_names or g is None or reqs[name] == "null":
                continue
            if not isinstance(g, _np.ndarray):
                raise TypeError(f"[bind] args_grad['{name}'] must be an ndx ndarray (it is "
                                f"written in place), got {type(g).__name__}")
            self._grads[name] = g
        for name, req in reqs.items():  # buffers the caller did not give
            if req != "null" and name not in self._grads and self._values[name] is not None:
                v = self._values[name]
                self._grads[name] = _np.zeros(v.shape, dtype=v.dtype, device=v.device)
        self._attached = set()
        self._allocate_outputs()

    def _allocate_outputs(self):
        """exe.outputs as zeros of the inferred shapes and dtypes before the first forward, as
        MXNet's bind allocates them (left None while some input has no value yet)."""
        if any(v is None for v in self._values.values()):
            return
        shapes = {n: v.shape for n, v in self._values.items()}
        dtypes = {n: v.dtype for n, v in self._values.items()}
        out_shapes, out_types = self._symbol.infer(shapes, dtypes)
        device = next(iter(self._values.values())).device if self._values else None
        self.outputs = [_np.zeros(tuple(s), dtype=t, device=device)
                        for s, t in zip(out_shapes, out_types)]

    def _device_scope(self):
        return contextlib.nullcontext() if self._device is None else _Device(self._device)

    def _init_names(self, sym, device):
        self._symbol = sym
        self._device = device
        self._input_names = sym.list_inputs()
        self._arg_names = sym.list_arguments()
        self._aux_names = sym.list_auxiliary_states()
        self._output_names = sym.list_outputs()
        # outputs: the executor's own arrays, updated in place by each forward (as MXNet's
        # bound output arrays); _recorded: the last forward's recorded outputs, for backward.
        self.outputs = None
        self._recorded = None
        self._attached = set()
        self._monitor = None

    @classmethod
    def _sharing(cls, sym, device, values, grads, grad_req):
        """An executor over the given arrays themselves (not copies): Executor.reshape's."""
        exe = cls.__new__(cls)
        exe._init_names(sym, device)
        exe._values = values
        exe._grads = grads
        exe._grad_req = dict(grad_req)
        exe._allocate_outputs()
        return exe

    # ---- running ----
    def forward(self, is_train=False, **kwargs):
        """Runs the symbol (recording it for backward); inputs given by name in kwargs are
        copied into the bound arrays first, as MXNet's: an unknown name is a TypeError and a
        value whose shape differs from the bound array's a ValueError (Executor.reshape makes
        an executor for other shapes). Returns the list of outputs (exe.outputs)."""
        new = {}
        for name, value in kwargs.items():  # (all checked before any is copied)
            if name not in self._values:
                raise TypeError(f"[Executor.forward] unknown argument '{name}'; the symbol's "
                                f"arguments are {self._arg_names}"
                                + (f" and auxiliary states {self._aux_names}"
                                   if self._aux_names else ""))
            current = self._values[name]
            if current is None:
                new[name] = _as_array(value, f"input '{name}'", self._device)
                continue
            value = _as_array(value, f"input '{name}'", dtype=current.dtype)
            if value.shape != current.shape:
                raise ValueError(f"[Executor.forward] shape mismatch for '{name}': the "
                                 f"executor is bound with {current.shape}, got {value.shape} "
                                 f"(use exe.reshape({name}={value.shape}) for other shapes)")
            new[name] = value
        for name, value in new.items():
            current = self._values[name]
            if current is None:
                self._values[name] = value
            else:
                current[...] = value
        missing = [n for n in self._input_names if self._values[n] is None]
        if missing:
            raise ValueError(f"[Executor.forward] no value for inputs {missing}")
        for name, req in self._grad_req.items():
            # (an array shared with another executor, Executor.reshape's, is attached once:
            # attaching again would cut it out of the other's recorded forward)
            if req != "null" and self._values[name].grad is None:
                self._values[name].attach_grad()
            if req != "null" and name not in self._grads:
                v = self._values[name]
                self._grads[name] = _np.zeros(v.shape, dtype=v.dtype, device=v.device)
        inputs = [self._values[n] for n in self._input_names]
        # (zero-input ops in the graph -- sym.zeros, random -- create on the bound device)
        monitoring = self._monitor is not None and getattr(self._monitor[0], "active", True)
        if monitoring:  # (one run of every internal value: the monitor sees this forward's)
            recorded = self._forward_internals(is_train)
        else:
            with self._device_scope(), autograd.record(train_mode=is_train):
                recorded = list(_core._graph_run(self._symbol._handle, inputs))
        self._recorded = recorded
        if self.outputs is None or [(o.shape, o.dtype) for o in self.outputs] != \
                [(r.shape, r.dtype) for r in recorded]:
            self.outputs = [_np.zeros(r.shape, dtype=r.dtype, device=r.device)
                            for r in recorded]
        for buf, r in zip(self.outputs, recorded):
            buf[...] = r
        return self.outputs

    def set_monitor_callback(self, callback, monitor_all=False):
        """After each forward, callback(name, array) gets every op output of the graph
        ('fc1_output', ...) and, with monitor_all, every input ('fc1_weight', ...), as
        MXNet's executor monitor (mx.monitor.Monitor installs one). A callback with an
        `active` attribute that is False is skipped (the outputs are then not computed)."""
        if callback is not None and not callable(callback):
            raise TypeError(f"[Executor.set_monitor_callback] callback must be callable, got "
                            f"{type(callback).__name__}")
        self._monitor = None if callback is None else (callback, bool(monitor_all))

    def _forward_internals(self, is_train):
        """The forward run as the graph of every internal value (one run, recorded, so that
        BatchNorm's statistics and Dropout's masks are those of this forward), each reported
        to the monitor callback; returns the outputs."""
        from .sym import Group
        callback, monitor_all = self._monitor
        internals = self._symbol.get_internals()
        both = Group([self._symbol, internals])  # (shared nodes run once)
        with self._device_scope(), autograd.record(train_mode=is_train):
            values = list(_core._graph_run(both._handle,
                                           [self._values[n] for n in both.list_inputs()]))
        n_out = len(self._output_names)
        inputs = set(self._input_names)
        for name, value in zip(internals.list_outputs(), values[n_out:]):
            if monitor_all or name not in inputs:
                callback(name, value)
        return values[:n_out]

    def backward(self, out_grads=None):
        """Back-propagates `out_grads` (one array, a list in output order or a dict by output
        name; ones when None) through the last forward and writes or adds the argument
        gradients into the gradient buffers as grad_req says. As in MXNet, backward may run
        again after one forward ('add' then accumulates)."""
        if self._recorded is None:
            raise ValueError("[Executor.backward] call forward(is_train=True) first: there "
                             "is no forward pass to back-propagate through")
        if not any(r != "null" for r in self._grad_req.values()):
            return
        if out_grads is not None:
            if isinstance(out_grads, dict):
                unknown = sorted(set(out_grads) - set(self._output_names))
                if unknown:
                    raise ValueError(f"[Executor.backward] out_grads names {unknown} are not "
                                     f"outputs; the outputs are {self._output_names}")
                out_grads = [out_grads[n] for n in self._output_names]
            elif not isinstance(out_grads, (list, tuple)):
                out_grads = [out_grads]
            if len(out_grads) != len(self.outputs):
                raise ValueError(f"[Executor.backward] {len(out_grads)} out_grads for "
                                 f"{len(self.outputs)} outputs")
            out_grads = [_as_array(g, f"out_grads[{i}]", dtype=o.dtype)
                         for i, (g, o) in enumerate(zip(out_grads, self._recorded))]
            for name, g, o in zip(self._output_names, out_grads, self._recorded):
                if g.shape != o.shape:
                    raise ValueError(f"[Executor.backward] out_grads for '{name}' has shape "
                                     f"{g.shape}; the output's is {o.shape}")
        autograd.backward(self._recorded, head_grads=out_grads, retain_graph=True)
        for name, req in self._grad_req.items():
            if req == "null":
                continue
            grad = self._values[name].grad
            dst = self._grads[name]
            if req == "write":
                dst[...] = grad
            else:
                dst[...] = dst + grad

    # ---- arrays ----
    @property
    def arg_arrays(self):
        """Argument values in list_arguments order."""
        return [self._values[n] for n in self._arg_names]

    @property
    def grad_arrays(self):
        """Gradient buffers in list_arguments order (None where grad_req is 'null')."""
        return [self._grads.get(n) for n in self._arg_names]

    @property
    def aux_arrays(self):
        """Auxiliary states in list_auxiliary_states order."""
        return [self._values[n] for n in self._aux_names]

    @property
    def arg_dict(self):
        return {n: self._values[n] for n in self._arg_names}

    @property
    def grad_dict(self):
        return {n: self._grads.get(n) for n in self._arg_names}

    @property
    def aux_dict(self):
        return {n: self._values[n] for n in self._aux_names}

    @property
    def output_dict(self):
        if self.outputs is None:
            raise ValueError("[Executor.output_dict] call forward() first")
        return dict(zip(self._output_names, self.outputs))

    def copy_params_from(self, arg_params, aux_params=None, allow_extra_params=False):
        """Copies values by name into the bound arguments and auxiliary states (cast to their
        dtypes), as MXNet's: names the symbol lacks raise ValueError unless
        allow_extra_params; arguments not named keep their values; a value whose shape
        differs from the bound array's raises ValueError. Nothing is copied when one
        raises."""
        copies = []
        for params, names, what in ((arg_params, self._arg_names, "arguments"),
                                    (aux_params or {}, self._aux_names, "auxiliary states")):
            for name, value in params.items():
                if name in names:
                    dst = self._values[name]
                    value = _as_array(value, name, self._device if dst is None else None,
                                      None if dst is None else dst.dtype)
                    if dst is not None and value.shape != dst.shape:
                        raise ValueError(f"[copy_params_from] '{name}' has shape "
                                         f"{value.shape}; the executor's is {dst.shape}")
                    copies.append((name, dst, value))
                elif not allow_extra_params:
                    raise ValueError(f"[copy_params_from] '{name}' is not among the {what} "
                                     f"{names} (allow_extra_params=True skips such names)")
        for name, dst, value in copies:
            if dst is None:
                self._values[name] = value
            else:
                dst[...] = value

    def reshape(self, partial_shaping=False, allow_up_sizing=False, **kwargs):
        """A new executor for new input shapes (MXNet's: a smaller last batch, other sequence
        lengths) sharing this one's arrays: those whose shape stays (the parameters) are
        the same arrays, gradient buffers included, so training either trains both; those
        whose shape shrinks are views of this one's memory; those that grow are new arrays
        (only with allow_up_sizing). kwargs give new shapes by input name; the other shapes
        are inferred from them, and one that changes without being given is a ValueError
        unless partial_shaping (so reshape(data=...) of a net with a label needs the label's
        shape too, as in MXNet). Shapes the symbol cannot take raise ValueError."""
        arg_shapes, _, aux_shapes = self._symbol.infer_shape(**kwargs)
        values, grads = {}, {}
        for names, shapes, what in ((self._arg_names, arg_shapes, "argument"),
                                    (self._aux_names, aux_shapes, "auxiliary state")):
            for name, shape in zip(names, shapes):
                shape = tuple(shape)
                arr, grad = self._values[name], self._grads.get(name)
                if arr is None or shape == arr.shape:
                    values[name] = arr
                    if grad is not None:
                        grads[name] = grad
                    continue
                if not (partial_shaping or name in kwargs):
                    raise ValueError(
                        f"[Executor.reshape] the shape of {what} '{name}' would change from "
                        f"{arr.shape} to {shape} without being asked for (the new executor "
                        f"would not share it); give it ({name}={shape}) or pass "
                        f"partial_shaping=True")
                size = int(_prod(shape))
                if size > arr.size and not allow_up_sizing:
                    raise ValueError(
                        f"[Executor.reshape] the new shape {shape} of {what} '{name}' is "
                        f"larger than the bound {arr.shape}; pass allow_up_sizing=True to "
                        f"allocate new arrays (or bind the larger shape first)")
                values[name] = _resized(arr, shape, size)
                if grad is not None:
                    grads[name] = _resized(grad, shape, size)
        return Executor._sharing(self._symbol, self._device, values, grads, self._grad_req)

    def _share_arrays(self, other, names):
        """Makes the named arguments and auxiliary states (and their gradient buffers) the
        arrays of executor `other` itself, as MXNet's shared_exec (a BucketingModule's
        buckets train one set of parameters). Shapes must agree."""
        for name in names:
            if name not in self._values or name not in other._values:
                continue
            mine, theirs = self._values[name], other._values[name]
            if mine is not None and theirs is not None and mine.shape != theirs.shape:
                raise ValueError(f"[bind] '{name}' has shape {mine.shape} here and "
                                 f"{theirs.shape} in the shared executor; shared parameters "
                                 f"must have one shape")
            self._values[name] = theirs
            if name in self._grads and name in other._grads:
                self._grads[name] = other._grads[name]

    def __repr__(self):
        return f"<Executor inputs={self._input_names} outputs={self._output_names}>"
