"""The official MCP Python SDK's client uses the memory example server over stdio.

Served the documented way, ``python -m jsonrpc_mcp serve examples/memory/server.py --data-dir DIR``,
with a fresh data directory per test (``JSONRPC_MCP_MEMORY_DIR`` points there too, so nothing can
reach the per-user default directory).
"""

from __future__ import annotations

import sys
from pathlib import Path

import anyio
import pytest
from mcp import Client, StdioServerParameters

from .interop_support import CALL_TIMEOUT, CONNECT_TIMEOUT, REPO, sdk_params, text_blocks

pytestmark = pytest.mark.anyio

MEMORY_SERVER = REPO / "examples" / "memory" / "server.py"


@pytest.fixture
def memory_server(tmp_path: Path) -> StdioServerParameters:
    data_dir = tmp_path / "memory-data"
    command = [sys.executable, "-m", "jsonrpc_mcp", "serve", str(MEMORY_SERVER), "--data-dir", str(data_dir)]
    return sdk_params(command, env={"JSONRPC_MCP_MEMORY_DIR": str(data_dir)})


async def test_list_tools_gives_the_three_tools_with_their_annotations(
    memory_server: StdioServerParameters,
) -> None:
    with anyio.fail_after(CONNECT_TIMEOUT):
        async with Client(memory_server, read_timeout_seconds=CALL_TIMEOUT) as sdk:
            result = await sdk.list_tools()
    tools = {tool.name: tool for tool in result.tools}
    assert set(tools) == {"remember", "recall", "forget", "forget_tag"}
    recall = tools["recall"].annotations
    assert recall is not None and recall.read_only_hint is True
    forget = tools["forget"].annotations
    assert forget is not None and forget.destructive_hint is True
    limit = tools["recall"].input_schema["properties"]["limit"]
    assert (limit["minimum"], limit["maximum"]) == (1, 50)


async def test_remembered_text_is_found_by_recall(memory_server: StdioServerParameters) -> None:
    text = "The interop test parked the blue bicycle behind the library"
    with anyio.fail_after(CONNECT_TIMEOUT):
        async with Client(memory_server, read_timeout_seconds=CALL_TIMEOUT) as sdk:
            remembered = await sdk.call_tool("remember", {"text": text, "tags": ["interop"]})
            assert remembered.is_error is False
            recalled = await sdk.call_tool("recall", {"keyword": "bicycle"})
    assert recalled.is_error is False
    assert any(text in block for block in text_blocks(recalled.content))


async def test_remember_structured_content_passes_the_sdk_output_schema_check(
    memory_server: StdioServerParameters,
) -> None:
    # The SDK client validates structuredContent against the tool's outputSchema (from tools/list).
    with anyio.fail_after(CONNECT_TIMEOUT):
        async with Client(memory_server, read_timeout_seconds=CALL_TIMEOUT) as sdk:
            await sdk.list_tools()
            result = await sdk.call_tool("remember", {"text": "tea, not coffee", "tags": ["Drinks"]})
    assert result.is_error is False
    assert isinstance(result.structured_content, dict)
    assert result.structured_content["text"] == "tea, not coffee"
    assert isinstance(result.structured_content["id"], int)


async def test_recall_with_limit_over_50_is_a_tool_error_naming_limit(
    memory_server: StdioServerParameters,
) -> None:
    with anyio.fail_after(CONNECT_TIMEOUT):
        async with Client(memory_server, read_timeout_seconds=CALL_TIMEOUT) as sdk:
            result = await sdk.call_tool("recall", {"limit": 100})
    assert result.is_error is True
    [message] = text_blocks(result.content)
    assert "limit" in message
    assert "50" in message
