"""``jsonrpc-mcp conformance``: the harness registers the sub-command through an entry point, and
``jsonrpc_mcp.cli`` finds it there (it never imports the harness by name)."""

from __future__ import annotations

import ast
import importlib.metadata
import sys
from collections.abc import Iterator
from importlib.metadata import EntryPoint
from pathlib import Path
from typing import Any

import pytest

from jsonrpc_mcp.cli import COMMANDS_GROUP, main
from jsonrpc_mcp_conformance import cli as harness_cli

ROOT = Path(__file__).resolve().parents[2]
FAULTY = [sys.executable, "-m", "jsonrpc_mcp_conformance.faultserver"]
ONE_CHECK = ["--revision", "2025-11-25", "--only", "jsonrpc:id:integer", "stdio", "--", *FAULTY]


def _entry_points_giving(*entries: EntryPoint) -> Any:
    def entry_points(*, group: str) -> list[EntryPoint]:
        assert group == COMMANDS_GROUP
        return list(entries)

    return entry_points


@pytest.fixture
def no_entry_points(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """As if jsonrpc-mcp were installed without the harness."""
    monkeypatch.setattr(importlib.metadata, "entry_points", _entry_points_giving())
    yield


def test_the_harness_registers_its_command() -> None:
    entries = {e.name: e for e in importlib.metadata.entry_points(group=COMMANDS_GROUP)}
    assert entries["conformance"].value == "jsonrpc_mcp_conformance.cli:command"
    assert entries["conformance"].load() is harness_cli.command


def test_the_command_runs_the_harness_after_global_options(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--log-level", "warning", "conformance", *ONE_CHECK]) == harness_cli.EXIT_OK
    assert "1 passed" in capsys.readouterr().out


def test_the_harness_help_is_the_harness_own(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["conformance", "--help"])
    assert exited.value.code == 0
    assert capsys.readouterr().out.startswith("usage: jsonrpc-mcp conformance ")


def test_the_list_of_commands_shows_the_registered_one(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["--help"])
    assert exited.value.code == 0
    out = capsys.readouterr().out
    assert "{serve,call,inspect,bridge,install,conformance,dev,explain,trace}" in out
    assert "check an MCP server against the spec fixtures" in out
    assert "Run a stdio MCP server behind a tap" in out and "Explain one JSON-RPC message" in out


@pytest.mark.usefixtures("no_entry_points")
def test_without_the_entry_point_the_command_says_the_harness_is_missing(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["conformance", *ONE_CHECK]) == 2
    err = capsys.readouterr().err
    assert "jsonrpc-mcp conformance: the conformance harness" in err
    assert "is not installed" in err
    assert "Traceback" not in err


@pytest.mark.usefixtures("no_entry_points")
def test_without_the_entry_point_the_list_of_commands_has_the_built_in_ones(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with pytest.raises(SystemExit):
        main(["--help"])
    assert "{serve,call,inspect,bridge,install}" in capsys.readouterr().out


def test_a_broken_entry_point_is_a_usage_error_without_traceback(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    broken = EntryPoint(name="conformance", value="no_such_module_here:command", group=COMMANDS_GROUP)
    monkeypatch.setattr(importlib.metadata, "entry_points", _entry_points_giving(broken))
    assert main(["conformance", *ONE_CHECK]) == 2
    err = capsys.readouterr().err
    assert "no_such_module_here:command cannot be loaded: ModuleNotFoundError" in err
    assert "Traceback" not in err


def test_an_unknown_command_lists_the_registered_ones(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["frobnicate"])
    assert exited.value.code == 2
    assert "'conformance'" in capsys.readouterr().err


def test_a_built_in_command_never_looks_entry_points_up(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def refuse(**_: Any) -> list[EntryPoint]:
        raise AssertionError("entry points looked up for a built-in command")

    monkeypatch.setattr(importlib.metadata, "entry_points", refuse)
    monkeypatch.setattr(sys, "argv", list(sys.argv))  # serve sets sys.argv for its target
    assert main(["serve", "--max-line", "100", "/no/such/server.py"]) == 2
    assert "no such file" in capsys.readouterr().err


def _imported_modules(path: Path) -> set[str]:
    """Every module an ``import`` statement of ``path`` names (TYPE_CHECKING ones included)."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module)
    return names


def test_jsonrpc_mcp_never_imports_the_harness() -> None:
    offenders = {
        str(path.relative_to(ROOT)): sorted(
            n for n in _imported_modules(path) if n.split(".")[0] == "jsonrpc_mcp_conformance"
        )
        for path in sorted((ROOT / "jsonrpc_mcp").rglob("*.py"))
    }
    assert {where: names for where, names in offenders.items() if names} == {}
