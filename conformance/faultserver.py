"""A small MCP server with switchable faults, to prove the harness can fail.

Run it over stdio: ``python -m conformance.faultserver [--fault NAME ...]``, or in-process with
:func:`serve_with_faults`. Without faults it passes every applicable requirement. Each fault breaks the
wire behaviour in one way (the server's own logic is untouched; frames are rewritten on their way):

``answers-notifications``  answers every notification with ``{"id": null, "result": {}}``
``wrong-revision``         every initialize result says ``2024-11-05``, whatever was asked
``resource-not-found-32002`` 2026-07-28 ``resources/read`` of a missing URI answers -32002 (legacy code)
``omits-result-type``      2026-07-28 results lose ``resultType``
``error-id-null``          error responses to readable requests carry ``id: null``
``junk-stdout``            (stdio) writes a banner line to stdout before serving
``never-exits``            (stdio) keeps running after stdin closes
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterable
from typing import Any

import anyio
import orjson

from jsonrpc_mcp import Server

__all__ = ["FAULTS", "FaultyStream", "create_server", "serve_with_faults"]

FAULTS = (
    "answers-notifications",
    "wrong-revision",
    "resource-not-found-32002",
    "omits-result-type",
    "error-id-null",
    "junk-stdout",
    "never-exits",
)
MODERN = "2026-07-28"


def create_server() -> Server:
    server = Server("conformance-fault-server", "1.0.0", logging_enabled=True)

    @server.tool()
    def echo(text: str) -> str:
        """Echo the text back."""
        return text

    @server.resource("fault://greeting", mime_type="text/plain")
    def greeting() -> str:
        return "hello"

    @server.prompt("greet", description="Greet someone")
    def greet(name: str) -> str:
        return f"Hello {name}"

    @server.completion(prompt="greet", argument="name")
    def names(value: str) -> list[str]:
        return [n for n in ("alice", "bob") if n.startswith(value)]

    return server


def _items(value: Any) -> list[Any]:
    return value if isinstance(value, list) else [value]


class FaultyStream:
    """Wraps the server's end of a connection and rewrites frames according to ``faults``."""

    def __init__(self, inner: Any, faults: Iterable[str]) -> None:
        self.inner = inner
        self.faults = set(faults)
        unknown = self.faults - set(FAULTS)
        if unknown:
            raise ValueError(f"unknown faults {sorted(unknown)}")
        self.modern_reads: set[Any] = set()
        self.modern_ids: set[Any] = set()

    async def receive(self) -> bytes:
        frame = bytes(await self.inner.receive())
        try:
            value = orjson.loads(frame)
        except orjson.JSONDecodeError:
            return frame
        for item in _items(value):
            if not isinstance(item, dict) or not isinstance(item.get("method"), str):
                continue
            if "id" not in item:
                if "answers-notifications" in self.faults:
                    await self.inner.send(b'{"jsonrpc":"2.0","id":null,"result":{}}')
                continue
            params = item.get("params")
            meta = params.get("_meta") if isinstance(params, dict) else None
            if isinstance(meta, dict) and meta.get("io.modelcontextprotocol/protocolVersion") == MODERN:
                self.modern_ids.add(_key(item["id"]))
                if item["method"] == "resources/read":
                    self.modern_reads.add(_key(item["id"]))
        return frame

    async def send(self, message: bytes) -> None:
        try:
            value = orjson.loads(message)
        except orjson.JSONDecodeError:
            await self.inner.send(message)
            return
        changed = False
        for item in _items(value):
            if isinstance(item, dict) and "method" not in item:
                changed = self._rewrite(item) or changed
        await self.inner.send(orjson.dumps(value) if changed else message)

    def _rewrite(self, item: dict[str, Any]) -> bool:
        key = _key(item.get("id"))
        result, error = item.get("result"), item.get("error")
        changed = False
        initialize_result = (
            isinstance(result, dict) and "serverInfo" in result and "protocolVersion" in result
        )
        if "wrong-revision" in self.faults and initialize_result and isinstance(result, dict):
            result["protocolVersion"] = "2024-11-05"
            changed = True
        if "omits-result-type" in self.faults and isinstance(result, dict) and key in self.modern_ids:
            changed = result.pop("resultType", None) is not None or changed
        not_found = (
            isinstance(error, dict) and error.get("code") == -32602 and "uri" in (error.get("data") or {})
        )
        if (
            "resource-not-found-32002" in self.faults
            and not_found
            and isinstance(error, dict)
            and key in self.modern_reads
        ):
            error["code"] = -32002
            changed = True
        if "error-id-null" in self.faults and isinstance(error, dict) and item.get("id") is not None:
            item["id"] = None
            changed = True
        return changed

    async def aclose(self) -> None:
        await self.inner.aclose()


def _key(rid: Any) -> Any:
    return (type(rid).__name__, rid) if isinstance(rid, (str, int)) else None


async def serve_with_faults(server: Server, stream: Any, faults: Iterable[str]) -> None:
    """Serve one connection through a :class:`FaultyStream`."""
    await server.serve(FaultyStream(stream, faults))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m conformance.faultserver", description=__doc__.split("\n")[0]
    )
    parser.add_argument("--fault", action="append", default=[], choices=FAULTS)
    args = parser.parse_args(argv)
    faults = set(args.fault)
    from jsonrpc_mcp.transports.stdio import stdio_server

    if "junk-stdout" in faults:
        sys.stdout.write("fault server starting up...\n")
        sys.stdout.flush()
    server = create_server()

    async def run() -> None:
        async with stdio_server() as stream:
            await serve_with_faults(server, stream, faults - {"junk-stdout", "never-exits"})
        if "never-exits" in faults:
            await anyio.sleep_forever()

    anyio.run(run)
    return 0


if __name__ == "__main__":
    sys.exit(main())
