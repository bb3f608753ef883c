"""Issue 26: the faults that slipped through are caught by their requirement ids, a failure costs no
new process, and fresh-connection fixtures spawn fewer processes."""

from __future__ import annotations

import contextlib
import functools
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import anyio
import pytest

from jsonrpc_mcp_conformance import InProcessTarget, Run, StdioTarget, check, load_spec
from jsonrpc_mcp_conformance.faultserver import create_server, serve_with_faults
from jsonrpc_mcp_conformance.targets import Connection
from tests import timeouts

pytestmark = pytest.mark.anyio

REVISIONS = ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25", "2026-07-28"]
SPEC = load_spec()
ROOT = Path(__file__).resolve().parents[2]
FAULTY = [sys.executable, "-m", "jsonrpc_mcp_conformance.faultserver"]
BOUNDS = [f.id for f in SPEC.fixtures if f.id.startswith("features:tools:bounds-")]
PARSE_ERRORS = [f.id for f in SPEC.fixtures if f.id.startswith("jsonrpc:parse-error:")]
KEEPS_SERVING = "jsonrpc:parse-error:keeps-serving"
VERSION_MEMBER = "jsonrpc:message:version-member"


class CountingTarget(StdioTarget):
    """A stdio target that counts the processes it starts."""

    def __init__(self, command: list[str]) -> None:
        super().__init__(command, cwd=str(ROOT))
        self.started = 0

    @contextlib.asynccontextmanager
    async def connect(self) -> AsyncIterator[Connection]:
        self.started += 1
        async with super().connect() as conn:
            yield conn


async def _inprocess(faults: list[str], only: list[str]) -> Run:
    target = InProcessTarget(functools.partial(serve_with_faults, create_server(), faults=faults))
    with anyio.fail_after(90):
        return await check(target, revisions=REVISIONS, only=only, timeout=2, spec=SPEC)


def _statuses(run: Run) -> set[tuple[str, str, str]]:
    return {(v.id, v.revision, v.status) for v in run.verdicts}


async def test_bounds_of_required_properties_are_checked_with_a_call_valid_but_for_them() -> None:
    # the only bounded tool has its bounded properties required: the call gives the others valid values
    control = await _inprocess(["required-bounds-only"], BOUNDS)
    assert _statuses(control) == {(rid, r, "pass") for rid in BOUNDS for r in REVISIONS}
    faulty = await _inprocess(["required-bounds-only", "no-validation-required"], BOUNDS)
    assert _statuses(faulty) == {(rid, r, "fail") for rid in BOUNDS for r in REVISIONS}


def test_valid_arguments_give_each_other_required_property_its_simplest_value() -> None:
    from jsonrpc_mcp_conformance._steps import valid_arguments

    schema = {
        "type": "object",
        "properties": {
            "n": {"type": "integer", "minimum": 3, "maximum": 9},
            "x": {"type": "number", "exclusiveMaximum": -2},
            "s": {"type": "string", "minLength": 2, "maxLength": 4},
            "e": {"type": "string", "enum": ["b", "a"]},
            "flag": {"type": "boolean"},
            "items": {"type": "array"},
            "free": {"type": "string", "pattern": "^[a-z]+$"},
        },
        "required": ["n", "x", "s", "e", "flag", "items"],
    }
    assert valid_arguments(schema, {"n": 100}) == {
        "n": 100,
        "x": -3,
        "s": "aa",
        "e": "b",
        "flag": False,
        "items": [],
    }
    # a required property with a pattern has no value the harness can be sure of: no call is made up
    assert repr(valid_arguments({**schema, "required": ["free"]}, {})) == "absent"


async def test_a_malformed_jsonrpc_member_is_reported_at_once_from_the_first_answer() -> None:
    target = StdioTarget([*FAULTY, "--fault=jsonrpc-space"])
    with anyio.fail_after(120):
        run = await check(target, spec=SPEC, timeout=5)
    failed = {(v.id, v.revision) for v in run.failures()}
    assert failed == {(VERSION_MEMBER, revision) for revision in REVISIONS}
    for verdict in run.failures():
        assert '"jsonrpc":"2.0 "' in verdict.problems[0] and verdict.frames
    others = [v for v in run.verdicts if v.id != VERSION_MEMBER]
    assert others and {v.status for v in others} == {"skip"}
    assert all(VERSION_MEMBER in v.note for v in others)
    # the control: a server that says "2.0" passes it (and is checked in full)
    with anyio.fail_after(120):
        clean = await check(StdioTarget(FAULTY), revisions=["2025-11-25"], only=[VERSION_MEMBER], spec=SPEC)
    assert _statuses(clean) == {(VERSION_MEMBER, "2025-11-25", "pass")}


async def test_keeps_serving_judges_only_that_the_server_keeps_serving() -> None:
    # a server that answers no unreadable frame but keeps serving fails the -32700 requirements only:
    # one fault, counted once (before: keeps-serving failed too, the quiet-machine false positive)
    silent = await _inprocess(["silent-invalid"], PARSE_ERRORS)
    assert {(v.id, v.revision) for v in silent.verdicts if v.status == "pass"} >= {
        (KEEPS_SERVING, r) for r in REVISIONS
    }
    # the control: a server that stops serving after an unreadable frame fails it
    deaf = await _inprocess(["deaf-after-parse-error"], [KEEPS_SERVING])
    assert _statuses(deaf) == {(KEEPS_SERVING, r, "fail") for r in REVISIONS}
    # over stdio too: the follow-up tells at once whether an answer is still coming
    with anyio.fail_after(120):
        run = await check(
            StdioTarget([*FAULTY, "--fault=silent-invalid"]), only=[KEEPS_SERVING], spec=SPEC, timeout=5
        )
    assert _statuses(run) == {(KEEPS_SERVING, r, "pass") for r in REVISIONS}


async def test_failures_keep_their_session_when_nothing_is_left_in_flight() -> None:
    # every modern result lacks resultType: many session fixtures fail, each answered in full, so the
    # session goes on (before: a new process and handshake after every failure)
    target = CountingTarget([*FAULTY, "--fault=omits-result-type"])
    with anyio.fail_after(180):
        run = await check(target, revisions=["2026-07-28"], spec=SPEC, timeout=5)
    fresh = [f for f in SPEC.fixtures if f.connection == "fresh" and f.applies("2026-07-28", "stdio")]
    assert len(run.failures()) >= 10
    # the fresh fixtures' processes (with their reconnects), the session's, and a few new sessions
    # after failures that left a request unanswered (an invalid batch, say): not one per failure
    assert target.started <= len(fresh) + 4 < len(run.failures()) + 4, target.started


async def test_a_failure_that_leaves_a_request_unanswered_gets_a_new_session() -> None:
    # the deaf server never answers again: the follow-up goes unanswered, so the next fixture gets a
    # new process (and passes), instead of failing for what the one before left behind
    target = CountingTarget([*FAULTY, "--fault=deaf-after-parse-error"])
    only = [KEEPS_SERVING, "lifecycle:ping:after-initialize"]
    with anyio.fail_after(120):
        run = await check(
            target, revisions=["2025-11-25"], only=only, spec=SPEC, timeout=2, startup_timeout=5
        )
    assert {v.id: v.status for v in run.verdicts} == {KEEPS_SERVING: "fail", only[1]: "pass"}
    assert target.started == 2


EVERYTHING = [
    sys.executable,
    "-m",
    "jsonrpc_mcp",
    "serve",
    str(ROOT / "examples" / "everything" / "server.py"),
]


async def test_fresh_fixtures_share_processes_where_nothing_needs_a_new_one() -> None:
    # 2025-11-25: each fresh-connection fixture and the session were a process each; the four that
    # send the revision's own initialize are judged on the session's handshake, and
    # ping-before-initialize hands its untouched process on
    target = CountingTarget(EVERYTHING)
    with anyio.fail_after(timeouts.LONG_RUN):
        run = await check(target, revisions=["2025-11-25"], spec=SPEC, timeout=5)
    assert not run.failures(), [(v.key, v.problems) for v in run.failures()]
    fresh = [f for f in SPEC.fixtures if f.connection == "fresh" and f.applies("2025-11-25", "stdio")]
    assert len(fresh) >= 13
    assert target.started <= len(fresh) + 1 - 4, target.started  # (5 alone; 4 beside the apps fixtures)
