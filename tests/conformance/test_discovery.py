"""Discovery walks every page: a server with a small page size cannot escape the behaviour fixtures."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest

from jsonrpc_mcp.cli import load_target
from jsonrpc_mcp_conformance import InProcessTarget, Run, check, load_spec
from jsonrpc_mcp_conformance._channel import Abort
from jsonrpc_mcp_conformance._steps import _capture
from tests import timeouts

ROOT = Path(__file__).resolve().parents[2]
SPEC = load_spec()
# the fixtures that find a tool in tools/list (a paginate step with a capture)
DISCOVERING = sorted(
    f.id for f in SPEC.fixtures if any("paginate" in s and s.get("capture") for s in f.steps)
)


async def _run(page_size: int | None) -> Run:
    server = load_target(str(ROOT / "examples" / "everything" / "server.py:create_server"))
    if page_size is not None:
        server.page_size = page_size
    with anyio.fail_after(timeouts.LONG_RUN):
        return await check(InProcessTarget.from_server(server), only=DISCOVERING, spec=SPEC)


def test_the_behaviour_fixtures_discover_tools_through_paginate() -> None:
    assert len(DISCOVERING) >= 15
    assert "behaviour:progress:token-increasing" in DISCOVERING


@pytest.mark.anyio
async def test_a_small_page_size_finds_the_same_tools() -> None:
    paged = await _run(2)
    whole = await _run(None)
    assert [v.key for v in paged.failures()] == []
    statuses = {(v.id, v.revision): v.status for v in whole.verdicts}
    assert {(v.id, v.revision): v.status for v in paged.verdicts} == statuses
    assert sum(s == "pass" for s in statuses.values()) >= 30


@pytest.mark.anyio
async def test_the_bounds_fixtures_find_a_tool_on_a_later_page() -> None:
    server = load_target(str(ROOT / "examples" / "memory" / "server.py"))
    server.page_size = 1  # recall, the read-only tool with a bounded limit, is on page 2
    with anyio.fail_after(timeouts.LONG_RUN):
        run = await check(InProcessTarget.from_server(server), only=["features:tools:bounds-m*"], spec=SPEC)
    assert [v.key for v in run.failures()] == []
    assert sum(v.status == "pass" for v in run.verdicts) == 8  # maximum, minimum in 4 revisions


def _mrtr_capture() -> dict[str, Any]:
    fixture = SPEC.by_id()["behaviour:mrtr:input-required-shape"]
    return next(s["capture"] for s in fixture.steps if "paginate" in s)


def test_mrtr_fixtures_prefer_the_official_input_required_tool_and_fall_back() -> None:
    official = {"name": "test_input_required_result_elicitation", "inputSchema": {"type": "object"}}
    legacy = {"name": "test_elicitation", "inputSchema": {"type": "object"}}
    variables: dict[str, Any] = {}
    _capture({"result": {"tools": [legacy, official]}}, _mrtr_capture(), variables)
    assert variables["tool"] == "test_input_required_result_elicitation"
    _capture({"result": {"tools": [legacy]}}, _mrtr_capture(), variables)
    assert variables["tool"] == "test_elicitation"
    with pytest.raises(Abort) as caught:
        _capture({"result": {"tools": []}}, _mrtr_capture(), variables)
    assert caught.value.status == "skip"
    assert "test_input_required_result_elicitation" in caught.value.problems[0]
