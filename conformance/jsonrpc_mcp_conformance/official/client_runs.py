"""The client leg of the official suite's runs (``run.py``): the suite's ``client`` mode starts each
scenario's server and runs our client (``official/client.py``) against it; this module builds that
command, reads what the suite wrote, and says which scenarios passed.

What a client run writes with ``-o DIR``: per scenario, ``DIR/<scenario>-<timestamp>/`` (nested
for ``auth/...`` names) with ``checks.json``, and the client's ``stdout.txt`` and ``stderr.txt``.
In suite mode the suite scores checks only (the client's exit status is not kept), so the client's
own verdict is read from its stderr: the one line it writes when a scenario failed, or a traceback.

A scenario passes when every check passed (INFO aside), nothing was skipped, and the client did not
fail (unless the scenario is one where it must refuse, ``EXPECTED_REFUSALS``). A check that did not
pass is accepted only when ``accepted-client-failures.json`` names it, as ``"<suite version>
<scenario>: <check name>"``, with the reason: a fault of the suite, never of the client. An
extension scenario the client does not play (``UNSUPPORTED``, with the reason) is reported as such
and does not fail the run; a scenario a revision requires is never excused that way.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from jsonrpc_mcp_conformance.official.client import CLIENT_MODULE, EXPECTED_REFUSALS, PROG, UNSUPPORTED

__all__ = [
    "ClientListing",
    "client_command",
    "list_client_scenarios",
    "read_accepted_failures",
    "read_client_results",
    "suite_summary_scenarios",
    "suite_version",
    "summarize_client",
]

_TIMESTAMP = re.compile(r"-\d{4}-\d{2}-\d{2}T[0-9-]+Z$")
_ITEM = re.compile(r"^\s+- (\S+)(?: \[([^\]]*)\])?$")
PASSING = frozenset({"SUCCESS", "INFO"})
CRASHED = "the client crashed"


def client_command() -> str:
    """What ``--command`` runs (the suite appends the server's URL and splits it on spaces)."""
    if " " in sys.executable:
        raise SystemExit(
            f"conformance-official: the suite splits --command on spaces; python is at {sys.executable!r}"
        )
    return f"{sys.executable} -m {CLIENT_MODULE}"


# -- what the suite has ---------------------------------------------------------------------------
@dataclass
class ClientListing:
    """The client scenarios ``list --client`` names: every one with its tags (the revisions it
    belongs to, or ``extension``), and, for a requirement set, those it scores."""

    tags: dict[str, list[str]] = field(default_factory=dict)
    scored: list[str] = field(default_factory=list)

    def is_extension(self, name: str) -> bool:
        return "extension" in self.tags.get(name, [])


def parse_listing(text: str) -> ClientListing:
    """Read ``list --client`` (``  - name [tags]``) or ``list --client --requirements R`` (the
    scored ones under "Client scenarios", the rest as ``    - name [client]``)."""
    listing = ClientListing()
    section = ""
    for line in text.splitlines():
        if line and not line.startswith(" "):
            section = line
            continue
        item = _ITEM.match(line)
        if item is None:
            continue
        name, tags = item.group(1), item.group(2)
        if section.startswith("Client scenarios") and (tags is None or tags != "server"):
            listing.tags.setdefault(name, [t.strip() for t in tags.split(",")] if tags else [])
            if tags is None:
                listing.scored.append(name)
        elif tags == "client":
            listing.tags.setdefault(name, [])
    return listing


def list_client_scenarios(node: Path, entry: Path, requirements: str | None = None) -> ClientListing:
    """The installed suite's client scenarios with their tags; with ``requirements``, those the
    set runs (the tags from the full listing)."""

    def listed(*extra: str) -> str:
        command = [str(node), str(entry), "list", "--client", *extra]
        return subprocess.run(command, capture_output=True, text=True, check=True, timeout=60).stdout

    everything = parse_listing(listed())
    if requirements is None:
        return everything
    chosen = parse_listing(listed("--requirements", requirements))
    return ClientListing({name: everything.tags.get(name, []) for name in chosen.tags}, chosen.scored)


def suite_summary_scenarios(transcript: str) -> list[str]:
    """The scenarios of a client suite run, from its "SUITE SUMMARY" (``✓ name:``, ``✗ name:``,
    ``- name: skipped``)."""
    return re.findall(r"^(?:[✓✗]|-) (\S+?):", transcript.split("=== SUITE SUMMARY ===")[-1], re.MULTILINE)


# -- results ----------------------------------------------------------------------------------------
@dataclass
class ClientResult:
    checks: list[dict[str, Any]]
    stderr: str = ""


def read_client_results(out_dir: Path) -> dict[str, ClientResult]:
    """Scenario name -> its checks and the client's stderr, from ``<scenario>-<timestamp>/``."""
    results: dict[str, ClientResult] = {}
    for checks in sorted(out_dir.rglob("checks.json")):
        name = _TIMESTAMP.sub("", checks.parent.relative_to(out_dir).as_posix())
        stderr = checks.parent / "stderr.txt"
        text = stderr.read_text(errors="replace") if stderr.exists() else ""
        results[name] = ClientResult(json.loads(checks.read_text()), text)
    return results


def client_failure(name: str, stderr: str) -> str | None:
    """Why the client failed the scenario, by its stderr: a traceback always counts; its own
    failure line unless the scenario expects the client to refuse."""
    if "Traceback (most recent call last)" in stderr:
        last = [line for line in stderr.strip().splitlines() if line.strip()]
        return f"{CRASHED}: {last[-1].strip() if last else 'traceback'}"
    for line in stderr.splitlines():
        if line.startswith(f"{PROG}: ") and name not in EXPECTED_REFUSALS:
            return line.removeprefix(f"{PROG}: ")
    return None


def client_refusal(name: str, stderr: str) -> str | None:
    """What the client refused, in a scenario that expects it to (shown beside the verdict)."""
    if name not in EXPECTED_REFUSALS:
        return None
    lines = [line.removeprefix(f"{PROG}: ") for line in stderr.splitlines() if line.startswith(f"{PROG}: ")]
    return lines[-1] if lines else None


def read_accepted_failures(path: Path) -> dict[str, str]:
    """``"<suite version> <scenario>: <check name>"`` -> why that check may fail, warn or skip (a
    fault of the suite), from ``accepted-client-failures.json``."""
    if not path.exists():
        return {}
    entries = json.loads(path.read_text())
    return {str(k): str(v) for k, v in entries.items() if not k.startswith("//")}


@dataclass
class ClientTally:
    passed: int = 0
    failed: int = 0
    warned: int = 0
    unsupported: int = 0


def suite_version(entry: Path) -> str:
    """The version of the suite whose ``dist/index.js`` is ``entry``."""
    manifest = json.loads((entry.parents[1] / "package.json").read_text())
    return str(manifest["version"])


def summarize_client(
    results: dict[str, ClientResult],
    expected: list[str],
    accepted: dict[str, str],
    listing: ClientListing,
    version: str,
) -> ClientTally:
    """Print one line per scenario (and each check that did not pass, the client's failure);
    return the tally. ``accepted`` is keyed ``"<version> <scenario>: <check name>"`` (the client's
    own failure: ``"... : client failure"``), so an entry lapses when the suite is upgraded."""
    tally = ClientTally()
    width = max((len(name) for name in expected), default=20)
    for name in expected:
        result = results.get(name)
        if name in UNSUPPORTED and listing.is_extension(name) and name not in listing.scored:
            failing = [c for c in result.checks if c.get("status") not in PASSING] if result else []
            if not failing:
                tally.passed += 1
                print(f"PASS {name.ljust(width)}  (played though marked unsupported: update UNSUPPORTED)")
                continue
            tally.unsupported += 1
            print(f"UNSUPPORTED {name.ljust(width)}  extension not played: {UNSUPPORTED[name]}")
            continue
        if result is None:
            print(f"FAIL {name.ljust(width)}  no results (the scenario did not run)")
            tally.failed += 1
            continue
        counts = {
            s: sum(1 for c in result.checks if c.get("status") == s)
            for s in ("SUCCESS", "FAILURE", "WARNING", "SKIPPED")
        }
        shown: list[str] = []
        bad = warn = 0
        for check in result.checks:
            status = check.get("status")
            if status in PASSING:
                continue
            key = f"{version} {name}: {check.get('name')}"
            reason = check.get("errorMessage") or check.get("description")
            if key in accepted:
                shown.append(f"       accepted {status} {check.get('name')}: {accepted[key]}")
                continue
            shown.append(f"       {status} {check.get('id')} ({check.get('name')}): {reason}")
            if status == "WARNING":
                warn += 1
            else:
                bad += 1
        failure = client_failure(name, result.stderr)
        excusable = failure is not None and not failure.startswith(CRASHED)  # a crash never is
        if excusable and f"{version} {name}: client failure" in accepted:
            shown.append(f"       accepted client failure: {accepted[f'{version} {name}: client failure']}")
        elif failure is not None:
            bad += 1
            shown.append(f"       the client failed: {failure}")
        refusal = client_refusal(name, result.stderr)
        if refusal is not None:
            shown.append(f"       the client refused, as it must: {refusal}")
        verdict = "FAIL" if bad else ("WARN" if warn else "PASS")
        print(
            f"{verdict} {name.ljust(width)}  {counts['SUCCESS']} passed, {counts['FAILURE']} failed, "
            f"{counts['WARNING']} warnings, {counts['SKIPPED']} skipped"
            + ("" if name in listing.scored or not listing.scored else " (not scored by the set)")
        )
        for line in shown:
            print(line)
        if bad:
            tally.failed += 1
        elif warn:
            tally.warned += 1
        else:
            tally.passed += 1
    return tally
