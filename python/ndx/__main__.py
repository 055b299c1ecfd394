"""python -m ndx: the version, the build configuration, and where the CMake package is.

    python -m ndx --version
    python -m ndx --show-config
    cmake -S app -B build -DCMAKE_PREFIX_PATH="$(python -m ndx --cmake-prefix-path)"
    cmake -S app -B build -Dndx_DIR="$(python -m ndx --cmake-dir)"
    g++ -O2 -std=c++17 -shared -fPIC -I"$(python -m ndx --include-dir)" my_lib.cc -o libmy.so
"""
import argparse
import sys

from . import __config__, __version__


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m ndx", description=__doc__.splitlines()[0])
    group = parser.add_mutually_exclusive_group(required=True)
    group.add_argument("--version", action="store_true", help="print ndx's version")
    group.add_argument("--show-config", action="store_true", help="print the build options")
    group.add_argument("--cmake-prefix-path", action="store_true",
                       help="print the prefix to add to CMAKE_PREFIX_PATH")
    group.add_argument("--cmake-dir", action="store_true",
                       help="print the directory holding ndxConfig.cmake")
    group.add_argument("--include-dir", action="store_true",
                       help="print the directory holding ndx/lib_api.h and mxnet/lib_api.h, "
                            "for building operator libraries (ndx.library.include_dir())")
    args = parser.parse_args(argv)
    try:
        if args.version:
            print(__version__)
        elif args.show_config:
            __config__.show()
        elif args.cmake_prefix_path:
            print(__config__.cmake_prefix_path())
        elif args.include_dir:
            from . import library
            print(library.include_dir())
        else:
            print(__config__.cmake_dir())
    except FileNotFoundError as err:
        print(err, file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
