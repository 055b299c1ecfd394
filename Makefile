# ndx: the two quick-start commands are `make demo` and `make test`.
BUILD ?= build
ASAN_BUILD ?= build-asan
PREFIX ?= $(CURDIR)/_install
JOBS ?= $(shell nproc)
CMAKE_FLAGS ?= -G Ninja -DCMAKE_BUILD_TYPE=Release

VENV ?= .venv
PY = $(VENV)/bin/python

# One compiler for the CMake build and pip's build of the package, so ccache serves the
# second from the first (make's default CXX is g++; exported, CMake and pip see it).
export CXX

.PHONY: deps build install test test-cpp test-package test-python python demo sanitize format clean

deps:
	./scripts/install-deps.sh

build: deps
	cmake -S . -B $(BUILD) $(CMAKE_FLAGS) -DCMAKE_INSTALL_PREFIX=$(PREFIX)
	cmake --build $(BUILD) -j $(JOBS)

install: build
	cmake --install $(BUILD) > /dev/null

# The whole test suite: a find_package(ndx) consumer project, the Python tests, the C++ tests.
test: test-package test-python test-cpp

# The Python package, installed into $(VENV) with pip (scikit-build-core + CMake).
python: deps
	test -x $(PY) || python3 -m venv $(VENV)
	$(PY) -m pip install -q --disable-pip-version-check -r requirements-dev.txt
	$(PY) -m pip install -q --disable-pip-version-check --no-build-isolation .

test-python: python
	cd tests/python && ../../$(PY) -m pytest -q -p no:cacheprovider .

test-cpp: build
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS)

test-package: install
	cmake -S examples/cpp -B $(BUILD)/examples -G Ninja -DCMAKE_PREFIX_PATH=$(PREFIX)
	cmake --build $(BUILD)/examples
	$(BUILD)/examples/ndx_example_basics > /dev/null && echo "package consumer: ok"

# The main job: train a network on scikit-learn's digits with ndx's Python API (Gluon,
# autograd), after the C++ examples built against the installed package.
demo: install python
	cmake -S examples/cpp -B $(BUILD)/examples -G Ninja -DCMAKE_PREFIX_PATH=$(PREFIX)
	cmake --build $(BUILD)/examples
	$(BUILD)/examples/ndx_example_basics
	$(BUILD)/examples/ndx_train_linear
	$(PY) -m pip install -q --disable-pip-version-check -r requirements-demo.txt
	$(PY) examples/train_digits.py --out out/digits

# C++ tests under AddressSanitizer + UndefinedBehaviorSanitizer (Debug, separate build dir).
sanitize: deps
	cmake -S . -B $(ASAN_BUILD) -G Ninja -DCMAKE_BUILD_TYPE=Debug -DNDX_SANITIZE=ON
	cmake --build $(ASAN_BUILD) -j $(JOBS)
	cd $(ASAN_BUILD) && ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
	  ctest --output-on-failure -j $(JOBS)

format:
	clang-format -i $$(git ls-files '*.h' '*.cc' '*.cpp')

clean:
	rm -rf $(BUILD) $(ASAN_BUILD) $(PREFIX) $(VENV)
