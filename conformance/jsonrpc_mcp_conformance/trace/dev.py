"""``jsonrpc-mcp dev FILE``: serve a server file over HTTP for development, traced, reloaded on change.

Usage::

    jsonrpc-mcp dev path/to/server.py[:ATTR] [--host H] [--port N] [--out FILE] [--full]

Theory of operation: the server runs in a child process (``jsonrpc-mcp serve FILE --http --port 0``),
so that a change can replace it whole; clients connect to a trace proxy (:class:`TraceProxy`) in
this process, at a URL that does not change, and every frame is annotated on stderr (or ``--out``).
Each start of the child takes any free port and says which on stderr; the proxy is then pointed at
it (a fresh :class:`TraceProxy` behind :class:`_Switch`). The ``.py`` files under FILE's folder are
looked at twice a second (their names and modification times); when they change, the child is
stopped (SIGINT, then SIGKILL after a bounded wait) and started again. Sessions do not survive a
restart: a client gets 404 for its old session and opens a new one, as the protocol says. A child
that fails to start (a syntax error, say) leaves the proxy answering 502 until the next change.

Exit status: 0 after Ctrl-C, 1 when the proxy cannot listen, 2 for a usage error.
"""

from __future__ import annotations

import argparse
import os
import re
import signal
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import IO, Any

import anyio
import anyio.abc

from .proxy import TraceProxy
from .tap import Sink

__all__ = ["dev_command"]

START_TIMEOUT = 60.0  # a child importing the server file and binding its port
STOP_TIMEOUT = 10.0
POLL_INTERVAL = 0.5  # how often the files are looked at
_SERVING = re.compile(r"^jsonrpc-mcp: serving .* at (https?://\S+)$")


def _parser(prog: str) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=prog,
        description="Serve FILE over Streamable HTTP behind a tracing proxy, restarting it when a .py"
        " file under its folder changes.",
    )
    parser.add_argument("target", help="path/to/server.py[:ATTR]")
    parser.add_argument("--host", default="127.0.0.1", help="where clients connect (default 127.0.0.1)")
    parser.add_argument(
        "--port", type=int, default=8000, help="the port clients connect to (0: any, printed)"
    )
    parser.add_argument("--out", type=Path, help="write the annotated frames here (default: stderr)")
    parser.add_argument("--full", action="store_true", help="show every frame whole, not shortened")
    return parser


def _snapshot(folder: Path) -> dict[str, int]:
    """Every ``.py`` file under ``folder`` (caches and hidden folders aside) and its mtime."""
    found: dict[str, int] = {}
    for root, dirs, files in os.walk(folder):
        dirs[:] = [d for d in dirs if not d.startswith(".") and d != "__pycache__"]
        for name in files:
            if name.endswith(".py"):
                path = os.path.join(root, name)
                try:
                    found[path] = os.stat(path).st_mtime_ns
                except OSError:
                    continue
    return found


class _Switch:
    """The ASGI app clients reach: the trace proxy of the child that runs now (503 between children)."""

    def __init__(self) -> None:
        self.proxy: TraceProxy | None = None

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "lifespan":
            while True:
                if (await receive())["type"] == "lifespan.shutdown":
                    await send({"type": "lifespan.shutdown.complete"})
                    return
                await send({"type": "lifespan.startup.complete"})
        if self.proxy is not None:
            await self.proxy(scope, receive, send)
        elif scope["type"] == "http":
            text = b"the server is not running (it restarts when a file changes)\n"
            headers = [
                (b"content-type", b"text/plain; charset=utf-8"),
                (b"content-length", str(len(text)).encode()),
            ]
            await send({"type": "http.response.start", "status": 503, "headers": headers})
            await send({"type": "http.response.body", "body": text})

    async def point(self, url: str | None, sink: Sink) -> None:
        """Send what comes to the server at ``url`` (None: to nobody, 503)."""
        old, self.proxy = self.proxy, (TraceProxy(url, sink) if url is not None else None)
        if old is not None:
            await old.aclose()


class _Child:
    """The server process: started, its URL learnt from its stderr, stopped."""

    def __init__(self, target: str) -> None:
        self.target = target
        self.process: anyio.abc.Process | None = None
        self.url: str | None = None

    async def start(self, tg: anyio.abc.TaskGroup) -> str | None:
        """Start it; where it serves, or None when it did not start (said on stderr)."""
        command = [sys.executable, "-m", "jsonrpc_mcp", "serve", self.target, "--http", "--port", "0"]
        process = await anyio.open_process(
            command, stdin=subprocess.DEVNULL, stdout=None, stderr=subprocess.PIPE
        )
        self.process = process
        found = anyio.Event()
        tg.start_soon(self._relay, process, found)
        with anyio.move_on_after(START_TIMEOUT):
            await found.wait()
        if self.url is None:
            print(f"dev: {self.target} did not start (it restarts on the next change)", file=sys.stderr)
        return self.url

    async def _relay(self, process: anyio.abc.Process, found: anyio.Event) -> None:
        """The child's stderr to ours, line by line, noting where it serves."""
        assert process.stderr is not None
        pending = b""
        async for chunk in process.stderr:
            pending += chunk
            while b"\n" in pending:
                raw, pending = pending.split(b"\n", 1)
                line = raw.decode("utf-8", "replace")
                served = _SERVING.match(line)
                if served and process is self.process:
                    self.url = served.group(1)
                    found.set()
                else:
                    print(f"  | {line}", file=sys.stderr, flush=True)
        found.set()  # it ended: whoever waits stops waiting

    async def stop(self) -> None:
        process, self.process, self.url = self.process, None, None
        if process is None or process.returncode is not None:
            return
        process.send_signal(signal.SIGINT)
        with anyio.move_on_after(STOP_TIMEOUT):
            await process.wait()
            return
        process.kill()
        with anyio.move_on_after(STOP_TIMEOUT):
            await process.wait()


async def _until_signalled(scope: anyio.CancelScope) -> None:
    with anyio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
        async for _ in signals:
            scope.cancel()
            return


async def _run(options: argparse.Namespace, out: IO[str], folder: Path) -> int:
    import socket

    import uvicorn

    target = options.target
    try:
        sock = socket.create_server((options.host, options.port))
    except OSError as exc:
        print(
            f"jsonrpc-mcp dev: cannot listen on {options.host}:{options.port}: {exc.strerror or exc}",
            file=sys.stderr,
        )
        return 1
    sink = Sink(out, full=options.full)
    switch = _Switch()
    child = _Child(target)
    server = uvicorn.Server(uvicorn.Config(switch, log_level="warning", lifespan="on"))
    served = anyio.Event()

    async def serve() -> None:
        try:
            await server.serve([sock])
        finally:
            served.set()

    started = False
    async with anyio.create_task_group() as tg:
        watching = anyio.CancelScope()  # what a signal ends: the proxy then stops on its own terms
        tg.start_soon(_until_signalled, watching)
        try:
            with watching:
                await switch.point(await child.start(tg), sink)
                tg.start_soon(serve)
                started = True
                port = sock.getsockname()[1]
                print(
                    f"dev: serving {target} at http://{options.host}:{port}/mcp (traced; restarted when a"
                    f" .py file under {folder} changes)",
                    file=sys.stderr,
                    flush=True,
                )
                seen = _snapshot(folder)
                while True:
                    await anyio.sleep(POLL_INTERVAL)
                    now = _snapshot(folder)
                    if now != seen:
                        seen = now
                        print("dev: a file changed: restarting the server", file=sys.stderr, flush=True)
                        await switch.point(None, sink)
                        await child.stop()
                        await switch.point(await child.start(tg), sink)
        finally:
            with anyio.CancelScope(shield=True):
                await child.stop()
                await switch.point(None, sink)
                server.should_exit = True
                with anyio.move_on_after(STOP_TIMEOUT if started else 0):
                    await served.wait()
            tg.cancel_scope.cancel()
    return 0


def dev_command(argv: Sequence[str], *, prog: str = "jsonrpc-mcp dev") -> int:
    """Serve a server file over HTTP for development: traced, and restarted when it changes."""
    options = _parser(prog).parse_args(list(argv))
    target = options.target
    location = target.rsplit(":", 1)[0] if re.search(r":[A-Za-z_]\w*$", target) else target
    if not Path(location).is_file():
        print(f"{prog}: no such file: {location}", file=sys.stderr)
        return 2
    folder = Path(location).resolve().parent
    out = options.out.open("w", encoding="utf-8") if options.out is not None else sys.stderr
    try:
        return anyio.run(_run, options, out, folder)
    finally:
        if out is not sys.stderr:
            out.close()
