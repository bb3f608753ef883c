# Every target creates its own virtual environment on first use: nothing needs to be installed.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: venv test demo lint bench clean conformance-official

venv: $(STAMP)

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --disable-pip-version-check --upgrade pip
	$(PY) -m pip install --quiet --disable-pip-version-check -e '.[dev]'
	touch $(STAMP)

test: $(STAMP)
	$(PY) -m pytest -q

demo: $(STAMP)
	$(PY) examples/memory/demo.py

lint: $(STAMP)
	$(PY) -m ruff check jsonrpc_mcp jsonrpc_mcp_conformance tests examples bench
	$(PY) -m ruff format --check jsonrpc_mcp jsonrpc_mcp_conformance tests examples bench
	$(PY) -m mypy

# The benchmark suite: installs the bench and fast extras and its optional peers first (FastMCP into the venv or .cache/bench-fastmcp,
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
	$(PY) jsonrpc_mcp_conformance/official/run.py

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache
