"""Our own examples pass every applicable requirement; the CLI's reports and exit codes."""

from __future__ import annotations

import io
import json
import sys
from pathlib import Path
from xml.etree import ElementTree as ET

import anyio
import pytest

from jsonrpc_mcp.cli import load_target
from jsonrpc_mcp_conformance import InProcessTarget, check
from jsonrpc_mcp_conformance.cli import EXIT_FAILED, EXIT_OK, EXIT_UNREACHABLE, EXIT_USAGE, main
from jsonrpc_mcp_conformance.fixtures import ALL_REVISIONS
from tests import timeouts

ROOT = Path(__file__).resolve().parents[2]
EVERYTHING = [
    sys.executable,
    "-m",
    "jsonrpc_mcp",
    "serve",
    str(ROOT / "examples" / "everything" / "server.py"),
]
FAULTY = [sys.executable, "-m", "jsonrpc_mcp_conformance.faultserver"]


@pytest.mark.anyio
@pytest.mark.parametrize("example", ["everything/server.py:create_server", "memory/server.py"])
async def test_example_passes_every_applicable_requirement_in_process(example: str) -> None:
    server = load_target(str(ROOT / "examples" / example))
    with anyio.fail_after(timeouts.LONG_RUN):
        run = await check(InProcessTarget.from_server(server))
    assert all(r.supported for r in run.revisions)
    assert [v.key for v in run.failures()] == []
    assert sum(v.status == "pass" for v in run.verdicts) > 300


def _cli(args: list[str]) -> tuple[int, str]:
    out = io.StringIO()
    code = main(args, out=out)
    return code, out.getvalue()


def test_everything_over_stdio_passes_and_writes_json_and_junit(tmp_path: Path) -> None:
    # D17 retries an MRTR round in a new server process: both read the per-user key file
    report, junit = tmp_path / "r.json", tmp_path / "r.xml"
    code, text = _cli(
        [
            "--revision",
            "2025-03-26",
            "--revision",
            "2026-07-28",
            "--json",
            str(report),
            "--junit",
            str(junit),
            "stdio",
            "--",
            *EVERYTHING,
        ]
    )
    assert code == EXIT_OK, text
    document = json.loads(report.read_text())
    assert document["summary"]["failed"] == 0 and document["summary"]["passed"] > 100
    assert ET.parse(junit).getroot().tag == "testsuites"


def test_memory_over_stdio_passes_the_stdio_requirements_in_every_revision(tmp_path: Path) -> None:
    """The rest of its requirements are transport-neutral: in-process above, over HTTP in test_http."""
    report = tmp_path / "r.json"
    memory = [sys.executable, "-m", "jsonrpc_mcp", "serve", str(ROOT / "examples" / "memory" / "server.py")]
    code, text = _cli(
        ["--only", "stdio:*", "--json", str(report), "stdio", "--", *memory, "--data-dir", str(tmp_path)]
    )
    assert code == EXIT_OK, text
    verdicts = json.loads(report.read_text())["verdicts"]
    passed = {(v["id"], v["revision"]) for v in verdicts if v["status"] == "pass"}
    assert {revision for _, revision in passed} == set(ALL_REVISIONS)
    assert ("stdio:shutdown:exit-on-eof", "2026-07-28") in passed and len(passed) > 25


def test_a_failing_server_exits_1_and_cites_the_spec() -> None:
    code, text = _cli(
        [
            "--revision",
            "2026-07-28",
            "--only",
            "modern:*",
            "stdio",
            "--",
            *FAULTY,
            "--fault",
            "omits-result-type",
        ]
    )
    assert code == EXIT_FAILED
    assert "FAIL modern:result:result-type-discover" in text
    assert "spec: https://modelcontextprotocol.io/specification/2026-07-28/basic#resulttype" in text


def test_an_expected_failure_baseline_turns_the_run_green(tmp_path: Path) -> None:
    baseline = tmp_path / "baseline.yaml"
    baseline.write_text(
        "expected-failures:\n  - id: modern:*result-type*\n"
        "  - modern:discover:result-shape\n  - modern:caching:resources-read\n"
    )
    code, text = _cli(
        [
            "--revision",
            "2026-07-28",
            "--only",
            "modern:*",
            "--expected-failures",
            str(baseline),
            "stdio",
            "--",
            *FAULTY,
            "--fault",
            "omits-result-type",
        ]
    )
    assert code == EXIT_OK, text
    assert "XFAIL modern:result:result-type-discover" in text


def test_config_mode_runs_the_named_server(tmp_path: Path) -> None:
    config = tmp_path / "mcp.json"
    config.write_text(
        json.dumps({"mcpServers": {"faulty": {"command": FAULTY[0], "args": FAULTY[1:], "cwd": str(ROOT)}}})
    )
    code, text = _cli(
        ["--config", str(config), "--server", "faulty", "--revision", "2025-11-25", "--only", "jsonrpc:id:*"]
    )
    assert code == EXIT_OK, text


def test_an_unknown_config_server_is_a_usage_error(tmp_path: Path) -> None:
    config = tmp_path / "mcp.json"
    config.write_text(json.dumps({"mcpServers": {"a": {"command": "x"}}}))
    assert _cli(["--config", str(config), "--server", "b"])[0] == EXIT_USAGE


def test_a_command_that_is_no_mcp_server_is_unreachable() -> None:
    code, _ = _cli(["--timeout", "1", "--only", "jsonrpc:id:*", "stdio", "--", sys.executable, "-c", "pass"])
    assert code == EXIT_UNREACHABLE


def test_the_project_cli_hands_over_to_the_harness(capsys: pytest.CaptureFixture[str]) -> None:
    from jsonrpc_mcp.cli import main as project_main

    code = project_main(
        ["conformance", "--revision", "2025-11-25", "--only", "jsonrpc:id:integer", "stdio", "--", *FAULTY]
    )
    assert code == EXIT_OK
    assert "1 passed" in capsys.readouterr().out
