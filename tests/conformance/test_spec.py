"""The fixtures in spec/: consistent with the manifest, covering NOTES §10, and a matcher that can fail."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import Any

import pytest

from jsonrpc_mcp_conformance.baseline import BaselineError, parse_baseline
from jsonrpc_mcp_conformance.fixtures import ALL_REVISIONS, FixtureError, load_spec
from jsonrpc_mcp_conformance.match import match

SPEC = Path(__file__).resolve().parents[2] / "spec"
NOTES = Path(__file__).resolve().parents[3] / "shared" / "spec" / "NOTES.md"


def test_the_manifest_and_the_fixtures_agree() -> None:
    spec = load_spec(SPEC)
    assert len(spec.manifest["requirements"]) == len(spec.fixtures) + len(spec.examples)


def test_there_are_at_least_200_requirements() -> None:
    spec = load_spec(SPEC)
    assert len(spec.fixtures) + len(spec.examples) >= 200
    assert all(count > 100 for count in spec.count_by_revision().values())


def test_the_manifest_lists_every_notes_section_10_assertion() -> None:
    if not NOTES.exists():
        pytest.skip("shared/spec/NOTES.md is not next to this checkout")
    ids = re.findall(r"^- \*\*([A-H]\d\d)\*\*", NOTES.read_text(encoding="utf-8"), flags=re.MULTILINE)
    assert sorted(ids) == sorted(load_spec(SPEC).manifest["notes_assertions"])


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


def test_an_uncovered_notes_assertion_fails_the_check(tmp_path: Path) -> None:
    spec = _copy(tmp_path)
    note = sorted(json.loads((spec / "manifest.json").read_text(encoding="utf-8"))["notes_pending"])[0]
    _edit(spec / "manifest.json", lambda d: d["notes_pending"].pop(note))
    with pytest.raises(FixtureError, match=rf"{note} has no fixture"):
        load_spec(spec)


def test_a_fixture_without_a_spec_page_fails_the_check(tmp_path: Path) -> None:
    spec = _copy(tmp_path)
    _edit(spec / "mcp" / "jsonrpc.json", lambda d: d["requirements"][0]["spec"].pop("page"))
    with pytest.raises(FixtureError, match=r"spec.page"):
        load_spec(spec)


def test_every_fixture_applies_to_known_revisions_and_cites_a_page() -> None:
    for fixture in load_spec(SPEC).fixtures:
        assert set(fixture.revisions) <= set(ALL_REVISIONS)
        assert fixture.spec["page"]


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
