"""Bearer-token authorization, sans-IO: 401/403/400 decisions, WWW-Authenticate, and RFC 9728 PRM."""

from __future__ import annotations

import logging
import re
import time
from dataclasses import replace

import anyio
import pytest

from jsonrpc_mcp.http._auth import (
    WELL_KNOWN_PRM,
    AccessToken,
    AuthResult,
    AuthSettings,
    StaticTokenVerifier,
    TokenVerifier,
    authenticate,
    bearer_challenge,
    insufficient_scope,
    prm_paths,
    prm_url,
    protected_resource_metadata,
    same_resource,
    token_fingerprint,
)
from tests import timeouts

NOW = 1_800_000_000
RESOURCE = "https://mcp.example.com/mcp"
PRM_URL = "https://mcp.example.com/.well-known/oauth-protected-resource/mcp"
ISSUER = "https://auth.example.com"
SCOPES = frozenset({"mcp:read", "mcp:write"})

GOOD = AccessToken("good-token", "client-1", SCOPES, expires_at=NOW + 60, resource=RESOURCE)
TOKENS = {
    "good-token": GOOD,
    "no-expiry": AccessToken("no-expiry", "client-1", SCOPES, resource=RESOURCE),
    "no-resource": AccessToken("no-resource", "client-1", SCOPES),
    "expired": AccessToken("expired", "client-1", SCOPES, expires_at=NOW - 1, resource=RESOURCE),
    "expires-now": AccessToken("expires-now", "client-1", SCOPES, expires_at=NOW, resource=RESOURCE),
    "epoch": AccessToken("epoch", "client-1", SCOPES, expires_at=0, resource=RESOURCE),
    "other-server": AccessToken("other-server", "client-1", SCOPES, resource="https://other.example.com/mcp"),
    "parent": AccessToken("parent", "client-1", SCOPES, resource="https://mcp.example.com"),
    "spelled": AccessToken("spelled", "client-1", SCOPES, resource="HTTPS://MCP.Example.com:443/mcp/"),
    "read-only": AccessToken("read-only", "client-1", frozenset({"mcp:read"}), resource=RESOURCE),
    "admin": AccessToken("admin", "client-1", frozenset({"mcp:admin"}), resource=RESOURCE),
}


def make_settings(**overrides: object) -> AuthSettings:
    settings = AuthSettings(
        verifier=StaticTokenVerifier(TOKENS),
        resource_server_url=RESOURCE,
        authorization_servers=[ISSUER],
        required_scopes=["mcp:read", "mcp:write"],
    )
    return replace(settings, **overrides)  # type: ignore[arg-type]


SETTINGS = make_settings()


def bearer(token: str) -> list[tuple[bytes, bytes]]:
    return [(b"host", b"mcp.example.com"), (b"authorization", f"Bearer {token}".encode())]


async def auth(
    headers: list[tuple[bytes, bytes]], query: bytes | str = b"", settings: AuthSettings = SETTINGS
) -> AuthResult:
    with anyio.fail_after(timeouts.STEP):
        return await authenticate(headers, query, settings, now=NOW)


_PARAM = re.compile(r'\s*([A-Za-z_]+)="((?:[^"\\]|\\.)*)"\s*(?:,|$)')


def challenge(result: AuthResult) -> dict[str, str]:
    """Parse our ``WWW-Authenticate: Bearer k="v", ...`` back into a dict, undoing quoted-pairs."""
    assert result.www_authenticate is not None
    assert result.headers == [(b"www-authenticate", result.www_authenticate.encode("ascii"))]
    scheme, _, rest = result.www_authenticate.partition(" ")
    assert scheme == "Bearer"
    params: dict[str, str] = {}
    position = 0
    while position < len(rest):
        match = _PARAM.match(rest, position)
        assert match is not None, f"unparseable challenge: {result.www_authenticate!r}"
        params[match.group(1)] = re.sub(r"\\(.)", r"\1", match.group(2))
        position = match.end()
    return params


# -- success --------------------------------------------------------------------------------------------


@pytest.mark.anyio
async def test_valid_token_with_all_scopes_is_accepted() -> None:
    result = await auth(bearer("good-token"))
    assert result.ok
    assert result.access_token is GOOD
    assert (result.status, result.error, result.headers) == (200, None, [])


@pytest.mark.anyio
@pytest.mark.parametrize("scheme", ["bearer", "BEARER", "BeArEr"])
async def test_scheme_is_case_insensitive(scheme: str) -> None:
    result = await auth([(b"authorization", f"{scheme} good-token".encode())])
    assert result.access_token is GOOD


@pytest.mark.anyio
async def test_extra_spaces_around_the_token_are_tolerated() -> None:
    result = await auth([(b"authorization", b"Bearer    good-token  ")])
    assert result.access_token is GOOD


@pytest.mark.anyio
async def test_token_without_expiry_is_accepted() -> None:
    assert (await auth(bearer("no-expiry"))).ok


@pytest.mark.anyio
async def test_token_without_resource_is_left_to_the_verifier() -> None:
    assert (await auth(bearer("no-resource"))).ok


@pytest.mark.anyio
async def test_resource_compares_case_default_port_and_trailing_slash_insensitively() -> None:
    assert (await auth(bearer("spelled"))).ok


@pytest.mark.anyio
async def test_no_required_scopes_means_any_valid_token() -> None:
    result = await auth(bearer("admin"), settings=make_settings(required_scopes=[]))
    assert result.ok


@pytest.mark.anyio
async def test_header_token_is_used_even_with_a_query_token() -> None:
    result = await auth(bearer("good-token"), query=b"access_token=expired")
    assert result.access_token is GOOD


# -- 401 without a usable token -------------------------------------------------------------------------


@pytest.mark.anyio
async def test_missing_authorization_is_401_with_metadata_and_scope_but_no_error() -> None:
    result = await auth([(b"host", b"mcp.example.com")])
    assert (result.ok, result.status, result.error) == (False, 401, None)
    assert challenge(result) == {"resource_metadata": PRM_URL, "scope": "mcp:read mcp:write"}
    assert result.www_authenticate == f'Bearer resource_metadata="{PRM_URL}", scope="mcp:read mcp:write"'


@pytest.mark.anyio
async def test_challenge_has_no_scope_when_none_is_required() -> None:
    result = await auth([], settings=make_settings(required_scopes=[]))
    assert result.status == 401
    assert challenge(result) == {"resource_metadata": PRM_URL}


@pytest.mark.anyio
@pytest.mark.parametrize(
    "value", ["Basic dXNlcjpwYXNz", "Token good-token", "Bearergood-token", "good-token"]
)
async def test_other_scheme_is_401_as_if_no_token(value: str) -> None:
    result = await auth([(b"authorization", value.encode())])
    assert (result.status, result.error) == (401, None)
    assert result.description == "the Authorization header must use the Bearer scheme"
    assert "error" not in challenge(result)


@pytest.mark.anyio
async def test_query_string_token_is_never_accepted() -> None:
    result = await auth([], query=b"access_token=good-token")
    assert (result.ok, result.status) == (False, 401)
    assert "query string" in result.description
    assert challenge(result)["resource_metadata"] == PRM_URL


@pytest.mark.anyio
async def test_query_token_among_other_parameters_is_explained_too() -> None:
    result = await auth([], query="a=1&access_token=good-token&b=2")
    assert result.status == 401
    assert "query string" in result.description


@pytest.mark.anyio
async def test_unrelated_query_gets_the_plain_explanation() -> None:
    result = await auth([], query=b"token=good-token")
    assert result.description == "authentication required: send Authorization: Bearer <token>"


# -- 401 invalid_token -----------------------------------------------------------------------------------


def assert_invalid_token(result: AuthResult, description: str) -> None:
    assert (result.ok, result.status, result.error, result.description) == (
        False,
        401,
        "invalid_token",
        description,
    )
    assert challenge(result) == {
        "error": "invalid_token",
        "error_description": description,
        "resource_metadata": PRM_URL,
        "scope": "mcp:read mcp:write",
    }


@pytest.mark.anyio
async def test_unknown_token_is_401_invalid_token() -> None:
    assert_invalid_token(await auth(bearer("forged")), "the access token is invalid")


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("token", "reason"),
    [("forged", "not a known static token"), ("expired", "expired"), ("other-server", "not this resource")],
)
async def test_why_a_token_was_refused_is_logged_not_sent(
    token: str, reason: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="jsonrpc_mcp.http.auth")
    result = await auth(bearer(token))
    assert_invalid_token(result, "the access token is invalid")
    logged = [r.getMessage() for r in caplog.records if r.name == "jsonrpc_mcp.http.auth"]
    assert len(logged) == 1 and reason in logged[0]
    assert f"bearer token {token_fingerprint(token)} refused" in logged[0]  # named by a hash
    assert reason not in (result.www_authenticate or "")


@pytest.mark.anyio
async def test_expired_token_is_401_invalid_token() -> None:
    assert_invalid_token(await auth(bearer("expired")), "the access token is invalid")


@pytest.mark.anyio
async def test_token_is_expired_at_its_expiry_instant() -> None:
    assert_invalid_token(await auth(bearer("expires-now")), "the access token is invalid")


@pytest.mark.anyio
async def test_expiry_zero_is_an_expiry_not_no_expiry() -> None:
    assert_invalid_token(await auth(bearer("epoch")), "the access token is invalid")


@pytest.mark.anyio
async def test_expiry_uses_the_clock_when_now_is_not_given() -> None:
    hour_ago = AccessToken("old", "c", SCOPES, expires_at=int(time.time()) - 3600, resource=RESOURCE)
    in_an_hour = AccessToken("new", "c", SCOPES, expires_at=int(time.time()) + 3600, resource=RESOURCE)
    settings = make_settings(verifier=StaticTokenVerifier({"old": hour_ago, "new": in_an_hour}))
    with anyio.fail_after(timeouts.STEP):
        old = await authenticate(bearer("old"), b"", settings)
        new = await authenticate(bearer("new"), b"", settings)
    assert (old.status, old.description) == (401, "the access token is invalid")
    assert new.access_token is in_an_hour


@pytest.mark.anyio
async def test_token_for_another_server_is_401_invalid_token() -> None:
    assert_invalid_token(await auth(bearer("other-server")), "the access token is invalid")


@pytest.mark.anyio
async def test_token_for_the_parent_url_is_not_this_resource() -> None:
    assert_invalid_token(await auth(bearer("parent")), "the access token is invalid")


# -- 400 invalid_request ---------------------------------------------------------------------------------


@pytest.mark.anyio
@pytest.mark.parametrize(
    "value", [b"Bearer", b"Bearer ", b"Bearer two tokens", b"Bearer caf\xe9", b"Bearer a\x7fb"]
)
async def test_malformed_bearer_credentials_are_400_invalid_request(value: bytes) -> None:
    result = await auth([(b"authorization", value)])
    assert (result.ok, result.status, result.error) == (False, 400, "invalid_request")
    assert challenge(result) == {
        "error": "invalid_request",
        "error_description": "malformed Bearer credentials",
        "resource_metadata": PRM_URL,
    }


@pytest.mark.anyio
async def test_two_authorization_headers_are_400_invalid_request() -> None:
    result = await auth([(b"authorization", b"Bearer good-token"), (b"authorization", b"Bearer good-token")])
    assert (result.status, result.error, result.description) == (
        400,
        "invalid_request",
        "more than one Authorization header",
    )


# -- 403 insufficient_scope ------------------------------------------------------------------------------


@pytest.mark.anyio
async def test_missing_scope_is_403_listing_every_required_scope() -> None:
    result = await auth(bearer("read-only"))
    assert (result.ok, result.status, result.error) == (False, 403, "insufficient_scope")
    assert result.description == "missing scope: mcp:write"
    assert challenge(result) == {
        "error": "insufficient_scope",
        "scope": "mcp:read mcp:write",
        "resource_metadata": PRM_URL,
        "error_description": "missing scope: mcp:write",
    }
    assert result.www_authenticate is not None
    assert result.www_authenticate.startswith('Bearer error="insufficient_scope", scope="mcp:read mcp:write"')


@pytest.mark.anyio
async def test_scope_hierarchy_hook_lets_a_broad_scope_imply_narrow_ones() -> None:
    def has_scope(granted: frozenset[str], required: str) -> bool:
        return required in granted or ("mcp:admin" in granted and required.startswith("mcp:"))

    assert (await auth(bearer("admin"), settings=make_settings(has_scope=has_scope))).ok
    assert (await auth(bearer("admin"))).status == 403  # the default is an exact match


def test_insufficient_scope_for_one_operation() -> None:
    result = insufficient_scope(SETTINGS, ["files:write", "offline_access", "files:write"])
    assert (result.status, result.error) == (403, "insufficient_scope")
    assert challenge(result) == {
        "error": "insufficient_scope",
        "scope": "files:write",
        "resource_metadata": PRM_URL,
        "error_description": "insufficient scope: this request needs files:write",
    }


def test_insufficient_scope_takes_a_description() -> None:
    result = insufficient_scope(SETTINGS, ["files:write"], description="File write permission required")
    assert challenge(result)["error_description"] == "File write permission required"


# -- WWW-Authenticate quoting ------------------------------------------------------------------------


def test_challenge_parameters_are_quoted_strings() -> None:
    assert bearer_challenge([("realm", "mcp"), ("scope", "a b")]) == 'Bearer realm="mcp", scope="a b"'


def test_quotes_and_backslashes_become_quoted_pairs() -> None:
    assert bearer_challenge([("error_description", 'say "hi" \\ bye')]) == (
        'Bearer error_description="say \\"hi\\" \\\\ bye"'
    )


def test_header_breaking_and_non_ascii_characters_are_replaced() -> None:
    value = bearer_challenge([("error_description", "line\r\nInjected: yes\x00 café")])
    assert value == 'Bearer error_description="line??Injected: yes? caf?"'
    value.encode("ascii")  # never raises: the header is plain ASCII


def test_none_parameters_are_left_out() -> None:
    assert bearer_challenge([("error", None), ("scope", "x")]) == 'Bearer scope="x"'
    assert bearer_challenge([]) == "Bearer"


@pytest.mark.anyio
async def test_escaped_values_survive_a_round_trip_through_authenticate() -> None:
    settings = make_settings(resource_server_url='https://mcp.example.com/a"b\\c')
    result = await auth([], settings=settings)
    assert (
        challenge(result)["resource_metadata"]
        == 'https://mcp.example.com/.well-known/oauth-protected-resource/a"b\\c'
    )


# -- the verifier ------------------------------------------------------------------------------------------


@pytest.mark.anyio
async def test_verifier_errors_propagate() -> None:
    class Broken:
        async def verify(self, token: str) -> AccessToken | None:
            raise ConnectionError("authorization server unreachable")

    with pytest.raises(ConnectionError, match="unreachable"):
        await auth(bearer("good-token"), settings=make_settings(verifier=Broken()))


@pytest.mark.anyio
async def test_verifier_receives_the_bare_token() -> None:
    seen: list[str] = []

    class Recording:
        async def verify(self, token: str) -> AccessToken | None:
            seen.append(token)
            return None

    await auth(
        [(b"authorization", b"Bearer  eyJ.a-b_c~d+e/f==  ")], settings=make_settings(verifier=Recording())
    )
    assert seen == ["eyJ.a-b_c~d+e/f=="]


@pytest.mark.anyio
async def test_static_verifier_looks_tokens_up_exactly() -> None:
    verifier = StaticTokenVerifier({"secret-1": GOOD})
    with anyio.fail_after(timeouts.STEP):
        assert await verifier.verify("secret-1") is GOOD
        assert await verifier.verify("secret-") is None
        assert await verifier.verify("secret-12") is None
        assert await verifier.verify("") is None
        assert await StaticTokenVerifier({}).verify("secret-1") is None


def test_static_verifier_is_a_token_verifier() -> None:
    verifier: TokenVerifier = StaticTokenVerifier({})  # and mypy checks the structural match
    assert isinstance(verifier, TokenVerifier)


def test_access_token_scopes_become_a_frozenset() -> None:
    token = AccessToken("t", "c", {"a", "b"})  # type: ignore[arg-type]
    assert token.scopes == frozenset({"a", "b"})
    assert isinstance(token.scopes, frozenset)


def test_access_token_defaults() -> None:
    token = AccessToken("t", "c")
    assert (token.scopes, token.expires_at, token.resource, token.claims) == (frozenset(), None, None, {})
    assert hash(token) == hash(AccessToken("t", "c", claims={"sub": "x"}))


# -- settings validation -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        ({"authorization_servers": []}, "at least one"),
        ({"authorization_servers": ISSUER}, "at least one"),
        ({"authorization_servers": ["auth.example.com"]}, "an authorization server must be an absolute"),
        ({"resource_server_url": "mcp.example.com/mcp"}, "resource_server_url must be"),
        ({"resource_server_url": "https://mcp.example.com/mcp#frag"}, "resource_server_url must be"),
        ({"resource_server_url": "ftp://mcp.example.com/mcp"}, "resource_server_url must be"),
        ({"required_scopes": ["two words"]}, "not a valid scope"),
        ({"required_scopes": ['quo"te']}, "not a valid scope"),
        ({"scopes_supported": [""]}, "not a valid scope"),
        ({"required_scopes": ["offline_access"]}, "offline_access"),
    ],
)
def test_bad_settings_are_refused(overrides: dict[str, object], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        make_settings(**overrides)


# -- resource identity ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("token_resource", "matches"),
    [
        ("https://mcp.example.com/mcp", True),
        ("https://mcp.example.com/mcp/", True),
        ("HTTPS://MCP.EXAMPLE.COM/mcp", True),
        ("https://mcp.example.com:443/mcp", True),
        ("https://mcp.example.com/MCP", False),
        ("http://mcp.example.com/mcp", False),
        ("https://mcp.example.com:8443/mcp", False),
        ("https://mcp.example.com", False),
        ("https://mcp.example.com/mcp/other", False),
        ("https://mcp.example.com/mcp?x=1", False),
        ("https://evil@mcp.example.com/mcp", False),
        ("https://mcp.example.com/mcp#f", False),
        ("https://mcp.example.com:bad/mcp", False),
        ("mcp.example.com/mcp", False),
        ("", False),
    ],
)
def test_same_resource(token_resource: str, matches: bool) -> None:
    assert same_resource(token_resource, RESOURCE) is matches


def test_same_resource_with_an_explicit_port() -> None:
    assert same_resource("http://127.0.0.1:8000/mcp", "http://127.0.0.1:8000/mcp")
    assert not same_resource("http://127.0.0.1:8001/mcp", "http://127.0.0.1:8000/mcp")


# -- Protected Resource Metadata ---------------------------------------------------------------------------


def test_prm_document_with_every_field() -> None:
    settings = make_settings(
        authorization_servers=[ISSUER, "https://backup-auth.example.com"],
        scopes_supported=["mcp:read", "mcp:write", "offline_access", "mcp:admin"],
        resource_documentation="https://docs.example.com/mcp",
    )
    assert protected_resource_metadata(settings) == {
        "resource": RESOURCE,
        "authorization_servers": [ISSUER, "https://backup-auth.example.com"],
        "scopes_supported": ["mcp:read", "mcp:write", "mcp:admin"],
        "bearer_methods_supported": ["header"],
        "resource_documentation": "https://docs.example.com/mcp",
    }


def test_prm_document_advertises_the_required_scopes_by_default() -> None:
    assert protected_resource_metadata(SETTINGS)["scopes_supported"] == ["mcp:read", "mcp:write"]


def test_minimal_prm_document_leaves_optional_fields_out() -> None:
    assert protected_resource_metadata(make_settings(required_scopes=[])) == {
        "resource": RESOURCE,
        "authorization_servers": [ISSUER],
        "bearer_methods_supported": ["header"],
    }


def test_prm_resource_is_the_configured_url_verbatim() -> None:
    url = "https://MCP.example.com/mcp"
    assert protected_resource_metadata(make_settings(resource_server_url=url))["resource"] == url


@pytest.mark.parametrize(
    ("mcp_path", "paths"),
    [
        ("/mcp", [WELL_KNOWN_PRM + "/mcp", WELL_KNOWN_PRM]),
        ("mcp", [WELL_KNOWN_PRM + "/mcp", WELL_KNOWN_PRM]),
        ("/public/mcp", [WELL_KNOWN_PRM + "/public/mcp", WELL_KNOWN_PRM]),
        ("/", [WELL_KNOWN_PRM]),
        ("", [WELL_KNOWN_PRM]),
    ],
)
def test_prm_paths_path_inserted_first_then_root(mcp_path: str, paths: list[str]) -> None:
    assert WELL_KNOWN_PRM == "/.well-known/oauth-protected-resource"
    assert prm_paths(mcp_path) == paths


@pytest.mark.parametrize(
    ("resource", "url"),
    [
        (RESOURCE, PRM_URL),
        (
            "https://example.com/public/mcp",
            "https://example.com/.well-known/oauth-protected-resource/public/mcp",
        ),
        ("https://mcp.example.com", "https://mcp.example.com/.well-known/oauth-protected-resource"),
        ("https://mcp.example.com/", "https://mcp.example.com/.well-known/oauth-protected-resource"),
        ("http://127.0.0.1:8000/mcp", "http://127.0.0.1:8000/.well-known/oauth-protected-resource/mcp"),
        ("https://h.example/mcp?t=1", "https://h.example/.well-known/oauth-protected-resource/mcp?t=1"),
    ],
)
def test_prm_url_inserts_the_well_known_suffix_after_the_host(resource: str, url: str) -> None:
    assert prm_url(make_settings(resource_server_url=resource)) == url


def test_prm_url_is_served_at_the_first_prm_path() -> None:
    assert prm_url(SETTINGS).removeprefix("https://mcp.example.com") == prm_paths("/mcp")[0]
