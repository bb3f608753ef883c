"""``subscriptions/listen``: the stateless revisions' channel for list changes and resource updates.

Theory of operation
-------------------
A modern client has no session to receive ``list_changed`` or ``resources/updated`` on; it opens a
long-lived ``subscriptions/listen`` request instead, naming the notification types it wants. The
handler (:func:`listen`) registers a :class:`Listener` with the server's :class:`SubscriptionHub`,
sends ``notifications/subscriptions/acknowledged`` (the subset of the filter the server honours:
types the server has no capability for are left out), and then, until the subscription ends, sends
whatever the hub posted to it, each notification tagged with the subscription id (the listen
request's JSON-RPC id) in ``_meta``. Everything goes through the request's own
:class:`RequestContext`: on stdio that is the connection, on HTTP the request's SSE response.

The listener is registered *before* the acknowledgement is sent and delivers only after it, so a
change that happens meanwhile is neither lost nor sent first. Pending events are coalesced (each
one is a level trigger: "this changed, fetch it again").

A subscription ends in one of two ways:

* the client ends it (closes the SSE response, or ``notifications/cancelled`` on stdio): the
  request is cancelled, the handler unwinds and nothing more is sent for it;
* the server ends it gracefully (:meth:`SubscriptionHub.end_all`, e.g. when the HTTP app shuts
  down): what is pending is delivered, then the listen request is answered with
  ``{resultType: "complete", _meta: {subscriptionId}}``.

``list_changed`` reaches the hub from any thread (a sync tool that registers a tool runs in a
worker thread); a listener hops to its own event loop before touching its state.
"""

from __future__ import annotations

import logging
import threading
import weakref
from typing import TYPE_CHECKING, Any

import anyio
import anyio.lowlevel

from .. import wire
from ..jsonrpc.endpoint import RequestContext
from ..jsonrpc.errors import ConnectionClosed, InvalidParams, MethodNotFound
from ..jsonrpc.messages import RequestId
from ._extensions import client_extensions

if TYPE_CHECKING:
    from ._session import ServerSession

__all__ = [
    "ACKNOWLEDGED",
    "MAX_PENDING",
    "SUBSCRIPTION_ID",
    "Listener",
    "SubscriptionHub",
    "covers",
    "listen",
]

logger = logging.getLogger("jsonrpc_mcp.server")

SUBSCRIPTION_ID = wire.SUBSCRIPTION_ID
ACKNOWLEDGED = wire.SUBSCRIPTIONS_ACKNOWLEDGED
UPDATED = wire.RESOURCE_UPDATED
MAX_PENDING = 1024  # distinct notifications waiting to be sent to one subscription

# registry kind (what Server._changed reports) -> (filter key, capability, notification)
_LIST_CHANGED = {
    "tool": ("toolsListChanged", "tools", wire.TOOLS_LIST_CHANGED),
    "prompt": ("promptsListChanged", "prompts", wire.PROMPTS_LIST_CHANGED),
    "resource": ("resourcesListChanged", "resources", wire.RESOURCES_LIST_CHANGED),
    "resource template": ("resourcesListChanged", "resources", wire.RESOURCES_LIST_CHANGED),
}
_FLAGS = {key: (capability, method) for key, capability, method in _LIST_CHANGED.values()}


def covers(subscriptions: Any, uri: str) -> bool:
    """Whether ``uri`` is, or is below (it starts with one and a "/"), one of ``subscriptions``."""
    if uri in subscriptions:
        return True
    return any(uri.startswith(s if s.endswith("/") else s + "/") for s in subscriptions)


def honoured(requested: dict[str, Any], capabilities: dict[str, Any]) -> dict[str, Any]:
    """The part of a listen filter the server serves (-32602 for a malformed filter).

    A list-changed type is honoured when asked for (``true``) and the server has that capability
    with ``listChanged``; resource subscriptions when the server has ``resources.subscribe``.
    Unknown keys (extension filters this server does not implement) are left out.
    """
    granted: dict[str, Any] = {}
    for key, (capability, _) in _FLAGS.items():
        value = requested.get(key)
        if value is None:
            continue
        if type(value) is not bool:
            raise InvalidParams(f"Invalid params: notifications.{key} must be a boolean")
        declared = capabilities.get(capability)
        if value and isinstance(declared, dict) and declared.get("listChanged"):
            granted[key] = True
    uris = requested.get("resourceSubscriptions")
    if uris is not None:
        if type(uris) is not list or not all(type(uri) is str for uri in uris):
            raise InvalidParams("Invalid params: notifications.resourceSubscriptions must be a list of URIs")
        resources = capabilities.get("resources")
        if uris and isinstance(resources, dict) and resources.get("subscribe"):
            granted["resourceSubscriptions"] = list(dict.fromkeys(uris))
    return granted


class Listener:
    """One open ``subscriptions/listen`` request: what it wants, and what is waiting to be sent."""

    def __init__(self, subscription_id: RequestId, granted: dict[str, Any], owner: object) -> None:
        self.id = subscription_id
        self.owner = owner  # the connection it arrived on (stdio endpoint, HTTP request's endpoint)
        self.methods = frozenset(method for key, (_, method) in _FLAGS.items() if granted.get(key))
        self.uris = frozenset(granted.get("resourceSubscriptions", ()))
        self.granted = granted  # (extensions read their own filters here, e.g. the tasks' taskIds)
        self._pending: dict[tuple[str, str | None], None] = {}  # ordered, deduplicated
        self._payloads: dict[tuple[str, str | None], dict[str, Any]] = {}  # post_params: the latest
        self._wake = anyio.Event()
        self._ending = False
        self._token = anyio.lowlevel.current_token()
        self._thread = threading.get_ident()

    def wants_list_changed(self, kind: str) -> str | None:
        """The notification to send for a change of registry ``kind``, or None if not subscribed."""
        entry = _LIST_CHANGED.get(kind)
        if entry is None or entry[2] not in self.methods:
            return None
        return entry[2]

    def watches(self, uri: str) -> bool:
        return bool(self.uris) and covers(self.uris, uri)

    def post(self, method: str, uri: str | None = None) -> None:
        """Queue a notification (from any thread)."""
        self._on_loop(self._post, method, uri)

    def post_params(self, method: str, key: str, params: dict[str, Any]) -> None:
        """Queue a notification with its own params (from any thread); a later one for the same
        ``(method, key)`` replaces it while it waits (an extension's, e.g. ``notifications/tasks``)."""
        self._on_loop(self._post_params, method, key, params)

    def _post_params(self, method: str, key: str, params: dict[str, Any]) -> None:
        if not self._ending:
            self._payloads[(method, key)] = params
            self._post(method, key)

    def end(self) -> None:
        """End gracefully (from any thread): deliver what is pending, then answer the listen request."""
        self._on_loop(self._end)

    def _on_loop(self, fn: Any, *args: Any) -> None:
        if threading.get_ident() == self._thread:
            fn(*args)
            return
        import anyio.from_thread  # here: only threads need it (it is not on the serving path)

        try:
            anyio.from_thread.run_sync(fn, *args, token=self._token)
        except Exception:  # the loop is gone: the subscription is over anyway
            logger.debug("subscription %r: its event loop is gone", self.id)

    def _post(self, method: str, uri: str | None) -> None:
        if self._ending:
            return
        if len(self._pending) >= MAX_PENDING:  # a client that does not keep up: it re-listens
            logger.warning("subscription %r: %d notifications pending; ending it", self.id, MAX_PENDING)
            self._end()
            return
        self._pending[(method, uri)] = None
        self._wake.set()

    def _end(self) -> None:
        self._ending = True
        self._wake.set()

    async def deliver(self, rc: RequestContext) -> None:
        """Send what is posted until the subscription is ended (returns) or cancelled (raises)."""
        tag = {SUBSCRIPTION_ID: self.id}
        while True:
            while self._pending:
                key = next(iter(self._pending))  # the oldest first
                del self._pending[key]
                method, uri = key
                payload = self._payloads.pop(key, None)
                params: dict[str, Any] = {"_meta": tag}
                if payload is not None:
                    params = {**payload, "_meta": tag}
                elif uri is not None:
                    params["uri"] = uri
                await rc.notify(method, params)
            if self._ending:
                return
            await self._wake.wait()
            self._wake = anyio.Event()


class SubscriptionHub:
    """Every open listen subscription of a :class:`Server`; where changes are fanned out to them."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._listeners: set[Listener] = set()
        self._ended_owners: weakref.WeakSet[Any] = weakref.WeakSet()

    def __len__(self) -> int:
        return len(self._listeners)

    def add(self, listener: Listener) -> None:
        with self._lock:
            self._listeners.add(listener)
            ended = listener.owner in self._ended_owners
        if ended:
            listener.end()

    def remove(self, listener: Listener) -> None:
        with self._lock:
            self._listeners.discard(listener)

    def listeners(self) -> list[Listener]:
        with self._lock:
            return list(self._listeners)

    def list_changed(self, kind: str) -> None:
        """A registry of ``kind`` changed (any thread): tell the listeners that asked."""
        for listener in self.listeners():
            method = listener.wants_list_changed(kind)
            if method is not None:
                listener.post(method)

    def resource_updated(self, uri: str) -> int:
        """``uri`` changed: queue ``notifications/resources/updated`` for the listeners watching it;
        how many."""
        told = 0
        for listener in self.listeners():
            if listener.watches(uri):
                listener.post(UPDATED, uri)
                told += 1
        return told

    def end_all(self, owner: object | None = None) -> int:
        """End subscriptions gracefully (each gets its final result); how many.

        With ``owner``, only those opened on that connection, including any it opens from now on
        (the connection is going away); without, every subscription open now.
        """
        with self._lock:
            if owner is not None:
                self._ended_owners.add(owner)
            chosen = [lis for lis in self._listeners if owner is None or lis.owner is owner]
        for listener in chosen:
            listener.end()
        return len(chosen)


async def listen(session: ServerSession, params: dict[str, Any], rc: RequestContext) -> Any:
    """``subscriptions/listen``: acknowledge, deliver until ended; the final result on a graceful end."""
    revision = session.revision
    if revision is None or revision.has_handshake:
        raise MethodNotFound(
            "Method not found: subscriptions/listen (only the stateless protocol revisions have it)"
        )
    requested = params.get("notifications")
    if type(requested) is not dict:
        raise InvalidParams("Invalid params: subscriptions/listen needs 'notifications' (an object)")
    granted = honoured(requested, session.capabilities)
    server = session.server
    if server.extensions:  # their own filters, for the extensions this request declared
        declared = client_extensions(session.client_capabilities)
        for ext_id, extension in server.extensions.items():
            if ext_id in declared and extension.serves(revision):
                granted.update(extension.listen_filters(requested))
    hub = server.subscriptions
    listener = Listener(rc.id, granted, session.outbound)
    hub.add(listener)
    try:
        await rc.notify(ACKNOWLEDGED, {"_meta": {SUBSCRIPTION_ID: rc.id}, "notifications": granted})
        await listener.deliver(rc)
    except ConnectionClosed:
        logger.debug("subscription %r: the connection closed", rc.id)
    finally:
        hub.remove(listener)
    return {"resultType": "complete", "_meta": {SUBSCRIPTION_ID: rc.id}}
