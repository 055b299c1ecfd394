"""The type stubs of the generated modules (tools/gen_stubs.py) match the registry: an op added
without regenerating them fails here. The stubs parse, and declare every public name with its
parameters. The registry is read in a fresh interpreter: other tests load operator libraries,
whose ops join npx / nd / sym in this process only."""
import ast
import importlib.util
import json
import os
import subprocess
import sys

import pytest

import ndx

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
GEN_PATH = os.path.join(ROOT, "tools", "gen_stubs.py")


def _generator():
    spec = importlib.util.spec_from_file_location("gen_stubs", GEN_PATH)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


GEN = _generator()
ENV = dict(os.environ, PYTHONPATH=os.path.dirname(os.path.dirname(ndx.__file__)))

_NAMESPACE = """
import importlib, inspect, json, sys
m = importlib.import_module(sys.argv[1])
out = {}
for n in dir(m):
    if n.startswith("_"):
        continue
    try:
        out[n] = list(inspect.signature(getattr(m, n)).parameters)
    except (TypeError, ValueError):
        out[n] = None
print(json.dumps(out))
"""


def test_stubs_are_up_to_date():
    result = subprocess.run([sys.executable, GEN_PATH, "--check"], env=ENV, capture_output=True,
                            text=True, timeout=300)
    assert result.returncode == 0, result.stderr


@pytest.mark.parametrize("module_name", sorted(GEN.MODULES))
def test_stubs_declare_every_public_name_with_its_parameters(module_name):
    result = subprocess.run([sys.executable, "-c", _NAMESPACE, module_name], env=ENV,
                            capture_output=True, text=True, timeout=300, check=True)
    namespace = json.loads(result.stdout)
    with open(os.path.join(ROOT, "python", GEN.MODULES[module_name])) as f:
        tree = ast.parse(f.read())
    declared, functions = set(), {}
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            declared.add(node.name)
            if isinstance(node, ast.FunctionDef):
                functions[node.name] = node
        elif isinstance(node, ast.AnnAssign):
            declared.add(node.target.id)
        elif isinstance(node, ast.ImportFrom) or isinstance(node, ast.Import):
            declared.update(a.asname or a.name for a in node.names)
    assert set(namespace) <= declared, sorted(set(namespace) - declared)[:10]
    for name, node in functions.items():
        want = namespace.get(name)
        if name.startswith("_") or want is None:
            continue
        a = node.args
        got = [x.arg for x in a.posonlyargs + a.args] + ([a.vararg.arg] if a.vararg else []) \
            + [x.arg for x in a.kwonlyargs] + ([a.kwarg.arg] if a.kwarg else [])
        assert got == want, (name, got, want)


def test_the_package_is_marked_typed():
    assert os.path.exists(os.path.join(ROOT, "python", "ndx", "py.typed"))
