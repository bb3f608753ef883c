"""A minimal stdio MCP server (stdlib only) for the harness's timing and diagnostics tests.

It answers ``initialize`` (legacy revisions), ``server/discover`` (advertising the legacy revisions
only), ``ping``, and nothing else (-32601). Options:

``--slow-start S``    sleeps S seconds before reading its input (a server slow to start)
``--refuse V``        answers ``initialize`` for revision V with an error, although discover lists V
``--crash``           writes two lines to stderr and exits with status 3 at once
``--garbage``         answers every line with a line that is no JSON-RPC
``--silent-invalid``  answers nothing to a frame that is no valid request (no -32700/-32600)
``--trace FILE``      appends "start T" when it starts and "end T" when its input ends (T: time.time())
``--slow-answers S``  sleeps S seconds before answering each request; with ``--trace`` it appends
                      "ask T" when it reads a request and "done T" just before it answers it
``--hold ID``         holds its answer to the request with id ID (as JSON: ``7``, ``"a"``) until it
                      reads the next line, and sends it just before that line's answer (a server
                      late by any time at all, deterministically)
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from typing import Any

VERSIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
INFO = {"name": "picky", "version": "1.0"}


def write(message: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--slow-start", type=float, default=0.0)
    parser.add_argument("--refuse", default="")
    parser.add_argument("--crash", action="store_true")
    parser.add_argument("--garbage", action="store_true")
    parser.add_argument("--silent-invalid", action="store_true")
    parser.add_argument("--trace", default="")
    parser.add_argument("--slow-answers", type=float, default=0.0)
    parser.add_argument("--hold", default="")
    options = parser.parse_args()
    trace(options.trace, "start")
    if options.crash:
        sys.stderr.write("picky: starting\npicky: cannot read config.toml: no such file\n")
        sys.stderr.flush()
        sys.exit(3)
    time.sleep(options.slow_start)
    held: dict[str, Any] | None = None
    for line in sys.stdin:
        if held is not None:
            answer(held, options)
            held = None
        if options.garbage:
            sys.stdout.write("Welcome to picky 1.0! Type 'help'.\n")
            sys.stdout.flush()
            continue
        try:
            message = json.loads(line)
        except ValueError:
            message = None
        if not isinstance(message, dict) or message.get("jsonrpc") != "2.0":
            if not options.silent_invalid:
                write({"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "Parse error"}})
            continue
        if "id" not in message:
            continue  # a notification
        if options.hold and json.dumps(message["id"]) == options.hold:
            held = message
            continue
        if options.slow_answers:
            trace(options.trace, "ask")
            time.sleep(options.slow_answers)
            trace(options.trace, "done")  # (before the answer: the next request may follow it at once)
            answer(message, options)
        else:
            answer(message, options)


def trace(path: str, what: str) -> None:
    if path:
        with open(path, "a") as file:
            file.write(f"{what} {time.time()}\n")


def answer(message: dict[str, Any], options: argparse.Namespace) -> None:
    method, rid = message.get("method"), message.get("id")
    if method == "initialize":
        asked = (message.get("params") or {}).get("protocolVersion")
        if asked == options.refuse:
            write({"jsonrpc": "2.0", "id": rid, "error": {"code": -32603, "message": "refused"}})
            return
        version = asked if asked in VERSIONS else VERSIONS[-1]
        result = {"protocolVersion": version, "capabilities": {}, "serverInfo": INFO}
        write({"jsonrpc": "2.0", "id": rid, "result": result})
    elif method == "server/discover":
        result = {"supportedVersions": list(VERSIONS), "capabilities": {}, "serverInfo": INFO}
        write({"jsonrpc": "2.0", "id": rid, "result": result})
    elif method == "ping":
        write({"jsonrpc": "2.0", "id": rid, "result": {}})
    else:
        write({"jsonrpc": "2.0", "id": rid, "error": {"code": -32601, "message": "Method not found"}})


if __name__ == "__main__":
    main()
    if "--trace" in sys.argv:
        trace(sys.argv[sys.argv.index("--trace") + 1], "end")
