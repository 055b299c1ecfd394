"""MXNet's Executor: a symbol bound to argument values, gradient buffers and auxiliary states
(``Symbol._bind`` / ``Symbol._simple_bind``). As in MXNet 2.0, forward runs the graph (ndx's
cached graph executor) under autograd recording, and backward back-propagates through the
recorded graph, whose gradients are the ops' registered ones (the same as Symbol.gradient's).

    exe = (2 * a + b)._bind(ndx.cpu(), {"a": ..., "b": ...}, args_grad={"a": ga, "b": gb})
    exe.forward(is_train=True)          # exe.outputs
    exe.backward(out_grads)             # ga, gb (and exe.grad_dict) now hold the gradients
"""
from . import _core, autograd
from . import numpy as _np

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
        self._symbol = sym
        self._device = device
        self._input_names = sym.list_inputs()
        self._arg_names = sym.list_arguments()
        self._aux_names = sym.list_auxiliary_states()
        self._output_names = sym.list_outputs()
        self.outputs = None

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

    # ---- running ----
    def forward(self, is_train=False, **kwargs):
        """Runs the symbol (recording it for backward); inputs given by name in kwargs are
        copied into the bound arrays first. Returns the list of outputs."""
        for name, value in kwargs.items():
            if name not in self._values:
                continue  # MXNet ignores names the symbol does not have
            current = self._values[name]
            if current is None:
                self._values[name] = _as_array(value, f"input '{name}'", self._device)
            else:
                current[...] = _as_array(value, f"input '{name}'", dtype=current.dtype)
        missing = [n for n in self._input_names if self._values[n] is None]
        if missing:
            raise ValueError(f"[Executor.forward] no value for inputs {missing}")
        for name, req in self._grad_req.items():
            if req != "null" and name not in self._attached:
                self._values[name].attach_grad()
                self._attached.add(name)
            if req != "null" and name not in self._grads:
                v = self._values[name]
                self._grads[name] = _np.zeros(v.shape, dtype=v.dtype, device=v.device)
        inputs = [self._values[n] for n in self._input_names]
        with autograd.record(train_mode=is_train):
            self.outputs = list(_core._graph_run(self._symbol._handle, inputs))
        return self.outputs

    def backward(self, out_grads=None):
        """Back-propagates `out_grads` (one array, a list in output order or a dict by output
        name; ones when None) and writes or adds the argument gradients into the gradient
        buffers as grad_req says."""
        if not any(r != "null" for r in self._grad_req.values()):
            return
        if self.outputs is None:
            self.forward()
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
                         for i, (g, o) in enumerate(zip(out_grads, self.outputs))]
        autograd.backward(self.outputs, head_grads=out_grads)
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
        """Copies values by name into the bound arguments and auxiliary states; names the
        symbol lacks raise ValueError unless allow_extra_params."""
        for params, names, what in ((arg_params, self._arg_names, "arguments"),
                                    (aux_params or {}, self._aux_names, "auxiliary states")):
            for name, value in params.items():
                if name in names:
                    dst = self._values[name]
                    if dst is None:
                        self._values[name] = _as_array(value, name, self._device)
                    else:
                        dst[...] = _as_array(value, name, dtype=dst.dtype)
                elif not allow_extra_params:
                    raise ValueError(f"[copy_params_from] '{name}' is not among the {what} "
                                     f"{names}")

    def __repr__(self):
        return f"<Executor inputs={self._input_names} outputs={self._output_names}>"
