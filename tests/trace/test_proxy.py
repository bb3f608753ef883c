"""``jsonrpc-mcp trace --http``: a reverse proxy in front of a real Streamable HTTP server (both
eras, SSE answers, the legacy HTTP+SSE transport), each its own process on 127.0.0.1."""

from __future__ import annotations

import contextlib
import json
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest

from jsonrpc_mcp.client import Client
from jsonrpc_mcp_conformance.trace.proxy import REDACTED, redact
from tests import timeouts
from tests.announced import TRACE_LINE, Output

from ..http.support import spawned, stop

pytestmark = pytest.mark.anyio

REPO = Path(__file__).resolve().parents[2]
EVERYTHING = REPO / "examples" / "everything" / "server.py"
TIMEOUT = timeouts.STARTUP
SECRET = "Bearer the-secret-token-1234"


@contextlib.contextmanager
def _proxy(upstream: str, out: Path, *options: str) -> Iterator[str]:
    command = [sys.executable, "-m", "jsonrpc_mcp", "trace", "--http", "--upstream", upstream]
    command += ["--port", "0", "--out", str(out), *options]
    process = subprocess.Popen(command, cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    output = Output(process.stderr)
    try:
        yield output.wait_for(TRACE_LINE, process).group("url").decode()
    finally:
        stop(process)
        output.close()


@pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])
async def test_a_client_through_the_proxy_works_and_the_trace_shows_http_and_frames(
    tmp_path: Path, mode: str
) -> None:
    out = tmp_path / "trace.txt"
    with spawned(EVERYTHING) as server, _proxy(f"{server.url}/mcp", out) as proxy:
        with anyio.fail_after(TIMEOUT):
            async with Client.http(f"{proxy}/mcp", mode=mode, headers={"Authorization": SECRET}) as client:
                tools = await client.list_tools()
                meta = {"progressToken": "p1"}
                params = {"name": "test_tool_with_progress", "arguments": {}, "_meta": meta}
                progress = await client.request("tools/call", params)
    assert len(tools) > 10 and progress.get("isError") is not True
    text = out.read_text()
    assert "== HTTP #1 POST /mcp" in text and "(to POST /mcp)" in text
    assert f"authorization: {REDACTED}" in text and "the-secret-token" not in text
    assert "<- server result" in text and "tools/list" in text
    assert "notifications/progress" in text  # an SSE event of the tools/call answer, annotated
    if mode == "2026-07-28":
        assert "mcp-method: tools/call" in text and "mcp-name: test_tool_with_progress" in text
        assert "[2026-07-28]" in text
    else:
        assert "mcp-session-id: " in text and "[2025-11-25]" in text
    assert "\n           ! " not in text, text  # the server broke no rule


async def test_the_legacy_http_sse_transport_through_the_proxy(tmp_path: Path) -> None:
    out = tmp_path / "trace.jsonl"
    with spawned(EVERYTHING) as server, _proxy(server.url, out, "--format", "jsonl") as proxy:
        with anyio.fail_after(TIMEOUT):
            async with Client.http(f"{proxy}/sse", legacy=True) as client:
                result = await client.call_tool("test_simple_text", {})
    assert "simple text" in json.dumps(result)
    records: list[dict[str, Any]] = [json.loads(line) for line in out.read_text().splitlines()]
    notes = [r["http"] for r in records if r["kind"] == "http"]
    assert any("SSE endpoint event" in str(n.get("response")) for n in notes)
    answers = [r for r in records if r["kind"] == "result"]
    assert {a.get("method") for a in answers} >= {"initialize", "tools/call"}  # answers paired on the stream
    assert all(a["latencyMs"] >= 0 for a in answers)


def test_an_unreachable_upstream_is_a_502_with_a_reason(tmp_path: Path) -> None:
    # a port held bound but not listening: connecting is refused, and no other server (the proxy's
    # own free port included) can take it meanwhile, as it could a port merely found free
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as held:
        held.bind(("127.0.0.1", 0))
        dead = f"http://127.0.0.1:{held.getsockname()[1]}/mcp"
        with _proxy(dead, tmp_path / "t.txt") as proxy:
            import urllib.error
            import urllib.request

            request = urllib.request.Request(f"{proxy}/mcp", data=b"{}", method="POST")
            with pytest.raises(urllib.error.HTTPError) as caught:
                urllib.request.urlopen(request, timeout=TIMEOUT)
    assert caught.value.code == 502
    assert b"upstream server did not answer" in caught.value.read()


def test_redaction_of_tokens_and_named_meta_keys() -> None:
    message = {
        "params": {"_meta": {"acme/key": "k", "ok": 1}, "access_token": "t", "list": [{"password": "p"}]}
    }
    assert redact(message, ["acme/key"]) == {
        "params": {
            "_meta": {"acme/key": REDACTED, "ok": 1},
            "access_token": REDACTED,
            "list": [{"password": REDACTED}],
        }
    }


def test_usage_errors() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "jsonrpc_mcp", "trace", "--http"],
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
    )
    assert (
        done.returncode == 2 and "--http needs --upstream" in done.stderr and "Traceback" not in done.stderr
    )
