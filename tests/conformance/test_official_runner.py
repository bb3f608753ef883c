"""The official-suite runner's verdicts: failures, warnings and unexplained skips fail a scenario."""

from __future__ import annotations

import importlib.util
import json
import re
import shutil
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

RUNNER = (
    Path(__file__).resolve().parents[2] / "conformance" / "jsonrpc_mcp_conformance" / "official" / "run.py"
)


def _runner() -> ModuleType:
    spec = importlib.util.spec_from_file_location("official_run", RUNNER)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["official_run"] = module
    spec.loader.exec_module(module)
    return module


run = _runner()


def _check(check_id: str, status: str) -> dict[str, Any]:
    return {"id": check_id, "status": status, "errorMessage": f"{check_id} is {status}"}


def test_a_skipped_check_fails_its_scenario_unless_it_is_accepted(capsys: pytest.CaptureFixture[str]) -> None:
    results = {
        "clean": [_check("a", "SUCCESS"), _check("b", "INFO")],
        "skips": [_check("c", "SUCCESS"), _check("d", "SKIPPED")],
        "explained": [_check("e", "SUCCESS"), _check("f", "SKIPPED")],
        "warns": [_check("g", "WARNING")],
        "fails": [_check("h", "FAILURE")],
    }
    expected = [*results, "missing"]
    assert run.summarize(results, expected, {"f": "why f may skip"}) == (2, 3, 1)
    out = capsys.readouterr().out
    assert "SKIPPED d: d is SKIPPED" in out  # the unexplained skip is shown with its reason
    assert "SKIPPED f" not in out
    assert "FAIL missing" in out and "did not run" in out


def test_without_a_selection_the_ci_plan_runs_both_lines_and_both_requirement_sets() -> None:
    options = run.parse_args([])
    runs = run.plan(options)
    # then the scaled-out runs, when redis-server is on PATH
    scaled = run.SCALE_OUT_PLAN if shutil.which("redis-server") else ()
    assert runs == run.CI_PLAN + scaled
    assert all(r.instances == 1 for r in run.CI_PLAN) and all(r.instances == 3 for r in run.SCALE_OUT_PLAN)
    assert [r.selection for r in run.plan(run.parse_args(["--scale-out", "2"]))] == [
        r.selection for r in run.SCALE_OUT_PLAN
    ]
    (two,) = run.plan(run.parse_args(["--scale-out", "2", "--scenario", "ping"]))
    assert two.instances == 2
    selections = {(r.line, r.selection) for r in runs}
    assert ("0.1", ("--suite", "all")) in selections
    assert ("0.2", ("--requirements", "2025-11-25")) in selections
    assert ("0.2", ("--requirements", "2026-07-28")) in selections
    assert ("0.2", ("--suite", "all")) in selections
    (one,) = run.plan(run.parse_args(["--requirements", "2026-07-28"]))
    assert one.line == "0.2"
    (other,) = run.plan(run.parse_args(["--scenario", "ping", "--line", "0.2"]))
    assert (other.line, other.selection) == ("0.2", ("--scenario", "ping"))


def test_the_accepted_skips_each_say_why(tmp_path: Path) -> None:
    shipped = run.read_accepted_skips(RUNNER.parent / "accepted-skips.json")
    assert shipped and all(len(reason) > 20 for reason in shipped.values())
    path = tmp_path / "skips.json"
    path.write_text(json.dumps({"// note": "ignored", "x": "because"}))
    assert run.read_accepted_skips(path) == {"x": "because"}
    assert run.read_accepted_skips(tmp_path / "absent.json") == {}


# -- the client runs (the suite's client mode driving official/client.py) -----------------------------
def test_the_ci_plan_drives_our_client_through_both_lines() -> None:
    clients = [r for r in run.CI_PLAN if r.leg == "client"]
    assert clients == list(run.CLIENT_PLAN) and run.CI_PLAN == run.SERVER_PLAN + run.CLIENT_PLAN
    selections = {(r.line, r.selection) for r in clients}
    assert ("0.2", ("--requirements", "2026-07-28")) in selections
    assert ("0.2", ("--requirements", "2025-11-25")) in selections
    assert ("0.2", ("--suite", "backcompat", "--spec-version", "2025-03-26")) in selections
    assert ("0.2", ("--scenario", "sep-2640-client-verify-digest")) in selections
    assert ("0.1", ("--suite", "all")) in selections
    assert run.plan(run.parse_args(["--leg", "client"])) == run.CLIENT_PLAN
    assert all(r.leg == "server" for r in run.plan(run.parse_args(["--leg", "server"])))
    (one,) = run.plan(run.parse_args(["--client-scenario", "sse-retry", "--spec-version", "2025-11-25"]))
    assert (one.leg, one.line, one.selection) == (
        "client",
        "0.2",
        ("--scenario", "sse-retry", "--spec-version", "2025-11-25"),
    )
    (old,) = run.plan(run.parse_args(["--client-suite", "all", "--line", "0.1"]))
    assert (old.leg, old.line, old.selection) == ("client", "0.1", ("--suite", "all"))
    (rev,) = run.plan(run.parse_args(["--client-requirements", "2025-11-25"]))
    assert (rev.leg, rev.selection) == ("client", ("--requirements", "2025-11-25"))
    with pytest.raises(SystemExit):  # one selection at a time
        run.parse_args(["--client-scenario", "a", "--scenario", "b"])


LISTING = """Client scenarios (test against a client):
  - initialize [2025-06-18,2025-11-25]
  - tools_call [2025-06-18,2025-11-25,2026-07-28]
  - auth/dpop [extension]
"""

REQUIREMENTS_LISTING = """Required for 2026-07-28 (3 scenarios, frozen; run at the 2026-07-28 wire):

Server scenarios (test against a server):
  - server-stateless

Client scenarios (test against a client):
  - tools_call

Run and reported, but never scored:
  extension (2):
    - auth/dpop [client]
    - tasks-lifecycle [server]
"""


def test_the_suites_listings_are_read() -> None:
    listing = run.client_runs.parse_listing(LISTING)
    assert listing.tags == {
        "initialize": ["2025-06-18", "2025-11-25"],
        "tools_call": ["2025-06-18", "2025-11-25", "2026-07-28"],
        "auth/dpop": ["extension"],
    }
    assert (
        listing.scored == [] and listing.is_extension("auth/dpop") and not listing.is_extension("initialize")
    )
    required = run.client_runs.parse_listing(REQUIREMENTS_LISTING)
    assert list(required.tags) == ["tools_call", "auth/dpop"] and required.scored == ["tools_call"]
    transcript = (
        "...\n=== SUITE SUMMARY ===\n\n✓ a/b: 3 passed, 0 failed\n✗ c: 1 passed, 2 failed\n- d: skipped\n"
    )
    assert run.client_runs.suite_summary_scenarios(transcript) == ["a/b", "c", "d"]


def _result(out: Path, scenario: str, checks: list[dict[str, Any]], stderr: str = "") -> None:
    folder = out / f"{scenario}-2026-01-02T03-04-05-678Z"
    folder.mkdir(parents=True)
    (folder / "checks.json").write_text(json.dumps(checks))
    (folder / "stderr.txt").write_text(stderr)


def test_a_client_scenario_passes_on_its_checks_and_the_clients_own_verdict(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    prog = run.client_runs.PROG
    _result(tmp_path, "clean", [_check("a", "SUCCESS"), _check("i", "INFO")])
    _result(tmp_path, "auth/nested", [_check("a", "SUCCESS")])  # auth/... names are folders
    _result(tmp_path, "gave-up", [_check("a", "SUCCESS")], f"{prog}: gave-up: something refused\n")
    _result(tmp_path, "auth/scope-retry-limit", [_check("a", "SUCCESS")], f"{prog}: x: AuthorizationError\n")
    _result(
        tmp_path, "crashed", [_check("a", "SUCCESS")], "Traceback (most recent call last):\nKeyError: 'x'\n"
    )
    _result(tmp_path, "skips", [_check("a", "SUCCESS"), {**_check("s", "SKIPPED"), "name": "S"}])
    _result(tmp_path, "excused", [_check("a", "SUCCESS"), {**_check("e", "FAILURE"), "name": "E"}])
    _result(tmp_path, "warns", [_check("w", "WARNING")])
    _result(tmp_path, "auth/dpop", [_check("d", "FAILURE")], f"{prog}: auth/dpop: not played: ...\n")
    _result(tmp_path, "auth/wif-jwt-bearer", [_check("d", "FAILURE")])  # unsupported but required here
    results = run.client_runs.read_client_results(tmp_path)
    assert set(results) == {
        "clean", "auth/nested", "gave-up", "auth/scope-retry-limit", "crashed", "skips", "excused", "warns",
        "auth/dpop", "auth/wif-jwt-bearer",
    }  # fmt: skip
    listing = run.client_runs.parse_listing(LISTING)
    listing.tags["auth/wif-jwt-bearer"] = ["2026-07-28"]
    accepted = {"9.9 excused: E": "the suite's fault", "1.0 skips: S": "another version's entry"}
    tally = run.client_runs.summarize_client(results, [*sorted(results), "missing"], accepted, listing, "9.9")
    assert (tally.passed, tally.failed, tally.warned, tally.unsupported) == (4, 5, 1, 1)
    out = capsys.readouterr().out
    verdicts = {line.split()[1]: line.split()[0] for line in out.splitlines() if not line.startswith(" ")}
    assert verdicts == {
        "clean": "PASS", "auth/nested": "PASS", "auth/scope-retry-limit": "PASS", "excused": "PASS",
        "gave-up": "FAIL", "crashed": "FAIL", "skips": "FAIL", "missing": "FAIL",
        "auth/wif-jwt-bearer": "FAIL", "warns": "WARN", "auth/dpop": "UNSUPPORTED",
    }  # fmt: skip
    assert "the client failed: gave-up: something refused" in out
    assert "the client crashed: KeyError: 'x'" in out
    assert "accepted FAILURE E: the suite's fault" in out
    assert "the client refused, as it must: x: AuthorizationError" in out


def test_the_accepted_client_failures_each_say_why() -> None:
    shipped = run.client_runs.read_accepted_failures(RUNNER.parent / "accepted-client-failures.json")
    assert shipped and all(len(reason) > 40 for reason in shipped.values())
    assert all(re.fullmatch(r"\d+\.\d+\.\d+(-[\w.]+)? \S+: .+", key) for key in shipped)
