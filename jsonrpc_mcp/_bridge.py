"""``jsonrpc-mcp bridge``: serve an MCP server reached one way over another (a :class:`Proxy`).

* ``bridge URL``: a stdio server forwarding to the Streamable HTTP server at URL (or the legacy
  HTTP+SSE transport the client falls back to): what a stdio-only MCP client (Claude Desktop) needs
  to use a remote server. ``--header NAME:VALUE`` adds headers; ``--auth oauth`` authorizes with
  OAuth (the browser is opened once, tokens are kept in the user's token file).
* ``bridge --http [--port P] -- CMD...``: the reverse: the stdio server CMD served over Streamable
  HTTP, with the options and the bearer-token checks (``--auth-*``) of ``serve --http``.

Either side speaks either era: the downstream side is the server core (every revision on one
endpoint), the upstream side a client in ``--upstream-mode`` (``auto`` by default). In stdio mode
nothing but protocol reaches stdout; what the bridge has to say goes to stderr.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Callable

if TYPE_CHECKING:
    import argparse

__all__ = ["BridgeError", "add_upstream_options", "run_bridge", "upstream_args"]

PROG = "jsonrpc-mcp bridge"


def add_upstream_options(parser: argparse.ArgumentParser) -> None:
    """The options of the upstream connection (``bridge``, and the bridge entries ``install`` writes):
    ``--upstream-mode``, and the headers and ``--auth oauth`` options every HTTP client command
    takes (:mod:`jsonrpc_mcp._client_options`)."""
    from ._client_options import add_http_client_options
    from .revisions import MODERN_REVISIONS

    parser.add_argument(
        "--upstream-mode",
        choices=("auto", "legacy", *(r.version for r in MODERN_REVISIONS)),
        default="auto",
        help="how to connect upstream: auto (server/discover, falling back to initialize; the"
        " default), the handshake (legacy), or the stateless 2026-07-28 revision",
    )
    add_http_client_options(parser)


def upstream_args(options: argparse.Namespace) -> list[str]:
    """The command-line form of the upstream options given (for a bridge entry in a config)."""
    args: list[str] = []
    if options.upstream_mode != "auto":
        args += ["--upstream-mode", options.upstream_mode]
    for header in options.header:
        args += ["--header", header]
    if options.auth:
        args += ["--auth", options.auth]
    from ._client_options import OAUTH_OPTIONS

    for name, option in OAUTH_OPTIONS:
        value = getattr(options, name, None)
        if value is not None:
            args += [option, value]
    return args


class BridgeError(Exception):
    """Why the bridge cannot run, or stopped: one line, and the command's exit status."""

    def __init__(self, message: str, status: int) -> None:
        super().__init__(message)
        self.message, self.status = message, status


def _leaf(exc: BaseException) -> BaseException:
    """The one exception inside nested single-exception groups."""
    inner = getattr(exc, "exceptions", None)
    while isinstance(inner, tuple) and len(inner) == 1 and isinstance(inner[0], BaseException):
        exc = inner[0]
        inner = getattr(exc, "exceptions", None)
    return exc


def run_bridge(options: argparse.Namespace, show: Callable[[str], None]) -> int:
    """The ``bridge`` command: 0 when the downstream side closed. Raises :class:`BridgeError` with
    status 1 when the upstream failed, 2 for a usage error; ``show`` tells the user the
    authorization URL when no browser opens (the command layer prints)."""
    target = list(options.target)
    if target and target[0] == "--":
        target = target[1:]
    if not target:
        raise BridgeError("give the upstream server: an http(s):// URL, or a command after --", 2)
    if options.http and (options.workers != 1 or options.redis):
        raise BridgeError("--workers and --redis are not for a bridge (it holds one upstream connection)", 2)
    if not options.http and any(k.startswith("auth_") and v for k, v in vars(options).items()):
        raise BridgeError("--auth-* options need --http (stdio has no bearer tokens)", 2)
    from ._client_options import OptionsError, oauth_from_options, server_from_options

    try:
        upstream = server_from_options(options, target)
        auth = oauth_from_options(options, upstream, show=show)
    except OptionsError as exc:
        raise BridgeError(str(exc), 2) from None
    is_url = upstream.url is not None
    headers = upstream.headers
    from .proxy import Proxy

    if is_url:
        proxy = Proxy.http(
            target[0],
            mode=options.upstream_mode,
            headers=headers or None,
            auth=auth,
            name=f"bridge to {target[0]}",
        )
    else:
        proxy = Proxy.stdio(target, mode=options.upstream_mode, name=f"bridge to {target[0]}")
    if options.http:
        from .http._serve import serve_http

        return serve_http(proxy, options, target=target[0], target_args=target[1:])
    try:
        proxy.run(max_line=options.max_line)
    except KeyboardInterrupt:
        return 0
    except Exception as exc:
        leaf = _leaf(exc)
        raise BridgeError(f"the upstream server failed: {type(leaf).__name__}: {leaf}", 1) from None
    return 0
