"""The deprecated HTTP+SSE transport (2024-11-05), client side: the fallback of Streamable HTTP.

GET the URL expecting an event stream whose first ``endpoint`` event names where to POST (same
origin only); from then on every message is POSTed there and every reply arrives on the event
stream. There is no resumption: when the stream ends, the connection is over.
"""

from __future__ import annotations

import logging
from urllib.parse import urljoin

import anyio

from ..sse import SseParser
from ._authz import AuthorizationError
from ._core import (
    ACCEPT_BOTH,
    BROKEN,
    BROKEN_OR_BAD_EVENT,
    BROKEN_OR_REFUSED,
    SSE,
    StreamCore,
    read_quietly,
    why,
)
from ._messages import Outgoing, RequestId, TransportFailure, status_failure
from ._pool import Response, split_url

__all__ = ["fall_back", "open_legacy", "post_legacy"]

logger = logging.getLogger("jsonrpc_mcp.transports.http")

# why a fallback found no legacy endpoint (TimeoutError: no endpoint event in time)
_NO_ENDPOINT: tuple[type[BaseException], ...] = (*BROKEN_OR_REFUSED, TimeoutError)


async def open_legacy(stream: StreamCore) -> None:
    """GET the event stream, wait for the ``endpoint`` event, and keep reading in the background."""
    headers = stream._headers(accept=SSE.encode(), version=False)
    with anyio.fail_after(stream._timeout):
        response = await stream._request(b"GET", stream._target, headers, None, head_timeout=stream._timeout)
        try:
            if not 200 <= response.status < 300 or response.content_type != SSE:
                body = await read_quietly(response, stream._timeout)
                raise status_failure(response.status, response.reason, body)
            parser = SseParser(stream._max_message)
            endpoint: str | None = None
            early: list[bytes] = []
            while endpoint is None:
                chunk = await response.next_chunk(stream._timeout)
                if chunk is None:
                    raise TransportFailure("the event stream ended before the endpoint event")
                for event in parser.feed(chunk):
                    if event.event == "endpoint" and endpoint is None:
                        endpoint = event.data.strip()
                    elif event.event == "message" and event.data:
                        early.append(event.data.encode("utf-8"))
        except BaseException:
            await response.release()
            raise
    origin, target = split_url(urljoin(stream.url, endpoint))
    if not origin.same_as(stream._origin):
        await response.release()
        raise TransportFailure(f"the endpoint event points to another origin: {endpoint!r}")
    stream._post_target = target
    stream.mode = "legacy"
    stream._legacy_response = response
    for data in early:
        await stream._deliver(data)
    assert stream._bg is not None
    stream._bg.start_soon(_legacy_reader, stream, response, parser)


async def _legacy_reader(stream: StreamCore, response: Response, parser: SseParser) -> None:
    try:
        while True:
            chunk = await response.next_chunk(stream._read_timeout)
            for event in parser.feed(chunk) if chunk is not None else parser.end():
                if event.event == "message" and event.data:
                    await stream._deliver(event.data.encode("utf-8"))
            if chunk is None:
                break
    except BROKEN_OR_BAD_EVENT as exc:
        if not stream._closed:
            logger.info("the legacy event stream dropped: %s", why(exc))
    finally:
        await response.release()
        # No resumption in 2024-11-05: the connection is over.
        await stream._incoming_send.aclose()


async def fall_back(stream: StreamCore, out: Outgoing, pending: set[RequestId]) -> bool:
    try:
        await open_legacy(stream)
    except _NO_ENDPOINT as exc:
        logger.info("no legacy HTTP+SSE endpoint either: %s", why(exc))
        return False
    logger.info("the server speaks the legacy HTTP+SSE transport; falling back")
    pending.clear()  # the replies now travel on the event stream
    await post_legacy(stream, out)
    return True


async def post_legacy(stream: StreamCore, out: Outgoing) -> None:
    headers = stream._headers(accept=ACCEPT_BOTH, json_body=True, version=False)
    pending = set(out.ids)
    try:
        response = await stream._request(
            b"POST", stream._post_target, headers, out.data, head_timeout=stream._timeout
        )
        try:
            body = await read_quietly(response, stream._timeout)
        finally:
            await response.release()
    except AuthorizationError as refused:
        await stream._fail_auth(out, refused, out.ids)
        return
    except BROKEN as exc:
        if stream._closed:
            return
        failure = TransportFailure(f"HTTP transport error: {why(exc)}")
        await stream._fail(out, failure)
        if not out.ids and not out.is_response:
            raise anyio.BrokenResourceError(failure.message) from None
        return
    if not 200 <= response.status < 300:
        await stream._fail_from_body(out, pending, response.status, response.reason, body)
