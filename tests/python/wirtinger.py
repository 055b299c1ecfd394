"""Gradient checks for complex functions under the conjugate Wirtinger convention (PyTorch's,
which ndx follows): for a real loss L of complex z, the gradient is dL/d(Re z) + i dL/d(Im z).
The reference differentiates a NumPy function numerically, part by part, so it is independent
of ndx's forward and backward code."""
import numpy as onp

from ndx import autograd, np


def real_loss(y, w):
    """sum(Re(y) Re(w) + Im(y) Im(w)) in NumPy, for complex or real y."""
    y = onp.asarray(y)
    return float(onp.sum(onp.real(y) * onp.real(w) + onp.imag(y) * onp.imag(w)))


def numeric_grads(f_ref, xs, w, eps=1e-6):
    """Central differences of real_loss(f_ref(*xs), w) along each real and imaginary part."""
    grads = []
    for k, x in enumerate(xs):
        g = onp.zeros(x.shape, dtype=onp.complex128)
        units = (1.0, 1j) if x.dtype.kind == "c" else (1.0,)
        for idx in onp.ndindex(x.shape):
            for unit in units:
                plus = [v.copy() for v in xs]
                minus = [v.copy() for v in xs]
                plus[k][idx] += eps * unit
                minus[k][idx] -= eps * unit
                d = (real_loss(f_ref(*plus), w) - real_loss(f_ref(*minus), w)) / (2 * eps)
                g[idx] += d * unit
        grads.append(g if x.dtype.kind == "c" else g.real)
    return grads


def autograd_grads(f_nd, xs, w):
    """ndx's gradients of the same loss, built with np.real / np.imag inside the recording."""
    nds = [np.array(x) for x in xs]
    for x in nds:
        x.attach_grad()
    wr, wi = np.array(onp.real(w).copy()), np.array(onp.imag(w).copy())
    with autograd.record():
        y = f_nd(*nds)
        if onp.dtype(y.dtype).kind == "c":
            loss = np.sum(np.real(y) * wr + np.imag(y) * wi)
        else:
            loss = np.sum(y * wr)
    loss.backward()
    return [x.grad.asnumpy() for x in nds]


def check(f_nd, f_ref, xs, rng, rtol=1e-5, atol=1e-6):
    """ndx's autograd gradient of f_nd against the numeric Wirtinger gradient of f_ref."""
    y = onp.asarray(f_ref(*xs))
    w = rng.standard_normal(y.shape)
    if y.dtype.kind == "c":
        w = w + 1j * rng.standard_normal(y.shape)
    want = numeric_grads(f_ref, xs, w)
    got = autograd_grads(f_nd, xs, w)
    for g, e in zip(got, want):
        assert g.shape == e.shape, (g.shape, e.shape)
        onp.testing.assert_allclose(g, e, rtol=rtol, atol=atol)
