"""npx.rnn: MXNet 2.0's signature over the registered ``_npx_rnn`` op, whose inputs depend on
the mode (state_cell for LSTM only)."""
from .. import _core

__all__ = ["rnn"]

_MODES = ("rnn_relu", "rnn_tanh", "lstm", "gru")


def rnn(data=None, parameters=None, state=None, state_cell=None, sequence_length=None,
        mode=None, state_size=None, num_layers=None, bidirectional=False, state_outputs=False,
        p=0.0, use_sequence_length=False, projection_size=None, lstm_state_clip_min=None,
        lstm_state_clip_max=None, lstm_state_clip_nan=False, out=None, name=None):
    """Recurrent layers over `data` (T, N, C): vanilla RNN ('rnn_relu', 'rnn_tanh'), 'lstm'
    or 'gru', `num_layers` stacked, optionally bidirectional, with dropout `p` on the outputs
    of every layer but the last in training mode.

    `parameters` is the flat vector of every weight, layer by layer and direction by direction
    (i2h (gates * state_size, C_l) then h2h (gates * state_size, state_size)), followed by
    every bias in the same order (cuDNN's packing, as MXNet's). `state` (and `state_cell` for
    LSTM) is (num_layers * directions, N, state_size). Returns out (T, N, directions *
    state_size), and with state_outputs=True also the final state (and cell state):
    ``out, hy`` or ``out, hy, cy``.

    Gates: LSTM i, f, g, o; GRU r, z, n with n = tanh(W_in x + b_in + r * (W_hn h + b_hn)).
    sequence_length / use_sequence_length, projection_size and the LSTM state clipping are
    not supported yet (NotImplementedError)."""
    for name, value in (("data", data), ("parameters", parameters), ("state", state)):
        if value is None:
            raise TypeError(f"[rnn] argument '{name}' is required")
    if mode not in _MODES:
        raise ValueError(f"[rnn] mode must be one of {list(_MODES)}, got {mode!r}")
    for name, value in (("state_size", state_size), ("num_layers", num_layers)):
        if value is None:
            raise TypeError(f"[rnn] argument '{name}' is required")
    if use_sequence_length or sequence_length is not None:
        raise NotImplementedError("[rnn] sequence_length / use_sequence_length (variable-length "
                                  "sequences) is not supported yet")
    if mode == "lstm":
        if state_cell is None:
            raise TypeError("[rnn] mode='lstm' needs state_cell, the initial cell state")
        inputs = (data, parameters, state, state_cell)
    else:
        if state_cell is not None:
            raise TypeError(f"[rnn] state_cell is for mode='lstm' only, got mode={mode!r}")
        inputs = (data, parameters, state)
    params = {"mode": mode, "state_size": state_size, "num_layers": num_layers,
              "bidirectional": bidirectional, "state_outputs": state_outputs, "p": p,
              "lstm_state_clip_nan": bool(lstm_state_clip_nan)}  # (None: MXNet's default)
    for name, value in (("projection_size", projection_size),
                        ("lstm_state_clip_min", lstm_state_clip_min),
                        ("lstm_state_clip_max", lstm_state_clip_max)):
        if value is not None:
            params[name] = value
    return _core._invoke("_npx_rnn", inputs, params, out)
