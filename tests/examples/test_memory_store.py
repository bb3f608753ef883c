"""Tests for the storage layer of the ``memory`` example server (examples/memory/store.py)."""

from __future__ import annotations

import random
import sqlite3
import stat
import sys
import threading
from collections.abc import Iterator
from datetime import date, datetime, timedelta, timezone
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from tests import timeouts

from .support import FakeClock, load_module

REPO_ROOT = Path(__file__).resolve().parents[2]
STORE_PATH = REPO_ROOT / "examples" / "memory" / "store.py"


def _load_store() -> ModuleType:
    return load_module(STORE_PATH, "_memory_store_under_test")


store_mod = _load_store()
MemoryStore: Any = store_mod.MemoryStore


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock(datetime(2024, 5, 1, 12, 0, tzinfo=timezone.utc))


@pytest.fixture
def store(tmp_path: Path, clock: FakeClock) -> Iterator[Any]:
    with MemoryStore(tmp_path / "data", now=clock) as s:
        yield s


def _ids(result: dict[str, Any]) -> list[int]:
    return [m["id"] for m in result["memories"]]


def test_remember_normalises_and_returns_memory(store: Any) -> None:
    mem = store.remember("  Buy oat milk  ", tags=[" Shopping", "shopping", "", "  ", "URGENT", "urgent "])
    assert mem == {
        "id": mem["id"],
        "text": "Buy oat milk",
        "tags": ["shopping", "urgent"],
        "created_at": "2024-05-01T12:00:00Z",
    }
    assert isinstance(mem["id"], int)
    assert store.all() == [mem]
    assert store.get(mem["id"]) == mem


@pytest.mark.parametrize("text", ["", "   ", "\n\t "])
def test_remember_rejects_blank_text(store: Any, text: str) -> None:
    with pytest.raises(ValueError):
        store.remember(text)
    assert store.all() == []


def test_created_at_is_utc_with_z(tmp_path: Path) -> None:
    plus_two = timezone(timedelta(hours=2))
    with MemoryStore(tmp_path, now=lambda: datetime(2024, 1, 1, 1, 30, tzinfo=plus_two)) as s:
        mem = s.remember("timezone check")
    assert mem["created_at"] == "2023-12-31T23:30:00Z"


def test_recall_by_keyword(store: Any) -> None:
    a = store.remember("The Eiffel tower is in Paris")
    store.remember("Bananas are yellow")
    c = store.remember("Paris has great bakeries", tags=["travel"])
    result = store.recall("paris")
    assert result["mode"] == "search"
    assert set(_ids(result)) == {a["id"], c["id"]}
    # Case-insensitive, diacritic-insensitive and stemmed.
    d = store.remember("Visited a café near the river")
    assert _ids(store.recall("CAFE")) == [d["id"]]
    e = store.remember("I was running late")
    assert e["id"] in _ids(store.recall("run"))
    # Tags are indexed too.
    assert _ids(store.recall("travel")) == [c["id"]]


def test_recall_ranks_by_relevance_then_recency(store: Any) -> None:
    weak = store.remember("A long note that mentions python once among many other unrelated words here")
    strong = store.remember("python python python")
    assert _ids(store.recall("python")) == [strong["id"], weak["id"]]
    # Equal relevance: newest first.
    older = store.remember("kiwi fruit")
    newer = store.remember("kiwi fruit")
    assert _ids(store.recall("kiwi")) == [newer["id"], older["id"]]
    # Matching more of the query terms ranks higher.
    both = store.remember("green kiwi")
    assert _ids(store.recall("green kiwi"))[0] == both["id"]


def test_recall_limit(store: Any) -> None:
    for i in range(15):
        store.remember(f"note number {i} about apples")
    assert len(store.recall("apples")["memories"]) == 10
    assert len(store.recall("apples", limit=3)["memories"]) == 3
    assert len(store.recall(limit=4)["memories"]) == 4
    with pytest.raises(ValueError):
        store.recall(limit=0)


def test_recall_tag_filter(store: Any) -> None:
    work = store.remember("Quarterly report due", tags=["Work"])
    home = store.remember("Report the leaking tap", tags=["home"])
    work2 = store.remember("Standup moved", tags=["work", "meetings"])
    store.remember("Untagged thought")

    searched = store.recall("report", tag="  WORK ")
    assert searched["mode"] == "search"
    assert _ids(searched) == [work["id"]]

    recent = store.recall(tag="work")
    assert recent["mode"] == "recent"
    assert _ids(recent) == [work2["id"], work["id"]]

    # Exact match: a tag prefix or substring does not match.
    assert store.recall(tag="wor")["memories"] == []
    assert store.recall(tag="meet")["memories"] == []
    assert _ids(store.recall(tag="home")) == [home["id"]]
    # Search hits outside the tag fall back to recent memories with that tag.
    fallback = store.recall("leaking", tag="work")
    assert fallback["mode"] == "recent"
    assert _ids(fallback) == [work2["id"], work["id"]]


def test_recall_recency_fallback(store: Any) -> None:
    first = store.remember("alpha")
    second = store.remember("beta")
    third = store.remember("gamma")

    no_keyword = store.recall()
    assert no_keyword["mode"] == "recent"
    assert _ids(no_keyword) == [third["id"], second["id"], first["id"]]

    no_hits = store.recall("zeppelin", limit=2)
    assert no_hits["mode"] == "recent"
    assert _ids(no_hits) == [third["id"], second["id"]]

    blank = store.recall("   ")
    assert blank["mode"] == "recent"
    assert len(blank["memories"]) == 3


def test_recall_on_empty_store(store: Any) -> None:
    assert store.recall("anything") == {"mode": "recent", "memories": []}
    assert store.recall() == {"mode": "recent", "memories": []}


HOSTILE = [
    '"',
    '""',
    '"unbalanced',
    "foo*",
    "*",
    "AND OR NOT",
    "AND",
    "NOT",
    "(",
    ")",
    "(foo",
    "-x",
    "-",
    "NEAR(",
    "NEAR(a b, 3)",
    "text:foo",
    "tags:",
    "^start",
    "a + b",
    "{text tags}: foo",
    "foo AND (bar OR",
    "'; DROP TABLE memories; --",
    "\x00",
    "nul\x00byte",
    "😀",
    "🦊 fox",
    "日本語のテキスト",
    "Ünïcödé",
    "\\",
    "%_",
    "x" * 5000,
    " ".join(["word"] * 500),
]


@pytest.mark.parametrize("keyword", HOSTILE)
def test_hostile_fts_input_never_raises(store: Any, keyword: str) -> None:
    store.remember("A quick brown fox with AND, OR and NOT in it", tags=["foo"])
    store.remember("日本語のテキスト sample")
    result = store.recall(keyword)
    assert result["mode"] in ("search", "recent")
    assert 1 <= len(result["memories"]) <= 2
    assert store.recall(keyword, tag="foo")["memories"]


def test_hostile_input_still_finds_real_words(store: Any) -> None:
    fox = store.remember("The quick brown fox")
    store.remember("Something else")
    for keyword in ['"fox', "fox*", "(fox)", "-fox", "NEAR(fox", "🦊 fox", "fox AND", "text:fox"]:
        result = store.recall(keyword)
        assert result["mode"] == "search", keyword
        assert _ids(result) == [fox["id"]], keyword
    # Operators are treated as plain words, not syntax.
    conj = store.remember("this AND that")
    assert _ids(store.recall("AND")) == [conj["id"]]


def test_forget(store: Any) -> None:
    a = store.remember("keep me")
    b = store.remember("drop me")
    assert store.forget(b["id"]) is True
    assert store.forget(b["id"]) is False
    assert store.forget(999_999) is False
    assert store.all() == [a]
    assert store.get(b["id"]) is None


def test_forget_keeps_fts_consistent(store: Any) -> None:
    gone = store.remember("zebra crossing", tags=["zoo"])
    kept = store.remember("giraffe neck", tags=["zoo"])
    assert _ids(store.recall("zebra")) == [gone["id"]]
    assert store.forget(gone["id"])

    for keyword in ("zebra", "crossing", "zoo", "zebra giraffe"):
        result = store.recall(keyword)
        assert gone["id"] not in _ids(result), keyword
    assert store.recall("zebra")["mode"] == "recent"
    assert _ids(store.recall("zoo")) == [kept["id"]]
    assert _ids(store.recall(tag="zoo")) == [kept["id"]]

    # A new memory may reuse the id; the old text must not resurface under it.
    new = store.remember("penguin")
    assert store.recall("zebra")["mode"] == "recent"
    assert _ids(store.recall("penguin")) == [new["id"]]

    with sqlite3.connect(store.path) as conn:
        conn.execute("INSERT INTO memories_fts (memories_fts) VALUES ('integrity-check')")
        (fts_rows,) = conn.execute(
            "SELECT count(*) FROM memories_fts WHERE memories_fts MATCH 'zebra'"
        ).fetchone()
    assert fts_rows == 0


def test_on_day(tmp_path: Path) -> None:
    times = iter(
        [
            datetime(2024, 3, 9, 23, 59, 59, tzinfo=timezone.utc),
            datetime(2024, 3, 10, 0, 0, 0, tzinfo=timezone.utc),
            datetime(2024, 3, 10, 18, 0, tzinfo=timezone.utc),
            # 01:00 on the 11th in UTC+5 is 20:00 on the 10th in UTC.
            datetime(2024, 3, 11, 1, 0, tzinfo=timezone(timedelta(hours=5))),
            datetime(2024, 3, 11, 0, 0, tzinfo=timezone.utc),
        ]
    )
    with MemoryStore(tmp_path, now=lambda: next(times)) as s:
        before, start, evening, shifted, after = (s.remember(f"m{i}") for i in range(5))
        day = s.on_day(date(2024, 3, 10))
        assert [m["id"] for m in day] == [start["id"], evening["id"], shifted["id"]]
        assert [m["id"] for m in s.on_day(date(2024, 3, 9))] == [before["id"]]
        assert [m["id"] for m in s.on_day(date(2024, 3, 11))] == [after["id"]]
        assert s.on_day(date(2024, 3, 12)) == []


def test_on_day_oldest_first_even_if_inserted_out_of_order(tmp_path: Path) -> None:
    times = iter([datetime(2024, 6, 1, 15, 0), datetime(2024, 6, 1, 9, 0)])
    with MemoryStore(tmp_path, now=lambda: next(times)) as s:
        late = s.remember("late")
        early = s.remember("early")
        assert [m["id"] for m in s.on_day(date(2024, 6, 1))] == [early["id"], late["id"]]


def test_default_data_dir_env_override(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    target = tmp_path / "custom" / "dir"
    monkeypatch.setenv("JSONRPC_MCP_MEMORY_DIR", str(target))
    assert store_mod.default_data_dir() == target
    with MemoryStore() as s:
        s.remember("stored in the override dir")
        assert s.path == target / "memory.db"
    assert (target / "memory.db").is_file()


def test_default_data_dir_per_platform(tmp_path: Path) -> None:
    home = tmp_path / "home"
    resolve = store_mod._data_dir_for
    assert resolve("linux", {}, home) == home / ".local/share/jsonrpc-mcp/memory"
    assert resolve("linux", {"XDG_DATA_HOME": "/xdg"}, home) == Path("/xdg/jsonrpc-mcp/memory")
    assert resolve("linux", {"XDG_DATA_HOME": "relative"}, home) == home / ".local/share/jsonrpc-mcp/memory"
    assert resolve("darwin", {}, home) == home / "Library/Application Support/jsonrpc-mcp/memory"
    assert (
        resolve("win32", {"LOCALAPPDATA": str(tmp_path / "la")}, home) == tmp_path / "la/jsonrpc-mcp/memory"
    )
    assert resolve("win32", {}, home) == home / "AppData/Local/jsonrpc-mcp/memory"
    env = {"JSONRPC_MCP_MEMORY_DIR": str(tmp_path / "x"), "XDG_DATA_HOME": "/xdg"}
    assert resolve("linux", env, home) == tmp_path / "x"
    assert resolve("linux", {"JSONRPC_MCP_MEMORY_DIR": ""}, home) == home / ".local/share/jsonrpc-mcp/memory"


def test_data_dir_created_private_with_wal(tmp_path: Path) -> None:
    data_dir = tmp_path / "a" / "b"
    with MemoryStore(data_dir) as s:
        assert data_dir.is_dir()
        if sys.platform != "win32":
            assert stat.S_IMODE(data_dir.stat().st_mode) == 0o700
        s.remember("x")
    with sqlite3.connect(data_dir / "memory.db") as conn:
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert conn.execute("PRAGMA user_version").fetchone()[0] == store_mod.SCHEMA_VERSION


def test_persistence_across_reopen(tmp_path: Path, clock: FakeClock) -> None:
    with MemoryStore(tmp_path, now=clock) as s:
        a = s.remember("persistent lighthouse", tags=["sea"])
        b = s.remember("temporary note")
        assert s.forget(b["id"])
    with MemoryStore(tmp_path, now=clock) as s:
        assert s.all() == [a]
        assert _ids(s.recall("lighthouse")) == [a["id"]]
        assert s.recall("temporary")["mode"] == "recent"
        c = s.remember("another")
        assert c["id"] != a["id"]
    with MemoryStore(tmp_path, now=clock) as s:
        assert [m["id"] for m in s.all()] == [a["id"], c["id"]]


def test_newer_schema_version_is_rejected(tmp_path: Path) -> None:
    with MemoryStore(tmp_path):
        pass
    with sqlite3.connect(tmp_path / "memory.db") as conn:
        conn.execute(f"PRAGMA user_version = {store_mod.SCHEMA_VERSION + 1}")
    with pytest.raises(RuntimeError, match="schema version"):
        MemoryStore(tmp_path)


def test_close_is_idempotent_and_final(tmp_path: Path) -> None:
    s = MemoryStore(tmp_path)
    s.remember("hello")
    s.close()
    s.close()
    with pytest.raises(sqlite3.ProgrammingError):
        s.all()


def test_concurrent_remember_from_threads(store: Any) -> None:
    threads_n, per_thread = 8, 25
    barrier = threading.Barrier(threads_n)
    errors: list[BaseException] = []
    results: list[list[int]] = [[] for _ in range(threads_n)]

    def worker(n: int) -> None:
        try:
            barrier.wait()
            for i in range(per_thread):
                mem = store.remember(f"thread{n} item{i} shared", tags=[f"t{n}"])
                results[n].append(mem["id"])
                store.recall("shared", limit=3)
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=worker, args=(n,)) for n in range(threads_n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=timeouts.RUN)

    assert errors == []
    all_ids = [i for ids in results for i in ids]
    assert len(all_ids) == len(set(all_ids)) == threads_n * per_thread
    stored = store.all()
    assert [m["id"] for m in stored] == sorted(all_ids)
    assert {m["text"] for m in stored} == {
        f"thread{n} item{i} shared" for n in range(threads_n) for i in range(per_thread)
    }
    for n in range(threads_n):
        assert len(store.recall(tag=f"t{n}", limit=100)["memories"]) == per_thread
    assert len(store.recall("shared", limit=500)["memories"]) == threads_n * per_thread


def test_random_fts_input_never_raises(store: Any) -> None:
    rng = random.Random(1234)
    alphabet = [*"abc AND OR NOT NEAR ()*\"'-+^:{},.;\\/%_\x00\t\n😀🦊éü日本", "\u0301", "\ue000"]
    target = store.remember("abc needle", tags=["abc"])
    for _ in range(500):
        keyword = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 30)))
        result = store.recall(keyword, limit=5)
        assert result["mode"] in ("search", "recent")
        assert _ids(result) == [target["id"]]
