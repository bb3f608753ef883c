"""Loading the fixtures in ``spec/`` and checking them against the manifest.

Layout: ``spec/manifest.json`` names every requirement id and the file holding its fixture;
``spec/mcp/*.json`` hold the MCP fixtures (one requirement per entry); ``spec/jsonrpc/examples.json``
holds the JSON-RPC 2.0 §7 examples, run against a plain JSON-RPC server by the project's tests.

Each requirement names the official text it checks: ``level`` (the RFC 2119 keyword), ``source``
(where the rule is written: the specification pages, the revision's schema, the JSON-RPC 2.0
specification, or ``derived`` from several sentences) and ``spec`` with ``url`` (a full URL; ``{revision}``
stands for the revision checked; ``url_by_revision`` overrides it where a page moved) and ``quote``.

A requirement that tests the same thing as a check of the official suite
(``@modelcontextprotocol/conformance``) names it in ``official``: a list of ``scenario:check`` ids, each
one of those ``spec/official-checks.json`` records (the checks the suite's versions emitted), so a typo
is a load-time error.

Generators are expanded when a fixture is loaded, so the runner sees plain JSON: an object that is
exactly ``{"$repeat": S, "$times": N}`` becomes the string S repeated N times (e.g. a 1 MiB payload
that would otherwise be stored in the file).
"""

from __future__ import annotations

import difflib
import fnmatch
import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = [
    "ALL_REVISIONS",
    "LEGACY_REVISIONS",
    "MODERN_REVISIONS",
    "TRANSPORT_REVISIONS",
    "LEVELS",
    "SOURCES",
    "Fixture",
    "FixtureError",
    "OfficialCheck",
    "Spec",
    "default_spec_dir",
    "expand_generators",
    "expand_revisions",
    "load_official_checks",
    "load_spec",
    "matches",
    "select_ids",
]

LEGACY_REVISIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
MODERN_REVISIONS = ("2026-07-28",)
ALL_REVISIONS = LEGACY_REVISIONS + MODERN_REVISIONS
TRANSPORTS = ("stdio", "http", "inprocess")
# the revisions a transport exists in: Streamable HTTP came with 2025-03-26 (2024-11-05 had HTTP+SSE)
TRANSPORT_REVISIONS = {"http": ALL_REVISIONS[1:]}
LEVELS = ("MUST", "MUST NOT", "SHOULD", "SHOULD NOT", "MAY")  # RFC 2119, as the quoted sentence says
# where the rule is written: the MCP specification pages, the revision's schema (schema.ts doc comments
# and types), the JSON-RPC 2.0 specification, or derived from several sentences (all quoted)
SOURCES = ("spec", "schema", "jsonrpc", "derived")
URL_RE = re.compile(r"^https://[^\s]+$")
SPEC_KEYS = {"url", "url_by_revision", "quote"}
MAX_GENERATED = 64 * 1024 * 1024  # characters one $repeat generator may produce
ID_RE = re.compile(r"^[a-z0-9]+(?:[-_.][a-z0-9]+)*(?::[a-z0-9]+(?:[-_.][a-z0-9]+)*)+$")
# an official check id: the suite's scenario name, a colon, the check's id (which may hold "$", as in
# json-schema-2020-12:json-schema-2020-12-$defs)
OFFICIAL_ID_RE = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*:[A-Za-z0-9$][A-Za-z0-9$_.-]*$")
OFFICIAL_CHECKS_FILE = "official-checks.json"
FIXTURE_KEYS = {
    "id",
    "title",
    "level",
    "source",
    "revisions",
    "transports",
    "spec",
    "connection",
    "requires",
    "ambiguity",
    "steps",
    "invariant",
    "except",
    "official",
}


class FixtureError(Exception):
    """The fixtures are inconsistent (the message lists every problem)."""


def default_spec_dir() -> Path:
    """The fixtures: the copy the wheel ships inside this package (``jsonrpc_mcp_conformance/spec``),
    else, in a checkout, the repository's ``spec/`` (this package's source is ``conformance/``)."""
    import importlib.resources

    packaged = importlib.resources.files(__package__ or "jsonrpc_mcp_conformance").joinpath("spec")
    if isinstance(packaged, Path) and (packaged / "manifest.json").is_file():
        return packaged
    return Path(__file__).resolve().parents[2] / "spec"


def expand_revisions(tokens: Iterable[str]) -> tuple[str, ...]:
    """``all``, ``legacy``, ``modern``, ``V+`` (V and later), ``-V`` (up to V) or exact revisions."""
    chosen: set[str] = set()
    for token in tokens:
        if token == "all":
            chosen.update(ALL_REVISIONS)
        elif token == "legacy":
            chosen.update(LEGACY_REVISIONS)
        elif token == "modern":
            chosen.update(MODERN_REVISIONS)
        elif token.endswith("+") and token[:-1] in ALL_REVISIONS:
            chosen.update(r for r in ALL_REVISIONS if r >= token[:-1])
        elif token.startswith("-") and token[1:] in ALL_REVISIONS:
            chosen.update(r for r in ALL_REVISIONS if r <= token[1:])
        elif token in ALL_REVISIONS:
            chosen.add(token)
        else:
            raise FixtureError(f"unknown revision token {token!r}")
    return tuple(r for r in ALL_REVISIONS if r in chosen)


@dataclass(frozen=True)
class Fixture:
    """One requirement and how to check it."""

    id: str
    title: str
    level: str
    revisions: tuple[str, ...]
    transports: tuple[str, ...]
    spec: dict[str, Any]
    file: str
    area: str
    connection: str = "session"  # "session": after the handshake, shared; "fresh": a new connection
    requires: tuple[str, ...] = ()
    ambiguity: dict[str, Any] | None = None
    steps: tuple[dict[str, Any], ...] = ()
    invariant: str | None = None  # judged over every message of the run instead of by steps
    # (revisions, transports, reason): combinations of the lists above where the fixture does not apply
    exceptions: tuple[tuple[tuple[str, ...], tuple[str, ...], str], ...] = ()
    source: str = "spec"  # one of SOURCES
    official: tuple[str, ...] = ()  # the official suite's scenario:check ids testing the same thing
    raw: dict[str, Any] = field(default_factory=dict, compare=False, repr=False)

    @property
    def quote(self) -> str:
        """The specification's words the fixture checks (empty when it quotes none)."""
        return str(self.spec.get("quote", ""))

    def url(self, revision: str | None = None) -> str:
        """The page the requirement comes from, for ``revision`` (else the template with ``{revision}``)."""
        if revision is None:
            return str(self.spec.get("url", ""))
        moved: dict[str, str] = self.spec.get("url_by_revision") or {}
        return moved.get(revision) or str(self.spec.get("url", "")).replace("{revision}", revision)

    def citation(self, revision: str | None = None) -> str:
        """Where the requirement is written, for ``revision`` (the same as :meth:`url`)."""
        return self.url(revision)

    def applies(self, revision: str, transport: str) -> bool:
        """Whether the fixture runs for ``revision`` over ``transport`` (its lists, the transport's
        revisions, and its exceptions decide)."""
        return (
            revision in self.revisions
            and transport in self.transports
            and revision in TRANSPORT_REVISIONS.get(transport, ALL_REVISIONS)
            and not any(revision in r and transport in t for r, t, _ in self.exceptions)
        )


@dataclass(frozen=True)
class OfficialCheck:
    """One check of the official suite: ``scenario:check``, the suite versions that emit it, what it says."""

    id: str
    versions: tuple[str, ...]
    description: str


@dataclass
class Spec:
    """Everything loaded from a spec directory: the fixtures, the manifest, the example messages and
    the known checks of the official suite."""

    fixtures: list[Fixture]
    manifest: dict[str, Any]
    examples: list[dict[str, Any]]
    directory: Path
    official: dict[str, OfficialCheck] = field(default_factory=dict)  # the known official checks, by id
    official_versions: tuple[str, ...] = ()  # the suite versions the known checks were taken from

    def by_id(self) -> dict[str, Fixture]:
        """The fixtures by id."""
        return {f.id: f for f in self.fixtures}

    def count_by_revision(self) -> dict[str, int]:
        """How many fixtures apply to each revision."""
        return {r: sum(1 for f in self.fixtures if r in f.revisions) for r in ALL_REVISIONS}


def _spec_problems(spec: Any) -> list[str]:
    """What is wrong with a requirement's ``spec`` (its URL and quote)."""
    if not isinstance(spec, dict):
        return ["spec must be an object with url and quote"]
    problems = [f"spec: unknown keys {sorted(set(spec) - SPEC_KEYS)}"] if set(spec) - SPEC_KEYS else []
    urls = [spec.get("url"), *(spec.get("url_by_revision") or {}).values()]
    if not all(isinstance(u, str) and URL_RE.match(u) for u in urls):
        problems.append("spec.url (the full https:// URL of the page the requirement comes from) is required")
    if set(spec.get("url_by_revision") or {}) - set(ALL_REVISIONS):
        problems.append("spec.url_by_revision: keys must be revisions")
    if not isinstance(spec.get("quote"), str) or not spec["quote"].strip():
        problems.append("spec.quote (the sentence the requirement checks, verbatim) is required")
    return problems


def expand_generators(value: Any) -> Any:
    """``{"$repeat": S, "$times": N}`` -> S * N, anywhere in ``value`` (a copy; the rest unchanged)."""
    if isinstance(value, dict):
        if set(value) == {"$repeat", "$times"}:
            text, times = value["$repeat"], value["$times"]
            if (
                not isinstance(text, str)
                or not isinstance(times, int)
                or isinstance(times, bool)
                or times < 0
                or len(text) * times > MAX_GENERATED
            ):
                raise FixtureError(
                    f"$repeat needs a string and $times a non-negative integer (at most {MAX_GENERATED} "
                    f"characters in all): {value!r}"
                )
            return text * times
        return {key: expand_generators(item) for key, item in value.items()}
    if isinstance(value, list):
        return [expand_generators(item) for item in value]
    return value


def load_official_checks(directory: Path) -> tuple[dict[str, OfficialCheck], tuple[str, ...]]:
    """The official checks ``directory/official-checks.json`` records and the suite versions they come
    from (none when the file is absent); :class:`FixtureError` when it is malformed."""
    path = directory / OFFICIAL_CHECKS_FILE
    if not path.is_file():
        return {}, ()
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
        versions = tuple(str(v) for v in document["versions"])
        checks: dict[str, OfficialCheck] = {}
        for item in document["checks"]:
            check = OfficialCheck(str(item["id"]), tuple(item["versions"]), str(item.get("description", "")))
            unlisted = set(check.versions) - set(versions)
            if not OFFICIAL_ID_RE.match(check.id) or check.id in checks or unlisted:
                raise ValueError(f"check {check.id!r}: a malformed or repeated id, or a version not listed")
            checks[check.id] = check
    except (ValueError, KeyError, TypeError) as exc:
        raise FixtureError(f"{OFFICIAL_CHECKS_FILE}: {exc}") from None
    return checks, versions


def _official_problems(value: Any, known: dict[str, OfficialCheck]) -> list[str]:
    """What is wrong with a fixture's ``official`` list (each entry a known ``scenario:check`` id)."""
    if not isinstance(value, list) or not value or not all(isinstance(v, str) for v in value):
        return ["official must be a non-empty list of scenario:check ids"]
    problems = [f"official: {v!r} is listed twice" for v in sorted(set(value)) if value.count(v) > 1]
    for item in value:
        if not OFFICIAL_ID_RE.match(item):
            problems.append(f"official: {item!r} is not a scenario:check id")
        elif item not in known:
            close = difflib.get_close_matches(item, list(known), n=1)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            problems.append(f"official: {item!r} is no check in {OFFICIAL_CHECKS_FILE}{hint}")
    return problems


def _fixture(
    entry: dict[str, Any],
    file: str,
    area: str,
    problems: list[str],
    official: dict[str, OfficialCheck] | None = None,
) -> Fixture | None:
    where = f"{file}: {entry.get('id', '<no id>')}"
    unknown = set(entry) - FIXTURE_KEYS
    if unknown:
        problems.append(f"{where}: unknown keys {sorted(unknown)}")
    fid = entry.get("id")
    if not isinstance(fid, str) or not ID_RE.match(fid):
        problems.append(f"{where}: id must look like area:topic:name")
        return None
    for key in ("title", "level", "source", "revisions", "spec"):
        if key not in entry:
            problems.append(f"{where}: missing {key!r}")
    if entry.get("level") not in LEVELS:
        problems.append(f"{where}: level {entry.get('level')!r} not one of {LEVELS}")
    if entry.get("source") not in SOURCES:
        problems.append(f"{where}: source {entry.get('source')!r} not one of {SOURCES}")
    spec = entry.get("spec", {})
    problems.extend(f"{where}: {problem}" for problem in _spec_problems(spec))
    transports = tuple(entry.get("transports", TRANSPORTS))
    if set(transports) - set(TRANSPORTS):
        problems.append(f"{where}: unknown transports {sorted(set(transports) - set(TRANSPORTS))}")
    try:
        steps = tuple(expand_generators(entry.get("steps", [])))
    except FixtureError as exc:
        problems.append(f"{where}: {exc}")
        steps = ()
    if bool(entry.get("steps")) == bool(entry.get("invariant")):
        problems.append(f"{where}: exactly one of steps / invariant is required")
    connection = entry.get("connection", "session")
    if connection not in ("session", "fresh"):
        problems.append(f"{where}: connection must be session or fresh")
    try:
        revisions = expand_revisions(entry.get("revisions", []))
    except FixtureError as exc:
        problems.append(f"{where}: {exc}")
        revisions = ()
    if not revisions:
        problems.append(f"{where}: applies to no revision")
    for step in entry.get("steps", ()):  # a step's own revisions / transports narrow where it is taken
        try:
            expand_revisions(step.get("revisions", ()))
        except FixtureError as exc:
            problems.append(f"{where}: step: {exc}")
        if set(step.get("transports", ())) - set(TRANSPORTS):
            problems.append(f"{where}: step: unknown transports {step['transports']}")
    if "official" in entry:
        found = _official_problems(entry["official"], official or {})
        problems.extend(f"{where}: {problem}" for problem in found)
    exceptions = []
    for item in entry.get("except", ()):
        try:
            excepted = expand_revisions(item.get("revisions", ["all"]))
        except FixtureError as exc:
            problems.append(f"{where}: except: {exc}")
            continue
        reason = item.get("reason")
        if set(item.get("transports", ())) - set(TRANSPORTS) or not isinstance(reason, str) or not reason:
            problems.append(f"{where}: except needs known transports and a reason")
        exceptions.append((excepted, tuple(item.get("transports", TRANSPORTS)), str(reason)))
    return Fixture(
        id=fid,
        title=entry.get("title", ""),
        level=entry.get("level", ""),
        source=entry.get("source", ""),
        revisions=revisions,
        transports=transports,
        spec=spec if isinstance(spec, dict) else {},
        file=file,
        area=area,
        connection=connection,
        requires=tuple(entry.get("requires", ())),
        ambiguity=entry.get("ambiguity"),
        steps=steps,
        invariant=entry.get("invariant"),
        exceptions=tuple(exceptions),
        official=tuple(v for v in entry.get("official") or () if isinstance(v, str)),
        raw=entry,
    )


def load_spec(directory: Path | None = None, *, check: bool = True) -> Spec:
    """Load every fixture; with ``check`` raise :class:`FixtureError` on any manifest inconsistency."""
    directory = directory or default_spec_dir()
    manifest = json.loads((directory / "manifest.json").read_text(encoding="utf-8"))
    problems: list[str] = []
    official, official_versions = load_official_checks(directory)
    fixtures: list[Fixture] = []
    found: dict[str, str] = {}
    for path in sorted((directory / "mcp").glob("*.json")):
        rel = path.relative_to(directory).as_posix()
        document = json.loads(path.read_text(encoding="utf-8"))
        area = document.get("area", path.stem)
        for entry in document.get("requirements", []):
            fixture = _fixture(entry, rel, area, problems, official)
            if fixture is None:
                continue
            if fixture.id in found:
                problems.append(f"{rel}: duplicate id {fixture.id} (also in {found[fixture.id]})")
            found[fixture.id] = rel
            fixtures.append(fixture)
    examples_doc = json.loads((directory / "jsonrpc" / "examples.json").read_text(encoding="utf-8"))
    examples: list[dict[str, Any]] = examples_doc["examples"]
    for example in examples:
        if example["id"] in found:
            problems.append(f"jsonrpc/examples.json: duplicate id {example['id']}")
        found[example["id"]] = "jsonrpc/examples.json"
    declared: dict[str, str] = manifest.get("requirements", {})
    for rid, file in declared.items():
        if rid not in found:
            problems.append(f"manifest: requirement {rid} has no fixture (expected in {file})")
        elif found[rid] != file:
            problems.append(f"manifest: requirement {rid} is in {found[rid]}, manifest says {file}")
    for rid, file in found.items():
        if rid not in declared:
            problems.append(f"{file}: fixture {rid} names no requirement in the manifest")
    spec = Spec(
        fixtures=fixtures,
        manifest=manifest,
        examples=examples,
        directory=directory,
        official=official,
        official_versions=official_versions,
    )
    if check and problems:
        raise FixtureError("\n".join(problems))
    return spec


def matches(fixture: Fixture, pattern: str) -> bool:
    """Whether the glob ``pattern`` matches the fixture's id or one of its official check ids."""
    return any(fnmatch.fnmatchcase(name, pattern) for name in (fixture.id, *fixture.official))


def select_ids(
    fixtures: Sequence[Fixture], only: Sequence[str] = (), skip: Sequence[str] = ()
) -> list[Fixture]:
    """Fixtures matching any ``only`` glob (all when empty) and no ``skip`` glob (see :func:`matches`)."""
    chosen = []
    for fixture in fixtures:
        if only and not any(matches(fixture, p) for p in only):
            continue
        if any(matches(fixture, p) for p in skip):
            continue
        chosen.append(fixture)
    return chosen
