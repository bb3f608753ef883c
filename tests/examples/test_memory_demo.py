"""``make demo``: examples/memory/demo.py runs the memory server over stdio and prints every exchange."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests import timeouts

REPO_ROOT = Path(__file__).resolve().parents[2]
DEMO_PATH = REPO_ROOT / "examples" / "memory" / "demo.py"
TIMEOUT = timeouts.RUN


def _run_demo(*args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "JSONRPC_MCP_MEMORY_DIR"}
    return subprocess.run(
        [sys.executable, str(DEMO_PATH), *args],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        env=env,
        cwd=REPO_ROOT,
    )


@pytest.fixture(scope="module")
def demo() -> subprocess.CompletedProcess[str]:
    """One run of the demo, shared by the tests that read its output."""
    return _run_demo()


def test_demo_exits_zero(demo: subprocess.CompletedProcess[str]) -> None:
    assert demo.returncode == 0, demo.stderr
    assert "demo failed" not in demo.stderr


def _steps(output: str) -> list[tuple[str, str]]:
    """(title, method) of every printed exchange, in order."""
    lines = output.splitlines()
    return [
        (line.split(". ", 1)[1], lines[i + 1].removeprefix("--> "))
        for i, line in enumerate(lines)
        if line.startswith("=== ")
    ]


def test_demo_shows_every_step_in_order(demo: subprocess.CompletedProcess[str]) -> None:
    assert _steps(demo.stdout) == [
        ("Handshake", "initialize"),
        ("What the server offers", "tools/list"),
        ("Remember a note (1/3)", "tools/call"),
        ("Remember a note (2/3)", "tools/call"),
        ("Remember a note (3/3)", "tools/call"),
        ("Recall by keyword", "tools/call"),
        ("Recall by tag", "tools/call"),
        ("An invalid call: limit is at most 50", "tools/call"),
        ("Read every memory", "resources/read"),
        ("Prompt: recap of today", "prompts/get"),
        ("Forget the coffee note", "tools/call"),
        ("Recall 'coffee' again", "tools/call"),
    ]
    assert demo.stdout.rstrip().endswith("Done: 12 exchanges, every one as expected.")


def test_demo_prints_results_as_json_with_the_key_outcomes(demo: subprocess.CompletedProcess[str]) -> None:
    out = demo.stdout
    assert '"protocolVersion": "2025-11-25"' in out
    assert "Remembered memory #3 with tags work, travel." in out
    assert 'Match: full-text match for keyword \\"coffee\\"' in out
    assert "limit: 100 is greater than the maximum of 50" in out and '"isError": true' in out
    assert '"uri": "memory://all"' in out
    assert "Forgot memory #2." in out
    assert "Match: recency fallback" in out


def test_demo_shows_the_annotated_frames_of_its_exchanges(demo: subprocess.CompletedProcess[str]) -> None:
    wire = demo.stdout.split("--- The same exchanges on the wire, frame by frame (jsonrpc-mcp trace):", 1)[1]
    assert "-> client request #1 initialize" in wire and "<- server result #1 initialize" in wire
    assert "-> client notification notifications/initialized [2025-11-25]" in wire
    assert wire.count("-> client request") == 12 and wire.count("<- server result") == 12
    assert "https://modelcontextprotocol.io/specification/2025-11-25/server/tools" in wire
    assert "\n           ! " not in wire  # no frame broke a rule


def test_without_the_tap_the_demo_still_runs() -> None:
    plain = _run_demo("--no-trace")
    assert plain.returncode == 0, plain.stderr
    assert "on the wire" not in plain.stdout and plain.stdout.rstrip().endswith("every one as expected.")


def test_demo_exits_non_zero_when_the_server_misbehaves(tmp_path: Path) -> None:
    broken = tmp_path / "broken_server.py"
    broken.write_text(
        "from jsonrpc_mcp import Server\n"
        "server = Server('broken')\n"
        "@server.tool()\n"
        "def remember(text: str) -> str:\n"
        "    return 'ok'\n",
        encoding="utf-8",
    )
    failed = _run_demo("--server", str(broken))
    assert failed.returncode == 1
    assert "demo failed: the server lacks capabilities ['prompts', 'resources']" in failed.stderr
