"""Loads ndx's compiled core with OpenBLAS's kernels chosen. OpenBLAS picks its kernels by
CPU model when it loads, and a release older than the CPU falls back to generic SSE3 ones:
Debian 12's OpenBLAS 0.3.21 runs 'Prescott' kernels on an Emerald Rapids Xeon, where a
1024^3 float32 GEMM then takes 5x as long. Unless the user set OPENBLAS_CORETYPE, it is set
from the instruction set while ndx's OpenBLAS loads (AVX-512: SkylakeX; AVX2 with FMA:
Haswell; other CPUs keep OpenBLAS's choice) and removed again after, so that a NumPy or other
OpenBLAS loaded later makes its own choice.

OpenMP (libgomp, which oneDNN runs on) reads GOMP_SPINCOUNT when it loads, with libndx. Its
threads spin that many times after each oneDNN call before sleeping (300,000 by default:
about a millisecond), taking the cores from ndx's own kernels that come next (a BatchNorm
after a convolution). Unless the user set it (or OMP_WAIT_POLICY), it is 10,000 while libndx
loads: on 2 cores a hybridized 2-thread CNN forward went from 8.5 to 5.2 ms and its INT8 one
from 3.5 to 2.0 (bench/int8_models.py), while 1,000 slowed the tiny train_step CNN (its ops
are too short to let the team sleep). Removed again after, like OPENBLAS_CORETYPE."""
import os


def _cpu_flags():
    try:
        with open("/proc/cpuinfo") as f:
            return set(next((line.split(":", 1)[1].split() for line in f
                             if line.startswith("flags")), []))
    except OSError:
        return set()


def _kernels_for(flags):
    if {"avx512f", "avx512cd", "avx512bw", "avx512dq", "avx512vl"} <= flags:
        return "SkylakeX"
    if {"avx2", "fma"} <= flags:
        return "Haswell"
    return None


chosen = None if "OPENBLAS_CORETYPE" in os.environ else _kernels_for(_cpu_flags())
if chosen is not None:
    os.environ["OPENBLAS_CORETYPE"] = chosen
spin = not ({"GOMP_SPINCOUNT", "OMP_WAIT_POLICY"} & set(os.environ))
if spin:
    os.environ["GOMP_SPINCOUNT"] = "10000"
try:
    from . import _core  # noqa: F401  (loads libndx, and with it OpenBLAS and OpenMP)
finally:
    if chosen is not None:
        os.environ.pop("OPENBLAS_CORETYPE", None)
    if spin:
        os.environ.pop("GOMP_SPINCOUNT", None)
