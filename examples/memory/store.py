"""SQLite-backed storage for the ``memory`` example server.

Self-contained (stdlib only, no MCP imports) so it can be loaded by file path and tested on its own.
Memories live in ``memory.db`` inside a per-user data directory; an FTS5 index (external content,
kept in sync by triggers) provides keyword search ranked by bm25.
"""

from __future__ import annotations

import json
import os
import sqlite3
import sys
import threading
import unicodedata
from collections.abc import Callable, Mapping
from datetime import date, datetime, time, timedelta, timezone
from pathlib import Path
from types import TracebackType
from typing import Any, Literal, TypedDict, TypeVar

__all__ = [
    "DB_FILENAME",
    "ENV_VAR",
    "SCHEMA_VERSION",
    "Memory",
    "MemoryStore",
    "RecallResult",
    "default_data_dir",
    "normalize_tags",
]

ENV_VAR = "JSONRPC_MCP_MEMORY_DIR"
DB_FILENAME = "memory.db"
SCHEMA_VERSION = 1
_APP_DIR = ("jsonrpc-mcp", "memory")
_MAX_QUERY_TERMS = 64

_SCHEMA = """
CREATE TABLE IF NOT EXISTS memories (
    id         INTEGER PRIMARY KEY,
    text       TEXT NOT NULL,
    tags       TEXT NOT NULL DEFAULT '[]',
    created_at TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS memories_created_at ON memories (created_at);
CREATE VIRTUAL TABLE IF NOT EXISTS memories_fts USING fts5(
    text, tags,
    content = 'memories', content_rowid = 'id',
    tokenize = 'porter unicode61 remove_diacritics 2'
);
CREATE TRIGGER IF NOT EXISTS memories_ai AFTER INSERT ON memories BEGIN
    INSERT INTO memories_fts (rowid, text, tags) VALUES (new.id, new.text, new.tags);
END;
CREATE TRIGGER IF NOT EXISTS memories_ad AFTER DELETE ON memories BEGIN
    INSERT INTO memories_fts (memories_fts, rowid, text, tags) VALUES ('delete', old.id, old.text, old.tags);
END;
CREATE TRIGGER IF NOT EXISTS memories_au AFTER UPDATE ON memories BEGIN
    INSERT INTO memories_fts (memories_fts, rowid, text, tags) VALUES ('delete', old.id, old.text, old.tags);
    INSERT INTO memories_fts (rowid, text, tags) VALUES (new.id, new.text, new.tags);
END;
"""

_COLUMNS = "m.id, m.text, m.tags, m.created_at"
_TAG_FILTER = "EXISTS (SELECT 1 FROM json_each(m.tags) WHERE json_each.value = ?)"


class Memory(TypedDict):
    """One stored memory."""

    id: int
    text: str
    tags: list[str]
    created_at: str


class RecallResult(TypedDict):
    """Result of :meth:`MemoryStore.recall`: ``mode`` says whether full-text search or recency was used."""

    mode: Literal["search", "recent"]
    memories: list[Memory]


_S = TypeVar("_S", bound="MemoryStore")


def _data_dir_for(platform: str, environ: Mapping[str, str], home: Path) -> Path:
    """Resolve the data directory for a given platform/environment (pure; used by ``default_data_dir``)."""
    override = environ.get(ENV_VAR)
    if override:
        return Path(override).expanduser()
    if platform == "win32":
        local = environ.get("LOCALAPPDATA")
        base = Path(local) if local else home / "AppData" / "Local"
    elif platform == "darwin":
        base = home / "Library" / "Application Support"
    else:
        xdg = environ.get("XDG_DATA_HOME")
        # The XDG spec says relative paths must be ignored.
        base = Path(xdg) if xdg and Path(xdg).is_absolute() else home / ".local" / "share"
    return base.joinpath(*_APP_DIR)


def default_data_dir() -> Path:
    """Return the per-user directory holding ``memory.db`` (``$JSONRPC_MCP_MEMORY_DIR`` wins)."""
    return _data_dir_for(sys.platform, os.environ, Path.home())


def normalize_tags(tags: list[str] | None) -> list[str]:
    """Strip, lowercase and dedupe tags (first occurrence wins); drop empty ones."""
    result: list[str] = []
    seen: set[str] = set()
    for raw in tags or ():
        tag = raw.strip().lower()
        if tag and tag not in seen:
            seen.add(tag)
            result.append(tag)
    return result


def _query_terms(keyword: str) -> list[str]:
    """Split user input into words the way FTS5's unicode61 tokenizer does (letters, numbers, Co)."""
    terms: list[str] = []
    seen: set[str] = set()
    current: list[str] = []
    for ch in keyword + " ":
        category = unicodedata.category(ch)
        if category[0] in "LN" or category == "Co":
            current.append(ch)
            continue
        if current:
            term = "".join(current)
            current = []
            if term.casefold() not in seen:
                seen.add(term.casefold())
                terms.append(term)
    return terms[:_MAX_QUERY_TERMS]


def _fts_query(keyword: str) -> str | None:
    """Turn arbitrary user input into a safe FTS5 query: its words, each a quoted string, OR-ed together.

    Punctuation, symbols and control characters are dropped (the tokenizer ignores them anyway) and every
    word is double-quoted, so FTS5 syntax (``AND``, ``NEAR``, ``*``, ``-``, ``^``, ``:``, parentheses)
    in the input is searched for literally instead of being parsed. Returns None if no word remains.
    """
    terms = _query_terms(keyword)
    if not terms:
        return None
    return " OR ".join('"' + term.replace('"', '""') + '"' for term in terms)


def _utc_iso(moment: datetime) -> str:
    """Format a datetime as ISO-8601 UTC with a ``Z`` suffix (naive datetimes are taken as UTC)."""
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=timezone.utc)
    return moment.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def _utc_now() -> datetime:
    return datetime.now(timezone.utc)


def _row_to_memory(row: tuple[Any, ...]) -> Memory:
    memory_id, text, tags_json, created_at = row
    tags = json.loads(tags_json) if tags_json else []
    return Memory(
        id=int(memory_id),
        text=str(text),
        tags=[str(tag) for tag in tags] if isinstance(tags, list) else [],
        created_at=str(created_at),
    )


class MemoryStore:
    """Thread-safe memory store: one SQLite connection (WAL mode) serialised by a lock."""

    def __init__(
        self,
        data_dir: str | os.PathLike[str] | None = None,
        *,
        now: Callable[[], datetime] | None = None,
    ) -> None:
        """Open (creating if needed) ``memory.db`` in ``data_dir`` (default: :func:`default_data_dir`)."""
        directory = Path(data_dir) if data_dir is not None else default_data_dir()
        if not directory.is_dir():
            directory.mkdir(mode=0o700, parents=True, exist_ok=True)
            directory.chmod(0o700)  # mkdir's mode is filtered by the umask
        self._path = directory / DB_FILENAME
        self._now = now or _utc_now
        self._lock = threading.Lock()
        self._closed = False
        self._conn = sqlite3.connect(self._path, check_same_thread=False, timeout=10.0, isolation_level=None)
        try:
            self._init_db()
        except BaseException:
            self._conn.close()
            raise

    def _init_db(self) -> None:
        conn = self._conn
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("PRAGMA synchronous=NORMAL")
        conn.execute("PRAGMA busy_timeout=10000")
        version = int(conn.execute("PRAGMA user_version").fetchone()[0])
        if version > SCHEMA_VERSION:
            raise RuntimeError(
                f"{self._path} has schema version {version}, newer than supported ({SCHEMA_VERSION})"
            )
        if version < SCHEMA_VERSION:
            conn.execute("BEGIN IMMEDIATE")
            try:
                for statement in _split_sql(_SCHEMA):
                    conn.execute(statement)
                conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
            except BaseException:
                conn.execute("ROLLBACK")
                raise
            conn.execute("COMMIT")

    @property
    def path(self) -> Path:
        """Path of the SQLite database file."""
        return self._path

    def remember(self, text: str, tags: list[str] | None = None) -> Memory:
        """Store a memory and return it; raises ``ValueError`` if ``text`` is blank."""
        text = text.strip()
        if not text:
            raise ValueError("memory text must not be empty")
        clean_tags = normalize_tags(tags)
        created_at = _utc_iso(self._now())
        with self._lock:
            cursor = self._conn.execute(
                "INSERT INTO memories (text, tags, created_at) VALUES (?, ?, ?)",
                (text, json.dumps(clean_tags, ensure_ascii=False), created_at),
            )
            memory_id = cursor.lastrowid
        if memory_id is None:  # pragma: no cover - sqlite always sets it after an INSERT
            raise RuntimeError("INSERT did not yield a row id")
        return Memory(id=memory_id, text=text, tags=clean_tags, created_at=created_at)

    def recall(self, keyword: str | None = None, tag: str | None = None, limit: int = 10) -> RecallResult:
        """Full-text search for ``keyword`` (bm25, then newest first), else the most recent memories.

        ``tag`` (normalised like stored tags) restricts both modes to memories carrying exactly that tag.
        """
        if limit < 1:
            raise ValueError("limit must be at least 1")
        tag_value = tag.strip().lower() if tag is not None else ""
        tag_sql = f" AND {_TAG_FILTER}" if tag_value else ""
        tag_args: tuple[str, ...] = (tag_value,) if tag_value else ()
        query = _fts_query(keyword) if keyword is not None else None
        with self._lock:
            if query is not None:
                rows = self._conn.execute(
                    f"SELECT {_COLUMNS} FROM memories_fts JOIN memories AS m ON m.id = memories_fts.rowid"
                    f" WHERE memories_fts MATCH ?{tag_sql}"
                    " ORDER BY bm25(memories_fts), m.created_at DESC, m.id DESC LIMIT ?",
                    (query, *tag_args, limit),
                ).fetchall()
                if rows:
                    return RecallResult(mode="search", memories=[_row_to_memory(r) for r in rows])
            rows = self._conn.execute(
                f"SELECT {_COLUMNS} FROM memories AS m WHERE 1{tag_sql}"
                " ORDER BY m.created_at DESC, m.id DESC LIMIT ?",
                (*tag_args, limit),
            ).fetchall()
        return RecallResult(mode="recent", memories=[_row_to_memory(r) for r in rows])

    def forget(self, memory_id: int) -> bool:
        """Delete a memory; return True if it existed."""
        with self._lock:
            cursor = self._conn.execute("DELETE FROM memories WHERE id = ?", (memory_id,))
            return cursor.rowcount > 0

    def tagged(self, tag: str) -> list[Memory]:
        """Every memory carrying ``tag`` (normalized), ordered by id."""
        clean = normalize_tags([tag])
        if not clean:
            return []
        return [m for m in self.all() if clean[0] in m["tags"]]

    def tag_counts(self) -> dict[str, int]:
        """Every tag in use and how many memories carry it, most used first (then by name)."""
        counts: dict[str, int] = {}
        for memory in self.all():
            for tag in memory["tags"]:
                counts[tag] = counts.get(tag, 0) + 1
        return dict(sorted(counts.items(), key=lambda item: (-item[1], item[0])))

    def get(self, memory_id: int) -> Memory | None:
        """Return one memory by id, or None."""
        with self._lock:
            row = self._conn.execute(
                f"SELECT {_COLUMNS} FROM memories AS m WHERE m.id = ?", (memory_id,)
            ).fetchone()
        return _row_to_memory(row) if row is not None else None

    def all(self) -> list[Memory]:
        """Every memory, ordered by id."""
        with self._lock:
            rows = self._conn.execute(f"SELECT {_COLUMNS} FROM memories AS m ORDER BY m.id").fetchall()
        return [_row_to_memory(r) for r in rows]

    def on_day(self, day: date) -> list[Memory]:
        """Memories created on the given UTC day, oldest first."""
        if isinstance(day, datetime):
            day = (day if day.tzinfo is None else day.astimezone(timezone.utc)).date()
        start = _utc_iso(datetime.combine(day, time.min))
        end = _utc_iso(datetime.combine(day + timedelta(days=1), time.min))
        with self._lock:
            rows = self._conn.execute(
                f"SELECT {_COLUMNS} FROM memories AS m WHERE m.created_at >= ? AND m.created_at < ?"
                " ORDER BY m.created_at, m.id",
                (start, end),
            ).fetchall()
        return [_row_to_memory(r) for r in rows]

    def close(self) -> None:
        """Close the database connection (idempotent)."""
        with self._lock:
            if not self._closed:
                self._closed = True
                self._conn.close()

    def __enter__(self: _S) -> _S:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()


def _split_sql(script: str) -> list[str]:
    """Split a DDL script into statements (``sqlite3.complete_statement`` handles trigger bodies)."""
    statements: list[str] = []
    buffer = ""
    for line in script.splitlines(keepends=True):
        buffer += line
        if sqlite3.complete_statement(buffer):
            statements.append(buffer.strip())
            buffer = ""
    if buffer.strip():
        statements.append(buffer.strip())
    return statements
