#!/usr/bin/env bash
# The GPU checks on a lent machine, after tools/gpu/quick_core.sh has built the extension:
#   bash tools/gpu/quick_core.sh bash tools/gpu/check.sh [pytest -k expression]
# The test files with GPU tests (test_gpu.py and the GPU cases of the others, NCCL included),
# then the op table on gpu(0). Logs go to $OUT when the device tool sets it.
set -uo pipefail
O=${OUT:-/tmp/ndx-gpu-out}
mkdir -p "$O"
export PYTHONUNBUFFERED=1
nvidia-smi -L
cd tests/python
K=(${1:+-k "$1"})
timeout "${NDX_CHECK_TIMEOUT:-300}" python3 -m pytest -p no:cacheprovider -q -rfEs -n 8 "${K[@]}" \
  test_gpu.py test_dlpack.py test_conv_layers.py test_ffi.py test_library.py test_array_api.py \
  test_distributed.py::test_nccl_runs_on_one_gpu 2>&1 | tee "$O/gpu_tests.log" | tail -40
echo "gpu tests rc=${PIPESTATUS[0]}"
NDX_TEST_DEVICE='gpu(0)' timeout "${NDX_CHECK_TIMEOUT:-300}" python3 -m pytest -p no:cacheprovider \
  -q -rfE -n 8 "${K[@]}" test_ops.py 2>&1 | tee "$O/op_table_gpu.log" | grep -E "passed|failed" | tail -3
echo "op table rc=${PIPESTATUS[0]}"
grep -E "^(FAILED|ERROR)" "$O/op_table_gpu.log" | sed -E 's/\[.*//' | sort | uniq -c | sort -rn | head -30
