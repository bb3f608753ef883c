"""The ``--html`` report (issues 13 and 26): escaped, self-contained; every verdict with the frames of
its exchange, an anchor per requirement and verdict, filterable, checked in a real browser.

The browser test drives Debian's Chromium headless (``apt-get install chromium``; .ci/run installs it)
and skips, saying so, where there is none. Its screenshot (the failures) stays in the test's tmp_path
as ``out.png``. (Whether the view scrolled to an anchor is not checked: Chromium's headless
``--screenshot`` of a page scrolled down is blank, and ``--dump-dom`` does not show the scroll.)
"""

from __future__ import annotations

import io
import json
import re
import sys
from dataclasses import dataclass
from html.parser import HTMLParser
from pathlib import Path
from types import SimpleNamespace
from typing import Any, cast
from urllib.parse import quote, unquote

from jsonrpc_mcp_conformance._channel import Channel, _text
from jsonrpc_mcp_conformance._html import to_html
from jsonrpc_mcp_conformance.cli import EXIT_FAILED, main
from jsonrpc_mcp_conformance.fixtures import load_spec
from jsonrpc_mcp_conformance.httptarget import HttpReply
from jsonrpc_mcp_conformance.runner import Options, RevisionRun, Run, Verdict

from ..browser import browser, chromium

FAULTY = [sys.executable, "-m", "jsonrpc_mcp_conformance.faultserver"]
SPEC = load_spec()
HOSTILE = '<script>alert("x")</script><img src=x onerror=alert(1)>'


def test_everything_the_server_said_is_escaped() -> None:
    fixture = SPEC.by_id()["jsonrpc:id:integer"]
    verdict = Verdict(
        fixture.id, "2025-11-25", "stdio", "fail", fixture, [HOSTILE], actual=HOSTILE, frames=[f"< {HOSTILE}"]
    )
    run = Run(HOSTILE, "stdio", [verdict], [RevisionRun("2025-11-25", True, HOSTILE)], 0.1, [HOSTILE])
    page = to_html(run, stale=[HOSTILE])
    assert "<script>alert" not in page and "<img" not in page
    assert (
        page.count("&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;") == 8
    )  # title, h1, revision, why, actual, frames, stale, stderr
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


def test_each_requirement_and_verdict_has_an_anchor_and_every_link_in_the_page_a_target() -> None:
    fixture, invariant = SPEC.by_id()["jsonrpc:id:integer"], SPEC.by_id()["jsonrpc:error:shape"]
    frames = ['> {"jsonrpc":"2.0","id":1,"method":"ping"}', '< {"jsonrpc":"2.0","id":1,"result":{}}']
    verdicts = [
        Verdict(fixture.id, "2025-11-25", "stdio", "pass", fixture, frames=frames),
        Verdict(fixture.id, "2025-06-18", "stdio", "fail", fixture, ["why"], frames=frames),
        Verdict(
            invariant.id,
            "2025-11-25",
            "stdio",
            "fail",
            invariant,
            [f"malformed error object (during {fixture.id})"],
        ),
    ]
    page = to_html(Run("t", "stdio", verdicts, [], 0.1))
    # stable anchors, from the ids: the requirement's, and each verdict's key
    assert f'<article class="req" id="{fixture.id}"' in page
    assert f'<tr class="v" id="{fixture.id}@2025-11-25/stdio"' in page
    ids = set(re.findall(r'\sid="([^"]+)"', page))
    links = [unquote(target) for target in re.findall(r'href="#([^"]*)"', page)]
    assert f"{fixture.id}@2025-11-25/stdio" in links  # the invariant names the fixture: a link to it
    assert set(links) <= ids and len(links) >= 5, set(links) - ids
    # the frames: open for the failure, closed for the pass, each line marked sent or received
    opened = re.findall(r'<details class="frames"( open)?>', page)
    assert sorted(opened) == ["", " open"]
    assert '<span class="out">&gt; {&quot;jsonrpc&quot;:&quot;2.0&quot;,&quot;id&quot;:1' in page
    assert '<span class="in">&lt; {&quot;jsonrpc&quot;' in page


def test_a_transcript_is_bounded_and_says_what_it_left_out() -> None:
    channel = Channel(cast(Any, SimpleNamespace()), [], Options())
    channel.note("<", _text(b"x" * 5000))  # a huge frame: cut, with its length
    (line,) = channel.frames()
    assert len(line) < 700 and line.endswith("... (5000 characters)")
    for n in range(200):
        channel.note(">", f"frame {n}")
    frames = channel.frames()
    assert frames[0] == "... (81 earlier lines not kept)"
    assert frames[1:] == [f"> frame {n}" for n in range(80, 200)]
    channel.start_transcript()  # the next fixture's exchange starts empty
    assert channel.frames() == []


def test_what_came_instead_of_an_answer_is_said_once() -> None:
    # stdio: what the connection knows (exit status, stderr) is said
    stdio = Channel(
        cast(Any, SimpleNamespace(diagnosis=lambda: "the server exited with status 3")), [], Options()
    )
    assert stdio.diagnosis() == "the server exited with status 3"
    # HTTP: the answer that held no response is described by ``no_answer``, and not again
    reply = HttpReply(400, {"content-type": "text/plain"}, b"go away")
    conn = SimpleNamespace(last_reply=reply, diagnosis=lambda: "the last POST was answered HTTP 400")
    http = Channel(cast(Any, conn), [], Options())
    assert http.diagnosis() == "the last POST was answered HTTP 400"
    said = http.no_answer()
    assert (
        said == "no response: the POST was answered 400, text/plain: 'go away' (no JSON-RPC response in it)"
    )
    assert http.diagnosis() == ""
    conn.last_reply = HttpReply(400, {}, b"")  # a later answer is described again
    assert http.diagnosis() == "the last POST was answered HTTP 400"


@dataclass
class _Row:
    """A verdict row of a dumped DOM."""

    verdict: str
    hidden: bool
    frames_open: bool = False
    frames: str = ""  # the text of its frames, as the page shows it


class _Dom(HTMLParser):
    """What the page's script left in a dumped DOM: the verdict rows by id, in order, the articles'
    hidden state and the #shown counter's attributes."""

    def __init__(self) -> None:
        super().__init__()
        self.rows: dict[str, _Row] = {}
        self.articles: dict[str, bool] = {}  # requirement id -> hidden
        self.shown: dict[str, str] = {}
        self._row: _Row | None = None
        self._pre = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        attributes = dict(attrs)
        if tag == "article":
            self.articles[str(attributes.get("id"))] = "hidden" in attributes
        elif tag == "tr" and attributes.get("class") == "v":
            self._row = _Row(str(attributes.get("data-verdict")), "hidden" in attributes)
            self.rows[str(attributes.get("id"))] = self._row
        elif tag == "details" and self._row is not None:
            self._row.frames_open = "open" in attributes
        elif tag == "pre" and self._row is not None:
            self._pre = True
        if attributes.get("id") == "shown":
            self.shown = {k: str(v) for k, v in attributes.items()}

    def handle_endtag(self, tag: str) -> None:
        if tag == "tr":
            self._row = None
        elif tag == "pre":
            self._pre = False

    def handle_data(self, data: str) -> None:
        if self._pre and self._row is not None:
            self._row.frames += data

    def visible(self) -> list[str]:
        """The ids of the rows shown."""
        return [key for key, row in self.rows.items() if not row.hidden]


def _dom(binary: str, profile: Path, url: str) -> _Dom:
    done = browser(binary, profile, "--dump-dom", url)
    assert done.returncode == 0, done.stderr[-2000:]
    dom = _Dom()
    dom.feed(done.stdout)
    return dom


def _key(verdict: dict[str, Any]) -> str:
    return f"{verdict['id']}@{verdict['revision']}/{verdict['transport']}"


def test_the_report_shows_frames_links_anchors_and_filters_in_a_headless_browser(tmp_path: Path) -> None:
    binary = chromium()
    page, report = tmp_path / "report.html", tmp_path / "report.json"
    args = ["--revision", "2025-11-25", "--html", str(page), "--json", str(report)]
    args += ["--only", "jsonrpc:id:*", "--only", "lifecycle:ping:*", "--only", "stdio:*"]
    code = main([*args, "stdio", "--", *FAULTY, "--fault", "error-id-null"], out=io.StringIO())
    assert code == EXIT_FAILED
    verdicts = json.loads(report.read_text())["verdicts"]
    by_key = {_key(v): v for v in verdicts}
    failing = [key for key, v in by_key.items() if v["status"] == "fail"]
    passing = [key for key, v in by_key.items() if v["status"] == "pass" and v.get("frames")]
    assert failing and passing
    profile, url = tmp_path / "profile", page.as_uri()

    everything = _dom(binary, profile, url)
    assert set(everything.rows) == set(by_key)  # one row per verdict, its id the verdict's key
    assert everything.visible() == list(everything.rows)
    assert next(iter(everything.rows.values())).verdict == "FAIL"  # the failures come first
    assert everything.shown["data-shown"] == everything.shown["data-total"] == str(len(verdicts))
    # every verdict shows the frames of its exchange, as the JSON report has them; a failure's open
    for key, row in everything.rows.items():
        assert row.frames == "\n".join(by_key[key].get("frames", [])), key
        assert row.frames_open == (key in failing), key
    shown = everything.rows[failing[0]].frames
    assert shown.startswith("> {") and "\n< {" in shown and '"id":null' in shown
    # a huge frame is cut, saying how long it was
    large = everything.rows["stdio:framing:large-message@2025-11-25/stdio"].frames
    assert re.search(r"\.\.\. \(\d{5,} characters\)", large), large[:2000]

    # the filters: verdict, area, level, revision (the URL fragment sets the boxes)
    only_failing = _dom(binary, profile, url + "#verdict=FAIL")
    assert sorted(only_failing.visible()) == sorted(failing)
    assert only_failing.shown["data-shown"] == str(len(failing))
    stdio = _dom(binary, profile, url + "#area=stdio")
    assert sorted(stdio.visible()) == sorted(k for k, v in by_key.items() if v["area"] == "stdio")
    assert {key.split("@")[0] for key, hidden in stdio.articles.items() if not hidden} == {
        v["id"] for v in verdicts if v["area"] == "stdio"
    }
    should = _dom(binary, profile, url + "#level=SHOULD&verdict=PASS")
    expected = [k for k, v in by_key.items() if v["level"] == "SHOULD" and v["status"] == "pass"]
    assert expected and sorted(should.visible()) == sorted(expected)
    nothing = _dom(binary, profile, url + "#revision=2024-11-05")  # not in this run
    assert nothing.shown["data-shown"] == "0" and not nothing.visible()

    # an anchor: every row shown, the one it names with its frames open
    target = passing[-1]
    anchored = _dom(binary, profile, f"{url}#{quote(target, safe=':@/')}")
    assert anchored.visible() == list(anchored.rows)
    assert [key for key, row in anchored.rows.items() if row.frames_open] == [*failing, target]

    shot = tmp_path / "out.png"
    done = browser(binary, profile, f"--screenshot={shot}", "--window-size=1280,900", url + "#verdict=FAIL")
    assert done.returncode == 0, done.stderr[-2000:]
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
