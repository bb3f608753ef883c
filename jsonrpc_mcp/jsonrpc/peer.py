"""The sans-IO state of one JSON-RPC connection.

Like ``h11.Connection``, this object does no I/O and never awaits: the endpoint feeds it what
happens and asks it what that means. It owns two tables:

* outgoing requests awaiting a response, keyed by the id it allocated;
* incoming requests being served, keyed by the peer's id.

The rule "a request is answered at most once, whatever races" lives here: whoever takes an
incoming id out of the table (the handler finishing, or a cancellation) is the only one that may act
on it, and taking it is a single synchronous step.
"""

from __future__ import annotations

from typing import Generic, TypeVar

from .messages import RequestId

OutT = TypeVar("OutT")
InT = TypeVar("InT")


class Peer(Generic[OutT, InT]):
    """Id bookkeeping for both directions. ``OutT``/``InT`` are whatever the caller attaches."""

    __slots__ = ("_incoming", "_next_id", "_outgoing")

    def __init__(self) -> None:
        self._next_id = 0
        self._outgoing: dict[RequestId, OutT] = {}
        self._incoming: dict[RequestId, InT] = {}

    # -- outgoing ---------------------------------------------------------------------------------
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

    @property
    def outgoing_count(self) -> int:
        return len(self._outgoing)

    # -- incoming ---------------------------------------------------------------------------------
    def start_incoming(self, rid: RequestId, token: InT) -> bool:
        """Register an incoming request; False if a request with that id is still in flight."""
        if rid in self._incoming:
            return False
        self._incoming[rid] = token
        return True

    def finish_incoming(self, rid: RequestId, token: InT | None = None) -> InT | None:
        """Claim the right to act on an incoming request (answer or cancel). Succeeds once.

        With ``token``, claim only if the entry under ``rid`` is that very token: a handler that
        outlived its cancellation must not claim a newer request that reuses the id.
        """
        if token is not None and self._incoming.get(rid) is not token:
            return None
        return self._incoming.pop(rid, None)

    def incoming_token(self, rid: RequestId) -> InT | None:
        return self._incoming.get(rid)

    def take_all_incoming(self) -> list[InT]:
        """Claim every incoming request at once (the connection is ending)."""
        tokens = list(self._incoming.values())
        self._incoming.clear()
        return tokens

    @property
    def incoming_count(self) -> int:
        return len(self._incoming)
