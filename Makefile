# Tensor Workbench — the two commands of the README, plus benchmarks.
#
#   make         install what is missing, build (meson, in build/)
#   make run     install what is missing, build, open the window (build/app/twb)
#   make test    install what is missing, build, run every test suite (the GUI
#                suites each in an Xvfb of their own, see tests/meson.build), then
#                the engine and data suites under ASan/UBSan (without the CUDA
#                plugin: nvcc's minutes buy no host code to check) and under valgrind;
#                ends with one line "N passed, N failed"
#   make bench NAMES="..."   run benchmarks (bench/run); make bench-deps first
#   make fuzz [FUZZ_SECONDS=60]   run each file-parser fuzzer (tests/fuzz) that long
#   make keras-check   TensorFlow.js' Keras loader on what twb save and the designer
#                write (tools/keras-loader-check: installs node and its npm modules)
#   make clean   remove the build directories

SHELL := /bin/bash

PACKAGES := meson ninja-build pkg-config gcc libc6-dev libopenblas-dev libopenblas0-openmp libglib2.0-dev libjson-glib-dev libsqlite3-dev libgtk-4-dev librsvg2-common xvfb xauth xdotool valgrind python3 dataset-fashion-mnist \
	libhdf5-dev libzip-dev python3-h5py
PACKAGES += libprotobuf-c-dev protobuf-c-compiler
PACKAGES += libpng-dev
PACKAGES += python3-protobuf
# Data-parallel training (tw/distributed.h) and its two-rank tests.
PACKAGES += libopenmpi-dev openmpi-bin
BENCH_PACKAGES := python3-torch
# bench/run resnet50_step: torchvision's resnet50.
BENCH_PACKAGES += python3-torchvision

BUILD := build
BUILD_ASAN := build-asan
PYTHON := /usr/bin/python3

# Any sanitizer report fails the test that triggers it.
SANITIZER_ENV := \
	ASAN_OPTIONS=halt_on_error=1:abort_on_error=1:print_stacktrace=1:detect_leaks=1 \
	UBSAN_OPTIONS=halt_on_error=1:abort_on_error=1:print_stacktrace=1
# Valgrind runs about 20-50 times slower; one thread each keeps it within reach.
VALGRIND := valgrind --leak-check=full --error-exitcode=1 --errors-for-leak-kinds=definite,indirect
VALGRIND_ENV := OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1
VALGRIND_TIMEOUT_MULTIPLIER := 3

.PHONY: run test bench deps bench-deps build clean fuzz keras-check
.DEFAULT_GOAL := build

# From the build tree the engine does not find the CUDA plugin (built in
# kernels/cuda/, not beside libtw-engine.so as installed): name it.
CUDA_PLUGIN := $(BUILD)/kernels/cuda/libtw-cuda.so
run: build
	TW_CUDA_PLUGIN=$$([ -f $(CUDA_PLUGIN) ] && echo $(CUDA_PLUGIN)) $(BUILD)/app/twb

deps:
	@tools/install-deps $(PACKAGES)

bench-deps: deps
	@tools/install-deps $(BENCH_PACKAGES)

# Configure once (a half-configured directory is started afresh), then compile.
$(BUILD)/build.ninja: | deps
	rm -rf $(BUILD)
	meson setup $(BUILD)

build: deps $(BUILD)/build.ninja
	meson compile -C $(BUILD)

# Three phases; each runs even when an earlier one failed. tools/test-summary
# reads the meson-logs/testlog*.json of each and prints the final line.
test: deps
	@$(MAKE) --no-print-directory $(KERAS_LOADER)/node_modules/.package-lock.json || \
	  echo "keras_loader: TensorFlow.js' modules could not be installed (no npm registry?); that suite skips"
	@status_all=0; status_asan=0; status_valgrind=0; \
	rm -f $(BUILD)/meson-logs/testlog*.json $(BUILD_ASAN)/meson-logs/testlog*.json; \
	echo "== 1/3: all suites ($(BUILD))"; \
	{ [ -f $(BUILD)/build.ninja ] || { rm -rf $(BUILD) && meson setup $(BUILD); }; } && \
	  meson compile -C $(BUILD) && \
	  meson test -C $(BUILD) --print-errorlogs || status_all=$$?; \
	echo "== 2/3: engine and data suites under AddressSanitizer and UBSan ($(BUILD_ASAN))"; \
	{ [ -f $(BUILD_ASAN)/build.ninja ] || { rm -rf $(BUILD_ASAN) && \
	    meson setup $(BUILD_ASAN) -Db_sanitize=address,undefined -Dbuildtype=debugoptimized \
	      -Dcuda=disabled; }; } && \
	  meson compile -C $(BUILD_ASAN) && \
	  $(SANITIZER_ENV) meson test -C $(BUILD_ASAN) --suite engine --suite data --print-errorlogs || status_asan=$$?; \
	echo "== 3/3: engine and data suites under valgrind ($(BUILD))"; \
	[ -f $(BUILD)/build.ninja ] && \
	  $(VALGRIND_ENV) meson test -C $(BUILD) --suite engine --suite data --print-errorlogs \
	    --wrapper '$(VALGRIND)' --timeout-multiplier $(VALGRIND_TIMEOUT_MULTIPLIER) || status_valgrind=$$?; \
	echo "== summary"; \
	$(PYTHON) tools/test-summary \
	  "all suites:$$status_all:$(BUILD)/meson-logs/testlog.json" \
	  "engine and data under sanitizers:$$status_asan:$(BUILD_ASAN)/meson-logs/testlog.json" \
	  "engine and data under valgrind:$$status_valgrind:$(BUILD)/meson-logs/testlog-valgrind.json"

bench: bench-deps build
	@[ -x bench/run ] || { echo "bench/run is not there yet: no benchmarks to run" >&2; exit 1; }
	bench/run $(NAMES)

# The file parsers' libFuzzer targets (tests/fuzz), built by clang with ASan
# and UBSan in $(BUILD_FUZZ). Each runs FUZZ_SECONDS on a working corpus in
# $(BUILD_FUZZ)/corpus seeded from tests/fuzz/corpus; no single allocation may
# pass 64 MB (inputs are at most a few KB). An input that crashes is written
# into tests/fuzz/corpus/<target>/ as crash-*, where the fuzz_replay test
# keeps running it: fix the parser and commit the file.
FUZZ_SECONDS ?= 60
FUZZ_TARGETS := idx npy csv safetensors model_json graph_json graph_file run_store keras_archive keras_h5
FUZZ_TARGETS += keras_functional
FUZZ_TARGETS += tfrecord tb_event
FUZZ_TARGETS += graph_view
FUZZ_TARGETS += designer_doc
FUZZ_TARGETS += sweep_spec
FUZZ_TARGETS += hparams_json
FUZZ_TARGETS += markdown
FUZZ_TARGETS += graph_def
FUZZ_TARGETS += graph_def_read
FUZZ_PACKAGES := clang libclang-rt-14-dev libomp-14-dev
BUILD_FUZZ := build-fuzz

fuzz: deps
	@tools/install-deps $(FUZZ_PACKAGES)
	@{ [ -f $(BUILD_FUZZ)/build.ninja ] || { rm -rf $(BUILD_FUZZ) && \
	    CC=clang meson setup $(BUILD_FUZZ) -Db_sanitize=address,undefined -Db_lundef=false \
	      -Dbuildtype=debugoptimized '-Dc_args=-fsanitize=fuzzer-no-link -fno-sanitize-recover=all'; }; } && \
	  meson compile -C $(BUILD_FUZZ) $(addprefix fuzz_,$(FUZZ_TARGETS))
	@status=0; for t in $(FUZZ_TARGETS); do \
	  echo "== fuzz_$$t for $(FUZZ_SECONDS) s"; \
	  mkdir -p $(BUILD_FUZZ)/corpus/$$t; \
	  UBSAN_OPTIONS=print_stacktrace=1 $(BUILD_FUZZ)/tests/fuzz/fuzz_$$t -max_total_time=$(FUZZ_SECONDS) \
	    -malloc_limit_mb=64 -dict=tests/fuzz/$$t.dict -print_final_stats=1 \
	    -artifact_prefix=tests/fuzz/corpus/$$t/crash- $(BUILD_FUZZ)/corpus/$$t tests/fuzz/corpus/$$t \
	    || { status=1; echo "fuzz_$$t failed: its input is in tests/fuzz/corpus/$$t/"; }; \
	done; exit $$status

# The keras_loader suite (tests/test_keras_loader.c) with what it needs: node
# and npm (Debian's nodejs and npm when there is no node), and TensorFlow.js'
# Keras loader as pinned in tools/keras-loader-check/package-lock.json
# (npm ci; node_modules/ is not committed). make test installs them too where
# it can and runs the suite, which skips where they are missing (no npm
# registry reachable).
KERAS_LOADER := tools/keras-loader-check
keras-check: build $(KERAS_LOADER)/node_modules/.package-lock.json
	meson test -C $(BUILD) --suite keras_loader --print-errorlogs -v

# npm writes node_modules/.package-lock.json: installed again when the
# committed lock file is newer.
$(KERAS_LOADER)/node_modules/.package-lock.json: $(KERAS_LOADER)/package-lock.json
	@command -v node >/dev/null && command -v npm >/dev/null || tools/install-deps nodejs npm
	cd $(KERAS_LOADER) && timeout 300 npm ci --no-audit --no-fund

clean:
	rm -rf $(BUILD) $(BUILD_ASAN) $(BUILD_FUZZ)
