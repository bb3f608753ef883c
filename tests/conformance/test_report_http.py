"""What a verdict over HTTP says and shows (issue 26 item 4): the status that carried no answer, said
once ("answered 202", "answered 400, text/plain: ..."), never "no response within 5 s" for an answer
that came at once; and the frames of ``http`` steps (request line, headers, status, bodies)."""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from jsonrpc_mcp_conformance import HttpTarget, check, load_spec
from jsonrpc_mcp_conformance.faultserver import http_app
from jsonrpc_mcp_conformance.report import to_text
from jsonrpc_mcp_conformance.runner import Run

from ..http.support import serving

pytestmark = pytest.mark.anyio

SPEC = load_spec(check=False)
REVISION = "2025-11-25"
ONLY = [
    "features:pagination:tools-list-bad-cursor",  # tools/list: answered 202
    "features:pagination:prompts-list-bad-cursor",  # prompts/list: answered 400, text
    "features:pagination:tools-list-complete",
    "http:session:missing-header",  # an ``http`` step, then the session's probe
]


def _answering_lists_without_a_response() -> tuple[Any, Any]:
    """The fault server over HTTP, but a POST of tools/list is answered 202 with no body and one of
    prompts/list 400 with a text body (no JSON-RPC response in either)."""
    app, mcp_app = http_app()

    async def wrapper(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http" or scope["method"] != "POST":
            await app(scope, receive, send)
            return
        chunks: list[bytes] = []
        while True:
            message = await receive()
            chunks.append(message.get("body", b""))
            if not message.get("more_body"):
                break
        body = b"".join(chunks)
        for method, status, headers, text in (
            (b'"tools/list"', 202, [], b""),
            (b'"prompts/list"', 400, [(b"content-type", b"text/plain")], b"bad request, go away"),
        ):
            if method in body:
                await send({"type": "http.response.start", "status": status, "headers": headers})
                await send({"type": "http.response.body", "body": text})
                return
        given = False

        async def replay() -> Any:
            nonlocal given
            if given:
                return await receive()
            given = True
            return {"type": "http.request", "body": body, "more_body": False}

        await app(scope, replay, send)

    return wrapper, mcp_app


async def _run() -> Run:
    app, mcp_app = _answering_lists_without_a_response()
    async with serving(app, mcp_app=mcp_app, lifespan="off") as base:
        with anyio.fail_after(60):
            return await check(
                HttpTarget(f"{base}/mcp", timeout=5), revisions=[REVISION], only=ONLY, spec=SPEC
            )


async def test_an_http_answer_without_a_response_is_said_as_it_was_once_with_its_frames() -> None:
    run = await _run()
    by_id = {v.id: v for v in run.verdicts}
    tools, prompts, pages = (by_id[name] for name in ONLY[:3])
    assert [v.status for v in (tools, prompts, pages)] == ["fail"] * 3
    assert tools.problems == ["no response: the POST was answered 202 (no JSON-RPC response in it)"]
    assert prompts.problems == [  # the status and body once (not again as "the last POST was answered")
        "no response: the POST was answered 400, text/plain: 'bad request, go away'"
        " (no JSON-RPC response in it)"
    ]
    assert pages.problems == ["page 0: no response: the POST was answered 202 (no JSON-RPC response in it)"]
    assert tools.actual == prompts.actual == pages.actual == "nothing"
    text = to_text(run)
    assert "within" not in text and "answered 202" in text and "answered 400" in text
    # the frames: the request line and headers sent, and the answer's status, headers and body
    assert "> POST /mcp HTTP/1.1" in prompts.frames
    assert any(line.startswith('> {"jsonrpc":"2.0"') and "prompts/list" in line for line in prompts.frames)
    assert "< HTTP 400" in prompts.frames and "< content-type: text/plain" in prompts.frames
    assert prompts.frames[-1] == "< bad request, go away"
    assert "< HTTP 202" in tools.frames


async def test_the_exchanges_of_http_steps_and_of_a_passing_verdict_are_in_its_frames() -> None:
    run = await _run()
    (verdict,) = [v for v in run.verdicts if v.id == "http:session:missing-header"]
    assert verdict.status == "pass"
    frames = verdict.frames
    posts = [n for n, line in enumerate(frames) if line == "> POST /mcp HTTP/1.1"]
    assert len(posts) == 2  # the step's request without a session id, then the session's probe
    step = frames[posts[0] : posts[1]]
    assert not any(line.lower().startswith("> mcp-session-id:") for line in step)
    assert "< HTTP 400" in step and step[-1].startswith('< {"jsonrpc":"2.0","error":')
    assert any(line.lower().startswith("> mcp-session-id:") for line in frames[posts[1] :])
    assert "< HTTP 200" in frames[posts[1] :]
