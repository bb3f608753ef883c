"""Fixture variables: ``${name}`` substitution, and the variables every revision and target start with."""

from __future__ import annotations

from typing import Any

from jsonrpc_mcp import wire

from ._channel import _OMIT, SKIP, Abort
from .fixtures import LEGACY_REVISIONS, MODERN_REVISIONS
from .targets import Target

__all__ = [
    "CLIENT_INFO",
    "WHY_UNKNOWN",
    "base_variables",
    "initialize_request",
    "substitute",
    "target_variables",
    "why_unknown",
]

CLIENT_INFO = {"name": "jsonrpc-mcp-conformance", "version": "1"}
WHY_UNKNOWN = "why_unknown"  # variables[WHY_UNKNOWN]: variable name -> why the target cannot give it


def target_variables(target: Target) -> dict[str, Any]:
    """What the target tells fixtures (an HTTP target: its URL, the tokens it was given, and in
    ``why_unknown`` the reason for each token it was not given)."""
    return dict(getattr(target, "variables", {}))


def why_unknown(variables: dict[str, Any], name: str) -> str:
    reasons = variables.get(WHY_UNKNOWN)
    if isinstance(reasons, dict) and name in reasons:
        return str(reasons[name])
    return f"${{{name}}} is not known for this server"


def substitute(value: Any, variables: dict[str, Any]) -> Any:
    if isinstance(value, str):
        if value.startswith("${") and value.endswith("}") and value.count("${") == 1:
            name = value[2:-1]
            if name not in variables:
                raise Abort(SKIP, [f"not applicable: {why_unknown(variables, name)}"])
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
                out[str(substitute(key, variables)) if "${" in key else key] = new
        return out
    return value


def base_variables(revision: str) -> dict[str, Any]:
    modern = revision in MODERN_REVISIONS
    meta = (
        {
            wire.PROTOCOL_VERSION: revision,
            wire.CLIENT_CAPABILITIES: {},
            wire.CLIENT_INFO: CLIENT_INFO,
        }
        if modern
        else _OMIT
    )
    return {
        "revision": revision,
        "latest_legacy": LEGACY_REVISIONS[-1],
        "client_info": CLIENT_INFO,
        "meta": meta,
        "probe_method": wire.DISCOVER if modern else wire.PING,
        "probe_params": {"_meta": meta} if modern else _OMIT,
    }


def initialize_request(revision: str, rid: Any = "conformance-init") -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": rid,
        "method": wire.INITIALIZE,
        "params": {"protocolVersion": revision, "capabilities": {}, "clientInfo": CLIENT_INFO},
    }
