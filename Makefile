# Two commands on a fresh machine: `make run` and `make test`.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
# Python keeps the bytecode it compiles (in __pycache__, which git ignores) even where the
# environment says not to: every process of `make run` and `make test` (the worker, the CLI,
# a sandboxed workflow's imports) would otherwise compile each module it imports, every time.
unexport PYTHONDONTWRITEBYTECODE
# The extras each command installs into the one venv (docs/operations.md#installing):
# `make run` what it runs (the server, its embedded Temporal, LangGraph for the example);
# `make test`, `make lint` and `make typecheck` all of that and the test tools.
STAMP := $(VENV)/.installed
RUN_STAMP := $(VENV)/.installed-run

.PHONY: run test checked install lint typecheck node-tools copilotkit-tools web web-tools browser postgres clean bench faults

# uv installs what pip would, from the sources pip is configured with (tests/uv_pip.py reads
# them), in a fraction of pip's time; pip stays in the venv for what runs it (tests/test_wheel.py).
$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip

# uv comes into the venv on first use (a venv made before uv was used gets it too).
UV_INSTALL := ($(BIN)/python -c 'import uv' 2>/dev/null || $(BIN)/pip install --quiet uv) && \
	$(BIN)/python -m tests.uv_pip install --quiet --python $(BIN)/python

$(STAMP): pyproject.toml | $(BIN)/python
	$(UV_INSTALL) -e '.[test]'
	touch $@

$(RUN_STAMP): pyproject.toml | $(BIN)/python
	$(UV_INSTALL) -e '.[dev,langgraph,openai-agents,google-adk]'
	touch $@

install: $(STAMP)

## The demo assistant (and the web UI at /) on http://127.0.0.1:8000, Temporal UI on
## http://127.0.0.1:8233, the LangGraph example at /agents/langgraph, the OpenAI Agents SDK
## example at /agents/openai and the Google ADK example at /agents/adk: the modules of
## DEMO_AGENTS. AGENT_MODULES='["your.agents"]' make run serves yours instead.
DEMO_AGENTS := ["ag_ui_temporal.demo.agents", "ag_ui_temporal.examples.agents.email_graph", \
	"ag_ui_temporal.examples.agents.openai_email", "ag_ui_temporal.examples.agents.adk_email"]
run: $(RUN_STAMP) web
	AGENT_MODULES='$(or $(AGENT_MODULES),$(DEMO_AGENTS))' $(BIN)/ag-ui-temporal dev

tests/node/node_modules/.installed: tests/node/package.json tests/node/package-lock.json
	cd tests/node && npm ci --no-audit --no-fund --loglevel=error
	touch $@

node-tools: tests/node/node_modules/.installed

# CopilotKit's clients (react-core, its runtime, and the @ag-ui/client 0.0.59 they pin) in a
# project of their own: tests/node pins @ag-ui/client 1.0.0 for TanStack. SCARF_ANALYTICS=false
# keeps a dependency's install script from reporting to a server the tests cannot reach.
tests/copilotkit/node_modules/.installed: tests/copilotkit/package.json tests/copilotkit/package-lock.json
	cd tests/copilotkit && SCARF_ANALYTICS=false npm ci --no-audit --no-fund --loglevel=error
	touch $@

# Its browser page (React on CopilotKit's provider, bundled by esbuild; tests/copilotkit/test_browser.py).
COPILOTKIT_PAGE := tests/copilotkit/page/dist/index.html
$(COPILOTKIT_PAGE): tests/copilotkit/node_modules/.installed tests/copilotkit/build.mjs \
		tests/copilotkit/page/page.jsx tests/copilotkit/page/index.html
	cd tests/copilotkit && node build.mjs page/dist

copilotkit-tools: tests/copilotkit/node_modules/.installed $(COPILOTKIT_PAGE)

# The reference web UI (web/, React + Vite + @tanstack/ai-react), served by the gateway at /.
# Built into the package (ag_ui_temporal/web/, package data): a wheel built after this carries it.
WEB_DIST := ag_ui_temporal/web
WEB_SOURCES := $(shell find web/src examples/tools -type f 2>/dev/null) web/index.html \
	web/vite.config.ts

web/node_modules/.installed: web/package.json web/package-lock.json
	cd web && npm ci --no-audit --no-fund --loglevel=error
	touch $@

$(WEB_DIST)/index.html: web/node_modules/.installed $(WEB_SOURCES)
	cd web && npx --no-install vite build --logLevel error
	touch $@

web: $(WEB_DIST)/index.html

# The browser tests: Debian's chromium (never a test tool's download) + playwright-core.
SUDO := $(if $(filter 0,$(shell id -u)),,sudo)
/usr/bin/chromium:
	$(SUDO) apt-get update -qq
	DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq chromium >/dev/null

browser: /usr/bin/chromium

# The store's PostgreSQL tests: Debian's postgresql, whose binaries the tests run as a
# throwaway cluster of their own (tests/postgres.py). The package's default cluster is
# not used: it is dropped if the install created one. After chromium's install, not beside it:
# under `make -j` (`make test`) the two apt-gets would race for dpkg's lock.
/usr/lib/postgresql: | /usr/bin/chromium
	$(SUDO) apt-get update -qq
	DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq postgresql >/dev/null
	for v in $$(ls /usr/lib/postgresql); do $(SUDO) pg_dropcluster --stop $$v main || true; done

postgres: /usr/lib/postgresql

tests/web/node_modules/.installed: tests/web/package.json tests/web/package-lock.json
	cd tests/web && npm ci --no-audit --no-fund --loglevel=error
	touch $@

web-tools: browser web tests/web/node_modules/.installed

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

# mypy --strict with the pydantic plugin; what it checks is [tool.mypy] in pyproject.toml.
typecheck: $(STAMP)
	$(BIN)/mypy --num-workers auto

## Everything: lint, type check, then every test against real Temporal servers and real JS clients,
## on a pytest-xdist worker per core (each with its own servers), a whole module to a worker.
## TEST_WORKERS=0 runs them one after another in one process.
TEST_WORKERS ?= auto
test:
	$(MAKE) --no-print-directory -j4 --output-sync=target checked
	$(BIN)/pytest -q -n $(TEST_WORKERS) --dist loadscope --durations=25

# What the tests need and the checks before them, side by side: the installs wait on the
# network and the disk, mypy and ruff on the CPU (each target's output kept together).
checked: $(STAMP) node-tools copilotkit-tools web-tools postgres lint typecheck

clean:
	rm -rf $(VENV) .data .mypy_cache tests/node/node_modules tests/copilotkit/node_modules \
		tests/copilotkit/page/dist tests/web/node_modules web/node_modules $(WEB_DIST)

$(VENV)/.bench-installed: $(STAMP) pyproject.toml
	$(UV_INSTALL) -e '.[test,bench]'
	touch $@

## Decline/approve latency against their raw-Temporal floors, history events/bytes, billable
## actions and CPU per approval cycle, throughput vs LangGraph, a LangGraph graph here vs under
## ag-ui-langgraph, streaming delay, idle SSE streams, parked scale (~17 min on 2 cores):
## bench/results/latest.json + PNGs.
## BENCH_ARGS="--parked 10000" etc.; `.venv/bin/python -m bench.capacity` models the scale.
BENCH_ARGS ?=
bench: $(VENV)/.bench-installed
	$(BIN)/python -m bench.run $(BENCH_ARGS)

## The fault harness at full size on PostgreSQL: 100 flows (email approvals, expense chains,
## producer orders, expiring forms) while the Temporal dev server, two workers and the gateway
## are SIGKILLed 12 times (make test runs 12 flows, 4 kills). FAULTS_ARGS="--seed 3".
FAULTS_ARGS ?=
faults: $(STAMP) postgres
	$(BIN)/python -m tests.faults.harness --flows 100 --kills 12 $(FAULTS_ARGS)
