"""The official MCP Python SDK over Streamable HTTP through the harness: the divergences are as documented.

``tests/conformance/servers/sdk_server.py --http`` serves the SDK's ``streamable_http_app()`` with its
defaults (stateful sessions, SSE responses) under uvicorn; the whole fixture set runs against it for
2025-11-25 and for 2026-07-28 (which the SDK also serves: it answers ``server/discover``). Nothing is
left out: over HTTP the SDK answers every malformed body at once (a 400, or a 202 for what it takes
as a notification), so no fixture waits out a timeout and each revision takes about 1.5 s.

``docs/conformance-sdk-divergences.md``, "Checked by the HTTP test", lists the failing requirements
per revision.
"""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator
from pathlib import Path

import anyio
import pytest
from anyio.abc import Process

from jsonrpc_mcp_conformance import HttpTarget, Run, check, load_spec
from tests import timeouts

from .test_sdk_server import DOCUMENTED_FAILURES as STDIO_DOCUMENTED

ROOT = Path(__file__).resolve().parents[2]
SERVER = ROOT / "tests" / "conformance" / "servers" / "sdk_server.py"
SCHEMA_DIR = ROOT.parent / "shared" / "spec" / "schema"
DOC = ROOT / "docs" / "conformance-sdk-divergences.md"
START_TIMEOUT = timeouts.STARTUP  # the SDK imports pydantic, starlette and uvicorn before it listens
RUN_TIMEOUT = timeouts.RUN

# the stdio test's set, which the SDK fails over HTTP too
STDIO_FAILURES = frozenset(STDIO_DOCUMENTED)

# docs/conformance-sdk-divergences.md, "Checked by the HTTP test"
DOCUMENTED_FAILURES = {
    "2025-11-25": STDIO_FAILURES
    | {
        "jsonrpc:message:schema-valid",
        "jsonrpc:batch:empty-array",
        *(
            f"jsonrpc:invalid-request:{name}"
            for name in (
                "version-1.0",
                "version-missing",
                "version-number",
                "method-number",
                "method-missing",
                "method-null",
                "id-null",
                "id-fractional",
                "id-boolean",
                "id-object",
                "id-array",
                "empty-object",
                "scalar-number",
                "scalar-string",
                "scalar-null",
                "scalar-true",
            )
        ),
    },
    # features:resources:read-unknown is a legacy-only fixture
    "2026-07-28": STDIO_FAILURES - {"features:resources:read-unknown"} | {"jsonrpc:message:schema-valid"},
}


@pytest.fixture(scope="module")
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="module")
async def sdk_url() -> AsyncIterator[str]:
    """Start the SDK server on a free port; yield the URL it prints once it listens."""
    process: Process = await anyio.open_process(
        [sys.executable, str(SERVER), "--http", "0"], cwd=str(ROOT), stderr=None
    )
    try:
        assert process.stdout is not None
        line = b""
        with anyio.fail_after(START_TIMEOUT):
            while not line.endswith(b"\n"):
                line += await process.stdout.receive()
        yield line.decode().strip()
    finally:
        process.terminate()
        with anyio.fail_after(timeouts.STEP):
            await process.wait()
        await process.aclose()


async def _run(url: str, revision: str) -> Run:
    schema_dir = SCHEMA_DIR if SCHEMA_DIR.is_dir() else None
    with anyio.fail_after(RUN_TIMEOUT):
        target = HttpTarget(url, timeout=5)
        return await check(target, revisions=[revision], timeout=5, schema_dir=schema_dir, spec=load_spec())


@pytest.fixture(scope="module")
async def runs(sdk_url: str) -> dict[str, Run]:
    return {revision: await _run(sdk_url, revision) for revision in DOCUMENTED_FAILURES}


@pytest.mark.anyio
@pytest.mark.parametrize("revision", sorted(DOCUMENTED_FAILURES))
async def test_the_sdk_http_report_gives_every_requirement_a_verdict(
    runs: dict[str, Run], revision: str
) -> None:
    run = runs[revision]
    assert [(r.revision, r.supported) for r in run.revisions] == [(revision, True)]
    assert {v.status for v in run.verdicts} <= {"pass", "fail", "skip"}, [
        (v.id, v.problems) for v in run.verdicts if v.status == "error"
    ]
    assert {v.transport for v in run.verdicts} == {"http"}
    assert len({v.id for v in run.verdicts}) == len(run.verdicts) > 100
    assert sum(v.status == "pass" for v in run.verdicts) > 90


@pytest.mark.anyio
@pytest.mark.parametrize("revision", sorted(DOCUMENTED_FAILURES))
async def test_the_sdk_http_server_fails_exactly_the_documented_requirements(
    runs: dict[str, Run], revision: str
) -> None:
    failed = {v.id for v in runs[revision].verdicts if v.status in ("fail", "error")}
    assert failed == DOCUMENTED_FAILURES[revision], [
        (v.id, v.problems) for v in runs[revision].verdicts if v.id in failed ^ DOCUMENTED_FAILURES[revision]
    ]


def test_the_documented_http_failures_are_the_ones_in_the_document() -> None:
    text = DOC.read_text(encoding="utf-8")
    section = text[text.index("## Checked by the HTTP test") : text.index("## About the runs")]
    http_only = set().union(*DOCUMENTED_FAILURES.values()) - STDIO_FAILURES
    assert {rid for rid in http_only if f"`{rid}`" not in section} == set()
    assert {rid for rid in STDIO_FAILURES if f"`{rid}`" not in text} == set()
