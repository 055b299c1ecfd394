"""mx.contrib.text (MXNet 1.x's text API): counting, Vocabulary (against the examples of
MXNet's text API documentation and hand-built indices) and token embeddings read from small
files written here."""
import collections

import numpy as onp
import pytest

import ndx as mx
from ndx.contrib import text

DOC_TEXT = " hello world \n hello nice world \n hi world \n"


def test_count_tokens_and_the_documented_vocabulary():
    counter = text.utils.count_tokens_from_str(DOC_TEXT)
    assert counter == collections.Counter({"world": 3, "hello": 2, "nice": 1, "hi": 1})
    vocab = text.vocab.Vocabulary(counter)
    # MXNet's documentation: frequency first, ties in key order, index 0 the unknown token
    assert vocab.idx_to_token == ["<unk>", "world", "hello", "hi", "nice"]
    assert vocab.to_indices(["hello", "world", "bye"]) == [2, 1, 0]
    assert vocab.to_tokens([2, 1]) == ["hello", "world"] and vocab.to_tokens(3) == "hi"
    assert len(vocab) == 5 and vocab.unknown_token == "<unk>"
    # the delimiters are regular expressions, as MXNet's
    assert text.utils.count_tokens_from_str("a,b;c", token_delim=",|;") == \
        collections.Counter({"a": 1, "b": 1, "c": 1})
    lower = text.utils.count_tokens_from_str("A a b", to_lower=True,
                                             counter_to_update=collections.Counter({"b": 1}))
    assert lower == collections.Counter({"a": 2, "b": 2})


def test_vocabulary_thresholds_and_reserved_tokens():
    counter = collections.Counter({"a": 5, "b": 3, "c": 3, "d": 1, "<pad>": 9})
    vocab = text.vocab.Vocabulary(counter, most_freq_count=2, min_freq=2,
                                  reserved_tokens=["<pad>", "<bos>"])
    # reserved first; "<pad>" in the counter is not indexed twice; two most frequent others
    assert vocab.idx_to_token == ["<unk>", "<pad>", "<bos>", "a", "b"]
    assert vocab.reserved_tokens == ["<pad>", "<bos>"]
    assert text.vocab.Vocabulary(counter, min_freq=3).idx_to_token == \
        ["<unk>", "<pad>", "a", "b", "c"]
    assert text.vocab.Vocabulary(counter, most_freq_count=0).idx_to_token == ["<unk>"]
    with pytest.raises(ValueError, match="unknown_token"):
        text.vocab.Vocabulary(counter, reserved_tokens=["<unk>"])
    with pytest.raises(ValueError, match="min_freq"):
        text.vocab.Vocabulary(counter, min_freq=0)
    with pytest.raises(ValueError, match="not in"):
        text.vocab.Vocabulary(counter).to_tokens(99)


def _write(tmp_path, name, lines):
    path = tmp_path / name
    path.write_text("\n".join(lines) + "\n", encoding="utf8")
    return str(path)


def test_custom_embedding_reads_vectors_and_looks_them_up(tmp_path):
    path = _write(tmp_path, "emb.txt", ["3 2", "hello 0.1 0.2", "world 0.3 0.4", "nice 1 2"])
    emb = text.embedding.CustomEmbedding(path)  # (the fastText header line is skipped)
    assert emb.vec_len == 2 and emb.idx_to_token == ["<unk>", "hello", "world", "nice"]
    onp.testing.assert_allclose(emb.idx_to_vec.asnumpy(),
                                [[0, 0], [0.1, 0.2], [0.3, 0.4], [1, 2]], rtol=1e-6)
    onp.testing.assert_allclose(emb.get_vecs_by_tokens(["world", "bye"]).asnumpy(),
                                [[0.3, 0.4], [0, 0]], rtol=1e-6)
    assert emb.get_vecs_by_tokens("Nice").asnumpy().tolist() == [0, 0]
    assert emb.get_vecs_by_tokens("Nice", lower_case_backup=True).asnumpy().tolist() == [1, 2]
    emb.update_token_vectors("hello", mx.nd.array([5, 6]))
    assert emb.get_vecs_by_tokens("hello").asnumpy().tolist() == [5, 6]
    with pytest.raises(ValueError, match="not indexed"):
        emb.update_token_vectors(["bye"], mx.nd.array([[1, 1]]))
    # on a vocabulary: its indices, the unknown vector for tokens the file lacks
    vocab = text.vocab.Vocabulary(text.utils.count_tokens_from_str(DOC_TEXT))
    on_vocab = text.embedding.CustomEmbedding(path, vocabulary=vocab,
                                              init_unknown_vec=mx.nd.ones)
    assert on_vocab.idx_to_token == vocab.idx_to_token
    onp.testing.assert_allclose(on_vocab.idx_to_vec.asnumpy(),
                                [[1, 1], [0.3, 0.4], [0.1, 0.2], [1, 1], [1, 2]], rtol=1e-6)


def test_composite_embedding_and_bad_files(tmp_path):
    a = text.embedding.CustomEmbedding(_write(tmp_path, "a.txt", ["x 1 2", "y 3 4"]))
    b = text.embedding.CustomEmbedding(_write(tmp_path, "b.txt", ["y 9", "<unk> -1"]))
    vocab = text.vocab.Vocabulary(collections.Counter({"x": 2, "y": 1}))
    both = text.embedding.CompositeEmbedding(vocab, [a, b])
    assert both.vec_len == 3
    onp.testing.assert_allclose(both.idx_to_vec.asnumpy(),
                                [[0, 0, -1], [1, 2, -1], [3, 4, 9]], rtol=1e-6)
    # init_unknown_vec is called with shape=vec_len; a repeated unknown token keeps its first
    twice = _write(tmp_path, "u.txt", ["<unk> 1 1", "x 2 2", "<unk> 3 3"])
    with pytest.warns(UserWarning, match="appears again"):
        first = text.embedding.CustomEmbedding(twice)
    assert first.idx_to_vec.asnumpy()[0].tolist() == [1, 1]
    filled = text.embedding.CustomEmbedding(_write(tmp_path, "v.txt", ["x 2 2"]),
                                            init_unknown_vec=lambda *, shape: mx.nd.full(
                                                shape, 7.0))
    assert filled.idx_to_vec.asnumpy()[0].tolist() == [7, 7]
    with pytest.raises(ValueError, match="has 1 values"):
        text.embedding.CustomEmbedding(_write(tmp_path, "c.txt", ["x 1 2", "y 3"]))
    with pytest.raises(FileNotFoundError):
        text.embedding.CustomEmbedding(str(tmp_path / "none.txt"))


def test_pretrained_embeddings_read_local_files(tmp_path):
    root = tmp_path / "embeddings"
    (root / "glove").mkdir(parents=True)
    _write(root / "glove", "glove.6B.50d.txt", ["the 1 2 3", "cat 4 5 6"])
    glove = text.embedding.create("glove", pretrained_file_name="glove.6B.50d.txt",
                                  embedding_root=str(root))
    assert glove.get_vecs_by_tokens("cat").asnumpy().tolist() == [4, 5, 6]
    assert "glove.6B.50d.txt" in text.embedding.get_pretrained_file_names("glove")
    with pytest.raises(FileNotFoundError, match="downloads nothing"):
        text.embedding.create("fasttext", embedding_root=str(root))
    with pytest.raises(KeyError, match="unknown embedding"):
        text.embedding.create("word2vec")
