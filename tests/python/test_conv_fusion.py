"""Convolution epilogue fusion in hybridized blocks: a convolution followed by a batch_norm, an
add and a relu (each optional) runs as one `_FusedConvolution` node. In inference on float32
CPU arrays oneDNN runs it: the batch_norm's running statistics folded into the weights and the
bias, the residual and the relu applied as the output is stored. Elsewhere (batch statistics,
float64, NDX_DNNL=0, a broadcast residual) the node runs each op's own kernel, bit-identical
to the unfused graph.

References: NumPy (a convolution by sliding windows, batch_norm's formula) and the same block
with fusion off (npx.set_fusion(False))."""
import os
import subprocess
import sys
import textwrap

import numpy as onp
import pytest

from ndx import _core, autograd, gluon, np, npx
from ndx.gluon import nn
from strict_checks import assert_almost_equal


def _f32(shape, seed=0, low=None, high=None):
    rng = onp.random.default_rng(seed)
    if low is not None:
        return rng.uniform(low, high, size=shape).astype(onp.float32)
    return rng.normal(size=shape).astype(onp.float32)


def _np_conv(x, w, b=None, stride=1, pad=0, groups=1):
    """NumPy convolution over any number of spatial dims (NCHW-style layouts)."""
    nsp = x.ndim - 2
    x = onp.pad(x.astype(onp.float64), [(0, 0), (0, 0)] + [(pad, pad)] * nsp)
    k = w.shape[2:]
    win = onp.lib.stride_tricks.sliding_window_view(x, k, axis=tuple(range(2, 2 + nsp)))
    win = win[(slice(None), slice(None)) + (slice(None, None, stride),) * nsp]
    n, c = x.shape[:2]
    f, cg = w.shape[:2]
    fg = f // groups
    outs = []
    letters = "defg"[:nsp]
    for g in range(groups):
        xg = win[:, g * cg:(g + 1) * cg]
        wg = w[g * fg:(g + 1) * fg].astype(onp.float64)
        spec = f"nc{letters.upper()}{letters},oc{letters}->no{letters.upper()}"
        outs.append(onp.einsum(spec, xg, wg))
    y = onp.concatenate(outs, axis=1)
    if b is not None:
        y += b.reshape((1, f) + (1,) * nsp)
    return y


def _np_bn(y, gamma, beta, mean, var, eps=1e-5, fix_gamma=False):
    shape = (1, -1) + (1,) * (y.ndim - 2)
    g = onp.ones_like(gamma) if fix_gamma else gamma
    return ((y - mean.reshape(shape)) / onp.sqrt(var.reshape(shape) + eps) * g.reshape(shape)
            + beta.reshape(shape))


def _stats(block):
    return _core._graph_stats(block._last_graph[0])


def _set_bn_stats(net, seed=1):
    """Non-trivial BatchNorm parameters and running statistics (as after training)."""
    rng = onp.random.default_rng(seed)
    for name, p in net.collect_params().items():
        if name.endswith("running_mean") or name.endswith("beta"):
            p.set_data(np.array(rng.normal(0, 0.3, p.shape).astype(onp.float32)))
        elif name.endswith("running_var") or name.endswith("gamma"):
            p.set_data(np.array(rng.uniform(0.5, 1.5, p.shape).astype(onp.float32)))


ONEDNN = _core._dnnl_enabled()


def _run(block, *args, fusion=True, path=None):
    """The block's second call (output as NumPy, the run's stats). path: how its fused
    convolutions must have run, 'onednn' (when ndx has oneDNN) or 'whole' (op by op)."""
    prev = npx.set_fusion(fusion)
    try:
        block(*args)
        before = _core._fusion_runs()
        out = block(*args).asnumpy()
        after = _core._fusion_runs()
    finally:
        npx.set_fusion(prev)
    if path == "whole" or (path == "onednn" and ONEDNN):
        ran = {k: after[f"conv_{k}"] - before[f"conv_{k}"] for k in ("onednn", "whole")}
        other = "whole" if path == "onednn" else "onednn"
        assert ran[path] > 0 and ran[other] == 0, ran
    return out, _stats(block)


class ConvBlock(gluon.HybridBlock):
    """conv -> [bn] -> [+ residual] -> [relu], the patterns the pass fuses."""

    def __init__(self, channels=8, nsp=2, bn=True, residual=False, relu=True, use_bias=False,
                 stride=1, groups=1, act="relu"):
        super().__init__()
        conv = {1: nn.Conv1D, 2: nn.Conv2D, 3: nn.Conv3D}[nsp]
        self.conv = conv(channels, 3, strides=stride, padding=1, use_bias=use_bias,
                         groups=groups)
        self.bn = nn.BatchNorm() if bn else None
        self.residual = residual
        self.relu = relu
        self.act = act

    def forward(self, x, r=None):
        y = self.conv(x)
        if self.bn is not None:
            y = self.bn(y)
        if self.residual:
            y = y + r
        if self.relu:
            y = npx.relu(y) if self.act == "relu" else npx.activation(y, act_type=self.act)
        return y


def _reference(block, x, r=None):
    w = block.conv.weight.data().asnumpy()
    b = block.conv.bias.data().asnumpy() if block.conv.bias is not None else None
    stride = block.conv._kwargs["stride"][0]
    groups = block.conv._kwargs["num_group"]
    y = _np_conv(x, w, b, stride=stride, pad=1, groups=groups)
    if block.bn is not None:
        p = {k.split(".")[-1]: v.data().asnumpy() for k, v in block.bn.collect_params().items()}
        y = _np_bn(y, p["gamma"], p["beta"], p["running_mean"], p["running_var"])
    if block.residual:
        y = y + r
    if block.relu:
        y = onp.maximum(y, 0) if block.act == "relu" else 1 / (1 + onp.exp(-y))
    return y


CASES = [
    # (id, ConvBlock kwargs, input shape, fused ops)
    ("conv+bn", dict(relu=False), (2, 4, 9, 9), 2),
    ("conv+bn+relu", dict(), (2, 4, 9, 9), 3),
    ("conv+relu bias", dict(bn=False, use_bias=True), (2, 4, 9, 9), 2),
    ("conv+bn+add+relu", dict(residual=True), (2, 8, 9, 9), 4),
    ("conv+bn+add", dict(residual=True, relu=False), (2, 8, 9, 9), 3),
    ("conv+add bias", dict(bn=False, residual=True, relu=False, use_bias=True), (2, 8, 9, 9), 2),
    ("conv1d+bn+relu", dict(nsp=1), (3, 4, 17), 3),
    ("conv3d+bn+relu", dict(nsp=3), (2, 4, 5, 6, 7), 3),
    ("strided+bn+relu", dict(stride=2), (2, 4, 11, 11), 3),
    ("grouped+bn+relu", dict(groups=4, channels=8), (2, 8, 9, 9), 3),
    ("depthwise+bn+relu", dict(groups=8, channels=8), (2, 8, 9, 9), 3),
]


@pytest.mark.parametrize("kwargs,shape,ops", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_fused_chain_matches_numpy_and_the_unfused_graph(kwargs, shape, ops):
    block = ConvBlock(**kwargs)
    block.initialize()
    xn = _f32(shape)
    x = np.array(xn)
    args = [x]
    rn = None
    if kwargs.get("residual"):
        block(x, np.zeros((1,)))  # (shapes the parameters)
        out_shape = block(x, np.zeros((1,))).shape
        rn = _f32(out_shape, seed=3)
        args.append(np.array(rn))
    else:
        block(x)
    _set_bn_stats(block)
    block.hybridize()
    fused, st = _run(block, *args, path="onednn")
    plain, st_off = _run(block, *args, fusion=False)
    assert st["fused_nodes"] == 1 and st["fused_ops"] == ops
    assert st["kernels"] == st_off["kernels"] - ops + 1
    assert fused.dtype == onp.float32 and fused.shape == plain.shape
    assert_almost_equal(fused, plain, rtol=1e-5, atol=1e-5)
    assert_almost_equal(fused, _reference(block, xn, rn).astype(onp.float32), rtol=1e-4,
                        atol=1e-4)


def test_a_sigmoid_activation_is_not_fused_into_the_convolution():
    block = ConvBlock(act="sigmoid")
    block.initialize()
    x = np.array(_f32((2, 4, 8, 8)))
    block(x)
    _set_bn_stats(block)
    block.hybridize()
    fused, st = _run(block, x)
    assert st["fused_nodes"] == 1 and st["fused_ops"] == 2  # conv + bn; sigmoid alone
    assert_almost_equal(fused, _reference(block, x.asnumpy()).astype(onp.float32), rtol=1e-4,
                        atol=1e-4)


def test_a_convolution_read_elsewhere_keeps_its_own_node():
    class TwoReaders(gluon.HybridBlock):
        def __init__(self):
            super().__init__()
            self.conv = nn.Conv2D(8, 3, padding=1, use_bias=False)
            self.bn = nn.BatchNorm()

        def forward(self, x):
            y = self.conv(x)
            return npx.relu(self.bn(y)) + y  # y is read by bn and by the add

    block = TwoReaders()
    block.initialize()
    x = np.array(_f32((2, 4, 8, 8)))
    block(x)
    _set_bn_stats(block)
    block.hybridize()
    fused, st = _run(block, x)
    plain, _ = _run(block, x, fusion=False)
    assert "fused_ops" in st and st["fused_ops"] != 4
    w = block.conv.weight.data().asnumpy()
    p = {k.split(".")[-1]: v.data().asnumpy() for k, v in block.bn.collect_params().items()}
    y = _np_conv(x.asnumpy(), w, pad=1)
    ref = onp.maximum(_np_bn(y, p["gamma"], p["beta"], p["running_mean"], p["running_var"]), 0)
    assert_almost_equal(fused, (ref + y).astype(onp.float32), rtol=1e-4, atol=1e-4)
    assert_almost_equal(fused, plain, rtol=1e-5, atol=1e-5)


class Residual(gluon.HybridBlock):
    """resnet's v1 block with a downsampling shortcut: two conv+bn chains meet at one add."""

    def __init__(self):
        super().__init__()
        self.c1, self.b1 = nn.Conv2D(8, 3, padding=1, use_bias=False), nn.BatchNorm()
        self.c2, self.b2 = nn.Conv2D(8, 3, padding=1, use_bias=False), nn.BatchNorm()
        self.cd, self.bd = nn.Conv2D(8, 1, use_bias=False), nn.BatchNorm()

    def forward(self, x):
        y = self.b2(self.c2(npx.relu(self.b1(self.c1(x)))))
        return npx.relu(y + self.bd(self.cd(x)))


def test_two_chains_meeting_at_one_add_fuse_once_each():
    block = Residual()
    block.initialize()
    x = np.array(_f32((2, 4, 10, 10)))
    block(x)
    _set_bn_stats(block)
    block.hybridize()
    fused, st = _run(block, x, path="onednn")
    plain, st_off = _run(block, x, fusion=False)
    assert st["fused_nodes"] == 3 and st["fused_ops"] == st_off["kernels"] == 9
    assert st["kernels"] == 3
    assert_almost_equal(fused, plain, rtol=1e-5, atol=1e-5)


def test_changed_batch_norm_statistics_and_weights_are_seen_by_the_next_call():
    # oneDNN keeps the folded weights while the weights and the batch_norm's scale are unchanged.
    block = ConvBlock()
    block.initialize()
    x = np.array(_f32((2, 4, 8, 8)))
    block(x)
    block.hybridize()
    for step in range(3):
        _set_bn_stats(block, seed=10 + step)
        if step == 2:
            block.conv.weight.set_data(np.array(_f32(block.conv.weight.shape, seed=7)))
        fused, st = _run(block, x, path="onednn")
        assert st["fused_nodes"] == 1
        assert_almost_equal(fused, _reference(block, x.asnumpy()).astype(onp.float32),
                            rtol=1e-4, atol=1e-4)


def test_fix_gamma_treats_gamma_as_one():
    class FixGamma(gluon.HybridBlock):
        def __init__(self):
            super().__init__()
            self.conv = nn.Conv2D(6, 3, padding=1, use_bias=False)
            self.bn = nn.BatchNorm(scale=False)

        def forward(self, x):
            return npx.relu(self.bn(self.conv(x)))

    block = FixGamma()
    block.initialize()
    x = np.array(_f32((2, 3, 7, 7)))
    block(x)
    _set_bn_stats(block)  # gamma becomes non-one: fix_gamma must ignore it
    block.hybridize()
    fused, st = _run(block, x, path="onednn")
    assert st["fused_nodes"] == 1
    p = {k.split(".")[-1]: v.data().asnumpy() for k, v in block.bn.collect_params().items()}
    assert not onp.allclose(p["gamma"], 1)
    y = _np_conv(x.asnumpy(), block.conv.weight.data().asnumpy(), pad=1)
    ref = onp.maximum(_np_bn(y, p["gamma"], p["beta"], p["running_mean"], p["running_var"],
                             fix_gamma=True), 0)
    assert_almost_equal(fused, ref.astype(onp.float32), rtol=1e-4, atol=1e-4)


def test_batch_statistics_run_each_op_bit_identical_and_update_the_running_ones():
    # train_mode without recording: batch_norm normalizes with the batch's statistics and
    # updates its running ones, inside the fused node as outside it.
    results = {}
    for fusion in (True, False):
        block = ConvBlock(residual=True)
        block.initialize()
        x = np.array(_f32((2, 8, 6, 6)))
        r = np.array(_f32((2, 8, 6, 6), seed=5))
        block(x, r)
        _set_bn_stats(block)
        block.conv.weight.set_data(np.array(_f32(block.conv.weight.shape, seed=6)))
        before = block.bn.running_mean.data().asnumpy()
        block.hybridize()
        with autograd.train_mode():
            out, st = _run(block, x, r, fusion=fusion, path="whole" if fusion else None)
        results[fusion] = (out, block.bn.running_mean.data().asnumpy(),
                           block.bn.running_var.data().asnumpy(), st)
        # The running mean moved (two updates with momentum 0.9).
        assert onp.abs(results[fusion][1] - before).max() > 1e-3
    (fo, fm, fv, fst), (po, pm, pv, _) = results[True], results[False]
    assert fst["fused_nodes"] == 1 and fst["fused_ops"] == 4
    onp.testing.assert_array_equal(fo, po)
    onp.testing.assert_array_equal(fm, pm)
    onp.testing.assert_array_equal(fv, pv)


def test_float64_and_a_broadcast_residual_run_the_unfused_kernels():
    block = ConvBlock(residual=True)
    block.initialize()
    block.cast("float64")
    x = np.array(_f32((2, 8, 6, 6)).astype(onp.float64))
    r = np.array(_f32((8, 1, 1), seed=4).astype(onp.float64))  # broadcasts
    block(x, r)
    _set_bn_stats(block)
    for p in block.collect_params().values():
        p.set_data(p.data().astype("float64"))
    block.hybridize()
    fused, st = _run(block, x, r, path="whole")
    plain, _ = _run(block, x, r, fusion=False)
    assert st["fused_nodes"] == 1 and fused.dtype == onp.float64
    onp.testing.assert_array_equal(fused, plain)
    assert_almost_equal(fused, _reference(block, x.asnumpy(), r.asnumpy()), rtol=1e-10,
                        atol=1e-10)
    # float32 with a broadcast residual: the fused node's whole-array path.
    block32 = ConvBlock(residual=True)
    block32.initialize()
    x32 = np.array(_f32((2, 8, 6, 6)))
    r32 = np.array(_f32((8, 1, 1), seed=4))
    block32(x32, r32)
    _set_bn_stats(block32)
    block32.hybridize()
    fused, st = _run(block32, x32, r32, path="whole")
    plain, _ = _run(block32, x32, r32, fusion=False)
    assert st["fused_nodes"] == 1
    onp.testing.assert_array_equal(fused, plain)


def test_a_residual_read_again_after_the_fused_node_is_not_overwritten():
    class ReadAgain(ConvBlock):
        def forward(self, x, r):
            r2 = r * 1.5  # a dying intermediate the fused node could write over
            y = super().forward(x, r2)
            return y + r2

    block = ReadAgain(residual=True)
    block.initialize()
    x = np.array(_f32((2, 8, 6, 6)))
    rn = _f32((2, 8, 6, 6), seed=9)
    block(x, np.array(rn))
    _set_bn_stats(block)
    block.hybridize()
    fused, st = _run(block, x, np.array(rn), path="onednn")
    assert st["fused_nodes"] >= 1
    y = _reference(block, x.asnumpy(), rn * 1.5)
    assert_almost_equal(fused, (y + rn * 1.5).astype(onp.float32), rtol=1e-4, atol=1e-4)


def test_recorded_training_is_unfused_and_its_gradients_match():
    grads = {}
    for fusion in (True, False):
        block = ConvBlock(residual=True)
        block.initialize()
        x = np.array(_f32((2, 8, 6, 6)))
        r = np.array(_f32((2, 8, 6, 6), seed=2))
        block(x, r)
        _set_bn_stats(block)
        block.conv.weight.set_data(np.array(_f32(block.conv.weight.shape, seed=6)))
        block.hybridize()
        prev = npx.set_fusion(fusion)
        try:
            with autograd.record():
                loss = (block(x, r) ** 2).sum()
            loss.backward()
        finally:
            npx.set_fusion(prev)
        grads[fusion] = {k: p.grad().asnumpy() for k, p in block.collect_params().items()
                         if p.grad_req != "null"}
    assert grads[True].keys() == grads[False].keys() and len(grads[True]) == 3
    for k in grads[True]:
        onp.testing.assert_array_equal(grads[True][k], grads[False][k])


def test_without_onednn_the_fused_node_is_bit_identical_to_the_unfused_graph():
    code = textwrap.dedent("""
        import numpy as onp
        from ndx import np, npx, _core
        from ndx.gluon import nn
        net = nn.HybridSequential()
        net.add(nn.Conv2D(8, 3, padding=1), nn.BatchNorm(), nn.Activation("relu"))
        net.initialize()
        x = np.array(onp.random.default_rng(0).normal(size=(2, 3, 8, 8)).astype("f"))
        net(x)
        net.hybridize()
        outs = []
        for fusion in (True, False):
            npx.set_fusion(fusion)
            net(x)
            before = _core._fusion_runs()["conv_whole"]
            outs.append(net(x).asnumpy())
            if fusion:
                st = _core._graph_stats(net._last_graph[0])
                assert _core._fusion_runs()["conv_whole"] == before + 1
        assert st["fused_nodes"] == 1 and st["fused_ops"] == 3, st
        onp.testing.assert_array_equal(outs[0], outs[1])
        print("ok")
    """)
    env = dict(os.environ, NDX_DNNL="0")
    res = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                         timeout=120)
    assert res.returncode == 0 and res.stdout.strip() == "ok", res.stderr[-2000:]


def test_model_zoo_networks_keep_their_outputs():
    from ndx.gluon.model_zoo import vision
    for make, fused_nodes in ((vision.resnet18_v1, 20), (vision.mobilenet0_25, 27)):
        net = make(classes=10)
        net.initialize()
        x = np.array(_f32((2, 3, 32, 32), low=0, high=1))
        net(x)
        _set_bn_stats(net)
        want = net(x).asnumpy()  # imperative: op by op
        net.hybridize()
        got, st = _run(net, x, path="onednn")
        assert st["fused_nodes"] >= fused_nodes
        assert_almost_equal(got, want, rtol=1e-4, atol=1e-5)


def test_the_fused_node_cannot_be_called_directly():
    with pytest.raises(NotImplementedError, match="_FusedConvolution"):
        _core._invoke("_FusedConvolution", [np.zeros((1, 1, 3, 3))], {})


def test_nan_passes_through_the_fused_relu():
    # oneDNN's relu post-op turns NaN into 0; NumPy's maximum(nan, 0) and ndx's relu keep it.
    block = ConvBlock(residual=True)
    block.initialize()
    xn = _f32((2, 8, 6, 6))
    xn[0, 0, 2, 2] = onp.nan
    rn = _f32((2, 8, 6, 6), seed=3)
    rn[1, 3, 0, 0] = onp.nan
    block(np.array(xn), np.array(rn))
    _set_bn_stats(block)
    block.bn.running_var.data()[5] = -1.0  # a broken statistic: NaN in channel 5
    block.hybridize()
    fused, st = _run(block, np.array(xn), np.array(rn), path="onednn")
    assert st["fused_nodes"] == 1
    with onp.errstate(invalid="ignore"):
        ref = _reference(block, xn, rn)
    assert onp.isnan(fused[1, 3, 0, 0]) and onp.isnan(fused[:, 5]).all()
    onp.testing.assert_array_equal(onp.isnan(fused), onp.isnan(ref))
    assert onp.isnan(fused).sum() > 2 * 36  # the NaN input spreads over its 3x3 neighbours
    ok = ~onp.isnan(ref)
    assert_almost_equal(fused[ok], ref[ok].astype(onp.float32), rtol=1e-4, atol=1e-4)


class SharedBatchNorm(gluon.HybridBlock):
    """relu(bn(conv(a)) + bn(conv(b))): one BatchNorm updating its statistics twice."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2D(4, 3, padding=1, in_channels=4, use_bias=False)
        self.bn = nn.BatchNorm(in_channels=4, momentum=0.5)

    def forward(self, a, b):
        return npx.relu(self.bn(self.conv(a)) + self.bn(self.conv(b)))


class ReadsRunningMean(ConvBlock):
    def forward(self, x):
        y = self.bn(self.conv(x))
        return npx.relu(y + np.reshape(self.bn.running_mean.data(), (1, -1, 1, 1)))


@pytest.mark.parametrize("make,nargs", [(SharedBatchNorm, 2), (ReadsRunningMean, 1)],
                         ids=["shared", "reader"])
def test_batch_norm_updates_keep_their_order_in_training_mode(make, nargs):
    # In train_mode a batch_norm updates its running statistics in place; a chain runs where
    # its last link was, so a batch_norm whose statistics anything else reads stays unfused.
    rng = onp.random.default_rng(0)
    args = [np.array(rng.normal(size=(2, 4, 5, 5)).astype("f") * (k + 1) + k)
            for k in range(nargs)]
    w = np.array(rng.normal(size=(4, 4, 3, 3)).astype("f"))
    res = {}
    for mode in ("imperative", "fused", "unfused"):
        net = make() if make is SharedBatchNorm else make(channels=4)
        net.initialize()
        net(*args)
        net.conv.weight.set_data(w)
        if mode != "imperative":
            net.hybridize()
        prev = npx.set_fusion(mode != "unfused")
        try:
            with autograd.train_mode():
                net(*args)
                out = net(*args).asnumpy()
        finally:
            npx.set_fusion(prev)
        res[mode] = (out, net.bn.running_mean.data().asnumpy(),
                     net.bn.running_var.data().asnumpy())
    for mode in ("fused", "unfused"):
        for got, want in zip(res[mode], res["imperative"]):
            onp.testing.assert_array_equal(got, want)
