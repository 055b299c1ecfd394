"""MXNet's automatic symbol names (``mx.name``): a NameManager hands out 'fullyconnected0',
'fullyconnected1', ... per hint; ``with mx.name.Prefix('stage1_'):`` puts a prefix before
every op symbol's name made inside it (given names too, as MXNet's), and so before the
parameters a layer creates ('stage1_fc1_weight'). Variables keep their names. A NameManager
entered with ``with`` starts its own counts."""
import contextvars

__all__ = ["NameManager", "Prefix"]


class _Current(type):
    @property
    def current(cls):
        """The NameManager in effect (the innermost ``with``, else the default one)."""
        mgr = NameManager._scope.get()
        return mgr if mgr is not None else NameManager._default


class NameManager(metaclass=_Current):
    """Names from hints: get(name, hint) is `name` when given, else hint + a count of the
    names this manager made from that hint."""

    _scope = contextvars.ContextVar("ndx_name_manager", default=None)

    def __init__(self):
        self._counter = {}
        self._tokens = []

    def get(self, name, hint):
        if name:
            return name
        if not hint:
            raise ValueError("[NameManager] a name or a hint is needed")
        count = self._counter.get(hint, 0)
        self._counter[hint] = count + 1
        return f"{hint}{count}"

    def __enter__(self):
        self._tokens.append(NameManager._scope.set(self))
        return self

    def __exit__(self, *exc):
        NameManager._scope.reset(self._tokens.pop())


class Prefix(NameManager):
    """A NameManager that puts `prefix` before every name it gives."""

    def __init__(self, prefix):
        super().__init__()
        if not isinstance(prefix, str):
            raise TypeError(f"[Prefix] prefix must be a str, got {type(prefix).__name__}")
        self._prefix = prefix

    def get(self, name, hint):
        return self._prefix + super().get(name, hint)


NameManager._default = NameManager()
