"""The --expected-failures baseline: a small YAML file naming requirements known to fail.

Only a subset of YAML is read (no PyYAML dependency)::

    # why these fail, in comments
    expected-failures:
      - jsonrpc:batch:*                  # an id pattern (fnmatch); every revision and transport
      - id: lifecycle:ping:before-initialize
        revision: 2025-11-25             # optional: only this revision
        transport: stdio                 # optional: only this transport
        reason: answered with -32600     # optional, shown in reports

Scalars may be quoted with ' or ". Anything else (flow collections, anchors, multi-line strings) is
rejected with a message naming the line.
"""

from __future__ import annotations

import fnmatch
from dataclasses import dataclass
from pathlib import Path

from .runner import PASS, Run

__all__ = ["BaselineError", "Expected", "apply_baseline", "load_baseline", "parse_baseline", "stale_entries"]


class BaselineError(Exception):
    pass


@dataclass(frozen=True)
class Expected:
    id: str
    revision: str | None = None
    transport: str | None = None
    reason: str = ""

    def covers(self, rid: str, revision: str, transport: str) -> bool:
        return (
            fnmatch.fnmatchcase(rid, self.id)
            and self.revision in (None, revision)
            and self.transport in (None, transport)
        )


def _scalar(text: str, lineno: int) -> str:
    text = text.strip()
    if " #" in text and not text.startswith(("'", '"')):
        text = text.split(" #", 1)[0].rstrip()
    if text[:1] in ("'", '"'):
        quote = text[0]
        end = text.find(quote, 1)
        if end < 0:
            raise BaselineError(f"line {lineno}: unterminated quoted string")
        return text[1:end]
    if text[:1] in ("[", "{", "&", "*", "|", ">"):
        raise BaselineError(f"line {lineno}: unsupported YAML ({text[:1]!r}); use the simple form")
    return text


def parse_baseline(text: str) -> list[Expected]:
    entries: list[Expected] = []
    current: dict[str, str] | None = None
    seen_key = False

    def flush() -> None:
        nonlocal current
        if current is not None:
            if "id" not in current:
                raise BaselineError("an expected-failures entry has no id")
            entries.append(
                Expected(
                    current["id"],
                    current.get("revision"),
                    current.get("transport"),
                    current.get("reason", ""),
                )
            )
            current = None

    for lineno, raw in enumerate(text.splitlines(), 1):
        stripped = raw.strip()
        if not stripped or stripped.startswith("#"):
            continue
        if not raw.startswith((" ", "-")):
            if stripped.split("#")[0].strip() not in ("expected-failures:", "expected_failures:"):
                raise BaselineError(f"line {lineno}: expected 'expected-failures:' at the top level")
            seen_key = True
            continue
        if not seen_key:
            raise BaselineError(f"line {lineno}: entries must follow 'expected-failures:'")
        if stripped.startswith("- "):
            flush()
            item = stripped[2:].strip()
            if (
                ":" in item
                and not item.startswith(("'", '"'))
                and item.split(":", 1)[0]
                in (
                    "id",
                    "revision",
                    "transport",
                    "reason",
                )
            ):
                key, value = item.split(":", 1)
                current = {key: _scalar(value, lineno)}
            else:
                entries.append(Expected(_scalar(item, lineno)))
        elif current is not None and ":" in stripped:
            key, value = stripped.split(":", 1)
            if key not in ("id", "revision", "transport", "reason"):
                raise BaselineError(f"line {lineno}: unknown key {key!r}")
            current[key] = _scalar(value, lineno)
        else:
            raise BaselineError(f"line {lineno}: cannot read {stripped!r}")
    flush()
    return entries


def load_baseline(path: Path) -> list[Expected]:
    return parse_baseline(path.read_text(encoding="utf-8"))


def apply_baseline(run: Run, expected: list[Expected]) -> None:
    """Mark verdicts the baseline expects to fail (passing ones are then reported as fixed)."""
    for verdict in run.verdicts:
        if any(e.covers(verdict.id, verdict.revision, verdict.transport) for e in expected):
            verdict.expected_failure = True


def _describe(entry: Expected) -> str:
    scope = ", ".join(x for x in (entry.revision, entry.transport) if x)
    return f"{entry.id} [{scope}]" if scope else entry.id


def stale_entries(run: Run, expected: list[Expected]) -> list[str]:
    """The baseline entries that are stale: they cover a verdict that now passes (XPASS).

    One line per entry, naming the verdicts that pass, e.g. ``jsonrpc:id:* (now passes:
    jsonrpc:id:integer 2025-11-25 stdio)``. A run of the official suite fails on them; ours too
    unless ``--allow-stale`` (see cli.exit_code).
    """
    lines = []
    for entry in expected:
        passing = [
            f"{v.id} {v.revision} {v.transport}"
            for v in run.verdicts
            if v.status == PASS and entry.covers(v.id, v.revision, v.transport)
        ]
        if passing:
            shown = ", ".join(passing[:5]) + (f" and {len(passing) - 5} more" if len(passing) > 5 else "")
            lines.append(f"{_describe(entry)} (now passes: {shown})")
    return lines
