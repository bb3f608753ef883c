"""Reports of a run: readable text grouped by area, JSON, JUnit XML."""

from __future__ import annotations

from collections import Counter
from typing import Any
from xml.etree import ElementTree as ET

import orjson

from .runner import ERROR, FAIL, PASS, SKIP, Run, Verdict

__all__ = ["summary", "to_json", "to_junit", "to_text"]


def summary(run: Run) -> dict[str, int]:
    counts = Counter(v.status for v in run.verdicts)
    expected = sum(1 for v in run.verdicts if v.expected_failure and v.status in (FAIL, ERROR))
    fixed = sum(1 for v in run.verdicts if v.expected_failure and v.status == PASS)
    return {
        "passed": counts[PASS],
        "failed": counts[FAIL] + counts[ERROR] - expected,
        "expected_failures": expected,
        "unexpectedly_passing": fixed,
        "skipped": counts[SKIP],
        "total": len(run.verdicts),
    }


def _page(verdict: Verdict) -> str:
    """The specification page the verdict's requirement comes from, for the revision checked."""
    return verdict.fixture.url(verdict.revision)


def to_text(run: Run, *, verbose: bool = False) -> str:
    lines = [f"conformance: {run.target} over {run.transport}"]
    for info in run.revisions:
        state = "supported" if info.supported else "not supported"
        lines.append(f"  revision {info.revision}: {state} ({info.detail})")
    areas: dict[str, list[Verdict]] = {}
    for verdict in run.verdicts:
        areas.setdefault(verdict.fixture.area, []).append(verdict)
    for area, verdicts in areas.items():
        counts = Counter(v.status for v in verdicts)
        lines.append("")
        lines.append(
            f"== {area}: {counts[PASS]} passed, {counts[FAIL] + counts[ERROR]} failed, {counts[SKIP]} skipped"
        )
        for v in verdicts:
            if v.status == PASS and not v.expected_failure and not verbose:
                continue
            if v.status == SKIP and not verbose:
                continue
            mark = {PASS: "PASS", FAIL: "FAIL", ERROR: "ERROR", SKIP: "SKIP"}[v.status]
            if v.expected_failure:
                mark = "XFAIL" if v.status in (FAIL, ERROR) else "XPASS (expected to fail, now passes)"
            lines.append(f"  {mark} {v.id} [{v.revision}, {v.fixture.level}] {v.fixture.title}")
            if v.fixture.official:
                lines.append(f"      official: {', '.join(v.fixture.official)}")
            if v.status in (FAIL, ERROR):
                lines.append(f"      spec: {_page(v)}")
                if v.fixture.quote:
                    lines.append(f"      says ({v.fixture.source}): {v.fixture.quote}")
                for problem in v.problems[:3]:
                    lines.append(f"      why: {problem}")
                if v.expected:
                    lines.append(f"      expected: {v.expected}")
                if v.actual:
                    lines.append(f"      actual:   {v.actual}")
                if v.frames:
                    lines.append("      frames (> sent, < received):")
                    lines.extend(f"        {frame}" for frame in v.frames)
                if v.fixture.ambiguity:
                    amb = v.fixture.ambiguity
                    lines.append(f"      ambiguity: {amb.get('text')}")
            elif v.note:
                lines.append(f"      {v.note}")
    s = summary(run)
    lines.append("")
    lines.append(
        f"{s['passed']} passed, {s['failed']} failed, {s['expected_failures']} expected failures, "
        f"{s['unexpectedly_passing']} unexpectedly passing, {s['skipped']} skipped in {run.seconds:.1f} s"
    )
    if run.stderr_tail and s["failed"]:
        lines.append("server stderr (last lines):")
        lines.extend(f"  | {line}" for line in run.stderr_tail)
    return "\n".join(lines) + "\n"


def _verdict_json(v: Verdict) -> dict[str, Any]:
    out: dict[str, Any] = {
        "id": v.id,
        "revision": v.revision,
        "transport": v.transport,
        "status": v.status,
        "area": v.fixture.area,
        "level": v.fixture.level,
        "source": v.fixture.source,
        "title": v.fixture.title,
        "spec": {"url": _page(v), "quote": v.fixture.quote},
        "official": list(v.fixture.official),
        "expected_failure": v.expected_failure,
        "seconds": round(v.seconds, 4),
    }
    if v.problems:
        out["problems"] = v.problems
    if v.expected:
        out["expected"] = v.expected
    if v.actual:
        out["actual"] = v.actual
    if v.note:
        out["note"] = v.note
    if v.frames:
        out["frames"] = v.frames
    if v.fixture.ambiguity:
        out["ambiguity"] = v.fixture.ambiguity
    return out


def to_json(run: Run) -> str:
    document = {
        "target": run.target,
        "transport": run.transport,
        "seconds": round(run.seconds, 3),
        "revisions": [
            {"revision": r.revision, "supported": r.supported, "detail": r.detail} for r in run.revisions
        ],
        "summary": summary(run),
        "verdicts": [_verdict_json(v) for v in run.verdicts],
    }
    return orjson.dumps(document, option=orjson.OPT_INDENT_2).decode() + "\n"


def to_junit(run: Run) -> str:
    suites = ET.Element("testsuites", name="mcp-conformance", time=f"{run.seconds:.3f}")
    by_revision: dict[str, list[Verdict]] = {}
    for verdict in run.verdicts:
        by_revision.setdefault(verdict.revision, []).append(verdict)
    for revision, verdicts in by_revision.items():
        suite = ET.SubElement(
            suites, "testsuite", name=f"{run.transport}.{revision}", tests=str(len(verdicts))
        )
        failures = skipped = 0
        for v in verdicts:
            case = ET.SubElement(
                suite,
                "testcase",
                classname=f"{revision}.{v.fixture.area}",
                name=v.id,
                time=f"{v.seconds:.4f}",
            )
            if v.status in (FAIL, ERROR) and not v.expected_failure:
                failures += 1
                failure = ET.SubElement(case, "failure", message=(v.problems or [v.status])[0][:500])
                failure.text = "\n".join(
                    [
                        f"spec: {_page(v)}",
                        f"says ({v.fixture.source}): {v.fixture.quote}",
                        *([f"official: {', '.join(v.fixture.official)}"] if v.fixture.official else []),
                        *v.problems,
                        f"expected: {v.expected}",
                        f"actual: {v.actual}",
                        *(["frames (> sent, < received):", *v.frames] if v.frames else []),
                    ]
                )
            elif v.status == SKIP or v.expected_failure:
                skipped += 1
                ET.SubElement(case, "skipped", message=v.note or "expected failure (baseline)")
        suite.set("failures", str(failures))
        suite.set("skipped", str(skipped))
    return ET.tostring(suites, encoding="unicode") + "\n"
