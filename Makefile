# Tactus: the two commands of the README (`make run`, `make test`) and the developer targets.
SHELL := /bin/bash
SYSTEM_PACKAGES := libmpg123-dev libsndfile1-dev libzmq3-dev libfftw3-dev libsqlite3-dev pkg-config librsvg2-bin
PYTHON_PACKAGES := python3-zmq python3-numpy
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
SWIFT_BUILD_FLAGS ?=
RELEASE_BIN := .build/release/tactus
DATA := tactus-data

.PHONY: run test build release bench deps clean

## Install the missing system packages (apt-get, through sudo when not root), and pyzmq and numpy.
deps:
	@missing=$$(for p in $(SYSTEM_PACKAGES); do dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q "ok installed" || echo $$p; done); \
	if [ -n "$$missing" ]; then \
		echo "Installing system packages:" $$missing; \
		$(SUDO) apt-get update -qq && DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq $$missing; \
	fi
	@# The protocol's Python examples (and the tests that run them) need pyzmq and numpy: from
	@# apt for the system's python3 (or when there is none), from pip for another python3 (pyenv).
	@if ! python3 -c 'import zmq, numpy' 2>/dev/null; then \
		python=$$(command -v python3); \
		if [ -z "$$python" ] || [ "$$python" = /usr/bin/python3 ]; then \
			echo "Installing system packages: $(PYTHON_PACKAGES)"; \
			$(SUDO) apt-get update -qq && DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq $(PYTHON_PACKAGES); \
		else \
			echo "Installing pyzmq and numpy for $$python"; \
			python3 -m pip install --quiet pyzmq numpy; \
		fi; \
	fi

build: deps
	swift build $(SWIFT_BUILD_FLAGS)

release: deps
	swift build -c release $(SWIFT_BUILD_FLAGS)

## Build the release binary and start the server: a coordinator on 127.0.0.1:5555 (clients),
## 5556 (workers) and 5557 (events), local workers, and the library under ./tactus-data.
run: release
	$(RELEASE_BIN) serve --data $(DATA)

## Build and run every test.
test: deps
	swift build --build-tests $(SWIFT_BUILD_FLAGS)
	swift test --skip-build $(SWIFT_BUILD_FLAGS)

## Benchmarks: decode throughput, detector accuracy and speed (see tactus-bench --help).
## Each name is a tactus-bench subcommand; `make bench BENCHES=decode` runs one.
BENCHES ?= decode store accuracy server
bench: release
	swift build -c release --product tactus-bench $(SWIFT_BUILD_FLAGS)
	@set -e; for b in $(BENCHES); do echo "== bench $$b"; .build/release/tactus-bench $$b; done

clean:
	swift package clean
