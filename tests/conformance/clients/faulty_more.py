"""The faulty client's scenarios cancellation, elicitation-url and the four sep-2640-client-* ones,
with their faults (``FAULTS``); ``faulty_client.py`` plays them through :func:`play`, answers
URL-mode elicitations with :func:`url_answer` and hands every server notification to
:func:`notified`. Without a fault, each is played correctly.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import time
from typing import Any

import httpx

__all__ = ["FAULTS", "SCENARIOS", "SCENARIO_FAULTS", "notified", "play", "url_answer"]

FAULTS = {
    "no-cancel": "give up on the slow call without cancelling it (2026-07-28 HTTP: keep its stream open)",
    "cancel-wrong-id": 'cancel the slow call with its id as a string ("2" for 2)',
    "cancel-initialize": "handshake era: send notifications/cancelled for the initialize request",
    "url-undeclared": "declare elicitation without the url mode, answer URL-mode elicitations all the same",
    "url-bad-action": "answer a URL-mode elicitation with action 'opened'",
    "url-content": "answer a URL-mode elicitation accept with content (an apiKey)",
    "url-prefetch": "HTTP: fetch the URL of a URL-mode elicitation before answering it",
    "answer-unknown-completion": "answer notifications/elicitation/complete for an unknown id with an error",
    "skills-prefetch": "read every file of every listed skill right after listing them",
    "skills-ignore-digest": "load a skill without checking its SKILL.md's digest",
    "skills-ignore-size": "load a skill without checking its SKILL.md's size",
    "skills-ignore-frontmatter": "load a skill without comparing its SKILL.md's frontmatter with the entry's",
}
SCENARIO_FAULTS = tuple(FAULTS)
SCENARIOS = (
    "cancellation",
    "elicitation-url",
    "sep-2640-client-no-prefetch",
    "sep-2640-client-verify-digest",
    "sep-2640-client-verify-size",
    "sep-2640-client-verify-frontmatter",
)
COMPLETE = "notifications/elicitation/complete"
INITIALIZE_ID = 1  # (the faulty client's first request is initialize, id 1)


def play(client: Any) -> None:
    """The scenario ``client.scenario`` (one of :data:`SCENARIOS`), after connecting."""
    if client.scenario == "cancellation":
        cancellation(client)
    elif client.scenario.startswith("sep-2640-client-"):
        skills(client)
    elif client.scenario == "elicitation-url":
        client.request("tools/call", {"name": "test_url_elicitation", "arguments": {}})


# -- cancellation -------------------------------------------------------------------------------------
def cancellation(client: Any) -> None:
    """Call the slow tool, give up after the context's ``cancelAfterMs`` and cancel the call: in the
    handshake era and over stdio with notifications/cancelled, over HTTP in 2026-07-28 by closing
    the response stream."""
    faults = client.faults
    context = json.loads(os.environ.get("MCP_CONFORMANCE_CONTEXT") or "{}")
    tool, after = context.get("tool", "test_slow"), context.get("cancelAfterMs", 1000) / 1000
    if "cancel-initialize" in faults and not client.modern:
        client.transport.notify(_cancelled(INITIALIZE_ID))
    params: dict[str, Any] = {"name": tool, "arguments": {}}
    if client.modern:
        params["_meta"] = client._meta()
    rid = client._id()
    call = {"jsonrpc": "2.0", "id": rid, "method": "tools/call", "params": params}
    transport = client.transport
    if getattr(transport, "http", None) is not None:  # Streamable HTTP
        keep_open = client.modern and "no-cancel" in faults
        timeout = httpx.Timeout(30.0 if keep_open else 10.0, read=30.0 if keep_open else after)
        try:
            with transport.http.stream(
                "POST",
                transport.url,
                content=json.dumps(call),
                headers=transport._headers(call),
                timeout=timeout,
            ) as response:
                for _ in response.iter_lines():
                    pass
        except httpx.ReadTimeout:
            pass  # given up: leaving the block closed the connection (2026-07-28: the cancellation)
        if client.modern:
            return
    else:
        transport._write(call)
        time.sleep(after)
    if "no-cancel" not in faults:
        transport.notify(_cancelled(str(rid) if "cancel-wrong-id" in faults else rid))


def _cancelled(rid: Any) -> dict[str, Any]:
    params = {"requestId": rid, "reason": "the client gave up"}
    return {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": params}


# -- URL-mode elicitation -----------------------------------------------------------------------------
def url_answer(client: Any, params: dict[str, Any]) -> dict[str, Any]:
    """The user consents to the URL (nothing is opened here)."""
    if "elicitationId" in params:
        client.elicitations.add(params["elicitationId"])
    if "url-prefetch" in client.faults and isinstance(params.get("url"), str):
        with contextlib.suppress(httpx.HTTPError):
            httpx.get(params["url"], timeout=5.0)
    answer: dict[str, Any] = {"action": "opened" if "url-bad-action" in client.faults else "accept"}
    if "url-content" in client.faults:
        answer["content"] = {"apiKey": "sk-faulty-client"}
    return answer


def notified(client: Any, message: dict[str, Any]) -> None:
    """A notification from the server."""
    known = (message.get("params") or {}).get("elicitationId") in client.elicitations
    if message.get("method") == COMPLETE and not known and "answer-unknown-completion" in client.faults:
        error = {"code": -32602, "message": "unknown elicitationId"}
        client.transport.notify({"jsonrpc": "2.0", "id": None, "error": error})


# -- skills (SEP-2640) --------------------------------------------------------------------------------
def skills(client: Any) -> None:
    """List the skills; load the first (unless the scenario is no-prefetch), verifying its SKILL.md
    against the entry (size, digest, frontmatter) before reading its other files."""
    faults = client.faults
    entries = (client.request("skills/list") or {}).get("skills") or []
    if client.scenario == "sep-2640-client-no-prefetch":
        if "skills-prefetch" in faults:
            for entry in entries:
                for item in entry.get("resources") or []:
                    client.request("resources/read", {"uri": item["uri"]})
        return
    if not entries:
        raise ValueError("the server lists no skill")
    entry = entries[0]
    items = {item["uri"]: item for item in entry.get("resources") or []}
    contents = (client.request("resources/read", {"uri": entry["uri"]}) or {}).get("contents") or [{}]
    data = str(contents[0].get("text", "")).encode("utf-8")
    item = items.get(entry["uri"]) or {}
    if "skills-ignore-size" not in faults and len(data) != item.get("size"):
        raise ValueError(f"SKILL.md is {len(data)} bytes, its entry says {item.get('size')}")
    digest = "sha256:" + hashlib.sha256(data).hexdigest()
    if "skills-ignore-digest" not in faults and digest != item.get("digest"):
        raise ValueError("SKILL.md does not match its digest")
    if "skills-ignore-frontmatter" not in faults and _frontmatter(data.decode()) != entry.get("frontmatter"):
        raise ValueError("SKILL.md's frontmatter differs from its entry's")
    for uri in items:
        if uri != entry["uri"]:
            client.request("resources/read", {"uri": uri})


def _frontmatter(text: str) -> dict[str, str]:
    """``key: value`` lines between the leading ``---`` lines (what the scenarios' skills hold)."""
    lines = text.split("\n")
    if not lines or lines[0] != "---" or "---" not in lines[1:]:
        return {}
    found = {}
    for line in lines[1 : lines.index("---", 1)]:
        key, _, value = line.partition(":")
        found[key.strip()] = value.strip()
    return found
