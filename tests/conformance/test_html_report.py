"""The ``--html`` report (issue 13 item 7): escaped, self-contained, filterable in a real browser.

The browser test drives Debian's Chromium headless (``apt-get install chromium``; .ci/run installs it)
and skips, saying so, where there is none.
"""

from __future__ import annotations

import io
import json
import re
import sys
from html.parser import HTMLParser
from pathlib import Path

from jsonrpc_mcp_conformance._html import to_html
from jsonrpc_mcp_conformance.cli import EXIT_FAILED, main
from jsonrpc_mcp_conformance.fixtures import load_spec
from jsonrpc_mcp_conformance.runner import RevisionRun, Run, Verdict

from ..browser import browser, chromium

FAULTY = [sys.executable, "-m", "jsonrpc_mcp_conformance.faultserver"]
SPEC = load_spec()
HOSTILE = '<script>alert("x")</script><img src=x onerror=alert(1)>'


def test_everything_the_server_said_is_escaped() -> None:
    fixture = SPEC.by_id()["jsonrpc:id:integer"]
    verdict = Verdict(fixture.id, "2025-11-25", "stdio", "fail", fixture, problems=[HOSTILE], actual=HOSTILE)
    run = Run(HOSTILE, "stdio", [verdict], [RevisionRun("2025-11-25", True, HOSTILE)], 0.1, [HOSTILE])
    page = to_html(run, stale=[HOSTILE])
    assert "<script>alert" not in page and "<img" not in page
    assert (
        page.count("&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;") == 7
    )  # title, h1, revision, why, actual, stale, stderr
    assert page.count("<script>") == 1  # the page's own
    assert not re.search(r"""(src|href)=["']?(https?:)?//""", page.replace(fixture.url("2025-11-25"), ""))


def test_a_verdict_shows_its_spec_link_quote_and_details() -> None:
    fixture = SPEC.by_id()["jsonrpc:id:integer"]
    verdict = Verdict(
        fixture.id, "2025-06-18", "http", "fail", fixture, problems=["why 1", "why 2"], expected="E"
    )
    page = to_html(Run("t", "http", [verdict], [], 0.1))
    url = fixture.url("2025-06-18")
    assert "2025-06-18" in url
    assert f'<a href="{url}">' in page
    assert fixture.quote.replace('"', "&quot;").replace("'", "&#x27;") in page
    for line in ("why: why 1", "why: why 2", "expected: E"):
        assert f"<li>{line}</li>" in page
    assert 'data-verdict="FAIL"' in page and 'data-revision="2025-06-18"' in page


class _Rows(HTMLParser):
    """The verdict rows of a dumped DOM: (data-verdict, hidden), and the #shown counter."""

    def __init__(self) -> None:
        super().__init__()
        self.rows: list[tuple[str, bool]] = []
        self.shown: dict[str, str] = {}

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        attributes = dict(attrs)
        if tag == "tr" and attributes.get("class") == "v":
            self.rows.append((str(attributes.get("data-verdict")), "hidden" in attributes))
        if attributes.get("id") == "shown":
            self.shown = {k: str(v) for k, v in attributes.items()}


def _dom(binary: str, profile: Path, url: str) -> _Rows:
    done = browser(binary, profile, "--dump-dom", url)
    assert done.returncode == 0, done.stderr[-2000:]
    rows = _Rows()
    rows.feed(done.stdout)
    return rows


def test_the_report_filters_in_a_headlessbrowser(tmp_path: Path) -> None:
    binary = chromium()
    page, report = tmp_path / "report.html", tmp_path / "report.json"
    args = ["--revision", "2025-11-25", "--only", "jsonrpc:id:*", "--html", str(page), "--json", str(report)]
    code = main([*args, "stdio", "--", *FAULTY, "--fault", "error-id-null"], out=io.StringIO())
    assert code == EXIT_FAILED
    verdicts = json.loads(report.read_text())["verdicts"]
    statuses = [v["status"] for v in verdicts]
    assert "pass" in statuses and "fail" in statuses
    profile, url = tmp_path / "profile", page.as_uri()

    everything = _dom(binary, profile, url)
    assert len(everything.rows) == len(verdicts)
    assert not any(hidden for _, hidden in everything.rows)
    assert everything.rows[0][0] == "FAIL"  # the requirements needing attention come first
    assert everything.shown["data-shown"] == everything.shown["data-total"] == str(len(verdicts))

    failing = _dom(binary, profile, url + "#verdict=FAIL")
    visible = [verdict for verdict, hidden in failing.rows if not hidden]
    assert visible == ["FAIL"] * statuses.count("fail")
    assert failing.shown["data-shown"] == str(statuses.count("fail"))

    nothing = _dom(binary, profile, url + "#revision=2024-11-05")  # not in this run
    assert nothing.shown["data-shown"] == "0" and all(hidden for _, hidden in nothing.rows)

    shot = tmp_path / "out.png"
    done = browser(binary, profile, f"--screenshot={shot}", "--window-size=1280,900", url + "#verdict=FAIL")
    assert done.returncode == 0, done.stderr[-2000:]
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
