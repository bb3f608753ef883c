"""What the commands that connect to a server share: how the server is named (a URL, a command, or
an entry of an ``mcpServers`` file) and how HTTP requests are authorized (``--header``, ``--auth
oauth`` and its options).

Used by ``call`` and ``inspect`` (:mod:`jsonrpc_mcp.cli`) and by the harness's ``trace`` and
``conformance``. Nothing here prints: the commands give :func:`oauth_from_options` the ``show``
that tells the user the authorization URL (:func:`jsonrpc_mcp.cli.show_authorization_url`).
Secrets never come from the command line, where ``ps`` and shell histories show them: a client
secret is read from ``--client-secret-file``, a private key from ``--private-key-file``. A usage
error is an :class:`OptionsError` of one line; the commands exit 2 with it.

Kept free of imports beyond the standard library at module level: the OAuth client is imported
only when ``--auth oauth`` is given.
"""

from __future__ import annotations

import json
import os
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import argparse

    from .client.auth import OAuth
    from .transports.http._authz import AuthorizationError, HttpAuth

__all__ = [
    "ConfigError",
    "OptionsError",
    "ServerEntry",
    "add_config_options",
    "add_http_client_options",
    "authorization_failure",
    "authorize_upfront",
    "check_client_options",
    "describe_authorization_error",
    "load_server_entry",
    "oauth_from_options",
    "parse_headers",
    "server_from_options",
    "OAUTH_OPTIONS",
    "wants_hint",
]

GRANTS = ("authorization_code", "client_credentials")
# the options that mean something only with --auth oauth, as (attribute, option)
OAUTH_OPTIONS = (
    ("client_id", "--client-id"),
    ("client_secret_file", "--client-secret-file"),
    ("private_key_file", "--private-key-file"),
    ("scope", "--scope"),
    ("client_metadata_url", "--client-metadata-url"),
    ("grant", "--grant"),
    ("token_file", "--token-file"),
)
_TOKEN_HINT = "log in with --auth oauth, or send a token with --header 'Authorization: Bearer ...'"


class OptionsError(Exception):
    """The options cannot work together, or a file they name cannot be read: a usage error."""


class ConfigError(OptionsError):
    """An ``mcpServers`` file that cannot be read, or has no such server."""


# -- argparse -------------------------------------------------------------------------------------
def add_http_client_options(parser: argparse.ArgumentParser) -> None:
    """``--header`` and the ``--auth oauth`` options (for servers reached over HTTP)."""
    group = parser.add_argument_group("HTTP servers: headers and authorization (see docs/auth.md)")
    add = group.add_argument
    add("--header", action="append", default=[], metavar="'NAME: VALUE'", help="an HTTP header (repeatable)")
    add("--auth", choices=["oauth"], help="oauth: run the MCP authorization flow when the server asks")
    add(
        "--client-id",
        metavar="ID",
        help="a pre-registered client id (else registration or --client-metadata-url)",
    )
    add("--client-secret-file", metavar="FILE", help="the client secret, read from this file")
    add("--private-key-file", metavar="PEM", help="a private key for private_key_jwt client authentication")
    add("--scope", metavar="'A B'", help="scopes to ask for besides the server's")
    add("--client-metadata-url", metavar="URL", help="a Client ID Metadata Document URL to use as client id")
    add(
        "--grant",
        choices=GRANTS,
        help="authorization_code (a person, in the browser; the default) or client_credentials"
        " (machine to machine)",
    )
    add(
        "--token-file",
        metavar="FILE",
        help="where tokens are kept (default: $JSONRPC_MCP_TOKENS, else jsonrpc-mcp/tokens.json in"
        " the user's config folder)",
    )


def add_config_options(parser: argparse.ArgumentParser) -> None:
    """``--config FILE --server NAME``: the server an ``mcpServers`` file describes."""
    group = parser.add_argument_group("a server from an MCP client's configuration")
    group.add_argument(
        "--config", metavar="FILE", help="an mcpServers JSON file (Claude Desktop / Cursor format)"
    )
    group.add_argument(
        "--server", metavar="NAME", help="the server's name in --config (optional when it has one)"
    )


# -- naming the server ----------------------------------------------------------------------------
@dataclass(frozen=True)
class ServerEntry:
    """A server to connect to: a URL (with headers) or a command (with env and cwd)."""

    name: str | None = None
    url: str | None = None
    headers: dict[str, str] = field(default_factory=dict)
    command: tuple[str, ...] = ()
    env: dict[str, str] | None = None
    cwd: str | None = None

    @property
    def is_http(self) -> bool:
        return self.url is not None

    @property
    def argv(self) -> list[str]:
        """``[url]``, or the command."""
        return [self.url] if self.url is not None else list(self.command)

    def process_env(self) -> dict[str, str] | None:
        """The spawned command's environment: ours with the entry's ``env`` on top (None: ours)."""
        return {**os.environ, **self.env} if self.env is not None else None


def load_server_entry(path: str | os.PathLike[str], name: str | None) -> ServerEntry:
    """Server ``name`` of an ``mcpServers`` file (Claude Desktop, Cursor): ``{"command", "args",
    "env", "cwd"}`` for a stdio server, ``{"url", "headers"}`` for a remote one. ``name`` may be
    None when the file has exactly one server. :class:`ConfigError` says what is wrong."""
    try:
        document = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ConfigError(f"cannot read {path}: {exc}") from None
    servers = document.get("mcpServers") if isinstance(document, dict) else None
    if not isinstance(servers, dict) or not servers:
        raise ConfigError(f"{path} has no mcpServers")
    if name is None:
        if len(servers) != 1:
            raise ConfigError(f"{path} names several servers; pick one with --server ({', '.join(servers)})")
        name = next(iter(servers))
    entry = servers.get(name)
    if not isinstance(entry, dict):
        raise ConfigError(f"{path} has no server {name!r} (it has {', '.join(servers)})")
    if "command" not in entry and "url" in entry:
        headers = entry.get("headers", {})
        if not isinstance(entry["url"], str) or not isinstance(headers, dict):
            raise ConfigError(f"server {name!r}: url must be a string and headers an object")
        return ServerEntry(name, url=entry["url"], headers={str(k): str(v) for k, v in headers.items()})
    if "command" not in entry:
        raise ConfigError(f"server {name!r} has neither a command nor a url")
    args, env, cwd = entry.get("args", []), entry.get("env"), entry.get("cwd")
    if not isinstance(args, list) or (env is not None and not isinstance(env, dict)):
        raise ConfigError(f"server {name!r}: args must be a list and env an object")
    if cwd is not None and not isinstance(cwd, str):
        raise ConfigError(f"server {name!r}: cwd must be a string")
    return ServerEntry(
        name,
        command=(str(entry["command"]), *map(str, args)),
        env={str(k): str(v) for k, v in env.items()} if env is not None else None,
        cwd=cwd,
    )


def parse_headers(lines: Sequence[str]) -> dict[str, str]:
    """``NAME: VALUE`` (or ``NAME:VALUE``) strings to a mapping; :class:`OptionsError` for one
    without a colon or a name."""
    headers: dict[str, str] = {}
    for line in lines:
        name, sep, value = line.partition(":")
        if not sep or not name.strip() or any(c.isspace() for c in name.strip()):
            raise OptionsError(f"--header {line!r}: expected 'Name: value'")
        headers[name.strip()] = value.strip()
    return headers


def _with_headers(base: Mapping[str, str], extra: Mapping[str, str]) -> dict[str, str]:
    """``base`` with ``extra`` on top (header names compared case-insensitively)."""
    names = {name.lower() for name in extra}
    return {**{k: v for k, v in base.items() if k.lower() not in names}, **extra}


def server_from_options(args: argparse.Namespace, positional: Sequence[str]) -> ServerEntry:
    """The server the command line names: ``--config FILE [--server NAME]``, or ``positional`` (one
    ``http(s)://`` URL, or a command). ``--header`` values go on top of the entry's headers."""
    config, name = getattr(args, "config", None), getattr(args, "server", None)
    if config is not None:
        if positional:
            raise OptionsError("name the server either with --config or on the command line, not both")
        entry = load_server_entry(config, name)
    elif name is not None:
        raise OptionsError("--server needs --config (the file that names it)")
    elif not positional:
        raise OptionsError("name the server: its http(s):// URL, its command after --, or --config FILE")
    elif len(positional) == 1 and positional[0].startswith(("http://", "https://")):
        entry = ServerEntry(url=positional[0])
    else:
        entry = ServerEntry(command=tuple(positional))
    given = parse_headers(getattr(args, "header", None) or [])
    if given and not entry.is_http:
        raise OptionsError("--header needs an http(s):// URL")
    return replace(entry, headers=_with_headers(entry.headers, given)) if given else entry


# -- authorization --------------------------------------------------------------------------------
def check_client_options(
    args: argparse.Namespace, *, http: bool, headers: Mapping[str, str] | None = None
) -> None:
    """:class:`OptionsError` when the authorization options cannot work together, or with a server
    that is not reached over HTTP (``http`` False); ``headers`` are those the requests will carry."""
    given = [option for attr, option in OAUTH_OPTIONS if getattr(args, attr, None) is not None]
    if getattr(args, "auth", None) is None:
        if given:
            raise OptionsError(f"{given[0]} needs --auth oauth")
        return
    if not http:
        raise OptionsError(
            "--auth needs an http(s):// server (a stdio server takes credentials from its env)"
        )
    if any(name.lower() == "authorization" for name in headers or {}):
        raise OptionsError("an Authorization header and --auth oauth exclude each other: give one")
    for attr, option in (
        ("client_secret_file", "--client-secret-file"),
        ("private_key_file", "--private-key-file"),
    ):
        if getattr(args, attr) is not None and args.client_id is None:
            raise OptionsError(f"{option} needs --client-id")
    if args.client_metadata_url is not None and args.client_id is not None:
        raise OptionsError("--client-metadata-url is a client id itself: give it or --client-id, not both")
    if args.grant == "client_credentials":
        if args.client_id is None:
            raise OptionsError("--grant client_credentials needs --client-id")
        if args.client_secret_file is None and args.private_key_file is None:
            raise OptionsError("--grant client_credentials needs --client-secret-file or --private-key-file")


def _read_secret(path: str, option: str) -> str:
    try:
        text = Path(path).read_text(encoding="utf-8").strip()
    except (OSError, UnicodeDecodeError) as exc:
        why = exc.strerror if isinstance(exc, OSError) and exc.strerror else type(exc).__name__
        raise OptionsError(f"cannot read {option} {path}: {why}") from None
    if not text:
        raise OptionsError(f"{option} {path} is empty")
    return text


def _read_private_key(path: str) -> str:
    pem = _read_secret(path, "--private-key-file")
    try:
        from cryptography.hazmat.primitives.serialization import load_pem_private_key
    except ImportError:
        raise OptionsError("--private-key-file needs PyJWT: pip install 'jsonrpc-mcp[jwt]'") from None
    try:
        load_pem_private_key(pem.encode("utf-8"), password=None)
    except (ValueError, TypeError):  # (the error text could quote the key: not shown)
        raise OptionsError(f"--private-key-file {path} is not an unencrypted PEM private key") from None
    return pem


def oauth_from_options(
    args: argparse.Namespace, server: ServerEntry, *, show: Callable[[str], None]
) -> OAuth | None:
    """The :class:`~jsonrpc_mcp.client.auth.OAuth` that ``--auth oauth`` and its options describe
    (None without ``--auth``), after :func:`check_client_options`. Tokens are kept in a
    :class:`~jsonrpc_mcp.client.auth.FileTokenStorage` (``--token-file``), so the browser step
    happens once; the browser is the user's (:class:`~jsonrpc_mcp.client.auth.LoopbackBrowser`),
    and ``show`` gives the user the URL when it could not be opened."""
    check_client_options(args, http=server.is_http, headers=server.headers)
    if getattr(args, "auth", None) is None:
        return None
    from .client.auth import FileTokenStorage, LoopbackBrowser, OAuth

    secret = (
        _read_secret(args.client_secret_file, "--client-secret-file") if args.client_secret_file else None
    )
    key = _read_private_key(args.private_key_file) if args.private_key_file else None
    try:
        return OAuth(
            client_id=args.client_id,
            client_secret=secret,
            scope=args.scope,
            client_metadata_url=args.client_metadata_url,
            grant=args.grant or "authorization_code",
            private_key=key,
            storage=FileTokenStorage(args.token_file),
            agent=LoopbackBrowser(show=show),
        )
    except ValueError as exc:
        raise OptionsError(str(exc)) from None


Probe = Callable[[str | None], Awaitable[tuple[int, str | None]]]


async def authorize_upfront(auth: HttpAuth, url: str, probe: Probe, *, rounds: int = 3) -> str | None:
    """Authorization for ``url`` before the real traffic starts (for the tools that speak HTTP
    themselves: the conformance harness, the trace proxy). ``probe(authorization)`` sends one
    harmless request carrying that ``Authorization`` value (None: none) and returns the status and
    ``WWW-Authenticate`` of its answer; a challenge runs ``auth``'s flow, and the probe is sent again.
    Returns the value the server accepted (None when it wants none); raises
    :class:`~jsonrpc_mcp.client.auth.AuthorizationError` when the challenge stands."""
    from .transports.http._authz import AuthorizationError, is_challenge

    status, challenge = 0, None
    for _ in range(rounds):
        sent = await auth.authorization(url)
        status, challenge = await probe(sent)
        if not is_challenge(status, challenge):
            if sent is not None and status < 400:
                auth.succeeded(url)
            return sent
        if not await auth.challenged(url, status, challenge, sent):
            break
    raise AuthorizationError.from_response(status, challenge)


def authorization_failure(exc: BaseException) -> AuthorizationError | None:
    """The :class:`~jsonrpc_mcp.client.auth.AuthorizationError` ``exc`` is, or holds (in an
    exception group, or as its cause), or None."""
    from .transports.http._authz import AuthorizationError

    seen: list[BaseException] = [exc]
    while seen:
        current = seen.pop()
        if isinstance(current, AuthorizationError):
            return current
        seen.extend(getattr(current, "exceptions", ()))
        if current.__cause__ is not None:
            seen.append(current.__cause__)
    return None


def describe_authorization_error(exc: AuthorizationError, where: str, *, hint: bool = False) -> str:
    """One line for the command's stderr: where, the HTTP status and what the server said (the
    library's messages carry no token or secret); ``hint``: how to give credentials."""
    text = " ".join(exc.message.split())
    if exc.error and exc.error not in text:
        text += f" ({exc.error})"
    if exc.status is None:  # the flow failed (at the authorization server, in the browser)
        return f"{where}: authorization failed: {text}"
    if hint:
        text += f" ({_TOKEN_HINT})"
    return f"{where} refused the request: {text}"


def wants_hint(args: argparse.Namespace, server: ServerEntry) -> bool:
    """No credentials were given: the error line says how to give them."""
    given = any(name.lower() == "authorization" for name in server.headers)
    return getattr(args, "auth", None) is None and not given
