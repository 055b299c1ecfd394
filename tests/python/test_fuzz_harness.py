"""The fuzzer's harness can fail: planted crashes, aborts, hangs and untyped errors are each
reported at their call index, and the run carries on past them."""
import json
import os
import subprocess
import sys

FUZZ = os.path.join(os.path.dirname(__file__), "..", "..", "tools", "fuzz", "ndx_fuzz.py")


def _run(tmp_path, calls, planted="", timeout=5):
    report = tmp_path / "report.json"
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path), NDX_FUZZ_SELFTEST=planted,
               TMPDIR=str(scratch))
    proc = subprocess.run([sys.executable, FUZZ, "--calls", str(calls), "--seed", "7",
                           "--timeout", str(timeout), "--batch", "40", "--report", str(report)],
                          env=env, capture_output=True, text=True, timeout=300)
    # the run leaves no temporary files, not even those of the children that crashed
    assert list(scratch.iterdir()) == []
    return proc, json.loads(report.read_text())


def test_planted_findings_are_reported_and_the_run_goes_on(tmp_path):
    proc, report = _run(tmp_path, 60, "crash@3,hang@11,untyped@17,abort@45")
    assert proc.returncode == 1
    found = {(f["kind"], f["index"]) for f in report["findings"]}
    assert found == {("crash", 3), ("hang", 11), ("untyped", 17), ("crash", 45)}
    assert report["calls"] == 60  # every index was reached, the batches restarted past each
    t = report["tally"]
    assert (t["crash"], t["hang"], t["untyped"]) == (2, 1, 1)
    assert "--repro 7:3" in proc.stdout and "planted crash" in proc.stdout


def test_a_clean_run_exits_zero_and_counts_every_outcome(tmp_path):
    proc, report = _run(tmp_path, 300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert report["findings"] == [] and report["calls"] == 300
    t = report["tally"]
    outcomes = t.get("ok", 0) + sum(v for k, v in t.items() if k.startswith("typed:"))
    assert outcomes == 300 and t.get("ok", 0) > 30


def test_calls_are_a_function_of_seed_and_index():
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    runs = [subprocess.run([sys.executable, FUZZ, "--describe", "7:123"], env=env,
                           capture_output=True, text=True, timeout=120).stdout
            for _ in range(2)]
    assert runs[0] == runs[1] and runs[0].strip()
