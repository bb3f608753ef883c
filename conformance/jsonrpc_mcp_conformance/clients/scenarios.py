"""The client scenarios and requirements, loaded from ``spec/client``.

``scenarios.json`` lists the scenarios: each names its scenario server (``servers.SERVERS``), the
revisions it runs at, and whether the official suite has a scenario of that name. Every other file
holds requirements like the server fixtures (id, title, level, source, revisions, transports, spec
URL and quote, official ``scenario:check`` ids, ambiguity), and says where and how each is judged:
``scenarios`` (names, or ``*`` for every scenario run), ``check`` (a judge in ``checks.CHECKS``) and
its ``params``. Requirements become :class:`~jsonrpc_mcp_conformance.fixtures.Fixture` s, so the
server reports (text, JSON, JUnit, HTML) show them unchanged.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..fixtures import LEVELS, SOURCES, Fixture, FixtureError, default_spec_dir, expand_revisions
from . import (
    answers,  # noqa: F401  (its judges register in CHECKS as it loads)
    auth_checks,  # noqa: F401  (its judges register in CHECKS, the auth server in SERVERS)
    scenario_checks,  # noqa: F401  (its judges register in CHECKS as it loads)
)
from .checks import CHECKS
from .servers import SERVERS

__all__ = ["ClientSpec", "Scenario", "load_client_spec", "requirement_params", "requirement_scenarios"]

CLIENT_TRANSPORTS = ("http", "stdio")
ID_RE = re.compile(r"^client:[a-z0-9-]+:[a-z0-9-]+$")
OFFICIAL_RE = re.compile(r"^[a-z0-9_/-]+:[A-Za-z0-9_$-]+$")  # ($: json-schema-2020-12-client-$schema-...)
KEYS = {
    "id",
    "title",
    "level",
    "source",
    "revisions",
    "transports",
    "scenarios",
    "check",
    "params",
    "spec",
    "official",
    "ambiguity",
}


@dataclass(frozen=True)
class Scenario:
    name: str
    server: str
    revisions: tuple[str, ...]
    description: str
    official: bool  # the official suite has a client scenario of this name
    transports: tuple[str, ...] = CLIENT_TRANSPORTS
    context: dict[str, Any] | None = None  # given as MCP_CONFORMANCE_CONTEXT (with "name")
    auth: dict[str, Any] | None = None  # the auth/* scenarios: authresource.AuthConfig's fields


@dataclass(frozen=True)
class ClientSpec:
    scenarios: dict[str, Scenario]
    requirements: list[Fixture]


def requirement_scenarios(fixture: Fixture) -> tuple[str, ...]:
    """The scenarios whose runs judge ``fixture`` (``*``: every one)."""
    return tuple(fixture.raw.get("scenarios", ("*",)))


def requirement_params(fixture: Fixture) -> dict[str, Any]:
    return dict(fixture.raw.get("params") or {})


def _scenario(entry: dict[str, Any], problems: list[str]) -> Scenario | None:
    name = entry.get("name")
    if not isinstance(name, str) or not name:
        problems.append(f"scenarios.json: a scenario without a name: {entry!r}")
        return None
    if entry.get("server") not in SERVERS:
        problems.append(f"scenarios.json: {name}: no scenario server {entry.get('server')!r}")
    try:
        revisions = expand_revisions(entry.get("revisions", ["all"]))
    except FixtureError as exc:
        problems.append(f"scenarios.json: {name}: {exc}")
        revisions = ()
    transports = tuple(entry.get("transports", CLIENT_TRANSPORTS))
    if set(transports) - set(CLIENT_TRANSPORTS):
        problems.append(f"scenarios.json: {name}: unknown transports {sorted(transports)}")
    context = entry.get("context")
    if context is not None and not isinstance(context, dict):
        problems.append(f"scenarios.json: {name}: context must be an object")
        context = None
    auth = entry.get("auth")
    if auth is not None:
        from .authserver import AuthConfig

        try:
            AuthConfig.from_json(auth if isinstance(auth, dict) else {"": auth})
        except (TypeError, ValueError) as exc:
            problems.append(f"scenarios.json: {name}: auth: {exc}")
            auth = None
    return Scenario(
        name,
        str(entry.get("server")),
        revisions,
        str(entry.get("description", "")),
        bool(entry.get("official")),
        transports,
        context,
        auth,
    )


def _requirement(
    entry: dict[str, Any], rel: str, area: str, scenarios: dict[str, Scenario], problems: list[str]
) -> Fixture | None:
    rid = entry.get("id")
    where = f"{rel}: {rid or '<no id>'}"
    if not isinstance(rid, str) or not ID_RE.match(rid):
        problems.append(f"{where}: id must look like client:topic:name")
        return None
    if set(entry) - KEYS:
        problems.append(f"{where}: unknown keys {sorted(set(entry) - KEYS)}")
    if entry.get("level") not in LEVELS:
        problems.append(f"{where}: level {entry.get('level')!r} not one of {LEVELS}")
    if entry.get("source") not in SOURCES:
        problems.append(f"{where}: source {entry.get('source')!r} not one of {SOURCES}")
    if entry.get("check") not in CHECKS:
        problems.append(f"{where}: no check {entry.get('check')!r}")
    spec = entry.get("spec")
    if not isinstance(spec, dict) or not str(spec.get("url", "")).startswith("https://"):
        problems.append(f"{where}: spec needs an https url")
        spec = {}
    if not spec.get("quote") and not entry.get("ambiguity"):
        problems.append(f"{where}: a requirement without a quote says why in ambiguity")
    ambiguity = entry.get("ambiguity")
    if ambiguity is not None and not (isinstance(ambiguity, dict) and isinstance(ambiguity.get("text"), str)):
        problems.append(f"{where}: ambiguity is an object with its text (as the server fixtures')")
    for name in entry.get("scenarios", ["*"]):
        if name != "*" and name not in scenarios:
            problems.append(f"{where}: no scenario {name!r}")
    for check_id in entry.get("official", []):
        if not isinstance(check_id, str) or not OFFICIAL_RE.match(check_id):
            problems.append(f"{where}: official {check_id!r} is no scenario:check id")
    transports = tuple(entry.get("transports", CLIENT_TRANSPORTS))
    if set(transports) - set(CLIENT_TRANSPORTS):
        problems.append(f"{where}: unknown transports {sorted(set(transports) - set(CLIENT_TRANSPORTS))}")
    try:
        revisions = expand_revisions(entry.get("revisions", []))
    except FixtureError as exc:
        problems.append(f"{where}: {exc}")
        revisions = ()
    if not revisions:
        problems.append(f"{where}: applies to no revision")
    return Fixture(
        id=rid,
        title=str(entry.get("title", "")),
        level=str(entry.get("level", "")),
        source=str(entry.get("source", "")),
        revisions=revisions,
        transports=transports,
        spec=spec,
        file=rel,
        area=area,
        ambiguity=entry.get("ambiguity"),
        invariant=str(entry.get("check")),
        official=tuple(entry.get("official", ())),
        raw=entry,
    )


def load_client_spec(directory: Path | None = None) -> ClientSpec:
    """``spec/client`` (``directory``: a spec directory holding ``client/``); raises
    :class:`FixtureError` listing every problem found."""
    root = (directory or default_spec_dir()) / "client"
    problems: list[str] = []
    document = json.loads((root / "scenarios.json").read_text(encoding="utf-8"))
    scenarios: dict[str, Scenario] = {}
    for entry in document.get("scenarios", []):
        scenario = _scenario(entry, problems)
        if scenario is not None:
            if scenario.name in scenarios:
                problems.append(f"scenarios.json: duplicate scenario {scenario.name}")
            scenarios[scenario.name] = scenario
    requirements: list[Fixture] = []
    seen: set[str] = set()
    for path in sorted(root.glob("*.json")):
        if path.name == "scenarios.json":
            continue
        rel = path.relative_to(root.parent).as_posix()
        document = json.loads(path.read_text(encoding="utf-8"))
        for entry in document.get("requirements", []):
            fixture = _requirement(entry, rel, str(document.get("area", path.stem)), scenarios, problems)
            if fixture is None:
                continue
            if fixture.id in seen:
                problems.append(f"{rel}: duplicate id {fixture.id}")
            seen.add(fixture.id)
            requirements.append(fixture)
    if problems:
        raise FixtureError("\n".join(problems))
    return ClientSpec(scenarios, requirements)
