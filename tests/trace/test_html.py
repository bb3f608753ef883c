"""``jsonrpc-mcp trace --html``: one self-contained, escaped page, filterable in a real browser.

The browser test drives Debian's Chromium headless (``.ci/run`` installs it) and skips, saying
so, where there is none.
"""

from __future__ import annotations

import re
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path

from jsonrpc_mcp_conformance.trace.html import to_html
from tests import timeouts

from ..browser import browser, chromium

HOSTILE = '<script>alert("x")</script>'
TIMEOUT = timeouts.RUN


def test_everything_from_the_wire_is_escaped_and_nothing_is_fetched() -> None:
    frames = [
        {
            "t": 0.0,
            "from": "client",
            "kind": "request",
            "id": 1,
            "method": HOSTILE,
            "message": {"m": HOSTILE},
        },
        {"t": 0.1, "from": "server", "kind": "result", "id": 1, "method": HOSTILE, "violations": [HOSTILE]},
    ]
    page = to_html(frames, title=HOSTILE)
    assert "<script>alert" not in page and page.count("<script>") == 1  # the page's own
    assert not re.search(r"""(src|href)=["']?(https?:)?//""", page)
    assert 'href="#f0">the request</a>' in page and 'href="#f1">its answer</a>' in page


class _Rows(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.rows: list[tuple[str, str, bool]] = []  # (data-method, data-broken, hidden)
        self.shown = ""

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        if tag == "tr" and "f" in str(a.get("class", "")).split():
            self.rows.append((str(a.get("data-method")), str(a.get("data-broken")), "hidden" in a))
        if a.get("id") == "shown":
            self.shown = str(a.get("data-shown"))


def _dom(binary: str, profile: Path, url: str) -> _Rows:
    done = browser(binary, profile, "--dump-dom", url)
    assert done.returncode == 0, done.stderr[-2000:]
    rows = _Rows()
    rows.feed(done.stdout)
    return rows


def test_a_live_trace_page_filters_by_method_and_by_broken_rule_in_a_headless_browser(tmp_path: Path) -> None:
    binary = chromium()
    page = tmp_path / "trace.html"
    server = [sys.executable, "-m", "jsonrpc_mcp_conformance.faultserver", "--fault", "answers-notifications"]
    tap = [
        sys.executable,
        "-m",
        "jsonrpc_mcp",
        "trace",
        "--out",
        str(tmp_path / "t.txt"),
        "--html",
        str(page),
    ]
    sent = (
        '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25",'
        '"capabilities":{},"clientInfo":{"name":"t","version":"1"}}}\n'
        '{"jsonrpc":"2.0","method":"notifications/initialized"}\n'
        '{"jsonrpc":"2.0","id":2,"method":"tools/list"}\n'
    )
    done = subprocess.run([*tap, "--", *server], input=sent, capture_output=True, text=True, timeout=TIMEOUT)
    assert done.returncode == 0, done.stderr
    profile, url = tmp_path / "profile", page.as_uri()

    everything = _dom(binary, profile, url)
    methods = [m for m, _, _ in everything.rows]
    assert methods.count("initialize") == 2 and methods.count("tools/list") == 2
    assert not any(hidden for _, _, hidden in everything.rows) and everything.shown == str(len(methods))

    broken = _dom(binary, profile, url + "#broken=1")
    visible = [(m, b) for m, b, hidden in broken.rows if not hidden]
    assert visible and all(b == "1" for _, b in visible)  # the answer to the notification, and only that
    assert broken.shown == str(len(visible))

    listing = _dom(binary, profile, url + "#method=tools/list")
    assert [m for m, _, hidden in listing.rows if not hidden] == ["tools/list", "tools/list"]


def test_a_recording_renders_without_running_anything(tmp_path: Path) -> None:
    recording = tmp_path / "r.jsonl"
    recording.write_text(
        '{"t": 0, "from": "client", "kind": "notification", "method": "ping", "message": {}}\n'
    )
    page = tmp_path / "r.html"
    command = [sys.executable, "-m", "jsonrpc_mcp", "trace", "--from", str(recording), "--html", str(page)]
    done = subprocess.run(command, capture_output=True, text=True, timeout=TIMEOUT, check=False)
    assert done.returncode == 0, done.stderr
    assert 'data-method="ping"' in page.read_text()
    missing = subprocess.run(command[:-2], capture_output=True, text=True, timeout=TIMEOUT, check=False)
    assert missing.returncode == 2 and "--from needs --html" in missing.stderr
