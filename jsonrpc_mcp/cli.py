"""The ``jsonrpc-mcp`` command line: ``serve`` a server, ``call`` one, ``bridge`` one to another transport.

Exit codes: 0 success, 1 the server or a call failed, 2 usage error.

Start-up time matters for ``serve`` (a client spawns the server and waits): the plain form
``serve TARGET [ARG...]`` is recognised without argparse, and nothing here imports the client, the
HTTP stack or argparse unless the command needs them.

Other packages add sub-commands through the ``jsonrpc_mcp.commands`` entry point group (the
conformance harness registers ``conformance`` so): each entry point names a callable
``(argv, *, prog) -> exit status`` whose docstring's first line is its help. They are looked up only
when the command line names a sub-command that is not built in, or asks for the list of commands;
this package never imports them otherwise.
"""

from __future__ import annotations

import logging
import os
import sys
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, NoReturn, Protocol

from . import __version__
from ._serve_options import HOST_NAMES, LOG_LEVELS, MAX_LINE, log_level, serve_options
from ._targets import TargetError, load_target, user_traceback

if TYPE_CHECKING:
    import argparse
    from importlib.metadata import EntryPoint

    from .client import Client
    from .server._server import Server

__all__ = ["load_target", "main"]


def _configure_logging(level: str) -> None:
    for stream in (sys.stdout, sys.stderr):
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is not None:
            reconfigure(encoding="utf-8", errors="backslashreplace")
    known = level.upper() in LOG_LEVELS
    logging.basicConfig(
        stream=sys.stderr,
        level=level.upper() if known else logging.WARNING,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )
    if not known:  # only $JSONRPC_MCP_LOG_LEVEL gets here: the option is checked by argparse
        logging.getLogger("jsonrpc_mcp").warning("unknown log level %r: using warning", level)


def _split_serve_args(args: argparse.Namespace) -> tuple[argparse.Namespace, list[str]]:
    import argparse

    rest = list(args.args)
    passthrough: list[str] = []
    if "--" in rest:
        cut = rest.index("--")
        rest, passthrough = rest[:cut], rest[cut + 1 :]
    options, unknown = serve_options().parse_known_args(rest, namespace=argparse.Namespace(**vars(args)))
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
        if exc.__cause__ is not None:  # the target's own code failed: show where (its frames only)
            sys.stderr.write(user_traceback(exc.__cause__))
        print(f"jsonrpc-mcp serve: {exc}", file=sys.stderr)
        return None
    return server


def _serve(args: argparse.Namespace) -> int:
    options, target_args = _split_serve_args(args)
    if options.log_level != args.log_level:  # --log-level after TARGET: the serve option, not the target's
        logging.getLogger().setLevel(options.log_level.upper())
        os.environ["JSONRPC_MCP_LOG_LEVEL"] = options.log_level  # --workers' processes configure afresh
    if options.workers > 1 and not options.stateless and not options.redis:
        print(
            "jsonrpc-mcp serve: --workers needs --stateless or --redis (sessions live in one process)",
            file=sys.stderr,
        )
        return 2
    if not options.http and any(k.startswith("auth_") and v for k, v in vars(options).items()):
        print("jsonrpc-mcp serve: --auth-* options need --http (stdio has no bearer tokens)", file=sys.stderr)
        return 2
    server = _load_for_serving(args.target, target_args)
    if server is None:
        return 2
    if options.log_format == "json":
        from .telemetry import LOG_FORMAT_ENV, use_json_logs

        use_json_logs(server)
        os.environ[LOG_FORMAT_ENV] = "json"  # for --workers, whose processes load the server again
    if options.http:
        from .http._serve import serve_http

        return serve_http(server, options, target=args.target, target_args=target_args)
    server.run(max_line=options.max_line)
    return 0


def show_authorization_url(url: str) -> None:
    """Where the browser could not be opened: the URL for the person to open (on stderr)."""
    print("jsonrpc-mcp: to authorize, open this URL in a browser:", file=sys.stderr)
    print(url, file=sys.stderr, flush=True)


def _dump(title: str, value: Any) -> None:
    import orjson

    print(f"== {title}")
    print(orjson.dumps(value, option=orjson.OPT_INDENT_2).decode())


async def _call(args: argparse.Namespace) -> int:
    import orjson

    from ._client_options import (
        OptionsError,
        authorization_failure,
        describe_authorization_error,
        oauth_from_options,
        server_from_options,
        wants_hint,
    )
    from .client import Client

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
    from .revisions import REVISIONS

    mode = args.mode
    requested = REVISIONS.get(args.protocol_version) if args.protocol_version else None
    if requested is not None and not requested.has_handshake:  # a stateless revision: no handshake
        if mode not in (None, requested.version):
            version = requested.version
            print(
                f"jsonrpc-mcp call: --protocol-version {version} goes with --mode {version}", file=sys.stderr
            )
            return 2
        mode = requested.version
    try:
        target = server_from_options(args, args.command)
        auth = oauth_from_options(args, target, show=show_authorization_url)
    except OptionsError as exc:
        print(f"jsonrpc-mcp call: {exc}", file=sys.stderr)
        return 2
    options: dict[str, Any] = {"request_timeout": args.timeout, "mode": mode or "legacy"}
    if args.protocol_version and (requested is None or requested.has_handshake):
        options["protocol_version"] = args.protocol_version
    if target.url is not None:
        connect = Client.http(target.url, headers=target.headers, auth=auth, initialize=False, **options)
    else:
        env, cwd = target.process_env(), target.cwd
        connect = Client.stdio(target.argv, env=env, cwd=cwd, initialize=False, **options)
    try:
        async with connect as client:
            return await _call_session(client, args.tool, arguments)
    except Exception as exc:
        failure = authorization_failure(exc)
        if failure is None:
            raise
        line = describe_authorization_error(failure, target.url or "", hint=wants_hint(args, target))
        print(f"jsonrpc-mcp call: {line}", file=sys.stderr)
        return 1


async def _call_session(client: Client, tool: str | None, arguments: Any) -> int:
    """``call`` on a connection: what the server offers, then the tool's result."""
    from .client import RejectedToolError
    from .jsonrpc.errors import JsonRpcError

    opened = await client.connect()
    _dump("server/discover" if client.is_modern else "initialize", opened)
    caps = client.server_capabilities
    if "tools" in caps:
        _dump("tools/list", await client.list_tools())
    if "resources" in caps:
        _dump("resources/list", await client.list_resources())
        _dump("resources/templates/list", await client.list_resource_templates())
    if "prompts" in caps:
        _dump("prompts/list", await client.list_prompts())
    if tool:
        try:
            result = await client.call_tool(tool, arguments)
        except JsonRpcError as exc:
            _dump(f"tools/call {tool} (error)", exc.to_dict())
            return 1
        except RejectedToolError as exc:  # (invalid x-mcp-header declarations: nothing was sent)
            print(f"jsonrpc-mcp call: {exc}", file=sys.stderr)
            return 1
        _dump(f"tools/call {tool}", result)
        return 1 if result.get("isError") else 0
    return 0


COMMANDS_GROUP = "jsonrpc_mcp.commands"  # the entry point group of sub-commands other packages add
_BUILTIN = ("serve", "call", "inspect", "install", "bridge")
# sub-commands that ship with jsonrpc-mcp in their own package: named when theirs is not installed
_SHIPPED = {
    name: "the conformance harness (the jsonrpc_mcp_conformance package)"
    for name in ("conformance", "trace", "explain", "dev")
}


class Command(Protocol):
    """A sub-command another package registers (see the module docstring)."""

    def __call__(self, argv: Sequence[str], *, prog: str) -> int: ...


def _command_word(argv: Sequence[str]) -> int | None:
    """The index of the sub-command on the command line (after the global options), or None."""
    index = 0
    while index < len(argv):
        arg = argv[index]
        if len(arg) > 2 and "--log-level".startswith(arg):  # argparse takes an unambiguous prefix
            index += 2
        elif arg.startswith("-"):
            index += 1
        else:
            return index
    return None


def _entry_points() -> dict[str, EntryPoint]:
    """The ``jsonrpc_mcp.commands`` entry points by name (a built-in name cannot be taken)."""
    from importlib import metadata

    found: dict[str, EntryPoint] = {}
    for entry in metadata.entry_points(group=COMMANDS_GROUP):
        if entry.name not in _BUILTIN:
            found.setdefault(entry.name, entry)
    return found


def _load_command(entry: EntryPoint) -> Command | str:
    """The command an entry point names, or why it cannot be had."""
    try:
        command = entry.load()
    except Exception as exc:  # a broken plugin must not break the built-in commands
        return f"{entry.value} cannot be loaded: {type(exc).__name__}: {exc}"
    return command if callable(command) else f"{entry.value} is not callable"


def _command_help(command: Command | str) -> str:
    if isinstance(command, str):
        return f"(not available: {command})"
    return (command.__doc__ or "").strip().split("\n", 1)[0]


def build_parser(extra_commands: Mapping[str, Command | str] | None = None) -> argparse.ArgumentParser:
    """The parser of the built-in sub-commands and of ``extra_commands`` (name -> the command, or
    why it is not available; see :func:`_other_commands`)."""
    import argparse

    from ._client_options import add_config_options, add_http_client_options
    from .revisions import MODERN_REVISIONS

    class CommandLine(argparse.ArgumentParser):
        def error(self, message: str) -> NoReturn:
            # a built-in command's line was parsed without the plug-ins (to start fast); a usage
            # line must still name every command
            for name in _entry_points() if not extra_commands else ():
                if name not in commands.choices:
                    commands.add_parser(name, help=_command_help("not loaded"))
            super().error(message)

    parser = CommandLine(prog="jsonrpc-mcp", description="Serve and call MCP servers.")
    parser.add_argument("--version", action="version", version=f"jsonrpc-mcp {__version__}")
    parser.add_argument(
        "--log-level",
        type=log_level,
        default=_default_log_level(),
        help="stderr log level: debug, info, warning (default, or $JSONRPC_MCP_LOG_LEVEL), error",
    )
    commands = parser.add_subparsers(dest="command_name", required=True, parser_class=argparse.ArgumentParser)

    serve = commands.add_parser(
        "serve",
        help="serve a jsonrpc_mcp Server over stdio, or over HTTP with --http",
        parents=[serve_options()],
        description="Options may also follow TARGET; other arguments (or all after --) go to the target.",
    )
    serve.add_argument(
        "target", help="path/to/server.py[:ATTR] or dotted.module[:ATTR] (ATTR defaults to 'server')"
    )
    serve.add_argument(
        "args", nargs=argparse.REMAINDER, help="arguments passed on to the target as sys.argv[1:]"
    )

    call = commands.add_parser(
        "call", help="connect to a server (a stdio command, or an HTTP URL), list it, optionally call a tool"
    )
    call.add_argument("--tool", help="tool to call")
    call.add_argument("--args", help="tool arguments as a JSON object")
    call.add_argument("--protocol-version", help="revision to ask for (default: the latest handshake one)")
    call.add_argument(
        "--mode",
        choices=("legacy", "auto", *(r.version for r in MODERN_REVISIONS)),
        help="how to connect: the handshake (legacy, the default), the stateless 2026-07-28 revision, "
        "or auto (server/discover, falling back to initialize)",
    )
    call.add_argument("--timeout", type=float, default=30.0, help="seconds to wait for each response")
    call.add_argument("command", nargs="*", help="the server command after --, or its http(s):// URL")
    add_config_options(call)
    add_http_client_options(call)

    inspect = commands.add_parser(
        "inspect",
        help="print everything a server offers: info, capabilities, tools with schemas, resources, prompts",
        description="TARGET: path/to/server.py[:ATTR] (served with this Python), a stdio command after --,"
        " an http(s):// URL, or --config FILE --server NAME.",
    )
    inspect.add_argument(
        "--mode",
        choices=("legacy", "auto", *(r.version for r in MODERN_REVISIONS)),
        default="auto",
        help="how to connect: auto (server/discover, falling back to initialize; the default), the"
        " handshake (legacy), or the stateless 2026-07-28 revision",
    )
    inspect.add_argument("--json", action="store_true", help="machine-readable output")
    inspect.add_argument("--timeout", type=float, default=30.0, help="seconds to wait for each response")
    inspect.add_argument("target", nargs="*", help="the server file, its command after --, or its URL")
    add_config_options(inspect)
    add_http_client_options(inspect)

    from ._bridge import add_upstream_options

    bridge = commands.add_parser(
        "bridge",
        help="serve an MCP server over another transport: a URL over stdio, or a stdio command over HTTP",
        parents=[serve_options()],
        description="bridge URL: a stdio server forwarding to the MCP server at URL. bridge --http"
        " [--port P] -- CMD...: the stdio server CMD served over Streamable HTTP (with serve --http's"
        " options). Either side speaks either protocol era.",
    )
    add_upstream_options(bridge)
    bridge.add_argument(
        "target", nargs="+", help="the upstream server's http(s):// URL, or its command after --"
    )

    install = commands.add_parser("install", help="add a server to an MCP client's configuration")
    clients = install.add_subparsers(dest="client", required=True)
    for host, (title, where, hint) in HOST_NAMES.items():
        one = clients.add_parser(
            host,
            help=f"add FILE (or a remote server, --url) to {title}'s {where}",
            description=f"Adds (or replaces) the {where} entry that serves FILE with this Python, or"
            " (--url) that bridges to the remote server at URL (jsonrpc-mcp bridge URL, with the upstream"
            " options given); the rest of the config is kept, and the file as it was is copied to .bak"
            " first.",
        )
        one.add_argument("file", nargs="?", help="path/to/server.py[:ATTR]")
        one.add_argument("--url", help="a remote server's http(s):// URL, reached through jsonrpc-mcp bridge")
        one.add_argument("--name", help="the entry's name (default: the server's name, or the URL's host)")
        add_upstream_options(one)
        one.add_argument(
            "--env",
            action="append",
            metavar="KEY=VALUE",
            help="an environment variable for the server (repeatable)",
        )
        one.add_argument("--config", help=f"the config file (default: {hint})")
        one.add_argument("--dry-run", action="store_true", help="print the resulting config, write nothing")

    for name, command in (extra_commands or {}).items():
        added = commands.add_parser(
            name,
            help=_command_help(command),
            add_help=False,
            prefix_chars="\x00",  # every argument, options included, goes to the command's own parser
        )
        added.add_argument("rest", nargs=argparse.REMAINDER)
    return parser


def _other_commands(argv: Sequence[str]) -> dict[str, Command | str] | int:
    """The entry point sub-commands this command line needs: none for a built-in command, every
    one (loaded, for their help) when it asks for help, the one it names otherwise (the others by
    name only, for argparse's list of choices). Exit status 2 when the one it names is missing or
    broken (told on stderr); a name no entry point has is left to argparse, which lists the choices."""
    index = _command_word(argv)
    if index is not None and argv[index] in _BUILTIN:
        return {}
    entries = _entry_points()
    if any(arg in ("-h", "--help") for arg in argv[: len(argv) if index is None else index]):
        return {name: _load_command(entry) for name, entry in entries.items()}
    if index is None:  # --version, or a usage error: argparse shows the names only
        return dict.fromkeys(entries, "not loaded")
    name = argv[index]
    if name in entries:
        command = _load_command(entries[name])
        if isinstance(command, str):
            print(f"jsonrpc-mcp {name}: {command}", file=sys.stderr)
            return 2
        return {name: command}
    if name in _SHIPPED:
        print(
            f"jsonrpc-mcp {name}: {_SHIPPED[name]} is not installed: no {COMMANDS_GROUP!r} entry point"
            f" named {name!r} (it comes with the jsonrpc-mcp wheel; reinstall jsonrpc-mcp)",
            file=sys.stderr,
        )
        return 2
    return dict.fromkeys(entries, "not loaded")  # only their names matter: argparse refuses ``name``


def _default_log_level() -> str:
    return os.environ.get("JSONRPC_MCP_LOG_LEVEL", "warning")


def _inspect(args: argparse.Namespace) -> int:
    """``inspect``: 0 with the report on stdout, else one line on stderr (1: the server, 2: usage)."""
    from ._client_options import OptionsError, oauth_from_options, server_from_options, wants_hint
    from ._inspect import InspectError, inspect_target, render_text

    try:
        server = server_from_options(args, args.target)
        auth = oauth_from_options(args, server, show=show_authorization_url)
    except OptionsError as exc:
        print(f"jsonrpc-mcp inspect: {exc}", file=sys.stderr)
        return 2
    try:
        hint = wants_hint(args, server)
        report = inspect_target(server, mode=args.mode, timeout=args.timeout, auth=auth, hint=hint)
    except InspectError as exc:
        print(f"jsonrpc-mcp inspect: {exc}", file=sys.stderr)
        return exc.status
    if args.json:
        import json

        sys.stdout.write(json.dumps(report, indent=2, ensure_ascii=False) + "\n")
    else:
        sys.stdout.write(render_text(report))
    return 0


def _install(args: argparse.Namespace) -> int:
    """``install HOST``: 0 when installed, 1 with one line on stderr."""
    from pathlib import Path

    from ._bridge import upstream_args
    from ._install import HOSTS, InstallError, install, install_url, parse_env

    prog = f"jsonrpc-mcp install {args.client}"
    if (args.file is None) == (args.url is None):
        print(f"{prog}: give a server FILE, or --url URL (one of them)", file=sys.stderr)
        return 2
    if args.file is not None and upstream_args(args):
        print(f"{prog}: --header, --auth, --upstream-mode ... go with --url", file=sys.stderr)
        return 2
    config_path = Path(args.config).expanduser() if args.config else None
    options = {"name": args.name, "config_path": config_path, "dry_run": args.dry_run}
    try:
        env = parse_env(args.env or [])
        if args.url is not None:
            done = install_url(args.client, args.url, bridge_args=upstream_args(args), env=env, **options)
        else:
            done = install(args.client, args.file, env=env, **options)
    except InstallError as exc:
        print(f"{prog}: {exc}", file=sys.stderr)
        return 1
    except OSError as exc:
        print(f"{prog}: {exc.strerror or exc}: {exc.filename or ''}".rstrip(": "), file=sys.stderr)
        return 1
    if done.action == "dry-run":
        sys.stdout.write(done.text)
        print(f"{prog}: dry run: {done.path} would be written as above", file=sys.stderr)
    elif done.action == "unchanged":
        print(f"{prog}: {done.name!r} is already in {done.path} as is; nothing changed")
    else:
        kept = f" (the previous file is {done.backup})" if done.backup else ""
        title = HOSTS[args.client].title
        print(f"{prog}: {done.action} {done.name!r} in {done.path}{kept}; restart {title} to load it")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    plain = _plain_serve(sys.argv[1:] if argv is None else argv)
    if plain is not None:  # the common case, read without argparse (see the module docstring)
        _configure_logging(_default_log_level())
        server = _load_for_serving(*plain)
        if server is None:
            return 2
        server.run(max_line=MAX_LINE)
        return 0
    commands = _other_commands(sys.argv[1:] if argv is None else argv)
    if isinstance(commands, int):
        return commands
    parser = build_parser(commands)
    args = parser.parse_args(argv)
    _configure_logging(args.log_level)
    if args.command_name == "serve":
        return _serve(args)
    if args.command_name == "install":
        return _install(args)
    if args.command_name == "inspect":
        return _inspect(args)
    if args.command_name == "bridge":
        from ._bridge import BridgeError, run_bridge

        try:
            return run_bridge(args, show_authorization_url)
        except BridgeError as exc:
            print(f"jsonrpc-mcp bridge: {exc.message}", file=sys.stderr)
            return exc.status
    command = commands.get(args.command_name)
    if command is not None:
        assert not isinstance(command, str)  # _other_commands refused to run a broken one
        return command(args.rest, prog=f"jsonrpc-mcp {args.command_name}")
    import anyio

    try:
        return anyio.run(_call, args)
    except Exception as exc:
        print(f"jsonrpc-mcp call: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
