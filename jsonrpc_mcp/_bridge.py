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

import sys
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import argparse

__all__ = ["add_upstream_options", "oauth", "parse_headers", "run_bridge", "upstream_args"]

PROG = "jsonrpc-mcp bridge"


def add_upstream_options(parser: argparse.ArgumentParser) -> None:
    """The options of the upstream connection (``bridge``, and the bridge entries ``install`` writes)."""
    from .revisions import MODERN_REVISIONS

    group = parser.add_argument_group("the upstream server")
    add = group.add_argument
    add(
        "--upstream-mode",
        choices=("auto", "legacy", *(r.version for r in MODERN_REVISIONS)),
        default="auto",
        help="how to connect upstream: auto (server/discover, falling back to initialize; the"
        " default), the handshake (legacy), or the stateless 2026-07-28 revision",
    )
    add("--header", action="append", default=[], metavar="'NAME: VALUE'", help="an HTTP header (repeatable)")
    add("--auth", choices=("oauth",), help="authorize with OAuth (see docs/auth.md)")
    add("--client-id", metavar="ID", help="OAuth: a pre-registered client id")
    add("--client-secret-file", metavar="PATH", help="OAuth: the file holding its secret")
    add("--scope", metavar="SCOPES", help="OAuth: the scopes to ask for (space-separated)")
    add("--client-metadata-url", metavar="URL", help="OAuth: a Client ID Metadata Document URL")
    add(
        "--grant",
        choices=("authorization_code", "client_credentials"),
        default="authorization_code",
        help="OAuth: the grant (client_credentials: machine to machine, no browser)",
    )


_OAUTH_OPTIONS = ("client_id", "client_secret_file", "scope", "client_metadata_url")


def upstream_args(options: argparse.Namespace) -> list[str]:
    """The command-line form of the upstream options given (for a bridge entry in a config)."""
    args: list[str] = []
    if options.upstream_mode != "auto":
        args += ["--upstream-mode", options.upstream_mode]
    for header in options.header:
        args += ["--header", header]
    if options.auth:
        args += ["--auth", options.auth]
    for name in _OAUTH_OPTIONS:
        value = getattr(options, name)
        if value is not None:
            args += [f"--{name.replace('_', '-')}", value]
    if options.grant != "authorization_code":
        args += ["--grant", options.grant]
    return args


def parse_headers(given: list[str]) -> dict[str, str]:
    """``NAME: VALUE`` (or ``NAME:VALUE``) strings to a mapping; ValueError names a malformed one."""
    headers: dict[str, str] = {}
    for item in given:
        name, sep, value = item.partition(":")
        if not sep or not name.strip() or any(c.isspace() for c in name.strip()):
            raise ValueError(f"--header {item!r}: expected 'NAME: VALUE'")
        headers[name.strip()] = value.strip()
    return headers


def oauth(options: argparse.Namespace) -> Any:
    """The :class:`jsonrpc_mcp.client.auth.OAuth` the options describe: tokens kept in the user's
    token file, the browser opened for the user (its step prints nothing; what the bridge says
    goes to stderr). ValueError for an inconsistent set of options."""
    from .client.auth import FileTokenStorage, LoopbackBrowser, OAuth

    secret = None
    if options.client_secret_file:
        with open(options.client_secret_file, encoding="utf-8") as handle:
            secret = handle.read().strip()
    if options.grant == "client_credentials" and not (options.client_id and secret):
        raise ValueError("--grant client_credentials needs --client-id and --client-secret-file")
    return OAuth(
        client_id=options.client_id,
        client_secret=secret,
        scope=options.scope,
        client_metadata_url=options.client_metadata_url,
        grant=options.grant,
        storage=FileTokenStorage(),
        agent=LoopbackBrowser(),
    )


def _fail(message: str, status: int) -> int:
    print(f"{PROG}: {message}", file=sys.stderr)
    return status


def _leaf(exc: BaseException) -> BaseException:
    """The one exception inside nested single-exception groups."""
    inner = getattr(exc, "exceptions", None)
    while isinstance(inner, tuple) and len(inner) == 1 and isinstance(inner[0], BaseException):
        exc = inner[0]
        inner = getattr(exc, "exceptions", None)
    return exc


def run_bridge(options: argparse.Namespace) -> int:
    """The ``bridge`` command: 0 when the downstream side closed, 1 when the upstream failed, 2 for
    a usage error (one line on stderr)."""
    target = list(options.target)
    if target and target[0] == "--":
        target = target[1:]
    if not target:
        return _fail("give the upstream server: an http(s):// URL, or a command after --", 2)
    is_url = len(target) == 1 and target[0].startswith(("http://", "https://"))
    if not is_url and (options.header or options.auth):
        return _fail("--header and --auth are for an http(s):// upstream", 2)
    if any(getattr(options, name) for name in _OAUTH_OPTIONS) and options.auth != "oauth":
        return _fail("--client-id, --scope, ... go with --auth oauth", 2)
    if options.http and (options.workers != 1 or options.redis):
        return _fail("--workers and --redis are not for a bridge (it holds one upstream connection)", 2)
    if not options.http and any(k.startswith("auth_") and v for k, v in vars(options).items()):
        return _fail("--auth-* options need --http (stdio has no bearer tokens)", 2)
    try:
        headers = parse_headers(options.header)
        auth = oauth(options) if options.auth == "oauth" else None
    except (ValueError, OSError, ImportError) as exc:
        return _fail(str(exc), 2)
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
        return _fail(f"the upstream server failed: {type(leaf).__name__}: {leaf}", 1)
    return 0
