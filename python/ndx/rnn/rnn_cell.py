"""MXNet 1.x's symbolic recurrent cells (mx.rnn): one step of a recurrent layer as symbols,
unrolled over a fixed number of steps into a graph (for BucketingModule, one graph per
sequence length).

    stack = mx.rnn.SequentialRNNCell()
    for i in range(2):
        stack.add(mx.rnn.LSTMCell(num_hidden=200, prefix='lstm_l%d_' % i))
    outputs, states = stack.unroll(seq_len, inputs=embed, merge_outputs=True)

Parameters are the variables '<prefix>i2h_weight', '<prefix>i2h_bias', '<prefix>h2h_weight'
and '<prefix>h2h_bias' (gates stacked in MXNet's order: LSTM i, f, c, o; GRU r, z, o),
shared by every step. FusedRNNCell runs the fused RNN op over one flat '<prefix>parameters'
vector in MXNet's layout; unpack_weights / pack_weights convert between the two.

The default begin states are zeros whose batch size comes from the inputs (MXNet infers it
backwards from the graph; ndx builds them from the first step's input)."""
from .. import initializer as _init
from .. import numpy as _np
from .. import sym as symbol

__all__ = ["RNNParams", "BaseRNNCell", "RNNCell", "LSTMCell", "GRUCell", "FusedRNNCell",
           "SequentialRNNCell", "ModifierCell", "DropoutCell", "ZoneoutCell", "ResidualCell",
           "BidirectionalCell"]


class RNNParams:
    """The variables of a cell, by name with the prefix added; cells given one RNNParams
    share their weights."""

    def __init__(self, prefix=""):
        self._prefix = prefix
        self._params = {}

    def get(self, name, **kwargs):
        """The variable '<prefix><name>' (made once, with symbol.Variable's kwargs)."""
        name = self._prefix + name
        if name not in self._params:
            self._params[name] = symbol.Variable(name, **kwargs)
        return self._params[name]


class _ZeroState:
    """A begin state of zeros of `shape`, whose 0 (the batch size) is taken from the input it
    first meets: zeros_like(input) summed to the batch axis plus zeros of the other sizes."""

    def __init__(self, shape, name, dtype=None):
        self.shape = tuple(shape)
        self.name = name
        self.dtype = dtype

    def like(self, data, data_batch_axis=0):
        batch_axis = self.shape.index(0)
        ndim = len(self.shape)
        if batch_axis != data_batch_axis:
            raise ValueError(f"[rnn] begin state {self.name}: its batch axis {batch_axis} is "
                             f"not the input's {data_batch_axis}")
        axes = tuple(a for a in range(ndim) if a != batch_axis)
        batch = symbol.sum(symbol.zeros_like(data), axis=axes, keepdims=True) if axes else \
            symbol.zeros_like(data)
        rest = symbol.zeros(shape=tuple(1 if d == 0 else d for d in self.shape))
        rest = symbol._npi_cast_like(rest, batch)
        if self.dtype is None:
            return symbol.broadcast_add(batch, rest, name=self.name)
        return symbol.Cast(symbol.broadcast_add(batch, rest), dtype=self.dtype, name=self.name)


def _resolve(states, data, data_batch_axis=0):
    return [s.like(data, data_batch_axis) if isinstance(s, _ZeroState) else s
            for s in states]


def _split_steps(inputs, length, axis):
    if isinstance(inputs, symbol.Symbol):
        if len(inputs.list_outputs()) != 1:
            raise ValueError("[rnn] unroll doesn't allow grouped symbol as input. Please "
                             "convert to list first or let unroll handle slicing")
        if length == 1:
            return [symbol.squeeze(inputs, axis=axis)]
        return list(symbol.SliceChannel(inputs, axis=axis, num_outputs=length,
                                        squeeze_axis=1))
    inputs = list(inputs)
    if len(inputs) != length:
        raise ValueError(f"[rnn] unroll of {length} steps got {len(inputs)} inputs")
    return inputs


def _merge_steps(outputs, axis, name=None):
    return symbol.Concat(*[symbol.expand_dims(o, axis=axis) for o in outputs], dim=axis,
                         name=name)


class BaseRNNCell:
    """A recurrent cell: __call__(inputs, states) -> (output, new states) builds one step;
    unroll(length, inputs) builds every step."""

    def __init__(self, prefix="", params=None):
        if params is None:
            params = RNNParams(prefix)
            self._own_params = True
        else:
            self._own_params = False
        self._prefix = prefix
        self._params = params
        self._modified = False
        self.reset()

    def reset(self):
        """Starts the step and begin-state counters over (before building another graph)."""
        self._init_counter = -1
        self._counter = -1

    def __call__(self, inputs, states):
        raise NotImplementedError()

    @property
    def params(self):
        self._own_params = False
        return self._params

    @property
    def state_info(self):
        return [{"shape": s, "__layout__": "NC"} for s in self.state_shape]

    @property
    def state_shape(self):
        raise NotImplementedError()

    @property
    def _gate_names(self):
        return ("",)

    def _check_unmodified(self):
        if self._modified:
            raise ValueError("After applying modifier cells (e.g. DropoutCell) the base cell "
                             "cannot be called directly. Call the modifier cell instead.")

    def begin_state(self, func=None, **kwargs):
        """The initial states: zeros by default (their batch size taken from the inputs), or
        func(name='<prefix>begin_state_<n>', shape=..., **kwargs) -- symbol.Variable to feed
        them as inputs."""
        self._check_unmodified()
        states = []
        for shape in self.state_shape:
            self._init_counter += 1
            name = f"{self._prefix}begin_state_{self._init_counter}"
            if func is None or func is symbol.zeros:
                if shape is not None and 0 in shape and set(kwargs) <= {"dtype"}:
                    states.append(_ZeroState(shape, name, kwargs.get("dtype")))
                    continue
                func = symbol.zeros
            if shape is None:
                states.append(func(name=name, **kwargs))
            else:
                states.append(func(name=name, shape=shape, **kwargs))
        return states

    def unpack_weights(self, args):
        """args with this cell's stacked i2h / h2h weights and biases split per gate
        ('<prefix>i2h_f_weight', ...)."""
        args = dict(args)
        h = self._num_hidden
        for group in ("i2h", "h2h"):
            weight = args.pop(f"{self._prefix}{group}_weight")
            bias = args.pop(f"{self._prefix}{group}_bias")
            for j, gate in enumerate(self._gate_names):
                args[f"{self._prefix}{group}{gate}_weight"] = weight[j * h:(j + 1) * h].copy()
                args[f"{self._prefix}{group}{gate}_bias"] = bias[j * h:(j + 1) * h].copy()
        return args

    def pack_weights(self, args):
        """The inverse of unpack_weights."""
        args = dict(args)
        for group in ("i2h", "h2h"):
            weight, bias = [], []
            for gate in self._gate_names:
                weight.append(args.pop(f"{self._prefix}{group}{gate}_weight"))
                bias.append(args.pop(f"{self._prefix}{group}{gate}_bias"))
            args[f"{self._prefix}{group}_weight"] = _np.concatenate(weight)
            args[f"{self._prefix}{group}_bias"] = _np.concatenate(bias)
        return args

    def unroll(self, length, inputs=None, begin_state=None, input_prefix="", layout="NTC",
               merge_outputs=None):
        """The cell applied over `length` steps of `inputs` (one symbol of layout NTC / TNC,
        or a list of (batch, ...) symbols; variables '<input_prefix>t<i>_data' when None).
        Returns (outputs: a list, or one symbol with merge_outputs, states)."""
        self.reset()
        axis = layout.find("T")
        if inputs is None:
            inputs = [symbol.Variable(f"{input_prefix}t{i}_data") for i in range(length)]
        inputs = _split_steps(inputs, length, axis)
        states = self.begin_state() if begin_state is None else begin_state
        outputs = []
        for i in range(length):
            output, states = self(inputs[i], states)
            outputs.append(output)
        if merge_outputs:
            outputs = _merge_steps(outputs, axis)
        return outputs, states

    def _fc_params(self, i2h_bias_init=None):
        """The step's i2h / h2h weights and biases (shared by every step)."""
        self._iW = self.params.get("i2h_weight")
        self._hW = self.params.get("h2h_weight")
        self._iB = self.params.get("i2h_bias") if i2h_bias_init is None else \
            self.params.get("i2h_bias", init=i2h_bias_init)
        self._hB = self.params.get("h2h_bias")

    def _get_activation(self, inputs, activation, **kwargs):
        if isinstance(activation, str):
            return symbol.Activation(inputs, act_type=activation, **kwargs)
        return activation(inputs, **kwargs)


class RNNCell(BaseRNNCell):
    """h' = activation(W_i x + b_i + W_h h + b_h)."""

    def __init__(self, num_hidden, activation="tanh", prefix="rnn_", params=None):
        super().__init__(prefix=prefix, params=params)
        self._num_hidden = num_hidden
        self._activation = activation
        self._fc_params()

    @property
    def state_shape(self):
        return [(0, self._num_hidden)]

    def __call__(self, inputs, states):
        self._counter += 1
        name = f"{self._prefix}t{self._counter}_"
        states = _resolve(states, inputs)
        i2h = symbol.FullyConnected(data=inputs, weight=self._iW, bias=self._iB,
                                    num_hidden=self._num_hidden, name=f"{name}i2h")
        h2h = symbol.FullyConnected(data=states[0], weight=self._hW, bias=self._hB,
                                    num_hidden=self._num_hidden, name=f"{name}h2h")
        output = self._get_activation(i2h + h2h, self._activation, name=f"{name}out")
        return output, [output]


class LSTMCell(BaseRNNCell):
    """MXNet's LSTM step: gates i, f, c, o from i2h + h2h; c' = f * c + i * tanh(g_c),
    h' = o * tanh(c'). forget_bias initializes i2h_bias's forget quarter (LSTMBias)."""

    def __init__(self, num_hidden, prefix="lstm_", params=None, forget_bias=1.0):
        super().__init__(prefix=prefix, params=params)
        self._num_hidden = num_hidden
        self._fc_params(_init.LSTMBias(forget_bias=forget_bias))

    @property
    def state_shape(self):
        return [(0, self._num_hidden), (0, self._num_hidden)]

    @property
    def _gate_names(self):
        return ["_i", "_f", "_c", "_o"]

    def __call__(self, inputs, states):
        self._counter += 1
        name = f"{self._prefix}t{self._counter}_"
        states = _resolve(states, inputs)
        i2h = symbol.FullyConnected(data=inputs, weight=self._iW, bias=self._iB,
                                    num_hidden=self._num_hidden * 4, name=f"{name}i2h")
        h2h = symbol.FullyConnected(data=states[0], weight=self._hW, bias=self._hB,
                                    num_hidden=self._num_hidden * 4, name=f"{name}h2h")
        gates = symbol.SliceChannel(i2h + h2h, num_outputs=4, name=f"{name}slice")
        in_gate = symbol.Activation(gates[0], act_type="sigmoid", name=f"{name}i")
        forget_gate = symbol.Activation(gates[1], act_type="sigmoid", name=f"{name}f")
        in_transform = symbol.Activation(gates[2], act_type="tanh", name=f"{name}c")
        out_gate = symbol.Activation(gates[3], act_type="sigmoid", name=f"{name}o")
        next_c = symbol.elemwise_add(forget_gate * states[1], in_gate * in_transform,
                                     name=f"{name}state")
        next_h = symbol.elemwise_mul(out_gate, symbol.Activation(next_c, act_type="tanh"),
                                     name=f"{name}out")
        return next_h, [next_h, next_c]


class GRUCell(BaseRNNCell):
    """MXNet's (cuDNN's) GRU step: r, z from i2h + h2h; n = tanh(i2h_n + r * h2h_n),
    h' = (1 - z) * n + z * h."""

    def __init__(self, num_hidden, prefix="gru_", params=None):
        super().__init__(prefix=prefix, params=params)
        self._num_hidden = num_hidden
        self._fc_params()

    @property
    def state_shape(self):
        return [(0, self._num_hidden)]

    @property
    def _gate_names(self):
        return ["_r", "_z", "_o"]

    def __call__(self, inputs, states):
        self._counter += 1
        name = f"{self._prefix}t{self._counter}_"
        states = _resolve(states, inputs)
        prev_h = states[0]
        i2h = symbol.FullyConnected(data=inputs, weight=self._iW, bias=self._iB,
                                    num_hidden=self._num_hidden * 3, name=f"{name}_i2h")
        h2h = symbol.FullyConnected(data=prev_h, weight=self._hW, bias=self._hB,
                                    num_hidden=self._num_hidden * 3, name=f"{name}_h2h")
        # (node names as MXNet's GRUCell: '<prefix>t<i>__i2h', ...)
        i2h_r, i2h_z, i2h = symbol.SliceChannel(i2h, num_outputs=3, name=f"{name}_i2h_slice")
        h2h_r, h2h_z, h2h = symbol.SliceChannel(h2h, num_outputs=3, name=f"{name}_h2h_slice")
        reset_gate = symbol.Activation(i2h_r + h2h_r, act_type="sigmoid",
                                       name=f"{name}_r_act")
        update_gate = symbol.Activation(i2h_z + h2h_z, act_type="sigmoid",
                                        name=f"{name}_z_act")
        next_h_tmp = symbol.Activation(i2h + reset_gate * h2h, act_type="tanh",
                                       name=f"{name}_h_act")
        next_h = symbol.elemwise_add((1.0 - update_gate) * next_h_tmp, update_gate * prev_h,
                                     name=f"{name}out")
        return next_h, [next_h]


class FusedRNNCell(BaseRNNCell):
    """Every layer (and direction) of an RNN as one fused RNN op over the flat
    '<prefix>parameters' vector (MXNet's layout: every layer's and direction's i2h then h2h
    weights, then the biases in the same order). It is unrolled, not stepped; unfuse()
    gives the equivalent stack of cells."""

    def __init__(self, num_hidden, num_layers=1, mode="lstm", bidirectional=False,
                 dropout=0.0, get_next_state=False, forget_bias=1.0, prefix=None,
                 params=None, initializer=None):
        if mode not in ("rnn_relu", "rnn_tanh", "lstm", "gru"):
            raise ValueError(f"[rnn.FusedRNNCell] mode must be rnn_relu, rnn_tanh, lstm or "
                             f"gru, got {mode!r}")
        if prefix is None:
            prefix = f"{mode}_"
        super().__init__(prefix=prefix, params=params)
        self._num_hidden = num_hidden
        self._num_layers = num_layers
        self._mode = mode
        self._bidirectional = bidirectional
        self._dropout = dropout
        self._get_next_state = get_next_state
        self._forget_bias = forget_bias
        if initializer is None:
            initializer = _init.Xavier(factor_type="in", magnitude=2.34)
        if not isinstance(initializer, FusedRNN):
            initializer = FusedRNN(initializer, num_hidden, num_layers, mode, bidirectional,
                                   forget_bias)
        self._parameter = self.params.get("parameters", init=initializer)
        self._directions = ["l", "r"] if bidirectional else ["l"]

    @property
    def state_shape(self):
        b = self._bidirectional + 1
        n = (self._mode == "lstm") + 1
        return [(b * self._num_layers, 0, self._num_hidden)] * n

    @property
    def state_info(self):
        return [{"shape": s, "__layout__": "LNC"} for s in self.state_shape]

    @property
    def _gate_names(self):
        return {"rnn_relu": [""], "rnn_tanh": [""], "lstm": ["_i", "_f", "_c", "_o"],
                "gru": ["_r", "_z", "_o"]}[self._mode]

    def _slice_weights(self, arr, li, lh):
        """{name: view of arr} of every gate's weight and bias (arr flat)."""
        args = {}
        b = len(self._directions)
        p = 0
        for layer in range(self._num_layers):
            for direction in self._directions:
                for group, cols in (("i2h", li if layer == 0 else b * lh), ("h2h", lh)):
                    for gate in self._gate_names:
                        name = f"{self._prefix}{direction}{layer}_{group}{gate}_weight"
                        args[name] = arr[p:p + lh * cols].reshape((lh, cols))
                        p += lh * cols
        for layer in range(self._num_layers):
            for direction in self._directions:
                for group in ("i2h", "h2h"):
                    for gate in self._gate_names:
                        args[f"{self._prefix}{direction}{layer}_{group}{gate}_bias"] = \
                            arr[p:p + lh]
                        p += lh
        if p != arr.size:
            raise ValueError(f"[rnn.FusedRNNCell] the parameters hold {arr.size} values; "
                             f"this cell needs {p}")
        return args

    def _num_input(self, size):
        b, m, h = len(self._directions), len(self._gate_names), self._num_hidden
        return size // b // h // m - (self._num_layers - 1) * (h + b * h + 2) - h - 2

    def unpack_weights(self, args):
        args = dict(args)
        arr = args.pop(self._parameter.name)
        parts = self._slice_weights(arr, self._num_input(arr.size), self._num_hidden)
        args.update({name: part.copy() for name, part in parts.items()})
        return args

    def pack_weights(self, args):
        args = dict(args)
        b = self._bidirectional + 1
        m = len(self._gate_names)
        h = self._num_hidden
        w0 = args[f"{self._prefix}l0_i2h{self._gate_names[0]}_weight"]
        num_input = w0.shape[1]
        total = (num_input + h + 2) * h * m * b + \
            (self._num_layers - 1) * m * h * (h + b * h + 2) * b
        arr = _np.zeros((total,), dtype=w0.dtype, device=w0.device)
        for name, part in self._slice_weights(arr, num_input, h).items():
            part[...] = args.pop(name)
        args[self._parameter.name] = arr
        return args

    def __call__(self, inputs, states):
        raise NotImplementedError("FusedRNNCell cannot be stepped. Please use unroll")

    def unroll(self, length, inputs=None, begin_state=None, input_prefix="", layout="NTC",
               merge_outputs=None):
        self.reset()
        axis = layout.find("T")
        if inputs is None:
            inputs = symbol.Variable(f"{input_prefix}data")
        if isinstance(inputs, symbol.Symbol):
            if len(inputs.list_outputs()) != 1:
                raise ValueError("[rnn] unroll doesn't allow grouped symbol as input")
            if axis == 1:
                inputs = symbol.swapaxes(inputs, axis1=0, axis2=1)
            elif axis != 0:
                raise ValueError(f"[rnn.FusedRNNCell] unsupported layout {layout!r}")
        else:
            if len(inputs) != length:
                raise ValueError(f"[rnn] unroll of {length} steps got {len(inputs)} inputs")
            inputs = _merge_steps(list(inputs), 0)
        states = self.begin_state() if begin_state is None else begin_state
        states = _resolve(states, inputs, data_batch_axis=1)
        named = {"state": states[0]}
        if self._mode == "lstm":
            named["state_cell"] = states[1]
        rnn = symbol.RNN(data=inputs, parameters=self._parameter, state_size=self._num_hidden,
                         num_layers=self._num_layers, bidirectional=self._bidirectional,
                         p=self._dropout, state_outputs=self._get_next_state,
                         mode=self._mode, name=self._prefix + "rnn", **named)
        if not self._get_next_state:
            outputs, states = rnn, []
        elif self._mode == "lstm":
            outputs, states = rnn[0], [rnn[1], rnn[2]]
        else:
            outputs, states = rnn[0], [rnn[1]]
        if merge_outputs is not None and not merge_outputs:
            outputs = _split_steps(outputs, length, 0)
        elif axis == 1:
            outputs = symbol.swapaxes(outputs, axis1=0, axis2=1)
        return outputs, states

    def unfuse(self):
        """The same network as a SequentialRNNCell of RNN / LSTM / GRU cells (with
        BidirectionalCell layers), named so that unpack_weights' names fit it."""
        stack = SequentialRNNCell()

        def cell(prefix):
            if self._mode in ("rnn_relu", "rnn_tanh"):
                return RNNCell(self._num_hidden, activation=self._mode[4:], prefix=prefix)
            if self._mode == "lstm":
                return LSTMCell(self._num_hidden, prefix=prefix,
                                forget_bias=self._forget_bias)
            return GRUCell(self._num_hidden, prefix=prefix)

        for i in range(self._num_layers):
            if self._bidirectional:
                stack.add(BidirectionalCell(cell(f"{self._prefix}l{i}_"),
                                            cell(f"{self._prefix}r{i}_"),
                                            output_prefix=f"{self._prefix}bi_l{i}_"))
            else:
                stack.add(cell(f"{self._prefix}l{i}_"))
            if self._dropout > 0 and i != self._num_layers - 1:
                stack.add(DropoutCell(self._dropout, prefix=f"{self._prefix}_dropout{i}_"))
        return stack


class FusedRNN(_init.Initializer):
    """MXNet's initializer of a fused RNN's flat parameters: each gate's weight by `init`
    (a name, JSON or Initializer), the biases zero, and for an LSTM forget_bias in both
    forget-gate biases (i2h and h2h, as MXNet sets them)."""

    def __init__(self, init, num_hidden, num_layers, mode, bidirectional=False,
                 forget_bias=1.0):
        inner = None if init is None else _init.create(init)
        super().__init__(init=None if inner is None else inner.dumps(),
                         num_hidden=num_hidden, num_layers=num_layers, mode=mode,
                         bidirectional=bidirectional, forget_bias=forget_bias)
        self._init = inner or _init.Uniform()
        self._num_hidden = num_hidden
        self._num_layers = num_layers
        self._mode = mode
        self._bidirectional = bidirectional
        self._forget_bias = forget_bias

    def values(self, shape):
        cell = FusedRNNCell(self._num_hidden, self._num_layers, self._mode,
                            self._bidirectional, forget_bias=self._forget_bias, prefix="",
                            initializer=_init.Zero())
        arr = _np.zeros(shape, dtype="float32")
        parts = cell._slice_weights(arr.reshape(-1), cell._num_input(arr.size),
                                    self._num_hidden)
        for name, part in parts.items():
            if name.endswith("_bias"):
                part[...] = self._forget_bias if (self._mode == "lstm" and
                                                  name.endswith("_f_bias")) else 0.0
            else:
                part[...] = self._init(part.shape, "float32", name="weight")
        return arr


_init.register(FusedRNN)


class _CellGroup(BaseRNNCell):
    """A cell made of the cells in self._cells: their states in order, their weights, their
    counters reset together."""

    @property
    def state_shape(self):
        return sum([c.state_shape for c in self._cells], [])

    def begin_state(self, **kwargs):
        self._check_unmodified()
        return sum([c.begin_state(**kwargs) for c in self._cells], [])

    def unpack_weights(self, args):
        for cell in self._cells:
            args = cell.unpack_weights(args)
        return args

    def pack_weights(self, args):
        for cell in self._cells:
            args = cell.pack_weights(args)
        return args

    def reset(self):
        super().reset()
        for cell in getattr(self, "_cells", []):
            cell.reset()


class SequentialRNNCell(_CellGroup):
    """Cells stacked: each step's output is the next cell's input."""

    def __init__(self, params=None):
        super().__init__(prefix="", params=params)
        self._override_cell_params = params is not None
        self._cells = []

    def add(self, cell):
        """Appends a cell to the stack."""
        self._cells.append(cell)
        if self._override_cell_params:
            if not cell._own_params:
                raise ValueError("Either specify params for SequentialRNNCell or child "
                                 "cells, not both.")
            cell.params._params.update(self.params._params)
        self.params._params.update(cell.params._params)

    def __call__(self, inputs, states):
        self._counter += 1
        next_states = []
        p = 0
        for cell in self._cells:
            if isinstance(cell, BidirectionalCell):
                raise ValueError("[rnn.SequentialRNNCell] a BidirectionalCell cannot be "
                                 "stepped; use unroll")
            n = len(cell.state_shape)
            inputs, state = cell(inputs, states[p:p + n])
            p += n
            next_states.append(state)
        return inputs, sum(next_states, [])

    def unroll(self, length, inputs=None, begin_state=None, input_prefix="", layout="NTC",
               merge_outputs=None):
        self.reset()
        num_cells = len(self._cells)
        if begin_state is None:
            begin_state = self.begin_state()
        p = 0
        next_states = []
        for i, cell in enumerate(self._cells):
            n = len(cell.state_shape)
            states = begin_state[p:p + n]
            p += n
            inputs, states = cell.unroll(length, inputs=inputs, input_prefix=input_prefix,
                                         begin_state=states, layout=layout,
                                         merge_outputs=None if i < num_cells - 1 else
                                         merge_outputs)
            next_states.extend(states)
        return inputs, next_states


class ModifierCell(BaseRNNCell):
    """A cell wrapping a base cell (which must then not be called directly)."""

    def __init__(self, base_cell):
        super().__init__()
        base_cell._modified = True
        self.base_cell = base_cell

    @property
    def params(self):
        self._own_params = False
        return self.base_cell.params

    @property
    def state_shape(self):
        return self.base_cell.state_shape

    def begin_state(self, init_sym=None, **kwargs):
        self._check_unmodified()
        # (func= is accepted too, as stacks pass it; given by keyword, so that stacked and
        # bidirectional base cells, whose begin_state takes only keywords, work)
        func = kwargs.pop("func", None) if init_sym is None else init_sym
        if func is not None:
            kwargs["func"] = func
        self.base_cell._modified = False
        try:
            return self.base_cell.begin_state(**kwargs)
        finally:
            self.base_cell._modified = True

    def unpack_weights(self, args):
        return self.base_cell.unpack_weights(args)

    def pack_weights(self, args):
        return self.base_cell.pack_weights(args)

    def reset(self):
        super().reset()
        if hasattr(self, "base_cell"):
            self.base_cell.reset()

    def __call__(self, inputs, states):
        raise NotImplementedError


class DropoutCell(BaseRNNCell):
    """Dropout on its input, as a cell of a stack (no states). MXNet 1.x's later form;
    DropoutCell(base_cell, dropout_outputs=..., dropout_states=...) is its earlier
    modifier form, which is accepted too."""

    def __init__(self, dropout=0.0, prefix="dropout_", params=None, dropout_outputs=None,
                 dropout_states=0.0):
        if isinstance(dropout, BaseRNNCell):  # (the modifier form)
            self._wrapped = _DropoutModifier(dropout, dropout_outputs or 0.0, dropout_states)
        else:
            self._wrapped = None
        super().__init__(prefix, params)
        self.dropout = dropout if self._wrapped is None else dropout_outputs

    @property
    def state_shape(self):
        return self._wrapped.state_shape if self._wrapped else []

    @property
    def params(self):
        if getattr(self, "_wrapped", None) is not None:
            return self._wrapped.params
        return super().params

    def reset(self):
        super().reset()
        if getattr(self, "_wrapped", None) is not None:
            self._wrapped.reset()

    def begin_state(self, **kwargs):
        return self._wrapped.begin_state(**kwargs) if self._wrapped else []

    def unpack_weights(self, args):
        # (no weights of its own: MXNet's cells without gates pass args through)
        return self._wrapped.unpack_weights(args) if self._wrapped else dict(args)

    def pack_weights(self, args):
        return self._wrapped.pack_weights(args) if self._wrapped else dict(args)

    def __call__(self, inputs, states):
        if self._wrapped:
            return self._wrapped(inputs, states)
        if self.dropout > 0:
            inputs = symbol.Dropout(data=inputs, p=self.dropout)
        return inputs, states

    def unroll(self, length, inputs=None, begin_state=None, input_prefix="", layout="NTC",
               merge_outputs=None):
        if self._wrapped:
            return self._wrapped.unroll(length, inputs, begin_state, input_prefix, layout,
                                        merge_outputs)
        self.reset()
        if isinstance(inputs, symbol.Symbol) and merge_outputs is not False:
            if self.dropout > 0:
                inputs = symbol.Dropout(data=inputs, p=self.dropout)
            return inputs, []
        return super().unroll(length, inputs, begin_state, input_prefix, layout,
                              merge_outputs)


class _DropoutModifier(ModifierCell):
    def __init__(self, base_cell, dropout_outputs, dropout_states):
        super().__init__(base_cell)
        self.dropout_outputs = dropout_outputs
        self.dropout_states = dropout_states

    def __call__(self, inputs, states):
        output, states = self.base_cell(inputs, states)
        if self.dropout_outputs > 0:
            output = symbol.Dropout(data=output, p=self.dropout_outputs)
        if self.dropout_states > 0:
            states = [symbol.Dropout(data=s, p=self.dropout_states) for s in states]
        return output, states


class ZoneoutCell(ModifierCell):
    """Zoneout (Krueger et al.): in training each output and state value keeps its previous
    step's value with probability zoneout_outputs / zoneout_states."""

    def __init__(self, base_cell, zoneout_outputs=0.0, zoneout_states=0.0):
        if isinstance(base_cell, (FusedRNNCell, BidirectionalCell)):
            raise ValueError("[rnn.ZoneoutCell] FusedRNNCell and BidirectionalCell do not "
                             "step; zoneout needs a stepping cell")
        super().__init__(base_cell)
        self.zoneout_outputs = zoneout_outputs
        self.zoneout_states = zoneout_states
        self.prev_output = None

    def reset(self):
        super().reset()
        self.prev_output = None

    def __call__(self, inputs, states):
        states = _resolve(states, inputs)
        next_output, next_states = self.base_cell(inputs, states)

        def mask(p, like):  # (nonzero where the new value is kept; all kept in inference)
            return symbol.Dropout(symbol.ones_like(like), p=p) if p > 0 else None

        prev_output = self.prev_output if self.prev_output is not None else \
            symbol.zeros_like(next_output)
        keep = mask(self.zoneout_outputs, next_output)
        output = symbol.where(keep, next_output, prev_output) if keep is not None \
            else next_output
        new_states = []
        for new, old in zip(next_states, states):
            keep = mask(self.zoneout_states, new)
            new_states.append(symbol.where(keep, new, old) if keep is not None else new)
        self.prev_output = output
        return output, new_states


class ResidualCell(ModifierCell):
    """The base cell's output plus its input (a residual connection)."""

    def __call__(self, inputs, states):
        output, states = self.base_cell(inputs, states)
        output = symbol.elemwise_add(output, inputs, name=f"{output.name}_plus_residual")
        return output, states

    def unroll(self, length, inputs=None, begin_state=None, input_prefix="", layout="NTC",
               merge_outputs=None):
        if inputs is None:
            raise ValueError("[rnn.ResidualCell] unroll needs inputs (it adds them to the "
                             "outputs)")
        self.reset()
        self.base_cell._modified = False
        try:
            outputs, states = self.base_cell.unroll(length, inputs=inputs,
                                                    begin_state=begin_state,
                                                    input_prefix=input_prefix,
                                                    layout=layout, merge_outputs=merge_outputs)
        finally:
            self.base_cell._modified = True
        axis = layout.find("T")
        if merge_outputs is None:  # (MXNet: whatever form the base cell's outputs have)
            merge_outputs = isinstance(outputs, symbol.Symbol)
        if merge_outputs:
            if not isinstance(outputs, symbol.Symbol):
                outputs = _merge_steps(outputs, axis)
            if not isinstance(inputs, symbol.Symbol):
                inputs = _merge_steps(list(inputs), axis)
            return symbol.elemwise_add(outputs, inputs,
                                       name=f"{outputs.name}_plus_residual"), states
        steps = _split_steps(inputs, length, axis)
        if isinstance(outputs, symbol.Symbol):
            outputs = _split_steps(outputs, length, axis)
        outputs = [symbol.elemwise_add(o, i, name=f"{o.name}_plus_residual")
                   for o, i in zip(outputs, steps)]
        return outputs, states


class BidirectionalCell(_CellGroup):
    """A forward cell over the steps and a backward cell over them reversed, their outputs
    joined along the feature axis ('<output_prefix>t<i>' / '<output_prefix>out')."""

    def __init__(self, l_cell, r_cell, params=None, output_prefix="bi_"):
        super().__init__("", params=params)
        self._output_prefix = output_prefix
        self._override_cell_params = params is not None
        if self._override_cell_params:
            if not (l_cell._own_params and r_cell._own_params):
                raise ValueError("Either specify params for BidirectionalCell or child "
                                 "cells, not both.")
            l_cell.params._params.update(self.params._params)
            r_cell.params._params.update(self.params._params)
        self.params._params.update(l_cell.params._params)
        self.params._params.update(r_cell.params._params)
        self._cells = [l_cell, r_cell]

    def __call__(self, inputs, states):
        raise NotImplementedError("Bidirectional cannot be stepped. Please use unroll")

    def unroll(self, length, inputs=None, begin_state=None, input_prefix="", layout="NTC",
               merge_outputs=None):
        self.reset()
        axis = layout.find("T")
        if inputs is None:
            inputs = [symbol.Variable(f"{input_prefix}t{i}_data") for i in range(length)]
        inputs = _split_steps(inputs, length, axis)
        if begin_state is None:
            begin_state = self.begin_state()
        l_cell, r_cell = self._cells
        n_l = len(l_cell.state_shape)
        l_outputs, l_states = l_cell.unroll(length, inputs=inputs,
                                            begin_state=begin_state[:n_l], layout=layout,
                                            merge_outputs=False)
        r_outputs, r_states = r_cell.unroll(length, inputs=list(reversed(inputs)),
                                            begin_state=begin_state[n_l:], layout=layout,
                                            merge_outputs=False)
        r_outputs = list(reversed(r_outputs))
        outputs = [symbol.Concat(lo, ro, dim=1, name=f"{self._output_prefix}t{i}")
                   for i, (lo, ro) in enumerate(zip(l_outputs, r_outputs))]
        if merge_outputs:  # (named as MXNet's merged output)
            outputs = _merge_steps(outputs, axis, name=f"{self._output_prefix}out")
        return outputs, [l_states, r_states]
