"""A minimal stdio MCP server (stdlib only) with switchable quirks, for the harness's own robustness tests.

It answers ``initialize``, ``ping`` and nothing else (-32601). Options:

``--late-init FLAG``  the first process (the one that creates FLAG) answers its ``initialize`` only
                      once the next line arrives, just before answering that line
``--never-init``      never answers ``initialize``
``--ping-error``      answers every ``ping`` with an error (fixtures expecting a result fail)
``--lenient``         reads broken JSON leniently (NaN; else the ``"id": N`` it can find) and answers
                      it as a ping
``--unsolicited``     sends a result for an id nobody sent right after the ``initialize`` answer
``--census DIR``      records in DIR/alive.log how many instances were alive when it started
"""

from __future__ import annotations

import argparse
import contextlib
import fcntl
import json
import os
import re
import sys
from pathlib import Path
from typing import Any

VERSIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
_ID = re.compile(r'"id"\s*:\s*(-?\d+|"[^"]*")')


def write(message: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def census(directory: Path) -> Any:
    """Hold a lock for this process's lifetime; log how many instances hold one now."""
    directory.mkdir(parents=True, exist_ok=True)
    mine = open(directory / f"{os.getpid()}.lock", "w")  # noqa: SIM115 - held until exit
    fcntl.flock(mine, fcntl.LOCK_EX)
    alive = 1
    for path in directory.glob("*.lock"):
        if path.name == f"{os.getpid()}.lock":
            continue
        with open(path) as other:
            try:
                fcntl.flock(other, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                alive += 1
            else:
                fcntl.flock(other, fcntl.LOCK_UN)
    with open(directory / "alive.log", "a") as log:
        log.write(f"{alive}\n")
    return mine


def parse(line: str, lenient: bool) -> Any:
    try:
        return json.loads(line, parse_constant=lambda _: (_ for _ in ()).throw(ValueError()))
    except ValueError:
        if not lenient:
            raise
    with contextlib.suppress(ValueError):
        return json.loads(line)
    found = _ID.search(line)
    if found is None:
        raise ValueError("no id")
    return {"jsonrpc": "2.0", "id": json.loads(found.group(1)), "method": "ping"}


def answer(item: Any, args: argparse.Namespace) -> dict[str, Any] | None:
    if not isinstance(item, dict) or item.get("jsonrpc") != "2.0" or not isinstance(item.get("method"), str):
        return {"jsonrpc": "2.0", "id": None, "error": {"code": -32600, "message": "Invalid Request"}}
    if "id" not in item:
        return None
    rid, method = item["id"], item["method"]
    if method == "initialize":
        asked = (item.get("params") or {}).get("protocolVersion")
        return {
            "jsonrpc": "2.0",
            "id": rid,
            "result": {
                "protocolVersion": asked if asked in VERSIONS else VERSIONS[-1],
                "capabilities": {},
                "serverInfo": {"name": "quirky", "version": "1"},
            },
        }
    if method == "ping":
        if args.ping_error:
            return {"jsonrpc": "2.0", "id": rid, "error": {"code": -32603, "message": "ping refused"}}
        return {"jsonrpc": "2.0", "id": rid, "result": {}}
    return {"jsonrpc": "2.0", "id": rid, "error": {"code": -32601, "message": "Method not found"}}


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--late-init", type=Path)
    parser.add_argument("--never-init", action="store_true")
    parser.add_argument("--ping-error", action="store_true")
    parser.add_argument("--lenient", action="store_true")
    parser.add_argument("--unsolicited", action="store_true")
    parser.add_argument("--census", type=Path)
    args = parser.parse_args()
    _lock = census(args.census) if args.census else None  # kept open while serving
    late = False
    if args.late_init is not None:
        try:
            os.close(os.open(args.late_init, os.O_CREAT | os.O_EXCL | os.O_WRONLY))
            late = True
        except FileExistsError:
            pass
    held: dict[str, Any] | None = None
    for line in sys.stdin:
        if held is not None:
            write(held)
            held = None
        if not line.strip():
            continue
        try:
            value = parse(line, args.lenient)
        except ValueError:
            write({"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "Parse error"}})
            continue
        if isinstance(value, list):
            write({"jsonrpc": "2.0", "id": None, "error": {"code": -32600, "message": "no batches"}})
            continue
        reply = answer(value, args)
        if reply is None:
            continue
        if isinstance(value, dict) and value.get("method") == "initialize":
            if args.never_init:
                continue
            if late:
                late, held = False, reply
                continue
            write(reply)
            if args.unsolicited:
                write({"jsonrpc": "2.0", "id": "nobody-sent-this", "result": {}})
            continue
        write(reply)
    return 0


if __name__ == "__main__":
    sys.exit(main())
