"""The client's side of MCP Apps (``io.modelcontextprotocol/ui``, SEP-1865): a tool's app link and
its view, read and checked so that a Python host can render it (see :mod:`jsonrpc_mcp.apps._client`).

A host declares the extension with ``Client(extensions={EXTENSION_ID: CLIENT_SETTINGS})`` (from
:mod:`jsonrpc_mcp.apps`); a server then also lists the tools meant for views alone.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..apps._client import AppView
    from ..apps._model import AppLink

__all__ = ["AppsMixin"]


class AppsMixin:
    """``app_link``, ``read_app`` and ``model_tools`` (a mixin of the Client)."""

    if TYPE_CHECKING:

        async def list_tools(self) -> list[dict[str, Any]]: ...

        async def list_resources(self) -> list[dict[str, Any]]: ...

        async def read_resource(self, uri: str) -> dict[str, Any]: ...

    async def app_link(self, tool: str | Mapping[str, Any]) -> AppLink | None:
        """The app link (view URI, visibility) of a tool, given by name or as its ``tools/list``
        entry; None for a tool without one. Raises ``AppError`` for an unknown tool or a malformed
        ``_meta.ui``."""
        from ..apps._client import AppError
        from ..apps._model import app_link

        entry = await self._tool_entry(tool)
        try:
            return app_link(entry)
        except ValueError as exc:
            raise AppError(str(exc)) from None

    async def read_app(self, target: str | Mapping[str, Any]) -> AppView:
        """Read a view and check it (one content item of MIME type ``text/html;profile=mcp-app``,
        a ``_meta.ui`` of the extension's shape): ``target`` is its ``ui://`` URI, or a tool (name
        or ``tools/list`` entry) whose view to read. Raises ``AppError`` when a host must not render
        it, ``JsonRpcError`` when the server refuses the read."""
        from ..apps._client import AppError, check_view
        from ..apps._model import SCHEME

        if isinstance(target, str) and target.startswith(SCHEME):
            uri = target
        else:
            link = await self.app_link(target)
            name = target if isinstance(target, str) else target.get("name")
            if link is None or link.resource_uri is None:
                raise AppError(f"tool {name!r} links to no view (no _meta.ui.resourceUri)")
            uri = link.resource_uri
        result = await self.read_resource(uri)
        listing = None
        contents = result.get("contents") if isinstance(result, dict) else None
        first = contents[0] if isinstance(contents, list) and contents else None
        if isinstance(first, dict) and not isinstance((first.get("_meta") or {}).get("ui"), dict):
            listed = [r for r in await self.list_resources() if r.get("uri") == uri]  # the fallback
            listing = listed[0] if listed else None
        return check_view(uri, result, listing)

    async def model_tools(self) -> list[dict[str, Any]]:
        """The tools a host offers its model: those whose visibility includes ``"model"``."""
        from ..apps._model import model_tools

        return [dict(tool) for tool in model_tools(await self.list_tools())]

    async def _tool_entry(self, tool: str | Mapping[str, Any]) -> Mapping[str, Any]:
        if not isinstance(tool, str):
            return tool
        for entry in await self.list_tools():
            if entry.get("name") == tool:
                return entry
        from ..apps._client import AppError

        raise AppError(f"the server lists no tool {tool!r}")
