"""``jsonrpc-mcp conformance client``: check an MCP client against the client requirements.

Usage::

    jsonrpc-mcp conformance client [OPTIONS] -- CMD [ARGS...]

For each scenario the harness serves a scenario server and runs ``CMD ARGS...`` against it (see
:mod:`.runner` for the contract over HTTP and stdio). Exit codes as for servers: 0 passed, 1
failures (or, without --allow-stale, a baseline entry that now passes), 2 usage error, 3 the client
command could not be started, 4 the fixtures in spec/client are inconsistent.
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any
from xml.etree import ElementTree as ET

import anyio

from .._html import to_html
from ..baseline import BaselineError, apply_baseline, load_baseline, stale_entries
from ..fixtures import Fixture, FixtureError, expand_revisions, matches, select_ids
from ..report import summary, to_json, to_junit, to_text
from ..runner import Run
from .runner import DEFAULT_REVISIONS, ClientOptions, plan, run_client_conformance
from .scenarios import CLIENT_TRANSPORTS, ClientSpec, load_client_spec, requirement_scenarios

__all__ = [
    "EXIT_FAILED",
    "EXIT_FIXTURES",
    "EXIT_OK",
    "EXIT_UNREACHABLE",
    "EXIT_USAGE",
    "build_parser",
    "main",
]

EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_UNREACHABLE, EXIT_FIXTURES = 0, 1, 2, 3, 4


class UsageError(Exception):
    pass


def build_parser(prog: str) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=prog,
        usage=f"{prog} [OPTIONS] -- CMD [ARGS...]",
        description="Check an MCP client against the specification, requirement by requirement: for "
        "each scenario a scenario server is served and the client command run against it (HTTP: the "
        "server's URL as its last argument; stdio: the server's command line, a JSON array, in "
        "MCP_CONFORMANCE_SERVER_COMMAND; both: MCP_CONFORMANCE_SCENARIO, "
        "MCP_CONFORMANCE_PROTOCOL_VERSION).",
        epilog="Exit codes: 0 passed, 1 failures, 2 usage error, 3 client not started, 4 bad fixtures.",
    )
    parser.add_argument(
        "--transport",
        action="append",
        choices=[*CLIENT_TRANSPORTS, "both"],
        help="how the client reaches the scenario servers (repeatable; default http)",
    )
    parser.add_argument(
        "--revision",
        action="append",
        metavar="REV",
        help="revision to run the scenarios at: a revision, legacy, modern, all, V+ or -V (repeatable; "
        f"default {' and '.join(DEFAULT_REVISIONS)}, the latest of each era)",
    )
    parser.add_argument("--scenario", action="append", default=[], help="run only this scenario (repeatable)")
    parser.add_argument(
        "--official-only",
        action="store_true",
        help="run only the scenarios the official suite's client mode has too (a client written for that "
        "suite plays no other)",
    )
    parser.add_argument(
        "--only", action="append", default=[], help="requirement id glob, or official scenario:check glob"
    )
    parser.add_argument("--skip", action="append", default=[], help="requirement id glob to leave out")
    parser.add_argument("--list", action="store_true", help="print the scenarios and requirements, and exit")
    parser.add_argument(
        "--timeout", type=float, default=30.0, help="seconds one scenario's client run may take (default 30)"
    )
    parser.add_argument(
        "--expected-failures", type=Path, help="YAML baseline of requirements expected to fail"
    )
    parser.add_argument(
        "--allow-stale", action="store_true", help="a baseline entry that now passes is no failure"
    )
    parser.add_argument(
        "--spec-dir", type=Path, help="fixtures directory holding client/ (default: the shipped one)"
    )
    parser.add_argument(
        "--format", choices=["text", "json", "junit"], default="text", help="stdout report format"
    )
    parser.add_argument("--json", dest="json_out", type=Path, help="also write the JSON report here")
    parser.add_argument("--junit", dest="junit_out", type=Path, help="also write a JUnit XML report here")
    parser.add_argument("--html", dest="html_out", type=Path, help="also write an HTML report here")
    parser.add_argument(
        "--verbose", "-v", action="store_true", help="list passing and skipped requirements too"
    )
    return parser


def _split(argv: Sequence[str]) -> tuple[list[str], list[str]]:
    """The options before ``--`` and the client command after it."""
    argv = list(argv)
    if "--" in argv:
        at = argv.index("--")
        return argv[:at], argv[at + 1 :]
    return argv, []


def _select(spec: ClientSpec, args: argparse.Namespace) -> list[Fixture]:
    fixtures = spec.requirements
    for option, patterns in (("--only", args.only), ("--skip", args.skip)):
        for pattern in patterns:
            if not any(matches(f, pattern) for f in fixtures):
                raise UsageError(f"{option} {pattern!r} matches no client requirement (see --list)")
    chosen = select_ids(fixtures, args.only, args.skip)
    for name in args.scenario:
        if name not in spec.scenarios:
            raise UsageError(f"--scenario {name!r}: no such scenario (see --list)")
    if args.official_only:
        args.scenario = [
            n for n, s in spec.scenarios.items() if s.official and (not args.scenario or n in args.scenario)
        ]
    if args.scenario:
        chosen = [
            f
            for f in chosen
            if "*" in requirement_scenarios(f) or set(requirement_scenarios(f)) & set(args.scenario)
        ]
    if not chosen:
        raise UsageError("--only/--skip/--scenario leave no requirement to run")
    return chosen


def _options(args: argparse.Namespace) -> ClientOptions:
    try:
        revisions = expand_revisions(args.revision) if args.revision else DEFAULT_REVISIONS
    except FixtureError as exc:
        raise UsageError(str(exc)) from None
    chosen = args.transport or ["http"]
    transports = tuple(CLIENT_TRANSPORTS if "both" in chosen else dict.fromkeys(chosen))
    if args.timeout <= 0:
        raise UsageError("--timeout must be positive")
    return ClientOptions(revisions=revisions, transports=transports, timeout=args.timeout)


def _listing(
    spec: ClientSpec, fixtures: Sequence[Fixture], options: ClientOptions, scenarios: Sequence[str]
) -> str:
    lines = ["scenarios (name, revisions, transports; * the official suite has one of this name):"]
    for scenario in spec.scenarios.values():
        if scenarios and scenario.name not in scenarios:
            continue
        mark = "*" if scenario.official else " "
        lines.append(
            f" {mark} {scenario.name}  {','.join(scenario.revisions)}  {','.join(scenario.transports)}  "
            f"{scenario.description}"
        )
    lines.append("requirements:")
    for fixture in fixtures:
        where = ",".join(requirement_scenarios(fixture))
        official = f"  [official: {', '.join(fixture.official)}]" if fixture.official else ""
        lines.append(
            f"  {fixture.id}  {fixture.level}  {','.join(fixture.revisions)}  "
            f"{','.join(fixture.transports)}  in {where}  {fixture.title}{official}"
        )
    runs = plan(spec, fixtures, options, scenarios)
    lines.append(f"{len(fixtures)} requirements, {len(runs)} scenario runs")
    return "\n".join(lines) + "\n"


def _junit(run: Run) -> str:
    """JUnit XML: one suite per transport and revision (``http.2025-11-25``, ``stdio.2025-11-25``),
    so that a run over both transports names every test case once per suite."""
    transports = list(dict.fromkeys(v.transport for v in run.verdicts))
    if len(transports) <= 1:
        return to_junit(run)
    root: ET.Element | None = None
    for transport in transports:
        mine = [v for v in run.verdicts if v.transport == transport]
        tree = ET.fromstring(to_junit(dataclasses.replace(run, transport=transport, verdicts=mine)))
        if root is None:
            root = tree
        else:
            root.extend(list(tree))
    assert root is not None
    return ET.tostring(root, encoding="unicode") + "\n"


def main(
    argv: Sequence[str] | None = None, *, out: Any = None, prog: str = "jsonrpc-mcp conformance client"
) -> int:
    out = out or sys.stdout
    before, command = _split(sys.argv[1:] if argv is None else argv)
    args = build_parser(prog).parse_args(before)
    try:
        spec = load_client_spec(args.spec_dir)
    except (FixtureError, OSError, ValueError) as exc:
        print(f"conformance client: the fixtures in spec/client are inconsistent:\n{exc}", file=sys.stderr)
        return EXIT_FIXTURES
    try:
        fixtures = _select(spec, args)
        options = _options(args)
        if args.list:
            out.write(_listing(spec, fixtures, options, args.scenario))
            return EXIT_OK
        if not command:
            raise UsageError("give the client command after --")
        if not plan(spec, fixtures, options, args.scenario):
            raise UsageError("no scenario runs at the chosen revisions and transports (see --list)")
        expected = load_baseline(args.expected_failures) if args.expected_failures else []
    except (UsageError, BaselineError, OSError) as exc:
        print(f"conformance client: {exc}", file=sys.stderr)
        return EXIT_USAGE
    try:
        run, _ = anyio.run(run_client_conformance, command, spec, fixtures, options, args.scenario)
    except OSError as exc:
        print(f"conformance client: cannot start the client: {exc}", file=sys.stderr)
        return EXIT_UNREACHABLE
    apply_baseline(run, expected)
    report = {
        "text": lambda: to_text(run, verbose=args.verbose),
        "json": lambda: to_json(run),
        "junit": lambda: _junit(run),
    }
    out.write(report[args.format]())
    stale = stale_entries(run, expected)
    if stale:
        note = "stale baseline entries (expected to fail, now pass):\n" + "".join(f"  {s}\n" for s in stale)
        (out if args.format == "text" else sys.stderr).write(note)
    if args.html_out:
        args.html_out.write_text(to_html(run, stale=stale), encoding="utf-8")
    if args.json_out:
        args.json_out.write_text(to_json(run), encoding="utf-8")
    if args.junit_out:
        args.junit_out.write_text(_junit(run), encoding="utf-8")
    counts = summary(run)
    if counts["failed"] or (counts["unexpectedly_passing"] and not args.allow_stale):
        return EXIT_FAILED
    return EXIT_OK


if __name__ == "__main__":
    sys.exit(main())
