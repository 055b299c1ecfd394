"""relu three ways on the same input: the built-in npx.relu, relu from an operator library
(examples/extensions/relu_lib.cc, compiled on first use), and a Python CustomOp. Prints
median times and ratios to the built-in.

    python bench/custom_ops.py [--size 1000000] [--small 16]
"""
import argparse
import os
import statistics
import timeit

import numpy as onp

import ndx
from ndx import np, npx


class Relu(ndx.operator.CustomOp):
    def forward(self, is_train, req, in_data, out_data, aux):
        self.assign(out_data[0], req[0], npx.relu(in_data[0]))

    def backward(self, req, out_grad, in_data, out_data, in_grad, aux):
        self.assign(in_grad[0], req[0], out_grad[0] * (in_data[0] > 0))


@ndx.operator.register("bench_relu")
class ReluProp(ndx.operator.CustomOpProp):
    def create_operator(self, ctx, shapes, dtypes):
        return Relu()


def median_us(fn, number, repeat=7):
    return statistics.median(timeit.repeat(fn, number=number, repeat=repeat)) / number * 1e6


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--size", type=int, default=1_000_000)
    p.add_argument("--small", type=int, default=16)
    args = p.parse_args()
    here = os.path.dirname(os.path.abspath(__file__))
    ndx.library.compile(os.path.join(here, os.pardir, "examples", "extensions", "relu_lib.cc"))
    print(f"{'input':12s} {'built-in us':>12s} {'library us':>11s} {'lib/built':>10s} "
          f"{'CustomOp us':>12s} {'custom/built':>13s}")
    for n, number in [(args.size, 20), (args.small, 5000)]:
        x = np.array(onp.random.default_rng(0).normal(size=n).astype(onp.float32))
        t_builtin = median_us(lambda: npx.relu(x), number)
        t_lib = median_us(lambda: npx.my_relu(x), number)
        t_custom = median_us(lambda: ndx.nd.Custom(x, op_type="bench_relu"), number)
        print(f"{n:>12,d} {t_builtin:12.2f} {t_lib:11.2f} {t_lib / t_builtin:10.2f} "
              f"{t_custom:12.2f} {t_custom / t_builtin:13.2f}")


if __name__ == "__main__":
    main()
