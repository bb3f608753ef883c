"""The judges of the authorization requirements (``spec/client/auth.json``): each reads what the
scenario's protected MCP server and authorization server(s) recorded (``ScenarioRun.auth``, an
:class:`~.authresource.AuthSide`), registered in :data:`.checks.CHECKS` like the others.

A problem names what the client sent, never a secret: codes, verifiers, tokens and credentials
are left out (an :class:`~.authserver.AuthRecord`'s frame shows them as ``...``).
"""

from __future__ import annotations

import base64
import functools
import hashlib
from collections.abc import Callable, Iterable
from typing import Any
from urllib.parse import urlsplit

from . import authresource  # noqa: F401  (registers the auth scenario server in SERVERS)
from .authresource import ROOT_PRM, AuthSide
from .authserver import AuthRecord
from .checks import NOTHING_SENT, Outcome, ScenarioRun, _fail, _pass, _skip, check
from .recording import CLIENT, Event

__all__: list[str] = []  # (the judges are found in CHECKS by name)


def _evidence(records: Iterable[AuthRecord]) -> list[Event]:
    return [Event(CLIENT, None, record.frame()) for record in list(records)[:8]]


def _nothing(side: AuthSide) -> Outcome | None:
    """A failure when the client sent nothing at all, not even to the metadata."""
    return None if side.records else _fail(NOTHING_SENT)


def _scopes(record: AuthRecord) -> list[str]:
    return (record.query.get("scope") or "").split()


def _s256(verifier: str) -> str:
    digest = hashlib.sha256(verifier.encode("ascii", "replace")).digest()
    return base64.urlsafe_b64encode(digest).rstrip(b"=").decode()


def _code_tokens(side: AuthSide) -> list[AuthRecord]:
    return [r for r in side.to("token") if r.form.get("grant_type") == "authorization_code"]


def _authorized(side: AuthSide) -> bool:
    """Whether an MCP request with a token got through."""
    return any(r.endpoint == "mcp" and r.notes.get("token_server") and r.status < 400 for r in side.records)


AuthJudge = Callable[[AuthSide, dict[str, Any]], Outcome]


def auth_check(name: str) -> Callable[[AuthJudge], AuthJudge]:
    """Register the judge of an authorization requirement under ``name``. It is given the run's
    authorization side; a run of another scenario is skipped, and one where the client sent nothing
    at all (not even to the metadata) fails, before the judge is asked."""

    def register(judge: AuthJudge) -> AuthJudge:
        @functools.wraps(judge)
        def judged(run: ScenarioRun, params: dict[str, Any]) -> Outcome:
            side = run.auth if isinstance(run.auth, AuthSide) else None
            if side is None:
                return _skip("not an authorization scenario run")
            return _nothing(side) or judge(side, params)

        check(name)(judged)
        return judge

    return register


# -- discovery ------------------------------------------------------------------------------------
@auth_check("auth-prm-discovery")
def prm_discovery(side: AuthSide, params: dict[str, Any]) -> Outcome:
    """The protected resource metadata is read from the challenge's ``resource_metadata`` when it
    has one, else from the well-known URIs in the spec's order (path-inserted, then the root)."""
    config = side.config
    asked = [r for r in side.records if r.endpoint == "prm" and r.server == "rs"]
    if not asked:
        return _fail("the client never asked for the protected resource metadata")
    if config.prm_in_header:
        allowed = [str(config.prm_path)]
    else:
        allowed = [f"{ROOT_PRM}/mcp", ROOT_PRM]
        allowed = allowed[: allowed.index(str(config.prm_path)) + 1]
    problems = []
    before = []
    for record in asked:
        before.append(record)
        if record.status == 200:
            break
    for index, record in enumerate(before):
        if index >= len(allowed) or record.path != allowed[index]:
            where = "the challenge's resource_metadata" if config.prm_in_header else " then ".join(allowed)
            problems.append(f"the client asked for PRM at {record.path}; the order to follow is {where}")
            break
    stray = [r for r in asked[len(before) :] if r.path not in allowed]
    if stray:
        problems.append(f"after reading the PRM the client still asked at {stray[0].path}")
    if before[-1].status != 200:
        problems.append("the client never read the PRM where it is served")
    return _fail(*problems, evidence=_evidence(asked)) if problems else _pass()


def _metadata_order(issuer: str) -> list[str]:
    path = urlsplit(issuer).path.rstrip("/")
    if not path:
        return ["/.well-known/oauth-authorization-server", "/.well-known/openid-configuration"]
    return [
        f"/.well-known/oauth-authorization-server{path}",
        f"/.well-known/openid-configuration{path}",
        f"{path}/.well-known/openid-configuration",
    ]


@auth_check("auth-as-metadata-discovery")
def as_metadata_discovery(side: AuthSide, params: dict[str, Any]) -> Outcome:
    """The authorization server metadata is read at the well-known URIs the spec lists for the
    issuer (RFC 8414 first, then OpenID Connect discovery; path-inserted for an issuer with a
    path), in that order, and nowhere else."""
    order = _metadata_order(side.issuer("as"))
    asked = [r for r in side.records if r.endpoint == "as-metadata" and r.server == "as"]
    if not asked:
        return _fail("the client never asked for the authorization server metadata")
    problems = []
    before = []
    for record in asked:
        before.append(record)
        if record.status == 200:
            break
    for index, record in enumerate(before):
        if index >= len(order) or record.path != order[index]:
            problems.append(
                f"the client asked for the metadata at {record.path}; for issuer path "
                f"{urlsplit(side.issuer('as')).path or '/'} the order is {', '.join(order)}"
            )
            break
    if before[-1].status != 200:
        problems.append("the client never read the metadata where it is served")
    return _fail(*problems, evidence=_evidence(asked)) if problems else _pass()


@auth_check("auth-code-flow")
def code_flow(side: AuthSide, params: dict[str, Any]) -> Outcome:
    """The authorization code flow went through: each endpoint of ``params['steps']`` was used and
    answered, then an MCP request with the token got through."""
    problems = []
    for step in params.get("steps", ["as-metadata", "authorize", "token"]):
        records = side.to(step)
        if not any(r.status and r.status < 400 for r in records):
            problems.append(
                f"the client never went through the {step} step" + (" (refused)" if records else "")
            )
    if not _authorized(side):
        problems.append("no MCP request with an access token got through")
    return _fail(*problems, evidence=_evidence(side.records)) if problems else _pass()


# -- the authorization request ---------------------------------------------------------------------
@auth_check("auth-pkce")
def pkce(side: AuthSide, params: dict[str, Any]) -> Outcome:
    """Every authorization request has a ``code_challenge`` with method S256, and every code
    exchange the ``code_verifier`` whose S256 is that challenge."""
    asked = side.to("authorize")
    if not asked:
        return _fail("the client made no authorization request")
    problems = []
    by_code = {str(r.notes.get("code")): r for r in asked if r.notes.get("code")}
    for record in asked:
        if not record.query.get("code_challenge"):
            problems.append("an authorization request has no code_challenge")
        elif record.query.get("code_challenge_method") != "S256":
            method = record.query.get("code_challenge_method", "(none: plain)")
            problems.append(f"an authorization request's code_challenge_method is {method}, not S256")
    for record in _code_tokens(side):
        verifier = record.form.get("code_verifier")
        origin = by_code.get(record.form.get("code", ""))
        if not verifier:
            problems.append("a code exchange has no code_verifier")
        elif origin is not None and _s256(verifier) != origin.query.get("code_challenge"):
            problems.append("a code exchange's code_verifier does not hash (S256) to its code_challenge")
    return _fail(*problems, evidence=_evidence(asked + _code_tokens(side))) if problems else _pass()


@auth_check("auth-resource")
def resource(side: AuthSide, params: dict[str, Any]) -> Outcome:
    """Authorization and token requests carry ``resource``: the MCP server's URI exactly as its
    protected resource metadata publishes it (RFC 8707)."""
    asked = side.to("authorize")
    if not asked:
        return _fail("the client made no authorization request")
    problems = []
    for record in asked + [r for r in side.to("token") if r.form.get("grant_type") != "client_credentials"]:
        value = record.param("resource")
        what = "an authorization request" if record.endpoint == "authorize" else "a token request"
        if value is None:
            problems.append(f"{what} has no resource parameter")
        elif value != side.resource:
            problems.append(f"{what} has resource={value!r}; the PRM publishes {side.resource!r}")
    return _fail(*sorted(set(problems)), evidence=_evidence(asked)) if problems else _pass()


@auth_check("auth-scope")
def scope(side: AuthSide, params: dict[str, Any]) -> Outcome:
    """The first authorization request's scope follows the scope selection strategy: the
    challenge's ``scope`` (``rule`` www-authenticate), else the PRM's ``scopes_supported``
    (scopes-supported), else no scope at all (omitted)."""
    asked = side.to("authorize")
    if not asked:
        return _fail("the client made no authorization request")
    first, rule = asked[0], params["rule"]
    scopes = _scopes(first)
    if rule == "omitted":
        if "scope" in first.query and scopes:
            return _fail(
                f"the client asked for scope {' '.join(scopes)!r} though none is published", evidence=[]
            )
        return _pass()
    wanted = params.get("scopes") or (
        side.config.prm_scopes if rule == "scopes-supported" else side.config.required_scopes
    )
    missing = [s for s in wanted or [] if s not in scopes]
    if missing:
        source = "the challenge's scope" if rule == "www-authenticate" else "the PRM's scopes_supported"
        return _fail(
            f"the authorization request's scope {' '.join(scopes)!r} lacks {', '.join(missing)} ({source})"
        )
    return _pass()


@auth_check("auth-step-up")
def step_up(side: AuthSide, params: dict[str, Any]) -> Outcome:
    """After a 403 insufficient_scope the client authorizes again, asking for the challenged
    scope (``params['union']``: and for the scopes it had asked for before)."""
    asked = side.to("authorize")
    challenged = [i for i, r in enumerate(side.records) if r.status == 403]
    if not challenged:
        return _fail("the client never got to the request that needs more scope (no 403 was answered)")
    # the step-up is the first authorization after the 403 (not a second one begun before it, as a
    # client authorizing for two refused requests at once makes)
    position = {id(r): i for i, r in enumerate(side.records)}
    after = [r for r in asked if position[id(r)] > challenged[0]]
    if not after:
        return _fail("after the 403 insufficient_scope the client did not authorize again")
    second = _scopes(after[0])
    wanted = ["mcp:write"] + (["mcp:basic"] if params.get("union") else [])
    missing = [s for s in wanted if s not in second]
    if missing:
        return _fail(
            f"the step-up authorization asks for {' '.join(second)!r}, without {', '.join(missing)}",
            evidence=_evidence([*asked[:1], after[0]]),
        )
    return _pass()


@auth_check("auth-retry-limit")
def retry_limit(side: AuthSide, params: dict[str, Any]) -> Outcome:
    """Repeated 403 insufficient_scope answers to the same scope do not make the client authorize
    without end: at most ``params['max']`` authorization requests."""
    count, most = len(side.to("authorize")), int(params.get("max", 3))
    if count == 0:
        return _fail("the client made no authorization request")
    if count > most:
        return _fail(
            f"the client made {count} authorization requests for a scope it never gets (at most {most})"
        )
    return _pass(f"{count} authorization requests")


# -- the client's identity and its authentication ----------------------------------------------------
@auth_check("auth-token-endpoint-method")
def token_endpoint_method(side: AuthSide, params: dict[str, Any]) -> Outcome:
    """Every token request authenticates with the method the authorization server supports (and
    gave at registration): ``params['method']``."""
    tokens = side.to("token")
    if not tokens:
        return _fail("the client made no token request")
    wanted = params["method"]
    wrong = [r for r in tokens if r.notes.get("auth_method") != wanted]
    if wrong:
        used = ", ".join(sorted({str(r.notes.get("auth_method")) for r in wrong}))
        return _fail(f"the token request authenticated with {used}, not {wanted}", evidence=_evidence(wrong))
    return _pass()


@auth_check("auth-registration")
def registration(side: AuthSide, params: dict[str, Any]) -> Outcome:
    """How the client identified itself: ``preregistered`` (the credentials it was given, no
    registration), ``cimd`` (an https URL with a path as client_id, no registration) or ``dcr``
    (registered, then used the client_id it got)."""
    asked, registered = side.to("authorize"), side.to("register")
    if not asked:
        return _fail("the client made no authorization request")
    kind = params["kind"]
    ids = {r.query.get("client_id") for r in asked}
    if kind == "preregistered":
        expected = (side.config.preregistered or {}).get("client_id")
        if registered:
            return _fail("the client registered (DCR) though it was given pre-registered credentials")
        if ids != {expected}:
            return _fail(f"the authorization requests' client_id is not the pre-registered {expected!r}")
        return _pass()
    if kind == "cimd":
        urls = [i for i in ids if i and urlsplit(i).scheme == "https" and urlsplit(i).path not in ("", "/")]
        if registered or not urls:
            how = "registered (DCR)" if registered else f"used client_id {sorted(str(i) for i in ids)}"
            return _fail(f"the authorization server supports Client ID Metadata Documents; the client {how}")
        return _pass()
    given = {r.notes.get("client_id") for r in registered if r.status < 400}
    if not given:
        return _fail("the client did not register (DCR) with the authorization server")
    if not ids <= given:
        return _fail("an authorization request's client_id is not the one the registration gave")
    return _pass()


@auth_check("auth-application-type")
def application_type(side: AuthSide, params: dict[str, Any]) -> Outcome:
    """A dynamic registration says its ``application_type``: native or web."""
    registered = side.to("register")
    if not registered:
        return _skip("the client did not register dynamically")
    for record in registered:
        body = record.body if isinstance(record.body, dict) else {}
        value = body.get("application_type")
        if value not in ("native", "web"):
            return _fail(f"the registration's application_type is {value!r}, not native or web")
    return _pass()


@auth_check("auth-refresh-grant-type")
def refresh_grant_type(side: AuthSide, params: dict[str, Any]) -> Outcome:
    """A client registering with an authorization server that offers offline_access lists the
    refresh_token grant type in its metadata."""
    registered = side.to("register")
    if not registered:
        return _skip("the client did not register dynamically (its metadata is not seen)")
    for record in registered:
        body = record.body if isinstance(record.body, dict) else {}
        if "refresh_token" not in (body.get("grant_types") or []):
            return _fail(f"the registration's grant_types {body.get('grant_types')!r} lack refresh_token")
    return _pass()


# -- using the token -------------------------------------------------------------------------------
@auth_check("auth-bearer")
def bearer(side: AuthSide, params: dict[str, Any]) -> Outcome:
    """Once it has a token, the client sends it in ``Authorization: Bearer`` on every request to
    the MCP server, and never in a query string."""
    issued = [i for i, r in enumerate(side.records) if r.endpoint == "token" and r.status == 200]
    problems = []
    secrets_seen = set(side.tokens.access) | set(side.tokens.refresh)
    for record in side.records:
        if record.server != "rs":
            continue
        if "access_token" in record.query or any(v in secrets_seen for v in record.query.values()):
            problems.append(f"a request to {record.path} carries the access token in its query string")
    if not issued:
        return _fail(*problems) if problems else _fail("the client never obtained an access token")
    later = [r for r in side.records[issued[0] + 1 :] if r.endpoint == "mcp"]
    if not later:
        problems.append("the client never used its access token at the MCP server")
    bare = [r for r in later if not r.headers.get("authorization", "").lower().startswith("bearer ")]
    if bare:
        problems.append(
            f"{len(bare)} request(s) to the MCP server after the token came carry no Bearer token"
        )
    return _fail(*sorted(set(problems)), evidence=_evidence(bare)) if problems else _pass()


@auth_check("auth-refresh")
def refresh(side: AuthSide, params: dict[str, Any]) -> Outcome:
    """When the access token is refused as expired and the client holds a refresh token, it uses
    the refresh_token grant instead of authorizing again."""
    expired = [
        i
        for i, r in enumerate(side.records)
        if r.endpoint == "mcp" and r.status == 401 and r.notes.get("token_server")
    ]
    if not expired:
        return _fail(
            "the client never used its first access token twice (the scenario expires it after one use)"
        )
    after = side.records[expired[0] + 1 :]
    refreshed = [r for r in after if r.endpoint == "token" and r.form.get("grant_type") == "refresh_token"]
    again = [r for r in after if r.endpoint == "authorize"]
    if not refreshed:
        return _fail("the token expired; the client did not use its refresh token", evidence=_evidence(again))
    if again and side.records.index(again[0]) < side.records.index(refreshed[0]):
        return _fail("the token expired; the client authorized again before trying its refresh token")
    return _pass()


@auth_check("auth-client-credentials")
def client_credentials(side: AuthSide, params: dict[str, Any]) -> Outcome:
    """Machine to machine: the client_credentials grant with the credentials the scenario gave
    (``params['method']``: client_secret_basic, or private_key_jwt with an assertion that
    verifies), and no authorization request."""
    if side.note:
        return _skip(side.note)
    tokens = side.to("token")
    grants = [r for r in tokens if r.form.get("grant_type") == "client_credentials"]
    problems = []
    if side.to("authorize"):
        problems.append("the client made an authorization request (a user's flow) instead")
    if not grants:
        problems.append("the client made no client_credentials token request")
    for record in grants:
        method = record.notes.get("auth_method")
        if method != params["method"]:
            problems.append(f"the token request authenticated with {method}, not {params['method']}")
        elif params["method"] == "private_key_jwt" and record.notes.get("assertion") != "verified":
            problems.append(f"the client assertion was refused: {record.notes.get('assertion')}")
        elif record.status != 200:
            problems.append(f"the token request was refused ({record.status}): wrong credentials")
    if not problems and not _authorized(side):
        problems.append("no MCP request with the access token got through")
    return _fail(*problems, evidence=_evidence(tokens)) if problems else _pass()


# -- refusing what must be refused -------------------------------------------------------------------
@auth_check("auth-iss")
def iss(side: AuthSide, params: dict[str, Any]) -> Outcome:
    """RFC 9207: with ``expect`` proceed, the client exchanges the code the redirect brought; with
    reject (the ``iss`` is missing though advertised, or not the issuer's exact string) it does
    not."""
    if not side.to("authorize"):
        return _fail("the client made no authorization request")
    exchanged = _code_tokens(side)
    if params["expect"] == "proceed" and not exchanged:
        return _fail("the redirect was right; the client did not exchange its code")
    if params["expect"] == "reject" and exchanged:
        return _fail(
            f"the client exchanged a code whose redirect it must refuse: {params.get('why', '')}".rstrip(": ")
        )
    return _pass()


@auth_check("auth-metadata-issuer")
def metadata_issuer(side: AuthSide, params: dict[str, Any]) -> Outcome:
    """Authorization server metadata whose ``issuer`` is not the issuer the client built its URL
    from is not used: none of its endpoints is called."""
    if not side.to("as-metadata"):
        return _fail("the client never read the authorization server metadata")
    used = side.to("authorize") + side.to("token") + side.to("register")
    if used:
        return _fail(
            "the client used the endpoints of metadata whose issuer does not match", evidence=_evidence(used)
        )
    return _pass()


@auth_check("auth-resource-mismatch")
def resource_mismatch(side: AuthSide, params: dict[str, Any]) -> Outcome:
    """Protected resource metadata naming another resource than the server the client talks to is
    refused: no authorization follows."""
    if not [r for r in side.records if r.endpoint == "prm" and r.status == 200]:
        return _fail("the client never read the protected resource metadata")
    asked = side.to("authorize") + side.to("token")
    if asked:
        return _fail(
            f"the PRM names {side.resource!r}; the client authorized for it all the same",
            evidence=_evidence(asked),
        )
    return _pass()


@auth_check("auth-offline-access")
def offline_access(side: AuthSide, params: dict[str, Any]) -> Outcome:
    """``offline_access`` is asked for only when the authorization server lists it."""
    asked = side.to("authorize")
    if not asked:
        return _fail("the client made no authorization request")
    listed = "offline_access" in (side.config.as_scopes or [])
    if not listed and any("offline_access" in _scopes(r) for r in asked):
        return _fail("the client asked for offline_access, which the authorization server does not list")
    return _pass()


@auth_check("auth-as-migration")
def as_migration(side: AuthSide, params: dict[str, Any]) -> Outcome:
    """When the PRM moves to another authorization server, the client registers there afresh and
    never presents the first server's client_id to it."""
    if not side.migrated:
        return _fail("the client never got through to the MCP server with the first server's token")
    first_ids = {r.notes.get("client_id") for r in side.to("register", "as")} - {None}
    problems = []
    if not side.to("register", "as2"):
        problems.append("the client did not register with the new authorization server")
    seen = [
        r
        for r in side.records
        if r.server == "as2"
        and (r.query.get("client_id") in first_ids or r.notes.get("client_id") in first_ids)
    ]
    if seen:
        problems.append("the client presented the first authorization server's client_id to the new one")
    return _fail(*problems, evidence=_evidence(seen)) if problems else _pass()
