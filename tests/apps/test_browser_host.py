"""A real host in a real browser: ext-apps' AppBridge (npm) in headless Chromium renders
examples/memory's view, served over HTTP, in a sandboxed iframe; the view calls tools back through
the host (``browse`` on start, ``forget`` after its in-page confirmation), and the test reads both
documents' DOM and keeps a screenshot (``$APPS_SCREENSHOT`` copies it elsewhere, e.g. docs/images).

Skipped, saying why, only where no browser or no npm exists (``.ci/run`` installs both)."""

from __future__ import annotations

import json
import os
import shutil
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest
from anyio.from_thread import start_blocking_portal

from jsonrpc_mcp import Client
from jsonrpc_mcp.apps import CLIENT_SETTINGS, EXTENSION_ID

from ..browser import chromium as find_chromium
from . import host as apps_host
from .memory_server import memory_over_http

WAIT = 20.0  # each condition awaited in the browser, polled
SCREENSHOT_ENV = "APPS_SCREENSHOT"


def wait_for(what: str, check: Callable[[], Any]) -> Any:
    """Poll ``check`` until it returns something truthy, at most WAIT seconds (then fail, saying what)."""
    deadline = time.monotonic() + WAIT
    last: Any = None
    while time.monotonic() < deadline:
        last = check()
        if last:
            return last
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what} (last: {last!r})")


def test_memory_view_in_a_sandboxed_iframe_calls_tools_back_through_the_host(tmp_path: Path) -> None:
    binary = find_chromium()
    try:
        modules = apps_host.install()
    except apps_host.Unavailable as exc:
        pytest.skip(f"the host's npm packages cannot be installed here: {exc}")
    with start_blocking_portal() as portal:
        server = portal.wrap_async_context_manager(memory_over_http(tmp_path / "data"))
        with server as url:
            apps = {EXTENSION_ID: CLIENT_SETTINGS}  # the host declares MCP Apps
            connect = Client.http(url, timeout=WAIT, request_timeout=WAIT, extensions=apps)
            with portal.wrap_async_context_manager(connect) as client:
                for text, tags in [
                    ("Buy oat milk and coffee", ["shopping"]),
                    ("Call the plumber about the kitchen tap", ["home"]),
                    ("Pick up the parcel at the post office", ["shopping", "errands"]),
                ]:
                    portal.call(client.call_tool, "remember", {"text": text, "tags": tags})
                with apps_host.HostBackend(client, portal.call, modules) as backend:
                    _drive(binary, backend, tmp_path)
                remaining = portal.call(client.read_resource, "memory://all")
    texts = [m["text"] for m in json.loads(remaining["contents"][0]["text"])]
    assert texts == ["Call the plumber about the kitchen tap", "Pick up the parcel at the post office"]


def _drive(binary: str, backend: apps_host.HostBackend, tmp_path: Path) -> None:
    profile = Path(tempfile.mkdtemp(prefix="apps-chromium-", dir=tmp_path))
    with (tmp_path / "chromium.log").open("wb") as log, apps_host.chromium(binary, profile, log) as browser:
        args = quote(json.dumps({"tag": "shopping"}))
        browser.open(f"{backend.url}?tool=recall&args={args}")
        wait_for(
            "the host to hand recall's result to the view",
            lambda: (
                browser.evaluate("document.getElementById('state')?.textContent") == "ready"
                or _failed(browser)
            ),
        )

        # the host's own DOM: the view is an iframe sandboxed to scripts alone, under the view's CSP
        policy = 'f.srcdoc.match(/Content-Security-Policy" content="([^"]*)/)[1]'
        frame = browser.evaluate(
            "(() => { const f = document.getElementById('view');"
            f" return {{sandbox: f.sandbox.value, csp: {policy}}}; }})()"
        )
        assert frame["sandbox"] == "allow-scripts"
        assert "connect-src 'none'" in frame["csp"] and "default-src 'none'" in frame["csp"]

        view = browser.frame_context()
        rows = "[...document.querySelectorAll('li.memory')].map(li => li.querySelector('.text').textContent)"
        shopping = ["Buy oat milk and coffee", "Pick up the parcel at the post office"]
        status = "document.getElementById('status').textContent"
        wait_for(  # recall's result may show first; the view's own browse then brings the tags
            "the view to browse the shopping memories",
            lambda: (
                sorted(browser.evaluate(rows, view)) == shopping
                and "of 3 memories" in browser.evaluate(status, view)
            ),
        )
        assert browser.evaluate("document.getElementById('tag').value", view) == "shopping"
        tags = browser.evaluate("[...document.getElementById('tag').options].map(o => o.value)", view)
        assert tags == ["", "shopping", "errands", "home"]
        assert {"name": "browse", "arguments": {"tag": "shopping"}} in backend.calls  # through the host

        # the view cannot reach the network itself: its CSP blocks fetch (connect-src 'none')
        blocked = browser.evaluate(
            "fetch('" + backend.url + "').then(() => 'fetched', () => 'blocked')", view
        )
        assert blocked == "blocked"

        # forget, with the in-page confirmation: the first click only asks
        target = "[...document.querySelectorAll('li.memory')].find(li => li.textContent.includes('oat milk'))"
        browser.evaluate(f"{target}.querySelector('button.forget').click()", view)
        question = browser.evaluate(f"{target}.querySelector('.confirm').textContent", view)
        assert question.startswith("Forget #1 for good?")
        assert not any(call["name"] == "forget" for call in backend.calls)
        browser.screenshot(tmp_path / "memory-app-confirm.png")
        browser.evaluate(f"{target}.querySelector('button.confirm').click()", view)
        wait_for(
            "the view to drop the forgotten memory",
            lambda: browser.evaluate(rows, view) == ["Pick up the parcel at the post office"],
        )
        wait_for("the view to browse again", lambda: "of 2 memories" in browser.evaluate(status, view))
        assert {"name": "forget", "arguments": {"id": 1}} in backend.calls

        host_log = browser.evaluate("[...document.querySelectorAll('#log li')].map(li => li.textContent)")
        assert "view initialized" in host_log and 'view -> tools/call forget {"id":1}' in host_log
        shot = tmp_path / "memory-app.png"
        browser.screenshot(shot)
        assert shot.stat().st_size > 1000
        copy = os.environ.get(SCREENSHOT_ENV)
        if copy:
            shutil.copyfile(tmp_path / "memory-app-confirm.png", copy)


def _failed(browser: apps_host.Chromium) -> bool:
    state = browser.evaluate("document.getElementById('state')?.textContent")
    if isinstance(state, str) and state.startswith("failed"):
        raise AssertionError(f"the host page failed: {state}")
    return False
