"""Every code block in README.md, checked as a reader would use it (the kinds of blocks and
how each is checked: tests/python/snippets.py)."""
import os
import shutil
import subprocess

import pytest

import ndx
import snippets

ROOT = snippets.ROOT
BLOCKS = snippets.blocks(os.path.join(ROOT, "README.md"))


def blocks_of(lang, kind=None):
    return [b for b in BLOCKS if b["lang"] == lang and (kind is None or snippets.kind(b) == kind)]


def test_every_block_has_a_known_kind():
    for b in BLOCKS:
        snippets.check_kind(b)
    assert len(blocks_of("python")) >= 4


@pytest.mark.parametrize("block", blocks_of("python"), ids=lambda b: f"line{b['line']}")
def test_python_blocks_run_as_pasted(block):
    snippets.run_python(block)


@pytest.mark.parametrize("block", blocks_of("cpp", "excerpt"), ids=lambda b: f"line{b['line']}")
def test_cpp_excerpts_are_in_their_files(block):
    snippets.check_excerpt(block)


def test_excerpt_check_catches_a_changed_line():
    block = dict(blocks_of("cpp", "excerpt")[0])
    block["code"] = block["code"].replace("(", "( ", 1)
    with pytest.raises(AssertionError, match="not in"):
        snippets.check_excerpt(block)


def test_make_targets_named_exist():
    named = [t for b in blocks_of("sh") for t in snippets.check_make_commands(b)]
    assert named


def test_cpp_project_builds_and_runs(tmp_path):
    files = {b["marker"][1]: b["code"] for b in BLOCKS if snippets.kind(b) == "project"}
    assert set(files) == {"CMakeLists.txt", "main.cpp"}
    try:
        prefix = ndx.cmake_prefix_path()
    except FileNotFoundError:
        pytest.skip("no installed ndx CMake package (make test builds this against the pip "
                    "install)")
    if shutil.which("cmake") is None:
        pytest.fail("cmake is not installed")
    for name, code in files.items():
        (tmp_path / name).write_text(code + "\n")
    generator = ["-G", "Ninja"] if shutil.which("ninja") else []
    subprocess.run(["cmake", "-S", str(tmp_path), "-B", str(tmp_path / "build"), *generator,
                    "-DCMAKE_PREFIX_PATH=" + prefix], check=True, capture_output=True,
                   timeout=300)
    subprocess.run(["cmake", "--build", str(tmp_path / "build")], check=True,
                   capture_output=True, timeout=600)
    result = subprocess.run([str(tmp_path / "build" / "app")], capture_output=True, text=True,
                            timeout=60)
    assert result.returncode == 0, result.stderr
    # The values NumPy gives: c = ones((2, 3)) + arange(6).reshape(2, 3) * 2.0.
    import numpy
    c = numpy.ones((2, 3)) + numpy.arange(6).reshape(2, 3) * 2.0
    assert str(c.sum(axis=1)) in result.stdout
