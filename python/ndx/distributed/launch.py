"""Starts the worker processes of a data-parallel script, on Open MPI's mpirun.

    python -m ndx.distributed.launch -n 2 train.py --epochs 3
    python -m ndx.distributed.launch -n 4 --hosts node1,node2 train.py

mpirun does the rendezvous: it starts the workers (over ssh on other hosts) and gives each
its rank, the world size and the address of the job's runtime through environment variables
(OMPI_COMM_WORLD_RANK, OMPI_COMM_WORLD_SIZE, OMPI_COMM_WORLD_LOCAL_RANK, PMIX_SERVER_URI...),
which ndx.distributed reads. The launcher adds what a user of torchrun would expect:

- the arguments are checked before anything starts (a typed message and exit status 2);
- each worker gets NDX_NUM_THREADS = the cores of its machine / its workers there (unless set),
  so N workers on one machine do not oversubscribe it; NDX_DIST_TIMEOUT from --timeout;
- SIGINT and SIGTERM go to mpirun, which stops every worker;
- when a worker fails, mpirun stops the others; the launcher then says which rank failed and
  why (the exception a worker raised, or the signal that killed it) and exits non-zero.

Every host must have the same Python and ndx at the same paths, and passwordless ssh between
them (Open MPI's requirement); `--mpirun-args` passes anything else to mpirun.
"""
import argparse
import os
import re
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading

EXIT_USAGE = 2


class LaunchError(ValueError):
    """A bad argument, found before any worker starts."""


def _hosts(spec, nproc):
    """[(host, slots)] from 'h1,h2' or 'h1:2,h2:2' (slots default: an even share of nproc)."""
    hosts = []
    for item in spec.split(","):
        name, _, slots = item.strip().partition(":")
        if not name:
            raise LaunchError(f"--hosts: empty host name in {spec!r}")
        if slots and (not slots.isdigit() or int(slots) < 1):
            raise LaunchError(f"--hosts: slots must be an int >= 1, got {item!r}")
        try:
            socket.getaddrinfo(name, None)
        except socket.gaierror as e:
            raise LaunchError(f"--hosts: host {name!r} does not resolve ({e.strerror})") from None
        hosts.append((name, int(slots) if slots else None))
    share = -(-nproc // len(hosts))
    hosts = [(h, s if s is not None else share) for h, s in hosts]
    if sum(s for _, s in hosts) < nproc:
        raise LaunchError(f"--hosts: {sum(s for _, s in hosts)} slots for -n {nproc} workers")
    return hosts


def _positive_int(text):
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an int, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be >= 1, got {value}")
    return value


def _positive_float(text):
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number of seconds, got {text!r}") from None
    if not value > 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"must be a finite number > 0, got {text}")
    return value


def parser():
    p = argparse.ArgumentParser(
        prog="python -m ndx.distributed.launch",
        description="Starts N worker processes of a data-parallel ndx script (on mpirun).")
    p.add_argument("-n", "--nproc", type=_positive_int, required=True,
                   help="number of worker processes (the world size)")
    p.add_argument("--hosts", default=None,
                   help="comma-separated hosts, each optionally host:slots (default: this one)")
    p.add_argument("--timeout", type=_positive_float, default=None,
                   help="seconds a collective may wait before it raises "
                        "(NDX_DIST_TIMEOUT; default 60)")
    p.add_argument("--threads", type=_positive_int, default=None,
                   help="NDX_NUM_THREADS of each worker (default: cores / local workers)")
    p.add_argument("--mpirun-args", default="", help="more arguments for mpirun (one string)")
    p.add_argument("--dry-run", action="store_true", help="print the mpirun command and exit")
    p.add_argument("script", help="the Python script each worker runs")
    p.add_argument("args", nargs=argparse.REMAINDER, help="the script's arguments")
    return p


def _local_cores():
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:
        return os.cpu_count() or 1


def build_command(opts, report_dir):
    """The mpirun command line and the workers' environment."""
    mpirun = shutil.which("mpirun")
    if mpirun is None:
        raise LaunchError("mpirun is not on PATH: install Open MPI (Debian: openmpi-bin)")
    if not os.path.isfile(opts.script):
        raise LaunchError(f"script {opts.script!r} is not a file")
    env = dict(os.environ)
    cmd = [mpirun, "-n", str(opts.nproc), "--bind-to", "none"]
    if opts.hosts:
        hosts = _hosts(opts.hosts, opts.nproc)
        cmd += ["--host", ",".join(f"{h}:{s}" for h, s in hosts)]
        per_machine = max(s for _, s in hosts)
    else:
        cmd += ["--oversubscribe"]  # more workers than cores is allowed on one machine
        per_machine = opts.nproc
    if os.geteuid() == 0:
        cmd += ["--allow-run-as-root"]
    if opts.threads is not None:
        env["NDX_NUM_THREADS"] = str(opts.threads)
    elif "NDX_NUM_THREADS" not in env:
        env["NDX_NUM_THREADS"] = str(max(1, _local_cores() // min(per_machine, opts.nproc)))
    if opts.timeout is not None:
        env["NDX_DIST_TIMEOUT"] = repr(opts.timeout)
    env["NDX_DIST_REPORT_DIR"] = report_dir
    env.setdefault("PYTHONUNBUFFERED", "1")
    forwarded = sorted(k for k in env if k.startswith("NDX_") or k in (
        "PYTHONPATH", "PYTHONUNBUFFERED", "LD_LIBRARY_PATH", "VIRTUAL_ENV", "PATH"))
    for name in forwarded:  # (local workers inherit the environment; remote ones need -x)
        cmd += ["-x", name]
    cmd += shlex.split(opts.mpirun_args)
    cmd += [sys.executable, opts.script, *opts.args]
    return cmd, env


# mpirun's words for a worker it saw die: "process rank 1 with PID 123 on node h exited on
# signal 9 (Killed)", and for a non-zero exit: "Process name: [[4242,1],1]" then "Exit code: 3".
_SIGNALED = re.compile(r"process rank (\d+) with PID \d+ on node \S+ exited on signal (\d+)")
_PROCESS = re.compile(r"Process name:\s*\[\[\d+,\d+\],(\d+)\]")
_EXIT_CODE = re.compile(r"Exit code:\s*(\d+)")


def failure_report(mpirun_output, report_dir):
    """Lines saying which ranks failed and why."""
    reasons = {}
    for name in sorted(os.listdir(report_dir)):
        m = re.fullmatch(r"rank(\d+)\.txt", name)
        if m:
            with open(os.path.join(report_dir, name)) as f:
                reasons[int(m.group(1))] = f.read().strip() or "an exception"
    for m in _SIGNALED.finditer(mpirun_output):
        r, sig = int(m.group(1)), int(m.group(2))
        try:
            sig_name = signal.Signals(sig).name
        except ValueError:
            sig_name = f"signal {sig}"
        reasons.setdefault(r, f"killed by {sig_name} ({sig})")
    proc = _PROCESS.search(mpirun_output)
    code = _EXIT_CODE.search(mpirun_output)
    if proc and code:
        reasons.setdefault(int(proc.group(1)), f"exited with status {code.group(1)}")
    return [f"rank {r} failed: {why}" for r, why in sorted(reasons.items())]


def run(opts):
    """Runs mpirun; returns the exit status (mpirun's: non-zero when any worker failed)."""
    with tempfile.TemporaryDirectory(prefix="ndx-launch-") as report_dir:
        cmd, env = build_command(opts, report_dir)
        if opts.dry_run:
            print(shlex.join(cmd))
            return 0
        proc = subprocess.Popen(cmd, env=env, stderr=subprocess.PIPE, text=True,
                                errors="replace")
        captured = []

        def relay():  # mpirun's stderr (the workers' too) passes through, and is kept
            for line in proc.stderr:
                sys.stderr.write(line)
                sys.stderr.flush()
                captured.append(line)

        relay_thread = threading.Thread(target=relay, daemon=True)
        relay_thread.start()
        previous = {}

        def forward(signum, frame):
            proc.send_signal(signum)

        for s in (signal.SIGINT, signal.SIGTERM):
            previous[s] = signal.signal(s, forward)
        try:
            rc = proc.wait()
        finally:
            for s, handler in previous.items():
                signal.signal(s, handler)
        relay_thread.join(timeout=5)
        if rc != 0:
            lines = failure_report("".join(captured), report_dir)
            for line in lines or ["a worker failed (mpirun's message above says which)"]:
                print(f"ndx.distributed.launch: {line}", file=sys.stderr)
            if rc < 0:  # mpirun itself was killed by a signal
                rc = 128 - rc
        return rc


def main(argv=None):
    opts = parser().parse_args(argv)
    try:
        return run(opts)
    except LaunchError as e:
        print(f"ndx.distributed.launch: error: {e}", file=sys.stderr)
        return EXIT_USAGE


if __name__ == "__main__":
    sys.exit(main())
