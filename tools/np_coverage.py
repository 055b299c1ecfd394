"""How much of NumPy's namespace ndx.np covers: the README's coverage table.

    PYTHONPATH=python python tools/np_coverage.py        # markdown, for the README

NumPy's public functions are the callables of `numpy` that are not classes, submodules or
deprecated aliases (NumPy's own __all__ where it has one); ndx's are what `ndx.np` holds.
"""
import inspect
import sys

import numpy

import ndx

# Kept out of the count: NumPy's buffer-size, regex-file, datetime and build introspection
# helpers, which ndx does not mean to mirror.
OUT_OF_SCOPE = {
    "getbufsize", "setbufsize", "fromregex", "info", "show_config", "show_runtime",
    "get_include", "test", "nested_iters", "add_docstring", "add_newdoc", "add_newdoc_ufunc",
    "busday_count", "busday_offset", "is_busday", "datetime_as_string", "datetime_data",
    "get_array_wrap",
}


def numpy_functions():
    names = getattr(numpy, "__all__", None) or dir(numpy)
    out = []
    for n in names:
        if n.startswith("_") or n in OUT_OF_SCOPE:
            continue
        obj = getattr(numpy, n, None)
        if obj is None or inspect.isclass(obj) or inspect.ismodule(obj):
            continue
        if callable(obj):
            out.append(n)
    return sorted(set(out))


def main():
    fns = numpy_functions()
    have = [n for n in fns if hasattr(ndx.np, n)]
    missing = [n for n in fns if not hasattr(ndx.np, n)]
    print(f"ndx.np has {len(have)} of NumPy {numpy.__version__}'s {len(fns)} public functions "
          f"(buffer-size, regex-file, datetime and build-introspection helpers not counted).\n")
    print("| | names |")
    print("|---|---|")
    print(f"| in ndx.np ({len(have)}) | {', '.join(have)} |")
    print(f"| not yet ({len(missing)}) | {', '.join(missing)} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
