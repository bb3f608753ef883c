"""What the tests of ``jsonrpc-mcp conformance client`` share: the two clients they run (this
project's and the faulty one) and one run of chosen scenarios, bounded by the runner's timeout."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path

import anyio

from jsonrpc_mcp_conformance.clients.runner import ClientOptions, run_client_conformance
from jsonrpc_mcp_conformance.clients.scenarios import load_client_spec
from jsonrpc_mcp_conformance.official.client import CLIENT_MODULE
from jsonrpc_mcp_conformance.runner import PASS, SKIP, Run

FAULTY = [sys.executable, str(Path(__file__).with_name("clients") / "faulty_client.py")]
OURS = [sys.executable, "-m", CLIENT_MODULE]
CLIENT_TIMEOUT = 45.0  # one scenario's client run (importing the library on a loaded machine)
L, M = "2025-11-25", "2026-07-28"


def run_clients(
    command: Sequence[str],
    transports: Sequence[str],
    scenarios: Sequence[str] = (),
    revisions: Sequence[str] = (L, M),
    only: str = "",
) -> Run:
    """``command`` through ``scenarios`` (every one when empty), judged by the requirements whose
    id starts with ``only``."""
    spec = load_client_spec()
    requirements = [f for f in spec.requirements if f.id.startswith(only)]
    options = ClientOptions(revisions=tuple(revisions), transports=tuple(transports), timeout=CLIENT_TIMEOUT)
    run, _ = anyio.run(run_client_conformance, list(command), spec, requirements, options, tuple(scenarios))
    return run


def failed(run: Run) -> set[str]:
    """``id@revision/transport`` of every verdict that neither passed nor was skipped."""
    return {f"{v.id}@{v.revision}/{v.transport}" for v in run.verdicts if v.status not in (PASS, SKIP)}
