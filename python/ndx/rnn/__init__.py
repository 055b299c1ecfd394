"""MXNet 1.x's ``mx.rnn``: symbolic recurrent cells (RNNCell, LSTMCell, GRUCell,
FusedRNNCell, SequentialRNNCell, BidirectionalCell, DropoutCell, ZoneoutCell, ResidualCell)
unrolled into graphs, the bucketing sentence iterator and RNN checkpoints. MXNet 2.0 moved
recurrent layers to gluon.rnn; 1.x language-model scripts use this module with
mx.mod.BucketingModule."""
from .io import BucketSentenceIter, encode_sentences
from .rnn import do_rnn_checkpoint, load_rnn_checkpoint, save_rnn_checkpoint
from .rnn_cell import (
    BaseRNNCell,
    BidirectionalCell,
    DropoutCell,
    FusedRNN,
    FusedRNNCell,
    GRUCell,
    LSTMCell,
    ModifierCell,
    ResidualCell,
    RNNCell,
    RNNParams,
    SequentialRNNCell,
    ZoneoutCell,
)

__all__ = ["BaseRNNCell", "BidirectionalCell", "BucketSentenceIter", "DropoutCell",
           "FusedRNN", "FusedRNNCell", "GRUCell", "LSTMCell", "ModifierCell", "RNNCell",
           "RNNParams", "ResidualCell", "SequentialRNNCell", "ZoneoutCell",
           "do_rnn_checkpoint", "encode_sentences", "load_rnn_checkpoint",
           "save_rnn_checkpoint"]
