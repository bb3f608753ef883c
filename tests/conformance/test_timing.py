"""The timing model: start-up and handshake get their own (generous) timeout, a failed handshake is one
ERROR of its revision (never failures of unrelated requirements), and a revision the server advertised
that cannot be opened is an error that fails the run."""

from __future__ import annotations

import io
import json
import sys
import time
from pathlib import Path

import anyio
import pytest

from jsonrpc_mcp_conformance import Run, StdioTarget, check, load_spec
from jsonrpc_mcp_conformance._pace import Pace
from jsonrpc_mcp_conformance.cli import EXIT_FAILED, EXIT_OK, main
from jsonrpc_mcp_conformance.fixtures import select_ids
from jsonrpc_mcp_conformance.runner import HANDSHAKE_ID, Options, run_conformance
from tests import timeouts

pytestmark = pytest.mark.anyio

SPEC = load_spec(check=False)
PICKY = Path(__file__).resolve().parent / "servers" / "picky.py"
REVISION = "2025-11-25"
PINGS = ["lifecycle:ping:after-initialize", "jsonrpc:id:integer", "jsonrpc:id:string"]


def picky(*options: str) -> StdioTarget:
    return StdioTarget([sys.executable, str(PICKY), *options])


async def run(
    target: StdioTarget, *, explicit: bool = True, timeout: float = 5.0, startup_timeout: float | None = None
) -> Run:
    with anyio.fail_after(timeouts.LONG_RUN):
        return await check(
            target,
            revisions=[REVISION] if explicit else None,
            only=PINGS,
            spec=SPEC,
            timeout=timeout,
            startup_timeout=startup_timeout,
        )


def statuses(run: Run, revision: str = REVISION) -> dict[str, str]:
    return {v.id: v.status for v in run.verdicts if v.revision == revision}


async def test_a_slow_start_within_the_startup_timeout_passes() -> None:
    result = await run(picky("--slow-start", "1.5"), timeout=0.5, startup_timeout=20)
    assert statuses(result) == dict.fromkeys(PINGS, "pass")


async def test_a_slow_start_beyond_the_response_timeout_alone_is_an_error_not_a_failure() -> None:
    # the control of the test above: without the start-up timeout the same server is not checked
    result = await run(picky("--slow-start", "1.5"), timeout=0.3)
    assert set(statuses(result).values()) == {"error"}


async def test_a_handshake_that_times_out_is_one_error_per_revision() -> None:
    result = await run(picky("--slow-start", "3"), explicit=False, timeout=0.3)
    legacy = {r.revision for r in result.revisions if r.revision != "2026-07-28"}
    assert legacy and not any(r.supported for r in result.revisions)
    by_revision: dict[str, list[str]] = {}
    for verdict in result.verdicts:
        by_revision.setdefault(verdict.revision, []).append(verdict.id)
        assert verdict.status == "error"
        assert "answered nothing within 0.3 s" in verdict.problems[0]
    assert by_revision == {revision: [HANDSHAKE_ID] for revision in by_revision}
    assert legacy <= set(by_revision)


async def test_an_advertised_revision_that_cannot_be_opened_is_an_error() -> None:
    result = await run(picky("--refuse", "2025-06-18"), explicit=False)
    assert statuses(result) == dict.fromkeys(PINGS, "pass")
    refused = [v for v in result.verdicts if v.revision == "2025-06-18"]
    assert [(v.id, v.status) for v in refused] == [(HANDSHAKE_ID, "error")]
    assert "advertised 2025-06-18" in refused[0].problems[0]
    assert result.failures() == refused


def _cli(*args: str) -> tuple[int, str]:
    out = io.StringIO()
    return main([*args], out=out), out.getvalue()


def test_the_cli_fails_a_run_whose_advertised_revision_cannot_be_opened() -> None:
    only = [item for ping in PINGS for item in ("--only", ping)]
    code, text = _cli(*only, "stdio", "--", sys.executable, str(PICKY), "--refuse", "2025-06-18")
    assert code == EXIT_FAILED, text
    assert f"ERROR {HANDSHAKE_ID} [2025-06-18" in text
    assert "spec: https://modelcontextprotocol.io/specification/2025-06-18/basic/lifecycle" in text
    code, text = _cli(*only, "stdio", "--", sys.executable, str(PICKY))
    assert code == EXIT_OK, text


def test_the_cli_startup_timeout_is_separate_from_the_response_timeout() -> None:
    argv = ["--revision", REVISION, "--only", PINGS[0], "--timeout", "0.5"]
    command = ["--", sys.executable, str(PICKY), "--slow-start", "1.5"]
    assert _cli(*argv, "--startup-timeout", "20", "stdio", *command)[0] == EXIT_OK
    assert _cli(*argv, "stdio", *command)[0] == EXIT_FAILED  # --timeout alone bounds the start-up too


FAULTY = [sys.executable, "-m", "jsonrpc_mcp_conformance.faultserver"]
INVALID = ("jsonrpc:parse-error:", "jsonrpc:invalid-request:")


async def jsonrpc_run(*faults: str, timeout: float = 5.0) -> tuple[Run, float]:
    target = StdioTarget([*FAULTY, *(f"--fault={fault}" for fault in faults)])
    started = time.perf_counter()
    with anyio.fail_after(timeouts.LONG_RUN):
        result = await check(target, only=["jsonrpc:*"], spec=SPEC, timeout=timeout)
    return result, time.perf_counter() - started


async def test_no_answer_to_an_invalid_frame_is_known_when_a_follow_up_is_answered() -> None:
    # a server that drops invalid frames: each "no answer" ends with the follow-up's answer, not after
    # --timeout (before: about 30 fixtures x 5 s per revision)
    result, _ = await jsonrpc_run("silent-invalid", timeout=10)
    invalid = [v for v in result.verdicts if v.id.startswith(INVALID) and v.status != "skip"]
    assert len({v.revision for v in invalid}) == 5 and len(invalid) > 100
    for verdict in invalid:
        if verdict.id == "jsonrpc:invalid-request:id-null" or verdict.status == "pass":
            continue  # the one the server answers (an id null is well-formed JSON-RPC), or tolerated
        assert verdict.status == "fail", verdict
        assert any("was answered first" in problem for problem in verdict.problems), verdict.problems
        # says what happened: no "no response within 10 s" for a verdict decided in a fraction of that
        assert verdict.problems[0].startswith("no response before the follow-up's answer"), verdict.problems
    assert statuses(result) and all(
        status != "fail"
        for vid, status in statuses(result).items()
        if not vid.startswith(INVALID)
        if not vid.startswith("jsonrpc:batch:")
    )


async def test_follow_ups_do_not_change_the_verdicts_of_a_server_that_answers() -> None:
    result, _ = await jsonrpc_run()
    assert not result.failures(), [(v.key, v.problems) for v in result.failures()]


def overlaps(trace: Path, begin: str = "ask", end: str = "done") -> int:
    """How many requests (``ask``..``done``) were in flight at once beyond one, across every server
    process writing to ``trace``."""
    alive = most = 0
    for line in sorted(trace.read_text().splitlines(), key=lambda line: float(line.split()[1])):
        if line.startswith(begin):
            alive += 1
            most = max(most, alive)
        elif line.startswith(end):
            alive -= 1
    return most - 1


async def test_revisions_take_turns_while_answers_are_slow(tmp_path: Path) -> None:
    # every answer takes 0.3 s: past a fifth of the 1 s timeout, so the revisions ask one at a time
    slow, fast = tmp_path / "slow.log", tmp_path / "fast.log"
    fixtures = select_ids(SPEC.fixtures, PINGS, ())
    with anyio.fail_after(timeouts.LONG_RUN):
        result = await run_conformance(
            picky("--slow-answers", "0.3", "--trace", str(slow)),
            SPEC,
            fixtures,
            Options(timeout=1.0, startup_timeout=20, serial_after=1000),
        )
        # the control: the same answers, but a threshold they never reach: the revisions ask side by side
        control = await run_conformance(
            picky("--slow-answers", "0.3", "--trace", str(fast)),
            SPEC,
            fixtures,
            Options(timeout=1.0, startup_timeout=20, serial_after=1000, slow_answer=10),
        )
    assert not result.failures() and not control.failures()
    assert sum(r.supported for r in result.revisions) == 4
    assert overlaps(slow) == 0
    assert overlaps(fast) > 0


def test_the_pace_narrows_on_a_slow_answer_and_widens_after_quick_ones() -> None:
    pace = Pace(4, slow=1.0, calm=3)
    assert pace.width == 4
    pace.answered(0.1)
    assert pace.width == 4
    pace.answered(1.5)  # one slow answer: one at a time at once
    assert pace.width == 1 and pace.narrowed == 1
    for _ in range(3):
        pace.answered(0.7)  # not slow, not quick either: no change
    assert pace.width == 1
    for _ in range(3):
        pace.answered(0.1)
    assert pace.width == 2
    for _ in range(9):
        pace.answered(0.1)
    assert pace.width == 4  # never wider than at the start


async def test_a_slow_first_start_still_gives_every_revision_its_verdicts(tmp_path: Path) -> None:
    trace = tmp_path / "trace.log"
    fixtures = select_ids(SPEC.fixtures, PINGS, ())
    with anyio.fail_after(120):
        result = await run_conformance(
            picky("--slow-start", "1.2", "--trace", str(trace)),
            SPEC,
            fixtures,
            Options(startup_timeout=20, serial_after=0.6),
        )
    assert not result.failures()
    assert sum(r.supported for r in result.revisions) == 4


SLOW_RESTART = Path(__file__).resolve().parent / "servers" / "slow_restart.py"
LIFECYCLE = ["lifecycle:initialize:*", "lifecycle:initialized:*"]


def slow_restart(counter: Path, delay: float) -> list[str]:
    """``examples/everything`` over stdio, every start after the first ``delay`` seconds late."""
    return [sys.executable, str(SLOW_RESTART), str(counter), str(delay)]


def test_fresh_processes_slow_to_start_are_given_the_startup_timeout(tmp_path: Path) -> None:
    # every fresh-connection fixture starts a new process: each one's first answer comes later than
    # --timeout, within --startup-timeout (before: 10 of 10 failed, "no response within 1 s")
    counter = tmp_path / "starts"
    only = [item for pattern in LIFECYCLE for item in ("--only", pattern)]
    argv = ["--revision", REVISION, *only, "--timeout", "1", "--startup-timeout", "20", "--format", "json"]
    argv += ["--start-ahead", "0"]  # (the count below: only the processes the fixtures asked for)
    code, text = _cli(*argv, "stdio", "--", *slow_restart(counter, 1.8))
    verdicts = json.loads(text)["verdicts"]
    assert code == EXIT_OK, [(v["id"], v["status"], v["problems"]) for v in verdicts if v["status"] != "pass"]
    assert len(verdicts) == 10 and {v["status"] for v in verdicts} == {"pass"}
    # the session's process (its handshake also answers the four fixtures that send the revision's own
    # initialize), then one per other fixture: all slow but the first
    assert int(counter.read_text()) == 7


async def test_a_fresh_process_that_does_not_start_in_time_is_an_error_not_a_failure(tmp_path: Path) -> None:
    ids = ["lifecycle:initialize:unknown-version", "lifecycle:initialized:no-response"]  # (new processes)
    target = StdioTarget(slow_restart(tmp_path / "starts", 30))
    with anyio.fail_after(timeouts.LONG_RUN):
        result = await check(
            target, revisions=[REVISION], only=ids, spec=SPEC, timeout=0.5, startup_timeout=1.5
        )
    assert {v.id: v.status for v in result.verdicts} == dict.fromkeys(ids, "error")
    for verdict in result.verdicts:
        assert "the server did not start within 1.5 s" in verdict.problems[0], verdict.problems
