"""The fault server's detail faults (issue 26): each breaks one thing an official-suite requirement
of the harness checks, so that requirement can be shown to fail. They are meant to wrap
``examples/everything``, which has the official suite's fixtures; :mod:`.faultserver` applies them
(``--fault NAME``, :func:`~.faultserver.serve_with_faults`, :func:`~.faultserver.http_app`).

The skills detail faults (issue 26: what a skill entry, its SKILL.md resource and a directory read
agree on; meant to wrap ``examples/everything``, whose skills have subdirectories):

``skills-settings-envelope`` the skills extension's settings are declared inside a ``config`` envelope
``skills-no-cache-attributes`` ``skills/list`` and ``skills/get`` results lose ``ttlMs`` and ``cacheScope``
``skills-manifest-without-self`` ``skills/list`` manifests lose the entry of the skill's own SKILL.md
``skills-reserved-metadata`` ``skills/list`` frontmatters gain ``metadata`` under ``io.modelcontextprotocol/``
``skills-frontmatter-extra`` ``skills/list`` frontmatters gain a member their SKILL.md does not have
``skills-md-plain``        ``resources/list`` lists every SKILL.md as ``text/plain``
``skills-no-directory-read`` ``resources/directory/read`` answers -32601 (the method is declared, not served)

The tasks detail faults (issue 26: the Tasks extension's dispatch, statuses, acks and wire fields;
meant to wrap ``examples/everything``, which has the official suite's tasks fixtures):

``tasks-removed-methods-served`` ``tasks/result`` and ``tasks/list`` are answered with an empty result
``sync-results-carry-task-id`` a ``tools/call`` answered at once carries a ``taskId``
``sync-result-untyped``     a ``tools/call`` answered at once loses ``resultType``
``tool-error-task-failed``  a task whose result has ``isError`` is reported ``failed`` with an error
``failed-task-with-result`` a ``failed`` task also carries a ``result``
``cancel-terminal-32602``   ``tasks/cancel`` of a task already seen ended answers -32602
``legacy-task-fields``      a CreateTaskResult also carries the v1 ``ttl`` and ``pollInterval``
``related-task-meta``       a completed task's inlined result carries the v1 related-task ``_meta``
``update-ack-task-envelope`` the ``tasks/update`` ack carries the task's ``status``
``answered-key-kept``       ``tasks/get`` keeps listing an input request after it was answered

The MRTR detail faults (issue 26: what the official suite's ``test_input_required_result_*`` fixtures
answer; meant to wrap ``examples/everything``):

``input-requests-rekeyed``  every ``inputRequests`` key gets ``-x`` appended
``input-requests-as-elicitation`` every input request's method becomes ``elicitation/create``
``no-request-state``        InputRequiredResults lose ``requestState``
``mrtr-only-for-tools``     a ``prompts/get`` InputRequiredResult becomes a complete prompt
``reasks-as-error``         a retry answered with a new InputRequiredResult gets an error instead
``extra-answers-refused``   a retry with more than one input response is answered -32602
``malformed-answers-accepted`` a retry with malformed inputResponses is answered as complete

The stateless detail faults (issue 26: 2026-07-28 ``_meta`` rules, capabilities and the not-found error;
meant to wrap ``examples/everything``):

``not-found-without-uri``  a -32602 error naming a ``uri`` in its data loses the data
``client-info-required``   a request whose ``_meta`` has no clientInfo is answered -32602
``empty-params-served``    ``server/discover`` with ``params: {}`` is served as if it had a valid ``_meta``
``prompts-undeclared``     ``server/discover`` results lose ``capabilities.prompts``
``missing-capability-as-32602`` a -32021 error becomes -32602 without its data
``no-tools-list-changed``  ``notifications/tools/list_changed`` is never sent
``no-prompts-list-changed`` ``notifications/prompts/list_changed`` is never sent

Over Streamable HTTP (:func:`~.faultserver.http_app`) the ASGI wrapper applies these:

``base64-not-decoded``     an ``Mcp-Param-*`` value in ``=?base64?...?=`` form reaches the server
                           unwrapped and undecoded (as a server that never decodes would compare it)
``lenient-base64``         an ``Mcp-Param-*`` Base64 value with bad padding or characters is
                           repaired before the server sees it (as a lenient decoder would read it)
``routing-headers-unchecked`` ``Mcp-Method`` and ``Mcp-Name`` are set from the body before the
                           server sees them (as a server that never compares them would behave)
``task-name-header-refused`` an ``Mcp-Name`` on a ``tasks/*`` request reaches the server garbled
"""

from __future__ import annotations

from typing import Any

import orjson

from jsonrpc_mcp import wire

__all__ = [
    "DETAIL_FAULTS",
    "DETAIL_HTTP_FAULTS",
    "MRTR_DETAIL_FAULTS",
    "SKILLS_DETAIL_FAULTS",
    "STATELESS_DETAIL_FAULTS",
    "TASKS_DETAIL_FAULTS",
    "DetailFaults",
    "base64_fault",
    "routing_fault",
]

MODERN = "2026-07-28"
SKILLS_DETAIL_FAULTS = (
    "skills-settings-envelope",
    "skills-no-cache-attributes",
    "skills-manifest-without-self",
    "skills-reserved-metadata",
    "skills-frontmatter-extra",
    "skills-md-plain",
    "skills-no-directory-read",
)
TASKS_DETAIL_FAULTS = (
    "tasks-removed-methods-served",
    "sync-results-carry-task-id",
    "sync-result-untyped",
    "tool-error-task-failed",
    "failed-task-with-result",
    "cancel-terminal-32602",
    "legacy-task-fields",
    "related-task-meta",
    "update-ack-task-envelope",
    "answered-key-kept",
)
MRTR_DETAIL_FAULTS = (
    "input-requests-rekeyed",
    "input-requests-as-elicitation",
    "no-request-state",
    "mrtr-only-for-tools",
    "reasks-as-error",
    "extra-answers-refused",
    "malformed-answers-accepted",
)
STATELESS_DETAIL_FAULTS = (
    "not-found-without-uri",
    "client-info-required",
    "empty-params-served",
    "prompts-undeclared",
    "missing-capability-as-32602",
    "no-tools-list-changed",
    "no-prompts-list-changed",
)
DETAIL_FAULTS = (*SKILLS_DETAIL_FAULTS, *TASKS_DETAIL_FAULTS, *MRTR_DETAIL_FAULTS, *STATELESS_DETAIL_FAULTS)
DETAIL_HTTP_FAULTS = (
    "base64-not-decoded",
    "lenient-base64",
    "routing-headers-unchecked",
    "task-name-header-refused",
)


def _key(rid: Any) -> Any:
    return (type(rid).__name__, rid) if isinstance(rid, (str, int)) else None


class DetailFaults:
    """The detail faults chosen for one connection, and what they remember of it."""

    def __init__(self, faults: set[str]) -> None:
        self.faults = faults & set(DETAIL_FAULTS)
        self.tasks = _TasksDetail(self.faults & set(TASKS_DETAIL_FAULTS))
        self.kinds: dict[Any, str] = {}  # MRTR details: request id -> what its inputResponses are
        self.no_client_info: set[Any] = set()  # client-info-required: the requests without clientInfo

    def request(self, key: Any, item: dict[str, Any]) -> bool:
        """Notes (and may rewrite) a request; True when the frame must be written again."""
        if not self.faults:
            return False
        self.tasks.request(key, item)
        if self.faults & set(MRTR_DETAIL_FAULTS):
            self.kinds[key] = _responses_kind(item.get("params"))
        if self.faults & set(STATELESS_DETAIL_FAULTS) and _stateless_request(self.faults, item):
            self.no_client_info.add(key)
        return True

    def drops(self, value: Any) -> bool:
        """Whether a message is never sent (no-tools-list-changed, no-prompts-list-changed)."""
        return isinstance(value, dict) and _DROPPED_LIST_CHANGED.get(value.get("method", "")) in self.faults

    def answer(self, key: Any, method: str | None, item: dict[str, Any]) -> bool:
        """Rewrites an answer in place; True when changed."""
        if not self.faults:
            return False
        changed = self.tasks.answer(method, item)
        if self.faults & set(STATELESS_DETAIL_FAULTS):
            changed = _stateless_answer(self.faults, key in self.no_client_info, item) or changed
            self.no_client_info.discard(key)
        if self.faults & set(MRTR_DETAIL_FAULTS):
            changed = _mrtr_detail_fault(self.faults, method, self.kinds.pop(key, ""), item) or changed
        if self.faults & set(SKILLS_DETAIL_FAULTS):
            changed = _skills_detail_fault(self.faults, method, item) or changed
        return changed


# -- the stateless detail faults (issue 26) ------------------------------------------------------


_DROPPED_LIST_CHANGED = {
    "notifications/tools/list_changed": "no-tools-list-changed",
    "notifications/prompts/list_changed": "no-prompts-list-changed",
}


def _stateless_request(faults: set[str], item: dict[str, Any]) -> bool:
    """Rewrites a request in place (empty-params-served); True when it lacks clientInfo but has a
    protocol version (client-info-required: its answer is replaced)."""
    params = item.get("params")
    if not isinstance(params, dict):
        return False
    if "empty-params-served" in faults and item.get("method") == "server/discover" and not params:
        params["_meta"] = {wire.PROTOCOL_VERSION: MODERN, wire.CLIENT_CAPABILITIES: {}}
        return False
    meta = params.get("_meta")
    return (
        "client-info-required" in faults
        and isinstance(meta, dict)
        and wire.PROTOCOL_VERSION in meta
        and "io.modelcontextprotocol/clientInfo" not in meta
    )


def _stateless_answer(faults: set[str], no_client_info: bool, item: dict[str, Any]) -> bool:
    """The stateless detail faults: rewrite an answer in place (True when changed)."""
    result, error = item.get("result"), item.get("error")
    if no_client_info:
        item.pop("result", None)
        item["error"] = {"code": -32602, "message": "Invalid params: _meta has no clientInfo"}
        return True
    if isinstance(error, dict):
        data = error.get("data")
        if "not-found-without-uri" in faults and error.get("code") == -32602 and isinstance(data, dict):
            return error.pop("data", None) is not None and "uri" in data
        if "missing-capability-as-32602" in faults and error.get("code") == -32021:
            error.pop("data", None)
            error["code"] = -32602
            return True
    caps = result.get("capabilities") if isinstance(result, dict) and "supportedVersions" in result else None
    if "prompts-undeclared" in faults and isinstance(caps, dict):
        return caps.pop("prompts", None) is not None
    return False


# -- the MRTR detail faults (issue 26) -----------------------------------------------------------


def _responses_kind(params: Any) -> str:
    """What a request's ``inputResponses`` are: "" (none), "one", "several" or "malformed"."""
    if not isinstance(params, dict) or "inputResponses" not in params:
        return ""
    responses = params["inputResponses"]
    if not isinstance(responses, dict) or not all(isinstance(v, dict) for v in responses.values()):
        return "malformed"
    return "several" if len(responses) > 1 else "one"


def _mrtr_detail_fault(faults: set[str], method: str | None, kind: str, item: dict[str, Any]) -> bool:
    """The MRTR detail faults: rewrite an answer in place (True when changed)."""
    result = item.get("result")
    asks = isinstance(result, dict) and result.get("resultType") == "input_required"
    if kind == "malformed" and "malformed-answers-accepted" in faults and (asks or "error" in item):
        item.pop("error", None)
        item["result"] = {"resultType": "complete", "content": [{"type": "text", "text": "accepted"}]}
        return True
    if kind == "several" and "extra-answers-refused" in faults and isinstance(result, dict):
        del item["result"]
        item["error"] = {"code": -32602, "message": "Invalid params: unexpected input responses"}
        return True
    if not asks or not isinstance(result, dict):
        return False
    if kind and "reasks-as-error" in faults:
        del item["result"]
        item["error"] = {"code": -32602, "message": "Invalid params: the input responses are incomplete"}
        return True
    if method == "prompts/get" and "mrtr-only-for-tools" in faults:
        item["result"] = {"resultType": "complete", "messages": []}
        return True
    changed = False
    if "no-request-state" in faults and "requestState" in result:
        del result["requestState"]
        changed = True
    requests = result.get("inputRequests")
    if isinstance(requests, dict) and "input-requests-rekeyed" in faults:
        result["inputRequests"] = {f"{key}-x": value for key, value in requests.items()}
        changed = True
    for request in requests.values() if isinstance(requests, dict) else ():
        if isinstance(request, dict) and "input-requests-as-elicitation" in faults:
            request["method"] = "elicitation/create"
            changed = True
    return changed


# -- the tasks detail faults (issue 26) ----------------------------------------------------------

_TERMINAL = ("completed", "failed", "cancelled")


class _TasksDetail:
    """The tasks detail faults, with what they remember of a connection's tasks."""

    def __init__(self, faults: set[str]) -> None:
        self.faults = faults
        self.task_ids: dict[Any, Any] = {}  # request id -> the taskId its params name
        self.ended: set[Any] = set()  # taskIds seen in a terminal state
        self.asked: dict[Any, dict[str, Any]] = {}  # taskId -> every input request listed so far
        self.answered: dict[Any, set[str]] = {}  # taskId -> the input keys answered

    def request(self, key: Any, item: dict[str, Any]) -> None:
        params = item.get("params")
        if self.faults and isinstance(params, dict) and "taskId" in params:
            self.task_ids[key] = params["taskId"]
            responses = params.get("inputResponses")
            if item.get("method") == "tasks/update" and isinstance(responses, dict):
                self.answered.setdefault(params["taskId"], set()).update(responses)

    def answer(self, method: str | None, item: dict[str, Any]) -> bool:
        if not self.faults or method is None:
            return False
        result, error, faults = item.get("result"), item.get("error"), self.faults
        task_id = self.task_ids.get(_key(item.get("id")))
        served = "tasks-removed-methods-served" in faults
        if method in ("tasks/result", "tasks/list") and isinstance(error, dict) and served:
            del item["error"]
            item["result"] = {"resultType": "complete"}
            return True
        if method == "tasks/cancel" and task_id in self.ended and "cancel-terminal-32602" in faults:
            item.pop("result", None)
            item["error"] = {"code": -32602, "message": "Invalid params: the task has ended"}
            return True
        if not isinstance(result, dict):
            return False
        if method == "tools/call":
            return self._call(result)
        if method == "tasks/update" and "update-ack-task-envelope" in faults:
            result["status"] = "working"
            return True
        return method == "tasks/get" and self._get(task_id, result)

    def _call(self, result: dict[str, Any]) -> bool:
        faults, changed = self.faults, False
        if result.get("resultType") == "task" and "legacy-task-fields" in faults:
            result.update(ttl=result.get("ttlMs"), pollInterval=result.get("pollIntervalMs", 1000))
            changed = True
        if result.get("resultType") == "complete" and "sync-results-carry-task-id" in faults:
            result["taskId"] = "conformance-sync"
            changed = True
        if result.get("resultType") == "complete" and "sync-result-untyped" in faults:
            del result["resultType"]
            changed = True
        return changed

    def _get(self, task_id: Any, result: dict[str, Any]) -> bool:
        faults, changed = self.faults, False
        status, inner = result.get("status"), result.get("result")
        if status in _TERMINAL:
            self.ended.add(task_id)
        if status == "completed" and isinstance(inner, dict):
            if inner.get("isError") is True and "tool-error-task-failed" in faults:
                del result["result"]
                result.update(status="failed", error={"code": -32603, "message": "the tool failed"})
                return True
            if "related-task-meta" in faults:
                meta = inner.setdefault("_meta", {})
                meta["io.modelcontextprotocol/related-task"] = {"taskId": task_id}
                changed = True
        if status == "failed" and "failed-task-with-result" in faults:
            result["result"] = {"content": [], "isError": True}
            changed = True
        requests = result.get("inputRequests")
        if status == "input_required" and isinstance(requests, dict):
            asked = self.asked.setdefault(task_id, {})
            asked.update(requests)
            kept = {
                k: v for k, v in asked.items() if k not in requests and k in self.answered.get(task_id, ())
            }
            if kept and "answered-key-kept" in faults:
                requests.update(kept)
                changed = True
        return changed


# -- the skills detail faults (issue 26) ---------------------------------------------------------

_SKILLS_EXTENSION = "io.modelcontextprotocol/skills"


def _skills_detail_fault(faults: set[str], method: str | None, item: dict[str, Any]) -> bool:
    """The skills detail faults: rewrite an answer in place (True when changed)."""
    result = item.get("result")
    if method == "resources/directory/read" and "skills-no-directory-read" in faults:
        item.pop("result", None)
        item["error"] = {"code": -32601, "message": "Method not found: resources/directory/read"}
        return True
    if not isinstance(result, dict):
        return False
    changed = False
    caps = result.get("capabilities")
    extensions = caps.get("extensions") if isinstance(caps, dict) else None
    if (
        "skills-settings-envelope" in faults
        and isinstance(extensions, dict)
        and _SKILLS_EXTENSION in extensions
    ):
        extensions[_SKILLS_EXTENSION] = {"config": extensions[_SKILLS_EXTENSION]}
        changed = True
    if method in ("skills/list", "skills/get") and "skills-no-cache-attributes" in faults:
        changed = (
            bool(result.pop("ttlMs", None) is not None) | bool(result.pop("cacheScope", None)) or changed
        )
    entries = result.get("skills") if method == "skills/list" else None
    for entry in entries if isinstance(entries, list) else []:
        if not isinstance(entry, dict):
            continue
        frontmatter = entry.get("frontmatter")
        if "skills-manifest-without-self" in faults and isinstance(entry.get("resources"), list):
            entry["resources"] = [
                f
                for f in entry["resources"]
                if not (isinstance(f, dict) and f.get("uri") == entry.get("uri"))
            ]
            changed = True
        if "skills-reserved-metadata" in faults and isinstance(frontmatter, dict):
            frontmatter["metadata"] = {"io.modelcontextprotocol/origin": "conformance"}
            changed = True
        if "skills-frontmatter-extra" in faults and isinstance(frontmatter, dict):
            frontmatter["x-listed-only"] = "not in the SKILL.md"
            changed = True
    resources = result.get("resources") if method == "resources/list" else None
    for resource in resources if isinstance(resources, list) and "skills-md-plain" in faults else []:
        if isinstance(resource, dict) and str(resource.get("uri", "")).endswith("/SKILL.md"):
            resource["mimeType"] = "text/plain"
            changed = True
    return changed


# -- the HTTP header faults (issue 26) ----------------------------------------------------------

_B64_OPEN, _B64_CLOSE = b"=?base64?", b"?="


def base64_fault(value: bytes, faults: set[str]) -> bytes:
    """base64-not-decoded / lenient-base64: an ``=?base64?...?=`` header value as the server gets it."""
    if not value.startswith(_B64_OPEN):
        return value
    import base64
    import binascii
    import re

    inner = (
        value[len(_B64_OPEN) : -len(_B64_CLOSE)] if value.endswith(_B64_CLOSE) else value[len(_B64_OPEN) :]
    )
    if "base64-not-decoded" in faults:
        return inner
    if "lenient-base64" in faults:
        try:
            base64.b64decode(inner, validate=True)
        except binascii.Error:
            kept = re.sub(rb"[^A-Za-z0-9+/]", b"", inner)
            decoded = base64.b64decode(kept + b"=" * (-len(kept) % 4))
            return _B64_OPEN + base64.b64encode(decoded) + _B64_CLOSE
    return value


async def routing_fault(scope: Any, receive: Any, faults: set[str]) -> tuple[Any, Any]:
    """routing-headers-unchecked / task-name-header-refused: the request's body is read whole, its
    routing headers rewritten from (or against) it, and the body handed on unchanged."""
    chunks: list[bytes] = []
    while True:
        message = await receive()
        chunks.append(bytes(message.get("body", b"")))
        if message["type"] != "http.request" or not message.get("more_body"):
            break
    body = b"".join(chunks)
    try:
        request = orjson.loads(body) if body else None
    except orjson.JSONDecodeError:
        request = None
    method = request.get("method") if isinstance(request, dict) else None
    params = request.get("params") if isinstance(request, dict) else None
    headers = [(k, v) for k, v in scope["headers"] if bytes(k).lower() not in (b"mcp-method", b"mcp-name")]
    kept = [(k, v) for k, v in scope["headers"] if bytes(k).lower() in (b"mcp-method", b"mcp-name")]
    if isinstance(method, str) and "routing-headers-unchecked" in faults:
        kept = [(b"mcp-method", method.encode())]
        name = (
            params.get("name") or params.get("taskId") or params.get("uri")
            if isinstance(params, dict)
            else None
        )
        if isinstance(name, str):
            kept.append((b"mcp-name", name.encode()))
    elif isinstance(method, str) and method.startswith("tasks/") and "task-name-header-refused" in faults:
        kept = [(k, v + b"-garbled" if bytes(k).lower() == b"mcp-name" else v) for k, v in kept]
    sent = False

    async def replay() -> Any:
        nonlocal sent
        if sent:
            return await receive()
        sent = True
        return {"type": "http.request", "body": body, "more_body": False}

    return {**scope, "headers": headers + kept}, replay
