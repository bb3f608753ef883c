"""``jsonrpc-mcp conformance``: run the spec fixtures against an MCP server.

Usage::

    jsonrpc-mcp conformance stdio [OPTIONS] -- CMD [ARGS...]
    jsonrpc-mcp conformance http [OPTIONS] URL        (http:// or https://)
    jsonrpc-mcp conformance --config FILE --server NAME [OPTIONS]
    jsonrpc-mcp conformance client [OPTIONS] -- CLIENT_CMD [ARGS...]   (test a client instead)

Exit codes:
    0  every applicable requirement passed (failures listed in --expected-failures are tolerated)
    1  at least one requirement failed that the baseline does not expect to fail, or a baseline entry
       now passes (stale; tolerated with --allow-stale)
    2  usage error (bad options, unreadable config or baseline, unknown server name, an --only or
       --skip pattern matching no requirement)
    3  the server could not be exercised: it would not start, no revision could be opened, or the
       token --auth oauth asks for could not be had
    4  the fixtures in spec/ are inconsistent (the manifest check failed)
"""

from __future__ import annotations

import argparse
import contextlib
import logging
import os
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, TypeVar

import anyio

from jsonrpc_mcp._client_options import (
    OptionsError,
    ServerEntry,
    add_http_client_options,
    authorization_failure,
    check_client_options,
    describe_authorization_error,
    load_server_entry,
    oauth_from_options,
    parse_headers,
)
from jsonrpc_mcp.cli import show_authorization_url

from ._html import to_html
from .baseline import BaselineError, Expected, apply_baseline, load_baseline, stale_entries
from .fixtures import ALL_REVISIONS, Fixture, FixtureError, Spec, load_spec, matches, select_ids
from .httptarget import HttpTarget
from .report import summary, to_json, to_junit, to_text
from .runner import HANDSHAKE_ID, Options, Run, run_conformance
from .targets import StdioTarget, Target

__all__ = ["EXIT_FAILED", "EXIT_FIXTURES", "EXIT_OK", "EXIT_UNREACHABLE", "EXIT_USAGE", "command", "main"]

EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_UNREACHABLE, EXIT_FIXTURES = 0, 1, 2, 3, 4
E = TypeVar("E", bound=BaseException)
DEFAULT_TIMEOUT, DEFAULT_STARTUP_TIMEOUT = 5.0, 30.0  # seconds: each response; start-up + handshake


class UsageError(Exception):
    pass


def build_parser(prog: str = "jsonrpc-mcp conformance") -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=prog,
        description="Check an MCP server against the specification, requirement by requirement.",
        epilog="Exit codes: 0 passed, 1 failures, 2 usage error, 3 server unreachable, 4 bad fixtures.",
    )
    parser.add_argument(
        "mode", nargs="?", choices=["stdio", "http"], help="how to reach the server (or use --config)"
    )
    parser.add_argument("command", nargs="*", help="stdio: the server command, after --; http: the URL")
    parser.add_argument(
        "--config", type=Path, help="an mcpServers JSON config (Claude Desktop / Cursor format)"
    )
    parser.add_argument("--server", help="the server's name in --config")
    parser.add_argument(
        "--revision",
        action="append",
        choices=ALL_REVISIONS,
        help="revision to check (repeatable; default: detect)",
    )
    parser.add_argument(
        "--only",
        action="append",
        default=[],
        help="requirement id glob to run, or an official scenario:check id glob (repeatable)",
    )
    parser.add_argument(
        "--skip",
        action="append",
        default=[],
        help="requirement id glob to leave out, or an official scenario:check id glob (repeatable)",
    )
    parser.add_argument(
        "--expected-failures", type=Path, help="YAML baseline of requirements expected to fail"
    )
    parser.add_argument(
        "--schema-dir",
        type=Path,
        help="directory of <revision>/schema.json to validate messages against (default: the official "
        "schemas shipped with the harness)",
    )
    parser.add_argument(
        "--spec-dir", type=Path, help="fixtures directory (default: the fixtures shipped with the harness)"
    )
    # timing and diagnostics (issue 13, items 2 and 3)
    parser.add_argument(
        "--timeout", type=float, default=None, help="seconds to wait for each response (default 5)"
    )
    parser.add_argument(
        "--startup-timeout",
        type=float,
        default=None,
        help="seconds to wait for the server to start and answer its handshake "
        "(default 30, or --timeout's if given)",
    )
    parser.add_argument(
        "--start-ahead",
        type=int,
        default=2,
        metavar="N",
        help="stdio: keep N server processes starting ahead of need (default 2; 0: start each on demand)",
    )
    parser.add_argument(
        "--log",
        type=Path,
        metavar="FILE",
        help="write the harness's own log (servers killed, warnings) here instead of stderr",
    )
    parser.add_argument(
        "--format", choices=["text", "json", "junit"], default="text", help="stdout report format"
    )
    parser.add_argument("--json", dest="json_out", type=Path, help="also write the JSON report here")
    parser.add_argument("--junit", dest="junit_out", type=Path, help="also write a JUnit XML report here")
    parser.add_argument(
        "--verbose", "-v", action="store_true", help="list passing and skipped requirements too"
    )
    # issue 13 item 6 and 7: listing, stale baseline entries, the HTML report
    parser.add_argument(
        "--list", action="store_true", help="print the requirements that would run and exit (no server)"
    )
    parser.add_argument(
        "--official-coverage",
        action="store_true",
        help="print which checks of the official suite the requirements test too, and exit (no server)",
    )
    parser.add_argument(
        "--allow-stale",
        action="store_true",
        help="a baseline entry that now passes (XPASS) does not fail the run",
    )
    parser.add_argument(
        "--html", dest="html_out", type=Path, help="also write a self-contained HTML report here"
    )
    tls = parser.add_argument_group("https")
    tls.add_argument(
        "--insecure", action="store_true", help="https: check neither the certificate nor the host name"
    )
    tls.add_argument(
        "--ca-file", type=Path, help="https: trust the CA certificates in this PEM file (not the system's)"
    )
    auth = parser.add_argument_group(
        "authorization", "a protected http server: without --auth-token the auth:* requirements skip"
    )
    auth.add_argument(
        "--auth-token",
        metavar="TOKEN",
        help="a valid access token, sent as Authorization: Bearer on every request",
    )
    auth.add_argument(
        "--auth-token-wrong-audience",
        metavar="TOKEN",
        help="a token issued for another resource, which the server must refuse (401)",
    )
    auth.add_argument(
        "--auth-token-insufficient-scope",
        metavar="TOKEN",
        help="a valid token lacking a scope tools/call needs (403 insufficient_scope)",
    )
    add_http_client_options(parser)  # --header, and --auth oauth: the harness gets its token itself
    return parser


def _http_options(args: argparse.Namespace | None) -> dict[str, Any]:
    """The HttpTarget keywords the https and authorization options give."""
    if args is None:
        return {}
    return {
        "auth_token": args.auth_token,
        "wrong_audience_token": args.auth_token_wrong_audience,
        "insufficient_scope_token": args.auth_token_insufficient_scope,
        "insecure": args.insecure,
        "ca_file": str(args.ca_file) if args.ca_file is not None else None,
    }


def _http_only_options(args: argparse.Namespace) -> list[str]:
    given = [
        ("--header", bool(args.header)),
        ("--insecure", args.insecure),
        ("--ca-file", args.ca_file is not None),
        ("--auth-token", args.auth_token is not None),
        ("--auth-token-wrong-audience", args.auth_token_wrong_audience is not None),
        ("--auth-token-insufficient-scope", args.auth_token_insufficient_scope is not None),
    ]
    return [name for name, present in given if present]


def target_from_config(
    path: Path, name: str | None, timeout: float = 5.0, args: argparse.Namespace | None = None
) -> Target:
    try:
        entry = load_server_entry(path, name)
    except OptionsError as exc:
        raise UsageError(str(exc)) from None
    if entry.url is not None:
        return _http_target(entry.url, entry.headers, timeout, args)
    if args is not None:
        _stdio_only(args)
    return StdioTarget(list(entry.command), env=entry.env, cwd=entry.cwd)


def _stdio_only(args: argparse.Namespace) -> None:
    """A UsageError when an option for http servers is given for a stdio one."""
    if _http_only_options(args):
        raise UsageError(f"{', '.join(_http_only_options(args))}: only for a server reached over http")
    try:
        check_client_options(args, http=False)
    except OptionsError as exc:
        raise UsageError(str(exc)) from None


def _target(args: argparse.Namespace) -> Target:
    if args.config is not None:
        if args.mode is not None:
            raise UsageError("give either a mode or --config, not both")
        return target_from_config(args.config, args.server, args.timeout, args)
    if args.mode == "stdio":
        if not args.command:
            raise UsageError("stdio needs the server command after --")
        _stdio_only(args)
        return StdioTarget(args.command)
    if args.mode == "http":
        if len(args.command) != 1:
            raise UsageError("http needs exactly one URL")
        return _http_target(args.command[0], {}, args.timeout, args)
    raise UsageError(
        "say how to reach the server: 'stdio -- CMD ...', 'http URL' or '--config FILE --server NAME'"
    )


def _http_target(
    url: str, headers: dict[str, str], timeout: float, args: argparse.Namespace | None = None
) -> Target:
    """An HttpTarget with ``headers`` and, from ``args``, ``--header`` (on top), the https options,
    the tokens, and the OAuth client ``--auth oauth`` describes."""
    options = _http_options(args)
    try:
        if args is not None:
            headers = {**headers, **{k.lower(): v for k, v in parse_headers(args.header).items()}}
            auth = oauth_from_options(
                args, ServerEntry(url=url, headers=headers), show=show_authorization_url
            )
            if auth is not None and args.auth_token is not None:
                raise UsageError("--auth-token and --auth oauth exclude each other: give one")
            options["auth"] = auth
        return HttpTarget(url, headers=headers, timeout=timeout, **options)
    except OptionsError as exc:
        raise UsageError(str(exc)) from None
    except (ValueError, OSError) as exc:  # OSError: an unreadable --ca-file
        raise UsageError(str(exc)) from None


@contextlib.contextmanager
def _logging_to(path: Path | None) -> Iterator[None]:
    """The run's own log lines (a server killed, asyncio's and Python's warnings) go to ``path``, else
    to stderr: never to the report on stdout."""
    handler: logging.Handler = (
        logging.FileHandler(path, encoding="utf-8") if path is not None else logging.StreamHandler(sys.stderr)
    )
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    handler.setLevel(logging.INFO if path is not None else logging.WARNING)
    root = logging.getLogger()
    level = root.level
    root.addHandler(handler)
    if path is not None:
        root.setLevel(min(level or logging.WARNING, logging.INFO))
    logging.captureWarnings(True)
    try:
        yield
    finally:
        logging.captureWarnings(False)
        root.removeHandler(handler)
        root.setLevel(level)
        handler.close()


async def _authorized_run(target: Target, spec: Spec, fixtures: list[Fixture], options: Options) -> Run:
    """The run, after an HTTP target got the token its OAuth client can get (see
    :meth:`HttpTarget.authorize`)."""
    if isinstance(target, HttpTarget):
        await target.authorize()
    return await run_conformance(target, spec, fixtures, options)


def _found(exc: BaseException, kind: type[E]) -> E | None:
    """``exc`` if it is a ``kind``, else the first ``kind`` in it (an exception group's members)."""
    if isinstance(exc, kind):
        return exc
    for member in getattr(exc, "exceptions", ()):
        found = _found(member, kind)
        if found is not None:
            return found
    return None


def exit_code(run: Run, *, allow_stale: bool = True) -> int:
    """The exit code of a run; with ``allow_stale=False`` an XPASS verdict fails it too."""
    ran = [v for v in run.verdicts if v.status != "skip" and v.id != HANDSHAKE_ID]
    if not ran and not any(r.supported for r in run.revisions):
        return EXIT_UNREACHABLE
    counts = summary(run)
    stale = counts["unexpectedly_passing"] and not allow_stale
    return EXIT_FAILED if counts["failed"] or stale else EXIT_OK


def _select(fixtures: list[Fixture], only: Sequence[str], skip: Sequence[str]) -> list[Fixture]:
    """The fixtures ``--only``/``--skip`` choose; a pattern matching no requirement is a usage error."""
    for option, patterns in (("--only", only), ("--skip", skip)):
        for pattern in patterns:
            if not any(matches(f, pattern) for f in fixtures):
                raise UsageError(f"{option} {pattern!r} matches no requirement (see --list)")
    chosen = select_ids(fixtures, only, skip)
    if not chosen:
        raise UsageError("--only/--skip leave no requirement to run")
    return chosen


def _listing(fixtures: list[Fixture], revisions: Sequence[str] | None) -> str:
    """``--list``: one line per requirement that would run: id, level, revisions, title (and the
    official suite's checks testing the same thing, in brackets)."""
    lines = []
    for fixture in fixtures:
        chosen = [r for r in fixture.revisions if not revisions or r in revisions]
        if chosen:
            official = f"  [official: {', '.join(fixture.official)}]" if fixture.official else ""
            lines.append(f"{fixture.id}  {fixture.level}  {','.join(chosen)}  {fixture.title}{official}")
    lines.append(f"{len(lines)} requirements")
    return "\n".join(lines) + "\n"


def _official_coverage(spec: Spec, fixtures: Sequence[Fixture] | None = None) -> str:
    """``--official-coverage``: each known official check with the requirements naming it ("-": none),
    the checks no requirement covers, then the figures per suite version and in all."""
    covering: dict[str, list[str]] = {check: [] for check in spec.official}
    for fixture in spec.fixtures if fixtures is None else fixtures:
        for check in fixture.official:
            covering.setdefault(check, []).append(fixture.id)
    lines = [f"official checks ({', '.join(spec.official_versions)}) and the requirements testing the same:"]
    for check, ids in sorted(covering.items()):
        lines.append(f"  {check}  {', '.join(ids) if ids else '-'}")
    uncovered = sorted(check for check, ids in covering.items() if not ids)
    lines.append(f"not covered ({len(uncovered)}):")
    lines.extend(f"  {check}" for check in uncovered)
    for version in spec.official_versions:
        emitted = [c for c in spec.official.values() if version in c.versions]
        done = sum(1 for c in emitted if covering.get(c.id))
        share = _percent(done, len(emitted))
        lines.append(f"suite {version}: {done} of {len(emitted)} official server checks covered{share}")
    covered = len(covering) - len(uncovered)
    share = _percent(covered, len(covering))
    lines.append(f"{covered} of {len(covering)} official checks covered by a requirement{share}")
    return "\n".join(lines) + "\n"


def _percent(part: int, whole: int) -> str:
    return f" ({100 * part / whole:.1f}%)" if whole else ""


def _stale_note(run: Run, expected: list[Expected]) -> str:
    """The baseline entries that now pass, for the end of the report ("" when none)."""
    stale = stale_entries(run, expected)
    if not stale:
        return ""
    lines = ["stale baseline entries (expected to fail, now pass; remove them or use --allow-stale):"]
    lines.extend(f"  {line}" for line in stale)
    return "\n".join(lines) + "\n"


def main(
    argv: Sequence[str] | None = None, *, out: Any = None, prog: str = "python -m jsonrpc_mcp_conformance"
) -> int:
    out = out or sys.stdout
    given = sys.argv[1:] if argv is None else list(argv)
    if given and given[0] == "client":  # python -m jsonrpc_mcp_conformance client ... (issue 27)
        from .clients.cli import main as client_main

        return client_main(given[1:], out=out, prog=f"{prog} client")
    args = build_parser(prog).parse_intermixed_args(argv)  # options may follow the mode: stdio -v -- CMD
    if args.startup_timeout is None:  # a --timeout given says how long this server may take: all of it
        args.startup_timeout = DEFAULT_STARTUP_TIMEOUT if args.timeout is None else args.timeout
    if args.timeout is None:
        args.timeout = DEFAULT_TIMEOUT
    try:
        spec = load_spec(args.spec_dir)
    except FixtureError as exc:
        print(f"conformance: the fixtures are inconsistent:\n{exc}", file=sys.stderr)
        return EXIT_FIXTURES
    try:
        fixtures = _select(spec.fixtures, args.only, args.skip)
        if args.official_coverage:
            out.write(_official_coverage(spec, fixtures))
            return EXIT_OK
        if args.list:
            out.write(_listing(fixtures, args.revision))
            return EXIT_OK
        target = _target(args)
        expected = load_baseline(args.expected_failures) if args.expected_failures else []
    except (UsageError, BaselineError, OSError) as exc:
        print(f"conformance: {exc}", file=sys.stderr)
        return EXIT_USAGE
    options = Options(
        revisions=args.revision,
        timeout=args.timeout,
        schema_dir=args.schema_dir,
        startup_timeout=args.startup_timeout,
        start_ahead=max(args.start_ahead, 0),
    )
    try:
        with _logging_to(args.log):
            run = anyio.run(_authorized_run, target, spec, fixtures, options)
    except Exception as exc:  # the server cannot be started, or --auth oauth's token not had
        cannot_start = _found(exc, OSError)  # (raised in a task: maybe inside an exception group)
        if cannot_start is not None:
            print(f"conformance: cannot start the server: {cannot_start}", file=sys.stderr)
            return EXIT_UNREACHABLE
        failure = authorization_failure(exc)
        if failure is None:
            raise
        where = target.description
        print(f"conformance: {describe_authorization_error(failure, where)}", file=sys.stderr)
        return EXIT_UNREACHABLE
    apply_baseline(run, expected)
    report = {
        "text": lambda: to_text(run, verbose=args.verbose),
        "json": lambda: to_json(run),
        "junit": lambda: to_junit(run),
    }
    out.write(report[args.format]())
    stale = _stale_note(run, expected)
    if stale:
        (out if args.format == "text" else sys.stderr).write(stale)
    if args.html_out:
        args.html_out.write_text(to_html(run, stale=stale_entries(run, expected)), encoding="utf-8")
    if args.json_out:
        args.json_out.write_text(to_json(run), encoding="utf-8")
    if args.junit_out:
        args.junit_out.write_text(to_junit(run), encoding="utf-8")
    if not os.environ.get("NO_CONFORMANCE_HINT") and exit_code(run) == EXIT_UNREACHABLE:
        print("conformance: no revision could be opened; is the command an MCP server?", file=sys.stderr)
    return exit_code(run, allow_stale=args.allow_stale)


def command(argv: Sequence[str], *, prog: str = "jsonrpc-mcp conformance") -> int:
    """check an MCP server against the spec fixtures (see docs/conformance.md)

    ``jsonrpc-mcp conformance``: registered in the ``jsonrpc_mcp.commands`` entry point group (the
    first docstring line is the command's help there). ``replay FILE stdio -- CMD`` plays a recorded
    session (``jsonrpc-mcp trace --format jsonl``) against a server instead.
    """
    if argv and argv[0] == "client":  # issue 27: the harness testing clients
        from .clients.cli import main as client_main

        return client_main(argv[1:], prog=f"{prog} client")
    if argv and argv[0] == "replay":
        from .trace.cli import replay_command

        return replay_command(argv[1:], prog=f"{prog} replay")
    return main(argv, prog=prog)


if __name__ == "__main__":
    sys.exit(main())
