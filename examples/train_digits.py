"""The demo: trains a small hybridized CNN on scikit-learn's bundled 8x8 handwritten digits
(no download), with a progress bar per epoch; exports the captured graph and parameters,
reloads them with SymbolBlock.imports and checks the predictions match; draws the training
curve and a picture of the network graph.

    python examples/train_digits.py [--epochs 30] [--out out/digits] [--workers N]
                                    [--device cpu | --device "gpu(0)"]

--device "gpu(0)" trains on that GPU: parameters live there, the DataLoader pins its batches
(page-locked host memory) and each batch is copied over without waiting.

--workers N trains data-parallel in N processes: the script starts itself again through
ndx's launcher (python -m ndx.distributed.launch -n N), each worker trains on its shard of
every epoch (DistributedSampler) with --batch-size samples per step, the Trainer sums the
gradients over the workers (kvstore='dist_sync'), and worker 0 reports and writes the outputs.
"""
import argparse
import os
import sys
import time

import numpy as onp
from sklearn.datasets import load_digits
from sklearn.model_selection import train_test_split
from tqdm import tqdm

import ndx
from ndx import autograd, gluon, np


def build_net():
    """A small CNN for 1x8x8 images."""
    net = gluon.nn.HybridSequential()
    net.add(gluon.nn.Conv2D(16, 3, padding=1, activation="relu"),   # 16 x 8 x 8
            gluon.nn.MaxPool2D(2),                                  # 16 x 4 x 4
            gluon.nn.Conv2D(32, 3, padding=1, activation="relu"),   # 32 x 4 x 4
            gluon.nn.Flatten(),
            gluon.nn.Dense(64, activation="relu"),
            gluon.nn.Dense(10))
    return net


def accuracy(net, x, y):
    pred = np.argmax(net(x), axis=1).asnumpy()
    return float((pred == y).mean())


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--epochs", type=int, default=30)
    p.add_argument("--batch-size", type=int, default=64)
    p.add_argument("--lr", type=float, default=0.003)
    p.add_argument("--out", default="out/digits")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--device", default="cpu", help='cpu (default) or a GPU such as "gpu(0)"')
    p.add_argument("--workers", type=int, default=1,
                   help="data-parallel worker processes (started through the launcher)")
    args = p.parse_args()
    if args.workers < 1:
        p.error(f"--workers must be >= 1, got {args.workers}")
    if args.workers > 1 and not ndx.distributed.is_launched():
        # Start again as N workers: the launcher runs this script in each of them.
        launcher = [sys.executable, "-m", "ndx.distributed.launch", "-n", str(args.workers)]
        os.execv(sys.executable, launcher + [os.path.abspath(__file__)] + sys.argv[1:])
    workers = ndx.distributed.world_size()
    try:
        device = ndx.Device(args.device)
    except ValueError as e:
        p.error(str(e))
    rank = ndx.distributed.rank()
    if rank != 0:  # one worker reports; the others train quietly
        sys.stdout = open(os.devnull, "w")
    os.makedirs(args.out, exist_ok=True)
    onp.random.seed(args.seed)
    ndx.random_seed(args.seed)

    x, y = load_digits(return_X_y=True)
    x = (x / 16.0).astype(onp.float32).reshape(-1, 1, 8, 8)
    x_tr, x_te, y_tr, y_te = train_test_split(x, y, test_size=0.2, random_state=args.seed,
                                              stratify=y)
    train_set = gluon.data.ArrayDataset(x_tr, y_tr)
    if workers > 1:  # this worker's shard of each epoch, in an order all workers agree on
        train = gluon.data.DataLoader(
            train_set, args.batch_size,
            sampler=gluon.data.DistributedSampler(len(train_set), seed=args.seed))
    else:
        train = gluon.data.DataLoader(train_set, args.batch_size, shuffle=True,
                                      pin_memory=device.device_type == "gpu")
    x_test = np.array(x_te, device=device)

    net = build_net()
    net.initialize(ndx.initializer.Xavier(), device=device)
    net.hybridize()  # each input signature is traced once, then replayed by the C++ executor
    loss_fn = gluon.loss.SoftmaxCrossEntropyLoss()
    # With workers, 'dist_sync' starts every worker from worker 0's parameters and sums the
    # gradients over the workers at each step.
    trainer = gluon.Trainer(net.collect_params(), "adam", {"learning_rate": args.lr},
                            kvstore="dist_sync" if workers > 1 else "device")

    history = []
    start = time.time()
    profile_file = os.path.join(args.out, "profile.json")
    ndx.profiler.set_config(filename=profile_file, aggregate_stats=True)
    for epoch in range(1, args.epochs + 1):
        if epoch == args.epochs:  # the last epoch is profiled: ops, graph runs, backward, data
            ndx.profiler.set_state("run")
        total, correct, seen = 0.0, 0, 0
        bar = tqdm(train, desc=f"epoch {epoch:2d}/{args.epochs}", leave=False, file=sys.stdout,
                   disable=rank != 0)
        for data, label in bar:
            data, label = data.to_device(device), label.to_device(device)
            with autograd.record():
                out = net(data)
                loss = loss_fn(out, label)
            loss.backward()
            trainer.step(data.shape[0] * workers)  # the batch over all workers
            total += float(loss.sum())
            correct += int((np.argmax(out, axis=1).asnumpy() == label.asnumpy()).sum())
            seen += data.shape[0]
            bar.set_postfix(loss=f"{total / seen:.4f}", refresh=False)
        if workers > 1:  # the epoch's figures over all workers
            sums = np.array([total, correct, seen], dtype="float64")
            ndx.distributed.allreduce(sums)
            total, correct, seen = float(sums[0]), int(sums[1]), int(sums[2])
        test_acc = accuracy(net, x_test, y_te)
        test_loss = float(loss_fn(net(x_test), np.array(y_te, device=device)).mean())
        history.append((total / seen, correct / seen, test_acc, test_loss))
        print(f"epoch {epoch:2d}  loss {total / seen:.4f}  test loss {test_loss:.4f}  "
              f"train acc {correct / seen:.4f}  test acc {test_acc:.4f}")
    elapsed = time.time() - start
    ndx.profiler.set_state("stop")
    if rank != 0:  # worker 0 writes the outputs; the parameters are the same on every worker
        return 0
    table = ndx.profiler.dumps(sort_by="total")
    ndx.profiler.dump()
    top = [line for line in table.splitlines() if line.startswith("_")][:3]
    print(f"profiled the last epoch: {profile_file} (Chrome trace JSON: open it in "
          "https://ui.perfetto.dev); slowest ops in total:")
    for line in top:
        print("   " + " ".join(line.split()[:3]) + " ms")
    final = history[-1][2]
    print(f"trained {args.epochs} epochs in {elapsed:.1f} s "
          f"({args.epochs * len(x_tr) / elapsed:.0f} samples/s"
          f"{f', {workers} workers' if workers > 1 else ''}); test accuracy {final:.4f}")

    # Export the captured graph and parameters, reload them, and check the predictions agree.
    sym_file, params_file = net.export(os.path.join(args.out, "digits"))
    reloaded = gluon.SymbolBlock.imports(sym_file, ["data"], params_file, device=device)
    same = onp.array_equal(np.argmax(reloaded(x_test), axis=1).asnumpy(),
                           np.argmax(net(x_test), axis=1).asnumpy())
    print(f"exported {sym_file} and {params_file}; reloaded predictions "
          f"{'match' if same else 'DIFFER'}")
    graph_png = None
    try:
        dot = ndx.viz.plot_network(ndx.sym.load(sym_file), title="digits",
                                   shape={"data": (args.batch_size, 1, 8, 8),
                                          **{name: p.shape for name, p in
                                             net.collect_params().items()}})
        graph_png = dot.render(os.path.join(args.out, "network"), cleanup=True)
    except Exception as e:  # graphviz missing: the rest of the demo still counts
        print(f"network picture skipped: {e}")

    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    epochs = range(1, len(history) + 1)
    fig, ax1 = plt.subplots(figsize=(6, 4))
    ax1.plot(epochs, [h[0] for h in history], color="tab:red", label="train loss")
    ax1.plot(epochs, [h[3] for h in history], color="tab:orange", label="test loss")
    ax1.set_xlabel("epoch")
    ax1.set_ylabel("loss")
    ax2 = ax1.twinx()
    ax2.plot(epochs, [h[1] for h in history], color="tab:blue", label="train accuracy")
    ax2.plot(epochs, [h[2] for h in history], color="tab:green", label="test accuracy")
    ax2.set_ylabel("accuracy")
    handles = ax1.get_legend_handles_labels()[0] + ax2.get_legend_handles_labels()[0]
    ax2.legend(handles, [h.get_label() for h in handles], loc="center right")
    fig.suptitle("ndx: CNN on scikit-learn digits")
    fig.tight_layout()
    curve = os.path.join(args.out, "training_curve.png")
    fig.savefig(curve, dpi=100)
    written = ["training_curve.png", os.path.basename(sym_file), os.path.basename(params_file)]
    if graph_png:
        written.append(os.path.basename(graph_png))
    print(f"outputs written to {os.path.abspath(args.out)}: {', '.join(written)}")
    ok = final >= 0.95 and same
    print("demo " + ("passed" if ok else "FAILED: expected >= 95% test accuracy and matching "
                     "reloaded predictions"))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
