"""MXNet's NDArray-list file layout: what mx.nd.save and Block.save_parameters write in MXNet
1.x (and 2.0 outside NumPy mode). All integers are little-endian:

    u64 list magic 0x112, u64 reserved (0), u64 count, `count` arrays, u64 name count (0 or
    `count`), each name as u64 length + UTF-8 bytes.

One array:

    u32 array magic: 0xF993FACA (V3, NumPy shape semantics: ndim 0 is a scalar, -1 unknown),
                     0xF993FAC9 (V2, ndim 0 means an empty "none" array),
                     0xF993FAC8 (V1), anything else (legacy: the magic is ndim)
    V2/V3: i32 storage type (0 dense, 1 row_sparse, 2 csr; a sparse one has its storage
           shape next: (nnz,) for csr, (stored rows,) + row shape for row_sparse)
    shape: V1-V3 i32 ndim + ndim x i64 dims; legacy ndim x u32 dims
    (a none array ends here)
    i32 device type + i32 device id, i32 dtype flag (mshadow's)
    sparse: per auxiliary array, i32 dtype flag + its shape (csr: indptr, then indices;
            row_sparse: the row indices)
    then the raw data (of the storage shape), then the auxiliary arrays' raw data.

Reading checks every count and size against the bytes that remain before it allocates, so a
truncated or hostile file is a ValueError naming the file, never a crash or a huge allocation.
Sparse arrays are read as SparseParts (the callers make nd.sparse arrays or dense ones of
them) after checking that their parts fit their shape."""
import struct
import sys

import numpy as _onp

LIST_MAGIC = 0x112
V1_MAGIC, V2_MAGIC, V3_MAGIC = 0xF993FAC8, 0xF993FAC9, 0xF993FACA
MAX_NDIM = 64

# mshadow's type flags.
# NumPy has no bfloat16: on the NumPy side of reading and writing, bfloat16 data travels as its
# 16-bit patterns in this one-field dtype, which no other dtype is mistaken for.
BF16_BITS = _onp.dtype([("bfloat16", "<u2")])
_FLAG_DTYPES = {0: "float32", 1: "float64", 2: "float16", 3: "uint8", 4: "int32", 5: "int8",
                6: "int64", 7: "bool", 8: "int16", 9: "uint16", 10: "uint32", 11: "uint64",
                12: BF16_BITS}
_DTYPE_FLAGS = {str(v): k for k, v in _FLAG_DTYPES.items()}


def dtype_name(dtype):
    return "bfloat16" if dtype == BF16_BITS else str(dtype)
_STORAGE = {0: "default", 1: "row_sparse", 2: "csr"}
_DEVICES = {1: "cpu", 2: "gpu", 3: "cpu_pinned", 5: "cpu_shared"}


class SparseParts:
    """A sparse array's NumPy parts, in MXNet's order: csr (data, [indptr, indices]),
    row_sparse (data, [row indices])."""

    def __init__(self, stype, shape, data, aux):
        self.stype, self.shape, self.data, self.aux = stype, tuple(shape), data, list(aux)


def is_ndarray_list(head):
    """Whether the first bytes are MXNet's list magic. A safetensors file whose header is
    0x112 bytes long starts the same way, but its header (byte 8 on) is JSON and begins with
    '{', while MXNet's reserved word there is 0."""
    return len(head) >= 9 and struct.unpack_from("<Q", head)[0] == LIST_MAGIC and head[8] != 0x7B


class _Reader:
    def __init__(self, blob, filename, who):
        self.blob, self.pos, self.filename, self.who = memoryview(blob), 0, filename, who

    def bad(self, why):
        return ValueError(f"[{self.who}] {self.filename} is not a valid MXNet NDArray file: "
                          f"{why}")

    def take(self, n, what):
        if n > len(self.blob) - self.pos:
            raise self.bad(f"{what} needs {n} bytes at offset {self.pos}, but only "
                           f"{len(self.blob) - self.pos} remain (is the file truncated?)")
        out = self.blob[self.pos:self.pos + n]
        self.pos += n
        return out

    def unpack(self, fmt, what):
        return struct.unpack(fmt, self.take(struct.calcsize(fmt), what))

    def count(self, what, each):
        """A u64 count of items of at least `each` bytes, checked against what remains."""
        (n,) = self.unpack("<Q", what)
        if n * each > len(self.blob) - self.pos:
            raise self.bad(f"{what} is {n}, more than the {len(self.blob) - self.pos} bytes "
                           "left could hold (is the file truncated?)")
        return n

    def shape(self, legacy_ndim, where):
        if legacy_ndim is not None:  # before V1: the magic was ndim, dims were u32
            return self.unpack(f"<{legacy_ndim}I", f"{where}: shape")
        (ndim,) = self.unpack("<i", f"{where}: ndim")
        if ndim < 0:
            return None  # unknown shape (V3): a none array
        if ndim > MAX_NDIM:
            raise self.bad(f"{where} has {ndim} dimensions; at most {MAX_NDIM} are supported")
        return self.unpack(f"<{ndim}q", f"{where}: shape")

    def array(self, i):
        where = f"array {i}"
        (magic,) = self.unpack("<I", f"{where}: magic")
        legacy_ndim = None
        stype, storage_shape = 0, None
        if magic in (V2_MAGIC, V3_MAGIC):
            (stype,) = self.unpack("<i", f"{where}: storage type")
            if stype not in _STORAGE:
                raise self.bad(f"{where} has unknown storage type {stype}")
            if stype != 0:
                storage_shape = self.shape(None, f"{where} storage")
                if storage_shape is None:
                    raise self.bad(f"{where} has no storage shape")
        elif magic != V1_MAGIC:
            if magic > MAX_NDIM:
                raise self.bad(f"{where} starts with 0x{magic:08X}, neither an NDArray magic "
                               f"(0x{V1_MAGIC:08X}..0x{V3_MAGIC:08X}) nor a legacy ndim "
                               f"(at most {MAX_NDIM})")
            legacy_ndim = magic
        shape = self.shape(legacy_ndim, where)
        none = shape is None or any(d < 0 for d in shape) or (
            magic != V3_MAGIC and len(shape) == 0)
        if none:
            raise self.bad(f"{where} is an empty MXNet NDArray (no shape, no data), which ndx "
                           "cannot hold")
        dev_type, _dev_id, flag = self.unpack("<iii", f"{where}: device and dtype")
        if dev_type not in _DEVICES:
            raise self.bad(f"{where} has unknown device type {dev_type} (known: "
                           f"{', '.join(f'{k} {v}' for k, v in _DEVICES.items())})")
        dtype = self.dtype(flag, where)
        if stype == 0:
            return self.raw(shape, dtype, where)
        aux_specs = []
        for k in range(2 if stype == 2 else 1):
            (aux_flag,) = self.unpack("<i", f"{where} aux {k}: dtype")
            aux_shape = self.shape(None, f"{where} aux {k}")
            aux_specs.append((self.dtype(aux_flag, f"{where} aux {k}"), aux_shape or ()))
        data = self.raw(storage_shape, dtype, where)
        aux = [self.raw(s, t, f"{where} aux {k}") for k, (t, s) in enumerate(aux_specs)]
        return self.checked_sparse(_STORAGE[stype], tuple(shape), data, aux, where)

    def dtype(self, flag, where):
        dtype = _FLAG_DTYPES.get(flag)
        if dtype is None:
            known = ", ".join(f"{k} {dtype_name(v)}" for k, v in _FLAG_DTYPES.items())
            raise self.bad(f"{where} has dtype flag {flag} (unknown; known: {known})")
        return dtype

    def raw(self, shape, dtype, where):
        count = 1
        for d in shape:
            count *= d
        nbytes = count * _onp.dtype(dtype).itemsize
        if nbytes > sys.maxsize:
            raise self.bad(f"{where} with shape {tuple(shape)} is too big ({nbytes} bytes)")
        raw = self.take(nbytes, f"{where} data ({dtype_name(dtype)}, shape {tuple(shape)})")
        arr = _onp.frombuffer(raw, dtype=_onp.dtype(dtype).newbyteorder("<"))
        if dtype == "bool" and arr.size and arr.view(_onp.uint8).max() > 1:
            raise self.bad(f"{where} is bool but holds bytes other than 0 and 1")
        # native byte order; a view of the blob where that is already so (callers copy)
        return arr.reshape(shape).astype(dtype, copy=False)

    def checked_sparse(self, stype, shape, data, aux, where):
        """The parts, once they fit the shape: the sizes, integer indices in range, indptr
        running from 0 to nnz without decreasing."""
        if any(a.dtype.kind not in "iu" for a in aux):
            raise self.bad(f"{where}: the {stype} indices must be integers, got "
                           f"{[str(a.dtype) for a in aux]}")
        aux = [a.astype(_onp.int64) for a in aux]
        if stype == "csr":
            indptr, indices = aux
            fits = (len(shape) == 2 and data.ndim == 1 and indices.shape == data.shape
                    and indptr.shape == (shape[0] + 1,))
            if fits:
                ok_ptr = indptr[0] == 0 and indptr[-1] == data.size and not (
                    _onp.diff(indptr) < 0).any()
                fits = ok_ptr and not (indices.size and (indices.min() < 0 or
                                                         indices.max() >= shape[1]))
        else:
            (rows,) = aux
            fits = (len(shape) >= 1 and rows.ndim == 1 and data.shape == rows.shape
                    + tuple(shape[1:]) and not (rows.size and (rows.min() < 0 or
                                                               rows.max() >= shape[0])))
        if not fits:
            raise self.bad(f"{where}: the {stype} parts (data {data.shape}, indices "
                           f"{[a.shape for a in aux]}) do not describe an array of shape "
                           f"{shape}")
        return SparseParts(stype, shape, data, aux)


def read(blob, filename, who):
    """(list of NumPy arrays, list of names; [] when the file has none)."""
    r = _Reader(blob, filename, who)
    magic, _reserved = r.unpack("<QQ", "header")
    if magic != LIST_MAGIC:
        raise r.bad(f"list magic is 0x{magic:X}, expected 0x{LIST_MAGIC:X}")
    n = r.count("array count", 4)
    arrays = [r.array(i) for i in range(n)]
    k = r.count("name count", 8)
    if k not in (0, n):
        raise r.bad(f"{k} names for {n} arrays (there must be none or one per array)")
    names = []
    for i in range(k):
        size = r.count(f"name {i} length", 1)
        try:
            names.append(bytes(r.take(size, f"name {i}")).decode("utf-8"))
        except UnicodeDecodeError as e:
            raise r.bad(f"name {i} is not UTF-8 ({e})") from None
    if len(set(names)) != len(names):
        dup = next(x for x in names if names.count(x) > 1)
        raise r.bad(f"name {dup!r} appears twice")
    if r.pos != len(r.blob):
        raise r.bad(f"{len(r.blob) - r.pos} bytes follow the name list")
    return arrays, names


def _shape_bytes(shape):
    return struct.pack(f"<i{len(shape)}q", len(shape), *shape)


def _flag(a, label, who):
    flag = _DTYPE_FLAGS.get(str(a.dtype))
    if flag is None:
        supported = ", ".join(dtype_name(d) for d in _FLAG_DTYPES.values())
        raise TypeError(f"[{who}] {label}: dtype {a.dtype} has no MXNet NDArray type flag "
                        f"(supported: {supported})")
    return flag


def _little_endian_bytes(a):
    return _onp.ascontiguousarray(a).astype(a.dtype.newbyteorder("<"), copy=False).tobytes()


def to_bytes(arrays, names, who):
    """The file's bytes for NumPy arrays and SparseParts (and their names, or None). Each
    array is written as V2, which MXNet 1.x and 2.0 both read; a 0-d or zero-size dense one
    as V3, since V2 (MXNet's legacy shape semantics) cannot describe it."""
    pieces = [struct.pack("<QQQ", LIST_MAGIC, 0, len(arrays))]
    for i, a in enumerate(arrays):
        label = names[i] if names else f"array {i}"
        if isinstance(a, SparseParts):  # V2 with its storage type, as MXNet writes them
            stype = {v: k for k, v in _STORAGE.items()}[a.stype]
            pieces.append(struct.pack("<Ii", V2_MAGIC, stype) + _shape_bytes(a.data.shape)
                          + _shape_bytes(a.shape)
                          + struct.pack("<iii", 1, 0, _flag(a.data, label, who)))
            for part in a.aux:
                pieces.append(struct.pack("<i", _flag(part, label, who))
                              + _shape_bytes(part.shape))
            pieces.extend(_little_endian_bytes(x) for x in [a.data] + a.aux)
            continue
        magic = V3_MAGIC if a.ndim == 0 or a.size == 0 else V2_MAGIC
        pieces.append(struct.pack("<Ii", magic, 0) + _shape_bytes(a.shape)
                      + struct.pack("<iii", 1, 0, _flag(a, label, who)))
        pieces.append(_little_endian_bytes(a))
    names = names or []
    pieces.append(struct.pack("<Q", len(names)))
    for name in names:
        raw = name.encode("utf-8")
        pieces.append(struct.pack("<Q", len(raw)) + raw)
    return pieces
