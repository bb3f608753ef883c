"""The judges of era detection (2026-07-28, the scenarios ``discover-fallback`` and
``discover-fallback-any-error``): a client asked for 2026-07-28 meets a legacy server, which refuses
its modern request with an error that is not a recognised modern one; a client that speaks both eras
is to fall back to ``initialize`` and stay in the handshake era with that server. And the caching hints
(``caching-hints``): a result that says ``ttlMs: 0`` is fetched again when needed, and a cached
result never answers a request with other parameters. Registered in :data:`.checks.CHECKS` like the
others, each reading one run's recorded traffic."""

from __future__ import annotations

from typing import Any

from ..fixtures import LEGACY_REVISIONS, MODERN_REVISIONS
from .checks import (
    CHECKS,
    NOTHING_SENT,
    PROTOCOL_VERSION_KEY,
    Outcome,
    ScenarioRun,
    _fail,
    _pass,
    _skip,
    check,
)
from .recording import CLIENT, SERVER, Event

__all__ = ["MODERN_ERRORS"]

DISCOVER = "server/discover"
# The errors a 2026-07-28 server answers with that name the modern era (schema: HeaderMismatchError,
# MissingRequiredClientCapabilityError, UnsupportedProtocolVersionError): a client seeing one is
# talking to a modern server and must not fall back.
MODERN_ERRORS = {
    -32020: "HeaderMismatch",
    -32021: "MissingRequiredClientCapability",
    -32022: "UnsupportedProtocolVersion",
}


def _meta(message: dict[str, Any]) -> dict[str, Any]:
    params = message.get("params")
    meta = params.get("_meta") if isinstance(params, dict) else None
    return meta if isinstance(meta, dict) else {}


def _is_modern(event: Event, message: dict[str, Any]) -> bool:
    """A request of the 2026-07-28 era: ``server/discover``, the envelope's protocol version, or (HTTP)
    a modern ``MCP-Protocol-Version`` header."""
    return (
        message.get("method") == DISCOVER
        or _meta(message).get(PROTOCOL_VERSION_KEY) in MODERN_REVISIONS
        or event.headers.get("mcp-protocol-version") in MODERN_REVISIONS
    )


def _requests(run: ScenarioRun) -> list[tuple[int, Event, dict[str, Any]]]:
    return [
        (i, e, m)
        for i, e in enumerate(run.events)
        if e.source == CLIENT
        for m in e.messages()
        if "method" in m and "id" in m
    ]


def _answer(run: ScenarioRun, index: int, event: Event, message: dict[str, Any]) -> tuple[str, bool] | None:
    """How the server answered the client's request (at ``index``): a description, and whether the
    answer names the modern era (a result, or a recognised modern error). None: no answer seen."""
    for later in run.events[index + 1 :]:
        if later.source != SERVER:
            continue
        if event.http and later.exchange == event.exchange and not later.messages():
            body = (
                "an empty body"
                if not later.raw.strip()
                else f"a body that is no JSON-RPC ({later.raw[:60]!r})"
            )
            return f"HTTP {later.http or '?'} with {body}", False
        for answer in later.messages():
            # (over HTTP the response to the request's POST, even one without an id: an error a
            # transport made before reading the request)
            mine = answer.get("id") == message.get("id") or (
                bool(event.http) and later.exchange == event.exchange and answer.get("id") is None
            )
            if "method" in answer or not mine:
                continue
            status = f"HTTP {later.http}, " if event.http else ""
            error = answer.get("error")
            if not isinstance(error, dict):
                return f"{status}a result", True
            code = error.get("code")
            if code in MODERN_ERRORS:
                return f"{status}{MODERN_ERRORS[code]} ({code})", True
            return f"{status}error {code} ({str(error.get('message', ''))[:80]})", False
    return None


def _initialize_at(run: ScenarioRun) -> tuple[int, Event, dict[str, Any]] | None:
    return next(((i, e, m) for i, e, m in _requests(run) if m.get("method") == "initialize"), None)


@check("discover-probe-first")
def probe_first(run: ScenarioRun, params: dict[str, Any]) -> Outcome:
    """stdio: the client's first request is ``server/discover`` naming a modern protocol version in
    its ``_meta``."""
    requests = _requests(run)
    if not requests:
        return _fail(NOTHING_SENT) if not run.events else _fail("the client sent no request")
    _, event, first = requests[0]
    if first.get("method") != DISCOVER:
        return _fail(f"the client's first request is {first.get('method')}, not {DISCOVER}", evidence=[event])
    version = _meta(first).get(PROTOCOL_VERSION_KEY)
    if version not in MODERN_REVISIONS:
        return _fail(
            f"the {DISCOVER} probe names protocol version {version!r} in _meta, no modern version",
            evidence=[event],
        )
    return _pass()


@check("discover-fallback")
def fallback(run: ScenarioRun, params: dict[str, Any]) -> Outcome:
    """After the server refused the client's first modern request with anything but a recognised
    modern error (or did not answer it), the client sent ``initialize``."""
    if not run.events:
        return _fail(NOTHING_SENT)
    requests = _requests(run)
    probe = next(((i, e, m) for i, e, m in requests if _is_modern(e, m)), None)
    if probe is None:
        return _skip("the client made no modern request: it had nothing to fall back from")
    index, event, message = probe
    answer = _answer(run, index, event, message)
    what, modern = answer if answer is not None else ("no answer", False)
    if modern:
        return _skip(f"the server answered the modern {message.get('method')} with {what}")
    later = [(e, m) for i, e, m in requests if i > index and m.get("method") == "initialize"]
    if not later:
        return _fail(
            f"the server refused the modern {message.get('method')} with {what}, not a recognised modern "
            "error, and the client never sent initialize: it did not fall back",
            evidence=[event],
        )
    return _pass(f"fell back after {what}")


@check("discover-handshake-after-fallback")
def handshake_after_fallback(run: ScenarioRun, params: dict[str, Any]) -> Outcome:
    """After falling back, the client asked ``initialize`` for a handshake revision, sent
    ``notifications/initialized`` before any other request, and listed the tools (answered)."""
    found = _initialize_at(run)
    if found is None:
        return _fail(NOTHING_SENT) if not run.events else _skip("the client did not fall back to initialize")
    _, event, message = found
    version = (
        (message.get("params") or {}).get("protocolVersion")
        if isinstance(message.get("params"), dict)
        else None
    )
    if version not in LEGACY_REVISIONS:
        return _fail(
            f"initialize asks for protocol version {version!r}, no handshake revision", evidence=[event]
        )
    answer = run.initialize_answer()
    if answer is None or not isinstance(answer[1].get("result"), dict):
        return _skip("the server gave initialize no result")
    initialized = CHECKS["initialized-sent"](run, {})
    if initialized.status == "fail":
        return initialized
    listed = [(i, e, m) for i, e, m in _requests(run) if i > answer[0] and m.get("method") == "tools/list"]
    if not listed:
        return _fail("after the handshake the client never listed the tools (tools/list)")
    if not any(_answered(run, i, m) for i, _, m in listed):
        return _fail("no tools/list of the client's was answered with a result", evidence=[listed[0][1]])
    return _pass()


def _answered(run: ScenarioRun, index: int, message: dict[str, Any]) -> bool:
    return any(
        "method" not in answer
        and answer.get("id") == message.get("id")
        and isinstance(answer.get("result"), dict)
        for event in run.events[index + 1 :]
        if event.source == SERVER
        for answer in event.messages()
    )


@check("discover-era-kept")
def era_kept(run: ScenarioRun, params: dict[str, Any]) -> Outcome:
    """Once fallen back, the client made no further modern request of that server: no
    ``server/discover``, no request with the 2026-07-28 envelope or ``MCP-Protocol-Version``."""
    found = _initialize_at(run)
    if found is None:
        return _fail(NOTHING_SENT) if not run.events else _skip("the client did not fall back to initialize")
    modern = [
        (e, m)
        for i, e in enumerate(run.events)
        if i > found[0] and e.source == CLIENT
        for m in e.messages()
        if "method" in m and _is_modern(e, m)
    ]
    if modern:
        return _fail(
            *(
                f"after falling back the client sent the modern request {m.get('method')}"
                for _, m in modern[:3]
            ),
            evidence=[e for e, _ in modern[:3]],
        )
    return _pass()


# -- caching hints (the scenario caching-hints) ---------------------------------------------------------
def _answers(run: ScenarioRun, method: str) -> list[tuple[Event, dict[str, Any], Any]]:
    """The client's ``method`` requests, each with the result the server answered it with (or None)."""
    found = []
    for index, event, message in _requests(run):
        if message.get("method") != method:
            continue
        result = next(
            (
                answer.get("result")
                for later in run.events[index + 1 :]
                if later.source == SERVER
                for answer in later.messages()
                if "method" not in answer and answer.get("id") == message.get("id")
            ),
            None,
        )
        found.append((event, message, result))
    return found


@check("cache-stale-refetched")
def stale_refetched(run: ScenarioRun, params: dict[str, Any]) -> Outcome:
    """The scenario has the client need ``method``'s result ``times`` times; the server's answer says
    ``ttlMs: 0`` (stale at once): each time the request went to the server."""
    method, times = params["method"], int(params["times"])
    sent = _answers(run, method)
    if not sent:
        return _fail(NOTHING_SENT) if not run.events else _fail(f"the client never sent {method}")
    first = sent[0][2]
    if not isinstance(first, dict) or first.get("ttlMs") != 0:
        return _skip(f"the server's first {method} result did not say ttlMs 0")
    if len(sent) < times:
        return _fail(
            f"the client sent {method} {len(sent)} time(s) where the scenario needs its result {times} "
            "times: it reused a result whose ttlMs was 0 (stale at once)",
            evidence=[e for e, _, _ in sent],
        )
    return _pass()


@check("cache-key-respected")
def key_respected(run: ScenarioRun, params: dict[str, Any]) -> Outcome:
    """The client read every resource the server listed (the scenario's use): a ``resources/read``
    for each URI, however fresh an earlier read's result was."""
    listed = [result for _, _, result in _answers(run, "resources/list") if isinstance(result, dict)]
    if not listed:
        return _fail(NOTHING_SENT) if not run.events else _fail("the client never listed the resources")
    resources = listed[0].get("resources")
    uris = [r.get("uri") for r in resources if isinstance(r, dict)] if isinstance(resources, list) else []
    read = {str((m.get("params") or {}).get("uri")) for _, m, _ in _answers(run, "resources/read")}
    missing = [uri for uri in uris if uri not in read]
    if not read:
        return _fail("the client read none of the listed resources")
    if missing:
        return _fail(
            f"the client read {sorted(read)} but never {missing}: a request with other parameters "
            "was served from the cache (or not made)"
        )
    return _pass()
