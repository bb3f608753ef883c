"""A small MCP server with switchable faults, to prove the harness can fail.

Run it over stdio: ``python -m jsonrpc_mcp_conformance.faultserver [--fault NAME ...]``, or in-process with
:func:`serve_with_faults`. Without faults it passes every applicable requirement. Each fault breaks the
wire behaviour in one way (the server's own logic is untouched; frames are rewritten on their way):

``answers-notifications``  answers every notification with ``{"id": null, "result": {}}``
``wrong-revision``         every initialize result says ``2024-11-05``, whatever was asked
``fixed-version``          every initialize result says ``2025-06-18``, while server/discover lists every
                           revision (as servers that list all the versions they speak do)
``no-validation``          ``tools/call`` arguments of ``test_bounded`` are never checked against its
                           inputSchema (emulated: they are dropped on the way in, so any value succeeds)
``required-bounds-only``   (no fault: a setting) ``tools/list`` loses ``test_bounded``, so the only tool
                           with bounds is ``test_bounded_required`` (its bounded properties are required)
``no-validation-required`` ``tools/call`` arguments of ``test_bounded_required`` are never checked (emulated:
                           they are replaced by valid ones on the way in)
``deaf-after-parse-error`` after a frame that is no JSON it answers nothing any more (it stops serving)
``jsonrpc-space``          every message it sends says ``"jsonrpc": "2.0 "`` (a malformed ``jsonrpc`` member)
``repeats-page``           the first page of ``tools/list`` gets a ``nextCursor`` whose page is the first
                           page again (every tool listed twice)
``resource-not-found-32002`` 2026-07-28 ``resources/read`` of a missing URI answers -32002 (legacy code)
``omits-result-type``      2026-07-28 results lose ``resultType``
``error-id-null``          error responses to readable requests carry ``id: null``
``junk-stdout``            (stdio) writes a banner line to stdout before serving
``never-exits``            (stdio) keeps running after stdin closes
``progress-after-result``  progress notifications are held back until just after the next response
``answers-cancelled``      answers ``notifications/cancelled`` for a request it received with a result for it
``untagged-subscription-notifications`` notifications other than the acknowledgment lose their subscriptionId
``silent-invalid``         answers nothing to an unreadable or invalid frame (drops -32700 and -32600 errors)
``one-input-per-round``    an InputRequiredResult keeps only its first input request
``forgets-partial-answers`` a retry answering only some of the keys asked loses its ``inputResponses``
``tasks-undeclared``       server/discover loses ``capabilities.extensions`` (the tasks extension)
``task-forgotten``         every ``tasks/get`` result becomes a -32602 error
``task-never-completes``   a completed task's ``tasks/get`` says ``working`` (no ``result``)
``cancel-not-empty``       the ``tasks/cancel`` ack carries ``taskId`` and ``status``
``unknown-task-found``     a -32602 answer to ``tasks/get`` / ``tasks/cancel`` becomes a working task
``tasks-without-extension`` requests that do not declare the tasks extension are served as if they did
``skills-no-manifest``     ``skills/list`` entries lose their ``resources`` (the file manifest)
``skills-get-bare``        ``skills/get`` answers the entry itself, not ``{"skill": entry}``
``skills-unknown-32002``   ``skills/get`` of an unknown URI answers -32002 instead of -32602
``skills-stale-digest``    every manifest digest of ``skills/list`` and ``skills/get`` is one hex digit off

The content faults (issue 26: what the official suite's fixture tools, prompts and resources answer, for
the ``content:*`` requirements; meant to wrap ``examples/everything``, which has those fixtures):

``content-as-text``        every content item of a ``tools/call`` or ``prompts/get`` answer becomes plain
                           text, ``isError`` is dropped, and ``resources/read`` contents lose text and blob
``schema-keywords-stripped`` ``tools/list`` input schemas lose ``$schema``, ``$defs``, ``allOf``, ``if``,
                           ``then``, ``else`` and ``additionalProperties``
``elicitation-schema-plain`` ``elicitation/create`` requests lose ``default``, ``oneOf``, ``enumNames`` and
                           ``items`` from the properties they ask for
``no-log-messages``        ``notifications/message`` is never sent

The MCP Apps faults (issue 25: the ``apps:*`` requirements, ``io.modelcontextprotocol/ui``; meant to
wrap a server with a view, such as ``examples/everything`` or ``examples/memory``):

``apps-undeclared``        ``initialize`` and ``server/discover`` results lose the extension from
                           ``capabilities.extensions``
``apps-link-scheme``       every tool's ``_meta.ui.resourceUri`` says ``https://`` instead of ``ui://``
``apps-dangling-link``     tools only for views (visibility without "model") link to a view that is not there
``apps-wrong-mime``        ``resources/read`` contents of type ``text/html;profile=mcp-app`` say ``text/html``
``apps-tool-meta-malformed`` every tool's ``_meta.ui.visibility`` is one comma-separated string, not an array
``apps-resource-meta-malformed`` the ``_meta.ui`` of ``ui://`` resources (listed and read) says
                           ``prefersBorder: "true"`` (a string)
``apps-app-only-shown``    every request is served as if its client declared the extension (``initialize``
                           capabilities; the 2026-07-28 ``_meta`` client capabilities)

The issue-26 detail faults (skills, tasks, MRTR, stateless, and four HTTP header faults) are listed
in :mod:`._fault_details`; they are meant to wrap ``examples/everything``.

Over Streamable HTTP (:func:`http_app`, or ``--port N`` to serve ``http://127.0.0.1:N/mcp``) an ASGI
wrapper rewrites the HTTP exchanges instead:

``session-id-with-space``  every ``Mcp-Session-Id`` issued has a space in it (taken back out of requests)
``sse-buffered``           SSE responses lose ``X-Accel-Buffering: no``
``broadcast``              what a POST is answered with is also copied onto the session's GET stream
"""

from __future__ import annotations

import argparse
import contextlib
import sys
from collections.abc import Iterable
from typing import Annotated, Any

import anyio
import orjson

from jsonrpc_mcp import Arg, Context, Server, wire

from ._fault_details import DETAIL_FAULTS, DETAIL_HTTP_FAULTS, DetailFaults, _key, base64_fault, routing_fault
from ._fault_features import (
    APPS_FAULTS,
    CONTENT_FAULTS,
    _apps_fault,
    _content_fault,
    _declare_apps,
    _drops_log,
    _items,
    _skills_fault,
)
from .fixtures import ALL_REVISIONS

__all__ = [
    "APPS_FAULTS",
    "CONTENT_FAULTS",
    "FAULTS",
    "HTTP_FAULTS",
    "FaultyStream",
    "create_server",
    "http_app",
    "serve_with_faults",
]

FAULTS = (
    "answers-notifications",
    "wrong-revision",
    "fixed-version",
    "no-validation",
    "required-bounds-only",  # (issue 26: bounded arguments of required properties)
    "no-validation-required",
    "deaf-after-parse-error",
    "jsonrpc-space",  # (issue 26: a malformed jsonrpc member, found on the first answer)
    "repeats-page",
    "resource-not-found-32002",
    "omits-result-type",
    "error-id-null",
    "junk-stdout",
    "never-exits",
    "progress-after-result",
    "answers-cancelled",
    "untagged-subscription-notifications",
    "silent-invalid",  # (issue 13, timing) answers no frame it cannot read: no -32700 / -32600 errors
    "one-input-per-round",  # (issue 14, several inputs per round)
    "forgets-partial-answers",
    # (issue 14, the Tasks extension)
    "tasks-undeclared",
    "task-forgotten",
    "task-never-completes",
    "cancel-not-empty",
    "unknown-task-found",
    "tasks-without-extension",
    "skills-no-manifest",  # (issue 14, the skills extension)
    "skills-get-bare",
    "skills-unknown-32002",
    "skills-stale-digest",
    *CONTENT_FAULTS,  # (issue 26, the content requirements: _fault_features.py)
    *APPS_FAULTS,  # (issue 25, MCP Apps: _fault_features.py)
    *DETAIL_FAULTS,  # (issue 26: skills, tasks, MRTR and stateless details, _fault_details.py)
)
TASKS_EXTENSION = "io.modelcontextprotocol/tasks"
HTTP_FAULTS = ("session-id-with-space", "sse-buffered", "broadcast", *DETAIL_HTTP_FAULTS)
MODERN = "2026-07-28"
FIXED_VERSION = "2025-06-18"  # the fixed-version fault's answer to every initialize
_REPEAT = "conformance-repeat"  # the repeats-page fault's cursor
_SESSION = wire.SESSION_HEADER.encode("ascii")
_SUBSCRIPTION_ID = wire.SUBSCRIPTION_ID


def create_server() -> Server:
    server = Server("conformance-fault-server", "1.0.0", logging_enabled=True)

    @server.tool()
    def echo(text: str) -> str:
        """Echo the text back."""
        return text

    @server.tool(annotations={"readOnlyHint": True})
    def test_bounded(
        count: Annotated[int, Arg("How many, 1 to 10", minimum=1, maximum=10)] = 1,
        label: Annotated[str, Arg("A short label", maxLength=20)] = "",
        mode: Annotated[str, Arg("fast or slow", enum=["fast", "slow"])] = "fast",
    ) -> str:
        """Arguments with bounds, a maximum length and an enum (the schema-bounds fixtures)."""
        return f"{count} {label} {mode}"

    @server.tool(annotations={"readOnlyHint": True})
    def test_bounded_required(
        level: Annotated[int, Arg("1 to 5", minimum=1, maximum=5)],
        tag: Annotated[str, Arg("A tag of at most 8 characters", maxLength=8)],
        kind: Annotated[str, Arg("red or blue", enum=["red", "blue"])],
        note: str = "",
    ) -> str:
        """Bounded arguments that are all required (a call must give every one of them)."""
        return f"{level} {tag} {kind} {note}"

    @server.tool()
    async def test_tool_with_progress(ctx: Context) -> str:
        """Report progress 0, 50 and 100 of 100 (named as the conformance suite's fixture)."""
        for step in (0, 50, 100):
            await ctx.report_progress(step, total=100)
        return "done"

    @server.tool()
    async def test_sampling(prompt: str, ctx: Context) -> str:
        """Ask the client to sample (named as the conformance suite's fixture)."""
        result = await ctx.sample(
            messages=[{"role": "user", "content": {"type": "text", "text": prompt}}], max_tokens=10
        )
        return str(result.get("content"))

    @server.tool()
    async def test_input_required_result_multiple_inputs(ctx: Context) -> str:
        """Ask a name, a greeting and the roots at once (the official suite's MRTR fixture)."""
        answers = await ctx.ask(
            {
                "user_name": ctx.elicitation(
                    "Name?", {"type": "object", "properties": {"name": {"type": "string"}}}
                ),
                "greeting": ctx.sampling(["Generate a greeting"], max_tokens=50),
                "client_roots": ctx.roots(),
            }
        )
        return ", ".join(sorted(answers))

    @server.tool(task="optional")
    async def slow_compute(seconds: float = 1.0, label: str = "") -> str:
        """Sleep, then answer (a task when the request declares the tasks extension)."""
        await anyio.sleep(seconds)
        return f"computed {label} after {seconds:g}s"

    @server.tool()
    def test_trigger_tool_change() -> str:
        """Add a tool and remove it again (the official suite's hook for a tool-list change)."""
        server.add_tool("temporary", echo, description="Exists only during a call", replace=True)
        server.remove_tool("temporary")
        return "changed"

    @server.resource("fault://greeting", mime_type="text/plain")
    def greeting() -> str:
        return "hello"

    @server.prompt("greet", description="Greet someone")
    def greet(name: str) -> str:
        return f"Hello {name}"

    @server.completion(prompt="greet", argument="name")
    def names(value: str) -> list[str]:
        return [n for n in ("alice", "bob") if n.startswith(value)]

    from jsonrpc_mcp.skills import Skill, Skills

    skill_md = "---\nname: fault-skill\ndescription: A skill of the fault server.\n---\n\n# Fault skill\n"
    files = {"SKILL.md": skill_md, "notes.md": "notes\n", "references/more.md": "more\n"}
    server.add_extension(Skills(Skill.from_files("fault-skill", files)))
    return server


class FaultyStream:
    """Wraps the server's end of a connection and rewrites frames according to ``faults``."""

    def __init__(self, inner: Any, faults: Iterable[str]) -> None:
        self.inner = inner
        self.faults = set(faults)
        unknown = self.faults - set(FAULTS)
        if unknown:
            raise ValueError(f"unknown faults {sorted(unknown)}")
        self.modern_reads: set[Any] = set()
        self.modern_ids: set[Any] = set()
        self.held: list[bytes] = []  # progress-after-result: progress notifications not sent yet
        self.request_ids: set[Any] = set()  # answers-cancelled: the ids of the requests received
        self.first_pages: set[Any] = set()  # repeats-page: tools/list requests without a cursor
        self.asked: dict[str, set[str]] = {}  # forgets-partial-answers: requestState -> the keys asked
        self.task_requests: dict[Any, str] = {}  # request id -> the tasks/* method it called
        self.methods: dict[Any, str] = {}  # the skills faults: request id -> method
        self.deaf = False  # deaf-after-parse-error: it answers nothing any more
        self.tool_lists: set[Any] = set()  # required-bounds-only: the tools/list requests received
        self.details = DetailFaults(self.faults)  # (issue 26's detail faults: _fault_details.py)

    async def receive(self) -> bytes:
        frame = bytes(await self.inner.receive())
        try:
            value = orjson.loads(frame)
        except orjson.JSONDecodeError:
            if "deaf-after-parse-error" in self.faults:
                self.deaf = True
            return frame
        for item in _items(value):
            if not isinstance(item, dict) or not isinstance(item.get("method"), str):
                continue
            if "id" not in item:
                if "answers-notifications" in self.faults:
                    await self.inner.send(b'{"jsonrpc":"2.0","id":null,"result":{}}')
                params = item.get("params")
                if (
                    "answers-cancelled" in self.faults
                    and item["method"] == "notifications/cancelled"
                    and isinstance(params, dict)
                    and _key(params.get("requestId")) in self.request_ids
                ):
                    answer = {"content": [], "resultType": "complete"}
                    await self.inner.send(
                        orjson.dumps({"jsonrpc": "2.0", "id": params["requestId"], "result": answer})
                    )
                continue
            self.request_ids.add(_key(item["id"]))
            self.methods[_key(item["id"])] = item["method"]
            if self.details.request(_key(item["id"]), item):  # (the request may be rewritten)
                frame = orjson.dumps(value)
            params = item.get("params")
            if item["method"].startswith("tasks/"):
                self.task_requests[_key(item["id"])] = item["method"]
            if "tasks-without-extension" in self.faults and _declare_tasks(params):
                frame = orjson.dumps(value)
            if "apps-app-only-shown" in self.faults and _declare_apps(item["method"], params):
                frame = orjson.dumps(value)
            if "forgets-partial-answers" in self.faults and self._partial(params):
                frame = orjson.dumps(value)
            if "no-validation" in self.faults and _unchecked_call(item):
                frame = orjson.dumps(value)  # the arguments were dropped: nothing is left to validate
            if "no-validation-required" in self.faults and _unchecked_required_call(item):
                frame = orjson.dumps(value)
            if "required-bounds-only" in self.faults and item["method"] == "tools/list":
                self.tool_lists.add(_key(item["id"]))
            if "repeats-page" in self.faults and item["method"] == "tools/list":
                if isinstance(params, dict) and params.get("cursor") == _REPEAT:
                    del params["cursor"]  # the "next" page is the first one again
                    frame = orjson.dumps(value)
                elif not isinstance(params, dict) or "cursor" not in params:
                    self.first_pages.add(_key(item["id"]))
            meta = params.get("_meta") if isinstance(params, dict) else None
            if isinstance(meta, dict) and meta.get(wire.PROTOCOL_VERSION) == MODERN:
                self.modern_ids.add(_key(item["id"]))
                if item["method"] == "resources/read":
                    self.modern_reads.add(_key(item["id"]))
        return frame

    async def send(self, message: bytes) -> None:
        try:
            value = orjson.loads(message)
        except orjson.JSONDecodeError:
            await self.inner.send(message)
            return
        if ("silent-invalid" in self.faults and _invalid_answer(value)) or self.deaf:
            return
        changed = False
        if self.details.drops(value):
            return
        if self.faults & set(CONTENT_FAULTS):
            if _drops_log(self.faults, value):
                return
            changed = _content_fault(self.faults, self.methods, value)
        if self.faults & set(APPS_FAULTS):
            changed = _apps_fault(self.faults, self.methods, value) or changed
        if "jsonrpc-space" in self.faults:
            for item in _items(value):
                if isinstance(item, dict):
                    item["jsonrpc"] = "2.0 "
                    changed = True
        for item in _items(value):
            if isinstance(item, dict) and "method" not in item:
                changed = self._rewrite(item) or changed
            elif isinstance(item, dict) and "id" not in item:
                if "progress-after-result" in self.faults and item.get("method") == "notifications/progress":
                    self.held.append(message)
                    return
                changed = self._rewrite_notification(item) or changed
        await self.inner.send(orjson.dumps(value) if changed else message)
        if self.held and any(isinstance(i, dict) and "method" not in i for i in _items(value)):
            held, self.held = self.held, []
            for frame in held:
                await self.inner.send(frame)

    def _rewrite_notification(self, item: dict[str, Any]) -> bool:
        params = item.get("params")
        meta = params.get("_meta") if isinstance(params, dict) else None
        if (
            "untagged-subscription-notifications" in self.faults
            and item.get("method") != "notifications/subscriptions/acknowledged"
            and isinstance(meta, dict)
        ):
            return meta.pop(_SUBSCRIPTION_ID, None) is not None
        return False

    def _rewrite(self, item: dict[str, Any]) -> bool:
        key = _key(item.get("id"))
        result, error = item.get("result"), item.get("error")
        changed = False
        initialize_result = (
            isinstance(result, dict) and "serverInfo" in result and "protocolVersion" in result
        )
        if "wrong-revision" in self.faults and initialize_result and isinstance(result, dict):
            result["protocolVersion"] = "2024-11-05"
            changed = True
        if "fixed-version" in self.faults and initialize_result and isinstance(result, dict):
            result["protocolVersion"] = FIXED_VERSION
            changed = True
        if "fixed-version" in self.faults and isinstance(result, dict) and "supportedVersions" in result:
            result["supportedVersions"] = list(reversed(ALL_REVISIONS))
            changed = True
        if key in self.tool_lists and isinstance(result, dict) and isinstance(result.get("tools"), list):
            self.tool_lists.discard(key)
            result["tools"] = [t for t in result["tools"] if t.get("name") != "test_bounded"]
            changed = True
        if key in self.first_pages and isinstance(result, dict) and "nextCursor" not in result:
            self.first_pages.discard(key)  # (ids are reused: a later prompts/list is left alone)
            result["nextCursor"] = _REPEAT
            changed = True
        requests = result.get("inputRequests") if isinstance(result, dict) else None
        if isinstance(requests, dict) and isinstance(result, dict):
            if isinstance(result.get("requestState"), str):
                self.asked[result["requestState"]] = set(requests)
            if "one-input-per-round" in self.faults and len(requests) > 1:
                result["inputRequests"] = dict(list(requests.items())[:1])
                changed = True
        changed = self._rewrite_tasks(item, self.task_requests.pop(key, ""), result, error) or changed
        if "omits-result-type" in self.faults and isinstance(result, dict) and key in self.modern_ids:
            changed = result.pop("resultType", None) is not None or changed
        not_found = (
            isinstance(error, dict) and error.get("code") == -32602 and "uri" in (error.get("data") or {})
        )
        if (
            "resource-not-found-32002" in self.faults
            and not_found
            and isinstance(error, dict)
            and key in self.modern_reads
        ):
            error["code"] = -32002
            changed = True
        changed = _skills_fault(self.faults, self.methods.get(key), item) or changed
        changed = self.details.answer(key, self.methods.get(key), item) or changed
        if "error-id-null" in self.faults and isinstance(error, dict) and item.get("id") is not None:
            item["id"] = None
            changed = True
        return changed

    def _rewrite_tasks(self, item: dict[str, Any], method: str, result: Any, error: Any) -> bool:
        """The Tasks extension faults (``method``: the tasks/* method answered, else "")."""
        caps = (
            result.get("capabilities") if isinstance(result, dict) and "supportedVersions" in result else None
        )
        if "tasks-undeclared" in self.faults and isinstance(caps, dict):
            return caps.pop("extensions", None) is not None
        if method == "tasks/get" and isinstance(result, dict):
            if "task-forgotten" in self.faults:
                del item["result"]
                item["error"] = {"code": -32602, "message": "Invalid params: no such task"}
                return True
            if "task-never-completes" in self.faults and result.get("status") == "completed":
                result["status"] = "working"
                result.pop("result", None)
                return True
        if method == "tasks/cancel" and "cancel-not-empty" in self.faults and isinstance(result, dict):
            result.update(taskId="cancelled-task", status="cancelled")
            return True
        unknown = isinstance(error, dict) and error.get("code") == -32602
        if method in ("tasks/get", "tasks/cancel") and unknown and "unknown-task-found" in self.faults:
            del item["error"]
            stamp = "2026-07-28T00:00:00Z"
            task = {"taskId": "found", "status": "working", "createdAt": stamp, "lastUpdatedAt": stamp}
            item["result"] = {"resultType": "complete", **task, "ttlMs": None}
            return True
        return False

    def _partial(self, params: Any) -> bool:
        """forgets-partial-answers: drop the answers of a retry that answers only some keys."""
        if not isinstance(params, dict) or not isinstance(params.get("inputResponses"), dict):
            return False
        state = params.get("requestState")
        asked = self.asked.get(state, set()) if isinstance(state, str) else set()
        if not set(params["inputResponses"]) < asked:
            return False
        del params["inputResponses"]
        return True

    async def aclose(self) -> None:
        await self.inner.aclose()


def _declare_tasks(params: Any) -> bool:
    """tasks-without-extension: declare the tasks extension in a modern envelope that lacks it."""
    meta = params.get("_meta") if isinstance(params, dict) else None
    caps = meta.get(wire.CLIENT_CAPABILITIES) if isinstance(meta, dict) else None
    if not isinstance(caps, dict):
        return False
    found = caps.get("extensions")
    extensions: dict[str, Any] = found if isinstance(found, dict) else {}
    if TASKS_EXTENSION in extensions:
        return False
    caps["extensions"] = {**extensions, TASKS_EXTENSION: {}}
    return True


def _unchecked_call(item: dict[str, Any]) -> bool:
    """no-validation: drop the arguments of a ``tools/call`` of ``test_bounded`` (True when dropped)."""
    params = item.get("params")
    if item.get("method") != "tools/call" or not isinstance(params, dict):
        return False
    return params.get("name") == "test_bounded" and params.pop("arguments", None) is not None


_VALID_REQUIRED = {"level": 3, "tag": "ok", "kind": "red"}


def _unchecked_required_call(item: dict[str, Any]) -> bool:
    """no-validation-required: a ``tools/call`` of ``test_bounded_required`` gets valid arguments
    instead of its own (True when replaced), as if they were never checked."""
    params = item.get("params")
    if item.get("method") != "tools/call" or not isinstance(params, dict):
        return False
    if params.get("name") != "test_bounded_required":
        return False
    params["arguments"] = dict(_VALID_REQUIRED)
    return True


def _invalid_answer(value: Any) -> bool:
    """silent-invalid: the answer (or a batch answer) to a frame that was unreadable or no request."""
    errors = [i.get("error") for i in _items(value) if isinstance(i, dict)]
    return bool(errors) and all(isinstance(e, dict) and e.get("code") in (-32700, -32600) for e in errors)


async def serve_with_faults(server: Server, stream: Any, faults: Iterable[str]) -> None:
    """Serve one connection through a :class:`FaultyStream`."""
    await server.serve(FaultyStream(stream, faults))


def _rewrite_headers(headers: Iterable[Any], faults: set[str], outgoing: bool) -> list[tuple[bytes, bytes]]:
    rewritten: list[tuple[bytes, bytes]] = []
    for name, value in headers:
        key = bytes(name).lower()
        if key == _SESSION and "session-id-with-space" in faults:
            value = value[:8] + b" " + value[8:] if outgoing else bytes(value).replace(b" ", b"")
        elif key == b"x-accel-buffering" and outgoing and "sse-buffered" in faults:
            continue
        elif key.startswith(b"mcp-param-") and not outgoing:
            value = base64_fault(bytes(value), faults)
        rewritten.append((name, value))
    return rewritten


def http_app(faults: Iterable[str] = (), server: Server | None = None) -> tuple[Any, Any]:
    """``(asgi_app, mcp_app)``: the fault server over Streamable HTTP behind an ASGI wrapper that
    injects the HTTP ``faults``; ``mcp_app`` is the :class:`McpHttpApp` inside (to shut it down)."""
    from jsonrpc_mcp.http import McpHttpApp

    chosen = set(faults)
    unknown = chosen - set(HTTP_FAULTS)
    if unknown:
        raise ValueError(f"unknown HTTP faults {sorted(unknown)}")
    mcp_app = McpHttpApp(server or create_server())
    get_streams: dict[bytes, Any] = {}  # session id -> the send() of its open GET stream (broadcast)

    async def app(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http" or not chosen:
            await mcp_app(scope, receive, send)
            return
        scope = {**scope, "headers": _rewrite_headers(scope["headers"], chosen, outgoing=False)}
        if chosen & {"routing-headers-unchecked", "task-name-header-refused"}:
            scope, receive = await routing_fault(scope, receive, chosen)
        request = {bytes(k).lower(): bytes(v) for k, v in scope["headers"]}
        session = request.get(_SESSION)
        standalone = scope["method"] == "GET" and b"last-event-id" not in request
        media = b""

        async def faulty_send(message: Any) -> None:
            nonlocal media
            if message["type"] == "http.response.start":
                message = {**message, "headers": _rewrite_headers(message.get("headers", []), chosen, True)}
                media = dict(message["headers"]).get(b"content-type", b"").split(b";")[0].strip()
                if "broadcast" in chosen and standalone and session and message["status"] == 200:
                    get_streams[session] = send
            elif "broadcast" in chosen and scope["method"] == "POST" and session in get_streams:
                body = bytes(message.get("body", b""))
                copy = body if media == b"text/event-stream" else b"data: " + body + b"\n\n"
                if body and media in (b"text/event-stream", b"application/json"):
                    with contextlib.suppress(Exception):  # the GET stream may be gone
                        await get_streams[session](
                            {"type": "http.response.body", "body": copy, "more_body": True}
                        )
            await send(message)

        try:
            await mcp_app(scope, receive, faulty_send)
        finally:
            if session is not None and get_streams.get(session) is send:
                del get_streams[session]

    return app, mcp_app


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m jsonrpc_mcp_conformance.faultserver", description=__doc__.split("\n")[0]
    )
    parser.add_argument("--fault", action="append", default=[], choices=FAULTS + HTTP_FAULTS)
    parser.add_argument(
        "--port",
        type=int,
        help="serve Streamable HTTP on 127.0.0.1:PORT/mcp instead of stdio (0: a free port); once it "
        "listens, prints 'faultserver: serving at URL' on stderr",
    )
    args = parser.parse_args(argv)
    faults = set(args.fault)
    if args.port is not None:
        import socket

        import uvicorn

        app, _ = http_app(faults & set(HTTP_FAULTS))
        with socket.create_server(("127.0.0.1", args.port)) as sock:
            print(f"faultserver: serving at http://127.0.0.1:{sock.getsockname()[1]}/mcp", file=sys.stderr)
            sys.stderr.flush()
            uvicorn.Server(uvicorn.Config(app, log_level="warning")).run(sockets=[sock])
        return 0
    from jsonrpc_mcp.transports.stdio import stdio_server

    if "junk-stdout" in faults:
        sys.stdout.write("fault server starting up...\n")
        sys.stdout.flush()
    server = create_server()

    async def run() -> None:
        async with stdio_server() as stream:
            await serve_with_faults(server, stream, faults - {"junk-stdout", "never-exits"})
        if "never-exits" in faults:
            await anyio.sleep_forever()

    anyio.run(run)
    return 0


if __name__ == "__main__":
    sys.exit(main())
