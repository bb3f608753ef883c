"""An MCP proxy: one object that serves, as an MCP server, whatever an upstream MCP server offers,
on any transport and in either era (``jsonrpc-mcp bridge`` is its command)::

    from jsonrpc_mcp.proxy import Proxy

    proxy = Proxy.http("https://mcp.example.com/mcp")  # a Server: serve it any way
    proxy.run()  # over stdio

See :mod:`jsonrpc_mcp.proxy._proxy` for how it works.
"""

from __future__ import annotations

from ._proxy import DEFAULT_CLIENT_CAPABILITIES, Proxy

__all__ = ["DEFAULT_CLIENT_CAPABILITIES", "Proxy"]
