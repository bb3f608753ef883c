"""Invariants: rules judged over every frame a revision's run saw (JSON lines, error shape, ...)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from jsonrpc_mcp import wire

from ._channel import _OMIT, Seen, _dump
from .match import _schema_errors, _short

__all__ = ["judge_invariant", "load_message_schema"]


def _messages(log: list[Seen]) -> list[tuple[Seen, Any]]:
    out = []
    for seen in log:
        if seen.parsed:
            for item in seen.value if isinstance(seen.value, list) else [seen.value]:
                out.append((seen, item))
    return out


def judge_invariant(
    name: str,
    log: list[Seen],
    sent_ids: list[Any],
    capabilities: dict[str, Any],
    schema: Any,
    sent_methods: dict[str, set[str]] | None = None,
) -> list[str]:
    problems: list[str] = []
    if name == "stdout-json-lines":
        for seen in log:
            if not seen.parsed:
                problems.append(f"not JSON (during {seen.fixture or 'setup'}): {seen.raw[:120]!r}")
    elif name == "jsonrpc-version":
        for seen, item in _messages(log):
            if not isinstance(item, dict) or item.get("jsonrpc") != "2.0":
                problems.append(f"not a JSON-RPC 2.0 message (during {seen.fixture}): {_short(item)}")
    elif name == "error-shape":
        for seen, item in _messages(log):
            if isinstance(item, dict) and "error" in item:
                error = item["error"]
                ok = isinstance(error, dict)
                ok = ok and type(error.get("code")) is int and isinstance(error.get("message"), str)
                if not ok:
                    problems.append(f"malformed error object (during {seen.fixture}): {_short(item)}")
    elif name == "solicited-responses":
        for seen, item in _messages(log):
            if isinstance(item, dict) and "method" not in item and "result" in item:
                rid = item.get("id", _OMIT)
                if rid is _OMIT or rid is None or rid not in sent_ids:
                    problems.append(
                        f"a result for no request we sent (during {seen.fixture}): {_short(item)}"
                    )
    elif name == "no-server-requests":
        for seen, item in _messages(log):
            if isinstance(item, dict) and "method" in item and "id" in item:
                problems.append(f"the server sent a request (during {seen.fixture}): {_short(item)}")
    elif name == "list-changed-declared":
        for seen, item in _messages(log):
            method = item.get("method", "") if isinstance(item, dict) else ""
            for cap in ("tools", "prompts", "resources"):
                declared = capabilities.get(cap)
                if method == f"notifications/{cap}/list_changed" and not (
                    isinstance(declared, dict) and declared.get("listChanged") is True
                ):
                    problems.append(f"{method} without {cap}.listChanged declared (during {seen.fixture})")
    elif name == "logging-declared":
        for seen, item in _messages(log):
            if (
                isinstance(item, dict)
                and item.get("method") == wire.MESSAGE
                and "logging" not in capabilities
            ):
                problems.append(
                    f"notifications/message without the logging capability (during {seen.fixture})"
                )
    elif name == "no-notifications-message":
        for seen, item in _messages(log):
            if isinstance(item, dict) and item.get("method") == wire.MESSAGE:
                problems.append(
                    f"notifications/message for a request without logLevel (during {seen.fixture})"
                )
    elif name == "result-type":
        for seen, item in _messages(log):
            if (
                isinstance(item, dict)
                and isinstance(item.get("result"), dict)
                and "resultType" not in item["result"]
            ):
                problems.append(f"a result without resultType (during {seen.fixture}): {_short(item)}")
    elif name == "input-required-methods":
        allowed = {wire.TOOLS_CALL, wire.PROMPTS_GET, wire.RESOURCES_READ}
        for seen, item in _messages(log):
            result = item.get("result") if isinstance(item, dict) else None
            if isinstance(result, dict) and result.get("resultType") == "input_required":
                methods = (sent_methods or {}).get(_dump(item.get("id")).decode(), set())
                if not methods or not methods <= allowed:
                    problems.append(
                        f"input_required answers {'/'.join(sorted(methods)) or 'no request we sent'}"
                        f" (during {seen.fixture}): {_short(item)}"
                    )
    elif name == "no-task-results":  # (the tasks:* fixtures declare the extension: not judged)
        for seen, item in _messages(log):
            if seen.fixture.startswith("tasks:"):
                continue
            result = item.get("result") if isinstance(item, dict) else None
            if isinstance(result, dict) and result.get("resultType") == "task":
                problems.append(f"a task result, the tasks extension never declared (during {seen.fixture})")
    elif name == "schema-valid":
        if schema is None:
            return ["skip"]
        for seen, item in _messages(log):
            errors = _schema_errors(item, schema)
            if errors:
                problems.append(f"{_short(item)} (during {seen.fixture}): {errors[0]}")
    else:
        problems.append(f"unknown invariant {name}")
    return problems[:5]


def load_message_schema(schema_dir: Path, revision: str) -> Any:
    path = schema_dir / revision / "schema.json"
    if not path.exists():
        return None
    document = json.loads(path.read_text(encoding="utf-8"))
    defs_key = "$defs" if "$defs" in document else "definitions"
    schema = dict(document)
    schema["$ref"] = f"#/{defs_key}/JSONRPCMessage"
    error = document[defs_key].get("JSONRPCError")
    if isinstance(error, dict) and "id" in error.get("required", ()):
        # up to 2025-06-18 an error response must have a string or integer id, so an unreadable
        # request has no schema-valid answer: the 2024-11-05..2025-06-18 schemas define no error response
        # without an id, so a null or missing one is accepted there
        lenient = dict(error)
        lenient["required"] = [name for name in error["required"] if name != "id"]
        lenient["properties"] = {
            **error["properties"],
            "id": {"anyOf": [error["properties"]["id"], {"type": "null"}]},
        }
        schema[defs_key] = {**document[defs_key], "JSONRPCError": lenient}
    return schema
