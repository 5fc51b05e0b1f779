# Two commands on a fresh machine: `make run` and `make test`.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: run test install lint node-tools clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[test]'
	touch $(STAMP)

install: $(STAMP)

## The assistant on http://127.0.0.1:8000, Temporal UI on http://127.0.0.1:8233.
run: $(STAMP)
	$(BIN)/ag-ui-temporal dev

tests/node/node_modules/.installed: tests/node/package.json tests/node/package-lock.json
	cd tests/node && npm ci --no-audit --no-fund --loglevel=error
	touch $@

node-tools: tests/node/node_modules/.installed

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

## Everything: lint, then every test against real Temporal servers and real JS clients.
test: $(STAMP) node-tools lint
	$(BIN)/pytest -q

clean:
	rm -rf $(VENV) .data tests/node/node_modules
