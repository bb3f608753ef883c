"""The old homes of the HTTP server's policy modules still export every public name (for one release)."""

from __future__ import annotations

import importlib

import pytest

import jsonrpc_mcp.http as facade


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("jsonrpc_mcp.transports.http.auth", "jsonrpc_mcp.http._auth"),
        ("jsonrpc_mcp.transports.http.security", "jsonrpc_mcp.http._security"),
    ],
)
def test_the_old_module_re_exports_the_new_ones_public_names(old: str, new: str) -> None:
    old_module, new_module = importlib.import_module(old), importlib.import_module(new)
    assert sorted(old_module.__all__) == sorted(new_module.__all__)
    for name in new_module.__all__:
        assert getattr(old_module, name) is getattr(new_module, name), name
        if name in facade.__all__:  # the facade keeps the user-facing ones, the same objects
            assert getattr(facade, name) is getattr(new_module, name), name


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
