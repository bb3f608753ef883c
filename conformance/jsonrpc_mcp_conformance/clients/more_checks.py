"""The judges of cancellation, URL-mode elicitation and the skills extension's host verification:
registered in :data:`.checks.CHECKS` like the others, each reading one run's recorded traffic."""

from __future__ import annotations

from typing import Any

from .checks import NOTHING_SENT, Outcome, ScenarioRun, _fail, _pass, _skip, check
from .recording import CLIENT, SERVER, Event

__all__: list[str] = []  # (the judges are found in CHECKS by name)

CANCELLED = "notifications/cancelled"


def _params(message: dict[str, Any]) -> dict[str, Any]:
    params = message.get("params")
    return params if isinstance(params, dict) else {}


def _same_id(a: Any, b: Any) -> bool:
    """JSON-RPC ids are equal when their JSON values are: ``1`` is not ``"1"`` (nor ``True``)."""
    return type(a) is type(b) and a == b


def _indexed(run: ScenarioRun, source: str) -> list[tuple[int, Event, dict[str, Any]]]:
    return [(i, e, m) for i, e in enumerate(run.events) if e.source == source for m in e.messages()]


# -- cancellation -------------------------------------------------------------------------------------
def _slow_call(run: ScenarioRun, tool: str) -> tuple[int, Event, dict[str, Any]] | None:
    for index, event, message in _indexed(run, CLIENT):
        if message.get("method") == "tools/call" and "id" in message and _params(message).get("name") == tool:
            return index, event, message
    return None


def _answered_at(run: ScenarioRun, after: int, rid: Any) -> int | None:
    """The index of the server's response to the client's request ``rid`` (after ``after``)."""
    for index, _, message in _indexed(run, SERVER):
        if index > after and "method" not in message and _same_id(message.get("id"), rid):
            return index
    return None


@check("cancel-notified")
def cancel_notified(run: ScenarioRun, params: dict[str, Any]) -> Outcome:
    """After calling the scenario's slow ``tool``, the client sent ``notifications/cancelled`` while
    the call was unanswered (which request it names is ``cancel-request-id``'s to judge)."""
    if not run.events:
        return _fail(NOTHING_SENT)
    found = _slow_call(run, params["tool"])
    if found is None:
        return _fail(f"the client never called {params['tool']}")
    index, event, call = found
    answered = _answered_at(run, index, call.get("id"))
    cancels = [
        i
        for i, _, m in _indexed(run, CLIENT)
        if i > index and m.get("method") == CANCELLED and (answered is None or i < answered)
    ]
    if not cancels:
        how = "before the server answered it" if answered is not None else "at all"
        return _fail(
            f"the client gave up on {params['tool']} without notifications/cancelled {how}", evidence=[event]
        )
    return _pass()


@check("cancel-request-id")
def cancel_request_id(run: ScenarioRun, params: dict[str, Any]) -> Outcome:
    """Every ``notifications/cancelled`` the client sent names (``requestId``, the same JSON value) a
    request it had sent before."""
    if not run.events:
        return _fail(NOTHING_SENT)
    sent: list[Any] = []
    cancels = 0
    problems, evidence = [], []
    for _, event, message in _indexed(run, CLIENT):
        if "method" in message and "id" in message:
            sent.append(message["id"])
        if message.get("method") != CANCELLED:
            continue
        cancels += 1
        rid = _params(message).get("requestId", None)
        if "requestId" not in _params(message):
            problems.append("a notifications/cancelled without requestId (a non-task request needs one)")
            evidence.append(event)
        elif not any(_same_id(rid, earlier) for earlier in sent):
            ids = ", ".join(repr(i) for i in sent)
            problems.append(
                f"notifications/cancelled names requestId {rid!r}: no request of the client's ({ids})"
            )
            evidence.append(event)
    if not cancels:
        return _skip("the client sent no notifications/cancelled")
    return _fail(*problems[:5], evidence=evidence[:5]) if problems else _pass()


@check("cancel-not-initialize")
def cancel_not_initialize(run: ScenarioRun, params: dict[str, Any]) -> Outcome:
    """No ``notifications/cancelled`` names the ``initialize`` request."""
    found = run.initialize()
    if found is None:
        return _fail(NOTHING_SENT) if not run.events else _skip("the client sent no initialize")
    rid = found[1].get("id")
    bad = [
        e
        for _, e, m in _indexed(run, CLIENT)
        if m.get("method") == CANCELLED and _same_id(_params(m).get("requestId"), rid)
    ]
    if bad:
        return _fail(f"the client cancelled its initialize request (id {rid!r})", evidence=bad[:3])
    return _pass()


@check("cancel-stream-closed")
def cancel_stream_closed(run: ScenarioRun, params: dict[str, Any]) -> Outcome:
    """HTTP, 2026-07-28: the client closed the slow call's response stream (its connection) before
    the server's response was complete."""
    if not run.events:
        return _fail(NOTHING_SENT)
    found = _slow_call(run, params["tool"])
    if found is None:
        return _fail(f"the client never called {params['tool']}")
    _, event, call = found
    if event.closed is None:
        answered = any(
            _same_id(m.get("id"), call.get("id")) and "method" not in m for _, m in run.server_messages()
        )
        why = "the server answered it" if answered else "its connection ended with the response"
        return _fail(
            f"the client kept the response stream of {params['tool']} open until {why}: "
            "it never gave up on it",
            evidence=[event],
        )
    return _pass(f"closed {event.closed - event.t:.1f} s after the call")


# -- URL-mode elicitation -----------------------------------------------------------------------------
def _url_asks(run: ScenarioRun) -> tuple[set[Any], set[str]]:
    """The ids of the server's URL-mode ``elicitation/create`` requests (handshake era) and the keys of
    its URL-mode input requests (2026-07-28)."""
    ids: set[Any] = set()
    keys: set[str] = set()
    for _, message in run.server_messages():
        is_ask = message.get("method") == "elicitation/create" and "id" in message
        if is_ask and _params(message).get("mode") == "url":
            ids.add(message["id"])
        result = message.get("result")
        requests = result.get("inputRequests") if isinstance(result, dict) else None
        for key, request in (requests or {}).items() if isinstance(requests, dict) else ():
            is_ask = isinstance(request, dict) and request.get("method") == "elicitation/create"
            if is_ask and _params(request).get("mode") == "url":
                keys.add(key)
    return ids, keys


def _url_answers(run: ScenarioRun) -> list[tuple[Event, str, Any]]:
    """The client's answers to URL-mode elicitations: (event, "result" | "error", value)."""
    ids, keys = _url_asks(run)
    found: list[tuple[Event, str, Any]] = []
    for event, message in run.client_messages():
        if "method" not in message and message.get("id") in ids:
            kind = "error" if "error" in message else "result"
            found.append((event, kind, message.get(kind)))
        responses = _params(message).get("inputResponses")
        if isinstance(responses, dict):
            found.extend((event, "result", v) for k, v in responses.items() if k in keys)
    return found


@check("url-elicitation-declared")
def url_elicitation_declared(run: ScenarioRun, params: dict[str, Any]) -> Outcome:
    """A URL-mode elicitation is answered with a result only by a client that declared
    ``elicitation.url``; one that did not answers -32602."""
    answers = _url_answers(run)
    if not answers:
        if not run.events:
            return _fail(NOTHING_SENT)
        return _skip(
            "the client answered no URL-mode elicitation (in 2026-07-28 the server asks none of a "
            "client that did not declare it)"
        )
    declared = run.declared_capabilities()
    has_url = bool(declared) and all(
        isinstance(c, dict) and isinstance(c.get("elicitation"), dict) and "url" in c["elicitation"]
        for c in declared
    )
    problems, evidence = [], []
    for event, kind, value in answers:
        if has_url:
            continue
        if kind == "result":
            problems.append("the client answered a URL-mode elicitation without declaring elicitation.url")
            evidence.append(event)
        elif not isinstance(value, dict) or value.get("code") != -32602:
            problems.append(
                f"the client refused a URL-mode elicitation it did not declare with {value!r}, not -32602"
            )
            evidence.append(event)
    return _fail(*problems[:3], evidence=evidence[:3]) if problems else _pass()


@check("url-elicitation-no-content")
def url_elicitation_no_content(run: ScenarioRun, params: dict[str, Any]) -> Outcome:
    """The ElicitResult answering a URL-mode elicitation carries no ``content``."""
    results = [(e, v) for e, kind, v in _url_answers(run) if kind == "result"]
    if not results:
        return _fail(NOTHING_SENT) if not run.events else _skip("the client answered no URL-mode elicitation")
    bad = [(e, v) for e, v in results if isinstance(v, dict) and "content" in v]
    if bad:
        return _fail(
            *(f"a URL-mode elicitation answered with content {v['content']!r}"[:200] for _, v in bad[:3]),
            evidence=[e for e, _ in bad[:3]],
        )
    return _pass()


@check("url-not-fetched")
def url_not_fetched(run: ScenarioRun, params: dict[str, Any]) -> Outcome:
    """HTTP: the client requested nothing under the elicitation URL's path (on the scenario server)."""
    ids, keys = _url_asks(run)
    if not ids and not keys:
        return _fail(NOTHING_SENT) if not run.events else _skip("the server sent no URL-mode elicitation")
    fetched = [
        e for e in run.events if e.source == CLIENT and e.http.split(" ")[-1].startswith(params["path"])
    ]
    if fetched:
        return _fail(
            f"the client fetched the elicitation URL itself ({fetched[0].http})", evidence=fetched[:3]
        )
    return _pass()


@check("elicitation-complete-ignored")
def elicitation_complete_ignored(run: ScenarioRun, params: dict[str, Any]) -> Outcome:
    """After ``notifications/elicitation/complete`` naming an id it never saw, the client answers
    nothing to it (no response with no request's id) and goes on: it answers the server's next
    request."""
    unknown = params["elicitation_id"]
    at = next(
        (
            i
            for i, _, m in _indexed(run, SERVER)
            if m.get("method") == "notifications/elicitation/complete"
            and _params(m).get("elicitationId") == unknown
        ),
        None,
    )
    if at is None:
        return (
            _fail(NOTHING_SENT)
            if not run.events
            else _skip("the server sent no completion for an unknown id")
        )
    asked = [(i, m.get("id")) for i, _, m in _indexed(run, SERVER) if "method" in m and "id" in m]
    problems, evidence = [], []
    for i, event, message in _indexed(run, CLIENT):
        if (
            i > at
            and "method" not in message
            and not any(_same_id(message.get("id"), rid) for _, rid in asked)
        ):
            problems.append(f"the client answered the completion notification: {event.raw[:160]}")
            evidence.append(event)
    later = [rid for i, rid in asked if i > at]
    answered = {repr(m.get("id")) for _, _, m in _indexed(run, CLIENT) if "method" not in m}
    if later and repr(later[0]) not in answered:
        problems.append("the client stopped answering after the completion for an unknown id")
    return _fail(*problems[:3], evidence=evidence[:3]) if problems else _pass()


# -- skills (SEP-2640, host side) -----------------------------------------------------------------------
def _listed(run: ScenarioRun) -> tuple[int, list[dict[str, Any]]] | None:
    """The index of the (first) skills/list answer and the entries it listed."""
    asked = {
        repr(m.get("id"))
        for _, _, m in _indexed(run, CLIENT)
        if m.get("method") == "skills/list" and "id" in m
    }
    for index, _, message in _indexed(run, SERVER):
        result = message.get("result")
        if "method" not in message and repr(message.get("id")) in asked and isinstance(result, dict):
            skills = result.get("skills")
            return index, [s for s in skills if isinstance(s, dict)] if isinstance(skills, list) else []
    return None


def _files(entries: list[dict[str, Any]]) -> set[str]:
    found = set()
    for entry in entries:
        items = entry.get("resources")
        for item in items if isinstance(items, list) else []:
            if isinstance(item, dict):
                found.add(str(item.get("uri")))
    return found


def _reads(run: ScenarioRun) -> list[tuple[int, Event, str]]:
    return [
        (i, e, str(_params(m).get("uri")))
        for i, e, m in _indexed(run, CLIENT)
        if m.get("method") == "resources/read" and "id" in m
    ]


@check("skills-no-prefetch")
def skills_no_prefetch(run: ScenarioRun, params: dict[str, Any]) -> Outcome:
    """The client listed the skills and read none of their files (it loaded no skill)."""
    listed = _listed(run)
    if listed is None:
        return (
            _fail(NOTHING_SENT)
            if not run.events
            else _fail("the client never listed the skills (skills/list)")
        )
    files = _files(listed[1])
    read = [(e, uri) for _, e, uri in _reads(run) if uri in files]
    if read:
        return _fail(
            f"the client read {len(read)} skill file(s) without loading a skill: "
            + ", ".join(uri for _, uri in read),
            evidence=[e for e, _ in read[:3]],
        )
    return _pass()


@check("skills-verify")
def skills_verify(run: ScenarioRun, params: dict[str, Any]) -> Outcome:
    """The client listed the skill, read its SKILL.md (served failing the ``mode`` check) and then
    read no other file of the skill: it refused the skill."""
    listed = _listed(run)
    if listed is None:
        return (
            _fail(NOTHING_SENT)
            if not run.events
            else _fail("the client never listed the skills (skills/list)")
        )
    skill_md = {str(entry.get("uri")) for entry in listed[1]}
    reads = _reads(run)
    first = next(((i, e) for i, e, uri in reads if uri in skill_md), None)
    if first is None:
        return _fail("the client never read the skill's SKILL.md: it loaded no skill, so it refused nothing")
    others = [(e, uri) for i, e, uri in reads if i > first[0] and uri in _files(listed[1]) - skill_md]
    if others:
        return _fail(
            f"the client went on to {others[0][1]} after a SKILL.md failing the {params['mode']} check: "
            "it used the skill",
            evidence=[first[1], others[0][0]],
        )
    return _pass()
