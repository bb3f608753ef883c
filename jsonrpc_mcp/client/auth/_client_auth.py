"""Client authentication at the token endpoint (RFC 6749 §2.3, RFC 7523): ``client_secret_basic``,
``client_secret_post``, ``private_key_jwt`` (an assertion signed by PyJWT, the ``jwt`` extra), or
none (a public client names itself)."""

from __future__ import annotations

import base64
import time
import uuid
from dataclasses import dataclass
from urllib.parse import quote

from ...transports.http._authz import AuthorizationError

__all__ = ["JWT_BEARER", "ClientKey", "authenticate_client"]

JWT_BEARER = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"
ASSERTION_LIFETIME = 300  # seconds


@dataclass(frozen=True, slots=True)
class ClientKey:
    """A private key (PEM) for ``private_key_jwt``, and its algorithm (None: from the key)."""

    pem: str | bytes
    algorithm: str | None = None

    def __repr__(self) -> str:  # never the key
        return f"ClientKey(algorithm={self.algorithm!r})"


def authenticate_client(
    form: dict[str, str],
    client_id: str,
    method: str,
    secret: str | None,
    key: ClientKey | None,
    audience: str,
) -> dict[str, str]:
    """Add the client's authentication to a token request's ``form``; return the headers it needs.
    ``audience`` is the authorization server's issuer (what an assertion is addressed to)."""
    if method == "client_secret_basic" and isinstance(secret, str):
        # RFC 6749 §2.3.1: each part form-encoded before the Basic encoding
        pair = f"{quote(client_id, safe='')}:{quote(secret, safe='')}".encode()
        return {"authorization": "Basic " + base64.b64encode(pair).decode("ascii")}
    form["client_id"] = client_id
    if method == "client_secret_post" and isinstance(secret, str):
        form["client_secret"] = secret
    elif method == "private_key_jwt":
        if key is None:
            raise AuthorizationError("private_key_jwt needs a private_key")
        form["client_assertion_type"] = JWT_BEARER
        form["client_assertion"] = _assertion(client_id, key, audience)
    return {}


def _assertion(client_id: str, key: ClientKey, audience: str) -> str:
    """A client assertion (RFC 7523 §3): issued by and about the client, for the issuer, short-lived."""
    try:
        import jwt
    except ImportError:
        raise AuthorizationError("private_key_jwt needs PyJWT: pip install 'jsonrpc-mcp[jwt]'") from None
    now = int(time.time())
    claims = {
        "iss": client_id,
        "sub": client_id,
        "aud": audience,
        "iat": now,
        "exp": now + ASSERTION_LIFETIME,
        "jti": str(uuid.uuid4()),
    }
    return jwt.encode(claims, key.pem, algorithm=key.algorithm or _algorithm_for(key.pem))


def _algorithm_for(key: str | bytes) -> str:
    """RS256 for an RSA key, ES256/384/512 for an EC key by its curve, EdDSA otherwise."""
    from cryptography.hazmat.primitives.asymmetric import ec, rsa
    from cryptography.hazmat.primitives.serialization import load_pem_private_key

    loaded = load_pem_private_key(key.encode() if isinstance(key, str) else key, password=None)
    if isinstance(loaded, rsa.RSAPrivateKey):
        return "RS256"
    if isinstance(loaded, ec.EllipticCurvePrivateKey):
        curves = {"secp256r1": "ES256", "secp384r1": "ES384", "secp521r1": "ES512"}
        return curves.get(loaded.curve.name, "ES256")
    return "EdDSA"
