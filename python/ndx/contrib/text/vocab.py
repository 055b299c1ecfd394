"""mx.contrib.text.vocab.Vocabulary: indices for text tokens."""
import collections

__all__ = ["Vocabulary"]


class Vocabulary:
    """Indices for tokens (MXNet 1.x's): 0 is unknown_token, then the reserved_tokens in
    order, then the keys of `counter` seen at least min_freq times, most frequent first (ties
    in the keys' sort order), at most most_freq_count of them. Tokens are any hashable values
    of one type."""

    def __init__(self, counter=None, most_freq_count=None, min_freq=1, unknown_token="<unk>",
                 reserved_tokens=None):
        if not isinstance(min_freq, int) or isinstance(min_freq, bool) or min_freq < 1:
            raise ValueError(f"[Vocabulary] min_freq must be a positive int, got {min_freq!r}")
        if most_freq_count is not None and (not isinstance(most_freq_count, int) or
                                            most_freq_count < 0):
            raise ValueError(f"[Vocabulary] most_freq_count must be None or an int >= 0, got "
                             f"{most_freq_count!r}")
        reserved = list(reserved_tokens or [])
        if unknown_token in reserved:
            raise ValueError(f"[Vocabulary] reserved_tokens must not hold unknown_token "
                             f"{unknown_token!r}")
        if len(set(reserved)) != len(reserved):
            raise ValueError("[Vocabulary] reserved_tokens must not hold a token twice")
        if counter is not None and not isinstance(counter, collections.Counter):
            raise TypeError(f"[Vocabulary] counter must be a collections.Counter or None, got "
                            f"{type(counter).__name__}")
        self._unknown_token = unknown_token
        self._reserved_tokens = reserved or None
        self._idx_to_token = [unknown_token] + reserved
        self._token_to_idx = {t: i for i, t in enumerate(self._idx_to_token)}
        if counter is not None:
            self._index_counter_keys(counter, most_freq_count, min_freq)

    def _index_counter_keys(self, counter, most_freq_count, min_freq):
        special = set(self._idx_to_token)
        ranked = sorted(counter.items(), key=lambda kv: kv[0])
        ranked.sort(key=lambda kv: kv[1], reverse=True)  # (stable: ties keep the key order)
        room = len(counter) if most_freq_count is None else most_freq_count
        for token, freq in ranked:
            if freq < min_freq or room <= 0:
                break
            if token not in special:
                self._token_to_idx[token] = len(self._idx_to_token)
                self._idx_to_token.append(token)
                room -= 1

    def __len__(self):
        return len(self._idx_to_token)

    @property
    def token_to_idx(self):
        return self._token_to_idx

    @property
    def idx_to_token(self):
        return self._idx_to_token

    @property
    def unknown_token(self):
        return self._unknown_token

    @property
    def reserved_tokens(self):
        return self._reserved_tokens

    def to_indices(self, tokens):
        """The index of a token, or a list of them for a list of tokens (0, the unknown
        token's, for tokens not indexed)."""
        if isinstance(tokens, list):
            return [self._token_to_idx.get(t, 0) for t in tokens]
        return self._token_to_idx.get(tokens, 0)

    def to_tokens(self, indices):
        """The token of an index, or a list of them; an index out of range is a ValueError."""
        single = not isinstance(indices, list)
        out = []
        for i in [indices] if single else indices:
            if not isinstance(i, int) or isinstance(i, bool) or not 0 <= i < len(self):
                raise ValueError(f"[Vocabulary] token index {i!r} is not in [0, {len(self)})")
            out.append(self._idx_to_token[i])
        return out[0] if single else out
