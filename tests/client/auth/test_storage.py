"""Token storage: in memory, and the file store (owner-only, atomic, one entry per key)."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from jsonrpc_mcp.client.auth import FileTokenStorage, InMemoryTokenStorage, TokenStorage, default_token_file

pytestmark = pytest.mark.anyio


@pytest.mark.parametrize("kind", ["memory", "file"])
async def test_entries_are_kept_by_key(kind: str, tmp_path: Path) -> None:
    storage: TokenStorage = (
        InMemoryTokenStorage() if kind == "memory" else FileTokenStorage(tmp_path / "t.json")
    )
    assert await storage.get("a") is None
    await storage.set("a", {"tokens": {"access_token": "x"}})
    await storage.set("b", {"n": 1})
    assert await storage.get("a") == {"tokens": {"access_token": "x"}}
    await storage.delete("a")
    await storage.delete("missing")
    assert await storage.get("a") is None
    assert await storage.get("b") == {"n": 1}


async def test_the_file_is_readable_by_its_owner_only_and_survives_the_object(tmp_path: Path) -> None:
    path = tmp_path / "sub" / "tokens.json"
    await FileTokenStorage(path).set("server", {"issuer": "https://as"})
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    assert await FileTokenStorage(path).get("server") == {"issuer": "https://as"}
    assert [p.name for p in path.parent.iterdir()] == ["tokens.json"]  # no temporary file left


async def test_an_unreadable_file_is_treated_as_empty_and_replaced(tmp_path: Path) -> None:
    path = tmp_path / "tokens.json"
    path.write_text("{not json")
    storage = FileTokenStorage(path)
    assert await storage.get("x") is None
    await storage.set("x", {"ok": True})
    assert await storage.get("x") == {"ok": True}


def test_the_default_file_follows_the_environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("JSONRPC_MCP_TOKENS", str(tmp_path / "explicit.json"))
    assert default_token_file() == tmp_path / "explicit.json"
    monkeypatch.delenv("JSONRPC_MCP_TOKENS")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path))
    if os.name != "nt":
        assert default_token_file() == tmp_path / "jsonrpc-mcp" / "tokens.json"
