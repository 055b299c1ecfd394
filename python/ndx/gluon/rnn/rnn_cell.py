"""Recurrent cells (MXNet 2.0's gluon.rnn cells): one time step each, composed of registered
ops (fully_connected, the activations, split, where), and unroll() to run them over a
sequence. Their parameters are named as MXNet's ('i2h_weight', 'h2h_bias', and
'l_cell.i2h_weight', '0.h2h_weight', ... inside containers) so .params files load."""
from ... import _core
from ... import numpy as np
from ... import numpy_extension as npx
from ..block import Block, HybridBlock, _device_scope
from ..parameter import Parameter

__all__ = ["RecurrentCell", "HybridRecurrentCell", "RNNCell", "LSTMCell", "GRUCell",
           "SequentialRNNCell", "HybridSequentialRNNCell", "DropoutCell", "ModifierCell",
           "ZoneoutCell", "ResidualCell", "BidirectionalCell", "VariationalDropoutCell",
           "LSTMPCell"]


def _as_list(x):
    return list(x) if isinstance(x, (list, tuple)) else [x]


def _cells_state_info(cells, batch_size):
    return sum([c.state_info(batch_size) for c in cells], [])


def _cells_begin_state(cells, **kwargs):
    return sum([c.begin_state(**kwargs) for c in cells], [])


def _get_begin_state(cell, begin_state, inputs, batch_size):
    """The given states, or zeros of the inputs' dtype and device."""
    if begin_state is not None:
        return _as_list(begin_state)
    first = inputs if isinstance(inputs, np.ndarray) else inputs[0]
    return cell.begin_state(batch_size=batch_size, dtype=str(first.dtype), device=first.device)


def _format_sequence(length, inputs, layout, merge, in_layout=None):
    """The inputs as a list of (N, ...) steps (merge False), one array with time on layout's T
    axis (merge True), or as they come (merge None); also that axis and the batch size."""
    if inputs is None:
        raise ValueError("[unroll] inputs is required (a sequence array or a list of steps)")
    if layout not in ("NTC", "TNC"):
        raise ValueError(f"[unroll] layout must be 'NTC' or 'TNC', got {layout!r}")
    axis = layout.find("T")
    batch_axis = layout.find("N")
    in_axis = in_layout.find("T") if in_layout is not None else axis
    if isinstance(inputs, np.ndarray):
        if inputs.ndim < 2:
            raise ValueError(f"[unroll] inputs must have a time and a batch axis, got shape "
                             f"{tuple(inputs.shape)}")
        batch_size = inputs.shape[batch_axis]
        if length is not None and length != inputs.shape[in_axis]:
            raise ValueError(f"[unroll] length is {length} but the inputs have "
                             f"{inputs.shape[in_axis]} steps (shape {tuple(inputs.shape)}, "
                             f"layout {layout})")
        if merge is False:
            steps = np.split(inputs, inputs.shape[in_axis], axis=in_axis)
            return [s.squeeze(axis=in_axis) for s in steps], axis, batch_size
        if axis != in_axis:
            inputs = np.swapaxes(inputs, axis, in_axis)
        return inputs, axis, batch_size
    if not isinstance(inputs, (list, tuple)):
        raise TypeError(f"[unroll] inputs must be an ndarray or a list of ndarrays, got "
                        f"{type(inputs).__name__}")
    if length is not None and len(inputs) != length:
        raise ValueError(f"[unroll] length is {length} but {len(inputs)} steps were given")
    batch_size = inputs[0].shape[0]
    if merge is True:
        return np.stack(list(inputs), axis=axis), axis, batch_size
    return list(inputs), axis, batch_size


def _valid_mask(valid_length, step, ndim=2):
    """(N, 1, ...) bool of `ndim` axes: which sequences still run at `step` (ndim: the
    step's arrays', 3 or more for a convolutional cell's)."""
    return (valid_length > step).reshape((-1,) + (1,) * (ndim - 1))


class RecurrentCell(Block):
    """Base class of the cells: state_info, begin_state, unroll, and a call that steps once:
    cell(inputs, states) -> (output, new_states)."""

    def __init__(self):
        super().__init__()
        self._modified = False
        self.reset()

    def reset(self):
        """Resets the step counters (and the cells inside) before another sequence."""
        self._init_counter = -1
        self._counter = -1
        for child in self._children.values():
            if isinstance(child, RecurrentCell):
                child.reset()

    def state_info(self, batch_size=0):
        """Shape and layout of each state."""
        raise NotImplementedError()

    def begin_state(self, batch_size=0, func=None, **kwargs):
        """The initial states: func(shape=..., **kwargs) per state (np.zeros by default);
        kwargs may set dtype and device (ctx, MXNet's name, is taken too)."""
        if self._modified:
            raise RuntimeError("[begin_state] after a modifier cell (ZoneoutCell, ResidualCell) "
                               "wraps this cell, call the modifier cell instead")
        func = np.zeros if func is None else func
        states = []
        for info in self.state_info(batch_size):
            info = dict(info or {})
            info.pop("__layout__", None)
            info.update(kwargs)
            if "ctx" in info:
                info["device"] = info.pop("ctx")
            states.append(func(**info))
        return states

    def unroll(self, length, inputs, begin_state=None, layout="NTC", merge_outputs=None,
               valid_length=None):
        """Runs the cell over `length` steps of `inputs` (an array in `layout`, or a list of
        (N, ...) steps). Returns (outputs, states): outputs one array (merge_outputs True) or a
        list of steps (False; None keeps the inputs' form). With valid_length (N,), steps past
        a sequence's length give zero outputs and keep its last valid state."""
        self.reset()
        inputs, axis, batch_size = _format_sequence(length, inputs, layout, False)
        states = _get_begin_state(self, begin_state, inputs, batch_size)
        outputs = []
        for i in range(length):
            output, new_states = self(inputs[i], states)
            if valid_length is not None:
                m = _valid_mask(valid_length, i, output.ndim)
                output = np.where(m, output, np.zeros_like(output))
                new_states = [np.where(_valid_mask(valid_length, i, n.ndim), n, o)
                              for n, o in zip(new_states, states)]
            outputs.append(output)
            states = new_states
        outputs, _, _ = _format_sequence(length, outputs, layout, merge_outputs)
        return outputs, states

    def _get_activation(self, inputs, activation, **kwargs):
        """Applies an activation given by name ('tanh', 'relu', 'sigmoid', 'softsign', or any
        npx.activation act_type) or as a callable (a block or a function)."""
        func = {"tanh": np.tanh, "relu": npx.relu, "sigmoid": npx.sigmoid,
                "softsign": npx.softsign}.get(activation) if isinstance(activation, str) else None
        if func is not None:
            return func(inputs, **kwargs)
        if isinstance(activation, str):
            return npx._activation_op(inputs, act_type=activation, **kwargs)
        if callable(activation):
            return activation(inputs, **kwargs)
        raise TypeError(f"[{type(self).__name__}] activation must be a name or a callable, got "
                        f"{type(activation).__name__}")

    def __call__(self, inputs, states=None):
        if Parameter._multi:  # (some parameter has copies on several devices)
            scope = _device_scope((inputs, states), None, type(self).__name__, strict=False)
            if scope is not None:
                with scope:
                    return RecurrentCell.__call__(self, inputs, states)
        self._counter += 1
        if states is None:
            states = self.begin_state(batch_size=inputs.shape[0], dtype=str(inputs.dtype),
                                      device=inputs.device)
        return self.forward(inputs, _as_list(states))

    def forward(self, inputs, states):
        """One step: (inputs (N, C), states) -> (output, new states)."""
        raise NotImplementedError


class _FlatStep(HybridBlock):
    """A hybridized cell's step in the flat form a captured graph keeps: (inputs, *states) ->
    (output, *new states). It owns no parameters: collect_params is the cell's."""

    def __init__(self, cell):
        super().__init__()
        object.__setattr__(self, "_cell", cell)

    def collect_params(self, select=None):
        return self._cell.collect_params(select)

    def forward(self, inputs, *states):
        output, new_states = self._cell.forward(inputs, list(states))
        return (output, *new_states)


class HybridRecurrentCell(RecurrentCell, HybridBlock):
    """A cell whose step hybridize() captures as a graph (one per input signature)."""

    def __call__(self, inputs, states=None):
        if not (self._active and not _core._is_tracing()):
            return RecurrentCell.__call__(self, inputs, states)
        if Parameter._multi:
            scope = _device_scope((inputs, states), None, type(self).__name__, strict=True)
            if scope is not None:
                with scope:
                    return HybridRecurrentCell.__call__(self, inputs, states)
        self._counter += 1
        if states is None:
            states = self.begin_state(batch_size=inputs.shape[0], dtype=str(inputs.dtype),
                                      device=inputs.device)
        # The step graph lives in _graphs, which hybridize() and load_parameters clear.
        step = self._graphs.get("_flat_step")
        if step is None:
            step = self._graphs["_flat_step"] = _FlatStep(self)
            step.hybridize(True)
        out = step._call_graph(inputs, *_as_list(states))
        return out[0], list(out[1:])

    def forward(self, inputs, states):
        raise NotImplementedError


def _step_params(cell, inputs, gates):
    """Finishes the cell's deferred parameters from the input's feature size."""
    n = gates * cell._hidden_size
    cell.i2h_weight._finish_deferred_init((n, inputs.shape[-1]))
    cell.h2h_weight._finish_deferred_init((n, cell._hidden_size))
    cell.i2h_bias._finish_deferred_init((n,))
    cell.h2h_bias._finish_deferred_init((n,))


def _check_step(cell, inputs, states):
    """One step's inputs (N, C) and states as state_info(N) says: a missing state was an
    IndexError, and a state of another shape broadcast into garbage or failed in
    fully_connected under a name the caller never used."""
    name = type(cell).__name__
    if inputs.ndim != 2:
        raise ValueError(f"[{name}] inputs of one step must be 2-d (N, C), got shape "
                         f"{tuple(inputs.shape)}")
    known = cell.i2h_weight.shape[1]
    if known and known != inputs.shape[1]:
        raise ValueError(f"[{name}] inputs have {inputs.shape[1]} features but the cell's "
                         f"input size (i2h_weight's shape[1], input_size) is {known}")
    _check_states(cell, states, inputs.shape[0])


def _check_states(cell, states, batch_size):
    """states as the cell's state_info(batch_size) says: their count and shapes."""
    name = type(cell).__name__
    infos = cell.state_info(batch_size)
    if len(states) != len(infos):
        raise ValueError(f"[{name}] expected {len(infos)} state array(s), got {len(states)}")
    for k, (state, info) in enumerate(zip(states, infos)):
        if tuple(state.shape) != info["shape"]:
            raise ValueError(f"[{name}] states[{k}] must have shape {info['shape']} (batch, "
                             f"state size), got {tuple(state.shape)}")


def _projections(cell, inputs, state, gates):
    """x W_i^T + b_i and h W_h^T + b_h, each (N, gates * hidden_size)."""
    _step_params(cell, inputs, gates)
    n = gates * cell._hidden_size
    i2h = npx.fully_connected(inputs, cell.i2h_weight.data(), cell.i2h_bias.data(),
                              num_hidden=n, no_bias=False)
    h2h = npx.fully_connected(state, cell.h2h_weight.data(), cell.h2h_bias.data(),
                              num_hidden=n, no_bias=False)
    return i2h, h2h


class _GatedCell(HybridRecurrentCell):
    """The parameters of the three cells: i2h / h2h weights and biases with `gates` blocks."""

    _GATES = 1

    def __init__(self, hidden_size, i2h_weight_initializer, h2h_weight_initializer,
                 i2h_bias_initializer, h2h_bias_initializer, input_size):
        super().__init__()
        name = type(self).__name__
        if isinstance(hidden_size, bool) or not isinstance(hidden_size, int) or hidden_size < 1:
            raise ValueError(f"[{name}] hidden_size must be a positive int, got {hidden_size!r}")
        if isinstance(input_size, bool) or not isinstance(input_size, int) or input_size < 0:
            raise ValueError(f"[{name}] input_size must be a non-negative int, got "
                             f"{input_size!r}")
        n = self._GATES * hidden_size
        self._hidden_size = hidden_size
        self._input_size = input_size
        self.i2h_weight = Parameter("i2h_weight", shape=(n, input_size),
                                    init=i2h_weight_initializer, allow_deferred_init=True)
        self.h2h_weight = Parameter("h2h_weight", shape=(n, hidden_size),
                                    init=h2h_weight_initializer, allow_deferred_init=True)
        self.i2h_bias = Parameter("i2h_bias", shape=(n,), init=i2h_bias_initializer,
                                  allow_deferred_init=True)
        self.h2h_bias = Parameter("h2h_bias", shape=(n,), init=h2h_bias_initializer,
                                  allow_deferred_init=True)

    def __repr__(self):
        shape = self.i2h_weight.shape
        return f"{type(self).__name__}({shape[1] or None} -> {shape[0]})"


class RNNCell(_GatedCell):
    r"""Elman RNN cell: h_t = act(W_ih x_t + b_ih + W_hh h_(t-1) + b_hh).

    Inputs: data (N, input_size) and states [h (N, hidden_size)]. Outputs: h and [h]."""

    def __init__(self, hidden_size, activation="tanh", i2h_weight_initializer=None,
                 h2h_weight_initializer=None, i2h_bias_initializer="zeros",
                 h2h_bias_initializer="zeros", input_size=0):
        super().__init__(hidden_size, i2h_weight_initializer, h2h_weight_initializer,
                         i2h_bias_initializer, h2h_bias_initializer, input_size)
        self._activation = activation

    def state_info(self, batch_size=0):
        return [{"shape": (batch_size, self._hidden_size), "__layout__": "NC"}]

    def _alias(self):
        return "rnn"

    def __repr__(self):
        shape = self.i2h_weight.shape
        return f"RNNCell({shape[1] or None} -> {shape[0]}, {self._activation})"

    def forward(self, inputs, states):
        _check_step(self, inputs, states)
        i2h, h2h = _projections(self, inputs, states[0], 1)
        output = self._get_activation(i2h + h2h, self._activation)
        return output, [output]


class _TwoActivationCell(_GatedCell):
    """LSTM's and GRU's constructor: the gated parameters plus an activation for the candidate
    state and a recurrent activation for the gates."""

    def __init__(self, hidden_size, i2h_weight_initializer=None, h2h_weight_initializer=None,
                 i2h_bias_initializer="zeros", h2h_bias_initializer="zeros", input_size=0,
                 activation="tanh", recurrent_activation="sigmoid"):
        super().__init__(hidden_size, i2h_weight_initializer, h2h_weight_initializer,
                         i2h_bias_initializer, h2h_bias_initializer, input_size)
        self._activation = activation
        self._recurrent_activation = recurrent_activation


class LSTMCell(_TwoActivationCell):
    r"""Long short-term memory cell: gates i, f, g, o (in that order in the weights),
    c_t = f * c_(t-1) + i * g, h_t = o * act(c_t).

    Inputs: data (N, input_size) and states [h, c], each (N, hidden_size). Outputs: h and
    [h, c]."""

    _GATES = 4

    def state_info(self, batch_size=0):
        return [{"shape": (batch_size, self._hidden_size), "__layout__": "NC"},
                {"shape": (batch_size, self._hidden_size), "__layout__": "NC"}]

    def _alias(self):
        return "lstm"

    def forward(self, inputs, states):
        _check_step(self, inputs, states)
        i2h, h2h = _projections(self, inputs, states[0], 4)
        gi, gf, gg, go = np.split(i2h + h2h, 4, axis=1)
        in_gate = self._get_activation(gi, self._recurrent_activation)
        forget_gate = self._get_activation(gf, self._recurrent_activation)
        in_transform = self._get_activation(gg, self._activation)
        out_gate = self._get_activation(go, self._recurrent_activation)
        next_c = forget_gate * states[1] + in_gate * in_transform
        next_h = out_gate * self._get_activation(next_c, self._activation)
        return next_h, [next_h, next_c]


class GRUCell(_TwoActivationCell):
    r"""Gated recurrent unit cell, cuDNN's variant: gates r, z, n (in that order),
    n = act(W_in x + b_in + r * (W_hn h + b_hn)), h_t = (1 - z) * n + z * h_(t-1).

    Inputs: data (N, input_size) and states [h (N, hidden_size)]. Outputs: h and [h]."""

    _GATES = 3

    def state_info(self, batch_size=0):
        return [{"shape": (batch_size, self._hidden_size), "__layout__": "NC"}]

    def _alias(self):
        return "gru"

    def forward(self, inputs, states):
        _check_step(self, inputs, states)
        prev_h = states[0]
        i2h, h2h = _projections(self, inputs, prev_h, 3)
        i2h_r, i2h_z, i2h_n = np.split(i2h, 3, axis=1)
        h2h_r, h2h_z, h2h_n = np.split(h2h, 3, axis=1)
        reset_gate = self._get_activation(i2h_r + h2h_r, self._recurrent_activation)
        update_gate = self._get_activation(i2h_z + h2h_z, self._recurrent_activation)
        next_h_tmp = self._get_activation(i2h_n + reset_gate * h2h_n, self._activation)
        next_h = (1 - update_gate) * next_h_tmp + update_gate * prev_h
        return next_h, [next_h]


class LSTMPCell(_GatedCell):
    r"""LSTM cell with a projected recurrent state (LSTMP, Sak et al., 2014): the LSTM's gates
    read r_(t-1) instead of h_(t-1), and r_t = W_hr (o * tanh(c_t)).

    Inputs: data (N, input_size) and states [r (N, projection_size), c (N, hidden_size)].
    Outputs: r and [r, c]."""

    _GATES = 4

    def __init__(self, hidden_size, projection_size, i2h_weight_initializer=None,
                 h2h_weight_initializer=None, h2r_weight_initializer=None,
                 i2h_bias_initializer="zeros", h2h_bias_initializer="zeros", input_size=0):
        super().__init__(hidden_size, i2h_weight_initializer, h2h_weight_initializer,
                         i2h_bias_initializer, h2h_bias_initializer, input_size)
        if (isinstance(projection_size, bool) or not isinstance(projection_size, int)
                or projection_size < 1):
            raise ValueError(f"[LSTMPCell] projection_size must be a positive int, got "
                             f"{projection_size!r}")
        self._projection_size = projection_size
        self.h2h_weight = Parameter("h2h_weight", shape=(4 * hidden_size, projection_size),
                                    init=h2h_weight_initializer, allow_deferred_init=True)
        self.h2r_weight = Parameter("h2r_weight", shape=(projection_size, hidden_size),
                                    init=h2r_weight_initializer, allow_deferred_init=True)
        # the parameters in MXNet's order (h2r_weight after h2h_weight)
        for name in ("i2h_bias", "h2h_bias"):
            self._reg_params.move_to_end(name)

    def state_info(self, batch_size=0):
        return [{"shape": (batch_size, self._projection_size), "__layout__": "NC"},
                {"shape": (batch_size, self._hidden_size), "__layout__": "NC"}]

    def _alias(self):
        return "lstmp"

    def __repr__(self):
        shape = self.i2h_weight.shape
        return f"LSTMPCell({shape[1] or None} -> {shape[0]} -> {self._projection_size})"

    def forward(self, inputs, states):
        _check_step(self, inputs, states)
        n = 4 * self._hidden_size
        self.i2h_weight._finish_deferred_init((n, inputs.shape[-1]))
        self.h2h_weight._finish_deferred_init((n, self._projection_size))
        self.h2r_weight._finish_deferred_init((self._projection_size, self._hidden_size))
        self.i2h_bias._finish_deferred_init((n,))
        self.h2h_bias._finish_deferred_init((n,))
        gates = (npx.fully_connected(inputs, self.i2h_weight.data(), self.i2h_bias.data(),
                                     num_hidden=n, no_bias=False)
                 + npx.fully_connected(states[0], self.h2h_weight.data(), self.h2h_bias.data(),
                                       num_hidden=n, no_bias=False))
        gi, gf, gg, go = np.split(gates, 4, axis=1)
        next_c = npx.sigmoid(gf) * states[1] + npx.sigmoid(gi) * np.tanh(gg)
        hidden = npx.sigmoid(go) * np.tanh(next_c)
        next_r = npx.fully_connected(hidden, self.h2r_weight.data(), None,
                                     num_hidden=self._projection_size, no_bias=True)
        return next_r, [next_r, next_c]


class _SequentialMixin:
    """Stacking: each cell's output is the next one's input; states are concatenated."""

    def add(self, cell):
        """Appends a cell to the stack."""
        self.register_child(cell)

    def __getitem__(self, i):
        return list(self._children.values())[i]

    def __len__(self):
        return len(self._children)

    def __repr__(self):
        body = "\n".join(f"({i}): " + repr(m).replace("\n", "\n  ")
                         for i, m in self._children.items())
        return f"{type(self).__name__}(\n{body}\n)"

    def state_info(self, batch_size=0):
        return _cells_state_info(self._children.values(), batch_size)

    def begin_state(self, **kwargs):
        if self._modified:
            raise RuntimeError("[begin_state] after a modifier cell wraps this cell, call the "
                               "modifier cell instead")
        return _cells_begin_state(self._children.values(), **kwargs)

    def _step(self, inputs, states):
        next_states, p = [], 0
        for cell in self._children.values():
            if isinstance(cell, BidirectionalCell):
                raise NotImplementedError(f"[{type(self).__name__}] a BidirectionalCell cannot "
                                          "be stepped; use unroll()")
            n = len(cell.state_info())
            inputs, state = cell(inputs, states[p:p + n])
            p += n
            next_states.extend(state)
        return inputs, next_states

    def unroll(self, length, inputs, begin_state=None, layout="NTC", merge_outputs=None,
               valid_length=None):
        self.reset()
        inputs, _, batch_size = _format_sequence(length, inputs, layout, None)
        num_cells = len(self._children)
        begin_state = _get_begin_state(self, begin_state, inputs, batch_size)
        p, next_states = 0, []
        for i, cell in enumerate(self._children.values()):
            n = len(cell.state_info())
            states = begin_state[p:p + n]
            p += n
            inputs, states = cell.unroll(length, inputs=inputs, begin_state=states,
                                         layout=layout,
                                         merge_outputs=None if i < num_cells - 1 else merge_outputs,
                                         valid_length=valid_length)
            next_states.extend(states)
        return inputs, next_states


class SequentialRNNCell(_SequentialMixin, RecurrentCell):
    """Stacks cells: each cell's output is the next one's input."""

    def __call__(self, inputs, states):
        self._counter += 1
        return self._step(inputs, _as_list(states))

    def forward(self, inputs, states):
        return self._step(inputs, _as_list(states))


class HybridSequentialRNNCell(_SequentialMixin, HybridRecurrentCell):
    """Stacks hybridizable cells; hybridize() captures the whole step as one graph."""

    def forward(self, inputs, states):
        return self._step(inputs, _as_list(states))


class DropoutCell(HybridRecurrentCell):
    """Dropout on the inputs (training mode only); states pass through."""

    def __init__(self, rate, axes=()):
        super().__init__()
        if isinstance(rate, bool) or not isinstance(rate, (int, float)):
            raise TypeError(f"[DropoutCell] rate must be a number, got {type(rate).__name__}")
        if not 0 <= rate < 1:
            raise ValueError(f"[DropoutCell] rate must be in [0, 1), got {rate}")
        self._rate = rate
        self._axes = () if axes is None else \
            tuple(axes) if isinstance(axes, (tuple, list)) else (axes,)

    def __repr__(self):
        return f"DropoutCell(rate={self._rate}, axes={self._axes})"

    def state_info(self, batch_size=0):
        return []

    def _alias(self):
        return "dropout"

    def forward(self, inputs, states):
        if self._rate > 0:
            inputs = npx._dropout_op(inputs, p=self._rate, axes=self._axes)
        return inputs, states

    def unroll(self, length, inputs, begin_state=None, layout="NTC", merge_outputs=None,
               valid_length=None):
        self.reset()
        inputs, _, _ = _format_sequence(length, inputs, layout, merge_outputs)
        if isinstance(inputs, np.ndarray):
            return self.forward(inputs, _as_list(begin_state) if begin_state else [])
        return super().unroll(length, inputs, begin_state=begin_state, layout=layout,
                              merge_outputs=merge_outputs, valid_length=None)


class ModifierCell(HybridRecurrentCell):
    """Base of the cells that modify another cell (ZoneoutCell, ResidualCell); after wrapping,
    the base cell is used through the modifier only."""

    def __init__(self, base_cell):
        if base_cell._modified:
            raise ValueError(f"[{type(self).__name__}] the cell {type(base_cell).__name__} is "
                             "already modified; a cell can be modified once")
        base_cell._modified = True
        super().__init__()
        self.base_cell = base_cell

    @property
    def params(self):
        return self.base_cell.params

    def state_info(self, batch_size=0):
        return self.base_cell.state_info(batch_size)

    def begin_state(self, func=None, **kwargs):
        if self._modified:
            raise RuntimeError("[begin_state] after a modifier cell wraps this cell, call the "
                               "modifier cell instead")
        self.base_cell._modified = False
        try:
            return self.base_cell.begin_state(func=func, **kwargs)
        finally:
            self.base_cell._modified = True

    def forward(self, inputs, states):
        raise NotImplementedError

    def __repr__(self):
        return f"{type(self).__name__}({self.base_cell!r})"


class ZoneoutCell(ModifierCell):
    """Zoneout on a base cell: in training mode each output and state element keeps its
    previous value with probability zoneout_outputs / zoneout_states."""

    def __init__(self, base_cell, zoneout_outputs=0.0, zoneout_states=0.0):
        if isinstance(base_cell, BidirectionalCell):
            raise TypeError("[ZoneoutCell] BidirectionalCell cannot be stepped; wrap the cells "
                            "inside it instead")
        for name, v in (("zoneout_outputs", zoneout_outputs),
                        ("zoneout_states", zoneout_states)):
            if not 0 <= v < 1:
                raise ValueError(f"[ZoneoutCell] {name} must be in [0, 1), got {v}")
        super().__init__(base_cell)
        self.zoneout_outputs = zoneout_outputs
        self.zoneout_states = zoneout_states
        self._prev_output = None

    def __repr__(self):
        return (f"ZoneoutCell(p_out={self.zoneout_outputs}, p_state={self.zoneout_states}, "
                f"{self.base_cell!r})")

    def _alias(self):
        return "zoneout"

    def reset(self):
        super().reset()
        self._prev_output = None

    def __call__(self, inputs, states=None):
        # The previous output is Python state across steps: always stepped imperatively.
        return RecurrentCell.__call__(self, inputs, states)

    def forward(self, inputs, states):
        p_outputs, p_states = self.zoneout_outputs, self.zoneout_states
        next_output, next_states = self.base_cell(inputs, states)

        def mask(p, like):
            return npx._dropout_op(np.ones(like.shape, dtype=str(like.dtype)), p=p)

        prev_output = self._prev_output
        if prev_output is None:
            prev_output = np.zeros_like(next_output)
        output = (np.where(mask(p_outputs, next_output), next_output, prev_output)
                  if p_outputs != 0.0 else next_output)
        new_states = ([np.where(mask(p_states, new_s), new_s, old_s)
                       for new_s, old_s in zip(next_states, states)]
                      if p_states != 0.0 else next_states)
        self._prev_output = output
        return output, new_states


class ResidualCell(ModifierCell):
    """Adds the input to the base cell's output (Wu et al., 2016)."""

    def forward(self, inputs, states):
        output, states = self.base_cell(inputs, states)
        return output + inputs, states

    def unroll(self, length, inputs, begin_state=None, layout="NTC", merge_outputs=None,
               valid_length=None):
        self.reset()
        self.base_cell._modified = False
        try:
            outputs, states = self.base_cell.unroll(length, inputs=inputs,
                                                    begin_state=begin_state, layout=layout,
                                                    merge_outputs=merge_outputs,
                                                    valid_length=valid_length)
        finally:
            self.base_cell._modified = True
        if merge_outputs is None:
            merge_outputs = isinstance(outputs, np.ndarray)
        inputs, axis, _ = _format_sequence(length, inputs, layout, merge_outputs)
        if valid_length is not None:  # padded steps' inputs are zeros, as their outputs
            if merge_outputs:
                steps = np.arange(length).reshape((-1, 1) if axis == 0 else (1, -1))
                keep = steps < valid_length.reshape((1, -1) if axis == 0 else (-1, 1))
                keep = keep.reshape(keep.shape + (1,) * (inputs.ndim - 2))
                inputs = np.where(keep, inputs, np.zeros_like(inputs))
            else:
                inputs = [np.where(_valid_mask(valid_length, i, x.ndim), x, np.zeros_like(x))
                          for i, x in enumerate(inputs)]
        if merge_outputs:
            outputs = outputs + inputs
        else:
            outputs = [i + j for i, j in zip(outputs, inputs)]
        return outputs, states


class BidirectionalCell(HybridRecurrentCell):
    """Runs l_cell forward and r_cell backward in time; outputs concatenated on the feature
    axis, states [l_cell's..., r_cell's...]. Only unroll() runs it."""

    def __init__(self, l_cell, r_cell):
        super().__init__()
        self.l_cell = l_cell
        self.r_cell = r_cell

    def __call__(self, inputs, states=None):
        raise NotImplementedError("[BidirectionalCell] cannot be stepped; use unroll()")

    def __repr__(self):
        return f"BidirectionalCell(forward={self.l_cell!r}, backward={self.r_cell!r})"

    def state_info(self, batch_size=0):
        return _cells_state_info([self.l_cell, self.r_cell], batch_size)

    def begin_state(self, **kwargs):
        if self._modified:
            raise RuntimeError("[begin_state] after a modifier cell wraps this cell, call the "
                               "modifier cell instead")
        return _cells_begin_state([self.l_cell, self.r_cell], **kwargs)

    def unroll(self, length, inputs, begin_state=None, layout="NTC", merge_outputs=None,
               valid_length=None):
        self.reset()
        inputs, axis, batch_size = _format_sequence(length, inputs, layout, False)
        reversed_inputs = _reverse_steps(inputs, valid_length)
        begin_state = _get_begin_state(self, begin_state, inputs, batch_size)
        n_l = len(self.l_cell.state_info(batch_size))
        l_outputs, l_states = self.l_cell.unroll(length, inputs=inputs,
                                                 begin_state=begin_state[:n_l], layout=layout,
                                                 merge_outputs=False, valid_length=valid_length)
        r_outputs, r_states = self.r_cell.unroll(length, inputs=reversed_inputs,
                                                 begin_state=begin_state[n_l:], layout=layout,
                                                 merge_outputs=False, valid_length=valid_length)
        r_outputs = _reverse_steps(r_outputs, valid_length)
        outputs = [np.concatenate([lo, ro], axis=1) for lo, ro in zip(l_outputs, r_outputs)]
        if merge_outputs:
            outputs = np.stack(outputs, axis=axis)
        return outputs, l_states + r_states


def _reverse_steps(steps, valid_length):
    """The steps in reverse time order; with valid_length, each sequence's first valid_length
    steps reversed and its padding left in place (so the backward cell starts at the
    sequence's last valid step, and its zero outputs past the length stay there)."""
    if valid_length is None:
        return list(reversed(steps))
    if not _core._is_tracing():  # a length past the steps made sequence_reverse repeat one
        lengths = valid_length.asnumpy()
        if ((lengths < 0) | (lengths > len(steps)) | (lengths != lengths.round())).any():
            raise ValueError(f"[BidirectionalCell] valid_length must hold integers in [0, "
                             f"{len(steps)}] (the unrolled length), got {lengths.tolist()}")
    rev = npx.sequence_reverse(np.stack(list(steps), axis=0), sequence_length=valid_length,
                               use_sequence_length=True, axis=0)
    return [rev[t] for t in range(len(steps))]


def _dropout_mask(p, shape, dtype):
    """0 or 1 / (1 - p) per element in training mode, ones in inference (npx.dropout of
    ones)."""
    return npx._dropout_op(np.ones(shape, dtype=dtype), p=p)


class VariationalDropoutCell(ModifierCell):
    """Variational dropout (Gal and Ghahramani, 2016) on a base cell: one mask per sequence
    for the inputs, the first state and the outputs, drawn at the first step and reused until
    reset() (unroll resets). Without state dropout, unroll drops the whole input and output
    sequences with masks shared along time."""

    def __init__(self, base_cell, drop_inputs=0.0, drop_states=0.0, drop_outputs=0.0):
        if drop_states and isinstance(base_cell, BidirectionalCell):
            raise TypeError("[VariationalDropoutCell] BidirectionalCell cannot be stepped, so "
                            "its states cannot be dropped; wrap the cells inside it instead")
        for name, v in (("drop_inputs", drop_inputs), ("drop_states", drop_states),
                        ("drop_outputs", drop_outputs)):
            if not 0 <= v < 1:
                raise ValueError(f"[VariationalDropoutCell] {name} must be in [0, 1), got {v}")
        super().__init__(base_cell)
        self.drop_inputs = drop_inputs
        self.drop_states = drop_states
        self.drop_outputs = drop_outputs
        self.reset()

    def _alias(self):
        return "vardrop"

    def __repr__(self):
        return (f"VariationalDropoutCell(p_out = {self.drop_outputs}, p_state = "
                f"{self.drop_states})")

    def reset(self):
        super().reset()
        self.drop_inputs_mask = None
        self.drop_states_mask = None
        self.drop_outputs_mask = None

    def __call__(self, inputs, states=None):
        # The masks are Python state across steps: always stepped imperatively.
        return RecurrentCell.__call__(self, inputs, states)

    def forward(self, inputs, states):
        dtype = str(inputs.dtype)
        if self.drop_states and self.drop_states_mask is None:
            self.drop_states_mask = _dropout_mask(self.drop_states, states[0].shape, dtype)
        if self.drop_inputs and self.drop_inputs_mask is None:
            self.drop_inputs_mask = _dropout_mask(self.drop_inputs, inputs.shape, dtype)
        if self.drop_states:
            states = list(states)
            states[0] = states[0] * self.drop_states_mask  # h is always the first state
        if self.drop_inputs:
            inputs = inputs * self.drop_inputs_mask
        next_output, next_states = self.base_cell(inputs, states)
        if self.drop_outputs:
            if self.drop_outputs_mask is None:
                self.drop_outputs_mask = _dropout_mask(self.drop_outputs, next_output.shape,
                                                       str(next_output.dtype))
            next_output = next_output * self.drop_outputs_mask
        return next_output, next_states

    def unroll(self, length, inputs, begin_state=None, layout="NTC", merge_outputs=None,
               valid_length=None):
        if self.drop_states:
            return super().unroll(length, inputs, begin_state, layout, merge_outputs,
                                  valid_length=valid_length)
        self.reset()
        inputs, axis, batch_size = _format_sequence(length, inputs, layout, True)
        states = _get_begin_state(self, begin_state, inputs, batch_size)

        def shared_over_time(p, x):
            shape = list(x.shape)
            shape[axis] = 1
            return x * _dropout_mask(p, tuple(shape), str(x.dtype))

        if self.drop_inputs:
            inputs = shared_over_time(self.drop_inputs, inputs)
        self.base_cell._modified = False
        try:
            outputs, states = self.base_cell.unroll(length, inputs, states, layout,
                                                    merge_outputs=True,
                                                    valid_length=valid_length)
        finally:
            self.base_cell._modified = True
        if self.drop_outputs:
            outputs = shared_over_time(self.drop_outputs, outputs)
        if merge_outputs is None:
            merge_outputs = isinstance(outputs, np.ndarray)
        outputs, _, _ = _format_sequence(length, outputs, layout, merge_outputs)
        return outputs, states
