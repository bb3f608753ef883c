"""Opening an MCP connection over HTTP: :func:`connect_http` and its two shorthands."""

from __future__ import annotations

import contextlib
import ssl
from collections.abc import AsyncIterator, Mapping
from typing import Any

import anyio

from ._authz import HttpAuth
from ._legacy import open_legacy
from ._messages import DEFAULT_MAX_MESSAGE, DEFAULT_READ_TIMEOUT, DEFAULT_TIMEOUT, TransportFailure
from ._streamable import HttpClientStream

__all__ = ["connect_http", "legacy_sse", "streamable_http"]


@contextlib.asynccontextmanager
async def connect_http(
    url: str,
    *,
    headers: Mapping[str, str] | None = None,
    timeout: float = DEFAULT_TIMEOUT,
    read_timeout: float = DEFAULT_READ_TIMEOUT,
    ssl_context: ssl.SSLContext | None = None,
    fallback: bool = True,
    legacy: bool = False,
    session_id: str | None = None,
    get_stream: bool = True,
    terminate_on_close: bool = True,
    max_message_size: int = DEFAULT_MAX_MESSAGE,
    max_idle_connections: int = 8,
    max_reconnects: int = 3,
    auth: HttpAuth | None = None,
) -> AsyncIterator[HttpClientStream]:
    """An MCP connection over HTTP to ``url``: Streamable HTTP, falling back to legacy HTTP+SSE when
    the server refuses the initialize POST (``fallback``), or legacy from the start (``legacy``).

    ``headers`` go on every request (e.g. ``Authorization``). ``timeout`` bounds connecting, writing
    and short exchanges; ``read_timeout`` bounds waiting for the answer to a request and silence on
    an event stream. ``session_id`` resumes an existing session. ``auth`` authorizes the requests
    (an :class:`~jsonrpc_mcp.client.auth.OAuth`, or any :class:`HttpAuth`); without one, a server
    that wants authorization fails the requests with :class:`AuthorizationError`. On exit the session is ended
    (``DELETE``) unless ``terminate_on_close`` is off.
    """
    stream = HttpClientStream(
        url,
        headers=headers,
        timeout=timeout,
        read_timeout=read_timeout,
        ssl_context=ssl_context,
        fallback=fallback,
        mode="streamable",
        session_id=session_id,
        get_stream=get_stream,
        terminate_on_close=terminate_on_close,
        max_message_size=max_message_size,
        max_idle_connections=max_idle_connections,
        max_reconnects=max_reconnects,
        auth=auth,
    )
    # The task group is entered and left by hand (as Client does) so that an exception from the body
    # propagates as itself rather than wrapped in an ExceptionGroup.
    stack = contextlib.AsyncExitStack()
    await stack.__aenter__()
    try:
        tg = await stack.enter_async_context(anyio.create_task_group())
        await tg.start(stream._run)
        if legacy:
            try:
                await open_legacy(stream)
            except TransportFailure as failure:
                raise ConnectionError(f"{url}: {failure.message}") from None
    except BaseException:
        await stream.aclose()
        await stack.__aexit__(None, None, None)
        raise
    try:
        yield stream
    finally:
        await stream.aclose()
        await stack.__aexit__(None, None, None)


def streamable_http(url: str, **options: Any) -> contextlib.AbstractAsyncContextManager[HttpClientStream]:
    """:func:`connect_http` without the legacy fallback."""
    return connect_http(url, fallback=False, **options)


def legacy_sse(url: str, **options: Any) -> contextlib.AbstractAsyncContextManager[HttpClientStream]:
    """:func:`connect_http` speaking the 2024-11-05 HTTP+SSE transport from the start (``url`` is the
    event stream's URL)."""
    return connect_http(url, legacy=True, **options)
