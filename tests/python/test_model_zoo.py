"""gluon.model_zoo.vision: each network's trainable parameter count against the count published
for the same architecture (torchvision's or Keras' model tables) or a hand computation where
MXNet's zoo differs, its output shape, hybridize, a training step, MXNet 2's structural
parameter names and the local pretrained store."""
import os

import numpy as onp
import pytest

from ndx import autograd, gluon, np
from ndx.gluon.model_zoo import model_store, vision

# Published trainable-parameter counts (BatchNorm's running statistics are not parameters
# there): torchvision's resnet18/34, alexnet, vgg11/16/16_bn, squeezenet1_0/1_1, densenet121
# and inception_v3 without its auxiliary head (27,161,264 - 3,326,696); Keras' MobileNet
# (alpha 1.0 and 0.25) trainable counts.
PUBLISHED = {
    "resnet18_v1": 11_689_512, "resnet34_v1": 21_797_672, "alexnet": 61_100_840,
    "vgg11": 132_863_336, "vgg16": 138_357_544, "vgg16_bn": 138_365_992,
    "squeezenet1.0": 1_248_424, "squeezenet1.1": 1_235_496, "densenet121": 7_978_856,
    "inceptionv3": 23_834_568, "mobilenet1.0": 4_231_976, "mobilenet0.25": 470_072,
}
# Where MXNet's zoo differs from those tables, by hand:
# - resnet50_v1: torchvision's 25,557,032 plus the biases of each bottleneck's two 1x1
#   convolutions (c/4 + c for 3, 4, 6, 3 blocks of c = 256, 512, 1024, 2048).
# - resnet18_v2: resnet18's count minus the BatchNorms V2 drops or moves: V1 normalizes 4,800
#   channels (stem 64, blocks 3,840, projections 896), V2 3,968 (stem 64, blocks 3,392 on
#   their inputs and outputs, final 512), two parameters a channel.
# - mobilenetv2_1.0: torchvision's 3,504,872, less the classifier's 1,000 biases (MXNet's is
#   a 1x1 convolution without bias), plus the expansion MXNet keeps in the first bottleneck
#   (t = 1): a 32x32 1x1 convolution and its BatchNorm, 1,024 + 64.
BY_HAND = {
    "resnet50_v1": 25_557_032 + sum(n * (c // 4 + c) for n, c in
                                    ((3, 256), (4, 512), (6, 1024), (3, 2048))),
    "resnet18_v2": 11_689_512 - 2 * (4800 - 3968),
    "mobilenetv2_1.0": 3_504_872 - 1000 + 1024 + 64,
}


def _input(size, batch=1, seed=0):
    return np.array(onp.random.default_rng(seed).normal(size=(batch, 3, size, size))
                    .astype(onp.float32))


def _trainable(net):
    return sum(p.data().size for p in net.collect_params().values() if p.grad_req != "null")


@pytest.mark.parametrize("name, count", sorted({**PUBLISHED, **BY_HAND}.items()))
def test_parameter_count_and_output_shape(name, count):
    net = vision.get_model(name)
    net.initialize()
    out = net(_input(299 if name == "inceptionv3" else 224))
    assert out.shape == (1, 1000)
    assert onp.isfinite(out.asnumpy()).all()
    assert _trainable(net) == count


@pytest.mark.parametrize("name, size", [("resnet18_v1", 64), ("resnet50_v2", 64),
                                        ("densenet121", 224), ("squeezenet1.1", 224),
                                        ("mobilenetv2_0.25", 64), ("mobilenet0.5", 64)])
def test_hybridized_output_equals_imperative(name, size):
    net = vision.get_model(name, classes=7)
    net.initialize()
    x = _input(size, batch=2)
    want = net(x).asnumpy()
    net.hybridize()
    got = net(x).asnumpy()
    assert got.shape == (2, 7)
    onp.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)


def test_a_thumbnail_resnet_learns_a_small_batch():
    # Ten steps of SGD on one batch of 32x32 images: the loss falls (gradients reach every
    # parameter through the residual blocks, BatchNorm and the classifier).
    net = vision.resnet18_v1(classes=4, thumbnail=True)
    net.initialize()
    net.hybridize()
    x = _input(32, batch=8, seed=1)
    y = np.array(onp.arange(8) % 4)
    loss_fn = gluon.loss.SoftmaxCrossEntropyLoss()
    trainer = gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.05,
                                                          "momentum": 0.9})
    losses = []
    for _ in range(10):
        with autograd.record():
            loss = loss_fn(net(x), y)
        loss.backward()
        trainer.step(8)
        losses.append(float(loss.mean()))
    assert losses[-1] < 0.5 * losses[0]
    grads = [p.grad() for p in net.collect_params().values() if p.grad_req != "null"]
    assert all(onp.isfinite(g.asnumpy()).all() for g in grads)


def test_parameter_names_follow_mxnet2s_attributes():
    names = set(vision.resnet18_v1().collect_params())
    for n in ("features.0.weight", "features.1.gamma", "features.1.running_var",
              "features.4.0.body.0.weight", "features.5.0.downsample.0.weight",
              "features.5.0.downsample.1.beta", "output.weight", "output.bias"):
        assert n in names
    names = set(vision.resnet18_v2().collect_params())
    # V2's features: the input BatchNorm, conv, BN, relu, pool, then the stages (5, 6, ...)
    assert {"features.0.running_mean", "features.5.0.bn1.gamma", "features.6.0.conv1.weight",
            "features.6.0.downsample.weight"} <= names
    assert "features.5.0.downsample.weight" not in names  # 64 -> 64: no projection
    names = set(vision.mobilenet_v2_0_25().collect_params())
    assert {"features.3.out.0.weight", "output.0.weight"} <= names


def test_pretrained_reads_the_local_store(tmp_path):
    net = vision.squeezenet1_1(classes=5)
    net.initialize()
    x = _input(224)
    want = net(x).asnumpy()
    net.save_parameters(str(tmp_path / "squeezenet1.1-0123abcd.params"))
    loaded = vision.squeezenet1_1(classes=5, pretrained=True, root=str(tmp_path))
    onp.testing.assert_array_equal(loaded(x).asnumpy(), want)
    assert model_store.get_model_file("squeezenet1.1", root=str(tmp_path)).endswith(
        "squeezenet1.1-0123abcd.params")
    with pytest.raises(FileNotFoundError, match="downloads nothing"):
        vision.resnet18_v1(pretrained=True, root=str(tmp_path))
    model_store.purge(root=str(tmp_path))
    assert not os.listdir(tmp_path)


@pytest.mark.parametrize("call, exc", [
    (lambda: vision.get_model("resnet19_v1"), ValueError),
    (lambda: vision.get_model(18), TypeError),
    (lambda: vision.get_resnet(3, 18), ValueError),
    (lambda: vision.get_vgg(12), ValueError),
    (lambda: vision.SqueezeNet("1.2"), ValueError),
    (lambda: vision.MobileNet(0.1), ValueError),
    (lambda: vision.ResNetV1(vision.BasicBlockV1, [2, 2], [64, 64]), ValueError),
    (lambda: vision.get_model("alexnet", colours=3), TypeError),
])
def test_bad_arguments_are_typed_errors(call, exc):
    with pytest.raises(exc):
        call()


def test_concatenate_identity_and_sync_batch_norm():
    cat = gluon.nn.HybridConcatenate(axis=1)
    cat.add(gluon.nn.Identity(), gluon.nn.Conv2D(3, 1, use_bias=False))
    cat.initialize()
    x = _input(4)
    got = cat(x).asnumpy()
    w = cat[1].weight.data().asnumpy()[:, :, 0, 0]
    want = onp.concatenate([x.asnumpy(), onp.einsum("oc,nchw->nohw", w, x.asnumpy())], axis=1)
    onp.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    plain = gluon.nn.Concatenate(axis=0)
    plain.add(gluon.nn.Identity(), gluon.nn.Identity())
    assert plain(x).shape == (2, 3, 4, 4)
    with pytest.raises(ValueError, match="no children"):
        gluon.nn.HybridConcatenate()(x)
    bn, sync = gluon.nn.BatchNorm(), gluon.nn.SyncBatchNorm(num_devices=1)
    bn.initialize()
    sync.initialize()
    with autograd.record():
        a, b = bn(x), sync(x)
    onp.testing.assert_array_equal(a.asnumpy(), b.asnumpy())
    relu = gluon.nn.BatchNormReLU()
    relu.initialize()
    with autograd.record():
        r = relu(x)
    onp.testing.assert_array_equal(r.asnumpy(), onp.maximum(a.asnumpy(), 0))
    with pytest.raises(ValueError, match="num_devices"):
        gluon.nn.SyncBatchNorm(num_devices=0)


def test_export_and_symbol_block_imports_round_trip(tmp_path):
    # The deployment path MXNet users take with zoo models: hybridize, export, imports.
    net = vision.squeezenet1_1(classes=6)
    net.initialize()
    net.hybridize()
    x = _input(224)
    want = net(x).asnumpy()
    prefix = str(tmp_path / "squeeze")
    net.export(prefix)
    block = gluon.SymbolBlock.imports(prefix + "-symbol.json", ["data"], prefix + "-0000.params")
    onp.testing.assert_array_equal(block(x).asnumpy(), want)


def test_mxnet_1x_contrib_names_build_a_dense_layer():
    # MXNet 1.x's zoo wrote DenseNet's layer with gluon.contrib.nn and prefix= arguments.
    from ndx.gluon.contrib.nn import HybridConcurrent, Identity
    out = HybridConcurrent(axis=1, prefix="")
    out.add(Identity(), gluon.nn.Conv2D(2, 1, use_bias=False))
    out.initialize()
    x = _input(5)
    got = out(x)
    assert got.shape == (1, 5, 5, 5)
    onp.testing.assert_array_equal(got.asnumpy()[:, :3], x.asnumpy())
