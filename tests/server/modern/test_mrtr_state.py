"""The ``requestState`` of multi round-trip requests is sealed (HMAC-SHA256 under the server's key),
bound to the method and params, and expiring: anything else is refused with -32602 (NOTES.md §4.2
MRTR security, §10 D17, D18)."""

from __future__ import annotations

import base64
from pathlib import Path
from typing import Any

import orjson
import pytest

from jsonrpc_mcp import Server
from jsonrpc_mcp.server._mrtr import (
    STATE_FILE_ENV,
    STATE_KEY_ENV,
    RequestStateSealer,
    _file_key,
    state_key_file,
)
from jsonrpc_mcp.testing import connect_raw

from .mrtr_server import STATE_KEY, build_server
from .mrtr_support import ACCEPT_ADA, check_schema, meta, modern, retry_params, text_of

pytestmark = pytest.mark.anyio

GREET: dict[str, Any] = {"name": "greet", "_meta": meta()}


async def _first_state(server: Server, params: dict[str, Any] = GREET, method: str = "tools/call") -> str:
    async with connect_raw(server) as raw:
        result = (await modern(raw, method, params))["result"]
    state: str = result["requestState"]
    return state


async def _retry(
    server: Server, state: Any, params: dict[str, Any] = GREET, method: str = "tools/call"
) -> dict[str, Any]:
    retry = {**params, "inputResponses": {"elicit-1": ACCEPT_ADA}, "requestState": state}
    async with connect_raw(server) as raw:
        return await modern(raw, method, retry, valid=isinstance(state, str))


def _refused(response: dict[str, Any], reason: str) -> str:
    check_schema("JSONRPCErrorResponse", response)
    error = response["error"]
    assert error["code"] == -32602
    assert error["data"] == {"requestState": reason}
    message: str = error["message"]
    return message


def _flip(text: str, index: int) -> str:
    """``text`` with the character at ``index`` changed to another one of the same alphabet."""
    old = text[index]
    new = "B" if old == "A" else "A"
    return text[:index] + new + text[index + 1 :]


# -- integrity ---------------------------------------------------------------------------------------
async def test_the_echoed_state_completes_the_call() -> None:
    server = build_server()
    state = await _first_state(server)
    response = await _retry(server, state)
    assert text_of(response["result"]) == "Hello, Ada!"


@pytest.mark.parametrize(
    "where", ["version", "payload-start", "payload-middle", "payload-end", "mac", "mac-end"]
)
async def test_a_state_with_one_character_changed_is_refused(where: str) -> None:  # D18
    server = build_server()
    state = await _first_state(server)
    payload_start = state.index(".") + 1
    mac_start = state.rindex(".") + 1
    index = {
        "version": 1,
        "payload-start": payload_start,
        "payload-middle": (payload_start + mac_start) // 2,
        "payload-end": mac_start - 2,
        "mac": mac_start + 3,
        "mac-end": len(state) - 1,
    }[where]
    tampered = _flip(state, index)
    assert tampered != state
    response = await _retry(server, tampered)
    reason = "malformed" if where == "version" else "tampered"
    assert "requestState" in _refused(response, reason)


@pytest.mark.parametrize("resign", [False, True])
async def test_a_state_with_forged_answers_is_refused(resign: bool) -> None:  # D18: state drives the outcome
    server = build_server()
    state = await _first_state(server)
    version, payload, mac = state.split(".")
    claims = orjson.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))
    question = claims["q"]["elicit-1"]
    claims["a"] = {"elicit-1": [question, {"action": "accept", "content": {"name": "Mallory"}}]}
    if resign:  # sealed properly, but under a key the attacker made up
        forged = RequestStateSealer(["a-key-the-attacker-made-up-himself"]).seal(claims)
    else:
        body = base64.urlsafe_b64encode(orjson.dumps(claims)).rstrip(b"=").decode()
        forged = f"{version}.{body}.{mac}"
    async with connect_raw(server) as raw:
        response = await modern(raw, "tools/call", {**GREET, "requestState": forged})
    assert "failed verification" in _refused(response, "tampered")


@pytest.mark.parametrize("state", ["", "v1", "v1..", "v2.e30.AAAA", "not a state at all", "v1.é.é"])
async def test_a_state_we_did_not_issue_is_refused(state: str) -> None:
    response = await _retry(build_server(), state)
    _refused(response, "malformed")


async def test_a_state_that_is_not_a_string_is_invalid_params() -> None:
    response = await _retry(build_server(), {"not": "a string"})
    assert response["error"]["code"] == -32602
    assert "'requestState' must be a string" in response["error"]["message"]


async def test_input_responses_that_are_not_an_object_are_invalid_params() -> None:
    async with connect_raw(build_server()) as raw:
        response = await modern(raw, "tools/call", {**GREET, "inputResponses": ["no"]}, valid=False)
    assert response["error"]["code"] == -32602
    assert "'inputResponses' must be an object" in response["error"]["message"]


# -- binding to the request ----------------------------------------------------------------------------
async def test_a_state_from_another_method_is_refused() -> None:
    server = build_server()
    prompt = {"name": "interview", "arguments": {"topic": "tea"}, "_meta": meta()}
    state = await _first_state(server, prompt, "prompts/get")
    response = await _retry(server, state)  # echoed on a tools/call
    assert "issued for a prompts/get request, not tools/call" in _refused(response, "mismatch")


async def test_a_state_from_another_tool_is_refused() -> None:
    server = build_server()
    state = await _first_state(server, {"name": "confirm_twice", "_meta": meta()})
    response = await _retry(server, state)  # echoed on greet
    assert "issued for other parameters" in _refused(response, "mismatch")


async def test_a_state_from_other_arguments_is_refused() -> None:
    server = build_server()
    tea = {"name": "survey", "arguments": {"topic": "tea"}, "_meta": meta()}
    coffee = {"name": "survey", "arguments": {"topic": "coffee"}, "_meta": meta()}
    state = await _first_state(server, tea)
    response = await _retry(server, state, coffee)
    _refused(response, "mismatch")


async def test_a_state_from_another_resource_is_refused() -> None:
    server = build_server()
    state = await _first_state(server, {"uri": "vault://secret", "_meta": meta()}, "resources/read")
    other = {"uri": "vault://other", "_meta": meta()}
    response = await _retry(server, state, other, "resources/read")
    _refused(response, "mismatch")


async def test_no_arguments_and_empty_arguments_are_the_same_request() -> None:
    server = build_server()
    state = await _first_state(server, {"name": "greet", "_meta": meta()})
    response = await _retry(server, state, {"name": "greet", "arguments": {}, "_meta": meta()})
    assert text_of(response["result"]) == "Hello, Ada!"


async def test_the_envelope_may_change_between_rounds() -> None:
    server = build_server()
    state = await _first_state(server)
    later = {
        "name": "greet",
        "_meta": meta(extra={"progressToken": "p-2", "io.modelcontextprotocol/logLevel": "error"}),
    }
    response = await _retry(server, state, later)
    assert text_of(response["result"]) == "Hello, Ada!"


# -- expiry ----------------------------------------------------------------------------------------------
class _Clock:
    def __init__(self) -> None:
        self.now = 1_800_000_000.0

    def __call__(self) -> float:
        return self.now


@pytest.mark.parametrize(("later", "accepted"), [(599.0, True), (600.0, False), (86_400.0, False)])
async def test_a_state_expires_after_the_servers_ttl(later: float, accepted: bool) -> None:
    server = build_server(state_ttl=600)
    clock = _Clock()
    server.request_state.clock = clock
    state = await _first_state(server)
    clock.now += later
    response = await _retry(server, state)
    if accepted:
        assert text_of(response["result"]) == "Hello, Ada!"
    else:
        assert "expired" in _refused(response, "expired")


async def test_each_round_gets_a_fresh_expiry() -> None:
    server = build_server(state_ttl=600)
    clock = _Clock()
    server.request_state.clock = clock
    first = {"name": "confirm_twice", "_meta": meta()}
    yes = {"action": "accept", "content": {"ok": True}}
    async with connect_raw(server) as raw:
        round1 = (await modern(raw, "tools/call", first))["result"]
        clock.now += 500
        round2 = (await modern(raw, "tools/call", retry_params(first, round1, {"elicit-1": yes})))["result"]
        clock.now += 500  # 1000 s after the first round, 500 s after the second
        round3 = (await modern(raw, "tools/call", retry_params(first, round2, {"elicit-2": yes})))["result"]
    assert round3["resultType"] == "complete"


# -- keys --------------------------------------------------------------------------------------------------
async def test_another_server_with_the_same_key_accepts_the_retry() -> None:  # D17: no session needed
    state = await _first_state(build_server())
    response = await _retry(build_server(), state)  # another Server, another connection
    assert text_of(response["result"]) == "Hello, Ada!"


async def test_a_server_with_another_key_refuses_the_state() -> None:
    state = await _first_state(build_server())
    response = await _retry(build_server(state_key="some-other-key-of-enough-length"), state)
    _refused(response, "tampered")


async def test_without_a_key_servers_share_the_per_user_key_file(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.delenv(STATE_KEY_ENV, raising=False)
    key_file = tmp_path / "state" / "request-state.key"
    monkeypatch.setenv(STATE_FILE_ENV, str(key_file))
    state = await _first_state(build_server(state_key=None))
    response = await _retry(build_server(state_key=None), state)  # as a restarted server would
    assert text_of(response["result"]) == "Hello, Ada!"
    assert key_file.stat().st_mode & 0o777 == 0o600
    assert len(bytes.fromhex(key_file.read_text())) == 32


async def test_a_server_made_before_the_key_file_existed_reads_it_when_first_needed(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.delenv(STATE_KEY_ENV, raising=False)
    key_file = tmp_path / "request-state.key"
    monkeypatch.setenv(STATE_FILE_ENV, str(key_file))
    idle = build_server(state_key=None)
    assert not key_file.exists()  # making a server touches no file
    state = await _first_state(build_server(state_key=None))
    assert key_file.exists()
    response = await _retry(idle, state)
    assert text_of(response["result"]) == "Hello, Ada!"


async def test_with_the_key_file_turned_off_each_server_has_its_own(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(STATE_KEY_ENV, raising=False)
    monkeypatch.setenv(STATE_FILE_ENV, "")
    state = await _first_state(build_server(state_key=None))
    response = await _retry(build_server(state_key=None), state)
    _refused(response, "tampered")


async def test_an_unusable_key_file_falls_back_to_a_key_of_this_process(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.delenv(STATE_KEY_ENV, raising=False)
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("a file where the key's folder should be")
    monkeypatch.setenv(STATE_FILE_ENV, str(blocker / "request-state.key"))
    server = build_server(state_key=None)
    state = await _first_state(server)
    assert text_of((await _retry(server, state))["result"]) == "Hello, Ada!"
    assert any("request-state key file" in record.getMessage() for record in caplog.records)
    _refused(await _retry(build_server(state_key=None), state), "tampered")


def test_a_corrupt_key_file_is_not_used(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    key_file = tmp_path / "request-state.key"
    key_file.write_text("short")
    monkeypatch.setenv(STATE_FILE_ENV, str(key_file))
    assert state_key_file() == str(key_file)
    with pytest.raises(ValueError, match="at least"):
        _file_key(str(key_file))


async def test_the_key_may_come_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(STATE_KEY_ENV, "a-key-shared-by-every-worker-0123")
    state = await _first_state(build_server(state_key=None))
    response = await _retry(build_server(state_key=None), state)
    assert text_of(response["result"]) == "Hello, Ada!"


async def test_a_rotated_key_ring_still_opens_states_of_the_old_key() -> None:
    state = await _first_state(build_server())
    rotated = build_server(state_key=["the-new-key-0123456789abcdef", STATE_KEY])
    response = await _retry(rotated, state)
    assert text_of(response["result"]) == "Hello, Ada!"


@pytest.mark.parametrize("key", ["short", b"", b"fifteen bytes!!"])
def test_a_short_key_is_refused(key: str | bytes) -> None:
    with pytest.raises(ValueError, match="at least 16 bytes"):
        Server("weak", state_key=key)


@pytest.mark.parametrize("ttl", [0, -1.0])
def test_a_ttl_that_is_not_positive_is_refused(ttl: float) -> None:
    with pytest.raises(ValueError, match="state_ttl"):
        Server("no-ttl", state_ttl=ttl)


async def test_the_state_is_compact() -> None:
    state = await _first_state(build_server())
    assert len(state) < 250
    assert set(state) <= set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_.")
