# Stagegraph: `make demo` and `make test` each install what is missing, configure,
# build, then run the demo / every test. Nothing else is needed on a fresh machine.
SHELL := /bin/bash
BUILD ?= build
BUILD_ASAN ?= build-asan
BUILD_TYPE ?= RelWithDebInfo
JOBS ?= $(shell nproc)
PYTHON := /usr/bin/python3
SUDO := $(shell [ "$$(id -u)" -eq 0 ] || echo sudo)

APT_PACKAGES := cmake ninja-build g++ make python3 python3-numpy python3-sklearn \
  libxnnpack-dev libpthreadpool-dev libcpuinfo-dev libflatbuffers-dev flatbuffers-compiler \
  libmimalloc-dev libgtest-dev googletest libbenchmark-dev nlohmann-json3-dev pkg-config valgrind \
  openjdk-17-jdk-headless junit4 libxxhash-dev python3-dev python3-venv
FUZZ_PACKAGES := clang libclang-rt-14-dev
NUMPY2_PACKAGES := python3-venv python3-pip
# aarch64: the cross toolchain, qemu, and the arm64 multiarch packages that can sit
# beside the amd64 ones; XNNPACK, pthreadpool and cpuinfo cannot, so their arm64
# packages are unpacked into $(BUILD_AARCH64)/sysroot instead of installed.
BUILD_AARCH64 ?= build-aarch64
AARCH64_PACKAGES := g++-aarch64-linux-gnu qemu-user libflatbuffers-dev:arm64 libmimalloc-dev:arm64 libgtest-dev:arm64
AARCH64_SYSROOT_PACKAGES := libxnnpack-dev libxnnpack0 libpthreadpool-dev libpthreadpool0 libcpuinfo-dev libcpuinfo0 libxxhash-dev
# The kernel tests (where the CPU-specific code is; the runtime's own unit tests are
# CPU-independent and half the cross-build's compile time: make test-aarch64 runs them).
AARCH64_SMOKE := sg_kernels_tests sg_xnnpack_tests
# End-to-end programs CI runs under qemu (all of them: make test-aarch64).
AARCH64_SMOKE_PROGRAMS := mlp,cnn,loops_gcd,recursion_fib,staged_if,loops_print_assert
# mobile/sizes.sh: callgrind's instruction counts.
SIZES_PACKAGES := valgrind

CMAKE_FLAGS := -G Ninja -DCMAKE_BUILD_TYPE=$(BUILD_TYPE) -DSG_WERROR=ON

.PHONY: test-tsan tsan-smoke tsan-build
.PHONY: python-wheel
.PHONY: test-serve
.PHONY: all deps deps-fuzz deps-aarch64 build build-aarch64 test test-aarch64 aarch64-smoke sizes demo test-asan asan-smoke test-numpy2 fuzz fuzz-build fuzz-run fuzz-smoke clean

all: build

# Idempotent: installs only the packages that are missing (nothing when all are present).
deps:
	@native=$$(dpkg --print-architecture); missing=""; for p in $(APT_PACKAGES); do \
	  case $$p in *:*) want=$${p##*:};; *) want=$$native;; esac; \
	  dpkg-query -W -f='$${Status} $${Architecture}\n' $$p 2>/dev/null \
	    | grep -Eq "^install ok installed ($$want|all)$$" || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
	  echo "installing:$$missing"; \
	  $(SUDO) apt-get update -qq && $(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing; \
	fi

deps-fuzz:
	@$(MAKE) --no-print-directory deps APT_PACKAGES="$(FUZZ_PACKAGES)"

$(BUILD)/build.ninja: | deps
	cmake -S . -B $(BUILD) $(CMAKE_FLAGS)

build: deps $(BUILD)/build.ninja
	cmake --build $(BUILD) -j $(JOBS)

test: build python-wheel
	ctest --test-dir $(BUILD) --output-on-failure -j $(JOBS)

# The stagegraph wheel (pyproject.toml, SPEC §14) built in $(BUILD) itself, so only
# the extension's sources compile, and installed in $(BUILD)/venv-py, where ctest's
# python.pytest runs tests/python on it.
python-wheel: build
	tests/python/build_wheel.sh $(BUILD)

# examples/serve (Ray Serve) on a real three-node Ray cluster on this machine:
# 4 replicas, SERVE_REQUESTS requests from concurrent clients checked bit for bit
# against an in-process run, a replica's process and a worker node killed under
# load, then throughput and latency (SERVE_BENCH_REQUESTS a configuration; 0 skips)
# written into SERVE_RESULTS. Ray comes from PyPI into $(BUILD)/venv-serve.
SERVE_REQUESTS ?= 20000
SERVE_BENCH_REQUESTS ?= 3000
SERVE_RESULTS ?= bench/RESULTS.md
test-serve: python-wheel
	tests/serve/make_venv.sh $(BUILD)
	$(BUILD)/venv-serve/bin/python tests/serve/serve_test.py --graph-compile $(BUILD)/tools/graph-compile \
	  --requests $(SERVE_REQUESTS) --bench-requests $(SERVE_BENCH_REQUESTS) $(if $(SERVE_RESULTS),--results $(SERVE_RESULTS))

# The eager module on NumPy 2.x (from PyPI, in build/venv-numpy2) beside Debian's 1.24.
test-numpy2:
	@$(MAKE) --no-print-directory deps APT_PACKAGES="$(NUMPY2_PACKAGES)"
	tests/numpy2/run.sh

# The whole test suite again under AddressSanitizer + UndefinedBehaviorSanitizer,
# built with clang at -O1 (mimalloc off: the sanitizers bring their own allocator;
# no micro-benchmarks). The libraries carry libFuzzer's coverage instrumentation as
# well, so the fuzz targets below link against this same build.
SAN_CMAKE_FLAGS := -G Ninja -DCMAKE_BUILD_TYPE=Debug -DCMAKE_C_FLAGS_DEBUG="-g -O1" -DCMAKE_CXX_FLAGS_DEBUG="-g -O1" \
  -DSG_WERROR=ON -DSG_SANITIZE=ON -DSG_WITH_MIMALLOC=OFF -DSG_BUILD_BENCH=OFF -DSG_BUILD_FUZZ=ON -DSG_WITH_CUDA=OFF
$(BUILD_ASAN)/build.ninja: | deps deps-fuzz
	CC=clang CXX=clang++ cmake -S . -B $(BUILD_ASAN) $(SAN_CMAKE_FLAGS)

test-asan: deps deps-fuzz $(BUILD_ASAN)/build.ninja
	cmake --build $(BUILD_ASAN) -j $(JOBS)
	ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
	  ctest --test-dir $(BUILD_ASAN) --output-on-failure -j $(JOBS)

# CI's short ASan + UBSan run: the tools and the fuzz targets only (no unit-test
# binaries), then the end-to-end suites that feed them hostile or broken input.
ASAN_SMOKE_TARGETS = graph-compile graph-run graph-inspect $(FUZZ_TARGETS)
ASAN_SMOKE_TESTS := ^e2e[.](test_hardening|test_bad_inputs|test_recursion_depth|test_shape_bugs|test_random|test_grad)$$
asan-smoke: deps deps-fuzz $(BUILD_ASAN)/build.ninja
	cmake --build $(BUILD_ASAN) -j $(JOBS) --target $(ASAN_SMOKE_TARGETS)
	ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
	  ctest --test-dir $(BUILD_ASAN) --output-on-failure -j $(JOBS) -R '$(ASAN_SMOKE_TESTS)'

# ThreadSanitizer: the runtime and its concurrency tests (sg_concurrency_tests: Sessions sharing a
# Program across threads, thread teams and pools, waves of concurrent nodes,
# cancellation from another thread), built with clang in $(BUILD_TSAN); neither
# the compiler nor the tools are built. XNNPACK and pthreadpool come from Debian
# uninstrumented: tests/tsan.supp says which reports that makes noise, and why.
# `tsan-smoke` runs a short subset, for CI.
BUILD_TSAN ?= build-tsan
TSAN_CMAKE_FLAGS := -G Ninja -DCMAKE_BUILD_TYPE=Debug -DCMAKE_C_FLAGS_DEBUG="-g -O1" -DCMAKE_CXX_FLAGS_DEBUG="-g -O1" \
  -DSG_WERROR=ON -DSG_TSAN=ON -DSG_WITH_MIMALLOC=OFF -DSG_BUILD_BENCH=OFF -DSG_WITH_CUDA=OFF
TSAN_FILTER ?= SpinTeam.*:Waves.*:Session.*:*Thread*:*Concurren*:*Cancel*:*Pool*:*Deadline*
TSAN_SMOKE_FILTER ?= SpinTeam.*:Session.SessionsShareAProgramAcrossThreads:Waves.IndependentBranchesRunAsOneWaveWithTheSameResults:*Cancel*
TSAN_OPTIONS_ALL := suppressions=$(CURDIR)/tests/tsan.supp halt_on_error=1 second_deadlock_stack=1 history_size=4
$(BUILD_TSAN)/build.ninja: | deps deps-fuzz
	CC=clang CXX=clang++ cmake -S . -B $(BUILD_TSAN) $(TSAN_CMAKE_FLAGS)

tsan-build: deps deps-fuzz $(BUILD_TSAN)/build.ninja
	cmake --build $(BUILD_TSAN) -j $(JOBS) --target sg_concurrency_tests

test-tsan: tsan-build
	TSAN_OPTIONS="$(TSAN_OPTIONS_ALL)" $(BUILD_TSAN)/tests/sg_concurrency_tests --gtest_brief=1 --gtest_filter='$(TSAN_FILTER)'

tsan-smoke: tsan-build
	TSAN_OPTIONS="$(TSAN_OPTIONS_ALL)" $(BUILD_TSAN)/tests/sg_concurrency_tests --gtest_brief=1 --gtest_filter='$(TSAN_SMOKE_FILTER)'

# Compiles the example MLP and CNN, makes random inputs, runs them with graph-run and
# prints the outputs beside eager mode's. Builds only what it runs: the three tools
# and the libraries they link (`make test` builds the rest: tests, benchmarks, the
# CUDA backend).
DEMO := $(BUILD)/demo
DEMO_TARGETS := graph-compile graph-run graph-inspect
demo: deps $(BUILD)/build.ninja
	cmake --build $(BUILD) -j $(JOBS) --target $(DEMO_TARGETS)
	@mkdir -p $(DEMO)
	@for ex in mlp cnn; do \
	  echo "== $$ex: graph-compile examples/$$ex.py"; \
	  $(BUILD)/tools/graph-compile examples/$$ex.py -o $(DEMO)/$$ex.sgraph || exit 1; \
	  $(BUILD)/tools/graph-inspect $(DEMO)/$$ex.sgraph || exit 1; \
	  rm -rf $(DEMO)/$$ex-in $(DEMO)/$$ex-eager $(DEMO)/$$ex-out; \
	  $(PYTHON) examples/make_inputs.py examples/$$ex.py $(DEMO)/$$ex-in --eager-out $(DEMO)/$$ex-eager || exit 1; \
	  args=""; for f in $(DEMO)/$$ex-in/*.npy; do args="$$args --input $$(basename $$f .npy)=$$f"; done; \
	  echo "== $$ex: graph-run"; \
	  $(BUILD)/tools/graph-run $(DEMO)/$$ex.sgraph $$args --output-dir $(DEMO)/$$ex-out || exit 1; \
	  echo "== $$ex: graph-run against eager mode (CPython + NumPy) on the same inputs"; \
	  $(PYTHON) tools/compare_npy.py $(DEMO)/$$ex-out $(DEMO)/$$ex-eager || exit 1; \
	done

# Fuzzing with libFuzzer (clang), in the sanitizer build of test-asan. Seeds: the
# example programs, graphs compiled from them, and .npy files. `fuzz` runs each
# target FUZZ_TIME seconds; `fuzz-smoke` a few.
FUZZ_TIME ?= 300
# One input running longer than this is a finding (a hang), reported at once.
FUZZ_UNIT_TIMEOUT ?= 30
FUZZ_TARGETS := fuzz_load fuzz_parse fuzz_npy fuzz_run
FUZZ_DIR := $(BUILD_ASAN)/fuzz
fuzz-build: deps deps-fuzz build $(BUILD_ASAN)/build.ninja
	cmake --build $(BUILD_ASAN) -j $(JOBS) --target $(FUZZ_TARGETS)
	@rm -rf $(FUZZ_DIR)/seeds && mkdir -p $(FUZZ_DIR)/seeds/{fuzz_load,fuzz_parse,fuzz_npy,fuzz_run}
	@for f in examples/*.py tests/programs/*.py; do cp $$f $(FUZZ_DIR)/seeds/fuzz_parse/$$(echo $$f | tr / _); done
	@$(PYTHON) tests/fuzz/deep_sources.py $(FUZZ_DIR)/seeds/fuzz_parse
	@for f in examples/*.py; do $(BUILD)/tools/graph-compile $$f -o $(FUZZ_DIR)/seeds/fuzz_load/$$(basename $$f .py).sgraph >/dev/null 2>&1 || true; done
	@for f in tests/programs/loops_*.py tests/programs/mlp.py; do \
	  $(BUILD)/tools/graph-compile $$f -o $(FUZZ_DIR)/seeds/fuzz_run/$$(basename $$f .py).sgraph >/dev/null 2>&1 || true; done
	@$(PYTHON) examples/make_inputs.py examples/mlp.py $(FUZZ_DIR)/seeds/fuzz_npy >/dev/null

# Executions per target are printed, and kept in $(FUZZ_DIR)/executions.txt.
FUZZ_DICT_fuzz_npy := tests/fuzz/npy.dict
FUZZ_DICT_fuzz_parse := tests/fuzz/parse.dict
fuzz-run: fuzz-build
	@set -o pipefail; : > $(FUZZ_DIR)/executions.txt; for t in $(FUZZ_TARGETS); do \
	  mkdir -p $(FUZZ_DIR)/corpus/$$t; \
	  echo "== $$t ($(FUZZ_TIME) s)"; \
	  dict=""; [ "$$t" = fuzz_npy ] && dict="-dict=$(FUZZ_DICT_fuzz_npy)"; \
	  [ "$$t" = fuzz_parse ] && dict="-dict=$(FUZZ_DICT_fuzz_parse)"; \
	  if $(BUILD_ASAN)/tests/fuzz/$$t -max_total_time=$(FUZZ_TIME) -timeout=$(FUZZ_UNIT_TIMEOUT) -print_final_stats=1 \
	       -rss_limit_mb=4096 $$dict -artifact_prefix=$(FUZZ_DIR)/$$t- \
	       $(FUZZ_DIR)/corpus/$$t $(FUZZ_DIR)/seeds/$$t > $(FUZZ_DIR)/$$t.log 2>&1; then \
	    tail -n 4 $(FUZZ_DIR)/$$t.log; \
	    execs=$$(sed -n 's/^stat::number_of_executed_units: *//p' $(FUZZ_DIR)/$$t.log | tail -n 1); \
	    echo "$$t: $${execs:-?} executions in $(FUZZ_TIME) s" | tee -a $(FUZZ_DIR)/executions.txt; \
	  else \
	    tail -n 80 $(FUZZ_DIR)/$$t.log; echo "fuzz: $$t failed; the input is named above, the whole log is $(FUZZ_DIR)/$$t.log"; exit 1; \
	  fi; \
	done; echo "== executions per target"; cat $(FUZZ_DIR)/executions.txt

fuzz:
	@$(MAKE) --no-print-directory fuzz-run

# aarch64: cross-build with Debian's toolchain and run the tests under qemu-aarch64.
deps-aarch64:
	@dpkg --print-foreign-architectures | grep -qx arm64 || \
	  { $(SUDO) dpkg --add-architecture arm64 && $(SUDO) apt-get update -qq; }
	@$(MAKE) --no-print-directory deps APT_PACKAGES="$(AARCH64_PACKAGES)"
	@if [ ! -f $(BUILD_AARCH64)/sysroot/.unpacked ]; then \
	  rm -rf $(BUILD_AARCH64)/sysroot && mkdir -p $(BUILD_AARCH64)/sysroot/debs && \
	  (cd $(BUILD_AARCH64)/sysroot/debs && apt-get download -q $(AARCH64_SYSROOT_PACKAGES:%=%:arm64)) && \
	  for d in $(BUILD_AARCH64)/sysroot/debs/*.deb; do dpkg -x $$d $(BUILD_AARCH64)/sysroot; done && \
	  touch $(BUILD_AARCH64)/sysroot/.unpacked; \
	fi

$(BUILD_AARCH64)/build.ninja: | deps-aarch64
	cmake -S . -B $(BUILD_AARCH64) -G Ninja -DCMAKE_BUILD_TYPE=$(BUILD_TYPE) -DSG_WERROR=ON \
	  -DCMAKE_TOOLCHAIN_FILE=cmake/aarch64-linux-gnu.cmake -DSG_AARCH64_SYSROOT=$(CURDIR)/$(BUILD_AARCH64)/sysroot \
	  -DSG_BUILD_BENCH=OFF -DSG_WITH_CUDA=OFF

build-aarch64: deps-aarch64 $(BUILD_AARCH64)/build.ninja
	cmake --build $(BUILD_AARCH64) -j $(JOBS)

# Everything on aarch64 under qemu: every unit test, then every end-to-end program
# (tests/programs: compiled and checked against eager mode on the host, run by the
# aarch64 graph-run under qemu-aarch64; mobile/aarch64_e2e.py).
AARCH64_E2E_ENV := SG_BUILD_DIR=$(CURDIR)/$(BUILD) SG_SOURCE_DIR=$(CURDIR) SG_AARCH64_BUILD_DIR=$(CURDIR)/$(BUILD_AARCH64) \
  PYTHONPATH=$(CURDIR)/compiler/python
# Not under qemu-user: the e2e suites (they exec the aarch64 tools directly; the e2e
# programs run below), death tests (they re-exec the test binary, which only qemu can
# run) and the two tests that time a cancel inside one long kernel (emulation makes
# the run's setup outlast their 10 ms deadline); all run natively in make test.
AARCH64_CTEST_EXCLUDE := ^e2e[._]|DeathTest|Interrupt[.](DeadlineEndsARunOfOneLongKernel|CancelLandsInsideALongKernel)
test-aarch64: build-aarch64 $(BUILD)/build.ninja
	cmake --build $(BUILD) -j $(JOBS) --target graph-compile graph-inspect
	ctest --test-dir $(BUILD_AARCH64) --output-on-failure -j $(JOBS) -E '$(AARCH64_CTEST_EXCLUDE)'
	$(AARCH64_E2E_ENV) $(PYTHON) mobile/aarch64_e2e.py

# CI: the runtime and kernels, the kernel unit tests cross-built and run under qemu,
# then a few end-to-end programs (AARCH64_SMOKE_PROGRAMS) and the quantized-weights
# test (tests/e2e/test_quantize.py: int8/int4 on the NEON dot kernel, qemu's default
# CPU having the dot-product extension) with the aarch64 graph-run.
aarch64-smoke: deps-aarch64 $(BUILD_AARCH64)/build.ninja $(BUILD)/build.ninja
	cmake --build $(BUILD_AARCH64) -j $(JOBS) --target graph-run $(AARCH64_SMOKE)
	cmake --build $(BUILD) -j $(JOBS) --target graph-compile graph-inspect
	@for t in $(AARCH64_SMOKE); do \
	  echo "== $$t (aarch64, qemu)"; \
	  qemu-aarch64 -E LD_LIBRARY_PATH=$(CURDIR)/$(BUILD_AARCH64)/sysroot/usr/lib/aarch64-linux-gnu \
	    $(BUILD_AARCH64)/tests/$$t --gtest_brief=1 || exit 1; \
	done
	@echo "== end-to-end programs (aarch64 graph-run, qemu): $(AARCH64_SMOKE_PROGRAMS)"
	$(AARCH64_E2E_ENV) SG_E2E_PROGRAMS=$(AARCH64_SMOKE_PROGRAMS) $(PYTHON) mobile/aarch64_e2e.py

# mobile/SIZES.md: stripped sizes of the core, the selective builds and the JNI
# library for x86-64 and aarch64, and callgrind's instruction counts (mobile/sizes.sh).
sizes: deps deps-aarch64 $(BUILD)/build.ninja
	@$(MAKE) --no-print-directory deps APT_PACKAGES="$(SIZES_PACKAGES)"
	BUILD=$(BUILD) BUILD_AARCH64=$(BUILD_AARCH64) JOBS=$(JOBS) mobile/sizes.sh

fuzz-smoke:
	@$(MAKE) --no-print-directory fuzz-run FUZZ_TIME=20

clean:
	rm -rf $(BUILD) $(BUILD_ASAN) $(BUILD_AARCH64) $(BUILD_TSAN)
