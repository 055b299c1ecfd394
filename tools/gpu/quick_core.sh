#!/usr/bin/env bash
# On the lent GPU machine: the Python extension for its Python, compiled against a libndx built
# elsewhere and carried in .gpubuild/ (tools/gpu/pack.sh makes .gpubuild/libs.tar.xz: libndx,
# libndx_dist_mpi and the libraries the machine's image lacks), so a device call spends seconds,
# not minutes, building. Then runs the given command.
set -euo pipefail
cd "$(dirname "$0")/../.."
G=/tmp/ndx-libs
mkdir -p "$G"
tar -C "$G" -xJf .gpubuild/libs.tar.xz
ln -sf libndx.so.0 "$G/libndx.so"
PYINC=$(python3 -c "import sysconfig; print(sysconfig.get_paths()['include'])")
NPINC=$(python3 -c "import numpy; print(numpy.get_include())")
SUFFIX=$(python3 -c "import sysconfig; print(sysconfig.get_config_var('EXT_SUFFIX'))")
mkdir -p /tmp/core-obj
t0=$(date +%s)
ls python/src/*.cc | xargs -P 16 -I{} sh -c \
  'g++ -O2 -fPIC -std=c++20 -Iinclude -Isrc -I'"$PYINC"' -I'"$NPINC"' -c {} -o /tmp/core-obj/$(basename {}).o'
g++ -shared /tmp/core-obj/*.o -L"$G" -lndx -Wl,-rpath,"$G" -o "python/ndx/_core$SUFFIX"
cp "$G/libndx_dist_mpi.so" python/ndx/  # ndx.distributed looks for it beside the extension
echo "extension: $(( $(date +%s) - t0 )) s"
# NCCL comes with PyTorch's wheels there (nvidia-nccl-cu13), outside the loader's path.
NCCL_DIR=$(python3 -c "import nvidia.nccl, os; print(os.path.join(list(nvidia.nccl.__path__)[0], 'lib'))" 2>/dev/null || true)
export LD_LIBRARY_PATH=$G${NCCL_DIR:+:$NCCL_DIR}:${LD_LIBRARY_PATH:-}
export PYTHONPATH=$PWD/python
"$@"
