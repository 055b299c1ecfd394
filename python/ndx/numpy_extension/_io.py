"""MXNet 2.0's array files: npx.save (one array as NumPy .npy; a list or dict as MXNet's
NDArray list), npx.savez (several, an
uncompressed .npz) and npx.load, which reads those, MXNet's NDArray-list files (mx.nd.save,
MXNet 1.x parameter files) and ndx's safetensors, telling them apart by their first bytes.
nd_save / nd_load are MXNet's mx.nd.save / mx.nd.load (the NDArray-list layout)."""
import os


def _file(file, who):
    if not isinstance(file, (str, os.PathLike)):
        raise TypeError(f"[{who}] file must be a file name (str or os.PathLike), got "
                        f"{type(file).__name__}")
    return os.fspath(file)


def _check_arrays(items, who, sparse=False):
    from ..nd.ndarray import _SparseStorage
    from ..numpy import ndarray
    for name, a in items:
        if not isinstance(a, ndarray) and not (sparse and isinstance(a, _SparseStorage)):
            raise TypeError(f"[{who}] {name} must be an ndarray, got {type(a).__name__}")


def save(file, arr):
    """Saves `arr` to `file` (no suffix is added), as MXNet 2.0's npx.save: one ndarray in
    NumPy's .npy layout; a list of ndarrays or a dict {str: ndarray} in MXNet's NDArray-list
    layout, which npx.load gives back as a dict, a list, or for a list of one its array."""
    from ..gluon.serialization import save_numpy
    from ..numpy import ndarray
    if isinstance(arr, (list, tuple, dict)):
        _file(file, "npx.save")
        if isinstance(arr, dict) and not all(isinstance(k, str) for k in arr):
            raise TypeError("[npx.save] dict keys must be str")
        items = arr.items() if isinstance(arr, dict) else \
            ((f"item {i}", a) for i, a in enumerate(arr))
        _check_arrays(items, "npx.save")
        return nd_save(file, list(arr) if isinstance(arr, tuple) else arr)
    file = _file(file, "npx.save")
    if not isinstance(arr, ndarray):
        raise TypeError(f"[npx.save] arr must be an ndarray, a list of ndarrays or a dict "
                        f"{{str: ndarray}}, got {type(arr).__name__}")
    save_numpy(file, [arr])


def savez(file, *args, **kwds):
    """Saves ndarrays to `file` as an uncompressed .npz archive: positional ones as 'arr_0',
    'arr_1', ..., keyword ones by their keywords (no suffix is added to the file name)."""
    from ..gluon.serialization import save_numpy
    file = _file(file, "npx.savez")
    named = dict(kwds)
    for i, a in enumerate(args):
        if f"arr_{i}" in named:
            raise ValueError(f"[npx.savez] positional array {i} and keyword 'arr_{i}' both "
                             f"name 'arr_{i}'")
        named[f"arr_{i}"] = a
    _check_arrays(named.items(), "npx.savez")
    save_numpy(file, list(named.values()), list(named))


def load(file):
    """The arrays in `file` (.npy, .npz, MXNet's NDArray list or ndx's safetensors): a dict
    {name: ndarray} when they have names, else the ndarray when there is one and a list of
    them when there are several, as MXNet 2.0's npx.load."""
    from ..gluon.serialization import load_arrays
    arrays, names = load_arrays(_file(file, "npx.load"), "npx.load")
    if names is not None:
        return dict(zip(names, arrays))
    return arrays[0] if len(arrays) == 1 else arrays


def nd_save(fname, data):
    """MXNet's mx.nd.save: an ndarray, a list of them or a dict {str: ndarray}, in MXNet's
    NDArray-list layout (MXNet 1.x and 2.0 read it back with mx.nd.load); sparse arrays
    (mx.nd.sparse) keep their storage, as MXNet writes them."""
    from ..gluon.serialization import save_ndarray_list
    from ..nd.ndarray import _SparseStorage
    from ..numpy import ndarray
    fname = _file(fname, "nd.save")
    if isinstance(data, (ndarray, _SparseStorage)):
        data = [data]
    if isinstance(data, dict):
        for k in data:
            if not isinstance(k, str):
                raise TypeError(f"[nd.save] dict keys must be str, got {type(k).__name__}")
        _check_arrays(data.items(), "nd.save", sparse=True)
        save_ndarray_list(fname, list(data.values()), list(data), "nd.save")
    elif isinstance(data, (list, tuple)):
        _check_arrays(((f"item {i}", a) for i, a in enumerate(data)), "nd.save", sparse=True)
        save_ndarray_list(fname, list(data), None, "nd.save")
    else:
        raise TypeError(f"[nd.save] data must be an ndarray, a list of ndarrays or a dict "
                        f"{{str: ndarray}}, got {type(data).__name__}")


def nd_load(fname):
    """MXNet's mx.nd.load: a dict {name: ndarray} for named arrays, else a list (even of
    one)."""
    from ..gluon.serialization import load_arrays
    arrays, names = load_arrays(_file(fname, "nd.load"), "nd.load", keep_sparse=True)
    return dict(zip(names, arrays)) if names is not None else list(arrays)
