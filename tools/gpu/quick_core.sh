#!/usr/bin/env bash
# On the lent GPU machine: the Python extension for its Python, compiled against a libndx built
# elsewhere and carried in .gpubuild/ (with libhwy), so a device call spends seconds, not
# minutes, building. Then runs the given command.
set -euo pipefail
cd "$(dirname "$0")/../.."
G=$PWD/.gpubuild
ln -sf libndx.so.0 "$G/libndx.so"
PYINC=$(python3 -c "import sysconfig; print(sysconfig.get_paths()['include'])")
NPINC=$(python3 -c "import numpy; print(numpy.get_include())")
SUFFIX=$(python3 -c "import sysconfig; print(sysconfig.get_config_var('EXT_SUFFIX'))")
mkdir -p /tmp/core-obj
t0=$(date +%s)
ls python/src/*.cc | xargs -P 16 -I{} sh -c \
  'g++ -O2 -fPIC -std=c++20 -Iinclude -Isrc -I'"$PYINC"' -I'"$NPINC"' -c {} -o /tmp/core-obj/$(basename {}).o'
g++ -shared /tmp/core-obj/*.o -L"$G" -lndx -Wl,-rpath,"$G" -o "python/ndx/_core$SUFFIX"
echo "extension: $(( $(date +%s) - t0 )) s"
export LD_LIBRARY_PATH=$G:${LD_LIBRARY_PATH:-}
export PYTHONPATH=$PWD/python
"$@"
