"""The type stubs of the generated modules (tools/gen_stubs.py) match the registry: an op added
without regenerating them fails here. The stubs parse, and declare every public name."""
import ast
import importlib.util
import inspect
import os

import pytest

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))


def _generator():
    spec = importlib.util.spec_from_file_location(
        "gen_stubs", os.path.join(ROOT, "tools", "gen_stubs.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


GEN = _generator()


@pytest.mark.parametrize("module_name", sorted(GEN.MODULES))
def test_stubs_are_up_to_date(module_name):
    path = os.path.join(ROOT, "python", GEN.MODULES[module_name])
    assert os.path.exists(path), f"{path} is missing: run tools/gen_stubs.py"
    with open(path) as f:
        assert f.read() == GEN.stub_text(module_name), \
            f"{GEN.MODULES[module_name]} is out of date: run tools/gen_stubs.py"


@pytest.mark.parametrize("module_name", sorted(GEN.MODULES))
def test_stubs_declare_every_public_name_with_its_parameters(module_name):
    module = importlib.import_module(module_name)
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
    public = {n for n in dir(module) if not n.startswith("_")}
    assert public <= declared, sorted(public - declared)[:10]
    for name, node in functions.items():
        if name.startswith("_"):
            continue
        try:
            want = list(inspect.signature(getattr(module, name)).parameters)
        except (TypeError, ValueError):
            continue
        a = node.args
        got = [x.arg for x in a.posonlyargs + a.args] + ([a.vararg.arg] if a.vararg else []) \
            + [x.arg for x in a.kwonlyargs] + ([a.kwarg.arg] if a.kwarg else [])
        assert got == want, (name, got, want)


def test_the_package_is_marked_typed():
    assert os.path.exists(os.path.join(ROOT, "python", "ndx", "py.typed"))
