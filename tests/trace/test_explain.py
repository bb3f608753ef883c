"""``jsonrpc-mcp explain``: a message's account, revision by revision (the command in a subprocess)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from jsonrpc_mcp_conformance.trace import explain
from tests import timeouts


def test_ping_under_the_stateless_revision_is_method_not_found_and_says_why() -> None:
    text = explain('{"jsonrpc": "2.0", "id": 1, "method": "ping"}', "2026-07-28")
    assert "Defined in: 2024-11-05, 2025-03-26, 2025-06-18, 2025-11-25" in text
    assert "In 2026-07-28: -32601 Method not found. Why:" in text
    assert "https://modelcontextprotocol.io/specification/2026-07-28/changelog" in text
    assert "! revision 2026-07-28 has no ping" in text


def test_a_request_says_what_answers_it_and_links_its_page() -> None:
    text = explain(json.dumps({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "t"}}))
    assert text.startswith("A request tools/call (id 2)")
    assert "The answer: content blocks" in text
    assert "https://modelcontextprotocol.io/specification/2026-07-28/server/tools" in text


def test_elicitation_is_new_in_2025_06_18_and_an_input_request_in_2026() -> None:
    text = explain('{"jsonrpc": "2.0", "id": 1, "method": "elicitation/create", "params": {}}')
    assert "Sent by: the server" in text
    assert "In 2024-11-05: not yet defined (it came in 2025-06-18)." in text
    assert "inside an InputRequiredResult" in text


@pytest.mark.parametrize(
    ("message", "expected"),
    [
        ('{"jsonrpc": "2.0", "id": 1, "error": {"code": -32021, "message": "m"}}', "Code -32021: 2026-07-28"),
        (
            '{"jsonrpc": "2.0", "id": 1, "error": {"code": -32050, "message": "m"}}',
            "reserved for the specification",
        ),
        (
            '{"jsonrpc": "2.0", "id": 1, "result": {"resultType": "input_required", "inputRequests": {}}}',
            "inputRequests: none",
        ),
        ('{"jsonrpc": "2.0", "method": "vendor/thing"}', "Not a method of any MCP revision"),
        ("{not json", "Not JSON"),
        ('{"id": 1}', "Not a JSON-RPC 2.0 message"),
    ],
)
def test_answers_unknown_methods_and_garbage(message: str, expected: str) -> None:
    assert expected in explain(message)


def test_the_command_line() -> None:
    ok = subprocess.run(
        [sys.executable, "-m", "jsonrpc_mcp", "explain", '{"jsonrpc":"2.0","id":1,"method":"ping"}'],
        capture_output=True,
        text=True,
        timeout=timeouts.RUN,
        check=False,
    )
    assert ok.returncode == 0 and ok.stdout.startswith("A request ping (id 1)"), ok.stderr
    bad = subprocess.run(
        [sys.executable, "-m", "jsonrpc_mcp", "explain", "{}", "--revision", "1999-01-01"],
        capture_output=True,
        text=True,
        timeout=timeouts.RUN,
        check=False,
    )
    assert bad.returncode == 2 and "Unknown revision '1999-01-01'" in bad.stdout
    assert "Traceback" not in bad.stderr


def test_the_explain_sample_in_the_docs_is_what_the_command_prints() -> None:
    doc = (Path(__file__).resolve().parents[2] / "docs" / "trace.md").read_text()
    command = (
        '$ jsonrpc-mcp explain \'{"jsonrpc": "2.0", "id": 1, "method": "ping"}\' --revision 2026-07-28\n'
    )
    sample = doc.split(command, 1)[1].split("```", 1)[0]
    assert sample == explain('{"jsonrpc": "2.0", "id": 1, "method": "ping"}', "2026-07-28")
