"""The launcher and the dist_sync store across hosts: two test hosts made on this machine.

Each host is a network namespace of its own (`ip netns`), joined to the other by a veth pair
on a /24 of its own, so the two see each other only through that link's addresses, as two
machines on a LAN would. The launcher runs on the first host with `--hosts A,B`; mpirun
starts the second host's daemon through its remote-shell agent, which here is a script that
enters the other namespace instead of ssh (`--mca plm_rsh_agent`, the one thing that differs
from real machines). The workers use MPI's TCP transport only, and the test checks that the
collectives' bytes crossed the veth link.

Needs root (CI runs as root); elsewhere the tests skip and say why.
"""
import json
import os
import shutil
import subprocess
import sys
import time

import numpy as onp
import pytest

from test_distributed import WORKER, train_one_process

SUBNET = "10.213.7"  # only ever assigned inside the two namespaces this module makes


def _ip(*args, ns=None):
    cmd = ["ip", *(["netns", "exec", ns, "ip"] if ns else []), *args]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=30)


class NetnsHosts:
    """Two namespaces, host A (the launcher's) and host B, each with one veth end."""

    def __init__(self, tmp):
        tag = f"ndx{os.getpid() % 100000}"
        self.ns = [f"{tag}a", f"{tag}b"]
        self.dev = [f"{tag}va", f"{tag}vb"]
        self.addr = [f"{SUBNET}.1", f"{SUBNET}.2"]
        self.rsh = os.path.join(tmp, "netns-rsh")
        self.log = os.path.join(tmp, "rsh.log")

    def up(self):
        for ns in self.ns:
            self._check(_ip("netns", "add", ns))
            self._check(_ip("link", "set", "lo", "up", ns=ns))
        self._check(_ip("link", "add", self.dev[0], "netns", self.ns[0], "type", "veth",
                        "peer", "name", self.dev[1], "netns", self.ns[1]))
        for ns, dev, addr in zip(self.ns, self.dev, self.addr):
            self._check(_ip("addr", "add", f"{addr}/24", "dev", dev, ns=ns))
            self._check(_ip("link", "set", dev, "up", ns=ns))
        cases = "\n".join(f"  {a}) ns={n} ;;" for a, n in zip(self.addr, self.ns))
        with open(self.rsh, "w") as f:  # mpirun's "ssh": `agent HOST COMMAND...`
            f.write(f"""#!/bin/sh
host=$1; shift
case $host in
{cases}
  *) echo "netns-rsh: no test host $host" >&2; exit 255 ;;
esac
echo "$host" >> {self.log}
exec ip netns exec $ns /bin/sh -c "$*"
""")
        os.chmod(self.rsh, 0o755)

    def down(self):
        for ns in self.ns:  # (deleting a namespace deletes its veth end, and so the pair)
            _ip("netns", "delete", ns)

    @staticmethod
    def _check(proc):
        if proc.returncode != 0:
            raise RuntimeError(f"{' '.join(proc.args)}: {proc.stderr.strip()}")

    def tx_bytes(self):
        """Bytes host A has sent over its link to host B."""
        out = _ip("-s", "-j", "link", "show", self.dev[0], ns=self.ns[0])
        self._check(out)
        return json.loads(out.stdout)[0]["stats64"]["tx"]["bytes"]

    def launch(self, *args, slots=(1, 1), timeout=120):
        """The launcher, run on host A, for workers on A and B."""
        hosts = ",".join(f"{a}:{s}" for a, s in zip(self.addr, slots))
        mca = (f"--mca plm_rsh_agent {self.rsh} --mca btl tcp,self "
               f"--mca btl_tcp_if_include {SUBNET}.0/24 --mca oob_tcp_if_include {SUBNET}.0/24")
        cmd = ["ip", "netns", "exec", self.ns[0], sys.executable, "-m",
               "ndx.distributed.launch", "-n", str(sum(slots)), "--hosts", hosts,
               "--mpirun-args", mca, *args]
        start = time.monotonic()
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout,
                              env=dict(os.environ, NDX_NUM_THREADS="1"))
        return proc.returncode, proc.stdout + proc.stderr, time.monotonic() - start

    def remote_starts(self):
        """How many times mpirun started a daemon on a host through the agent, by host."""
        if not os.path.exists(self.log):
            return {}
        with open(self.log) as f:
            names = f.read().split()
        return {h: names.count(h) for h in set(names)}


def _why_no_hosts():
    if not sys.platform.startswith("linux"):
        return "network namespaces are Linux's"
    if os.geteuid() != 0:
        return "making test hosts (ip netns add) needs root"
    if shutil.which("ip") is None or shutil.which("mpirun") is None:
        return "needs iproute2's ip and Open MPI's mpirun"
    return ""


@pytest.fixture(scope="module")
def hosts(tmp_path_factory):
    why = _why_no_hosts()
    if why:
        pytest.skip(why)
    h = NetnsHosts(str(tmp_path_factory.mktemp("hosts")))
    try:
        h.up()
    except RuntimeError as e:  # e.g. a container without CAP_SYS_ADMIN
        h.down()
        pytest.skip(f"could not make the test hosts: {e}")
    yield h
    h.down()


def test_the_hosts_reach_each_other_only_over_their_link(hosts):
    # B's address is on B's side alone: A has it on no interface of its own.
    a_addrs = _ip("-o", "addr", "show", ns=hosts.ns[0]).stdout
    assert hosts.addr[0] in a_addrs and hosts.addr[1] not in a_addrs
    assert hosts.addr[1] in _ip("-o", "addr", "show", ns=hosts.ns[1]).stdout


def test_collectives_across_two_hosts(hosts, tmp_path):
    sent = hosts.tx_bytes()
    rc, out, _ = hosts.launch(WORKER, "collectives", str(tmp_path))
    assert rc == 0, out
    assert sorted(os.listdir(tmp_path)) == ["ok0", "ok1"]
    assert hosts.remote_starts().get(hosts.addr[1], 0) >= 1  # B's daemon came through the agent
    # Every dtype's 40x50 array went A -> B at least once (15 dtypes, 2,000 elements, 1-16
    # bytes each: over 100 KB); nothing else on this link sends that much.
    assert hosts.tx_bytes() - sent > 100_000


def test_training_across_two_hosts_matches_one_process(hosts, tmp_path):
    # Two workers on each host: shared memory is off (btl tcp,self) and TCP is kept to the
    # link's subnet, so the pair on one host talks through its own link address and the
    # hosts over the link.
    rc, out, _ = hosts.launch(WORKER, "train", str(tmp_path), "0", "1", slots=(2, 2),
                              timeout=180)
    assert rc == 0, out
    ranks = [dict(onp.load(tmp_path / f"rank{r}.npz")) for r in range(4)]
    for r in range(1, 4):
        for k in ranks[0]:
            assert ranks[r][k].tobytes() == ranks[0][k].tobytes(), k
    for k, v in train_one_process(4).items():
        onp.testing.assert_allclose(ranks[0][k], v, rtol=1e-5, atol=1e-6, err_msg=k)


def test_a_worker_killed_on_the_other_host_stops_the_job(hosts, tmp_path):
    # Rank 1 is host B's worker; rank 0, on A, is stopped by mpirun, not by its 30 s timeout.
    rc, out, seconds = hosts.launch("--timeout", "30", WORKER, "kill", str(tmp_path))
    assert rc != 0
    assert "rank 1 failed: killed by SIGKILL (9)" in out
    assert seconds < 25


def test_a_hung_worker_on_the_other_host_times_out_rank_0(hosts, tmp_path):
    rc, out, seconds = hosts.launch("--timeout", "2", WORKER, "hang", str(tmp_path))
    assert rc == 1
    assert "rank 0 failed: DistributedTimeoutError" in out
    assert seconds < 25
