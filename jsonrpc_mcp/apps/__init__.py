"""MCP Apps (SEP-1865, the ``io.modelcontextprotocol/ui`` extension): interactive views a host renders.

A server declares views (``ui://`` resources of MIME type ``text/html;profile=mcp-app``) and links
tools to them with ``server.apps`` (:class:`Apps`); a client reads a tool's link (:func:`app_link`)
and its view (``Client.read_app``). See docs/apps.md. The names are loaded on first use (PEP 562):
a client does not load the server.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._lazy import lazy_names

if TYPE_CHECKING:
    from ._client import AppError, AppView, check_view
    from ._extension import Apps, View
    from ._model import (
        CLIENT_SETTINGS,
        EXTENSION_ID,
        MIME_TYPE,
        SCHEME,
        AppLink,
        Visibility,
        app_link,
        content_security_policy,
        declares_apps,
        model_tools,
        resource_meta,
        resource_meta_problems,
        tool_meta,
        tool_meta_problems,
    )

__all__ = [
    "CLIENT_SETTINGS",
    "EXTENSION_ID",
    "MIME_TYPE",
    "SCHEME",
    "AppError",
    "AppLink",
    "AppView",
    "Apps",
    "View",
    "Visibility",
    "app_link",
    "check_view",
    "content_security_policy",
    "declares_apps",
    "model_tools",
    "resource_meta",
    "resource_meta_problems",
    "tool_meta",
    "tool_meta_problems",
]

if not TYPE_CHECKING:  # hidden from type checkers, which would take any unknown name for Any
    __getattr__, __dir__ = lazy_names(
        globals(),
        {
            "._client": ("AppError", "AppView", "check_view"),
            "._extension": ("Apps", "View"),
            "._model": (
                "CLIENT_SETTINGS",
                "EXTENSION_ID",
                "MIME_TYPE",
                "SCHEME",
                "AppLink",
                "Visibility",
                "app_link",
                "content_security_policy",
                "declares_apps",
                "model_tools",
                "resource_meta",
                "resource_meta_problems",
                "tool_meta",
                "tool_meta_problems",
            ),
        },
    )
