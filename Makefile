# Tactus: the two commands of the README (`make run`, `make test`) and the developer targets.
SHELL := /bin/bash
SYSTEM_PACKAGES := libmpg123-dev libsndfile1-dev libzmq3-dev libfftw3-dev libsqlite3-dev pkg-config librsvg2-bin sqlite3
PYTHON_PACKAGES := python3-zmq python3-numpy
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
SWIFT_BUILD_FLAGS ?=
RELEASE_BIN := .build/release/tactus
DATA := tactus-data

.PHONY: run test build release bench loadtest fuzz soak deps clean

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

## The load test: 8 clients submitting 500 small songs each while range queries run, against a
## fresh release `tactus serve`; prints latencies, the coordinator's memory, and fails when an
## accepted song did not finish. LOADTEST_FLAGS passes options (see `tactus-bench load --help`).
LOADTEST_FLAGS ?=
loadtest: release
	swift build -c release --product tactus-bench $(SWIFT_BUILD_FLAGS)
	.build/release/tactus-bench load $(LOADTEST_FLAGS)

## The long fault tests (minutes): kill -9 random workers while 300 songs are analysed, and
## kill -9 the coordinator during a batch of 100; TACTUS_SOAK_SONGS=N changes the batch size.
soak: deps
	swift build --build-tests $(SWIFT_BUILD_FLAGS)
	TACTUS_SOAK=1 swift test --skip-build $(SWIFT_BUILD_FLAGS) --filter SoakTests

## Fuzzing (libFuzzer, with AddressSanitizer): each target runs FUZZ_SECONDS (default 60) on a
## corpus grown from the committed seeds (Tests/Fixtures/fuzz/NAME); any crash, leak or timeout
## fails the run and is saved in .build/fuzz/crashes/NAME/ (leaks inside the system's C decoders
## are suppressed: Tests/Fixtures/fuzz/lsan.supp). Replay one with the normal build:
## `swift run tactus-fuzz-NAME FILE`. `make fuzz FUZZ_TARGETS=audio` runs one target.
FUZZ_SECONDS ?= 60
FUZZ_TARGETS ?= protocol audio
FUZZ_DIR := .build/fuzz
FUZZ_BUILD_FLAGS := -c debug --scratch-path $(FUZZ_DIR) -Xswiftc -sanitize=fuzzer,address -Xswiftc -parse-as-library \
	-Xswiftc -DTACTUS_LIBFUZZER
fuzz: deps
	@set -e; for t in $(FUZZ_TARGETS); do swift build $(FUZZ_BUILD_FLAGS) --product tactus-fuzz-$$t $(SWIFT_BUILD_FLAGS); done
	@set -e; for t in $(FUZZ_TARGETS); do \
		mkdir -p $(FUZZ_DIR)/corpus/$$t $(FUZZ_DIR)/crashes/$$t; \
		case $$t in protocol) max_len=8192;; *) max_len=65536;; esac; \
		echo "== fuzz $$t for $(FUZZ_SECONDS) s"; \
		LSAN_OPTIONS=suppressions=$(CURDIR)/Tests/Fixtures/fuzz/lsan.supp:print_suppressions=0 \
		$(FUZZ_DIR)/debug/tactus-fuzz-$$t $(FUZZ_DIR)/corpus/$$t Tests/Fixtures/fuzz/$$t \
			-max_total_time=$(FUZZ_SECONDS) -max_len=$$max_len -timeout=30 -rss_limit_mb=4096 \
			-print_final_stats=1 -artifact_prefix=$(FUZZ_DIR)/crashes/$$t/ \
		|| { echo "fuzz $$t: crash saved in $(FUZZ_DIR)/crashes/$$t/"; exit 1; }; \
	done

clean:
	swift package clean
