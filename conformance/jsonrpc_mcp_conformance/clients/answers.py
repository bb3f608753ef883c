"""The judges of the client's answers to the server's requests (sampling, roots, elicitation) and
of the capabilities it declares for them: registered in :data:`.checks.CHECKS` like the others."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .checks import NOTHING_SENT, Outcome, ScenarioRun, _fail, _pass, _skip, check

__all__: list[str] = []  # (the judges are found in CHECKS by name)


@check("answers")
def answers(run: ScenarioRun, params: dict[str, Any]) -> Outcome:
    """The client answered the server's ``method`` request(s) with a result of the expected shape."""
    method = params["method"]
    found = run.answers_to(method)
    if not found:
        return _fail(NOTHING_SENT) if not run.events else _fail(f"the client never answered {method}")
    problems = []
    for kind, value in found:
        if kind == "error":
            problems.append(f"the client answered {method} with an error: {value!r}"[:300])
            continue
        problems.extend(SHAPES[params["shape"]](value))
    return _fail(*problems[:5]) if problems else _pass()


def _create_message_result(value: Any) -> list[str]:
    if not isinstance(value, dict):
        return [f"the CreateMessageResult is {value!r}, no object"]
    problems = []
    if not isinstance(value.get("model"), str):
        problems.append("the CreateMessageResult has no model (a string)")
    if value.get("role") not in ("user", "assistant"):
        problems.append(f"the CreateMessageResult's role is {value.get('role')!r}")
    if not isinstance(value.get("content"), (dict, list)):
        problems.append("the CreateMessageResult has no content")
    return problems


def _roots_result(value: Any) -> list[str]:
    roots = value.get("roots") if isinstance(value, dict) else None
    if not isinstance(roots, list):
        return [f"the ListRootsResult is {value!r}: it needs a roots list"]
    return [
        f"root {root!r}: its uri must be a file:// URI"
        for root in roots
        if not isinstance(root, dict) or not str(root.get("uri", "")).startswith("file://")
    ]


def _elicit_result(value: Any) -> list[str]:
    if not isinstance(value, dict) or value.get("action") not in ("accept", "decline", "cancel"):
        return [f"the ElicitResult is {value!r}: its action must be accept, decline or cancel"]
    return []


SHAPES: dict[str, Callable[[Any], list[str]]] = {
    "CreateMessageResult": _create_message_result,
    "ListRootsResult": _roots_result,
    "ElicitResult": _elicit_result,
}


def _asked(run: ScenarioRun, method: str) -> list[dict[str, Any]]:
    """The params of every ``method`` request the server sent (as a JSON-RPC request, or in 2026-07-28
    as an input request of an InputRequiredResult)."""
    found = []
    for _, message in run.server_messages():
        if message.get("method") == method and isinstance(message.get("params"), dict):
            found.append(message["params"])
        result = message.get("result")
        requests = result.get("inputRequests") if isinstance(result, dict) else None
        for request in (requests or {}).values() if isinstance(requests, dict) else ():
            if isinstance(request, dict) and request.get("method") == method:
                found.append(request.get("params") or {})
    return found


@check("elicitation-defaults")
def elicitation_defaults(run: ScenarioRun, params: dict[str, Any]) -> Outcome:
    """Each field the form the server sent has a default for carries that default in the accepted
    answer (the defaults are read from the form as sent: a revision without them asks for none)."""
    defaults: dict[str, Any] = {}
    for asked in _asked(run, "elicitation/create"):
        schema = asked.get("requestedSchema")
        properties = schema.get("properties") if isinstance(schema, dict) else None
        for name, field_schema in (properties or {}).items():
            if isinstance(field_schema, dict) and "default" in field_schema:
                defaults[name] = field_schema["default"]
    found = [value for kind, value in run.answers_to("elicitation/create") if kind == "result"]
    if not found:
        return _fail(NOTHING_SENT) if not run.events else _fail("the client never accepted the elicitation")
    if not defaults:
        return _skip("the form the server sent has no default")
    for value in found:
        content = value.get("content") if isinstance(value, dict) else None
        if not isinstance(value, dict) or value.get("action") != "accept" or not isinstance(content, dict):
            return _fail(f"the elicitation was answered {value!r}, not accepted with content")
        wrong = [
            f"{key}: {content.get(key)!r} instead of the default {default!r}"
            for key, default in defaults.items()
            if content.get(key) != default or (type(content.get(key)) is bool) != (type(default) is bool)
        ]
        if wrong:
            return _fail(*wrong)
    return _pass()


@check("capability-declared")
def capability_declared(run: ScenarioRun, params: dict[str, Any]) -> Outcome:
    method, capability = params["method"], params["capability"]
    answered = [value for kind, value in run.answers_to(method) if kind == "result"]
    if not answered:
        return _skip(f"the client answered no {method} request")
    declared = run.declared_capabilities()
    if not declared or not all(isinstance(c, dict) and capability in c for c in declared):
        return _fail(f"the client answered {method} without declaring the {capability} capability")
    return _pass()
