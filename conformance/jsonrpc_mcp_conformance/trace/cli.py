"""``jsonrpc-mcp trace`` and ``jsonrpc-mcp explain``: the command lines.

Usage::

    jsonrpc-mcp trace [--out FILE] [--format text|jsonl] [--full] [--schema-dir DIR] [--html PAGE]
        -- CMD [ARGS...]
    jsonrpc-mcp trace --from RECORDING.jsonl --html PAGE
    jsonrpc-mcp trace --http --upstream URL [--host H] [--port N] [--out FILE] [--format text|jsonl]
        [--header 'NAME: VALUE'] [--auth oauth ...]
    jsonrpc-mcp trace --config FILE --server NAME [OPTIONS]   (a command entry: the tap; a url: the proxy)
    jsonrpc-mcp explain '<json>' [--revision R]
    jsonrpc-mcp conformance replay FILE stdio [--timeout S] -- CMD [ARGS...]
    jsonrpc-mcp conformance replay FILE http [--timeout S] URL

``trace`` exits with CMD's status (127 if it could not start, 2 for a usage error; the proxy: 1 when
it cannot listen, or cannot get the authorization ``--auth oauth`` asks for); ``explain``
exits 0, or 2 for a usage error; ``replay`` exits 0 when every recorded answer agrees, 1 when one
differs, 2 for a usage error or an unreadable recording, 3 when the server cannot be started.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from jsonrpc_mcp._client_options import (
    OptionsError,
    ServerEntry,
    add_config_options,
    add_http_client_options,
    oauth_from_options,
    server_from_options,
)
from jsonrpc_mcp.cli import show_authorization_url

if TYPE_CHECKING:
    from jsonrpc_mcp.client.auth import OAuth

__all__ = ["explain_command", "replay_command", "trace_command"]


def _trace_parser(prog: str) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=prog,
        description="Run an MCP server over stdio behind a tap that annotates every frame "
        "(put it in front of the command of an mcpServers entry).",
    )
    parser.add_argument("--out", type=Path, help="write the annotations here (default: stderr)")
    parser.add_argument("--format", choices=["text", "jsonl"], default="text", help="jsonl: a recording")
    parser.add_argument("--full", action="store_true", help="show every frame whole, not shortened")
    parser.add_argument(
        "--schema-dir",
        type=Path,
        help="also validate against the official schemas (DIR/<revision>/schema.json)",
    )
    parser.add_argument(
        "--html", type=Path, help="also write the trace as one HTML page here (when CMD exits)"
    )
    parser.add_argument(
        "--from",
        dest="recording",
        type=Path,
        help="render this JSONL recording (with --html) instead of running CMD",
    )
    http = parser.add_argument_group("HTTP (a reverse proxy instead of a stdio tap)")
    http.add_argument("--http", action="store_true", help="proxy a Streamable HTTP or HTTP+SSE server")
    http.add_argument(
        "--upstream", help="the server's URL, e.g. http://127.0.0.1:8000/mcp (paths pass as they are)"
    )
    http.add_argument("--host", default="127.0.0.1", help="where the proxy listens (default 127.0.0.1)")
    http.add_argument("--port", type=int, default=8010, help="the proxy's port (default 8010)")
    parser.add_argument(
        "--redact-meta",
        action="append",
        default=[],
        metavar="KEY",
        help="also redact this _meta key (repeatable)",
    )
    parser.add_argument("command", nargs=argparse.REMAINDER, help="-- CMD [ARGS...]: the server to run")
    add_config_options(parser)
    add_http_client_options(parser)  # the proxy's own authorization at the upstream
    return parser


_NEEDS_UPSTREAM = "--http needs --upstream http(s)://HOST:PORT/PATH"


def _server(options: argparse.Namespace, command: list[str]) -> tuple[ServerEntry, OAuth | None]:
    """The server to trace (an ``http`` one is proxied), and the proxy's OAuth client."""
    if options.http and not options.upstream and options.config is None:
        raise OptionsError(_NEEDS_UPSTREAM)
    if options.config is not None and options.upstream:
        raise OptionsError("name the server either with --config or with --upstream, not both")
    positional = ([options.upstream] if options.upstream else []) if options.http else command
    server = server_from_options(options, positional)
    if options.http and not server.is_http:
        raise OptionsError(_NEEDS_UPSTREAM if options.upstream else "--http needs a url entry in --config")
    return server, oauth_from_options(options, server, show=show_authorization_url)


def trace_command(argv: Sequence[str], *, prog: str = "jsonrpc-mcp trace") -> int:
    """Run a stdio MCP server behind a tap that annotates every frame with the specification."""
    parser = _trace_parser(prog)
    options = parser.parse_args(list(argv))
    command = list(options.command)
    if command and command[0] == "--":
        command = command[1:]
    if options.recording is not None:
        return _render(prog, options.recording, options.html)
    if not command and not options.http and options.config is None:
        parser.print_usage(sys.stderr)
        print(f"{prog}: error: name the server command after --", file=sys.stderr)
        return 2
    try:
        server, auth = _server(options, command)
    except OptionsError as exc:
        print(f"{prog}: error: {exc}", file=sys.stderr)
        return 2
    if server.url is not None:
        return _proxy(prog, options, server, auth)
    if options.schema_dir is not None and not options.schema_dir.is_dir():
        print(f"{prog}: error: --schema-dir {options.schema_dir} is not a directory", file=sys.stderr)
        return 2
    from .tap import Sink, run_stdio_tap

    try:
        out = options.out.open("w", encoding="utf-8") if options.out is not None else sys.stderr
    except OSError as exc:
        print(f"{prog}: error: cannot write {options.out}: {exc.strerror or exc}", file=sys.stderr)
        return 2
    sink = Sink(out, jsonl=options.format == "jsonl", full=options.full, keep=options.html is not None)
    try:
        env, cwd = server.process_env(), server.cwd
        status = run_stdio_tap(server.argv, sink, schema_dir=options.schema_dir, env=env, cwd=cwd)
    finally:
        if out is not sys.stderr:
            out.close()
    if options.html is not None:
        from .html import to_html

        title = "MCP trace: " + " ".join(server.argv)
        try:
            options.html.write_text(to_html([f.to_json() for f in sink.kept], title), encoding="utf-8")
        except OSError as exc:
            print(f"{prog}: cannot write {options.html}: {exc.strerror or exc}", file=sys.stderr)
            return status or 1
    return status


def _proxy(prog: str, options: argparse.Namespace, server: ServerEntry, auth: OAuth | None) -> int:
    """``trace --http --upstream URL``: serve the reverse proxy until interrupted."""
    import socket

    import anyio
    import uvicorn

    from jsonrpc_mcp._client_options import authorization_failure, describe_authorization_error

    from .proxy import TraceProxy
    from .tap import Sink

    assert server.url is not None
    try:  # bound here (port 0: the system picks one), listening before the line that says where
        sock = socket.create_server((options.host, options.port))
    except OSError as exc:
        print(
            f"{prog}: error: cannot listen on {options.host}:{options.port}: {exc.strerror or exc}",
            file=sys.stderr,
        )
        return 1
    port = sock.getsockname()[1]
    out = options.out.open("w", encoding="utf-8") if options.out is not None else sys.stderr
    try:
        sink = Sink(out, jsonl=options.format == "jsonl", full=options.full)
        app = TraceProxy(
            server.url,
            sink,
            schema_dir=options.schema_dir,
            redact_meta=options.redact_meta,
            headers=server.headers,
            auth=auth,
        )
        try:  # before any client comes: the browser step, if one is needed
            if auth is not None:
                anyio.run(app.authorize)
        except OSError as exc:
            print(f"trace: the upstream cannot be reached yet ({exc}): authorizing later", file=sys.stderr)
        except Exception as exc:
            failure = authorization_failure(exc)
            if failure is None:
                raise
            print(f"{prog}: {describe_authorization_error(failure, server.url)}", file=sys.stderr)
            return 1
        print(f"trace: http://{options.host}:{port} -> {server.url}", file=sys.stderr, flush=True)
        config = uvicorn.Config(app, log_level="warning", lifespan="on")
        uvicorn.Server(config).run(sockets=[sock])
    finally:
        sock.close()
        if out is not sys.stderr:
            out.close()
    return 0


def _render(prog: str, recording: Path, html: Path | None) -> int:
    """``trace --from REC.jsonl --html FILE``: a recording as a page, nothing run."""
    if html is None:
        print(f"{prog}: error: --from needs --html FILE (where to write the page)", file=sys.stderr)
        return 2
    from .html import to_html
    from .replay import RecordingError, load_recording

    try:
        frames = load_recording(recording)
        html.write_text(to_html(frames, f"MCP trace: {recording.name}"), encoding="utf-8")
    except (OSError, RecordingError) as exc:
        print(f"{prog}: error: {exc}", file=sys.stderr)
        return 2
    return 0


def explain_command(argv: Sequence[str], *, prog: str = "jsonrpc-mcp explain") -> int:
    """Explain one JSON-RPC message: what it is, which revisions define it, what answers it."""
    parser = argparse.ArgumentParser(prog=prog, description=explain_command.__doc__)
    parser.add_argument("message", help="the message, as JSON ('-': read it from stdin)")
    parser.add_argument("--revision", help="also judge it under this revision, e.g. 2026-07-28")
    options = parser.parse_args(list(argv))
    from .explain import explain

    text = sys.stdin.read() if options.message == "-" else options.message
    report = explain(text, options.revision)
    sys.stdout.write(report)
    return 2 if report.startswith("Unknown revision") else 0


def replay_command(argv: Sequence[str], *, prog: str = "jsonrpc-mcp conformance replay") -> int:
    """Play a recorded session against a server and compare every answer with the recording."""
    parser = argparse.ArgumentParser(prog=prog, description=replay_command.__doc__)
    parser.add_argument("recording", type=Path, help="a JSONL recording (jsonrpc-mcp trace --format jsonl)")
    parser.add_argument("mode", choices=["stdio", "http"], help="how to reach the server")
    parser.add_argument(
        "--timeout", type=float, default=10.0, help="seconds to wait for each answer (default 10)"
    )
    parser.add_argument(
        "command", nargs="*", help="stdio: -- CMD [ARGS...], the server to run; http: its URL"
    )
    argv = list(argv)
    cut = argv.index("--") if "--" in argv else len(argv)
    options = parser.parse_args(argv[:cut])
    command = [*options.command, *argv[cut + 1 :]]
    if options.mode == "http" and (len(command) != 1 or not command[0].startswith(("http://", "https://"))):
        parser.print_usage(sys.stderr)
        print(f"{prog}: error: http needs the server's URL (http(s)://HOST:PORT/PATH)", file=sys.stderr)
        return 2
    if not command:
        parser.print_usage(sys.stderr)
        print(f"{prog}: error: name the server command after --", file=sys.stderr)
        return 2
    import contextlib

    import anyio

    from jsonrpc_mcp.transports.http import connect_http
    from jsonrpc_mcp.transports.stdio import spawn_stdio

    from .replay import RecordingError, ServerGone, load_recording, replay

    try:
        frames = load_recording(options.recording)
    except (OSError, RecordingError) as exc:
        print(f"{prog}: error: {exc}", file=sys.stderr)
        return 2

    def stopped(received: int, process: Any) -> int:
        """One line for a server that ended before the replay was over; the exit code (3: it
        did not start, that is answered nothing at all; else 1)."""
        if options.mode == "http":
            print(f"{prog}: error: {command[0]!r} stopped taking requests", file=sys.stderr)
            return 1 if received else 3
        status = getattr(process, "returncode", None)
        how = f"exited with status {status}" if status is not None else "closed its input"
        if received:
            print(f"{prog}: error: {command[0]!r} {how} before the replay was over", file=sys.stderr)
            return 1
        print(f"{prog}: error: cannot start {command[0]!r}: it {how} before answering", file=sys.stderr)
        return 3

    async def run() -> int:
        connection: contextlib.AbstractAsyncContextManager[Any] = (
            connect_http(command[0], read_timeout=options.timeout)
            if options.mode == "http"
            else spawn_stdio(command)
        )
        process: Any = None
        try:
            async with connection as stream:
                process = getattr(stream, "process", None)
                result = await replay(frames, stream, timeout=options.timeout)
        except ServerGone as gone:
            return stopped(gone.received, process)
        if result.ended and not result.received and options.mode == "stdio":
            return stopped(0, process)
        for difference in result.differences:
            print(f"DIFF line {difference.frame}: {difference.what}")
        verdict = "agree" if result.ok else f"differ in {len(result.differences)} place(s)"
        print(f"replayed {options.recording}: {result.answers} answers compared, they {verdict}")
        return 0 if result.ok else 1

    try:
        return anyio.run(run)
    except OSError as exc:
        what = "reach" if options.mode == "http" else "start"
        print(f"{prog}: error: cannot {what} {command[0]!r}: {exc.strerror or exc}", file=sys.stderr)
        return 3
