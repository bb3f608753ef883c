"""``timedelta`` arguments and returns, and unions of several members (``int | str``, dataclass
unions, Optional unions): their schemas, the Python values the function receives, in both eras over
the in-memory pair and once over real stdio (tests/server/servers/union_server.py)."""

from __future__ import annotations

import datetime as dt
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from jsonrpc_mcp import Client
from jsonrpc_mcp.server._types import format_duration
from jsonrpc_mcp.testing import connect

from .servers.union_server import server

pytestmark = pytest.mark.anyio

MODES = ["legacy", "2026-07-28"]
HERE = Path(__file__).parent
DURATION_IN = {
    "anyOf": [{"type": "number", "description": "seconds"}, {"type": "string", "format": "duration"}]
}


async def _texts(mode: str, calls: list[tuple[str, dict[str, Any]]]) -> list[tuple[bool, str]]:
    out = []
    async with connect(server, mode=mode) as client:
        for name, arguments in calls:
            result = await client.call_tool(name, arguments)
            out.append((bool(result.get("isError")), result["content"][0]["text"]))
    return out


async def _tools(mode: str) -> dict[str, dict[str, Any]]:
    async with connect(server, mode=mode) as client:
        return {t["name"]: t for t in await client.list_tools()}


# -- timedelta -------------------------------------------------------------------------------------
@pytest.mark.parametrize("mode", MODES)
async def test_a_timedelta_takes_seconds_or_an_iso_8601_duration(mode: str) -> None:
    tools = await _tools(mode)
    assert tools["wait"]["inputSchema"]["properties"]["timeout"] == DURATION_IN
    assert tools["later"]["outputSchema"]["properties"]["result"] == {"type": "string", "format": "duration"}
    texts = await _texts(
        mode,
        [
            ("wait", {"timeout": 90}),
            ("wait", {"timeout": 1.5, "grace": "PT0.25S"}),
            ("wait", {"timeout": "P1W2DT3H4M5.5S"}),
            ("wait", {"timeout": "-PT30S"}),
        ],
    )
    assert texts == [
        (False, "timedelta 90; grace none"),
        (False, "timedelta 1.5; grace timedelta 0.25"),
        (False, f"timedelta {(9 * 86400 + 3 * 3600 + 4 * 60 + 5.5):g}; grace none"),
        (False, "timedelta -30; grace none"),
    ]


@pytest.mark.parametrize("mode", MODES)
async def test_a_duration_that_is_not_one_is_an_invalid_argument(mode: str) -> None:
    texts = await _texts(
        mode, [("wait", {"timeout": "soon"}), ("wait", {"timeout": "P1M"}), ("wait", {"timeout": "P"})]
    )
    assert all(error for error, _ in texts)
    assert "timeout: 'soon' is not an ISO 8601 duration" in texts[0][1]
    assert "years and months have no fixed length" in texts[1][1]
    assert "timeout: 'P' is not an ISO 8601 duration" in texts[2][1]


@pytest.mark.parametrize("mode", MODES)
async def test_a_returned_timedelta_is_an_iso_8601_string(mode: str) -> None:
    async with connect(server, mode=mode) as client:
        result = await client.call_tool("later", {"by": "P1DT1.5S"})
    assert result["structuredContent"] == {"result": "P2DT3S"}
    assert result["content"][0]["text"] == '{"result":"P2DT3S"}'


def test_durations_format_as_iso_8601() -> None:
    cases = {
        dt.timedelta(): "PT0S",
        dt.timedelta(seconds=30): "PT30S",
        dt.timedelta(seconds=-30): "-PT30S",
        dt.timedelta(days=2, hours=3, minutes=4, seconds=5, microseconds=500_000): "P2DT3H4M5.5S",
        dt.timedelta(days=1): "P1D",
        dt.timedelta(microseconds=1): "PT0.000001S",
    }
    assert {format_duration(d): d for d in cases} == {v: k for k, v in cases.items()}


# -- unions ----------------------------------------------------------------------------------------
@pytest.mark.parametrize("mode", MODES)
async def test_int_or_str_keeps_the_json_type(mode: str) -> None:
    tools = await _tools(mode)
    assert tools["ident"]["inputSchema"]["properties"]["key"] == {"type": ["integer", "string"]}
    texts = await _texts(mode, [("ident", {"key": 3}), ("ident", {"key": "3"}), ("ident", {"key": 2.0})])
    assert texts == [(False, "int 3"), (False, "str '3'"), (False, "int 2")]


@pytest.mark.parametrize("mode", MODES)
async def test_a_union_of_dataclasses_becomes_the_member_the_value_fits(mode: str) -> None:
    schema = (await _tools(mode))["area"]["inputSchema"]["properties"]["shape"]
    assert [member["required"] for member in schema["anyOf"]] == [["radius"], ["width", "height"], ["side"]]
    texts = await _texts(
        mode,
        [
            ("area", {"shape": {"radius": 1}}),
            ("area", {"shape": {"width": 2, "height": 3}}),
            ("area", {"shape": {"side": 2, "label": "s"}}),
            ("pick", {"p": {"x": 1}}),
            ("pick", {"p": {"x": 1, "y": 2}}),  # fits One's schema too, but One(x=1, y=2) fails
        ],
    )
    assert texts == [
        (False, "Circle 3.14"),
        (False, "Rect 6"),
        (False, "Square 4"),
        (False, "One(x=1)"),
        (False, "Two(x=1, y=2)"),
    ]


@pytest.mark.parametrize("mode", MODES)
async def test_a_value_no_member_takes_is_an_invalid_argument(mode: str) -> None:
    texts = await _texts(
        mode, [("area", {"shape": {"nope": 1}}), ("pick", {"p": {"x": 1, "z": 2}}), ("maybe", {"when": "x"})]
    )
    assert all(error for error, _ in texts), texts
    assert "Invalid arguments for tool 'area': shape:" in texts[0][1]
    assert "p: fits none of One | Two" in texts[1][1]
    assert "when:" in texts[2][1]


@pytest.mark.parametrize("mode", MODES)
async def test_optional_unions_pass_none_and_convert_the_rest(mode: str) -> None:
    tools = await _tools(mode)
    when = tools["maybe"]["inputSchema"]["properties"]["when"]
    assert when["anyOf"] == [{"type": "string", "format": "date"}, {"type": "integer"}, {"type": "null"}]
    texts = await _texts(
        mode,
        [
            ("maybe", {}),
            ("maybe", {"shape": None, "when": "2026-01-02"}),
            ("maybe", {"shape": {"width": 1, "height": 1}, "when": 5}),
        ],
    )
    assert texts == [
        (False, "NoneType NoneType None"),
        (False, "NoneType date datetime.date(2026, 1, 2)"),
        (False, "Rect int 5"),
    ]


async def test_durations_and_unions_over_stdio() -> None:
    command = [sys.executable, str(HERE / "servers" / "union_server.py")]
    async with Client.stdio(
        command, cwd=HERE.parents[1], request_timeout=20, stderr=subprocess.DEVNULL
    ) as client:
        waited = await client.call_tool("wait", {"timeout": "PT2M"})
        picked = await client.call_tool("pick", {"p": {"x": 1, "y": 2}})
        later = await client.call_tool("later", {"by": 60})
    assert waited["content"][0]["text"] == "timedelta 120; grace none"
    assert picked["content"][0]["text"] == "Two(x=1, y=2)"
    assert later["structuredContent"] == {"result": "PT2M"}
