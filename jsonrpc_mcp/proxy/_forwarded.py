"""One downstream request on its way upstream, and the upstream request that outlives its rounds.

:class:`Forwarded` is what the proxy knows of a downstream request while it is forwarded: who sent
it (a handshake session, or a 2026-07-28 request's envelope), what that client declared it can
answer, the log level it wants, its progress token, and the :class:`RequestContext` through which
notifications and questions reach it.

:class:`Parked` bridges a 2026-07-28 client to a handshake-era upstream server, whose questions
(``elicitation/create``, ``sampling/createMessage``, ``roots/list``) arrive as requests *while its
call is in flight*, where the client expects an ``InputRequiredResult`` and a retry. So the upstream
call is started once and parked in a task of the proxy's: each downstream round waits until the
upstream call has finished (its result answers the round) or has asked something not answered yet
(the round is answered ``input_required``, its ``requestState`` naming the parked call). The retry
delivers the answers to the upstream's waiting requests and waits again. A parked call nobody
retries for ``ttl`` seconds is cancelled upstream; a round the client cancels cancels it too.
"""

from __future__ import annotations

import logging
import secrets
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import anyio

from .. import wire
from ..jsonrpc.endpoint import RequestContext
from ..jsonrpc.errors import InternalError, InvalidParams, MethodNotFound
from ..revisions import Revision
from ..server._mrtr import INPUT_METHODS, params_digest

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable

    from ..server._session import ServerSession

__all__ = ["ASKING_METHODS", "Forwarded", "Parked", "check_declared", "relayable"]

logger = logging.getLogger("jsonrpc_mcp.proxy")

# the requests during which the upstream may ask the client something
ASKING_METHODS = frozenset({wire.TOOLS_CALL, wire.PROMPTS_GET, wire.RESOURCES_READ})
# client capability -> the method the server asks with
_ASKED_WITH = {"elicitation": wire.ELICIT, "sampling": wire.CREATE_MESSAGE, "roots": wire.ROOTS_LIST}
_CAPABILITY_OF = {method: name for name, method in _ASKED_WITH.items()}


def relayable(capabilities: dict[str, Any]) -> dict[str, Any]:
    """The part of a client's capabilities the proxy can relay: the three it answers questions
    with (extensions and experimental ones are not relayed)."""
    return {name: value for name, value in capabilities.items() if name in _ASKED_WITH}


def check_declared(capabilities: dict[str, Any], method: str, params: Any) -> None:
    """-32601 (what a client without the feature answers) unless the client declared what answers
    ``method`` (and, for URL-mode elicitation, that mode)."""
    name = _CAPABILITY_OF.get(method)
    declared = capabilities.get(name) if name is not None else None
    if not isinstance(declared, dict):
        raise MethodNotFound(f"Method not found: {method} (the downstream client did not declare {name!r})")
    mode = params.get("mode", "form") if isinstance(params, dict) else "form"
    if method == wire.ELICIT and mode != "form" and mode not in declared:
        raise MethodNotFound(f"Method not found: {method} (the downstream client has no {mode} mode)")


@dataclass(eq=False)
class Forwarded:
    """A downstream request being forwarded (see the module docs)."""

    method: str
    params: dict[str, Any]
    rc: RequestContext
    revision: Revision
    session: ServerSession | None  # the handshake session; None for a 2026-07-28 request
    client_capabilities: dict[str, Any]
    log_rank: int | None  # the lowest level the client wants (None: no log messages)
    progress: str | int | None  # the client's progress token
    parked: Parked | None = None
    missing: dict[str, Any] | None = None  # a capability the upstream asked for and the client lacks

    @property
    def modern(self) -> bool:
        return self.session is None

    @property
    def can_ask(self) -> bool:
        """Whether the upstream's questions go to this request (a 2026-07-28 request that cannot be
        asked refuses them, and then answers -32021 itself)."""
        return self.method in ASKING_METHODS

    async def ask(self, method: str, params: Any) -> Any:
        """Put one of the upstream's questions to the client: as a request on this request's
        channel (handshake era), or as an input request of the parked call's next round."""
        if self.parked is not None:
            return await self.parked.ask(method, params)
        if self.modern:  # (nothing relayable declared: see missing_capability)
            self.missing = {_CAPABILITY_OF.get(method, method): {}}
            raise MethodNotFound(f"Method not found: {method} (the downstream request cannot be asked)")
        check_declared(self.client_capabilities, method, params)
        # no timeout of ours: the upstream server bounds its own question, and cancels it
        return await self.rc.send_request(method, params, timeout=None)


def _request(method: str, params: Any) -> dict[str, Any]:
    return {"method": method} if params is None else {"method": method, "params": params}


@dataclass(eq=False)
class _Question:
    method: str
    params: Any
    answered: anyio.Event = field(default_factory=anyio.Event)
    answer: Any = None


class Parked:
    """An upstream call kept across the rounds of a 2026-07-28 request (see the module docs)."""

    def __init__(self, method: str, params: dict[str, Any], capabilities: dict[str, Any], ttl: float) -> None:
        self.token = secrets.token_urlsafe(24)
        self.method = method
        self.digest = params_digest(params)
        self.capabilities = capabilities
        self.ttl = ttl
        self.round: Forwarded | None = None  # the round waiting now (progress and logs go there)
        self._questions: dict[str, _Question] = {}  # asked, not answered yet (in order)
        self._asked = 0
        self._outcome: tuple[bool, Any] | None = None  # (succeeded, result or exception)
        self._changed = anyio.Event()
        self._collected = anyio.Event()
        self._scope = anyio.CancelScope()
        self.missing: dict[str, Any] | None = None  # what the upstream asked for and the client lacks

    def _poke(self) -> None:
        self._changed.set()

    async def run(self, call: Callable[[], Awaitable[Any]], forget: Callable[[Parked], None]) -> None:
        """Run the upstream call (in a task of the proxy's), then wait ``ttl`` for a round to
        collect its outcome; ``forget`` it either way."""
        try:
            with self._scope:
                try:
                    self._outcome = (True, await call())
                except Exception as exc:  # the upstream's error, or the transport's
                    self._outcome = (False, exc)
            if self._outcome is None:  # cancelled: a round was cancelled, or nobody came back
                self._outcome = (False, InternalError("Internal error: the request was cancelled"))
            self._poke()
            with anyio.move_on_after(self.ttl):
                await self._collected.wait()
        finally:
            forget(self)

    def cancel(self) -> None:
        self._scope.cancel()

    async def ask(self, method: str, params: Any) -> Any:
        """One of the upstream's questions: answered by the client's next retry (within ``ttl``)."""
        try:
            check_declared(self.capabilities, method, params)
        except MethodNotFound:
            self.missing = {_CAPABILITY_OF.get(method, method): {}}
            raise
        self._asked += 1
        key = f"{INPUT_METHODS[method]}-{self._asked}"
        question = self._questions[key] = _Question(method, params)
        self._poke()
        try:
            with anyio.move_on_after(self.ttl):
                await question.answered.wait()
        finally:  # unanswered (in time, or the upstream gave up on it): no longer asked
            if not question.answered.is_set():
                self._questions.pop(key, None)
        if not question.answered.is_set():
            self.cancel()  # nobody retried in time: the upstream call ends here
            raise InternalError(f"Internal error: the client did not answer {method} in time")
        return question.answer

    async def next_round(self, fwd: Forwarded, params: dict[str, Any]) -> Any:
        """Serve one round: deliver the answers it carries, then wait for the upstream call's result
        or its next questions."""
        if fwd.method != self.method or params_digest(params) != self.digest:
            raise InvalidParams("Invalid params: requestState belongs to another request")
        responses = params.get("inputResponses")
        if responses is not None and type(responses) is not dict:
            raise InvalidParams("Invalid params: inputResponses must be an object")
        for key, answer in (responses or {}).items():
            question = self._questions.pop(key, None)
            if question is not None:
                question.answer = answer
                question.answered.set()
        self.capabilities = fwd.client_capabilities
        fwd.parked = self
        self.missing = None
        self.round = fwd
        try:
            while True:
                self._changed = anyio.Event()
                if self._outcome is not None:
                    self._collected.set()
                    fwd.missing = self.missing
                    succeeded, value = self._outcome
                    if succeeded:
                        return value
                    raise value
                if self._questions:
                    return {
                        "resultType": "input_required",
                        "inputRequests": {
                            key: _request(q.method, q.params) for key, q in self._questions.items()
                        },
                        "requestState": self.token,
                    }
                await self._changed.wait()
        except anyio.get_cancelled_exc_class():
            self.cancel()  # the client gave up on the request: so does the upstream call
            raise
        finally:
            self.round = None
