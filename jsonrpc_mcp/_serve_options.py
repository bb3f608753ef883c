"""The options of ``jsonrpc-mcp serve``, as one parser: the command line reads them, and
``Server.run(transport="http")`` takes their defaults.

Its own module so that the server can use it without importing the command line.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # argparse is imported when a parser is built: `serve FILE` never needs it
    import argparse

__all__ = ["HOST_NAMES", "LOG_LEVELS", "MAX_LINE", "log_level", "serve_options"]

# ``install HOST``: each host's title, the object of its config file that lists servers, and where
# that file is by default (for --help). Here, not in _install.py, so that building the command
# line's parser does not import what installing needs (_install.HOSTS adds the rest).
HOST_NAMES = {
    "claude-desktop": ("Claude Desktop", "mcpServers", "Claude Desktop's for this OS"),
    "cursor": ("Cursor", "mcpServers", "~/.cursor/mcp.json"),
    "vscode": ("VS Code", "servers", ".vscode/mcp.json here"),
    "claude-code": ("Claude Code", "mcpServers", ".mcp.json here"),
}

LOG_LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL")


def log_level(value: str) -> str:
    """``--log-level``'s type: a level name, any case."""
    import argparse

    if value.upper() not in LOG_LEVELS:
        raise argparse.ArgumentTypeError(f"unknown level {value!r} (one of: {', '.join(LOG_LEVELS).lower()})")
    return value.lower()


MAX_LINE = 4 * 1024 * 1024  # stdio: the longest line read


def serve_options() -> argparse.ArgumentParser:
    """The options of ``serve``; they may stand before or after TARGET (``--`` ends them)."""
    import argparse

    parser = argparse.ArgumentParser(add_help=False, allow_abbrev=False)
    add = parser.add_argument
    add(
        "--http",
        action="store_true",
        help="serve Streamable HTTP (every revision on one endpoint), not stdio",
    )
    add("--host", default="127.0.0.1", help="--http: the address to bind (default 127.0.0.1)")
    add("--port", type=int, default=8000, help="--http: the port (default 8000; 0: any free one, printed)")
    add("--path", default="/mcp", help="--http: the MCP endpoint's path (default /mcp)")
    add("--stateless", action="store_true", help="--http: no sessions (each request stands alone)")
    add("--json-response", action="store_true", help="--http: answer POSTs with JSON, never SSE")
    add("--workers", type=int, default=1, help="--http: worker processes (with --stateless or --redis)")
    add("--session-timeout", type=float, default=1800.0, help="--http: idle seconds before a session ends")
    add("--max-sessions", type=int, default=10_000, help="--http: most live sessions (0: no limit)")
    add(
        "--max-requests-per-session",
        type=int,
        default=256,
        help="--http: POSTs of one session in flight at once, abandoned ones included (0: no limit)",
    )
    add("--body-timeout", type=float, default=30.0, help="--http: seconds to read a request body (0: none)")
    add("--ssl-certfile", help="--http over TLS: the certificate chain (PEM)")
    add("--ssl-keyfile", help="--http over TLS: the private key (PEM)")
    add("--log-format", choices=["text", "json"], default="text", help="json: one JSON object a line")
    add("--log-level", type=log_level, default=argparse.SUPPRESS, help="as before the command: the level")
    add(
        "--max-line",
        type=int,
        default=MAX_LINE,
        help="stdio: the longest line read, in bytes (default 4 MiB)",
    )
    from ._auth_options import add_auth_options

    add_auth_options(parser)  # --auth-*: bearer tokens (JWT/JWKS or introspection), --http only
    add("--redis", metavar="URL", help="--http: share sessions through Redis (redis://host:port/db)")
    add("--health-path", default="/healthz", help='--http: the liveness probe\'s path ("": none)')
    add("--ready-path", default="/readyz", help='--http: the readiness probe\'s path ("": none)')
    add(
        "--drain-delay", type=float, default=0.0, help="--http, on SIGTERM: seconds not ready before stopping"
    )
    add(
        "--drain-grace", type=float, default=5.0, help="--http, stopping: seconds in-flight requests may take"
    )
    add(
        "--loop",
        choices=["auto", "asyncio", "uvloop"],
        help="--http: the event loop (auto: uvloop if installed)",
    )
    add("--http-parser", choices=["auto", "h11", "httptools"], help="--http: the HTTP/1.1 parser")
    return parser
