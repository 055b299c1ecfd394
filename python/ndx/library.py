"""Operator libraries: shared libraries written against include/ndx/lib_api.h (or against
MXNet's API through ndx's include/mxnet/lib_api.h: MXNet's operator libraries compile
unchanged), loaded at run time. Each of their ops becomes a first-class op: ndx.npx.<name>,
ndx.nd.<name>, ndx.sym.<name>, autograd through its backward, capture in hybridized blocks, and
help() text."""
import hashlib
import os
import shutil
import subprocess

from . import _core

__all__ = ["load", "load_op_lib", "compile", "include_dir"]


def _check_inputs(name, inputs):
    for i, x in enumerate(inputs):
        if x is None:
            raise TypeError(f"[{name}] input {i} is None; the op's inputs are arrays")


def _op_function(name, path):
    # params -> parsed attributes. The parsed attributes carry a stateful op's state: eager
    # calls with the same params are one use of the op and share it; each call traced into a
    # graph (hybridize), and each call of a stateful op that autograd records, is a node of its
    # own, with a state of its own, so it parses afresh.
    cache = {}
    stateful = _core._library_op_is_stateful(name)

    def op(*inputs, out=None, **params):
        if out is not None:  # as the built-in ops: write the result into `out` and return it
            result = op(*inputs, **params)
            if isinstance(result, tuple):
                if not isinstance(out, (tuple, list)) or len(out) != len(result):
                    raise TypeError(f"[{name}] the op has {len(result)} outputs: out= must be a "
                                    f"tuple of {len(result)} arrays")
                for o, r in zip(out, result):
                    o[...] = r
                return tuple(out)
            out[...] = result
            return out
        try:
            if _core._is_tracing() or (stateful and _core._autograd_is_recording()):
                # a node of its own with a state of its own: its backward must not see the
                # state of a later call (two recorded calls before one backward)
                return _core._invoke_attrs(_core._attrs_str(name, params), list(inputs))
            key = tuple(sorted((k, str(v)) for k, v in params.items()))
            attrs = cache.get(key)
            if attrs is None:
                attrs = _core._attrs_str(name, params)
                if len(cache) > 256:
                    cache.clear()
                cache[key] = attrs
            return _core._invoke_attrs(attrs, list(inputs))
        except TypeError:
            _check_inputs(name, inputs)  # a clearer message for the common mistake
            raise
    op.__name__ = name
    op.__doc__ = (f"Operator '{name}' from the library {path}.\n\nInputs are ndarrays; params are "
                  "passed to the library as strings.")
    op._ndx_library = path
    return op


def _sym_function(op_name, path):
    from . import sym

    def op(*inputs, name=None, **params):
        return sym._apply(op_name, list(inputs), params, name)
    op.__name__ = op_name
    op.__doc__ = (f"Symbolic operator '{op_name}' from the library {path}: takes Symbols and "
                  "params (passed to the library as strings).")
    op._ndx_library = path
    return op


def load(path, verbose=False):
    """Loads the operator library at `path` and returns the names of its ops. Bad libraries
    (missing file, not a shared library, wrong lib_api version, missing functions, a bogus op
    count) raise ValueError and register nothing.

    Loading a path again returns the same names and does nothing else while the file there is
    the one loaded (same contents: a touch or a copy of the same build is no change). Once the
    file has changed (rebuilt in place), loading it raises ValueError: a process holds one
    version of a library. dlopen hands back the copy it already has for a path, and the ops
    registered from it may live on in graphs, autograd tapes and cached executors, so they are
    never swapped under them; the first build keeps running until the process restarts. A
    rebuild under another path (``compile`` names its output by content hash) raises the same
    way, since its ops are already registered by the first build."""
    if not isinstance(path, (str, bytes, os.PathLike)):
        raise TypeError(f"[library.load] path must be a str, bytes or os.PathLike, got "
                        f"{type(path).__name__}")
    path = os.path.abspath(os.fsdecode(path))
    if not os.path.exists(path):
        raise FileNotFoundError(f"[library.load] no such file: {path}")
    names = _core._load_library(path)
    from . import nd, numpy_extension, sym
    # An op is bound as npx.<name>, nd.<name> and sym.<name>; a name those modules already use
    # for something else (nd.array, nd.waitall, npx.topk, nd.random, ...) is refused rather than
    # replaced under the rest of ndx.
    taken = [f"{label}.{name}" for name in names
             for label, module in (("npx", numpy_extension), ("nd", nd), ("sym", sym))
             if hasattr(module, name)
             and getattr(getattr(module, name), "_ndx_library", None) != path]
    if taken:
        raise ValueError(
            f"[library.load] {path}: op names that ndx already uses for something else: "
            f"{', '.join(taken)}. The ops are registered but not bound in Python; rename them "
            "(REGISTER_OP(...)), rebuild, and restart the process")
    for name in names:
        f = _op_function(name, path)
        setattr(numpy_extension, name, f)
        setattr(nd, name, f)
        setattr(sym, name, _sym_function(name, path))
        if verbose:
            print(f"loaded operator {name} from {path}")
    return names


load_op_lib = load


def _compiler_env():
    """The environment for the compiler: ours, less a sanitizer runtime preloaded into this
    process (make sanitize-python), which the compiler is not built for (nvcc crashes)."""
    env = dict(os.environ)
    kept = [p for p in env.get("LD_PRELOAD", "").split() if "libasan" not in p
            and "libtsan" not in p and "libstdc++" not in p]
    if kept:
        env["LD_PRELOAD"] = " ".join(kept)
    else:
        env.pop("LD_PRELOAD", None)
    return env


def include_dir():
    """The directory holding ndx/lib_api.h and mxnet/lib_api.h, MXNet's operator-library API
    on top of ndx's (in the installed package, or the source tree). MXNet's example libraries
    `#include "lib_api.h"`: compile with -I <include_dir()>/mxnet as well (compile does)."""
    here = os.path.dirname(os.path.abspath(__file__))
    for candidate in (os.path.join(here, "include"),
                      os.path.join(here, os.pardir, os.pardir, "include")):
        if os.path.exists(os.path.join(candidate, "ndx", "lib_api.h")):
            return os.path.abspath(candidate)
    raise FileNotFoundError("[library] ndx/lib_api.h was not found next to the package")


def _include_flags():
    """-I flags for ndx's headers, and for MXNet's lib_api.h by its bare name."""
    inc = include_dir()
    flags = [f"-I{inc}"]
    if os.path.exists(os.path.join(inc, "mxnet", "lib_api.h")):
        flags.append(f"-I{os.path.join(inc, 'mxnet')}")
    return flags


def _cache_dir():
    d = os.environ.get("NDX_LIBRARY_CACHE", os.path.join(os.path.expanduser("~"), ".cache",
                                                          "ndx", "libraries"))
    os.makedirs(d, exist_ok=True)
    return d


def compile(sources, name=None, extra_flags=(), load_library=True):
    """Builds an operator library from C++ sources (or CUDA .cu sources, with nvcc) against
    lib_api.h (ndx's, or MXNet's API: `#include "lib_api.h"` and `#include "mxnet/lib_api.h"`
    both work) with no CMake needed, caches it by the hash of sources, headers and flags, and
    loads it. Returns the op names (or the library's path when load_library=False)."""
    if isinstance(sources, str):
        sources = [sources]
    sources = [os.path.abspath(s) for s in sources]
    if any(s.endswith(".cu") for s in sources):
        cxx = os.environ.get("NVCC") or shutil.which("nvcc")
        if cxx is None:
            raise RuntimeError("[library.compile] CUDA sources need nvcc, which was not found")
        flags = ["-O3", "-std=c++17", "-shared", "-Xcompiler", "-fPIC", *_include_flags(),
                 *extra_flags]
    else:
        cxx = os.environ.get("CXX") or shutil.which("c++") or shutil.which("g++")
        if cxx is None:
            raise RuntimeError("[library.compile] no C++ compiler found (set CXX)")
        flags = ["-O3", "-std=c++17", "-shared", "-fPIC", *_include_flags(), *extra_flags]
    digest = hashlib.sha256()
    for s in sources:
        with open(s, "rb") as f:
            digest.update(f.read())
    for header in (("ndx", "lib_api.h"), ("mxnet", "lib_api.h")):
        header = os.path.join(include_dir(), *header)
        if os.path.exists(header):
            with open(header, "rb") as f:
                digest.update(f.read())
    digest.update(" ".join([cxx, *flags]).encode())
    name = name or os.path.splitext(os.path.basename(sources[0]))[0]
    out = os.path.join(_cache_dir(), f"lib{name}-{digest.hexdigest()[:16]}.so")
    if not os.path.exists(out):
        tmp = out + f".tmp{os.getpid()}"
        proc = subprocess.run([cxx, *flags, *sources, "-o", tmp], capture_output=True, text=True,
                              env=_compiler_env())
        if proc.returncode != 0:
            raise RuntimeError(f"[library.compile] building {name} failed:\n{proc.stderr}")
        os.replace(tmp, out)
    return load(out) if load_library else out
