"""MkDocs hook: the navigation is built from the files present, so a guide added to docs/ is in the
site without editing mkdocs.yml (and strict mode never fails on a nav entry whose file is missing).

Home first, then the guides (docs/*.md) in reading order (``GUIDES`` first, any other guide after
them by file name), then the API reference (docs/reference/*.md, in ``REFERENCE`` order, then by
file name). Page titles are the pages' first headings.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

GUIDES = (
    "architecture.md",
    "types.md",
    "middleware.md",
    "extensions.md",
    "skills.md",
    "auth.md",
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
    "http.md",
    "content.md",
    "errors.md",
    "skills.md",
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
