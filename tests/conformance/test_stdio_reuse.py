"""Fewer server processes over stdio, the same verdicts: a first frame no revision changes is sent once
per run, fresh fixtures that begin with the same handshake and then only read resume one connection,
the exit-on-eof fixture runs on a connection left over, and processes started ahead are new ones."""

from __future__ import annotations

import io
import json
import sys
from pathlib import Path

from jsonrpc_mcp_conformance.cli import EXIT_OK, main

SLOW_RESTART = Path(__file__).resolve().parent / "servers" / "slow_restart.py"
# appends a line to argv[1] (processes may start at once), then becomes slow_restart.py (no delay)
COUNTING = (
    "import os, sys; open(sys.argv[1], 'a').write('start\\n'); "
    "os.execv(sys.executable, [sys.executable, sys.argv[2], sys.argv[1] + '.n', '0'])"
)
REVISIONS = ["2025-06-18", "2025-11-25"]
ONLY = ["lifecycle:*", "apps:*", "stdio:shutdown:*"]


def counted_run(counter: Path, ahead: int) -> tuple[dict[str, str], int]:
    """The verdicts of ``examples/everything`` over stdio and how many processes the run started."""
    argv = [item for revision in REVISIONS for item in ("--revision", revision)]
    argv += [item for pattern in ONLY for item in ("--only", pattern)]
    argv += ["--start-ahead", str(ahead), "--format", "json", "stdio", "--"]
    out = io.StringIO()
    code = main([*argv, sys.executable, "-c", COUNTING, str(counter), str(SLOW_RESTART)], out=out)
    verdicts = json.loads(out.getvalue())["verdicts"]
    assert code == EXIT_OK, [(v["id"], v["status"], v["problems"]) for v in verdicts if v["status"] != "pass"]
    return {f"{v['id']}@{v['revision']}": v["status"] for v in verdicts}, len(counter.read_text().split())


def test_fresh_fixtures_share_processes_where_nothing_needs_a_new_one(tmp_path: Path) -> None:
    verdicts, starts = counted_run(tmp_path / "starts", ahead=0)
    for revision in REVISIONS:
        for shared in ("unknown-version", "future-version", "non-date-version"):
            assert verdicts[f"lifecycle:initialize:{shared}@{revision}"] == "pass"
        assert verdicts[f"apps:link:resolves@{revision}"] == "pass"
        assert verdicts[f"stdio:shutdown:exit-on-eof@{revision}"] == "pass"
    # per revision: the session (its handshake also answers lifecycle:initialize:string-id), the
    # revision's own initialize with id i1 (four fixtures judge its answer), unknown client
    # capabilities, the ping before initialize (that process then serves initialized:no-response),
    # the MCP Apps handshake (seven fixtures) and app-only-hidden's second connection; once for both
    # revisions: the unknown, future and non-date versions. None for exit-on-eof (a left-over one).
    # Before: 2 x 14.
    assert starts == 2 * 6 + 3


def test_processes_started_ahead_give_the_same_verdicts(tmp_path: Path) -> None:
    on_demand, needed = counted_run(tmp_path / "on-demand", ahead=0)
    ahead, started = counted_run(tmp_path / "ahead", ahead=2)
    assert ahead == on_demand
    assert needed <= started <= needed + 2  # (those started ahead and never asked for: shut down)
