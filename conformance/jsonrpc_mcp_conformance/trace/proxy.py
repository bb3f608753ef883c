"""The HTTP tap: a reverse proxy in front of a Streamable HTTP (or legacy HTTP+SSE) MCP server.

Theory of operation
-------------------
``jsonrpc-mcp trace --http --upstream URL --port N`` serves an ASGI app (:class:`TraceProxy`) on
127.0.0.1:N. The client is pointed at the proxy instead of the server; paths are forwarded as they
are, so ``http://127.0.0.1:N/mcp`` reaches ``<upstream origin>/mcp``. For each HTTP exchange:

1. the request is read whole (MCP request bodies are single JSON-RPC messages or batches), noted
   (method, path, the ``Mcp-*`` headers decoded, secrets redacted) and its body annotated as
   client frames;
2. it goes upstream unchanged but for the hop-by-hop headers and ``Host`` (the upstream's own);
3. the response head is passed back and noted (status, content type, session id), then its body
   is passed back chunk by chunk as it arrives, unchanged. A JSON body is annotated when complete;
   an SSE body event by event as each ``data:`` message completes, so a long-lived stream is
   annotated live.

Annotations (:class:`~.tap.Sink`) never change what is forwarded. Redaction applies to what is
written: ``Authorization``, ``Proxy-Authorization``, ``Cookie``, ``Set-Cookie`` and common token
fields are replaced by ``<redacted>``, and so are the ``_meta`` keys the user names.

A protected upstream: the proxy can authorize itself there (``--header``, ``--auth oauth``), so that
any client, one that cannot log in included, is traced through it. Those headers replace the
client's of the same name; with ``auth``, the proxy's token replaces the client's ``Authorization``
on every request but those for ``/.well-known/`` documents, and a challenge from the upstream runs
the flow and sends the request once more (the body is held whole, so it can be). The client never
sees the proxy's token, and an upstream 401 the proxy cannot answer is passed on as it came.
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anyio

from jsonrpc_mcp.transports.http._authz import AuthorizationError, is_challenge
from jsonrpc_mcp.transports.http._mcp_headers import decode_value
from jsonrpc_mcp.transports.http._pool import HttpTransportError, Pool, Response, split_url
from jsonrpc_mcp.transports.sse import SseParser

from .annotate import CLIENT, SERVER, Tracer
from .tap import Sink

if TYPE_CHECKING:
    from jsonrpc_mcp.transports.http._authz import HttpAuth

__all__ = ["TraceProxy", "redact"]

_HOP = {
    b"connection",
    b"keep-alive",
    b"proxy-connection",
    b"transfer-encoding",
    b"te",
    b"trailer",
    b"upgrade",
    b"host",
    b"content-length",
}
_SECRET_HEADERS = {"authorization", "proxy-authorization", "cookie", "set-cookie"}
_SECRET_FIELDS = {"access_token", "refresh_token", "id_token", "client_secret", "password", "token"}
REDACTED = "<redacted>"
_PROBE = b'{"jsonrpc":"2.0","id":"jsonrpc-mcp-authorization-probe","method":"ping"}'


def redact(value: Any, meta_keys: Iterable[str] = ()) -> Any:
    """``value`` with token fields and the named ``_meta`` keys replaced by ``<redacted>``."""
    names = set(meta_keys)

    def walk(node: Any, in_meta: bool) -> Any:
        if isinstance(node, dict):
            out = {}
            for key, item in node.items():
                if key in _SECRET_FIELDS or (in_meta and key in names):
                    out[key] = REDACTED
                else:
                    out[key] = walk(item, key == "_meta")
            return out
        if isinstance(node, list):
            return [walk(item, False) for item in node]
        return node

    return walk(value, False)


def _shown_headers(headers: Iterable[tuple[bytes, bytes]]) -> dict[str, str]:
    """Headers as a learner reads them: secrets redacted, ``Mcp-*`` values decoded."""
    shown: dict[str, str] = {}
    for raw_name, raw_value in headers:
        name = raw_name.decode("latin-1").lower()
        if name in _SECRET_HEADERS:
            shown[name] = REDACTED
        elif name.startswith("mcp-") or name == "last-event-id":
            decoded = decode_value(raw_value)
            shown[name] = decoded if decoded is not None else raw_value.decode("latin-1")
        elif name in ("content-type", "accept", "origin"):
            shown[name] = raw_value.decode("latin-1")
    return shown


class TraceProxy:
    """An ASGI app forwarding every request to ``upstream`` and annotating the traffic."""

    def __init__(
        self,
        upstream: str,
        sink: Sink,
        *,
        schema_dir: Path | None = None,
        redact_meta: Iterable[str] = (),
        connect_timeout: float = 10.0,
        headers: Mapping[str, str] | None = None,
        auth: HttpAuth | None = None,
    ) -> None:
        self.upstream = upstream
        self.origin, self._path = split_url(upstream)
        self.auth = auth
        # the proxy's own headers, replacing the client's of the same names (see the module docstring)
        self._headers = [
            (k.lower().encode("latin-1"), v.encode("latin-1")) for k, v in (headers or {}).items()
        ]
        self._replaced = {name for name, _ in self._headers} | ({b"authorization"} if auth else set())
        self.sink = sink
        self.schema_dir = schema_dir
        # one tracer per conversation: per Mcp-Session-Id, and "" for requests of no session (the
        # stateless revision, and an initialize until its answer names the session)
        self.tracers: dict[str, Tracer] = {}
        self.exchanges = 0
        self.redact_meta = tuple(redact_meta)
        self.started = time.monotonic()
        self._pool = Pool(self.origin, None, connect_timeout, max_idle=32)

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "lifespan":
            while True:
                message = await receive()
                if message["type"] == "lifespan.startup":
                    await send({"type": "lifespan.startup.complete"})
                elif message["type"] == "lifespan.shutdown":
                    await self.aclose()
                    await send({"type": "lifespan.shutdown.complete"})
                    return
        if scope["type"] != "http":
            return
        body = b""
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                return
            body += message.get("body", b"")
            if not message.get("more_body"):
                break
        async with anyio.create_task_group() as tg:

            async def until_disconnected() -> None:  # the client left: stop reading upstream
                while (await receive())["type"] != "http.disconnect":
                    pass
                tg.cancel_scope.cancel()

            tg.start_soon(until_disconnected)
            try:
                await self._forward(scope, body, send)
            finally:
                tg.cancel_scope.cancel()

    async def aclose(self) -> None:
        """Close the connections kept to the upstream."""
        await self._pool.aclose()

    def _now(self) -> float:
        return time.monotonic() - self.started

    def _note(self, record: dict[str, Any]) -> None:
        if self.sink.jsonl:
            self.sink.out.write(json.dumps({"t": round(self._now(), 6), "kind": "http", **record}) + "\n")
        else:
            http = record["http"]
            line = f"{self._now():9.3f}s == HTTP {http.get('request') or http.get('response')}"
            headers = "  ".join(f"{k}: {v}" for k, v in http.get("headers", {}).items())
            self.sink.out.write(line + ("\n           " + headers if headers else "") + "\n")
        self.sink.out.flush()

    def _tracer(self, session: str) -> Tracer:
        if session not in self.tracers:
            self.tracers[session] = Tracer(self.schema_dir)
        return self.tracers[session]

    def _annotate(self, session: str, sender: str, text: str) -> None:
        try:
            message = json.loads(text)
        except ValueError:
            line = text
        else:
            line = json.dumps(redact(message, self.redact_meta), ensure_ascii=False)
        self.sink.write(self._tracer(session).feed(sender, line, self._now()))

    async def authorize(self) -> None:
        """With :attr:`auth`: authorization at the upstream before the first client comes (a person
        may have a browser step to take). ``AuthorizationError`` when it cannot be had, ``OSError``
        when the upstream cannot be reached."""
        if self.auth is None:
            return
        from jsonrpc_mcp._client_options import authorize_upfront

        pool = Pool(self.origin, None, 10.0, max_idle=1)  # this event loop's: closed before serving
        sent = [(b"host", self.origin.host_header), (b"content-type", b"application/json")]
        sent += [(b"accept", b"application/json, text/event-stream"), *self._headers]

        async def probe(authorization: str | None) -> tuple[int, str | None]:
            extra = [(b"authorization", authorization.encode("latin-1"))] if authorization else []
            answer = await pool.request(
                b"POST", self._path, [*sent, *extra], _PROBE, write_timeout=10.0, head_timeout=30.0
            )
            await answer.drain(10.0)
            await answer.release()
            return answer.status, answer.header("www-authenticate")

        try:
            await authorize_upfront(self.auth, self.upstream, probe)
        finally:
            await pool.aclose()

    async def _request(
        self, method: bytes, target: bytes, headers: list[tuple[bytes, bytes]], body: bytes, number: int
    ) -> Response:
        """The upstream's answer to the request, with the proxy's token when it has an auth object
        (see the module docstring)."""
        auth = self.auth if not target.startswith(b"/.well-known/") else None
        for attempt in (1, 2):
            sent = await auth.authorization(self.upstream) if auth is not None else None
            response = await self._pool.request(
                method,
                target,
                headers if sent is None else [*headers, (b"authorization", sent.encode("latin-1"))],
                body if method != b"GET" else None,
                write_timeout=30.0,
                head_timeout=300.0,
            )
            challenge = response.header("www-authenticate")
            if auth is None or attempt == 2 or not is_challenge(response.status, challenge):
                if auth is not None and sent is not None and response.status < 400:
                    auth.succeeded(self.upstream)
                return response
            try:
                again = await auth.challenged(self.upstream, response.status, challenge, sent)
            except AuthorizationError as exc:
                note = f"#{number} the proxy could not get authorized upstream: {exc.message}"
                self._note({"from": SERVER, "http": {"response": note}})
                again = False
            if not again:
                return response
            await response.drain(10.0)
            await response.release()
        raise AssertionError("unreachable")

    async def _forward(self, scope: dict[str, Any], body: bytes, send: Any) -> None:
        target = scope.get("raw_path") or scope["path"].encode()
        if scope.get("query_string"):
            target += b"?" + scope["query_string"]
        dropped = _HOP | self._replaced
        headers = [(n, v) for n, v in scope["headers"] if n.lower() not in dropped]
        headers += [*self._headers, (b"host", self.origin.host_header)]
        method = scope["method"]
        self.exchanges += 1
        number = self.exchanges
        session = next(
            (v.decode("latin-1") for n, v in scope["headers"] if n.lower() == b"mcp-session-id"), ""
        )
        if not session and b"session_id=" in target:  # the legacy HTTP+SSE transport names it in the URL
            session = target.split(b"session_id=", 1)[1].split(b"&", 1)[0].decode("latin-1")
        request_line = f"{method} {target.decode('latin-1')}"
        shown = _shown_headers(scope["headers"])
        self._note({"from": CLIENT, "http": {"request": f"#{number} {request_line}", "headers": shown}})
        if body.strip():
            self._annotate(session, CLIENT, body.decode("utf-8", "replace"))
        try:
            response = await self._request(method.encode(), target, headers, body, number)
        except (HttpTransportError, OSError) as exc:
            self._note(
                {
                    "from": SERVER,
                    "http": {"response": f"#{number} 502: the upstream server did not answer: {exc}"},
                }
            )
            text = f"trace: the upstream server did not answer: {exc}".encode()
            await send(
                {
                    "type": "http.response.start",
                    "status": 502,
                    "headers": [(b"content-type", b"text/plain; charset=utf-8")],
                }
            )
            await send({"type": "http.response.body", "body": text})
            return
        try:
            out_headers = [
                (n.encode("latin-1"), v.encode("latin-1"))
                for n, v in response.headers.items()
                if n.encode("latin-1") not in _HOP or n == "content-length"
            ]
            shown = _shown_headers((n, v) for n, v in out_headers)
            answer = f"#{number} {response.status} {response.reason} (to {request_line})"
            self._note({"from": SERVER, "http": {"response": answer, "headers": shown}})
            issued = response.headers.get("mcp-session-id")
            if issued and not session:  # an initialize answered: its conversation is now this session's
                self.tracers[issued] = self.tracers.pop("") if "" in self.tracers else Tracer(self.schema_dir)
                session = issued
            await send({"type": "http.response.start", "status": response.status, "headers": out_headers})
            sse = SseParser() if response.content_type == "text/event-stream" else None
            whole = b""
            while (chunk := await response.next_chunk(math.inf)) is not None:
                await send({"type": "http.response.body", "body": chunk, "more_body": True})
                if sse is not None:
                    for event in sse.feed(chunk):
                        name, data = event.event, event.data
                        if name == "endpoint":  # legacy HTTP+SSE: where to POST (a URL, not JSON)
                            self._note(
                                {
                                    "from": SERVER,
                                    "http": {"response": f"#{number} SSE endpoint event: {data}"},
                                }
                            )
                            if "session_id=" in data:
                                session = data.split("session_id=", 1)[1].split("&", 1)[0]
                        elif data.strip():
                            self._annotate(session, SERVER, data)
                else:
                    whole += chunk
            await send({"type": "http.response.body", "body": b""})
            if sse is None and whole.strip() and "json" in response.content_type:
                self._annotate(session, SERVER, whole.decode("utf-8", "replace"))
        except HttpTransportError as exc:
            self._note(
                {"from": SERVER, "http": {"response": f"#{number} the upstream connection broke: {exc}"}}
            )
        except OSError:  # the client went away while its answer was streaming
            pass
        finally:
            await response.release()
