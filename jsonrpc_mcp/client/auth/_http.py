"""The few HTTP exchanges the authorization flow makes itself (metadata, registration, tokens), on
the transport's own HTTP/1.1 client (:mod:`jsonrpc_mcp.transports.http._pool`): one short-lived
connection pool per exchange, every wait bounded, bodies capped, no redirects followed."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlencode

import orjson

from ..._version import __version__
from ...transports.http._pool import HttpTransportError, Pool, ResponseTooLarge, split_url

__all__ = ["Fetch", "HttpReply", "fetch"]

MAX_BODY = 1024 * 1024  # metadata documents and token responses are small


@dataclass(slots=True)
class HttpReply:
    """A whole HTTP response: status, headers (lower-case names) and body."""

    status: int
    headers: dict[str, str] = field(default_factory=dict)
    body: bytes = b""
    set_cookies: list[str] = field(default_factory=list)

    def json(self) -> Any:
        """The body as JSON, or None when it is not JSON."""
        try:
            return orjson.loads(self.body) if self.body else None
        except orjson.JSONDecodeError:
            return None

    @property
    def ok(self) -> bool:
        return 200 <= self.status < 300


class Fetch:
    """What the flow calls to make an HTTP request (replaceable in tests)."""

    def __init__(self, timeout: float = 30.0) -> None:
        self.timeout = timeout

    async def __call__(
        self,
        method: str,
        url: str,
        *,
        headers: dict[str, str] | None = None,
        form: dict[str, str] | None = None,
        json: Any = None,
    ) -> HttpReply:
        return await fetch(method, url, headers=headers, form=form, json=json, timeout=self.timeout)


async def fetch(
    method: str,
    url: str,
    *,
    headers: dict[str, str] | None = None,
    form: dict[str, str] | None = None,
    json: Any = None,
    timeout: float = 30.0,
) -> HttpReply:
    """One HTTP exchange; network failures raise :class:`HttpTransportError` (an ``OSError``)."""
    try:
        origin, target = split_url(url)
    except ValueError as exc:
        raise HttpTransportError(f"not an http(s) URL: {url!r} ({exc})") from None
    sent: list[tuple[bytes, bytes]] = [
        (b"host", origin.host_header),
        (b"user-agent", b"jsonrpc-mcp/" + __version__.encode()),
        (b"accept", b"application/json"),
    ]
    body: bytes | None = None
    if form is not None:
        body = urlencode(form).encode("ascii")
        sent.append((b"content-type", b"application/x-www-form-urlencoded"))
    elif json is not None:
        body = orjson.dumps(json)
        sent.append((b"content-type", b"application/json"))
    names = {name for name, _ in sent}
    for name, value in (headers or {}).items():
        key = name.lower().encode("latin-1")
        if key in names:
            sent = [item for item in sent if item[0] != key]
        sent.append((key, value.encode("latin-1")))
    pool = Pool(origin, None, timeout, 1)
    try:
        response = await pool.request(
            method.encode("ascii"), target, sent, body, write_timeout=timeout, head_timeout=timeout
        )
        try:
            data = await response.read(timeout, MAX_BODY)
        except ResponseTooLarge as exc:
            raise HttpTransportError(str(exc)) from None
        finally:
            await response.release()
        cookies = [v.decode("latin-1") for k, v in response.head.headers if k.lower() == b"set-cookie"]
        return HttpReply(response.status, dict(response.headers), data, cookies)
    finally:
        await pool.aclose()
