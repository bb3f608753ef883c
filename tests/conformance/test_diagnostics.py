"""Diagnostics a learner can act on: a crash on start shows the exit status and the end of stderr,
garbage on stdout is shown as the garbage it was, a non-MCP HTTP answer as what it was."""

from __future__ import annotations

import io
import json
import sys
from collections.abc import Awaitable, Callable, MutableMapping
from pathlib import Path
from typing import Any

import anyio
import pytest

from jsonrpc_mcp.cli import load_target
from jsonrpc_mcp.http import McpHttpApp
from jsonrpc_mcp_conformance import HttpTarget, StdioTarget, check, load_spec
from jsonrpc_mcp_conformance._channel import _OMIT
from jsonrpc_mcp_conformance.cli import main
from jsonrpc_mcp_conformance.match import _short
from tests import timeouts

from ..http.support import REPO, serving

pytestmark = pytest.mark.anyio

SPEC = load_spec(check=False)
PICKY = Path(__file__).resolve().parent / "servers" / "picky.py"
EVERYTHING = REPO / "examples" / "everything" / "server.py"
REVISION = "2025-11-25"
PING = "lifecycle:ping:after-initialize"
FAULTY = [sys.executable, "-m", "jsonrpc_mcp_conformance.faultserver"]

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
        with anyio.fail_after(timeouts.LONG_RUN):
            run = await check(
                HttpTarget(f"{base}/mcp", timeout=2), revisions=[REVISION], only=[PING], spec=SPEC
            )
    (verdict,) = run.verdicts
    assert verdict.status == "error"
    said = " ".join(verdict.problems)
    assert "HTTP 501 (text/html)" in said and "<h1>501 Not Implemented</h1>" in said, said


async def test_a_crash_in_the_api_is_explained_too() -> None:
    target = StdioTarget([sys.executable, str(PICKY), "--crash"])
    with anyio.fail_after(timeouts.LONG_RUN):
        run = await check(target, revisions=[REVISION], only=[PING], spec=SPEC)
    (verdict,) = run.verdicts
    assert "exited with status 3" in verdict.problems[0]


def test_a_failure_shows_the_frames_sent_and_received(tmp_path: Path) -> None:
    report = tmp_path / "r.json"
    argv = ["--revision", REVISION, "--only", "jsonrpc:parse-error:trailing-comma", "--timeout", "0.5"]
    argv += ["--json", str(report)]
    code, text = _cli(*argv, "stdio", "--", sys.executable, str(PICKY), "--silent-invalid")
    assert code != 0
    assert "frames (> sent, < received):" in text
    assert '        > {"jsonrpc":"2.0","id":1,"method":"ping",}' in text
    (verdict,) = json.loads(report.read_text())["verdicts"]
    assert '> {"jsonrpc":"2.0","id":1,"method":"ping",}' in verdict["frames"]
    assert verdict["spec"]["url"].startswith("https://") and verdict["spec"]["quote"]


async def test_an_http_failure_shows_the_request_line_headers_and_the_answer() -> None:
    mcp_app = McpHttpApp(load_target(str(EVERYTHING)))
    async with serving(not_mcp, mcp_app=mcp_app, lifespan="off") as base:
        with anyio.fail_after(timeouts.LONG_RUN):
            run = await check(
                HttpTarget(f"{base}/mcp", timeout=2, auth_token="s3cret"),
                revisions=[REVISION],
                only=[PING],
                spec=SPEC,
            )
    (verdict,) = run.verdicts
    assert "> POST /mcp HTTP/1.1" in verdict.frames
    assert any(f.lower().startswith("> content-type: application/json") for f in verdict.frames)
    assert any(f.startswith('> {"jsonrpc":"2.0"') and '"initialize"' in f for f in verdict.frames)
    assert "< HTTP 501" in verdict.frames
    assert "< <html><body><h1>501 Not Implemented</h1></body></html>" in verdict.frames
    assert not any("s3cret" in frame for frame in verdict.frames)  # credentials stay out of reports
    assert any(f.lower() == "> authorization: bearer <redacted>" for f in verdict.frames)


def test_sentinels_are_words_in_reports() -> None:
    assert repr(_OMIT) == "absent"
    assert "object at" not in _short({"params": _OMIT, "id": [1, _OMIT]})


def test_the_runners_own_log_goes_to_the_log_file_not_the_report(tmp_path: Path) -> None:
    log = tmp_path / "run.log"
    argv = ["--revision", REVISION, "--only", PING, "--log", str(log)]
    code, text = _cli(*argv, "stdio", "--", *FAULTY, "--fault", "never-exits")
    assert code == 0, text
    assert "SIGTERM" not in text and "SIGKILL" not in text
    assert "sending SIGTERM" in log.read_text()
