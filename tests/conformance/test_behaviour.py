"""The behaviour fixtures (spec/mcp/behaviour.json) and the runner features they use: every one of
them runs (none skips) and passes against examples/everything, in-process and over stdio; the new
pattern operators, steps and invariants judge what they claim to."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import anyio
import orjson
import pytest

from jsonrpc_mcp.cli import load_target
from jsonrpc_mcp_conformance import InProcessTarget, StdioTarget, check, load_spec
from jsonrpc_mcp_conformance.match import match
from jsonrpc_mcp_conformance.runner import (
    Abort,
    Channel,
    Options,
    Seen,
    _expect_message,
    _paginate,
    _tamper,
    base_variables,
    judge_invariant,
)
from tests import timeouts

pytestmark = pytest.mark.anyio

ROOT = Path(__file__).resolve().parents[2]
SPEC = load_spec()
BEHAVIOUR = [f for f in SPEC.fixtures if f.area == "behaviour"]
MODERN = "2026-07-28"
# a dual-era server answers initialize: the modern-only fixture (D07) cannot apply to it
EVERYTHING = ROOT / "examples" / "everything" / "server.py"
DUAL_ERA_SKIPS = {"behaviour:modern-only:initialize-names-versions"}


def _expected(transport: str, revisions: list[str]) -> set[tuple[str, str]]:
    return {
        (f.id, r)
        for f in BEHAVIOUR
        for r in revisions
        if f.applies(r, transport) and f.id not in DUAL_ERA_SKIPS
    }


async def test_everything_in_process_passes_every_behaviour_fixture_without_skipping() -> None:
    server = load_target(f"{EVERYTHING}:create_server")
    with anyio.fail_after(timeouts.LONG_RUN):
        run = await check(InProcessTarget.from_server(server), only=["behaviour:*"], spec=SPEC)
    revisions = [r.revision for r in run.revisions if r.supported]
    assert len(revisions) == 5
    passed = {(v.id, v.revision) for v in run.verdicts if v.status == "pass"}
    assert passed == _expected("inprocess", revisions), [v.key for v in run.failures()]
    skipped = {v.id for v in run.verdicts if v.status == "skip"}
    assert skipped == DUAL_ERA_SKIPS


async def test_everything_over_stdio_passes_every_behaviour_fixture() -> None:
    # D17 retries in a new process: both seal requestState under the per-user key file's key
    command = [
        sys.executable,
        "-m",
        "jsonrpc_mcp",
        "serve",
        str(ROOT / "examples" / "everything" / "server.py"),
    ]
    revisions = ["2024-11-05", "2025-11-25", MODERN]
    with anyio.fail_after(timeouts.LONG_RUN):
        run = await check(StdioTarget(command), revisions=revisions, only=["behaviour:*"], spec=SPEC)
    passed = {(v.id, v.revision) for v in run.verdicts if v.status == "pass"}
    assert passed == _expected("stdio", revisions), [(v.key, v.problems) for v in run.failures()]


# ------------------------------------------------------------------------------ pattern operators


@pytest.mark.parametrize(
    ("actual", "pattern", "ok"),
    [
        ([1, 2, 3], {"$some": 2}, True),
        ([1, 3], {"$some": 2}, False),
        ({"a": {"method": "x"}}, {"$some": {"method": "x"}}, True),
        ({"a": {"method": "x"}, "b": {"method": "y"}}, {"$each": {"method": "x"}}, False),
        ('{"a": [1]}', {"$json": {"$exact": {"a": [1]}}}, True),
        ('{"a": [1, 2]}', {"$json": {"$exact": {"a": [1]}}}, False),
        ("not json", {"$json": {"$any": True}}, False),
        ([{"p": 0}, {"p": 50}, {"p": 100.5}], {"$increasing": "p"}, True),
        ([{"p": 0}, {"p": 50}, {"p": 50}], {"$increasing": "p"}, False),
        ([{"p": 0}, {"q": 1}], {"$increasing": "p"}, False),
        ({"a": 1, "b": 2}, {"$keys": {"$each": {"$in": ["a", "b"]}}}, True),
        ({"a": 1, "c": 2}, {"$keys": {"$each": {"$in": ["a", "b"]}}}, False),
        ({"$ref": "#/$defs/x", "k": 1}, {"$literal": {"$ref": "#/$defs/x"}}, True),
        ({"$ref": "#/$defs/y"}, {"$literal": {"$ref": "#/$defs/x"}}, False),
        ("supports 2026-07-28 only", {"$contains": "2026-07-28"}, True),
        ("supports nothing", {"$contains": "2026-07-28"}, False),
    ],
)
def test_the_new_operators(actual: Any, pattern: Any, ok: bool) -> None:
    assert (match(actual, pattern) == []) is ok


def test_tampering_changes_one_character_and_keeps_the_alphabet() -> None:
    state = "eyJhbGciOiJIUzI1NiJ9.abc_-z9Z"
    changed = _tamper(state)
    assert changed != state and len(changed) == len(state)
    assert sum(a != b for a, b in zip(state, changed, strict=True)) == 1
    assert all(c.isalnum() or c in "._-" for c in changed)
    assert _tamper("...") == "..."


# ------------------------------------------------------------------------------------ invariants


def _seen(*messages: Any) -> list[Seen]:
    return [Seen(orjson.dumps(m), "fixture", m) for m in messages]


def test_input_required_is_judged_by_the_method_it_answers() -> None:
    log = _seen(
        {"jsonrpc": "2.0", "id": 1, "result": {"resultType": "input_required", "requestState": "s"}},
        {"jsonrpc": "2.0", "id": 2, "result": {"resultType": "input_required", "requestState": "s"}},
    )
    methods = {"1": {"tools/call"}, "2": {"tools/list"}}
    problems = judge_invariant("input-required-methods", log, [1, 2], {}, None, methods)
    assert len(problems) == 1 and "tools/list" in problems[0]
    assert judge_invariant("input-required-methods", log[:1], [1], {}, None, methods) == []


def test_a_task_result_fails_the_tasks_invariant() -> None:
    log = _seen({"jsonrpc": "2.0", "id": 1, "result": {"resultType": "task", "task": {}}})
    assert judge_invariant("no-task-results", log, [1], {}, None) != []
    assert (
        judge_invariant("no-task-results", _seen({"jsonrpc": "2.0", "id": 1, "result": {}}), [1], {}, None)
        == []
    )


# ------------------------------------------------------------------------- steps, on a fake wire


class ScriptedConnection:
    """Answers each request with the next scripted frames; ``receive`` hands out what is queued."""

    transport = "inprocess"

    def __init__(self, frames: list[Any], answers: list[list[Any]] | None = None) -> None:
        self.queue = [orjson.dumps(f) for f in frames]
        self.answers = answers or []
        self.sent: list[Any] = []

    async def send(self, frame: bytes) -> None:
        self.sent.append(orjson.loads(frame))
        if self.answers:
            self.queue.extend(orjson.dumps(f) for f in self.answers.pop(0))

    async def receive(self, timeout: float) -> bytes | None:
        return self.queue.pop(0) if self.queue else None


async def test_expect_message_keeps_the_responses_it_passes_over() -> None:
    response = {"jsonrpc": "2.0", "id": "c", "result": {}}
    changed = {"jsonrpc": "2.0", "method": "notifications/tools/list_changed", "params": {}}
    channel = Channel(ScriptedConnection([response, changed]), [], Options())  # type: ignore[arg-type]
    step = {"expect_message": {"params": {}}, "where": {"method": "notifications/tools/list_changed"}}
    await _expect_message(step, channel, base_variables(MODERN), 1.0)
    assert await channel.next_response(0.1) == response  # still there for the step after


async def test_expect_message_fails_on_the_first_matching_message_that_is_wrong() -> None:
    ack = {"jsonrpc": "2.0", "method": "notifications/subscriptions/acknowledged", "params": {}}
    channel = Channel(ScriptedConnection([ack]), [], Options())  # type: ignore[arg-type]
    step = {"expect_message": {"params": {"_meta": {"io.modelcontextprotocol/subscriptionId": 7}}}}
    with pytest.raises(Abort) as caught:
        await _expect_message(step, channel, base_variables(MODERN), 1.0)
    assert caught.value.status == "fail"


async def test_pages_with_different_cache_scopes_fail_paginate_same() -> None:
    def page(scope: str, cursor: str | None) -> list[Any]:
        result: dict[str, Any] = {"tools": [{"name": scope}], "cacheScope": scope}
        if cursor:
            result["nextCursor"] = cursor
        return [{"jsonrpc": "2.0", "id": "ignored", "result": result}]

    spec = {"method": "tools/list", "items": "tools", "same": ["cacheScope"]}
    same = Channel(ScriptedConnection([], [page("public", "2"), page("public", None)]), [], Options())  # type: ignore[arg-type]
    await _paginate(spec, same, base_variables(MODERN), 1.0)
    other = Channel(ScriptedConnection([], [page("public", "2"), page("private", None)]), [], Options())  # type: ignore[arg-type]
    with pytest.raises(Abort) as caught:
        await _paginate(spec, other, base_variables(MODERN), 1.0)
    assert "cacheScope" in caught.value.problems[0]
