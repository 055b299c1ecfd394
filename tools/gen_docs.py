"""Writes the API reference pages of the docs (docs/api/*.md, not kept in git) from the live
operator registry and the Python docstrings; `make docs` runs it, then mkdocs.

    .venv/bin/python tools/gen_docs.py [--out docs/api]
"""
import argparse
import html
import importlib
import inspect
import os
import sys
import types

GENERATED = {  # page -> (title, module)
    "np.md": ("ndx.np", "ndx.numpy"),
    "npx.md": ("ndx.npx", "ndx.numpy_extension"),
    "nd.md": ("ndx.nd", "ndx.nd"),
    "sym.md": ("ndx.sym", "ndx.sym"),
}
PYTHON_MODULES = ["ndx.autograd", "ndx.gluon", "ndx.gluon.nn", "ndx.gluon.loss",
                  "ndx.gluon.data", "ndx.gluon.data.vision", "ndx.gluon.data.vision.transforms",
                  "ndx.gluon.model_zoo.vision", "ndx.gluon.model_zoo.model_store",
                  "ndx.gluon.contrib.nn", "ndx.gluon.contrib.estimator", "ndx.gluon.probability",
                  "ndx.module", "ndx.rnn", "ndx.callback", "ndx.monitor", "ndx.onnx",
                  "ndx.gluon.metric", "ndx.gluon.utils", "ndx.optimizer",
                  "ndx.lr_scheduler", "ndx.initializer", "ndx.kvstore", "ndx.profiler",
                  "ndx.random", "ndx.library", "ndx.operator", "ndx.util", "ndx.device",
                  "ndx.viz", "ndx.distributed", "ndx.distributed.launch", "ndx.io", "ndx.image",
                  "ndx.recordio", "ndx.runtime", "ndx.amp", "ndx.engine",
                  "ndx.contrib.quantization"]


def _text(doc):
    """A docstring as Markdown paragraphs: HTML-escaped, so no docstring can break the page."""
    doc = inspect.cleandoc(doc or "").strip()
    return html.escape(doc, quote=False).replace("*", "\\*").replace("_", "\\_") if doc else ""


def _signature(obj):
    try:
        return str(inspect.signature(obj))
    except (TypeError, ValueError):
        return "(...)"


def _entry(name, obj, level="###"):
    lines = [f"{level} `{name}`", ""]
    if callable(obj):
        lines += ["```text", f"{name}{_signature(obj)}", "```", ""]
    doc = _text(inspect.getdoc(obj))
    if doc:
        lines += [doc, ""]
    return lines


def module_page(title, module_name):
    module = importlib.import_module(module_name)
    lines = [f"# {title}", ""]
    doc = _text(module.__doc__)
    if doc:
        lines += [doc, ""]
    names = [n for n in sorted(dir(module)) if not n.startswith("_")]
    subs = [n for n in names if isinstance(getattr(module, n), types.ModuleType)]
    if subs:
        lines += ["Submodules: " + ", ".join(f"`{title}.{n}`" for n in subs), ""]
    for n in names:
        obj = getattr(module, n)
        if isinstance(obj, types.ModuleType) or not callable(obj):
            continue
        lines += _entry(n, obj)
    return "\n".join(lines) + "\n"


def operators_page():
    from ndx import _core
    lines = ["# Registered operators", "",
             "Every op in the registry, as `_core._list_ops()` reports it: its doc, inputs, "
             "aliases and params (name, type, default, doc). Ops named `_np_x` are `np.x`, "
             "`_npx_x` are `npx.x`; `_npi_` ops are wrapped in Python and `_backward_` ops are "
             "gradients.", ""]
    for name, doc, n_in, aliases, arguments, params in sorted(_core._list_ops()):
        lines += [f"### `{name}`", ""]
        if doc:
            lines += [_text(doc), ""]
        if aliases:
            lines += ["Aliases: " + ", ".join(f"`{a}`" for a in aliases), ""]
        if arguments:
            lines += ["| input | type | doc |", "| --- | --- | --- |"]
            lines += [f"| `{a}` | {_text(t)} | {_text(d)} |" for a, t, d in arguments]
            lines.append("")
        elif n_in:
            lines += [f"Inputs: {n_in}", ""]
        if params:
            lines += ["| param | type | default | doc |", "| --- | --- | --- | --- |"]
            lines += [f"| `{p}` | {_text(t)} | {_text(str(dv))} | {_text(d)} |"
                      for p, t, dv, d in params]
            lines.append("")
    return "\n".join(lines) + "\n"


def python_page():
    lines = ["# Python modules", "", "The hand-written Python API, from its docstrings.", ""]
    for module_name in PYTHON_MODULES:
        module = importlib.import_module(module_name)
        lines += [f"## {module_name}", ""]
        doc = _text(module.__doc__)
        if doc:
            lines += [doc, ""]
        public = getattr(module, "__all__", None) or [n for n in dir(module)
                                                      if not n.startswith("_")]
        for n in sorted(public):
            obj = getattr(module, n, None)
            if obj is None or isinstance(obj, types.ModuleType) or not callable(obj):
                continue
            lines += _entry(f"{module_name}.{n}", obj)
    return "\n".join(lines) + "\n"


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    here = os.path.dirname(os.path.abspath(__file__))
    parser.add_argument("--out", default=os.path.join(here, os.pardir, "docs", "api"))
    args = parser.parse_args(argv)
    os.makedirs(args.out, exist_ok=True)
    pages = {page: module_page(title, module) for page, (title, module) in GENERATED.items()}
    pages["operators.md"] = operators_page()
    pages["python.md"] = python_page()
    for page, text in pages.items():
        with open(os.path.join(args.out, page), "w") as f:
            f.write(text)
    print(f"wrote {len(pages)} pages to {os.path.normpath(args.out)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
