# Every target creates its own virtual environment on first use: nothing needs to be installed.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: venv test test-under-load demo lint docs bench clean conformance-official

venv: $(STAMP)

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --disable-pip-version-check --upgrade pip
	$(PY) -m pip install --quiet --disable-pip-version-check -e '.[dev]'
	touch $(STAMP)

# The suite, measuring which lines of jsonrpc_mcp and jsonrpc_mcp_conformance it runs: fails when the total
# falls under the floor ([tool.coverage.report] fail_under in pyproject.toml). The per-file figures after
# a run: $(PY) -m coverage report (or coverage html). PYTEST_ARGS passes options to pytest, e.g.
# `make test PYTEST_ARGS="tests/jsonrpc --cov-fail-under=0"` (a subset covers less than the floor).
test: $(STAMP)
	$(PY) -m pytest -q --cov --cov-report= $(PYTEST_ARGS)

# make test beside four CPU-bound processes (both cores saturated), as tests/under_load.sh documents.
test-under-load: $(STAMP)
	tests/under_load.sh $(MAKE) test PYTHON=$(PYTHON) VENV=$(VENV)

demo: $(STAMP)
	$(PY) examples/memory/demo.py

lint: $(STAMP)
	$(PY) -m ruff check jsonrpc_mcp conformance tests examples bench docs/*.py
	$(PY) -m ruff format --check jsonrpc_mcp conformance tests examples bench docs/*.py
	$(PY) -m mypy

# The API reference and the guides (mkdocs.yml), into site/: open site/index.html. Strict: any warning
# (a broken link or anchor, a docstring griffe cannot read) fails the build. The docs extra is
# installed into the venv on first use. (Not --quiet: it silences the warnings that strict counts.)
DOCS_STAMP := $(VENV)/.installed-docs

$(DOCS_STAMP): $(STAMP) pyproject.toml
	$(PY) -m pip install --quiet --disable-pip-version-check -e '.[docs]'
	touch $(DOCS_STAMP)

docs: $(DOCS_STAMP)
	NO_MKDOCS_2_WARNING=1 $(PY) -m mkdocs build --strict

# The benchmark suite: installs the bench and fast extras and its optional peers first (FastMCP into the
# venv or .cache/bench-fastmcp,
# Node 22 + the official TypeScript SDK into .cache/bench-ts), then runs everything (see bench/README.md).
# BENCH_ARGS passes options to bench/run.py, e.g. `make bench BENCH_ARGS=--skip-memory`.
# The editable install has no bytecode (and PYTHONDONTWRITEBYTECODE may forbid writing it on import),
# so compile it first: the servers then start as they would from a normal install.
bench: $(STAMP)
	$(PY) bench/peers.py install
	$(PY) -m compileall -q jsonrpc_mcp bench/servers
	$(PY) bench/run.py $(BENCH_ARGS)

# The official MCP conformance suite (Node 22 + npm @modelcontextprotocol/conformance, installed into
# .cache/conformance/ on first use) against examples/everything over HTTP.
conformance-official: $(STAMP)
	$(PY) conformance/jsonrpc_mcp_conformance/official/run.py

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache .coverage htmlcov
