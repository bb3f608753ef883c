"""MCP extensions (SEP-2133): optional protocol surface a server adds beyond its core revisions.

An :class:`Extension` has an identifier (``vendor-prefix/name``, the prefix mandatory, as ``_meta``
keys are spelled), capability settings (``{}``: supported, no settings), request methods of its
own, and optionally a middleware run around every request (to intercept ``tools/call``, say)::

    class Hello(Extension):
        id = "com.example/hello"

        def methods(self) -> dict[str, ExtensionHandler]:
            return {"hello/say": self.say}

        async def say(self, ctx: Context, params: dict[str, Any]) -> dict[str, Any]:
            return {"text": "hello"}

    server = Server("demo", extensions=[Hello()])

Theory of operation
-------------------
Negotiation is symmetric. The server lists each extension under ``capabilities.extensions`` (the
``server/discover`` result, and the ``initialize`` result in the handshake era when the extension
serves that era); the client lists the ones it speaks under its own ``capabilities.extensions``:
per request in the stateless revisions (the envelope's ``clientCapabilities``), once per session in
the handshake era (``initialize``). Nothing is inferred from earlier requests.

An extension's methods are routable where the revision's own are checked (:mod:`._methods`,
:mod:`._stateless`), in the eras it declares (``eras``), without changing any revision's table.
A method of an extension the request's client did not declare is refused with
``MissingRequiredClientCapability`` (-32021, ``data.requiredCapabilities.extensions[id]``): the
extension's surface exists only for clients that negotiated it (SEP-2133: a side lacking an
extension falls back to core behaviour or is rejected with an appropriate error).

A server without extensions pays nothing: the look-ups happen only for methods no revision has,
and no middleware is added.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, ClassVar

from .. import wire
from ..errors import MissingClientCapability, RegistrationError

if TYPE_CHECKING:
    from ..revisions import Revision
    from ._context import Context
    from ._pipeline import Call, Middleware
    from ._server import Server

__all__ = [
    "ERAS",
    "TASKS_ID",
    "Extension",
    "ExtensionHandler",
    "call_client_extensions",
    "check_extension_id",
    "client_extensions",
    "missing_extension",
    "register_extension",
]

# an extension's request handler: (the request's Context, its params) -> the result object
ExtensionHandler = Callable[["Context", dict[str, Any]], Awaitable[dict[str, Any]]]
ERAS = frozenset({"handshake", "stateless"})
TASKS_ID = "io.modelcontextprotocol/tasks"  # the Tasks extension's identifier (see .tasks)

# the _meta key rules: a prefix of dot-separated labels (letter first, letter or digit last,
# hyphens inside), a slash, then a name (alphanumeric at both ends; - _ . inside)
_LABEL = r"[A-Za-z](?:[A-Za-z0-9-]*[A-Za-z0-9])?"
_ID = re.compile(rf"{_LABEL}(?:\.{_LABEL})*/[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?")


def check_extension_id(ext_id: Any) -> str:
    """``ext_id`` if it is a valid extension identifier (``prefix/name``), else ValueError."""
    if not isinstance(ext_id, str) or not _ID.fullmatch(ext_id):
        raise ValueError(
            f"invalid extension identifier {ext_id!r}: it must be 'prefix/name', the prefix dot-separated "
            "labels (e.g. 'io.modelcontextprotocol/tasks', 'com.example/feature')"
        )
    return ext_id


class Extension:
    """An MCP extension a :class:`Server` offers (subclass it; see the module docs).

    ``id``: the identifier (``prefix/name``); ``eras``: where it is declared and its methods are
    routable ("stateless": 2026-07-28 on; add "handshake" for the initialize-era revisions);
    ``middleware``: run around every request of the server (None: none).
    """

    id: ClassVar[str] = ""
    eras: frozenset[str] = frozenset({"stateless"})
    middleware: Middleware | None = None

    def settings(self) -> dict[str, Any]:
        """The capability settings the server declares for this extension (``{}``: supported)."""
        return {}

    def methods(self) -> dict[str, ExtensionHandler]:
        """The extension's request methods: method name -> ``async (ctx, params) -> result``."""
        return {}

    def listen_filters(self, requested: dict[str, Any]) -> dict[str, Any]:
        """The part of a ``subscriptions/listen`` filter (``params.notifications``) this extension
        honours, for a request that declared it: merged into the acknowledgement and kept on the
        listener (``Listener.granted``). Default: none."""
        return {}

    def attach(self, server: Any) -> None:
        """Called once when the extension is added to ``server`` (override to keep a reference)."""

    def serves(self, revision: Revision) -> bool:
        """Whether the extension is declared, and its methods routable, in ``revision``."""
        return ("handshake" if revision.has_handshake else "stateless") in self.eras


def client_extensions(capabilities: Any) -> dict[str, dict[str, Any]]:
    """The extensions a client's capabilities declare (id -> settings; ``{}`` when none)."""
    declared = capabilities.get("extensions") if type(capabilities) is dict else None
    if type(declared) is not dict:
        return {}
    return {k: v if type(v) is dict else {} for k, v in declared.items() if isinstance(k, str)}


def call_client_extensions(call: Call) -> dict[str, dict[str, Any]]:
    """What the client of a request in the middleware chain declared: from the request's envelope
    (stateless) or its session's ``initialize`` (handshake)."""
    if call.era == "stateless":
        meta = call.params.get("_meta")
        return client_extensions(meta.get(wire.CLIENT_CAPABILITIES) if type(meta) is dict else None)
    session = call.session
    return client_extensions(session.client_capabilities if session is not None else None)


def missing_extension(ext_id: str, what: str) -> MissingClientCapability:
    """-32021: serving ``what`` needs the client to declare extension ``ext_id``."""
    return MissingClientCapability(
        f"{what} needs the {ext_id!r} extension, which the client did not declare in capabilities.extensions",
        {"extensions": {ext_id: {}}},
    )


def register_extension(server: Server, extension: Extension) -> None:
    """:meth:`Server.add_extension`: check the identifier and the methods, then install them."""
    ext_id = check_extension_id(extension.id)
    if ext_id in server.extensions:
        raise RegistrationError(f"extension {ext_id!r} is already added")
    methods = extension.methods()
    for method in methods:
        if method in server.extension_methods or any(method in r.methods for r in server.revisions):
            raise RegistrationError(f"extension {ext_id!r}: method {method!r} is already defined")
    server.extensions[ext_id] = extension
    for method, handler in methods.items():
        server.extension_methods[method] = (extension, handler)
    server._capabilities_cache.clear()
    extension.attach(server)
    if extension.middleware is not None:
        server.add_middleware(extension.middleware)
