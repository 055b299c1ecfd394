"""How this ndx was built: ndx.show_config() prints it (as numpy.show_config() does for NumPy),
ndx.__config__.CONFIG holds it as a dict, and cmake_prefix_path() / cmake_dir() say where the
installed CMake package is, for C++ projects that build against ndx (`find_package(ndx)`)."""
import os
import platform
import sys

import numpy

from . import _core

__all__ = ["CONFIG", "show", "cmake_dir", "cmake_prefix_path"]

_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__))


def _build_rows():
    return dict(_core._build_config())


def cmake_prefix_path():
    """The directory to add to CMAKE_PREFIX_PATH so `find_package(ndx)` finds this ndx.

    A pip-installed ndx carries its CMake package, headers and library inside the package
    directory; a source checkout used through PYTHONPATH has none there, and then the prefix
    `make install` fills (the checkout's _install) is returned if it holds the package."""
    candidates = (_PACKAGE_DIR, os.path.join(_PACKAGE_DIR, os.pardir, os.pardir, "_install"))
    for prefix in candidates:
        for libdir in ("lib", "lib64"):
            if os.path.isfile(os.path.join(prefix, libdir, "cmake", "ndx", "ndxConfig.cmake")):
                return os.path.normpath(prefix)
    raise FileNotFoundError(
        "ndx.cmake_prefix_path: no CMake package next to this ndx (" + _PACKAGE_DIR + "); "
        "install ndx with `pip install .`, or run `make install` in the source checkout")


def cmake_dir():
    """The directory holding ndxConfig.cmake (a value for -Dndx_DIR=)."""
    prefix = cmake_prefix_path()
    for libdir in ("lib", "lib64"):
        path = os.path.join(prefix, libdir, "cmake", "ndx")
        if os.path.isfile(os.path.join(path, "ndxConfig.cmake")):
            return path
    raise FileNotFoundError("ndx.cmake_dir: ndxConfig.cmake is missing under " + prefix)


def _python_rows():
    try:
        cmake = cmake_dir()
    except FileNotFoundError:
        cmake = "none (not a pip install)"
    return {
        "python": platform.python_implementation() + " " + platform.python_version(),
        "numpy": numpy.__version__,
        "package directory": _PACKAGE_DIR,
        "CMake package": cmake,
    }


def _config():
    return {"build": _build_rows(), "python": _python_rows()}


CONFIG = _config()


def show(mode="stdout"):
    """Prints the build's version and options (mode='stdout'), or returns them as a dict of
    sections (mode='dicts'), as numpy.show_config does."""
    if mode not in ("stdout", "dicts"):
        raise ValueError("ndx.show_config: mode must be 'stdout' or 'dicts', got " + repr(mode))
    config = _config()  # threads and oneDNN's switch can change after import
    if mode == "dicts":
        return config
    for section, rows in config.items():
        print(section + ":")
        width = max(len(k) for k in rows)
        for key, value in rows.items():
            print("  " + key.ljust(width) + " : " + value)
    sys.stdout.flush()
    return None
