"""Automatic differentiation: record computations on arrays marked with attach_grad(), then
back-propagate. The tape and the gradient graphs live in C++ and are built from the ops'
registered gradients, so gradients can be differentiated again (grad(..., create_graph=True)).

    x = np.array([1.0, 2.0]); x.attach_grad()
    with autograd.record():
        y = (x * x).sum()
    y.backward()            # x.grad == 2 * x
"""
import contextlib

from . import _core

__all__ = ["record", "pause", "train_mode", "predict_mode", "is_recording", "is_training",
           "set_recording", "set_training", "backward", "grad"]


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


def backward(heads, head_grads=None, retain_graph=False, train_mode=True):
    """Back-propagates from heads into the gradient buffers of the recorded leaves."""
    with _scope(None, train_mode):
        _core._autograd_backward(_as_list(heads), _as_list(head_grads), retain_graph)


def grad(heads, variables, head_grads=None, retain_graph=None, create_graph=False,
         train_mode=True):
    """Gradients of heads with respect to variables, returned (buffers are left alone).
    With create_graph=True the result is recorded and can be differentiated again."""
    single = not isinstance(variables, (list, tuple))
    if retain_graph is None:
        retain_graph = create_graph
    with _scope(None, train_mode):
        out = _core._autograd_grad(_as_list(heads), _as_list(variables), _as_list(head_grads),
                                   create_graph, retain_graph)
    return out[0] if single else out
