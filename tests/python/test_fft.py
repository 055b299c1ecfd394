"""np.fft (issue 13) against NumPy's pocketfft: every name, n / axis / axes / s / norm, the
dtypes (single precision kept, as NumPy 2), and the gradients of the transforms under the
conjugate Wirtinger convention (tests/python/wirtinger.py). One-axis forward values with the
typed errors are also in the op table (op_table.py, kind "fft")."""
import numpy as onp
import pytest

import ndx
import wirtinger
from ndx import np

R = onp.random.default_rng(7)
NAMES = ["fft", "ifft", "fft2", "ifft2", "fftn", "ifftn", "rfft", "irfft", "rfft2", "irfft2",
         "rfftn", "irfftn", "hfft", "ihfft", "fftfreq", "rfftfreq", "fftshift", "ifftshift"]


def test_namespace_has_every_name():
    missing = [n for n in NAMES if not callable(getattr(np.fft, n, None))]
    assert not missing


def cx(shape, dtype=onp.complex128):
    return (R.standard_normal(shape) + 1j * R.standard_normal(shape)).astype(dtype)


def close(got, want, wide=True):
    tol = dict(rtol=1e-10, atol=1e-10) if wide else dict(rtol=2e-4, atol=2e-4)
    onp.testing.assert_allclose(got.asnumpy(), want, **tol)


@pytest.mark.parametrize("norm", [None, "backward", "ortho", "forward"])
@pytest.mark.parametrize("name", ["fft", "ifft", "rfft", "irfft", "hfft", "ihfft"])
def test_one_axis_transforms(name, norm):
    x = cx((3, 10)) if name in ("fft", "ifft", "irfft", "hfft") else R.standard_normal((3, 10))
    for kw in ({}, {"n": 7}, {"n": 16}, {"axis": 0}, {"axis": 0, "n": 5}):
        want = getattr(onp.fft, name)(x, norm=norm, **kw)
        got = getattr(np.fft, name)(np.array(x), norm=norm, **kw)
        assert got.dtype == want.dtype, (kw, got.dtype, want.dtype)
        close(got, want)


@pytest.mark.parametrize("name", ["fft2", "ifft2", "fftn", "ifftn", "rfft2", "irfft2", "rfftn",
                                  "irfftn"])
def test_n_dimensional_transforms(name):
    real_in = name.startswith("rfft")
    x = R.standard_normal((4, 6, 5)) if real_in else cx((4, 6, 5))
    cases = [{}, {"axes": (0, 2)}, {"s": (3, 8), "axes": (-2, -1)}, {"s": (5, 4), "axes": (2, 0)},
             {"norm": "ortho"}]
    if name.endswith("n"):
        cases.append({"axes": (1,)})
    for kw in cases:
        want = getattr(onp.fft, name)(x, **kw)
        got = getattr(np.fft, name)(np.array(x), **kw)
        assert got.shape == want.shape, (kw, got.shape, want.shape)
        close(got, want)


def test_single_precision_is_kept_as_numpy_2():
    x32 = R.standard_normal(64).astype(onp.float32)
    got = np.fft.fft(np.array(x32))
    assert got.dtype == onp.fft.fft(x32).dtype == onp.complex64
    close(got, onp.fft.fft(x32.astype(onp.float64)), wide=False)
    assert np.fft.rfft(np.array(x32)).dtype == onp.complex64
    assert np.fft.irfft(np.fft.rfft(np.array(x32))).dtype == onp.float32
    ints = onp.arange(8)
    assert np.fft.fft(np.array(ints)).dtype == onp.complex64  # ndx's default float
    close(np.fft.fft(np.array(ints)), onp.fft.fft(ints), wide=False)


# 257, 1031, 2 * 1031 and 6 * 257 have a prime factor > 128: Bluestein's algorithm
@pytest.mark.parametrize("n", [1, 2, 3, 5, 7, 16, 17, 60, 97, 128, 1000, 4096, 257, 1031, 2062,
                               1542])
def test_lengths_of_every_factorization(n):
    x = cx((n,))
    close(np.fft.fft(np.array(x)), onp.fft.fft(x))
    r = x.real.copy()
    close(np.fft.rfft(np.array(r)), onp.fft.rfft(r))
    close(np.fft.irfft(np.array(x[: n // 2 + 1]), n), onp.fft.irfft(x[: n // 2 + 1], n))


def test_round_trips_and_large_transform():
    x = R.standard_normal(1 << 16)
    back = np.fft.irfft(np.fft.rfft(np.array(x)), n=x.size)
    close(back, x)
    z = cx((1 << 15,))
    close(np.fft.ifft(np.fft.fft(np.array(z))), z)


def near(got, want, rtol, atol):
    onp.testing.assert_allclose(got.asnumpy(), want, rtol=rtol, atol=atol)


@pytest.mark.parametrize("n", [1 << 16, 3 * 5 * 7 * 11 * 64, 65537, 100_000])
def test_long_lines_four_step(n):
    # lines of >= 2**16 points that split into two factors >= 64 run as the four-step
    # decomposition (65537 is prime and runs directly); single and double precision
    z = cx((n,))
    near(np.fft.fft(np.array(z)), onp.fft.fft(z), rtol=1e-10, atol=1e-8)
    near(np.fft.ifft(np.array(z), norm="ortho"), onp.fft.ifft(z, norm="ortho"), rtol=1e-10,
          atol=1e-10)
    z32 = z.astype(onp.complex64)
    got = np.fft.fft(np.array(z32))
    assert got.dtype == onp.complex64
    near(got, onp.fft.fft(z32), rtol=1e-3, atol=2e-3 * onp.sqrt(n))
    # cropped, padded, batched and along a non-last axis
    b = cx((2, 70_000))
    for kw in ({"n": 66_000}, {"n": 80_000}):
        near(np.fft.fft(np.array(b), **kw), onp.fft.fft(b, **kw), rtol=1e-10, atol=1e-8)
    near(np.fft.fft(np.array(b.T.copy()), axis=0), onp.fft.fft(b.T, axis=0), rtol=1e-10,
          atol=1e-8)


def test_long_line_gradient_is_the_adjoint():
    # y = fft(x): grad_x = F^H w = n ifft(w) for the loss Re(sum(conj(w) y))
    n = 1 << 16
    x, w = cx((n,)), cx((n,))
    a = np.array(x)
    a.attach_grad()
    with ndx.autograd.record():
        y = np.fft.fft(a)
        loss = np.sum(np.real(y) * np.array(w.real) + np.imag(y) * np.array(w.imag))
    loss.backward()
    near(a.grad, n * onp.fft.ifft(w), rtol=1e-9, atol=1e-7)


def test_helpers():
    for n in (1, 4, 7):
        for d in (1.0, 0.1):
            onp.testing.assert_allclose(np.fft.fftfreq(n, d).asnumpy(), onp.fft.fftfreq(n, d),
                                        rtol=1e-6)
            onp.testing.assert_allclose(np.fft.rfftfreq(n, d).asnumpy(), onp.fft.rfftfreq(n, d),
                                        rtol=1e-6)
    x = onp.arange(12.0).reshape(3, 4)
    for axes in (None, 0, 1, (0, 1)):
        onp.testing.assert_array_equal(np.fft.fftshift(np.array(x), axes).asnumpy(),
                                       onp.fft.fftshift(x, axes))
        onp.testing.assert_array_equal(np.fft.ifftshift(np.array(x), axes).asnumpy(),
                                       onp.fft.ifftshift(x, axes))
    onp.testing.assert_array_equal(np.fft.ifftshift(np.fft.fftshift(np.arange(7))).asnumpy(),
                                   onp.arange(7))


def test_typed_errors():
    a = np.ones(4)
    with pytest.raises(ValueError, match="Invalid number of FFT data points"):
        np.fft.fft(a, n=0)
    with pytest.raises(ValueError, match="norm"):
        np.fft.ifft(a, norm="both")
    with pytest.raises(TypeError, match="real"):
        np.fft.rfft(np.array(cx((4,))))
    with pytest.raises(ValueError):
        np.fft.fftn(np.ones((2, 2)), s=(2, 2), axes=(0,))
    with pytest.raises(IndexError):
        np.fft.fft2(np.ones(3))
    with pytest.raises(ValueError):
        np.fft.irfft(np.ones(1))  # n = 2 * (1 - 1) = 0
    with pytest.raises(ValueError):
        np.fft.fftfreq(0)



# --------------------------- lengths 2^a 3^b 5^c: batches of lines (src/kernel/fft.cc)
# Such a length with at least 4 lines runs 16 (float32) or 8 (float64) lines per SIMD batch
# (a mixed-radix Stockham transform: radix 4, 2, 3, 5 stages); the cases below leave batches
# part-empty, run along inner axes (with fewer neighbours than a batch holds), crop and pad,
# and cover each radix alone and mixed. 7 and 14 are KISS FFT's, beside them.
BATCH_CASES = [((4, 2), -1), ((21, 8), -1), ((37, 1024), -1), ((9, 256), 0), ((3, 64, 20), 1),
               ((2, 32, 5), 1), ((5, 4096), -1), ((6, 3), -1), ((17, 25), -1), ((11, 243), -1),
               ((30, 6), 0), ((4, 1000), -1), ((3, 60, 7), 1), ((5, 3125), -1), ((8, 7), -1),
               ((6, 14), -1)]


def max_rel_err(got, want):
    return float(onp.abs(got.asnumpy() - want).max() / onp.abs(want).max())


@pytest.mark.parametrize("shape,axis", BATCH_CASES, ids=[f"{s}-{a}" for s, a in BATCH_CASES])
def test_batched_lines_match_numpy(shape, axis):
    n = shape[axis]
    z, r = cx(shape), R.standard_normal(shape)
    spectrum = onp.fft.rfft(r, axis=axis)
    for kw in ({}, {"n": max(n // 2, 2)}, {"n": 2 * n}, {"norm": "ortho"}):
        tol = dict(rtol=1e-12, atol=1e-13 * 2 * n)
        for name, x in (("fft", z), ("ifft", z), ("rfft", r)):
            near(getattr(np.fft, name)(np.array(x), axis=axis, **kw),
                 getattr(onp.fft, name)(x, axis=axis, **kw), **tol)
        m = kw.get("n", n)
        near(np.fft.irfft(np.array(spectrum), axis=axis, n=m, norm=kw.get("norm")),
             onp.fft.irfft(spectrum, axis=axis, n=m, norm=kw.get("norm")), **tol)
        # single precision: the error relative to the largest output stays near float32's
        # epsilon (1.2e-7); pocketfft in float32 gives the same order
        z32, r32 = z.astype(onp.complex64), r.astype(onp.float32)
        for name, x in (("fft", z32), ("ifft", z32), ("rfft", r32)):
            got = getattr(np.fft, name)(np.array(x), axis=axis, **kw)
            assert got.dtype == onp.complex64
            want = getattr(onp.fft, name)(x.astype(onp.complex128 if name != "rfft" else
                                                   onp.float64), axis=axis, **kw)
            assert max_rel_err(got, want) < 1e-6, name
        got = np.fft.irfft(np.array(spectrum.astype(onp.complex64)), axis=axis, n=m)
        assert got.dtype == onp.float32
        assert max_rel_err(got, onp.fft.irfft(spectrum.astype(onp.complex64).astype(
            onp.complex128), axis=axis, n=m)) < 1e-6


def test_batched_lines_read_strided_views():
    # a view with steps along both axes is read as its values, not its buffer
    z = cx((40, 64))
    near(np.fft.fft(np.array(z)[::3, ::2]), onp.fft.fft(z[::3, ::2]), rtol=1e-12, atol=1e-12)
    r = R.standard_normal((64, 48))
    near(np.fft.rfft(np.array(r).T), onp.fft.rfft(r.T), rtol=1e-12, atol=1e-12)
    near(np.fft.fft(np.array(z)[:, 4:], axis=0), onp.fft.fft(z[:, 4:], axis=0), rtol=1e-12,
         atol=1e-12)


@pytest.mark.parametrize("n", [1 << 17, 2 * 3 * 5 * (1 << 13)])
def test_long_real_lines(n):
    # rfft of n >= 2**17 points: an n / 2-point complex transform by the four-step passes
    # (batched), split into the real spectrum; the input is also cropped to n from n + 3
    x = R.standard_normal((n + 3,))
    near(np.fft.rfft(np.array(x), n=n), onp.fft.rfft(x, n=n), rtol=1e-10, atol=1e-9)
    got = np.fft.rfft(np.array(x.astype(onp.float32)), n=n)
    assert max_rel_err(got, onp.fft.rfft(x.astype(onp.float32).astype(onp.float64), n=n)) < 2e-6
    # 4 long lines back: a batch of n / 2-point inverse transforms
    spectrum = onp.fft.rfft(R.standard_normal((4, n)))
    near(np.fft.irfft(np.array(spectrum)), onp.fft.irfft(spectrum), rtol=1e-10, atol=1e-12)
    # one long complex line of a mixed-radix length: the batched four-step passes
    z = cx((n,))
    near(np.fft.fft(np.array(z)), onp.fft.fft(z), rtol=1e-10, atol=1e-8)


@pytest.mark.parametrize("name", ["fft", "ifft", "rfft", "irfft"])
@pytest.mark.parametrize("n", [8, 12])
def test_batched_gradients(name, n):
    x = R.standard_normal((6, n)) if name == "rfft" else cx((6, n))
    wirtinger.check(lambda a: getattr(np.fft, name)(a), lambda a: getattr(onp.fft, name)(a),
                    [x], R)
    wirtinger.check(lambda a: getattr(np.fft, name)(a, n=4, axis=0),
                    lambda a: getattr(onp.fft, name)(a, n=4, axis=0), [x.T.copy()], R)

# ------------------------------------------------------- gradients (conjugate Wirtinger)
GRAD_CASES = [
    ("fft", {}), ("fft", {"n": 6, "norm": "ortho"}), ("fft", {"n": 3}),
    ("ifft", {}), ("ifft", {"n": 7, "norm": "forward"}),
    ("rfft", {}), ("rfft", {"n": 7}), ("rfft", {"n": 3, "norm": "ortho"}),
    ("irfft", {}), ("irfft", {"n": 7}), ("irfft", {"n": 4, "norm": "forward"}),
    ("hfft", {}), ("ihfft", {}),
    ("fft", {"n": 131}), ("rfft", {"n": 262}), ("irfft", {"n": 139}),  # Bluestein lengths
]


@pytest.mark.parametrize("name,kw", GRAD_CASES,
                         ids=[f"{n}-{'-'.join(f'{k}{v}' for k, v in kw.items())}"
                              for n, kw in GRAD_CASES])
def test_transform_gradients(name, kw):
    real_in = name in ("rfft", "ihfft")
    x = R.standard_normal((2, 5)) if real_in else cx((2, 5))
    wirtinger.check(lambda a: getattr(np.fft, name)(a, **kw),
                    lambda a: getattr(onp.fft, name)(a, **kw), [x], R)


def test_gradients_through_real_input_and_other_axes():
    x = R.standard_normal((3, 4))
    wirtinger.check(lambda a: np.fft.fft(a, axis=0), lambda a: onp.fft.fft(a, axis=0), [x], R)
    wirtinger.check(lambda a: np.abs(np.fft.rfft2(a)), lambda a: onp.abs(onp.fft.rfft2(a)), [x],
                    R)
    z = cx((3, 4))
    wirtinger.check(lambda a: np.fft.fftn(a, s=(4, 3), axes=(0, 1)),
                    lambda a: onp.fft.fftn(a, s=(4, 3), axes=(0, 1)),
                    [z], R)


def test_a_length_no_machine_holds_is_a_memory_error():
    # The gradient ops size their buffers by n, not by their output: found by the fuzzer
    # (seed 20261123), which used to get a RuntimeError from std::vector.
    from ndx import _core
    with pytest.raises(MemoryError, match="do not fit in memory"):
        _core._invoke("_backward_irfft", [np.zeros(5, dtype="float64"),
                                          np.zeros((3, 2), dtype="float64")], {"n": 2**41})
    with pytest.raises(MemoryError, match="do not fit in memory"):
        _core._invoke("_backward_rfft", [np.zeros(1), np.zeros((1, 4))],
                      {"n": 2**41, "inverse": False})


@pytest.mark.parametrize("call", [lambda m: m.fft.fftn(m.ones(4), axes=(5,)),
                                  lambda m: m.fft.fft2(m.ones(4)),
                                  lambda m: m.fft.rfftn(m.ones(4), axes=(-3,)),
                                  lambda m: m.fft.irfftn(m.ones(4), axes=(2,))])
def test_nd_transforms_name_an_axis_out_of_range(call):
    # The axes' lengths were read before the axes were checked: a bare IndexError.
    with pytest.raises(IndexError):
        call(onp)
    with pytest.raises(IndexError, match="out of bounds for array of dimension 1"):
        call(np)
