"""Running fixtures against a target, revision by revision, and judging each requirement."""

from __future__ import annotations

import contextlib
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import orjson

from .fixtures import LEGACY_REVISIONS, MODERN_REVISIONS, Fixture, Spec
from .match import _short, match, select
from .targets import Connection, Target

__all__ = ["Options", "RevisionRun", "Run", "Verdict", "run_conformance"]

PASS, FAIL, SKIP, ERROR = "pass", "fail", "skip", "error"
_OMIT = object()
CLIENT_INFO = {"name": "jsonrpc-mcp-conformance", "version": "1"}


@dataclass
class Verdict:
    id: str
    revision: str
    transport: str
    status: str
    fixture: Fixture
    problems: list[str] = field(default_factory=list)
    expected: str = ""
    actual: str = ""
    note: str = ""
    seconds: float = 0.0
    expected_failure: bool = False  # set by the baseline

    @property
    def key(self) -> str:
        return f"{self.id}@{self.revision}/{self.transport}"


@dataclass
class Options:
    revisions: Sequence[str] | None = None  # None: detect
    timeout: float = 5.0
    quiet_period: float = 0.3  # how long "nothing within T" waits unless the fixture says otherwise
    schema_dir: Path | None = None
    exit_timeout: float = 3.0


@dataclass
class RevisionRun:
    revision: str
    supported: bool
    detail: str = ""


@dataclass
class Run:
    target: str
    transport: str
    verdicts: list[Verdict]
    revisions: list[RevisionRun]
    seconds: float
    stderr_tail: list[str] = field(default_factory=list)

    def failures(self) -> list[Verdict]:
        return [v for v in self.verdicts if v.status in (FAIL, ERROR) and not v.expected_failure]


class Abort(Exception):
    """The fixture cannot go on (its verdict is already decided)."""

    def __init__(self, status: str, problems: list[str], expected: str = "", actual: str = "") -> None:
        super().__init__(problems[0] if problems else status)
        self.status = status
        self.problems = problems
        self.expected = expected
        self.actual = actual


# --------------------------------------------------------------------------------------- frames


@dataclass
class Seen:
    """One frame the server sent, parsed."""

    raw: bytes
    fixture: str
    value: Any = None
    parsed: bool = True


def _is_response(value: Any) -> bool:
    if isinstance(value, list):
        return True
    return isinstance(value, dict) and "method" not in value and ("result" in value or "error" in value)


def _dump(value: Any) -> bytes:
    return orjson.dumps(value)


class Channel:
    """A connection plus what the harness knows about it: the frames seen and the ids it sent."""

    def __init__(self, conn: Connection, log: list[Seen], options: Options) -> None:
        self.conn = conn
        self.log = log
        self.options = options
        self.fixture = ""
        self.sent_ids: list[Any] = []
        self.probe_counter = 0
        self._partial = b""

    def _note_sent(self, data: bytes) -> None:
        """Remember the ids of requests in what was written (lines may be split across writes)."""
        *lines, self._partial = (self._partial + data).split(b"\n")
        for line in lines:
            try:
                value = orjson.loads(line)
            except orjson.JSONDecodeError:
                continue
            for item in value if isinstance(value, list) else [value]:
                if isinstance(item, dict) and "id" in item and "method" in item:
                    self.sent_ids.append(item["id"])

    async def send(self, frame: bytes) -> None:
        self._note_sent(frame + b"\n")
        try:
            await self.conn.send(frame)
        except EOFError as exc:
            raise Abort(FAIL, [f"could not send: {exc}"]) from None

    async def write_raw(self, data: bytes) -> None:
        write = getattr(self.conn, "write_raw", None)
        if write is None:
            raise Abort(SKIP, ["not applicable: this transport carries whole frames only"])
        self._note_sent(data)
        try:
            await write(data)
        except (OSError, anyio.BrokenResourceError, anyio.ClosedResourceError) as exc:
            raise Abort(FAIL, [f"could not send: {exc}"]) from None

    async def next(self, timeout: float) -> Seen | None:
        frame = await self.conn.receive(timeout)
        if frame is None:
            return None
        seen = Seen(frame, self.fixture)
        try:
            seen.value = orjson.loads(frame)
        except orjson.JSONDecodeError:
            seen.parsed = False
        self.log.append(seen)
        return seen

    async def next_response(self, timeout: float) -> Any:
        """The next response (or batch answer), skipping notifications, server requests and junk."""
        deadline = anyio.current_time() + timeout
        while True:
            remaining = deadline - anyio.current_time()
            try:
                seen = await self.next(max(remaining, 0))
            except EOFError as exc:
                raise Abort(FAIL, [f"connection closed while waiting for a response: {exc}"]) from None
            if seen is None:
                return _OMIT
            if seen.parsed and _is_response(seen.value):
                return seen.value

    async def probe(self, variables: dict[str, Any]) -> tuple[Any, list[Any]]:
        """Send a harmless request; return its response and every other response that came first."""
        self.probe_counter += 1
        pid = f"conformance-probe-{self.probe_counter}"
        request: dict[str, Any] = {"jsonrpc": "2.0", "id": pid, "method": variables["probe_method"]}
        params = variables["probe_params"]
        if params is not _OMIT:
            request["params"] = params
        await self.send(_dump(request))
        before: list[Any] = []
        while True:
            answer = await self.next_response(self.options.timeout)
            if answer is _OMIT:
                raise Abort(FAIL, [f"no answer to the follow-up {request['method']} ({pid})"])
            if isinstance(answer, dict) and answer.get("id") == pid:
                return answer, before
            before.append(answer)


# ------------------------------------------------------------------------------------- templating


def substitute(value: Any, variables: dict[str, Any]) -> Any:
    if isinstance(value, str):
        if value.startswith("${") and value.endswith("}") and value.count("${") == 1:
            name = value[2:-1]
            if name not in variables:
                raise Abort(SKIP, [f"not applicable: ${{{name}}} is not known for this server"])
            return variables[name]
        if "${" in value:
            for name, sub in variables.items():
                if isinstance(sub, (str, int)) and not isinstance(sub, bool):
                    value = value.replace("${" + name + "}", str(sub))
        return value
    if isinstance(value, list):
        return [v for v in (substitute(v, variables) for v in value) if v is not _OMIT]
    if isinstance(value, dict):
        out = {}
        for key, sub in value.items():
            new = substitute(sub, variables)
            if new is not _OMIT:
                out[key] = new
        return out
    return value


def base_variables(revision: str) -> dict[str, Any]:
    modern = revision in MODERN_REVISIONS
    meta = (
        {
            "io.modelcontextprotocol/protocolVersion": revision,
            "io.modelcontextprotocol/clientCapabilities": {},
            "io.modelcontextprotocol/clientInfo": CLIENT_INFO,
        }
        if modern
        else _OMIT
    )
    return {
        "revision": revision,
        "latest_legacy": LEGACY_REVISIONS[-1],
        "client_info": CLIENT_INFO,
        "meta": meta,
        "probe_method": "server/discover" if modern else "ping",
        "probe_params": {"_meta": meta} if modern else _OMIT,
    }


def initialize_request(revision: str, rid: Any = "conformance-init") -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": rid,
        "method": "initialize",
        "params": {"protocolVersion": revision, "capabilities": {}, "clientInfo": CLIENT_INFO},
    }


# ------------------------------------------------------------------------------------------ steps


async def _open_session(channel: Channel, revision: str, variables: dict[str, Any]) -> tuple[bool, str]:
    """Legacy: initialize + initialized. Modern: server/discover. Returns (supported, detail)."""
    timeout = channel.options.timeout
    if revision in MODERN_REVISIONS:
        request = {
            "jsonrpc": "2.0",
            "id": "conformance-discover",
            "method": "server/discover",
            "params": {"_meta": variables["meta"]},
        }
        await channel.send(_dump(request))
        answer = await channel.next_response(timeout)
        if not isinstance(answer, dict) or not isinstance(answer.get("result"), dict):
            return False, f"server/discover answered {_short(answer) if answer is not _OMIT else 'nothing'}"
        result = answer["result"]
        variables["capabilities"] = result.get("capabilities", {})
        versions = result.get("supportedVersions", [])
        return revision in versions, f"supportedVersions {versions}"
    await channel.send(_dump(initialize_request(revision)))
    answer = await channel.next_response(timeout)
    if not isinstance(answer, dict) or not isinstance(answer.get("result"), dict):
        return False, f"initialize answered {_short(answer) if answer is not _OMIT else 'nothing'}"
    result = answer["result"]
    variables["capabilities"] = result.get("capabilities", {})
    variables["server_info"] = result.get("serverInfo", {})
    await channel.send(_dump({"jsonrpc": "2.0", "method": "notifications/initialized"}))
    await channel.probe(variables)  # anything stray the handshake caused is drained (invariants judge it)
    negotiated = result.get("protocolVersion")
    return negotiated == revision, f"initialize answered protocolVersion {negotiated!r}"


async def _run_steps(fixture: Fixture, channel: Channel, variables: dict[str, Any], revision: str) -> None:
    options = channel.options
    for step in fixture.steps:
        timeout = float(step.get("timeout", options.timeout))
        if "send" in step:
            await channel.send(_dump(substitute(step["send"], variables)))
        elif "send_raw" in step:
            data = str(substitute(step["send_raw"], variables)).encode("utf-8")
            if step.get("newline", True):
                await channel.send(data)
            else:  # part of a line: only byte-stream transports can say this
                await channel.write_raw(data)
        elif "handshake" in step:
            await channel.send(_dump(initialize_request(revision)))
            answer = await channel.next_response(timeout)
            if not isinstance(answer, dict) or "result" not in answer:
                raise Abort(FAIL, ["the handshake failed"], "an initialize result", _short(answer))
            if step["handshake"].get("initialized", True):
                await channel.send(_dump({"jsonrpc": "2.0", "method": "notifications/initialized"}))
        elif "expect" in step:
            pattern = substitute(step["expect"], variables)
            answer = await channel.next_response(timeout)
            if answer is _OMIT:
                raise Abort(FAIL, [f"no response within {timeout:g} s"], _short(pattern, 400), "nothing")
            problems = match(answer, pattern, variables)
            if problems:
                raise Abort(FAIL, problems, _short(pattern, 400), _short(answer, 400))
            for name, path in step.get("capture", {}).items():
                try:
                    variables[name] = select(answer, path)
                except KeyError:
                    raise Abort(SKIP, [f"not applicable: the server's answer has no {path}"]) from None
        elif "expect_no_response" in step:
            answer, before = await channel.probe(variables)
            if before:
                raise Abort(
                    FAIL,
                    [f"a response arrived where none may: {_short(before[0])}"],
                    "no response (the follow-up request is answered first)",
                    _short(before[0], 400),
                )
        elif "expect_nothing" in step:
            within = float(step["expect_nothing"].get("within", options.quiet_period))
            try:
                seen = await channel.next(within)
            except EOFError:
                seen = None
            if seen is not None:
                raise Abort(
                    FAIL, [f"the server sent something within {within:g} s"], "nothing", _short(seen.raw)
                )
        elif "close_input" in step:
            await channel.conn.close_input()
        elif "expect_exit" in step:
            within = float(step["expect_exit"].get("within", options.exit_timeout))
            if not await channel.conn.wait_exit(within):
                raise Abort(
                    FAIL, [f"still running {within:g} s after its input was closed"], "exit", "running"
                )
        elif "paginate" in step:
            await _paginate(step["paginate"], channel, variables, timeout)
        elif "http" in step:
            await _http_step(step["http"], channel, variables, timeout)
        else:
            raise Abort(ERROR, [f"unknown step {sorted(step)}"])


async def _paginate(
    spec: dict[str, Any], channel: Channel, variables: dict[str, Any], timeout: float
) -> None:
    seen: list[Any] = []
    cursor: Any = _OMIT
    for page in range(int(spec.get("max_pages", 100))):
        params: dict[str, Any] = {}
        if variables["meta"] is not _OMIT:
            params["_meta"] = variables["meta"]
        if cursor is not _OMIT:
            params["cursor"] = cursor
        rid = f"conformance-page-{page}"
        await channel.send(_dump({"jsonrpc": "2.0", "id": rid, "method": spec["method"], "params": params}))
        answer = await channel.next_response(timeout)
        result = answer.get("result") if isinstance(answer, dict) else None
        if not isinstance(result, dict) or not isinstance(result.get(spec["items"]), list):
            raise Abort(
                FAIL, [f"page {page} is not a {spec['method']} result"], spec["items"], _short(answer)
            )
        seen.extend(result[spec["items"]])
        if "nextCursor" not in result:
            break
        cursor = result["nextCursor"]
    else:
        raise Abort(FAIL, [f"still a nextCursor after {spec.get('max_pages', 100)} pages"])
    key = spec.get("unique")
    if key:
        names = [item.get(key) for item in seen if isinstance(item, dict)]
        duplicates = sorted({str(n) for n in names if names.count(n) > 1})
        if duplicates:
            raise Abort(FAIL, [f"items listed more than once across pages: {duplicates}"])
    if "each" in spec:
        problems = match(seen, {"$each": spec["each"]}, variables)
        if problems:
            raise Abort(FAIL, problems, _short(spec["each"], 400), _short(seen, 400))


async def _http_step(
    spec: dict[str, Any], channel: Channel, variables: dict[str, Any], timeout: float
) -> None:
    """One HTTP exchange with exact method, headers and body; ``expect`` is matched against
    ``{"status", "headers", "content_type", "text", "messages", "body"}`` (``body``: the JSON body, or
    the JSON-RPC response of an SSE body; absent when empty)."""
    exchange = getattr(channel.conn, "exchange", None)
    if exchange is None:
        raise Abort(SKIP, ["not applicable: an HTTP exchange needs the http transport"])
    if spec.get("requires_session") and getattr(channel.conn, "session_id", None) is None:
        raise Abort(SKIP, ["not applicable: the server issued no session id"])
    method = str(spec.get("method", "POST"))
    message: Any = None
    body: bytes | None = None
    if "body" in spec:
        message = substitute(spec["body"], variables)
        body = _dump(message)
    elif "body_raw" in spec:
        body = str(substitute(spec["body_raw"], variables)).encode("utf-8")
    headers: dict[str, str] = channel.conn.default_headers(message)  # type: ignore[attr-defined]
    if body is None:
        headers.pop("content-type", None)
    for name, value in substitute(spec.get("headers", {}), variables).items():
        headers.pop(name.lower(), None)
        if value is not None:
            headers[name.lower()] = str(value)
    if body is not None:
        channel._note_sent(body + b"\n")
    try:
        reply = await exchange(method, headers, body, timeout)
    except (OSError, TimeoutError, EOFError) as exc:
        raise Abort(FAIL, [f"{method} failed: {exc}"]) from None
    channel.conn.learn(message, reply)  # type: ignore[attr-defined]
    for item in reply.messages:
        channel.log.append(Seen(_dump(item), channel.fixture, item))
    subject = reply.as_pattern_subject()
    if "skip_if" in spec and not match(subject, substitute(spec["skip_if"], variables), variables):
        reason = spec.get("skip_reason", f"the server answered {reply.status}")
        raise Abort(SKIP, [f"not applicable: {reason}"])
    pattern = substitute(spec.get("expect", {}), variables)
    problems = match(subject, pattern, variables)
    if problems:
        shown = {k: v for k, v in subject.items() if k in ("status", "content_type", "body", "text")}
        if "body" in shown:
            shown.pop("text")
        raise Abort(FAIL, problems, _short(pattern, 400), _short(shown, 400))
    for name, path in spec.get("capture", {}).items():
        try:
            variables[name] = select(subject, path)
        except KeyError:
            raise Abort(SKIP, [f"not applicable: the server's answer has no {path}"]) from None


# ------------------------------------------------------------------------------------- invariants


def _messages(log: list[Seen]) -> list[tuple[Seen, Any]]:
    out = []
    for seen in log:
        if seen.parsed:
            for item in seen.value if isinstance(seen.value, list) else [seen.value]:
                out.append((seen, item))
    return out


def judge_invariant(
    name: str, log: list[Seen], sent_ids: list[Any], capabilities: dict[str, Any], schema: Any
) -> list[str]:
    problems: list[str] = []
    if name == "stdout-json-lines":
        for seen in log:
            if not seen.parsed:
                problems.append(f"not JSON (during {seen.fixture or 'setup'}): {seen.raw[:120]!r}")
    elif name == "jsonrpc-version":
        for seen, item in _messages(log):
            if not isinstance(item, dict) or item.get("jsonrpc") != "2.0":
                problems.append(f"not a JSON-RPC 2.0 message (during {seen.fixture}): {_short(item)}")
    elif name == "error-shape":
        for seen, item in _messages(log):
            if isinstance(item, dict) and "error" in item:
                error = item["error"]
                ok = isinstance(error, dict)
                ok = ok and type(error.get("code")) is int and isinstance(error.get("message"), str)
                if not ok:
                    problems.append(f"malformed error object (during {seen.fixture}): {_short(item)}")
    elif name == "solicited-responses":
        for seen, item in _messages(log):
            if isinstance(item, dict) and "method" not in item and "result" in item:
                rid = item.get("id", _OMIT)
                if rid is _OMIT or rid is None or rid not in sent_ids:
                    problems.append(
                        f"a result for no request we sent (during {seen.fixture}): {_short(item)}"
                    )
    elif name == "no-server-requests":
        for seen, item in _messages(log):
            if isinstance(item, dict) and "method" in item and "id" in item:
                problems.append(f"the server sent a request (during {seen.fixture}): {_short(item)}")
    elif name == "list-changed-declared":
        for seen, item in _messages(log):
            method = item.get("method", "") if isinstance(item, dict) else ""
            for cap in ("tools", "prompts", "resources"):
                declared = capabilities.get(cap)
                if method == f"notifications/{cap}/list_changed" and not (
                    isinstance(declared, dict) and declared.get("listChanged") is True
                ):
                    problems.append(f"{method} without {cap}.listChanged declared (during {seen.fixture})")
    elif name == "logging-declared":
        for seen, item in _messages(log):
            if (
                isinstance(item, dict)
                and item.get("method") == "notifications/message"
                and "logging" not in capabilities
            ):
                problems.append(
                    f"notifications/message without the logging capability (during {seen.fixture})"
                )
    elif name == "no-notifications-message":
        for seen, item in _messages(log):
            if isinstance(item, dict) and item.get("method") == "notifications/message":
                problems.append(
                    f"notifications/message for a request without logLevel (during {seen.fixture})"
                )
    elif name == "result-type":
        for seen, item in _messages(log):
            if (
                isinstance(item, dict)
                and isinstance(item.get("result"), dict)
                and "resultType" not in item["result"]
            ):
                problems.append(f"a result without resultType (during {seen.fixture}): {_short(item)}")
    elif name == "schema-valid":
        if schema is None:
            return ["skip"]
        from .match import _schema_errors

        for seen, item in _messages(log):
            errors = _schema_errors(item, schema)
            if errors:
                problems.append(f"{_short(item)} (during {seen.fixture}): {errors[0]}")
    else:
        problems.append(f"unknown invariant {name}")
    return problems[:5]


def load_message_schema(schema_dir: Path, revision: str) -> Any:
    import json

    path = schema_dir / revision / "schema.json"
    if not path.exists():
        return None
    document = json.loads(path.read_text(encoding="utf-8"))
    defs_key = "$defs" if "$defs" in document else "definitions"
    schema = dict(document)
    schema["$ref"] = f"#/{defs_key}/JSONRPCMessage"
    return schema


# ------------------------------------------------------------------------------------------ runner


async def _run_fixture(
    fixture: Fixture,
    channel: Channel,
    variables: dict[str, Any],
    revision: str,
    transport: str,
    session: bool,
) -> Verdict:
    started = time.perf_counter()
    verdict = Verdict(fixture.id, revision, transport, PASS, fixture)
    missing = [
        c for c in fixture.requires if not c.startswith("!") and c not in variables.get("capabilities", {})
    ]
    present = [
        c[1:] for c in fixture.requires if c.startswith("!") and c[1:] in variables.get("capabilities", {})
    ]
    if missing or present:
        verdict.status = SKIP
        verdict.note = (
            f"not applicable: the server does not declare {', '.join(missing)}"
            if missing
            else f"not applicable: the server declares {', '.join(present)}"
        )
        return verdict
    channel.fixture = fixture.id
    local = dict(variables)
    try:
        await _run_steps(fixture, channel, local, revision)
        if session:  # nothing else may be pending for this fixture
            _, before = await channel.probe(local)
            if before:
                raise Abort(
                    FAIL, [f"an extra response arrived: {_short(before[0])}"], "nothing", _short(before[0])
                )
    except Abort as abort:
        verdict.status = abort.status
        verdict.problems = abort.problems
        verdict.expected = abort.expected
        verdict.actual = abort.actual
        if abort.status == SKIP:
            verdict.note = abort.problems[0] if abort.problems else ""
            verdict.problems = []
    verdict.seconds = time.perf_counter() - started
    return verdict


async def _run_revision(
    target: Target,
    fixtures: list[Fixture],
    revision: str,
    options: Options,
    explicit: bool,
) -> tuple[RevisionRun, list[Verdict]]:
    transport = target.transport
    log: list[Seen] = []
    sent: list[Any] = []
    verdicts: list[Verdict] = []
    applicable = [f for f in fixtures if f.applies(revision, transport)]
    session_fixtures = [f for f in applicable if f.connection == "session" and not f.invariant]
    fresh_fixtures = [f for f in applicable if f.connection == "fresh" and not f.invariant]
    invariants = [f for f in applicable if f.invariant]
    info = RevisionRun(revision, False)
    async with contextlib.AsyncExitStack() as stack:
        variables = base_variables(revision)
        channel: Channel | None = None

        async def open_session() -> Channel:
            conn = await stack.enter_async_context(target.connect())
            ch = Channel(conn, log, options)
            ch.fixture = "(session setup)"
            supported, info.detail = await _open_session(ch, revision, variables)
            info.supported = info.supported or supported
            return ch

        try:
            channel = await open_session()
        except Abort as abort:
            info.detail = "; ".join(abort.problems)
        if not info.supported and not explicit:
            return info, []
        for fixture in session_fixtures:
            if channel is None:
                try:
                    channel = await open_session()
                except Abort as abort:
                    verdicts.append(Verdict(fixture.id, revision, transport, ERROR, fixture, abort.problems))
                    continue
            verdict = await _run_fixture(fixture, channel, variables, revision, transport, True)
            verdicts.append(verdict)
            if verdict.status in (FAIL, ERROR):
                # whatever the failure left in flight must not leak into the next fixture: new session
                sent.extend(channel.sent_ids)
                channel = None
        if channel is not None:
            sent.extend(channel.sent_ids)
    for fixture in fresh_fixtures:
        async with target.connect() as conn:
            fresh = Channel(conn, log, options)
            variables_fresh = base_variables(revision)
            variables_fresh["capabilities"] = variables.get("capabilities", {})
            verdicts.append(await _run_fixture(fixture, fresh, variables_fresh, revision, transport, False))
            sent.extend(fresh.sent_ids)
    schema = load_message_schema(options.schema_dir, revision) if options.schema_dir else None
    for fixture in invariants:
        problems = judge_invariant(
            fixture.invariant or "", log, sent, variables.get("capabilities", {}), schema
        )
        if problems == ["skip"]:
            verdicts.append(
                Verdict(fixture.id, revision, transport, SKIP, fixture, note="needs --schema-dir")
            )
        elif problems:
            verdicts.append(
                Verdict(fixture.id, revision, transport, FAIL, fixture, problems, fixture.title, problems[0])
            )
        else:
            verdicts.append(Verdict(fixture.id, revision, transport, PASS, fixture))
    return info, verdicts


async def run_conformance(target: Target, spec: Spec, fixtures: list[Fixture], options: Options) -> Run:
    """Run ``fixtures`` against ``target`` for each revision (given or detected)."""
    started = time.perf_counter()
    explicit = options.revisions is not None
    every = LEGACY_REVISIONS + MODERN_REVISIONS
    revisions = list(options.revisions) if options.revisions is not None else list(every)
    results: dict[str, tuple[RevisionRun, list[Verdict]]] = {}

    async def one(revision: str) -> None:
        results[revision] = await _run_revision(target, fixtures, revision, options, explicit)

    async with anyio.create_task_group() as tg:
        for revision in revisions:
            tg.start_soon(one, revision)
    verdicts: list[Verdict] = []
    infos: list[RevisionRun] = []
    for revision in revisions:
        info, vs = results[revision]
        infos.append(info)
        verdicts.extend(vs)
    return Run(
        target=target.description,
        transport=target.transport,
        verdicts=verdicts,
        revisions=infos,
        seconds=time.perf_counter() - started,
        stderr_tail=list(getattr(target, "stderr_tail", [])),
    )
