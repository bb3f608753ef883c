"""Annotating MCP traffic frame by frame: what each message is, and the rules it breaks.

Theory of operation
-------------------
:class:`Tracer` is sans-IO: the tap (stdio or HTTP) hands it every frame with its direction and
time, and gets back one :class:`Frame` per JSON-RPC message (a batch gives several). It follows the
conversation as a learner would read it:

- requests wait in ``pending`` under (sender, id) until the other side answers, so each answer is
  paired with its request (method, latency) and an answer to nothing is flagged (an answer to a
  notification, or a second answer);
- the revision in force comes from the conversation itself: the ``initialize`` result's
  ``protocolVersion`` (handshake era, for the rest of the session) or each request's
  ``_meta["io.modelcontextprotocol/protocolVersion"]`` (2026-07-28, per request);
- the rules checked are those a frame shows on its own or with that state: JSON-RPC 2.0 shape,
  error codes, who may send a method, whether the revision defines it, the handshake order, the
  2026-07-28 result rules;
- the fields and methods of the extensions in the catalogue (:data:`.catalogue.EXTENSIONS`: MCP Apps)
  are named in the frame's meaning (a capability declaring one, a tool linked to a view, a view read),
  their shapes checked against the extension's JSON Schema (vendored in ``spec/extensions/``);
  with ``schema_dir`` (the official schemas, ``<dir>/<revision>/
  schema.json``) each message is also validated against its definition.

A violation is reported, never fixed: the tap passes the bytes on unchanged.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from jsonrpc_mcp import wire
from jsonrpc_mcp.revisions import LATEST_HANDSHAKE, REVISIONS

from ..match import match
from .catalogue import APPS, CATALOGUE, defined_in, extension_method, spec_url

__all__ = ["CLIENT", "SERVER", "Frame", "Tracer", "extension_fields"]

CLIENT, SERVER = "client", "server"
_OTHER = {CLIENT: SERVER, SERVER: CLIENT}
_STANDARD_CODES = {-32700, -32600, -32601, -32602, -32603}
_SPEC_CODES = {
    wire.HEADER_MISMATCH,
    wire.MISSING_CLIENT_CAPABILITY,
    wire.UNSUPPORTED_PROTOCOL_VERSION,
}
_BEFORE_INITIALIZED = {wire.PING, wire.MESSAGE}  # what a server may send before `initialized`


@dataclass
class Frame:
    """One JSON-RPC message as the tracer understood it."""

    t: float
    sender: str  # CLIENT or SERVER
    kind: str  # request, notification, result, error or invalid
    message: Any
    method: str | None = None  # for an answer: the method of the request it answers
    id: Any = None
    latency: float | None = None  # seconds, for an answer
    revision: str | None = None
    meaning: str = ""
    spec: str | None = None
    violations: list[str] = field(default_factory=list)
    raw: str = ""

    def to_json(self) -> dict[str, Any]:
        """The frame as a JSON object (the tap's ``--format jsonl`` line)."""
        out: dict[str, Any] = {"t": round(self.t, 6), "from": self.sender, "kind": self.kind}
        for key in ("method", "id", "revision", "meaning", "spec"):
            value = getattr(self, key)
            if value is not None and value != "":
                out[key] = value
        if self.latency is not None:
            out["latencyMs"] = round(self.latency * 1000, 3)
        if self.violations:
            out["violations"] = self.violations
        out["message"] = self.message if self.kind != "invalid" else self.raw
        return out


def _id_key(value: Any) -> str:
    return json.dumps(value, sort_keys=True)


class Tracer:
    """Follows one conversation; :meth:`feed` annotates each frame."""

    def __init__(self, schema_dir: Path | None = None) -> None:
        self.pending: dict[tuple[str, str], tuple[str, float, Any]] = {}  # -> (method, time, params)
        self.tools: set[str] = set()  # the tool names the server listed
        self.revision: str | None = None  # the revision in force
        self.initialize_answered = False
        self.initialized = False
        self._schemas = _Schemas(schema_dir) if schema_dir is not None else None

    def feed(self, sender: str, line: bytes | str, t: float) -> list[Frame]:
        """The frames of one line (one message, or a batch) sent by ``sender`` at ``t`` seconds."""
        text = line.decode("utf-8", "replace") if isinstance(line, bytes) else line
        text = text.strip()
        try:
            message = json.loads(text)
        except ValueError as exc:
            frame = Frame(t, sender, "invalid", None, raw=text, meaning="not JSON")
            frame.violations.append(f"not JSON ({exc}): every frame must be one JSON-RPC message")
            return [frame]
        if isinstance(message, list):
            if not message:
                frame = Frame(t, sender, "invalid", message, raw=text, meaning="an empty batch")
                frame.violations.append("an empty batch is an invalid request")
                return [frame]
            frames = [self._one(sender, item, t, json.dumps(item)) for item in message]
            revision = REVISIONS.get(self.revision or "")
            if revision is not None and not revision.allows_batch:
                frames[0].violations.append(f"revision {revision.version} has no JSON-RPC batches")
            return frames
        return [self._one(sender, message, t, text)]

    # -- one message --------------------------------------------------------------------------------
    def _one(self, sender: str, message: Any, t: float, raw: str) -> Frame:
        if not isinstance(message, dict) or message.get("jsonrpc") != "2.0":
            frame = Frame(t, sender, "invalid", message, raw=raw, meaning="not a JSON-RPC 2.0 message")
            frame.violations.append('not a JSON-RPC 2.0 message (an object with "jsonrpc": "2.0")')
            return frame
        if "method" in message:
            return self._request(sender, message, t, raw)
        if "result" in message or "error" in message:
            return self._answer(sender, message, t, raw)
        frame = Frame(t, sender, "invalid", message, raw=raw, meaning="neither a request nor an answer")
        frame.violations.append("has no method, result or error")
        return frame

    def _request(self, sender: str, message: dict[str, Any], t: float, raw: str) -> Frame:
        method = message["method"]
        has_id = "id" in message
        frame = Frame(
            t, sender, "request" if has_id else "notification", message, raw=raw, id=message.get("id")
        )
        if not isinstance(method, str):
            frame.kind = "invalid"
            frame.violations.append("method must be a string")
            return frame
        frame.method = method
        params = message.get("params")
        if params is not None and not isinstance(params, (dict, list)):
            frame.violations.append("params must be an object or an array")
        meta = params.get("_meta") if isinstance(params, dict) else None
        envelope_version = meta.get(wire.PROTOCOL_VERSION) if isinstance(meta, dict) else None
        if isinstance(envelope_version, str):
            self.revision = envelope_version
        if method == wire.INITIALIZE and isinstance(params, dict):
            self.initialize_answered = self.initialized = False
        frame.revision = self.revision
        entry = CATALOGUE.get(method)
        version = self.revision or (
            params.get("protocolVersion") if method == wire.INITIALIZE and isinstance(params, dict) else None
        )
        frame.spec = spec_url(method, version if isinstance(version, str) else LATEST_HANDSHAKE.version)
        if entry is not None:
            frame.meaning = entry.meaning
            if entry.sender not in (sender, "either"):
                frame.violations.append(f"{method} is sent by the {entry.sender}, not by the {sender}")
            if has_id != (entry.kind == "request"):
                frame.violations.append(
                    f"{method} is a {entry.kind}: it {'needs' if entry.kind == 'request' else 'has no'} id"
                )
        elif (found := extension_method(method)) is not None:
            extension, defined = found
            frame.meaning = (
                f"{extension.name}, {extension.id}: {defined.meaning} (from the {defined.sender} to the "
                f"{defined.receiver}"
                + ("" if extension.on_the_wire else ", over postMessage: not a message of the MCP connection")
                + ")"
            )
            frame.spec = extension.spec
        else:
            frame.meaning = "a method this project's catalogue does not know (an extension's?)"
        self._extensions(frame, method, params, request=True)
        revision = REVISIONS.get(self.revision or "")
        if revision is not None and entry is not None and not defined_in(method, revision):
            frame.violations.append(f"revision {revision.version} has no {method}")
        if revision is not None and not revision.has_handshake and sender == SERVER and has_id:
            frame.violations.append(f"revision {revision.version} has no server-to-client requests")
        self._order(frame, sender, method)
        if has_id:
            request_id = message["id"]
            if request_id is None or isinstance(request_id, (bool, float, dict, list)):
                frame.violations.append("a request id is a string or an integer")
            else:
                key = (sender, _id_key(request_id))
                if key in self.pending:
                    frame.violations.append(f"reuses id {request_id!r} of a request still unanswered")
                self.pending[key] = (method, t, params)
        if method == wire.INITIALIZED:
            self.initialized = True
        if self._schemas is not None:
            frame.violations += self._schemas.check_message(message, self.revision)
        return frame

    def _order(self, frame: Frame, sender: str, method: str) -> None:
        """The handshake order: nothing but pings before initialize is answered, and the server
        sends only pings and logs before the client's ``initialized``."""
        revision = REVISIONS.get(self.revision or "")
        if revision is not None and not revision.has_handshake:
            return
        if method in (wire.INITIALIZE, wire.PING, wire.CANCELLED, wire.PROGRESS, wire.DISCOVER):
            return
        if sender == CLIENT and not self.initialize_answered and frame.kind == "request":
            frame.violations.append(
                "the client SHOULD NOT send requests other than ping before initialize is answered"
            )
        if (
            sender == SERVER
            and self.initialize_answered
            and not self.initialized
            and method not in _BEFORE_INITIALIZED
        ):
            frame.violations.append(
                "the server SHOULD NOT send this before the client's notifications/initialized"
            )

    def _answer(self, sender: str, message: dict[str, Any], t: float, raw: str) -> Frame:
        is_error = "error" in message
        frame = Frame(t, sender, "error" if is_error else "result", message, raw=raw, id=message.get("id"))
        if "result" in message and "error" in message:
            frame.violations.append("has both result and error")
        asked = self.pending.pop((_OTHER[sender], _id_key(message.get("id"))), None)
        if asked is None:
            if not (is_error and message.get("id") is None):
                frame.violations.append(
                    f"answers no pending request of the {_OTHER[sender]} (id {message.get('id')!r}): "
                    "an answer to a notification, an unknown id, or a second answer"
                )
        else:
            frame.method, started, _ = asked
            frame.latency = t - started
        frame.revision = self.revision
        if frame.method is not None:
            frame.spec = spec_url(frame.method, self.revision or LATEST_HANDSHAKE.version)
            entry = CATALOGUE.get(frame.method)
            frame.meaning = entry.answer if entry is not None else ""
        if is_error:
            self._error(frame, message["error"])
            if asked is not None:
                self._plane(frame, message["error"], asked[2])
        else:
            self._result(frame, message["result"])
        if self._schemas is not None and frame.method is not None:
            frame.violations += self._schemas.check_answer(frame.method, message, self.revision)
        return frame

    def _error(self, frame: Frame, error: Any) -> None:
        if not isinstance(error, dict) or not isinstance(error.get("message"), str):
            frame.violations.append("an error object has an integer code and a string message")
            return
        code = error.get("code")
        if not isinstance(code, int) or isinstance(code, bool):
            frame.violations.append("an error code is an integer")
            return
        frame.meaning = f"error {code}: {error['message']}"
        if code == 0:
            frame.violations.append("error code 0 means nothing: use a JSON-RPC or MCP code")
        revision = REVISIONS.get(self.revision or "")
        if revision is not None and not revision.has_handshake:
            if code == wire.RESOURCE_NOT_FOUND:
                frame.violations.append(
                    f"revision {revision.version} MUST NOT emit -32002 (a missing resource is -32602)"
                )
            elif -32099 <= code <= -32020 and code not in _SPEC_CODES:
                frame.violations.append(
                    f"{code} is reserved for the specification and undefined in {revision.version}"
                )
        elif code in _SPEC_CODES and revision is not None:
            frame.violations.append(f"{code} is a 2026-07-28 code, not one of revision {revision.version}")

    def _plane(self, frame: Frame, error: Any, params: Any) -> None:
        """SEP-1303 (2025-11-25 on): a listed tool's bad arguments are a tool result with
        ``isError``, which the model reads, not a JSON-RPC -32602, which it never sees."""
        revision = REVISIONS.get(self.revision or "")
        name = params.get("name") if isinstance(params, dict) else None
        if (
            frame.method == wire.TOOLS_CALL
            and revision is not None
            and revision.input_errors_as_tool_results
            and isinstance(error, dict)
            and error.get("code") == -32602
            and name in self.tools
        ):
            frame.violations.append(
                f"{name!r} is a listed tool: in {revision.version} invalid arguments SHOULD be a result "
                "with isError: true (the tool plane), not -32602"
            )

    def _result(self, frame: Frame, result: Any) -> None:
        if not isinstance(result, dict):
            frame.violations.append("an MCP result is an object")
            return
        if frame.method == wire.TOOLS_LIST and isinstance(result.get("tools"), list):
            self.tools.update(
                t["name"] for t in result["tools"] if isinstance(t, dict) and isinstance(t.get("name"), str)
            )
        if frame.method == wire.INITIALIZE:
            version = result.get("protocolVersion")
            if isinstance(version, str):
                self.revision = frame.revision = version
                if version not in REVISIONS:
                    frame.violations.append(
                        f"the server chose protocol version {version!r}, which no revision has"
                    )
            self.initialize_answered = True
        self._extensions(frame, frame.method, result, request=False)
        revision = REVISIONS.get(self.revision or "")
        if revision is not None and revision.has_result_type and frame.sender == SERVER:
            kind = result.get("resultType")
            if kind is None:
                frame.violations.append(f"revision {revision.version}: every result MUST carry resultType")
            elif kind == "input_required":
                keys = ", ".join(sorted(result.get("inputRequests") or {}))
                frame.meaning = f"input required: {keys or 'request state only'}"
                if frame.method not in revision.input_request_methods:
                    frame.violations.append(f"{frame.method} may not answer with an InputRequiredResult")

    def _extensions(self, frame: Frame, method: str | None, body: Any, request: bool) -> None:
        notes, problems = extension_fields(method, body, request)
        if notes:
            frame.meaning = "; ".join([frame.meaning, *notes] if frame.meaning else notes)
        frame.violations += problems


# -- the extensions' fields (the catalogue's EXTENSIONS) ----------------------------------------------
_APPS_SCHEMA = "https://modelcontextprotocol.io/ext-apps/schema.json#/$defs/"
_APPS_MIME = "text/html;profile=mcp-app"


def extension_fields(method: str | None, body: Any, request: bool) -> tuple[list[str], list[str]]:
    """What the extensions' fields in a request's params (``request``) or a result say, and the rules
    they break: ``(notes, violations)``. MCP Apps: its capability, tools' ``_meta.ui``, views."""
    notes: list[str] = []
    problems: list[str] = []
    if not isinstance(body, dict):
        return notes, problems
    if request:
        meta = body.get("_meta")
        declared = body.get("capabilities") if method == wire.INITIALIZE else None
        if declared is None and isinstance(meta, dict):
            declared = meta.get(wire.CLIENT_CAPABILITIES)
        _apps_capability(declared, "client", notes, problems)
        return notes, problems
    if method in (wire.INITIALIZE, wire.DISCOVER):
        _apps_capability(body.get("capabilities"), "server", notes, problems)
    elif method == wire.TOOLS_LIST and isinstance(body.get("tools"), list):
        _apps_tools(body["tools"], notes, problems)
    elif method == wire.RESOURCES_LIST and isinstance(body.get("resources"), list):
        _apps_views(body["resources"], "resources", notes, problems)
    elif method == wire.RESOURCES_READ and isinstance(body.get("contents"), list):
        _apps_views(body["contents"], "contents", notes, problems)
    return notes, problems


def _apps_capability(capabilities: Any, side: str, notes: list[str], problems: list[str]) -> None:
    extensions = capabilities.get("extensions") if isinstance(capabilities, dict) else None
    settings = extensions.get(APPS.id) if isinstance(extensions, dict) else None
    if settings is None:
        return
    if side == "client":
        types = settings.get("mimeTypes") if isinstance(settings, dict) else None
        notes.append(f"the client renders MCP Apps views ({APPS.id}: mimeTypes {types})")
        if not isinstance(types, list) or not all(isinstance(t, str) for t in types):
            problems.append(f"{APPS.id}: a client's settings list the view mimeTypes it renders (REQUIRED)")
    else:
        notes.append(f"the server offers MCP Apps views ({APPS.id})")
    if not isinstance(settings, dict):
        problems.append(f"capabilities.extensions[{APPS.id!r}] is a settings object")


def _ui(entry: Any) -> Any:
    meta = entry.get("_meta") if isinstance(entry, dict) else None
    return meta.get("ui") if isinstance(meta, dict) else None


def _apps_tools(tools: list[Any], notes: list[str], problems: list[str]) -> None:
    links = []
    for index, tool in enumerate(tools):
        ui = _ui(tool)
        if ui is None:
            continue
        name = tool.get("name") if isinstance(tool, dict) else None
        where = f"tools[{index}] ({name}) _meta.ui"
        problems += [f"{where}: {p.removeprefix('$: ')}" for p in _shape(ui, "McpUiToolMeta")]
        if not isinstance(ui, dict):
            continue
        uri, visibility = ui.get("resourceUri"), ui.get("visibility")
        if isinstance(uri, str) and not uri.startswith("ui://"):
            problems.append(f"{where}.resourceUri {uri!r}: a view's URI MUST start with ui://")
        app_only = isinstance(visibility, list) and "model" not in visibility
        links.append(f"{name} -> {uri}" + (" (only for the view)" if app_only else ""))
    if links:
        notes.append("MCP Apps views: " + ", ".join(links))


def _apps_views(entries: list[Any], member: str, notes: list[str], problems: list[str]) -> None:
    views = []
    for index, entry in enumerate(entries):
        if not isinstance(entry, dict):
            continue
        uri, mime = entry.get("uri"), entry.get("mimeType")
        is_view = isinstance(uri, str) and uri.startswith("ui://")
        if not is_view and mime != _APPS_MIME:
            continue
        views.append(str(uri))
        where = f"{member}[{index}] ({uri})"
        if is_view and mime != _APPS_MIME:
            level = "MUST" if member == "contents" else "SHOULD"
            problems.append(f"{where}: a view's mimeType {level} be {_APPS_MIME}, not {mime!r}")
        if (
            member == "contents"
            and not isinstance(entry.get("text"), str)
            and not isinstance(entry.get("blob"), str)
        ):
            problems.append(f"{where}: a view's content MUST be given as text or blob")
        ui = _ui(entry)
        if ui is not None:
            problems += [
                f"{where} _meta.ui: {p.removeprefix('$: ')}" for p in _shape(ui, "McpUiResourceMeta")
            ]
    if views:
        what = "read" if member == "contents" else "listed"
        notes.append(
            f"MCP Apps views {what}: {', '.join(views)} (the host renders them in a sandboxed iframe)"
        )


def _shape(value: Any, definition: str) -> list[str]:
    """``value`` against a definition of the vendored ext-apps JSON Schema."""
    return match(value, {"$schema": {"$ref": _APPS_SCHEMA + definition}})


class _Schemas:
    """The official JSON schemas, one validator per (revision, definition), made when first used."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self._documents: dict[str, dict[str, Any] | None] = {}
        self._validators: dict[tuple[str, str], Any] = {}

    def _document(self, revision: str) -> dict[str, Any] | None:
        if revision not in self._documents:
            path = self.directory / revision / "schema.json"
            self._documents[revision] = json.loads(path.read_text()) if path.is_file() else None
        return self._documents[revision]

    def _definitions(self, revision: str) -> dict[str, Any]:
        document = self._document(revision) or {}
        found = document.get("$defs") or document.get("definitions") or {}
        return found if isinstance(found, dict) else {}

    def _validate(self, revision: str, name: str, value: Any) -> list[str]:
        document = self._document(revision)
        if document is None or name not in self._definitions(revision):
            return []
        key = (revision, name)
        if key not in self._validators:
            import jsonschema

            pointer = "$defs" if "$defs" in document else "definitions"
            schema = {**document, "$ref": f"#/{pointer}/{name}"}
            cls = jsonschema.validators.validator_for(document)
            self._validators[key] = cls(schema)
        errors = sorted(self._validators[key].iter_errors(value), key=lambda e: list(e.path))
        return [f"schema {name} ({revision}): {_where(e.absolute_path)}{e.message[:200]}" for e in errors[:3]]

    def _definition_of(self, method: str, revision: str) -> str | None:
        for name, definition in self._definitions(revision).items():
            method_schema = (
                definition.get("properties", {}).get("method") if isinstance(definition, dict) else None
            )
            if isinstance(method_schema, dict) and method_schema.get("const") == method:
                return name
        return None

    def check_message(self, message: dict[str, Any], revision: str | None) -> list[str]:
        if revision is None:
            return []
        name = self._definition_of(message["method"], revision)
        return self._validate(revision, name, message) if name else []

    def check_answer(self, method: str, message: dict[str, Any], revision: str | None) -> list[str]:
        if revision is None:
            return []
        if "error" in message:
            return self._validate(revision, "JSONRPCErrorResponse", message) or self._validate(
                revision, "JSONRPCError", message
            )
        request = self._definition_of(method, revision)
        result = message.get("result")
        if request is None or not isinstance(result, dict):
            return []
        if result.get("resultType") == "input_required":
            return self._validate(revision, "InputRequiredResult", result)
        name = request.removesuffix("Request") + "Result"
        definitions = self._definitions(revision)
        return self._validate(revision, name if name in definitions else "EmptyResult", result)


def _where(path: Any) -> str:
    parts = [str(p) for p in path]
    return f"at {'/'.join(parts)}: " if parts else ""
