"""Every example of JSON-RPC 2.0 §7 (spec/jsonrpc/examples.json) against a plain JSON-RPC server.

The server is a MethodTable over the in-memory transport with a real Endpoint. It has the methods
the examples call successfully (subtract, update, sum, notify_hello, notify_sum, get_data) and, as
in the specification, no ``foobar``: §7 sends ``foobar`` once as a notification (never answered)
and once as a request that must get -32601. The matching rule is the fixture file's description.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import orjson
import pytest

from jsonrpc_mcp.jsonrpc import MethodTable

from .wire import Wire, serve

FIXTURE = Path(__file__).resolve().parents[2] / "spec" / "jsonrpc" / "examples.json"
DOCUMENT = json.loads(FIXTURE.read_text(encoding="utf-8"))
EXAMPLES: list[dict[str, Any]] = DOCUMENT["examples"]
FOLLOW_UP_ID = "spec-runner-follow-up"

REQUIRED = {
    "positional-params-1",
    "positional-params-2",
    "named-params-1",
    "named-params-2",
    "notification-update",
    "notification-foobar",
    "non-existent-method",
    "invalid-json",
    "invalid-request-object",
    "batch-invalid-json",
    "empty-array",
    "invalid-batch-not-empty",
    "invalid-batch",
    "batch",
    "batch-all-notifications",
}


def spec_server() -> MethodTable:
    table = MethodTable()

    @table.method()
    def subtract(minuend: int, subtrahend: int) -> int:
        return minuend - subtrahend

    @table.method()
    def update(*values: int) -> None:
        return None

    @table.method("sum")
    def sum_(*values: int) -> int:
        return sum(values)

    @table.method()
    def notify_hello(*values: int) -> None:
        return None

    @table.method()
    def notify_sum(*values: int) -> None:
        return None

    @table.method()
    def get_data() -> list[Any]:
        return ["hello", 5]

    return table


def matches(actual: Any, expected: Any) -> bool:
    """One response object against its expectation (the rule in the fixture's description)."""
    if type(actual) is not dict or set(actual) != set(expected):
        return False
    for key, value in expected.items():
        if key != "error":
            if actual[key] != value or type(actual[key]) is not type(value):
                return False
            continue
        error = actual["error"]
        if type(error) is not dict or not {"code", "message"} <= set(error) <= {"code", "message", "data"}:
            return False
        message = error["message"]
        if error["code"] != value["code"] or type(message) is not str or not message:
            return False
        if not message.startswith(value["message"]):
            return False
    return True


def batch_matches(actual: Any, expected: list[Any]) -> bool:
    if type(actual) is not list or len(actual) != len(expected):
        return False
    remaining = list(actual)
    for want in expected:
        for index, got in enumerate(remaining):
            if matches(got, want):
                del remaining[index]
                break
        else:
            return False
    return True


async def _follow_up_comes_next(wire: Wire) -> None:
    await wire.send({"jsonrpc": "2.0", "method": "subtract", "params": [1, 1], "id": FOLLOW_UP_ID})
    assert await wire.receive() == {"jsonrpc": "2.0", "id": FOLLOW_UP_ID, "result": 0}


@pytest.mark.anyio
@pytest.mark.parametrize("example", EXAMPLES, ids=[e["id"] for e in EXAMPLES])
async def test_spec_example(example: dict[str, Any]) -> None:
    async with serve(spec_server()) as (_, wire):
        await wire.send(example["send"].encode())
        expected = example["expect"]
        if expected is not None:
            answer = await wire.receive()
            if example["unordered"]:
                assert batch_matches(answer, expected), orjson.dumps(answer)
            else:
                assert matches(answer, expected), orjson.dumps(answer)
        await _follow_up_comes_next(wire)


def test_the_fixture_covers_every_section_7_example_once() -> None:
    slugs = [e["id"].removeprefix("jsonrpc:examples:") for e in EXAMPLES]
    assert sorted(slugs) == sorted(REQUIRED)
    for entry in EXAMPLES:
        assert set(entry) == {"id", "source", "description", "send", "expect", "unordered"}
        assert entry["source"] == "JSON-RPC 2.0 §7"
        assert isinstance(entry["send"], str)
        assert entry["unordered"] == isinstance(entry["expect"], list)  # only batch answers are arrays


# The matcher itself must be able to fail, or the examples above prove nothing.
@pytest.mark.parametrize(
    ("actual", "expected"),
    [
        ({"jsonrpc": "2.0", "result": 18, "id": 1}, {"jsonrpc": "2.0", "result": 19, "id": 1}),
        ({"jsonrpc": "2.0", "result": 19, "id": "1"}, {"jsonrpc": "2.0", "result": 19, "id": 1}),
        ({"jsonrpc": "2.0", "result": 19.0, "id": 1}, {"jsonrpc": "2.0", "result": 19, "id": 1}),
        ({"jsonrpc": "2.0", "result": 19}, {"jsonrpc": "2.0", "result": 19, "id": 1}),
        (
            {"jsonrpc": "2.0", "error": {"code": -32600, "message": "Parse error"}, "id": None},
            {"jsonrpc": "2.0", "error": {"code": -32700, "message": "Parse error"}, "id": None},
        ),
        (
            {"jsonrpc": "2.0", "error": {"code": -32700, "message": "Oops"}, "id": None},
            {"jsonrpc": "2.0", "error": {"code": -32700, "message": "Parse error"}, "id": None},
        ),
        (
            {"jsonrpc": "2.0", "error": {"code": -32700, "message": "Parse error"}, "id": 0},
            {"jsonrpc": "2.0", "error": {"code": -32700, "message": "Parse error"}, "id": None},
        ),
        (
            {"jsonrpc": "2.0", "error": {"code": -32700, "message": "Parse error"}},
            {"jsonrpc": "2.0", "error": {"code": -32700, "message": "Parse error"}, "id": None},
        ),
        (
            {"jsonrpc": "2.0", "error": {"code": -32700, "message": "Parse error", "x": 1}, "id": None},
            {"jsonrpc": "2.0", "error": {"code": -32700, "message": "Parse error"}, "id": None},
        ),
    ],
    ids=[
        "wrong-result",
        "id-type",
        "result-type",
        "missing-id",
        "wrong-code",
        "wrong-message",
        "wrong-null-id",
        "omitted-id",
        "extra-error-member",
    ],
)
def test_matcher_rejects(actual: Any, expected: Any) -> None:
    assert not matches(actual, expected)


def test_batch_matcher_is_order_insensitive_but_counts_elements() -> None:
    one = {"jsonrpc": "2.0", "result": 1, "id": 1}
    two = {"jsonrpc": "2.0", "result": 2, "id": 2}
    assert batch_matches([two, one], [one, two])
    assert not batch_matches([one, one], [one, two])
    assert not batch_matches([one], [one, two])
    assert not batch_matches(one, [one])


def test_matcher_accepts_detail_after_the_standard_message_and_optional_data() -> None:
    expected = {"jsonrpc": "2.0", "error": {"code": -32700, "message": "Parse error"}, "id": None}
    actual = {
        "jsonrpc": "2.0",
        "error": {"code": -32700, "message": "Parse error: unexpected character", "data": {"at": 3}},
        "id": None,
    }
    assert matches(actual, expected)
