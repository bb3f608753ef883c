"""MkDocs hook: the navigation is built from the files present, so a guide added to docs/ is in the
site without editing mkdocs.yml (and strict mode never fails on a nav entry whose file is missing).

Home first, then the guides (docs/*.md) in reading order (``GUIDES`` first, any other guide after
them by file name), then the API reference (docs/reference/*.md, in ``REFERENCE`` order, then by
file name). Page titles are the pages' first headings.

Links from a page to a file outside docs/ (``../README.md``, ``../jsonrpc_mcp/server/_pipeline.py``)
work on GitHub as they are, and from the built site too, because site/ mirrors docs/ page for page
(``use_directory_urls: false``) beside the checkout's files. MkDocs would warn that such a target is
no documentation file, so :func:`on_page_markdown` checks that the file exists (a warning, so a
strict build fails, when it does not) and hides the link from MkDocs's check; :func:`on_page_content`
puts it back unchanged.
"""

from __future__ import annotations

import logging
import re
from pathlib import Path
from typing import Any

log = logging.getLogger("mkdocs.hooks.outside_links")

_LINK = re.compile(r"\]\((?![a-z]+:|#)([^)\s]+)\)")
_FENCE = re.compile(r"^(```.*?^```)", re.S | re.M)
_MARK = "outside-docs:"

GUIDES = (
    "recipes.md",
    "architecture.md",
    "types.md",
    "middleware.md",
    "extensions.md",
    "skills.md",
    "apps.md",
    "auth.md",
    "bridge.md",
    "compose.md",
    "deploying.md",
    "scale-out.md",
    "telemetry.md",
    "trace.md",
    "learn.md",
    "conformance.md",
    "conformance-sdk-divergences.md",
)
REFERENCE = (
    "index.md",
    "jsonrpc_mcp.md",
    "server.md",
    "tasks.md",
    "client.md",
    "proxy.md",
    "openapi.md",
    "http.md",
    "content.md",
    "errors.md",
    "skills.md",
    "apps.md",
    "telemetry.md",
    "testing.md",
    "wire.md",
    "revisions.md",
    "jsonrpc.md",
    "codec.md",
    "transports.md",
    "conformance.md",
    "trace.md",
)


def _ordered(names: list[str], first: tuple[str, ...]) -> list[str]:
    known = [name for name in first if name in names]
    return known + sorted(name for name in names if name not in first)


def nav(docs_dir: Path) -> list[Any]:
    """The site's navigation for the pages under ``docs_dir``."""
    guides = [p.name for p in docs_dir.glob("*.md") if p.name != "index.md"]
    reference = [p.name for p in (docs_dir / "reference").glob("*.md")]
    return [
        {"Home": "index.md"},
        {"Guides": _ordered(guides, GUIDES)},
        {"API reference": [f"reference/{name}" for name in _ordered(reference, REFERENCE)]},
    ]


def on_config(config: Any) -> Any:
    """Set ``nav`` (mkdocs.yml has none) from the files in ``docs_dir``."""
    config["nav"] = nav(Path(config["docs_dir"]))
    return config


def _outside(match: re.Match[str], page_dir: Path, docs_dir: Path, where: str) -> str:
    url = match.group(1)
    path = url.split("#", 1)[0]
    target = (page_dir / path).resolve()
    if not path or target.is_relative_to(docs_dir.resolve()):
        return match.group(0)  # MkDocs checks links within docs/ itself
    if not target.exists():
        log.warning("%s links to %r, which does not exist", where, url)
    return f"]({_MARK}{url})"


def on_page_markdown(markdown: str, page: Any, config: Any, files: Any) -> str:
    """Check the links to files outside docs/ and hide them from MkDocs's link check."""
    docs_dir = Path(config["docs_dir"])
    page_dir = (docs_dir / page.file.src_uri).parent
    parts = _FENCE.split(markdown)  # odd parts are fenced code blocks: left alone
    for index in range(0, len(parts), 2):
        parts[index] = _LINK.sub(lambda m: _outside(m, page_dir, docs_dir, page.file.src_uri), parts[index])
    return "".join(parts)


def on_page_content(html: str, page: Any, config: Any, files: Any) -> str:
    """The links to files outside docs/, as they were written (relative: site/ mirrors docs/)."""
    return html.replace(f'href="{_MARK}', 'href="')
