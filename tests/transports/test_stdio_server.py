"""stdio, server side, over real subprocesses: framing, encoding, stdout protection, end of input.

The MCP servers run as ``python -m jsonrpc_mcp serve tests/helpers/mcp_stdio_server.py``; the plain
JSON-RPC ones as tests/helpers/plain_stdio_server.py (Endpoint + MethodTable + stdio_server).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import anyio
import orjson
import pytest

from .proc import (
    MCP_HELPER,
    TIMEOUT,
    c_locale_env,
    call_tool,
    child_env,
    handshake,
    plain_command,
    raw_server,
    serve_command,
)

pytestmark = pytest.mark.anyio

TEXT = "héllo ✓ 日本 😀 \u2028 and a\nnewline"


def _echo(rid: object, value: object) -> dict[str, object]:
    return {"jsonrpc": "2.0", "id": rid, "method": "echo", "params": [value]}


def _is_protocol(line: bytes) -> bool:
    try:
        message = orjson.loads(line)
    except orjson.JSONDecodeError:
        return False
    return type(message) in (dict, list) and (type(message) is list or message.get("jsonrpc") == "2.0")


async def test_the_c_locale_environment_really_has_an_ascii_locale_encoding() -> None:
    # guards the next tests: without this, "whatever the locale" would silently test UTF-8 again
    code = "import locale, sys; print(sys.stdout.encoding, locale.getpreferredencoding(False))"
    with anyio.fail_after(TIMEOUT):
        result = await anyio.run_process([sys.executable, "-c", code], env=c_locale_env())
    assert result.stdout.decode().split() == ["ascii", "ANSI_X3.4-1968"]


async def test_non_ascii_text_round_trips_as_utf8_under_the_c_locale() -> None:
    async with raw_server(serve_command(MCP_HELPER), env=c_locale_env()) as server:
        await handshake(server)
        await server.send(call_tool(1, "echo", {"text": TEXT}))
        line = await server.receive_line()
    answer = orjson.loads(line)
    assert answer["result"]["content"] == [{"type": "text", "text": TEXT}]
    assert "héllo ✓ 日本 😀".encode() in line  # raw UTF-8 on the wire, not the locale's escape
    assert b"\n" not in line


async def test_plain_server_round_trips_non_ascii_under_the_c_locale() -> None:
    async with raw_server(plain_command(), env=c_locale_env()) as server:
        answer = await server.call(_echo(1, TEXT))
    assert answer == {"jsonrpc": "2.0", "id": 1, "result": TEXT}


async def test_crlf_several_messages_per_chunk_and_a_message_split_across_chunks() -> None:
    async with raw_server(plain_command()) as server:
        first = orjson.dumps(_echo(1, "one")) + b"\r\n" + orjson.dumps(_echo(2, "two")) + b"\r\n"
        third = orjson.dumps(_echo(3, "three"))
        await server.write(first + third[:10])  # two whole messages and the start of a third
        assert [await server.receive(), await server.receive()] == [
            {"jsonrpc": "2.0", "id": 1, "result": "one"},
            {"jsonrpc": "2.0", "id": 2, "result": "two"},
        ]
        # the server has answered, so it has read the chunk with the partial third message
        await server.write(third[10:] + b"\r\n")
        assert await server.receive() == {"jsonrpc": "2.0", "id": 3, "result": "three"}


async def test_an_over_long_line_gets_an_error_and_the_next_line_is_served() -> None:
    async with raw_server(serve_command(MCP_HELPER, "--max-line", "300")) as server:
        await server.send({"jsonrpc": "2.0", "id": "big", "method": "ping", "params": {"pad": "x" * 1000}})
        error = await server.receive()
        await handshake(server)  # the next line is served normally
        pong = await server.call({"jsonrpc": "2.0", "id": "p", "method": "ping"})
    assert error["error"]["code"] == -32600 and "id" not in error  # nothing negotiated yet
    assert "300" in error["error"]["message"]
    assert pong == {"jsonrpc": "2.0", "id": "p", "result": {}}


async def test_a_message_just_under_the_default_limit_is_served_and_one_over_is_refused() -> None:
    limit = 4 * 1024 * 1024
    async with raw_server(plain_command()) as server:
        envelope = len(orjson.dumps(_echo(1, "")))
        big = "y" * (limit - envelope)
        answer = await server.call(_echo(1, big))
        assert answer["result"] == big  # a 4 MiB answer, written through a non-blocking pipe
        await server.send(_echo(2, big + "yy"))
        refused = await server.receive()
        assert (refused["id"], refused["error"]["code"]) == (None, -32600)
        assert (await server.call(_echo(3, "after")))["result"] == "after"


async def test_invalid_utf8_on_stdin_is_a_parse_error_and_serving_goes_on() -> None:
    async with raw_server(plain_command()) as server:
        await server.write(b'{"jsonrpc":"2.0","id":1,"method":"echo","params":["\xff\xfe"]}\n')
        error = await server.receive()
        assert (error["id"], error["error"]["code"]) == (None, -32700)
        assert (await server.call(_echo(2, "ok")))["result"] == "ok"


async def test_nothing_but_protocol_reaches_stdout_whatever_a_handler_writes() -> None:
    async with raw_server(serve_command(MCP_HELPER)) as server:
        await handshake(server)
        answer = await server.call(call_tool(1, "shout", {"text": "JUNK-MARK"}))
        await server.close_stdin()
        rest = await server.rest_of_stdout()  # includes whatever is flushed at exit
        with anyio.fail_after(TIMEOUT):
            code = await server.process.wait()
    assert answer["result"]["content"] == [{"type": "text", "text": "JUNK-MARK"}]
    assert code == 0
    assert rest == b""
    assert b"JUNK-MARK" in server.stderr
    for marker in (b"print:JUNK-MARK", b"os.write:JUNK-MARK", b"puts:JUNK-MARK", b"child:JUNK-MARK"):
        assert marker in server.stderr, marker


async def test_stdout_stays_clean_under_the_c_locale_when_a_handler_prints_non_ascii() -> None:
    async with raw_server(serve_command(MCP_HELPER), env=c_locale_env()) as server:
        await handshake(server)
        answer = await server.call(call_tool(1, "shout", {"text": "é✓"}))
        await server.close_stdin()
        rest = await server.rest_of_stdout()
    assert "isError" not in answer["result"], answer
    assert rest == b""
    assert "puts:é✓".encode() in server.stderr and "os.write:é✓".encode() in server.stderr


async def test_on_stdin_eof_the_server_cancels_work_in_flight_and_exits_promptly() -> None:
    async with raw_server(serve_command(MCP_HELPER)) as server:
        await handshake(server)
        await server.send(call_tool("forever", "sleep_forever"))
        await server.wait_stderr(b"sleep_forever: started")
        await server.close_stdin()
        # the tool never ends by itself: only cancelling it lets the server exit
        with anyio.fail_after(TIMEOUT):
            code = await server.process.wait()
        rest = await server.rest_of_stdout()
        await server.wait_stderr(b"sleep_forever: cancelled")
    assert code == 0
    assert rest == b""  # the cancelled call is never answered


async def test_a_file_on_stdin_is_served_to_its_end_including_an_unterminated_last_line(
    tmp_path: Path,
) -> None:
    # Not a pipe: the server falls back to reading in a worker thread. Regression: the last line,
    # unterminated, came out together with end-of-input and its request was cancelled unanswered.
    requests = tmp_path / "requests.jsonl"
    requests.write_bytes(orjson.dumps(_echo(1, "a")) + b"\n" + orjson.dumps(_echo(2, "b")))  # no final \n
    with requests.open("rb") as stdin, anyio.fail_after(TIMEOUT):
        result = await anyio.run_process(plain_command(), stdin=stdin, env=child_env(), check=False)
    lines = result.stdout.splitlines()
    assert result.returncode == 0
    assert sorted(orjson.loads(line)["result"] for line in lines) == ["a", "b"]
    assert all(_is_protocol(line) for line in lines)


def test_stdin_blocking_mode_is_restored_after_serving(tmp_path: Path) -> None:
    # the server made fd 0 non-blocking while serving; a shell sharing the pipe must get it back
    script = tmp_path / "check.py"
    script.write_text(
        "import os, sys, anyio\n"
        "from jsonrpc_mcp.jsonrpc import Endpoint, MethodTable\n"
        "from jsonrpc_mcp.transports.stdio import stdio_server\n"
        "async def main():\n"
        "    async with stdio_server() as stream:\n"
        "        await Endpoint(stream, MethodTable()).run()\n"
        "anyio.run(main)\n"
        "print(os.get_blocking(0), os.get_blocking(1), file=sys.stderr)\n"
    )
    result = subprocess.run(
        [sys.executable, str(script)], input=b"", capture_output=True, timeout=TIMEOUT, env=child_env()
    )
    assert result.returncode == 0, result.stderr
    assert result.stderr.split()[-2:] == [b"True", b"True"]
    assert result.stdout == b""
