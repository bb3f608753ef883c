"""CLI semantics (issue 13 item 6): patterns matching nothing, stale baseline entries, ``--list``."""

from __future__ import annotations

import io
import sys
from pathlib import Path

import pytest

from jsonrpc_mcp_conformance.cli import EXIT_FAILED, EXIT_OK, EXIT_USAGE, main
from jsonrpc_mcp_conformance.fixtures import load_spec, select_ids

FAULTY = [sys.executable, "-m", "jsonrpc_mcp_conformance.faultserver"]
ONE = ["--revision", "2025-11-25", "--only", "jsonrpc:id:integer"]
SPEC = load_spec()


def _cli(args: list[str]) -> tuple[int, str]:
    out = io.StringIO()
    code = main(args, out=out)
    return code, out.getvalue()


def _marker_command(marker: Path) -> list[str]:
    """A "server" that leaves a file behind if it is ever started."""
    return [sys.executable, "-c", f"open({str(marker)!r}, 'w').close()"]


@pytest.mark.parametrize("option", ["--only", "--skip"])
def test_a_pattern_matching_no_requirement_is_a_usage_error(
    option: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    marker = tmp_path / "started"
    code, out = _cli(
        [option, "jsonrpc:id:integer", option, "no-such-area:*", "stdio", "--", *_marker_command(marker)]
    )
    err = capsys.readouterr().err
    assert code == EXIT_USAGE
    assert err.strip().splitlines() == [
        f"conformance: {option} 'no-such-area:*' matches no requirement (see --list)"
    ]
    assert "Traceback" not in err and out == ""
    assert not marker.exists()


def test_only_and_skip_leaving_nothing_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    code, _ = _cli(["--only", "jsonrpc:id:*", "--skip", "jsonrpc:*", "stdio", "--", *FAULTY])
    assert code == EXIT_USAGE
    assert "leave no requirement to run" in capsys.readouterr().err


def _baseline(tmp_path: Path, *ids: str) -> Path:
    path = tmp_path / "baseline.yaml"
    path.write_text("expected-failures:\n" + "".join(f"  - {i}\n" for i in ids))
    return path


def test_a_stale_baseline_entry_fails_the_run_and_is_named(tmp_path: Path) -> None:
    baseline = _baseline(tmp_path, "jsonrpc:id:integer", "jsonrpc:id:never-run")
    code, text = _cli([*ONE, "--expected-failures", str(baseline), "stdio", "--", *FAULTY])
    assert code == EXIT_FAILED, text
    assert "XPASS (expected to fail, now passes) jsonrpc:id:integer" in text
    stale = text[text.index("stale baseline entries") :].splitlines()
    assert stale[1:] == ["  jsonrpc:id:integer (now passes: jsonrpc:id:integer 2025-11-25 stdio)"]


def test_allow_stale_tolerates_a_stale_baseline_entry(tmp_path: Path) -> None:
    baseline = _baseline(tmp_path, "jsonrpc:id:*")
    code, text = _cli([*ONE, "--allow-stale", "--expected-failures", str(baseline), "stdio", "--", *FAULTY])
    assert code == EXIT_OK, text
    assert "stale baseline entries" in text


def test_an_entry_that_still_fails_is_not_stale(tmp_path: Path) -> None:
    baseline = _baseline(tmp_path, "jsonrpc:id:error-echo-integer")
    args = ["--revision", "2025-11-25", "--only", "jsonrpc:id:error-echo-integer"]
    code, text = _cli(
        [*args, "--expected-failures", str(baseline), "stdio", "--", *FAULTY, "--fault", "error-id-null"]
    )
    assert code == EXIT_OK, text
    assert "XFAIL jsonrpc:id:error-echo-integer" in text and "stale" not in text


def test_list_prints_what_would_run_without_starting_the_server(tmp_path: Path) -> None:
    marker = tmp_path / "started"
    args = ["--list", "--only", "lifecycle:*", "--skip", "lifecycle:ping:*", "--revision", "2024-11-05"]
    code, text = _cli([*args, "stdio", "--", *_marker_command(marker)])
    assert code == EXIT_OK and not marker.exists()
    chosen = [
        f
        for f in select_ids(SPEC.fixtures, ["lifecycle:*"], ["lifecycle:ping:*"])
        if "2024-11-05" in f.revisions
    ]
    lines = text.splitlines()
    assert lines[-1] == f"{len(chosen)} requirements" and len(chosen) > 3
    official = {f.id: f"  [official: {', '.join(f.official)}]" if f.official else "" for f in chosen}
    assert lines[:-1] == [f"{f.id}  {f.level}  2024-11-05  {f.title}{official[f.id]}" for f in chosen]
    assert all("2025-11-25" not in line for line in lines)


def test_list_needs_no_server_and_shows_every_revision() -> None:
    code, text = _cli(["--list", "--only", "jsonrpc:id:integer"])
    assert code == EXIT_OK
    (fixture,) = select_ids(SPEC.fixtures, ["jsonrpc:id:integer"])
    assert text.splitlines() == [
        f"jsonrpc:id:integer  {fixture.level}  {','.join(fixture.revisions)}  {fixture.title}",
        "1 requirements",
    ]


def test_a_server_command_that_does_not_exist_is_one_line_and_exit_3(tmp_path: Path) -> None:
    import subprocess

    from tests import timeouts

    missing = str(tmp_path / "no-such-server")
    command = [sys.executable, "-m", "jsonrpc_mcp_conformance", "stdio", "--", missing]
    done = subprocess.run(command, capture_output=True, timeout=timeouts.RUN, check=False)
    assert done.returncode == 3
    lines = done.stderr.decode().strip().splitlines()
    said = f"conformance: cannot start the server: [Errno 2] No such file or directory: {missing!r}"
    assert lines == [said]
