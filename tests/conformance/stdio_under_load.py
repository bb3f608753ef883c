"""The harness over stdio, quiet and beside CPU burners: the same verdicts, within twice the wall time.

For each server (``examples/everything`` served by jsonrpc-mcp; ``sdk``: the official Python SDK's
``MCPServer`` with the official suite's fixture names, ``tests/conformance/servers/sdk_everything.py``;
``npm``: the official TypeScript reference server ``@modelcontextprotocol/server-everything``, with
Node.js, installed locked from ``tests/conformance/servers/npm_everything/`` into ``--cache``), it
runs the harness once on the machine as it is, then again while ``--burners`` processes
(``python -c "while True: pass"``) keep every core busy, and prints, per server: the load average
each run began at, its wall time, how many server processes it started, its verdict counts, every
requirement whose verdict differs between the two runs, and the ratio of the wall times.

    .venv/bin/python tests/conformance/stdio_under_load.py [--burners 4] [--server everything|sdk|npm ...]

Exit status 0 when every server got the same verdicts and the loaded run took at most twice the
quiet one. It is a measurement, not a test (it takes minutes, and the machine may be shared: the
load averages printed say how busy it was). The burners are killed at the end, whatever happens.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import stat
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
SERVERS = REPO / "tests" / "conformance" / "servers"
NPM_SOURCE = SERVERS / "npm_everything"
NPM_ENTRY = Path("node_modules") / "@modelcontextprotocol" / "server-everything" / "dist" / "index.js"


def harness_env(checkout: Path) -> dict[str, str]:
    """The environment that runs the harness (and jsonrpc-mcp) of ``checkout``, whatever is installed."""
    return {**os.environ, "PYTHONPATH": os.pathsep.join([str(checkout), str(checkout / "conformance")])}


ENV = harness_env(REPO)


def compile_bytecode(checkout: Path) -> None:
    """Bring the checkout's bytecode up to date first: with ``PYTHONDONTWRITEBYTECODE`` set, a stale
    cache makes every server process compile the sources again, and the runs would measure that."""
    import compileall

    for folder in ("jsonrpc_mcp", "conformance", "examples", "tests/conformance/servers"):
        compileall.compile_dir(checkout / folder, quiet=1)


@dataclass
class Outcome:
    load: float  # the 1-minute load average when the run began
    seconds: float
    processes: int
    verdicts: dict[str, str]  # requirement@revision/transport -> status

    def counts(self) -> str:
        statuses = list(self.verdicts.values())
        return ", ".join(f"{statuses.count(s)} {s}" for s in ("pass", "fail", "error", "skip"))


def server_command(name: str, cache: Path) -> list[str]:
    if name == "everything":
        return [
            sys.executable,
            "-m",
            "jsonrpc_mcp",
            "serve",
            str(REPO / "examples" / "everything" / "server.py"),
        ]
    if name == "sdk":
        return [sys.executable, str(SERVERS / "sdk_everything.py")]
    if name == "npm":
        sys.path.insert(0, str(REPO / "conformance"))
        from jsonrpc_mcp_conformance.npm import ensure_installed

        node = ensure_installed(NPM_SOURCE, cache, [cache / NPM_ENTRY])
        return [str(node), str(cache / NPM_ENTRY), "stdio"]
    raise SystemExit(f"unknown server {name!r}")


@contextlib.contextmanager
def counting(command: list[str]) -> Iterator[tuple[list[str], Path]]:
    """``command`` behind a wrapper that appends a line to a file each time it starts."""
    with tempfile.TemporaryDirectory() as folder:
        starts = Path(folder) / "starts"
        wrapper = Path(folder) / "count.sh"
        wrapper.write_text(f'#!/bin/sh\necho start >> "{starts}"\nexec "$@"\n')
        wrapper.chmod(wrapper.stat().st_mode | stat.S_IXUSR)
        yield [str(wrapper), *command], starts


def run_harness(command: list[str]) -> Outcome:
    load = os.getloadavg()[0]
    with counting(command) as (wrapped, starts):
        started = time.monotonic()
        done = subprocess.run(
            [sys.executable, "-m", "jsonrpc_mcp_conformance", "--format", "json", "stdio", "--", *wrapped],
            cwd=REPO,
            env=ENV,
            capture_output=True,
            text=True,
            timeout=3600,
            check=False,
        )
        seconds = time.monotonic() - started
        processes = len(starts.read_text().splitlines()) if starts.exists() else 0
    try:
        report = json.loads(done.stdout)
    except ValueError:
        raise SystemExit(
            f"the harness printed no report (exit {done.returncode}): {done.stderr[-800:]}"
        ) from None
    verdicts = {f"{v['id']}@{v['revision']}/{v['transport']}": v["status"] for v in report["verdicts"]}
    return Outcome(load, seconds, processes, verdicts)


@contextlib.contextmanager
def burning(count: int) -> Iterator[None]:
    burners = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(count)]
    try:
        time.sleep(2)  # the load average starts to show them (it is printed, never relied on)
        yield
    finally:
        for burner in burners:
            burner.kill()
        for burner in burners:
            burner.wait(timeout=10)


def compare(name: str, quiet: Outcome, loaded: Outcome) -> bool:
    differ = sorted(
        k
        for k in quiet.verdicts.keys() | loaded.verdicts.keys()
        if quiet.verdicts.get(k) != loaded.verdicts.get(k)
    )
    ratio = loaded.seconds / quiet.seconds if quiet.seconds else float("inf")
    out = sys.stdout
    for label, outcome in (("quiet", quiet), ("loaded", loaded)):
        out.write(
            f"{name} {label}: load {outcome.load:.1f}, {outcome.seconds:.1f} s, "
            f"{outcome.processes} server processes, {outcome.counts()}\n"
        )
    for key in differ:
        out.write(f"  differs: {key}: quiet {quiet.verdicts.get(key)}, loaded {loaded.verdicts.get(key)}\n")
    out.write(f"{name}: {len(differ)} verdicts differ; wall time loaded/quiet {ratio:.2f}\n")
    return not differ and ratio <= 2.0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--burners", type=int, default=4)
    parser.add_argument("--server", action="append", choices=["everything", "sdk", "npm"])
    parser.add_argument(
        "--cache", type=Path, default=REPO / ".cache" / "npm-everything", help="npm install folder"
    )
    parser.add_argument(
        "--harness", type=Path, default=REPO, help="the checkout whose harness runs (to compare another)"
    )
    options = parser.parse_args()
    ENV.update(harness_env(options.harness.resolve()))
    for checkout in {REPO, options.harness.resolve()}:
        compile_bytecode(checkout)
    names = options.server or ["everything", "sdk", "npm"]
    commands = {name: server_command(name, options.cache) for name in names}
    quiet = {name: run_harness(command) for name, command in commands.items()}
    with burning(options.burners):
        loaded = {name: run_harness(command) for name, command in commands.items()}
    results = [compare(name, quiet[name], loaded[name]) for name in names]
    return 0 if all(results) else 1


if __name__ == "__main__":
    raise SystemExit(main())
