"""The judges of MRTR rounds (``requestState``), SSE retry and resumption, and JSON Schema
preservation: registered in :data:`.checks.CHECKS` like the others, each reading one run's traffic."""

from __future__ import annotations

from typing import Any

from . import (
    discover_checks,  # noqa: F401  (era detection: discover-fallback*)
    more_checks,  # noqa: F401  (cancellation, URL elicitation, skills: they register too)
)
from .checks import NOTHING_SENT, Outcome, ScenarioRun, _fail, _pass, _skip, check
from .recording import CLIENT, SERVER, Event

__all__: list[str] = []  # (the judges are found in CHECKS by name)

MRTR_KEYS = {"tools/call": "name", "prompts/get": "name", "resources/read": "uri"}


def _key(message: dict[str, Any]) -> tuple[str, Any]:
    params = message.get("params") if isinstance(message.get("params"), dict) else {}
    return str(message.get("method")), (params or {}).get(MRTR_KEYS.get(str(message.get("method")), ""))


def _params(message: dict[str, Any]) -> dict[str, Any]:
    params = message.get("params")
    return params if isinstance(params, dict) else {}


class Round:
    """A request the server answered with an InputRequiredResult, and the client's retry of it."""

    def __init__(self, index: int, event: Event, request: dict[str, Any], result: dict[str, Any]) -> None:
        self.index, self.event, self.request, self.result = index, event, request, result
        self.retry: tuple[Event, dict[str, Any]] | None = None


def _requests(run: ScenarioRun) -> list[tuple[int, Event, dict[str, Any]]]:
    return [
        (i, e, m)
        for i, e in enumerate(run.events)
        if e.source == CLIENT
        for m in e.messages()
        if "method" in m and "id" in m
    ]


def _rounds(run: ScenarioRun) -> list[Round]:
    requests = _requests(run)
    rounds: list[Round] = []
    for index, event in enumerate(run.events):
        if event.source != SERVER:
            continue
        for message in event.messages():
            result = message.get("result")
            if "method" in message or not isinstance(result, dict):
                continue
            if result.get("resultType") != "input_required":
                continue
            asked = [r for r in requests if r[0] < index and r[2].get("id") == message.get("id")]
            if asked:
                rounds.append(Round(index, asked[-1][1], asked[-1][2], result))
    for found in rounds:
        for i, event, message in requests:
            retried = "inputResponses" in _params(message) or "requestState" in _params(message)
            if i > found.index and _key(message) == _key(found.request) and retried:
                found.retry = (event, message)
                break
    return rounds


def _called(run: ScenarioRun, tool: str) -> bool:
    return any(_key(m) == ("tools/call", tool) for _, _, m in _requests(run))


@check("mrtr-round")
def mrtr_round(run: ScenarioRun, params: dict[str, Any]) -> Outcome:
    """The client's retry of each round of the scenario's ``tool`` (``aspect``: ``echoed``: the
    requestState sent back exactly; ``no-state``: none when the round had none; ``new-id``: a JSON-RPC
    id other than the first request's)."""
    tool, aspect = params["tool"], params["aspect"]
    if not run.events:
        return _fail(NOTHING_SENT)
    if not _called(run, tool):
        return _fail(f"the client never called {tool}")
    rounds = [r for r in _rounds(run) if _key(r.request) == ("tools/call", tool)]
    if not rounds:
        return _skip(f"the server asked for no input when {tool} was called")
    problems, evidence = [], []
    for found in rounds:
        if found.retry is None:
            problems.append(f"{tool}: the client did not retry the request the server asked input for")
            evidence.append(found.event)
            continue
        event, retry = found.retry
        sent, back = found.result.get("requestState"), _params(retry).get("requestState", None)
        if aspect == "echoed" and "requestState" in found.result and back != sent:
            problems.append(
                f"{tool}: the retry's requestState is {back!r}, not exactly the {sent!r} the server sent"
            )
            evidence.append(event)
        if aspect == "no-state" and "requestState" not in found.result and "requestState" in _params(retry):
            problems.append(f"{tool}: the retry carries requestState {back!r}, though the server sent none")
            evidence.append(event)
        if aspect == "new-id" and retry.get("id") == found.request.get("id"):
            problems.append(
                f"{tool}: the retry reuses the JSON-RPC id {retry.get('id')!r} of the first request"
            )
            evidence.append(event)
    return _fail(*problems[:5], evidence=evidence[:5]) if problems else _pass()


@check("mrtr-isolation")
def mrtr_isolation(run: ScenarioRun, params: dict[str, Any]) -> Outcome:
    """``inputResponses`` and ``requestState`` only on the retry of the request they belong to: no
    request carries the state, or answers keyed as the input requests, of another request's round."""
    if not run.events:
        return _fail(NOTHING_SENT)
    if not _called(run, params["tool"]):
        return _fail(f"the client never called {params['tool']}")
    rounds = _rounds(run)
    problems, evidence = [], []
    for i, event, message in _requests(run):
        carried = {k for k in ("inputResponses", "requestState") if k in _params(message)}
        if not carried:
            continue
        earlier = [r for r in rounds if r.index < i]
        own = [r for r in earlier if _key(r.request) == _key(message)]
        others = [r for r in earlier if _key(r.request) != _key(message)]
        states = {r.result.get("requestState") for r in others if "requestState" in r.result}
        states -= {r.result.get("requestState") for r in own if "requestState" in r.result}
        keys = {k for r in others for k in (r.result.get("inputRequests") or {})}
        responses = _params(message).get("inputResponses")
        leaked = []
        if "requestState" in carried and _params(message)["requestState"] in states:
            leaked.append("requestState")
        if not own and isinstance(responses, dict) and responses and set(responses) <= keys:
            leaked.append("inputResponses")  # (a retry of its own round may reuse the keys)
        if leaked:
            problems.append(
                f"{message['method']} {_key(message)[1]!r} carries the {' and '.join(leaked)} of another "
                "request's round"
            )
            evidence.append(event)
    return _fail(*problems[:5], evidence=evidence[:5]) if problems else _pass()


@check("mrtr-default-complete")
def mrtr_default_complete(run: ScenarioRun, params: dict[str, Any]) -> Outcome:
    """A result without ``resultType`` is complete: the client does not retry that request with
    ``inputResponses``."""
    tool = params["tool"]
    if not run.events:
        return _fail(NOTHING_SENT)
    if not _called(run, tool):
        return _fail(f"the client never called {tool}")
    requests = _requests(run)
    bare = []
    for index, event in enumerate(run.events):
        for message in event.messages() if event.source == SERVER else ():
            result = message.get("result")
            if isinstance(result, dict) and "resultType" not in result and "method" not in message:
                asked = [r for r in requests if r[0] < index and r[2].get("id") == message.get("id")]
                if asked and _key(asked[-1][2]) == ("tools/call", tool):
                    bare.append(index)
    if not bare:
        return _skip(f"the server's answer to {tool} carried a resultType")
    retried = [
        (e, m)
        for i, e, m in requests
        if i > bare[0] and _key(m) == ("tools/call", tool) and "inputResponses" in _params(m)
    ]
    if retried:
        return _fail(
            f"the client retried {tool} with inputResponses after a result without resultType "
            "(which is complete)",
            evidence=[retried[0][0]],
        )
    return _pass()


# -- SSE retry and resumption (2025-11-25) ------------------------------------------------------------
def _primed(run: ScenarioRun) -> Event | None:
    """The priming event of the stream the server closed (its data empty), on the tools/call POST."""
    calls = {e.exchange for e in run.events if e.source == CLIENT and e.method == "tools/call"}
    for event in run.events:
        if (
            event.source == SERVER
            and event.exchange in calls
            and event.message is None
            and not event.raw.strip()
        ):
            return event
    return None


def _resumptions(run: ScenarioRun, after: Event) -> list[Event]:
    return [
        e
        for e in run.events
        if e.source == CLIENT and e.http.startswith("GET") and e.exchange > after.exchange and e.t >= after.t
    ]


@check("sse-resume")
def sse_resume(run: ScenarioRun, params: dict[str, Any]) -> Outcome:
    """After the server closed a POST's stream without its response (having sent an event id and
    ``retry``), the client resumes: a GET (``aspect``: ``reconnect``), not before ``retry``
    milliseconds (``wait``), with ``Last-Event-ID`` the primed event's id (``last-event-id``)."""
    if not run.events:
        return _fail(NOTHING_SENT)
    primed = _primed(run)
    if primed is None:
        if not any(e.method == "tools/call" for e in run.events if e.source == CLIENT):
            return _fail(f"the client never called {params['tool']}")
        return _skip("the server closed no stream before its response")
    gets = _resumptions(run, primed)
    aspect = params["aspect"]
    if aspect == "reconnect":
        if not gets:
            return _fail(
                "the client did not reconnect (GET) after the server closed the stream", evidence=[primed]
            )
        return _pass()
    if not gets:
        return _skip("the client did not reconnect")
    first = gets[0]
    if aspect == "wait":
        waited = (first.t - primed.t) * 1000
        least = params["retry_ms"] - params.get("tolerance_ms", 50)
        if waited < least:
            return _fail(
                f"the client reconnected {waited:.0f} ms after the stream closed; retry asked for "
                f"{params['retry_ms']} ms",
                evidence=[primed, first],
            )
        return _pass(f"reconnected after {waited:.0f} ms (retry: {params['retry_ms']} ms)")
    sent = first.headers.get("last-event-id")
    if sent != params["event_id"]:
        return _fail(
            f"the GET resuming the stream has Last-Event-ID {sent!r}, not {params['event_id']!r}",
            evidence=[first],
        )
    return _pass()


# -- JSON Schema 2020-12 preservation ---------------------------------------------------------------
_MISSING = object()


def _at(value: Any, path: str) -> Any:
    for part in path.split("."):
        if not isinstance(value, dict) or part not in value:
            return _MISSING
        value = value[part]
    return value


@check("schema-preserved")
def schema_preserved(run: ScenarioRun, params: dict[str, Any]) -> Outcome:
    """The focal tool's inputSchema, as the client echoed it back (``echo``'s ``schema`` argument),
    keeps each of ``paths`` as the server listed it."""
    tool, echo = params["tool"], params["echo"]
    listed: Any = _MISSING
    for _, message in run.server_messages():
        result = message.get("result")
        for item in (result.get("tools") or []) if isinstance(result, dict) else []:
            if isinstance(item, dict) and item.get("name") == tool:
                listed = item.get("inputSchema")
    if listed is _MISSING:
        return _fail(NOTHING_SENT) if not run.events else _fail(f"the client never listed the tools ({tool})")
    echoed = [
        (e, m)
        for e, m in run.client_requests()
        if _key(m) == ("tools/call", echo)
        and isinstance((_params(m).get("arguments") or {}).get("schema"), dict)
    ]
    if not echoed:
        return _fail(f"the client never sent {tool}'s inputSchema back to {echo} (its schema argument)")
    event, message = echoed[-1]
    schema = _params(message)["arguments"]["schema"]
    problems = []
    for path in params["paths"]:
        want, got = _at(listed, path), _at(schema, path)
        if got is _MISSING:
            problems.append(f"{path} is missing from the schema the client kept")
        elif got != want:
            problems.append(f"{path} is {got!r}, not {want!r} as listed")
    return _fail(*problems, evidence=[event]) if problems else _pass()


# -- progress ----------------------------------------------------------------------------------------
@check("progress-token")
def progress_token(run: ScenarioRun, params: dict[str, Any]) -> Outcome:
    """The client asked for the progress of ``tool`` (a ``progressToken`` in ``_meta``), and every
    token it sent is a string or an integer, none sent twice in the run (its requests never
    overlap a finished one's token)."""
    if not run.events:
        return _fail(NOTHING_SENT)
    tokens = []
    for event, message in run.client_requests():
        meta = _params(message).get("_meta")
        if isinstance(meta, dict) and "progressToken" in meta:
            tokens.append((event, message, meta["progressToken"]))
    if not any(_key(m) == ("tools/call", params["tool"]) for _, m, _ in tokens):
        if not _called(run, params["tool"]):
            return _fail(f"the client never called {params['tool']}")
        return _fail(
            f"the client called {params['tool']} without a progressToken (the scenario asks for progress)"
        )
    problems, evidence, seen = [], [], set()
    for event, message, token in tokens:
        if isinstance(token, bool) or not isinstance(token, (str, int)):
            problems.append(
                f"{message['method']}: progressToken {token!r} is neither a string nor an integer"
            )
            evidence.append(event)
        elif (type(token).__name__, token) in seen:
            problems.append(f"{message['method']}: progressToken {token!r} was used before")
            evidence.append(event)
        else:
            seen.add((type(token).__name__, token))
    return _fail(*problems[:5], evidence=evidence[:5]) if problems else _pass()
