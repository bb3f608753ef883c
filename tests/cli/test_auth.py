"""The commands that connect to servers reach protected ones: ``call``, ``inspect``, ``trace --http``
and ``conformance http`` with ``--auth oauth`` (client credentials at a test authorization server),
``--header``, and ``--config FILE --server NAME``. Every command is a real subprocess; the server is
``serve --http`` verifying JWTs against the test issuer's JWKS, all on 127.0.0.1."""

from __future__ import annotations

import json
import os
import re
import select
import shlex
import stat
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any
from urllib.parse import parse_qs, urlencode, urlsplit

import httpx
import orjson
import pytest

from tests import timeouts
from tests.announced import TRACE_LINE, Output

from ..http.issuer import Issuer, rsa_key, running_issuer
from ..http.support import Spawned, spawned, stop

REPO = Path(__file__).resolve().parents[2]
EVERYTHING = REPO / "examples" / "everything" / "server.py"
TIMEOUT = timeouts.RUN  # one whole command: spawning, the authorization flow, the calls
SCOPE = "mcp:use"
KEY = rsa_key("cli-auth-key")


def _env(**extra: str) -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(REPO), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    env.pop("JSONRPC_MCP_TOKENS", None)
    return {**env, **extra}


def _cli(*args: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "jsonrpc_mcp", *args],
        cwd=REPO,
        env=_env(**env),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
    )


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


def _one_line(done: subprocess.CompletedProcess[str], prefix: str, status: int = 1) -> str:
    assert done.returncode == status, (done.stdout, done.stderr)
    assert "Traceback" not in done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(prefix), done.stderr
    return lines[0]


@pytest.fixture(scope="module")
def issuer() -> Iterator[Issuer]:
    with running_issuer() as running:
        running.published = [KEY]
        yield running


@pytest.fixture(scope="module")
def protected(issuer: Issuer) -> Iterator[Spawned]:
    """examples/everything behind JWT verification; its PRM names the test issuer."""
    options = [
        "--auth-issuer",
        issuer.url,
        "--auth-jwt-jwks",
        issuer.jwks_url,
        "--auth-required-scope",
        SCOPE,
    ]
    with spawned(EVERYTHING, *options) as served:
        yield served


@pytest.fixture
def url(protected: Spawned) -> str:
    return protected.url + "/mcp"


@pytest.fixture
def secret_file(issuer: Issuer, tmp_path: Path) -> Path:
    path = tmp_path / "client-secret"
    path.write_text(issuer.token_client[1] + "\n", encoding="utf-8")  # the newline is not the secret's
    return path


def _oauth(issuer: Issuer, secret_file: Path, token_file: Path) -> list[str]:
    return [
        *("--auth", "oauth", "--grant", "client_credentials", "--client-id", issuer.token_client[0]),
        *("--client-secret-file", str(secret_file), "--token-file", str(token_file)),
    ]


def _token(issuer: Issuer, audience: str) -> str:
    now = int(time.time())
    return KEY.sign({"iss": issuer.url, "aud": audience, "sub": "u", "exp": now + 300, "scope": SCOPE})


GREET = ["--tool", "greet", "--args", '{"name": "auth"}']


def _greeted(done: subprocess.CompletedProcess[str]) -> None:
    assert done.returncode == 0, done.stderr
    assert _sections(done.stdout)["tools/call greet"]["content"][0]["text"] == "Hello, auth!"


# -- call and inspect with --auth oauth --------------------------------------------------------------
def test_client_credentials_get_a_token_once_and_keep_it_private(
    issuer: Issuer, url: str, secret_file: Path, tmp_path: Path
) -> None:
    token_file = tmp_path / "state" / "tokens.json"
    before = issuer.token_requests
    done = _cli("call", *_oauth(issuer, secret_file, token_file), url, *GREET)
    _greeted(done)
    assert issuer.token_requests == before + 1
    assert stat.S_IMODE(token_file.stat().st_mode) == 0o600
    secret = issuer.token_client[1]
    assert secret not in token_file.read_text() and secret not in done.stdout + done.stderr
    # the stored token serves the next runs, inspect's too: the token endpoint is not asked again
    _greeted(_cli("call", *_oauth(issuer, secret_file, token_file), url, *GREET))
    inspected = _cli("inspect", "--json", *_oauth(issuer, secret_file, token_file), url)
    assert inspected.returncode == 0, inspected.stderr
    assert "greet" in {tool["name"] for tool in orjson.loads(inspected.stdout)["tools"]}
    assert issuer.token_requests == before + 1


def test_without_credentials_the_refusal_is_one_line_naming_http_401(url: str) -> None:
    line = _one_line(_cli("call", url, *GREET), "jsonrpc-mcp call: ")
    assert f"{url} refused the request: HTTP 401" in line and "--auth oauth" in line
    line = _one_line(_cli("inspect", url), "jsonrpc-mcp inspect: ")
    assert "HTTP 401" in line


@pytest.mark.parametrize("form", ["Authorization: Bearer {}", "Authorization:Bearer {}"])
def test_a_token_in_a_header_is_sent(issuer: Issuer, url: str, form: str) -> None:
    _greeted(_cli("call", "--header", form.format(_token(issuer, url)), url, *GREET))


def test_a_token_the_server_refuses_is_reported(issuer: Issuer, url: str) -> None:
    foreign = _token(issuer, "https://elsewhere.example/mcp")
    line = _one_line(_cli("call", "--header", f"Authorization: Bearer {foreign}", url), "jsonrpc-mcp call: ")
    assert "HTTP 401" in line and "invalid_token" in line and foreign not in line


def test_a_wrong_secret_is_the_authorization_servers_error_and_never_shown(
    issuer: Issuer, url: str, tmp_path: Path
) -> None:
    wrong = tmp_path / "wrong-secret"
    wrong.write_text("not-the-s3cret-at-all\n", encoding="utf-8")
    before = issuer.token_requests
    done = _cli("call", *_oauth(issuer, wrong, tmp_path / "tokens.json"), url, *GREET)
    line = _one_line(done, "jsonrpc-mcp call: ")
    assert "authorization failed" in line and "client authentication failed" in line
    assert "invalid_client" in line
    assert "not-the-s3cret" not in done.stdout + done.stderr
    assert issuer.token_requests == before + 1


def _read_lines(stream: IO[bytes], count: int, deadline: float) -> list[str]:
    """The first ``count`` lines a child writes on ``stream``, waiting until ``deadline`` at most
    (read from the descriptor: nothing stays in a reader's buffer)."""
    data = b""
    while data.count(b"\n") < count:
        ready, _, _ = select.select([stream], [], [], max(deadline - time.monotonic(), 0))
        if not ready:
            raise TimeoutError(f"the command wrote only {data!r} in time")
        chunk = os.read(stream.fileno(), 65536)
        if not chunk:
            break
        data += chunk
    return data.decode().splitlines()


def test_without_a_browser_the_authorization_url_is_shown_and_the_redirect_taken(
    issuer: Issuer, url: str, tmp_path: Path
) -> None:
    """The authorization code flow where no browser can be opened (no $BROWSER, no browser on the
    PATH, no display): the URL is printed on stderr; here the "user" denies, at the loopback
    redirect URI the command listens on, and the command says so."""
    env = {k: v for k, v in _env().items() if k not in ("BROWSER", "DISPLAY", "WAYLAND_DISPLAY")}
    (tmp_path / "bin").mkdir()
    env["PATH"] = str(tmp_path / "bin")  # webbrowser finds no browser to run
    command = [sys.executable, "-m", "jsonrpc_mcp", "call", "--auth", "oauth", "--client-id", "cli-app"]
    command += ["--scope", "extra", "--token-file", str(tmp_path / "t.json"), url]
    process = subprocess.Popen(
        command, cwd=REPO, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    assert process.stderr is not None
    try:
        said, authorization = _read_lines(process.stderr, 2, time.monotonic() + TIMEOUT)
        assert said == "jsonrpc-mcp: to authorize, open this URL in a browser:"
        assert authorization.startswith(issuer.url + "/authorize?")
        query = {k: v[0] for k, v in parse_qs(urlsplit(authorization).query).items()}
        assert query["client_id"] == "cli-app" and query["resource"] == url
        assert query["code_challenge_method"] == "S256" and query["response_type"] == "code"
        assert set(query["scope"].split()) == {"extra", SCOPE}
        assert urlsplit(query["redirect_uri"]).hostname == "127.0.0.1"
        denial = {
            "error": "access_denied",
            "error_description": "denied by the test",
            "state": query["state"],
        }
        page = httpx.get(query["redirect_uri"] + "?" + urlencode(denial), timeout=timeouts.STEP)
        assert page.status_code == 200
        _, stderr = process.communicate(timeout=TIMEOUT)
    finally:
        stop(process)
    assert process.returncode == 1
    assert stderr.decode().strip().splitlines() == [
        f"jsonrpc-mcp call: {url}: authorization failed: the authorization server refused: denied by the"
        " test (access_denied)"
    ]


NOWHERE = "http://127.0.0.1:9/mcp"  # usage errors are found before anything is reached


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--client-id", "x", NOWHERE], "--client-id needs --auth oauth"),
        (["--grant", "client_credentials", NOWHERE], "--grant needs --auth oauth"),
        (["--auth", "oauth", "--grant", "client_credentials", NOWHERE], "needs --client-id"),
        (["--auth", "oauth", "--grant", "client_credentials", "--client-id", "x", NOWHERE],
         "needs --client-secret-file or --private-key-file"),
        (["--auth", "oauth", "--client-id", "x", "--client-secret-file", "/no/such/file", NOWHERE],
         "cannot read --client-secret-file /no/such/file"),
        (["--auth", "oauth", "--client-secret-file", "/no/such/file", NOWHERE], "needs --client-id"),
        (["--auth", "oauth", "--client-id", "x", "--private-key-file", __file__, NOWHERE],
         "is not an unencrypted PEM private key"),
        (["--auth", "oauth", "--header", "Authorization: Bearer t", NOWHERE], "exclude each other"),
        (["--auth", "oauth", "--", sys.executable, str(EVERYTHING)], "--auth needs an http(s):// server"),
        (["--header", "A: b", "--", sys.executable, str(EVERYTHING)], "--header needs an http(s):// URL"),
        (["--header", "no colon", NOWHERE], "expected 'Name: value'"),
        (["--server", "a", NOWHERE], "--server needs --config"),
        ([], "name the server"),
    ],
)  # fmt: skip
def test_inconsistent_options_are_a_one_line_usage_error(args: list[str], message: str) -> None:
    for command in ("call", "inspect"):
        line = _one_line(_cli(command, *args), f"jsonrpc-mcp {command}: ", status=2)
        assert message in line


# -- --config FILE --server NAME -----------------------------------------------------------------------
CONFIGURED = """
import os
from jsonrpc_mcp import Server

server = Server("configured")


@server.tool()
def where() -> str:
    return f"{os.environ.get('CONFIGURED_GREETING')} from {os.getcwd()}"
"""


@pytest.fixture
def config(issuer: Issuer, url: str, tmp_path: Path) -> Path:
    """An mcpServers file: a remote entry with a token in its headers, a local one with env and cwd."""
    (tmp_path / "configured.py").write_text(CONFIGURED, encoding="utf-8")
    workdir = tmp_path / "work"
    workdir.mkdir()
    servers = {
        "remote": {"url": url, "headers": {"Authorization": f"Bearer {_token(issuer, url)}"}},
        "local": {
            "command": sys.executable,
            "args": ["-m", "jsonrpc_mcp", "serve", str(tmp_path / "configured.py")],
            "env": {"CONFIGURED_GREETING": "hello"},
            "cwd": str(workdir),
        },
    }
    path = tmp_path / "mcp.json"
    path.write_text(json.dumps({"mcpServers": servers}), encoding="utf-8")
    return path


def test_call_a_configured_server(config: Path, tmp_path: Path) -> None:
    _greeted(_cli("call", "--config", str(config), "--server", "remote", *GREET))
    done = _cli("call", "--config", str(config), "--server", "local", "--tool", "where")
    assert done.returncode == 0, done.stderr
    text = _sections(done.stdout)["tools/call where"]["content"][0]["text"]
    assert text == f"hello from {(tmp_path / 'work').resolve()}"


def test_inspect_a_configured_server(config: Path) -> None:
    remote = _cli("inspect", "--json", "--config", str(config), "--server", "remote")
    assert remote.returncode == 0, remote.stderr
    assert "greet" in {tool["name"] for tool in orjson.loads(remote.stdout)["tools"]}
    local = _cli("inspect", "--json", "--config", str(config), "--server", "local")
    assert local.returncode == 0, local.stderr
    report = orjson.loads(local.stdout)
    assert report["serverInfo"]["name"] == "configured" and report["transport"] == "stdio"


@pytest.mark.anyio
async def test_trace_a_configured_command(config: Path, tmp_path: Path) -> None:
    """``trace --config FILE --server NAME``: the tap runs the entry's command in its env and cwd."""
    import anyio

    from jsonrpc_mcp import Client

    out = tmp_path / "trace.txt"
    command = [sys.executable, "-m", "jsonrpc_mcp", "trace", "--out", str(out), "--config", str(config)]
    with anyio.fail_after(TIMEOUT):
        async with Client.stdio([*command, "--server", "local"], env=_env(), cwd=REPO) as client:
            result = await client.call_tool("where")
    assert result["content"][0]["text"] == f"hello from {(tmp_path / 'work').resolve()}"
    assert "tools/call" in out.read_text()


def test_config_mistakes_are_usage_errors(config: Path, url: str) -> None:
    line = _one_line(_cli("call", "--config", str(config), "--server", "nope"), "jsonrpc-mcp call: ", 2)
    assert "has no server 'nope' (it has remote, local)" in line
    line = _one_line(_cli("inspect", "--config", str(config)), "jsonrpc-mcp inspect: ", 2)
    assert "names several servers" in line
    both = _cli("call", "--config", str(config), "--server", "remote", url)
    assert "either with --config or on the command line" in _one_line(both, "jsonrpc-mcp call: ", 2)
    oauth = _cli("call", "--config", str(config), "--server", "local", "--auth", "oauth")
    assert "--auth needs an http(s):// server" in _one_line(oauth, "jsonrpc-mcp call: ", 2)


# -- trace --http and conformance http ----------------------------------------------------------------
def test_the_trace_proxy_authorizes_itself_upstream(
    issuer: Issuer, url: str, secret_file: Path, tmp_path: Path
) -> None:
    out = tmp_path / "trace.txt"
    command = [sys.executable, "-m", "jsonrpc_mcp", "trace", "--http", "--upstream", url]
    command += ["--port", "0", "--out", str(out), *_oauth(issuer, secret_file, tmp_path / "t.json")]
    before = issuer.token_requests
    process = subprocess.Popen(
        command, cwd=REPO, env=_env(), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    output = Output(process.stderr)
    try:
        proxy = output.wait_for(TRACE_LINE, process).group("url").decode()
        assert issuer.token_requests == before + 1  # authorized before the first client came
        done = _cli("call", f"{proxy}/mcp", *GREET)  # a client with no credentials
    finally:
        stop(process)
        output.close()
    _greeted(done)
    text = out.read_text()
    assert "tools/call" in text and "401 Unauthorized" not in text
    assert issuer.token_requests == before + 1


def test_the_trace_proxy_that_cannot_get_authorized_says_so_and_exits_1(
    issuer: Issuer, url: str, tmp_path: Path
) -> None:
    wrong = tmp_path / "wrong-secret"
    wrong.write_text("wrong", encoding="utf-8")
    options = ["--port", "0", *_oauth(issuer, wrong, tmp_path / "t.json")]
    done = _cli("trace", "--http", "--upstream", url, *options)
    line = _one_line(done, "jsonrpc-mcp trace: ")
    assert (
        "authorization failed" in line and "invalid_client" in line and "wrong" not in line.split(":", 1)[1]
    )


def test_conformance_with_oauth_runs_the_auth_requirements_with_its_token(
    issuer: Issuer, url: str, secret_file: Path, tmp_path: Path
) -> None:
    only = ["--only", "auth:token:missing-401", "--only", "lifecycle:initialize:result-shape"]
    options = [*only, "--revision", "2025-11-25", "-v", *_oauth(issuer, secret_file, tmp_path / "t.json")]
    done = _cli("conformance", "http", url, *options)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "2 passed, 0 failed" in done.stdout
    assert "PASS auth:token:missing-401" in done.stdout  # declared protected: it ran, not skipped
    without = _cli("conformance", "http", url, *only, "--revision", "2025-11-25")
    assert without.returncode != 0  # the same requirements without a token: refused (or skipped)


def test_conformance_auth_options_are_checked(url: str) -> None:
    done = _cli("conformance", "http", url, "--auth", "oauth", "--auth-token", "t")
    assert done.returncode == 2 and "exclude each other" in done.stderr
    done = _cli("conformance", "stdio", "--auth", "oauth", "--", sys.executable, str(EVERYTHING))
    assert done.returncode == 2 and "--auth needs an http(s):// server" in done.stderr


# -- the documentation ---------------------------------------------------------------------------------
def _documented_client_commands() -> list[list[str]]:
    text = (REPO / "docs" / "auth.md").read_text(encoding="utf-8")
    commands = []
    for block in re.findall(r"^```sh\n(.*?)^```", text, re.S | re.M):
        for line in block.replace("\\\n", " ").splitlines():
            if line.startswith(("jsonrpc-mcp call", "jsonrpc-mcp inspect", "jsonrpc-mcp trace")):
                commands.append(shlex.split(line))
    return commands


def test_the_documented_client_command_lines_are_valid() -> None:
    """docs/auth.md's client command lines: every option exists and they go together."""
    from jsonrpc_mcp._client_options import check_client_options
    from jsonrpc_mcp.cli import build_parser
    from jsonrpc_mcp_conformance.trace.cli import _trace_parser

    commands = _documented_client_commands()
    assert {argv[1] for argv in commands} == {"call", "inspect", "trace"}
    for argv in commands:
        if argv[1] == "trace":
            args = _trace_parser("trace").parse_args(argv[2:])
        else:
            args = build_parser().parse_args(argv[1:])
        check_client_options(args, http=True, headers={})
