"""A hand-written stdio JSON-RPC peer that frames its output awkwardly, for the client side's framing.

It answers the first two requests it reads (any method) with ``{"echo": <method>, "text": "héllo ✓"}``:
half of the first response goes out alone; the rest of it, CRLF, the second response, CRLF, and a
notification all go out in one write. Then it waits for stdin to end.
"""

from __future__ import annotations

import json
import os
import sys


def answer(request: dict[str, object]) -> bytes:
    body = {"jsonrpc": "2.0", "id": request["id"], "result": {"echo": request["method"], "text": "héllo ✓"}}
    return json.dumps(body, ensure_ascii=False).encode("utf-8")


def main() -> None:
    stdin = sys.stdin.buffer
    first = answer(json.loads(stdin.readline()))
    half = len(first) // 2
    os.write(1, first[:half])
    second = answer(json.loads(stdin.readline()))
    note = json.dumps({"jsonrpc": "2.0", "method": "note", "params": {"text": "日本"}}, ensure_ascii=False)
    os.write(1, first[half:] + b"\r\n" + second + b"\r\n" + note.encode("utf-8") + b"\n")
    stdin.read()  # until EOF


if __name__ == "__main__":
    main()
