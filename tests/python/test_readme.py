"""Every code block in README.md, checked as a reader would use it.

A block's kind comes from its fence and an optional marker line just above it:
- ```python: run as pasted, in a fresh interpreter from the repository root;
- ```cpp / ```cmake marked `<!-- snippet: project FILE -->`: the blocks together are a whole
  CMake project, configured against the installed ndx package, built and run;
- ```cpp marked `<!-- snippet: excerpt PATH... -->`: every code line is in one of those files,
  which the build compiles (a `// ...` line stands for omitted lines);
- ```sh: every `make TARGET` it names is a Makefile target;
- ```text: program output or listings, not code.
"""
import os
import re
import shutil
import subprocess
import sys

import pytest

import ndx

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
MARKER = re.compile(r"<!-- snippet: (\w+) (.+?) -->")


def readme_blocks():
    lines = open(os.path.join(ROOT, "README.md")).read().split("\n")
    blocks, i = [], 0
    while i < len(lines):
        if lines[i].startswith("```"):
            lang, start = lines[i][3:].strip(), i
            end = lines.index("```", i + 1)
            marker = MARKER.fullmatch(lines[start - 1].strip()) if start else None
            blocks.append({"lang": lang, "line": start + 1, "code": "\n".join(lines[i + 1:end]),
                           "marker": marker.groups() if marker else None})
            i = end
        i += 1
    return blocks


BLOCKS = readme_blocks()


def blocks_of(lang, kind=None):
    return [b for b in BLOCKS if b["lang"] == lang and (kind is None or
                                                        (b["marker"] or ("",))[0] == kind)]


def test_every_block_has_a_known_kind():
    for b in BLOCKS:
        assert b["lang"] in ("python", "cpp", "cmake", "sh", "text"), b
        if b["lang"] in ("cpp", "cmake"):
            assert b["marker"] and b["marker"][0] in ("project", "excerpt"), \
                f"README.md:{b['line']}: a {b['lang']} block needs a snippet marker"
    assert len(blocks_of("python")) >= 4


def run_env():
    env = dict(os.environ)
    env["PYTHONPATH"] = os.path.dirname(os.path.dirname(ndx.__file__))
    env["MPLBACKEND"] = "Agg"
    env["PAGER"] = "cat"
    return env


@pytest.mark.parametrize("block", blocks_of("python"), ids=lambda b: f"line{b['line']}")
def test_python_blocks_run_as_pasted(block):
    result = subprocess.run([sys.executable, "-c", block["code"]], cwd=ROOT, env=run_env(),
                            capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, f"README.md:{block['line']}:\n{result.stderr[-3000:]}"


def normalized(line):
    return " ".join(line.split())


def code_lines(snippet):
    for line in snippet.split("\n"):
        stripped = line.strip()
        if not stripped or stripped.startswith("//"):
            continue  # blank lines, comments and `// ...` elisions
        yield normalized(re.sub(r"\s+//.*$", "", line))


@pytest.mark.parametrize("block", blocks_of("cpp", "excerpt"), ids=lambda b: f"line{b['line']}")
def test_cpp_excerpts_are_in_their_files(block):
    text = ""
    for path in block["marker"][1].split():
        with open(os.path.join(ROOT, path)) as f:
            text += "\n".join(normalized(line) for line in f) + "\n"
    for line in code_lines(block["code"]):
        assert line in text, f"README.md:{block['line']}: not in {block['marker'][1]}: {line}"


def test_excerpt_check_catches_a_changed_line():
    block = blocks_of("cpp", "excerpt")[0]
    changed = block["code"].replace("(", "( ", 1)
    path = os.path.join(ROOT, block["marker"][1].split()[0])
    text = "\n".join(normalized(line) for line in open(path))
    assert any(line not in text for line in code_lines(changed))


def test_make_targets_named_exist():
    makefile = open(os.path.join(ROOT, "Makefile")).read()
    targets = set(re.findall(r"^([\w-]+):", makefile, re.M))
    named = [t for b in blocks_of("sh") for t in re.findall(r"^make (\w[\w-]*)", b["code"], re.M)]
    assert named and set(named) <= targets, (named, targets)


def test_cpp_project_builds_and_runs(tmp_path):
    files = {b["marker"][1]: b["code"] for b in BLOCKS if (b["marker"] or ("",))[0] == "project"}
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
