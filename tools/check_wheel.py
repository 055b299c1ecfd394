"""Checks what a built ndx wheel holds: one copy of libndx (no version-link copies), the
extension, the MPI backend of ndx.distributed, the public headers with the generated version.h,
the CMake package, and the license.

    python tools/check_wheel.py dist/ndx-*.whl
"""
import re
import sys
import zipfile


def problems_of(names):
    found = []
    libs = [n for n in names if re.fullmatch(r"ndx/libndx\.so(\.[0-9.]+)?", n)]
    if libs != ["ndx/libndx.so"]:
        found.append("expected exactly ndx/libndx.so, found " + repr(libs))
    if not any(re.fullmatch(r"ndx/_core\..*\.so", n) for n in names):
        found.append("the extension ndx/_core.*.so is missing")
    for needed in ("ndx/include/ndx/np.h", "ndx/include/ndx/version.h",
                   "ndx/include/ndx/lib_api.h", "ndx/include/mxnet/lib_api.h",
                   "ndx/lib/cmake/ndx/ndxConfig.cmake",
                   "ndx/lib/cmake/ndx/ndxConfigVersion.cmake",
                   "ndx/lib/cmake/ndx/ndxTargets.cmake", "ndx/__init__.py", "ndx/__main__.py",
                   "ndx/py.typed", "ndx/numpy/__init__.pyi", "ndx/sym.pyi",
                   "ndx/libndx_dist_mpi.so", "ndx/distributed/launch.py"):
        if needed not in names:
            found.append(needed + " is missing")
    if not any(n.endswith(".dist-info/licenses/LICENSE") for n in names):
        found.append("the LICENSE is not in the wheel's metadata")
    return found


def main(paths):
    if not paths:
        print(__doc__, file=sys.stderr)
        return 2
    status = 0
    for path in paths:
        with zipfile.ZipFile(path) as wheel:
            names = wheel.namelist()
            size = sum(i.file_size for i in wheel.infolist())
        found = problems_of(names)
        for p in found:
            print(path + ": " + p, file=sys.stderr)
        if found:
            status = 1
        else:
            print(f"{path}: ok ({len(names)} files, {size / 2**20:.1f} MiB unpacked)")
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
