"""The runner under adverse conditions: a handshake answered late, sessions replaced after failures,
and the bookkeeping of the ids the harness sent (the verdict of ``jsonrpc:response:solicited`` must
not depend on which fixtures ran)."""

from __future__ import annotations

import io
import sys
from pathlib import Path

import anyio
import pytest

from jsonrpc_mcp_conformance import Run, StdioTarget, check, load_spec
from jsonrpc_mcp_conformance.cli import EXIT_FAILED, main
from jsonrpc_mcp_conformance.runner import sent_request_ids
from tests import timeouts

pytestmark = pytest.mark.anyio

SPEC = load_spec(check=False)  # other fixture files may be mid-edit; these tests need only a few ids
QUIRKY = Path(__file__).resolve().parent / "servers" / "quirky.py"
REVISION = "2025-11-25"
FAILING = [
    "lifecycle:ping:after-initialize",
    "lifecycle:ping:with-empty-params",
    "lifecycle:ping:with-progress-token",
]
PINGS = ["lifecycle:ping:after-initialize", "jsonrpc:id:integer", "jsonrpc:id:string", "jsonrpc:id:zero"]


def quirky(*options: str) -> StdioTarget:
    return StdioTarget([sys.executable, str(QUIRKY), *options])


async def run(target: StdioTarget, only: list[str], timeout: float = 5.0, explicit: bool = True) -> Run:
    with anyio.fail_after(timeouts.LONG_RUN):
        return await check(
            target, revisions=[REVISION] if explicit else None, only=only, timeout=timeout, spec=SPEC
        )


def statuses(run: Run) -> dict[str, str]:
    return {v.id: v.status for v in run.verdicts if v.revision == REVISION}


async def test_the_quirky_server_passes_the_ping_fixtures() -> None:
    result = await run(quirky(), PINGS)
    assert statuses(result) == dict.fromkeys(PINGS, "pass")


async def test_a_late_initialize_answer_is_never_taken_for_a_fixtures_response(tmp_path: Path) -> None:
    # the first server answers initialize only after the next line: a session that failed to open must
    # be closed, not used (its late answer would otherwise answer the first fixture's ping)
    result = await run(quirky("--late-init", str(tmp_path / "flag")), PINGS, timeout=1.0, explicit=False)
    assert (tmp_path / "flag").exists()
    assert statuses(result) == dict.fromkeys(PINGS, "pass")
    assert result.revisions[[r.revision for r in result.revisions].index(REVISION)].supported


async def test_a_session_that_cannot_be_opened_makes_its_fixtures_errors_with_the_reason(
    tmp_path: Path,
) -> None:
    result = await run(quirky("--never-init", "--census", str(tmp_path)), PINGS, timeout=0.5)
    verdicts = [v for v in result.verdicts if v.revision == REVISION]
    assert {v.id: v.status for v in verdicts} == dict.fromkeys(PINGS, "error")
    assert all("initialize answered nothing within 0.5 s" in v.problems[0] for v in verdicts)
    info = result.revisions[0]
    assert not info.supported and "initialize answered nothing" in info.detail
    # two attempts at most (the first open and the first fixture's), then no more servers started
    assert len((tmp_path / "alive.log").read_text().split()) == 2


async def test_failures_answered_in_full_keep_their_session(tmp_path: Path) -> None:
    # every failure was an answer (an error for each ping): the follow-up after it is answered and no
    # request is left in flight, so the one session serves every fixture (before: a new process each)
    result = await run(quirky("--ping-error", "--census", str(tmp_path)), FAILING)
    assert statuses(result) == dict.fromkeys(FAILING, "fail")
    alive = [int(n) for n in (tmp_path / "alive.log").read_text().split()]
    assert alive == [1]


def test_ids_are_read_from_broken_frames_too() -> None:
    assert sent_request_ids(b'{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":NaN}}') == [1]
    assert sent_request_ids(b'{"jsonrpc":"2.0","id":"t","method":"ping"') == ["t"]
    assert sent_request_ids(b"{'jsonrpc': '2.0', 'id': 7, 'method': 'ping'}") == [7]
    assert sent_request_ids(b'[{"jsonrpc":"2.0","id":1,"method":"a"},{"jsonrpc":"2.0","method":"n"}]') == [1]
    assert sent_request_ids(b'{"jsonrpc":"2.0","id":5}') == []  # not a request
    assert sent_request_ids(b"hello") == []


async def test_the_solicited_verdict_does_not_depend_on_the_fixtures_that_ran() -> None:
    # the lenient server answers the NaN frame's id 1 with a result: a response to a request we sent
    alone = await run(quirky("--lenient"), ["jsonrpc:parse-error:nan", "jsonrpc:response:solicited"])
    together = await run(
        quirky("--lenient"), ["jsonrpc:parse-error:*", "jsonrpc:id:*", "jsonrpc:response:solicited"]
    )
    assert statuses(alone)["jsonrpc:response:solicited"] == "pass"
    assert statuses(together)["jsonrpc:response:solicited"] == "pass"


async def test_an_unsolicited_result_still_fails_the_solicited_requirement() -> None:
    result = await run(
        quirky("--unsolicited"), ["lifecycle:ping:after-initialize", "jsonrpc:response:solicited"]
    )
    solicited = next(v for v in result.verdicts if v.id == "jsonrpc:response:solicited")
    assert solicited.status == "fail"
    assert "nobody-sent-this" in solicited.problems[0]


def test_the_cli_reports_the_reason_a_session_could_not_be_opened() -> None:
    # options may stand between the mode and the -- that starts the server command
    out = io.StringIO()
    argv = ["stdio", "--revision", REVISION, "--timeout", "0.5", "--only", "lifecycle:ping:after-initialize"]
    code = main([*argv, "--", sys.executable, str(QUIRKY), "--never-init"], out=out)
    assert code == EXIT_FAILED
    assert "ERROR lifecycle:ping:after-initialize" in out.getvalue()
    assert (
        "no session could be opened (last reason: initialize answered nothing within 0.5 s)" in out.getvalue()
    )
