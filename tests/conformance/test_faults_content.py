"""The content requirements (spec/mcp/content.json: what the official suite's fixture tools, prompts and
resources answer): examples/everything passes them all, and each content fault of the fault server,
wrapped around examples/everything, fails exactly the requirements it breaks."""

from __future__ import annotations

import functools
from pathlib import Path

import anyio
import pytest

from jsonrpc_mcp.cli import load_target
from jsonrpc_mcp_conformance import InProcessTarget, Run, check, load_spec
from jsonrpc_mcp_conformance.faultserver import serve_with_faults

SPEC = load_spec()
CONTENT = sorted(f.id for f in SPEC.fixtures if f.id.startswith("content:"))
EVERYTHING = Path(__file__).resolve().parents[2] / "examples" / "everything" / "server.py"

pytestmark = pytest.mark.anyio


async def _run(faults: list[str]) -> Run:
    server = load_target(f"{EVERYTHING}:create_server")
    target = InProcessTarget(functools.partial(serve_with_faults, server, faults=faults))
    with anyio.fail_after(60):
        return await check(target, timeout=3, only=["content:*"], spec=SPEC)


def _failing(run: Run) -> set[str]:
    return {v.id for v in run.verdicts if v.status in ("fail", "error")}


async def test_everything_passes_every_content_requirement_in_every_revision_it_applies_to() -> None:
    run = await _run([])
    assert {v.status for v in run.verdicts} == {"pass"}
    assert {v.id for v in run.verdicts} == set(CONTENT)


@pytest.mark.parametrize(
    ("fault", "failing"),
    [
        (
            "content-as-text",
            {
                "content:tools:image",
                "content:tools:audio",
                "content:tools:embedded-resource",
                "content:tools:mixed-content",
                "content:tools:error-result",
                "content:prompts:get-with-args",
                "content:prompts:get-embedded-resource",
                "content:prompts:get-with-image",
                "content:resources:read-text",
                "content:resources:read-binary",
                "content:resources:template-read",
            },
        ),
        ("schema-keywords-stripped", {"content:tools:json-schema-2020-12-preserved"}),
        (
            "elicitation-schema-plain",
            {"content:elicitation:primitive-defaults", "content:elicitation:enum-forms"},
        ),
        ("no-log-messages", {"content:tools:logging"}),
    ],
)
async def test_each_content_fault_fails_what_it_breaks(fault: str, failing: set[str]) -> None:
    assert _failing(await _run([fault])) == failing
