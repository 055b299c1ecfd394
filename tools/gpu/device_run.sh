#!/usr/bin/env bash
# Builds ndx on a lent GPU machine (its image has CUDA, CMake, ninja, OpenBLAS, Python 3.12 with
# NumPy and PyTorch, but not Highway: the Debian packages travel in .debs/) and runs the given
# command with the fresh build importable, e.g.
#   bash tools/gpu/device_run.sh python3 -m pytest -q tests/python/test_gpu.py
set -euo pipefail
cd "$(dirname "$0")/../.."
BUILD=${NDX_DEVICE_BUILD:-/tmp/ndx-build}
mkdir -p /tmp/hwy
for f in .debs/*.deb; do dpkg -x "$f" /tmp/hwy; done
export LD_LIBRARY_PATH=/tmp/hwy/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
if [ ! -f "$BUILD/build.ninja" ]; then
  cmake -S . -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release -DNDX_BUILD_PYTHON=ON \
    -DNDX_BUILD_TESTS=${NDX_DEVICE_CPP_TESTS:-OFF} -DPython_EXECUTABLE="$(command -v python3)" \
    -DCMAKE_PREFIX_PATH=/tmp/hwy/usr > "$BUILD.configure.log" 2>&1 || {
    cat "$BUILD.configure.log"
    exit 1
  }
fi
t0=$(date +%s)
ninja -C "$BUILD" > "$BUILD.build.log" 2>&1 || {
  grep -E "error|FAILED" -A3 "$BUILD.build.log" | head -60
  exit 1
}
echo "build: $(( $(date +%s) - t0 )) s"
ln -sf "$BUILD"/_core*.so python/ndx/
export PYTHONPATH=$PWD/python
"$@"
