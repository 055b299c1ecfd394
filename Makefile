# ndx: the two quick-start commands are `make demo` and `make test`.
BUILD ?= build
ASAN_BUILD ?= build-asan
ASAN_PY_BUILD ?= build-asan-py
TSAN_BUILD ?= build-tsan
FUZZ_SECONDS ?= 60
FUZZ_SEED ?= 1
PREFIX ?= $(CURDIR)/_install
JOBS ?= $(shell nproc)
CMAKE_FLAGS ?= -G Ninja -DCMAKE_BUILD_TYPE=Release

VENV ?= .venv
PY = $(VENV)/bin/python

# One compiler for the CMake build and pip's build of the package, so ccache serves the
# second from the first (make's default CXX is g++; exported, CMake and pip see it).
export CXX

.PHONY: deps build install test test-cpp test-package test-python test-docs test-fuzz python docs \
	demo sanitize \
	sanitize-python tsan fuzz format clean

deps:
	./scripts/install-deps.sh

build: deps
	cmake -S . -B $(BUILD) $(CMAKE_FLAGS) -DCMAKE_INSTALL_PREFIX=$(PREFIX)
	cmake --build $(BUILD) -j $(JOBS)

install: build
	cmake --install $(BUILD) > /dev/null

# The whole test suite: a find_package(ndx) consumer project, the Python tests, the C++ tests,
# and a fixed-seed run of the fuzzer.
test: test-package test-python test-docs test-cpp test-fuzz

# The Python package, installed into $(VENV) with pip (scikit-build-core + CMake).
python: deps
	test -x $(PY) || python3 -m venv $(VENV)
	$(PY) -m pip install -q --disable-pip-version-check -r requirements-dev.txt
	$(PY) -m pip install -q --disable-pip-version-check --no-build-isolation .

test-python: python
	cd tests/python && ../../$(PY) -m pytest -q -p no:cacheprovider .

# The documentation site (mkdocs): the API pages generated from the registry and the
# docstrings (tools/gen_docs.py), the tutorials from docs/; --strict fails on any warning.
docs: python
	$(PY) tools/gen_docs.py
	$(PY) -m mkdocs build --strict -q -f mkdocs.yml -d $(CURDIR)/$(BUILD)/site
	@echo "docs: $(BUILD)/site/index.html"

test-docs: docs

# The fuzzer (tools/fuzz/ndx_fuzz.py) for as long as asked, e.g.
#   make fuzz FUZZ_SECONDS=1800 FUZZ_SEED=7
# Findings print with a --repro SEED:INDEX line; the report is out/fuzz-SEED.json.
fuzz: python
	mkdir -p out
	$(PY) tools/fuzz/ndx_fuzz.py --seconds $(FUZZ_SECONDS) --seed $(FUZZ_SEED) \
	  --report out/fuzz-$(FUZZ_SEED).json

# CI's fuzz: a fixed seed and call count, so every run makes the same 100,000 calls (about a
# minute here); capped at 15 minutes on a slow machine.
test-fuzz: python
	mkdir -p out
	$(PY) tools/fuzz/ndx_fuzz.py --calls 100000 --seconds 900 --seed 20261123 \
	  --report out/fuzz-ci.json

test-cpp: build
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS)

# C++ consumers of both packages: the CMake install under $(PREFIX) and the pip-installed
# ndx in $(VENV) (its CMake package lives in the wheel); then the wheel's contents.
test-package: install python
	cmake -S examples/cpp -B $(BUILD)/examples -G Ninja -DCMAKE_PREFIX_PATH=$(PREFIX)
	cmake --build $(BUILD)/examples
	$(BUILD)/examples/ndx_example_basics > /dev/null && echo "package consumer: ok"
	$(BUILD)/examples/ndx_custom_op > /dev/null && echo "custom op example: ok"
	cmake -S examples/cpp -B $(BUILD)/examples-pip -G Ninja \
	  -DCMAKE_PREFIX_PATH="$$(cd / && $(CURDIR)/$(PY) -m ndx --cmake-prefix-path)"
	cmake --build $(BUILD)/examples-pip
	$(BUILD)/examples-pip/ndx_example_basics > /dev/null && echo "pip package consumer: ok"
	rm -rf $(BUILD)/wheel
	$(PY) -m pip wheel -q --disable-pip-version-check --no-build-isolation --no-deps \
	  -w $(BUILD)/wheel .
	$(PY) tools/check_wheel.py $(BUILD)/wheel/ndx-*.whl

# The main job: train a network on scikit-learn's digits with ndx's Python API (Gluon,
# autograd), after the C++ examples built against the installed package.
demo: install python
	cmake -S examples/cpp -B $(BUILD)/examples -G Ninja -DCMAKE_PREFIX_PATH=$(PREFIX)
	cmake --build $(BUILD)/examples
	$(BUILD)/examples/ndx_example_basics
	$(BUILD)/examples/ndx_train_linear
	$(BUILD)/examples/ndx_custom_op
	$(PY) -m pip install -q --disable-pip-version-check -r requirements-demo.txt
	$(PY) examples/train_digits.py --out out/digits

# C++ tests under AddressSanitizer + UndefinedBehaviorSanitizer (Debug, separate build dir).
sanitize: deps
	cmake -S . -B $(ASAN_BUILD) -G Ninja -DCMAKE_BUILD_TYPE=Debug -DNDX_SANITIZE=ON
	cmake --build $(ASAN_BUILD) -j $(JOBS)
	cd $(ASAN_BUILD) && ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
	  ctest --output-on-failure -j $(JOBS)

# The Python extension under ASan + UBSan (RelWithDebInfo, its own build dir), with the
# interpreter preloading ASan's runtime: the whole Python suite, then the fuzzer for
# FUZZ_SECONDS. Leak checking is off: CPython keeps its interned objects to the end.
# allocator_may_return_null makes a refused huge allocation a MemoryError, as without ASan.
# libstdc++ is preloaded with ASan's runtime: the interpreter does not link it, and ASan must
# find the real __cxa_throw when it starts.
SAN_ENV = LD_PRELOAD="$$($(or $(CXX),g++) -print-file-name=libasan.so) \
	$$($(or $(CXX),g++) -print-file-name=libstdc++.so)" \
	ASAN_OPTIONS=detect_leaks=0:allocator_may_return_null=1:max_allocation_size_mb=8192 \
	UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 NDX_FUZZ_NO_RLIMIT=1 \
	PYTHONPATH=$(CURDIR)/$(ASAN_PY_BUILD)/pkg
sanitize-python: python
	cmake -S . -B $(ASAN_PY_BUILD) -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DNDX_SANITIZE=ON \
	  -DNDX_BUILD_PYTHON=ON -DPython_EXECUTABLE=$(CURDIR)/$(PY)
	cmake --build $(ASAN_PY_BUILD) -j $(JOBS) --target _core
	rm -rf $(ASAN_PY_BUILD)/pkg && mkdir -p $(ASAN_PY_BUILD)/pkg
	cp -R python/ndx $(ASAN_PY_BUILD)/pkg/ && rm -f $(ASAN_PY_BUILD)/pkg/ndx/_core*.so
	cp $(ASAN_PY_BUILD)/_core*.so $(ASAN_PY_BUILD)/pkg/ndx/
	ln -s $(CURDIR)/include $(ASAN_PY_BUILD)/pkg/ndx/include  # lib_api.h for library tests
	cd tests/python && $(SAN_ENV) ../../$(PY) -m pytest -q -p no:cacheprovider .
	mkdir -p out
	$(SAN_ENV) $(PY) tools/fuzz/ndx_fuzz.py --seconds $(FUZZ_SECONDS) --seed $(FUZZ_SEED) \
	  --timeout 120 --report out/fuzz-asan-$(FUZZ_SEED).json

# The threaded tests (tests/cpp/test_threads.cc and the other Threads/thread tests) under
# ThreadSanitizer: the registry, the storage pool, autograd's per-thread state, the FFI and
# the kernel thread pool.
tsan: deps
	cmake -S . -B $(TSAN_BUILD) -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DNDX_TSAN=ON
	cmake --build $(TSAN_BUILD) -j $(JOBS) --target ndx_tests
	TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1 \
	  $(TSAN_BUILD)/tests/cpp/ndx_tests --gtest_filter='Threads.*:Autograd.RecordingIsPerThread*:KernelThreads.*'

format:
	clang-format -i $$(git ls-files '*.h' '*.cc' '*.cpp')

clean:
	rm -rf $(BUILD) $(ASAN_BUILD) $(ASAN_PY_BUILD) $(TSAN_BUILD) $(PREFIX) $(VENV)
