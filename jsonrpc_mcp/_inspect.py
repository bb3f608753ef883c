"""``jsonrpc-mcp inspect TARGET``: everything a server offers, as text or as JSON.

TARGET is a serve target (``path/to/server.py[:ATTR]``, spawned as ``python -m jsonrpc_mcp serve``),
any other stdio command (after ``--``), or an ``http(s)://`` URL. The connection is opened as
``--mode`` says (the handshake, the stateless 2026-07-28 revision, or auto), then each list the
server's capabilities announce is read to its end (the client follows ``nextCursor``).

A failure is an :class:`InspectError` of one line, which the command prints on stderr:
:func:`describe_failure` turns what the transports raise (a refused connection, a command that
exits, an answer that is not MCP) into words.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Sequence
from typing import IO, TYPE_CHECKING, Any

from ._client_options import ServerEntry, authorization_failure, describe_authorization_error

if TYPE_CHECKING:
    from .client import Client
    from .transports.http._authz import HttpAuth

__all__ = ["InspectError", "collect", "describe_failure", "inspect_target", "render_text", "resolve_target"]


def resolve_target(command: Sequence[str]) -> tuple[str, list[str]]:
    """``("http", [url])``, or ``("stdio", argv)``: a lone serve target (an existing ``.py`` file,
    with or without ``:ATTR``) is spawned with this Python's ``-m jsonrpc_mcp serve``."""
    if len(command) == 1:
        only = command[0]
        if only.startswith(("http://", "https://")):
            return "http", [only]
        location, _, attr = only.rpartition(":")
        if not location or not attr.isidentifier():
            location = only
        if location.endswith(".py") and os.path.isfile(location):
            return "stdio", [sys.executable, "-m", "jsonrpc_mcp", "serve", only]
    return "stdio", list(command)


async def collect(client: Client) -> dict[str, Any]:
    """What the connected server offers: the lists its capabilities announce, each read to the end."""
    caps = client.server_capabilities
    report: dict[str, Any] = {
        "transport": client.transport,
        "protocolVersion": client.protocol_version,
        "era": "stateless" if client.is_modern else "handshake",
        "serverInfo": client.server_info,
        "instructions": client.instructions,
        "capabilities": caps,
    }
    if client.server_extensions:
        report["extensions"] = client.server_extensions
    if "tools" in caps:
        report["tools"] = await client.list_tools()
    if "resources" in caps:
        report["resources"] = await client.list_resources()
        report["resourceTemplates"] = await client.list_resource_templates()
    if "prompts" in caps:
        report["prompts"] = await client.list_prompts()
    if "tools" in caps:
        apps = await _apps(client, report["tools"])
        if apps:
            report["apps"] = apps
    return report


async def _apps(client: Client, tools: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """MCP Apps: each view a tool links to, the tools linked to it, and whether a host could render it."""
    from .apps._client import AppError
    from .apps._model import app_link
    from .jsonrpc.errors import JsonRpcError

    views: dict[str, dict[str, Any]] = {}
    for tool in tools:
        try:
            link = app_link(tool)
        except ValueError as exc:
            views.setdefault("(malformed)", {"uri": None, "tools": [], "problem": str(exc)})
            continue
        if link is None or link.resource_uri is None:
            continue
        view = views.setdefault(link.resource_uri, {"uri": link.resource_uri, "tools": []})
        view["tools"].append({"name": tool.get("name"), "visibility": list(link.visibility)})
    for view in views.values():
        if view["uri"] is None:
            continue
        try:
            read = await client.read_app(view["uri"])
        except (AppError, JsonRpcError) as exc:
            view["problem"] = str(exc)
        else:
            view["ui"] = read.ui
            view["size"] = len(read.html.encode())
    return list(views.values())


def _schema_lines(schema: Any, indent: str) -> list[str]:
    text = json.dumps(schema, indent=2, ensure_ascii=False)
    return [indent + line for line in text.splitlines()]


def _described(name: str, item: dict[str, Any]) -> str:
    title = item.get("title")
    description = (item.get("description") or "").strip()
    head = f"{name} ({title})" if isinstance(title, str) and title and title != name else name
    first = description.splitlines()[0] if description else ""
    return f"{head}: {first}" if first else head


def _capabilities_line(caps: dict[str, Any]) -> str:
    words = []
    for name, value in caps.items():
        flags = [k for k, v in value.items() if v is True] if isinstance(value, dict) else []
        words.append(f"{name} ({', '.join(flags)})" if flags else name)
    return ", ".join(words) or "(none)"


_BARE = {"type", "properties", "additionalProperties", "$schema"}  # an input schema taking nothing


def render_text(report: dict[str, Any]) -> str:
    """The report for a person: headings, one line per item, schemas as indented JSON."""
    info = report.get("serverInfo") or {}
    name = info.get("name", "(unnamed)")
    version = info.get("version")
    lines = [
        f"Server: {name}{' ' + str(version) if version else ''}",
        f"Protocol: {report['protocolVersion']} ({report['era']}, over {report['transport']})",
        f"Capabilities: {_capabilities_line(report.get('capabilities') or {})}",
    ]
    if report.get("extensions"):
        lines.append(f"Extensions: {', '.join(report['extensions'])}")
    if report.get("instructions"):
        lines.append("Instructions:")
        lines.extend("  " + line for line in str(report["instructions"]).splitlines())
    if "tools" in report:
        tools = report["tools"]
        lines += ["", f"Tools ({len(tools)}):"]
        for tool in tools:
            lines.append("  " + _described(tool.get("name", "?"), tool))
            schema = tool.get("inputSchema", {})
            if isinstance(schema, dict) and not schema.get("properties") and set(schema) <= _BARE:
                lines.append("    input: no arguments")
            else:
                lines.append("    input schema:")
                lines.extend(_schema_lines(schema, "      "))
            if "outputSchema" in tool:
                lines.append("    output schema:")
                lines.extend(_schema_lines(tool["outputSchema"], "      "))
            if tool.get("annotations"):
                lines.append(f"    annotations: {json.dumps(tool['annotations'], ensure_ascii=False)}")
    if "resources" in report:
        resources = report["resources"]
        lines += ["", f"Resources ({len(resources)}):"]
        for resource in resources:
            mime = resource.get("mimeType")
            lines.append(
                "  " + _described(resource.get("uri", "?"), resource) + (f" [{mime}]" if mime else "")
            )
        templates = report.get("resourceTemplates", [])
        lines += ["", f"Resource templates ({len(templates)}):"]
        for template in templates:
            mime = template.get("mimeType")
            described = _described(template.get("uriTemplate", "?"), template)
            lines.append("  " + described + (f" [{mime}]" if mime else ""))
    if "prompts" in report:
        prompts = report["prompts"]
        lines += ["", f"Prompts ({len(prompts)}):"]
        for prompt in prompts:
            lines.append("  " + _described(prompt.get("name", "?"), prompt))
            for argument in prompt.get("arguments") or []:
                required = " (required)" if argument.get("required") else ""
                description = argument.get("description")
                lines.append(
                    f"    - {argument.get('name', '?')}{required}{': ' + description if description else ''}"
                )
    if report.get("apps"):
        count = len(report["apps"])
        lines += ["", f"Apps ({count} {'view' if count == 1 else 'views'}):"]
        for view in report["apps"]:
            size = f" ({view['size']} bytes)" if "size" in view else ""
            lines.append(f"  {view['uri'] or '(no view)'}{size}")
            for tool in view["tools"]:
                lines.append(f"    tool {tool['name']} ({', '.join(tool['visibility'])})")
            if view.get("ui"):
                lines.append(f"    _meta.ui: {json.dumps(view['ui'], ensure_ascii=False)}")
            if view.get("problem"):
                lines.append(f"    NOT RENDERABLE: {view['problem']}")
    return "\n".join(lines) + "\n"


def describe_failure(exc: BaseException, kind: str, target: Sequence[str], *, hint: bool = True) -> str:
    """One line saying why inspecting ``target`` failed (no traceback, no internals); ``hint``: a
    server wanting authorization is told how to give credentials."""
    import anyio

    from .client import NoCommonVersion
    from .jsonrpc.errors import ConnectionClosed, JsonRpcError

    where = target[0] if kind == "http" else " ".join(target)
    failure = authorization_failure(exc)
    if failure is not None:
        return describe_authorization_error(failure, where, hint=hint)
    while len(getattr(exc, "exceptions", ())) == 1:  # an exception group of one: what it holds
        exc = exc.exceptions[0]  # type: ignore[attr-defined]
    if isinstance(exc, JsonRpcError):
        message = _first_line(exc.message)
        status = exc.data.get("httpStatus") if isinstance(exc.data, dict) else None
        if status in (401, 403):
            return f"{where} refused the request: {message} (a token: --header 'Authorization: Bearer ...')"
        if status is not None:  # the URL answered, but not as an MCP endpoint
            return f"{where} is not an MCP endpoint: {message}"
        if message.startswith(_TRANSPORT_ERROR):
            reason = message[len(_TRANSPORT_ERROR) :].strip().removeprefix("OSError: ")
            return f"cannot reach {where}: {reason}"
        return f"{where} answered with an error: {message} ({exc.code})"
    if isinstance(exc, ConnectionClosed):
        if kind == "stdio":
            return f"{where}: the command exited or closed its output before answering (is it an MCP server?)"
        return f"{where}: the connection closed before an answer"
    if isinstance(exc, NoCommonVersion):
        return f"{where}: {exc}"
    if isinstance(exc, TimeoutError):
        return f"{where} did not answer in time (is it an MCP server?)"
    if isinstance(exc, (anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError, EOFError)):
        if kind == "stdio":
            return f"{where}: the command exited or closed its output before answering (is it an MCP server?)"
        return f"{where}: the connection closed before an answer"
    if isinstance(exc, FileNotFoundError) and target[0].endswith(".py"):
        return f"no such file: {target[0]}"
    if isinstance(exc, FileNotFoundError):
        return f"{where}: no such command: {exc.filename or target[0]}"
    if isinstance(exc, PermissionError):
        return f"{where}: cannot run it: {exc.strerror or exc}"
    if kind == "http" and isinstance(exc, OSError):
        return f"cannot reach {where}: {exc.strerror or exc}"
    text = _first_line(str(exc))
    return f"{where}: {type(exc).__name__}: {text}" if text else f"{where}: {type(exc).__name__}"


_TRANSPORT_ERROR = "HTTP transport error:"


def _first_line(text: str, limit: int = 160) -> str:
    lines = [line.strip() for line in text.strip().splitlines()]
    line = lines[0] if lines else ""
    return line if len(line) <= limit else line[: limit - 1] + "…"


async def _inspect(
    kind: str,
    target: list[str],
    mode: str,
    timeout: float,
    stderr: IO[bytes],
    server: ServerEntry,
    auth: HttpAuth | None,
) -> dict[str, Any]:
    import anyio

    from .apps._model import CLIENT_SETTINGS, EXTENSION_ID
    from .client import Client

    options: dict[str, Any] = {"request_timeout": timeout, "mode": mode, "initialize": False}
    options["extensions"] = {EXTENSION_ID: CLIENT_SETTINGS}  # a host that shows apps sees them all
    if kind == "http":
        connect = Client.http(
            target[0], headers=server.headers, auth=auth, timeout=timeout, read_timeout=timeout, **options
        )
    else:
        env, cwd = server.process_env(), server.cwd
        connect = Client.stdio(target, env=env, cwd=cwd, stderr=stderr, **options)
    async with connect as client:
        with anyio.fail_after(timeout * 2 if mode == "auto" else timeout):  # auto: a probe, then initialize
            await client.connect()
        return await collect(client)


def _last_line(log: IO[bytes]) -> str:
    """The last non-empty line a spawned server wrote to stderr (often why it stopped)."""
    log.seek(0)
    lines = [line.strip() for line in log.read()[-4096:].decode("utf-8", "replace").splitlines()]
    lines = [line for line in lines if line]
    return lines[-1] if lines else ""


class InspectError(Exception):
    """Why there is no report: one line, and the exit status (1: the server failed, 2: usage)."""

    def __init__(self, message: str, status: int) -> None:
        super().__init__(message)
        self.status = status


def inspect_target(
    server: ServerEntry | Sequence[str],
    *,
    mode: str,
    timeout: float,
    auth: HttpAuth | None = None,
    hint: bool = True,
) -> dict[str, Any]:
    """What ``server`` offers (see :func:`collect`); :class:`InspectError` if none. ``server``: a
    :class:`~jsonrpc_mcp._client_options.ServerEntry` (a URL with headers, or a command with its
    environment), or a command line (``[URL]``, ``[FILE.py]``, a command). ``auth`` authorizes the
    HTTP requests; ``hint``: a refusal says how to give credentials."""
    import tempfile

    import anyio

    if not isinstance(server, ServerEntry):
        only = server[0] if len(server) == 1 else ""
        is_url = only.startswith(("http://", "https://"))
        server = ServerEntry(url=only) if is_url else ServerEntry(command=tuple(server))
    command = server.argv
    kind, target = resolve_target(command)
    with tempfile.TemporaryFile() as log:  # a spawned server's stderr: shown only when it failed
        try:
            report: dict[str, Any] = anyio.run(_inspect, kind, target, mode, timeout, log, server, auth)
        except Exception as exc:
            said = _last_line(log) if kind == "stdio" else ""
            why = describe_failure(exc, kind, command, hint=hint) + (f" (its stderr: {said})" if said else "")
            raise InspectError(why, 1) from None
    return report
