"""A server offering one extension (tests/extensions): ``com.example/echo`` with a method
``echo/say`` and a middleware stamping every tools/call result with the extensions the client
declared. Serve it with ``python -m jsonrpc_mcp serve tests/extensions/ext_server.py``."""

from __future__ import annotations

from typing import Any

from jsonrpc_mcp import Context, Extension, Server
from jsonrpc_mcp.server import Call, CallNext, ExtensionHandler, call_client_extensions

EXT = "com.example/echo"
STAMP = "com.example/declared"


class Echo(Extension):
    id = EXT
    eras = frozenset({"handshake", "stateless"})

    def settings(self) -> dict[str, Any]:
        return {"loud": True}

    def methods(self) -> dict[str, ExtensionHandler]:
        return {"echo/say": self.say}

    async def say(self, ctx: Context, params: dict[str, Any]) -> dict[str, Any]:
        return {"said": params.get("text"), "clientSupports": ctx.client_supports(EXT)}

    async def middleware(self, call: Call, call_next: CallNext) -> Any:
        result = await call_next(call)
        if call.method == "tools/call" and isinstance(result, dict):
            declared = sorted(call_client_extensions(call))
            result = {**result, "_meta": {**result.get("_meta", {}), STAMP: declared}}
        return result


server = Server("ext-demo", extensions=[Echo()])


@server.tool
def ping_tool() -> str:
    """Answers pong."""
    return "pong"
