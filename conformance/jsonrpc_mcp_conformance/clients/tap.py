"""The recording tap between a stdio client and its scenario server.

    python .../clients/tap.py RECORD [--path DIR]... -- SERVER_COMMAND...

The client under test starts this program as its MCP server (the harness gives it this command line
in ``MCP_CONFORMANCE_SERVER_COMMAND``). It starts ``SERVER_COMMAND``, relays the client's stdin to it
and its stdout back, line by line, and appends every line to ``RECORD`` as a JSON object
``{"from": "client" | "server", "line": ..., "t": seconds}`` (flushed at once, so the harness reads
it even when the client kills this process). ``--path`` directories go first on the server's
``PYTHONPATH``. The server's stderr is this program's. Only the standard library: the tap is run
by its file path, whatever the client's environment holds.
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import threading
import time
from typing import IO, Any

__all__ = ["main"]


class _Record:
    def __init__(self, path: str) -> None:
        self._file = open(path, "a", encoding="utf-8")  # noqa: SIM115 (closed by close())
        self._lock = threading.Lock()
        self._start = time.monotonic()

    def write(self, side: str, line: bytes) -> None:
        text = line.decode("utf-8", "replace").rstrip("\r\n")
        entry = {"from": side, "line": text, "t": round(time.monotonic() - self._start, 6)}
        with self._lock:
            if not self._file.closed:  # a line read after the server ended: the record is done
                self._file.write(json.dumps(entry) + "\n")
                self._file.flush()

    def close(self) -> None:
        with self._lock:
            self._file.close()


def _relay(source: IO[bytes], sink: IO[bytes], record: _Record, side: str) -> None:
    try:
        for line in iter(source.readline, b""):
            record.write(side, line)
            try:
                sink.write(line)
                sink.flush()
            except (BrokenPipeError, ValueError, OSError):
                break
    finally:
        with contextlib.suppress(BrokenPipeError, OSError):
            sink.close()


def _arguments(argv: list[str]) -> tuple[str, list[str], list[str]]:
    if "--" not in argv:
        raise ValueError("usage: tap.py RECORD [--path DIR]... -- SERVER_COMMAND...")
    split = argv.index("--")
    head, command = argv[:split], argv[split + 1 :]
    if not head or not command:
        raise ValueError("usage: tap.py RECORD [--path DIR]... -- SERVER_COMMAND...")
    record, paths, rest = head[0], [], head[1:]
    while rest:
        if rest[0] != "--path" or len(rest) < 2:
            raise ValueError(f"unknown argument {rest[0]!r}")
        paths.append(rest[1])
        rest = rest[2:]
    return record, paths, command


def main(argv: list[str] | None = None) -> int:
    try:
        path, paths, command = _arguments(sys.argv[1:] if argv is None else argv)
    except ValueError as exc:
        print(f"tap: {exc}", file=sys.stderr)
        return 2
    env: dict[str, Any] = dict(os.environ)
    if paths:
        env["PYTHONPATH"] = os.pathsep.join([*paths, *filter(None, [env.get("PYTHONPATH")])])
    record = _Record(path)
    server = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env)
    assert server.stdin is not None and server.stdout is not None
    to_server = threading.Thread(
        target=_relay, args=(sys.stdin.buffer, server.stdin, record, "client"), daemon=True
    )
    to_client = threading.Thread(target=_relay, args=(server.stdout, sys.stdout.buffer, record, "server"))
    to_server.start()
    to_client.start()
    try:
        code = server.wait()
        to_client.join(timeout=5)
    except KeyboardInterrupt:
        server.terminate()
        code = server.wait()
    finally:
        record.close()
    return code


if __name__ == "__main__":
    sys.exit(main())
