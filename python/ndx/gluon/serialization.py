"""Parameter files. ndx writes the safetensors layout by default; load_arrays also reads
MXNet's files (the NDArray list of mx.nd.save, see _mxnet_format.py, and MXNet 2.0's NumPy
.npz / .npy), told apart by their first bytes (detect_format).

The safetensors layout: an 8-byte little-endian header length, a JSON header
{name: {"dtype", "shape", "data_offsets"}, "__metadata__": {str: str}}, then the raw
little-endian data.

Reading checks everything before building an array, and every problem is a ValueError that
names the file: the header length is capped (100 MB, as safetensors), the header may nest no
deeper than the format needs (checked by a linear scan before json runs, so a deeply nested
header cannot exhaust the recursion limit), keys may not repeat, shapes and data offsets are
exact non-negative JSON integers, sizes may not overflow, dtype codes must be known, and the
entries' data must tile the data section exactly (no overlaps, gaps or trailing bytes).

Writing goes through a temp file in the target's directory that is renamed over the target,
so readers see the old file or the new one. The temp file is removed on any exception
(KeyboardInterrupt included); one orphaned by a kill is removed by the next save to the same
directory once its writer is known to be gone (see _remove_stale_temp_files)."""
import json
import os
import re
import socket
import struct
import sys
import tempfile
import time

import numpy as _onp

from .. import numpy as np
from . import _mxnet_format as _mx

_CODES = {"bool": "BOOL", "int8": "I8", "int16": "I16", "int32": "I32", "int64": "I64",
          "uint8": "U8", "uint16": "U16", "uint32": "U32", "uint64": "U64", "float16": "F16",
          "float32": "F32", "float64": "F64", str(_mx.BF16_BITS): "BF16"}
_DTYPES = {code: _mx.BF16_BITS if code == "BF16" else _onp.dtype(name)
           for name, code in _CODES.items()}

MAX_HEADER_BYTES = 100 * 1000 * 1000  # safetensors' own limit
MAX_NDIM = 64                         # ndx's (and NumPy 2's) limit on dimensions
# {name: {..., "shape": [...]}}: the deepest bracket sits three levels down.
_MAX_DEPTH = 3
_ENTRY_KEYS = frozenset(("dtype", "shape", "data_offsets"))

TEMP_PREFIX = ".ndx-params-"
# An orphan whose writer cannot be checked (another host or pid namespace, or a name from an
# older ndx) is removed once it has not been written to for this long.
STALE_AFTER_S = 24 * 3600
_TEMP_NAME = re.compile(r"\.ndx-params-([A-Za-z0-9._]+)-(\d+)-(\d+)-[A-Za-z0-9_]+\.tmp\Z")

# Bytes other than brackets, and a table that maps both kinds of opening bracket to "(" and
# both closing ones to ")": the depth scan only needs to know which way each one goes.
_NOT_BRACKETS = bytes(b for b in range(256) if b not in b"[]{}")
_TO_PARENS = bytes.maketrans(b"[]{}", b"()()")
_ESCAPE = re.compile(rb"\\.", re.S)
_STRING = re.compile(rb'"[^"]*"')


# ---- writing ----

def _owner_tag():
    """host and pid namespace of this process, as they appear in its temp files' names."""
    host = re.sub(r"[^A-Za-z0-9.]", "_", socket.gethostname())[:64] or "_"
    try:
        ns = os.stat("/proc/self/ns/pid").st_ino
    except OSError:
        ns = 0
    return f"{host}-{ns}"


def _pid_alive(pid):
    if os.name == "nt":
        return True  # os.kill(pid, 0) would terminate the process there: never guess
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError, OSError, ValueError):
        return True  # someone else's process, or a pid we cannot ask about: assume alive
    return True


def _remove_stale_temp_files(directory):
    """Removes temp files that earlier saves into `directory` left behind when killed.

    A temp file is named .ndx-params-<host>-<pid namespace>-<pid>-<random>.tmp. One written
    on this host in this pid namespace is removed only when its pid no longer exists, so a
    live writer's file is never touched, however slow that writer is (a reused pid keeps its
    orphan until that process exits too). Any other .ndx-params-* file, whose writer this
    process cannot check, is removed only when it has not been modified for STALE_AFTER_S.
    Errors are ignored: another save may be cleaning up at the same time."""
    me = _owner_tag()
    now = time.time()
    try:
        entries = list(os.scandir(directory))
    except OSError:
        return
    for entry in entries:
        if not entry.name.startswith(TEMP_PREFIX):
            continue
        try:
            if not entry.is_file(follow_symlinks=False):
                continue
            m = _TEMP_NAME.match(entry.name)
            if m and f"{m.group(1)}-{m.group(2)}" == me:
                stale = not _pid_alive(int(m.group(3)))
            else:
                stale = now - entry.stat(follow_symlinks=False).st_mtime > STALE_AFTER_S
            if stale:
                os.unlink(entry.path)
        except OSError:
            pass


def _to_host(arr):
    """A NumPy array of an ndx array's (or array-like's) elements; bfloat16 as BF16_BITS. A
    sparse array (mx.nd.sparse) gives its parts (_mxnet_format.SparseParts)."""
    if getattr(arr, "stype", "default") in ("csr", "row_sparse"):
        aux = [arr._indptr, arr._indices] if arr.stype == "csr" else [arr._indices]
        return _mx.SparseParts(arr.stype, arr.shape, _to_host(arr._data),
                               [a.asnumpy() for a in aux])
    if isinstance(arr, np.ndarray):
        if str(arr.dtype) != "bfloat16":
            return arr.asnumpy()
        # every bfloat16 is a float32 whose low 16 bits are zero: the high half is the value
        f32 = _onp.ascontiguousarray(arr.astype("float32").asnumpy())
        return (f32.view(_onp.uint32) >> 16).astype("<u2").view(_mx.BF16_BITS)
    a = _onp.asarray(arr)
    if a.dtype.name == "bfloat16" and a.dtype.itemsize == 2:  # ml_dtypes' NumPy bfloat16
        return _onp.ascontiguousarray(a).view("<u2").view(_mx.BF16_BITS)
    return a


def _from_host(a):
    """An ndx array of a NumPy array's elements; BF16_BITS becomes bfloat16 exactly."""
    if a.dtype != _mx.BF16_BITS:
        return np.array(a)
    bits = _onp.ascontiguousarray(a).view("<u2").astype(_onp.uint32)
    return np.array((bits << 16).view(_onp.float32)).astype(np.bfloat16)


def save_safetensors(filename, tensors):
    header, chunks, offset = {}, [], 0
    for name, arr in tensors.items():
        if name == "__metadata__":
            raise ValueError("[save_parameters] a parameter may not be named '__metadata__' "
                             "(the safetensors layout reserves it)")
        a = _onp.asarray(_to_host(arr), order="C")  # (ascontiguousarray makes 0-d 1-d)
        code = _CODES.get(str(a.dtype))
        if code is None:
            raise TypeError(f"[save_parameters] {name}: dtype {a.dtype} cannot be saved")
        raw = a.astype(a.dtype.newbyteorder("<"), copy=False).tobytes()
        header[name] = {"dtype": code, "shape": list(a.shape),
                        "data_offsets": [offset, offset + len(raw)]}
        chunks.append(raw)
        offset += len(raw)
    header["__metadata__"] = {"format": "ndx"}
    head = json.dumps(header, separators=(",", ":")).encode()
    head += b" " * (-len(head) % 8)
    write_atomically(filename, [struct.pack("<Q", len(head)), head] + chunks)


def write_atomically(filename, pieces):
    """Writes the byte strings `pieces` to filename through a temp file renamed over it."""
    directory = os.path.dirname(os.path.abspath(filename))
    _remove_stale_temp_files(directory)
    fd, tmp = tempfile.mkstemp(prefix=f"{TEMP_PREFIX}{_owner_tag()}-{os.getpid()}-",
                               suffix=".tmp", dir=directory)
    try:
        f = os.fdopen(fd, "wb")
    except BaseException:
        os.close(fd)
        _unlink_quietly(tmp)
        raise
    try:
        with f:
            for piece in pieces:
                f.write(piece)
            f.flush()
            # mkstemp makes the file 0600; give it the mode a plain open() would have: the
            # replaced file's, or 0666 less the umask for a new one.
            os.fchmod(f.fileno(), _mode_for(filename))
            os.fsync(f.fileno())
        os.replace(tmp, filename)  # readers see the old file or the new one, never a partial
    except BaseException:  # KeyboardInterrupt and SystemExit too: leave no temp file behind
        _unlink_quietly(tmp)
        raise


def _current_umask():
    try:  # Linux reports it without changing it (os.umask would, for every thread)
        with open("/proc/self/status") as status:
            for line in status:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError):
        pass
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def _mode_for(filename):
    try:
        return os.stat(filename).st_mode & 0o777
    except OSError:
        return 0o666 & ~_current_umask()


def _unlink_quietly(path):
    try:
        os.unlink(path)
    except OSError:
        pass


# ---- reading ----

def _bad(filename, why):
    return ValueError(f"[load_parameters] {filename} is not a valid parameter file: {why}")


def _nesting_within(head, depth):
    """Whether the JSON text `head` (bytes) nests at most `depth` brackets deep, found without
    recursion. Escapes (a backslash and the byte after it) go first, so every quote left
    delimits a string; the strings go next, so every bracket left is structural. Each round
    of removing "()" removes the innermost level, so a balanced text of depth <= `depth` is
    empty after `depth` rounds. Text that is not valid JSON may be refused here rather than by
    json (never the other way round), which is harmless: it would be refused anyway."""
    outside = _STRING.sub(b"", _ESCAPE.sub(b"", head))
    brackets = outside.translate(_TO_PARENS, _NOT_BRACKETS)
    for _ in range(depth):
        if not brackets:
            break
        brackets = brackets.replace(b"()", b"")
    return not brackets


class _Duplicate(ValueError):
    pass


def _no_duplicates(pairs):
    out = {}
    for key, value in pairs:
        if key in out:
            raise _Duplicate(f"key {key!r} appears twice in one object")
        out[key] = value
    return out


def _no_constants(name):
    raise ValueError(f"{name} is not a JSON number")


def _exact_int(v):
    return type(v) is int  # bool is a subclass of int, and float, str are not wanted


def _describe(v):
    return f"{v!r} ({type(v).__name__})"


def _parse_header(filename, head):
    if not _nesting_within(head, _MAX_DEPTH):
        raise _bad(filename, f"header nests deeper than the {_MAX_DEPTH} levels of the format "
                             "(or its brackets do not balance)")
    try:
        text = head.decode("utf-8")
    except UnicodeDecodeError as e:
        raise _bad(filename, f"header is not UTF-8 ({e})") from None
    try:
        header = json.loads(text, object_pairs_hook=_no_duplicates, parse_constant=_no_constants)
    except _Duplicate as e:
        raise _bad(filename, f"header: {e}") from None
    except ValueError as e:  # JSONDecodeError, and integers too long to convert
        raise _bad(filename, f"header is not JSON ({e})") from None
    if not isinstance(header, dict):
        raise _bad(filename, "header is not a JSON object")
    return header


def _check_entry(filename, name, info, data_len):
    """(dtype, shape, begin, end) of one header entry, every field checked exactly."""
    where = f"entry {name!r}"
    if not isinstance(info, dict):
        raise _bad(filename, f"{where} is {_describe(info)}, not an object")
    if set(info) != _ENTRY_KEYS:
        missing = sorted(_ENTRY_KEYS - set(info))
        unknown = sorted(set(info) - _ENTRY_KEYS)
        raise _bad(filename, f"{where} must have exactly the keys dtype, shape and data_offsets"
                             + (f"; missing {missing}" if missing else "")
                             + (f"; unknown {unknown}" if unknown else ""))
    code = info["dtype"]
    if not isinstance(code, str) or code not in _DTYPES:
        raise _bad(filename, f"{where} has unknown dtype {code!r} (known: "
                             f"{', '.join(_DTYPES)})")
    dtype = _DTYPES[code]
    shape = info["shape"]
    if not isinstance(shape, list):
        raise _bad(filename, f"{where} has shape {_describe(shape)}, not a list of integers")
    if len(shape) > MAX_NDIM:
        raise _bad(filename, f"{where} has {len(shape)} dimensions; at most {MAX_NDIM} are "
                             "supported")
    for d in shape:
        if not _exact_int(d):
            raise _bad(filename, f"{where} has shape {shape}: dimension {_describe(d)} is not "
                                 "an integer")
        if d < 0:
            raise _bad(filename, f"{where} has shape {shape}: dimension {d} is negative")
    count = 1
    for d in shape:
        count *= d  # Python integers: the product cannot overflow, so test it afterwards
    nbytes = count * _onp.dtype(dtype).itemsize
    if max(shape, default=0) > sys.maxsize or nbytes > sys.maxsize:
        raise _bad(filename, f"{where} with shape {shape} and dtype {code} is too big: "
                             f"{nbytes} bytes is larger than the maximum possible size")
    offsets = info["data_offsets"]
    if (not isinstance(offsets, list) or len(offsets) != 2
            or not all(_exact_int(v) for v in offsets)):
        raise _bad(filename, f"{where} has data_offsets {_describe(offsets)}, not a list of "
                             "two integers")
    begin, end = offsets
    if not 0 <= begin <= end:
        raise _bad(filename, f"{where} has data_offsets [{begin}, {end}]: they must satisfy "
                             "0 <= begin <= end")
    if end > data_len:
        raise _bad(filename, f"{where} has data_offsets [{begin}, {end}] past the end of the "
                             f"{data_len} data bytes (is the file truncated?)")
    if end - begin != nbytes:
        raise _bad(filename, f"{where} has data_offsets [{begin}, {end}] ({end - begin} "
                             f"bytes) but shape {shape} of {code} needs {nbytes} bytes")
    return dtype, tuple(shape), begin, end


def load_safetensors(filename):
    """{name: ndarray}; raises ValueError naming the file and the problem for truncated,
    corrupted or hostile files, before building any array."""
    with open(filename, "rb") as f:
        prefix = f.read(8)
        if len(prefix) < 8:
            raise _bad(filename, f"{len(prefix)} bytes is shorter than the 8-byte header "
                                 "length")
        (n,) = struct.unpack("<Q", prefix)
        size = os.fstat(f.fileno()).st_size
        if n > MAX_HEADER_BYTES:
            raise _bad(filename, f"header length {n} is over the limit of {MAX_HEADER_BYTES} "
                                 "bytes")
        if n > size - 8:
            raise _bad(filename, f"header of {n} bytes does not fit in a file of {size} bytes")
        head = f.read(n)
        if len(head) != n:
            raise _bad(filename, f"header of {n} bytes does not fit in the file (it ended "
                                 f"after {len(head)})")
        data = f.read()
    header = _parse_header(filename, head)
    meta = header.get("__metadata__", {})
    if not isinstance(meta, dict) or not all(isinstance(v, str) for v in meta.values()):
        raise _bad(filename, f"__metadata__ is {_describe(meta)}, not an object of strings")
    entries = []
    for name, info in header.items():
        if name != "__metadata__":
            entries.append((name,) + _check_entry(filename, name, info, len(data)))
    # The entries' bytes must tile the data section, as safetensors requires.
    expected, previous = 0, None
    for name, _, _, begin, end in sorted(entries, key=lambda e: (e[3], e[4])):
        if begin < expected:
            raise _bad(filename, f"entries {previous!r} and {name!r} overlap in the data "
                                 f"section (bytes [{begin}, {expected}))")
        if begin > expected:
            raise _bad(filename, f"data bytes [{expected}, {begin}) belong to no entry")
        expected, previous = end, name
    if expected != len(data):
        raise _bad(filename, f"the last {len(data) - expected} of the {len(data)} data bytes "
                             "belong to no entry")
    view = memoryview(data)
    arrays = {}
    for name, dtype, shape, begin, end in entries:
        arr = _onp.frombuffer(view[begin:end], dtype=_onp.dtype(dtype).newbyteorder("<"))
        if dtype == "bool" and arr.size and arr.view(_onp.uint8).max() > 1:
            raise _bad(filename, f"entry {name!r} is BOOL but holds bytes other than 0 and 1")
        arrays[name] = arr.reshape(shape).astype(dtype)  # native byte order
    return {name: _from_host(arr) for name, arr in arrays.items()}


# ---- every layout load_parameters and npx.load read, told apart by the first bytes ----

NPY_MAGIC = b"\x93NUMPY"
ZIP_MAGICS = (b"PK\x03\x04", b"PK\x05\x06")  # a member first, or an empty archive


def detect_format(head):
    """'npy', 'npz', 'mxnet' (MXNet's NDArray list) or 'safetensors' from a file's first 16
    bytes. Safetensors has no magic: anything else is read (and checked) as safetensors."""
    if head.startswith(NPY_MAGIC):
        return "npy"
    if head[:4] in ZIP_MAGICS:
        return "npz"
    if _mx.is_ndarray_list(head):
        return "mxnet"
    return "safetensors"


def _to_ndx(filename, who, name, a, keep_sparse=False):
    if isinstance(a, _mx.SparseParts):
        out = _sparse_to_ndx(filename, who, name, a)
        # (a dense parameter, say, takes the sparse array's values; ndx allocates the dense
        # array, so a shape beyond the machine's memory is a MemoryError before any write)
        return out if keep_sparse else out.tostype("default").as_np_ndarray()
    if a.dtype.byteorder not in "=|":
        a = a.astype(a.dtype.newbyteorder("="))
    try:
        return _from_host(a)
    except (TypeError, ValueError) as e:
        raise ValueError(f"[{who}] {filename}: {name} has dtype {a.dtype}, which ndx cannot "
                         f"hold ({e})") from None


def _sparse_to_ndx(filename, who, name, a):
    from ..nd import sparse
    data = _to_ndx(filename, who, name, a.data)
    try:
        if a.stype == "csr":
            indptr, indices = a.aux
            return sparse.csr_matrix((data, indices, indptr), shape=a.shape)
        return sparse.row_sparse_array((data, a.aux[0]), shape=a.shape)
    except (TypeError, ValueError) as e:
        raise ValueError(f"[{who}] {filename}: {name} is a {a.stype} array ndx cannot hold "
                         f"({e})") from None


def _read_numpy(filename, fmt, who):
    import zipfile

    kind = "NumPy .npy" if fmt == "npy" else "NumPy .npz"
    try:
        if fmt == "npy":
            with open(filename, "rb") as f:
                return [_onp.lib.format.read_array(f, allow_pickle=False)], None
        with _onp.load(filename, allow_pickle=False) as z:
            names = list(z.files)
            return [z[n] for n in names], names
    except OSError as e:
        if isinstance(e, FileNotFoundError):
            raise
        raise ValueError(f"[{who}] {filename} is not a valid {kind} file: {e}") from None
    except (ValueError, EOFError, KeyError, TypeError, zipfile.BadZipFile, struct.error,
            NotImplementedError, RuntimeError) as e:
        raise ValueError(f"[{who}] {filename} is not a valid {kind} file: {e}") from None


def load_arrays(filename, who="load_parameters", keep_sparse=False):
    """(list of ndarrays, list of their names or None) from a safetensors, MXNet NDArray-list,
    NumPy .npz or .npy file. Every problem is a ValueError that names `who` and the file.
    Sparse arrays of an MXNet file become mx.nd.sparse arrays with keep_sparse, else dense."""
    with open(filename, "rb") as f:
        head = f.read(16)
    fmt = detect_format(head)
    if fmt == "safetensors":
        try:
            loaded = load_safetensors(filename)
        except ValueError as e:
            if who == "load_parameters":
                raise
            raise ValueError(str(e).replace("[load_parameters]", f"[{who}]", 1)) from None
        return list(loaded.values()), list(loaded)
    if fmt == "mxnet":
        with open(filename, "rb") as f:
            arrays, names = _mx.read(f.read(), filename, who)
        names = names or None
    else:
        arrays, names = _read_numpy(filename, fmt, who)
    labels = names or [f"array {i}" for i in range(len(arrays))]
    return [_to_ndx(filename, who, n, a, keep_sparse) for n, a in zip(labels, arrays)], names


def load_param_dict(filename, who="load_parameters"):
    """{name: ndarray} from a parameter file of any layout load_arrays reads. MXNet's export
    prefixes names with 'arg:' or 'aux:'; as in MXNet's load_parameters, the prefix goes."""
    arrays, names = load_arrays(filename, who)
    if names is None:
        raise ValueError(f"[{who}] {filename} holds {len(arrays)} arrays without names; "
                         "parameters must be saved by name (as save_parameters and export "
                         "write them)")
    out = {}
    for name, arr in zip(names, arrays):
        key = name[4:] if name.startswith(("arg:", "aux:")) else name
        if key in out:
            raise ValueError(f"[{who}] {filename} holds parameter {key!r} twice (with and "
                             "without an 'arg:' / 'aux:' prefix)")
        out[key] = arr
    return out


def save_ndarray_list(filename, arrays, names=None, who="save"):
    """Writes MXNet's NDArray-list layout (what mx.nd.save writes), atomically."""
    arrays = [_to_host(a) for a in arrays]
    write_atomically(filename, _mx.to_bytes(arrays, names, who))


def save_numpy(filename, arrays, names=None):
    """Writes one array as NumPy .npy (names None, one array) or arrays as an uncompressed
    .npz archive (MXNet 2.0's npx.save / npx.savez layouts), atomically and to exactly
    `filename` (NumPy's own functions would append a suffix)."""
    import io

    arrays = [_to_host(a) for a in arrays]
    buf = io.BytesIO()
    if names is None:
        _onp.lib.format.write_array(buf, arrays[0], allow_pickle=False)
    else:
        _onp.savez(buf, **dict(zip(names, arrays)))
    write_atomically(filename, [buf.getvalue()])


def save_tensors(filename, tensors, fmt, who):
    """{name: array} in the layout fmt names: 'safetensors', 'mxnet' or 'npz'."""
    if fmt == "safetensors":
        save_safetensors(filename, tensors)
    elif fmt == "mxnet":
        save_ndarray_list(filename, list(tensors.values()), list(tensors), who)
    elif fmt == "npz":
        save_numpy(filename, list(tensors.values()), list(tensors))
    else:
        raise ValueError(f"[{who}] format must be 'safetensors', 'mxnet' or 'npz', got "
                         f"{fmt!r}")
