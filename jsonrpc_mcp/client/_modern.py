"""The stateless revisions' pieces of the client (2026-07-28): the input-required rounds of a
multi round-trip request, the ``subscriptions/listen`` stream, and reading a ``-32022`` error for the
revisions it names (era detection, ``mode="auto"``)."""

from __future__ import annotations

import contextlib
import math
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from typing import Any

import anyio
import orjson
from anyio.abc import TaskGroup

from .. import wire
from ..jsonrpc.endpoint import Endpoint
from ..jsonrpc.errors import JsonRpcError
from ..jsonrpc.messages import Notification, RequestId
from ..revisions import MODERN_REVISIONS, Revision, get_revision
from ..transports.base import MessageStream
from ._dispatch import RequestHandler

__all__ = [
    "INPUT_METHODS",
    "IdTap",
    "InputRequiredError",
    "Subscription",
    "discovered_revision",
    "is_input_required",
    "listen",
    "modern_versions_named",
    "route",
    "with_input",
]

INPUT_METHODS = frozenset({wire.ELICIT, wire.CREATE_MESSAGE, wire.ROOTS_LIST})
_STATE_ONLY_DELAYS = (0.05, 0.1, 0.2, 0.25)  # before retrying a result that asked for no input


class InputRequiredError(Exception):
    """The server kept answering ``InputRequiredResult`` for more than ``max_input_rounds`` rounds.

    ``result`` is the last one.
    """

    def __init__(self, method: str, rounds: int, result: dict[str, Any]) -> None:
        super().__init__(f"{method}: the server still required input after {rounds} rounds")
        self.method = method
        self.rounds = rounds
        self.result = result


def is_input_required(result: Any) -> bool:
    return type(result) is dict and result.get("resultType") == "input_required"


def modern_versions_named(error: JsonRpcError) -> list[str]:
    """The stateless revisions we speak that a -32022 error's ``data.supported`` names (oldest first)."""
    if error.code != wire.UNSUPPORTED_PROTOCOL_VERSION or not isinstance(error.data, dict):
        return []
    supported = error.data.get("supported")
    if not isinstance(supported, list):
        return []
    return [r.version for r in MODERN_REVISIONS if r.version in supported]


class Subscription:
    """A ``subscriptions/listen`` stream opened by :meth:`Client.listen`.

    ``id`` is the listen request's id (every notification of the stream carries it as
    ``_meta["io.modelcontextprotocol/subscriptionId"]``); ``acknowledged`` is what the server's
    acknowledgement says it honours. Iterate (or :meth:`receive`) for ``(method, params)`` of each
    notification that followed; the iteration ends when the server ends the subscription, whose
    final result is then ``result`` (or ``error``).
    """

    def __init__(self) -> None:
        self.id: RequestId | None = None
        self.acknowledged: dict[str, Any] | None = None
        self.result: Any = None
        self.error: JsonRpcError | None = None
        self._send, self._receive = anyio.create_memory_object_stream[tuple[str, Any]](math.inf)
        self._settled = anyio.Event()  # acknowledged, or ended before that
        self._ended = anyio.Event()

    @property
    def ended(self) -> bool:
        """Whether the stream has ended (the server closed it, or it was closed here)."""
        return self._ended.is_set()

    def _deliver(self, method: str, params: dict[str, Any]) -> None:
        if method == wire.SUBSCRIPTIONS_ACKNOWLEDGED and self.acknowledged is None:
            filters = params.get("notifications")
            self.acknowledged = filters if isinstance(filters, dict) else {}
            self._settled.set()
            return
        with contextlib.suppress(anyio.ClosedResourceError, anyio.BrokenResourceError):
            self._send.send_nowait((method, params))

    def _end(self) -> None:
        self._send.close()
        self._ended.set()
        self._settled.set()

    async def receive(self) -> tuple[str, Any]:
        """The next notification ``(method, params)``; ``anyio.EndOfStream`` once the stream ended."""
        return await self._receive.receive()

    def __aiter__(self) -> Subscription:
        return self

    async def __anext__(self) -> tuple[str, Any]:
        try:
            return await self._receive.receive()
        except anyio.EndOfStream:
            raise StopAsyncIteration from None


class IdTap:
    """A channel to the stream that reports the id of the request passing through it."""

    def __init__(self, stream: MessageStream, on_id: Callable[[RequestId], None]) -> None:
        self._stream = stream
        self._on_id = on_id

    async def send(self, message: bytes) -> None:
        rid = orjson.loads(message).get("id")
        if isinstance(rid, (str, int)):
            self._on_id(rid)
        await self._stream.send(message)


# -- multi round-trip requests -------------------------------------------------------------------
async def with_input(
    send: Callable[[str, dict[str, Any]], Awaitable[Any]],
    method: str,
    params: dict[str, Any],
    handlers: Mapping[str, RequestHandler],
    max_rounds: int,
) -> dict[str, Any]:
    """Send the request (``send(method, params)``); answer input requests and retry while the server
    asks for input the ``handlers`` can give, at most ``max_rounds`` times."""
    result: dict[str, Any] = await send(method, params)
    rounds = 0
    while is_input_required(result) and max_rounds > 0:
        requests = result.get("inputRequests", {})
        if not _can_answer(requests, handlers):
            return result
        if rounds == max_rounds:
            raise InputRequiredError(method, rounds, result)
        retry = dict(params)
        if requests:
            retry["inputResponses"] = await _answer(requests, handlers)
        else:  # only requestState: the server wants the same request again, a little later
            await anyio.sleep(_STATE_ONLY_DELAYS[min(rounds, len(_STATE_ONLY_DELAYS) - 1)])
        if "requestState" in result:
            retry["requestState"] = result["requestState"]
        rounds += 1
        result = await send(method, retry)
    return result


def _can_answer(requests: Any, handlers: Mapping[str, RequestHandler]) -> bool:
    if type(requests) is not dict:
        return False
    return all(
        type(item) is dict and item.get("method") in INPUT_METHODS and item.get("method") in handlers
        for item in requests.values()
    )


async def _answer(requests: dict[str, Any], handlers: Mapping[str, RequestHandler]) -> dict[str, Any]:
    """Each input request answered by the application's handler for its method, under its key."""
    responses: dict[str, Any] = {}
    for key, item in requests.items():
        responses[key] = await handlers[item["method"]](item.get("params"))
    return responses


@contextlib.asynccontextmanager
async def listen(
    endpoint: Endpoint,
    stream: MessageStream,
    tg: TaskGroup,
    live: dict[RequestId, Subscription],
    params: dict[str, Any],
    timeout: float | None,
) -> AsyncIterator[Subscription]:
    """:meth:`Client.listen`: send ``subscriptions/listen`` in a task of ``tg``, register the
    subscription in ``live`` under its request id (the client routes tagged notifications there),
    and yield it once the server acknowledged it; cancel the request on the way out."""
    subscription = Subscription()
    scope = anyio.CancelScope()

    def register(rid: RequestId) -> None:
        subscription.id = rid
        live[rid] = subscription

    tap = IdTap(stream, register)

    async def run() -> None:
        try:
            with scope:
                subscription.result = await endpoint.request(wire.LISTEN, params, timeout=None, via=tap)
        except JsonRpcError as exc:
            subscription.error = exc
        finally:
            if subscription.id is not None:
                live.pop(subscription.id, None)
            subscription._end()

    tg.start_soon(run)
    try:
        with anyio.fail_after(math.inf if timeout is None else timeout):
            await subscription._settled.wait()
        if subscription.acknowledged is None:
            if subscription.error is not None:
                raise subscription.error
            raise RuntimeError(
                f"the server ended subscriptions/listen without acknowledging it: {subscription.result!r}"
            )
        yield subscription
    finally:
        scope.cancel()
        with anyio.CancelScope(shield=True), anyio.move_on_after(5):
            await subscription._ended.wait()


def discovered_revision(asked: str, result: Any) -> Revision | None:
    """The revision a ``server/discover`` answer (to a request at ``asked``) settles on: None when
    it is not a complete DiscoverResult, or names no revision we speak."""
    if type(result) is not dict or result.get("resultType", "complete") != "complete":
        return None
    supported = result.get("supportedVersions")
    if not isinstance(supported, list) or not isinstance(result.get("capabilities"), dict):
        return None
    ours = [r for r in MODERN_REVISIONS if r.version in supported]
    if not ours:
        return None
    return get_revision(asked) if asked in supported else ours[-1]


def route(live: dict[RequestId, Subscription], notification: Notification) -> None:
    """Hand a notification tagged with a live subscription's id to that subscription."""
    if type(notification.params) is not dict:
        return
    meta = notification.params.get("_meta")
    sid = meta.get(wire.SUBSCRIPTION_ID) if type(meta) is dict else None
    subscription = live.get(sid) if isinstance(sid, (str, int)) else None
    if subscription is not None:
        subscription._deliver(notification.method, notification.params)
