"""Code blocks of Markdown files (README.md, docs/), checked as a reader would use them.

A block's kind comes from its fence and an optional marker line just above it:
- ```python: run as pasted, in a fresh interpreter from the repository root;
- ```cpp / ```cmake marked `<!-- snippet: project FILE -->`: the blocks together are a whole
  CMake project, configured against the installed ndx package, built and run;
- ```cpp / ```c marked `<!-- snippet: excerpt PATH... -->`: every code line is in one of those
  files, which the build compiles (a `// ...` line stands for omitted lines);
- ```sh: every `make TARGET` it names is a Makefile target;
- ```text: program output or listings, not code.
"""
import os
import re
import subprocess
import sys

import ndx

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
MARKER = re.compile(r"<!-- snippet: (\w+) (.+?) -->")
LANGUAGES = ("python", "cpp", "c", "cmake", "sh", "text")


def blocks(path):
    lines = open(path).read().split("\n")
    found, i = [], 0
    while i < len(lines):
        if lines[i].startswith("```"):
            lang, start = lines[i][3:].strip(), i
            end = lines.index("```", i + 1)
            marker = MARKER.fullmatch(lines[start - 1].strip()) if start else None
            found.append({"file": os.path.relpath(path, ROOT), "lang": lang, "line": start + 1,
                          "code": "\n".join(lines[i + 1:end]),
                          "marker": marker.groups() if marker else None})
            i = end
        i += 1
    return found


def kind(block):
    return (block["marker"] or ("",))[0]


def where(block):
    return f"{block['file']}:{block['line']}"


def check_kind(block):
    assert block["lang"] in LANGUAGES, f"{where(block)}: unknown block language {block['lang']!r}"
    if block["lang"] in ("cpp", "c", "cmake"):
        assert kind(block) in ("project", "excerpt"), \
            f"{where(block)}: a {block['lang']} block needs a snippet marker"


def run_python(block):
    env = dict(os.environ)
    env["PYTHONPATH"] = os.path.dirname(os.path.dirname(ndx.__file__))
    env["MPLBACKEND"] = "Agg"
    env["PAGER"] = "cat"
    result = subprocess.run([sys.executable, "-c", block["code"]], cwd=ROOT, env=env,
                            capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, f"{where(block)}:\n{result.stderr[-3000:]}"
    return result.stdout


def normalized(line):
    return " ".join(line.split())


def code_lines(snippet):
    for line in snippet.split("\n"):
        stripped = line.strip()
        if not stripped or stripped.startswith("//"):
            continue  # blank lines, comments and `// ...` elisions
        yield normalized(re.sub(r"\s+//.*$", "", line))


def check_excerpt(block):
    text = ""
    for path in block["marker"][1].split():
        with open(os.path.join(ROOT, path)) as f:
            text += "\n".join(normalized(line) for line in f) + "\n"
    for line in code_lines(block["code"]):
        assert line in text, f"{where(block)}: not in {block['marker'][1]}: {line}"


def make_targets():
    makefile = open(os.path.join(ROOT, "Makefile")).read()
    return set(re.findall(r"^([\w-]+):", makefile, re.M))


def check_make_commands(block):
    named = re.findall(r"^make (\w[\w-]*)", block["code"], re.M)
    assert set(named) <= make_targets(), f"{where(block)}: no such make target in {named}"
    return named
