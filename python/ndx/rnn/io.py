"""MXNet 1.x's text helpers for recurrent language models: encode_sentences (tokens to
indices with a growing vocabulary) and BucketSentenceIter (batches of sentences padded to
the smallest bucket length that holds them, with next-token labels)."""
import bisect
import logging
import random

import numpy as _onp

from .. import nd
from ..io import DataBatch, DataDesc, DataIter

__all__ = ["encode_sentences", "BucketSentenceIter"]


def encode_sentences(sentences, vocab=None, invalid_label=-1, invalid_key="\n",
                     start_label=0, unknown_token=None):
    """(sentences as lists of indices, vocab): tokens not in vocab get the next index from
    start_label (skipping invalid_label); with a given vocab an unknown token is a
    ValueError, or, with unknown_token, coded as unknown_token (added to the vocabulary
    when missing; MXNet re-indexes it at each unknown token, which codes them apart)."""
    idx = start_label
    new_vocab = vocab is None
    if new_vocab:
        vocab = {invalid_key: invalid_label}
    res = []
    for sent in sentences:
        coded = []
        for word in sent:
            if word not in vocab:
                if not new_vocab and not unknown_token:
                    raise ValueError(f"Unknown token {word!r} (the vocabulary was given)")
                if unknown_token:
                    word = unknown_token
                if word not in vocab:
                    if idx == invalid_label:
                        idx += 1
                    vocab[word] = idx
                    idx += 1
            coded.append(vocab[word])
        res.append(coded)
    return res, vocab


class BucketSentenceIter(DataIter):
    """Batches of batch_size encoded sentences of one bucket (the smallest bucket length
    that holds each sentence; longer ones are dropped), padded with invalid_label; the
    label of each step is the next step's token. Buckets default to every length with at
    least batch_size sentences. layout 'NT' (batch major) or 'TN'. Each batch carries its
    bucket_key and provide_data / provide_label, as BucketingModule needs."""

    def __init__(self, sentences, batch_size, buckets=None, invalid_label=-1,
                 data_name="data", label_name="softmax_label", dtype="float32",
                 layout="NT"):
        super().__init__(batch_size)
        if not buckets:
            counts = _onp.bincount([len(s) for s in sentences])
            buckets = [i for i, n in enumerate(counts) if n >= batch_size]
        buckets = sorted(buckets)
        if not buckets:
            raise ValueError("[BucketSentenceIter] no bucket: no sentence length occurs "
                             f"batch_size={batch_size} times; give buckets=")
        ndiscard = 0
        self.data = [[] for _ in buckets]
        for sent in sentences:
            buck = bisect.bisect_left(buckets, len(sent))
            if buck == len(buckets):
                ndiscard += 1
                continue
            buff = _onp.full((buckets[buck],), invalid_label, dtype=dtype)
            buff[:len(sent)] = sent
            self.data[buck].append(buff)
        self.data = [_onp.asarray(d, dtype=dtype).reshape(-1, b)
                     for d, b in zip(self.data, buckets)]
        if ndiscard:
            logging.warning("discarded %d sentences longer than the largest bucket.",
                            ndiscard)
        self.batch_size = batch_size
        self.buckets = buckets
        self.data_name = data_name
        self.label_name = label_name
        self.dtype = dtype
        self.invalid_label = invalid_label
        self.nddata = []
        self.ndlabel = []
        self.major_axis = layout.find("N")
        self.layout = layout
        self.default_bucket_key = max(buckets)
        if self.major_axis == 0:
            shape = (batch_size, self.default_bucket_key)
        elif self.major_axis == 1:
            shape = (self.default_bucket_key, batch_size)
        else:
            raise ValueError(f"Invalid layout {layout}: Must by NT (batch major) or TN (time "
                             f"major)")
        self.provide_data = [DataDesc(data_name, shape, dtype, layout)]
        self.provide_label = [DataDesc(label_name, shape, dtype, layout)]
        self.idx = []
        for i, buck in enumerate(self.data):
            self.idx.extend((i, j) for j in range(0, len(buck) - batch_size + 1, batch_size))
        self.curr_idx = 0
        self.reset()

    def reset(self):
        """Shuffles the batches and the sentences of each bucket (Python's and NumPy's
        global generators, as MXNet's)."""
        self.curr_idx = 0
        random.shuffle(self.idx)
        for buck in self.data:
            _onp.random.shuffle(buck)
        self.nddata, self.ndlabel = [], []
        for buck in self.data:
            label = _onp.empty_like(buck)
            label[:, :-1] = buck[:, 1:]
            label[:, -1] = self.invalid_label
            self.nddata.append(nd.array(buck, dtype=self.dtype))
            self.ndlabel.append(nd.array(label, dtype=self.dtype))

    def next(self):
        if self.curr_idx == len(self.idx):
            raise StopIteration
        i, j = self.idx[self.curr_idx]
        self.curr_idx += 1
        data = self.nddata[i][j:j + self.batch_size]
        label = self.ndlabel[i][j:j + self.batch_size]
        if self.major_axis == 1:
            data, label = data.T, label.T
        return DataBatch([data], [label], pad=0, bucket_key=self.buckets[i],
                         provide_data=[DataDesc(self.data_name, data.shape, self.dtype,
                                                self.layout)],
                         provide_label=[DataDesc(self.label_name, label.shape, self.dtype,
                                                 self.layout)])
