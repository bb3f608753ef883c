"""The command line, run as real subprocesses: ``serve`` TARGET forms and ``call``."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import orjson
import pytest

from jsonrpc_mcp import Client
from tests import timeouts

REPO = Path(__file__).resolve().parent.parent
SERVERS = REPO / "tests" / "server" / "servers"
ECHO = SERVERS / "echo_server.py"
TIMEOUT = timeouts.STARTUP

pytestmark = pytest.mark.anyio


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(REPO), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    return env


def _cli(*args: str, cwd: Path = REPO) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "jsonrpc_mcp", *args],
        cwd=cwd,
        env=_env(),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
    )


def _serve_command(*args: str) -> list[str]:
    return [sys.executable, "-m", "jsonrpc_mcp", "serve", *args]


async def _tool_text(command: list[str], tool: str, cwd: Path = REPO) -> tuple[str, str]:
    """(server name, first text of the tool's result) from a real stdio session."""
    async with Client.stdio(
        command, cwd=cwd, env=_env(), request_timeout=TIMEOUT, stderr=subprocess.DEVNULL
    ) as c:
        result = await c.call_tool(tool)
        return c.server_info["name"], result["content"][0]["text"]


def _sections(stdout: str) -> dict[str, Any]:
    """``== title`` followed by indented JSON, as ``call`` prints it."""
    sections: dict[str, Any] = {}
    title: str | None = None
    body: list[str] = []
    for line in [*stdout.splitlines(), "== end"]:
        if line.startswith("== "):
            if title is not None:
                sections[title] = orjson.loads("\n".join(body))
            title, body = line[3:], []
        else:
            body.append(line)
    return sections


# -- serve: target forms ----------------------------------------------------------------------------
async def test_serve_a_file_path() -> None:
    async with Client.stdio(_serve_command(str(ECHO)), env=_env(), request_timeout=TIMEOUT) as client:
        result = await client.call_tool("echo", {"text": "over stdio"})
        assert client.server_info["name"] == "echo"
    assert result == {"content": [{"type": "text", "text": "over stdio"}]}


async def test_serve_a_file_path_with_an_attribute() -> None:
    async with Client.stdio(_serve_command(f"{ECHO}:other"), env=_env(), request_timeout=TIMEOUT) as client:
        assert client.server_info["name"] == "other"


async def test_serve_a_factory_callable() -> None:
    async with Client.stdio(
        _serve_command(f"{ECHO}:make_server"), env=_env(), request_timeout=TIMEOUT
    ) as client:
        assert client.server_info["name"] == "factory-made"


async def test_serve_a_dotted_module() -> None:
    name, text = await _tool_text(_serve_command("pkg_target.app"), "where", cwd=SERVERS)
    assert (name, text) == ("dotted", "pkg_target.app")


async def test_serve_a_dotted_module_factory() -> None:
    name, text = await _tool_text(_serve_command("pkg_target.app:build"), "where", cwd=SERVERS)
    assert (name, text) == ("dotted-factory", "factory")


async def test_extra_arguments_reach_the_targets_sys_argv() -> None:
    command = _serve_command(str(ECHO), "--flag", "value", "-v")
    async with Client.stdio(command, env=_env(), request_timeout=TIMEOUT) as client:
        result = await client.call_tool("argv")
    argv = result["structuredContent"]["result"]
    assert argv[1:] == ["--flag", "value", "-v"]


def test_log_level_after_the_target_is_serves_own_option_not_the_targets() -> None:
    server = _serve_command(str(ECHO), "--log-level", "DEBUG", "--flag")
    done = _cli("call", "--tool", "argv", "--", *server)
    assert done.returncode == 0, done.stderr
    argv = _sections(done.stdout)["tools/call argv"]["structuredContent"]["result"]
    assert argv[1:] == ["--flag"]
    assert " DEBUG " in done.stderr  # the server's debug lines came through (call itself logs warnings)


@pytest.mark.parametrize("where", ["before", "after"])
def test_an_unknown_log_level_is_a_usage_error_not_a_traceback(where: str) -> None:
    args = ["--log-level", "loud", "serve", str(ECHO)]
    done = _cli(*(args if where == "before" else ["serve", str(ECHO), "--log-level", "loud"]))
    assert done.returncode == 2
    assert "unknown level 'loud'" in done.stderr and "Traceback" not in done.stderr


def test_every_serve_option_says_what_it_does() -> None:
    done = _cli("serve", "--help")
    assert done.returncode == 0
    options = done.stdout[done.stdout.index("\noptions:") :]
    # argparse prints an option with no help as its bare signature on a line of its own, with the
    # next line starting another option (or the section ending)
    lines = options.splitlines()
    bare = [
        line.strip()
        for line, after in zip(lines, [*lines[1:], ""], strict=True)
        if line.startswith("  -") and "  " not in line.strip() and not after.startswith("    ")
    ]
    assert bare == []
    assert "--max-sessions MAX_SESSIONS" in options and "most live sessions" in options


def test_a_usage_error_lists_every_command() -> None:
    done = _cli("--log-level", "loud", "serve", str(ECHO))
    usage = " ".join(done.stderr.split())
    assert "{serve,call,inspect,bridge,install,conformance,dev,explain,trace}" in usage


async def test_what_a_target_prints_while_loading_goes_to_stderr_not_the_protocol(tmp_path: Path) -> None:
    errors = tmp_path / "stderr.txt"
    with errors.open("wb") as sink:
        async with Client.stdio(
            _serve_command(str(SERVERS / "noisy_server.py")), env=_env(), stderr=sink, request_timeout=TIMEOUT
        ) as client:
            result = await client.call_tool("quiet")
    assert result["content"][0]["text"] == "ok"
    logged = errors.read_text()
    assert "banner printed at import" in logged
    assert "raw bytes written to fd 1 at import" in logged


@pytest.mark.parametrize(
    ("target", "message"),
    [
        ("tests/server/servers/missing.py", "no such file"),
        (f"{ECHO}:nope", "has no attribute 'nope'"),
        (f"{ECHO}:not_a_server", "not a jsonrpc_mcp.Server"),
        ("no_such_module_anywhere", "cannot import 'no_such_module_anywhere'"),
        ("tests/server/servers/broken_server.py", "broken on purpose"),
        ("tests/server/servers", "is not a Python file"),
    ],
)
def test_a_bad_target_exits_2_with_a_clear_message(target: str, message: str) -> None:
    done = _cli("serve", target)
    assert done.returncode == 2
    assert message in done.stderr
    assert done.stderr.strip().splitlines()[-1].startswith("jsonrpc-mcp serve: ")
    assert done.stdout == ""


def test_a_target_that_fails_to_import_shows_its_traceback() -> None:
    done = _cli("serve", "tests/server/servers/broken_server.py")
    assert "Traceback" in done.stderr
    assert "broken_server.py" in done.stderr
    # only the target's own frames: not the loader's, not importlib's
    assert "importlib" not in done.stderr and "_targets.py" not in done.stderr


def test_a_syntax_error_in_the_target_shows_the_line_and_its_caret_only(tmp_path: Path) -> None:
    bad = tmp_path / "typo.py"
    bad.write_text("from jsonrpc_mcp import Server\nserver = Server('x')\ndef f(:\n    pass\n")
    done = _cli("serve", str(bad))
    assert done.returncode == 2
    lines = done.stderr.rstrip().splitlines()
    assert lines[0] == f'  File "{bad}", line 3'
    assert "def f(:" in lines[1] and lines[2].strip() == "^"
    assert lines[3].startswith("SyntaxError: ")
    assert len(lines) == 5 and lines[4].startswith(f"jsonrpc-mcp serve: loading {bad} failed: SyntaxError")


def test_serve_exits_when_stdin_closes() -> None:
    done = _cli("serve", str(ECHO))  # stdin is /dev/null: EOF at once
    assert done.returncode == 0
    assert done.stdout == ""


# -- call -------------------------------------------------------------------------------------------
def test_call_prints_initialize_lists_and_the_result() -> None:
    done = _cli("call", "--tool", "echo", "--args", '{"text": "hi"}', "--", *_serve_command(str(ECHO)))
    assert done.returncode == 0, done.stderr
    sections = _sections(done.stdout)
    assert list(sections) == [
        "initialize",
        "tools/list",
        "resources/list",
        "resources/templates/list",
        "prompts/list",
        "tools/call echo",
    ]
    assert sections["initialize"]["protocolVersion"] == "2025-11-25"
    assert [t["name"] for t in sections["tools/list"]] == ["echo", "argv", "fail"]
    assert sections["tools/call echo"] == {"content": [{"type": "text", "text": "hi"}]}


def test_call_with_a_protocol_version() -> None:
    done = _cli("call", "--protocol-version", "2024-11-05", "--", *_serve_command(str(ECHO)))
    assert done.returncode == 0, done.stderr
    assert _sections(done.stdout)["initialize"]["protocolVersion"] == "2024-11-05"


def test_call_of_a_failing_tool_exits_1() -> None:
    done = _cli("call", "--tool", "fail", "--", *_serve_command(str(ECHO)))
    assert done.returncode == 1
    assert _sections(done.stdout)["tools/call fail"]["isError"] is True
    # the server's log line (its stderr comes through) shows the tool's frames, not the library's
    traceback = done.stderr[done.stderr.index("Traceback") :].splitlines()
    assert traceback[1] == f'  File "{ECHO}", line 27, in fail'
    assert traceback[-1] == "RuntimeError: on purpose"
    assert f"jsonrpc_mcp{os.sep}" not in done.stderr and "anyio" not in done.stderr


def test_call_of_an_unknown_tool_prints_the_error_and_exits_1() -> None:
    done = _cli("call", "--tool", "nope", "--", *_serve_command(str(ECHO)))
    assert done.returncode == 1
    assert _sections(done.stdout)["tools/call nope (error)"]["code"] == -32602


@pytest.mark.parametrize(("args", "message"), [("{not json", "not JSON"), ("[1, 2]", "JSON object")])
def test_call_with_bad_args_exits_2(args: str, message: str) -> None:
    done = _cli("call", "--tool", "echo", "--args", args, "--", sys.executable, "-c", "raise SystemExit(9)")
    assert done.returncode == 2
    assert message in done.stderr


def test_call_with_args_but_no_tool_exits_2() -> None:
    done = _cli("call", "--args", "{}", "--", sys.executable, "-c", "raise SystemExit(9)")
    assert done.returncode == 2
    assert "--args needs --tool" in done.stderr


def test_call_of_a_command_that_is_not_a_server_exits_1() -> None:
    done = _cli("call", "--timeout", "5", "--", sys.executable, "-c", "pass")
    assert done.returncode == 1
    assert "jsonrpc-mcp call:" in done.stderr


def test_usage_errors_exit_2() -> None:
    assert _cli().returncode == 2
    assert _cli("serve").returncode == 2
    assert _cli("frobnicate").returncode == 2


def test_version() -> None:
    done = _cli("--version")
    assert done.returncode == 0
    assert done.stdout.startswith("jsonrpc-mcp ")


def test_a_colon_in_a_file_path_is_not_taken_for_an_attribute(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from jsonrpc_mcp import Server
    from jsonrpc_mcp.cli import load_target

    assert Server.__name__ == "Server"  # imported before sys.modules is copied: the restore keeps it
    monkeypatch.setattr(sys, "path", list(sys.path))  # load_target adds the file's directory
    monkeypatch.setattr(sys, "modules", dict(sys.modules))

    odd = tmp_path / "dir:with:colons"
    odd.mkdir()
    target = odd / "srv.py"
    target.write_text("from jsonrpc_mcp import Server\nserver = Server('colons')\nalt = Server('alt')\n")
    assert load_target(str(target)).name == "colons"
    assert load_target(f"{target}:alt").name == "alt"


def _write(tmp_path: Path, source: str) -> Path:
    path = tmp_path / "servers.py"
    path.write_text(source, encoding="utf-8")
    return path


def test_a_file_whose_one_server_has_another_name_is_served(tmp_path: Path) -> None:
    path = _write(tmp_path, "from jsonrpc_mcp import Server\nmcp = Server('the-one')\n")
    code = f"from jsonrpc_mcp.cli import load_target; print(load_target({str(path)!r}).name)"
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=30, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "the-one"


def test_a_file_with_two_servers_says_which_to_name(tmp_path: Path) -> None:
    path = _write(tmp_path, "from jsonrpc_mcp import Server\nalpha = Server('a')\nbeta = Server('b')\n")
    done = _cli("serve", str(path))
    assert done.returncode == 2
    assert "defines 2 servers" in done.stderr
    assert f"{path}:alpha" in done.stderr and f"{path}:beta" in done.stderr


def test_a_file_with_no_server_says_so(tmp_path: Path) -> None:
    path = _write(tmp_path, "x = 1\n")
    done = _cli("serve", str(path))
    assert done.returncode == 2
    assert "defines no jsonrpc_mcp.Server" in done.stderr


def test_call_in_the_stateless_revision_over_stdio() -> None:
    done = _cli(
        "call",
        "--mode",
        "2026-07-28",
        "--tool",
        "echo",
        "--args",
        '{"text": "hi"}',
        "--",
        *_serve_command(str(ECHO)),
    )
    assert done.returncode == 0, done.stderr
    sections = _sections(done.stdout)
    assert next(iter(sections)) == "server/discover"
    assert "2026-07-28" in sections["server/discover"]["supportedVersions"]
    assert sections["tools/call echo"]["content"] == [{"type": "text", "text": "hi"}]
    assert sections["tools/call echo"]["resultType"] == "complete"  # the stateless revision's result


def test_a_stateless_protocol_version_is_not_silently_the_handshake() -> None:
    done = _cli("call", "--protocol-version", "2026-07-28", "--", *_serve_command(str(ECHO)))
    assert done.returncode == 0, done.stderr
    assert next(iter(_sections(done.stdout))) == "server/discover"
    clash = _cli(
        "call", "--protocol-version", "2026-07-28", "--mode", "legacy", "--", *_serve_command(str(ECHO))
    )
    assert clash.returncode == 2 and "goes with --mode 2026-07-28" in clash.stderr


@pytest.mark.parametrize(("mode", "first"), [("legacy", "initialize"), ("2026-07-28", "server/discover")])
def test_call_takes_an_http_url(mode: str, first: str) -> None:
    from .http.support import spawned

    with spawned(ECHO) as server:
        done = _cli(
            "call", "--mode", mode, "--tool", "echo", "--args", '{"text": "over http"}', server.url + "/mcp"
        )
    assert done.returncode == 0, done.stderr
    sections = _sections(done.stdout)
    assert next(iter(sections)) == first
    assert sections["tools/call echo"]["content"] == [{"type": "text", "text": "over http"}]


INVALID_HEADER_SERVER = """
from jsonrpc_mcp import Server

server = Server("header-rules", "1.0")
text = {"type": "string"}
server.add_tool("echo", lambda text: text, input_schema={"type": "object", "properties": {"text": text}})
region = {"type": "string", "x-mcp-header": "My Region"}  # a space: not a header name
server.add_tool("bad", lambda value: value, input_schema={"type": "object", "properties": {"value": region}})
"""


def test_call_of_a_tool_with_invalid_header_declarations_over_http_is_refused(tmp_path: Path) -> None:
    from .http.support import spawned

    target = tmp_path / "header_rules.py"
    target.write_text(INVALID_HEADER_SERVER, encoding="utf-8")
    with spawned(target) as server:
        done = _cli(
            "call", "--mode", "2026-07-28", "--tool", "bad", "--args", '{"value": "x"}', server.url + "/mcp"
        )
    assert done.returncode == 1, done.stderr
    sections = _sections(done.stdout)
    assert [tool["name"] for tool in sections["tools/list"]] == ["echo"]
    assert "tools/call bad" not in sections
    assert "tool 'bad' left out of tools/list: invalid x-mcp-header" in done.stderr  # the warning
    assert "jsonrpc-mcp call: tool 'bad' was left out of tools/list and is not called" in done.stderr
