"""Diagnostics a learner can act on: a crash on start shows the exit status and the end of stderr,
garbage on stdout is shown as the garbage it was, a non-MCP HTTP answer as what it was."""

from __future__ import annotations

import io
import sys
from collections.abc import Awaitable, Callable, MutableMapping
from pathlib import Path
from typing import Any

import anyio
import pytest

from jsonrpc_mcp.cli import load_target
from jsonrpc_mcp.http import McpHttpApp
from jsonrpc_mcp_conformance import HttpTarget, StdioTarget, check, load_spec
from jsonrpc_mcp_conformance.cli import main

from ..http.support import REPO, serving

pytestmark = pytest.mark.anyio

SPEC = load_spec(check=False)
PICKY = Path(__file__).resolve().parent / "servers" / "picky.py"
EVERYTHING = REPO / "examples" / "everything" / "server.py"
REVISION = "2025-11-25"
PING = "lifecycle:ping:after-initialize"

Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]


def _cli(*args: str) -> tuple[int, str]:
    out = io.StringIO()
    return main([*args], out=out), out.getvalue()


def picky(option: str) -> list[str]:
    return [
        "--revision",
        REVISION,
        "--only",
        PING,
        "--timeout",
        "1",
        "stdio",
        "--",
        sys.executable,
        str(PICKY),
        option,
    ]


def test_a_crash_on_start_shows_the_exit_status_and_the_end_of_stderr() -> None:
    code, text = _cli(*picky("--crash"))
    assert code != 0
    why = next(line for line in text.splitlines() if line.strip().startswith("why:"))
    assert "exited with status 3" in why
    assert "cannot read config.toml: no such file" in why


def test_garbage_on_stdout_is_shown_as_garbage() -> None:
    code, text = _cli(*picky("--garbage"))
    assert code != 0
    why = next(line for line in text.splitlines() if line.strip().startswith("why:"))
    assert "no JSON-RPC message" in why and "Welcome to picky 1.0! Type 'help'." in why


async def not_mcp(scope: Scope, receive: Receive, send: Send) -> None:
    """Any request: 501 with an HTML page (a web server that is no MCP server)."""
    if scope["type"] != "http":
        return
    while (await receive()).get("more_body"):
        pass
    body = b"<html><body><h1>501 Not Implemented</h1></body></html>"
    headers = [(b"content-type", b"text/html; charset=utf-8"), (b"content-length", str(len(body)).encode())]
    await send({"type": "http.response.start", "status": 501, "headers": headers})
    await send({"type": "http.response.body", "body": body})


async def test_a_non_mcp_http_answer_is_shown_as_what_it_was() -> None:
    mcp_app = McpHttpApp(load_target(str(EVERYTHING)))
    async with serving(not_mcp, mcp_app=mcp_app, lifespan="off") as base:
        with anyio.fail_after(60):
            run = await check(
                HttpTarget(f"{base}/mcp", timeout=2), revisions=[REVISION], only=[PING], spec=SPEC
            )
    (verdict,) = run.verdicts
    assert verdict.status == "error"
    said = " ".join(verdict.problems)
    assert "HTTP 501 (text/html)" in said and "<h1>501 Not Implemented</h1>" in said, said


async def test_a_crash_in_the_api_is_explained_too() -> None:
    target = StdioTarget([sys.executable, str(PICKY), "--crash"])
    with anyio.fail_after(60):
        run = await check(target, revisions=[REVISION], only=[PING], spec=SPEC)
    (verdict,) = run.verdicts
    assert "exited with status 3" in verdict.problems[0]
