"""Running fixtures against a target, revision by revision, and judging each requirement.

The work is split by responsibility: ``_channel`` (the connection to the target, frames seen and
request ids sent), ``_variables`` (``${name}`` substitution), ``_steps`` (a fixture's steps and
captures), ``_invariants`` (rules over every frame of a revision). This module opens the sessions
and runs fixtures, revision by revision, into :class:`Verdict` s.
"""

from __future__ import annotations

import contextlib
import dataclasses
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio

from jsonrpc_mcp import wire

from ._channel import _NOTHING, _OMIT, ERROR, FAIL, PASS, SKIP, Abort, Channel, Seen, _dump
from ._channel import sent_request_ids as sent_request_ids
from ._fresh import Shared, run_fresh_fixtures, shared_frames
from ._invariants import judge_invariant, load_message_schema
from ._pace import Pace
from ._reuse import Recording, handshake_id
from ._steps import _expect_message as _expect_message
from ._steps import _paginate as _paginate
from ._steps import _run_steps, advertised_versions
from ._steps import _tamper as _tamper
from ._variables import base_variables, initialize_request, target_variables, why_unknown
from ._warm import warmed
from .fixtures import LEGACY_REVISIONS, MODERN_REVISIONS, TRANSPORT_REVISIONS, Fixture, Spec
from .match import _short
from .targets import Target

# The run's own names, and (from ERROR on) names kept importable from here for report.py and the tests,
# as are those imported ``X as X`` above; their code lives in the modules they come from.
__all__ = [
    "Options",
    "RevisionRun",
    "Run",
    "Verdict",
    "run_conformance",
    "ERROR",
    "FAIL",
    "PASS",
    "SKIP",
    "Abort",
    "Channel",
    "Seen",
    "base_variables",
    "judge_invariant",
]


@dataclass
class Verdict:
    """One fixture's outcome for one revision over one transport: its status, the problems found, what
    was expected and what the server did. ``frames``: the transcript of the fixture's exchange, every
    verdict's (``> sent``, ``< received`` lines; over HTTP the request line and headers, the status
    and headers too), bounded (see ``Channel.frames``)."""

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
    frames: list[str] = field(default_factory=list)  # a failure's transcript: "> sent", "< received"

    @property
    def key(self) -> str:
        """``id@revision/transport``, unique within a run."""
        return f"{self.id}@{self.revision}/{self.transport}"


@dataclass
class Options:
    """How a run goes: which revisions (None: detect what the server speaks), the timeouts, and when
    revisions run one after another rather than at once."""

    revisions: Sequence[str] | None = None  # None: detect
    timeout: float = 5.0
    quiet_period: float = 0.3  # how long "nothing within T" waits unless the fixture says otherwise
    schema_dir: Path | None = None  # None: the official schemas beside the fixtures (spec/schema)
    exit_timeout: float = 3.0
    # revisions start one at a time when the first handshake took longer than this (a slow server or
    # a loaded machine), and go back to one at a time whenever an answer takes longer than
    # ``timeout * slow_answer`` (see :class:`Pace`)
    serial_after: float = 1.0
    slow_answer: float = 0.2
    # spawning the server and the handshake (initialize / server/discover); None: ``timeout``
    startup_timeout: float | None = None
    # stdio: how many server processes to keep starting ahead of need (see ``_warm``)
    start_ahead: int = 0

    @property
    def handshake_timeout(self) -> float:
        """The time allowed for spawning and the handshake: ``startup_timeout`` if set (never less
        than ``timeout``), else ``timeout``."""
        return self.timeout if self.startup_timeout is None else max(self.startup_timeout, self.timeout)


@dataclass
class RevisionRun:
    revision: str
    supported: bool
    detail: str = ""
    advertised: list[str] = field(default_factory=list)  # revisions its handshake said the server speaks


@dataclass
class Run:
    """The outcome of a run: every verdict, the revisions run, how long it took and the end of the
    server's stderr."""

    target: str
    transport: str
    verdicts: list[Verdict]
    revisions: list[RevisionRun]
    seconds: float
    stderr_tail: list[str] = field(default_factory=list)

    def failures(self) -> list[Verdict]:
        """The verdicts that failed or errored and were not expected to."""
        return [v for v in self.verdicts if v.status in (FAIL, ERROR) and not v.expected_failure]


def _actual(answer: Any) -> str:
    return _NOTHING if answer is _OMIT else _short(answer)


def _describe_answer(answer: Any, timeout: float, channel: Channel | None = None) -> str:
    if answer is not _OMIT:
        return _short(answer)
    said = channel.diagnosis() if channel is not None else ""
    reply = getattr(channel.conn, "last_reply", None) if channel is not None else None
    if reply is not None:  # HTTP: the answer to the POST came at once, and held no response
        return f"{_NOTHING} ({said or f'the POST was answered {reply.status}'})"
    return f"{_NOTHING} within {timeout:g} s" + (f" ({said})" if said else "")


async def _open_session(
    channel: Channel, revision: str, variables: dict[str, Any], rid: Any = "conformance-init"
) -> tuple[bool, str]:
    """Legacy: initialize + initialized. Modern: server/discover. Returns (supported, detail): the
    session is open, and the server does or does not speak ``revision``. Raises :class:`Abort` when
    no session could be opened (no answer in time, an error, a broken connection): the caller must
    then close the connection, whatever it may still send being no answer to any fixture. The
    handshake is given ``Options.handshake_timeout`` (a server still starting is no fault)."""
    timeout = channel.options.handshake_timeout
    channel.conn_timeout(timeout)
    try:
        return await _handshake(channel, revision, variables, timeout, rid)
    finally:
        channel.conn_timeout(None)


async def _handshake_answer(channel: Channel, timeout: float) -> Any:
    """The answer to a handshake request, ``_OMIT`` when none came (the caller says what that means)."""
    try:
        return await channel.next_response(timeout)
    except Abort as abort:
        if abort.status == ERROR:  # a new process that sent nothing at all
            return _OMIT
        raise


async def _handshake(
    channel: Channel, revision: str, variables: dict[str, Any], timeout: float, rid: Any
) -> tuple[bool, str]:
    if revision in MODERN_REVISIONS:
        request = {
            "jsonrpc": "2.0",
            "id": "conformance-discover",
            "method": wire.DISCOVER,
            "params": {"_meta": variables["meta"]},
        }
        await channel.send(_dump(request))
        answer = await _handshake_answer(channel, timeout)
        if not isinstance(answer, dict) or not isinstance(answer.get("result"), dict):
            raise Abort(
                ERROR,
                [f"server/discover answered {_describe_answer(answer, timeout, channel)}"],
                actual=_actual(answer),
            )
        result = answer["result"]
        variables["capabilities"] = result.get("capabilities", {})
        versions = result.get("supportedVersions", [])
        if isinstance(versions, list):
            variables["advertised"] = [v for v in versions if isinstance(v, str)]
        return revision in versions, f"supportedVersions {versions}"
    await channel.send(_dump(initialize_request(revision, rid)))
    answer = await _handshake_answer(channel, timeout)
    if isinstance(channel.conn, Recording):  # the answer is judged by the fixtures sending this frame too
        channel.conn.stop()
    if not isinstance(answer, dict) or not isinstance(answer.get("result"), dict):
        raise Abort(
            ERROR,
            [f"initialize answered {_describe_answer(answer, timeout, channel)}"],
            actual=_actual(answer),
        )
    result = answer["result"]
    variables["capabilities"] = result.get("capabilities", {})
    variables["server_info"] = result.get("serverInfo", {})
    await channel.send(_dump({"jsonrpc": "2.0", "method": wire.INITIALIZED}))
    await channel.probe(variables)  # anything stray the handshake caused is drained (invariants judge it)
    negotiated = result.get("protocolVersion")
    if isinstance(negotiated, str):
        variables["advertised"] = [negotiated]
    if negotiated != revision and revision in await advertised_versions(channel):  # fails negotiation
        return True, f"initialize answered protocolVersion {negotiated!r}; server/discover lists {revision}"
    return negotiated == revision, f"initialize answered protocolVersion {negotiated!r}"


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
    unknown = [c[1:] for c in fixture.requires if c.startswith("$") and c[1:] not in variables]
    if unknown:
        verdict.status = SKIP
        verdict.note = f"not applicable: {why_unknown(variables, unknown[0])}"
        return verdict
    missing = [
        c
        for c in fixture.requires
        if not c.startswith(("!", "$")) and c not in variables.get("capabilities", {})
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
    channel.start_transcript()
    local = dict(variables)
    channel.probe_variables = local
    try:
        try:
            await _run_steps(fixture, channel, local, revision)
        finally:
            await channel.close_streams()
        if session:  # nothing else may be pending for this fixture
            _, before = await channel.probe(local)
            if before:
                raise Abort(
                    FAIL, [f"an extra response arrived: {_short(before[0])}"], "nothing", _short(before[0])
                )
    except Abort as abort:
        verdict.status = abort.status
        verdict.problems = abort.problems
        if abort.status in (FAIL, ERROR) and abort.actual == _NOTHING:
            said = channel.diagnosis()  # what came instead of an answer, if anything
            if channel.ended_by:
                said = f"the follow-up {channel.ended_by} was answered first" + (f"; {said}" if said else "")
            if said:
                verdict.problems = [*abort.problems, said]
        verdict.expected = abort.expected
        verdict.actual = abort.actual
        if abort.status == SKIP:
            verdict.note = abort.problems[0] if abort.problems else ""
            verdict.problems = []
    verdict.frames = channel.frames()  # what passed on the wire, whatever the verdict
    verdict.seconds = time.perf_counter() - started
    return verdict


HANDSHAKE_ID = "lifecycle:session:open"


def handshake_error(revision: str, transport: str, why: str, actual: str = "") -> Verdict:
    """The one ERROR of a revision whose session could not be opened (not a failure of each
    requirement: none of them could be checked)."""
    fixture = Fixture(
        id=HANDSHAKE_ID,
        title="a session of the revision can be opened (the handshake completes)",
        level="MUST",
        revisions=(revision,),
        transports=(transport,),
        spec={
            "url": "https://modelcontextprotocol.io/specification/{revision}/basic/lifecycle"
            if revision in LEGACY_REVISIONS
            else "https://modelcontextprotocol.io/specification/{revision}/server/discover",
            "quote": "The initialization phase MUST be the first interaction between client and server."
            if revision in LEGACY_REVISIONS
            else "server/discover lets a client query a server's supported protocol versions, "
            "capabilities, and identity before sending any other requests. Servers MUST implement it.",
        },
        file="",
        area="lifecycle",
    )
    return Verdict(HANDSHAKE_ID, revision, transport, ERROR, fixture, [why], actual=actual)


async def _run_revision(
    target: Target,
    fixtures: list[Fixture],
    revision: str,
    options: Options,
    explicit: bool,
    on_handshake: Callable[[float], None] | None = None,
    pace: Pace | None = None,
    shared: Shared | None = None,
    frames: dict[str, bytes] | None = None,
) -> tuple[RevisionRun, list[Verdict]]:
    """Theory of operation: the session fixtures share one session (connection + handshake). A
    fixture that fails or errs may leave requests in flight, so its session is closed and the next
    fixture opens a new one. A session that cannot be opened (the handshake timed out, was refused,
    the connection broke) is closed at once and never used: a late answer to its handshake must not
    be taken for a fixture's response. The fixture that needed it is an ERROR with the reason; after
    two failed openings in a row the remaining session fixtures are ERRORs without further attempts
    (a server that never answers would otherwise cost a timeout per fixture). Fresh fixtures each get
    a connection of their own; invariants are judged last over every frame of the revision. Every
    fixture and session opening holds a slot of ``pace`` (see :class:`Pace`) once its connection is
    there: a process starting holds none."""
    transport = target.transport
    log: list[Seen] = []
    sent: list[Any] = []
    methods: dict[str, set[str]] = {}
    verdicts: list[Verdict] = []
    applicable = [f for f in fixtures if f.applies(revision, transport)]
    session_fixtures = [f for f in applicable if f.connection == "session" and not f.invariant]
    fresh_fixtures = [f for f in applicable if f.connection == "fresh" and not f.invariant]
    invariants = [f for f in applicable if f.invariant]
    info = RevisionRun(revision, False)
    variables = base_variables(revision)
    variables.update(target_variables(target))
    channel: Channel | None = None
    session_stack: contextlib.AsyncExitStack | None = None

    def slot() -> contextlib.AbstractAsyncContextManager[Any]:
        return pace.slot() if pace is not None else contextlib.AsyncExitStack()

    on_latency = pace.answered if pace is not None else None
    open_failures: list[str] = []
    open_frames: list[str] = []  # the transcript of the latest failed opening
    # fresh fixtures that send the same first frame share one observation (see ``_reuse``, ``_fresh``)
    shared = shared if shared is not None else Shared()
    if frames is None:
        frames = shared_frames(target, fresh_fixtures, [revision])[revision]
    records = shared.records
    # the session's handshake may be that frame: a legacy initialize of this revision, no capabilities
    handshake_rid: Any = "conformance-init"
    for frame in frames.values():
        handshake_rid = handshake_id(frame, revision) or handshake_rid

    async def close_session() -> None:
        nonlocal channel, session_stack
        if channel is not None:
            sent.extend(channel.sent_ids)
            for rid, names in channel.sent_methods.items():
                methods.setdefault(rid, set()).update(names)
            channel = None
        if session_stack is not None:
            stack, session_stack = session_stack, None
            await stack.aclose()

    async def open_session() -> Channel:
        """A new session, or :class:`Abort` (ERROR) once its connection is closed again."""
        nonlocal channel, session_stack
        session_stack = contextlib.AsyncExitStack()
        conn = await session_stack.enter_async_context(target.connect())
        handshake = _dump(initialize_request(revision, handshake_rid))
        if handshake_rid != "conformance-init" and handshake not in records:
            conn = Recording(conn, handshake)
        channel = Channel(conn, log, options)
        channel.on_latency = on_latency
        channel.late = shared.late
        channel.fixture = "(session setup)"
        try:
            async with slot():  # (starting the process held none: it is no answer, see :class:`Pace`)
                supported, detail = await _open_session(channel, revision, variables, handshake_rid)
        except Abort as abort:
            reason = "; ".join(abort.problems) or abort.status
            if not info.detail:
                info.detail = reason
            open_failures.append(reason)
            frames = channel.frames() if channel is not None else []
            await close_session()
            failed = Abort(ERROR, [f"the session could not be opened: {reason}"], actual=abort.actual)
            failed.frames = frames
            open_frames[:] = frames
            raise failed from None
        open_failures.clear()
        if isinstance(conn, Recording) and conn.record is not None:
            shared.keep(handshake, conn.record, revision)
        for version in variables.pop("advertised", []):
            if version not in info.advertised:
                info.advertised.append(version)
        if not info.detail or (supported and not info.supported):
            info.detail = detail
        info.supported = info.supported or supported
        return channel

    try:
        failure: Abort | None = None
        began = time.perf_counter()
        try:
            await open_session()
        except Abort as abort:
            failure = abort
        finally:
            if on_handshake is not None:
                on_handshake(time.perf_counter() - began)
        if failure is not None and failure.actual == _NOTHING:
            # a handshake lost to load says nothing of the revision: again
            try:
                await open_session()
                failure = None
            except Abort as again:
                failure = again
        if not info.supported and not explicit:
            if failure is not None and failure.actual in ("", _NOTHING):
                # no answer at all, or the connection broke: a server must answer its handshake
                verdict = handshake_error(revision, transport, info.detail, failure.actual)
                verdict.frames = failure.frames
                return info, [verdict]
            return info, []
        rule = next((f for f in invariants if f.invariant == "jsonrpc-version"), None)
        problems = judge_invariant("jsonrpc-version", log, [], {}, None) if rule is not None else []
        if rule is not None and problems:  # the first answers already show it: say so at once
            transcript = list(channel.transcript) if channel is not None else []
            return info, _not_json_rpc(rule, applicable, revision, transport, problems, transcript)

        def unopened(fixture: Fixture, problems: list[str], frames: list[Any]) -> Verdict:
            """The ERROR of a fixture that found no session to run in."""
            return Verdict(fixture.id, revision, transport, ERROR, fixture, problems, frames=frames)

        for fixture in session_fixtures:
            if channel is None:
                if len(open_failures) >= 2:
                    problem = f"no session could be opened (last reason: {open_failures[-1]})"
                    verdicts.append(unopened(fixture, [problem], list(open_frames)))
                    continue
                try:
                    await open_session()
                except Abort as abort:
                    verdicts.append(unopened(fixture, abort.problems, abort.frames))
                    continue
            assert channel is not None
            async with slot():
                verdict = await _run_fixture(fixture, channel, variables, revision, transport, True)
                verdicts.append(verdict)
                in_sync = verdict.status not in (FAIL, ERROR) or await channel.resync(variables)
            if not in_sync:
                # whatever the failure left in flight must not leak into the next fixture: new session
                await close_session()
    finally:
        await close_session()
    fresh_verdicts, fresh_sent, fresh_methods = await run_fresh_fixtures(
        target,
        fresh_fixtures,
        revision,
        options,
        variables,
        log,
        frames,
        shared,
        slot,
        on_latency,
        _run_fixture,
    )
    verdicts.extend(fresh_verdicts)
    sent.extend(fresh_sent)
    for rid, names in fresh_methods.items():
        methods.setdefault(rid, set()).update(names)
    schema = load_message_schema(options.schema_dir, revision) if options.schema_dir else None
    for fixture in invariants:
        problems = judge_invariant(
            fixture.invariant or "", log, sent, variables.get("capabilities", {}), schema, methods
        )
        if problems == ["skip"]:
            verdicts.append(
                Verdict(fixture.id, revision, transport, SKIP, fixture, note=f"no schema of {revision}")
            )
        elif problems:
            verdicts.append(
                Verdict(fixture.id, revision, transport, FAIL, fixture, problems, fixture.title, problems[0])
            )
        else:
            verdicts.append(Verdict(fixture.id, revision, transport, PASS, fixture))
    return info, verdicts


def _not_json_rpc(
    rule: Fixture,
    applicable: list[Fixture],
    revision: str,
    transport: str,
    problems: list[str],
    frames: list[str],
) -> list[Verdict]:
    """The verdicts of a revision whose handshake was answered with messages that are not JSON-RPC 2.0
    (a ``jsonrpc`` member other than "2.0"): that one failure, found on the first answer, and every
    other requirement not checked (each would fail for the same reason: one fault, one failure)."""
    failed = Verdict(rule.id, revision, transport, FAIL, rule, problems, '"jsonrpc": "2.0"', problems[0])
    failed.frames = frames
    note = f"not checked: the server's messages are not JSON-RPC 2.0 (see {rule.id})"
    return [failed] + [
        Verdict(f.id, revision, transport, SKIP, f, note=note) for f in applicable if f.id != rule.id
    ]


async def run_conformance(target: Target, spec: Spec, fixtures: list[Fixture], options: Options) -> Run:
    """Run ``fixtures`` against ``target`` for each revision (given or detected)."""
    started = time.perf_counter()
    if options.schema_dir is None:  # the official schemas shipped with the fixtures
        options = dataclasses.replace(options, schema_dir=spec.directory / "schema")
    explicit = options.revisions is not None
    every = LEGACY_REVISIONS + MODERN_REVISIONS
    revisions = list(options.revisions) if options.revisions is not None else list(every)
    results: dict[str, tuple[RevisionRun, list[Verdict]]] = {}

    first_handshake = anyio.Event()
    checked = [r for r in revisions if r in TRANSPORT_REVISIONS.get(target.transport, every)]
    pace = Pace(len(checked), options.timeout * options.slow_answer)

    def noted(seconds: float) -> None:
        if not first_handshake.is_set() and seconds > options.serial_after:
            pace.narrow()  # a slow first start: one at a time until answers prove quick
        first_handshake.set()

    async def one(revision: str) -> None:
        try:
            if revision not in TRANSPORT_REVISIONS.get(target.transport, every):
                first = TRANSPORT_REVISIONS[target.transport][0]
                detail = f"not checked: {target.transport} is a transport of {first} and later"
                results[revision] = (RevisionRun(revision, False, detail), [])
                return
            results[revision] = await _run_revision(
                run_target, fixtures, revision, options, explicit, noted, pace, shared, frames[revision]
            )
        finally:
            first_handshake.set()

    # Theory of operation: the first revision starts alone; once its first handshake is done, the
    # others start too, each fixture holding a slot of the run's :class:`Pace` (one at a time when the
    # first handshake took longer than ``serial_after``, or while answers are slow).
    # Fresh fixtures sending the same first frame share one observation, across revisions too (see
    # ``_fresh``); a stdio server's processes are shut down in the background (see ``_warm``).
    rest = [r for r in revisions if r not in checked[:1]]
    shared = Shared()
    frames = shared_frames(target, fixtures, checked)
    async with warmed(target, options.start_ahead) as run_target, anyio.create_task_group() as tg:
        if checked:
            tg.start_soon(one, checked[0])
            await first_handshake.wait()
        for revision in rest:
            tg.start_soon(one, revision)
    verdicts: list[Verdict] = []
    infos: list[RevisionRun] = []
    advertised = {version: r for r in revisions for version in results[r][0].advertised}
    for revision in revisions:
        info, vs = results[revision]
        infos.append(info)
        verdicts.extend(vs)
        applicable = revision in TRANSPORT_REVISIONS.get(target.transport, every)
        erred = any(v.id == HANDSHAKE_ID for v in vs)
        if applicable and not info.supported and revision in advertised and not erred:
            why = (
                f"the server advertised {revision} (answering the {advertised[revision]} handshake) "
                f"but a session of it could not be opened: {info.detail}"
            )
            verdicts.append(handshake_error(revision, target.transport, why))
    return Run(
        target=target.description,
        transport=target.transport,
        verdicts=verdicts,
        revisions=infos,
        seconds=time.perf_counter() - started,
        stderr_tail=list(getattr(target, "stderr_tail", [])),
    )
