"""oneDNN's convolution (float32, CPU) against ndx's reference im2col kernels (NDX_DNNL=0, run
in a subprocess): forward, data, weight and bias gradients over 1-d / 2-d / 3-d problems with
groups, stride, dilation and padding. Both are also checked against NumPy by the op table
(test_ops.py runs with whichever path the build has); this file shows the two paths agree."""
import json
import os
import subprocess
import sys
import textwrap

import numpy as onp
import pytest

CASES = [  # data shape, num_filter, kernel, stride, dilate, pad, num_group, no_bias
    ((2, 3, 11), 4, (3,), (1,), (1,), (1,), 1, False),
    ((2, 4, 9), 6, (3,), (2,), (2,), (0,), 2, True),
    ((2, 3, 8, 7), 5, (3, 3), (1, 1), (1, 1), (1, 1), 1, False),
    ((1, 4, 9, 9), 4, (3, 2), (2, 1), (1, 2), (1, 0), 4, False),
    ((3, 16, 6, 6), 8, (1, 1), (1, 1), (1, 1), (0, 0), 2, False),
    ((1, 2, 5, 6, 4), 3, (2, 3, 2), (1, 2, 1), (1, 1, 2), (1, 1, 0), 1, False),
    ((2, 4, 4, 5, 5), 4, (3, 3, 3), (1, 1, 1), (1, 1, 1), (1, 1, 1), 2, True),
]

SCRIPT = textwrap.dedent("""
    import json, sys
    import numpy as onp
    from ndx import autograd, np, npx
    cases = json.loads(sys.argv[1])
    out = []
    for k, (shape, f, kernel, stride, dilate, pad, groups, no_bias) in enumerate(cases):
        rng = onp.random.default_rng(k)
        x = np.array(rng.standard_normal(shape).astype(onp.float32))
        wshape = (f, shape[1] // groups) + tuple(kernel)
        w = np.array(rng.standard_normal(wshape).astype(onp.float32))
        args = [x, w] + ([] if no_bias else [np.array(rng.standard_normal(f).astype(onp.float32))])
        for a in args:
            a.attach_grad()
        with autograd.record():
            y = npx.convolution(*args, kernel=kernel, stride=stride, dilate=dilate, pad=pad,
                                num_filter=f, num_group=groups, no_bias=no_bias)
        head = rng.standard_normal(y.shape).astype(onp.float32)
        y.backward(np.array(head))
        out.append([y.asnumpy().tolist()] + [a.grad.asnumpy().tolist() for a in args])
    print(json.dumps(out))
""")


def _run(dnnl):
    env = dict(os.environ, NDX_DNNL="1" if dnnl else "0")
    r = subprocess.run([sys.executable, "-c", SCRIPT, json.dumps(CASES)], env=env,
                       capture_output=True, text=True, check=True)
    return json.loads(r.stdout)


def _dnnl_built():
    from ndx import _core
    return _core._dnnl_enabled()


@pytest.mark.skipif(not _dnnl_built(), reason="built without oneDNN (libdnnl-dev) or NDX_DNNL=0")
def test_onednn_convolution_matches_the_reference_kernels():
    fast, ref = _run(True), _run(False)
    for case, a, b in zip(CASES, fast, ref):
        for got, want, what in zip(a, b, ("output", "d data", "d weight", "d bias")):
            onp.testing.assert_allclose(onp.array(got), onp.array(want), rtol=2e-4, atol=2e-4,
                                        err_msg=f"{what} of {case}")


POOL_CASES = [  # data shape, kwargs (each runs as max and avg)
    ((2, 3, 9), {"kernel": (3,), "stride": (2,), "pad": (1,)}),
    ((2, 3, 8, 7), {"kernel": (2, 2), "stride": (2, 2)}),
    ((1, 9, 7, 7), {"kernel": (3, 3), "pad": (1, 1)}),
    ((2, 17, 6, 5), {"kernel": (3, 2), "stride": (2, 1), "pad": (1, 0),
                     "count_include_pad": False}),
    ((1, 2, 5, 6, 4), {"kernel": (2, 3, 2), "stride": (1, 2, 2), "pad": (1, 1, 0)}),
    ((2, 5, 4, 3), {"global_pool": True}),
]

POOL_SCRIPT = textwrap.dedent("""
    import json, sys
    import numpy as onp
    from ndx import autograd, np, npx
    cases = json.loads(sys.argv[1])
    out = []
    for k, (shape, kw) in enumerate(cases):
        for t in ("max", "avg"):
            rng = onp.random.default_rng(k)
            x = np.array(rng.standard_normal(shape).astype(onp.float32))
            x.attach_grad()
            with autograd.record():
                y = npx.pooling(x, pool_type=t, **kw)
            y.backward(np.array(rng.standard_normal(y.shape).astype(onp.float32)))
            out.append([y.asnumpy().tolist(), x.grad.asnumpy().tolist()])
    print(json.dumps(out))
""")


@pytest.mark.skipif(not _dnnl_built(), reason="built without oneDNN (libdnnl-dev) or NDX_DNNL=0")
def test_onednn_pooling_matches_the_reference_kernels():
    """Pooling runs on oneDNN's vector kernels (channels blocked); its outputs and gradients
    equal the reference loops' (distinct random values, so max pooling has no ties)."""
    def run(dnnl):
        env = dict(os.environ, NDX_DNNL="1" if dnnl else "0")
        r = subprocess.run([sys.executable, "-c", POOL_SCRIPT, json.dumps(POOL_CASES)], env=env,
                           capture_output=True, text=True, check=True)
        return json.loads(r.stdout)
    fast, ref = run(True), run(False)
    labels = [(c, t) for c in POOL_CASES for t in ("max", "avg")]
    for label, a, b in zip(labels, fast, ref):
        for got, want, what in zip(a, b, ("output", "d data")):
            onp.testing.assert_allclose(onp.array(got), onp.array(want), rtol=1e-5, atol=1e-6,
                                        err_msg=f"{what} of {label}")


def test_max_pooling_gradient_with_ties_goes_to_one_maximum_per_window():
    """Tied maxima (integer data): each window's gradient lands on one of its maximal
    elements, so the gradient sums per window equal the head gradient, and it never lands on a
    smaller element (a NumPy loop checks every window)."""
    from ndx import autograd, np, npx
    rng = onp.random.default_rng(3)
    xn = rng.integers(0, 3, size=(2, 16, 6, 6)).astype(onp.float32)
    x = np.array(xn)
    x.attach_grad()
    with autograd.record():
        y = npx.pooling(x, kernel=(2, 2), stride=(2, 2), pool_type="max")
    y.backward(np.ones(y.shape))
    g = x.grad.asnumpy()
    for i in range(3):
        for j in range(3):
            at = (slice(None), slice(None), slice(2 * i, 2 * i + 2), slice(2 * j, 2 * j + 2))
            win, gw = xn[at], g[at]
            onp.testing.assert_array_equal(gw.sum(axis=(2, 3)), onp.ones((2, 16)))
            assert (gw[win < win.max(axis=(2, 3), keepdims=True)] == 0).all()
