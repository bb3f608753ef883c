"""The MCP server core: registries, sessions, per-request context, schema validation.

The names are loaded on first use (PEP 562), so importing one submodule (``._schema``, ``._mrtr``)
does not load the others.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._lazy import lazy_names

if TYPE_CHECKING:
    from ._asking import Elicited, InputRequest
    from ._context import Context, get_context
    from ._extensions import Extension, ExtensionHandler, call_client_extensions
    from ._introspect import Arg
    from ._pipeline import Call, CallNext, Middleware
    from ._registry import Completer, Prompt, Resource, ResourceContent, ResourceTemplate, Tool, ToolResult
    from ._server import Server
    from ._session import ServerSession

__all__ = [
    "Arg",
    "Call",
    "CallNext",
    "Completer",
    "Context",
    "Elicited",
    "Extension",
    "ExtensionHandler",
    "InputRequest",
    "Middleware",
    "Prompt",
    "Resource",
    "ResourceContent",
    "ResourceTemplate",
    "Server",
    "ServerSession",
    "Tool",
    "ToolResult",
    "call_client_extensions",
    "get_context",
]

if not TYPE_CHECKING:  # hidden from type checkers, which would take any unknown name for Any
    # the TYPE_CHECKING block as data, so no source is read (tests/test_lazy.py: they agree)
    __getattr__, __dir__ = lazy_names(
        globals(),
        {
            "._asking": ("Elicited", "InputRequest"),
            "._context": ("Context", "get_context"),
            "._extensions": ("Extension", "ExtensionHandler", "call_client_extensions"),
            "._introspect": ("Arg",),
            "._pipeline": ("Call", "CallNext", "Middleware"),
            "._registry": (
                "Completer",
                "Prompt",
                "Resource",
                "ResourceContent",
                "ResourceTemplate",
                "Tool",
                "ToolResult",
            ),
            "._server": ("Server",),
            "._session": ("ServerSession",),
        },
    )
