"""``jsonrpc-mcp inspect TARGET``, run as a real subprocess against real servers (stdio and HTTP)."""

from __future__ import annotations

import contextlib
import http.server
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest

from tests import timeouts

from ..http.support import refused_port, spawned

REPO = Path(__file__).resolve().parents[2]
EVERYTHING = REPO / "examples" / "everything" / "server.py"
PAGED = Path(__file__).resolve().parent / "servers" / "paged.py"
TIMEOUT = timeouts.RUN  # the whole command: spawning a server, connecting, listing


def _inspect(*args: str) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(REPO), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    return subprocess.run(
        [sys.executable, "-m", "jsonrpc_mcp", "inspect", *args],
        cwd=REPO,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
    )


def _report(*args: str) -> dict[str, Any]:
    done = _inspect("--json", *args)
    assert done.returncode == 0, done.stderr
    report: dict[str, Any] = orjson.loads(done.stdout)
    return report


def _check_everything(report: dict[str, Any], version: str, transport: str) -> None:
    assert report["protocolVersion"] == version
    assert report["transport"] == transport
    assert report["serverInfo"]["name"] == "jsonrpc-mcp-everything"
    assert {"tools", "resources", "prompts"} <= set(report["capabilities"])
    tools = {tool["name"]: tool for tool in report["tools"]}
    assert tools["greet"]["inputSchema"]["properties"]["name"]["type"] == "string"
    assert tools["test_structured_output"]["outputSchema"]["type"] == "object"
    assert "test://static-text" in {resource["uri"] for resource in report["resources"]}
    assert [t["uriTemplate"] for t in report["resourceTemplates"]] == ["test://template/{id}/data"]
    prompts = {prompt["name"]: prompt for prompt in report["prompts"]}
    arguments = prompts["test_prompt_with_arguments"]["arguments"]
    assert [(a["name"], a.get("required")) for a in arguments] == [("arg1", True), ("arg2", True)]


@pytest.mark.parametrize(
    ("mode", "version", "era"),
    [("legacy", "2025-11-25", "handshake"), ("2026-07-28", "2026-07-28", "stateless")],
)
def test_inspect_a_server_file_over_stdio_in_both_eras(mode: str, version: str, era: str) -> None:
    report = _report("--mode", mode, str(EVERYTHING))
    _check_everything(report, version, "stdio")
    assert report["era"] == era


@pytest.mark.parametrize(("mode", "version"), [("legacy", "2025-11-25"), ("2026-07-28", "2026-07-28")])
def test_inspect_an_http_url_in_both_eras(mode: str, version: str) -> None:
    with spawned(EVERYTHING) as server:
        report = _report("--mode", mode, server.url + "/mcp")
    _check_everything(report, version, "http")


def test_inspect_a_command_after_dashes() -> None:
    report = _report("--mode", "legacy", "--", sys.executable, "-m", "jsonrpc_mcp", "serve", str(PAGED))
    assert report["serverInfo"] == {"name": "paged", "version": "0.1"}


def test_every_page_is_read_and_auto_falls_back_to_the_handshake() -> None:
    report = _report(str(PAGED))  # auto (the default) against a server of the handshake revisions only
    assert report["era"] == "handshake" and report["protocolVersion"] == "2025-11-25"
    assert [t["name"] for t in report["tools"]] == [*(f"tool{i}" for i in range(5)), "shift"]
    assert [r["uri"] for r in report["resources"]] == [f"res://{i}" for i in range(5)]
    assert len(report["resourceTemplates"]) == 5
    shift = report["tools"][-1]
    assert shift["inputSchema"]["properties"]["p"]["required"] == ["x", "y"]
    assert shift["outputSchema"]["properties"]["x"] == {"type": "integer"}


def test_the_text_report_reads_as_a_summary() -> None:
    done = _inspect(str(PAGED))
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert out.startswith("Server: paged 0.1\nProtocol: 2025-11-25 (handshake, over stdio)\n")
    assert "Capabilities: tools (listChanged), resources (subscribe, listChanged), prompts" in out
    assert "\nTools (6):\n  tool0: tool number 0\n    input: no arguments\n" in out
    assert "  shift: Moves a point right.\n    input schema:\n" in out
    assert "    output schema:\n" in out
    assert "\nResources (5):\n  res://0" in out
    assert "\nResource templates (5):\n  tpl0://{id}" in out
    assert "\nPrompts (1):\n  review: Asks for a review.\n    - code (required)\n    - language\n" in out


# -- failures: one line, exit status 1, no traceback -----------------------------------------------
def _fails(done: subprocess.CompletedProcess[str], *expected: str) -> None:
    assert done.returncode == 1, (done.stdout, done.stderr)
    assert done.stdout == ""
    assert "Traceback" not in done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("jsonrpc-mcp inspect: "), done.stderr
    for words in expected:
        assert words in lines[0], lines[0]


def test_an_unreachable_url() -> None:
    with refused_port() as port:
        url = f"http://127.0.0.1:{port}/mcp"  # nothing listens there
        _fails(_inspect("--timeout", "5", url), f"cannot reach {url}")


@contextlib.contextmanager
def _plain_http(post_status: int | None = None) -> Iterator[str]:
    """An HTTP server on 127.0.0.1 that is not an MCP server: it serves files and refuses POST
    (501, or ``post_status`` with a plain-text body)."""

    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:
            pass

        def do_POST(self) -> None:
            if post_status is None:
                self.send_error(501, "Unsupported method ('POST')")
                return
            self.send_response(post_status)
            self.send_header("content-type", "text/plain")
            self.send_header("content-length", "7")
            self.end_headers()
            self.wfile.write(b"go 'way")

    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Quiet)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}/mcp"
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join(10)


@pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])
def test_a_url_that_is_not_an_mcp_server(mode: str) -> None:
    with _plain_http() as url:
        _fails(_inspect("--timeout", "5", "--mode", mode, url), f"{url} is not an MCP endpoint: HTTP 501")


def test_a_url_refusing_without_a_json_rpc_body_suggests_a_token() -> None:
    with _plain_http(401) as url:
        done = _inspect("--timeout", "5", "--mode", "legacy", url)
    _fails(done, f"{url} refused the request: HTTP 401", "--auth oauth", "'Authorization: Bearer ...'")


def test_a_command_that_exits() -> None:
    code = "import sys; print('no server here', file=sys.stderr); sys.exit(3)"
    done = _inspect("--timeout", "5", "--", sys.executable, "-c", code)
    _fails(done, "the command exited or closed its output before answering", "(its stderr: no server here)")


def test_a_command_that_is_not_an_mcp_server() -> None:
    done = _inspect(
        "--timeout", "1", "--mode", "legacy", "--", sys.executable, "-c", "import sys; sys.stdin.read()"
    )
    _fails(done, "did not answer in time (is it an MCP server?)")


def test_a_missing_file_and_a_missing_command() -> None:
    _fails(_inspect("no/such/server.py"), "no such file: no/such/server.py")
    _fails(_inspect("--", "/no/such/command"), "no such command: /no/such/command")


@pytest.mark.anyio
@pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])
async def test_a_protected_server_with_and_without_a_token(mode: str) -> None:
    import anyio

    from jsonrpc_mcp import Server
    from jsonrpc_mcp.http import AccessToken, AuthSettings, McpHttpApp, StaticTokenVerifier

    from ..http.support import serving

    server = Server("guarded")

    @server.tool()
    def secret() -> str:
        return "s"

    app = McpHttpApp(server)
    with anyio.fail_after(TIMEOUT * 2):
        async with serving(app) as base:
            url = base + "/mcp"
            app.auth = AuthSettings(
                verifier=StaticTokenVerifier({"tok": AccessToken("tok", "cli")}),
                resource_server_url=url,
                authorization_servers=["https://auth.example.com/"],
            )
            refused = await anyio.to_thread.run_sync(_inspect, "--mode", mode, "--timeout", "5", url)
            allowed = await anyio.to_thread.run_sync(
                _inspect, "--json", "--mode", mode, "--header", "Authorization: Bearer tok", url
            )
    _fails(refused, f"{url} refused the request: HTTP 401: the server wants authorization", "--auth oauth")
    assert allowed.returncode == 0, allowed.stderr
    assert [tool["name"] for tool in orjson.loads(allowed.stdout)["tools"]] == ["secret"]


def test_a_header_is_checked_and_needs_a_url() -> None:
    done = _inspect("--header", "no colon", "http://127.0.0.1:1/mcp")
    assert done.returncode == 2 and "expected 'Name: value'" in done.stderr
    done = _inspect("--header", "A: b", str(PAGED))
    assert done.returncode == 2 and "--header needs an http(s):// URL" in done.stderr
