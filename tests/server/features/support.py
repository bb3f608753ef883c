"""Helpers for the server feature tests: collecting notifications, answering the server's requests,
official-schema checks, and running the feature server as a real process."""

from __future__ import annotations

import contextlib
import json
import subprocess
import sys
from collections.abc import Callable, Iterator
from functools import cache
from pathlib import Path
from typing import Any

import anyio
import orjson
import pytest
from jsonschema import Draft7Validator, Draft202012Validator

from jsonrpc_mcp.revisions import HANDSHAKE_REVISIONS
from tests import timeouts
from tests.announced import SERVE_LINE, Output

REPO = Path(__file__).resolve().parents[3]
SCHEMAS = REPO.parent / "shared" / "spec" / "schema"
FEATURE_SERVER = Path(__file__).resolve().parent / "feature_server.py"
SERVE = [sys.executable, "-m", "jsonrpc_mcp", "serve", str(FEATURE_SERVER)]
VERSIONS = [r.version for r in HANDSHAKE_REVISIONS]
LATEST = VERSIONS[-1]

TIMEOUT = timeouts.STEP  # one exchange, in-memory or with a running subprocess
START_TIMEOUT = timeouts.STARTUP  # a subprocess importing everything and binding its port


class Inbox:
    """Every notification the client got, in order, with bounded waits for the next ones."""

    def __init__(self) -> None:
        self.items: list[tuple[str, Any]] = []
        self._changed = anyio.Event()

    def __call__(self, method: str, params: Any) -> None:
        self.items.append((method, params))
        self._changed.set()
        self._changed = anyio.Event()

    def of(self, method: str) -> list[Any]:
        return [params for m, params in self.items if m == method]

    async def wait_for(
        self, predicate: Callable[[list[tuple[str, Any]]], bool], timeout: float = TIMEOUT
    ) -> None:
        with anyio.fail_after(timeout):
            while not predicate(self.items):
                await self._changed.wait()


def answers(
    *,
    sampling: dict[str, Any] | None = None,
    elicitation: dict[str, Any] | None = None,
    roots: list[dict[str, Any]] | None = None,
    seen: list[tuple[str, Any]] | None = None,
) -> dict[str, Any]:
    """``request_handlers`` answering the server's requests with fixed results (and recording them)."""
    record = seen if seen is not None else []

    def answer(method: str, result: dict[str, Any]) -> Any:
        async def handler(params: Any) -> dict[str, Any]:
            record.append((method, params))
            return result

        return handler

    handlers: dict[str, Any] = {}
    if sampling is not None:
        handlers["sampling/createMessage"] = answer("sampling/createMessage", sampling)
    if elicitation is not None:
        handlers["elicitation/create"] = answer("elicitation/create", elicitation)
    if roots is not None:
        handlers["roots/list"] = answer("roots/list", {"roots": roots})
    return handlers


SAMPLED = {"role": "assistant", "content": {"type": "text", "text": "4"}, "model": "test-model"}
ROOTS = [{"uri": "file:///work/project", "name": "project"}]
ACCEPTED = {"action": "accept", "content": {"name": "Ada", "age": 36}}


def text_of(result: dict[str, Any]) -> str:
    return "".join(block.get("text", "") for block in result["content"] if block.get("type") == "text")


def frames(client: Any) -> tuple[list[Any], list[Any]]:
    """(sent, received) frames of a ``connect(..., recorder=True)`` client, decoded."""
    wire = client.wire
    return [orjson.loads(f) for f in wire.sent], [orjson.loads(f) for f in wire.received]


# -- the official schemas -------------------------------------------------------------------------
@cache
def _document(version: str) -> dict[str, Any]:
    path = SCHEMAS / version / "schema.json"
    if not path.is_file():
        pytest.skip(f"official schema not available: {path}")
    document: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return document


def check_schema(version: str, name: str, instance: Any) -> None:
    """Assert ``instance`` is a valid ``name`` of revision ``version``'s official schema."""
    document = _document(version)
    if "$defs" in document:
        validator: Any = Draft202012Validator({**document, "$ref": f"#/$defs/{name}"})
    else:
        validator = Draft7Validator({**document, "$ref": f"#/definitions/{name}"})
    errors = sorted(validator.iter_errors(instance), key=lambda e: list(e.absolute_path))
    assert not errors, f"{version} {name}: " + "; ".join(
        f"{'/'.join(map(str, e.absolute_path))}: {e.message}" for e in errors[:5]
    )


def has_definition(version: str, name: str) -> bool:
    document = _document(version)
    return name in (document.get("$defs") or document["definitions"])


# -- a real HTTP server ---------------------------------------------------------------------------
@contextlib.contextmanager
def http_server(target: Path = FEATURE_SERVER) -> Iterator[str]:
    """``python -m jsonrpc_mcp serve TARGET --http --port 0``; yields the MCP URL it announces once
    it listens."""
    command = [sys.executable, "-m", "jsonrpc_mcp", "serve", str(target), "--http", "--port", "0"]
    process = subprocess.Popen(command, cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    output = Output(process.stderr)
    try:
        yield output.wait_for(SERVE_LINE, process, START_TIMEOUT).group("url").decode()
    finally:
        process.terminate()
        try:
            process.wait(timeout=timeouts.STEP)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=timeouts.STEP)
        output.close()
