"""What comes back from the upstream server, taken to the downstream clients it concerns.

Theory of operation
-------------------
The proxy has one upstream connection (a :class:`~jsonrpc_mcp.client.Client`) and any number of
downstream clients (one over stdio; many over HTTP). The relay keeps what links the two:

* **Requests in flight** (:class:`Forwarded`, newest last) and **parked calls** (:class:`Parked`).
* **Progress**: a downstream request's ``progressToken`` is replaced upstream by a token of the
  proxy's own (tokens of different clients may collide), mapped back to the request, and the
  upstream's ``notifications/progress`` go to that request with the client's token: exact.
* **Questions** (``elicitation/create``, ``sampling/createMessage``, ``roots/list``) the upstream
  sends in the handshake era carry no link to the request that caused them. They go to the newest
  request in flight that can be asked (a ``tools/call``, ``prompts/get`` or ``resources/read``:
  as a request on its channel, or as an input request of a parked call's next round); with none,
  to a handshake session that declared the capability; else the upstream is answered -32601. With
  one downstream client (the stdio bridge) this is exact; with several it is a best guess.
* **Log messages** go to each handshake session that wants their level (through its newest request
  in flight, else its own channel), and to the newest 2026-07-28 request in flight that asked for
  that level (those clients get logs only about their requests).
* **List changes and resource updates** are announced as the server core announces its own
  (:meth:`Server._changed`, :meth:`Server.notify_resource_updated`): to the handshake sessions whose
  capabilities say so, and to the ``subscriptions/listen`` streams that asked.
* **Subscriptions upstream** follow what the downstream clients want: the union of the handshake
  sessions' ``resources/subscribe`` URIs and the open listen streams' ``resourceSubscriptions``
  becomes ``resources/subscribe``/``unsubscribe`` requests (a handshake upstream), or the filter of
  the one ``subscriptions/listen`` the proxy keeps open, with the list-changed types the upstream
  offers (a 2026-07-28 upstream; re-opened when the URIs change).
* **Log level upstream** (handshake): the lowest level any handshake session asked for.
"""

from __future__ import annotations

import collections
import contextlib
import functools
import itertools
import logging
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

import anyio

from .. import wire
from ..jsonrpc.errors import InvalidParams, JsonRpcError, MethodNotFound
from ..server._clientlog import LEVELS, level_index
from ..server._handshake import State
from ._forwarded import Forwarded, Parked, check_declared

if TYPE_CHECKING:
    from ..client import Client
    from ..server._session import ServerSession
    from ._proxy import Proxy

__all__ = ["Relay"]

logger = logging.getLogger("jsonrpc_mcp.proxy")

_LIST_CHANGED = {
    wire.TOOLS_LIST_CHANGED: "tool",
    wire.PROMPTS_LIST_CHANGED: "prompt",
    wire.RESOURCES_LIST_CHANGED: "resource",
}
# listen filter key -> the capability that offers it
_LISTEN_FLAGS = {
    "toolsListChanged": "tools",
    "promptsListChanged": "prompts",
    "resourcesListChanged": "resources",
}
_MAX_BACKOFF = 30.0  # seconds between re-opening an upstream listen stream the server keeps ending
_LISTEN_WAIT = 10.0  # seconds a subscription waits for the upstream listen stream to include it

Asker = Forwarded | Parked


class Relay:
    """The links between the upstream connection and the downstream clients (module docs)."""

    def __init__(self, proxy: Proxy) -> None:
        self.proxy = proxy
        self.inflight: list[Forwarded] = []
        self._askers: list[Asker] = []
        self._progress: dict[str, Asker] = {}
        self._tokens = itertools.count(1)
        self._parked: dict[str, Parked] = {}
        self._elicitations: dict[str, ServerSession] = {}  # URL-mode elicitation id -> who was asked
        self.listen_uris: collections.Counter[str] = collections.Counter()
        self._subscribed: set[str] = set()  # what the upstream was asked to send updates of
        self._sync_lock = anyio.Lock()
        self._listen_changed = anyio.Event()
        self._listening: frozenset[str] = frozenset()  # the URIs the open upstream listen stream has
        self._listen_opened = anyio.Event()
        self._upstream_rank: int | None = None

    # -- requests in flight -----------------------------------------------------------------------
    def begin(self, fwd: Forwarded) -> None:
        self.inflight.append(fwd)
        if fwd.can_ask:
            self._askers.append(fwd)

    def end(self, fwd: Forwarded) -> None:
        with contextlib.suppress(ValueError):
            self.inflight.remove(fwd)
        with contextlib.suppress(ValueError):
            self._askers.remove(fwd)
        for token in [t for t, target in self._progress.items() if target is fwd]:
            del self._progress[token]

    def progress_token(self, target: Asker) -> str:
        """A progress token of the proxy's for an upstream request, routed back to ``target``."""
        token = f"jsonrpc-mcp-proxy-{next(self._tokens)}"
        self._progress[token] = target
        return token

    # -- parked calls (a 2026-07-28 client, a handshake upstream) ----------------------------------
    async def park_round(
        self, fwd: Forwarded, send: Callable[[dict[str, Any]], Awaitable[Any]], params: dict[str, Any]
    ) -> Any:
        """Serve a round of a multi round-trip request through its parked upstream call (started by
        the first round with ``send(params)``)."""
        state = fwd.params.get("requestState")
        if state is None:
            parked = Parked(fwd.method, fwd.params, fwd.client_capabilities, self.proxy.input_ttl)
            meta = dict(params.get("_meta") or {})
            meta[wire.PROGRESS_TOKEN] = self.progress_token(parked)
            self._parked[parked.token] = parked
            self._askers.append(parked)
            self.proxy._spawn(parked.run, functools.partial(send, {**params, "_meta": meta}), self._forget)
        else:
            found = self._parked.get(state) if type(state) is str else None
            if found is None:
                raise InvalidParams("Invalid params: requestState is unknown or has expired")
            parked = found
        return await parked.next_round(fwd, fwd.params)

    def _forget(self, parked: Parked) -> None:
        self._parked.pop(parked.token, None)
        with contextlib.suppress(ValueError):
            self._askers.remove(parked)
        for token in [t for t, target in self._progress.items() if target is parked]:
            del self._progress[token]

    # -- the upstream's questions (handshake era) ---------------------------------------------------
    def request_handlers(self) -> dict[str, Callable[[Any], Awaitable[Any]]]:
        """The upstream client's handlers of the server's requests."""
        methods = (wire.ELICIT, wire.CREATE_MESSAGE, wire.ROOTS_LIST)
        return {method: functools.partial(self._asked, method) for method in methods}

    async def _asked(self, method: str, params: Any) -> Any:
        if self._askers:
            asker = self._askers[-1]
            if isinstance(asker, Forwarded) and asker.session is not None:
                self._note_elicitation(method, params, asker.session)
            return await asker.ask(method, params)
        for session in self.proxy._live_sessions():
            try:
                check_declared(session.client_capabilities, method, params)
            except JsonRpcError:
                continue
            if session.outbound is not None:
                self._note_elicitation(method, params, session)
                return await session.outbound.request(method, params, timeout=None)
        raise MethodNotFound(f"Method not found: {method} (no downstream client can be asked now)")

    def _note_elicitation(self, method: str, params: Any, session: ServerSession) -> None:
        eid = params.get("elicitationId") if method == wire.ELICIT and isinstance(params, dict) else None
        if isinstance(eid, str):
            self._elicitations[eid] = session

    # -- the upstream's notifications ---------------------------------------------------------------
    async def notified(self, method: str, params: Any) -> None:
        """The upstream client's ``on_notification``: route one notification (see the module docs)."""
        try:
            if method == wire.PROGRESS:
                await self._progress_to(params)
            elif method == wire.MESSAGE:
                await self._log(params)
            elif method in _LIST_CHANGED:
                self.proxy._changed(_LIST_CHANGED[method])
            elif method == wire.RESOURCE_UPDATED:
                uri = params.get("uri") if isinstance(params, dict) else None
                if isinstance(uri, str):
                    await self.proxy.notify_resource_updated(uri)
            elif method == wire.ELICITATION_COMPLETE:
                await self._elicitation_complete(params)
            else:
                logger.debug("upstream notification %r not relayed", method)
        except Exception as exc:  # a downstream client gone away: nobody to tell
            logger.debug("could not relay %s: %s", method, exc)

    async def _progress_to(self, params: Any) -> None:
        if not isinstance(params, dict):
            return
        token = params.get(wire.PROGRESS_TOKEN)
        target = self._progress.get(token) if isinstance(token, str) else None
        fwd = target.round if isinstance(target, Parked) else target
        if fwd is None or fwd.progress is None:
            return
        out: dict[str, Any] = {wire.PROGRESS_TOKEN: fwd.progress, "progress": params.get("progress")}
        if "total" in params:
            out["total"] = params["total"]
        if "message" in params and fwd.revision.has_progress_message:
            out["message"] = params["message"]
        await fwd.rc.notify(wire.PROGRESS, out)

    async def _log(self, params: Any) -> None:
        level = params.get("level") if isinstance(params, dict) else None
        if not isinstance(level, str) or level not in LEVELS:
            return
        rank = level_index(level)
        told: set[ServerSession] = set()
        modern_told = False
        for fwd in list(reversed(self.inflight)):  # (the list may change while a message is sent)
            session = fwd.session
            if session is None:
                if not modern_told and fwd.log_rank is not None and rank >= fwd.log_rank:
                    modern_told = True
                    await fwd.rc.notify(wire.MESSAGE, params)
            elif session not in told and session.wants_log(rank):
                told.add(session)
                await fwd.rc.notify(wire.MESSAGE, params)
        for session in self.proxy._live_sessions():
            if session not in told and session.wants_log(rank):
                await session.notify(wire.MESSAGE, params)

    async def _elicitation_complete(self, params: Any) -> None:
        eid = params.get("elicitationId") if isinstance(params, dict) else None
        session = self._elicitations.pop(eid, None) if isinstance(eid, str) else None
        if session is not None and session.state is State.READY:
            await session.notify(wire.ELICITATION_COMPLETE, params)

    # -- subscriptions and the log level upstream --------------------------------------------------
    def wanted_uris(self) -> set[str]:
        """The URIs some downstream client wants updates of."""
        uris = {uri for uri, count in self.listen_uris.items() if count > 0}
        for session in self.proxy._live_sessions():
            uris.update(session.subscriptions)
        return uris

    async def sync_subscriptions(self) -> None:
        """Make the upstream's subscriptions what the downstream clients want (raises the upstream's
        error for a URI it refused)."""
        client = self.proxy.upstream
        if client.is_modern:  # the listen loop re-opens its stream with the new URIs: wait for it
            wanted = self.wanted_uris()
            self._listen_changed.set()
            with anyio.move_on_after(_LISTEN_WAIT):  # (until it has the new ones, and not the old)
                while not wanted <= self._listening or self._listening - wanted:
                    self._listen_opened = anyio.Event()
                    await self._listen_opened.wait()
            return
        resources = client.server_capabilities.get("resources")
        if not isinstance(resources, dict) or not resources.get("subscribe"):
            return
        async with self._sync_lock:
            wanted = self.wanted_uris()
            for uri in sorted(wanted - self._subscribed):
                await client.subscribe_resource(uri)
                self._subscribed.add(uri)
            for uri in sorted(self._subscribed - wanted):
                self._subscribed.discard(uri)
                try:
                    await client.unsubscribe_resource(uri)
                except (JsonRpcError, TimeoutError) as exc:
                    logger.debug("upstream resources/unsubscribe %s: %s", uri, exc)

    async def sync_log_level(self) -> None:
        """Handshake upstream: ask for the lowest level any handshake session wants."""
        client = self.proxy.upstream
        if client.is_modern or not isinstance(client.server_capabilities.get("logging"), dict):
            return
        ranks = [s.log_threshold for s in self.proxy._live_sessions()]
        rank = min(min(ranks, default=0), len(LEVELS) - 1)
        if rank != self._upstream_rank:
            self._upstream_rank = rank
            await client.set_logging_level(LEVELS[rank])

    async def listen_upstream(self, client: Client) -> None:
        """2026-07-28 upstream: keep one ``subscriptions/listen`` open for the list changes it offers
        and the URIs the downstream clients want; re-open it when they change, or when the server
        ends it (waiting longer each time it keeps doing so)."""
        caps = client.server_capabilities
        flags = {
            key: True
            for key, name in _LISTEN_FLAGS.items()
            if isinstance(caps.get(name), dict) and caps[name].get("listChanged")
        }
        resources = caps.get("resources")
        can_subscribe = isinstance(resources, dict) and bool(resources.get("subscribe"))
        backoff = 0.0
        while True:
            changed = self._listen_changed = anyio.Event()
            uris = sorted(self.wanted_uris()) if can_subscribe else []
            wanted: dict[str, Any] = {**flags, **({"resourceSubscriptions": uris} if uris else {})}
            if not wanted:
                self._listening = frozenset()  # (no stream open: it holds no URI)
                self._listen_opened.set()
                await changed.wait()
                continue
            try:
                async with client.listen(wanted) as subscription, anyio.create_task_group() as tg:
                    granted = subscription.acknowledged or {}
                    self._listening = frozenset(granted.get("resourceSubscriptions", ()))
                    self._listen_opened.set()

                    tg.start_soon(_cancel_on, changed, tg.cancel_scope)
                    async for _ in subscription:  # (each was relayed by ``notified`` already)
                        backoff = 0.0
                    tg.cancel_scope.cancel()
            except (JsonRpcError, RuntimeError, TimeoutError) as exc:
                logger.warning("the upstream refused subscriptions/listen %s: %s", wanted, exc)
            if changed.is_set():
                continue
            backoff = min(max(2 * backoff, 0.5), _MAX_BACKOFF)  # the server ended it: try again later
            with anyio.move_on_after(backoff):
                await changed.wait()


async def _cancel_on(event: anyio.Event, scope: anyio.CancelScope) -> None:
    await event.wait()
    scope.cancel()
