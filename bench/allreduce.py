"""Allreduce bandwidth of ndx.distributed against Open MPI's own, and the training throughput
of 1 vs N processes (issue 17).

    python bench/allreduce.py [--rounds 3] [--nproc 2] [--skip-train]

1. Allreduce: float32 sums in place between N local processes, 4 KB to 64 MB, each size
   timed as the median of at least 5 runs after 2 warm-ups, each run started after a
   barrier. "mpi" is bench/dist/mpi_allreduce.cc (MPI_Allreduce called directly: what the
   library reaches here, built with mpicxx on first use); "ndx" is
   ndx.distributed.allreduce on an ndx array (Python, the queue to the communication thread,
   MPI). The two alternate for --rounds rounds; the table has the medians over rounds, and
   ndx/mpi is MPI's time over ndx's (1.0: as fast as calling MPI directly).
2. Training: the digits CNN of examples/train_digits.py, hybridized, Adam, batch 64 per
   process, one kernel thread per process; samples/s of 1 process and of N under the
   launcher, alternating for --rounds rounds; the ratio is N-process samples/s over
   1-process.
"""
import argparse
import os
import re
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
SIZES = [4096 * 4**i for i in range(7)]  # 4 KB .. 16 MB, and 64 MB below
SIZES.append(64 << 20)
SIZES = sorted(set(SIZES))


def worker_allreduce():
    """Run by each launched process: ndx's times per size, printed by rank 0."""
    import numpy as onp

    from ndx import distributed as dist
    from ndx import np
    dist.init()
    for nbytes in SIZES:
        a = np.ones(nbytes // 4, dtype="float32")
        iters = max(5, (256 << 20) // nbytes)
        times = []
        for it in range(iters + 2):
            dist.barrier()
            t0 = time.perf_counter()
            dist.allreduce(a)
            t1 = time.perf_counter()
            if it >= 2:
                times.append(t1 - t0)
        if dist.rank() == 0:
            print(f"ndx {nbytes} {onp.median(times) * 1e3:.4f}", flush=True)


def worker_train(epochs):
    """Run by each process of the training comparison: samples/s, printed by rank 0."""
    import numpy as onp
    from sklearn.datasets import load_digits

    import ndx
    from ndx import autograd, gluon, np
    from ndx import distributed as dist
    sys.path.insert(0, os.path.join(ROOT, "examples"))
    from train_digits import build_net
    ndx.random_seed(0)
    x, y = load_digits(return_X_y=True)
    x = (x / 16.0).astype(onp.float32).reshape(-1, 1, 8, 8)
    n, r, per = dist.world_size(), dist.rank(), 64
    net = build_net()
    net.initialize(ndx.initializer.Xavier())
    net.hybridize()
    trainer = gluon.Trainer(net.collect_params(), "adam", {"learning_rate": 0.003},
                            kvstore="dist_sync" if n > 1 else "device")
    loss_fn = gluon.loss.SoftmaxCrossEntropyLoss()
    steps = len(x) // (per * n)
    batches = [(np.array(x[(s * n + r) * per:(s * n + r + 1) * per]),
                np.array(y[(s * n + r) * per:(s * n + r + 1) * per])) for s in range(steps)]

    def epoch():
        for data, label in batches:
            with autograd.record():
                loss = loss_fn(net(data), label)
            loss.backward()
            trainer.step(per * n)

    epoch()  # warm-up: traces the graph, makes the optimizer's state
    t0 = time.perf_counter()
    for _ in range(epochs):
        epoch()
    elapsed = time.perf_counter() - t0
    if r == 0:
        print(f"train {n} {steps * per * n * epochs / elapsed:.1f}", flush=True)


def mpi_binary():
    path = os.path.join(ROOT, "build", "bench_mpi_allreduce")
    src = os.path.join(HERE, "dist", "mpi_allreduce.cc")
    if not os.path.exists(path) or os.path.getmtime(path) < os.path.getmtime(src):
        subprocess.run(["mpicxx", "-O2", "-std=c++17", src, "-o", path], check=True)
    return path


def mpirun_base(nproc):
    cmd = ["mpirun", "-n", str(nproc), "--oversubscribe", "--bind-to", "none"]
    if os.geteuid() == 0:
        cmd.append("--allow-run-as-root")
    return cmd


def launch_command(nproc, *args):
    return [sys.executable, "-m", "ndx.distributed.launch", "-n", str(nproc), "--threads", "1",
            os.path.abspath(__file__), *args]


def worker_env():
    return dict(os.environ, NDX_NUM_THREADS="1")


def launch(nproc, *args):
    return subprocess.run(launch_command(nproc, *args), env=worker_env(), check=True,
                          capture_output=True, text=True).stdout


def train_rate(out):
    return float(re.search(r"train \d+ ([\d.]+)", out).group(1))


def independent_rate(nproc, epochs):
    """nproc one-process trainings at once, no communication: their summed samples/s is what
    this machine's cores give together, the ceiling of the data-parallel ratio. Their timed
    epochs must overlap, so give enough of them (--epochs 60 here): with 5, one run's start-up
    leaves the other alone for part of its time and the sum overstates the ceiling."""
    procs = [subprocess.Popen(launch_command(1, "--worker", "train", "--epochs", str(epochs)),
                              env=worker_env(), stdout=subprocess.PIPE, text=True)
             for _ in range(nproc)]
    outs = [p.communicate()[0] for p in procs]
    if any(p.returncode for p in procs):
        raise RuntimeError("an independent training run failed")
    return sum(train_rate(o) for o in outs)


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--nproc", type=int, default=2)
    p.add_argument("--epochs", type=int, default=5)
    p.add_argument("--skip-train", action="store_true")
    p.add_argument("--skip-allreduce", action="store_true")
    p.add_argument("--worker", choices=["allreduce", "train"], help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.worker == "allreduce":
        return worker_allreduce()
    if args.worker == "train":
        return worker_train(args.epochs)

    if not args.skip_allreduce:
        allreduce_table(args)
    if not args.skip_train:
        train_table(args)
    return 0


def allreduce_table(args):
    binary = mpi_binary()
    mpi, ndx_t = {}, {}
    for _ in range(args.rounds):
        out = subprocess.run(mpirun_base(args.nproc) + [binary], check=True,
                             capture_output=True, text=True).stdout
        for m in re.finditer(r"mpi\s+(\d+) bytes\s+([\d.]+) ms", out):
            mpi.setdefault(int(m.group(1)), []).append(float(m.group(2)))
        out = launch(args.nproc, "--worker", "allreduce")
        for m in re.finditer(r"ndx (\d+) ([\d.]+)", out):
            ndx_t.setdefault(int(m.group(1)), []).append(float(m.group(2)))
    print(f"allreduce, float32 sum in place, {args.nproc} local processes, medians of "
          f"{args.rounds} rounds (ms; busbw GB/s)")
    print(f"{'bytes':>10} {'mpi ms':>10} {'ndx ms':>10} {'ndx busbw':>10} {'ndx/mpi':>8}")
    for nbytes in SIZES:
        if nbytes not in mpi or nbytes not in ndx_t:
            continue
        m, n = statistics.median(mpi[nbytes]), statistics.median(ndx_t[nbytes])
        busbw = 2 * (args.nproc - 1) / args.nproc * nbytes / (n / 1e3) / 1e9
        print(f"{nbytes:>10} {m:>10.3f} {n:>10.3f} {busbw:>10.2f} {m / n:>8.2f}")


def train_table(args):
    rates = {1: [], args.nproc: [], "independent": []}
    for _ in range(args.rounds):
        for nproc in (1, args.nproc):
            rates[nproc].append(train_rate(launch(nproc, "--worker", "train", "--epochs",
                                                  str(args.epochs))))
        rates["independent"].append(independent_rate(args.nproc, args.epochs))
    one, many = statistics.median(rates[1]), statistics.median(rates[args.nproc])
    free = statistics.median(rates["independent"])
    # The machine's speed drifts over seconds (a shared host), and the runs of one round are
    # seconds apart: the median of each round's own ratio is steadier than the ratio of
    # medians, so both are printed.
    paired = statistics.median(m / o for m, o in zip(rates[args.nproc], rates[1]))
    print(f"\ntraining the digits CNN, batch 64 per process, 1 thread per process, medians of "
          f"{args.rounds} rounds: 1 process {one:.0f} samples/s, {args.nproc} processes "
          f"{many:.0f} samples/s, ratio {many / one:.2f} (median of the rounds' own ratios "
          f"{paired:.2f})")
    print(f"  {args.nproc} independent 1-process runs at once (no communication; the machine's "
          f"ceiling): {free:.0f} samples/s together, ratio {free / one:.2f}; data-parallel / "
          f"that {many / free:.2f}")
    for name in (1, args.nproc, "independent"):
        print(f"  rounds, {name}: " + ", ".join(f"{v:.0f}" for v in rates[name]))


if __name__ == "__main__":
    sys.exit(main())
