"""Operator libraries written against Apache MXNet's lib_api.h (include/mxnet/lib_api.h, ndx's
compatibility header): they compile unchanged, load with mx.library.load, and their ops run
forward, backward and in hybridized blocks under mx.nd, mx.sym and npx. References: NumPy,
hand-derived gradients, central differences, and MXNet's documented API (dtype codes,
MX_ERROR_MSG, initialize(version), stateful ops)."""
import ctypes
import os
import shutil
import subprocess

import numpy as onp
import pytest

import ndx
import ndx as mx
from ndx import autograd, gluon, np, npx
from ndx.test_utils import assert_almost_equal, check_op

LIBS = os.path.join(os.path.dirname(__file__), "libs")
GEMM_SRC = os.path.join(LIBS, "mx_gemm_lib.cc")  # #include "lib_api.h"
STATEFUL_SRC = os.path.join(LIBS, "mx_stateful_lib.cc")  # #include "mxnet/lib_api.h"
CXX = shutil.which("c++") or shutil.which("g++")

pytestmark = pytest.mark.skipif(CXX is None, reason="no C++ compiler")


@pytest.fixture(scope="module", autouse=True)
def libraries(tmp_path_factory):
    old = os.environ.get("NDX_LIBRARY_CACHE")
    os.environ["NDX_LIBRARY_CACHE"] = str(tmp_path_factory.mktemp("mxlibcache"))
    paths = {"gemm": ndx.library.compile(GEMM_SRC, load_library=False),
             "stateful": ndx.library.compile(STATEFUL_SRC, load_library=False)}
    names = {k: mx.library.load(p) for k, p in paths.items()}
    yield paths, names
    if old is None:
        os.environ.pop("NDX_LIBRARY_CACHE", None)
    else:
        os.environ["NDX_LIBRARY_CACHE"] = old


def _build(tmp_path, name, code, *flags, std="c++17"):
    """g++ on one source (or several, joined by '// ---- file ----'), as MXNet's Makefiles
    do: -I include/mxnet. Returns (returncode, stderr, path)."""
    inc = ndx.library.include_dir()
    sources = []
    for i, part in enumerate(code.split("// ---- file ----\n")):
        src = tmp_path / f"{name}_{i}.cc"
        src.write_text(part)
        sources.append(str(src))
    out = tmp_path / f"lib{name}.so"
    proc = subprocess.run([CXX, f"-std={std}", "-shared", "-fPIC", f"-I{inc}",
                           f"-I{os.path.join(inc, 'mxnet')}", *flags, *sources, "-o", str(out)],
                          capture_output=True, text=True)
    return proc.returncode, proc.stderr, str(out)


def test_libraries_load_with_their_ops_everywhere(libraries):
    _, names = libraries
    assert names["gemm"] == ["mx_gemm", "mx_scale", "mx_split", "mx_sparse_out", "mx_add_to"]
    assert names["stateful"] == ["mx_counter", "mx_counter_v1", "mx_noise", "mx_fail_fwd"]
    for name in names["gemm"] + names["stateful"]:
        assert callable(getattr(npx, name)) and callable(getattr(mx.nd, name))
        assert callable(getattr(mx.sym, name))
    # Loading again is a no-op that returns the same names.
    assert mx.library.load(libraries[0]["gemm"]) == names["gemm"]


def test_headers_compile_unchanged_in_both_include_styles_and_standards(tmp_path):
    inc = ndx.library.include_dir()
    assert os.path.exists(os.path.join(inc, "mxnet", "lib_api.h"))
    assert os.path.exists(os.path.join(inc, "ndx", "lib_api.h"))
    for std in ("c++11", "c++17", "c++20"):
        for src in (GEMM_SRC, STATEFUL_SRC):
            with open(src) as f:
                rc, err, _ = _build(tmp_path, f"build_{std[3:]}", f.read(), "-Wall", "-Wextra",
                                    "-Wno-unused-parameter", "-Werror", std=std)
            assert rc == 0, err


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_gemm_forward_matches_numpy(dtype):
    rng = onp.random.default_rng(0)
    an = rng.normal(size=(3, 5)).astype(dtype)
    bn = rng.normal(size=(5, 4)).astype(dtype)
    tol = dict(rtol=1e-5, atol=1e-6) if dtype == "float32" else dict(rtol=1e-12, atol=1e-12)
    for fn in (npx.mx_gemm, mx.nd.mx_gemm):
        c = fn(np.array(an), np.array(bn))
        assert c.dtype == onp.dtype(dtype) and c.shape == (3, 4)
        assert_almost_equal(c, an @ bn, **tol)
    # Zero-size inner dimension: all zeros.
    z = npx.mx_gemm(np.zeros((2, 0), dtype=dtype), np.zeros((0, 3), dtype=dtype))
    onp.testing.assert_array_equal(z.asnumpy(), onp.zeros((2, 3)))


def test_gemm_backward_matches_hand_formula_and_central_differences():
    rng = onp.random.default_rng(1)
    an = rng.normal(size=(3, 4)).astype(onp.float32)
    bn = rng.normal(size=(4, 2)).astype(onp.float32)
    g = rng.normal(size=(3, 2)).astype(onp.float32)
    a, b = np.array(an), np.array(bn)
    a.attach_grad()
    b.attach_grad()
    with autograd.record():
        c = npx.mx_gemm(a, b)
    c.backward(np.array(g))
    assert_almost_equal(a.grad, g @ bn.T, rtol=1e-5, atol=1e-5)  # dA = dC B^T
    assert_almost_equal(b.grad, an.T @ g, rtol=1e-5, atol=1e-5)  # dB = A^T dC
    # float64: forward against NumPy, backward against central differences, hybridized block
    # against the direct call (check_op).
    check_op(npx.mx_gemm, [rng.normal(size=(2, 3)), rng.normal(size=(3, 4))],
             reference=lambda p, q: p @ q, rtol=1e-12, atol=1e-12, grad_rtol=1e-6,
             grad_atol=1e-8)


def test_scalar_attribute_op_and_default_dtype():
    xn = onp.array([[-1.0, 0.5], [2.0, 4.0]])
    for dtype in ("float32", "float64"):
        y = npx.mx_scale(np.array(xn.astype(dtype)), scalar=2.5, offset="-1")
        assert y.dtype == onp.dtype(dtype)  # no inferType: the input's dtype
        assert_almost_equal(y, xn * 2.5 - 1)
    check_op(npx.mx_scale, [xn], params={"scalar": "-3", "offset": "0.25"},
             reference=lambda v, scalar, offset: v * float(scalar) + float(offset),
             rtol=1e-12, atol=1e-12, grad_rtol=1e-6, grad_atol=1e-8)
    with pytest.raises(ValueError, match="attribute 'scalar' is required"):
        npx.mx_scale(np.array(xn))
    with pytest.raises(ValueError, match="must be numbers"):
        npx.mx_scale(np.array(xn), scalar="big")


def test_two_outputs_and_their_gradients():
    rng = onp.random.default_rng(2)
    xn = rng.normal(size=(3, 4)).astype(onp.float32)
    bn = rng.normal(size=4).astype(onp.float32)
    x, bias = np.array(xn), np.array(bn)
    x.attach_grad()
    bias.attach_grad()
    gp = rng.normal(size=(3, 4)).astype(onp.float32)
    gn = rng.normal(size=(3, 4)).astype(onp.float32)
    with autograd.record():
        pos, neg = npx.mx_split(x, bias)
    autograd.backward([pos, neg], [np.array(gp), np.array(gn)])
    v = xn + bn
    assert_almost_equal(pos, onp.maximum(v, 0))
    assert_almost_equal(neg, onp.minimum(v, 0))
    want = onp.where(v > 0, gp, gn)  # d/dv of (relu(v), min(v, 0)) weighted by the heads
    assert_almost_equal(x.grad, want, rtol=1e-6, atol=1e-6)
    assert_almost_equal(bias.grad, want.sum(axis=0), rtol=1e-5, atol=1e-5)


def test_mxnet_dtype_codes_reach_the_library():
    # MXNet's MXDType codes: kFloat32=0, kFloat64=1, kFloat16=2, kUint8=3, kInt32=4, kInt8=5,
    # kInt64=6; mx_gemm's inferType prints the code it was given.
    codes = {"float16": 2, "uint8": 3, "int32": 4, "int8": 5, "int64": 6, "bool": 7}
    for dtype, code in codes.items():
        a = np.ones((2, 2), dtype=dtype)
        with pytest.raises(ValueError, match=f"got dtype {code}$"):
            npx.mx_gemm(a, a)
    with pytest.raises(ValueError, match="same dtype"):
        npx.mx_gemm(np.ones((2, 2), dtype="float32"), np.ones((2, 2), dtype="float64"))


def test_mx_error_msg_text_reaches_the_exception():
    a = np.ones((3, 4), dtype="float32")
    with pytest.raises(ValueError, match=r"\[mx_gemm\] infer_shape failed in library .*"
                                         r"mx_gemm: inner dimensions differ: 4 vs 3"):
        npx.mx_gemm(a, a)
    with pytest.raises(ValueError, match="expected 2-D matrices, got 1-D and 2-D"):
        npx.mx_gemm(np.ones(4, dtype="float32"), a)
    with pytest.raises(ValueError, match=r"mx_fail_fwd: this forward always fails \(1 input\)"):
        npx.mx_fail_fwd(a)
    with pytest.raises(ValueError, match="dense storage only"):
        npx.mx_sparse_out(a, scalar=1)
    assert_almost_equal(npx.mx_gemm(a, np.ones((4, 1), dtype="float32")), onp.full((3, 1), 4.0))


def test_mutated_input_is_written_in_place():
    x = np.array([1.0, 2.0, 3.0], dtype="float32")
    y = np.array([10.0, 20.0, 30.0], dtype="float32")
    out = npx.mx_add_to(x, y)
    assert x.tolist() == [11.0, 22.0, 33.0]
    assert out.tolist() == [11.0, 22.0, 33.0]
    assert y.tolist() == [10.0, 20.0, 30.0]


class Net(gluon.HybridBlock):
    def forward(self, a, b, bias):
        c = npx.mx_gemm(a, b)
        pos, neg = npx.mx_split(c, bias)
        return npx.mx_scale(pos, scalar=2.0) + neg * 3.0


def test_hybridized_block_equals_eager_forward_and_backward(tmp_path):
    rng = onp.random.default_rng(3)
    inputs = [rng.normal(size=(4, 3)).astype(onp.float32),
              rng.normal(size=(3, 5)).astype(onp.float32),
              rng.normal(size=5).astype(onp.float32)]
    results = []
    for hybrid in (False, True):
        net = Net()
        if hybrid:
            net.hybridize()
        arrays = [np.array(v) for v in inputs]
        for arr in arrays:
            arr.attach_grad()
        for _ in range(2):  # the second call runs the cached graph
            with autograd.record():
                y = net(*arrays)
            y.backward()
        results.append([y.asnumpy()] + [arr.grad.asnumpy() for arr in arrays])
    for eager, hybrid in zip(*results):
        assert_almost_equal(hybrid, eager, rtol=1e-5, atol=1e-5)
    a, b, bias = inputs
    c = a @ b + bias
    assert_almost_equal(results[0][0], onp.where(c > 0, 2 * c, 3 * c), rtol=1e-5, atol=1e-5)
    sym_file, _ = net.export(str(tmp_path / "net"))
    text = open(sym_file).read()
    assert '"mx_gemm"' in text and '"mx_split"' in text and '"mx_scale"' in text


def test_symbols_of_library_ops():
    a, b = mx.sym.var("a"), mx.sym.var("b")
    out = mx.sym.mx_scale(mx.sym.mx_gemm(a, b), scalar=0.5)
    assert out.list_arguments() == ["a", "b"]
    _, out_shapes, _ = out.infer_shape(a=(2, 3), b=(3, 6))
    assert out_shapes == [(2, 6)]
    rng = onp.random.default_rng(4)
    an = rng.normal(size=(2, 3)).astype(onp.float32)
    bn = rng.normal(size=(3, 6)).astype(onp.float32)
    (res,) = out.eval(a=np.array(an), b=np.array(bn))
    assert_almost_equal(res, 0.5 * an @ bn, rtol=1e-5, atol=1e-6)
    with pytest.raises(ValueError, match="inner dimensions differ"):
        out.infer_shape(a=(2, 3), b=(4, 6))


def test_stateful_op_keeps_its_state_per_use():
    x = np.zeros((2, 3), dtype="float32")
    # y = x + n, n = this use's forward count: eager calls with the same params are one use.
    assert [float(npx.mx_counter(x)[0, 0]) for _ in range(3)] == [1.0, 2.0, 3.0]
    assert [float(npx.mx_counter(x, report="forward")[0, 0]) for _ in range(2)] == [1.0, 2.0]
    # MXNet 1.x's two-argument createOpState.
    s = np.array(0.5, dtype="float32")
    assert [float(npx.mx_counter_v1(s)) for _ in range(2)] == [1.5, 2.5]
    # createOpState saw the first call's shape (MXNet 2.0 signature); the state checks it.
    with pytest.raises(ValueError, match="made for inputs of 2 dims and sees 1"):
        npx.mx_counter(np.zeros(3, dtype="float32"))
    with pytest.raises(ValueError, match="report must be 'forward' or 'backward', got 'x'"):
        npx.mx_counter(x, report="x")
    with pytest.raises(ValueError, match="float32 inputs only, got MXNet dtype 1"):
        npx.mx_counter(np.zeros(2, dtype="float64"), report="backward")


def test_each_recorded_call_of_a_stateful_op_is_a_use_of_its_own():
    # MXNet creates an op state per recorded call: backward counts on a fresh state each time
    x = np.array([1.0, 2.0], dtype="float32")
    x.attach_grad()
    seen = []
    for _ in range(3):
        with autograd.record():
            y = npx.mx_counter(x, report="backward")  # y = x + (backward calls so far)
        y.backward(np.array([2.0, -1.0], dtype="float32"))
        seen.append(y.asnumpy().tolist())
        assert x.grad.tolist() == [2.0, -1.0]  # dx = dy
    assert seen == [[1.0, 2.0]] * 3


SAVED_SQUARE = """
#include <vector>
#include "mxnet/lib_api.h"
using namespace mxnet::ext;
static MXReturnValue shape(const std::unordered_map<std::string, std::string>&,
                           std::vector<std::vector<unsigned int>>* in,
                           std::vector<std::vector<unsigned int>>* out) {
  out->at(0) = in->at(0);
  return MX_SUCCESS;
}
// y = x^2 with x kept on the state for the backward: dx = 2 x_saved * dy
class Square : public CustomStatefulOp {
 public:
  std::vector<float> saved;
  MXReturnValue Forward(std::vector<MXTensor>* in, std::vector<MXTensor>* out,
                        const OpResource&) override {
    const float* x = in->at(0).data<float>();
    saved.assign(x, x + in->at(0).size());
    for (size_t i = 0; i < saved.size(); ++i) out->at(0).data<float>()[i] = saved[i] * saved[i];
    return MX_SUCCESS;
  }
  MXReturnValue Backward(std::vector<MXTensor>* in, std::vector<MXTensor>* out,
                         const OpResource&) override {
    const float* dy = in->at(0).data<float>();
    for (size_t i = 0; i < saved.size(); ++i) out->at(0).data<float>()[i] = 2 * saved[i] * dy[i];
    return MX_SUCCESS;
  }
};
static MXReturnValue create(const std::unordered_map<std::string, std::string>&,
                            const MXContext&, const std::vector<std::vector<unsigned int>>&,
                            const std::vector<int>, CustomStatefulOp** op) {
  *op = CustomStatefulOp::create<Square>();
  return MX_SUCCESS;
}
REGISTER_OP(mx_t_saved_square).setInferShape(shape).setCreateOpState(create, "cpu");
MXReturnValue initialize(int) { return MX_SUCCESS; }
"""


def test_two_recorded_calls_of_a_stateful_op_backward_on_their_own_states(tmp_path):
    # the state a forward keeps serves that call's backward, not a later call's
    rc, err, path = _build(tmp_path, "saved_square", SAVED_SQUARE)
    assert rc == 0, err
    assert mx.library.load(path) == ["mx_t_saved_square"]
    x1, x2 = np.array([1.0, 2.0]), np.array([10.0, 20.0])
    x1.attach_grad()
    x2.attach_grad()
    with autograd.record():
        loss = (npx.mx_t_saved_square(x1) + npx.mx_t_saved_square(x2)).sum()
    loss.backward()
    assert x1.grad.tolist() == [2.0, 4.0]
    assert x2.grad.tolist() == [20.0, 40.0]

    # a hybridized block called twice before one backward: each call's graph node has a
    # state of its own (they shared the graph's one: x1.grad was 2 * x2)
    class Square(gluon.HybridBlock):
        def forward(self, x):
            return npx.mx_t_saved_square(x)

    block = Square()
    block.hybridize()
    for _ in range(3):  # the capture, then the cached graph
        with autograd.record():
            loss = (block(x1) * 0.5 + block(x2) * 2).sum()
        loss.backward()
        assert x1.grad.tolist() == [1.0, 2.0]  # 2 * x1 * 0.5
        assert x2.grad.tolist() == [40.0, 80.0]  # 2 * x2 * 2
    assert block(np.array([3.0])).tolist() == [9.0]  # unrecorded calls go on working


class TwoCounters(gluon.HybridBlock):
    def forward(self, x):
        return npx.mx_counter(x, report="forward") * 10 + npx.mx_counter(x, report="forward")


def test_each_node_of_a_hybridized_graph_has_its_own_state():
    x = np.zeros((1,), dtype="float32")
    net = TwoCounters()
    net.hybridize()
    outs = [float(net(x)[0]) for _ in range(4)]
    # Both nodes count alike (11 n for count n), one step per call: separate states (a shared
    # state would step twice per call and give the two nodes different counts).
    assert all(o % 11 == 0 for o in outs), outs
    counts = [o // 11 for o in outs]
    assert counts == list(range(int(counts[0]), int(counts[0]) + 4)), counts
    # Another block: fresh states.
    other = TwoCounters()
    other.hybridize()
    assert float(other(x)[0]) == outs[0]


def test_random_states_and_alloc_cpu():
    x = np.zeros((64,), dtype="float32")
    ndx.random_seed(7)
    y1 = npx.mx_noise(x, scale=0.25).asnumpy()
    y2 = npx.mx_noise(x, scale=0.25).asnumpy()
    assert ((y1 >= 0) & (y1 < 0.25)).all() and y1.std() > 0.02
    assert not onp.array_equal(y1, y2)  # the states are reseeded from ndx's stream per call
    ndx.random_seed(7)
    onp.testing.assert_array_equal(npx.mx_noise(x, scale=0.25).asnumpy(), y1)
    big = npx.mx_noise(np.zeros((3000,), dtype="float32"), scale=1.0).asnumpy()
    assert abs(big.mean() - 0.5) < 0.05  # uniform on [0, 1)
    xg = np.ones((4,), dtype="float32")
    xg.attach_grad()
    with autograd.record():
        y = npx.mx_noise(xg, scale=0.5)
    y.backward(np.array([1.0, 2.0, 3.0, 4.0], dtype="float32"))
    assert xg.grad.tolist() == [1.0, 2.0, 3.0, 4.0]
    with pytest.raises(ValueError, match="scale must be a number, got 'loud'"):
        npx.mx_noise(x, scale="loud")


INIT_OK = """
MXReturnValue initialize(int version) { return MX_SUCCESS; }
"""

SIMPLE_OP = """
#include "lib_api.h"
using namespace mxnet::ext;
static MXReturnValue fwd(const std::unordered_map<std::string, std::string>&,
                         std::vector<MXTensor>* in, std::vector<MXTensor>* out,
                         const OpResource&) {
  for (int64_t i = 0; i < in->at(0).size(); ++i)
    out->at(0).data<float>()[i] = in->at(0).data<float>()[i] + %(add)s;
  return MX_SUCCESS;
}
static MXReturnValue shape(const std::unordered_map<std::string, std::string>&,
                           std::vector<std::vector<unsigned int> >* in,
                           std::vector<std::vector<unsigned int> >* out) {
  out->at(0) = in->at(0);
  return MX_SUCCESS;
}
REGISTER_OP(%(name)s).setForward(fwd, "cpu").setInferShape(shape)%(extra)s;
"""


def _simple(name, add="1", extra=""):
    return SIMPLE_OP % {"name": name, "add": add, "extra": extra}


def test_initialize_is_called_once_and_its_failure_makes_load_raise(tmp_path):
    rc, err, path = _build(tmp_path, "init_fails", _simple("mx_t_init_fails") + """
MXReturnValue initialize(int version) {
  MX_ERROR_MSG << "needs MXNet " << version + 10000 << " or later";
  return MX_FAIL;
}
""")
    assert rc == 0, err
    with pytest.raises(ValueError, match=r"initialize\(20000\) returned MX_FAIL: "
                                         r"needs MXNet 30000 or later"):
        mx.library.load(path)
    assert not hasattr(npx, "mx_t_init_fails")
    rc, err, path = _build(tmp_path, "no_init", _simple("mx_t_no_init"))
    assert rc == 0, err
    with pytest.raises(ValueError, match=r"defines no `MXReturnValue initialize\(int version\)`"):
        mx.library.load(path)
    rc, err, path = _build(tmp_path, "init_throws", _simple("mx_t_init_throws") + """
#include <stdexcept>
MXReturnValue initialize(int) { throw std::runtime_error("no licence"); }
""")
    assert rc == 0, err
    with pytest.raises(ValueError, match="threw: no licence"):
        mx.library.load(path)
    # initialize runs once, with MXNet 2.0.0's version number; a second load is a no-op.
    code = "static float calls = 0;\n" + _simple("mx_t_init_count", add="calls") + """
MXReturnValue initialize(int version) {
  calls += 1;
  return version == 20000 ? MX_SUCCESS : MX_FAIL;
}
"""
    rc, err, path = _build(tmp_path, "init_count", code)
    assert rc == 0, err
    assert mx.library.load(path) == ["mx_t_init_count"]
    assert mx.library.load(path) == ["mx_t_init_count"]
    assert npx.mx_t_init_count(np.zeros(2, dtype="float32")).tolist() == [1.0, 1.0]


def test_unsupported_parts_fail_clearly(tmp_path):
    rc, err, path = _build(tmp_path, "subgraph",
                           _simple("mx_t_subgraph", extra=".setIsSubgraphOp()") + INIT_OK)
    assert rc == 0, err
    with pytest.raises(ValueError, match="'mx_t_subgraph' is an MXNet subgraph op"):
        mx.library.load(path)
    rc, err, path = _build(tmp_path, "tpu", _simple("mx_t_tpu", extra='.setBackward(fwd, "tpu")')
                           + INIT_OK)
    assert rc == 0, err
    with pytest.raises(ValueError, match="setBackward was given the context 'tpu'"):
        mx.library.load(path)
    rc, err, _ = _build(tmp_path, "pass", _simple("mx_t_pass") + INIT_OK + """
template <typename G> MXReturnValue my_pass(G*, const std::unordered_map<std::string,
                                                                         std::string>&) {
  return MX_SUCCESS;
}
REGISTER_PASS(my_pass).setBody(my_pass<int>);
""")
    assert rc != 0 and "ndx does not support MXNet graph passes (REGISTER_PASS)" in err
    rc, err, _ = _build(tmp_path, "part", _simple("mx_t_part") + INIT_OK + """
REGISTER_PARTITIONER(my_part).addStrategy("strategy1", "_custom_subgraph_op");
""")
    assert rc != 0 and "ndx does not support MXNet partitioners (REGISTER_PARTITIONER)" in err
    # Sparse temporary memory and GPU random states are refused when asked for.
    op = _simple("mx_t_sparse").replace(
        "  return MX_SUCCESS;\n}\nstatic MXReturnValue shape",
        "  MXSparse s;\n  res.alloc_sparse(&s, 0, 1);\n  return MX_SUCCESS;\n}\n"
        "static MXReturnValue shape").replace("const OpResource&)", "const OpResource& res)", 1)
    rc, err, path = _build(tmp_path, "sparse", op + INIT_OK)
    assert rc == 0, err
    mx.library.load(path)
    with pytest.raises(ValueError, match="alloc_sparse: ndx does not support sparse storage"):
        npx.mx_t_sparse(np.zeros(2, dtype="float32"))
    op = _simple("mx_t_gpu_rand").replace(
        "  return MX_SUCCESS;\n}\nstatic MXReturnValue shape",
        "  res.get_gpu_rand_states();\n  return MX_SUCCESS;\n}\nstatic MXReturnValue shape"
    ).replace("const OpResource&)", "const OpResource& res)", 1)
    rc, err, path = _build(tmp_path, "gpu_rand", op + INIT_OK)
    assert rc == 0, err
    mx.library.load(path)
    with pytest.raises(ValueError, match="ndx does not provide GPU random states"):
        npx.mx_t_gpu_rand(np.zeros(2, dtype="float32"))
    assert npx.mx_gemm(np.ones((1, 1), dtype="float32"),
                       np.ones((1, 1), dtype="float32")).tolist() == [[1.0]]  # still usable


def test_multi_file_library_and_mxnet_1x_global_names(tmp_path):
    # Two files including the header (as MXNet 2.0 libraries built of several files do); the
    # second written in MXNet 1.x style, with the names global (no `using namespace`).
    second = """
#include "mxnet/lib_api.h"
static MXReturnValue neg(const std::unordered_map<std::string, std::string>&,
                         std::vector<MXTensor>* in, std::vector<MXTensor>* out,
                         const OpResource&) {
  for (int64_t i = 0; i < in->at(0).size(); ++i)
    out->at(0).data<float>()[i] = -in->at(0).data<float>()[i];
  return MX_SUCCESS;
}
static MXReturnValue same(const std::unordered_map<std::string, std::string>&,
                          std::vector<std::vector<unsigned int> >* in,
                          std::vector<std::vector<unsigned int> >* out) {
  (*out)[0] = (*in)[0];
  return MX_SUCCESS;
}
REGISTER_OP(mx_t_neg).setForward(neg, "cpu").setInferShape(same);
"""
    rc, err, path = _build(tmp_path, "multi",
                           _simple("mx_t_plus2", add="2") + INIT_OK + "// ---- file ----\n"
                           + second)
    assert rc == 0, err
    assert sorted(mx.library.load(path)) == ["mx_t_neg", "mx_t_plus2"]
    x = np.array([1.0, -3.0], dtype="float32")
    assert npx.mx_t_plus2(x).tolist() == [3.0, -1.0]
    assert npx.mx_t_neg(x).tolist() == [-1.0, 3.0]


# ---- the C ABI the header implements, called directly: output requests ndx may pass ----

class _Tensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("shape", ctypes.POINTER(ctypes.c_int64)),
                ("ndim", ctypes.c_int32), ("dtype", ctypes.c_int32),
                ("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


_ALLOC = ctypes.CFUNCTYPE(ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t)
_RANDOM = ctypes.CFUNCTYPE(ctypes.c_uint64, ctypes.c_void_p)


class _Resource(ctypes.Structure):
    _fields_ = [("ctx", ctypes.c_void_p), ("alloc_temp", _ALLOC), ("next_random", _RANDOM),
                ("cuda_stream", ctypes.c_void_p)]


class _Attrs(ctypes.Structure):
    _fields_ = [("num", ctypes.c_int32), ("keys", ctypes.POINTER(ctypes.c_char_p)),
                ("values", ctypes.POINTER(ctypes.c_char_p))]


_COMPUTE = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.POINTER(_Attrs), ctypes.c_int32,
                            ctypes.POINTER(_Tensor), ctypes.c_int32, ctypes.POINTER(_Tensor),
                            ctypes.POINTER(ctypes.c_int32), ctypes.POINTER(_Resource))


class _Op(ctypes.Structure):
    _fields_ = [("name", ctypes.c_char_p)] + [(f, ctypes.c_void_p) for f in (
        "parse_attrs", "infer_shape", "infer_type", "forward_cpu", "backward_cpu", "forward_gpu",
        "backward_gpu", "create_state", "state_forward", "state_backward", "destroy_state",
        "mutate_inputs")]


def test_output_requests_add_to_and_null(libraries):
    """ndx's engine may ask for an output to be added to (kAddTo = 3) or not written (kNullOp
    = 0); MXNet's functions always overwrite their outputs, so the header computes into
    temporary memory and adds (or drops) the result."""
    lib = ctypes.CDLL(libraries[0]["gemm"])
    lib.ndx_lib_get_op.argtypes = [ctypes.c_int, ctypes.POINTER(_Op)]
    lib.ndx_lib_last_error.restype = ctypes.c_char_p
    op = _Op()
    assert lib.ndx_lib_get_op(1, ctypes.byref(op)) == 0 and op.name == b"mx_scale"
    forward = _COMPUTE(op.forward_cpu)
    keys = (ctypes.c_char_p * 2)(b"scalar", b"__op__")
    values = (ctypes.c_char_p * 2)(b"2", b"mx_scale")
    attrs = _Attrs(2, keys, values)
    held = []

    def alloc(ctx, size):
        buf = ctypes.create_string_buffer(max(int(size), 1))
        held.append(buf)
        return ctypes.addressof(buf)
    alloc_cb, random_cb = _ALLOC(alloc), _RANDOM(lambda ctx: 12345)
    res = _Resource(None, alloc_cb, random_cb, None)
    shape = (ctypes.c_int64 * 1)(3)
    x = onp.array([1.0, 2.0, 3.0])
    out = onp.array([10.0, 20.0, 30.0])
    fl64 = 12  # ndx's dtype code for float64
    tin = _Tensor(x.ctypes.data, shape, 1, fl64, 1, 0)
    tout = _Tensor(out.ctypes.data, shape, 1, fl64, 1, 0)
    for req, want in ((3, [12.0, 24.0, 36.0]), (0, [12.0, 24.0, 36.0]), (1, [2.0, 4.0, 6.0]),
                      (3, [4.0, 8.0, 12.0])):
        rc = forward(ctypes.byref(attrs), 1, ctypes.byref(tin), 1, ctypes.byref(tout),
                     (ctypes.c_int32 * 1)(req), ctypes.byref(res))
        assert rc == 0, lib.ndx_lib_last_error()
        assert out.tolist() == want, (req, out)
    assert held  # kAddTo and kNullOp went through temporary memory
