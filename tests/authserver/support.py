"""The protected MCP server the authorization servers' tests (and the OAuth client's) talk to: a real
``python -m jsonrpc_mcp serve examples/everything/server.py --http --port 0 --auth-issuer ISSUER
--auth-jwt-jwks JWKS`` subprocess, whose URL (and so the resource, the audience its tokens need) is
read from its ``serving ... at URL`` line; and raw MCP requests with or without a bearer token."""

from __future__ import annotations

import contextlib
import re
import subprocess
import sys
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field

import httpx

from tests import timeouts

from ..http.support import INITIALIZED, JSON_HEADERS, REPO, initialize, request, session_headers, stop

EVERYTHING = REPO / "examples" / "everything" / "server.py"
START_TIMEOUT = timeouts.STARTUP  # a subprocess importing everything and binding its port
TIMEOUT = timeouts.STEP  # one HTTP exchange
_SERVING = re.compile(r"jsonrpc-mcp: serving .* at (\S+)$")


@dataclass
class ProtectedServer:
    """A running ``serve --http --auth-*``: its MCP endpoint URL and its stderr so far."""

    url: str
    process: subprocess.Popen[bytes]
    lines: list[str] = field(default_factory=list)

    def stderr(self) -> str:
        return "\n".join(self.lines)


@contextlib.contextmanager
def protected_server(issuer: str, jwks_url: str, *options: str) -> Iterator[ProtectedServer]:
    """``serve examples/everything/server.py --http --port 0`` verifying JWTs from ``issuer`` against
    ``jwks_url`` (more ``--auth-*`` or other ``serve`` options in ``options``); stopped on the way
    out (SIGINT, bounded wait, SIGKILL)."""
    command = [
        *(sys.executable, "-m", "jsonrpc_mcp", "serve", str(EVERYTHING), "--http", "--port", "0"),
        *("--auth-issuer", issuer, "--auth-jwt-jwks", jwks_url, *options),
    ]
    process = subprocess.Popen(command, cwd=REPO, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                               stderr=subprocess.PIPE)  # fmt: skip
    served = ProtectedServer("", process)
    ready = threading.Event()

    def drain() -> None:  # read every line (a pipe nobody reads could fill up and stall the server)
        assert process.stderr is not None
        for raw in process.stderr:
            line = raw.decode("utf-8", "replace").rstrip("\n")
            served.lines.append(line)
            found = _SERVING.search(line)
            if found and not served.url:
                served.url = found.group(1)
                ready.set()
        ready.set()  # the process ended

    reader = threading.Thread(target=drain, daemon=True)
    reader.start()
    try:
        if not ready.wait(START_TIMEOUT) or not served.url:
            raise RuntimeError(f"serve --http did not start:\n{served.stderr()}")
        yield served
    finally:
        stop(process)
        reader.join(START_TIMEOUT)
        if process.stderr is not None:
            process.stderr.close()


def bearer(token: str | None) -> dict[str, str]:
    return {} if token is None else {"authorization": f"Bearer {token}"}


def tools_list(url: str, token: str | None) -> httpx.Response:
    """initialize, notifications/initialized and tools/list with ``token`` (None: no Authorization
    header): the tools/list answer, or the first answer that was not a success."""
    with httpx.Client(timeout=TIMEOUT) as http:
        opened = http.post(url, json=initialize(), headers={**JSON_HEADERS, **bearer(token)})
        if opened.status_code != 200:
            return opened
        headers = {**session_headers(opened.headers["mcp-session-id"]), **bearer(token)}
        ready = http.post(url, json=INITIALIZED, headers=headers)
        if ready.status_code != 202:
            return ready
        return http.post(url, json=request(1, "tools/list"), headers=headers)
