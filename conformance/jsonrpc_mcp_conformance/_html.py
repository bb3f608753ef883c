"""The ``--html`` report: one self-contained page (inline CSS and JS, nothing fetched).

Theory of operation: every row is rendered here, on the server side, with each value passed through
:func:`html.escape` (server output is untrusted: a frame may hold ``<script>``). The page's small
script only hides and shows rows. Each requirement is an ``<article>`` carrying ``data-area`` and
``data-level``; each of its verdicts a ``<tr class="v">`` carrying ``data-revision`` and
``data-verdict``. A row is shown when all four of its values are ticked in the filter boxes; an
article when any of its rows is. The filters live in the URL fragment too
(``report.html#verdict=FAIL,ERROR&revision=2025-11-25``): the page reads it on load and on
``hashchange``, and writes it back when a box changes, so a filtered view can be linked (and
checked headless with ``chromium --dump-dom``). ``#shown`` then says how many rows are visible,
in its text and its ``data-shown`` attribute. Requirements with an ERROR or FAIL come first.

Anchors: each article's ``id`` is its requirement id (``report.html#jsonrpc:id:integer``), each
row's the verdict's key (``jsonrpc:id:integer@2025-11-25/stdio``). A fragment without ``=`` is such
an anchor: the page then shows every row (the target must not be filtered away), opens the frames
of the row it names and scrolls to it. The frames of a verdict (its transcript, ``>`` sent, ``<``
received) are a ``<details>`` in its row, open for a FAIL or an ERROR; an invariant's "during X"
links to X's row.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from html import escape
from urllib.parse import quote

from .report import summary
from .runner import ERROR, FAIL, PASS, SKIP, Run, Verdict

__all__ = ["PAGE_CSS", "VERDICTS", "to_html", "verdict_label"]

VERDICTS = ("PASS", "FAIL", "ERROR", "SKIP", "XFAIL", "XPASS")
_DIMENSIONS = ("area", "level", "revision", "verdict")
_RANK = {"ERROR": 0, "FAIL": 1, "XPASS": 2, "XFAIL": 3, "PASS": 4, "SKIP": 5}


def verdict_label(v: Verdict) -> str:
    """PASS, FAIL, ERROR or SKIP; XFAIL/XPASS for a verdict the baseline expects to fail."""
    if v.expected_failure and v.status in (FAIL, ERROR):
        return "XFAIL"
    if v.expected_failure and v.status == PASS:
        return "XPASS"
    return {PASS: "PASS", FAIL: "FAIL", ERROR: "ERROR", SKIP: "SKIP"}.get(v.status, v.status.upper())


# the frame of every page of the project (the report here, the trace view of trace/html.py)
PAGE_CSS = """
body{font:14px/1.4 system-ui,sans-serif;margin:0;color:#1d232a;background:#f6f7f9}
header{background:#1d232a;color:#fff;padding:12px 20px}
header h1{font-size:18px;margin:0 0 4px}
header p{margin:2px 0;font-size:13px;color:#cfd6de}
main{padding:12px 20px}
"""

_CSS = (
    PAGE_CSS
    + """
#filters{display:flex;flex-wrap:wrap;gap:8px 24px;background:#fff;border:1px solid #d8dde3;
padding:8px 12px;border-radius:6px;position:sticky;top:0;z-index:1}
#filters fieldset{border:0;margin:0;padding:0}
#filters legend{font-weight:600;font-size:12px;text-transform:uppercase;color:#56606b}
#filters label{margin-right:8px;white-space:nowrap;font-size:13px}
#shown{margin:8px 0;color:#56606b}
article{background:#fff;border:1px solid #d8dde3;border-radius:6px;margin:8px 0;padding:8px 12px}
article h2{font-size:14px;margin:0}
article h2 code{font-size:13px}
.tag{display:inline-block;font-size:11px;padding:0 6px;border-radius:9px;background:#e6e9ee;margin-left:6px}
blockquote{margin:4px 0;padding-left:8px;border-left:3px solid #d8dde3;color:#3d4752}
table{border-collapse:collapse;width:100%;margin-top:4px}
td{vertical-align:top;padding:3px 6px;border-top:1px solid #eef0f3;font-size:13px}
td.rev{white-space:nowrap;width:8em}
td.rev a{color:inherit;text-decoration:none}
td.verdict{width:5em}
.badge{font-weight:700;font-size:12px;padding:1px 6px;border-radius:4px;color:#fff}
.PASS{background:#2e7d32}.FAIL{background:#c62828}.ERROR{background:#8e24aa}
.SKIP{background:#78909c}.XFAIL{background:#ef6c00}.XPASS{background:#f9a825;color:#1d232a}
ul.detail{margin:0;padding-left:16px;font-family:ui-monospace,monospace;font-size:12px;
white-space:pre-wrap;word-break:break-all}
a.anchor{margin-left:6px;color:#90a4ae;text-decoration:none;font-weight:400}
article:target,tr.v:target{outline:2px solid #1565c0}
details.frames{margin-top:4px}
details.frames summary{cursor:pointer;font-size:12px;color:#56606b}
pre.frames{margin:2px 0;padding:4px 6px;background:#f6f7f9;border:1px solid #eef0f3;font-size:12px;
white-space:pre-wrap;word-break:break-all;max-height:32em;overflow:auto}
pre.frames .out{color:#0d47a1}pre.frames .in{color:#1b5e20}pre.frames .cut{color:#8d6e00}
p.official{margin:2px 0;font-size:12px;color:#56606b}
.stale{background:#fff8e1;border:1px solid #f9a825;padding:6px 12px;border-radius:6px}
"""
)

_JS = """
(function(){
  var dims = %s;
  function boxes(dim){ return document.querySelectorAll('#filters input[data-dim="' + dim + '"]'); }
  function chosen(dim){
    var out = {};
    boxes(dim).forEach(function(b){ if (b.checked) { out[b.value] = true; } });
    return out;
  }
  function apply(){
    var want = {}, shown = 0, total = 0;
    dims.forEach(function(d){ want[d] = chosen(d); });
    document.querySelectorAll('article.req').forEach(function(art){
      var any = false;
      var inScope = want.area[art.dataset.area] && want.level[art.dataset.level];
      art.querySelectorAll('tr.v').forEach(function(row){
        var ok = inScope && want.revision[row.dataset.revision] && want.verdict[row.dataset.verdict];
        row.hidden = !ok;
        total += 1;
        if (ok) { shown += 1; any = true; }
      });
      art.hidden = !any;
    });
    var counter = document.getElementById('shown');
    counter.textContent = shown + ' of ' + total + ' verdicts shown';
    counter.setAttribute('data-shown', String(shown));
    counter.setAttribute('data-total', String(total));
  }
  function fromHash(){
    var given = {};
    location.hash.replace(/^#/, '').split('&').forEach(function(part){
      var kv = part.split('=');
      if (kv.length === 2 && dims.indexOf(kv[0]) >= 0) {
        given[kv[0]] = decodeURIComponent(kv[1]).split(',');
      }
    });
    dims.forEach(function(d){
      boxes(d).forEach(function(b){ b.checked = !given[d] || given[d].indexOf(b.value) >= 0; });
    });
    apply();
  }
  function toHash(){
    var parts = [];
    dims.forEach(function(d){
      var all = true, on = [];
      boxes(d).forEach(function(b){ if (b.checked) { on.push(b.value); } else { all = false; } });
      if (!all) { parts.push(d + '=' + encodeURIComponent(on.join(','))); }
    });
    history.replaceState(null, '', parts.length ? '#' + parts.join('&') : location.pathname);
    apply();
  }
  document.querySelectorAll('#filters input').forEach(function(b){ b.addEventListener('change', toHash); });
  function reveal(){
    var name = location.hash.replace(/^#/, '');
    if (!name || name.indexOf('=') >= 0) { return; }
    try { name = decodeURIComponent(name); } catch (e) { return; }
    var target = document.getElementById(name);
    if (!target) { return; }
    if (target.tagName === 'TR') {
      target.querySelectorAll('details.frames').forEach(function(d){ d.open = true; });
    }
    target.scrollIntoView();
  }
  window.addEventListener('hashchange', function(){ fromHash(); reveal(); });
  fromHash();
  reveal();
})();
""" % ('["' + '","'.join(_DIMENSIONS) + '"]')


def _e(text: object) -> str:
    return escape(str(text), quote=True)


def _checkboxes(dim: str, values: Iterable[str]) -> str:
    boxes = "".join(
        f'<label><input type="checkbox" data-dim="{_e(dim)}" value="{_e(v)}" checked> {_e(v)}</label>'
        for v in values
    )
    return f"<fieldset><legend>{_e(dim)}</legend>{boxes}</fieldset>"


def _anchor(name: str) -> str:
    """``#name`` for an ``href`` (URL-quoted, then escaped)."""
    return _e("#" + quote(name, safe=":@/-_.~!$'()*+,;"))


_DURING = re.compile(r"\(during ([A-Za-z0-9][A-Za-z0-9:_.*-]*)\)")


def _linked(line: str, v: Verdict, keys: set[str]) -> str:
    """A detail line, escaped, its "(during X)" (an invariant names the fixture whose exchange
    carried the offending message) a link to X's verdict of the same revision."""
    out, last = [], 0
    for found in _DURING.finditer(line):
        key = f"{found.group(1)}@{v.revision}/{v.transport}"
        if key in keys:
            out.append(_e(line[last : found.start(1)]))
            out.append(f'<a href="{_anchor(key)}">{_e(found.group(1))}</a>')
            last = found.end(1)
    out.append(_e(line[last:]))
    return "".join(out)


def _frames(v: Verdict, label: str) -> str:
    """The verdict's transcript as a ``<details>`` (open for a failure), one line per line."""
    if not v.frames:
        return ""
    kinds = {">": "out", "<": "in"}
    lines = "\n".join(f'<span class="{kinds.get(line[:1], "cut")}">{_e(line)}</span>' for line in v.frames)
    sent = sum(1 for line in v.frames if line.startswith(">"))
    received = sum(1 for line in v.frames if line.startswith("<"))
    opened = " open" if label in ("FAIL", "ERROR") else ""
    return (
        f'<details class="frames"{opened}><summary>frames: &gt; sent ({_lines(sent)}),'
        f' &lt; received ({_lines(received)})</summary><pre class="frames">{lines}</pre></details>'
    )


def _lines(count: int) -> str:
    return f"{count} line" if count == 1 else f"{count} lines"


def _detail(v: Verdict) -> list[str]:
    lines = [f"why: {p}" for p in v.problems]
    if v.expected:
        lines.append(f"expected: {v.expected}")
    if v.actual:
        lines.append(f"actual: {v.actual}")
    if v.note:
        lines.append(v.note)
    if v.fixture.ambiguity:
        lines.append(f"ambiguity: {v.fixture.ambiguity.get('text')}")
    if v.fixture.invariant:
        lines.append("an invariant: judged over every message of the revision (no exchange of its own)")
    return lines


def _row(v: Verdict, keys: set[str]) -> str:
    label = verdict_label(v)
    url = v.fixture.url(v.revision)
    link = f'<a href="{_e(url)}">{_e(url)}</a>' if url.startswith(("https://", "http://")) else _e(url)
    detail = "".join(f"<li>{_linked(line, v, keys)}</li>" for line in _detail(v))
    return (
        f'<tr class="v" id="{_e(v.key)}" data-revision="{_e(v.revision)}" data-verdict="{_e(label)}">'
        f'<td class="rev"><a href="{_anchor(v.key)}" title="link to this verdict">{_e(v.revision)}</a></td>'
        f'<td class="verdict"><span class="badge {_e(label)}">{_e(label)}</span></td>'
        f"<td>{link} <span class=tag>{_e(v.transport)}</span>"
        f"{f'<ul class=detail>{detail}</ul>' if detail else ''}{_frames(v, label)}</td></tr>"
    )


def _article(verdicts: Sequence[Verdict], keys: set[str]) -> str:
    f = verdicts[0].fixture
    said = f"<blockquote>{_e(f.quote)} <span class=tag>{_e(f.source)}</span></blockquote>" if f.quote else ""
    rows = "".join(_row(v, keys) for v in verdicts)
    official = ""
    if f.official:  # the official suite's checks testing the same thing
        codes = ", ".join(f"<code>{_e(check)}</code>" for check in f.official)
        listed = _e(" ".join(f.official))
        official = f'<p class="official" data-official="{listed}">official suite: {codes}</p>'
    return (
        f'<article class="req" id="{_e(f.id)}" data-area="{_e(f.area)}" data-level="{_e(f.level)}">'
        f"<h2><code>{_e(f.id)}</code> {_e(f.title)}"
        f"<span class=tag>{_e(f.level)}</span><span class=tag>{_e(f.area)}</span>"
        f'<a class="anchor" href="{_anchor(f.id)}" title="link to this requirement">#</a></h2>'
        f"{official}{said}<table>{rows}</table></article>"
    )


def to_html(run: Run, *, stale: Sequence[str] = ()) -> str:
    """The report of ``run`` as one HTML page; ``stale``: the baseline entries that now pass."""
    by_id: dict[str, list[Verdict]] = {}
    for verdict in run.verdicts:
        by_id.setdefault(verdict.id, []).append(verdict)
    # the requirements needing attention first (stable: spec order within each rank)
    ordered = sorted(by_id.values(), key=lambda vs: min(_RANK.get(verdict_label(v), 6) for v in vs))
    fixtures = [vs[0].fixture for vs in ordered]
    present = {verdict_label(v) for v in run.verdicts}
    values = {
        "area": sorted({f.area for f in fixtures}),
        "level": sorted({f.level for f in fixtures}),
        "revision": sorted({v.revision for v in run.verdicts}),
        "verdict": [label for label in VERDICTS if label in present],
    }
    keys = {v.key for v in run.verdicts}
    s = summary(run)
    revisions = "".join(
        f"<p>revision {_e(r.revision)}: {_e('supported' if r.supported else 'not supported')}"
        f" ({_e(r.detail)})</p>"
        for r in run.revisions
    )
    totals = (
        f"{s['passed']} passed, {s['failed']} failed, {s['expected_failures']} expected failures, "
        f"{s['unexpectedly_passing']} unexpectedly passing, {s['skipped']} skipped in {run.seconds:.1f} s"
    )
    stale_html = ""
    if stale:
        items = "".join(f"<li>{_e(line)}</li>" for line in stale)
        stale_html = f'<div class="stale" id="stale"><b>Stale baseline entries</b><ul>{items}</ul></div>'
    stderr_html = ""
    if run.stderr_tail and s["failed"]:
        tail = "".join(f"<li>{_e(line)}</li>" for line in run.stderr_tail)
        stderr_html = f"<h2>Server stderr (last lines)</h2><ul class=detail>{tail}</ul>"
    return (
        "<!DOCTYPE html>\n<html lang=en><head><meta charset=utf-8>"
        '<meta name=viewport content="width=device-width, initial-scale=1">'
        f"<title>MCP conformance: {_e(run.target)}</title><style>{_CSS}</style></head><body>"
        f"<header><h1>MCP conformance: {_e(run.target)} over {_e(run.transport)}</h1>"
        f'{revisions}<p id="totals">{_e(totals)}</p></header><main>{stale_html}'
        f'<form id="filters">{"".join(_checkboxes(d, values[d]) for d in _DIMENSIONS)}</form>'
        f'<p id="shown">{len(run.verdicts)} verdicts</p>'
        f"{''.join(_article(vs, keys) for vs in ordered)}{stderr_html}"
        f"</main><script>{_JS}</script></body></html>\n"
    )
