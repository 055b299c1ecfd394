"""MXNet 1.x's gluon.contrib.rnn: the convolutional cells, VariationalDropoutCell and
LSTMPCell (gluon.rnn's, where MXNet 2.0 moved them) and dynamic_unroll."""
from ... import numpy_extension as npx
from ..rnn import (
    Conv1DGRUCell,
    Conv1DLSTMCell,
    Conv1DRNNCell,
    Conv2DGRUCell,
    Conv2DLSTMCell,
    Conv2DRNNCell,
    Conv3DGRUCell,
    Conv3DLSTMCell,
    Conv3DRNNCell,
    LSTMPCell,
    VariationalDropoutCell,
)

__all__ = ["Conv1DRNNCell", "Conv2DRNNCell", "Conv3DRNNCell", "Conv1DLSTMCell",
           "Conv2DLSTMCell", "Conv3DLSTMCell", "Conv1DGRUCell", "Conv2DGRUCell",
           "Conv3DGRUCell", "VariationalDropoutCell", "LSTMPCell", "dynamic_unroll"]


def dynamic_unroll(cell, inputs, begin_state, drop_inputs=0, drop_outputs=0, layout="TNC",
                   valid_length=None):
    """MXNet 1.x's dynamic_unroll: `cell` over every step of `inputs` (layout 'TNC' or
    'NTC'), from begin_state; returns (outputs, states), outputs merged along the time axis.
    drop_inputs / drop_outputs: dropout with one mask for all the steps (variational). With
    valid_length (N,), steps past a sequence's length give zero outputs and its states are
    those of its last valid step."""
    if layout not in ("TNC", "NTC"):
        raise ValueError(f"[dynamic_unroll] layout must be 'TNC' or 'NTC', got {layout!r}")
    axis = layout.find("T")
    if drop_inputs:
        inputs = npx.dropout(inputs, p=drop_inputs, axes=(axis,))
    outputs, states = cell.unroll(inputs.shape[axis], inputs, begin_state=begin_state,
                                  layout=layout, merge_outputs=True,
                                  valid_length=valid_length)
    if drop_outputs:
        outputs = npx.dropout(outputs, p=drop_outputs, axes=(axis,))
    return outputs, states
