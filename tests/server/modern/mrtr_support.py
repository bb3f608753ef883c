"""Helpers for the multi round-trip tests: the modern envelope, schema checks, canned answers."""

from __future__ import annotations

import json
from functools import cache
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from jsonrpc_mcp.testing import RawConnection

from ...conftest import SHARED

MODERN = "2026-07-28"
SCHEMA = SHARED / "spec" / "schema" / MODERN / "schema.json"
INPUT_METHODS = {"elicitation/create", "sampling/createMessage", "roots/list"}
RESULTS = {
    "tools/call": "CallToolResult",
    "prompts/get": "GetPromptResult",
    "resources/read": "ReadResourceResult",
}
REQUESTS = {
    "tools/call": "CallToolRequest",
    "prompts/get": "GetPromptRequest",
    "resources/read": "ReadResourceRequest",
}

ALL_CAPS: dict[str, Any] = {"elicitation": {"form": {}, "url": {}}, "sampling": {}, "roots": {}}
ACCEPT_ADA = {"action": "accept", "content": {"name": "Ada"}}
SAMPLED = {"role": "assistant", "content": {"type": "text", "text": "blue"}, "model": "test-model"}
ROOTS = {"roots": [{"uri": "file:///work/project", "name": "project"}]}


def meta(capabilities: dict[str, Any] | None = None, extra: dict[str, Any] | None = None) -> dict[str, Any]:
    """A modern request's ``_meta`` envelope (``extra``: more ``_meta`` entries)."""
    return {
        "io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientCapabilities": ALL_CAPS if capabilities is None else capabilities,
        "io.modelcontextprotocol/clientInfo": {"name": "mrtr-tests", "version": "0"},
        **(extra or {}),
    }


@cache
def _document() -> dict[str, Any]:
    if not SCHEMA.is_file():
        pytest.skip(f"official schema not available: {SCHEMA}")
    document: dict[str, Any] = json.loads(SCHEMA.read_text(encoding="utf-8"))
    return document


def check_schema(name: str, instance: Any) -> None:
    """Assert ``instance`` is a valid ``name`` of the 2026-07-28 schema."""
    validator = Draft202012Validator({**_document(), "$ref": f"#/$defs/{name}"})
    errors = sorted(validator.iter_errors(instance), key=lambda e: list(e.absolute_path))
    assert not errors, f"{name}: " + "; ".join(
        f"{'/'.join(map(str, e.absolute_path))}: {e.message}" for e in errors[:5]
    )


def check_input_required(result: dict[str, Any]) -> None:
    """D15/D19: a valid InputRequiredResult, with known input methods and no caching hints."""
    check_schema("InputRequiredResult", result)
    assert result["resultType"] == "input_required"
    assert "inputRequests" in result or "requestState" in result
    for request in result.get("inputRequests", {}).values():
        assert request["method"] in INPUT_METHODS
        assert "jsonrpc" not in request and "id" not in request
    assert "ttlMs" not in result and "cacheScope" not in result


async def modern(
    raw: RawConnection, method: str, params: dict[str, Any], *, valid: bool = True
) -> dict[str, Any]:
    """Send a modern request with a fresh id (checked against the schema unless ``valid`` is False:
    a deliberately broken one); the response frame, whose result is checked against the schema."""
    rid = raw.new_id()
    request = {"jsonrpc": "2.0", "id": rid, "method": method, "params": params}
    if valid:
        check_schema(REQUESTS.get(method, "JSONRPCRequest"), request)
    await raw.send(request)
    response: dict[str, Any] = await raw.receive_until(
        lambda f: isinstance(f, dict) and f.get("id") == rid and "method" not in f
    )
    result = response.get("result")
    if isinstance(result, dict):
        if result.get("resultType") == "input_required":
            check_input_required(result)
        elif method in RESULTS:
            check_schema(RESULTS[method], result)
    return response


def retry_params(
    first: dict[str, Any], previous: dict[str, Any], responses: dict[str, Any] | None
) -> dict[str, Any]:
    """The params of the next round: the first round's, plus the answers and the echoed state."""
    params = dict(first)
    if responses is not None:
        params["inputResponses"] = responses
    if "requestState" in previous:
        params["requestState"] = previous["requestState"]
    return params


def text_of(result: dict[str, Any]) -> str:
    return "".join(block.get("text", "") for block in result["content"] if block.get("type") == "text")
