"""Per-step time of a hybridized block of Custom ops (recorded forward, sum, backward) and how
often the ops are created: `.venv/bin/python bench/hybrid_custom_op.py [layers]`."""
import sys
import time

import ndx as mx
from ndx import autograd, gluon, np, npx

created = [0]


class Scale(mx.operator.CustomOp):
    def forward(self, is_train, req, in_data, out_data, aux):
        self.assign(out_data[0], req[0], in_data[0] * 2)

    def backward(self, req, out_grad, in_data, out_data, in_grad, aux):
        self.assign(in_grad[0], req[0], out_grad[0] * 2)


@mx.operator.register("bench_scale")
class ScaleProp(mx.operator.CustomOpProp):
    def __init__(self):
        super().__init__(need_top_grad=True)

    def create_operator(self, ctx, shapes, dtypes):
        created[0] += 1
        return Scale()


class Net(gluon.HybridBlock):
    def __init__(self, layers):
        super().__init__()
        self.layers = layers

    def forward(self, x):
        for _ in range(self.layers):
            x = npx.custom(x, op_type="bench_scale")
        return x


layers = int(sys.argv[1]) if len(sys.argv) > 1 else 10
net = Net(layers)
net.hybridize()
x = np.ones((4, 4))
x.attach_grad()
for _ in range(20):
    with autograd.record():
        y = net(x).sum()
    y.backward()
created[0] = 0
steps = 300
t = time.perf_counter()
for _ in range(steps):
    with autograd.record():
        y = net(x).sum()
    y.backward()
dt = (time.perf_counter() - t) / steps * 1e3
print(f"layers {layers}: {dt:.3f} ms/step, create_operator calls per step "
      f"{created[0] / steps:.2f}, grad {float(x.grad[0, 0])} (want {2.0 ** layers})")
