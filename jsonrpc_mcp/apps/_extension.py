"""The MCP Apps extension (``io.modelcontextprotocol/ui``, SEP-1865) on a :class:`Server`.

Theory of operation
-------------------
:class:`Apps` is an :class:`Extension` holding the server's *views* (UI resources) and the links
from tools to them. ``server.apps`` makes one on first use and adds it to the server; a server that
never touches it pays nothing (no middleware, no extra capability).

* A view is a resource of the server (``ui://...``, ``text/html;profile=mcp-app``) made from a
  string, a file (read at each ``resources/read``, so an edited file is served as it is now) or a
  function (called at each read like a resource handler: it may take a ``Context``). Its
  ``_meta.ui`` (CSP origins, permissions, dedicated domain, border preference) travels on the
  ``resources/list`` entry and on every ``resources/read`` content item (the item's is the one the
  2026-01-26 specification reads; the draft reads both, preferring the item's).
* A tool links to a view with ``_meta.ui.resourceUri`` and says who may call it with
  ``_meta.ui.visibility`` (``["model", "app"]`` when omitted). The host filters the model's tool
  list; a host that did not declare the extension cannot, so for a request whose client did not
  declare it (with the ``text/html;profile=mcp-app`` MIME type) the extension's middleware leaves
  app-only tools out of ``tools/list`` and answers their ``tools/call`` as for an unknown tool
  (-32602): such a client would otherwise hand them to its model (the spec's servers SHOULD check
  the client's capabilities before offering UI-enabled tools). Links to a model-visible tool are
  kept for every client: a host without Apps just ignores them.
* The extension is declared in ``capabilities.extensions`` in both eras, in the revisions that
  carry ``_meta`` on definitions (2025-06-18 on), with the settings
  ``{"mimeTypes": ["text/html;profile=mcp-app"]}``.
* Structured content passes through untouched: a linked tool's result (``content``,
  ``structuredContent``, ``_meta``) is what the host forwards to the view.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from .. import wire
from ..errors import RegistrationError
from ..jsonrpc.errors import InvalidParams
from ..server._extensions import Extension, call_client_extensions
from ..server._registry import Resource
from ._model import EXTENSION_ID, MIME_TYPE, SCHEME, Visibility, declares_apps, resource_meta, tool_meta

if TYPE_CHECKING:
    from ..revisions import Revision
    from ..server._context import Context
    from ..server._pipeline import Call, CallNext
    from ..server._registry import Tool
    from ..server._server import Server

__all__ = ["Apps", "View"]

logger = logging.getLogger("jsonrpc_mcp.apps")
F = TypeVar("F", bound=Callable[..., Any])


class View(Resource):
    """A UI resource: a :class:`Resource` whose read contents carry the MIME type and ``_meta.ui``."""

    ui: dict[str, Any]

    async def read(self, uri: str, variables: dict[str, str], ctx: Context) -> list[dict[str, Any]]:
        """The read's contents, each item carrying the view's ``_meta.ui`` unless it has its own."""
        contents = await super().read(uri, variables, ctx)
        if not ctx.revision.has_definition_meta:
            return contents
        for item in contents:
            meta = item.get("_meta")
            if type(meta) is not dict or "ui" not in meta:
                item["_meta"] = {**(meta if type(meta) is dict else {}), "ui": self.ui}
        return contents


def _file_reader(path: Path) -> Callable[[], str]:
    def read_file() -> str:
        return path.read_text(encoding="utf-8")

    return read_file


def _text(html: str) -> Callable[[], str]:
    def text() -> str:
        return html

    return text


class Apps(Extension):
    """MCP Apps on a server: ``server.apps`` (made on first use) or ``Server(extensions=[Apps()])``.

    Views: :meth:`add_view` (from ``html=``, ``path=`` or ``fn=``) and the :meth:`view` decorator.
    Tools: ``@server.apps.tool(view=uri)`` (:meth:`tool`), :meth:`add_tool`, or :meth:`link` for a
    tool already registered. :meth:`check` lists links to views the server does not have.
    """

    id = EXTENSION_ID
    eras = frozenset({"handshake", "stateless"})

    def __init__(self) -> None:
        self.server: Server | None = None
        self.views: dict[str, View] = {}
        self.links: dict[str, dict[str, Any]] = {}  # tool name -> its _meta.ui
        self._pending: list[tuple[str, Callable[..., Any], dict[str, Any]]] = []
        self.middleware = self._filter
        self._checked = False

    # -- the extension surface ---------------------------------------------------------------------
    def settings(self) -> dict[str, Any]:
        """The capability settings: the UI MIME types this server serves."""
        return {"mimeTypes": [MIME_TYPE]}

    def serves(self, revision: Revision) -> bool:
        """Declared in both eras, where definitions carry ``_meta`` (2025-06-18 on)."""
        return revision.has_definition_meta and super().serves(revision)

    def attach(self, server: Any) -> None:
        """(Called by ``server.add_extension``.) Views and tools declared before go on the server."""
        if self.server is not None:
            raise RegistrationError("this Apps is already added to a server")
        self.server = server
        for uri, view in self.views.items():
            server.resources.add(uri, view)
        pending, self._pending = self._pending, []
        for name, fn, options in pending:
            self.add_tool(name, fn, **options)

    # -- views -------------------------------------------------------------------------------------
    def add_view(
        self,
        uri: str,
        *,
        html: str | None = None,
        path: str | os.PathLike[str] | None = None,
        fn: Callable[..., Any] | None = None,
        name: str | None = None,
        title: str | None = None,
        description: str | None = None,
        connect_domains: Sequence[str] = (),
        resource_domains: Sequence[str] = (),
        frame_domains: Sequence[str] = (),
        base_uri_domains: Sequence[str] = (),
        permissions: Iterable[str] = (),
        domain: str | None = None,
        prefers_border: bool | None = None,
        icons: list[dict[str, Any]] | None = None,
        replace: bool = False,
    ) -> View:
        """Declare a view (a ``ui://`` resource served as ``text/html;profile=mcp-app``) from exactly
        one of ``html`` (the document), ``path`` (an HTML file, read at each read) or ``fn`` (called
        at each read, like a resource handler: returns the document).

        The CSP origins (``connect_domains``: fetch/XHR/WebSocket; ``resource_domains``: scripts,
        styles, images, fonts, media; ``frame_domains``: nested iframes; ``base_uri_domains``),
        ``permissions`` ("camera", "microphone", "geolocation", "clipboardWrite"), ``domain`` and
        ``prefers_border`` become its ``_meta.ui``; a view declaring none of them gets the host's
        restrictive default: no network at all. Raises :class:`RegistrationError`.
        """
        if not isinstance(uri, str) or not uri.startswith(SCHEME) or len(uri) == len(SCHEME):
            raise RegistrationError(f"a view's URI must start with {SCHEME!r}, got {uri!r}")
        if "{" in uri:
            raise RegistrationError(f"view {uri!r}: a view is one resource, not a URI template")
        sources = [s for s in (html, path, fn) if s is not None]
        if len(sources) != 1:
            raise RegistrationError(f"view {uri!r}: give exactly one of html=, path= or fn=")
        if html is not None:
            if not isinstance(html, str):
                raise RegistrationError(f"view {uri!r}: html must be a str")
            reader = _text(html)
        elif path is not None:
            file = Path(path).expanduser().absolute()
            if not file.is_file():
                raise RegistrationError(f"view {uri!r}: no file at {str(file)!r}")
            reader = _file_reader(file)
        else:
            assert fn is not None
            reader = fn
        try:
            ui = resource_meta(
                connect_domains=connect_domains,
                resource_domains=resource_domains,
                frame_domains=frame_domains,
                base_uri_domains=base_uri_domains,
                permissions=permissions,
                domain=domain,
                prefers_border=prefers_border,
            )
        except ValueError as exc:
            raise RegistrationError(f"view {uri!r}: {exc}") from None
        view = View(
            uri,
            reader,
            name=name or (getattr(fn, "__name__", None) if fn is not None else None) or uri[len(SCHEME) :],
            title=title,
            description=description,
            mime_type=MIME_TYPE,
            icons=icons,
            meta={"ui": ui} if ui else None,
        )
        view.ui = ui
        if uri in self.views and not replace:
            raise RegistrationError(f"view {uri!r} is already declared")
        self.views[uri] = view
        if self.server is not None:
            self.server.resources.add(uri, view, replace=replace)
        return view

    def view(self, uri: str, **options: Any) -> Callable[[F], F]:
        """Decorator: the function makes the view's document at each read (see :meth:`add_view`)."""

        def register(fn: F) -> F:
            self.add_view(uri, fn=fn, **options)
            return fn

        return register

    # -- tools -------------------------------------------------------------------------------------
    def add_tool(
        self,
        name: str,
        fn: Callable[..., Any],
        *,
        view: str | None = None,
        visibility: Iterable[Visibility] | None = None,
        meta: dict[str, Any] | None = None,
        **options: Any,
    ) -> Tool | None:
        """Register a tool (``server.add_tool``'s options) linked to ``view`` (a ``ui://`` URI) and
        callable by ``visibility`` (``["model", "app"]`` when omitted; ``["app"]``: only the view).
        Before the extension is on a server, the tool is kept and registered when it is (None)."""
        ui = self._link_meta(name, view, visibility, meta)
        full = {**(meta or {}), "ui": ui}
        if self.server is None:
            self._pending.append(
                (name, fn, {"view": view, "visibility": visibility, "meta": meta, **options})
            )
            return None
        tool = self.server.add_tool(name, fn, meta=full, **options)
        self.links[name] = ui
        self._checked = False
        return tool

    def tool(
        self,
        name: str | None = None,
        *,
        view: str | None = None,
        visibility: Iterable[Visibility] | None = None,
        **options: Any,
    ) -> Callable[[F], F]:
        """Decorator form of :meth:`add_tool`: ``@server.apps.tool(view="ui://notes/board")``."""

        def register(fn: F) -> F:
            self.add_tool(name or fn.__name__, fn, view=view, visibility=visibility, **options)
            return fn

        return register

    def link(
        self, name: str, view: str | None = None, visibility: Iterable[Visibility] | None = None
    ) -> None:
        """Link a tool the server already has to ``view`` (and/or set its visibility)."""
        server = self._server()
        tool = server.tools.get(name)
        if tool is None:
            raise RegistrationError(f"the server has no tool {name!r} to link")
        others = {k: v for k, v in (tool.meta or {}).items() if k != "ui"}  # (a new link replaces)
        ui = self._link_meta(name, view, visibility, others)
        tool.meta = {**others, "ui": ui}
        self.links[name] = ui
        server.tools.add(name, tool, replace=True)  # a new wire form: tools/list rebuilt, clients told
        self._checked = False

    def check(self) -> list[str]:
        """What is wrong with the links: a tool linked to a view the server does not declare."""
        server = self.server
        return [
            f"tool {name!r} links to {ui['resourceUri']!r}, which is no resource of the server"
            for name, ui in self.links.items()
            if "resourceUri" in ui
            and ui["resourceUri"] not in self.views
            and (server is None or ui["resourceUri"] not in server.resources)
        ]

    def _link_meta(
        self,
        name: str,
        view: str | None,
        visibility: Iterable[Visibility] | None,
        meta: dict[str, Any] | None,
    ) -> dict[str, Any]:
        if meta and "ui" in meta:
            raise RegistrationError(f"tool {name!r}: give view= and visibility= instead of meta['ui']")
        if view is None and visibility is None:
            raise RegistrationError(f"tool {name!r}: an app tool needs view= or visibility=")
        try:
            return tool_meta(view, visibility)
        except ValueError as exc:
            raise RegistrationError(f"tool {name!r}: {exc}") from None

    def _server(self) -> Server:
        if self.server is None:
            raise RegistrationError("add the Apps extension to a server first (server.apps does)")
        return self.server

    # -- serving -----------------------------------------------------------------------------------
    def app_only(self, name: str) -> bool:
        """Whether the tool ``name`` is meant for the view alone (visibility without "model")."""
        ui = self.links.get(name)
        return ui is not None and "visibility" in ui and "model" not in ui["visibility"]

    async def _filter(self, call: Call, call_next: CallNext) -> Any:
        """The middleware: app-only tools exist only for clients that declared the extension."""
        method = call.method
        if method != wire.TOOLS_LIST and method != wire.TOOLS_CALL:
            return await call_next(call)
        if not self._checked:
            self._checked = True
            for problem in self.check():
                logger.warning("MCP Apps: %s", problem)
        hidden = [name for name in self.links if self.app_only(name)]
        if not hidden or declares_apps(call_client_extensions(call)):
            return await call_next(call)
        if method == wire.TOOLS_CALL:
            name = call.params.get("name")
            if type(name) is str and name in hidden:
                raise InvalidParams(f"Invalid params: unknown tool {name!r}", {"name": name})
            return await call_next(call)
        result = await call_next(call)
        if type(result) is dict and type(result.get("tools")) is list:
            result = {**result, "tools": [t for t in result["tools"] if t.get("name") not in hidden]}
        return result
