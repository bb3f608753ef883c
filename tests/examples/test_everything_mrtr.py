"""The ``everything`` fixtures of the 2026-07-28 suite (input-required-result-*, server-stateless):
in memory, the rounds as the official scenarios drive them (keys, methods, the retry's answers)."""

from __future__ import annotations

from typing import Any

import pytest

from jsonrpc_mcp.testing import connect_raw

from ..server.modern.mrtr_support import ACCEPT_ADA, ROOTS, SAMPLED, meta, modern, retry_params
from .support import load_module
from .test_everything import SERVER_PATH

pytestmark = pytest.mark.anyio

everything: Any = load_module(SERVER_PATH, "_everything_server_mrtr_under_test")
NAMED = {"action": "accept", "content": {"name": "Alice"}}


def _call(name: str, capabilities: dict[str, Any] | None = None) -> dict[str, Any]:
    return {"name": name, "arguments": {}, "_meta": meta(capabilities)}


def _text(result: dict[str, Any]) -> str:
    return "".join(b.get("text", "") for b in result["content"] if b.get("type") == "text")


@pytest.mark.parametrize(
    ("tool", "key", "method", "answer", "text"),
    [
        ("test_input_required_result_elicitation", "user_name", "elicitation/create", NAMED, "Hello, Alice!"),
        (
            "test_input_required_result_sampling",
            "capital_question",
            "sampling/createMessage",
            SAMPLED,
            "blue",
        ),
        (
            "test_input_required_result_list_roots",
            "client_roots",
            "roots/list",
            ROOTS,
            "file:///work/project",
        ),
        (
            "test_input_required_result_request_state",
            "confirm",
            "elicitation/create",
            {"action": "accept", "content": {"ok": True}},
            "state-ok",
        ),
        ("test_streaming_elicitation", "user_name", "elicitation/create", NAMED, "Hello, Alice!"),
    ],
)
async def test_a_single_input_fixture_asks_under_its_key(
    tool: str, key: str, method: str, answer: dict[str, Any], text: str
) -> None:
    first = _call(tool)
    async with connect_raw(everything.create_server()) as raw:
        round1 = (await modern(raw, "tools/call", first))["result"]
        round2 = (await modern(raw, "tools/call", retry_params(first, round1, {key: answer})))["result"]
    assert list(round1["inputRequests"]) == [key]
    assert round1["inputRequests"][key]["method"] == method
    assert round2["resultType"] == "complete"
    assert text in _text(round2)


async def test_multiple_inputs_come_in_one_round() -> None:
    first = _call("test_input_required_result_multiple_inputs")
    answers = {"user_name": NAMED, "greeting": SAMPLED, "client_roots": ROOTS}
    async with connect_raw(everything.create_server()) as raw:
        round1 = (await modern(raw, "tools/call", first))["result"]
        round2 = (await modern(raw, "tools/call", retry_params(first, round1, answers)))["result"]
    assert {key: r["method"] for key, r in round1["inputRequests"].items()} == {
        "user_name": "elicitation/create",
        "greeting": "sampling/createMessage",
        "client_roots": "roots/list",
    }
    assert _text(round2) == "name=Alice, greeting=blue, roots=file:///work/project"


async def test_multi_round_asks_step2_after_step1() -> None:
    first = _call("test_input_required_result_multi_round")
    blue = {"action": "accept", "content": {"color": "blue"}}
    async with connect_raw(everything.create_server()) as raw:
        round1 = (await modern(raw, "tools/call", first))["result"]
        round2 = (await modern(raw, "tools/call", retry_params(first, round1, {"step1": NAMED})))["result"]
        round3 = (await modern(raw, "tools/call", retry_params(first, round2, {"step2": blue})))["result"]
    assert list(round1["inputRequests"]) == ["step1"]
    assert list(round2["inputRequests"]) == ["step2"]
    assert _text(round3) == "Alice likes blue"


async def test_capabilities_fixture_asks_only_what_the_client_declared() -> None:
    async with connect_raw(everything.create_server()) as raw:
        sampling_only = await modern(
            raw, "tools/call", _call("test_input_required_result_capabilities", {"sampling": {}})
        )
        nothing = await modern(raw, "tools/call", _call("test_input_required_result_capabilities", {}))
    assert list(sampling_only["result"]["inputRequests"]) == ["greeting"]
    assert _text(nothing["result"]) == "Answered: nothing (no capability declared)"


async def test_tampered_state_is_refused() -> None:
    first = _call("test_input_required_result_tampered_state")
    async with connect_raw(everything.create_server()) as raw:
        round1 = (await modern(raw, "tools/call", first))["result"]
        tampered = {
            **retry_params(first, round1, {"confirm": ACCEPT_ADA}),
            "requestState": round1["requestState"] + "-TAMPERED",
        }
        response = await modern(raw, "tools/call", tampered)
    assert response["error"]["code"] == -32602


async def test_the_prompt_asks_for_its_context() -> None:
    first = {"name": "test_input_required_result_prompt", "_meta": meta()}
    answer = {"action": "accept", "content": {"context": "tests"}}
    async with connect_raw(everything.create_server()) as raw:
        round1 = (await modern(raw, "prompts/get", first))["result"]
        round2 = (await modern(raw, "prompts/get", retry_params(first, round1, {"user_context": answer})))[
            "result"
        ]
    assert list(round1["inputRequests"]) == ["user_context"]
    assert round2["messages"][0]["content"]["text"] == "Use this context: tests"


async def test_missing_capability_is_refused_naming_sampling() -> None:
    async with connect_raw(everything.create_server()) as raw:
        response = await modern(raw, "tools/call", _call("test_missing_capability", {}))
    assert response["error"]["code"] == -32021
    assert "sampling" in response["error"]["data"]["requiredCapabilities"]


async def test_logging_tool_logs_only_when_asked() -> None:
    async with connect_raw(everything.create_server()) as raw:
        await modern(raw, "tools/call", _call("test_logging_tool"))
        silent = [f for f in raw.frames if isinstance(f, dict) and f.get("method") == "notifications/message"]
        asked = {
            **_call("test_logging_tool"),
            "_meta": meta(extra={"io.modelcontextprotocol/logLevel": "info"}),
        }
        await modern(raw, "tools/call", asked)
        logged = [f for f in raw.frames if isinstance(f, dict) and f.get("method") == "notifications/message"]
    assert silent == []
    assert len(logged) == 3
