"""The official-suite runner's verdicts: failures, warnings and unexplained skips fail a scenario."""

from __future__ import annotations

import importlib.util
import json
import shutil
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

RUNNER = Path(__file__).resolve().parents[2] / "jsonrpc_mcp_conformance" / "official" / "run.py"


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
