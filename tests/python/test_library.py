"""Operator libraries built against lib_api.h: compile and load, forward and backward as
first-class ops (autograd, hybridize), the random resource, and every kind of bad library."""
import os
import shutil
import subprocess
import sys

import numpy as onp
import pytest

import ndx
from ndx import autograd, gluon, np, npx
from strict_checks import assert_almost_equal

EXT = os.path.join(os.path.dirname(__file__), os.pardir, os.pardir, "examples", "extensions")
LIBS = os.path.join(os.path.dirname(__file__), "libs")


@pytest.fixture(scope="module", autouse=True)
def libraries(tmp_path_factory):
    os.environ["NDX_LIBRARY_CACHE"] = str(tmp_path_factory.mktemp("libcache"))
    for src in ("relu_lib.cc", "gemm_lib.cc", "noisy_relu_lib.cc"):
        ndx.library.compile(os.path.join(EXT, src))


def test_library_ops_are_first_class():
    xn = onp.array([-1.5, 0.5, 2.0, -0.1])
    x = np.array(xn)
    assert_almost_equal(npx.my_relu(x), onp.maximum(xn, 0))
    assert_almost_equal(ndx.nd.my_relu(x), onp.maximum(xn, 0))
    x.attach_grad()
    head = onp.array([1.0, 2.0, 3.0, 4.0])
    with autograd.record():
        y = npx.my_relu(x)
    y.backward(np.array(head))
    assert_almost_equal(x.grad, head * (xn > 0))
    assert "library" in npx.my_relu.__doc__


def test_gemm_with_params_and_backward():
    rng = onp.random.default_rng(0)
    an = rng.normal(size=(3, 4)).astype(onp.float32)
    bn = rng.normal(size=(4, 2)).astype(onp.float32)
    a, b = np.array(an), np.array(bn)
    assert_almost_equal(npx.my_gemm(a, b, alpha="0.5"), 0.5 * an @ bn, rtol=1e-5, atol=1e-6)
    a.attach_grad()
    b.attach_grad()
    g = rng.normal(size=(3, 2)).astype(onp.float32)
    with autograd.record():
        c = npx.my_gemm(a, b, alpha=2)
    c.backward(np.array(g))
    assert_almost_equal(a.grad, 2 * g @ bn.T, rtol=1e-5, atol=1e-5)
    assert_almost_equal(b.grad, 2 * an.T @ g, rtol=1e-5, atol=1e-5)
    with pytest.raises(ValueError, match="inner dimensions differ"):
        npx.my_gemm(a, a)
    with pytest.raises(ValueError, match="float32 only"):
        npx.my_gemm(np.ones((2, 2), dtype="float64"), np.ones((2, 2), dtype="float64"))
    with pytest.raises(ValueError, match="alpha must be a number"):
        npx.my_gemm(a, b, alpha="big")


class ReluBlock(gluon.HybridBlock):
    def forward(self, x):
        return npx.my_relu(x) * 2.0


def test_library_ops_in_hybridized_blocks(tmp_path):
    xn = onp.linspace(-2, 2, 8)
    blk = ReluBlock()
    blk.hybridize()
    x = np.array(xn)
    x.attach_grad()
    with autograd.record():
        y = blk(x)
    y.backward()
    assert_almost_equal(y, 2 * onp.maximum(xn, 0))
    assert_almost_equal(x.grad, 2.0 * (xn > 0))
    sym_file, _ = blk.export(str(tmp_path / "relu"))
    assert '"my_relu"' in open(sym_file).read()


def test_random_resource_and_temp_space():
    ndx.random_seed(3)
    x = np.array(onp.array([-1.0, 1.0, 2.0], dtype=onp.float32))
    y1 = npx.my_noisy_relu(x, scale=0.5).asnumpy()
    noise = y1 - onp.maximum(x.asnumpy(), 0)
    assert ((noise >= 0) & (noise < 0.5)).all() and noise.std() > 0
    ndx.random_seed(3)
    onp.testing.assert_array_equal(npx.my_noisy_relu(x, scale=0.5).asnumpy(), y1)


def _cc(tmp_path, name, code, *flags, cxx=False):
    src = tmp_path / (f"{name}.cc" if cxx else f"{name}.c")
    src.write_text(code)
    out = tmp_path / f"lib{name}.so"
    cc = (shutil.which("c++") or shutil.which("g++")) if cxx else (
        shutil.which("cc") or shutil.which("gcc"))
    subprocess.run([cc, "-shared", "-fPIC", *flags, str(src), "-o", str(out)], check=True)
    return str(out)


def test_bad_libraries_raise_and_leave_the_engine_usable(tmp_path):
    with pytest.raises(FileNotFoundError):
        ndx.library.load(str(tmp_path / "missing.so"))
    text = tmp_path / "not_a_library.so"
    text.write_text("just text")
    with pytest.raises(ValueError, match="cannot load"):
        ndx.library.load(str(text))
    no_funcs = _cc(tmp_path, "empty", "int unrelated(void) { return 1; }\n")
    with pytest.raises(ValueError, match="lacks the function ndx_lib_version"):
        ndx.library.load(no_funcs)
    prefix = ('const char* ndx_lib_last_error(void) { return "broken"; }\n'
              "int ndx_lib_num_ops(void) { return 1; }\n")
    wrong_version = _cc(tmp_path, "v99", "int ndx_lib_version(void) { return 99; }\n" + prefix +
                        "int ndx_lib_get_op(int i, void* out) { return 1; }\n")
    with pytest.raises(ValueError, match="lib_api version 99"):
        ndx.library.load(wrong_version)
    failing = _cc(tmp_path, "failing", "int ndx_lib_version(void) { return 1; }\n" + prefix +
                  "int ndx_lib_get_op(int i, void* out) { return 1; }\n")
    with pytest.raises(ValueError, match="failed: broken"):
        ndx.library.load(failing)
    # An op without infer_shape: the op table entry is all null pointers except the name.
    half_op = ("int ndx_lib_get_op(int i, void* out) {\n"
               "  memset(out, 0, 9 * sizeof(void*));\n"
               "  *(const char**)out = \"half_op\";\n"
               "  return 0;\n}\n")
    header = "#include <string.h>\nint ndx_lib_version(void) { return 1; }\n"
    missing = _cc(tmp_path, "missing", header + prefix + half_op)
    with pytest.raises(ValueError, match="'half_op' has no infer_shape"):
        ndx.library.load(missing)
    assert not hasattr(npx, "half_op")
    with pytest.raises(ValueError, match="always throws"):
        npx.my_explode(np.ones(2, dtype="float32"))
    # A copy of a loaded library under another path: its op name is taken.
    copy = tmp_path / "relu_copy.so"
    shutil.copy(ndx.library.compile(os.path.join(EXT, "relu_lib.cc"), load_library=False), copy)
    with pytest.raises(ValueError, match="already registered"):
        ndx.library.load(str(copy))
    assert (npx.my_relu(np.array([-1.0, 1.0])).tolist()) == [0.0, 1.0]  # still usable
    broken = tmp_path / "broken.cc"
    broken.write_text("this is not C++\n")
    with pytest.raises(RuntimeError, match="building broken failed"):
        ndx.library.compile(str(broken))


def test_check_op_on_library_custom_and_builtin_ops():
    from ndx.test_utils import check_op
    rng = onp.random.default_rng(7)
    x = rng.uniform(0.2, 1.0, size=(3, 4)) * rng.choice([-1, 1], size=(3, 4))  # away from 0
    relu_ref = lambda a: onp.maximum(a, 0)  # noqa: E731
    check_op(npx.my_relu, [x], reference=relu_ref,
             extra_inputs=[[onp.array(2.0)], [onp.zeros((0, 3))]],
             error_inputs=[([onp.ones(2, dtype=onp.int32)], None, ValueError)])
    a = rng.normal(size=(2, 3)).astype(onp.float32)
    b = rng.normal(size=(3, 2)).astype(onp.float32)
    check_op(npx.my_gemm, [a, b], params={"alpha": "1.5"},
             reference=lambda p, q, alpha: float(alpha) * p @ q, rtol=1e-5, atol=1e-5,
             grad_rtol=2e-2, grad_atol=2e-3, eps=1e-2,
             error_inputs=[([a, a], None, ValueError)])
    check_op(npx.relu, [x], reference=relu_ref)
    with pytest.raises(AssertionError, match="Not equal to tolerance"):
        check_op(npx.my_relu, [x], reference=lambda v: onp.abs(v), grad=False)


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc is not installed")
def test_cuda_sources_compile_with_nvcc_and_the_cpu_kernel_runs():
    names = ndx.library.compile(os.path.join(EXT, "relu_gpu_lib.cu"))
    assert names == ["relu_cuda"]
    x = onp.array([-2.0, 0.5, 3.0], dtype=onp.float32)
    assert_almost_equal(npx.relu_cuda(np.array(x)), onp.maximum(x, 0))
    with pytest.raises(ValueError, match="float32"):
        npx.relu_cuda(np.array(x.astype(onp.float64)))
    if ndx.num_gpus() == 0:
        with pytest.raises((NotImplementedError, ValueError), match="gpu"):
            np.zeros((2,), device="gpu(0)")


def test_stateful_ops_keep_their_state_per_use():
    ndx.library.compile(os.path.join(EXT, "stateful_gemm_lib.cc"))
    rng = onp.random.default_rng(8)
    an = rng.normal(size=(2, 3)).astype(onp.float32)
    bn = rng.normal(size=(3, 4)).astype(onp.float32)
    a, b = np.array(an), np.array(bn)
    a.attach_grad()
    b.attach_grad()
    g = rng.normal(size=(2, 4)).astype(onp.float32)
    with autograd.record():
        c = npx.my_state_gemm(a, b, alpha="0.5")
    c.backward(np.array(g))
    assert_almost_equal(c, 0.5 * an @ bn, rtol=1e-5, atol=1e-6)
    assert_almost_equal(a.grad, 0.5 * g @ bn.T, rtol=1e-5, atol=1e-6)
    assert_almost_equal(b.grad, 0.5 * an.T @ g, rtol=1e-5, atol=1e-6)
    x = np.ones((2,))
    counts = [float(npx.my_call_count(x, tag="a")) for _ in range(3)]
    assert counts == [1.0, 2.0, 3.0]  # one state for this use, kept between calls
    assert float(npx.my_call_count(x, tag="b")) == 1.0  # another use: a fresh state
    with pytest.raises(ValueError, match="alpha must be a number"):
        npx.my_state_gemm(a, b, alpha="x")


def test_mutated_inputs_are_written_in_place():
    ndx.library.compile(os.path.join(EXT, "accumulate_lib.cc"))
    total = np.zeros((2, 3), dtype="float32")
    x = np.array(onp.arange(6, dtype=onp.float32).reshape(2, 3))
    s1 = float(npx.my_accumulate(total, x))
    s2 = float(npx.my_accumulate(total, x))
    assert (s1, s2) == (15.0, 30.0)
    assert_almost_equal(total, 2 * onp.arange(6).reshape(2, 3))
    # A strided view cannot be updated in place through a copy: refused, nothing written.
    with pytest.raises(ValueError, match="must be contiguous"):
        npx.my_accumulate(total.T, x.T)
    # Strided inputs that are only read are copied for the kernel.
    assert float(npx.my_accumulate(np.zeros((3, 2), dtype="float32"), x.T)) == 15.0
    assert_almost_equal(total, 2 * onp.arange(6).reshape(2, 3))


@pytest.fixture(scope="module")
def misbehaving():
    return ndx.library.compile(os.path.join(LIBS, "misbehaving_lib.cc"))


X = onp.array([1.0, -2.0, 3.0], dtype=onp.float32)


@pytest.mark.parametrize("op,what", [
    ("bad_throw_forward", "forward"), ("bad_throw_shape", "infer_shape"),
    ("bad_throw_type", "infer_type"), ("bad_throw_parse", "parse_attrs"),
    ("bad_throw_mutate", "mutate_inputs"), ("bad_throw_create_state", "create_op_state"),
    ("bad_throw_state_forward", "stateful forward")])
def test_a_library_function_throwing_a_non_exception_raises_value_error(misbehaving, op, what):
    # `throw 42` once went through the C ABI and ended the process (std::terminate).
    with pytest.raises(ValueError, match=f"unknown exception .*thrown by library op .*{what}"):
        getattr(npx, op)(np.array(X))
    assert_almost_equal(npx.my_relu(np.array(X)), onp.maximum(X, 0))  # the engine goes on


def test_a_backward_throwing_a_non_exception_raises_value_error(misbehaving):
    x = np.array(X)
    x.attach_grad()
    with autograd.record():
        y = npx.bad_throw_backward(x)
    assert_almost_equal(y, X)
    with pytest.raises(ValueError, match="unknown exception .* op bad_throw_backward's backward"):
        y.backward()


def test_a_library_shape_whose_size_overflows_is_too_big(misbehaving):
    # infer_shape says (2**40, 2**40): refused before anything is allocated, in graphs too.
    with pytest.raises(ValueError, match=r"\[bad_huge_shape\] array is too big"):
        npx.bad_huge_shape(np.array(X))
    x = ndx.sym.var("x")
    with pytest.raises(ValueError, match="array is too big"):
        ndx.sym._apply("bad_huge_shape", [x], {}).infer_shape(x=(3,))


def test_scratch_memory_the_engine_cannot_give_is_memory_error(misbehaving):
    with pytest.raises(MemoryError):
        npx.bad_huge_temp(np.array(X))


def test_infer_type_is_optional(misbehaving):
    for dt in ("float32", "float64"):
        y = npx.bad_no_infer_type(np.array(X, dtype=dt))
        assert y.dtype == dt
        assert_almost_equal(y, X)


def _c_library(tmp_path, name, op_name, value=1.0, num_ops=1, forward_first="", cxx=False):
    """A library written against the bare C ABI (compiled as C, or as C++ with extern "C"):
    one op without infer_type (or parse_attrs, backward, state), whose forward fills its
    float32 output with `value`."""
    code = f"""
#include <string.h>
#define NDX_LIB_C_ONLY
#include "ndx/lib_api.h"
{'extern "C" {' if cxx else ''}
static const char* err = "";
static int shape(const NDXLibAttrs* a, int32_t n_in, const int64_t* const* in,
                 const int32_t* in_nd, int32_t n_out, int64_t* out, int32_t* out_nd) {{
  out_nd[0] = in_nd[0];
  for (int k = 0; k < in_nd[0]; ++k) out[k] = in[0][k];
  return 0;
}}
static int fwd(const NDXLibAttrs* a, int32_t n_in, const NDXLibTensor* in, int32_t n_out,
               NDXLibTensor* out, const int32_t* req, const NDXLibResource* res) {{
  {forward_first}
  int64_t n = 1;
  if (out[0].dtype != kNDXLibFloat32) {{ err = "float32 only"; return 1; }}
  for (int k = 0; k < out[0].ndim; ++k) n *= out[0].shape[k];
  for (int64_t i = 0; i < n; ++i) ((float*)out[0].data)[i] = {value}f;
  return 0;
}}
int ndx_lib_version(void) {{ return NDX_LIB_API_VERSION; }}
const char* ndx_lib_last_error(void) {{ return err; }}
int ndx_lib_num_ops(void) {{ return {num_ops}; }}
int ndx_lib_get_op(int i, NDXLibOp* op) {{
  memset(op, 0, sizeof *op);
  op->name = "{op_name}";
  op->infer_shape = shape;
  op->forward_cpu = fwd;
  return 0;
}}
{'}' if cxx else ''}
"""
    return _cc(tmp_path, name, code, f"-I{ndx.library.include_dir()}", cxx=cxx)


def test_a_c_library_without_optional_functions_loads(tmp_path):
    path = _c_library(tmp_path, "bare", "bare_c_op", 7.0)
    assert ndx.library.load(path) == ["bare_c_op"]
    y = npx.bare_c_op(np.ones((2, 3), dtype="float32"))
    assert y.dtype == "float32" and y.tolist() == [[7.0] * 3] * 2
    with pytest.raises(ValueError, match="float32 only"):  # float64 in: float64 out, refused
        npx.bare_c_op(np.ones((2,), dtype="float64"))


def test_a_library_reporting_two_billion_ops_is_refused(tmp_path):
    path = _c_library(tmp_path, "billions", "billion_op", num_ops=2_000_000_000)
    with pytest.raises(ValueError, match="reports 2000000000 operators; a library may have 0 to"):
        ndx.library.load(path)
    assert not hasattr(npx, "billion_op")


def test_loading_a_path_again(tmp_path):
    """Loading the same path again returns its ops; once the file there has changed (a rebuild),
    loading it raises: a process holds one version of a library (dlopen keeps the first, and
    its ops may live on in graphs and tapes), and the first keeps running."""
    path = str(tmp_path / "libreload.so")
    shutil.copy(_c_library(tmp_path, "v1", "reload_op", 1.0), path)
    assert ndx.library.load(path) == ["reload_op"]
    assert ndx.library.load(path) == ["reload_op"]  # unchanged: a no-op
    os.utime(path, (1, 1))  # touched, same contents: still the same library
    assert ndx.library.load(path) == ["reload_op"]
    shutil.copy(_c_library(tmp_path, "v2", "reload_op", 2.0), path + ".new")
    os.replace(path + ".new", path)  # rebuilt in place
    with pytest.raises(ValueError, match="changed since it was loaded .* Restart the process"):
        ndx.library.load(path)
    assert npx.reload_op(np.zeros(2, dtype="float32")).tolist() == [1.0, 1.0]  # the first build
    # The new build under another path: its op name is the loaded library's.
    copy = shutil.copy(path, path + ".copy.so")
    with pytest.raises(ValueError, match=r"already registered \(by the library .*libreload.so\)"):
        ndx.library.load(copy)


def test_paths_that_are_not_plain_text():
    with pytest.raises(UnicodeEncodeError):  # a lone surrogate once crashed the loader
        ndx._core._load_library("/tmp/\ud800.so")
    with pytest.raises(ValueError, match="null character"):
        ndx._core._load_library("/tmp/a\0b.so")


def test_an_exception_let_out_through_the_bare_c_abi_is_caught(tmp_path):
    # A C++ library written without lib_api.h's wrappers: its forward throws through the C ABI.
    path = _c_library(tmp_path, "leaky", "leaky_op", forward_first="throw 42;", cxx=True)
    assert ndx.library.load(path) == ["leaky_op"]
    with pytest.raises(ValueError, match=r"\[leaky_op\] forward threw an unknown exception"):
        npx.leaky_op(np.ones(2, dtype="float32"))
    assert npx.my_relu(np.array([-1.0])).tolist() == [0.0]


# ---- names, out=, None inputs (the audit of 5668187); a two-output op of our own ----
MUL_ADD_SRC = r"""
// my_mul_add(a, b) -> (a * b, a + b): same shapes, float32 or float64.
#include "ndx/lib_api.h"
using namespace ndx_lib;
static int parse(const Attrs&, int* num_in, int* num_out) {
  *num_in = 2;
  *num_out = 2;
  return 0;
}
static int shape(const Attrs&, const std::vector<std::vector<int64_t>>& in,
                 std::vector<std::vector<int64_t>>& out) {
  if (in[0] != in[1]) return fail("my_mul_add: a and b must have the same shape");
  out[0] = out[1] = in[0];
  return 0;
}
static int type(const Attrs&, const std::vector<int>& in, std::vector<int>& out) {
  if (in[0] != in[1] || (in[0] != kNDXLibFloat32 && in[0] != kNDXLibFloat64))
    return fail("my_mul_add: float32 or float64, the same for a and b");
  out[0] = out[1] = in[0];
  return 0;
}
template <typename T>
static void put(T* dst, int64_t i, T v, int req) {
  if (req != kNullOp) dst[i] = req == kAddTo ? dst[i] + v : v;
}
template <typename T>
static void fwd(const std::vector<Tensor>& in, std::vector<Tensor>& out,
                const std::vector<int>& req) {
  const T* a = in[0].data_as<T>();
  const T* b = in[1].data_as<T>();
  for (int64_t i = 0; i < in[0].size(); ++i) {
    put(out[0].data_as<T>(), i, a[i] * b[i], req[0]);
    put(out[1].data_as<T>(), i, a[i] + b[i], req[1]);
  }
}
static int forward(const Attrs&, const std::vector<Tensor>& in, std::vector<Tensor>& out,
                   const std::vector<int>& req, const OpResource&) {
  if (in[0].dtype == kNDXLibFloat32) fwd<float>(in, out, req); else fwd<double>(in, out, req);
  return 0;
}
// inputs: (g_prod, g_sum, a, b, prod, sum) -> (grad_a, grad_b)
template <typename T>
static void bwd(const std::vector<Tensor>& in, std::vector<Tensor>& out,
                const std::vector<int>& req) {
  const T* gp = in[0].data_as<T>();
  const T* gs = in[1].data_as<T>();
  const T* a = in[2].data_as<T>();
  const T* b = in[3].data_as<T>();
  for (int64_t i = 0; i < in[2].size(); ++i) {
    put(out[0].data_as<T>(), i, gp[i] * b[i] + gs[i], req[0]);
    put(out[1].data_as<T>(), i, gp[i] * a[i] + gs[i], req[1]);
  }
}
static int backward(const Attrs&, const std::vector<Tensor>& in, std::vector<Tensor>& out,
                    const std::vector<int>& req, const OpResource&) {
  if (in[2].dtype == kNDXLibFloat32) bwd<float>(in, out, req); else bwd<double>(in, out, req);
  return 0;
}
REGISTER_OP(my_mul_add)
    .setParseAttrs(parse)
    .setInferShape(shape)
    .setInferType(type)
    .setForward(forward, "cpu")
    .setBackward(backward, "cpu");
"""


@pytest.fixture(scope="module")
def mul_add(tmp_path_factory):
    src = tmp_path_factory.mktemp("mul_add") / "mul_add_lib.cc"
    src.write_text(MUL_ADD_SRC)
    assert ndx.library.compile(str(src)) == ["my_mul_add"]


CLASH_SRC = r"""
// Ops named after ndx's Python functions (nd.array, npx.topk / nd.topk), and one that is not.
#include "ndx/lib_api.h"
using namespace ndx_lib;
static int same_shape(const Attrs&, const std::vector<std::vector<int64_t>>& in,
                      std::vector<std::vector<int64_t>>& out) {
  out[0] = in[0];
  return 0;
}
static int fill(const Attrs&, const std::vector<Tensor>& in, std::vector<Tensor>& out,
                const std::vector<int>& req, const OpResource&) {
  for (int64_t i = 0; i < out[0].size(); ++i) out[0].data_as<float>()[i] = 42;
  return 0;
}
REGISTER_OP(array).setForward(fill, "cpu").setInferShape(same_shape);
REGISTER_OP(topk).setForward(fill, "cpu").setInferShape(same_shape);
REGISTER_OP(my_unclashed).setForward(fill, "cpu").setInferShape(same_shape);
"""


def test_op_names_ndx_uses_for_python_functions_are_refused(tmp_path):
    """A library op named `array` or `topk` would have replaced nd.array and npx.topk (every
    later nd.array call ran the library's kernel): the load is refused, naming the clashes,
    and ndx's functions stay."""
    before = (ndx.nd.array, npx.topk, ndx.nd.topk)
    src = tmp_path / "clash_lib.cc"
    src.write_text(CLASH_SRC)
    path = ndx.library.compile(str(src), load_library=False)
    for _ in range(2):  # loading the path again is refused again, not bound the second time
        with pytest.raises(ValueError, match="already uses") as err:
            ndx.library.load(path)
        message = str(err.value)
        for clash in ("nd.array", "npx.topk", "nd.topk"):
            assert clash in message
        assert "my_unclashed" not in message
    assert (ndx.nd.array, npx.topk, ndx.nd.topk) == before
    assert not hasattr(npx, "my_unclashed")  # the library is refused whole
    a = ndx.nd.array([1.0, 2.0, 3.0])
    assert isinstance(a, ndx.nd.NDArray) and a.asnumpy().tolist() == [1.0, 2.0, 3.0]
    assert np.array([[1.0, -2.0]]).tolist() == [[1.0, -2.0]]
    assert npx.topk(np.array([1.0, 3.0, 2.0]), k=2, ret_typ="value").tolist() == [3.0, 2.0]


def test_out_writes_into_the_given_arrays_and_returns_them(mul_add):
    x = np.array([-1.0, 2.0, -3.0, 4.0])
    o = np.full((4,), 7.0)
    assert npx.my_relu(x, out=o) is o
    assert o.tolist() == [0.0, 2.0, 0.0, 4.0]
    o2 = ndx.nd.zeros((4,))
    assert ndx.nd.my_relu(ndx.nd.array([-1.0, 2.0, -3.0, 4.0]), out=o2) is o2
    assert o2.asnumpy().tolist() == [0.0, 2.0, 0.0, 4.0]
    # params still reach the library next to out=
    an, bn = onp.arange(6.0).reshape(2, 3), onp.ones((3, 2))
    c = np.zeros((2, 2), dtype="float32")
    assert npx.my_gemm(np.array(an, dtype="float32"), np.array(bn, dtype="float32"),
                       alpha=2, out=c) is c
    assert_almost_equal(c, 2 * an @ bn)
    # several outputs: a tuple (or list) of as many arrays
    a, b = np.array([[1.0, 2.0], [3.0, 4.0]]), np.array([[10.0, 20.0], [30.0, 40.0]])
    p, s = np.zeros((2, 2)), np.zeros((2, 2))
    r = npx.my_mul_add(a, b, out=(p, s))
    assert isinstance(r, tuple) and len(r) == 2 and r[0] is p and r[1] is s
    assert p.tolist() == [[10.0, 40.0], [90.0, 160.0]]
    assert s.tolist() == [[11.0, 22.0], [33.0, 44.0]]
    p2, s2 = np.zeros((2, 2)), np.zeros((2, 2))
    r = npx.my_mul_add(a, b, out=[p2, s2])
    assert r[0] is p2 and r[1] is s2 and s2.tolist() == s.tolist()
    for bad in (p, (p,), (p, s, np.zeros((2, 2)))):
        with pytest.raises(TypeError, match=r"\[my_mul_add\] the op has 2 outputs"):
            npx.my_mul_add(a, b, out=bad)
    assert p.tolist() == [[10.0, 40.0], [90.0, 160.0]]  # the refused calls wrote nothing


def test_a_none_input_is_a_type_error_naming_the_op_and_the_input(mul_add):
    x = np.array([1.0, 2.0], dtype="float32")
    with pytest.raises(TypeError, match=r"\[my_relu\] input 0 is None"):
        npx.my_relu(None)
    with pytest.raises(TypeError, match=r"\[my_gemm\] input 1 is None"):
        npx.my_gemm(np.ones((2, 2), dtype="float32"), None)
    with pytest.raises(TypeError, match=r"\[my_mul_add\] input 0 is None"):
        ndx.nd.my_mul_add(None, x)
    assert npx.my_relu(np.array([-1.0, 1.0])).tolist() == [0.0, 1.0]  # still usable


def test_check_op_on_an_op_with_several_outputs(mul_add):
    from ndx.test_utils import check_op
    rng = onp.random.default_rng(11)
    a, b = rng.normal(size=(2, 3)), rng.normal(size=(2, 3))
    check_op(npx.my_mul_add, [a, b], reference=lambda p, q: (p * q, p + q),
             extra_inputs=[[onp.array(2.0), onp.array(3.0)]],
             error_inputs=[([a, b[:, :2]], None, ValueError)])
    with pytest.raises(AssertionError, match="forward output 1"):
        check_op(npx.my_mul_add, [a, b], reference=lambda p, q: (p * q, p - q), grad=False)
    with pytest.raises(AssertionError, match="2 outputs, reference 1"):
        check_op(npx.my_mul_add, [a, b], reference=lambda p, q: (p * q,), grad=False)
    # the backward check weighs both outputs: an op whose gradient forgets one is caught
    class Forgetful(ndx.autograd.Function):
        def forward(self, p, q):
            return p * q, p + q

        def backward(self, gp, gs):
            return gp * self.q, gp * self.p  # the sum's gradient (gs) is left out

    def forgetful(p, q):
        f = Forgetful()
        f.p, f.q = p, q
        return f(p, q)

    with pytest.raises(AssertionError, match="gradient of input 0"):
        check_op(forgetful, [a, b], reference=lambda p, q: (p * q, p + q), hybridize=False)


def test_python_m_ndx_include_dir():
    env = dict(os.environ)
    env["PYTHONPATH"] = os.path.dirname(os.path.dirname(ndx.__file__))
    result = subprocess.run([sys.executable, "-m", "ndx", "--include-dir"], capture_output=True,
                            text=True, env=env, timeout=120)
    assert result.returncode == 0, result.stderr
    inc = result.stdout.strip()
    assert inc == ndx.library.include_dir()
    assert os.path.isfile(os.path.join(inc, "ndx", "lib_api.h"))
    assert os.path.isfile(os.path.join(inc, "mxnet", "lib_api.h"))


STALE_ERROR_SRC = r"""
// One op fails with a message; the other returns an error without one.
#include "ndx/lib_api.h"
using namespace ndx_lib;
static int same_shape(const Attrs&, const std::vector<std::vector<int64_t>>& in,
                      std::vector<std::vector<int64_t>>& out) {
  out[0] = in[0];
  return 0;
}
static int loud(const Attrs&, const std::vector<Tensor>&, std::vector<Tensor>&,
                const std::vector<int>&, const OpResource&) {
  return fail("the loud op's own message");
}
static int silent(const Attrs&, const std::vector<Tensor>&, std::vector<Tensor>&,
                  const std::vector<int>&, const OpResource&) {
  return 1;
}
REGISTER_OP(my_loud_failure).setForward(loud, "cpu").setInferShape(same_shape);
REGISTER_OP(my_silent_failure).setForward(silent, "cpu").setInferShape(same_shape);
"""


def test_a_failure_without_a_message_does_not_report_an_earlier_one(tmp_path):
    # lib_api.h clears the message before each library function runs
    src = tmp_path / "stale_error_lib.cc"
    src.write_text(STALE_ERROR_SRC)
    ndx.library.compile(str(src))
    x = np.ones(2)
    with pytest.raises(ValueError, match="the loud op's own message"):
        npx.my_loud_failure(x)
    with pytest.raises(ValueError) as err:
        npx.my_silent_failure(x)
    assert "loud" not in str(err.value) and "my_silent_failure" in str(err.value)
