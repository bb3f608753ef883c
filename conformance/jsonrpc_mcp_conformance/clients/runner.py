"""Running a client command scenario by scenario, and judging its requirements.

HTTP (the official suite's client-mode contract): the scenario server listens on 127.0.0.1, port
0, in this process; the client command is run with the server's URL as its last argument and the
environment variables ``MCP_CONFORMANCE_SCENARIO``, ``MCP_CONFORMANCE_PROTOCOL_VERSION`` and, for a
scenario that has one, ``MCP_CONFORMANCE_CONTEXT`` (a JSON object; its ``name`` is the scenario's).

stdio: the client command is run with the same variables and, instead of a URL,
``MCP_CONFORMANCE_SERVER_COMMAND``: the scenario server's command line as a JSON array of strings.
The client starts that command as its stdio server; it is the recording tap (``tap.py``) in front
of the scenario server, so the harness sees every line.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import socket
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio

from ..fixtures import MODERN_REVISIONS, Fixture
from ..runner import ERROR, FAIL, PASS, SKIP, RevisionRun, Run, Verdict
from . import answers, scenario_checks  # noqa: F401  (their judges register in CHECKS as they load)
from .checks import CHECKS, Outcome, ScenarioRun
from .recording import CLIENT, HttpRecorder, read_tap
from .scenarios import ClientSpec, Scenario, requirement_params, requirement_scenarios
from .servers import HTTP_WRAPPERS, build_server

__all__ = [
    "DEFAULT_REVISIONS",
    "ClientOptions",
    "judge",
    "plan",
    "run_client_conformance",
    "run_scenario",
    "server_command",
]

DEFAULT_REVISIONS = ("2025-11-25", "2026-07-28")  # the latest of each era
START_TIMEOUT, STOP_TIMEOUT = 10.0, 5.0
TAIL = 20  # lines of the client's stderr kept


@dataclass
class ClientOptions:
    revisions: Sequence[str] = DEFAULT_REVISIONS
    transports: Sequence[str] = ("http",)
    timeout: float = 30.0  # the whole client run of one scenario (the official suite's default)
    env: dict[str, str] = field(default_factory=dict)  # more variables for the client


def plan(
    spec: ClientSpec, fixtures: Sequence[Fixture], options: ClientOptions, only: Sequence[str] = ()
) -> list[tuple[Scenario, str, str]]:
    """(scenario, revision, transport) to run: every scenario (of ``only``, when given) some chosen
    requirement is judged in, at each chosen revision and transport both apply to."""
    runs = []
    for scenario in spec.scenarios.values():
        if only and scenario.name not in only:
            continue
        for revision in options.revisions:
            if revision not in scenario.revisions:
                continue
            for transport in options.transports:
                if transport in scenario.transports and any(
                    fixture.applies(revision, transport)
                    and (
                        "*" in requirement_scenarios(fixture)
                        or scenario.name in requirement_scenarios(fixture)
                    )
                    for fixture in fixtures
                ):
                    runs.append((scenario, revision, transport))
    return runs


def _package_roots() -> list[str]:
    """The directories this harness and the library are imported from (for the stdio server)."""
    import jsonrpc_mcp
    import jsonrpc_mcp_conformance

    roots = [
        Path(jsonrpc_mcp_conformance.__file__).resolve().parents[1],
        Path(jsonrpc_mcp.__file__).resolve().parents[1],
    ]
    return list(dict.fromkeys(str(root) for root in roots))


def server_command(kind: str, record: Path) -> list[str]:
    """The stdio scenario server's command line, behind the recording tap."""
    tap = Path(__file__).with_name("tap.py")
    paths = [arg for root in _package_roots() for arg in ("--path", root)]
    return [
        sys.executable,
        str(tap),
        str(record),
        *paths,
        "--",
        sys.executable,
        "-m",
        "jsonrpc_mcp_conformance.clients.servers",
        kind,
    ]


def _environment(scenario: Scenario, revision: str, options: ClientOptions) -> dict[str, str]:
    env = {**os.environ, **options.env}
    env["MCP_CONFORMANCE_SCENARIO"] = scenario.name
    env["MCP_CONFORMANCE_PROTOCOL_VERSION"] = revision
    env.pop("MCP_CONFORMANCE_CONTEXT", None)
    if scenario.context is not None:  # as the official suite gives it: the scenario's name, then the context
        env["MCP_CONFORMANCE_CONTEXT"] = json.dumps({"name": scenario.name, **scenario.context})
    env.pop("MCP_CONFORMANCE_SERVER_COMMAND", None)
    return env


async def _run_client(
    argv: list[str], env: dict[str, str], timeout: float, work: Path
) -> tuple[int | None, list[str]]:
    """Run the client command; its exit code (None: killed after ``timeout`` s) and stderr's tail."""
    out, err = (work / "client.stdout").open("wb"), (work / "client.stderr").open("wb")
    try:
        process = await anyio.open_process(argv, env=env, stdin=None, stdout=out, stderr=err)
    finally:
        out.close()
        err.close()
    code: int | None = None
    async with process:
        with anyio.move_on_after(timeout):
            code = await process.wait()
        if code is None:
            process.kill()
            with anyio.move_on_after(STOP_TIMEOUT):
                await process.wait()
    lines = (work / "client.stderr").read_text(encoding="utf-8", errors="replace").splitlines()
    return code, lines[-TAIL:]


def _listen() -> socket.socket:
    """A listening socket on 127.0.0.1, port 0 (bound before the app is built: the app may need
    its own URL)."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    sock.listen(64)
    return sock


class _ShutdownCancelled(logging.Filter):
    """Drops uvicorn's report of the requests it cancels on shutdown (a client that never
    cancelled ``test_slow`` leaves it running): the scenario is over, nothing failed."""

    def filter(self, record: logging.LogRecord) -> bool:
        exc = record.exc_info[1] if record.exc_info else None
        message = record.getMessage()
        return not (
            isinstance(exc, asyncio.CancelledError)
            or (message.startswith("Cancel ") and "graceful shutdown exceeded" in message)
        )


_SHUTDOWN_FILTER = _ShutdownCancelled()


async def _serve_http(recorder: Any, sock: socket.socket) -> Any:
    import uvicorn

    error_log = logging.getLogger("uvicorn.error")
    if _SHUTDOWN_FILTER not in error_log.filters:
        error_log.addFilter(_SHUTDOWN_FILTER)

    config = uvicorn.Config(
        recorder,
        lifespan="on",
        log_config=None,
        log_level="warning",
        access_log=False,
        timeout_graceful_shutdown=2,
    )
    config.load()
    server = uvicorn.Server(config)
    server.lifespan = config.lifespan_class(config)
    with anyio.fail_after(START_TIMEOUT):
        await server.startup(sockets=[sock])
    return server


async def run_scenario(
    argv: Sequence[str], scenario: Scenario, revision: str, transport: str, options: ClientOptions
) -> ScenarioRun:
    """Serve ``scenario``'s server, run the client against it, return what was recorded."""
    env = _environment(scenario, revision, options)
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="mcp-client-conformance-") as tmp:
        work = Path(tmp)
        if transport == "stdio":
            record = work / "record.jsonl"
            env["MCP_CONFORMANCE_SERVER_COMMAND"] = json.dumps(server_command(scenario.server, record))
            code, tail = await _run_client(list(argv), env, options.timeout, work)
            events = read_tap(record)
        else:
            from jsonrpc_mcp.http import McpHttpApp

            sock = _listen()
            base = f"http://127.0.0.1:{sock.getsockname()[1]}"
            auth = None
            try:
                app = McpHttpApp(build_server(scenario.server, base))
                wrap = HTTP_WRAPPERS.get(scenario.server)
                recorder = HttpRecorder(wrap(app) if wrap is not None else app)
                served: Any = recorder
                if scenario.auth is not None:  # the authorization server(s), and the MCP server's gate
                    from .authresource import start_auth

                    auth, served = await start_auth(scenario, base, recorder, env, _listen, _serve_http)
                server = await _serve_http(served, sock)
            except BaseException:
                sock.close()
                if auth is not None:
                    await auth.stop(STOP_TIMEOUT)
                raise
            try:
                url = f"{base}/mcp"
                code, tail = await _run_client([*argv, url], env, options.timeout, work)
            finally:
                app.begin_shutdown()
                with anyio.move_on_after(STOP_TIMEOUT):
                    await server.shutdown(sockets=[sock])
                sock.close()
                if auth is not None:
                    await auth.stop(STOP_TIMEOUT)
            events = recorder.events
            seconds = time.monotonic() - started
            return ScenarioRun(scenario.name, revision, transport, events, code, tail, seconds, auth)
    return ScenarioRun(scenario.name, revision, transport, events, code, tail, time.monotonic() - started)


def _combine(outcomes: list[tuple[ScenarioRun, Outcome]]) -> tuple[str, list[str], str, list[str]]:
    failed = [(run, o) for run, o in outcomes if o.status == "fail"]
    if failed:
        problems = [f"[{run.scenario}] {problem}" for run, o in failed for problem in o.problems]
        frames = [event.frame() for _, o in failed for event in o.evidence][:12]
        run = failed[0][0]
        how = "timed out (killed)" if run.exit_code is None else f"exited {run.exit_code}"
        actual = f"the client {how}" + (
            f"; its stderr ends: {run.stderr_tail[-1]}" if run.stderr_tail else ""
        )
        if not frames:
            frames = [event.frame() for event in run.events][:12]
        return FAIL, problems, actual, frames
    if any(o.status == "pass" for _, o in outcomes):
        notes = sorted({o.note for _, o in outcomes if o.note})
        return PASS, [], "; ".join(notes), []
    notes = sorted({f"[{run.scenario}] {o.note}" for run, o in outcomes if o.note})
    return SKIP, [], "; ".join(notes), []


def _silent(fixture: Fixture, revision: str, transport: str, runs: Sequence[ScenarioRun]) -> Verdict:
    """The verdict when the client sent nothing in any scenario run of this revision and transport:
    it played none of them, and a requirement of every scenario fails."""
    ended = ", ".join(
        f"{run.scenario}: " + ("timed out (killed)" if run.exit_code is None else f"exit {run.exit_code}")
        for run in runs
    )
    tail = next((run.stderr_tail[-1] for run in runs if run.stderr_tail), "")
    return Verdict(
        fixture.id,
        revision,
        transport,
        FAIL,
        fixture,
        problems=["the client sent nothing to the scenario server in any scenario"],
        expected=fixture.title,
        actual=f"the client ended so: {ended}" + (f"; its stderr ends: {tail}" if tail else ""),
    )


def judge(fixtures: Sequence[Fixture], runs: Sequence[ScenarioRun]) -> list[Verdict]:
    """One verdict per requirement, revision and transport that some run can judge."""
    verdicts = []
    for fixture in fixtures:
        names = requirement_scenarios(fixture)
        keys = dict.fromkeys((run.revision, run.transport) for run in runs)
        for revision, transport in keys:
            if not fixture.applies(revision, transport):
                continue
            chosen = [
                run
                for run in runs
                if run.revision == revision
                and run.transport == transport
                and ("*" in names or run.scenario in names)
            ]
            if not chosen:
                continue
            if "*" in names:  # a scenario the client sent nothing in (one it does not play) says nothing here
                played = [run for run in chosen if any(e.source == CLIENT for e in run.events)]
                if not played and any(run.auth is not None and run.auth.records for run in chosen):
                    note = "the client reached the MCP server only through its authorization (auth/*)"
                    verdicts.append(Verdict(fixture.id, revision, transport, SKIP, fixture, note=note))
                    continue
                if not played:
                    verdicts.append(_silent(fixture, revision, transport, chosen))
                    continue
                chosen = played
                if revision in MODERN_REVISIONS:  # a client that chose the handshake era is judged by it
                    modern = [run for run in chosen if run.initialize() is None]
                    if not modern:
                        note = "the client spoke the handshake era (initialize) in every scenario run"
                        verdicts.append(Verdict(fixture.id, revision, transport, SKIP, fixture, note=note))
                        continue
                    chosen = modern
            started = time.monotonic()
            outcomes = []
            for run in chosen:
                try:
                    outcomes.append((run, CHECKS[str(fixture.invariant)](run, requirement_params(fixture))))
                except Exception as exc:  # a judge's own bug: an error verdict, never a crash of the run
                    outcomes.append(
                        (run, Outcome("error", [f"the judge failed: {type(exc).__name__}: {exc}"]))
                    )
            errors = [o for _, o in outcomes if o.status == "error"]
            frames: list[str]
            if errors:
                status, problems, actual, frames = ERROR, errors[0].problems, "", []
            else:
                status, problems, actual, frames = _combine(outcomes)
            verdicts.append(
                Verdict(
                    id=fixture.id,
                    revision=revision,
                    transport=transport,
                    status=status,
                    fixture=fixture,
                    problems=problems,
                    expected=fixture.title if status == FAIL else "",
                    actual=actual if status == FAIL else "",
                    note=actual if status in (PASS, SKIP) else "",
                    seconds=time.monotonic() - started,
                    frames=frames,
                )
            )
    return verdicts


async def run_client_conformance(
    argv: Sequence[str],
    spec: ClientSpec,
    fixtures: Sequence[Fixture],
    options: ClientOptions,
    only: Sequence[str] = (),
) -> tuple[Run, list[ScenarioRun]]:
    """Every planned scenario run, then the verdicts, as a :class:`Run` the reports take."""
    started = time.monotonic()
    runs = [
        await run_scenario(argv, scenario, revision, transport, options)
        for scenario, revision, transport in plan(spec, fixtures, options, only)
    ]
    verdicts = judge(fixtures, runs)
    revisions = []
    for revision in dict.fromkeys(run.revision for run in runs):
        mine = [run for run in runs if run.revision == revision]
        ended = ", ".join(
            f"{run.scenario}/{run.transport}: "
            + ("timed out" if run.exit_code is None else f"exit {run.exit_code}")
            for run in mine
        )
        revisions.append(RevisionRun(revision, supported=True, detail=f"{len(mine)} scenario runs ({ended})"))
    transport = "+".join(dict.fromkeys(options.transports))
    # (the client's stderr is in each failed verdict's ``actual``; the report's tail is the server's)
    run = Run(" ".join(argv), transport, verdicts, revisions, time.monotonic() - started)
    return run, runs
