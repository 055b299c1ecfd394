"""Text utilities of mx.contrib.text."""
import collections
import re

__all__ = ["count_tokens_from_str"]


def count_tokens_from_str(source_str, token_delim=" ", seq_delim="\n", to_lower=False,
                          counter_to_update=None):
    """A collections.Counter of the tokens of source_str, split at the regular expressions
    token_delim and seq_delim (empty tokens dropped), lower-cased with to_lower;
    counter_to_update is updated and returned instead of a new Counter."""
    if not isinstance(source_str, str):
        raise TypeError(f"[count_tokens_from_str] source_str must be a str, got "
                        f"{type(source_str).__name__}")
    # (the delimiters are regular expressions, as MXNet splits on token_delim|seq_delim)
    tokens = [t for t in re.split(f"{token_delim}|{seq_delim}", source_str) if t]
    if to_lower:
        tokens = [t.lower() for t in tokens]
    counter = collections.Counter() if counter_to_update is None else counter_to_update
    counter.update(tokens)
    return counter
