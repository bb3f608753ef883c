"""One bounded HTTP exchange for the token verifiers (a JWKS GET, an introspection POST).

It rides on the MCP client's own HTTP/1.1 (h11 over anyio sockets, :mod:`..transports.http._pool`),
so a fetch never blocks the event loop; the whole exchange, connect to last byte, runs under one
deadline. A fresh connection each time (these fetches are rare: their results are cached), closed
at the end, so nothing outlives the event loop it was made on.
"""

from __future__ import annotations

import ssl

import anyio

__all__ = ["FetchError", "fetch"]


class FetchError(Exception):
    """The exchange failed: the network, a timeout, or a body over the limit."""


async def fetch(
    method: str,
    url: str,
    *,
    headers: list[tuple[bytes, bytes]] | None = None,
    body: bytes | None = None,
    timeout: float = 5.0,
    limit: int = 1 << 20,
    ssl_context: ssl.SSLContext | None = None,
) -> tuple[int, dict[str, str], bytes]:
    """``(status, headers, body)`` of one request; :class:`FetchError` if it could not complete."""
    from ..transports.http._pool import HttpTransportError, Pool, ResponseTooLarge, describe, split_url

    origin, target = split_url(url)
    pool = Pool(origin, ssl_context, connect_timeout=timeout, max_idle=0)
    sent = [(b"host", origin.host_header), (b"user-agent", b"jsonrpc-mcp"), *(headers or [])]
    try:
        with anyio.fail_after(timeout):
            response = await pool.request(
                method.encode("ascii"), target, sent, body, write_timeout=timeout, head_timeout=timeout
            )
            try:
                data = await response.read(timeout, limit)
            finally:
                await response.release()
    except (HttpTransportError, TimeoutError, ResponseTooLarge) as exc:
        raise FetchError(f"{method} {url}: {describe(exc)}") from exc
    finally:
        await pool.aclose()
    return response.status, response.headers, data
