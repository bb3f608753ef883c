"""A trace as one self-contained HTML page (``jsonrpc-mcp trace --html FILE``).

Theory of operation: the page is rendered here from the frames' JSON form (:meth:`Frame.to_json`,
the lines of a ``--format jsonl`` recording), every value passed through :func:`html.escape` (the
traffic is untrusted: a frame may hold ``<script>``). Each frame is a ``<tr class="f">`` carrying
``data-method`` and ``data-broken`` (``1`` when it breaks a rule); an answer links to the request it
answers and back. The page's small script only hides and shows rows: a row is shown when its method
is ticked and, with "only frames that break a rule" ticked, when it breaks one. The choice lives in
the URL fragment too (``trace.html#method=tools/call,initialize&broken=1``), read on load and on
``hashchange`` and written back when a box changes; ``#shown`` says how many rows are visible in its
text and its ``data-shown`` attribute (so a filtered view can be checked with ``--dump-dom``).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from html import escape
from typing import Any

from .._html import PAGE_CSS

__all__ = ["to_html"]

_CSS = (
    PAGE_CSS
    + """
#filters{background:#fff;border:1px solid #d8dde3;padding:8px 12px;border-radius:6px;position:sticky;top:0}
#filters label{margin-right:10px;white-space:nowrap;font-size:13px}
#shown{margin:8px 0;color:#56606b}
table{border-collapse:collapse;width:100%;background:#fff;border:1px solid #d8dde3}
td{vertical-align:top;padding:4px 6px;border-top:1px solid #eef0f3;font-size:13px}
td.t{white-space:nowrap;color:#56606b;width:6em}
td.dir{white-space:nowrap;width:7em;font-weight:600}
tr.client td.dir{color:#1f5fa8}
tr.server td.dir{color:#2a7a3b}
tr[data-broken="1"]{background:#fff1f0}
ul.broken{margin:4px 0;padding-left:18px;color:#a8071a;font-weight:600}
pre{margin:4px 0;white-space:pre-wrap;word-break:break-all;font-size:12px;background:#f6f7f9;padding:4px}
.meaning{color:#3d4752}
"""
)

_SCRIPT = """
(function(){
  function boxes(){ return document.querySelectorAll('#filters input[data-method]'); }
  function apply(){
    var want = {}, onlyBroken = document.getElementById('broken').checked, shown = 0, rows;
    boxes().forEach(function(b){ if (b.checked) { want[b.value] = true; } });
    rows = document.querySelectorAll('tr.f');
    rows.forEach(function(row){
      var visible = !!want[row.dataset.method] && (!onlyBroken || row.dataset.broken === '1');
      row.hidden = !visible;
      if (visible) { shown += 1; }
    });
    var counter = document.getElementById('shown');
    counter.dataset.shown = String(shown);
    counter.textContent = shown + ' of ' + rows.length + ' frames shown';
  }
  function fromHash(){
    var given = {};
    location.hash.replace(/^#/, '').split('&').forEach(function(part){
      var kv = part.split('=');
      if (kv.length === 2) { given[kv[0]] = decodeURIComponent(kv[1]).split(','); }
    });
    boxes().forEach(function(b){ b.checked = !given.method || given.method.indexOf(b.value) >= 0; });
    document.getElementById('broken').checked = !!given.broken && given.broken[0] === '1';
    apply();
  }
  function toHash(){
    var on = [], all = true, parts = [];
    boxes().forEach(function(b){ if (b.checked) { on.push(b.value); } else { all = false; } });
    if (!all) { parts.push('method=' + encodeURIComponent(on.join(','))); }
    if (document.getElementById('broken').checked) { parts.push('broken=1'); }
    history.replaceState(null, '', parts.length ? '#' + parts.join('&') : location.pathname);
    apply();
  }
  document.querySelectorAll('#filters input').forEach(function(b){ b.addEventListener('change', toHash); });
  window.addEventListener('hashchange', fromHash);
  fromHash();
})();
"""


def _method_of(frame: dict[str, Any]) -> str:
    return str(frame.get("method") or f"({frame.get('kind', 'frame')})")


def to_html(frames: Sequence[dict[str, Any]], title: str = "MCP trace") -> str:
    """The page for ``frames`` (dicts as :meth:`Frame.to_json` makes them)."""
    requests: dict[tuple[str, str], int] = {}  # (sender, id) -> the row of the request
    answered: dict[int, int] = {}  # request row -> answer row
    answers: dict[int, int] = {}  # answer row -> request row
    for index, frame in enumerate(frames):
        key = json.dumps(frame.get("id"), sort_keys=True)
        if frame.get("kind") == "request":
            requests[(str(frame.get("from")), key)] = index
        elif frame.get("kind") in ("result", "error"):
            other = "server" if frame.get("from") == "client" else "client"
            asked = requests.pop((other, key), None)
            if asked is not None:
                answers[index], answered[asked] = asked, index
    methods = sorted({_method_of(f) for f in frames})
    broken = sum(1 for f in frames if f.get("violations"))
    rows = [_row(index, frame, answers.get(index), answered.get(index)) for index, frame in enumerate(frames)]
    boxes = "".join(
        f'<label><input type="checkbox" data-method value="{escape(m)}" checked> {escape(m)}</label>'
        for m in methods
    )
    return (
        "<!doctype html>\n<html lang=en><head><meta charset=utf-8>"
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{escape(title)}</title><style>{_CSS}</style></head><body>"
        f"<header><h1>{escape(title)}</h1><p>{len(frames)} frames, {len(answers)} answered requests, "
        f"{broken} breaking a rule</p></header><main>"
        f'<div id="filters"><strong>Methods:</strong> {boxes}<br><label><input type="checkbox" id="broken"> '
        "only frames that break a rule</label></div>"
        f'<p id="shown" data-shown="{len(frames)}" data-total="{len(frames)}">{len(frames)} of {len(frames)} '
        "frames shown</p>"
        "<table><tbody>" + "".join(rows) + "</tbody></table></main>"
        f"<script>{_SCRIPT}</script></body></html>\n"
    )


def _row(index: int, frame: dict[str, Any], answers: int | None, answered_by: int | None) -> str:
    sender = "client" if frame.get("from") == "client" else "server"
    arrow = "client &rarr;" if sender == "client" else "&larr; server"
    head = escape(str(frame.get("kind", "")))
    if frame.get("id") is not None:
        head += f" #{escape(json.dumps(frame['id']))}"
    method = _method_of(frame)
    head += f" <code>{escape(method)}</code>"
    if frame.get("latencyMs") is not None:
        head += f" ({float(frame['latencyMs']):.1f} ms)"
    if frame.get("revision"):
        head += f" [{escape(str(frame['revision']))}]"
    links = []
    if answers is not None:
        links.append(f'<a href="#f{answers}">the request</a>')
    if answered_by is not None:
        links.append(f'<a href="#f{answered_by}">its answer</a>')
    parts = [head + (" &middot; " + ", ".join(links) if links else "")]
    if frame.get("meaning"):
        parts.append(f'<div class="meaning">{escape(str(frame["meaning"]))}</div>')
    if frame.get("spec"):
        url = str(frame["spec"])
        parts.append(f'<div><a href="{escape(url)}">{escape(url)}</a></div>')
    violations = [str(v) for v in frame.get("violations") or []]
    if violations:
        parts.append('<ul class="broken">' + "".join(f"<li>{escape(v)}</li>" for v in violations) + "</ul>")
    message = frame.get("message")
    body = message if isinstance(message, str) else json.dumps(message, indent=2, ensure_ascii=False)
    parts.append(f"<details><summary>frame</summary><pre>{escape(body)}</pre></details>")
    t = float(frame.get("t") or 0.0)
    return (
        f'<tr class="f {sender}" id="f{index}" data-method="{escape(method)}" '
        f'data-broken="{1 if violations else 0}"><td class="t">{t:.3f} s</td>'
        f'<td class="dir">{arrow}</td><td>{"".join(parts)}</td></tr>'
    )
