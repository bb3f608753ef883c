"""Where the OAuth client keeps what it learned: client registrations and tokens, one entry per
server and authorization server (issuer).

A storage is any object with three async methods (:class:`TokenStorage`); two ship here:
:class:`InMemoryTokenStorage` (the default: forgotten when the process ends) and
:class:`FileTokenStorage` (one JSON file, mode 0600, written atomically: what the CLI and the bridge
use so that the browser step happens once)."""

from __future__ import annotations

import contextlib
import os
import sys
import tempfile
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

import anyio
import orjson

__all__ = ["FileTokenStorage", "InMemoryTokenStorage", "TokenStorage", "default_token_file"]


@runtime_checkable
class TokenStorage(Protocol):
    """Keeps JSON objects by key. Keys are chosen by :class:`~jsonrpc_mcp.client.auth.OAuth`."""

    async def get(self, key: str) -> dict[str, Any] | None:
        """The entry stored under ``key``, or None."""
        ...

    async def set(self, key: str, value: dict[str, Any]) -> None:
        """Store ``value`` under ``key`` (replacing what was there)."""
        ...

    async def delete(self, key: str) -> None:
        """Forget ``key`` (nothing happens if it is not there)."""
        ...


class InMemoryTokenStorage:
    """Entries in a dict: they last as long as the object."""

    def __init__(self) -> None:
        self._entries: dict[str, dict[str, Any]] = {}

    async def get(self, key: str) -> dict[str, Any] | None:
        """A copy of the entry stored under ``key``, or None."""
        entry = self._entries.get(key)
        return dict(entry) if entry is not None else None

    async def set(self, key: str, value: dict[str, Any]) -> None:
        """Keep a copy of ``value`` under ``key``."""
        self._entries[key] = dict(value)

    async def delete(self, key: str) -> None:
        """Forget ``key``."""
        self._entries.pop(key, None)


def default_token_file() -> Path:
    """``$JSONRPC_MCP_TOKENS``, else the user's config folder: ``$XDG_CONFIG_HOME`` (or
    ``~/.config``) ``/jsonrpc-mcp/tokens.json``; ``%APPDATA%\\jsonrpc-mcp\\tokens.json`` on Windows."""
    explicit = os.environ.get("JSONRPC_MCP_TOKENS")
    if explicit:
        return Path(explicit)
    if sys.platform == "win32" and os.environ.get("APPDATA"):
        base = Path(os.environ["APPDATA"])
    else:
        base = Path(os.environ.get("XDG_CONFIG_HOME") or Path.home() / ".config")
    return base / "jsonrpc-mcp" / "tokens.json"


class FileTokenStorage:
    """Entries in one JSON file (default :func:`default_token_file`), readable by its owner only
    (mode 0600, its folder 0700). Every change rewrites the file atomically (a temporary file in the
    same folder, then a rename), so a crash never leaves half a file. An unreadable file is treated
    as empty (and replaced on the next write)."""

    def __init__(self, path: str | os.PathLike[str] | None = None) -> None:
        self.path = Path(path) if path is not None else default_token_file()
        self._lock = anyio.Lock()

    def _load(self) -> dict[str, Any]:
        try:
            data = orjson.loads(self.path.read_bytes())
        except (OSError, orjson.JSONDecodeError):
            return {}
        return data if isinstance(data, dict) else {}

    def _save(self, entries: dict[str, Any]) -> None:
        folder = self.path.parent
        folder.mkdir(parents=True, exist_ok=True, mode=0o700)
        fd, tmp = tempfile.mkstemp(prefix=".tokens-", dir=folder)  # created 0600
        try:
            with os.fdopen(fd, "wb") as out:
                out.write(orjson.dumps(entries, option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS))
            os.replace(tmp, self.path)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise

    async def get(self, key: str) -> dict[str, Any] | None:
        """The entry stored under ``key`` in the file, or None."""
        async with self._lock:
            entry = (await anyio.to_thread.run_sync(self._load)).get(key)
        return entry if isinstance(entry, dict) else None

    async def set(self, key: str, value: dict[str, Any]) -> None:
        """Store ``value`` under ``key``: the file is rewritten atomically."""
        async with self._lock:

            def update() -> None:
                entries = self._load()
                entries[key] = value
                self._save(entries)

            await anyio.to_thread.run_sync(update)

    async def delete(self, key: str) -> None:
        """Forget ``key`` (the file is rewritten only if it was there)."""
        async with self._lock:

            def update() -> None:
                entries = self._load()
                if entries.pop(key, None) is not None:
                    self._save(entries)

            await anyio.to_thread.run_sync(update)
