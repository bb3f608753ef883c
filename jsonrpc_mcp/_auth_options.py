"""The ``--auth-*`` options of ``jsonrpc-mcp serve --http``: bearer tokens checked as JWTs against
the issuer's JWKS, or by RFC 7662 introspection.

Secrets (the introspection client's, an HMAC key) are never taken on the command line, where ``ps``
and shell histories show them: only the name of an environment variable or the path of a file
holding them. The options become a JSON-able spec (no secret in it, so ``--workers`` can pass it
to its processes in the environment); each process builds its :class:`AuthSettings` from it,
reading the secret itself. Kept free of imports beyond argparse: ``serve`` parses options often.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

if TYPE_CHECKING:
    import argparse

    from .http._auth import AuthSettings

__all__ = ["add_auth_options", "auth_settings", "auth_spec"]

_WILDCARD_HOSTS = ("0.0.0.0", "::", "")


def add_auth_options(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("authorization (with --http; see docs/auth.md)")
    add = group.add_argument
    add(
        "--auth-issuer",
        "--auth-jwt-issuer",
        dest="auth_issuer",
        metavar="URL",
        help="the issuer tokens must name (iss); the advertised authorization server by default",
    )
    add("--auth-jwt-jwks", metavar="URL", help="verify JWT access tokens with the issuer's keys")
    add("--auth-jwt-algorithm", action="append", metavar="ALG", help="allowed JWS algorithm (repeatable)")
    add("--auth-jwt-secret-env", metavar="VAR", help="HMAC tokens: the shared secret's variable")
    add("--auth-introspection-url", metavar="URL", help="verify tokens by RFC 7662 introspection")
    add("--auth-client-id", metavar="ID", help="this server's client id at the introspection endpoint")
    add("--auth-client-secret-env", metavar="VAR", help="... its secret, from this environment variable")
    add("--auth-client-secret-file", metavar="PATH", help="... or from this file")
    add("--auth-resource", metavar="URL", help="this endpoint's public URL (default: the served URL)")
    add("--auth-audience", action="append", metavar="URL", help="accepted audience (default: resource)")
    add("--auth-audience-prefix", action="store_true", help="also accept audiences below those")
    add("--auth-authorization-server", action="append", metavar="URL", help="for the PRM document")
    add("--auth-required-scope", action="append", metavar="SCOPE", help="needed by every request")


def auth_spec(options: argparse.Namespace, served_url: str) -> dict[str, Any] | None:
    """The options as a JSON-able dict (None when no ``--auth-*`` option was given); ValueError
    names what is inconsistent."""
    given = {k[5:]: v for k, v in vars(options).items() if k.startswith("auth_") and v not in (None, False)}
    if not given:
        return None
    jwks, introspection = given.get("jwt_jwks"), given.get("introspection_url")
    hmac_env = given.get("jwt_secret_env")
    if sum(x is not None for x in (jwks, introspection, hmac_env)) != 1:
        raise ValueError(
            "--auth-* needs exactly one of --auth-jwt-jwks, --auth-jwt-secret-env, --auth-introspection-url"
        )
    if (jwks or hmac_env) and "issuer" not in given:
        raise ValueError("JWT verification needs --auth-issuer (the tokens' iss)")
    if ("client_secret_env" in given or "client_secret_file" in given) and "client_id" not in given:
        raise ValueError("--auth-client-secret-* needs --auth-client-id")
    resource = given.get("resource")
    if resource is None:
        if (urlsplit(served_url).hostname or "") in _WILDCARD_HOSTS:
            raise ValueError("--host is a wildcard address: give --auth-resource (the URL clients use)")
        resource = served_url
    servers = given.get("authorization_server") or ([given["issuer"]] if "issuer" in given else [])
    if not servers:
        raise ValueError("give --auth-authorization-server (or --auth-issuer) for the metadata document")
    return {**given, "resource": resource, "authorization_server": servers}


def _secret(spec: dict[str, Any], env_key: str, file_key: str | None = None) -> str | None:
    if env_key in spec:
        value = os.environ.get(spec[env_key])
        if not value:
            raise ValueError(f"environment variable {spec[env_key]} is not set")
        return value
    if file_key is not None and file_key in spec:
        with open(spec[file_key], encoding="utf-8") as handle:
            return handle.read().strip()
    return None


def auth_settings(spec: dict[str, Any] | None) -> AuthSettings | None:
    """The settings a spec describes (reading secrets now); None for None."""
    if spec is None:
        return None
    from .http._auth import AuthSettings, TokenVerifier
    from .http._introspection import IntrospectionVerifier
    from .http._jwt import JwtVerifier

    audience = spec.get("audience") or [spec["resource"]]
    common: dict[str, Any] = {"audience": audience, "audience_prefix": bool(spec.get("audience_prefix"))}
    verifier: TokenVerifier
    if "introspection_url" in spec:
        verifier = IntrospectionVerifier(
            url=spec["introspection_url"],
            client_id=spec.get("client_id"),
            client_secret=_secret(spec, "client_secret_env", "client_secret_file"),
            issuer=spec.get("issuer"),
            **common,
        )
    else:
        secret = _secret(spec, "jwt_secret_env")
        verifier = JwtVerifier(
            issuer=spec["issuer"],
            jwks_url=spec.get("jwt_jwks"),
            shared_secret=secret.encode("utf-8") if secret is not None else None,
            algorithms=spec.get("jwt_algorithm"),
            **common,
        )
    return AuthSettings(
        verifier=verifier,
        resource_server_url=spec["resource"],
        authorization_servers=spec["authorization_server"],
        required_scopes=spec.get("required_scope") or [],
    )
