# Engram: two commands do all the set-up (see README.md).
#   make demo   installs what is missing, builds in release mode, runs the built-in example
#   make test   installs what is missing, then runs the whole test suite
SWIFT ?= swift
SWIFT_FLAGS ?= -Xswiftc -warnings-as-errors

.PHONY: demo test setup build release lint format bench peers clean schemas mcp-e2e

setup:
	@./scripts/setup.sh

build: setup
	$(SWIFT) build $(SWIFT_FLAGS) --build-tests

release: setup
	$(SWIFT) build -c release $(SWIFT_FLAGS)

demo: release
	$$($(SWIFT) build -c release --show-bin-path)/engram demo

test: setup
	$(SWIFT) build $(SWIFT_FLAGS) --build-tests
	$(SWIFT) test $(SWIFT_FLAGS) --skip-build
	./scripts/mcp-e2e.sh

mcp-e2e: build
	./scripts/mcp-e2e.sh

lint:
	$(SWIFT) format lint --strict --recursive Package.swift Sources Tests Benchmarks

format:
	$(SWIFT) format --in-place --recursive Package.swift Sources Tests Benchmarks

schemas:
	./scripts/generate-migrations.sh

clean:
	rm -rf .build
