"""The package around ndx: one version everywhere, the build configuration, python -m ndx, and
the wheel checker's rules (tools/check_wheel.py; `make test` runs it on a real wheel)."""
import ctypes
import importlib.util
import os
import re
import subprocess
import sys

import pytest

import ndx

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, os.pardir)


def cmake_project_version():
    with open(os.path.join(ROOT, "CMakeLists.txt")) as f:
        return re.search(r"project\(ndx VERSION ([0-9]+\.[0-9]+\.[0-9]+)", f.read()).group(1)


def loaded_libndx():
    with open("/proc/self/maps") as f:
        paths = {line.split()[-1] for line in f if "libndx.so" in line}
    assert len(paths) == 1, paths
    return ctypes.CDLL(paths.pop())


def test_version_comes_from_cmakelists_everywhere():
    version = cmake_project_version()
    assert ndx.__version__ == version
    major, minor, patch = (int(p) for p in version.split("."))
    lib = loaded_libndx()
    assert lib.NDXGetVersion() == major * 10000 + minor * 100 + patch
    assert lib.NDXGetABIVersion() == 1  # NDX_C_API_VERSION in ndx/c_api.h
    assert ndx.show_config(mode="dicts")["build"]["version"] == version


def test_show_config_reports_the_build():
    config = ndx.show_config(mode="dicts")
    build = config["build"]
    assert list(build) == ["version", "compiler", "build type", "SIMD targets built",
                           "SIMD target running", "threads", "BLAS", "oneDNN", "CUDA"]
    assert build["SIMD target running"] == ndx._core._simd_target()
    assert build["SIMD target running"] in build["SIMD targets built"].split()
    assert int(build["threads"]) == ndx._core._get_num_threads()
    assert build["BLAS"].startswith("OpenBLAS")
    assert config["python"]["numpy"] == __import__("numpy").__version__
    assert ndx.__config__.CONFIG["build"]["version"] == ndx.__version__
    with pytest.raises(ValueError, match="mode must be"):
        ndx.show_config(mode="json")


def test_show_config_prints_every_row(capsys):
    assert ndx.show_config() is None
    out = capsys.readouterr().out
    for section, rows in ndx.show_config(mode="dicts").items():
        assert section + ":" in out
        for key in rows:
            assert key in out


def run_module(*args):
    env = dict(os.environ)
    env["PYTHONPATH"] = os.path.dirname(os.path.dirname(ndx.__file__))
    return subprocess.run([sys.executable, "-m", "ndx", *args], capture_output=True, text=True,
                          env=env, timeout=120)


def test_python_m_ndx():
    assert run_module("--version").stdout.strip() == cmake_project_version()
    assert "SIMD target running" in run_module("--show-config").stdout
    assert run_module().returncode == 2  # argparse: one option is required
    try:
        prefix = ndx.cmake_prefix_path()
    except FileNotFoundError as err:
        # a source checkout with no `make install`: the error says what to do, and -m agrees
        assert "pip install" in str(err)
        result = run_module("--cmake-dir")
        assert result.returncode == 1 and "pip install" in result.stderr
    else:
        result = run_module("--cmake-dir")
        assert result.returncode == 0
        assert os.path.isfile(os.path.join(result.stdout.strip(), "ndxConfig.cmake"))
        assert run_module("--cmake-prefix-path").stdout.strip() == prefix


def test_a_pip_install_carries_its_cmake_package():
    # `make test` installs ndx with pip and runs this suite against that install; from a source
    # checkout (PYTHONPATH) the installed layout is not there to check.
    package_dir = os.path.dirname(ndx.__file__)
    if not os.path.isfile(os.path.join(package_dir, "libndx.so")):
        pytest.skip("ndx is imported from a source checkout, not a pip install")
    assert ndx.cmake_prefix_path() == os.path.normpath(package_dir)
    assert os.path.isfile(os.path.join(package_dir, "include", "ndx", "version.h"))
    assert not [n for n in os.listdir(package_dir) if n.startswith("libndx.so.")]


def load_check_wheel():
    spec = importlib.util.spec_from_file_location(
        "check_wheel", os.path.join(ROOT, "tools", "check_wheel.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


GOOD_WHEEL = ["ndx/__init__.py", "ndx/__main__.py", "ndx/libndx.so",
              "ndx/_core.cpython-311-x86_64-linux-gnu.so", "ndx/include/ndx/np.h",
              "ndx/include/ndx/version.h", "ndx/include/ndx/lib_api.h",
              "ndx/include/mxnet/lib_api.h", "ndx/lib/cmake/ndx/ndxConfig.cmake",
              "ndx/lib/cmake/ndx/ndxConfigVersion.cmake", "ndx/lib/cmake/ndx/ndxTargets.cmake",
              "ndx/py.typed", "ndx/numpy/__init__.pyi", "ndx/sym.pyi",
              "ndx/libndx_dist_mpi.so", "ndx/distributed/launch.py",
              "ndx-0.1.0.dist-info/licenses/LICENSE"]


def test_wheel_checker_rules():
    check = load_check_wheel().problems_of
    assert check(GOOD_WHEEL) == []
    # the layout before this release: libndx.so.0 and libndx.so.0.1.0 as copies
    copies = GOOD_WHEEL + ["ndx/libndx.so.0", "ndx/libndx.so.0.1.0"]
    assert any("exactly ndx/libndx.so" in p for p in check(copies))
    no_cmake = [n for n in GOOD_WHEEL if "cmake" not in n]
    assert len(check(no_cmake)) == 3
    no_mpi = [n for n in GOOD_WHEEL if "dist_mpi" not in n]
    assert check(no_mpi) == ["ndx/libndx_dist_mpi.so is missing"]
    no_license = [n for n in GOOD_WHEEL if "LICENSE" not in n]
    assert check(no_license) == ["the LICENSE is not in the wheel's metadata"]


def test_a_checkout_without_the_extension_says_what_to_do(tmp_path):
    # `PYTHONPATH=python python bench/...` after `make test` used to end in a circular-import
    # message: the checkout's ndx has no built extension (pip installed it into .venv).
    import shutil
    source = os.path.join(ROOT, "python", "ndx")
    shutil.copytree(source, tmp_path / "ndx", ignore=shutil.ignore_patterns("*.so", "__pycache__"))
    env = dict(os.environ, PYTHONPATH=str(tmp_path))
    result = subprocess.run([sys.executable, "-c", "import ndx"], capture_output=True, text=True,
                            env=env, cwd=str(tmp_path), timeout=120)
    assert result.returncode != 0
    assert "ImportError: ndx's compiled extension (ndx._core) is not in" in result.stderr
    assert ".venv/bin/python" in result.stderr


def test_openblas_runs_the_kernels_the_cpu_supports():
    """An OpenBLAS older than the CPU falls back to generic SSE3 kernels (Debian 12's 0.3.21
    on an Emerald Rapids Xeon: 'Prescott', GEMM 5x slower); ndx names the kernel family
    while its OpenBLAS loads, leaves a user's OPENBLAS_CORETYPE alone, and does not leave
    the variable set for libraries loaded later."""
    import os
    import subprocess
    import sys

    from ndx._openblas import _cpu_flags  # (reads /proc/cpuinfo; the mapping is tested here)
    flags = _cpu_flags()
    if {"avx512f", "avx512cd", "avx512bw", "avx512dq", "avx512vl"} <= flags:
        want = "SkylakeX"
    elif {"avx2", "fma"} <= flags:
        want = "Haswell"
    else:
        pytest.skip("a CPU without AVX2: OpenBLAS keeps its own choice")
    code = ("import os, ndx; print(ndx.show_config(mode='dicts')['build']['BLAS']); "
            "print(os.environ.get('OPENBLAS_CORETYPE'))")
    env = {k: v for k, v in os.environ.items() if k != "OPENBLAS_CORETYPE"}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                         text=True, check=True).stdout.splitlines()
    assert f" {want} " in out[0], out[0]
    assert out[1] == "None"
    env["OPENBLAS_CORETYPE"] = "Haswell"  # the user's choice wins
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                         text=True, check=True).stdout.splitlines()
    assert " Haswell " in out[0] and out[1] == "Haswell"


def test_openmp_spins_briefly_after_onednn_calls():
    """OpenMP (oneDNN's team) loads with GOMP_SPINCOUNT=10000 unless the user set it or
    OMP_WAIT_POLICY (libgomp's 300,000 kept its threads spinning on the cores ndx's next
    kernel needed); the variable is not left set. libgomp prints the value it read with
    OMP_DISPLAY_ENV."""
    import os
    import subprocess
    import sys

    code = "import os, ndx; print('after', os.environ.get('GOMP_SPINCOUNT'))"
    env = {k: v for k, v in os.environ.items()
           if k not in ("GOMP_SPINCOUNT", "OMP_WAIT_POLICY")}
    env["OMP_DISPLAY_ENV"] = "verbose"

    def run(extra):
        r = subprocess.run([sys.executable, "-c", code], env=dict(env, **extra),
                           capture_output=True, text=True, check=True)
        return r.stdout + r.stderr

    out = run({})
    assert "GOMP_SPINCOUNT = '10000'" in out and "after None" in out, out
    out = run({"GOMP_SPINCOUNT": "77"})  # the user's choice wins
    assert "GOMP_SPINCOUNT = '77'" in out and "after 77" in out, out
