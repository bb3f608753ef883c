"""http:modern:param-header-base64 and the tasks routing headers (issue 26): examples/everything over
Streamable HTTP decodes a Base64 Mcp-Param value and refuses a malformed one, serves tasks requests whose
Mcp-Method / Mcp-Name match and refuses those that do not; each of the fault server's HTTP faults that
changes how those headers reach it fails exactly the requirements it breaks."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest

from jsonrpc_mcp.cli import load_target
from jsonrpc_mcp_conformance import HttpTarget, Run, check, load_spec
from jsonrpc_mcp_conformance.faultserver import HTTP_FAULTS, http_app

from ..http.support import serving

SPEC = load_spec()
EVERYTHING = Path(__file__).resolve().parents[2] / "examples" / "everything" / "server.py"
ONLY = ["http:modern:param-header*", "http:modern:name-header-base64", "tasks:headers:*"]

pytestmark = pytest.mark.anyio


async def _run(faults: list[str]) -> Run:
    app, mcp_app = http_app(faults, server=load_target(str(EVERYTHING)))
    async with serving(app, mcp_app=mcp_app) as base:
        with anyio.fail_after(60):
            return await check(
                HttpTarget(f"{base}/mcp", timeout=5),
                revisions=["2026-07-28"],
                only=ONLY,
                timeout=5,
                spec=SPEC,
            )


def _statuses(run: Run) -> dict[str, str]:
    return {v.id: v.status for v in run.verdicts}


async def test_everything_decodes_and_checks_base64_header_values() -> None:
    assert _statuses(await _run([])) == {
        "http:modern:param-header": "pass",
        "http:modern:param-header-numeric": "pass",
        "http:modern:param-header-base64": "pass",
        "http:modern:name-header-base64": "pass",
        "tasks:headers:routing-accepted": "pass",
        "tasks:headers:routing-mismatch": "pass",
    }


@pytest.mark.parametrize(
    ("fault", "failing"),
    [
        ("base64-not-decoded", {"http:modern:param-header-base64"}),
        ("lenient-base64", {"http:modern:param-header-base64"}),
        (
            "routing-headers-unchecked",
            {"tasks:headers:routing-mismatch", "http:modern:name-header-base64"},
        ),
        ("task-name-header-refused", {"tasks:headers:routing-accepted"}),
    ],
)
async def test_each_header_fault_fails_what_it_breaks(fault: str, failing: set[str]) -> None:
    assert fault in HTTP_FAULTS
    statuses = _statuses(await _run([fault]))
    assert {i for i, s in statuses.items() if s in ("fail", "error")} == failing
