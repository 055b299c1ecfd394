"""MXNet's RecordIO files (``mx.recordio``): MXRecordIO reads and writes records in dmlc's
format, MXIndexedRecordIO adds the .idx file of (key, offset) lines for random access, and
pack / unpack put MXNet's image-record header (IRHeader) in front of a payload.

The format: each record is a little-endian uint32 magic 0xced7230a, a uint32 holding a
continuation flag (top 3 bits) and the length (29 bits), the bytes, and zero padding to a
multiple of 4. A payload containing the magic at a 4-byte boundary is split there into parts
flagged 1 (first), 2 (middle) and 3 (last), the magic itself left out and put back by the
reader, so readers can resynchronize on the magic. pack_img / unpack_img encode and decode
images through Pillow (ndx.image), in OpenCV's BGR layout as MXNet's do."""
import numbers
import os
import struct
from collections import namedtuple

import numpy as onp

__all__ = ["IRHeader", "MXIndexedRecordIO", "MXRecordIO", "pack", "pack_img", "unpack",
           "unpack_img"]

_MAGIC = 0xCED7230A
_MAGIC_BYTES = struct.pack("<I", _MAGIC)
_MAX_LENGTH = (1 << 29) - 1


def _header(flag, length):
    return _MAGIC_BYTES + struct.pack("<I", (flag << 29) | length)


class MXRecordIO:
    """Sequential reading ('r') or writing ('w') of a RecordIO file at uri."""

    def __init__(self, uri, flag):
        if flag not in ("r", "w"):
            raise ValueError(f"[MXRecordIO] flag must be 'r' or 'w', got {flag!r}")
        self.uri, self.flag = os.fspath(uri), flag
        self.handle = None
        self.is_open = False
        self.open()

    def open(self):
        """Opens the file (truncating it for 'w')."""
        self.handle = open(self.uri, "rb" if self.flag == "r" else "wb")  # noqa: SIM115
        self.writable = self.flag == "w"
        self.is_open = True

    def close(self):
        if getattr(self, "is_open", False):
            self.handle.close()
            self.is_open = False

    def __del__(self):
        self.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __getstate__(self):
        """Pickles as its uri and flag; an unpickled reader reopens the file at its start."""
        state = self.__dict__.copy()
        state.update(handle=None, is_open=False)
        return state

    def __setstate__(self, state):
        self.__dict__.update(state)
        self.open()

    def reset(self):
        """Back to the first record (closes and reopens, as MXNet's)."""
        self.close()
        self.open()

    def _check(self, writing):
        if not self.is_open:
            raise ValueError(f"[MXRecordIO] {self.uri} is closed")
        if writing != self.writable:
            raise ValueError(f"[MXRecordIO] {self.uri} is open for "
                             f"{'writing' if self.writable else 'reading'}")

    def tell(self):
        """The byte offset where the next record starts."""
        if not self.is_open:
            raise ValueError(f"[MXRecordIO] {self.uri} is closed")
        return self.handle.tell()

    def write(self, buf):
        """Appends one record (bytes-like, under 2**29 bytes)."""
        self._check(True)
        data = bytes(buf) if not isinstance(buf, bytes) else buf
        if len(data) > _MAX_LENGTH:
            raise ValueError(f"[MXRecordIO.write] a record holds at most {_MAX_LENGTH} bytes, "
                             f"got {len(data)}")
        start, parts = 0, []
        for i in range(0, len(data) - len(data) % 4, 4):
            if data[i:i + 4] == _MAGIC_BYTES:
                parts.append(_header(1 if start == 0 else 2, i - start) + data[start:i])
                start = i + 4
        tail = data[start:]
        parts.append(_header(3 if start else 0, len(tail)) + tail +
                     b"\0" * (-len(data) % 4))
        self.handle.write(b"".join(parts))

    def read(self):
        """The next record's bytes, or None at the end of the file."""
        self._check(False)
        out = bytearray()
        while True:
            at = self.handle.tell()
            head = self.handle.read(8)
            if not head:
                if out:
                    raise ValueError(f"[MXRecordIO.read] {self.uri}: the file ends inside a "
                                     f"record split at byte {at}")
                return None
            if len(head) != 8:
                raise ValueError(f"[MXRecordIO.read] {self.uri}: truncated record header at "
                                 f"byte {at}")
            magic, lrec = struct.unpack("<II", head)
            if magic != _MAGIC:
                raise ValueError(f"[MXRecordIO.read] {self.uri}: no RecordIO magic at byte "
                                 f"{at} (not a RecordIO file, or a bad offset)")
            cflag, length = lrec >> 29, lrec & _MAX_LENGTH
            padded = (length + 3) & ~3
            body = self.handle.read(padded)
            if len(body) != padded:
                raise ValueError(f"[MXRecordIO.read] {self.uri}: record at byte {at} is "
                                 f"truncated ({len(body)} of {padded} bytes)")
            out += body[:length]
            if cflag in (0, 3):
                return bytes(out)
            out += _MAGIC_BYTES


class MXIndexedRecordIO(MXRecordIO):
    """RecordIO with an index file (lines 'key<TAB>offset') for reading records by key.
    key_type converts the keys read from the index (int by default)."""

    def __init__(self, idx_path, uri, flag, key_type=int):
        self.idx_path, self.key_type = os.fspath(idx_path), key_type
        self.idx, self.keys, self.fidx = {}, [], None
        super().__init__(uri, flag)

    def open(self):
        super().open()
        self.idx, self.keys = {}, []
        self.fidx = open(self.idx_path, "r" if self.flag == "r" else "w")  # noqa: SIM115
        if self.writable:
            return
        for n, line in enumerate(self.fidx, 1):
            parts = line.strip().split("\t")
            if not parts or parts == [""]:
                continue
            if len(parts) != 2:
                raise ValueError(f"[MXIndexedRecordIO] {self.idx_path}:{n}: expected "
                                 f"'key<TAB>offset', got {line.strip()!r}")
            key = self.key_type(parts[0])
            self.idx[key] = int(parts[1])
            self.keys.append(key)

    def close(self):
        if getattr(self, "is_open", False) and self.fidx is not None:
            self.fidx.close()
        super().close()

    def __getstate__(self):
        state = super().__getstate__()
        state["fidx"] = None
        return state

    def seek(self, idx):
        """Positions the reader at the record with key idx."""
        self._check(False)
        if idx not in self.idx:
            raise KeyError(f"[MXIndexedRecordIO] no record with key {idx!r} in "
                           f"{self.idx_path}")
        self.handle.seek(self.idx[idx])

    def read_idx(self, idx):
        """The record with key idx."""
        self.seek(idx)
        return self.read()

    def write_idx(self, idx, buf):
        """Appends a record under key idx and indexes it."""
        key = self.key_type(idx)
        pos = self.tell()
        self.write(buf)
        self.fidx.write(f"{key}\t{pos}\n")
        self.idx[key] = pos
        self.keys.append(key)


IRHeader = namedtuple("HEADER", ["flag", "label", "id", "id2"])
IRHeader.__doc__ = """MXNet's image-record header: flag (0, or the count of float labels that
follow the header), label (a number when flag is 0), id and id2 (uint64)."""
_IR_FORMAT = "<IfQQ"
_IR_SIZE = struct.calcsize(_IR_FORMAT)


def pack(header, s):
    """header (an IRHeader; its label a number or a sequence of floats) and the bytes s as one
    record payload."""
    header = IRHeader(*header)
    if isinstance(header.label, numbers.Number):
        header = header._replace(flag=0)
    else:
        label = onp.asarray(header.label, dtype=onp.float32).ravel()
        header = header._replace(flag=label.size, label=0)
        s = label.tobytes() + bytes(s)
    return struct.pack(_IR_FORMAT, *header) + bytes(s)


def unpack(s):
    """(IRHeader, payload bytes) of a record written by pack; a label array when flag > 0."""
    if len(s) < _IR_SIZE:
        raise ValueError(f"[unpack] a record needs at least {_IR_SIZE} header bytes, got "
                         f"{len(s)}")
    header = IRHeader(*struct.unpack(_IR_FORMAT, s[:_IR_SIZE]))
    s = s[_IR_SIZE:]
    if header.flag > 0:
        if len(s) < 4 * header.flag:
            raise ValueError(f"[unpack] the header promises {header.flag} float labels, the "
                             f"record holds {len(s) // 4}")
        header = header._replace(label=onp.frombuffer(s, onp.float32, header.flag))
        s = s[4 * header.flag:]
    return header, s


def pack_img(header, img, quality=95, img_fmt=".jpg"):
    """header and an image in OpenCV's layout (uint8 BGR (H, W, 3) or gray (H, W)) encoded as
    img_fmt ('.jpg' with JPEG quality, or '.png' with compression level quality), as one record
    payload. Encoding goes through Pillow (see ndx.image)."""
    from .image import encode_from_numpy
    return pack(header, encode_from_numpy(img, quality, img_fmt, "pack_img"))


def unpack_img(s, iscolor=-1):
    """(IRHeader, image) of a record written by pack_img: the image as OpenCV's imdecode gives
    it (BGR (H, W, 3), BGRA with an alpha channel, gray (H, W)); iscolor 1 color, 0 gray, -1
    as stored."""
    from .image import decode_to_numpy
    header, payload = unpack(s)
    return header, decode_to_numpy(payload, iscolor, "unpack_img")
