"""The user-agent steps on real sockets: the loopback listener takes the browser's redirect (RFC 8252),
and the headless follower chases redirects (keeping cookies) until the redirect URI."""

from __future__ import annotations

import threading
from collections.abc import AsyncIterator
from typing import Any

import anyio
import httpx
import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import PlainTextResponse, RedirectResponse, Response
from starlette.routing import Route

from jsonrpc_mcp.client.auth import AuthorizationError, HeadlessBrowser, LoopbackBrowser
from tests import timeouts

from ...http.support import serving

pytestmark = pytest.mark.anyio

STEP = timeouts.STEP


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


async def test_the_loopback_listener_takes_the_redirect() -> None:
    opened: list[str] = []
    pages: list[httpx.Response] = []
    browsed = threading.Event()

    def browser(url: str) -> bool:  # a "browser" whose authorization server sends it straight back
        opened.append(url)
        with httpx.Client(timeout=STEP) as http:
            pages.append(http.get(redirect.replace("/callback", "/favicon.ico")))
            pages.append(http.get(redirect + "?code=abc&state=xyz"))
        browsed.set()
        return True

    agent = LoopbackBrowser(open=browser, timeout=STEP)
    redirect = agent.redirect_uri
    assert redirect.startswith("http://127.0.0.1:") and redirect.endswith("/callback")
    with anyio.fail_after(STEP):
        back = await agent.authorize("https://as.example/authorize?x=1")
    assert opened == ["https://as.example/authorize?x=1"]
    assert back == redirect + "?code=abc&state=xyz"
    assert agent.redirect_uri == redirect  # the same port for a later authorization
    # (the browser thread reads the page after the listener answered)
    assert await anyio.to_thread.run_sync(browsed.wait, STEP)
    assert pages[0].status_code == 404
    assert pages[1].status_code == 200 and "close this window" in pages[1].text


async def test_when_no_browser_opens_the_url_is_shown_and_the_wait_is_bounded() -> None:
    shown: list[str] = []
    agent = LoopbackBrowser(open=lambda url: False, show=shown.append, timeout=0.2)
    with pytest.raises(AuthorizationError, match="within"):
        await agent.authorize("https://as.example/authorize")
    assert shown == ["https://as.example/authorize"]


@pytest.fixture
async def authorization_site() -> AsyncIterator[str]:
    async def authorize(request: Request) -> Response:
        response = RedirectResponse("/login", status_code=302)
        response.set_cookie("session", "s1")
        return response

    async def login(request: Request) -> Response:
        if request.cookies.get("session") != "s1":
            return PlainTextResponse("who are you?", status_code=401)
        return RedirectResponse("http://127.0.0.1:3000/callback?code=c&state=s", status_code=303)

    async def person(request: Request) -> Response:
        return PlainTextResponse("<form>log in</form>")

    app: Any = Starlette(
        routes=[Route("/authorize", authorize), Route("/login", login), Route("/person", person)]
    )
    async with serving(app, mcp_app=_NoMcp()) as base:  # type: ignore[arg-type]
        yield base


class _NoMcp:
    def begin_shutdown(self) -> None:
        pass


async def test_the_headless_follower_keeps_cookies_until_the_redirect_uri(authorization_site: str) -> None:
    agent = HeadlessBrowser("http://127.0.0.1:3000/callback", timeout=STEP)
    with anyio.fail_after(STEP):
        back = await agent.authorize(authorization_site + "/authorize")
    assert back == "http://127.0.0.1:3000/callback?code=c&state=s"


async def test_the_headless_follower_says_when_a_person_is_needed(authorization_site: str) -> None:
    with pytest.raises(AuthorizationError, match="wants a person"):
        await HeadlessBrowser(timeout=STEP).authorize(authorization_site + "/person")
