"""``jsonrpc-mcp install claude-desktop FILE``, run as a real subprocess on temporary configs."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest

from jsonrpc_mcp import Client
from jsonrpc_mcp._install import claude_desktop_config
from tests import timeouts

REPO = Path(__file__).resolve().parents[2]
SERVERS = Path(__file__).resolve().parent / "servers"
ENVTOOL = SERVERS / "envtool.py"
TIMEOUT = timeouts.RUN

pytestmark = pytest.mark.anyio

EXISTING = {
    "globalShortcut": "Ctrl+Space",
    "mcpServers": {"other": {"command": "node", "args": ["server.js"], "env": {"X": "1"}}},
    "zzz": [1, 2, 3],
}


def _env(home: Path | None = None) -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(REPO), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    if home is not None:
        env["HOME"] = str(home)
        env.pop("XDG_CONFIG_HOME", None)
    return env


def _install(*args: str, home: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "jsonrpc_mcp", "install", "claude-desktop", *args],
        cwd=REPO,
        env=_env(home),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
    )


def _write(path: Path, value: Any) -> str:
    text = json.dumps(value, indent=4)
    path.write_text(text, encoding="utf-8")
    return text


def _refused(done: subprocess.CompletedProcess[str], words: str) -> None:
    assert done.returncode == 1, (done.stdout, done.stderr)
    assert "Traceback" not in done.stderr
    line = done.stderr.strip()
    assert "\n" not in line and line.startswith("jsonrpc-mcp install claude-desktop: "), line
    assert words in line, line


def _install_envtool(tmp_path: Path) -> dict[str, Any]:
    """Install envtool into a config holding other things; check the merge; return the entry."""
    config = tmp_path / "claude_desktop_config.json"
    original = _write(config, EXISTING)
    done = _install(str(ENVTOOL), "--config", str(config), "--env", "GREETING=hello there", "--env", "B=2")
    assert done.returncode == 0, done.stderr
    assert "added 'env-tool'" in done.stdout and "restart Claude Desktop" in done.stdout
    written = json.loads(config.read_text(encoding="utf-8"))
    # every other key and server kept, in order; the new entry added
    assert list(written) == ["globalShortcut", "mcpServers", "zzz"]
    assert written["globalShortcut"] == "Ctrl+Space" and written["zzz"] == [1, 2, 3]
    assert written["mcpServers"]["other"] == EXISTING["mcpServers"]["other"]  # type: ignore[index]
    entry = written["mcpServers"]["env-tool"]
    assert entry == {
        "command": sys.executable,
        "args": ["-m", "jsonrpc_mcp", "serve", str(ENVTOOL.resolve())],
        "env": {"GREETING": "hello there", "B": "2"},
    }
    assert (tmp_path / "claude_desktop_config.json.bak").read_text(encoding="utf-8") == original
    assert sorted(p.name for p in tmp_path.iterdir()) == [config.name, config.name + ".bak"]  # no temp left
    return entry  # type: ignore[no-any-return]


async def test_the_entry_is_merged_backed_up_and_serves_the_file(tmp_path: Path) -> None:
    entry = _install_envtool(tmp_path)
    # what Claude Desktop does with the entry: spawn command + args with env, in another directory
    async with Client.stdio(
        [entry["command"], *entry["args"]],
        env={**_env(), **entry["env"]},
        cwd=tmp_path,
        request_timeout=TIMEOUT,
    ) as client:
        result = await client.call_tool("getenv", {"key": "GREETING"})
    assert result["content"][0]["text"] == "hello there"


def test_the_default_path_under_home_is_created(tmp_path: Path) -> None:
    done = _install(str(ENVTOOL), "--name", "mine", home=tmp_path)
    assert done.returncode == 0, done.stderr
    config = tmp_path / ".config" / "Claude" / "claude_desktop_config.json"
    assert list(json.loads(config.read_text(encoding="utf-8"))["mcpServers"]) == ["mine"]
    assert not config.with_name(config.name + ".bak").exists()  # nothing was there to back up
    assert "(the previous file" not in done.stdout


def test_the_same_entry_twice_changes_nothing_and_a_new_one_replaces_it(tmp_path: Path) -> None:
    config = tmp_path / "c.json"
    assert _install(str(ENVTOOL), "--config", str(config)).returncode == 0
    first = config.read_text(encoding="utf-8")
    again = _install(str(ENVTOOL), "--config", str(config))
    assert again.returncode == 0 and "nothing changed" in again.stdout
    assert config.read_text(encoding="utf-8") == first
    assert not (tmp_path / "c.json.bak").exists()  # not changed: no backup either
    replaced = _install(str(ENVTOOL), "--config", str(config), "--env", "K=v")
    assert replaced.returncode == 0 and "replaced 'env-tool'" in replaced.stdout
    assert json.loads(config.read_text(encoding="utf-8"))["mcpServers"]["env-tool"]["env"] == {"K": "v"}
    assert (tmp_path / "c.json.bak").read_text(encoding="utf-8") == first


def test_a_dry_run_prints_the_result_and_writes_nothing(tmp_path: Path) -> None:
    config = tmp_path / "c.json"
    original = _write(config, EXISTING)
    done = _install(str(ENVTOOL), "--config", str(config), "--name", "try", "--dry-run")
    assert done.returncode == 0, done.stderr
    printed = json.loads(done.stdout)
    assert set(printed["mcpServers"]) == {"other", "try"} and printed["zzz"] == [1, 2, 3]
    assert config.read_text(encoding="utf-8") == original
    assert sorted(p.name for p in tmp_path.iterdir()) == ["c.json"]


@pytest.mark.parametrize(
    ("content", "words"),
    [
        ("{not json", "is not valid JSON"),
        ("[1, 2]", "holds a JSON list, not an object"),
        ('{"mcpServers": []}', "its 'mcpServers' is not an object"),
    ],
)
def test_a_config_that_is_not_a_json_object_is_left_alone(tmp_path: Path, content: str, words: str) -> None:
    config = tmp_path / "c.json"
    config.write_text(content, encoding="utf-8")
    _refused(_install(str(ENVTOOL), "--config", str(config)), words)
    assert config.read_text(encoding="utf-8") == content
    assert sorted(p.name for p in tmp_path.iterdir()) == ["c.json"]


@pytest.mark.parametrize(
    ("file", "words"),
    [
        ("no/such/server.py", "no such file: no/such/server.py"),
        (str(SERVERS / "not_a_server.py"), "defines no jsonrpc_mcp.Server"),
        ("README.md", "is not a Python file"),
    ],
)
def test_a_file_without_a_server_is_refused(tmp_path: Path, file: str, words: str) -> None:
    config = tmp_path / "c.json"
    original = _write(config, EXISTING)
    _refused(_install(file, "--config", str(config)), words)
    assert config.read_text(encoding="utf-8") == original


def test_a_malformed_env_is_refused(tmp_path: Path) -> None:
    _refused(_install(str(ENVTOOL), "--config", str(tmp_path / "c.json"), "--env", "NOEQUALS"), "KEY=VALUE")
    assert not (tmp_path / "c.json").exists()


def test_the_config_path_for_each_os() -> None:
    home = {"HOME": "/home/u"}
    mac = claude_desktop_config("darwin", {"HOME": "/Users/u"})
    assert mac == Path("/Users/u/Library/Application Support/Claude/claude_desktop_config.json")
    assert claude_desktop_config("linux", home) == Path("/home/u/.config/Claude/claude_desktop_config.json")
    xdg = claude_desktop_config("linux", {**home, "XDG_CONFIG_HOME": "/xdg"})
    assert xdg == Path("/xdg/Claude/claude_desktop_config.json")
    windows = claude_desktop_config(
        "win32", {"USERPROFILE": "C:/Users/u", "APPDATA": "C:/Users/u/AppData/Roaming"}
    )
    assert windows == Path("C:/Users/u/AppData/Roaming/Claude/claude_desktop_config.json")


def test_a_file_with_an_attribute_keeps_it_and_names_that_server(tmp_path: Path) -> None:
    echo = REPO / "tests" / "server" / "servers" / "echo_server.py"
    config = tmp_path / "c.json"
    done = _install(f"{echo}:other", "--config", str(config))
    assert done.returncode == 0, done.stderr
    servers = json.loads(config.read_text(encoding="utf-8"))["mcpServers"]
    assert servers["other"]["args"] == ["-m", "jsonrpc_mcp", "serve", f"{echo.resolve()}:other"]
    _refused(_install(f"{echo}:missing", "--config", str(config)), "has no attribute 'missing'")


# -- a remote server (--url): a bridge entry ----------------------------------------------------------
async def test_a_url_gets_a_bridge_entry_that_reaches_the_server(tmp_path: Path) -> None:
    from ..proxy.support import EVERYTHING, jsonrpc_mcp, served_http

    config = tmp_path / "c.json"
    _write(config, EXISTING)
    async with served_http(jsonrpc_mcp("serve", EVERYTHING, "--http", "--port", "0")) as served:
        args = (
            "--url",
            served.url,
            "--upstream-mode",
            "legacy",
            "--header",
            "X-Trace: on",
            "--config",
            str(config),
        )
        done = await anyio.to_thread.run_sync(lambda: _install(*args))
        assert done.returncode == 0, done.stderr
        assert "added '127.0.0.1'" in done.stdout
        written = json.loads(config.read_text(encoding="utf-8"))["mcpServers"]
        assert written["other"] == EXISTING["mcpServers"]["other"]  # type: ignore[index]
        entry = written["127.0.0.1"]
        assert entry == {
            "command": sys.executable,
            "args": [
                "-m",
                "jsonrpc_mcp",
                "bridge",
                served.url,
                "--upstream-mode",
                "legacy",
                "--header",
                "X-Trace: on",
            ],
        }
        # what Claude Desktop does with the entry: spawn it, speak stdio to it
        async with Client.stdio([entry["command"], *entry["args"]], env=_env(), cwd=tmp_path) as client:
            assert client.server_info["name"] == "jsonrpc-mcp-everything"
            result = await client.call_tool("test_simple_text")
    assert result["content"][0]["text"] == "This is a simple text response for testing."


def test_a_url_entry_takes_its_name_and_the_oauth_options(tmp_path: Path) -> None:
    config = tmp_path / "c.json"
    url = "https://mcp.example.com/mcp"
    done = _install(
        "--url", url, "--name", "remote", "--auth", "oauth", "--scope", "read write", "--config", str(config)
    )
    assert done.returncode == 0, done.stderr
    entry = json.loads(config.read_text(encoding="utf-8"))["mcpServers"]["remote"]
    assert entry["args"] == ["-m", "jsonrpc_mcp", "bridge", url, "--auth", "oauth", "--scope", "read write"]


@pytest.mark.parametrize(
    ("args", "status", "words"),
    [
        (("--url", "ftp://example.com/mcp"), 1, "expected an http:// or https:// URL"),
        ((str(ENVTOOL), "--url", "https://example.com/mcp"), 2, "one of them"),
        ((), 2, "one of them"),
        ((str(ENVTOOL), "--header", "X: 1"), 2, "go with --url"),
    ],
)
def test_a_url_or_a_file_not_both(tmp_path: Path, args: tuple[str, ...], status: int, words: str) -> None:
    done = _install(*args, "--config", str(tmp_path / "c.json"))
    assert done.returncode == status, done.stderr
    assert done.stderr.startswith("jsonrpc-mcp install claude-desktop: ") and words in done.stderr, (
        done.stderr
    )
    assert not (tmp_path / "c.json").exists()


def _install_into(host: str, *args: str, cwd: Path, home: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "jsonrpc_mcp", "install", host, *args],
        cwd=cwd,
        env=_env(home),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
    )


@pytest.mark.parametrize(
    ("host", "where", "key", "typed", "title"),
    [
        ("cursor", "home/.cursor/mcp.json", "mcpServers", False, "Cursor"),
        ("vscode", "project/.vscode/mcp.json", "servers", True, "VS Code"),
        ("claude-code", "project/.mcp.json", "mcpServers", True, "Claude Code"),
    ],
)
async def test_other_hosts_get_their_own_file_and_shape_and_the_entry_serves(
    tmp_path: Path, host: str, where: str, key: str, typed: bool, title: str
) -> None:
    project, home = tmp_path / "project", tmp_path / "home"
    project.mkdir()
    home.mkdir()
    config = tmp_path / where
    config.parent.mkdir(parents=True, exist_ok=True)
    _write(config, {key: {"other": {"command": "node", "args": ["s.js"]}}, "inputs": []})
    done = _install_into(host, str(ENVTOOL), "--env", "GREETING=hi", cwd=project, home=home)
    assert done.returncode == 0, done.stderr
    assert f"added 'env-tool' in {config}" in done.stdout and f"restart {title}" in done.stdout
    written = json.loads(config.read_text(encoding="utf-8"))
    assert list(written) == [key, "inputs"] and list(written[key]) == ["other", "env-tool"]
    entry = written[key]["env-tool"]
    assert ("type" in entry) is typed and entry.get("type", "stdio") == "stdio"
    with anyio.fail_after(TIMEOUT):
        async with Client.stdio(
            [entry["command"], *entry["args"]], env={**_env(), **entry["env"]}, cwd=tmp_path
        ) as client:
            result = await client.call_tool("getenv", {"key": "GREETING"})
    assert result["content"][0]["text"] == "hi"


def test_a_remote_server_for_vscode_is_a_typed_bridge_entry(tmp_path: Path) -> None:
    done = _install_into(
        "vscode", "--url", "https://mcp.example.com/mcp", "--dry-run", cwd=tmp_path, home=tmp_path
    )
    assert done.returncode == 0, done.stderr
    entry = json.loads(done.stdout)["servers"]["mcp.example.com"]
    assert entry["type"] == "stdio" and entry["args"][-2:] == ["bridge", "https://mcp.example.com/mcp"]
