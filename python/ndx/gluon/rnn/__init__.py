"""Recurrent layers (RNN, LSTM, GRU: one npx.rnn op each) and cells (one step each, composed of
ops) with MXNet 2.0's gluon.rnn signatures, the convolutional cells included."""
from .conv_rnn_cell import (
    Conv1DGRUCell,
    Conv1DLSTMCell,
    Conv1DRNNCell,
    Conv2DGRUCell,
    Conv2DLSTMCell,
    Conv2DRNNCell,
    Conv3DGRUCell,
    Conv3DLSTMCell,
    Conv3DRNNCell,
)
from .rnn_cell import (
    BidirectionalCell,
    DropoutCell,
    GRUCell,
    HybridRecurrentCell,
    HybridSequentialRNNCell,
    LSTMCell,
    LSTMPCell,
    ModifierCell,
    RecurrentCell,
    ResidualCell,
    RNNCell,
    SequentialRNNCell,
    VariationalDropoutCell,
    ZoneoutCell,
)
from .rnn_layer import GRU, LSTM, RNN

__all__ = ["RNN", "LSTM", "GRU", "RecurrentCell", "HybridRecurrentCell", "RNNCell", "LSTMCell",
           "GRUCell", "SequentialRNNCell", "HybridSequentialRNNCell", "DropoutCell",
           "ModifierCell", "ZoneoutCell", "ResidualCell", "BidirectionalCell",
           "VariationalDropoutCell", "LSTMPCell", "Conv1DRNNCell", "Conv2DRNNCell",
           "Conv3DRNNCell", "Conv1DLSTMCell", "Conv2DLSTMCell", "Conv3DLSTMCell",
           "Conv1DGRUCell", "Conv2DGRUCell", "Conv3DGRUCell"]
