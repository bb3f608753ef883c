"""The per-request :class:`Context` a handler can ask for by annotating a parameter with it."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from ..jsonrpc.endpoint import RequestContext
from ..revisions import Revision

if TYPE_CHECKING:
    from .session import ServerSession

__all__ = ["Context"]

logger = logging.getLogger("jsonrpc_mcp.server")


class Context:
    """What a handler knows about the request it serves, and how it talks to the client.

    Declare a parameter annotated ``Context`` in a tool, resource or prompt function to receive it;
    it never appears in the generated input schema.
    """

    __slots__ = ("_last_progress", "_rc", "session")

    def __init__(self, session: ServerSession, rc: RequestContext) -> None:
        self.session = session
        self._rc = rc
        self._last_progress: float | None = None

    @property
    def request_id(self) -> Any:
        """The JSON-RPC id of the request being served."""
        return self._rc.id

    @property
    def method(self) -> str:
        return self._rc.method

    @property
    def revision(self) -> Revision:
        """The protocol revision in force for this request."""
        revision = self.session.revision
        assert revision is not None
        return revision

    @property
    def client_info(self) -> dict[str, Any]:
        return self.session.client_info

    @property
    def client_capabilities(self) -> dict[str, Any]:
        return self.session.client_capabilities

    @property
    def cancelled(self) -> bool:
        """True once the client cancelled this request (the handler is being cancelled too)."""
        return self._rc.cancelled

    @property
    def meta(self) -> dict[str, Any]:
        """The request's ``params._meta`` (empty if none)."""
        params = self._rc.request.params
        meta = params.get("_meta") if isinstance(params, dict) else None
        return meta if isinstance(meta, dict) else {}

    async def report_progress(
        self, progress: float, total: float | None = None, message: str | None = None
    ) -> None:
        """Send ``notifications/progress`` if the client asked for progress (a ``progressToken``).

        ``progress`` must increase on every call; a value that does not is a developer error.
        """
        token = self.meta.get("progressToken")
        if token is None:
            return
        if self._last_progress is not None and progress <= self._last_progress:
            raise ValueError(f"progress must increase: {progress} after {self._last_progress}")
        self._last_progress = progress
        params: dict[str, Any] = {"progressToken": token, "progress": progress}
        if total is not None:
            params["total"] = total
        if message is not None and self.revision.has_progress_message:
            params["message"] = message
        await self._rc.notify("notifications/progress", params)

    async def send_notification(self, method: str, params: Any = None) -> None:
        """Send a notification to the client, related to this request."""
        await self._rc.notify(method, params)

    async def send_request(self, method: str, params: Any = None, *, timeout: float | None = 60.0) -> Any:
        """Send a request to the client and wait for its result."""
        return await self._rc.send_request(method, params, timeout=timeout)
