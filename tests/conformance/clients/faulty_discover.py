"""The faulty client's era detection (the scenarios ``discover-fallback`` and
``discover-fallback-any-error``) and caching (``caching-hints``), with their faults (``FAULTS``):
``faulty_client.py`` connects through :func:`connect` in the first two at 2026-07-28 and plays the
third through :func:`play`. Without a fault it is a client of both eras: it
probes with ``server/discover`` and, refused with anything but a recognised modern error, falls back
to ``initialize`` and stays in the handshake era.
"""

from __future__ import annotations

import json
import os
from typing import Any

__all__ = ["FAULTS", "PLAYED", "SCENARIOS", "SCENARIO_FAULTS", "connect", "play"]

FAULTS = {
    "no-fallback": "2026-07-28: give up when server/discover is refused, whatever the error",
    "fallback-on-one-code": "2026-07-28: fall back to initialize only if server/discover is refused -32601",
    "skip-probe": "2026-07-28 (era detection): initialize at once, no server/discover probe",
    "reprobe": "2026-07-28 (era detection): after falling back, probe with server/discover once more",
    "cache-ignore-ttl": "2026-07-28: answer the second tools/list from a cache, though its ttlMs was 0",
    "cache-by-method": "2026-07-28: cache resources/read by method alone (the second uri is not read)",
}
SCENARIO_FAULTS = tuple(FAULTS)
SCENARIOS = ("discover-fallback", "discover-fallback-any-error")  # (connected through connect)
PLAYED = ("caching-hints",)  # (played through play)
LEGACY, MODERN = "2025-11-25", "2026-07-28"  # (the handshake revision fallen back to)
MODERN_ERRORS = (-32020, -32021, -32022)


def _probe(client: Any) -> dict[str, Any]:
    """``server/discover`` in the 2026-07-28 envelope; the server's answer (over HTTP a 400 with no
    JSON body is ``{"error": {"status": 400}}``)."""
    message = {
        "jsonrpc": "2.0",
        "id": client._id(),
        "method": "server/discover",
        "params": {"_meta": {**client._meta(), "io.modelcontextprotocol/protocolVersion": MODERN}},
    }
    answer = client.transport.request(message, client.answer)
    return answer if isinstance(answer, dict) else {}


def connect(client: Any) -> None:
    """Era detection at 2026-07-28: stay modern on a DiscoverResult or a modern error, else fall
    back to the handshake (``client.connect()`` in the handshake era)."""
    faults = client.faults
    if "skip-probe" not in faults:
        client.transport_version(client.revision)
        answer = _probe(client)
        error = answer.get("error")
        if not isinstance(error, dict) or error.get("code") in MODERN_ERRORS:
            return  # a modern server: the scenario goes on in 2026-07-28
        code = error.get("code")
        if "no-fallback" in faults or ("fallback-on-one-code" in faults and code != -32601):
            raise ConnectionError(f"server/discover refused ({error}): giving up")
    client.modern, client.revision = False, LEGACY
    if getattr(client.transport, "version_header", None) is not None:
        client.transport.version_header = None
    client.connect()
    if "reprobe" in faults:
        _probe(client)  # (its answer ignored)


def play(client: Any) -> None:
    """caching-hints, after the first tools/list: list the tools again (the context's ``listTools``
    in all), then the resources, and read each; a cache keyed as each fault says answers instead."""
    context = json.loads(os.environ.get("MCP_CONFORMANCE_CONTEXT") or "{}")
    cache: dict[str, Any] = {}
    for _ in range(int(context.get("listTools", 2)) - 1):
        if "cache-ignore-ttl" not in client.faults:
            client.request("tools/list")
    resources = (client.request("resources/list") or {}).get("resources") or []
    for resource in resources:
        key = "resources/read" if "cache-by-method" in client.faults else f"resources/read {resource['uri']}"
        if key not in cache:
            cache[key] = client.request("resources/read", {"uri": resource["uri"]})
