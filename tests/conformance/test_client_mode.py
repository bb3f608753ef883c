"""``jsonrpc-mcp conformance client`` (issue 27): the harness testing clients, over HTTP and stdio.

Real subprocesses: this project's own client (the official suite's driver, ``official/client.py``)
passes every requirement over both transports; the faulty client (``clients/faulty_client.py``) is
caught fault by fault, each fault failing the requirement it breaks (and, where the scenario server
refuses the broken message, what depends on it); a client that does nothing fails. Every scenario
server binds 127.0.0.1 port 0; every client run is bounded by the runner's timeout.
"""

from __future__ import annotations

import io
import json
import sys
from pathlib import Path

import pytest

from jsonrpc_mcp_conformance.clients import cli
from jsonrpc_mcp_conformance.clients.checks import CHECKS
from jsonrpc_mcp_conformance.clients.recording import read_tap
from jsonrpc_mcp_conformance.clients.runner import server_command
from jsonrpc_mcp_conformance.clients.scenarios import load_client_spec, requirement_scenarios
from jsonrpc_mcp_conformance.clients.servers import SERVERS
from jsonrpc_mcp_conformance.runner import FAIL, PASS

from .client_runs import FAULTY, OURS, failed, run_clients
from .clients.faulty_auth import AUTH_FAULTS
from .clients.faulty_client import FAULTS, SCENARIO_FAULTS

REPO = Path(__file__).resolve().parents[2]


# -- the fixtures ------------------------------------------------------------------------------------
def test_the_client_spec_is_consistent() -> None:
    spec = load_client_spec()
    assert {s.server for s in spec.scenarios.values()} <= set(SERVERS)
    assert {str(f.invariant) for f in spec.requirements} <= set(CHECKS)
    for fixture in spec.requirements:
        assert fixture.url().startswith("https://"), fixture.id
        assert fixture.quote or fixture.ambiguity, fixture.id
        for name in requirement_scenarios(fixture):
            assert name == "*" or name in spec.scenarios, (fixture.id, name)


def test_a_bad_requirement_is_refused(tmp_path: Path) -> None:
    spec_dir = tmp_path / "spec"
    (spec_dir / "client").mkdir(parents=True)
    for path in (REPO / "spec" / "client").glob("*.json"):
        (spec_dir / "client" / path.name).write_text(path.read_text(encoding="utf-8"), encoding="utf-8")
    bad = {
        "requirements": [
            {
                "id": "client:x:y",
                "title": "t",
                "level": "MUST",
                "source": "spec",
                "revisions": ["all"],
                "scenarios": ["no-such"],
                "check": "no-such",
                "spec": {"url": "https://example.com", "quote": "q"},
                "ambiguity": "a string, not an object with its text",
            }
        ]
    }
    (spec_dir / "client" / "zz.json").write_text(json.dumps(bad), encoding="utf-8")
    err = io.StringIO()
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(sys, "stderr", err)
        assert cli.main(["--spec-dir", str(spec_dir), "--list"], out=io.StringIO()) == cli.EXIT_FIXTURES
    assert "no check 'no-such'" in err.getvalue() and "no scenario 'no-such'" in err.getvalue()
    assert "ambiguity is an object with its text" in err.getvalue()


# -- the tap -----------------------------------------------------------------------------------------
def test_the_tap_records_both_directions(tmp_path: Path) -> None:
    import subprocess

    record = tmp_path / "record.jsonl"
    argv = server_command("initialize", record)
    request = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "t", "version": "1"},
        },
    }
    done = subprocess.run(argv, input=json.dumps(request) + "\n", capture_output=True, text=True, timeout=60)
    answer = json.loads(done.stdout.splitlines()[0])
    assert answer["id"] == 1 and answer["result"]["protocolVersion"] == "2025-11-25"
    events = read_tap(record)
    assert [(e.source, e.message.get("id")) for e in events] == [("client", 1), ("server", 1)]
    assert events[0].message == request


# -- this project's client ---------------------------------------------------------------------------
@pytest.mark.parametrize("transport", ["http", "stdio"])
def test_our_client_passes_every_requirement(transport: str) -> None:
    run = run_clients(OURS, (transport,))
    assert failed(run) == set(), [v.problems for v in run.verdicts if v.status == FAIL]
    passed = {v.id for v in run.verdicts if v.status == PASS}
    assert {
        "client:lifecycle:initialized-sent",
        "client:modern:meta-envelope",
        "client:tools:call",
        "client:elicitation:defaults-applied",
        "client:sampling:result",
        "client:roots:result",
    } <= passed
    if transport == "http":
        assert {
            "client:http:session-id",
            "client:http:modern-version-header",
            "client:tools:invalid-x-mcp-header-excluded",
        } <= passed


def test_the_correct_faulty_client_passes_over_both_transports() -> None:
    """Without a fault the hand-written client is correct: what its faults break is all they break."""
    run = run_clients(FAULTY, ("http", "stdio"))
    assert failed(run) == set(), [v.problems for v in run.verdicts if v.status == FAIL]
    assert {v.transport for v in run.verdicts if v.status == PASS} == {"http", "stdio"}


# -- every fault caught ------------------------------------------------------------------------------
L, M = "2025-11-25", "2026-07-28"
# fault -> (scenarios, transports, revisions, the failures it must cause: exactly these)
CAUGHT: dict[str, tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...], set[str]]] = {
    "bad-version": (("initialize",), ("stdio",), (L,), {f"client:lifecycle:version@{L}/stdio"}),
    "no-client-info": (("initialize",), ("http",), (L,), {f"client:lifecycle:client-info@{L}/http"}),
    "no-initialized": (("initialize",), ("stdio",), (L,), {f"client:lifecycle:initialized-sent@{L}/stdio"}),
    "no-initialize": (
        ("initialize",),
        ("stdio",),
        (L,),
        {
            f"client:lifecycle:initialize-first@{L}/stdio",
            f"client:lifecycle:version@{L}/stdio",
            f"client:lifecycle:client-info@{L}/stdio",
        },
    ),
    "null-id": (("initialize",), ("stdio",), (L,), {f"client:jsonrpc:request-id@{L}/stdio"}),
    "reuse-id": (("initialize",), ("http",), (L,), {f"client:jsonrpc:request-id@{L}/http"}),
    "no-session-id": (("initialize",), ("http",), (L,), {f"client:http:session-id@{L}/http"}),
    "no-version-header": (
        ("tools_call",),
        ("http",),
        (L, M),
        {f"client:http:protocol-version-header@{L}/http", f"client:http:modern-version-header@{M}/http"},
    ),
    "no-meta-client-info": (
        ("request-metadata",),
        ("stdio",),
        (M,),
        {f"client:modern:meta-client-info@{M}/stdio"},
    ),
    "no-meta": (
        ("request-metadata",),
        ("http",),
        (M,),
        # the retry after the -32022 refusal names no version either
        {
            f"client:modern:meta-envelope@{M}/http",
            f"client:modern:meta-client-info@{M}/http",
            f"client:modern:version-retry@{M}/http",
        },
    ),
    "wrong-tool-arguments": (
        ("tools_call",),
        ("stdio",),
        (L, M),
        {f"client:tools:call@{L}/stdio", f"client:tools:call@{M}/stdio"},
    ),
    "call-invalid-tools": (
        ("http-invalid-tool-headers",),
        ("http",),
        (M,),
        {f"client:tools:invalid-x-mcp-header-excluded@{M}/http"},
    ),
    "drop-valid-tool": (
        ("http-invalid-tool-headers",),
        ("http",),
        (M,),
        {f"client:tools:valid-tool-kept@{M}/http"},
    ),
    "ignore-defaults": (
        ("elicitation-sep1034-client-defaults",),
        ("stdio",),
        (L, M),
        {f"client:elicitation:defaults-applied@{L}/stdio", f"client:elicitation:defaults-applied@{M}/stdio"},
    ),
    "bad-elicit-action": (
        ("elicitation-sep1034-client-defaults",),
        ("stdio",),
        (L,),
        {f"client:elicitation:result@{L}/stdio", f"client:elicitation:defaults-applied@{L}/stdio"},
    ),
    "bad-sampling-result": (("sampling",), ("http",), (L,), {f"client:sampling:result@{L}/http"}),
    "bad-roots": (("roots",), ("stdio",), (M,), {f"client:roots:result@{M}/stdio"}),
    "drop-capabilities-on-retry": (
        ("sampling",),
        ("stdio",),
        (M,),
        {f"client:sampling:capability-declared@{M}/stdio"},
    ),
    "early-request": (
        ("initialize",),
        ("stdio",),
        (L,),
        {f"client:lifecycle:no-requests-before-answer@{L}/stdio"},
    ),
    "no-version-retry": (("request-metadata",), ("http",), (M,), {f"client:modern:version-retry@{M}/http"}),
    "deref-refs": (
        ("json-schema-ref-no-deref",),
        ("http",),
        (M,),
        {f"client:tools:no-network-ref-deref@{M}/http"},
    ),
    # (the scenario server accepts the POSTs without them: only the header requirement fails)
    "no-standard-headers": (("tools_call",), ("http",), (M,), {f"client:http:standard-headers@{M}/http"}),
    # the handshake-era scenario servers ask all the same (the 2026-07-28 ones cannot: skipped there)
    "undeclared-capabilities": (
        ("sampling", "roots", "elicitation-sep1034-client-defaults"),
        ("stdio",),
        (L,),
        {
            f"client:sampling:capability-declared@{L}/stdio",
            f"client:roots:capability-declared@{L}/stdio",
            f"client:elicitation:capability-declared@{L}/stdio",
        },
    ),
    # the scenario server checks the headers it gets: a missing one it lets pass, a wrong one it refuses
    "no-param-headers": (("http-custom-headers",), ("http",), (M,), {f"client:http:param-headers@{M}/http"}),
    "raw-param-headers": (("http-custom-headers",), ("http",), (M,), {f"client:http:param-headers@{M}/http"}),
    # the scenario server refuses every POST (406): what needs an answer is then not judged (skip)
    "no-accept": (("initialize",), ("http",), (L,), {f"client:http:accept@{L}/http"}),
}


def test_every_fault_has_a_case() -> None:
    # (the scenario faults have their cases in test_client_scenarios.py, the auth/* faults in
    # test_client_auth.py)
    assert set(CAUGHT) | {"do-nothing"} | set(AUTH_FAULTS) == set(FAULTS) - set(SCENARIO_FAULTS)


@pytest.mark.parametrize("fault", sorted(CAUGHT))
def test_each_fault_is_caught_requirement_by_requirement(fault: str) -> None:
    scenarios, transports, revisions, expected = CAUGHT[fault]
    run = run_clients([*FAULTY, "--fault", fault], transports, scenarios, revisions)
    assert failed(run) == expected
    for verdict in run.verdicts:
        if verdict.status == FAIL:
            assert verdict.problems and verdict.fixture.url(verdict.revision).startswith("https://")


def test_a_client_that_does_nothing_fails() -> None:
    out = io.StringIO()
    code = cli.main(
        ["--transport", "both", "--format", "json", "--", *FAULTY, "--fault", "do-nothing"], out=out
    )
    assert code == cli.EXIT_FAILED
    report = json.loads(out.getvalue())
    failed = {v["id"] for v in report["verdicts"] if v["status"] == "fail"}
    assert {
        "client:tools:call",
        "client:sampling:result",
        "client:roots:result",
        "client:elicitation:defaults-applied",
        "client:tools:valid-tool-kept",
    } <= failed
    assert report["summary"]["passed"] == 0


# -- the command line --------------------------------------------------------------------------------
def test_list_and_usage_errors(capsys: pytest.CaptureFixture[str]) -> None:
    out = io.StringIO()
    assert cli.main(["--list", "--transport", "both"], out=out) == cli.EXIT_OK
    text = out.getvalue()
    assert "* initialize" in text and "client:lifecycle:initialized-sent" in text
    assert cli.main(["--only", "no:such:*", "--", "true"], out=io.StringIO()) == cli.EXIT_USAGE
    assert cli.main([], out=io.StringIO()) == cli.EXIT_USAGE
    assert cli.main(["--scenario", "nope", "--", "true"], out=io.StringIO()) == cli.EXIT_USAGE
    assert "give the client command after --" in capsys.readouterr().err


def test_reports_and_official_only(tmp_path: Path) -> None:
    """--official-only runs the official suite's scenarios only; JUnit and HTML are written."""
    out = io.StringIO()
    junit, html = tmp_path / "r.xml", tmp_path / "r.html"
    argv = [
        "--official-only",
        "--scenario",
        "tools_call",
        "--revision",
        "2026-07-28",
        "--junit",
        str(junit),
        "--html",
        str(html),
        "--",
        *OURS,
    ]
    assert cli.main(argv, out=out) == cli.EXIT_OK, out.getvalue()
    assert "client:tools:call" in junit.read_text(encoding="utf-8")
    assert "client:modern:meta-envelope" in html.read_text(encoding="utf-8")
    listing = io.StringIO()
    cli.main(["--official-only", "--list"], out=listing)
    assert "   sampling  " not in listing.getvalue() and " * tools_call  " in listing.getvalue()


def test_junit_names_each_transport_in_its_own_suite(tmp_path: Path) -> None:
    from xml.etree import ElementTree as ET

    junit = tmp_path / "r.xml"
    argv = ["--transport", "both", "--scenario", "initialize", "--junit", str(junit), "--", *FAULTY]
    assert cli.main(argv, out=io.StringIO()) == cli.EXIT_OK
    suites = ET.fromstring(junit.read_text(encoding="utf-8")).findall("testsuite")
    assert sorted(s.get("name") or "" for s in suites) == ["http.2025-11-25", "stdio.2025-11-25"]
    for suite in suites:
        names = [case.get("name") for case in suite.findall("testcase")]
        assert len(names) == len(set(names)) and "client:lifecycle:initialized-sent" in names


def test_a_client_that_hangs_is_killed_and_fails() -> None:
    out = io.StringIO()
    hang = [sys.executable, "-c", "import time; time.sleep(120)"]
    argv = ["--scenario", "initialize", "--timeout", "2", "--format", "json", "--", *hang]
    assert cli.main(argv, out=out) == cli.EXIT_FAILED
    report = json.loads(out.getvalue())
    first = next(v for v in report["verdicts"] if v["id"] == "client:lifecycle:initialize-first")
    assert first["status"] == "fail" and "timed out (killed)" in first["actual"]


@pytest.mark.parametrize(
    "entry",
    [["-m", "jsonrpc_mcp.cli", "conformance", "client"], ["-m", "jsonrpc_mcp_conformance", "client"]],
)
def test_the_command_line_entries(entry: list[str]) -> None:
    """``jsonrpc-mcp conformance client`` and ``python -m jsonrpc_mcp_conformance client``."""
    import subprocess

    done = subprocess.run(
        [sys.executable, *entry, "--list", "--official-only"], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert "* request-metadata" in done.stdout and "client:modern:version-retry" in done.stdout
