"""Automatic differentiation: record computations on arrays marked with attach_grad(), then
back-propagate. The tape and the gradient graphs live in C++ and are built from the ops'
registered gradients, so gradients can be differentiated again (grad(..., create_graph=True)).

    x = np.array([1.0, 2.0]); x.attach_grad()
    with autograd.record():
        y = (x * x).sum()
    y.backward()            # x.grad == 2 * x
"""
import contextlib
import threading

from . import _core

__all__ = ["record", "pause", "train_mode", "predict_mode", "is_recording", "is_training",
           "set_recording", "set_training", "backward", "grad", "mark_variables"]


def set_recording(is_recording):
    """Turns recording on or off for this thread; returns the previous state."""
    return _core._autograd_set_recording(bool(is_recording))


def set_training(train_mode):
    """Turns training mode on or off for this thread; returns the previous state."""
    return _core._autograd_set_training(bool(train_mode))


def is_recording():
    """Whether operations on this thread are being recorded."""
    return _core._autograd_is_recording()


def is_training():
    """Whether this thread is in training mode (dropout active, batch statistics used)."""
    return _core._autograd_is_training()


@contextlib.contextmanager
def _scope(recording, training):
    prev_rec = set_recording(recording) if recording is not None else None
    prev_train = set_training(training) if training is not None else None
    try:
        yield
    finally:
        if recording is not None:
            set_recording(prev_rec)
        if training is not None:
            set_training(prev_train)


def record(train_mode=True):
    """Records operations for backward (and sets training mode unless train_mode=False)."""
    return _scope(True, train_mode)


def pause(train_mode=False):
    """Stops recording inside a record() block."""
    return _scope(False, train_mode)


def train_mode():
    """Training mode without changing recording."""
    return _scope(None, True)


def predict_mode():
    """Prediction mode without changing recording."""
    return _scope(None, False)


def _as_list(x):
    if x is None:
        return None
    return list(x) if isinstance(x, (list, tuple)) else [x]


def mark_variables(variables, gradients, grad_reqs="write"):
    """Marks arrays as variables to compute gradients for, as attach_grad does, with the
    given arrays as their gradient buffers: backward writes (or, with grad_req 'add', adds)
    each variable's gradient into its buffer (MXNet's mark_variables). grad_reqs: one
    request for all, or one per variable."""
    variables, gradients = _as_list(variables), _as_list(gradients)
    if len(variables) != len(gradients):
        raise ValueError(f"[mark_variables] {len(variables)} variables but {len(gradients)} "
                         f"gradients")
    reqs = [grad_reqs] * len(variables) if isinstance(grad_reqs, str) else list(grad_reqs)
    if len(reqs) != len(variables):
        raise ValueError(f"[mark_variables] {len(variables)} variables but {len(reqs)} "
                         f"grad_reqs")
    for x, g, r in zip(variables, gradients, reqs):
        _core._mark_variable(x, g, r)


def backward(heads, head_grads=None, retain_graph=False, train_mode=True):
    """Back-propagates from heads into the gradient buffers of the recorded leaves."""
    with _scope(None, train_mode):
        _core._autograd_backward(_as_list(heads), _as_list(head_grads), retain_graph)


def grad(heads, variables, head_grads=None, retain_graph=None, create_graph=False,
         train_mode=True):
    """Gradients of heads with respect to variables, returned (buffers are left alone).
    With create_graph=True the result is recorded and can be differentiated again.
    As in MXNet 1.x, the gradients are mx.nd.NDArrays (x.asscalar(), legacy methods) when
    the heads or the variables are; otherwise ndx.numpy arrays."""
    single = not isinstance(variables, (list, tuple))
    if retain_graph is None:
        retain_graph = create_graph
    heads, variables = _as_list(heads), _as_list(variables)
    with _scope(None, train_mode):
        out = _core._autograd_grad(heads, variables, _as_list(head_grads), create_graph,
                                   retain_graph)
    from .nd.ndarray import NDArray, _wrap
    if any(type(a) is NDArray for a in heads + variables):
        out = [_wrap(g) for g in out]
    return out[0] if single else out


class Function:
    """An operation whose gradient is written in Python, as MXNet's autograd.Function:

        class Sigmoid(autograd.Function):
            def forward(self, x):
                y = 1 / (1 + np.exp(-x))
                self.save_for_backward(y)
                return y
            def backward(self, dy):
                (y,) = self.saved_tensors
                return dy * y * (1 - y)

    forward runs without recording; when autograd records, the call is recorded as one op whose
    backward is this object's backward. backward returns one gradient per input; None for an
    input means no gradient, zero (MXNet requires arrays there; PyTorch's None is accepted)."""

    def __init__(self):
        self.saved_tensors = ()

    def save_for_backward(self, *arrays):
        self.saved_tensors = arrays

    def forward(self, *inputs):
        raise NotImplementedError

    def backward(self, *output_grads):
        raise NotImplementedError

    def __call__(self, *inputs):
        from . import operator
        if _core._is_tracing():
            # Traced as its forward's ops: the graph serves inference, but differentiating it
            # would skip this backward, so the block refuses recorded runs (gluon/block.py)
            _TRACED.calls = getattr(_TRACED, "calls", 0) + 1
        with pause(train_mode=is_training()):
            outputs = self.forward(*inputs)
        single = not isinstance(outputs, (list, tuple))
        outputs = [outputs] if single else list(outputs)
        if not is_recording():
            return outputs[0] if single else tuple(outputs)
        import numpy as onp

        from .numpy import ndarray
        for i, o in enumerate(outputs):  # recording needs their shapes and dtypes
            if not isinstance(o, (ndarray, onp.ndarray)):
                raise TypeError(f"[autograd.Function] {type(self).__name__}.forward must return "
                                f"arrays, but output {i} is {type(o).__name__}")
        _FUNCTIONS[id(self)] = (self, outputs, len(inputs))
        try:
            recorded = operator.custom(*inputs, op_type="_ndx_autograd_function", fid=id(self))
        finally:
            _FUNCTIONS.pop(id(self), None)
        return recorded if single else tuple(recorded)


_FUNCTIONS = {}
_TRACED = threading.local()  # Function calls made while hybridize traces, per thread


def _traced_function_calls():
    return getattr(_TRACED, "calls", 0)


def _register_function_op():
    from . import operator

    class _Op(operator.CustomOp):
        def __init__(self, fn, outputs):
            self.fn, self.outputs = fn, outputs

        def forward(self, is_train, req, in_data, out_data, aux):
            for dst, r, src in zip(out_data, req, self.outputs):
                self.assign(dst, r, src)

        def backward(self, req, out_grad, in_data, out_data, in_grad, aux):
            grads = self.fn.backward(*out_grad)
            grads = [grads] if not isinstance(grads, (list, tuple)) else list(grads)
            if len(grads) != len(in_grad):
                raise ValueError(f"[autograd.Function] backward returned {len(grads)} gradients "
                                 f"for {len(in_grad)} inputs")
            for dst, r, src in zip(in_grad, req, grads):
                # None: no gradient for that input (one that is not differentiable), i.e. zero
                self.assign(dst, r, 0 if src is None else src)

    @operator.register("_ndx_autograd_function")
    class _Prop(operator.CustomOpProp):
        def __init__(self, fid):
            super().__init__()
            self.fn, self.outputs, self.n_in = _FUNCTIONS[int(fid)]

        def list_arguments(self):
            return [f"data{i}" for i in range(self.n_in)]

        def list_outputs(self):
            return [f"output{i}" for i in range(len(self.outputs))]

        def infer_shape(self, in_shape):
            return in_shape, [o.shape for o in self.outputs], []

        def infer_type(self, in_type):
            return in_type, [o.dtype for o in self.outputs], []

        def create_operator(self, ctx, shapes, dtypes):
            return _Op(self.fn, self.outputs)


_register_function_op()
__all__.append("Function")
