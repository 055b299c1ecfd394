"""Block and HybridBlock. A block's forward is either `forward(self, x, ...)` or, as in the
seeds' templates, `hybrid_forward(self, F, x, ..., **params)` with F the ndx module
(F.np, F.npx) and the block's parameters passed by name."""
import os
import warnings
from collections import OrderedDict

from .. import numpy_extension as _npx  # noqa: F401  (F.npx)
from .parameter import Parameter
from .serialization import load_safetensors, save_safetensors

__all__ = ["Block", "HybridBlock"]


class Block:
    def __init__(self, prefix=None, params=None):
        object.__setattr__(self, "_children", OrderedDict())
        object.__setattr__(self, "_reg_params", OrderedDict())

    def __setattr__(self, name, value):
        if isinstance(value, Block):
            self._children[name] = value
        elif isinstance(value, Parameter):
            self._reg_params[name] = value
        object.__setattr__(self, name, value)

    def register_child(self, block, name=None):
        name = name if name is not None else str(len(self._children))
        self._children[name] = block
        return block

    def collect_params(self, select=None):
        """{structured name: Parameter} of this block and its children ('0.weight', ...)."""
        out = OrderedDict()
        for name, p in self._reg_params.items():
            out[name] = p
        for cname, child in self._children.items():
            for name, p in child.collect_params().items():
                out[f"{cname}.{name}"] = p
        if select is not None:
            import re
            pattern = re.compile(select)
            out = OrderedDict((k, v) for k, v in out.items() if pattern.search(k))
        return out

    def initialize(self, init=None, device=None, verbose=False, force_reinit=False):
        for p in self.collect_params().values():
            p.initialize(default_init=init, device=device, force_reinit=force_reinit)

    def hybridize(self, active=True, **kwargs):
        """Marks the block hybridized. Graph capture and the cached executor are not implemented
        yet: the block keeps running imperatively (same results), and a warning says so once."""
        if active and not getattr(Block, "_warned_hybridize", False):
            warnings.warn("hybridize(): graph capture is not implemented yet in this ndx build; "
                          "the block runs imperatively", stacklevel=2)
            Block._warned_hybridize = True
        object.__setattr__(self, "_active", active)
        for child in self._children.values():
            child.hybridize(active, **kwargs)

    def __call__(self, *args, **kwargs):
        return self.forward(*args, **kwargs)

    def forward(self, *args):
        raise NotImplementedError(f"{type(self).__name__} must implement forward")

    def save_parameters(self, filename):
        """Writes every parameter in the safetensors layout, atomically (temp file, rename)."""
        tensors = OrderedDict((name, p.data()) for name, p in self.collect_params().items())
        save_safetensors(filename, tensors)

    def load_parameters(self, filename, device=None, allow_missing=False, ignore_extra=False):
        """Reads a file written by save_parameters. Every check happens before any parameter
        changes, so a bad file leaves the block as it was."""
        loaded = load_safetensors(filename)
        params = self.collect_params()
        missing = [n for n in params if n not in loaded]
        extra = [n for n in loaded if n not in params]
        if missing and not allow_missing:
            raise ValueError(f"[load_parameters] {filename}: parameters missing from the file: "
                             f"{missing[:5]}{' ...' if len(missing) > 5 else ''}")
        if extra and not ignore_extra:
            raise ValueError(f"[load_parameters] {filename}: the file has parameters the block "
                             f"lacks: {extra[:5]}{' ...' if len(extra) > 5 else ''}")
        for name, p in params.items():
            if name in loaded and p._shape_known() and tuple(loaded[name].shape) != p.shape:
                raise ValueError(f"[load_parameters] {name}: the file has shape "
                                 f"{tuple(loaded[name].shape)}, the block expects {p.shape}")
        for name, p in params.items():
            if name in loaded:
                p.set_data(loaded[name])

    def __repr__(self):
        lines = [f"{type(self).__name__}("]
        for name, child in self._children.items():
            lines.append(f"  ({name}): " + repr(child).replace("\n", "\n  "))
        lines.append(")")
        return "\n".join(lines) if self._children else f"{type(self).__name__}()"


class HybridBlock(Block):
    def forward(self, x, *args):
        if type(self).hybrid_forward is HybridBlock.hybrid_forward:
            raise NotImplementedError(f"{type(self).__name__} must implement forward or "
                                      "hybrid_forward")
        import ndx
        self._infer_params(x, *args)
        params = {name: p.data() for name, p in self._reg_params.items()}
        return self.hybrid_forward(ndx, x, *args, **params)

    def _infer_params(self, x, *args):
        """Layers with deferred parameters finish them here from the input's shape."""

    def hybrid_forward(self, F, x, *args, **kwargs):
        raise NotImplementedError

    def export(self, path, epoch=0):
        raise NotImplementedError("[export] graph export needs graph capture (hybridize), which "
                                  "is not implemented yet")


def _atomic_dir(path):
    return os.path.dirname(os.path.abspath(path))
