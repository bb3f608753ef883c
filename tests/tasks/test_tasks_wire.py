"""The Tasks extension on the wire: examples/everything's task tools over real HTTP (uvicorn on
127.0.0.1) and a real stdio subprocess, driven by the project's client; and the routing headers
of tasks/* (Mcp-Name = taskId) checked by the HTTP server."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest

from jsonrpc_mcp import Client, JsonRpcError
from jsonrpc_mcp.server.tasks import TASKS
from jsonrpc_mcp.testing import envelope
from tests import timeouts

from ..examples.support import load_module
from ..http.support import serving

pytestmark = pytest.mark.anyio

REPO = Path(__file__).resolve().parents[2]
SERVER_PATH = REPO / "examples" / "everything" / "server.py"
TIMEOUT = timeouts.STARTUP
MODERN = "2026-07-28"


async def _accept(params: Any) -> dict[str, Any]:
    return {"action": "accept", "content": {"confirm": True, "name": "Wire"}}


async def _exercise(client: Client) -> None:
    assert client.server_extensions.get(TASKS) == {}
    result = await client.call_tool("slow_compute", {"seconds": 0.05, "label": "w"}, task=True)
    assert result["content"][0]["text"] == "computed w after 0.05s"
    assert (await client.call_tool("confirm_delete", {"filename": "f"}, task=True))["content"][0][
        "text"
    ] == "deleted f"
    assert (await client.call_tool("multi_input", task=True))["content"][0]["text"] == "got Wire and Wire"
    assert (await client.call_tool("test_tool_with_task", task=True))["content"][0]["text"].startswith(
        "Hello, Wire"
    )
    handle = await client.start_tool_task("slow_compute", {"seconds": 60})
    assert handle.task_id is not None and (await handle.get())["status"] == "working"
    await handle.cancel()
    assert (await handle.wait())["status"] == "cancelled"
    failed = await (await client.start_tool_task("protocol_error_job")).wait()
    assert failed["status"] == "failed" and failed["error"]["code"] == -32603
    with pytest.raises(JsonRpcError) as caught:
        await client.request("tasks/get", {"taskId": "unknown"})
    assert caught.value.code == -32021  # the client did not declare the extension on this request


@pytest.mark.asyncio_only  # uvicorn runs on asyncio only
async def test_tasks_over_streamable_http() -> None:
    everything = load_module(SERVER_PATH, "_everything_for_tasks_http")
    app = everything.create_server().http_app()
    handlers = {"elicitation/create": _accept}
    with anyio.fail_after(TIMEOUT):
        async with serving(app) as base:
            options: dict[str, Any] = {"capabilities": {"elicitation": {}}, "request_handlers": handlers}
            async with Client.http(f"{base}/mcp", mode=MODERN, **options) as client:
                await _exercise(client)
            async with Client.http(f"{base}/mcp", mode=MODERN, extensions={TASKS: {}}) as client:
                task = await client.start_tool_task("slow_compute", {"seconds": 60})
                async with client.listen({"taskIds": [task.task_id]}) as subscription:  # an SSE stream
                    assert subscription.acknowledged == {"taskIds": [task.task_id]}
                    await task.cancel()
                    method, params = await subscription.receive()
                assert method == "notifications/tasks" and params["status"] == "cancelled"
            async with Client.http(f"{base}/mcp", mode=MODERN) as plain:
                with pytest.raises(JsonRpcError) as caught:
                    await plain.call_tool("failing_job")
                assert caught.value.code == -32021


@pytest.mark.asyncio_only  # uvicorn runs on asyncio only
async def test_mcp_name_must_be_the_task_id_on_tasks_methods() -> None:
    everything = load_module(SERVER_PATH, "_everything_for_tasks_headers")
    app = everything.create_server().http_app()
    meta = envelope(capabilities={"extensions": {TASKS: {}}})
    with anyio.fail_after(TIMEOUT):
        async with serving(app) as base, httpx.AsyncClient(timeout=TIMEOUT) as http:
            url = f"{base}/mcp"

            async def post(method: str, params: dict[str, Any], name: str) -> httpx.Response:
                headers = {
                    "Accept": "application/json, text/event-stream",
                    "Content-Type": "application/json",
                    "MCP-Protocol-Version": MODERN,
                    "Mcp-Method": method,
                    "Mcp-Name": name,
                }
                body = {"jsonrpc": "2.0", "id": 1, "method": method, "params": {**params, "_meta": meta}}
                return await http.post(url, json=body, headers=headers)

            created = (
                await post(
                    "tools/call", {"name": "slow_compute", "arguments": {"seconds": 60}}, "slow_compute"
                )
            ).json()
            task_id = created["result"]["taskId"]
            good = await post("tasks/get", {"taskId": task_id}, task_id)
            assert good.status_code == 200 and good.json()["result"]["taskId"] == task_id
            bad = await post("tasks/get", {"taskId": task_id}, "another-task")
            assert bad.status_code == 400 and bad.json()["error"]["code"] == -32020
            assert (await post("tasks/cancel", {"taskId": task_id}, task_id)).status_code == 200


async def test_tasks_over_stdio() -> None:
    command = [sys.executable, "-m", "jsonrpc_mcp", "serve", str(SERVER_PATH)]
    options: dict[str, Any] = {
        "capabilities": {"elicitation": {}},
        "request_handlers": {"elicitation/create": _accept},
    }
    with anyio.fail_after(TIMEOUT):
        async with Client.stdio(
            command, cwd=REPO, stderr=subprocess.DEVNULL, mode=MODERN, **options
        ) as client:
            await _exercise(client)
