"""Recurrent layers RNN, LSTM and GRU (MXNet 2.0's signatures): each call is one npx.rnn op over
the whole sequence, its weights packed into the flat vector the op takes. With
use_sequence_length=True (variable-length sequences) the layers run step by step instead (see
_RNNLayer._forward_lengths)."""
import numpy as _onp

from ... import _core
from ... import numpy as np
from ... import numpy_extension as npx
from ..block import HybridBlock
from ..parameter import Parameter

__all__ = ["RNN", "LSTM", "GRU"]

_GATES = {"rnn_relu": 1, "rnn_tanh": 1, "lstm": 4, "gru": 3}


def _positive_int(layer, name, value, allow_zero=False):
    if isinstance(value, bool) or not isinstance(value, int) or value < (0 if allow_zero else 1):
        kind = "non-negative" if allow_zero else "positive"
        raise ValueError(f"[{layer}] {name} must be a {kind} int, got {value!r}")


class _RNNLayer(HybridBlock):
    """The layers' shared machinery: parameters named as MXNet's ('l0_i2h_weight',
    'r0_h2h_bias', ...; 'l' the forward direction, 'r' the backward one), begin_state, and a
    forward that packs the parameters and calls npx.rnn."""

    def __init__(self, hidden_size, num_layers, layout, dropout, bidirectional, input_size,
                 i2h_weight_initializer, h2h_weight_initializer, i2h_bias_initializer,
                 h2h_bias_initializer, mode, projection_size, h2r_weight_initializer,
                 lstm_state_clip_min, lstm_state_clip_max, lstm_state_clip_nan, dtype,
                 use_sequence_length=False, **kwargs):
        super().__init__()
        name = type(self).__name__
        if layout not in ("TNC", "NTC"):
            raise ValueError(f"[{name}] layout must be 'TNC' or 'NTC', got {layout!r}")
        _positive_int(name, "hidden_size", hidden_size)
        _positive_int(name, "num_layers", num_layers)
        _positive_int(name, "input_size", input_size, allow_zero=True)
        if isinstance(dropout, bool) or not isinstance(dropout, (int, float)):
            raise TypeError(f"[{name}] dropout must be a number, got {type(dropout).__name__}")
        if not 0 <= dropout < 1:
            raise ValueError(f"[{name}] dropout must be in [0, 1), got {dropout}")
        if projection_size:
            raise NotImplementedError(f"[{name}] projection_size (LSTM with projection) is not "
                                      "supported yet")
        if lstm_state_clip_min is not None or lstm_state_clip_max is not None:
            raise NotImplementedError(f"[{name}] state_clip_min / state_clip_max are not "
                                      "supported yet")
        self._hidden_size = hidden_size
        self._projection_size = None
        self._num_layers = num_layers
        self._mode = mode
        self._layout = layout
        self._dropout = dropout
        self._dir = 2 if bidirectional else 1
        self._input_size = input_size
        self._lstm_state_clip_nan = lstm_state_clip_nan
        self._dtype = dtype
        self._use_sequence_length = use_sequence_length
        self._gates = _GATES[mode]
        ng, ni, nh = self._gates, input_size, hidden_size
        for i in range(num_layers):
            for j in ["l", "r"][:self._dir]:
                self._register_param(f"{j}{i}_i2h_weight", (ng * nh, ni), i2h_weight_initializer,
                                     dtype)
                self._register_param(f"{j}{i}_h2h_weight", (ng * nh, nh), h2h_weight_initializer,
                                     dtype)
                self._register_param(f"{j}{i}_i2h_bias", (ng * nh,), i2h_bias_initializer, dtype)
                self._register_param(f"{j}{i}_h2h_bias", (ng * nh,), h2h_bias_initializer, dtype)
            ni = nh * self._dir

    def _register_param(self, name, shape, init, dtype):
        p = Parameter(name, shape=shape, init=init, allow_deferred_init=True, dtype=dtype)
        setattr(self, name, p)
        return p

    def __repr__(self):
        s = f"{type(self).__name__}({self.l0_i2h_weight.shape[1] or None} -> {self._hidden_size}"
        s += f", {self._layout}"
        if self._num_layers != 1:
            s += f", num_layers={self._num_layers}"
        if self._dropout != 0:
            s += f", dropout={self._dropout}"
        if self._dir == 2:
            s += ", bidirectional"
        return s + ")"

    def state_info(self, batch_size=0):
        raise NotImplementedError

    def cast(self, dtype):
        super().cast(dtype)
        for p in self.collect_params().values():
            p.dtype = dtype
        self._dtype = dtype

    def begin_state(self, batch_size=0, func=None, **kwargs):
        """The initial states: func(shape=..., dtype=..., **kwargs) for each (np.zeros by
        default); kwargs may set dtype and device."""
        func = np.zeros if func is None else func
        states = []
        for info in self.state_info(batch_size):
            info = dict(info)
            info.pop("__layout__", None)
            info.update(kwargs)
            if "ctx" in info:  # MXNet 1.x's name for the device
                info["device"] = info.pop("ctx")
            states.append(func(**info))
        return states

    def __call__(self, inputs, states=None, sequence_length=None, **kwargs):
        name = type(self).__name__
        if self._use_sequence_length:
            if sequence_length is None:
                raise ValueError(f"[{name}] use_sequence_length=True needs sequence_length, "
                                 "one length per batch entry")
            if not isinstance(sequence_length, np.ndarray):
                sequence_length = np.array(sequence_length, device=inputs.device)
            if not _core._is_tracing():  # (a traced graph's lengths have no values yet)
                self._check_lengths(inputs, sequence_length)
        elif sequence_length is not None:
            # (MXNet ignores it there; ndx refuses rather than run the full sequences)
            raise NotImplementedError(f"[{name}] sequence_length is given but the layer was "
                                      "made with use_sequence_length=False; make it with "
                                      "use_sequence_length=True for variable-length sequences")
        skip_states = states is None
        if skip_states:
            batch_size = inputs.shape[self._layout.find("N")]
            states = self.begin_state(batch_size, dtype=str(inputs.dtype),
                                      device=inputs.device)
        if isinstance(states, np.ndarray):
            states = [states]
        states = list(states)
        if self._use_sequence_length:
            out = super().__call__(inputs, sequence_length, *states)
        else:
            out = super().__call__(inputs, *states)
        return out[0] if skip_states else (out[0], list(out[1:]))

    def _check_lengths(self, inputs, sequence_length):
        """Each length an integer in [0, T]: a longer or negative one made the step loop and
        sequence_reverse return garbage for that sequence instead of failing."""
        if inputs.ndim != 3:
            return  # (forward names the bad input shape)
        steps = inputs.shape[self._layout.find("T")]
        lengths = _onp.asarray(sequence_length.asnumpy())
        bad = (lengths < 0) | (lengths > steps) | (lengths != _onp.floor(lengths))
        if bad.any():
            raise ValueError(f"[{type(self).__name__}] sequence_length must hold integers in "
                             f"[0, {steps}] (the inputs' time steps), got "
                             f"{lengths.tolist()}")

    def _infer_params(self, x, *args):
        ni = x.shape[2]
        known = self.l0_i2h_weight.shape[1]
        if known and known != ni:  # (npx.rnn's message would name only its flat vector)
            raise ValueError(f"[{type(self).__name__}] inputs have {ni} features but the "
                             f"layer's input size (l0_i2h_weight's shape[1], input_size) "
                             f"is {known}")
        for i in range(self._num_layers):
            for j in ["l", "r"][:self._dir]:
                n = self._gates * self._hidden_size
                getattr(self, f"{j}{i}_i2h_weight")._finish_deferred_init((n, ni))
                for g, shape in (("h2h_weight", (n, self._hidden_size)), ("i2h_bias", (n,)),
                                 ("h2h_bias", (n,))):
                    getattr(self, f"{j}{i}_{g}")._finish_deferred_init(shape)
            ni = self._hidden_size * self._dir

    def forward(self, inputs, *states):
        """(inputs, *states) -> (outputs, *final states): the flat form a hybridized graph
        keeps; __call__ gives MXNet's (outputs, [states]) or outputs alone. With
        use_sequence_length the arguments are (inputs, sequence_length, *states)."""
        name = type(self).__name__
        lengths = None
        if self._use_sequence_length:
            if not states:
                raise ValueError(f"[{name}] use_sequence_length=True needs sequence_length")
            lengths, states = states[0], states[1:]
        if inputs.ndim != 3:
            raise ValueError(f"[{name}] inputs must be 3-d ({self._layout}), got shape "
                             f"{tuple(inputs.shape)}")
        batch_size = inputs.shape[self._layout.find("N")]
        infos = self.state_info(batch_size)
        if len(states) != len(infos):
            raise ValueError(f"[{name}] expected {len(infos)} state array(s), got {len(states)}")
        for state, info in zip(states, infos):
            if tuple(state.shape) != info["shape"]:
                raise ValueError(f"[{name}] Invalid recurrent state shape. Expecting "
                                 f"{info['shape']}, got {tuple(state.shape)}.")
        if self._layout == "NTC":
            inputs = np.swapaxes(inputs, 0, 1)
        self._infer_params(inputs)
        if lengths is not None:
            if tuple(lengths.shape) != (batch_size,):
                raise ValueError(f"[{name}] sequence_length must have shape ({batch_size},), "
                                 f"one length per batch entry, got {tuple(lengths.shape)}")
            outputs, new_states = self._forward_lengths(inputs, lengths, list(states))
            if self._layout == "NTC":
                outputs = np.swapaxes(outputs, 0, 1)
            return (outputs, *new_states)
        params = [getattr(self, f"{d}{i}_{g}_{t}").data().reshape(-1)
                  for t in ("weight", "bias")
                  for i in range(self._num_layers)
                  for d in ["l", "r"][:self._dir]
                  for g in ("i2h", "h2h")]
        params = np.concatenate(params, axis=0)
        out = npx.rnn(inputs, params, *states, state_size=self._hidden_size,
                      num_layers=self._num_layers, bidirectional=self._dir == 2,
                      p=self._dropout, state_outputs=True, mode=self._mode,
                      lstm_state_clip_nan=self._lstm_state_clip_nan)
        outputs, new_states = out[0], list(out[1:])
        if self._layout == "NTC":
            outputs = np.swapaxes(outputs, 0, 1)
        return (outputs, *new_states)


    def _forward_lengths(self, inputs, lengths, states):
        """The layers over variable-length sequences (inputs TNC): each layer and direction
        runs npx.rnn one step at a time, a batch entry's states frozen once its sequence
        ends, so the final states are those at its last valid step; outputs past a length
        are 0. The reverse direction runs on each sequence reversed within its length
        (npx.sequence_reverse), so it starts at the last valid step, and its outputs are
        reversed back."""
        steps = inputs.shape[0]
        lengths = lengths.astype("int64")
        valid = np.arange(steps, dtype="int64", device=inputs.device).reshape(-1, 1) < \
            lengths.reshape(1, -1)  # (T, N)
        mask = valid.astype(inputs.dtype)[:, :, None]
        lstm = self._mode == "lstm"
        x = inputs
        hs, cs = [], []
        for i in range(self._num_layers):
            outs = []
            for d, j in enumerate(["l", "r"][:self._dir]):
                k = i * self._dir + d
                h = states[0][k]
                c = states[1][k] if lstm else None
                flat = np.concatenate(
                    [getattr(self, f"{j}{i}_{g}").data().reshape(-1)
                     for g in ("i2h_weight", "h2h_weight", "i2h_bias", "h2h_bias")], axis=0)
                seq = x if d == 0 else npx.sequence_reverse(x, lengths,
                                                            use_sequence_length=True)
                ys = []
                for t in range(steps):
                    cell = (c[None],) if lstm else ()
                    out = npx.rnn(seq[t:t + 1], flat, h[None], *cell,
                                  state_size=self._hidden_size, num_layers=1,
                                  bidirectional=False, p=0.0, state_outputs=True,
                                  mode=self._mode,
                                  lstm_state_clip_nan=self._lstm_state_clip_nan)
                    keep = valid[t][:, None]
                    ys.append(out[0][0])
                    h = np.where(keep, out[1][0], h)
                    if lstm:
                        c = np.where(keep, out[2][0], c)
                y = np.stack(ys, axis=0) * mask
                if d == 1:
                    y = npx.sequence_reverse(y, lengths, use_sequence_length=True)
                outs.append(y)
                hs.append(h)
                cs.append(c)
            x = outs[0] if self._dir == 1 else np.concatenate(outs, axis=2)
            if self._dropout and i + 1 < self._num_layers:
                x = npx._dropout_op(x, p=self._dropout)
        new_states = [np.stack(hs, axis=0)]
        if lstm:
            new_states.append(np.stack(cs, axis=0))
        return x, new_states


class RNN(_RNNLayer):
    r"""A multi-layer Elman RNN with tanh or ReLU activation:
    h_t = act(W_ih x_t + b_ih + W_hh h_(t-1) + b_hh).

    Inputs: data (T, N, C) in 'TNC' layout ((N, T, C) in 'NTC'), and optionally states, one
    (num_layers * directions, N, hidden_size) array (zeros when left out). Outputs: out
    (T, N, directions * hidden_size), and the final states when states were given."""

    def __init__(self, hidden_size, num_layers=1, activation="relu", layout="TNC", dropout=0,
                 bidirectional=False, i2h_weight_initializer=None, h2h_weight_initializer=None,
                 i2h_bias_initializer="zeros", h2h_bias_initializer="zeros", input_size=0,
                 dtype="float32", **kwargs):
        if activation not in ("relu", "tanh"):
            raise ValueError(f"[RNN] activation must be 'relu' or 'tanh', got {activation!r}")
        super().__init__(hidden_size, num_layers, layout, dropout, bidirectional, input_size,
                         i2h_weight_initializer, h2h_weight_initializer, i2h_bias_initializer,
                         h2h_bias_initializer, "rnn_" + activation, None, None, None, None,
                         False, dtype, **kwargs)

    def state_info(self, batch_size=0):
        return [{"shape": (self._num_layers * self._dir, batch_size, self._hidden_size),
                 "__layout__": "LNC", "dtype": self._dtype}]


class LSTM(_RNNLayer):
    r"""A multi-layer long short-term memory (LSTM) RNN:
    i, f, o = sigmoid(W_i* x + b_i* + W_h* h + b_h*), g = tanh(W_ig x + b_ig + W_hg h + b_hg),
    c_t = f * c_(t-1) + i * g, h_t = o * tanh(c_t).

    Inputs: data, and optionally states [h0, c0], each (num_layers * directions, N,
    hidden_size). Outputs: out, and [hy, cy] when states were given."""

    def __init__(self, hidden_size, num_layers=1, layout="TNC", dropout=0, bidirectional=False,
                 input_size=0, i2h_weight_initializer=None, h2h_weight_initializer=None,
                 i2h_bias_initializer="zeros", h2h_bias_initializer="zeros",
                 projection_size=None, h2r_weight_initializer=None, state_clip_min=None,
                 state_clip_max=None, state_clip_nan=False, dtype="float32", **kwargs):
        super().__init__(hidden_size, num_layers, layout, dropout, bidirectional, input_size,
                         i2h_weight_initializer, h2h_weight_initializer, i2h_bias_initializer,
                         h2h_bias_initializer, "lstm", projection_size, h2r_weight_initializer,
                         state_clip_min, state_clip_max, state_clip_nan, dtype, **kwargs)

    def state_info(self, batch_size=0):
        shape = (self._num_layers * self._dir, batch_size, self._hidden_size)
        return [{"shape": shape, "__layout__": "LNC", "dtype": self._dtype},
                {"shape": shape, "__layout__": "LNC", "dtype": self._dtype}]


class GRU(_RNNLayer):
    r"""A multi-layer gated recurrent unit (GRU) RNN, cuDNN's variant (the reset gate applies
    after the recurrent matrix product):
    r, z = sigmoid(W_i* x + b_i* + W_h* h + b_h*), n = tanh(W_in x + b_in + r * (W_hn h + b_hn)),
    h_t = (1 - z) * n + z * h_(t-1).

    Inputs: data, and optionally states, one (num_layers * directions, N, hidden_size) array.
    Outputs: out, and the final states when states were given."""

    def __init__(self, hidden_size, num_layers=1, layout="TNC", dropout=0, bidirectional=False,
                 input_size=0, i2h_weight_initializer=None, h2h_weight_initializer=None,
                 i2h_bias_initializer="zeros", h2h_bias_initializer="zeros", dtype="float32",
                 **kwargs):
        super().__init__(hidden_size, num_layers, layout, dropout, bidirectional, input_size,
                         i2h_weight_initializer, h2h_weight_initializer, i2h_bias_initializer,
                         h2h_bias_initializer, "gru", None, None, None, None, False, dtype,
                         **kwargs)

    def state_info(self, batch_size=0):
        return [{"shape": (self._num_layers * self._dir, batch_size, self._hidden_size),
                 "__layout__": "LNC", "dtype": self._dtype}]
