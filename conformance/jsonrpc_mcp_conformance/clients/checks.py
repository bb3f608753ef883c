"""The judges of the client requirements: each reads one scenario run's recorded traffic.

A requirement in ``spec/client`` names its judge (``check``) and the judge's ``params``. A judge
returns an :class:`Outcome`: ``pass``, ``fail`` with the problems found, or ``skip`` when the run
gave it nothing to judge (a client that answered no elicitation cannot be judged on how it
answers one, though the scenario's own requirement fails it).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from ..fixtures import LEGACY_REVISIONS
from .recording import CLIENT, SERVER, Event

__all__ = ["CHECKS", "Outcome", "ScenarioRun"]

PROTOCOL_VERSION_KEY = "io.modelcontextprotocol/protocolVersion"
CAPABILITIES_KEY = "io.modelcontextprotocol/clientCapabilities"
CLIENT_INFO_KEY = "io.modelcontextprotocol/clientInfo"


@dataclass
class ScenarioRun:
    """One run of the client command: the scenario, the revision and transport, what was recorded,
    and how the client ended (``exit_code`` None: killed after the time allowed)."""

    scenario: str
    revision: str
    transport: str
    events: list[Event]
    exit_code: int | None = None
    stderr_tail: list[str] = field(default_factory=list)
    seconds: float = 0.0
    auth: Any = None  # the auth/* scenarios: what the authorization side saw (authresource.AuthSide)

    @property
    def modern(self) -> bool:
        return self.revision not in LEGACY_REVISIONS

    def client_messages(self) -> list[tuple[Event, dict[str, Any]]]:
        return [(e, m) for e in self.events if e.source == CLIENT for m in e.messages()]

    def client_requests(self) -> list[tuple[Event, dict[str, Any]]]:
        return [(e, m) for e, m in self.client_messages() if "method" in m and "id" in m]

    def server_messages(self) -> list[tuple[Event, dict[str, Any]]]:
        return [(e, m) for e in self.events if e.source == SERVER for m in e.messages()]

    def initialize(self) -> tuple[Event, dict[str, Any]] | None:
        for event, message in self.client_requests():
            if message.get("method") == "initialize":
                return event, message
        return None

    def initialize_answer(self) -> tuple[int, dict[str, Any]] | None:
        """The index (in ``events``) and message of the server's answer to initialize."""
        found = self.initialize()
        if found is None:
            return None
        wanted = found[1].get("id")
        for index, event in enumerate(self.events):
            if event.source == SERVER:
                for message in event.messages():
                    if "method" not in message and message.get("id") == wanted:
                        return index, message
        return None

    def answers_to(self, method: str) -> list[tuple[str, Any]]:
        """The client's answers to the server's ``method`` requests: ("result" | "error", value),
        in the handshake era its JSON-RPC responses, in 2026-07-28 the ``inputResponses`` of its
        retried requests (for the input requests of that method)."""
        asked: dict[Any, None] = {}
        keys: set[str] = set()
        for _, message in self.server_messages():
            if message.get("method") == method and "id" in message:
                asked[message["id"]] = None
            result = message.get("result")
            requests = result.get("inputRequests") if isinstance(result, dict) else None
            if isinstance(requests, dict):
                keys.update(
                    k for k, v in requests.items() if isinstance(v, dict) and v.get("method") == method
                )
        answers: list[tuple[str, Any]] = []
        for _, message in self.client_messages():
            if "method" not in message and message.get("id") in asked:
                answers.append(
                    ("error", message["error"]) if "error" in message else ("result", message.get("result"))
                )
            params = message.get("params")
            responses = params.get("inputResponses") if isinstance(params, dict) else None
            if isinstance(responses, dict):
                answers.extend(("result", v) for k, v in responses.items() if k in keys)
        return answers

    def declared_capabilities(self) -> list[dict[str, Any]]:
        """What the client declared: initialize's capabilities, or every request's ``_meta`` ones."""
        found = self.initialize()
        if found is not None:
            params = found[1].get("params") or {}
            return [params.get("capabilities") or {}]
        declared = []
        for _, message in self.client_requests():
            meta = (
                (message.get("params") or {}).get("_meta")
                if isinstance(message.get("params"), dict)
                else None
            )
            if isinstance(meta, dict) and isinstance(meta.get(CAPABILITIES_KEY), dict):
                declared.append(meta[CAPABILITIES_KEY])
        return declared


@dataclass
class Outcome:
    status: str  # pass | fail | skip
    problems: list[str] = field(default_factory=list)
    note: str = ""
    evidence: list[Event] = field(default_factory=list)  # the events the verdict rests on


def _pass(note: str = "") -> Outcome:
    return Outcome("pass", note=note)


def _skip(note: str) -> Outcome:
    return Outcome("skip", note=note)


def _fail(*problems: str, evidence: Iterable[Event] = ()) -> Outcome:
    return Outcome("fail", list(problems), evidence=list(evidence))


NOTHING_SENT = "the client sent nothing to the scenario server"
Check = Callable[[ScenarioRun, dict[str, Any]], Outcome]
CHECKS: dict[str, Check] = {}


def check(name: str) -> Callable[[Check], Check]:
    def register(function: Check) -> Check:
        CHECKS[name] = function
        return function

    return register


# -- the handshake -----------------------------------------------------------------------------------
@check("initialize-first")
def initialize_first(run: ScenarioRun, params: dict[str, Any]) -> Outcome:
    messages = run.client_messages()
    if not messages:
        return _fail(NOTHING_SENT)
    event, first = messages[0]
    if first.get("method") != "initialize" or "id" not in first:
        return _fail(
            f"the client's first message is {first.get('method') or 'a response'}, not initialize",
            evidence=[event],
        )
    return _pass()


@check("initialize-version")
def initialize_version(run: ScenarioRun, params: dict[str, Any]) -> Outcome:
    found = run.initialize()
    if found is None:
        return _fail("the client sent no initialize request" if run.events else NOTHING_SENT)
    event, message = found
    version = (message.get("params") or {}).get("protocolVersion")
    if not isinstance(version, str) or version not in LEGACY_REVISIONS:
        return _fail(
            f"initialize asks for protocolVersion {version!r}, no handshake revision of MCP", evidence=[event]
        )
    if version != run.revision:
        return _pass(f"asked for {version} (the harness asked the client for {run.revision})")
    return _pass()


@check("initialize-client-info")
def initialize_client_info(run: ScenarioRun, params: dict[str, Any]) -> Outcome:
    found = run.initialize()
    if found is None:
        return _fail("the client sent no initialize request" if run.events else NOTHING_SENT)
    event, message = found
    info = (message.get("params") or {}).get("clientInfo")
    if (
        not isinstance(info, dict)
        or not isinstance(info.get("name"), str)
        or not isinstance(info.get("version"), str)
    ):
        return _fail(
            f"initialize's clientInfo is {info!r}: it needs a name and a version (strings)", evidence=[event]
        )
    return _pass()


@check("initialized-sent")
def initialized_sent(run: ScenarioRun, params: dict[str, Any]) -> Outcome:
    answer = run.initialize_answer()
    if answer is None:
        return _skip("no initialize request was answered")
    index, _ = answer
    for event in run.events[index + 1 :]:
        if event.source != CLIENT:
            continue
        for message in event.messages():
            if message.get("method") == "notifications/initialized":
                return _pass()
            if "id" in message and message.get("method") not in (None, "ping"):
                return _fail(
                    f"the client sent {message['method']} before notifications/initialized", evidence=[event]
                )
    return _fail("the client never sent notifications/initialized")


@check("no-requests-before-initialize-answer")
def no_requests_before_answer(run: ScenarioRun, params: dict[str, Any]) -> Outcome:
    answer = run.initialize_answer()
    if answer is None:
        return _skip("no initialize request was answered")
    early = [
        (event, message)
        for event in run.events[: answer[0]]
        if event.source == CLIENT
        for message in event.messages()
        if "id" in message and message.get("method") not in (None, "ping", "initialize")
    ]
    if early:
        return _fail(
            *(f"{m['method']} sent before initialize was answered" for _, m in early),
            evidence=[e for e, _ in early],
        )
    return _pass()


# -- JSON-RPC ----------------------------------------------------------------------------------------
@check("request-ids")
def request_ids(run: ScenarioRun, params: dict[str, Any]) -> Outcome:
    requests = run.client_requests()
    if not requests:
        return _fail(NOTHING_SENT) if not run.events else _skip("the client sent no request")
    problems, evidence, seen = [], [], set()
    handshakes = _handshakes(run)
    for event, message in requests:
        rid = message["id"]
        # over HTTP each initialize begins a session of its own (the one its answer names)
        session = event.headers.get("mcp-session-id") or handshakes.get(event.exchange, (None, None))[0]
        if rid is None or isinstance(rid, bool) or not isinstance(rid, (str, int)):
            problems.append(f"{message['method']} has id {rid!r}: a string or an integer is needed")
            evidence.append(event)
        elif params.get("unique") and (session, type(rid).__name__, rid) in seen:
            problems.append(f"{message['method']} reuses request id {rid!r}")
            evidence.append(event)
        seen.add((session, type(rid).__name__, rid))
    return _fail(*problems, evidence=evidence) if problems else _pass()


# -- Streamable HTTP ---------------------------------------------------------------------------------
def _posts(run: ScenarioRun) -> list[Event]:
    return [e for e in run.events if e.source == CLIENT and e.http.startswith("POST")]


@check("http-accept")
def http_accept(run: ScenarioRun, params: dict[str, Any]) -> Outcome:
    posts = _posts(run)
    if not posts:
        return _fail(NOTHING_SENT)
    bad = [
        e
        for e in posts
        if not {"application/json", "text/event-stream"}
        <= {part.split(";")[0].strip().lower() for part in e.headers.get("accept", "").split(",")}
    ]
    if bad:
        return _fail(
            *(f"a POST ({e.method or 'response'}) has Accept: {e.headers.get('accept')!r}" for e in bad[:5]),
            evidence=bad[:5],
        )
    return _pass()


def _to_endpoint(run: ScenarioRun, event: Event) -> bool:
    """Whether an HTTP request went to the MCP endpoint (the path initialize was POSTed to), not
    elsewhere on the scenario server (a URL the client was given, fetched)."""
    found = run.initialize()
    return found is None or event.http.split(" ")[-1] == found[0].http.split(" ")[-1]


def _handshakes(run: ScenarioRun) -> dict[int, tuple[str | None, Any]]:
    """Over HTTP, each answered initialize by its exchange: the session id and the revision its
    answer gave. A client may begin a new session (it initializes again, as after an
    authorization): each session is judged on its own."""
    if run.transport != "http":
        return {}
    asked = {e.exchange for e in run.events if e.source == CLIENT and e.method == "initialize"}
    found: dict[int, tuple[str | None, Any]] = {}
    for event in run.events:
        if event.source == SERVER and event.exchange in asked:
            for message in event.messages():
                if isinstance(message.get("result"), dict):
                    found[event.exchange] = (
                        event.headers.get("mcp-session-id"),
                        message["result"].get("protocolVersion"),
                    )
    return found


def _after_handshake(run: ScenarioRun, start: int) -> list[Event]:
    """The client's HTTP requests to the MCP endpoint after exchange ``start``, but those beginning
    a new session (initialize)."""
    return [
        e
        for e in run.events
        if e.source == CLIENT and e.exchange > start and _to_endpoint(run, e) and e.method != "initialize"
    ]


@check("http-session-id")
def http_session_id(run: ScenarioRun, params: dict[str, Any]) -> Outcome:
    answer = run.initialize_answer()
    if answer is None:
        return _skip("no initialize request was answered")
    session = run.events[answer[0]].headers.get("mcp-session-id")
    if not session:
        return _skip("the scenario server gave no session id")
    later = _after_handshake(run, run.events[answer[0]].exchange)
    sessions = {sid for sid, _ in _handshakes(run).values() if sid} or {session}
    bad = [e for e in later if e.headers.get("mcp-session-id") not in sessions]
    if bad:
        return _fail(
            *(
                f"{e.http} ({e.method or 'response'}) carries Mcp-Session-Id "
                f"{e.headers.get('mcp-session-id')!r}, not the session's"
                for e in bad[:5]
            ),
            evidence=bad[:5],
        )
    return _pass() if later else _skip("the client sent nothing after initialize")


def _meta(message: dict[str, Any]) -> dict[str, Any] | None:
    params = message.get("params")
    meta = params.get("_meta") if isinstance(params, dict) else None
    return meta if isinstance(meta, dict) else None


@check("http-protocol-version-header")
def http_protocol_version_header(run: ScenarioRun, params: dict[str, Any]) -> Outcome:
    problems: list[str] = []
    evidence: list[Event] = []
    if not run.modern:
        answer = run.initialize_answer()
        if answer is None:
            return _skip("no initialize request was answered")
        negotiated = (answer[1].get("result") or {}).get("protocolVersion")
        versions = {version for _, version in _handshakes(run).values() if version} or {negotiated}
        later = _after_handshake(run, run.events[answer[0]].exchange)
        for event in later:
            value = event.headers.get("mcp-protocol-version")
            if value not in versions:
                problems.append(
                    f"{event.http} ({event.method or 'response'}) has MCP-Protocol-Version {value!r}, "
                    f"not the negotiated {negotiated!r}"
                )
                evidence.append(event)
        if not later:
            return _skip("the client sent nothing after initialize")
    else:
        posts = _posts(run)
        if not posts:
            return _fail(NOTHING_SENT)
        for event in posts:
            value = event.headers.get("mcp-protocol-version")
            metas = [_meta(m) for m in event.messages() if "method" in m]
            stated = {m.get(PROTOCOL_VERSION_KEY) for m in metas if m is not None}
            if value is None:
                problems.append(f"a POST ({event.method or 'response'}) has no MCP-Protocol-Version header")
                evidence.append(event)
            elif stated and stated != {value}:
                problems.append(
                    f"MCP-Protocol-Version {value!r} does not match _meta's {sorted(map(str, stated))}"
                )
                evidence.append(event)
    return _fail(*problems[:5], evidence=evidence[:5]) if problems else _pass()


NAMED = {"tools/call": "name", "prompts/get": "name", "resources/read": "uri"}


@check("http-standard-headers")
def http_standard_headers(run: ScenarioRun, params: dict[str, Any]) -> Outcome:
    """2026-07-28: every POST of a request or notification has Mcp-Method (its method), and
    tools/call, prompts/get and resources/read have Mcp-Name (the name or URI)."""
    posts = _posts(run)
    if not posts:
        return _fail(NOTHING_SENT)
    problems, evidence = [], []
    for event in posts:
        message = event.message
        if not isinstance(message, dict) or "method" not in message:
            continue
        method = message["method"]
        if event.headers.get("mcp-method") != method:
            problems.append(f"{method}: Mcp-Method is {event.headers.get('mcp-method')!r}")
            evidence.append(event)
        key = NAMED.get(method)
        if key is not None:
            wanted = (message.get("params") or {}).get(key)
            if isinstance(wanted, str) and event.headers.get("mcp-name") != wanted:
                problems.append(f"{method}: Mcp-Name is {event.headers.get('mcp-name')!r}, not {wanted!r}")
                evidence.append(event)
    return _fail(*problems[:5], evidence=evidence[:5]) if problems else _pass()


def _plain(text: str) -> bool:
    return text.isascii() and text.isprintable() and text == text.strip()


@check("param-headers")
def param_headers(run: ScenarioRun, params: dict[str, Any]) -> Outcome:
    """Every tools/call names the x-mcp-header parameters of its tool (as tools/list gave them) in
    Mcp-Param-* headers: the value's text, Base64 (``=?base64?...?=``) when it is not plain ASCII,
    no header for null."""
    import base64
    import binascii

    declared: dict[str, dict[str, str]] = {}  # tool -> parameter -> header name
    for _, message in run.server_messages():
        result = message.get("result")
        for tool in (result.get("tools") or []) if isinstance(result, dict) else []:
            schema = tool.get("inputSchema") if isinstance(tool, dict) else None
            properties = schema.get("properties") if isinstance(schema, dict) else None
            declared[str(tool.get("name"))] = {
                name: spec["x-mcp-header"]
                for name, spec in (properties or {}).items()
                if isinstance(spec, dict) and isinstance(spec.get("x-mcp-header"), str)
            }
    calls = [(e, m) for e, m in _calls(run) if declared.get(str(_tool_name(m)))]
    if not calls:
        return (
            _fail(NOTHING_SENT)
            if not run.events
            else _fail("the client called no tool with x-mcp-header parameters")
        )
    problems, evidence = [], []
    for event, message in calls:
        arguments = (message.get("params") or {}).get("arguments") or {}
        for parameter, header in declared[str(_tool_name(message))].items():
            if parameter not in arguments:
                continue
            value, sent = arguments[parameter], event.headers.get(f"mcp-param-{header.lower()}")
            if value is None:
                if sent is not None:
                    problems.append(f"Mcp-Param-{header} sent ({sent!r}) for a null {parameter}")
                    evidence.append(event)
                continue
            text = ("true" if value else "false") if isinstance(value, bool) else str(value)
            if sent is None:
                problems.append(f"no Mcp-Param-{header} header for {parameter}={value!r}")
                evidence.append(event)
                continue
            if sent.startswith("=?base64?") and sent.endswith("?="):
                try:
                    decoded = base64.b64decode(sent[9:-2], validate=True).decode("utf-8")
                except (binascii.Error, UnicodeDecodeError):
                    decoded = None
                if decoded != text:
                    problems.append(f"Mcp-Param-{header} {sent!r} decodes to {decoded!r}, not {text!r}")
                    evidence.append(event)
            elif not _plain(text) or sent != text:
                why = "must be Base64 (the value is not plain ASCII)" if not _plain(text) else f"not {text!r}"
                problems.append(f"Mcp-Param-{header} is {sent!r}: {why}")
                evidence.append(event)
    return _fail(*problems[:6], evidence=evidence[:6]) if problems else _pass()


# -- 2026-07-28 envelopes ----------------------------------------------------------------------------
@check("meta-envelope")
def meta_envelope(run: ScenarioRun, params: dict[str, Any]) -> Outcome:
    requests = run.client_requests()
    if not requests:
        return _fail(NOTHING_SENT)
    wanted = params.get("keys", [PROTOCOL_VERSION_KEY, CAPABILITIES_KEY])
    problems, evidence = [], []
    for event, message in requests:
        meta = _meta(message) or {}
        missing = [k for k in wanted if k not in meta]
        if (
            PROTOCOL_VERSION_KEY in wanted
            and PROTOCOL_VERSION_KEY in meta
            and meta[PROTOCOL_VERSION_KEY] != run.revision
        ):
            problems.append(
                f"{message['method']}: _meta names protocol version {meta[PROTOCOL_VERSION_KEY]!r}, "
                f"not {run.revision}"
            )
            evidence.append(event)
        if CLIENT_INFO_KEY in wanted and CLIENT_INFO_KEY in meta:
            info = meta[CLIENT_INFO_KEY]
            if not isinstance(info, dict) or not all(
                isinstance(info.get(k), str) for k in ("name", "version")
            ):
                problems.append(f"{message['method']}: _meta's clientInfo {info!r} lacks a name or a version")
                evidence.append(event)
        if missing:
            problems.append(f"{message['method']}: _meta lacks {', '.join(missing)}")
            evidence.append(event)
    return _fail(*problems[:5], evidence=evidence[:5]) if problems else _pass()


@check("version-retry")
def version_retry(run: ScenarioRun, params: dict[str, Any]) -> Outcome:
    """After a -32022 refusal, the client's next request names a version of ``data.supported``."""
    for index, event in enumerate(run.events):
        if event.source != SERVER:
            continue
        for message in event.messages():
            error = message.get("error")
            if isinstance(error, dict) and error.get("code") == -32022:
                data = error.get("data")
                supported = (data.get("supported") if isinstance(data, dict) else None) or []
                later = [
                    (e, m)
                    for e in run.events[index + 1 :]
                    if e.source == CLIENT
                    for m in e.messages()
                    if "method" in m and "id" in m
                ]
                if not later:
                    return _fail(
                        f"the client did not retry after -32022 (supported: {supported})", evidence=[event]
                    )
                retry_event, retry = later[0]
                version = (_meta(retry) or {}).get(PROTOCOL_VERSION_KEY)
                header = retry_event.headers.get("mcp-protocol-version") if retry_event.http else version
                if version not in supported or header != version:
                    return _fail(
                        f"the retry ({retry.get('method')}) names version {version!r} (header {header!r}), "
                        f"not one of {supported}",
                        evidence=[event, retry_event],
                    )
                return _pass()
    return _skip("the scenario server refused no request with -32022")


# -- tools -------------------------------------------------------------------------------------------
def _calls(run: ScenarioRun) -> list[tuple[Event, dict[str, Any]]]:
    return [(e, m) for e, m in run.client_requests() if m.get("method") == "tools/call"]


def _tool_name(message: dict[str, Any]) -> Any:
    params = message.get("params")
    return params.get("name") if isinstance(params, dict) else None


@check("tool-called")
def tool_called(run: ScenarioRun, params: dict[str, Any]) -> Outcome:
    name = params["tool"]
    calls = [(e, m) for e, m in _calls(run) if _tool_name(m) == name]
    if not calls:
        if not run.events:
            return _fail(NOTHING_SENT)
        return _fail(f"the client never called the tool {name!r}")
    kinds = {"number": (int, float), "string": (str,), "boolean": (bool,)}
    for _event, message in calls:
        arguments = (message.get("params") or {}).get("arguments") or {}
        wrong = [
            key
            for key, kind in (params.get("arguments") or {}).items()
            if not isinstance(arguments.get(key), kinds[kind])
            or isinstance(arguments.get(key), bool) != (kind == "boolean")
        ]
        if not wrong:
            return _pass()
    return _fail(
        f"{name!r} was called with arguments {arguments!r}, not the ones its inputSchema asks for",
        evidence=[calls[-1][0]],
    )


@check("invalid-tools-excluded")
def invalid_tools_excluded(run: ScenarioRun, params: dict[str, Any]) -> Outcome:
    if not any(m.get("method") == "tools/list" for _, m in run.client_requests()):
        return _fail(NOTHING_SENT) if not run.events else _fail("the client never listed the tools")
    invalid = set(params["tools"])
    called = [(e, m) for e, m in _calls(run) if _tool_name(m) in invalid]
    if called:
        return _fail(
            *(
                f"the client called {_tool_name(m)!r}, whose x-mcp-header declaration is invalid"
                for _, m in called
            ),
            evidence=[e for e, _ in called],
        )
    return _pass()


@check("no-network-deref")
def no_network_deref(run: ScenarioRun, params: dict[str, Any]) -> Outcome:
    """The client listed the tools and fetched nothing under ``params["path"]`` (the canary)."""
    if not any(m.get("method") == "tools/list" for _, m in run.client_requests()):
        return _fail(NOTHING_SENT) if not run.events else _fail("the client never listed the tools")
    fetched = [
        e for e in run.events if e.source == CLIENT and e.http.split(" ")[-1].startswith(params["path"])
    ]
    if fetched:
        return _fail(
            f"the client fetched the network $ref of a tool's inputSchema ({fetched[0].http})",
            evidence=fetched[:3],
        )
    return _pass()
