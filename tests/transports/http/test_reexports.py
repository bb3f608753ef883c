"""The HTTP server's facade, :mod:`jsonrpc_mcp.http`: what a server author imports, from one place."""

from __future__ import annotations

import importlib

import jsonrpc_mcp.http as facade


def test_the_facade_exports_what_a_server_author_uses() -> None:
    wanted = {
        "McpHttpApp",
        "AuthSettings",
        "AccessToken",
        "TokenVerifier",
        "StaticTokenVerifier",
        "EventStore",
    }
    assert wanted <= set(facade.__all__)
    for name in facade.__all__:
        assert getattr(facade, name) is not None


def test_the_app_module_keeps_the_names_tests_and_users_import() -> None:
    app = importlib.import_module("jsonrpc_mcp.http.app")
    for name in ("McpHttpApp", "HttpSession", "Scope", "Receive", "Send", "_PostChannel", "_ModernCall"):
        assert hasattr(app, name), name
    assert app.McpHttpApp is facade.McpHttpApp
