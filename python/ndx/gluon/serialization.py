"""The safetensors layout: an 8-byte little-endian header length, a JSON header
{name: {"dtype", "shape", "data_offsets"}}, then the raw little-endian data."""
import json
import os
import struct
import tempfile

import numpy as _onp

from .. import numpy as np

_CODES = {"bool": "BOOL", "int8": "I8", "int16": "I16", "int32": "I32", "int64": "I64",
          "uint8": "U8", "uint16": "U16", "uint32": "U32", "uint64": "U64", "float16": "F16",
          "float32": "F32", "float64": "F64"}
_DTYPES = {v: k for k, v in _CODES.items()}


def save_safetensors(filename, tensors):
    header, chunks, offset = {}, [], 0
    for name, arr in tensors.items():
        a = arr.asnumpy() if isinstance(arr, np.ndarray) else _onp.asarray(arr)
        a = _onp.ascontiguousarray(a)
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
    directory = os.path.dirname(os.path.abspath(filename))
    fd, tmp = tempfile.mkstemp(prefix=".ndx-params-", dir=directory)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(struct.pack("<Q", len(head)))
            f.write(head)
            for c in chunks:
                f.write(c)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, filename)  # readers see the old file or the new one, never a partial
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def _bad(filename, why):
    return ValueError(f"[load_parameters] {filename} is not a valid parameter file: {why}")


def load_safetensors(filename):
    """{name: ndarray}; raises ValueError naming the problem for truncated or corrupted files."""
    with open(filename, "rb") as f:
        blob = f.read()
    if len(blob) < 8:
        raise _bad(filename, f"{len(blob)} bytes is shorter than the 8-byte header length")
    (n,) = struct.unpack("<Q", blob[:8])
    if n > len(blob) - 8:
        raise _bad(filename, f"header of {n} bytes does not fit in a file of {len(blob)} bytes")
    try:
        header = json.loads(blob[8:8 + n])
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise _bad(filename, f"header is not JSON ({e})") from None
    if not isinstance(header, dict):
        raise _bad(filename, "header is not a JSON object")
    data = memoryview(blob)[8 + n:]
    out = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        try:
            dtype = _DTYPES[info["dtype"]]
            shape = tuple(int(d) for d in info["shape"])
            begin, end = (int(v) for v in info["data_offsets"])
        except (KeyError, TypeError, ValueError):
            raise _bad(filename, f"entry {name!r} is malformed") from None
        size = _onp.dtype(dtype).itemsize * int(_onp.prod(shape, dtype=_onp.int64))
        if any(d < 0 for d in shape) or not 0 <= begin <= end <= len(data) or end - begin != size:
            raise _bad(filename, f"entry {name!r} (shape {shape}, {dtype}) has data offsets "
                                 f"[{begin}, {end}) outside the {len(data)} data bytes or of the "
                                 "wrong size")
        arr = _onp.frombuffer(data[begin:end], dtype=_onp.dtype(dtype).newbyteorder("<"))
        out[name] = np.array(arr.reshape(shape).astype(dtype))
    return out
