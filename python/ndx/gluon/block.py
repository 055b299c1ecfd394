"""Block and HybridBlock. A block's forward is either `forward(self, x, ...)` or, as in
MXNet 1.x, `hybrid_forward(self, F, x, ..., **params)` with the block's parameters passed by
name and F the operator namespace `F` below: MXNet's legacy ops (mx.nd's F.relu,
F.FullyConnected, F.broadcast_add, ...) plus F.np and F.npx, the same in imperative and in
hybridized calls."""
import functools
import inspect
import os
import threading
from collections import OrderedDict
from types import MappingProxyType, ModuleType

import numpy as _onp

from .. import _core, autograd
from .. import numpy as np
from .. import numpy_extension as _npx  # noqa: F401  (F.npx)
from ..nd.ndarray import NDArray as _NDArray
from ..numpy_extension import _control_flow
from .parameter import _CALL, _TRACING, DeferredInitializationError, Parameter, ParameterDict
from .serialization import load_param_dict, save_tensors

# Bumped whenever a block gains a child or a parameter: a hybridized block's input binding
# (which Parameter feeds which graph input) is reused until then.
_STRUCTURE = [0]

__all__ = ["Block", "HookHandle", "HybridBlock", "SymbolBlock"]


class _OpNamespace(ModuleType):
    """The F of hybrid_forward(self, F, x): MXNet 1.x's imperative F is mx.nd and its
    hybridized F is mx.sym, which offer the same legacy operators; in ndx both calls run
    the same ops (a hybridized block traces them), so F is one namespace. Its names are
    ndx.nd's (MXNet's legacy operators: relu, Activation, FullyConnected, dot, concat,
    softmax, broadcast_add, ..., returning mx.nd.NDArrays), F.np (ndx.numpy) and F.npx
    (ndx.numpy_extension), as MXNet 2.0 code with use_np writes them, then the rest of the
    ndx module (F.random, F.autograd, ...)."""

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        from .. import nd
        value = getattr(nd, name, _MISSING)
        if value is _MISSING:
            import ndx
            value = getattr(ndx, name, _MISSING)
        if value is _MISSING:
            raise AttributeError(f"[hybrid_forward] F has no operator {name!r} (F offers "
                                 "mx.nd's legacy operators, F.np and F.npx)")
        setattr(self, name, value)
        return value

    def __dir__(self):
        from .. import nd
        return sorted(set(super().__dir__()) | set(dir(nd)))


_MISSING = object()
F = _OpNamespace("ndx.gluon.F", _OpNamespace.__doc__)
F.np = np
F.npx = _npx

# ---- MXNet 1.x's naming: name_scope() and prefixes ----
_NAMING = threading.local()
_GLOBAL_COUNTS = {}


def _scope_stack():
    stack = getattr(_NAMING, "stack", None)
    if stack is None:
        stack = _NAMING.stack = []
    return stack


class _NameScope:
    """What Block.name_scope() returns: blocks created inside get prefixes under the
    block's (MXNet 1.x); parameter keys are unaffected."""

    def __init__(self, block):
        self._block = block

    def __enter__(self):
        _scope_stack().append(self._block)
        return self

    def __exit__(self, *exc):
        _scope_stack().pop()


class HookHandle:
    """What register_forward_hook / register_forward_pre_hook return (MXNet's
    gluon.utils.HookHandle): detach() removes the hook; as a context manager, the hook is
    removed on leaving the block."""

    _next_id = 0

    def __init__(self):
        self._hooks = None
        self._id = None

    def attach(self, hooks_dict, hook):
        if self._hooks is not None:
            raise RuntimeError("[HookHandle] the handle is already attached to a hook")
        if not callable(hook):
            raise TypeError(f"[HookHandle] hook must be callable, got {type(hook).__name__}")
        HookHandle._next_id += 1
        self._id = HookHandle._next_id
        self._hooks = hooks_dict
        hooks_dict[self._id] = hook

    def detach(self):
        """Removes the hook (a second call does nothing)."""
        if self._hooks is not None:
            self._hooks.pop(self._id, None)
            self._hooks = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.detach()


class Block:
    # Empty and read-only for blocks whose __init__ skipped Block's (register_* then adds the
    # block's own dicts).
    _forward_hooks = _forward_pre_hooks = MappingProxyType({})

    def __init__(self, prefix=None, params=None):
        """prefix / params: MXNet 1.x's. prefix names the block (see `prefix`); params, a
        dict of parameters (another block's .params or collect_params()), is where
        self.params.get(name) looks before creating a parameter, which shares it; a
        Parameter assigned as an attribute (self.weight = Parameter('weight', ...)) whose
        name is in params is replaced by that one, so gluon's layers share too
        (nn.Dense(8, params=shared.params), as MXNet 1.x)."""
        pending = _PENDING_1X.pop(id(self), None)
        if pending is not None:
            prefix = pending[0] if prefix is None else prefix
            params = pending[1] if params is None else params
        object.__setattr__(self, "_children", OrderedDict())
        if params is not None and not isinstance(params, dict):
            raise TypeError(f"[Block] params must be a ParameterDict (a dict of name -> "
                            f"Parameter), got {type(params).__name__}")
        object.__setattr__(self, "_prefix", _new_prefix(self, prefix))
        object.__setattr__(self, "_reg_params", ParameterDict(self._prefix, params, _block=self))
        object.__setattr__(self, "_got_params", set())
        object.__setattr__(self, "_forward_hooks", OrderedDict())
        object.__setattr__(self, "_forward_pre_hooks", OrderedDict())

    def __setattr__(self, name, value):
        _check_replacement(self, name, value)
        if isinstance(value, Block):
            self._children[name] = value
            _STRUCTURE[0] += 1
        elif isinstance(value, Parameter):
            reg = self.__dict__.get("_reg_params")
            shared = getattr(reg, "_shared", None)
            if shared is not None and name in shared and shared[name] is not value:
                value = _shared_param(shared[name], value, name)
            # A parameter made by self.params.get('weight') and kept as self.w is known by
            # its attribute name (hybrid_forward's keyword), as in MXNet 1.x.
            got = self.__dict__.get("_got_params", ())
            for key in [k for k in got
                        if k != name and OrderedDict.get(self._reg_params, k) is value]:
                del self._reg_params[key]
                got.discard(key)
            self._reg_params[name] = value
            _STRUCTURE[0] += 1
        object.__setattr__(self, name, value)

    def _register_param(self, name, param):
        """self.params.get(name) created or found `param`: a parameter of this block."""
        OrderedDict.__setitem__(self._reg_params, name, param)
        self._got_params.add(name)
        _STRUCTURE[0] += 1

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        init = cls.__dict__.get("__init__")
        if init is not None and cls.__module__.startswith("ndx.gluon") and \
                not _takes_1x_kwargs(init):
            cls.__init__ = _accepting_1x_kwargs(init)

    def _alias(self):
        """The base of MXNet 1.x's default prefix: the lower-cased class name (1.x's
        convolutions say 'conv' and its poolings 'pool')."""
        return type(self).__name__.lower()

    @property
    def prefix(self):
        """MXNet 1.x's prefix: the class name, lower-cased, and a count ('dense0_'), under
        the prefix of the block whose name_scope() it was created in ('mlp0_dense0_'), or
        the prefix given to the constructor. ndx names parameters by structure
        ('0.weight'), not by prefix; the prefix is for display."""
        return self.__dict__.get("_prefix", "")

    @property
    def name(self):
        """The prefix without its trailing '_' ('dense0')."""
        prefix = self.prefix
        return prefix[:-1] if prefix.endswith("_") else prefix

    @name.setter
    def name(self, value):  # (a subclass may keep its own `name` attribute)
        object.__setattr__(self, "_prefix", f"{value}_")

    def name_scope(self):
        """MXNet 1.x's `with self.name_scope():` around the creation of child blocks: they
        get prefixes under this block's (see `prefix`). Parameter keys do not change: they
        are structured names (the attribute path) whether or not a name scope is used."""
        return _NameScope(self)

    def register_child(self, block, name=None):
        if not isinstance(block, Block):
            raise TypeError(f"[{type(self).__name__}] children (add / register_child) must be "
                            f"Blocks, got {type(block).__name__}")
        name = name if name is not None else str(len(self._children))
        self._children[name] = block
        _STRUCTURE[0] += 1
        return block

    @property
    def params(self):
        """This block's own parameters (not its children's), by attribute name: a
        ParameterDict, whose get(name, shape=..., init=...) creates a parameter of this
        block (MXNet 1.x's self.params.get)."""
        return self._reg_params

    def collect_params(self, select=None):
        """{structured name: Parameter} of this block and its children ('0.weight', ...).
        select: a regular expression; as in MXNet 2.0, only the names it matches from their
        start (re.match) are kept, e.g. '.*weight|.*bias' or 'conv1.weight'.
        A ParameterDict: a dict, with MXNet 1.x's initialize, zero_grad, setattr, reset_ctx,
        save, load, ... acting on every parameter in it."""
        out = ParameterDict(self.prefix)
        for name, p in self._reg_params.items():
            out[name] = p
        for cname, child in self._children.items():
            for name, p in child.collect_params().items():
                out[f"{cname}.{name}"] = p
        if select is not None:
            import re
            if not isinstance(select, str):
                raise TypeError(f"[collect_params] select must be a regular expression string, "
                                f"got {type(select).__name__}")
            try:
                pattern = re.compile(select)
            except re.error as e:
                raise ValueError(f"[collect_params] select {select!r} is not a valid regular "
                                 f"expression: {e}") from None
            selected = ParameterDict(self.prefix)
            OrderedDict.update(selected, ((k, v) for k, v in out.items() if pattern.match(k)))
            out = selected
        return out

    # ---- hooks and recursive helpers (MXNet 2.0) ----
    def register_forward_pre_hook(self, hook):
        """Calls hook(block, inputs) before each forward (inputs: the tuple of positional
        arguments); returns a HookHandle whose detach() removes it. Hooks run at the block
        called from Python: inside a hybridized block's replayed graph, children's hooks do
        not run."""
        handle = HookHandle()
        handle.attach(self._own_hooks("_forward_pre_hooks"), hook)
        return handle

    def register_forward_hook(self, hook):
        """Calls hook(block, inputs, output) after each forward; returns a HookHandle."""
        handle = HookHandle()
        handle.attach(self._own_hooks("_forward_hooks"), hook)
        return handle

    def _own_hooks(self, name):
        hooks = self.__dict__.get(name)
        if hooks is None:
            hooks = OrderedDict()
            object.__setattr__(self, name, hooks)
        return hooks

    def _call_hooked(self, run, args, kwargs):
        """run(*args, **kwargs) between the forward pre-hooks and hooks (none while a graph is
        being traced: the hooks would see the tracer's stand-ins)."""
        if not (self._forward_pre_hooks or self._forward_hooks) or _core._is_tracing():
            return run(*args, **kwargs)
        for hook in list(self._forward_pre_hooks.values()):
            hook(self, args)
        out = run(*args, **kwargs)
        for hook in list(self._forward_hooks.values()):
            hook(self, args, out)
        return out

    def apply(self, fn):
        """Calls fn(block) on every child block, recursively, then on this one; returns self."""
        for child in self._children.values():
            child.apply(fn)
        fn(self)
        return self

    def zero_grad(self):
        """Sets the gradient of every parameter (grad_req other than 'null') to 0."""
        seen = set()
        for p in self.collect_params().values():
            if id(p) not in seen:
                seen.add(id(p))
                p.zero_grad()

    def cast(self, dtype):
        """Casts every parameter's data (and gradient) of this block and its children to
        dtype; graphs captured for the old dtype are dropped. As MXNet's, each child's own
        cast() is called (BatchNorm's keeps float32 for float16)."""
        for child in self._children.values():
            child.cast(dtype)
        for p in self._reg_params.values():
            p.cast(dtype)
        _forget_graphs(self)

    def setattr(self, name, value):
        """Sets attribute `name` of every parameter, e.g. net.setattr('grad_req', 'null')."""
        for p in self.collect_params().values():
            setattr(p, name, value)

    def share_parameters(self, shared):
        """Makes this block use the Parameter objects of `shared` (a dict of structured name
        -> Parameter, as collect_params() returns): tied, so an update through either block
        shows in both. Names the block lacks warn (UserWarning), as in MXNet. Returns self."""
        if shared is None:
            return self
        if not isinstance(shared, dict):
            raise ValueError(f"[share_parameters] shared must be a dict of name -> Parameter, "
                             f"got {type(shared).__name__}")
        for name, p in shared.items():
            if not isinstance(p, Parameter):
                raise TypeError(f"[share_parameters] shared[{name!r}] must be a Parameter, got "
                                f"{type(p).__name__}")
        left = set(shared)
        self._share(shared, left, "")
        for name in sorted(left):
            import warnings
            warnings.warn(f"[share_parameters] parameter {name!r} is not in the model",
                          UserWarning, stacklevel=2)
        _forget_graphs(self)
        return self

    def _share(self, shared, left, prefix):
        for name in list(self._reg_params):
            key = prefix + name
            if shared.get(key) is not None:
                setattr(self, name, shared[key])  # __setattr__ registers it
                left.discard(key)
        for cname, child in self._children.items():
            child._share(shared, left, f"{prefix}{cname}.")

    def summary(self, *inputs):
        """Runs the block on `inputs` and prints MXNet's table: each layer (class and call
        order; Sequential containers are left out) with its output shape and its own
        parameter count, then the totals (duplicates of shared parameters included), the
        trainable ones (grad_req other than 'null'), the shared ones and the unique total.
        The block must be initialized and not hybridized."""
        summary, seen, handles = OrderedDict(), set(), []
        summary["Input"] = {"output_shape": _shape_str(inputs), "n_params": 0, "trainable": 0,
                            "shared": 0}

        def hook(block, _, outputs):
            row = {"output_shape": _shape_str(outputs), "n_params": 0, "trainable": 0,
                   "shared": 0}
            for p in block.params.values():
                size = Parameter.data(p).size  # (a row_sparse weight's too)
                row["n_params"] += size
                row["trainable"] += 0 if p.grad_req == "null" else size
                if id(p) in seen:
                    row["shared"] += size
                seen.add(id(p))
            summary[f"{type(block).__name__}-{len(summary)}"] = row

        def register(block):
            if isinstance(block, HybridBlock) and block._active:
                raise ValueError(f"[summary] {type(block).__name__} is hybridized: call "
                                 "hybridize(False) (or summary() before hybridize())")
            from .nn.basic_layers import HybridSequential, Sequential
            if not isinstance(block, (Sequential, HybridSequential)):
                handles.append(block.register_forward_hook(hook))

        try:
            self.apply(register)
            self(*inputs)
            _print_summary(summary)
        finally:
            for h in handles:
                h.detach()

    def initialize(self, init=None, device=None, verbose=False, force_reinit=False, ctx=None):
        """Initializes every parameter (on `device`, MXNet 1.x's `ctx`, the CPU by default)."""
        self.collect_params().initialize(init, device=device if device is not None else ctx,
                                         force_reinit=force_reinit)  # (shared ones once)

    def reset_device(self, device):
        """Moves every parameter (data and gradient) of this block and its children to
        `device`, or to one copy per device of a list (MXNet 2.0's reset_device; reset_ctx
        is its 1.x name)."""
        seen = set()
        for p in self.collect_params().values():
            if id(p) not in seen:
                seen.add(id(p))
                p.reset_device(device)
        _forget_graphs(self)

    def reset_ctx(self, ctx):
        """MXNet 1.x's name of reset_device."""
        self.reset_device(ctx)

    def hybridize(self, active=True, static_alloc=False, static_shape=False, **kwargs):
        """Blocks are plain Python; HybridBlocks capture their forward into a graph on the next
        call and replay it through the cached executor (see HybridBlock)."""
        for child in self._children.values():
            child.hybridize(active, static_alloc=static_alloc, static_shape=static_shape)

    def __call__(self, *args, **kwargs):
        if Parameter._multi:  # (some parameter has copies on several devices)
            scope = _device_scope(args, kwargs, type(self).__name__, strict=False)
            if scope is not None:
                with scope:
                    return Block.__call__(self, *args, **kwargs)
        if self._forward_pre_hooks or self._forward_hooks:
            return _legacy_if(args, self._call_hooked(self.forward, args, kwargs))
        return _legacy_if(args, self.forward(*args, **kwargs))

    def forward(self, *args):
        raise NotImplementedError(f"{type(self).__name__} must implement forward")

    def save_parameters(self, filename, deduplicate=False, *, format="safetensors"):  # noqa: A002
        """Writes every parameter by its structured name ('0.weight', ...), atomically (temp
        file, rename). format='safetensors' (ndx's own layout), 'mxnet' (MXNet's NDArray list,
        as mx.nd.save writes: MXNet 1.x and 2.0 load it) or 'npz' (what MXNet 2.0 writes in
        NumPy mode). deduplicate=True saves a parameter shared by several blocks once, under
        its first name, as in MXNet."""
        tensors, seen = OrderedDict(), set()
        for name, p in self.collect_params().items():
            if deduplicate and id(p) in seen:
                continue
            seen.add(id(p))
            tensors[name] = p._reduce()
        save_tensors(filename, tensors, format, "save_parameters")

    def load_parameters(self, filename, device=None, allow_missing=False, ignore_extra=False,
                        cast_dtype=False, dtype_source="current", ctx=None):
        """Reads a file written by save_parameters: ndx's safetensors, or MXNet's own
        parameter files (the NDArray list of mx.nd.save / MXNet 1.x save_parameters, or the
        .npz of MXNet 2.0), told apart by their first bytes. As in MXNet, an 'arg:' or 'aux:'
        prefix on a name (export's files) is dropped. Every check happens before any
        parameter changes, so a bad file leaves the block as it was.

        As in MXNet, a parameter whose saved dtype differs from its own is an error unless
        cast_dtype=True; then dtype_source='current' casts the saved values to the
        parameter's dtype and dtype_source='saved' makes the parameter take the saved dtype.
        A saved shape must match the parameter's (dimensions still unknown, 0, are taken from
        the file). device (MXNet 1.x's ctx): where parameters not initialized yet are put
        (already initialized ones keep their device); a list of devices makes one copy on
        each, as initialize(ctx=[...]) does."""
        device = device if device is not None else ctx
        _check_dtype_source(dtype_source, "load_parameters")
        self._load_loaded(load_param_dict(filename), f"{filename}: ", "load_parameters", device,
                          allow_missing, ignore_extra, cast_dtype, dtype_source)

    def load_dict(self, param_dict, device=None, allow_missing=False, ignore_extra=False,
                  cast_dtype=False, dtype_source="current", ctx=None):
        """Sets the parameters from a {structured name: array} dict (what
        collect_params() names them, e.g. '0.weight'; ndx or NumPy arrays), with
        load_parameters' rules: an 'arg:' / 'aux:' prefix on a name is dropped; names missing
        from the dict are an error unless allow_missing, names the block lacks are an error
        unless ignore_extra; a dtype differing from the parameter's needs cast_dtype=True
        (then dtype_source 'current' keeps the parameter's dtype, 'saved' takes the dict's);
        shapes must match. Every check happens before any parameter changes."""
        device = device if device is not None else ctx
        _check_dtype_source(dtype_source, "load_dict")
        if not isinstance(param_dict, dict):
            raise TypeError(f"[load_dict] param_dict must be a dict of name -> array, got "
                            f"{type(param_dict).__name__}")
        loaded = {}
        for name, value in param_dict.items():
            if not isinstance(name, str):
                raise TypeError(f"[load_dict] parameter names must be str, got {name!r}")
            key = name[4:] if name.startswith(("arg:", "aux:")) else name
            if key in loaded:
                raise ValueError(f"[load_dict] parameter {key!r} is given twice (with and "
                                 "without an 'arg:' / 'aux:' prefix)")
            if isinstance(value, _onp.ndarray):
                value = np.array(value, dtype=value.dtype)
            elif not isinstance(value, np.ndarray):
                raise TypeError(f"[load_dict] parameter {name!r} must be an ndx or NumPy "
                                f"array, got {type(value).__name__}")
            loaded[key] = value
        self._load_loaded(loaded, "", "load_dict", device, allow_missing, ignore_extra,
                          cast_dtype, dtype_source)

    def _load_loaded(self, loaded, source, who, device, allow_missing, ignore_extra,
                     cast_dtype, dtype_source):
        """load_parameters / load_dict on {name: array}; `source` prefixes the messages."""
        if _load_into(self.collect_params(), loaded, source, who, device, allow_missing,
                      ignore_extra, cast_dtype, dtype_source):
            _forget_graphs(self)  # graphs captured for the old dtypes no longer apply

    def __repr__(self):
        lines = [f"{type(self).__name__}("]
        for name, child in self._children.items():
            lines.append(f"  ({name}): " + repr(child).replace("\n", "\n  "))
        lines.append(")")
        return "\n".join(lines) if self._children else f"{type(self).__name__}()"


def _load_into(params, loaded, source, who, device, allow_missing, ignore_extra, cast_dtype,
               dtype_source):
    """Sets the parameters of `params` ({name: Parameter}) from `loaded` ({name: array}) after
    checking names, shapes and dtypes (see Block.load_parameters); `source` prefixes the
    messages. True when a parameter took the saved dtype (graphs captured before are
    stale)."""
    where = "the file" if source else "param_dict"
    names_of = {}  # a parameter shared by several blocks counts as present under any name
    for n, p in params.items():
        names_of.setdefault(id(p), []).append(n)
    missing = [n for n, p in params.items()
               if not any(a in loaded for a in names_of[id(p)])]
    extra = [n for n in loaded if n not in params]
    if missing and not allow_missing:
        raise ValueError(f"[{who}] {source}parameters missing from {where}: "
                         f"{missing[:5]}{' ...' if len(missing) > 5 else ''}")
    if extra and not ignore_extra:
        raise ValueError(f"[{who}] {source}{where} has parameters the block "
                         f"lacks: {extra[:5]}{' ...' if len(extra) > 5 else ''}")
    updates = []
    for name, p in params.items():
        if name not in loaded:
            continue
        data = loaded[name]
        saved_shape = tuple(data.shape)
        if p.shape is not None and (
                len(p.shape) != len(saved_shape)
                or any(d > 0 and d != s for d, s in zip(p.shape, saved_shape))):
            raise ValueError(f"[{who}] {source}parameter {name!r} has shape "
                             f"{saved_shape} in {where}, the block expects {p.shape}")
        current = p._current_dtype()
        saved = str(data.dtype)
        retype = False
        if current is not None and saved != current:
            if not cast_dtype:
                raise ValueError(f"[{who}] {source}parameter {name!r} is "
                                 f"{saved} in {where}, the block's is {current}; pass "
                                 "cast_dtype=True to cast it (dtype_source='current' "
                                 "keeps the block's dtype, 'saved' takes the file's)")
            if dtype_source == "current":
                data = data.astype(str(current))
            else:
                retype = True
        updates.append((p, data, retype))
    for p, data, retype in updates:
        if p._data is None and device is not None:
            p._set_devices(device)
        if retype:
            p._replace_data(data)
        else:
            p.set_data(data)
    return any(retype for _, _, retype in updates)



# id(block) -> (prefix, params): MXNet 1.x's constructor keywords given to one of gluon's
# layers, whose own __init__ does not take them, for Block.__init__ to apply.
_PENDING_1X = {}


def _takes_1x_kwargs(init):
    try:
        sig = inspect.signature(init)
    except (TypeError, ValueError):
        return True
    return any(p.kind is p.VAR_KEYWORD or p.name in ("prefix", "params")
               for p in sig.parameters.values())


def _accepting_1x_kwargs(init):
    """Wraps the __init__ of a gluon layer so that it takes MXNet 1.x's prefix= and params=
    keywords (every 1.x layer passed **kwargs on to Block): they reach Block.__init__."""
    @functools.wraps(init)
    def __init__(self, *args, **kwargs):
        if "prefix" not in kwargs and "params" not in kwargs:
            return init(self, *args, **kwargs)
        key = id(self)
        outer = key not in _PENDING_1X
        if outer:
            _PENDING_1X[key] = (kwargs.pop("prefix", None), kwargs.pop("params", None))
        else:
            kwargs.pop("prefix", None)
            kwargs.pop("params", None)
        try:
            return init(self, *args, **kwargs)
        finally:
            if outer:
                _PENDING_1X.pop(key, None)
    return __init__


def _check_replacement(block, name, value):
    """MXNet's rule: a child block or a parameter attribute cannot be replaced by something
    else (net.fc = None would leave the old child in collect_params and save_parameters)."""
    existing = block.__dict__.get(name)
    for kind in (Block, Parameter):
        if isinstance(existing, kind) and not isinstance(value, kind):
            raise TypeError(f"[{type(block).__name__}] changing attribute {name!r} from "
                            f"{type(existing).__name__} to {type(value).__name__} is not "
                            f"allowed (a {kind.__name__} attribute takes a {kind.__name__})")


def _shared_param(shared, own, name):
    """The parameter of a params= dict that replaces a layer's own `own` (MXNet 1.x sharing):
    it must have a compatible shape."""
    if shared.shape is not None and own.shape is not None:
        if len(shared.shape) != len(own.shape) or any(
                a > 0 and b > 0 and a != b for a, b in zip(shared.shape, own.shape)):
            raise ValueError(f"[Block] cannot share parameter {name!r}: shape {shared.shape} "
                             f"of the shared one differs from {own.shape}")
    return shared


def _new_prefix(block, prefix):
    """MXNet 1.x's block prefix: the given one or the lower-cased class name and a count
    ('dense0_'), under the prefix of the block whose name_scope() is open."""
    stack = _scope_stack()
    parent = stack[-1] if stack else None
    base = parent.prefix if parent is not None else ""
    if prefix is not None:
        return base + str(prefix)
    hint = block._alias()
    counts = _GLOBAL_COUNTS if parent is None else parent.__dict__.setdefault("_name_counts", {})
    count = counts.get(hint, 0)
    counts[hint] = count + 1
    return f"{base}{hint}{count}_"


def _shape_str(values):
    """MXNet's summary text for an output: its shape, or the shapes of a list / tuple of
    outputs (nested as they are) without the outer brackets."""
    def shapes(v):
        if isinstance(v, (list, tuple)):
            return [shapes(x) for x in v]
        return tuple(v.shape) if hasattr(v, "shape") else v
    s = shapes(values)
    return str(s)[1:-1] if isinstance(s, list) else str(s)


def _print_summary(summary):
    line = "{:>20}  {:>42} {:>15}"
    print("-" * 80)
    print(line.format("Layer (type)", "Output Shape", "Param #"))
    print("=" * 80)
    total = trainable = shared = 0
    for name, row in summary.items():
        print(line.format(name, str(row["output_shape"]), row["n_params"]))
        total += row["n_params"]
        trainable += row["trainable"]
        shared += row["shared"]
    print("=" * 80)
    print("Parameters in forward computation graph, duplicate included")
    print(f"   Total params: {total}")
    print(f"   Trainable params: {trainable}")
    print(f"   Non-trainable params: {total - trainable}")
    print(f"Shared params in forward computation graph: {shared}")
    print(f"Unique parameters in model: {total - shared}")
    print("-" * 80)


def _check_dtype_source(dtype_source, who):
    if dtype_source not in ("current", "saved"):
        raise ValueError(f"[{who}] dtype_source must be 'current' or 'saved', got "
                         f"{dtype_source!r}")


# Held while a block traces its forward (re-entered by nested blocks), and around the
# count of threads tracing.
_TRACE_LOCK = threading.RLock()


def _new_trace_lock():  # a forked child (a DataLoader worker) must not inherit a held lock
    global _TRACE_LOCK
    _TRACE_LOCK = threading.RLock()


os.register_at_fork(after_in_child=_new_trace_lock)


def _flatten_io(obj, what, name):
    """(the arrays of a nested list / tuple structure in order, None for each None, its
    format): a leaf array is 0, None is -1, a list / tuple is ('list' | 'tuple', formats)."""
    if isinstance(obj, np.ndarray):
        return [obj], 0
    if obj is None:
        return [None], -1
    if getattr(obj, "stype", None) in ("csr", "row_sparse") and hasattr(obj, "tostype"):
        # a sparse array (mx.nd.sparse): graphs compute on its dense value (MXNet's storage
        # fallback), as symbols do
        return [obj.tostype("default")], 0
    if not isinstance(obj, (list, tuple)):
        raise TypeError(f"[hybridize] {name} {what}s must be ndarrays, lists / tuples of "
                        f"them, or None, got {type(obj).__name__}")
    flat, fmts = [], []
    for item in obj:
        f, fmt = _flatten_io(item, what, name)
        flat += f
        fmts.append(fmt)
    return flat, ("list" if isinstance(obj, list) else "tuple", tuple(fmts))


def _regroup(flat, fmt):
    """The structure `fmt` (from _flatten_io) rebuilt from the arrays in `flat` (Nones are
    not in it)."""
    it = iter(flat)

    def build(f):
        if f == 0:
            return next(it)
        if f == -1:
            return None
        kind, parts = f
        items = [build(p) for p in parts]
        return items if kind == "list" else tuple(items)
    return build(fmt)


# The subgraph backends ndx takes: MXNet's oneDNN ones, whose kernels ndx runs anyway.
_ONEDNN_BACKENDS = ("ONEDNN", "MKLDNN")


def _check_backend(method, block, backend):
    if backend is None or (isinstance(backend, str) and backend.upper() in _ONEDNN_BACKENDS):
        return
    raise NotImplementedError(
        f"[{method}] {block}: backend {backend!r} is not available; ndx has no subgraph "
        "backends to partition a graph for other than MXNet's oneDNN one ('ONEDNN', whose "
        "kernels and convolution fusions every hybridized block gets). Use backend=None or "
        "'ONEDNN'.")


def _forget_graphs(block):
    """Drops the graphs a block tree captured, so the next call traces again."""
    _STRUCTURE[0] += 1
    if isinstance(block, HybridBlock):
        object.__setattr__(block, "_graphs", {})
        object.__setattr__(block, "_bound", {})
        if "_last_graph" in block.__dict__:
            object.__delattr__(block, "_last_graph")
    for child in block._children.values():
        _forget_graphs(child)


class HybridBlock(Block):
    """A block whose forward can be captured as a graph. After hybridize(), each call looks up
    a graph for its input signature (shapes, dtypes, training mode), tracing the forward once
    when there is none, and replays it through the C++ executor: no Python runs per op, and
    under autograd.record() the replayed ops are recorded, so gradients flow as before."""

    def __init__(self, prefix=None, params=None):
        super().__init__(prefix, params)
        object.__setattr__(self, "_active", False)
        object.__setattr__(self, "_graphs", {})
        object.__setattr__(self, "_bound", {})

    def __getstate__(self):
        """copy.deepcopy / pickle: the captured graphs are compiled state (handles into the
        C++ core), left out; the copy traces again on its first call."""
        state = dict(self.__dict__)
        state["_graphs"], state["_bound"] = {}, {}
        state.pop("_last_graph", None)
        return state

    def __setstate__(self, state):
        self.__dict__.update(state)

    def hybridize(self, active=True, static_alloc=False, static_shape=False, **kwargs):
        _check_backend("hybridize", type(self).__name__, kwargs.get("backend"))
        object.__setattr__(self, "_active", active)
        object.__setattr__(self, "_graphs", {})
        object.__setattr__(self, "_bound", {})
        super().hybridize(active, static_alloc=static_alloc, static_shape=static_shape)

    def __call__(self, *args):
        if Parameter._multi:  # (some parameter has copies on several devices)
            scope = _device_scope(args, None, type(self).__name__, strict=True)
            if scope is not None:
                with scope:
                    return HybridBlock.__call__(self, *args)
        if type(self).infer_shape is not HybridBlock.infer_shape and any(
                p._data is None and p._deferred is not None for p in self._reg_params.values()):
            self._user_infer_shape(args)
        run = self._call_graph if self._active and not _core._is_tracing() else self.forward
        if self._forward_pre_hooks or self._forward_hooks:
            return _legacy_if(args, self._call_hooked(run, args, {}))
        out = run(*args)
        for a in args:  # (_legacy_if inline: this is every layer's call)
            if type(a) is _NDArray:
                return _as_legacy(out)
        return out

    def forward(self, x, *args):
        if type(self).hybrid_forward is HybridBlock.hybrid_forward:
            raise NotImplementedError(f"{type(self).__name__} must implement forward or "
                                      "hybrid_forward")
        self._infer_params(x, *args)
        params = {name: p.data() for name, p in self._reg_params.items()}
        return self.hybrid_forward(F, x, *args, **params)

    def _infer_params(self, x, *args):
        """Layers with deferred parameters finish them here from the input's shape."""

    def infer_shape(self, *args):
        """MXNet 2.0's hook for blocks whose forward uses Parameters of unknown shape: set
        their shapes from the inputs here (self.weight.shape = (units, x.shape[-1])). It
        runs at the first call that finds such a parameter uninitialized, before forward;
        the parameters are then created with their initializers."""

    def infer_type(self, *args):
        """Settles the parameters' dtypes (and deferred shapes) from example inputs, as
        MXNet's infer_type does: a forward pass in predict mode under autograd.pause, so no
        running statistics change, no dropout mask is drawn and nothing is recorded. ndx's
        parameters keep the dtype they were made with (dtype=..., or cast()); inputs whose
        dtype the layers cannot combine with them raise here, as at the first call."""
        with autograd.pause(train_mode=False):
            self.forward(*args)

    def optimize_for(self, x, *args, backend=None, clear=False, partition_if_dynamic=True,
                     static_alloc=False, static_shape=False, inline_limit=2,
                     forward_bulk_size=None, backward_bulk_size=None, **kwargs):
        """MXNet 2.0's optimize_for: hybridizes the block and captures its graph for the
        inputs' signature (a predict-mode pass under autograd.pause), so the next call with
        such inputs replays it. Returns None, as MXNet's does. backend 'ONEDNN' (or 'MKLDNN')
        is accepted: every hybridized block gets what it asks for, convolutions and pooling
        on oneDNN and, in inference, a convolution fused with the BatchNorm, residual add and
        relu after it (as MXNet's oneDNN subgraph backend fuses them; fusion off:
        npx.set_fusion(False)). Other backends (TensorRT, ...) raise NotImplementedError.
        clear=True drops the graphs captured before."""
        _check_backend("optimize_for", type(self).__name__, backend)
        if clear or not self._active:
            self.hybridize(True, static_alloc=static_alloc, static_shape=static_shape)
        with autograd.pause(train_mode=False):
            self(x, *args)

    def _user_infer_shape(self, args):
        self.infer_shape(*args)
        for p in self._reg_params.values():
            if p._data is None and p._deferred is not None:
                if not p._shape_known():
                    raise DeferredInitializationError(
                        f"[{type(self).__name__}.infer_shape] left parameter {p.name!r} with "
                        f"unknown shape {p.shape}: set its shape from the inputs")
                p._finish_deferred_init()

    def hybrid_forward(self, F, x, *args, **kwargs):
        raise NotImplementedError

    # ---- graph capture ----
    def _signature(self, args, fmt=None):
        key = []
        for a in args:
            if not isinstance(a, np.ndarray):
                raise TypeError(f"[hybridize] {type(self).__name__} inputs must be ndarrays "
                                f"(or lists / tuples of them, or None), got "
                                f"{type(a).__name__}")
            key += (a.shape, a.dtype)
        if Parameter._multi and args:  # (a graph per device: each runs that device's copies)
            key.append(str(args[0].device))
        key.append(autograd.is_training())
        if fmt is not None:
            key.append(fmt)
        return tuple(key)

    def _trace(self, args, fmt=None):
        params = self.collect_params()
        try:
            for p in params.values():
                p.data()
        except DeferredInitializationError:
            # One imperative pass settles the deferred shapes; in predict mode, so that it
            # updates no running statistics (BatchNorm's) and draws no dropout masks.
            with autograd.pause(train_mode=False), _control_flow.settling():
                self.forward(*args)
        # Inputs given as mx.nd.NDArrays are traced as NDArrays, so their methods keep MXNet's
        # legacy semantics (x.reshape((0, -1))) as in an imperative call.
        traced_args = [_like(a, _core._trace_input(a, n))
                       for a, n in zip(args, _data_names(len(args)))]
        # (by name, for the subgraphs of npx.cond / while_loop to find what they capture)
        variables = dict(zip(_data_names(len(args)), traced_args))
        if fmt is not None:  # (nested inputs: the forward gets them in their structure)
            traced_args = _regroup(traced_args, fmt)
        traced = {p: _core._trace_input(p.data(), name) for name, p in params.items()}
        variables.update((name, traced[p]) for name, p in params.items())
        # Tracing runs the ops once; states the ops update in place (running statistics, the
        # inputs of an update op such as sgd_mom_update) are put back, so the call that traced
        # updates them once, as every later call does.
        states = [(p.data(), p.data().copy()) for p in params.values() if not p.differentiable]
        # (a read-only input, such as a broadcast_to view, cannot have been updated in place)
        states += [(a, a.copy()) for a in args if a.flags.writeable]
        functions_before = autograd._traced_function_calls()
        nodes_before = _control_flow.traced_nodes()
        prev_tracing = _core._set_tracing(True)
        prev_params, _TRACING.params = _TRACING.params, traced
        with _TRACE_LOCK:
            Parameter._tracing += 1
        try:
            with autograd.pause(train_mode=autograd.is_training()), \
                    _control_flow.trace_scope(variables):
                out = self.forward(*traced_args)
        finally:
            _core._set_tracing(prev_tracing)
            _TRACING.params = prev_params
            with _TRACE_LOCK:
                Parameter._tracing -= 1
            with autograd.pause():  # (an input may have an attached gradient)
                for array, value in states:
                    array[...] = value
        single = not isinstance(out, (list, tuple))
        outs = [out] if single else list(out)
        out_fmt = None
        if not single and any(not isinstance(o, np.ndarray) for o in outs):
            # nested outputs ((out, [h, c]), as RNN models return): the graph's outputs are
            # the arrays in order, regrouped into the structure on every call
            outs, out_fmt = _flatten_io(out, "output", type(self).__name__)
            if any(o is None for o in outs):
                raise TypeError(f"[hybridize] {type(self).__name__} outputs must be ndarrays "
                                "or lists / tuples of them, got None")
        graph = _core._graph_from_outputs(outs)
        # Which outputs the forward returned as mx.nd.NDArrays: replays return them so too.
        legacy = tuple(_is_legacy(o) for o in outs)
        # An autograd.Function traced as its forward's ops: runs under autograd are refused
        functions = autograd._traced_function_calls() != functions_before
        # (graphs with npx.cond / while_loop nodes: their operators are told whether a call
        # records, which they cannot see from inside the graph)
        control = _control_flow.traced_nodes() != nodes_before
        return graph, _core._graph_inputs(graph), (single, legacy, out_fmt, functions, control)

    def _traced(self, key, args, fmt=None, again=False):
        """The trace for the input signature `key`: one another thread made meanwhile
        (unless `again`), else a new one, cached and kept as the last graph. Traces are made
        one at a time, so threads making a block's first call together share one graph."""
        with _TRACE_LOCK:
            cached = None if again else self._graphs.get(key)
            if cached is None:
                cached = self._trace(args, fmt)
                self._graphs[key] = cached
            object.__setattr__(self, "_last_graph", cached)
            return cached

    def _call_graph(self, *args):
        fmt = None
        if not all(isinstance(a, np.ndarray) for a in args):
            # (MXNet 2.0: inputs may be nested lists / tuples of arrays, or None; the graph's
            # inputs are the arrays in order)
            args, fmt = _flatten_io(args, "input", type(self).__name__)
            args = [a for a in args if a is not None]
        key = self._signature(args, fmt)
        cached = self._graphs.get(key)
        if cached is None:
            cached = self._traced(key, args, fmt)
        graph, names, kind = cached
        # Where each graph input comes from (an argument or a Parameter), found once per
        # signature and block structure rather than by collect_params() on every call.
        bound = self._bound.get(key)
        if bound is None or bound[0] != _STRUCTURE[0]:
            params = self.collect_params()
            tree = _block_tree(self)
            binding = _bind_inputs(names, len(args), params, strict=bound is None)
            if bound is not None and (binding is None or tree != bound[2] or any(
                    new[1] is not old[1] for new, old in zip(binding, bound[1]))):
                # A child block or a parameter was replaced or added since the trace (a new
                # output layer, net.add(...) on a hybridized net): the graph computes without
                # it, so trace again.
                graph, names, kind = self._traced(key, args, fmt, again=True)
                binding = _bind_inputs(names, len(args), params)
            bound = (_STRUCTURE[0], binding, tree)
            self._bound[key] = bound
        single, legacy, out_fmt, functions, control = kind
        if functions and autograd.is_recording():
            raise NotImplementedError(
                f"[hybridize] {type(self).__name__} calls an autograd.Function, whose backward a "
                "hybridized graph cannot run (it would differentiate the forward's ops "
                "instead): call the block without hybridize() while autograd records, or write "
                "the op as an ndx.operator.CustomOp, which hybridized graphs capture")
        if control:
            _control_flow.note_call(autograd.is_recording())
        out = _core._graph_run(graph, [args[i] if p is None else p.data() for i, p in bound[1]])
        if any(legacy):
            from ..nd.ndarray import _wrap
            out = [_wrap(o) if w else o for o, w in zip(out, legacy)]
        if out_fmt is not None:
            return _regroup(list(out), out_fmt)
        return out[0] if single else tuple(out)

    def export(self, path, epoch=0, remove_amp_cast=True, *, format="safetensors"):  # noqa: A002
        """Writes the last captured graph to `path`-symbol.json and the parameters it uses to
        `path`-NNNN.params, as MXNet does; returns both file names. The graph's inputs are
        named as in MXNet: 'data' for a block of one input, 'data0', 'data1', ... for more;
        its parameters by their structured names ('0.weight'). In the parameter file the
        names carry MXNet's 'arg:' prefix, or 'aux:' for states no gradient flows to (such
        as BatchNorm's running statistics). format: as for save_parameters. remove_amp_cast
        (MXNet's): a graph traced after amp.init() holds amp_cast nodes, which are left out
        unless this is False. path=None (MXNet 2.0's) writes nothing and returns
        (Symbol, {'arg:name' / 'aux:name': array}) instead."""
        cached = getattr(self, "_last_graph", None)
        if cached is None and isinstance(self, SymbolBlock):
            # (MXNet: a SymbolBlock holds its graph from the start, so it exports as it is,
            # e.g. the block amp.convert_hybrid_block returns)
            cached = (self._graph, _core._graph_inputs(self._graph), None)
        if cached is None:
            raise RuntimeError("[export] call hybridize() and run the block once before export()")
        graph, names, _ = cached
        params = self.collect_params()
        tensors = OrderedDict()
        for n in names:
            if n in params:
                kind = "arg" if params[n].differentiable else "aux"
                p = params[n]
                tensors[f"{kind}:{n}"] = p._reduce()
        text = _core._graph_json(graph)
        _control_flow.check_exportable(text, type(self).__name__)
        if remove_amp_cast:
            from ..amp._graph import remove_amp_casts
            text = remove_amp_casts(text)
        if path is None:
            from ..sym import load_json
            return load_json(text), dict(tensors)
        sym_file = f"{path}-symbol.json"
        params_file = f"{path}-{epoch:04d}.params"
        save_tensors(params_file, tensors, format, "export")
        with open(sym_file, "w") as f:
            f.write(text)
        return sym_file, params_file


class _DeviceScope:
    """A block call's device (its inputs'): data() with no device picks the parameter copy
    there, and arrays created with no device go there (MXNet's `with ctx:` around a call)."""

    __slots__ = ("_device", "_prev")

    def __init__(self, device):
        self._device = device

    def __enter__(self):
        self._prev = getattr(_CALL, "device", None)
        _CALL.device = self._device
        self._device.__enter__()
        return self

    def __exit__(self, *exc):
        self._device.__exit__(*exc)
        _CALL.device = self._prev
        return False


def _input_arrays(obj, out):
    if isinstance(obj, np.ndarray):
        out.append(obj)
    elif isinstance(obj, (list, tuple)):
        for item in obj:
            _input_arrays(item, out)
    elif isinstance(obj, dict):
        for item in obj.values():
            _input_arrays(item, out)
    return out


def _flat_inputs(obj, out):
    """The items of nested lists / tuples of inputs, in order."""
    for item in obj:
        if isinstance(item, (list, tuple)):
            _flat_inputs(item, out)
        else:
            out.append(item)
    return out


def _device_scope(args, kwargs, name, strict):
    """The _DeviceScope of a block call whose parameters may have several copies: the
    device of the first input array, None when it is the call's device already (or there
    are no input arrays). strict (a HybridBlock, as MXNet's): inputs on several devices
    raise ValueError; else the first array's device is used."""
    if _core._is_tracing():
        return None
    arrays = _input_arrays(args, [])
    if kwargs:
        _input_arrays(kwargs, arrays)
    if not arrays:
        return None
    from ..device import Device
    device = Device(arrays[0].device)
    if strict:
        others = {str(a.device) for a in arrays[1:]} - {str(device)}
        if others:
            raise ValueError(f"[{name}] the inputs of one call are on several devices "
                             f"({sorted({str(device), *others})}): a block runs on the device "
                             "of its inputs, with the parameter copies there; put every input "
                             "on one device (gluon.utils.split_and_load gives each device its "
                             "slice of the batch)")
    if device == getattr(_CALL, "device", None):
        return None
    return _DeviceScope(device)


def _is_legacy(a):
    from ..nd.ndarray import NDArray
    return type(a) is NDArray


def _legacy_if(args, out):
    """out, with its arrays as mx.nd.NDArrays when an input is one: MXNet 1.x blocks called
    on NDArrays return NDArrays (loss.mean().asscalar()), whatever ops the layers use."""
    for a in args:
        if type(a) is _NDArray:
            return _as_legacy(out)
    return out


def _as_legacy(out):
    if isinstance(out, np.ndarray):
        if type(out) is _NDArray:
            return out
        from ..nd.ndarray import _wrap
        return _wrap(out)
    if isinstance(out, (list, tuple)) and not hasattr(out, "_fields"):
        return type(out)(_as_legacy(o) for o in out)
    return out


def _like(a, traced):
    """traced as an mx.nd.NDArray when `a` is one."""
    if _is_legacy(a):
        from ..nd.ndarray import _wrap
        return _wrap(traced)
    return traced


def _data_names(count):
    """MXNet's names for a traced block's inputs: 'data' for one, 'data0', 'data1', ...."""
    return ["data"] if count == 1 else [f"data{i}" for i in range(count)]


def _block_tree(block):
    """The blocks under `block` (each child by name, with its own children), which a graph
    traced from it computes with: equal trees compare their blocks by identity."""
    return tuple((name, child, _block_tree(child)) for name, child in block._children.items())


def _bind_inputs(names, num_args, params, strict=True):
    """For each graph input name: (argument index, None) or (-1, its Parameter). A name
    with no value raises, or, unless strict, makes the result None."""
    data = {n: i for i, n in enumerate(_data_names(num_args))}
    binding = []
    for name in names:
        if name in data:
            binding.append((data[name], None))
        elif name in params:
            binding.append((-1, params[name]))
        elif strict:
            raise ValueError(f"[graph] no value for graph input '{name}'")
        else:
            return None
    return binding


class SymbolBlock(HybridBlock):
    """A block made from an exported graph and its parameters (SymbolBlock.imports), or, as
    MXNet's SymbolBlock(outputs, inputs, params=None), from symbols: the output symbol(s), the
    input symbol(s) (or their names) and optionally {name: Parameter} to share. Every other
    input of the graph becomes a Parameter whose shape is inferred from the inputs' at the
    first call (after initialize()), as MXNet's deferred initialization."""

    def __init__(self, outputs, inputs=None, params=None, allow_missing=False,
                 ignore_extra=False, device=None):
        from ..sym import Group, Symbol
        # (internally: outputs is a graph capsule, inputs the input names, params the values)
        graph, input_names, shared = outputs, inputs, {}
        if isinstance(graph, Symbol) or (isinstance(graph, (list, tuple)) and graph and
                                         all(isinstance(g, Symbol) for g in graph)):
            outs = list(graph) if isinstance(graph, (list, tuple)) else [graph]
            graph = (outs[0] if len(outs) == 1 else Group(outs))._handle
            given = input_names if isinstance(input_names, (list, tuple)) else [input_names]
            input_names = [i.name if isinstance(i, Symbol) else i for i in given]
            shared = dict(params or {})
            params, allow_missing = {}, True
        elif input_names is None or params is None:
            raise TypeError("[SymbolBlock] takes (outputs, inputs[, params]) symbols, or a "
                            "graph with its input names and parameter values")
        super().__init__()
        object.__setattr__(self, "_graph", graph)
        names = _core._graph_inputs(graph)
        object.__setattr__(self, "_input_names", _graph_input_names(names, input_names))
        wanted = [n for n in names if n not in self._input_names]
        extra = [n for n in params if n not in wanted]
        if extra and not ignore_extra:
            raise ValueError(f"[SymbolBlock] the parameter file has parameters the graph does "
                             f"not use: {extra[:5]}{' ...' if len(extra) > 5 else ''}; pass "
                             "ignore_extra=True to ignore them")
        from ..sym import Symbol
        # MXNet: the graph's auxiliary states (batch_norm's running statistics) get
        # grad_req 'null', so a Trainer (its weight decay) leaves them to the op
        aux = set(Symbol(graph).list_auxiliary_states())
        for n in wanted:
            kind = {"grad_req": "null", "differentiable": False} if n in aux else {}
            if n not in params:
                if not allow_missing:
                    raise ValueError(f"[SymbolBlock] the graph needs parameter '{n}', which the "
                                     "parameter file does not have (allow_missing=True leaves "
                                     "it uninitialized)")
                self._reg_params[n] = Parameter(n, init=_init_by_name(n), **kind)
                continue
            p = Parameter(n, shape=tuple(params[n].shape), dtype=str(params[n].dtype), **kind)
            p._set_devices(device)
            p.set_data(params[n])
            self._reg_params[n] = p
        for n, p in shared.items():
            if n not in wanted:
                raise ValueError(f"[SymbolBlock] params has '{n}', which is not an input of "
                                 f"the graph; its inputs are {names}")
            if not isinstance(p, Parameter):
                raise TypeError(f"[SymbolBlock] params['{n}'] must be a Parameter, got "
                                f"{type(p).__name__}")
            self._reg_params[n] = p

    @staticmethod
    def imports(symbol_file, input_names, param_file=None, device=None, allow_missing=False,
                ignore_extra=False, ctx=None):
        """Loads a block written by HybridBlock.export(), as MXNet's
        SymbolBlock.imports('net-symbol.json', ['data'], 'net-0000.params'). The parameter
        file may be ndx's or MXNet's (see load_parameters); each parameter takes the file's
        dtype. Graphs ndx exported before it named a single input 'data' (they called it
        'data0') load with either name."""
        from ..sym import _load_graph
        if isinstance(input_names, str):
            input_names = [input_names]
        with open(symbol_file) as f:
            graph = _load_graph(f.read())  # (MXNet's layer names too)
        params = load_param_dict(param_file, "SymbolBlock.imports") if param_file else {}
        return SymbolBlock(graph, input_names, params, allow_missing, ignore_extra,
                           device if device is not None else ctx)

    def cast(self, dtype):
        """Casts the parameters to dtype, except, for float16, the inputs 1-4 of batch_norm
        nodes (gamma, beta, running statistics), which stay float32 as MXNet's
        SymbolBlock.cast keeps them (the op takes float16 data with float32 parameters)."""
        try:
            half = _onp.dtype(dtype) == _onp.float16
        except TypeError:  # ('bfloat16', which NumPy does not know)
            half = False
        keep = set()
        if half:
            import json
            nodes = json.loads(_core._graph_json(self._graph))["nodes"]
            for node in nodes:
                if node["op"] == "_npx_batch_norm":
                    keep.update(nodes[e[0]]["name"] for e in node["inputs"][1:5])
        for name, p in self._reg_params.items():
            p.cast("float32" if name in keep else dtype)
        _forget_graphs(self)

    def __getstate__(self):
        """copy.deepcopy / pickle: the graph travels as its JSON."""
        state = super().__getstate__()
        state["_graph"] = _core._graph_json(self._graph)
        return state

    def __setstate__(self, state):
        state = dict(state, _graph=_core._graph_load(state["_graph"]))
        super().__setstate__(state)

    def forward(self, *args):
        if Parameter._multi:
            scope = _device_scope(args, None, "SymbolBlock", strict=True)
            if scope is not None:
                with scope:
                    return SymbolBlock.forward(self, *args)
        if any(isinstance(a, (list, tuple)) for a in args):
            args = tuple(_flat_inputs(args, []))  # (as MXNet's: nested inputs, flattened)
        if len(args) != len(self._input_names):
            raise ValueError(f"[SymbolBlock] expected {len(self._input_names)} inputs "
                             f"({self._input_names}), got {len(args)}")
        names = _core._graph_inputs(self._graph)
        values = dict(zip(self._input_names, args))
        if any(p._deferred is not None for p in self._reg_params.values()):
            self._finish_deferred(values)
        inputs = [values[n] if n in values else self._reg_params[n].data() for n in names]
        out = _core._graph_run(self._graph, inputs)
        return out[0] if len(out) == 1 else tuple(out)

    __call__ = forward


    def _finish_deferred(self, values):
        """Gives the parameters still waiting for a shape the shapes the graph's inference
        works out from the inputs' (and the initialized parameters')."""
        from ..sym import Symbol
        shapes = {n: tuple(v.shape) for n, v in values.items() if hasattr(v, "shape")}
        for n, p in self._reg_params.items():
            if p._deferred is None and p.shape is not None and all(d > 0 for d in p.shape):
                shapes[n] = tuple(p.shape)
        known, _, _, _ = Symbol(self._graph)._infer_partial(shapes, {})
        for n, p in self._reg_params.items():
            if p._deferred is None:
                continue
            if known.get(n) is None:
                raise ValueError(f"[SymbolBlock] cannot infer the shape of parameter '{n}' "
                                 f"from the inputs' shapes {shapes}")
            p._finish_deferred_init(known[n])


def _init_by_name(name):
    """The init a SymbolBlock gives a graph input it makes a parameter of, by its name as
    MXNet's symbols name them: 'zeros' for *bias, *beta and running / moving means, 'ones'
    for *gamma and running / moving variances (MXNet 2.0 would draw those from the global
    initializer too, a moving variance below 0 included), None (the global one) for the
    rest."""
    if name.endswith(("bias", "beta", "running_mean", "moving_mean")):
        return "zeros"
    if name.endswith(("gamma", "running_var", "moving_var")):
        return "ones"
    return None


def _graph_input_names(graph_inputs, input_names):
    """The graph's names for the inputs the caller named. A single input is 'data' in MXNet
    and in ndx's exports, 'data0' in ndx's exports before they followed MXNet: either name
    finds it."""
    out = []
    for name in input_names:
        if not isinstance(name, str):
            raise TypeError(f"[SymbolBlock] input names must be strings, got "
                            f"{type(name).__name__}")
        if name not in graph_inputs:
            alias = {"data": "data0", "data0": "data"}.get(name)
            if len(input_names) == 1 and alias in graph_inputs:
                name = alias
            else:
                raise ValueError(f"[SymbolBlock] '{name}' is not an input of the graph, whose "
                                 f"inputs are {graph_inputs}")
        out.append(name)
    return out
