"""mx.contrib.text.embedding: token embeddings, vectors per token read from a text file of
lines 'token v1 v2 ... vn' (GloVe's and fastText's format; a fastText header line 'count dim'
is skipped). An embedding is a Vocabulary of the tokens it holds (or of the `vocabulary`
given), with idx_to_vec, an (len, vec_len) NDArray whose row 0 is the unknown token's vector
(the file's vector for it, else init_unknown_vec)."""
import io
import logging
import os
import warnings

import numpy as onp

from ... import nd
from .vocab import Vocabulary

__all__ = ["register", "create", "get_pretrained_file_names", "GloVe", "FastText",
           "CustomEmbedding", "CompositeEmbedding"]

_REGISTRY = {}


def register(embedding_cls):
    """Registers a token-embedding class under its lower-cased name, for create()."""
    _REGISTRY[embedding_cls.__name__.lower()] = embedding_cls
    return embedding_cls


def create(embedding_name, **kwargs):
    """An instance of the registered embedding `embedding_name` ('glove', 'fasttext', or a
    registered class's name) made with kwargs."""
    cls = _REGISTRY.get(str(embedding_name).lower())
    if cls is None:
        raise KeyError(f"[text.embedding.create] unknown embedding {embedding_name!r}; "
                       f"registered: {sorted(_REGISTRY)}")
    return cls(**kwargs)


def get_pretrained_file_names(embedding_name=None):
    """The pretrained file names each registered embedding knows (a dict by name, or the list
    of one). ndx reads them from local files: it downloads nothing."""
    names = {k: list(getattr(v, "pretrained_file_names", ())) for k, v in _REGISTRY.items()
             if getattr(v, "pretrained_file_names", None)}
    if embedding_name is None:
        return names
    key = str(embedding_name).lower()
    if key not in names:
        raise KeyError(f"[text.embedding] no pretrained files for {embedding_name!r}; known: "
                       f"{sorted(names)}")
    return names[key]


def _zeros(shape):
    return nd.zeros(shape=shape)


class _TokenEmbedding(Vocabulary):
    """The base of the embeddings: a Vocabulary with a vector per token."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self._vec_len = 0
        self._idx_to_vec = None

    def _load_embedding(self, path, elem_delim, init_unknown_vec, encoding="utf8"):
        """Reads `path`: each line a token and its vector."""
        if not os.path.isfile(path):
            raise FileNotFoundError(f"[text.embedding] no pretrained embedding file {path!r}")
        vectors, loaded_unknown = [], None
        with io.open(path, "r", encoding=encoding) as f:
            for number, line in enumerate(f, 1):
                parts = line.rstrip().split(elem_delim)
                if len(parts) < 2:
                    continue
                token, values = parts[0], parts[1:]
                if number == 1 and len(values) == 1 and all(p.isdigit() for p in parts):
                    continue  # (fastText's header: count and dimension)
                try:
                    vec = [float(v) for v in values]
                except ValueError:
                    raise ValueError(f"[text.embedding] {path}:{number}: the vector of "
                                     f"{token!r} is not numbers") from None
                if self._vec_len == 0:
                    self._vec_len = len(vec)
                elif len(vec) != self._vec_len:
                    raise ValueError(f"[text.embedding] {path}:{number}: {token!r} has "
                                     f"{len(vec)} values, the file's vectors {self._vec_len}")
                if token == self.unknown_token and loaded_unknown is None:
                    loaded_unknown = vec
                elif token in self._token_to_idx:  # (the unknown token's second vector too)
                    warnings.warn(f"[text.embedding] {path}:{number}: {token!r} appears again; "
                                  f"its first vector is kept", stacklevel=3)
                else:
                    self._token_to_idx[token] = len(self._idx_to_token)
                    self._idx_to_token.append(token)
                    vectors.append(vec)
        if self._vec_len == 0:
            raise ValueError(f"[text.embedding] {path} holds no token vectors")
        logging.info("Loaded %d token vectors of length %d from %s", len(vectors),
                     self._vec_len, path)
        unknown = onp.asarray(loaded_unknown, dtype=onp.float32) if loaded_unknown \
            else init_unknown_vec(shape=self._vec_len).asnumpy().astype(onp.float32)
        # rows: the unknown token, the reserved tokens (the unknown vector), then the file's
        reserved = len(self._idx_to_token) - len(vectors) - 1
        table = onp.empty((len(self._idx_to_token), self._vec_len), dtype=onp.float32)
        table[:1 + reserved] = unknown
        if vectors:
            table[1 + reserved:] = onp.asarray(vectors, dtype=onp.float32)
        self._idx_to_vec = nd.array(table)

    def _restrict_to(self, vocabulary):
        """Re-indexes to `vocabulary`: its tokens, each with this embedding's vector (the
        unknown one for tokens it lacks)."""
        table = self._idx_to_vec.asnumpy()
        rows = [self._token_to_idx.get(t, 0) for t in vocabulary.idx_to_token]
        self._idx_to_token = list(vocabulary.idx_to_token)
        self._token_to_idx = dict(vocabulary.token_to_idx)
        self._unknown_token = vocabulary.unknown_token
        self._reserved_tokens = vocabulary.reserved_tokens
        self._idx_to_vec = nd.array(table[rows])

    @property
    def vec_len(self):
        return self._vec_len

    @property
    def idx_to_vec(self):
        return self._idx_to_vec

    def __contains__(self, token):
        return token in self._token_to_idx

    def get_vecs_by_tokens(self, tokens, lower_case_backup=False):
        """The vector of a token ((vec_len,)), or of each token of a list ((n, vec_len)); an
        unknown token gets the unknown vector; with lower_case_backup a token not found is
        looked up lower-cased too."""
        single = not isinstance(tokens, list)
        indices = []
        for t in [tokens] if single else tokens:
            i = self._token_to_idx.get(t)
            if i is None and lower_case_backup and isinstance(t, str):
                i = self._token_to_idx.get(t.lower())
            indices.append(0 if i is None else i)
        vecs = nd.take(self._idx_to_vec, nd.array(indices, dtype="int64"))
        return vecs[0] if single else vecs

    def update_token_vectors(self, tokens, new_vectors):
        """Sets the vectors of indexed tokens (a token with a (vec_len,) or (1, vec_len)
        vector, or a list of n with (n, vec_len)); a token not indexed is a ValueError."""
        toks = tokens if isinstance(tokens, list) else [tokens]
        vals = onp.asarray(new_vectors.asnumpy() if hasattr(new_vectors, "asnumpy")
                           else new_vectors, dtype=onp.float32).reshape(len(toks), -1)
        if vals.shape[1] != self._vec_len:
            raise ValueError(f"[text.embedding] new_vectors must be {len(toks)} vectors of "
                             f"length {self._vec_len}, got shape {vals.shape}")
        missing = [t for t in toks if t not in self._token_to_idx]
        if missing:
            raise ValueError(f"[text.embedding] tokens {missing} are not indexed; only indexed "
                             f"tokens can be updated")
        table = self._idx_to_vec.asnumpy()
        table[[self._token_to_idx[t] for t in toks]] = vals
        self._idx_to_vec = nd.array(table)


class _Pretrained(_TokenEmbedding):
    """GloVe / fastText: pretrained_file_name read from embedding_root/<name>/."""

    pretrained_file_names = ()
    _default_file = ""

    def __init__(self, pretrained_file_name=None, embedding_root=os.path.join("~", ".mxnet",
                                                                                "embeddings"),
                 init_unknown_vec=_zeros, vocabulary=None, **kwargs):
        super().__init__(**kwargs)
        name = pretrained_file_name or self._default_file
        path = os.path.join(os.path.expanduser(embedding_root), type(self).__name__.lower(),
                            name)
        if not os.path.isfile(path):
            raise FileNotFoundError(
                f"[text.embedding.{type(self).__name__}] {path!r} not found: ndx downloads "
                f"nothing; put the pretrained file there (or load any file with "
                f"CustomEmbedding)")
        self._load_embedding(path, " ", init_unknown_vec)
        if vocabulary is not None:
            self._restrict_to(vocabulary)


@register
class GloVe(_Pretrained):
    """GloVe vectors from embedding_root/glove/<pretrained_file_name>."""

    pretrained_file_names = (
        "glove.42B.300d.txt", "glove.6B.50d.txt", "glove.6B.100d.txt", "glove.6B.200d.txt",
        "glove.6B.300d.txt", "glove.840B.300d.txt", "glove.twitter.27B.25d.txt",
        "glove.twitter.27B.50d.txt", "glove.twitter.27B.100d.txt",
        "glove.twitter.27B.200d.txt")
    _default_file = "glove.840B.300d.txt"


@register
class FastText(_Pretrained):
    """fastText vectors from embedding_root/fasttext/<pretrained_file_name>."""

    pretrained_file_names = ("wiki.simple.vec", "wiki.en.vec", "crawl-300d-2M.vec",
                             "wiki-news-300d-1M.vec")
    _default_file = "wiki.simple.vec"


class CustomEmbedding(_TokenEmbedding):
    """Vectors from any file of lines 'token v1 ... vn' (elem_delim between the elements)."""

    def __init__(self, pretrained_file_path, elem_delim=" ", encoding="utf8",
                 init_unknown_vec=_zeros, vocabulary=None, **kwargs):
        super().__init__(**kwargs)
        self._load_embedding(os.path.expanduser(pretrained_file_path), elem_delim,
                             init_unknown_vec, encoding)
        if vocabulary is not None:
            self._restrict_to(vocabulary)


class CompositeEmbedding(_TokenEmbedding):
    """The tokens of `vocabulary`, each with the vectors of token_embeddings (one embedding
    or a list) concatenated in order."""

    def __init__(self, vocabulary, token_embeddings):
        if not isinstance(vocabulary, Vocabulary):
            raise TypeError(f"[CompositeEmbedding] vocabulary must be a Vocabulary, got "
                            f"{type(vocabulary).__name__}")
        embeddings = token_embeddings if isinstance(token_embeddings, list) \
            else [token_embeddings]
        if not embeddings or not all(isinstance(e, _TokenEmbedding) for e in embeddings):
            raise TypeError("[CompositeEmbedding] token_embeddings must be token embeddings")
        super().__init__(unknown_token=vocabulary.unknown_token,
                         reserved_tokens=vocabulary.reserved_tokens)
        self._idx_to_token = list(vocabulary.idx_to_token)
        self._token_to_idx = dict(vocabulary.token_to_idx)
        parts = [e.get_vecs_by_tokens(self._idx_to_token).asnumpy() for e in embeddings]
        table = onp.concatenate(parts, axis=1)
        self._vec_len = table.shape[1]
        self._idx_to_vec = nd.array(table)
