"""The handshake revisions' lifecycle (2024-11-05 .. 2025-11-25), as a table.

As in h11's ``_state.py``, the rules are data written once, here::

    NEW           -- initialize -->  INITIALIZING  -- notifications/initialized -->  READY

    state          requests served                    anything else
    NEW            initialize, ping                   -32600 "send 'initialize' first"
    INITIALIZING   everything but initialize          -32600 "already initialized"
    READY          everything but initialize          -32600 "already initialized"

(A client may race its first request with ``notifications/initialized``, so INITIALIZING already
serves everything.) A transition happens when its message succeeds: ``initialize`` answered with a
result, ``notifications/initialized`` received; a message with no transition from the current state
leaves it as it is (an ``initialized`` out of turn is ignored). What the table lets through is
served by :func:`._methods.dispatch`, which then checks the revision's methods and capabilities.
"""

from __future__ import annotations

import enum
import logging
from collections.abc import Awaitable
from typing import TYPE_CHECKING, Any

from .. import wire
from ..jsonrpc.endpoint import RequestContext
from ..jsonrpc.errors import InvalidRequest
from ..jsonrpc.messages import Request
from ._methods import dispatch

if TYPE_CHECKING:
    from ._session import ServerSession

__all__ = ["State", "TRANSITIONS", "serve_handshake", "transition"]

logger = logging.getLogger("jsonrpc_mcp.server")


class State(str, enum.Enum):  # (a str enum: hashed in C, for the table look-ups on every request)
    NEW = "new"
    INITIALIZING = "initializing"
    READY = "ready"


# state -> (the requests it serves, or None for every request but those refused; the refused ones)
_SERVES: dict[State, tuple[frozenset[str] | None, frozenset[str]]] = {
    State.NEW: (frozenset({wire.INITIALIZE, wire.PING}), frozenset()),
    State.INITIALIZING: (None, frozenset({wire.INITIALIZE})),
    State.READY: (None, frozenset({wire.INITIALIZE})),
}
_REFUSAL = {
    State.NEW: "Invalid Request: {method!r} before initialization; send 'initialize' first",
    State.INITIALIZING: "Invalid Request: the session is already initialized",
    State.READY: "Invalid Request: the session is already initialized",
}
# (state, message) -> the state once that message succeeded
TRANSITIONS: dict[tuple[State, str], State] = {
    (State.NEW, wire.INITIALIZE): State.INITIALIZING,
    (State.INITIALIZING, wire.INITIALIZED): State.READY,
}


def transition(session: ServerSession, method: str) -> bool:
    """Apply the transition of a message that succeeded; whether there was one."""
    after = TRANSITIONS.get((session.state, method))
    if after is None:
        return False
    session.state = after
    return True


def serve_handshake(session: ServerSession, request: Request, context: RequestContext) -> Awaitable[Any]:
    """Serve a request of a handshake session (await the result): refused at once when the table
    does not allow it in the session's state, otherwise dispatched. A plain function handing on the
    dispatch coroutine: one coroutine layer fewer per request."""
    state = session.state
    method = request.method
    serves, refused = _SERVES[state]
    if (serves is not None and method not in serves) or method in refused:
        raise InvalidRequest(_REFUSAL[state].format(method=method))
    if (state, method) in TRANSITIONS:
        return _transitioning(session, request, context)
    return dispatch(session, request, context)


async def _transitioning(session: ServerSession, request: Request, context: RequestContext) -> Any:
    result = await dispatch(session, request, context)
    transition(session, request.method)
    return result
