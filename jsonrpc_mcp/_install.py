"""``jsonrpc-mcp install HOST FILE`` (or ``--url URL``): add a server to an MCP host's configuration.

Each host (:data:`HOSTS`) reads a JSON file and starts each entry of one of its objects as a stdio
server::

    {"mcpServers": {"NAME": {"command": "...", "args": ["..."], "env": {"KEY": "VALUE"}}}}

- ``claude-desktop``: ``claude_desktop_config.json`` (where: :func:`claude_desktop_config`),
  ``mcpServers``;
- ``cursor``: ``~/.cursor/mcp.json`` (every project; a project's own is ``.cursor/mcp.json``),
  ``mcpServers``;
- ``vscode``: the workspace's ``.vscode/mcp.json``, ``servers``, each entry with ``"type": "stdio"``;
- ``claude-code``: the project's ``.mcp.json`` (shared with whoever checks the project out),
  ``mcpServers``, each entry with ``"type": "stdio"``.

``--config PATH`` names another file of the same shape (for example a user-profile ``mcp.json``).

The entry written runs this very Python (``sys.executable``, so the environment that has
jsonrpc-mcp installed) with ``-m jsonrpc_mcp serve /absolute/FILE[:ATTR]``. Before anything is
written, FILE is loaded in a child process (its own code runs there, with the ``--env`` values) to
check that it holds a server and to learn its name (the default ``--name``).

A remote server (``--url URL``) gets an entry that runs ``-m jsonrpc_mcp bridge URL`` with the
upstream options given (``--header``, ``--auth oauth``, ...): Claude Desktop speaks stdio to the
bridge, which speaks HTTP to the server. Its default name is the URL's host; nothing is probed (the
server may want authorization first).

Theory of operation: the existing file is read and must be a JSON object (else nothing is written:
a file the user can still repair by hand is better than one replaced); the entry is merged into its
``mcpServers``, every other key and server kept as they were. When that changes the file, the file as
it was is first copied to ``PATH.bak`` (so the last change can be undone), then the new content is
written to a temporary file in the same directory, flushed to disk and renamed over the original
(atomic: Claude Desktop never reads half a file).
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from ._serve_options import HOST_NAMES

__all__ = [
    "HOSTS",
    "Host",
    "InstallError",
    "Installed",
    "bridge_entry",
    "claude_desktop_config",
    "install",
    "install_claude_desktop",
    "install_claude_desktop_url",
    "install_url",
    "merged_config",
    "parse_env",
    "server_entry",
]

CONFIG_NAME = "claude_desktop_config.json"


@dataclass(frozen=True)
class Host:
    """An MCP host whose configuration ``install`` writes."""

    title: str  # as people call it
    config: Callable[[], Path]  # where its file is, by default
    key: str = "mcpServers"  # the object whose entries are servers
    typed: bool = False  # entries say "type": "stdio"
    config_hint: str = ""  # where the file is by default, for --help


class InstallError(Exception):
    """The server cannot be installed (the message says why; nothing was written)."""


def claude_desktop_config(platform: str | None = None, environ: Mapping[str, str] | None = None) -> Path:
    """Where Claude Desktop keeps its configuration on ``platform`` (default: this one).

    macOS: ``~/Library/Application Support/Claude``; Windows: ``%APPDATA%\\Claude``; elsewhere
    (Linux builds): ``$XDG_CONFIG_HOME/Claude``, ``~/.config/Claude`` when it is unset.
    """
    platform = sys.platform if platform is None else platform
    environ = os.environ if environ is None else environ
    home = Path(environ.get("HOME") or environ.get("USERPROFILE") or Path.home())
    if platform == "darwin":
        return home / "Library" / "Application Support" / "Claude" / CONFIG_NAME
    if platform == "win32":
        appdata = environ.get("APPDATA")
        base = Path(appdata) if appdata else home / "AppData" / "Roaming"
        return base / "Claude" / CONFIG_NAME
    xdg = environ.get("XDG_CONFIG_HOME")
    return (Path(xdg) if xdg else home / ".config") / "Claude" / CONFIG_NAME


def _absolute_target(target: str) -> tuple[Path, str]:
    """(the file, the target with its path made absolute): ``path.py[:ATTR]``."""
    location, _, attr = target.rpartition(":")
    if not location or not attr.isidentifier():
        location, attr = target, ""
    path = Path(location).expanduser()
    if not path.is_file():
        raise InstallError(f"no such file: {location}" if not path.exists() else f"{location} is not a file")
    if path.suffix != ".py":
        raise InstallError(f"{location} is not a Python file (.py)")
    absolute = path.resolve()
    return absolute, f"{absolute}:{attr}" if attr else str(absolute)


_PROBE = r"""
import json, os, sys
from jsonrpc_mcp._targets import TargetError, load_target
from jsonrpc_mcp.transports.stdio import protected_stdout
with protected_stdout() as fd:  # what the file prints goes to stderr
    try:
        answer = {"name": load_target(sys.argv[1]).name}
    except TargetError as exc:
        answer = {"error": str(exc)}
    os.write(fd, b"\n" + json.dumps(answer).encode() + b"\n")
"""


def _probe(target: str, env: Mapping[str, str], timeout: float) -> str:
    """The name of the server ``target`` holds, learnt by loading it in a child process."""
    try:
        done = subprocess.run(
            [sys.executable, "-c", _PROBE, target],
            env={**os.environ, **env},
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=timeout,
        )
    except subprocess.TimeoutExpired:
        raise InstallError(f"loading {target} took more than {timeout:g} s") from None
    answer: Any = None
    lines = done.stdout.decode("utf-8", "replace").strip().splitlines()
    if lines:
        try:
            answer = json.loads(lines[-1])
        except ValueError:
            answer = None
    if isinstance(answer, dict) and isinstance(answer.get("name"), str):
        return str(answer["name"])
    if isinstance(answer, dict) and isinstance(answer.get("error"), str):
        raise InstallError(answer["error"])
    said = [line for line in done.stderr.decode("utf-8", "replace").splitlines() if line.strip()]
    raise InstallError(f"loading {target} failed" + (f": {said[-1].strip()}" if said else ""))


def server_entry(target: str, env: Mapping[str, str]) -> dict[str, Any]:
    """The ``mcpServers`` value that serves ``target`` (already absolute) with this Python."""
    entry: dict[str, Any] = {"command": sys.executable, "args": ["-m", "jsonrpc_mcp", "serve", target]}
    if env:
        entry["env"] = dict(env)
    return entry


def bridge_entry(url: str, bridge_args: Sequence[str], env: Mapping[str, str]) -> dict[str, Any]:
    """The ``mcpServers`` value that bridges to the remote server at ``url`` with this Python."""
    entry: dict[str, Any] = {
        "command": sys.executable,
        "args": ["-m", "jsonrpc_mcp", "bridge", url, *bridge_args],
    }
    if env:
        entry["env"] = dict(env)
    return entry


def _read_config(path: Path, key: str = "mcpServers") -> dict[str, Any]:
    if not path.exists():
        return {}
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise InstallError(f"cannot read {path}: {exc}") from None
    if not text.strip():
        return {}
    try:
        config = json.loads(text)
    except ValueError as exc:
        raise InstallError(f"{path} is not valid JSON ({exc}); fix or move it, nothing was changed") from None
    if not isinstance(config, dict):
        raise InstallError(f"{path} holds a JSON {type(config).__name__}, not an object; nothing was changed")
    if not isinstance(config.get(key, {}), dict):
        raise InstallError(f"{path}: its {key!r} is not an object; nothing was changed")
    return config


def merged_config(
    config: dict[str, Any], name: str, entry: dict[str, Any], key: str = "mcpServers"
) -> dict[str, Any]:
    """``config`` with ``config[key][name]`` set to ``entry``; every other key and server kept, in order."""
    servers = dict(config.get(key, {}))
    servers[name] = entry
    return {**config, key: servers}


def _write_atomically(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, temporary = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            out.write(text)
            out.flush()
            os.fsync(out.fileno())
        if path.exists():
            shutil.copymode(path, temporary)
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise


def parse_env(pairs: Sequence[str]) -> dict[str, str]:
    """``KEY=VALUE`` strings to a mapping (a malformed one is an :class:`InstallError`)."""
    env: dict[str, str] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key or not key.replace("_", "a").isalnum():
            raise InstallError(f"--env {pair!r}: expected KEY=VALUE (KEY of letters, digits, _)")
        env[key] = value
    return env


@dataclass(frozen=True)
class Installed:
    """What :func:`install_claude_desktop` did."""

    path: Path  # the configuration file
    name: str  # the server's key in mcpServers
    action: str  # "added", "replaced", "unchanged", or "dry-run"
    text: str  # the configuration as written (or as it would be, for a dry run)
    backup: Path | None = None  # where the file as it was was copied, if it was changed


def _cwd(*parts: str) -> Callable[[], Path]:
    return lambda: Path.cwd().joinpath(*parts)


def _home(*parts: str) -> Callable[[], Path]:
    return lambda: Path.home().joinpath(*parts)


_CONFIGS: dict[str, tuple[Callable[[], Path], bool]] = {  # where each file is, whether entries are typed
    "claude-desktop": (claude_desktop_config, False),
    "cursor": (_home(".cursor", "mcp.json"), False),
    "vscode": (_cwd(".vscode", "mcp.json"), True),
    "claude-code": (_cwd(".mcp.json"), True),
}
HOSTS: dict[str, Host] = {
    name: Host(title, _CONFIGS[name][0], key=key, typed=_CONFIGS[name][1], config_hint=hint)
    for name, (title, key, hint) in HOST_NAMES.items()
}


def _host(name: str) -> Host:
    try:
        return HOSTS[name]
    except KeyError:
        raise InstallError(f"unknown host {name!r} (one of: {', '.join(HOSTS)})") from None


def _typed(host: Host, entry: dict[str, Any]) -> dict[str, Any]:
    return {"type": "stdio", **entry} if host.typed else entry


def install(
    host: str,
    target: str,
    *,
    name: str | None = None,
    env: Mapping[str, str] | None = None,
    config_path: Path | None = None,
    dry_run: bool = False,
    probe_timeout: float = 60.0,
) -> Installed:
    """Add (or replace) the entry serving ``target`` (``path.py[:ATTR]``) in ``host``'s configuration
    (``config_path``, default the host's; see the module docs)."""
    chosen = _host(host)
    env = dict(env or {})
    _, absolute = _absolute_target(target)
    path = config_path if config_path is not None else chosen.config()
    config = _read_config(path, chosen.key)  # refused before anything runs: the config may be the problem
    server_name = _probe(absolute, env, probe_timeout)
    name = name if name is not None else server_name
    return _install_entry(
        path, config, name, _typed(chosen, server_entry(absolute, env)), dry_run, chosen.key
    )


def install_url(
    host: str,
    url: str,
    *,
    name: str | None = None,
    bridge_args: Sequence[str] = (),
    env: Mapping[str, str] | None = None,
    config_path: Path | None = None,
    dry_run: bool = False,
) -> Installed:
    """Add (or replace) the entry that bridges to the remote server at ``url`` (``jsonrpc-mcp
    bridge URL BRIDGE_ARGS...``) in ``host``'s configuration."""
    chosen = _host(host)
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise InstallError(f"--url {url!r}: expected an http:// or https:// URL")
    path = config_path if config_path is not None else chosen.config()
    config = _read_config(path, chosen.key)
    name = name if name is not None else parts.hostname
    entry = _typed(chosen, bridge_entry(url, bridge_args, dict(env or {})))
    return _install_entry(path, config, name, entry, dry_run, chosen.key)


def install_claude_desktop(target: str, **options: Any) -> Installed:
    """:func:`install` into Claude Desktop's configuration."""
    return install("claude-desktop", target, **options)


def install_claude_desktop_url(url: str, **options: Any) -> Installed:
    """:func:`install_url` into Claude Desktop's configuration."""
    return install_url("claude-desktop", url, **options)


def _install_entry(
    path: Path, config: dict[str, Any], name: str, entry: dict[str, Any], dry_run: bool, key: str
) -> Installed:
    """Merge ``entry`` under ``name`` into ``config[key]`` and write it to ``path`` (see the module docs)."""
    if not name.strip():
        raise InstallError("the server's name is empty: give one with --name")
    new = merged_config(config, name, entry, key)
    text = json.dumps(new, indent=2, ensure_ascii=False) + "\n"
    if dry_run:
        return Installed(path, name, "dry-run", text)
    before = config.get(key, {}).get(name)
    if before == entry:
        return Installed(path, name, "unchanged", text)
    backup = None
    if path.exists():
        backup = path.with_name(path.name + ".bak")
        shutil.copy2(path, backup)
    _write_atomically(path, text)
    return Installed(path, name, "replaced" if before is not None else "added", text, backup)
