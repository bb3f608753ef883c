"""The skills detail requirements (spec/mcp/skills.json: the capability's settings, the cache attributes,
what an entry, its SKILL.md resource and a directory read agree on): examples/everything passes them in
every revision, and each skills detail fault of the fault server, wrapped around examples/everything,
fails exactly the requirements it breaks."""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

import anyio
import pytest

from jsonrpc_mcp.cli import load_target
from jsonrpc_mcp_conformance import InProcessTarget, Run, check, load_spec
from jsonrpc_mcp_conformance._fault_details import SKILLS_DETAIL_FAULTS
from jsonrpc_mcp_conformance.faultserver import serve_with_faults
from jsonrpc_mcp_conformance.match import match

SPEC = load_spec()
EVERYTHING = Path(__file__).resolve().parents[2] / "examples" / "everything" / "server.py"
DETAIL = {
    "skills:capability:settings",
    "skills:list:cache-attributes",
    "skills:entries:consistent",
    "skills:entries:conventions",
    "skills:manifest:frontmatter",
    "skills:manifest:resource-metadata",
    "skills:directory:read",
}
REVISIONS = ["2024-11-05", "2025-11-25", "2026-07-28"]

pytestmark = pytest.mark.anyio


async def _run(faults: list[str], revisions: list[str] = REVISIONS) -> Run:
    server = load_target(f"{EVERYTHING}:create_server")
    target = InProcessTarget(functools.partial(serve_with_faults, server, faults=faults))
    with anyio.fail_after(90):
        return await check(target, timeout=3, only=sorted(DETAIL), spec=SPEC, revisions=revisions)


def _failing(run: Run) -> set[str]:
    return {v.id for v in run.verdicts if v.status in ("fail", "error")}


async def test_everything_passes_every_skills_detail_requirement() -> None:
    run = await _run([])
    assert {(v.id, v.status) for v in run.verdicts if v.revision == "2026-07-28"} == {
        (i, "pass") for i in DETAIL
    }
    assert {v.status for v in run.verdicts} == {"pass"}  # (cache attributes: 2026-07-28 only)
    assert len(run.verdicts) == len(DETAIL) * len(REVISIONS) - 2


@pytest.mark.parametrize(
    ("fault", "failing"),
    [
        ("skills-settings-envelope", {"skills:capability:settings"}),
        ("skills-no-cache-attributes", {"skills:list:cache-attributes"}),
        ("skills-manifest-without-self", {"skills:entries:consistent"}),
        ("skills-reserved-metadata", {"skills:entries:conventions", "skills:manifest:frontmatter"}),
        ("skills-frontmatter-extra", {"skills:manifest:frontmatter"}),
        ("skills-md-plain", {"skills:manifest:resource-metadata"}),
        ("skills-no-directory-read", {"skills:directory:read"}),
    ],
)
async def test_each_skills_detail_fault_fails_what_it_breaks(fault: str, failing: set[str]) -> None:
    assert fault in SKILLS_DETAIL_FAULTS
    assert _failing(await _run([fault], ["2026-07-28"])) == failing


def _entry(uri: str, name: str, files: list[str], **frontmatter: Any) -> dict[str, Any]:
    manifest = [{"uri": f, "digest": "sha256:" + "0" * 64, "size": 1} for f in files]
    return {
        "uri": uri,
        "frontmatter": {"name": name, "description": "d", **frontmatter},
        "resources": manifest,
    }


GOOD = _entry("skill://a/SKILL.md", "a", ["skill://a/SKILL.md", "skill://a/x/y.md"])


@pytest.mark.parametrize(
    ("entries", "level", "ok"),
    [
        (
            [
                GOOD,
                {**GOOD, "uri": "skill://b/SKILL.md", "resources": "dynamic", "frontmatter": {"name": "b"}},
            ],
            "must",
            True,
        ),
        (
            [_entry("skill://a/SKILL.md", "b", ["skill://a/SKILL.md"])],
            "must",
            False,
        ),  # name is not the segment
        ([_entry("skill://A_b/SKILL.md", "A_b", ["skill://A_b/SKILL.md"])], "must", False),  # naming rules
        ([_entry("skill://a/SKILL.md", "a", ["skill://a/x.md"])], "must", False),  # no SKILL.md entry
        ([_entry("skill://a/SKILL.md", "a", ["skill://a/SKILL.md", "skill://b/x.md"])], "must", False),
        ([_entry("skill://a/SKILL.md", "a", ["skill://a/SKILL.md"] * 2)], "must", False),
        ([GOOD], "should", True),
        ([_entry("file://a/SKILL.md", "a", ["file://a/SKILL.md"])], "should", False),
        ([GOOD, _entry("skill://z/a/SKILL.md", "a", ["skill://z/a/SKILL.md"])], "should", False),  # same name
        ([_entry("skill://a/SKILL.md", "a", [], metadata={"io.modelcontextprotocol/k": 1})], "should", False),
        ([_entry("skill://a/SKILL.md", "a", [f"skill://a/{i}" for i in range(513)])], "should", False),
    ],
)
def test_the_skills_pattern_relates_an_entry_to_itself(entries: list[Any], level: str, ok: bool) -> None:
    assert (match(entries, {"$skills": level}) == []) is ok


@pytest.mark.parametrize(
    ("text", "pattern", "ok"),
    [
        ("---\nname: a\ndescription: b\n---\nbody", {"$exact": {"name": "a", "description": "b"}}, True),
        ("\ufeff---\nname: a\n---\n", {"name": "a"}, True),
        ("# no frontmatter\n", {"$any": True}, False),
        ("---\nname: a\n---\n", {"name": "b"}, False),
    ],
)
def test_the_frontmatter_pattern_reads_the_yaml_block(text: str, pattern: Any, ok: bool) -> None:
    assert (match(text, {"$frontmatter": pattern}) == []) is ok
