"""The client side of MCP authorization: OAuth 2.1 as each revision's authorization spec asks.

Pass an :class:`OAuth` to ``Client.http(url, auth=...)`` (or to ``connect_http``); the transport
then answers a server's 401 (and 403 ``insufficient_scope``) by running the flow and sending the
request again. See docs/auth.md."""

from ...transports.http._authz import AuthorizationError
from ._agent import HeadlessBrowser, LoopbackBrowser, UserAgent
from ._oauth import OAuth
from ._storage import FileTokenStorage, InMemoryTokenStorage, TokenStorage, default_token_file

__all__ = [
    "AuthorizationError",
    "FileTokenStorage",
    "HeadlessBrowser",
    "InMemoryTokenStorage",
    "LoopbackBrowser",
    "OAuth",
    "TokenStorage",
    "UserAgent",
    "default_token_file",
]
