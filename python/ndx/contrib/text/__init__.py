"""MXNet 1.x's ``mx.contrib.text``: counting tokens (utils), indexing them (vocab.Vocabulary)
and token embeddings (embedding: vectors read from a pretrained file, per token of a
vocabulary). Pretrained GloVe / fastText files are read from local paths (ndx downloads
nothing): a missing one is a FileNotFoundError naming where it was looked for."""
from . import embedding, utils, vocab

__all__ = ["embedding", "utils", "vocab"]
