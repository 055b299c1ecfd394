"""Convolutional recurrent cells (MXNet's gluon.rnn / 1.x gluon.contrib.rnn Conv1D/2D/3D
RNN, LSTM and GRU cells; Shi et al.'s ConvLSTM): the cells of rnn_cell with the two
fully-connected projections replaced by convolutions, so inputs and states keep their
spatial layout.

A step takes inputs (N,) + input_shape, input_shape being (C, W), (C, H, W) or (C, D, H, W)
(MXNet's channel-first conv_layout) and states (N, hidden_channels) + the spatial size the
input-to-hidden convolution gives (its kernel, pad and dilation; stride 1). The
hidden-to-hidden convolution keeps that size: its kernel must be odd and its pad is
dilate * (kernel - 1) / 2. Parameters: i2h_weight (gates * hidden_channels, C) + i2h_kernel,
h2h_weight (gates * hidden_channels, hidden_channels) + h2h_kernel, and biases of
gates * hidden_channels."""
from ... import numpy as np
from ... import numpy_extension as npx
from ..parameter import Parameter
from .rnn_cell import HybridRecurrentCell, _check_states

__all__ = ["Conv1DRNNCell", "Conv2DRNNCell", "Conv3DRNNCell", "Conv1DLSTMCell",
           "Conv2DLSTMCell", "Conv3DLSTMCell", "Conv1DGRUCell", "Conv2DGRUCell",
           "Conv3DGRUCell"]

_LAYOUTS = {1: "NCW", 2: "NCHW", 3: "NCDHW"}


def _dims_tuple(who, name, value, dims, low):
    """value (an int or a tuple of `dims` ints, each >= low) as a tuple."""
    items = (value,) * dims if isinstance(value, int) and not isinstance(value, bool) \
        else value
    try:
        items = tuple(items)
    except TypeError:
        raise TypeError(f"[{who}] {name} must be an int or a tuple of {dims} ints, got "
                        f"{value!r}") from None
    if len(items) != dims or any(isinstance(v, bool) or not isinstance(v, int) or v < low
                                 for v in items):
        raise ValueError(f"[{who}] {name} must be {dims} int(s) >= {low}, got {value!r}")
    return items


class _ConvRNNCell(HybridRecurrentCell):
    """The parameters, shapes and the two convolutions every conv cell shares."""

    _GATES = 1
    _DIMS = 2

    def __init__(self, input_shape, hidden_channels, i2h_kernel, h2h_kernel, i2h_pad,
                 i2h_dilate, h2h_dilate, i2h_weight_initializer, h2h_weight_initializer,
                 i2h_bias_initializer, h2h_bias_initializer, conv_layout, activation):
        super().__init__()
        who, dims = type(self).__name__, self._DIMS
        if conv_layout != _LAYOUTS[dims]:
            raise NotImplementedError(f"[{who}] conv_layout {conv_layout!r}: only the "
                                      f"channel-first {_LAYOUTS[dims]!r} is supported")
        self._input_shape = _dims_tuple(who, "input_shape", input_shape, dims + 1, 1)
        if isinstance(hidden_channels, bool) or not isinstance(hidden_channels, int) or \
                hidden_channels < 1:
            raise ValueError(f"[{who}] hidden_channels must be a positive int, got "
                             f"{hidden_channels!r}")
        self._hidden_channels = hidden_channels
        self._i2h_kernel = _dims_tuple(who, "i2h_kernel", i2h_kernel, dims, 1)
        self._h2h_kernel = _dims_tuple(who, "h2h_kernel", h2h_kernel, dims, 1)
        if any(k % 2 == 0 for k in self._h2h_kernel):
            raise ValueError(f"[{who}] h2h_kernel must be odd (the state keeps its size), "
                             f"got {self._h2h_kernel}")
        self._i2h_pad = _dims_tuple(who, "i2h_pad", i2h_pad, dims, 0)
        self._i2h_dilate = _dims_tuple(who, "i2h_dilate", i2h_dilate, dims, 1)
        self._h2h_dilate = _dims_tuple(who, "h2h_dilate", h2h_dilate, dims, 1)
        self._h2h_pad = tuple(d * (k - 1) // 2 for d, k in zip(self._h2h_dilate,
                                                               self._h2h_kernel))
        spatial = tuple(n + 2 * p - d * (k - 1) for n, p, d, k in zip(
            self._input_shape[1:], self._i2h_pad, self._i2h_dilate, self._i2h_kernel))
        if any(n < 1 for n in spatial):
            raise ValueError(f"[{who}] i2h_kernel {self._i2h_kernel} (dilate "
                             f"{self._i2h_dilate}, pad {self._i2h_pad}) does not fit the "
                             f"input's spatial size {self._input_shape[1:]}")
        self._state_shape = (hidden_channels,) + spatial
        self._conv_layout = conv_layout
        self._activation = activation
        n = self._GATES * hidden_channels
        self.i2h_weight = Parameter("i2h_weight",
                                    shape=(n, self._input_shape[0]) + self._i2h_kernel,
                                    init=i2h_weight_initializer)
        self.h2h_weight = Parameter("h2h_weight", shape=(n, hidden_channels) + self._h2h_kernel,
                                    init=h2h_weight_initializer)
        self.i2h_bias = Parameter("i2h_bias", shape=(n,), init=i2h_bias_initializer)
        self.h2h_bias = Parameter("h2h_bias", shape=(n,), init=h2h_bias_initializer)

    def state_info(self, batch_size=0):
        return [{"shape": (batch_size,) + self._state_shape,
                 "__layout__": self._conv_layout}] * self._STATES

    _STATES = 1

    def _alias(self):
        return "conv_rnn"

    def __repr__(self):
        return (f"{type(self).__name__}({self._input_shape} -> {self._hidden_channels}, "
                f"i2h_kernel={self._i2h_kernel}, h2h_kernel={self._h2h_kernel})")

    def _check(self, inputs, states):
        who = type(self).__name__
        if tuple(inputs.shape[1:]) != self._input_shape:
            raise ValueError(f"[{who}] inputs of one step must have shape (N,) + "
                             f"{self._input_shape}, got {tuple(inputs.shape)}")
        _check_states(self, states, inputs.shape[0])

    def _convolutions(self, inputs, state):
        """(i2h, h2h): the input's and the state's convolutions, each (N, gates *
        hidden_channels) + the state's spatial size."""
        n = self._GATES * self._hidden_channels
        ones = (1,) * self._DIMS
        i2h = npx.convolution(inputs, self.i2h_weight.data(), self.i2h_bias.data(),
                              kernel=self._i2h_kernel, stride=ones, dilate=self._i2h_dilate,
                              pad=self._i2h_pad, num_filter=n, no_bias=False,
                              layout=self._conv_layout)
        h2h = npx.convolution(state, self.h2h_weight.data(), self.h2h_bias.data(),
                              kernel=self._h2h_kernel, stride=ones, dilate=self._h2h_dilate,
                              pad=self._h2h_pad, num_filter=n, no_bias=False,
                              layout=self._conv_layout)
        return i2h, h2h


class _ConvRNN(_ConvRNNCell):
    """h_t = act(conv(x_t) + conv(h_(t-1))); states [h]."""

    def forward(self, inputs, states):
        self._check(inputs, states)
        i2h, h2h = self._convolutions(inputs, states[0])
        output = self._get_activation(i2h + h2h, self._activation)
        return output, [output]


class _ConvLSTM(_ConvRNNCell):
    """LSTMCell's gates i, f, g, o (in that order along the channels), from convolutions;
    states [h, c]."""

    _GATES = 4
    _STATES = 2

    def _alias(self):
        return "conv_lstm"

    def forward(self, inputs, states):
        self._check(inputs, states)
        i2h, h2h = self._convolutions(inputs, states[0])
        gi, gf, gg, go = np.split(i2h + h2h, 4, axis=1)
        in_gate, forget_gate, out_gate = npx.sigmoid(gi), npx.sigmoid(gf), npx.sigmoid(go)
        next_c = forget_gate * states[1] + in_gate * self._get_activation(gg, self._activation)
        next_h = out_gate * self._get_activation(next_c, self._activation)
        return next_h, [next_h, next_c]


class _ConvGRU(_ConvRNNCell):
    """GRUCell's gates r, z, n (in that order along the channels), from convolutions;
    states [h]."""

    _GATES = 3

    def _alias(self):
        return "conv_gru"

    def forward(self, inputs, states):
        self._check(inputs, states)
        prev_h = states[0]
        i2h, h2h = self._convolutions(inputs, prev_h)
        i2h_r, i2h_z, i2h_n = np.split(i2h, 3, axis=1)
        h2h_r, h2h_z, h2h_n = np.split(h2h, 3, axis=1)
        reset_gate = npx.sigmoid(i2h_r + h2h_r)
        update_gate = npx.sigmoid(i2h_z + h2h_z)
        candidate = self._get_activation(i2h_n + reset_gate * h2h_n, self._activation)
        next_h = (1 - update_gate) * candidate + update_gate * prev_h
        return next_h, [next_h]


def _cell(base, dims, doc):
    """The public class of `base` for `dims` spatial dimensions, with MXNet's signature."""
    layout = _LAYOUTS[dims]
    ones = (1,) * dims

    def __init__(self, input_shape, hidden_channels, i2h_kernel, h2h_kernel,
                 i2h_pad=(0,) * dims, i2h_dilate=ones, h2h_dilate=ones,
                 i2h_weight_initializer=None, h2h_weight_initializer=None,
                 i2h_bias_initializer="zeros", h2h_bias_initializer="zeros",
                 conv_layout=layout, activation="tanh"):
        base.__init__(self, input_shape, hidden_channels, i2h_kernel, h2h_kernel, i2h_pad,
                      i2h_dilate, h2h_dilate, i2h_weight_initializer, h2h_weight_initializer,
                      i2h_bias_initializer, h2h_bias_initializer, conv_layout, activation)

    name = f"Conv{dims}D{base.__name__[5:]}Cell"
    return type(name, (base,), {"__init__": __init__, "_DIMS": dims, "__module__": __name__,
                                "__doc__": f"{doc} over {dims}-d inputs (layout {layout})."})


Conv1DRNNCell = _cell(_ConvRNN, 1, "Convolutional RNN cell")
Conv2DRNNCell = _cell(_ConvRNN, 2, "Convolutional RNN cell")
Conv3DRNNCell = _cell(_ConvRNN, 3, "Convolutional RNN cell")
Conv1DLSTMCell = _cell(_ConvLSTM, 1, "Convolutional LSTM cell (Shi et al.'s ConvLSTM)")
Conv2DLSTMCell = _cell(_ConvLSTM, 2, "Convolutional LSTM cell (Shi et al.'s ConvLSTM)")
Conv3DLSTMCell = _cell(_ConvLSTM, 3, "Convolutional LSTM cell (Shi et al.'s ConvLSTM)")
Conv1DGRUCell = _cell(_ConvGRU, 1, "Convolutional GRU cell")
Conv2DGRUCell = _cell(_ConvGRU, 2, "Convolutional GRU cell")
Conv3DGRUCell = _cell(_ConvGRU, 3, "Convolutional GRU cell")
