"""The skills fixtures (spec/mcp/skills.json) can fail: each skills fault of the fault server fails
exactly its requirement, in every revision, and a server without the extension skips them all."""

from __future__ import annotations

import functools

import anyio
import pytest

from jsonrpc_mcp import Server
from jsonrpc_mcp_conformance import InProcessTarget, Run, check, load_spec
from jsonrpc_mcp_conformance.faultserver import create_server, serve_with_faults
from jsonrpc_mcp_conformance.match import match
from tests import timeouts

pytestmark = pytest.mark.anyio

REVISIONS = ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25", "2026-07-28"]
SPEC = load_spec()
SKILLS = {  # (the skills details, wrapped around examples/everything: test_faults_skills_detail.py)
    "skills:list:entries",
    "skills:get:entry",
    "skills:get:unknown-uri",
    "skills:manifest:digest-matches",
}


async def _run(faults: list[str]) -> Run:
    target = InProcessTarget(functools.partial(serve_with_faults, create_server(), faults=faults))
    with anyio.fail_after(timeouts.LONG_RUN):
        return await check(target, revisions=REVISIONS, timeout=2, spec=SPEC, only=sorted(SKILLS))


def test_the_skills_area_has_its_four_requirements() -> None:
    assert {f.id for f in SPEC.fixtures if f.area == "skills"} >= SKILLS


async def test_without_faults_the_skills_requirements_pass_in_every_revision() -> None:
    run = await _run([])
    assert {(v.id, v.status) for v in run.verdicts} == {(i, "pass") for i in SKILLS}
    assert len(run.verdicts) == len(SKILLS) * len(REVISIONS)


@pytest.mark.parametrize(
    ("fault", "fails"),
    [
        ("skills-no-manifest", "skills:list:entries"),
        ("skills-get-bare", "skills:get:entry"),
        ("skills-unknown-32002", "skills:get:unknown-uri"),
        ("skills-stale-digest", "skills:manifest:digest-matches"),
    ],
)
async def test_each_skills_fault_fails_exactly_its_requirement(fault: str, fails: str) -> None:
    run = await _run([fault])
    failed = {(v.id, v.revision) for v in run.verdicts if v.status in ("fail", "error")}
    assert failed == {(fails, revision) for revision in REVISIONS}


async def test_a_server_without_the_extension_skips_the_skills_requirements_saying_why() -> None:
    server = Server("no-skills")
    server.add_resource("demo://x", lambda: "x")
    with anyio.fail_after(timeouts.LONG_RUN):
        run = await check(InProcessTarget.from_server(server), revisions=["2026-07-28"], only=["skills:*"])
    assert {v.status for v in run.verdicts} == {"skip"}
    assert all("io.modelcontextprotocol/skills" in v.note for v in run.verdicts)


@pytest.mark.parametrize(
    ("text", "digest", "matches"),
    [
        ("", "sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855", True),
        ("é", "sha256:" + "0" * 64, False),
        (7, "sha256:" + "0" * 64, False),
    ],
)
def test_the_sha256_pattern_hashes_the_utf8_bytes(text: object, digest: str, matches: bool) -> None:
    assert (match(text, {"$sha256": digest}) == []) is matches
