"""What a frame the harness sends is, read as a server reads it: well-formed or rejected as read, and
the ids of the requests in it (also in a frame that is broken on purpose)."""

from __future__ import annotations

import contextlib
import json
import re
from typing import Any

import orjson

__all__ = ["sent_request_ids"]

_NO_BATCHES = "2025-06-18"  # the first revision without JSON-RPC batches (a batch is then rejected)


def _well_formed(frame: bytes, *, batches: bool = True) -> bool:
    """Whether ``frame`` is a request, notification or batch a server cannot reject as it reads it
    (strict JSON; ``jsonrpc`` "2.0", a string method, an id string or integer (MCP ids are never
    null), structured params; a batch only where ``batches``). Anything else is answered (if at all)
    by the reader, before it reads the next frame."""
    try:
        value = orjson.loads(frame)
    except orjson.JSONDecodeError:
        return False
    items = value if isinstance(value, list) else [value]
    if not items or (isinstance(value, list) and not batches):
        return False
    return all(_well_formed_item(item) for item in items)


def _well_formed_item(item: Any) -> bool:
    """One request or notification a server cannot reject as it reads it (see :func:`_well_formed`)."""
    if not isinstance(item, dict) or item.get("jsonrpc") != "2.0" or not isinstance(item.get("method"), str):
        return False
    rid = item.get("id")
    if "id" in item and not (isinstance(rid, str) or type(rid) is int):
        return False
    return "params" not in item or isinstance(item["params"], (dict, list))


_LOOSE_ID = re.compile(rb"""["']id["']\s*:\s*(-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?|"(?:[^"\\]|\\.)*"|'[^']*')""")


def sent_request_ids(line: bytes) -> list[Any]:
    """The ids of the requests in one frame the harness sent: strict JSON first, then Python's
    lenient parser (NaN, Infinity), then, for text that is no JSON at all, every ``"id": <number or
    string>`` in it."""
    try:
        value = orjson.loads(line)
    except orjson.JSONDecodeError:
        try:
            value = json.loads(line)
        except ValueError:
            ids: list[Any] = []
            for match_ in _LOOSE_ID.finditer(line):
                token = match_.group(1).decode("utf-8", "replace")
                if token.startswith("'"):
                    ids.append(token[1:-1])
                else:
                    with contextlib.suppress(ValueError):
                        ids.append(json.loads(token))
            return ids
    items = value if isinstance(value, list) else [value]
    return [item["id"] for item in items if isinstance(item, dict) and "id" in item and "method" in item]
