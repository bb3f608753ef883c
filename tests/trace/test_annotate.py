"""The tracer's reading of a conversation, in memory: pairing, revisions, and the rules it flags."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from jsonrpc_mcp_conformance.trace import Tracer
from jsonrpc_mcp_conformance.trace.annotate import CLIENT, SERVER, Frame

SCHEMAS = Path(__file__).resolve().parents[2].parent / "shared" / "spec" / "schema"


def _feed(tracer: Tracer, sender: str, message: Any, t: float = 0.0) -> Frame:
    (frame,) = tracer.feed(sender, json.dumps(message).encode(), t)
    return frame


def _handshake(tracer: Tracer, version: str = "2025-11-25") -> None:
    _feed(
        tracer,
        CLIENT,
        {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": version}},
    )
    _feed(
        tracer,
        SERVER,
        {"jsonrpc": "2.0", "id": 0, "result": {"protocolVersion": version, "capabilities": {}}},
    )
    _feed(tracer, CLIENT, {"jsonrpc": "2.0", "method": "notifications/initialized"})


def test_an_answer_is_paired_with_its_request_and_timed() -> None:
    tracer = Tracer()
    _handshake(tracer)
    request = _feed(tracer, CLIENT, {"jsonrpc": "2.0", "id": "a", "method": "tools/list"}, 1.0)
    answer = _feed(tracer, SERVER, {"jsonrpc": "2.0", "id": "a", "result": {"tools": []}}, 1.25)
    assert (request.kind, request.method, request.violations) == ("request", "tools/list", [])
    assert request.spec == "https://modelcontextprotocol.io/specification/2025-11-25/server/tools"
    assert (answer.kind, answer.method, answer.latency, answer.violations) == (
        "result",
        "tools/list",
        0.25,
        [],
    )
    assert answer.revision == "2025-11-25"


def test_an_answer_to_a_notification_is_flagged() -> None:
    tracer = Tracer()
    _handshake(tracer)
    stray = _feed(tracer, SERVER, {"jsonrpc": "2.0", "id": 7, "result": {}})
    assert any("answers no pending request" in v for v in stray.violations)


@pytest.mark.parametrize(
    ("message", "expected"),
    [
        ({"jsonrpc": "2.0", "id": 3, "error": {"code": 0, "message": "oops"}}, "error code 0"),
        (
            {"jsonrpc": "2.0", "id": 3, "error": {"code": "x", "message": "oops"}},
            "an error code is an integer",
        ),
        ({"jsonrpc": "2.0", "id": 3, "result": {"tools": []}, "error": {"code": 1, "message": "m"}}, "both"),
        ({"jsonrpc": "2.0", "id": 3, "result": []}, "an MCP result is an object"),
    ],
)
def test_malformed_answers_are_flagged(message: dict[str, Any], expected: str) -> None:
    tracer = Tracer()
    _handshake(tracer)
    _feed(tracer, CLIENT, {"jsonrpc": "2.0", "id": 3, "method": "tools/list"})
    frame = _feed(tracer, SERVER, message)
    assert any(expected in v for v in frame.violations), frame.violations


def test_garbage_and_non_jsonrpc_frames_are_flagged() -> None:
    tracer = Tracer()
    (garbage,) = tracer.feed(SERVER, b"Starting server on stdout...", 0.0)
    assert garbage.kind == "invalid" and garbage.raw == "Starting server on stdout..."
    assert garbage.violations[0].startswith("not JSON")
    plain = _feed(tracer, SERVER, {"id": 1, "result": {}})
    assert plain.kind == "invalid" and "not a JSON-RPC 2.0 message" in plain.violations[0]


def test_the_handshake_order_and_directions() -> None:
    tracer = Tracer()
    early = _feed(tracer, CLIENT, {"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
    assert any("before initialize is answered" in v for v in early.violations)
    wrong_side = _feed(
        tracer, SERVER, {"jsonrpc": "2.0", "id": 9, "method": "tools/call", "params": {"name": "x"}}
    )
    assert any("sent by the client, not by the server" in v for v in wrong_side.violations)


def test_a_reused_pending_id_is_flagged() -> None:
    tracer = Tracer()
    _handshake(tracer)
    _feed(tracer, CLIENT, {"jsonrpc": "2.0", "id": 5, "method": "tools/list"})
    again = _feed(tracer, CLIENT, {"jsonrpc": "2.0", "id": 5, "method": "prompts/list"})
    assert any("still unanswered" in v for v in again.violations)


def _modern(method: str, **params: Any) -> dict[str, Any]:
    meta = {"io.modelcontextprotocol/protocolVersion": "2026-07-28"}
    return {"jsonrpc": "2.0", "id": 1, "method": method, "params": {**params, "_meta": meta}}


def test_the_stateless_revision_rules() -> None:
    tracer = Tracer()
    ping = _feed(tracer, CLIENT, _modern("ping"))
    assert ping.revision == "2026-07-28" and "revision 2026-07-28 has no ping" in ping.violations
    _feed(tracer, SERVER, {"jsonrpc": "2.0", "id": 1, "error": {"code": -32601, "message": "no ping"}})
    _feed(tracer, CLIENT, _modern("resources/read", uri="file:///nope"))
    old_code = _feed(
        tracer, SERVER, {"jsonrpc": "2.0", "id": 1, "error": {"code": -32002, "message": "gone"}}
    )
    assert any("MUST NOT emit -32002" in v for v in old_code.violations)
    _feed(tracer, CLIENT, _modern("tools/list"))
    untyped = _feed(tracer, SERVER, {"jsonrpc": "2.0", "id": 1, "result": {"tools": []}})
    assert any("MUST carry resultType" in v for v in untyped.violations)
    asks = _feed(tracer, SERVER, {"jsonrpc": "2.0", "id": 8, "method": "roots/list"})
    assert any("no server-to-client requests" in v for v in asks.violations)
    _feed(tracer, CLIENT, _modern("tools/list"))
    mrtr = _feed(tracer, SERVER, {"jsonrpc": "2.0", "id": 1, "result": {"resultType": "input_required"}})
    assert any("may not answer with an InputRequiredResult" in v for v in mrtr.violations)


def test_a_batch_is_one_frame_a_message_and_flagged_where_batches_are_gone() -> None:
    tracer = Tracer()
    _handshake(tracer, "2025-06-18")
    frames = tracer.feed(
        CLIENT, json.dumps([{"jsonrpc": "2.0", "method": "notifications/cancelled"}] * 2), 0.0
    )
    assert len(frames) == 2
    assert "revision 2025-06-18 has no JSON-RPC batches" in frames[0].violations


@pytest.mark.skipif(
    not SCHEMAS.is_dir(), reason="the official schemas are not beside the checkout (../shared)"
)
def test_the_official_schemas_catch_a_result_of_the_wrong_shape() -> None:
    tracer = Tracer(SCHEMAS)
    _handshake(tracer)
    _feed(tracer, CLIENT, {"jsonrpc": "2.0", "id": 2, "method": "tools/list"})
    bad = _feed(tracer, SERVER, {"jsonrpc": "2.0", "id": 2, "result": {"tools": [{"title": "no name"}]}})
    assert any(v.startswith("schema ListToolsResult (2025-11-25)") and "name" in v for v in bad.violations)
    _feed(tracer, CLIENT, {"jsonrpc": "2.0", "id": 3, "method": "tools/list"})
    good = _feed(tracer, SERVER, {"jsonrpc": "2.0", "id": 3, "result": {"tools": []}})
    assert good.violations == []


def test_a_listed_tools_bad_arguments_belong_in_the_tool_plane_from_2025_11_25() -> None:
    for version, flagged in (("2025-06-18", False), ("2025-11-25", True)):
        tracer = Tracer()
        _handshake(tracer, version)
        _feed(tracer, CLIENT, {"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
        _feed(tracer, SERVER, {"jsonrpc": "2.0", "id": 1, "result": {"tools": [{"name": "recall"}]}})
        for rid, name in ((2, "recall"), (3, "unknown")):
            _feed(
                tracer,
                CLIENT,
                {"jsonrpc": "2.0", "id": rid, "method": "tools/call", "params": {"name": name}},
            )
            error = {"code": -32602, "message": "Invalid params"}
            frame = _feed(tracer, SERVER, {"jsonrpc": "2.0", "id": rid, "error": error})
            wrong_plane = any("the tool plane" in v for v in frame.violations)
            assert wrong_plane == (flagged and name == "recall"), (version, name, frame.violations)
