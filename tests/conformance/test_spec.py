"""The fixtures in spec/: consistent with the manifest, citing and quoting the official text, covering the
implementers' notes (section 10 of ../shared/spec/NOTES.md, mapped in notes_coverage.json), and a matcher
that can fail."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import Any

import pytest

from jsonrpc_mcp_conformance.baseline import BaselineError, parse_baseline
from jsonrpc_mcp_conformance.fixtures import (
    ALL_REVISIONS,
    LEVELS,
    SOURCES,
    FixtureError,
    expand_generators,
    load_spec,
)
from jsonrpc_mcp_conformance.match import match

SPEC = Path(__file__).resolve().parents[2] / "spec"
NOTES = Path(__file__).resolve().parents[3] / "shared" / "spec" / "NOTES.md"
COVERAGE = Path(__file__).resolve().parent / "notes_coverage.json"


def test_the_manifest_and_the_fixtures_agree() -> None:
    spec = load_spec(SPEC)
    assert len(spec.manifest["requirements"]) == len(spec.fixtures) + len(spec.examples)


def test_there_are_at_least_200_requirements() -> None:
    spec = load_spec(SPEC)
    assert len(spec.fixtures) + len(spec.examples) >= 200
    assert all(count > 100 for count in spec.count_by_revision().values())


def _coverage_problems(section_10: set[str], coverage: dict[str, Any], requirements: set[str]) -> list[str]:
    """What is wrong with the NOTES section 10 -> requirement mapping (both ways)."""
    covered: dict[str, list[str]] = coverage["covered"]
    pending: dict[str, str] = coverage["pending"]
    problems = [
        f"{note} has no fixture and is not pending"
        for note in sorted(section_10 - set(covered) - set(pending))
    ]
    problems += [
        f"{note} is not a section 10 assertion" for note in sorted((set(covered) | set(pending)) - section_10)
    ]
    problems += [f"{note} is covered and also pending" for note in sorted(set(covered) & set(pending))]
    problems += [
        f"{note} pending without a reason" for note, why in sorted(pending.items()) if not why.strip()
    ]
    problems += [
        f"{note} names {rid}, which is no requirement in spec/"
        for note, rids in sorted(covered.items())
        for rid in rids
        if rid not in requirements
    ]
    problems += [f"{note} names no requirement" for note, rids in sorted(covered.items()) if not rids]
    return problems


def _section_10_ids() -> set[str]:
    if not NOTES.exists():
        pytest.skip("shared/spec/NOTES.md is not next to this checkout")
    return set(re.findall(r"^- \*\*([A-H]\d\d)\*\*", NOTES.read_text(encoding="utf-8"), flags=re.MULTILINE))


def _requirement_ids() -> set[str]:
    return set(load_spec(SPEC).manifest["requirements"])


def test_every_notes_section_10_assertion_is_covered_or_pending() -> None:
    coverage = json.loads(COVERAGE.read_text(encoding="utf-8"))
    section_10 = _section_10_ids()
    assert len(section_10) > 100
    assert _coverage_problems(section_10, coverage, _requirement_ids()) == []


def test_the_notes_coverage_names_only_requirements_that_exist() -> None:
    coverage = json.loads(COVERAGE.read_text(encoding="utf-8"))
    section_10 = set(coverage["covered"]) | set(
        coverage["pending"]
    )  # what the mapping claims, without NOTES.md
    assert _coverage_problems(section_10, coverage, _requirement_ids()) == []


def test_the_coverage_check_fails_on_a_gap_or_an_unknown_requirement() -> None:
    coverage = json.loads(COVERAGE.read_text(encoding="utf-8"))
    requirements = _requirement_ids()
    section_10 = set(coverage["covered"]) | set(coverage["pending"])
    first = sorted(coverage["covered"])[0]
    assert _coverage_problems(section_10 | {"Z99"}, coverage, requirements) == [
        "Z99 has no fixture and is not pending"
    ]
    broken = {**coverage, "covered": {**coverage["covered"], first: ["jsonrpc:id:no-such-fixture"]}}
    assert _coverage_problems(section_10, broken, requirements) == [
        f"{first} names jsonrpc:id:no-such-fixture, which is no requirement in spec/"
    ]
    note = sorted(coverage["pending"])[0]
    unexplained = {**coverage, "pending": {**coverage["pending"], note: " "}}
    assert _coverage_problems(section_10, unexplained, requirements) == [f"{note} pending without a reason"]
    dropped = {**coverage, "pending": {k: v for k, v in coverage["pending"].items() if k != note}}
    assert _coverage_problems(section_10, dropped, requirements) == [
        f"{note} has no fixture and is not pending"
    ]


def _copy(tmp_path: Path) -> Path:
    target = tmp_path / "spec"
    shutil.copytree(SPEC, target)
    return target


def _edit(path: Path, change: Any) -> None:
    document = json.loads(path.read_text(encoding="utf-8"))
    change(document)
    path.write_text(json.dumps(document), encoding="utf-8")


def test_a_requirement_without_a_fixture_fails_the_check(tmp_path: Path) -> None:
    spec = _copy(tmp_path)
    _edit(
        spec / "manifest.json", lambda d: d["requirements"].update({"jsonrpc:id:missing": "mcp/jsonrpc.json"})
    )
    with pytest.raises(FixtureError, match=r"jsonrpc:id:missing has no fixture"):
        load_spec(spec)


def test_a_fixture_naming_no_requirement_fails_the_check(tmp_path: Path) -> None:
    spec = _copy(tmp_path)
    _edit(spec / "manifest.json", lambda d: d["requirements"].pop("jsonrpc:id:string"))
    with pytest.raises(FixtureError, match=r"fixture jsonrpc:id:string names no requirement"):
        load_spec(spec)


def _set(path: str, value: Any) -> Any:
    """An edit of the first requirement of mcp/jsonrpc.json: ``path`` is dotted, None as value removes it."""

    def change(document: dict[str, Any]) -> None:
        *parents, last = path.split(".")
        target = document["requirements"][0]
        for key in parents:
            target = target[key]
        if value is None:
            target.pop(last)
        else:
            target[last] = value

    return change


@pytest.mark.parametrize(
    ("path", "value", "message"),
    [
        ("spec.url", None, r"spec\.url"),
        ("spec.url", "2025-11-25/basic/index.mdx#responses", r"spec\.url"),
        ("spec.url", "http://modelcontextprotocol.io/specification/{revision}/basic", r"spec\.url"),
        ("spec.url_by_revision", {"2025-11-25": "../basic.mdx"}, r"spec\.url"),
        ("spec.url_by_revision", {"2099-01-01": "https://example.com/x"}, r"url_by_revision"),
        ("spec.quote", None, r"spec\.quote"),
        ("spec.quote", "  ", r"spec\.quote"),
        ("spec.notes", "A01", r"unknown keys \['notes'\]"),
        ("level", "schema", r"level 'schema' not one of"),
        ("level", "JSON-RPC 2.0", r"level 'JSON-RPC 2.0' not one of"),
        ("source", None, r"missing 'source'"),
        ("source", "NOTES", r"source 'NOTES' not one of"),
    ],
)
def test_a_fixture_without_its_citation_fails_the_check(
    tmp_path: Path, path: str, value: Any, message: str
) -> None:
    spec = _copy(tmp_path)
    _edit(spec / "mcp" / "jsonrpc.json", _set(path, value))
    with pytest.raises(FixtureError, match=message):
        load_spec(spec)


def test_every_requirement_links_and_quotes_the_text_it_checks() -> None:
    assert LEVELS == ("MUST", "MUST NOT", "SHOULD", "SHOULD NOT", "MAY")
    assert SOURCES == ("spec", "schema", "jsonrpc", "derived")
    for fixture in load_spec(SPEC, check=False).fixtures:  # judged here too, not only by load_spec()
        assert set(fixture.revisions) <= set(ALL_REVISIONS)
        assert fixture.level in LEVELS, fixture.id
        assert fixture.source in SOURCES, fixture.id
        assert fixture.quote.strip(), fixture.id
        for revision in fixture.revisions:
            url = fixture.url(revision)
            assert re.fullmatch(r"https://[^\s{}<>]+", url), (fixture.id, revision, url)
            # published pages have no .mdx; an extension specified in its repository (ext-apps) is
            # linked as GitHub renders the file
            assert ".mdx" not in url or url.startswith("https://github.com/"), (fixture.id, url)


def test_a_report_shows_a_concrete_page_per_revision() -> None:
    fixture = load_spec(SPEC).by_id()["jsonrpc:id:integer"]
    assert (
        fixture.url("2025-11-25")
        == "https://modelcontextprotocol.io/specification/2025-11-25/basic#responses"
    )
    assert (
        fixture.url("2024-11-05")
        == "https://modelcontextprotocol.io/specification/2024-11-05/basic/messages#responses"
    )
    moved = load_spec(SPEC).by_id()["stdio:stdout:json-lines"]
    assert (
        moved.url("2026-07-28")
        == "https://modelcontextprotocol.io/specification/2026-07-28/basic/transports/stdio"
    )


def _strings(value: Any) -> list[str]:
    """Every string in a JSON value, object keys included."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for key, item in value.items() for s in [key, *_strings(item)]]
    if isinstance(value, list):
        return [s for item in value for s in _strings(item)]
    return []


def _outside_references(directory: Path) -> list[str]:
    found = []
    for path in sorted(directory.rglob("*.json")):
        for text in _strings(json.loads(path.read_text(encoding="utf-8"))):
            if "NOTES" in text or "../" in text or text == "notes":
                found.append(f"{path.relative_to(directory)}: {text[:80]}")
    return found


def test_nothing_in_spec_refers_to_files_outside_the_repository() -> None:
    assert _outside_references(SPEC) == []


def test_the_outside_reference_check_can_fail(tmp_path: Path) -> None:
    spec = _copy(tmp_path)
    _edit(
        spec / "mcp" / "jsonrpc.json",
        lambda d: d["requirements"][0].update(ambiguity={"notes": "NOTES §9.6"}),
    )
    _edit(spec / "mcp" / "stdio.json", lambda d: d.update(description="see ../shared/spec"))
    assert _outside_references(spec) == [
        "mcp/jsonrpc.json: notes",
        "mcp/jsonrpc.json: NOTES §9.6",
        "mcp/stdio.json: see ../shared/spec",
    ]


def test_the_one_mib_payload_is_generated_when_the_fixtures_load() -> None:
    fixture = load_spec(SPEC, check=False).by_id()["stdio:framing:large-message"]
    padding = fixture.steps[0]["send"]["params"]["_meta"]["padding"]
    assert padding == "x" * 1048576
    stored = json.loads((SPEC / "mcp" / "stdio.json").read_text(encoding="utf-8"))
    entry = next(r for r in stored["requirements"] if r["id"] == fixture.id)
    assert entry["steps"][0]["send"]["params"]["_meta"]["padding"] == {"$repeat": "x", "$times": 1048576}
    assert max(len(s) for s in _strings(stored)) < 10_000


def test_the_generator_expands_only_its_exact_shape() -> None:
    assert expand_generators({"a": [{"$repeat": "ab", "$times": 3}], "b": 1}) == {"a": ["ababab"], "b": 1}
    assert expand_generators({"$repeat": "x", "$times": 0}) == ""
    other = {"$repeat": "x", "$times": 2, "extra": 1}
    assert expand_generators(other) == other


@pytest.mark.parametrize(
    "bad",
    [
        {"$repeat": 1, "$times": 2},
        {"$repeat": "x", "$times": -1},
        {"$repeat": "x", "$times": True},
        {"$repeat": "xx", "$times": 1 << 30},
    ],
)
def test_a_malformed_generator_fails_the_check(tmp_path: Path, bad: dict[str, Any]) -> None:
    with pytest.raises(FixtureError, match=r"\$repeat"):
        expand_generators(bad)
    spec = _copy(tmp_path)
    _edit(spec / "mcp" / "jsonrpc.json", lambda d: d["requirements"][0]["steps"][0].update(send=bad))
    with pytest.raises(FixtureError, match=r"\$repeat"):
        load_spec(spec)


@pytest.mark.parametrize(
    ("actual", "pattern"),
    [
        ({"id": 7}, {"id": "7"}),
        ({"id": 7.0}, {"id": 7}),
        ({"a": 1}, {"a": {"$absent": True}}),
        ({}, {"a": {"$any": True}}),
        ([1, 2], {"$unordered": [1, 1]}),
        ({"x": "b"}, {"x": {"$in": ["a"]}}),
        ({"x": 1}, {"$one_of": [{"x": 2}, {"x": 3}]}),
        ([1] * 101, {"$len": {"max": 100}}),
        ({"t": 5}, {"t": {"$schema": {"type": "integer", "maximum": 4}}}),
        ({"id": None}, {"id": {"$absent": True}}),
        ({}, {"body": {"$one_of": [{"id": None}, {"id": {"$absent": True}}]}}),
    ],
)
def test_the_matcher_rejects(actual: Any, pattern: Any) -> None:
    assert match(actual, pattern)


@pytest.mark.parametrize("actual", [{}, {"body": {"error": {"code": -32600}}}, {"body": {"id": None}}])
def test_an_alternative_reading_may_be_that_the_member_is_absent(actual: dict[str, Any]) -> None:
    pattern = {"body": {"$one_of": [{"$absent": True}, {"id": {"$absent": True}}, {"id": None}]}}
    assert match(actual, pattern) == []


def test_the_matcher_accepts_extra_members_and_operators_beside_members() -> None:
    pattern = {
        "uri": {"$type": "string"},
        "$one_of": [{"text": {"$type": "string"}}, {"blob": {"$type": "string"}}],
    }
    assert match({"uri": "a", "text": "t", "mimeType": "x"}, pattern) == []


def test_the_baseline_reads_plain_and_detailed_entries() -> None:
    entries = parse_baseline(
        "# known\nexpected-failures:\n  - jsonrpc:batch:*\n  - id: 'lifecycle:ping:x'  \n"
        "    revision: 2025-11-25\n    reason: answered late # why\n"
    )
    assert [(e.id, e.revision, e.reason) for e in entries] == [
        ("jsonrpc:batch:*", None, ""),
        ("lifecycle:ping:x", "2025-11-25", "answered late"),
    ]


def test_the_baseline_rejects_yaml_it_does_not_read() -> None:
    with pytest.raises(BaselineError, match="line 2"):
        parse_baseline("expected-failures:\n  - [a, b]\n")
