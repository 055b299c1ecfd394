"""Kernels give NumPy's results on every compiled SIMD target that runs them.

Float compute types run the best target the CPU supports; bool, integer and complex ones run
AVX2's or the static (baseline) target's instance (src/kernel/vec-inl.h, compiled_for_target).
`NDX_SIMD=baseline` makes a process run the static instances only, as a CPU without AVX2
would, and `NDX_SIMD=avx2` the AVX2 ones on an AVX-512 CPU, so each check below runs three
times: in those processes and in one with the default targets.
"""
import json
import os
import subprocess
import sys

import pytest

CHECKS = r"""
import json, sys
import numpy as onp
import ndx
from ndx import gluon, np

failures = []

def check(name, got, want, exact=True):
    got = got.asnumpy() if hasattr(got, "asnumpy") else onp.asarray(got)
    want = onp.asarray(want)
    ok = got.dtype == want.dtype and got.shape == want.shape
    if ok:
        ok = (onp.array_equal(got, want, equal_nan=got.dtype.kind in "fc") if exact
              else onp.allclose(got, want, rtol=4e-7 if got.dtype == onp.float32 else 1e-15,
                                atol=0, equal_nan=True))
    if not ok:
        failures.append(f"{name}: got {got!r} want {want!r}")

rng = onp.random.default_rng(7)
for dt in ["bool", "int8", "uint8", "int16", "int32", "int64", "uint64", "float32", "float64",
           "complex64"]:
    a = (rng.integers(-50, 50, size=(37, 65)) if dt != "bool"
         else rng.integers(0, 2, size=(37, 65))).astype(dt)
    b = (rng.integers(1, 9, size=(65,)) if dt != "bool" else rng.integers(0, 2, size=65)).astype(dt)
    A, B = np.array(a), np.array(b)
    check(f"add {dt}", A + B, a + b)
    check(f"multiply strided {dt}", A[:, ::3] * B[::3], a[:, ::3] * b[::3])
    check(f"equal {dt}", A == B, a == b)
    if dt != "complex64":
        check(f"max {dt}", A.max(axis=0), a.max(axis=0))
        check(f"min {dt}", A.min(), a.min())
        check(f"argmax {dt}", np.argmax(A, axis=1), onp.argmax(a, axis=1))
        check(f"argmin {dt}", np.argmin(A), onp.argmin(a))
    if dt != "bool":
        check(f"sum {dt}", A.sum(axis=1), a.sum(axis=1), exact=dt[0] not in "fc")
        check(f"sum all {dt}", A.sum(), a.sum(), exact=dt[0] not in "fc")
        check(f"abs {dt}", np.abs(A), onp.abs(a))
    A += B
    check(f"in place {dt}", A, a + b)

# Integer and bool max / min / argmax / argmin stop at a value nothing can change (the first
# True of a bool max): that value at the start, inside a later block, at the very end, or
# nowhere; ties (values repeat) keep the first index.
for dt in ["bool", "int8", "uint16", "int64"]:
    info = onp.iinfo(dt) if dt != "bool" else None
    top, bottom = (True, False) if dt == "bool" else (info.max, info.min)
    for pos in (0, 1500, 4099, 4999, None):
        z = (rng.integers(0, 2, 5000) if dt == "bool" else rng.integers(-3, 3, 5000)).astype(dt)
        hi = onp.where(z == top, z - 1 if dt != "bool" else False, z).astype(dt)
        lo = onp.where(z == bottom, z + 1 if dt != "bool" else True, z).astype(dt)
        if pos is not None:
            hi[pos], lo[pos] = top, bottom
        for fn, v in (("max", hi), ("min", lo), ("any", hi), ("all", lo), ("argmax", hi),
                      ("argmin", lo)):
            V = np.array(v)
            check(f"{fn} {dt} at {pos}", getattr(V, fn)(), getattr(v, fn)())
            for shape in ((50, 100), (5, 1000)):
                for axis in (0, 1):
                    check(f"{fn} {dt} at {pos} {shape} axis {axis}",
                          getattr(V.reshape(shape), fn)(axis=axis),
                          getattr(v.reshape(shape), fn)(axis=axis))

# Float argmax / argmin: the extremum repeated at random places (values from a few integers,
# so ties fall in every lane and block) or unique (standard normals), -0.0 beside 0.0,
# infinities, a NaN (which wins), in rows of one to a few blocks and whole arrays; the first
# index, as NumPy's.
for dt in ["float32", "float64"]:
    for n in (64, 1000, 1024, 2048, 3000, 5003):
        v = rng.integers(-4, 5, (6, n)).astype(dt)
        v[1] = 0.0
        v[1, rng.integers(0, n, 3)] = -0.0
        v[2, rng.integers(0, n, 2)] = onp.inf
        v[3, rng.integers(0, n, 2)] = -onp.inf
        v[4, rng.integers(n // 2, n)] = onp.nan
        v[5] = rng.standard_normal(n)
        V = np.array(v)
        for fn in ("argmax", "argmin"):
            ours, theirs = getattr(np, fn), getattr(onp, fn)
            check(f"{fn} {dt} ties n={n} rows", ours(V, axis=1), theirs(v, axis=1))
            for r in range(6):
                check(f"{fn} {dt} ties n={n} row {r}", ours(V[r]), theirs(v[r]))

# bool arrays read as bytes (unary ops, casts from bool), x ** 2 as x * x, count_nonzero's
# vector count: every dtype against NumPy, contiguous and strided, with the float specials.
for dt in ["bool", "int8", "uint8", "int16", "uint32", "int64", "float32", "float64",
           "complex64"]:
    a = (rng.integers(0, 2, 4099) if dt == "bool" else rng.integers(-9, 9, 4099)).astype(dt)
    if dt.startswith("float"):
        a[:6] = [onp.nan, -0.0, onp.inf, -onp.inf, 0.0, 1e30]
    A = np.array(a)
    if dt == "bool":
        check("invert bool", ~A, ~a)
        check("logical_not bool strided", np.logical_not(A[::3]), onp.logical_not(a[::3]))
        for to in ["int8", "uint16", "int64", "float16", "float32", "float64", "complex64"]:
            check(f"bool astype {to}", A.astype(to), a.astype(to))
    with onp.errstate(over="ignore", invalid="ignore"):
        # (NumPy's bool ** 2 is its square, int8; np.power's, which ndx follows, is int64.)
        if dt != "bool":
            check(f"{dt} ** 2", A ** 2, a ** 2)
        check(f"power({dt}, 2) strided", np.power(A[::2], 2), onp.power(a[::2], 2))
        if dt.startswith("float"):  # (ndx's default float for an integer array is float32)
            check(f"{dt} ** 2.0", A ** 2.0, a ** 2.0)
        if dt != "bool":
            B = A.copy()
            B **= 2
            check(f"{dt} **= 2", B, a ** 2)
    if dt != "complex64":  # clip with both bounds: one pass (np.clip composes the others)
        lo, hi = (False, True) if dt == "bool" else (3, 7) if dt[0] == "u" else (-3, 4)
        check(f"clip {dt}", np.clip(A, lo, hi), onp.clip(a, lo, hi))
        check(f"clip {dt} strided", np.clip(A[::3], lo, hi), onp.clip(a[::3], lo, hi))
        check(f"clip {dt} above", np.clip(A, hi, lo), onp.clip(a, hi, lo))
        bounds = a[:64].reshape(8, 8)
        check(f"clip {dt} array bounds", np.clip(A[:64].reshape(8, 8), np.array(bounds[0]),
                                                 np.array(bounds[:, :1])),
              onp.clip(a[:64].reshape(8, 8), bounds[0], bounds[:, :1]))
        if dt.startswith("float"):
            check(f"clip {dt} nan bound", np.clip(A, onp.nan, 1.5), onp.clip(a, onp.nan, 1.5))
            check(f"clip {dt} float bounds", np.clip(A, -0.5, onp.inf),
                  onp.clip(a, -0.5, onp.inf))
    check(f"count_nonzero {dt}", np.count_nonzero(A), onp.count_nonzero(a))
    check(f"count_nonzero {dt} strided", np.count_nonzero(A[1::2]), onp.count_nonzero(a[1::2]))
    check(f"count_nonzero {dt} 2-d", np.count_nonzero(A[:4096].reshape(64, 64)),
          onp.count_nonzero(a[:4096].reshape(64, 64)))
    check(f"count_nonzero {dt} axis 0", np.count_nonzero(A[:4096].reshape(64, 64), axis=0),
          onp.count_nonzero(a[:4096].reshape(64, 64), axis=0))

# Reductions over the rows of a matrix (four rows a pass; max / min on the plain instruction
# unless a NaN or infinities of both signs are among them) and the flat pairwise sum. Sums
# against float64 sums, within a rounding error per element of the absolute sum.
def check_sum(name, got, x, axis=None):
    got = got.asnumpy()
    want = x.astype("float64").sum(axis=axis)
    bound = (1e-6 if x.dtype == onp.float32 else 1e-14) * onp.abs(x).astype("float64").sum(axis)
    ok = got.dtype == x.dtype and got.shape == want.shape and bool(onp.all(
        (onp.isnan(got) == onp.isnan(want)) & (onp.isinf(got) == onp.isinf(want)) &
        ((onp.abs(got - want) <= bound) | ~onp.isfinite(want))))
    if not ok:
        failures.append(f"{name}: got {got!r} want {want!r}")

for dt in ["float32", "float64"]:
    m = rng.standard_normal((203, 67)).astype(dt)
    m[5, 3] = m[200, 60] = m[202, 66] = onp.nan
    m[17, 4], m[18, 4], m[100, 5] = onp.inf, -onp.inf, onp.inf
    clean = m[:, 6:].copy()
    M, C = np.array(m), np.array(clean)
    for axis in (0, 1):
        for fn in ("max", "min"):
            check(f"{fn} {dt} axis {axis} with nan and inf", getattr(M, fn)(axis=axis),
                  getattr(m, fn)(axis=axis))
            check(f"{fn} {dt} axis {axis}", getattr(C, fn)(axis=axis),
                  getattr(clean, fn)(axis=axis))
        with onp.errstate(invalid="ignore"):
            check_sum(f"sum {dt} axis {axis} with nan and inf", M.sum(axis=axis), m, axis)
        check_sum(f"sum {dt} axis {axis}", C.sum(axis=axis), clean, axis)
    v = rng.standard_normal(5 * 1024 + 77).astype(dt)
    check_sum(f"sum {dt} leaves", np.array(v).sum(), v)
    v[4000] = onp.nan
    check_sum(f"sum {dt} leaves nan", np.array(v).sum(), v)

x = rng.standard_normal(10007).astype("float32")
check("exp float32", np.exp(np.array(x)), onp.exp(x), exact=False)
check("tanh float64", np.tanh(np.array(x.astype("float64"))), onp.tanh(x.astype("float64")),
      exact=False)
# float32 tanh: its polynomial below 0.55, 1 - 2 / (exp(2|x|) + 1) above, special values.
t = onp.concatenate([x, onp.linspace(0.5, 0.6, 1001), onp.array(
    [0.0, -0.0, onp.inf, -onp.inf, onp.nan, 0.55, -0.55, 20.0, 40.0, 1e30, 1e-30, -1e-45])])
t = t.astype("float32")
got = np.tanh(np.array(t)).asnumpy()
check("tanh float32", got, onp.tanh(t.astype("float64")).astype("float32"), exact=False)
check("tanh float32 keeps the sign of zero", onp.signbit(got), onp.signbit(onp.tanh(t)))

# A hybridized chain of integer ops (the fused graph calls the kernels' entries itself).
class Chain(gluon.HybridBlock):
    def forward(self, v):
        return (v * 3 + 1) // 2 - v

net = Chain()
net.hybridize()
v = onp.arange(-500, 500, dtype="int32")
check("fused int32 chain", net(np.array(v)), (v * 3 + 1) // 2 - v)
check("fused float64 chain", net(np.array(v.astype("float64"))),
      (v.astype("float64") * 3 + 1) // 2 - v)

# Sorting: the column networks of short lanes, vqsort below and through its Sorter, radix.
for dt in ["float32", "float64", "int16", "int64"]:
    for n in [3, 16, 32, 100, 300, 2000]:
        x = rng.standard_normal((40, n)) * 100
        x[::2] = onp.round(x[::2] / 50)  # few distinct values (ties) in every other lane
        x = x.astype(dt)
        check(f"sort {dt} lanes of {n}", np.sort(np.array(x), axis=-1),
              onp.sort(x, axis=-1, kind="stable"))
        check(f"argsort {dt} lanes of {n}", np.argsort(np.array(x), axis=-1),
              onp.argsort(x, axis=-1, kind="stable"))

print(json.dumps({"target": ndx._core._simd_target(), "failures": failures}))
"""


def run_checks(simd):
    env = dict(os.environ)
    env.pop("NDX_SIMD", None)
    if simd is not None:
        env["NDX_SIMD"] = simd
    proc = subprocess.run([sys.executable, "-c", CHECKS], env=env, capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


def cpu_has_avx2():
    try:
        with open("/proc/cpuinfo") as f:
            return " avx2" in f.read()
    except OSError:
        return False


@pytest.mark.parametrize("simd", [None, "avx2", "baseline"])
def test_kernels_match_numpy_on_the_target_that_runs_them(simd):
    # NDX_SIMD=avx2 runs the AVX2 instances on an AVX-512 CPU (on others it changes nothing).
    result = run_checks(simd)
    if simd == "avx2" and cpu_has_avx2():
        assert result["target"] == "AVX2", result["target"]
    if simd == "baseline":
        # Highway's static target on x86-64 without -m flags (scalar or 128-bit emulation).
        assert result["target"] in ("SCALAR", "EMU128", "SSE2"), result["target"]
    elif cpu_has_avx2():
        assert result["target"] in ("AVX2", "AVX3", "AVX3_DL", "AVX3_ZEN4"), result["target"]
    assert result["failures"] == []
