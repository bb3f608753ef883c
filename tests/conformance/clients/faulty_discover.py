"""The faulty client's era detection (the scenarios ``discover-fallback`` and
``discover-fallback-any-error``), with its faults (``FAULTS``): ``faulty_client.py`` connects through
:func:`connect` in those scenarios at 2026-07-28. Without a fault it is a client of both eras: it
probes with ``server/discover`` and, refused with anything but a recognised modern error, falls back
to ``initialize`` and stays in the handshake era.
"""

from __future__ import annotations

from typing import Any

__all__ = ["FAULTS", "SCENARIOS", "SCENARIO_FAULTS", "connect"]

FAULTS = {
    "no-fallback": "2026-07-28: give up when server/discover is refused, whatever the error",
    "fallback-on-one-code": "2026-07-28: fall back to initialize only if server/discover is refused -32601",
    "skip-probe": "2026-07-28 (era detection): initialize at once, no server/discover probe",
    "reprobe": "2026-07-28 (era detection): after falling back, probe with server/discover once more",
}
SCENARIO_FAULTS = tuple(FAULTS)
SCENARIOS = ("discover-fallback", "discover-fallback-any-error")
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
