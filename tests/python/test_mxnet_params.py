"""MXNet's own parameter files: the NDArray-list layout of mx.nd.save / MXNet 1.x
save_parameters and the .npz of MXNet 2.0, read by Block.load_parameters, SymbolBlock.imports
and npx.load next to ndx's safetensors. The files here come from an independent writer built
from the layout MXNet's NDArray::Save documents (struct.pack, nothing from ndx), and the
arrays ndx reads are compared with the NumPy arrays written."""
import struct

import numpy as onp
import pytest

from ndx import gluon, np, npx
from ndx.numpy_extension import _io

LIST_MAGIC = 0x112
V1, V2, V3 = 0xF993FAC8, 0xF993FAC9, 0xF993FACA
FLAGS = {"float32": 0, "float64": 1, "float16": 2, "uint8": 3, "int32": 4, "int8": 5,
         "int64": 6, "bool": 7, "int16": 8, "uint16": 9, "uint32": 10, "uint64": 11}


# ---- an independent writer and reader of the layout -------------------------------------

def mx_array(a, version=V2, stype=0, device=(1, 0), flag=None):
    """One NDArray as MXNet's NDArray::Save writes it (little-endian)."""
    a = onp.asarray(a)
    flag = FLAGS[str(a.dtype)] if flag is None else flag
    if version in (V2, V3):
        out = struct.pack("<Ii", version, stype)
        out += struct.pack("<i", a.ndim) + b"".join(struct.pack("<q", d) for d in a.shape)
    elif version == V1:
        out = struct.pack("<I", V1)
        out += struct.pack("<i", a.ndim) + b"".join(struct.pack("<q", d) for d in a.shape)
    else:  # before V1: the first word is ndim, dims are uint32
        out = struct.pack("<I", a.ndim) + b"".join(struct.pack("<I", d) for d in a.shape)
    out += struct.pack("<ii", *device) + struct.pack("<i", flag)
    return out + a.astype(a.dtype.newbyteorder("<")).tobytes()


def mx_sparse(stype, shape, data, aux, data_flag=None):
    """A sparse NDArray as NDArray::Save writes it: V2, its storage type (1 row_sparse, 2
    csr), the storage shape (data's), the shape, the device, data's flag, each auxiliary
    array's flag and shape (csr: indptr, indices; row_sparse: row indices), then data and the
    auxiliary arrays' bytes."""
    def shape_bytes(sh):
        return struct.pack("<i", len(sh)) + b"".join(struct.pack("<q", d) for d in sh)

    data = onp.asarray(data)
    out = struct.pack("<Ii", V2, {"row_sparse": 1, "csr": 2}[stype])
    out += shape_bytes(data.shape) + shape_bytes(shape) + struct.pack("<ii", 1, 0)
    out += struct.pack("<i", FLAGS[str(data.dtype)] if data_flag is None else data_flag)
    for a in aux:
        out += struct.pack("<i", FLAGS[str(a.dtype)]) + shape_bytes(a.shape)
    return out + b"".join(x.astype(x.dtype.newbyteorder("<")).tobytes() for x in [data] + aux)


def mx_file(arrays, names=None, raw_arrays=None):
    """The NDArray-list file: magic, reserved, count, arrays, then the names."""
    blobs = raw_arrays if raw_arrays is not None else [mx_array(a) for a in arrays]
    out = struct.pack("<QQQ", LIST_MAGIC, 0, len(blobs)) + b"".join(blobs)
    names = names or []
    out += struct.pack("<Q", len(names))
    for n in names:
        raw = n.encode()
        out += struct.pack("<Q", len(raw)) + raw
    return out


def mx_read(blob):
    """Reads a file of dense arrays back (the test's own reader) -> ({name or index: array})."""
    pos = 0

    def take(fmt):
        nonlocal pos
        vals = struct.unpack_from(fmt, blob, pos)
        pos += struct.calcsize(fmt)
        return vals

    magic, reserved, n = take("<QQQ")
    assert (magic, reserved) == (LIST_MAGIC, 0)
    arrays = []
    for _ in range(n):
        version, stype = take("<Ii")
        assert version in (V2, V3) and stype == 0
        (ndim,) = take("<i")
        shape = take(f"<{ndim}q")
        dev_type, dev_id, flag = take("<iii")
        assert (dev_type, dev_id) == (1, 0)
        dtype = onp.dtype({v: k for k, v in FLAGS.items()}[flag])
        count = int(onp.prod(shape, dtype=onp.int64))
        arrays.append(onp.frombuffer(blob, dtype.newbyteorder("<"), count, pos).reshape(shape))
        pos += count * dtype.itemsize
        assert version == (V3 if ndim == 0 or count == 0 else V2)
    (k,) = take("<Q")
    names = []
    for _ in range(k):
        (size,) = take("<Q")
        names.append(blob[pos:pos + size].decode())
        pos += size
    assert pos == len(blob)
    return dict(zip(names or range(n), arrays))


def _write(path, blob):
    with open(path, "wb") as f:
        f.write(blob)
    return str(path)


# ---- reading ------------------------------------------------------------------------------

DTYPES = ["float32", "float16", "float64", "int8", "int16", "int32", "int64", "uint8",
          "uint16", "uint32", "uint64", "bool"]


@pytest.mark.parametrize("dtype", DTYPES)
def test_npx_load_reads_every_dense_dtype(tmp_path, dtype):
    rng = onp.random.default_rng(0)
    values = {"m": (rng.normal(size=(2, 3)) * 50).astype(dtype),
              "v": (rng.normal(size=(5,)) * 50).astype(dtype)}
    path = _write(tmp_path / "a.params", mx_file(list(values.values()), list(values)))
    back = npx.load(path)
    assert list(back) == ["m", "v"]
    for k, ref in values.items():
        assert str(back[k].dtype) == dtype and back[k].shape == ref.shape
        onp.testing.assert_array_equal(back[k].asnumpy(), ref)


def test_scalars_and_zero_size_arrays(tmp_path):
    scalar, empty = onp.array(2.5, onp.float32), onp.zeros((0, 3), onp.int32)
    raw = [mx_array(scalar, V3), mx_array(empty, V3), mx_array(onp.zeros((4, 0)), V2)]
    path = _write(tmp_path / "a.params", mx_file(None, ["s", "e", "e2"], raw))
    back = npx.load(path)
    assert back["s"].shape == () and float(back["s"]) == 2.5
    assert back["e"].shape == (0, 3) and str(back["e"].dtype) == "int32"
    assert back["e2"].shape == (4, 0) and str(back["e2"].dtype) == "float64"


def test_older_array_versions(tmp_path):
    a = onp.arange(6, dtype=onp.float32).reshape(2, 3)
    raw = [mx_array(a, V1), mx_array(a, "legacy"), mx_array(a, V3)]
    back = npx.load(_write(tmp_path / "old.params", mx_file(None, ["v1", "v0", "v3"], raw)))
    for k in ("v1", "v0", "v3"):
        onp.testing.assert_array_equal(back[k].asnumpy(), a)


def test_unnamed_files_load_as_a_list_or_one_array(tmp_path):
    a, b = onp.ones((2, 2), onp.float32), onp.arange(3, dtype=onp.int64)
    both = npx.load(_write(tmp_path / "two", mx_file([a, b])))
    assert isinstance(both, list) and len(both) == 2
    onp.testing.assert_array_equal(both[1].asnumpy(), b)
    one = npx.load(_write(tmp_path / "one", mx_file([a])))  # MXNet 2.0: the array itself
    assert isinstance(one, np.ndarray)
    onp.testing.assert_array_equal(one.asnumpy(), a)
    assert isinstance(_io.nd_load(str(tmp_path / "one")), list)  # mx.nd.load: always a list


def _dense_net():
    net = gluon.nn.HybridSequential()
    net.add(gluon.nn.Dense(4, in_units=3), gluon.nn.BatchNorm(in_channels=4),
            gluon.nn.Dense(2, in_units=4))
    net.initialize()
    return net


def _mxnet_values(prefix=""):
    rng = onp.random.default_rng(5)
    shapes = {"0.weight": (4, 3), "0.bias": (4,), "1.gamma": (4,), "1.beta": (4,),
              "1.running_mean": (4,), "1.running_var": (4,), "2.weight": (2, 4), "2.bias": (2,)}
    out = {}
    for k, s in shapes.items():
        tag = ("aux:" if "running" in k else "arg:") if prefix else ""
        v = rng.normal(size=s).astype(onp.float32)
        out[tag + k] = onp.abs(v) + 0.5 if "var" in k else v
    return out


def _reference_forward(values, x):
    """The network by hand in NumPy (predict mode: BatchNorm uses the running statistics)."""
    v = {k.split(":")[-1]: a.astype(onp.float64) for k, a in values.items()}
    h = x @ v["0.weight"].T + v["0.bias"]
    h = (h - v["1.running_mean"]) / onp.sqrt(v["1.running_var"] + 1e-5) * v["1.gamma"] \
        + v["1.beta"]
    return h @ v["2.weight"].T + v["2.bias"]


@pytest.mark.parametrize("prefix", ["", "arg:/aux:"])
def test_load_parameters_reads_an_mxnet_file(tmp_path, prefix):
    values = _mxnet_values(prefix)
    path = _write(tmp_path / "net.params", mx_file(list(values.values()), list(values)))
    net = _dense_net()
    net.load_parameters(path)
    x = onp.random.default_rng(1).normal(size=(5, 3)).astype(onp.float32)
    onp.testing.assert_allclose(net(np.array(x)).asnumpy(), _reference_forward(values, x),
                                rtol=1e-5, atol=1e-5)
    for k, p in net.collect_params().items():
        onp.testing.assert_array_equal(p.data().asnumpy(), values[
            (("aux:" if "running" in k else "arg:") if prefix else "") + k])


def test_load_parameters_reads_mxnet2_npz(tmp_path):
    values = _mxnet_values("arg:/aux:")  # MXNet 2.0's export in NumPy mode: npx.savez
    path = str(tmp_path / "net-0000.params")
    with open(path, "wb") as f:
        onp.savez(f, **values)
    net = _dense_net()
    net.load_parameters(path)
    x = onp.random.default_rng(2).normal(size=(3, 3)).astype(onp.float32)
    onp.testing.assert_allclose(net(np.array(x)).asnumpy(), _reference_forward(values, x),
                                rtol=1e-5, atol=1e-5)


def test_a_safetensors_header_of_0x112_bytes_is_not_taken_for_mxnet(tmp_path):
    # safetensors has no magic: its first word is the header length, which may be 0x112.
    import json
    header = json.dumps({"w": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]}}).encode()
    header += b" " * (LIST_MAGIC - len(header))
    path = _write(tmp_path / "w.safetensors",
                  struct.pack("<Q", len(header)) + header + struct.pack("<f", 3.0))
    assert npx.load(path)["w"].asnumpy().tolist() == [3.0]


def test_npx_load_reads_ndx_safetensors(tmp_path):
    net = _dense_net()
    path = str(tmp_path / "net.safetensors")
    net.save_parameters(path)
    back = npx.load(path)
    assert list(back) == list(net.collect_params())
    for k, p in net.collect_params().items():
        onp.testing.assert_array_equal(back[k].asnumpy(), p.data().asnumpy())


def test_dtype_rules_apply_to_mxnet_files(tmp_path):
    values = {k: v.astype(onp.float64) for k, v in _mxnet_values().items()}
    path = _write(tmp_path / "f64.params", mx_file(list(values.values()), list(values)))
    net = _dense_net()
    with pytest.raises(ValueError, match="cast_dtype"):
        net.load_parameters(path)
    net.load_parameters(path, cast_dtype=True)
    assert str(net.collect_params()["0.weight"].data().dtype) == "float32"


def test_an_unnamed_file_is_not_a_parameter_file(tmp_path):
    path = _write(tmp_path / "list.params", mx_file([onp.ones(3, onp.float32)]))
    with pytest.raises(ValueError, match="without names"):
        _dense_net().load_parameters(path)


# ---- bad files: a ValueError naming the file, never a crash, and the block unchanged ---

def _good_blob():
    return mx_file([onp.arange(6, dtype=onp.float32).reshape(2, 3), onp.ones(2, onp.int64)],
                   ["a", "b"])


def test_every_truncation_is_a_value_error(tmp_path):
    blob = _good_blob()
    path = str(tmp_path / "cut.params")
    for n in range(len(blob)):  # below 9 bytes it reads as a (short) safetensors file
        _write(path, blob[:n])
        with pytest.raises(ValueError, match="cut.params"):
            npx.load(path)


def _bad_array_blob(raw):
    return mx_file(None, ["x"], [raw])


@pytest.mark.parametrize("case, match", [
    ("bad-array-magic", "neither an NDArray magic"),
    ("row-sparse-row-out-of-range", "do not describe an array of shape"),
    ("csr-indptr-decreasing", "do not describe an array of shape"),
    ("csr-float-indices", "indices must be integers"),
    ("sparse-truncated", "is the file truncated"),
    ("unknown-storage", "unknown storage type 7"),
    ("unknown-dtype", "dtype flag 99"),
    ("bad-device", "unknown device type 9"),
    ("none-array", "empty MXNet NDArray"),
    ("unknown-shape", "empty MXNet NDArray"),
    ("too-many-dims", "at most 64"),
    ("huge-count", "more than the"),
    ("huge-dim", "is the file truncated"),
    ("names-mismatch", "2 names for 1 arrays"),
    ("duplicate-names", "appears twice"),
    ("trailing", "bytes follow the name list"),
    ("bad-utf8", "not UTF-8"),
    ("bool-bytes", "other than 0 and 1"),
])
def test_bad_files_raise_a_value_error_naming_the_file(tmp_path, case, match):
    a = onp.ones((2, 2), onp.float32)
    blob = {
        "bad-array-magic": lambda: _bad_array_blob(b"\xef\xbe\xad\xde" + mx_array(a)[4:]),
        "row-sparse-row-out-of-range": lambda: _bad_array_blob(mx_sparse(
            "row_sparse", (2, 2), a[:1], [onp.array([2], onp.int64)])),
        "csr-indptr-decreasing": lambda: _bad_array_blob(mx_sparse(
            "csr", (2, 2), a[0], [onp.array([0, 2, 1], onp.int64), onp.array([0, 1])])),
        "csr-float-indices": lambda: _bad_array_blob(mx_sparse(
            "csr", (2, 2), a[0], [onp.array([0, 1, 2], onp.float32), onp.array([0.0, 1.0])])),
        "sparse-truncated": lambda: _bad_array_blob(mx_sparse(  # (the file ends in the indices)
            "row_sparse", (2, 2), a, [onp.array([0, 1], onp.int64)]))[:-30],
        "unknown-storage": lambda: _bad_array_blob(mx_array(a, stype=7)),
        "unknown-dtype": lambda: _bad_array_blob(mx_array(a, flag=99)),
        "bad-device": lambda: _bad_array_blob(mx_array(a, device=(9, 0))),
        "none-array": lambda: _bad_array_blob(struct.pack("<Iii", V2, 0, 0)),
        "unknown-shape": lambda: _bad_array_blob(struct.pack("<Iii", V3, 0, -1)),
        "too-many-dims": lambda: _bad_array_blob(struct.pack("<Iii", V2, 0, 1000)),
        "huge-count": lambda: struct.pack("<QQQ", LIST_MAGIC, 0, 2**62),
        "huge-dim": lambda: _bad_array_blob(struct.pack("<Iiiqq", V2, 0, 2, 2**40, 2**20)
                                            + struct.pack("<iii", 1, 0, 0)),
        "names-mismatch": lambda: mx_file([a], ["x", "y"]),
        "duplicate-names": lambda: mx_file([a, a], ["x", "x"]),
        "trailing": lambda: mx_file([a], ["x"]) + b"\0",
        "bad-utf8": lambda: mx_file(None, None, [mx_array(a)])[:-8]
        + struct.pack("<QQ", 1, 2) + b"\xff\xfe",
        "bool-bytes": lambda: _bad_array_blob(mx_array(onp.array([1, 2], onp.uint8), flag=7)),
    }[case]()
    path = _write(tmp_path / f"{case}.params", blob)
    with pytest.raises(ValueError, match=match) as info:
        npx.load(path)
    assert f"{case}.params" in str(info.value) and "[npx.load]" in str(info.value)
    net = _dense_net()
    before = {k: p.data().asnumpy().copy() for k, p in net.collect_params().items()}
    with pytest.raises(ValueError, match="load_parameters"):
        net.load_parameters(path, allow_missing=True, ignore_extra=True)
    for k, p in net.collect_params().items():
        onp.testing.assert_array_equal(p.data().asnumpy(), before[k])


def test_bad_npz_and_npy_files(tmp_path):
    path = _write(tmp_path / "broken.npz", b"PK\x03\x04" + b"\0" * 40)
    with pytest.raises(ValueError, match="broken.npz is not a valid NumPy .npz file"):
        npx.load(path)
    path = _write(tmp_path / "broken.npy", b"\x93NUMPY\x01\x00\x10\x00{'descr': '<f4'")
    with pytest.raises(ValueError, match="broken.npy is not a valid NumPy .npy file"):
        npx.load(path)
    with open(tmp_path / "text.npz", "wb") as f:
        onp.savez(f, a=onp.array(["x", "y"]))
    with pytest.raises(ValueError, match="text.npz: a has dtype <U1, which ndx cannot hold"):
        npx.load(str(tmp_path / "text.npz"))
    with open(tmp_path / "objects.npz", "wb") as f:
        onp.savez(f, a=onp.array([{}, 1], dtype=object))
    with pytest.raises(ValueError, match="objects.npz is not a valid NumPy .npz file"):
        npx.load(str(tmp_path / "objects.npz"))
    with open(tmp_path / "big-endian.npy", "wb") as f:
        onp.save(f, onp.arange(4, dtype=">f4"))
    onp.testing.assert_array_equal(npx.load(str(tmp_path / "big-endian.npy")).asnumpy(),
                                   onp.arange(4))
    with pytest.raises(TypeError, match="npx.load"):
        npx.load(3)


# ---- writing ------------------------------------------------------------------------------

def test_save_parameters_in_mxnet_format_is_the_documented_layout(tmp_path):
    net = _dense_net()
    path = str(tmp_path / "net.params")
    net.save_parameters(path, format="mxnet")
    blob = open(path, "rb").read()
    params = net.collect_params()
    expected = mx_file([p.data().asnumpy() for p in params.values()], list(params))
    assert blob == expected  # byte for byte what the independent writer makes
    back = mx_read(blob)
    for k, p in params.items():
        onp.testing.assert_array_equal(back[k], p.data().asnumpy())
    other = _dense_net()
    other.load_parameters(path)
    x = np.array(onp.ones((2, 3), onp.float32))
    onp.testing.assert_array_equal(other(x).asnumpy(), net(x).asnumpy())


def test_save_parameters_npz_and_format_errors(tmp_path):
    net = _dense_net()
    path = str(tmp_path / "net.params")
    net.save_parameters(path, format="npz")
    with onp.load(path) as z:
        for k, p in net.collect_params().items():
            onp.testing.assert_array_equal(z[k], p.data().asnumpy())
    with pytest.raises(ValueError, match="format must be"):
        net.save_parameters(path, format="pickle")


@pytest.mark.parametrize("fmt", ["safetensors", "mxnet", "npz"])
def test_deduplicate_saves_a_shared_parameter_once(tmp_path, fmt):
    shared = gluon.nn.Dense(3, in_units=3)
    net = gluon.nn.HybridSequential()
    net.add(shared, gluon.nn.Activation("relu"), shared)  # one Dense, used twice
    net.initialize()
    path = str(tmp_path / "shared.params")
    net.save_parameters(path, format=fmt)
    assert sorted(npx.load(path)) == ["0.bias", "0.weight", "2.bias", "2.weight"]
    net.save_parameters(path, deduplicate=True, format=fmt)
    assert sorted(npx.load(path)) == ["0.bias", "0.weight"]
    again = gluon.nn.Dense(3, in_units=3)
    other = gluon.nn.HybridSequential()
    other.add(again, gluon.nn.Activation("relu"), again)
    other.initialize()
    other.load_parameters(path)  # '2.weight' is '0.weight': not missing
    onp.testing.assert_array_equal(again.weight.data().asnumpy(),
                                   shared.weight.data().asnumpy())


def test_nd_save_writes_scalars_zero_size_and_every_dtype(tmp_path):
    rng = onp.random.default_rng(3)
    values = {d: (rng.normal(size=(3, 2)) * 20).astype(d) for d in DTYPES}
    values["scalar"] = onp.array(-1.5, onp.float32)
    values["empty"] = onp.zeros((0, 4), onp.float16)
    path = str(tmp_path / "all.params")
    _io.nd_save(path, {k: np.array(v) for k, v in values.items()})
    back = mx_read(open(path, "rb").read())
    assert list(back) == list(values)
    for k, v in values.items():
        assert back[k].dtype == v.dtype and back[k].shape == v.shape
        onp.testing.assert_array_equal(back[k], v)
    assert list(_io.nd_load(path)) == list(values)
    _io.nd_save(path, [np.array(values["int8"])])
    onp.testing.assert_array_equal(mx_read(open(path, "rb").read())[0], values["int8"])
    with pytest.raises(TypeError, match="nd.save"):
        _io.nd_save(path, {"a": onp.ones(2)})  # NumPy arrays are not ndx arrays
    with pytest.raises(TypeError, match="nd.save"):
        _io.nd_save(path, {1: np.ones(2)})


def test_npx_save_and_savez_write_numpy_files(tmp_path):
    a = onp.arange(6, dtype=onp.float32).reshape(2, 3)
    b = onp.array([True, False])
    path = str(tmp_path / "a.bin")  # no suffix is added, as MXNet's C++ writer does
    npx.save(path, np.array(a))
    onp.testing.assert_array_equal(onp.load(path), a)
    onp.testing.assert_array_equal(npx.load(path).asnumpy(), a)
    npx.savez(path, np.array(a), flags=np.array(b))
    with onp.load(path) as z:
        assert sorted(z.files) == ["arr_0", "flags"]
        onp.testing.assert_array_equal(z["arr_0"], a)
        onp.testing.assert_array_equal(z["flags"], b)
    back = npx.load(path)
    assert sorted(back) == ["arr_0", "flags"] and str(back["flags"].dtype) == "bool"
    with pytest.raises(TypeError, match="npx.save"):  # a list is MXNet's; a NumPy array not
        npx.save(path, a)
    with pytest.raises(ValueError, match="arr_0"):
        npx.savez(path, np.array(a), arr_0=np.array(b))


def test_export_in_mxnet_format_round_trips(tmp_path):
    net = _dense_net()
    net.hybridize()
    x = np.array(onp.random.default_rng(4).normal(size=(3, 3)).astype(onp.float32))
    ref = net(x).asnumpy()
    sym_file, params_file = net.export(str(tmp_path / "net"), epoch=2, format="mxnet")
    assert params_file == str(tmp_path / "net-0002.params")
    back = mx_read(open(params_file, "rb").read())
    assert sorted(back) == sorted(
        ["arg:0.weight", "arg:0.bias", "arg:1.gamma", "arg:1.beta", "aux:1.running_mean",
         "aux:1.running_var", "arg:2.weight", "arg:2.bias"])
    blk = gluon.SymbolBlock.imports(sym_file, ["data"], params_file)
    onp.testing.assert_array_equal(blk(x).asnumpy(), ref)


def test_nd_load_and_save_are_mxnets_names(tmp_path):
    import ndx
    path = str(tmp_path / "named")
    ndx.nd.save(path, {"w": np.array([[1.0, 2.0]]), "b": np.array([3], dtype="int32")})
    with open(path, "rb") as f:
        assert struct.unpack("<Q", f.read(8))[0] == 0x112  # MXNet's NDArray-list magic
    got = ndx.nd.load(path)
    assert sorted(got) == ["b", "w"]
    onp.testing.assert_array_equal(got["w"].asnumpy(), [[1.0, 2.0]])
    assert got["b"].dtype == onp.int32


def test_mxnet_bfloat16_arrays_load(tmp_path):
    # MXNet's flag 12 is bfloat16: 16-bit patterns, here 1.5 (0x3FC0) and -2.25 (0xC010),
    # the high halves of their float32 bits.
    bits = onp.array([0x3FC0, 0xC010], onp.uint16)
    path = _write(tmp_path / "bf16.params", mx_file(None, ["w"], [mx_array(bits, flag=12)]))
    w = npx.load(path)["w"]
    assert str(w.dtype) == "bfloat16"
    assert w.astype("float32").asnumpy().tolist() == [1.5, -2.25]


def test_npx_save_takes_a_list_or_a_dict_as_mxnet_2(tmp_path):
    # MXNet 2.0's npx.save(file, arr): an ndarray, a list of them or a dict {str: ndarray}
    # (d2l: npx.save('x-files', [x, y]); x2, y2 = npx.load('x-files'))
    x, y = onp.arange(4, dtype=onp.float32), onp.zeros((2, 3), onp.int32)
    npx.save(str(tmp_path / "xy"), [np.array(x), np.array(y)])
    x2, y2 = npx.load(str(tmp_path / "xy"))
    onp.testing.assert_array_equal(x2.asnumpy(), x)
    assert y2.dtype == onp.int32 and y2.shape == (2, 3)
    npx.save(str(tmp_path / "d"), {"x": np.array(x), "y": np.array(y)})
    back = npx.load(str(tmp_path / "d"))
    assert sorted(back) == ["x", "y"]
    onp.testing.assert_array_equal(back["x"].asnumpy(), x)
    with pytest.raises(TypeError):
        npx.save(str(tmp_path / "bad"), [np.array(x), 3])
    with pytest.raises(TypeError):
        npx.save(str(tmp_path / "bad"), {1: np.array(x)})


# ---- sparse arrays (CSR and row_sparse storage, as MXNet 1.x's nd.save writes them) ----------


def _sparse_file():
    dense_c = onp.array([[0, 1.5, 0], [0, 0, 0], [2.0, 0, -3.0]], onp.float32)
    csr = mx_sparse("csr", (3, 3), onp.array([1.5, 2.0, -3.0], onp.float32),
                    [onp.array([0, 1, 1, 3], onp.int64), onp.array([1, 0, 2], onp.int64)])
    dense_r = onp.zeros((4, 2), onp.float64)
    dense_r[[1, 3]] = [[1.0, 2.0], [3.0, 4.0]]
    rsp = mx_sparse("row_sparse", (4, 2), dense_r[[1, 3]], [onp.array([1, 3], onp.int64)])
    return mx_file(None, ["c", "weight"], [csr, rsp]), dense_c, dense_r


def test_nd_load_reads_mxnets_sparse_arrays(tmp_path):
    import ndx as mx
    blob, dense_c, dense_r = _sparse_file()
    path = _write(tmp_path / "sparse.nd", blob)
    got = mx.nd.load(path)
    assert got["c"].stype == "csr" and got["weight"].stype == "row_sparse"
    onp.testing.assert_array_equal(got["c"].asnumpy(), dense_c)
    onp.testing.assert_array_equal(got["weight"].asnumpy(), dense_r)
    assert got["weight"].dtype == onp.float64
    dense = npx.load(path)  # the NumPy-mode loader gives the dense values
    onp.testing.assert_array_equal(dense["c"].asnumpy(), dense_c)


def test_nd_save_writes_sparse_arrays_as_mxnet_does(tmp_path):
    import ndx as mx
    blob, dense_c, dense_r = _sparse_file()
    c = mx.nd.array(dense_c).tostype("csr")
    r = mx.nd.array(dense_r, dtype="float64").tostype("row_sparse")
    path = str(tmp_path / "out.nd")
    mx.nd.save(path, {"c": c, "weight": r})
    with open(path, "rb") as f:
        assert f.read() == blob  # byte for byte the independent writer's file


def test_load_parameters_takes_a_sparse_weight_densely(tmp_path):
    blob, _, dense_r = _sparse_file()
    path = _write(tmp_path / "emb.params", blob)
    emb = gluon.nn.Embedding(4, 2, dtype="float64")
    emb.load_parameters(path, ignore_extra=True)
    onp.testing.assert_array_equal(emb.weight.data().asnumpy(), dense_r)
