"""docs/auth.md shows the whole authorization dance as a trace: every HTTP exchange the client makes,
recorded from a real run (``serve --http --auth-*`` serving examples/everything, the in-repo
authorization server of tests/authserver, the OAuth client with the headless user agent, all on
127.0.0.1).

The test records the run, renders it (origins named, random values replaced by what they are), and
fails when the block in docs/auth.md has drifted from what the code does.
``AUTH_TRACE_REGENERATE=1 pytest tests/test_auth_trace.py`` writes the block anew."""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlsplit

import anyio
import orjson
import pytest

from jsonrpc_mcp import Client
from jsonrpc_mcp.client.auth import HeadlessBrowser, OAuth
from jsonrpc_mcp.transports.http import _pool
from tests import timeouts

from .authserver.server import running_auth_server
from .authserver.support import protected_server

pytestmark = pytest.mark.anyio

DOC = Path(__file__).resolve().parents[1] / "docs" / "auth.md"
_BLOCK = re.compile(r"(<!-- trace: auth-dance -->\n```text\n)(?P<body>.*?)(```)", re.S)
REDIRECT = "http://127.0.0.1:33418/callback"
STEP = timeouts.STARTUP
# what a value stands for, by the name it travels under
_PLACEHOLDERS = {
    "client_id": "<registered client id>",
    "state": "<random state>",
    "code_challenge": "<S256 of the verifier>",
    "code_verifier": "<the verifier>",
    "code": "<code>",
    "iss": "<issuer>",
}


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


class _Recorder:
    def __init__(self) -> None:
        self.lines: list[str] = []
        self.names: dict[str, str] = {}

    def name(self, text: str) -> str:
        for real, shown in self.names.items():
            text = text.replace(real, shown)
        return text

    def url(self, url: str) -> str:
        parts = urlsplit(url)
        base = self.name(f"{parts.scheme}://{parts.netloc}{parts.path}")
        if not parts.query:
            return base
        pairs = [f"{k}={_PLACEHOLDERS.get(k, self.name(v))}" for k, v in parse_qsl(parts.query)]
        return base + "?" + "&".join(pairs)

    def request(self, method: str, url: str, headers: dict[str, str], body: bytes | None) -> None:
        line = f"{method} {self.url(url)}"
        what = _body(headers.get("content-type", ""), body)
        if what:
            line += f"  {self.name(what)}"
        authorization = headers.get("authorization", "")
        if authorization:
            line += f"  [Authorization: {authorization.split(' ', 1)[0]} <{_credential(authorization)}>]"
        self.lines.append(line)

    def response(self, status: int, headers: dict[str, str]) -> None:
        line = f"  <- {status}"
        if "www-authenticate" in headers:
            line += f"  WWW-Authenticate: {self.name(headers['www-authenticate'])}"
        if "location" in headers:
            line += f"  Location: {self.url(headers['location'])}"
        self.lines.append(line)


def _credential(authorization: str) -> str:
    return "access token" if authorization.lower().startswith("bearer ") else "client id:secret"


def _body(content_type: str, body: bytes | None) -> str:
    if not body:
        return ""
    if content_type.startswith("application/x-www-form-urlencoded"):
        form = parse_qsl(body.decode())
        return " ".join(f"{k}={_PLACEHOLDERS.get(k, v) if k != 'resource' else v}" for k, v in form)
    parsed: Any = orjson.loads(body)
    if isinstance(parsed, dict) and "jsonrpc" in parsed:
        return str(parsed.get("method") or "(a response)")
    if isinstance(parsed, dict):
        return "{" + ", ".join(parsed) + "}"
    return ""


async def _record() -> str:
    recorder = _Recorder()
    original = _pool.Pool.request

    async def recording(
        self: _pool.Pool, method: bytes, target: bytes, headers: Any, body: Any, **kw: Any
    ) -> Any:
        origin = self._origin
        url = f"{origin.scheme}://{origin.host_header.decode()}{target.decode()}"
        sent = {k.decode().lower(): v.decode() for k, v in headers}
        recorder.request(method.decode(), url, sent, body)
        response = await original(self, method, target, headers, body, **kw)
        recorder.response(response.status, response.headers)
        return response

    with (
        running_auth_server() as authorization_server,
        protected_server(
            authorization_server.issuer, authorization_server.jwks_url, "--auth-required-scope", "notes:read"
        ) as served,
    ):
        base = served.url.removesuffix("/mcp")
        recorder.names = {
            base: "https://mcp.example.com",
            authorization_server.base_url: "https://auth.example.com",
        }
        _pool.Pool.request = recording  # type: ignore[method-assign]
        try:
            auth = OAuth(agent=HeadlessBrowser(REDIRECT))
            with anyio.fail_after(STEP):
                async with Client.http(
                    served.url, auth=auth, transport_options={"get_stream": False}
                ) as client:
                    await client.call_tool("test_simple_text", {})
        finally:
            _pool.Pool.request = original  # type: ignore[method-assign]
    return "\n".join(recorder.lines) + "\n"


async def test_the_auth_dance_in_the_docs_is_what_the_client_does() -> None:
    trace = await _record()
    text = DOC.read_text(encoding="utf-8")
    found = _BLOCK.search(text)
    assert found is not None, "docs/auth.md has no '<!-- trace: auth-dance -->' block"
    if os.environ.get("AUTH_TRACE_REGENERATE"):
        DOC.write_text(text[: found.start("body")] + trace + text[found.end("body") :], encoding="utf-8")
        return
    assert found.group("body") == trace, (
        "docs/auth.md's auth-dance block has drifted from what the client does; "
        "regenerate it: AUTH_TRACE_REGENERATE=1 pytest tests/test_auth_trace.py"
    )
