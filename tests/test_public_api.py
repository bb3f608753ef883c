"""The public API: what ``__all__`` promises exists, and importing the package stays light."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

import jsonrpc_mcp


@pytest.mark.parametrize("name", jsonrpc_mcp.__all__)
def test_every_name_in_all_exists(name: str) -> None:
    assert getattr(jsonrpc_mcp, name) is not None


def test_all_has_the_documented_names() -> None:
    documented = {
        "Server", "Client", "Context", "Arg", "ToolError", "ToolResult", "ResourceContent", "JsonRpcError",
    }  # fmt: skip
    assert documented <= set(jsonrpc_mcp.__all__)
    assert len(jsonrpc_mcp.__all__) == len(set(jsonrpc_mcp.__all__))


def test_star_import_gives_exactly_all() -> None:
    namespace: dict[str, object] = {}
    exec("from jsonrpc_mcp import *", namespace)
    assert set(namespace) - {"__builtins__"} == set(jsonrpc_mcp.__all__)


def _modules_after(statement: str) -> set[str]:
    code = f"import json, sys\n{statement}\nprint(json.dumps(sorted(sys.modules)))"
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=30, check=True
    )
    return set(json.loads(done.stdout))


HEAVY = ("uvicorn", "starlette", "mcp", "conformance", "httpx", "h11")


@pytest.mark.parametrize(
    "statement", ["import jsonrpc_mcp", "import jsonrpc_mcp.testing", "import jsonrpc_mcp.cli"]
)
def test_importing_does_not_pull_in_the_http_stack_the_sdk_or_the_harness(statement: str) -> None:
    modules = _modules_after(statement)
    assert "jsonrpc_mcp" in modules
    loaded = sorted(m for m in modules if m.split(".")[0] in HEAVY)
    assert loaded == []


def test_the_version_is_a_string() -> None:
    assert isinstance(jsonrpc_mcp.__version__, str)
    assert jsonrpc_mcp.__version__.count(".") == 2
