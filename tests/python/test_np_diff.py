"""ndx.numpy against NumPy through the differential fuzzer (tools/fuzz/np_diff.py): a fixed
slice of its calls must give NumPy's values, dtypes and shapes (up to the documented
differences its KNOWN list names) and compute wherever NumPy computes. (Different exception
classes on bad input, and input ndx accepts where NumPy refuses, are reported by the tool but
not asserted here.)"""
import json
import os
import subprocess
import sys

import pytest

TOOL = os.path.join(os.path.dirname(__file__), "..", "..", "tools", "fuzz", "np_diff.py")


def _run(tmp_path, *args):
    report = tmp_path / "report.json"
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    proc = subprocess.run([sys.executable, TOOL, "--report", str(report), *args], env=env,
                          capture_output=True, text=True, timeout=900)
    return proc, json.loads(report.read_text())


@pytest.mark.parametrize("seed", [101, 102])
def test_results_agree_with_numpy(tmp_path, seed):
    proc, report = _run(tmp_path, "--seed", str(seed), "--calls", "1500", "--values-only")
    unknown = [g for g in report["groups"] if not g["known"] and
               not g["sig"][1].startswith(("exc:", "numpy-raises:"))]
    assert proc.returncode == 0 and not unknown, proc.stdout[-3000:]
    assert report["counts"].get("ok", 0) > 500  # most calls ran and were compared


def test_a_planted_difference_is_found(tmp_path):
    # ndx's own sum made wrong for this run only: the comparison must fail
    proc, report = _run(tmp_path, "--seed", "1", "--calls", "400", "--only", "sum",
                        "--values-only", "--plant", "sum")
    assert proc.returncode == 1
    assert any(g["sig"][0] == "sum" and g["sig"][1] == "value" for g in report["groups"])
