"""Loads ndx's compiled core with OpenBLAS's kernels chosen. OpenBLAS picks its kernels by
CPU model when it loads, and a release older than the CPU falls back to generic SSE3 ones:
Debian 12's OpenBLAS 0.3.21 runs 'Prescott' kernels on an Emerald Rapids Xeon, where a
1024^3 float32 GEMM then takes 5x as long. Unless the user set OPENBLAS_CORETYPE, it is set
from the instruction set while ndx's OpenBLAS loads (AVX-512: SkylakeX; AVX2 with FMA:
Haswell; other CPUs keep OpenBLAS's choice) and removed again after, so that a NumPy or other
OpenBLAS loaded later makes its own choice."""
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
try:
    from . import _core  # noqa: F401  (loads libndx, and with it OpenBLAS)
finally:
    if chosen is not None:
        os.environ.pop("OPENBLAS_CORETYPE", None)
