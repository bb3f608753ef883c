"""docs/learn.md is built from real traces: each of its trace blocks is what the memory example
sends today, recorded through ``jsonrpc-mcp trace`` (real subprocesses over stdio).

The test runs every scenario, renders its recording the way the tutorial shows it, and fails when a
block has drifted from what the server actually sends. ``LEARN_REGENERATE=1 pytest
tests/test_learn.py`` writes the blocks anew (the prose around them is left alone).
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio
import pytest

from jsonrpc_mcp.client import Client
from tests import timeouts

pytestmark = pytest.mark.anyio

REPO = Path(__file__).resolve().parents[1]
LEARN = REPO / "docs" / "learn.md"
MEMORY = REPO / "examples" / "memory" / "server.py"
TIMEOUT = timeouts.STARTUP
_BLOCK = re.compile(r"(<!-- trace: (?P<name>[a-z-]+) -->\n```text\n)(?P<body>.*?)(```)", re.S)
_LONG = 90
_TIME = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)?")


# -- rendering a recording as the tutorial shows it -------------------------------------------------
def _normal(value: Any, key: str = "") -> Any:
    """A frame with what changes from run to run (times, sealed state) and bulk (long texts, tool
    lists) replaced by a description of it."""
    if key == "requestState":
        return "<sealed by the server>"
    if key == "created_at":
        return "<time>"
    if key == "tools" and isinstance(value, list):
        return f"<{len(value)} tools: {', '.join(str(t.get('name')) for t in value)}>"
    if key == "inputSchema":
        return "<schema>"
    if isinstance(value, dict):
        return {k: _normal(v, k) for k, v in value.items()}
    if isinstance(value, list):
        return [_normal(v, key) for v in value]
    if isinstance(value, str):
        value = _TIME.sub("<time>", value)
        return value[:_LONG] + "..." if len(value) > _LONG else value
    return value


def render(recording: Path) -> str:
    lines = []
    for line in recording.read_text().splitlines():
        frame = json.loads(line)
        arrow = "->" if frame["from"] == "client" else "<-"
        lines.append(f"{arrow} {json.dumps(_normal(frame['message']), ensure_ascii=False)}")
        lines += [f"   ! {v}" for v in frame.get("violations", [])]
    return "\n".join(lines) + "\n"


# -- the scenarios ----------------------------------------------------------------------------------
@contextlib.asynccontextmanager
async def traced(recording: Path, data: Path, **options: Any) -> AsyncIterator[Client]:
    serve = [sys.executable, "-m", "jsonrpc_mcp", "serve", str(MEMORY), "--data-dir", str(data)]
    tap = [
        sys.executable,
        "-m",
        "jsonrpc_mcp",
        "trace",
        "--format",
        "jsonl",
        "--out",
        str(recording),
        "--",
        *serve,
    ]
    env = {**os.environ, "JSONRPC_MCP_MEMORY_DIR": str(data)}
    async with Client.stdio(tap, cwd=REPO, env=env, initialize=False, **options) as client:
        yield client


def _confirm(asked: anyio.Event | None = None, answer: bool = True) -> dict[str, Any]:
    async def elicit(params: dict[str, Any]) -> dict[str, Any]:
        if asked is not None:  # the user never answers: the client will cancel the call
            asked.set()
            await anyio.sleep_forever()
        return {"action": "accept", "content": {"confirm": answer}}

    return {"elicitation/create": elicit}


async def handshake(client: Client) -> None:
    await client.connect()
    await client.list_tools()
    await client.call_tool("remember", {"text": "Team standup moves to 9:30", "tags": ["work"]})


async def stateless(client: Client) -> None:
    await client.connect()
    await client.call_tool("remember", {"text": "Team standup moves to 9:30", "tags": ["work"]})


async def progress(client: Client) -> None:
    await client.connect()
    await client.call_tool("remember", {"text": "Team standup moves to 9:30", "tags": ["work"]})
    await client.call_tool("remember", {"text": "Book the train to Lyon", "tags": ["work"]})
    params = {"name": "forget_tag", "arguments": {"tag": "work"}, "_meta": {"progressToken": "forget-1"}}
    await client.request("tools/call", params)


async def cancellation(client: Client) -> None:
    await client.connect()
    await client.call_tool("remember", {"text": "Team standup moves to 9:30", "tags": ["work"]})
    asked, withdrawn = _asked_event
    async with anyio.create_task_group() as tg:

        async def call() -> None:
            with contextlib.suppress(Exception):
                await client.call_tool("forget_tag", {"tag": "work"})

        tg.start_soon(call)
        await asked.wait()  # the server is waiting for the user's answer: give up on the call
        tg.cancel_scope.cancel()
    await withdrawn.wait()  # the server withdrew its question
    await client.call_tool("recall", {"tag": "work", "limit": 1})  # nothing was forgotten


async def error_planes_2025_06_18(client: Client) -> None:
    await client.connect()
    with contextlib.suppress(Exception):
        await client.call_tool("recall", {"limit": 100})


async def error_planes_2025_11_25(client: Client) -> None:
    await client.connect()
    await client.call_tool("recall", {"limit": 100})


async def multi_round_trip(client: Client) -> None:
    await client.connect()
    await client.call_tool("remember", {"text": "Team standup moves to 9:30", "tags": ["work"]})
    await client.call_tool("forget_tag", {"tag": "work"})


_asked_event: list[anyio.Event] = []  # (the user was asked, the server withdrew the question)


async def _withdrawn(method: str, params: Any) -> None:
    if method == "notifications/cancelled":
        _asked_event[1].set()


ELICITING: dict[str, Any] = {"capabilities": {"elicitation": {}}}
SCENARIOS: dict[str, tuple[Callable[[Client], Awaitable[None]], Callable[[], dict[str, Any]]]] = {
    "handshake": (handshake, dict),
    "stateless": (stateless, lambda: {"mode": "2026-07-28"}),
    "progress": (progress, lambda: {**ELICITING, "request_handlers": _confirm()}),
    "cancellation": (
        cancellation,
        lambda: {**ELICITING, "request_handlers": _confirm(_asked_event[0]), "on_notification": _withdrawn},
    ),
    "error-plane-protocol": (error_planes_2025_06_18, lambda: {"protocol_version": "2025-06-18"}),
    "error-plane-tool": (error_planes_2025_11_25, dict),
    "multi-round-trip": (
        multi_round_trip,
        lambda: {"mode": "2026-07-28", **ELICITING, "request_handlers": _confirm()},
    ),
}


async def _run(name: str, tmp_path: Path) -> str:
    scenario, options = SCENARIOS[name]
    _asked_event[:] = [anyio.Event(), anyio.Event()]
    recording = tmp_path / f"{name}.jsonl"
    with anyio.fail_after(TIMEOUT):
        async with traced(recording, tmp_path / f"{name}-data", **options()) as client:
            await scenario(client)
    return render(recording)


def _blocks() -> dict[str, str]:
    return {m.group("name"): m.group("body") for m in _BLOCK.finditer(LEARN.read_text(encoding="utf-8"))}


def test_every_scenario_has_its_block_and_every_block_its_scenario() -> None:
    assert sorted(_blocks()) == sorted(SCENARIOS)


@pytest.mark.parametrize("name", sorted(SCENARIOS))
async def test_the_tutorial_shows_what_the_server_sends(name: str, tmp_path: Path) -> None:
    rendered = await _run(name, tmp_path)
    assert "   ! " not in rendered, rendered  # the example breaks no rule
    if os.environ.get("LEARN_REGENERATE"):
        text = LEARN.read_text(encoding="utf-8")

        def replace(match: re.Match[str]) -> str:
            body = rendered if match.group("name") == name else match.group("body")
            return match.group(1) + body + match.group(4)

        LEARN.write_text(_BLOCK.sub(replace, text), encoding="utf-8")
        return
    assert _blocks()[name] == rendered, (
        f"docs/learn.md's {name!r} block has drifted from what the server sends; "
        "regenerate it: LEARN_REGENERATE=1 pytest tests/test_learn.py"
    )
