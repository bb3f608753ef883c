"""Fixtures of the authorization server tests: the real one (oidc-provider on Node), installed on
first use and started once per module; skipped, saying why, where npm is missing."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from . import oidc_provider as op


@pytest.fixture(scope="module")
def oidc_provider() -> Iterator[op.OidcProvider]:
    """oidc-provider on 127.0.0.1 (see oidc_provider.py and oidc/launcher.mjs): its issuer URL and
    process; stopped after the module."""
    try:
        op.install()
    except op.Unavailable as exc:
        pytest.skip(f"oidc-provider cannot be installed here: {exc}")
    with op.running_oidc_provider() as provider:
        yield provider
