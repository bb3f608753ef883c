"""The ``jsonrpc-mcp`` command line: ``serve`` a server, ``call`` one.

Exit codes: 0 success, 1 the server or a call failed, 2 usage error.

Start-up time matters for ``serve`` (a client spawns the server and waits): the plain form
``serve TARGET [ARG...]`` is recognised without argparse, and nothing here imports the client, the
HTTP stack or argparse unless the command needs them.
"""

from __future__ import annotations

import logging
import os
import sys
import traceback
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from . import __version__
from ._targets import TargetError, load_target

if TYPE_CHECKING:
    import argparse

    from .server.server import Server

__all__ = ["load_target", "main"]


def _configure_logging(level: str) -> None:
    for stream in (sys.stdout, sys.stderr):
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is not None:
            reconfigure(encoding="utf-8", errors="backslashreplace")
    logging.basicConfig(
        stream=sys.stderr,
        level=level.upper(),
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )


_MAX_LINE = 4 * 1024 * 1024


def _serve_options() -> argparse.ArgumentParser:
    """The options of ``serve``; they may stand before or after TARGET (``--`` ends them)."""
    import argparse

    parser = argparse.ArgumentParser(add_help=False, allow_abbrev=False)
    parser.add_argument("--max-line", type=int, default=_MAX_LINE)
    parser.add_argument("--http", action="store_true")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8000)
    parser.add_argument("--path", default="/mcp")
    parser.add_argument("--stateless", action="store_true")
    parser.add_argument("--json-response", action="store_true")
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--ssl-certfile")  # --http over TLS: passed to uvicorn
    parser.add_argument("--ssl-keyfile")
    return parser


def _split_serve_args(args: argparse.Namespace) -> tuple[argparse.Namespace, list[str]]:
    import argparse

    rest = list(args.args)
    passthrough: list[str] = []
    if "--" in rest:
        cut = rest.index("--")
        rest, passthrough = rest[:cut], rest[cut + 1 :]
    options, unknown = _serve_options().parse_known_args(rest, namespace=argparse.Namespace(**vars(args)))
    return options, unknown + passthrough


def _plain_serve(argv: Sequence[str]) -> tuple[str, list[str]] | None:
    """(TARGET, its arguments) for ``serve TARGET [ARG...]`` with no option anywhere, else None.

    That is the form clients spawn; argparse would read it the same way (every option has a
    default), so it is recognised here without importing argparse.
    """
    if len(argv) < 2 or argv[0] != "serve" or any(arg.startswith("-") for arg in argv[1:]):
        return None
    return argv[1], list(argv[2:])


def _load_for_serving(target: str, target_args: list[str]) -> Server | None:
    """The target's server, loaded with stdout protected; None (reported on stderr) if it fails."""
    from .transports.stdio import protected_stdout

    sys.argv = [target, *target_args]
    try:
        # whatever the target prints while it loads goes to stderr, never into the protocol stream
        with protected_stdout():
            server: Server = load_target(target)
    except TargetError as exc:
        if exc.__cause__ is not None:  # the target's own code failed: show where
            traceback.print_exception(type(exc.__cause__), exc.__cause__, exc.__cause__.__traceback__)
        print(f"jsonrpc-mcp serve: {exc}", file=sys.stderr)
        return None
    return server


def _serve(args: argparse.Namespace) -> int:
    options, target_args = _split_serve_args(args)
    if options.workers > 1 and not options.stateless:
        print(
            "jsonrpc-mcp serve: --workers needs --stateless (sessions live in one process)", file=sys.stderr
        )
        return 2
    server = _load_for_serving(args.target, target_args)
    if server is None:
        return 2
    if options.http:
        from .http.serve import serve_http

        return serve_http(server, options, target=args.target, target_args=target_args)
    server.run(max_line=options.max_line)
    return 0


def _dump(title: str, value: Any) -> None:
    import orjson

    print(f"== {title}")
    print(orjson.dumps(value, option=orjson.OPT_INDENT_2).decode())


async def _call(args: argparse.Namespace) -> int:
    import orjson

    from .client import Client
    from .jsonrpc.errors import JsonRpcError

    arguments: Any = None
    if args.args is not None and not args.tool:
        print("jsonrpc-mcp call: --args needs --tool", file=sys.stderr)
        return 2
    if args.args is not None:
        try:
            arguments = orjson.loads(args.args)
        except orjson.JSONDecodeError as exc:
            print(f"jsonrpc-mcp call: --args is not JSON: {exc}", file=sys.stderr)
            return 2
        if not isinstance(arguments, dict):
            print("jsonrpc-mcp call: --args must be a JSON object", file=sys.stderr)
            return 2
    options: dict[str, Any] = {"request_timeout": args.timeout}
    if args.protocol_version:
        options["protocol_version"] = args.protocol_version
    async with Client.stdio(args.command, initialize=False, **options) as client:
        _dump("initialize", await client.initialize())
        caps = client.server_capabilities
        if "tools" in caps:
            _dump("tools/list", await client.list_tools())
        if "resources" in caps:
            _dump("resources/list", await client.list_resources())
            _dump("resources/templates/list", await client.list_resource_templates())
        if "prompts" in caps:
            _dump("prompts/list", await client.list_prompts())
        if args.tool:
            try:
                result = await client.call_tool(args.tool, arguments)
            except JsonRpcError as exc:
                _dump(f"tools/call {args.tool} (error)", exc.to_dict())
                return 1
            _dump(f"tools/call {args.tool}", result)
            return 1 if result.get("isError") else 0
    return 0


def build_parser() -> argparse.ArgumentParser:
    import argparse

    parser = argparse.ArgumentParser(prog="jsonrpc-mcp", description="Serve and call MCP servers.")
    parser.add_argument("--version", action="version", version=f"jsonrpc-mcp {__version__}")
    parser.add_argument("--log-level", default=_default_log_level(), help="stderr log level")
    commands = parser.add_subparsers(dest="command_name", required=True)

    serve = commands.add_parser(
        "serve",
        help="serve a jsonrpc_mcp Server over stdio, or over HTTP with --http",
        parents=[_serve_options()],
        description="Options may also follow TARGET; other arguments (or all after --) go to the target.",
    )
    serve.add_argument(
        "target", help="path/to/server.py[:ATTR] or dotted.module[:ATTR] (ATTR defaults to 'server')"
    )
    serve.add_argument(
        "args", nargs=argparse.REMAINDER, help="arguments passed on to the target as sys.argv[1:]"
    )

    call = commands.add_parser("call", help="start a stdio server, initialize, list, optionally call a tool")
    call.add_argument("--tool", help="tool to call")
    call.add_argument("--args", help="tool arguments as a JSON object")
    call.add_argument("--protocol-version", help="revision to ask for (default: the latest handshake one)")
    call.add_argument("--timeout", type=float, default=30.0, help="seconds to wait for each response")
    call.add_argument("command", nargs="+", help="the server command, after --")

    conformance = commands.add_parser(
        "conformance",
        help="check an MCP server against the spec fixtures (see docs/conformance.md)",
        add_help=False,
        prefix_chars="\x00",  # every argument, options included, goes to the harness's own parser
    )
    conformance.add_argument("rest", nargs=argparse.REMAINDER)
    return parser


def _default_log_level() -> str:
    return os.environ.get("JSONRPC_MCP_LOG_LEVEL", "warning")


def main(argv: Sequence[str] | None = None) -> int:
    plain = _plain_serve(sys.argv[1:] if argv is None else argv)
    if plain is not None:  # the common case, read without argparse (see the module docstring)
        _configure_logging(_default_log_level())
        server = _load_for_serving(*plain)
        if server is None:
            return 2
        server.run(max_line=_MAX_LINE)
        return 0
    parser = build_parser()
    args = parser.parse_args(argv)
    _configure_logging(args.log_level)
    if args.command_name == "serve":
        return _serve(args)
    if args.command_name == "conformance":  # the harness lives outside the package; imported only here
        from jsonrpc_mcp_conformance.cli import main as conformance_main

        return conformance_main(args.rest, prog="jsonrpc-mcp conformance")
    import anyio

    try:
        return anyio.run(_call, args)
    except Exception as exc:
        print(f"jsonrpc-mcp call: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
