"""The public API: what ``__all__`` promises exists, and importing the package stays light.

Start-up cost is pinned by what gets loaded, not by timings: ``import jsonrpc_mcp`` loads no
subpackage, and a stdio server started with ``jsonrpc-mcp serve`` never loads jsonschema (until an
instance is rejected), the client, the HTTP stack or argparse.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import anyio
import pytest

import jsonrpc_mcp
from tests import timeouts


@pytest.mark.parametrize("name", jsonrpc_mcp.__all__)
def test_every_name_in_all_exists(name: str) -> None:
    assert getattr(jsonrpc_mcp, name) is not None


def test_all_has_the_documented_names() -> None:
    documented = {
        "Server", "Client", "Context", "Arg", "ToolError", "ToolResult", "ResourceContent", "JsonRpcError",
    }  # fmt: skip
    assert documented <= set(jsonrpc_mcp.__all__)
    assert len(jsonrpc_mcp.__all__) == len(set(jsonrpc_mcp.__all__))


def test_dir_lists_the_public_names() -> None:
    assert set(jsonrpc_mcp.__all__) <= set(dir(jsonrpc_mcp))


def test_names_resolve_to_their_defining_modules() -> None:
    from jsonrpc_mcp.client.client import Client
    from jsonrpc_mcp.jsonrpc import JsonRpcError, codec
    from jsonrpc_mcp.jsonrpc.errors import JsonRpcError as Defined
    from jsonrpc_mcp.server import Server, Tool
    from jsonrpc_mcp.server._registry import Tool as DefinedTool
    from jsonrpc_mcp.server._server import Server as DefinedServer

    assert jsonrpc_mcp.Client is Client
    assert jsonrpc_mcp.Server is Server is DefinedServer
    assert JsonRpcError is Defined and Tool is DefinedTool
    assert codec.__name__ == "jsonrpc_mcp.jsonrpc.codec"


def test_one_unsupported_protocol_version_and_the_clients_own_name_for_no_common_version() -> None:
    from jsonrpc_mcp import client, errors

    # the root's name is the server-side wire error (-32022) errors defines, not a second class
    assert jsonrpc_mcp.UnsupportedProtocolVersion is errors.UnsupportedProtocolVersion
    assert issubclass(jsonrpc_mcp.UnsupportedProtocolVersion, jsonrpc_mcp.JsonRpcError)
    assert jsonrpc_mcp.UnsupportedProtocolVersion.code == -32022
    # the client failing to agree on a revision is another thing, under another name
    assert jsonrpc_mcp.NoCommonVersion is client.NoCommonVersion
    assert not issubclass(jsonrpc_mcp.NoCommonVersion, errors.UnsupportedProtocolVersion)
    assert not hasattr(client, "UnsupportedProtocolVersion")


def test_an_unknown_name_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="no_such_name"):
        getattr(jsonrpc_mcp, "no_such_name")  # noqa: B009
    with pytest.raises(ImportError):
        exec("from jsonrpc_mcp.server import no_such_name", {})


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


HEAVY = ("uvicorn", "starlette", "mcp", "jsonrpc_mcp_conformance", "httpx", "h11")


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


# What stays unloaded. Module names, not timings: a test that pins a number of milliseconds cannot
# be trusted on a shared machine, and what is never imported costs nothing.
NOT_FOR_IMPORT = (
    "jsonrpc_mcp.client",
    "jsonrpc_mcp.http",
    "jsonrpc_mcp.server",
    "jsonrpc_mcp.jsonrpc",
    "jsonschema",
    "asyncio",
    "anyio",
    "uvicorn",
    "h11",
)
NOT_FOR_STDIO_SERVING = (
    "jsonrpc_mcp.client",
    "jsonrpc_mcp.http",
    "jsonrpc_mcp.testing",
    "jsonschema",
    "referencing",
    "uvicorn",
    "h11",
    "argparse",
    "ctypes",  # only to flush C stdio buffers, when C code outside the standard library is loaded
    "anyio.from_thread",  # only worker threads reaching back to the loop need it
)


def _loaded(modules: set[str], forbidden: tuple[str, ...]) -> list[str]:
    return sorted(m for m in modules if any(m == f or m.startswith(f + ".") for f in forbidden))


def test_import_jsonrpc_mcp_loads_no_subpackage() -> None:
    modules = _modules_after("import jsonrpc_mcp")
    assert "jsonrpc_mcp" in modules
    assert _loaded(modules, NOT_FOR_IMPORT) == []


def test_the_server_api_does_not_load_the_client_or_jsonschema() -> None:
    modules = _modules_after("from jsonrpc_mcp import Server, Context, ToolResult, content")
    assert "jsonrpc_mcp.server._server" in modules
    assert _loaded(modules, NOT_FOR_STDIO_SERVING) == []


PROBE_SERVER = textwrap.dedent(
    """
    import sys

    from jsonrpc_mcp import Server

    server = Server("probe")


    @server.tool()
    def modules() -> str:
        \"\"\"The modules loaded so far, one per line.\"\"\"
        return "\\n".join(sorted(sys.modules))


    @server.tool()
    def count(n: int) -> str:
        \"\"\"Takes an integer.\"\"\"
        return str(n)
    """
)


async def _loaded_by_server(client: Any) -> set[str]:
    result = await client.call_tool("modules")
    return set(result["content"][0]["text"].splitlines())


@pytest.mark.anyio
async def test_a_stdio_server_starts_without_jsonschema_the_client_http_or_argparse(tmp_path: Path) -> None:
    from jsonrpc_mcp import Client

    probe = tmp_path / "probe.py"
    probe.write_text(PROBE_SERVER)
    command = [sys.executable, "-m", "jsonrpc_mcp", "serve", str(probe)]
    with anyio.fail_after(timeouts.RUN):
        async with Client.stdio(command, request_timeout=30, stderr=subprocess.DEVNULL) as client:
            modules = await _loaded_by_server(client)
            assert "jsonrpc_mcp.server._server" in modules and "_jsonrpc_mcp_target_probe" in modules
            assert _loaded(modules, NOT_FOR_STDIO_SERVING) == []
            assert (await client.call_tool("count", {"n": 3}))["content"][0]["text"] == "3"
            assert "jsonschema" not in await _loaded_by_server(client)
            # a rejected instance needs jsonschema's message: it is loaded then, and validation is the same
            rejected = await client.call_tool("count", {"n": "three"})
            assert rejected["isError"] is True
            assert rejected["content"][0]["text"].endswith("n: 'three' is not of type 'integer'")
            assert "jsonschema" in await _loaded_by_server(client)


# Loaded on first use only, so a plain stdio server's start-up never pays for them: the MRTR
# request-state crypto (2026-07-28 asks), URI templates (resource templates).
NOT_AT_START_UP = ("hashlib", "hmac", "secrets", "random", "jsonrpc_mcp.server._uritemplate")


def test_the_stdio_serve_path_loads_no_crypto_and_no_uri_templates_beyond_the_floor() -> None:
    floor = _modules_after("import asyncio, anyio, orjson; import anyio._backends._asyncio")
    serving = _modules_after(
        "from jsonrpc_mcp import Server; import jsonrpc_mcp.cli, jsonrpc_mcp.transports.stdio, "
        "anyio._backends._asyncio\n"
        "server = Server('s')\n"
        "@server.tool()\n"
        "async def echo(message: str) -> str:\n"
        "    '''Echo the message back.'''\n"
        "    return message"
    )
    assert "jsonrpc_mcp.server._session" in serving
    assert _loaded(serving - floor, NOT_AT_START_UP) == []
