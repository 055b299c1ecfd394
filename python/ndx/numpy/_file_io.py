"""NumPy's file functions over ndx arrays: save / load / savez / savez_compressed (the .npy and
.npz layouts), loadtxt / savetxt / genfromtxt (text), fromfile / tofile (raw bytes) and
ndarray.dump / dumps (pickles).

The layouts are NumPy's own, so files move freely between NumPy and ndx. Encoding and parsing
are host work on bytes, not array math: they go through NumPy's implementation on a host copy
(as npx.save / npx.load do), and what comes back becomes an ndx array. bfloat16 arrays are
stored the way npx.save stores them (raw 16-bit patterns in a one-field record dtype) and come
back as bfloat16."""
import collections.abc as _abc
import contextlib as _contextlib
import os as _os
import pickle as _pickle

import numpy as _onp


def _np():
    from .. import numpy as np
    return np


def _host(a):
    """A NumPy array for an ndx array (bfloat16 in npx.save's layout); anything else as is."""
    from ..gluon.serialization import _to_host
    return _to_host(a) if isinstance(a, _np().ndarray) else a


def _to_ndx(a, who):
    """An ndx array of a NumPy array's elements (other objects pass through unchanged)."""
    from ..gluon.serialization import _from_host
    if not isinstance(a, _onp.ndarray):
        return a
    if a.dtype.byteorder not in "=|":
        a = a.astype(a.dtype.newbyteorder("="))
    try:
        return _from_host(a)
    except (TypeError, ValueError) as e:
        raise TypeError(f"[{who}] the file holds an array of dtype {a.dtype}, which ndx "
                        f"cannot hold ({e})") from None


def _check_file(file, who, what, *methods):
    """file must be a path (str, bytes, os.PathLike) or an object with the given methods."""
    if isinstance(file, (str, bytes, _os.PathLike)) or all(hasattr(file, m) for m in methods):
        return
    raise TypeError(f"[{who}] {what} must be a file name (str or os.PathLike) or a file object "
                    f"with {' and '.join(m + '()' for m in methods)}, got {type(file).__name__}")


def _check_text_source(fname, who):
    """loadtxt / genfromtxt read a path, a file object or an iterable of lines (str or bytes),
    not an array."""
    if isinstance(fname, (_np().ndarray, _onp.ndarray)) or not (
            isinstance(fname, (str, bytes, _os.PathLike)) or hasattr(fname, "read")
            or hasattr(fname, "__iter__")):
        raise TypeError(f"[{who}] fname must be a file name, a file object or an iterable of "
                        f"lines, got {type(fname).__name__}")


@_contextlib.contextmanager
def _numpy_parses(who):
    """NumPy's parser meeting a line that is not text raises AttributeError: a TypeError."""
    try:
        yield
    except AttributeError as e:
        raise TypeError(f"[{who}] the input must hold lines of text: {e}") from None


# ----------------------------------------------------------------------------- .npy / .npz
def save(file, arr, allow_pickle=True):
    """Saves arr in NumPy's .npy layout to file (a path, to which '.npy' is added when it is
    missing, or a binary file object), as numpy.save."""
    _onp.save(file, _host(arr), allow_pickle=allow_pickle)


def savez(file, *args, allow_pickle=True, **kwds):
    """Saves arrays into an uncompressed .npz archive: positional ones as 'arr_0', 'arr_1',
    ..., keyword ones by their keywords, as numpy.savez."""
    _onp.savez(file, *map(_host, args), allow_pickle=allow_pickle,
               **{k: _host(v) for k, v in kwds.items()})


def savez_compressed(file, *args, allow_pickle=True, **kwds):
    """As savez, into a zip-deflated archive."""
    _onp.savez_compressed(file, *map(_host, args), allow_pickle=allow_pickle,
                          **{k: _host(v) for k, v in kwds.items()})


class NpzFile(_abc.Mapping):
    """The arrays of a .npz archive by name, read (and made ndx arrays) when asked for, as
    NumPy's NpzFile; close it, or use it in a `with` block, to release the file."""

    def __init__(self, npz):
        self._npz = npz
        self.files = list(npz.files)

    def __getitem__(self, key):
        return _to_ndx(self._npz[key], "load")

    def __iter__(self):
        return iter(self.files)

    def __len__(self):
        return len(self.files)

    def __contains__(self, key):
        return key in self._npz

    def close(self):
        self._npz.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        npz = getattr(self, "_npz", None)
        if npz is not None:
            npz.close()

    def __repr__(self):
        return f"NpzFile({self.files})"


def load(file, mmap_mode=None, allow_pickle=False, fix_imports=True, encoding="ASCII", *,
         max_header_size=10000):
    """The array (.npy), the NpzFile (.npz) or, with allow_pickle, the pickled object in file,
    as numpy.load; arrays are ndx arrays.

    ndx arrays own their memory, so mmap_mode 'r' and 'c' read the file into memory ('r' gives
    a read-only array, as NumPy's; writes to a 'c' array never reach the file); 'r+' and 'w+',
    whose writes would have to reach the file, raise NotImplementedError."""
    if mmap_mode in ("r+", "w+"):
        raise NotImplementedError(f"[load] mmap_mode={mmap_mode!r}: ndx arrays cannot map a "
                                  f"file, so writes could not reach it; load without "
                                  f"mmap_mode and save the result")
    if mmap_mode not in (None, "r", "c", "readonly", "copyonwrite"):
        raise ValueError(f"[load] mmap_mode must be one of None, 'r', 'r+', 'w+', 'c', got "
                         f"{mmap_mode!r}")
    got = _onp.load(file, allow_pickle=allow_pickle, fix_imports=fix_imports,
                    encoding=encoding, max_header_size=max_header_size)
    if isinstance(got, _onp.lib.npyio.NpzFile):
        return NpzFile(got)
    out = _to_ndx(got, "load")
    if mmap_mode in ("r", "readonly") and isinstance(out, _np().ndarray):
        from ._manipulation import _read_only_for_good
        out = _read_only_for_good(out)  # (NumPy's map of the file is read-only)
    return out


# ------------------------------------------------------------------------------------ text
def loadtxt(fname, dtype=float, *args, **kwargs):
    """The numbers in a text file as an ndx array (numpy.loadtxt's parameters and result
    dtype: float64 by default)."""
    _check_text_source(fname, "loadtxt")
    with _numpy_parses("loadtxt"):
        got = _onp.loadtxt(fname, dtype, *args, **kwargs)
    if isinstance(got, list):  # unpack=True with a structured dtype
        return [_to_ndx(g, "loadtxt") for g in got]
    return _to_ndx(got, "loadtxt")


def genfromtxt(fname, dtype=float, *args, **kwargs):
    """numpy.genfromtxt (missing values filled) as an ndx array; masked results
    (usemask=True) are not supported, as ndx has no masked arrays."""
    if kwargs.get("usemask"):
        raise NotImplementedError("[genfromtxt] usemask=True: ndx has no masked arrays")
    _check_text_source(fname, "genfromtxt")
    with _numpy_parses("genfromtxt"):
        return _to_ndx(_onp.genfromtxt(fname, dtype, *args, **kwargs), "genfromtxt")


def savetxt(fname, X, *args, **kwargs):
    """Writes a 1-d or 2-d array to a text file, as numpy.savetxt."""
    _check_file(fname, "savetxt", "fname", "write")
    _onp.savetxt(fname, _host(X), *args, **kwargs)


# ------------------------------------------------------------------------------- raw bytes
def fromfile(file, dtype=float, count=-1, sep="", offset=0, *, like=None):
    """The elements stored in a file (raw bytes, or text with sep), as numpy.fromfile."""
    if like is not None:
        raise NotImplementedError("[fromfile] like= is not supported")
    _check_file(file, "fromfile", "file", "read", "seek")
    return _to_ndx(_onp.fromfile(file, dtype=dtype, count=count, sep=sep, offset=offset),
                   "fromfile")


def _tofile(self, fid, sep="", format="%s"):
    """Writes the elements to a file (raw bytes in C order, or text with sep), as NumPy's
    ndarray.tofile."""
    _check_file(fid, "tofile", "fid", "write", "flush")
    _host(self).tofile(fid, sep=sep, format=format)


def _dump(self, file):
    """Pickles the array to file (a path or a binary file object)."""
    if isinstance(file, (str, bytes)) or hasattr(file, "__fspath__"):
        with open(file, "wb") as f:
            _pickle.dump(self, f, protocol=2)
    else:
        _pickle.dump(self, file, protocol=2)


def _dumps(self):
    """The array's pickle, as bytes (pickle.loads gives it back)."""
    return _pickle.dumps(self, protocol=2)


def attach(ndarray):
    ndarray.tofile = _tofile
    ndarray.dump = _dump
    ndarray.dumps = _dumps
