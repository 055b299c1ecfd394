"""Parameter files (safetensors layout) from an adversary: every malformed header is a
ValueError naming the file, nothing changes in the block, and temp files never pile up."""
import json
import os
import struct
import subprocess
import sys

import numpy as onp
import pytest

import ndx
from ndx import gluon, np
from ndx.gluon import serialization


def _net(dtype="float32"):
    net = gluon.nn.Dense(2, in_units=3, dtype=dtype)
    net.initialize(ndx.initializer.Constant(0.5))
    return net


def _write(path, header, data=b""):
    head = header if isinstance(header, bytes) else json.dumps(header).encode()
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(head)) + head + data)


def _entry(shape, dtype="F32", offsets=None):
    n = int(onp.prod(shape)) * {"F32": 4, "F64": 8, "I64": 8, "BOOL": 1}[dtype]
    return {"dtype": dtype, "shape": shape, "data_offsets": offsets or [0, n]}


def _load_fails(path, match):
    net = _net()
    before = {k: p.data().asnumpy().copy() for k, p in net.collect_params().items()}
    with pytest.raises(ValueError, match=match):
        net.load_parameters(path, allow_missing=True, ignore_extra=True)
    for k, p in net.collect_params().items():
        onp.testing.assert_array_equal(p.data().asnumpy(), before[k])


def test_a_deeply_nested_header_is_a_value_error_not_recursion(tmp_path):
    path = str(tmp_path / "deep.params")
    _write(path, b"[" * 200000 + b"]" * 200000)
    _load_fails(path, "nests deeper")
    _write(path, json.dumps({"w": {"dtype": "F32", "shape": [[[[1]]]],
                                   "data_offsets": [0, 4]}}).encode(), b"\0" * 4)
    _load_fails(path, "nests deeper")


def test_brackets_inside_strings_do_not_count_as_nesting(tmp_path):
    path = str(tmp_path / "names.params")
    name = 'we[ird]{name} "\\" [[['
    _write(path, {name: _entry([1])}, b"\0\0\x80\x3f")
    assert serialization.load_safetensors(path)[name].asnumpy().tolist() == [1.0]


def test_an_oversized_header_length_is_refused_before_reading(tmp_path):
    path = str(tmp_path / "big.params")
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", 2**63))
    _load_fails(path, "over the limit")


@pytest.mark.parametrize("shape,match", [
    ([2**70, 1], "too big"),
    ([2**40, 2**40], "too big"),
    ([8.5, 4], "not an integer"),
    ([True, 4], "not an integer"),
    (["8", 4], "not an integer"),
    ([-1, 4], "negative"),
    ("[2, 3]", "not a list"),
    ([1] * 65, "dimensions"),
])
def test_shapes_must_be_exact_non_negative_integers(tmp_path, shape, match):
    path = str(tmp_path / "shape.params")
    _write(path, {"weight": {"dtype": "F32", "shape": shape, "data_offsets": [0, 4]}}, b"\0" * 4)
    _load_fails(path, match)


@pytest.mark.parametrize("header,match", [
    (b'{"weight": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]}, '
     b'"weight": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]}}', "twice"),
    ({"weight": {"dtype": "C64", "shape": [1], "data_offsets": [0, 8]}}, "unknown dtype"),
    ({"weight": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4], "x": 1}}, "unknown"),
    ({"weight": {"dtype": "F32", "shape": [1]}}, "missing"),
    ({"weight": {"dtype": "F32", "shape": [1], "data_offsets": [0.0, 4]}}, "two integers"),
    ({"weight": {"dtype": "F32", "shape": [1], "data_offsets": [4, 0]}}, "begin <= end"),
    ({"weight": {"dtype": "F32", "shape": [2], "data_offsets": [0, 4]}}, "needs 8 bytes"),
    ({"weight": [1, 2]}, "not an object"),
    ({"__metadata__": {"a": 1}}, "__metadata__"),
    (b'{"weight": NaN}', "not JSON"),
    (b"\xff\xfe", "UTF-8"),
    (b"[1, 2]", "not a JSON object"),
])
def test_malformed_entries_are_named(tmp_path, header, match):
    path = str(tmp_path / "bad.params")
    _write(path, header, b"\0" * 4)
    _load_fails(path, match)


def test_entries_must_tile_the_data_section(tmp_path):
    path = str(tmp_path / "tile.params")
    _write(path, {"a": _entry([1]), "b": _entry([1])}, b"\0" * 4)
    _load_fails(path, "overlap")
    _write(path, {"a": _entry([1], offsets=[4, 8])}, b"\0" * 8)
    _load_fails(path, "belong to no entry")
    _write(path, {"a": _entry([1])}, b"\0" * 12)
    _load_fails(path, "belong to no entry")


def test_json_errors_name_the_file_and_position(tmp_path):
    path = str(tmp_path / "j.params")
    _write(path, b'{"a": 1,}')
    with pytest.raises(ValueError, match=r"j\.params.*not JSON"):
        serialization.load_safetensors(path)


def test_a_different_dtype_is_an_error_unless_cast_is_asked_for(tmp_path):
    # MXNet's documented load_parameters: cast_dtype=False raises on a dtype mismatch;
    # cast_dtype=True with dtype_source='current' casts to the block's dtype, 'saved' takes
    # the file's. Silently casting would hide a float64 checkpoint loaded into float32.
    path = str(tmp_path / "f64.params")
    _net("float64").save_parameters(path)
    net = _net("float32")
    with pytest.raises(ValueError, match="cast_dtype=True"):
        net.load_parameters(path)
    assert str(net.weight.data().dtype) == "float32"
    net.load_parameters(path, cast_dtype=True)
    assert str(net.weight.data().dtype) == "float32"
    onp.testing.assert_array_equal(net.weight.data().asnumpy(), onp.full((2, 3), 0.5))
    net.load_parameters(path, cast_dtype=True, dtype_source="saved")
    assert str(net.weight.data().dtype) == "float64"
    out = net(np.ones((1, 3), dtype="float64"))
    onp.testing.assert_allclose(out.asnumpy(), onp.full((1, 2), 1.5))  # 3 * 0.5, the bias is zero
    with pytest.raises(ValueError, match="dtype_source"):
        net.load_parameters(path, cast_dtype=True, dtype_source="file")


def test_a_saved_shape_must_match(tmp_path):
    path = str(tmp_path / "p.params")
    _write(path, {"weight": _entry([3, 2]), "bias": _entry([2], offsets=[24, 32])}, b"\0" * 32)
    _load_fails(path, r"shape \(3, 2\)")


def test_round_trip_of_every_dtype_and_zero_size(tmp_path):
    path = str(tmp_path / "all.params")
    tensors = {"f32": onp.arange(6, dtype="float32").reshape(2, 3),
               "f64": onp.array(1.5), "i64": onp.array([-(2**62), 7]),
               "b": onp.array([True, False]), "empty": onp.zeros((0, 4), "float32")}
    serialization.save_safetensors(path, tensors)
    back = serialization.load_safetensors(path)
    for k, v in tensors.items():
        assert str(back[k].dtype) == str(v.dtype) and back[k].shape == v.shape
        onp.testing.assert_array_equal(back[k].asnumpy(), v)


def test_a_failed_save_leaves_no_temp_file_and_the_old_file(tmp_path, monkeypatch):
    path = str(tmp_path / "p.params")
    _net().save_parameters(path)
    old = open(path, "rb").read()
    def disk_full(fd):
        raise OSError(28, "No space left on device")
    monkeypatch.setattr(os, "fsync", disk_full)
    with pytest.raises(OSError, match="No space"):
        _net().save_parameters(path)
    assert open(path, "rb").read() == old
    assert [f for f in os.listdir(tmp_path) if f.startswith(".ndx-params-")] == []


def test_a_temp_file_orphaned_by_a_kill_is_removed_by_the_next_save(tmp_path):
    # A child starts a save and is killed (SIGKILL) while its temp file exists.
    script = (
        "import os, signal, sys\n"
        "import numpy as onp\n"
        "from ndx.gluon import serialization as s\n"
        "real = os.fsync\n"
        "def die(fd):\n"
        "    os.kill(os.getpid(), signal.SIGKILL)\n"
        "os.fsync = die\n"
        "s.save_safetensors(sys.argv[1], {'w': onp.ones(3, 'float32')})\n")
    path = str(tmp_path / "p.params")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    proc = subprocess.run([sys.executable, "-c", script, path], env=env)
    assert proc.returncode == -9
    orphans = [f for f in os.listdir(tmp_path) if f.startswith(".ndx-params-")]
    assert len(orphans) == 1 and not os.path.exists(path)
    # A temp file of a live writer (this process) is left alone.
    live = tmp_path / f".ndx-params-{serialization._owner_tag()}-{os.getpid()}-abc.tmp"
    live.write_bytes(b"")
    _net().save_parameters(path)
    left = sorted(f for f in os.listdir(tmp_path) if f.startswith(".ndx-params-"))
    assert left == [live.name]
    assert os.path.exists(path)


@pytest.mark.parametrize("umask, want", [(0o022, 0o644), (0o077, 0o600), (0o002, 0o664)])
def test_saved_files_get_the_users_umask(tmp_path, umask, want):
    # As open() would make them (files were 0600 whatever the umask: mkstemp's mode).
    old = os.umask(umask)
    try:
        params, symbol = str(tmp_path / "p.params"), str(tmp_path / "p.safetensors")
        net = _net()
        net.save_parameters(params)
        serialization.save_safetensors(symbol, {"w": onp.ones(3, "float32")})
    finally:
        os.umask(old)
    assert os.stat(params).st_mode & 0o777 == want
    assert os.stat(symbol).st_mode & 0o777 == want


def test_overwriting_a_file_keeps_its_mode(tmp_path):
    path = str(tmp_path / "p.params")
    _net().save_parameters(path)
    os.chmod(path, 0o640)
    _net().save_parameters(path)
    assert os.stat(path).st_mode & 0o777 == 0o640


# bfloat16 patterns worked out by hand from the float32 bits' high half: 1.5 = 0x3FC00000,
# -2.25 = 0xC0100000, inf = 0x7F800000, -0.0 = 0x80000000, and the subnormal
# 2**-133 = 2**16 * 2**-149 = 0x00010000.
BF16_VALUES = [1.5, -2.25, float("inf"), -0.0, 2.0 ** -133]
BF16_BITS = [0x3FC0, 0xC010, 0x7F80, 0x8000, 0x0001]


def test_bfloat16_safetensors_are_written_and_read_as_bf16(tmp_path):
    path = str(tmp_path / "b.safetensors")
    x = np.array(onp.array(BF16_VALUES, "float32")).astype(np.bfloat16)
    serialization.save_safetensors(path, {"w": x})
    raw = open(path, "rb").read()
    (n,) = struct.unpack("<Q", raw[:8])
    assert json.loads(raw[8:8 + n])["w"] == {"dtype": "BF16", "shape": [5],
                                              "data_offsets": [0, 10]}
    assert list(struct.unpack("<5H", raw[8 + n:])) == BF16_BITS
    back = serialization.load_safetensors(path)["w"]
    assert str(back.dtype) == "bfloat16"
    got = back.astype("float32").asnumpy()
    assert got.tolist() == BF16_VALUES and onp.signbit(got[3])


def test_a_bf16_file_written_elsewhere_loads(tmp_path):
    # laid out by hand as the safetensors format describes it (what torch's writer produces)
    path = str(tmp_path / "other.safetensors")
    _write(path, {"w": {"dtype": "BF16", "shape": [5], "data_offsets": [0, 10]}},
           struct.pack("<5H", *BF16_BITS))
    w = serialization.load_safetensors(path)["w"]
    assert str(w.dtype) == "bfloat16"
    assert w.astype("float32").asnumpy().tolist() == BF16_VALUES


@pytest.mark.parametrize("fmt", ["safetensors", "mxnet", "npz"])
@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
def test_half_precision_parameters_round_trip(tmp_path, fmt, dtype):
    path = str(tmp_path / "p.params")
    net = gluon.nn.Dense(3, in_units=4)
    net.initialize(ndx.initializer.Uniform(1.0))
    net.cast(dtype)
    net.save_parameters(path, format=fmt)
    other = gluon.nn.Dense(3, in_units=4)
    other.initialize(ndx.initializer.Zero())
    other.cast(dtype)
    other.load_parameters(path)
    for a, b in ((net.weight, other.weight), (net.bias, other.bias)):
        assert str(b.data().dtype) == dtype
        want = a.data().astype("float32").asnumpy()
        assert onp.array_equal(b.data().astype("float32").asnumpy(), want)
    if dtype == "bfloat16":
        float32_net = gluon.nn.Dense(3, in_units=4)
        float32_net.initialize()
        with pytest.raises(ValueError, match="is bfloat16 in the file, the block's is float32"):
            float32_net.load_parameters(path)


def test_files_of_the_safetensors_package_load_and_ndx_files_load_there(tmp_path):
    st = pytest.importorskip("safetensors.numpy")  # in requirements-dev.txt
    theirs = {"f16": onp.arange(6, dtype="float16").reshape(2, 3),
              "f32": onp.linspace(-1, 1, 5, dtype="float32"), "i64": onp.array(7),
              "b": onp.array([True, False]), "empty": onp.zeros((0, 4), "float64")}
    path = str(tmp_path / "theirs.safetensors")
    st.save_file(theirs, path)
    loaded = serialization.load_safetensors(path)
    for name, want in theirs.items():
        assert loaded[name].dtype == want.dtype and onp.array_equal(loaded[name].asnumpy(), want)
    mine = str(tmp_path / "mine.safetensors")
    serialization.save_safetensors(mine, theirs)
    for name, got in st.load_file(mine).items():
        assert got.dtype == theirs[name].dtype and onp.array_equal(got, theirs[name])
