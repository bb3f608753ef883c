"""The sans-IO state of one JSON-RPC connection: read this first.

Like ``h11.Connection``, a :class:`Peer` does no I/O and never awaits. The endpoint decodes a
message and hands it to :meth:`Peer.next_event`, which updates the connection's two id tables and
says what the message means, as one event:

===================================  ===========================================================
message                              event
===================================  ===========================================================
a request with a fresh id            :class:`Start` (registered, with a token to cancel it by)
a request whose id is still in use   :class:`Duplicate` (with the ``-32600`` error to answer)
a response to one of our requests    :class:`ResponseArrived` (with the token of the waiter)
a response nobody waits for          :class:`UnknownResponse`
the cancellation notification        :class:`Cancel` (the cancelled request's token, if it runs)
any other notification               :class:`NotificationArrived`
input that is not a usable message   :class:`InvalidMessage` (with the error to answer)
a batch (a JSON array)               :class:`Batch` of the events of its items (or
                                     :class:`InvalidMessage` where batches are not served)
===================================  ===========================================================

The endpoint only runs what it is told: it starts a request on :class:`Start`, cancels a token on
:class:`Cancel`, wakes a waiter on :class:`ResponseArrived`, and sends the error of a
:class:`Duplicate` or :class:`InvalidMessage`. Which notification cancels a request is
configuration (:class:`CancelSpec`); this layer knows no MCP.

The two tables:

* outgoing requests awaiting a response, keyed by the id this peer allocated;
* incoming requests being served, keyed by the other side's id.

The rule "a request is answered at most once, whatever races" lives here: whoever takes an
incoming id out of the table (the handler finishing, or a cancellation) is the only one that may act
on it, and taking it is a single synchronous step.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Generic, TypeAlias, TypeVar

from .errors import InvalidRequest, JsonRpcError
from .messages import ErrorResponse, Incoming, Invalid, Notification, Request, RequestId, Response

__all__ = [
    "Batch",
    "Cancel",
    "CancelSpec",
    "Duplicate",
    "Event",
    "InvalidMessage",
    "NotificationArrived",
    "Peer",
    "ResponseArrived",
    "Start",
    "UnknownResponse",
]

OutT = TypeVar("OutT")
InT = TypeVar("InT")


class CancelSpec:
    """How cancellation is spelled on this connection: the notification's method and id key."""

    __slots__ = ("id_key", "method")

    def __init__(self, method: str, id_key: str) -> None:
        self.method = method
        self.id_key = id_key


# -- events ---------------------------------------------------------------------------------------
class Start:
    """A request to serve; it is registered under its id with ``token`` (what cancels it)."""

    __slots__ = ("request", "token")

    def __init__(self, request: Request, token: Any) -> None:
        self.request = request
        self.token = token


class Duplicate:
    """A request whose id is already in flight: answer ``error``, serve nothing."""

    __slots__ = ("error", "request")

    def __init__(self, request: Request, error: JsonRpcError) -> None:
        self.request = request
        self.error = error

    @property
    def id(self) -> RequestId:
        return self.request.id


class ResponseArrived:
    """The response to the outgoing request that ``token`` waits for (its id is now forgotten)."""

    __slots__ = ("response", "token")

    def __init__(self, token: Any, response: Response | ErrorResponse) -> None:
        self.token = token
        self.response = response


class UnknownResponse:
    """A response with an id nobody waits for (unknown, answered already, or given up on)."""

    __slots__ = ("response",)

    def __init__(self, response: Response | ErrorResponse) -> None:
        self.response = response


class Cancel:
    """The cancellation notification. ``token`` is the cancelled request's, now claimed (cancel it;
    it must not be answered), or None when ``request_id`` is unknown or finished (or unusable:
    then ``request_id`` is None too). The notification itself may interest the application."""

    __slots__ = ("notification", "request_id", "token")

    def __init__(self, notification: Notification, request_id: RequestId | None, token: Any) -> None:
        self.notification = notification
        self.request_id = request_id
        self.token = token


class NotificationArrived:
    """A notification for the application."""

    __slots__ = ("notification",)

    def __init__(self, notification: Notification) -> None:
        self.notification = notification


class InvalidMessage:
    """Input that is not a usable message: answer ``error`` (``id`` echoes a readable id)."""

    __slots__ = ("error", "id")

    def __init__(self, id: RequestId | None, error: JsonRpcError) -> None:
        self.id = id
        self.error = error


class Batch:
    """A batch: the events of its items, in order (requests among them already registered)."""

    __slots__ = ("events", "has_requests")

    def __init__(self, events: list[Event], has_requests: bool) -> None:
        self.events = events
        self.has_requests = has_requests  # a request among the items (served or refused)


# (A string: a union of classes made at import costs cold-start time.)
Event: TypeAlias = (
    "Start | Duplicate | ResponseArrived | UnknownResponse | Cancel | NotificationArrived"
    " | InvalidMessage | Batch"
)
"""What :meth:`Peer.next_event` returns. The tokens events carry are the peer's ``InT``/``OutT``."""


_new = object.__new__


def _always() -> bool:
    return True


class Peer(Generic[OutT, InT]):
    """Id bookkeeping for both directions, and the classification of incoming messages.

    ``OutT``/``InT`` are whatever the caller attaches: ``new_token`` makes the token of each request
    :meth:`next_event` starts (the endpoint's: a cancel scope), ``cancel`` names the cancellation
    notification, and ``batches`` says (when asked, at each batch) whether batches are served.
    """

    __slots__ = ("_batches", "_cancel", "_incoming", "_new_token", "_next_id", "_outgoing")

    def __init__(
        self,
        new_token: Callable[[], InT] | None = None,
        *,
        cancel: CancelSpec | None = None,
        batches: Callable[[], bool] = _always,
    ) -> None:
        self._next_id = 0
        self._outgoing: dict[RequestId, OutT] = {}
        self._incoming: dict[RequestId, InT] = {}
        self._new_token = new_token
        self._cancel = cancel
        self._batches = batches

    # -- classification ---------------------------------------------------------------------------
    def next_event(self, message: Incoming | list[Incoming]) -> Event:
        """What ``message`` (what :func:`codec.decode` made of one frame) means; see the module doc."""
        t = type(message)
        if t is Request:
            request: Request = message  # type: ignore[assignment]
            if request.id in self._incoming:
                return Duplicate(request, InvalidRequest("Invalid Request: duplicate id in flight"))
            new_token = self._new_token
            if new_token is None:
                raise RuntimeError("this peer was made without new_token: it cannot start requests")
            start: Start = _new(Start)  # Start(request, token) without an __init__ frame (hot path)
            start.request = request
            start.token = self._incoming[request.id] = new_token()
            return start
        if t is Notification:
            notification: Notification = message  # type: ignore[assignment]
            cancel = self._cancel
            if cancel is not None and notification.method == cancel.method:
                return self._cancellation(notification, cancel)
            return NotificationArrived(notification)
        if t is Response or t is ErrorResponse:
            response: Response | ErrorResponse = message  # type: ignore[assignment]
            rid = response.id
            slot = self._outgoing.pop(rid, None) if rid is not None else None
            return UnknownResponse(response) if slot is None else ResponseArrived(slot, response)
        if t is list:
            items: list[Incoming] = message  # type: ignore[assignment]
            if not self._batches():
                return InvalidMessage(None, InvalidRequest("Invalid Request: batches are not supported here"))
            events = [self.next_event(item) for item in items]
            return Batch(events, any(type(e) is Start or type(e) is Duplicate for e in events))
        invalid: Invalid = message  # type: ignore[assignment]
        return InvalidMessage(invalid.id, invalid.error)

    def _cancellation(self, notification: Notification, cancel: CancelSpec) -> Cancel:
        params = notification.params
        rid = params.get(cancel.id_key) if type(params) is dict else None
        if type(rid) is not str and type(rid) is not int:  # not an id (a bool would alias 1)
            return Cancel(notification, None, None)
        return Cancel(notification, rid, self._incoming.pop(rid, None))

    # -- outgoing ---------------------------------------------------------------------------------
    def number_outgoing_from(self, base: int) -> None:
        """Number the next outgoing requests ``base + 1``, ``base + 2``... (ids unique across the
        instances that serve one session: each starts from its own base)."""
        self._next_id = base

    def start_outgoing(self, token: OutT) -> RequestId:
        """Allocate a fresh id for an outgoing request and remember ``token`` under it."""
        self._next_id += 1
        rid = self._next_id
        self._outgoing[rid] = token
        return rid

    def finish_outgoing(self, rid: RequestId) -> OutT | None:
        """A response arrived (or we gave up): the token, or None if the id is unknown or finished."""
        return self._outgoing.pop(rid, None)

    def outgoing_tokens(self) -> list[OutT]:
        """Take every outstanding token (the connection is closing)."""
        tokens = list(self._outgoing.values())
        self._outgoing.clear()
        return tokens

    # -- incoming ---------------------------------------------------------------------------------
    def finish_incoming(self, rid: RequestId, token: InT | None = None) -> InT | None:
        """Claim the right to act on an incoming request (answer or cancel). Succeeds once.

        With ``token``, claim only if the entry under ``rid`` is that very token: a handler that
        outlived its cancellation must not claim a newer request that reuses the id.
        """
        if token is not None and self._incoming.get(rid) is not token:
            return None
        return self._incoming.pop(rid, None)

    def take_all_incoming(self) -> list[InT]:
        """Claim every incoming request at once (the connection is ending)."""
        tokens = list(self._incoming.values())
        self._incoming.clear()
        return tokens
